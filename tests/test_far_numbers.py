"""Numbers and times beyond what the arrays hold: refused, or read as unknown, never
wrapped round in silence (the cases the long seeded fuzz run, ``make fuzz``, found as
NumPy warnings). Every case runs with warnings as errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from thruput import formats
from thruput.errors import ParseError
from thruput.quantities import iso_ns, iso_ns_many, local_ns

from .conftest import DATA


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parametrize("text", ["now", "today", "1/2/2026", "Jan 5 2026", "2026-01-01x",
                                  "9999-01-01T00:00:00Z", "1500-01-01 00:00", "2262-04-12T00:00:00",
                                  "9999-01-01T00:00:00+01:00", "2026-13-01T00:00:00Z"])
def test_iso_ns_refuses_what_is_no_iso_time_or_beyond_ns(text):
    # (pandas took "now" and "today" from the clock; NumPy wrapped 9999 round to 1815)
    with pytest.raises(ValueError):
        iso_ns(text)
    with pytest.raises(ValueError):
        iso_ns_many(["2026-01-01T00:00:00Z", text])


@pytest.mark.parametrize("text, want", [
    ("2026-01-01T00:00:00+01:00", "2025-12-31T23:00:00"),
    ("2026-01-01T00:00:00.123456789-0530", "2026-01-01T05:30:00.123456789"),
    ("2026-01-01", "2026-01-01T00:00:00"),
    ("2026-01-01 12:30", "2026-01-01T12:30:00"),
    ("2261-12-31T23:59:59Z", "2261-12-31T23:59:59"),
    ("1678-01-01T00:00:00Z", "1678-01-01T00:00:00"),
])
def test_iso_ns_takes_iso_8601_with_any_offset(text, want):
    assert iso_ns(text) == np.datetime64(want, "ns")
    assert iso_ns_many([text])[0] == np.datetime64(want, "ns")


def test_local_ns_of_nothing_is_empty():
    assert local_ns([]).dtype == np.dtype("datetime64[ns]") and local_ns([]).size == 0


def _variant(name, sample, old, new):
    text = (DATA / name / sample).read_text()
    assert old in text
    return text.replace(old, new, 1)


def test_monitor_runs_csv_with_a_start_from_the_clock_names_its_line(tmp_path):
    from thruput.monitor.reader import MONITOR_MANIFEST_COLUMNS, read_monitor_manifest

    cells = dict.fromkeys(MONITOR_MANIFEST_COLUMNS, "")
    cells.update(run="r1", role="ping", path="a.txt", slot="0", started="now", path_name="p",
                 direction="forward", test="ping", tool="ping", outcome="ok")
    (tmp_path / "runs.csv").write_text(",".join(MONITOR_MANIFEST_COLUMNS) + "\n"
                                       + ",".join(cells[c] for c in MONITOR_MANIFEST_COLUMNS) + "\n")
    with pytest.raises(ParseError, match=r"started 'now' is not an ISO 8601 time") as info:
        read_monitor_manifest(tmp_path)
    assert info.value.line == 2


def test_pscheduler_sequence_numbers_beyond_a_float_are_unknown():
    name = "pscheduler_latency"
    sample = "constructed--irtt-0.9.0-netns-loss-latency.json"
    text = _variant(name, sample, '"seq-num": 1', '"seq-num": 1e400')
    ds = formats.get(name).parse(text)
    assert (ds["seq"].values >= -1).all() and -1 in ds["seq"].values


def test_esmond_time_beyond_datetime64_is_refused_at_its_line():
    name = "esmond_throughput"
    text = _variant(name, "constructed--throughput-base.json", '"ts": 1700000000', '"ts": 9300000000')
    with pytest.raises(ParseError, match="ts is not a Unix time") as info:
        formats.get(name).parse(text)
    assert info.value.line is not None


def test_nuttcp_interval_seconds_beyond_a_float_are_refused_at_their_line():
    name = "nuttcp"
    text = _variant(name, "6.1.2--tcp-i.out", "/   0.50 sec", "/   " + "9" * 400 + " sec")
    with pytest.raises(ParseError, match="too large for a float") as info:
        formats.get(name).parse(text)
    assert info.value.line == 1


def test_ndt7_start_time_with_an_offset_is_read_in_utc():
    name = "ndt7"
    text = _variant(name, "v0.14.2--download-cut-in-third-measurement.json",
                    '"StartTime":"2020-03-18T00:27:22.065438632Z"',
                    '"StartTime":"2020-03-18T01:27:22.065438632+01:00"')
    ds = formats.get(name).parse(text)
    assert ds["start_time"].values[0] == np.datetime64("2020-03-18T00:27:22.065438632", "ns")
