"""Timestamping wrappers (issue 10): logs whose every line carries a wrapper's time.

Three sources: logs recorded through the real wrappers (``tests/data/wrapped/record.sh``:
moreutils ``ts`` in each form, and the starlink-measurement shape with ``Start time:``
lines), copies of every recorded text fixture wrapped here in every style (the wrapped
file must read exactly as the original, lines shifted by the one wrapper line added), and
the real wrapped logs of the shared corpus (checked against ping's own summaries).
"""

from __future__ import annotations

import datetime as dt
import json
import re

import numpy as np
import pytest

import thruput
from thruput.reader import decode, read_bytes
from thruput.errors import ParseError, UnknownFormatError
from thruput.formats import _prefix

from .conftest import DATA

WRAPPED = sorted((DATA / "wrapped" / "recorded").glob("*.out"))
#: The stamp of each style, read independently of thruput (the test's own reading).
STAMP = {
    "bracket-datetime": re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)\] "),
    "iso-datetime": re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+) "),
    "syslog": re.compile(r"^([A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d) "),
    "epoch": re.compile(r"^(\d{10}\.\d{6}) "),
    "bracket-epoch": re.compile(r"^\[(\d{10}\.\d{6})\] "),
}


def _style_of(path):
    return path.stem.split("--", 1)[1].removeprefix("start-end-").removeprefix("D-")


def _unix(stamp, style, year=None):
    """The stamp as Unix seconds (UTC), by the standard library."""
    if style in ("epoch", "bracket-epoch"):
        return float(stamp)
    if style == "syslog":
        when = dt.datetime.strptime(f"{year} {stamp}", "%Y %b %d %H:%M:%S")
    else:
        when = dt.datetime.fromisoformat(stamp.replace(" ", "T"))
    return when.replace(tzinfo=dt.timezone.utc).timestamp()


def _unwrap(text, style):
    """The text without the wrapper: prefixes cut, wrapper lines made blank."""
    out = []
    for line in text.split("\n"):
        m = STAMP[style].match(line)
        if m:
            line = line[m.end():]
        elif re.match(r"^(Start|End) time: \d+$", line):
            line = ""
        out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("path", WRAPPED, ids=lambda p: p.name)
def test_recorded_wrapped_logs(path):
    """Each log recorded through a real wrapper: style found, times kept per line exactly,
    the data as without the wrapper, line numbers those of the file."""
    style = _style_of(path)
    text = path.read_text()
    assert _prefix.detect(text[:4096]) == style
    year = 2026 if style == "syslog" else None
    ds = thruput.read(path, year=year)
    assert ds.attrs["line_prefix"] == style
    assert ds.attrs["lines_total"] == text.count("\n")
    lines = text.split("\n")
    bare = thruput.formats.get(ds.attrs["format"]).parse(_unwrap(text, style))
    wrapper = json.loads(ds.attrs["line_prefix_wrapper"])
    reasons = json.loads(ds.attrs["skipped_reasons"])
    if path.stem.split("--")[1].startswith("start-end-"):
        assert list(wrapper) == ["Start time", "End time"]
        assert reasons["wrapper line: Start time"] == reasons["wrapper line: End time"] == 1
        start_ms = int(lines[0].split(": ")[1])
        assert wrapper["Start time"] == _prefix._iso(np.datetime64(start_ms, "ms"))
    else:
        assert wrapper == {}
    if ds.attrs["kind"] == "rtt":
        for name in ("seq", "rtt", "status", "size", "ttl", "line"):
            np.testing.assert_array_equal(ds[name].values, bare[name].values)
        expected = [_unix(STAMP[style].match(lines[n - 1]).group(1), style, year)
                    for n in ds["line"].values]
        if "-D-" in path.name:  # ping's own -D time wins; the wrapper's is kept beside it
            np.testing.assert_array_equal(ds["timestamp"].values, bare["timestamp"].values)
            np.testing.assert_allclose(ds["ping_prefix_time"].values, expected, rtol=0, atol=1e-6)
            assert not np.isnan(bare["timestamp"].values).any()
        else:
            np.testing.assert_allclose(ds["timestamp"].values, expected, rtol=0, atol=1e-6)
            assert "ping_prefix_time" not in ds
    else:
        np.testing.assert_array_equal(ds["throughput"].values, bare["throughput"].values)
        np.testing.assert_array_equal(ds["run_line"].values, bare["run_line"].values)
        run_line = int(ds["run_line"].values[0])
        stamp = STAMP[style].match(lines[run_line - 1]).group(1)
        start = ds["start_time"].values[0].astype("datetime64[us]").astype(np.int64) / 1e6
        assert start == pytest.approx(_unix(stamp, style), abs=1e-6)


def test_year_less_stamps_without_a_year_are_NaT_and_said_so():
    ds = thruput.read(DATA / "wrapped" / "recorded" / "ping--syslog.out")
    assert np.isnan(ds["timestamp"].values).all()
    assert "year" in ds.attrs["line_prefix_note"]


def test_zone_less_stamps_in_a_given_zone():
    path = DATA / "wrapped" / "recorded" / "ping--bracket-datetime.out"
    utc, ny = thruput.read(path), thruput.read(path, tz="America/New_York")
    assert ny.attrs["line_prefix_tz"] == "America/New_York"
    # recorded on 22 November: New York is 5 h behind UTC (EST)
    np.testing.assert_allclose(ny["timestamp"].values - utc["timestamp"].values, 5 * 3600.0)


def test_ping_D_log_is_not_taken_for_a_wrapped_one():
    """iputils -D prints the bracket-epoch form on replies but not on its header: the log
    is ping's own, not a wrapper's."""
    ds = thruput.read(DATA / "ping" / "iputils--timestamps-D.out")
    assert "line_prefix" not in ds.attrs


def test_error_names_the_line_of_the_file():
    text = (DATA / "wrapped" / "recorded" / "ping--start-end-bracket-datetime.out").read_text().split("\n")
    text.insert(4, "[2026-11-22 17:55:39.300000] garbage from nowhere")
    with pytest.raises(ParseError) as info:
        read_bytes("\n".join(text).encode(), path="x.out")
    assert info.value.line == 5
    assert "garbage" in str(info.value)


def test_wrapped_text_of_no_known_format_says_so():
    with pytest.raises(UnknownFormatError, match="bracket-datetime"):
        read_bytes(b"[2026-11-22 17:55:39.3] hello\n[2026-11-22 17:55:39.4] world\n")


def test_detect_needs_most_lines():
    head = "[2024-05-27 15:17:01.317910] a\nb\nc\nd\n"
    assert _prefix.detect(head) is None
    assert _prefix.detect("") is None
    assert _prefix.detect(None) is None  # never raises


# ---------------------------------------------------------------------------------------
# Every recorded text fixture, wrapped here in every style

#: A fixed start (2024-05-27 15:17:01.317910 UTC) and step for the synthetic stamps.
T0, STEP = 1716823021.317910, 0.125


def _wrap(text, style):
    """``text`` as a wrapper in ``style`` would write it, with a Start time line."""
    out = [f"Start time: {int(T0 * 1000)}"]
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()  # the empty string after the last newline
    for i, line in enumerate(lines):
        t = T0 + STEP * (i + 1)
        when = dt.datetime.fromtimestamp(t, dt.timezone.utc)
        stamp = {"bracket-datetime": f"[{when:%Y-%m-%d %H:%M:%S.%f}]",
                 "iso-datetime": f"{when:%Y-%m-%dT%H:%M:%S.%f}",
                 "syslog": f"{when:%b %d %H:%M:%S}",
                 "epoch": f"{t:.6f}", "bracket-epoch": f"[{t:.6f}]",
                 "wrapper-lines": None}[style]     # (the Start time line only, no prefix)
        out.append(f"{stamp} {line}" if stamp else line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _text_fixtures():
    for folder in sorted(DATA.iterdir()):
        if not folder.is_dir() or folder.name in ("wrapped", "campaigns"):
            continue
        module = thruput.formats.get(folder.name) if folder.name in thruput.formats.REGISTRY else None
        if module is None or module.BINARY:
            continue
        for path in sorted(folder.glob("*")):
            if path.suffix in (".json", ".gz", ".sh", ".md", ".py") or path.name.startswith("empty--"):
                continue
            if path.read_bytes().lstrip()[:1] == b"{":
                continue  # JSON documents (and JSON lines) are not what wrappers stamp
            yield path


TEXT_FIXTURES = list(_text_fixtures())


@pytest.mark.parametrize("style", list(_prefix.STYLES))
@pytest.mark.parametrize("path", TEXT_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_text_fixture_reads_the_same_wrapped(path, style):
    raw = path.read_bytes()
    try:
        plain = read_bytes(raw, path=str(path))
    except (ParseError, UnknownFormatError):
        pytest.skip("the fixture itself is not readable (a must-not-match sample)")
    text = decode(raw)
    ds = read_bytes(_wrap(text, style).encode(), path=str(path))
    assert ds.attrs["format"] == plain.attrs["format"]
    assert ds.attrs["line_prefix"] == style
    assert ds.attrs["lines_total"] == plain.attrs["lines_total"] + 1
    reasons, plain_reasons = (json.loads(d.attrs["skipped_reasons"]) for d in (ds, plain))
    assert reasons.pop("wrapper line: Start time") == 1
    assert reasons == plain_reasons
    assert ds.attrs["truncated"] == plain.attrs["truncated"]
    for name, var in plain.data_vars.items():
        if name in ("timestamp", "start_time", "route_time") or name.endswith("prefix_time"):
            continue
        got = ds[name].values
        if name == "line" or name.endswith("_line"):
            want = np.where(var.values >= 1, var.values + 1, var.values)
        else:
            want = var.values
        np.testing.assert_array_equal(got, want, err_msg=name)
    if plain.attrs["kind"] == "rtt" and style not in ("syslog", "wrapper-lines"):
        lines = ds["line"].values
        own = ~np.isnan(plain["timestamp"].values)
        expected = np.where(lines >= 2, T0 + STEP * (lines - 1), np.nan)
        np.testing.assert_allclose(ds["timestamp"].values[~own], expected[~own], atol=1e-6)
    if plain.attrs["kind"] == "throughput" and style not in ("syslog", "wrapper-lines"):
        start = ds["start_time"].values
        was_nat = np.isnat(plain["start_time"].values)
        expected = (T0 + STEP * (ds["run_line"].values - 1)) * 1e6
        np.testing.assert_allclose(start[was_nat].astype("datetime64[us]").astype(np.int64),
                                   expected[was_nat], atol=1)


# ---------------------------------------------------------------------------------------
# The real wrapped logs of the shared corpus


def test_starlink_drive_ping_logs(corpus):
    """Every ping log of the drive: the wrapper found, its lines skipped with a reason,
    line numbers of the file, probes as ping counted them, times of the wrapper."""
    paths = sorted((corpus / "real" / "starlink-drive").glob("*/*/*/ping_*.out"))
    assert len(paths) == 15
    for path in paths:
        text = path.read_text()
        lines = text.split("\n")
        ds = thruput.read(path)
        assert ds.attrs["line_prefix"] == "bracket-datetime"
        # stamped in local time: the Start time line (epoch ms, UTC) shows EDT, UTC-4
        assert ds.attrs["line_prefix_tz"] == "UTC-04:00"
        reasons = json.loads(ds.attrs["skipped_reasons"])
        assert reasons["wrapper line: Start time"] == reasons["wrapper line: End time"] == 1
        assert ds.attrs["lines_total"] == text.count("\n")
        printed = json.loads(ds.attrs["tool_summary"])
        status = ds["status"].values.astype(str)
        assert (status == "reply").sum() == printed["received"]
        assert (status == "duplicate").sum() == printed.get("duplicates", 0)
        seq = ds["seq"].values
        assert len(np.unique(seq[status != "duplicate"])) == printed["transmitted"]
        first = int(np.flatnonzero(ds["line"].values > 0)[0])
        n = int(ds["line"].values[first])
        assert re.search(rf"icmp_seq={seq[first]} ", lines[n - 1])
        stamp = lines[n - 1][1:27]
        assert ds["timestamp"].values[first] == pytest.approx(
            _unix(stamp, "bracket-datetime") + 4 * 3600, abs=1e-6)


def test_starlink_drive_iperf3_udp_text(corpus):
    """An iperf3 UDP reverse run of the drive: iperf3's receiver line and the time the
    wrapper gave the run's first line."""
    path = (corpus / "real" / "starlink-drive" / "att" / "20240528" / "114631199"
            / "udp_downlink_114634253.out")
    ds = thruput.read(path)
    assert ds.attrs["format"] == "iperf3_text"
    assert ds.attrs["line_prefix"] == "bracket-datetime"
    assert ds["throughput"].values[0] == 52.4e6
    assert ds["run_line"].values[0] == 2
    assert ds.attrs["line_prefix_tz"] == "UTC-04:00"
    assert str(ds["start_time"].values[0]) == "2024-05-28T15:46:58.175361000"  # 11:46 EDT
    assert json.loads(ds.attrs["line_prefix_wrapper"]) == {
        "Start time": "2024-05-28T15:46:34.266000Z", "End time": "2024-05-28T15:48:36.589000Z"}


def test_read_many_of_wrapped_logs_keeps_each_files_lines_and_checks():
    """read_many over wrapped logs: each file stripped, its lines its own, the consistency
    records of every file kept (named by file)."""
    paths = [DATA / "wrapped" / "recorded" / name
             for name in ("ping--bracket-datetime.out", "ping--start-end-bracket-datetime.out")]
    ds = thruput.read_many(paths)
    singles = [thruput.read(p) for p in paths]
    assert ds.sizes["probe"] == sum(s.sizes["probe"] for s in singles)
    np.testing.assert_array_equal(ds["line"].values,
                                  np.concatenate([s["line"].values for s in singles]))
    np.testing.assert_array_equal(ds["timestamp"].values,
                                  np.concatenate([s["timestamp"].values for s in singles]))
    checks = json.loads(ds.attrs["consistency"])
    assert len(checks) == sum(len(json.loads(s.attrs["consistency"])) for s in singles)
    assert all(c["check"].startswith(str(paths[0]) + ": ") for c in checks[:5])
    assert ds.attrs["consistent"] == 1
    assert json.loads(ds.attrs["skipped_reasons"])["wrapper line: Start time"] == 1


from hypothesis import given, settings, strategies as st  # noqa: E402

_HEAD_LINES = st.sampled_from(["", "  ", "\t", "PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data.",
                               "[1594978465.914536] 64 bytes from 10.0.0.1: icmp_seq=1",
                               "2024-01-02 03:04:05 64 bytes from x", "Start time: 1700000000000",
                               "Script started on 2024-01-02 03:04:05+00:00", "\r", "x\r"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_HEAD_LINES, max_size=8), st.booleans(), st.integers(0, 40))
def test_the_first_line_is_found_as_by_splitting_the_whole_head(lines, ends, cut):
    """detect's first line, found without splitting the head, is the first of the lines
    it splits into (the last one left out when cut, wrapper and blank lines passed over)."""
    head = "\n".join(lines) + ("\n" if ends else "")
    head = head[: len(head) - cut] if cut < len(head) else head
    raw = head.split("\n")
    if len(raw) > 1 and not head.endswith("\n"):
        raw.pop()
    expected = next((ln for ln in raw if ln.strip() and not _prefix._is_wrapper(ln)), None)
    assert _prefix._first_line(head) == expected
