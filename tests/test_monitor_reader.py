"""The monitor Dataset (docs/design.md "Monitor campaigns") of a recorded loopback campaign.

tests/data/campaigns/monitor-loopback/ was recorded by record-monitor.sh beside it:
iperf3 -J and ping -D on 127.0.0.1 in slots 0, 1 and 3, with a refused TCP test and a
ping killed by ``timeout`` in slot 3. Expected values are read from the raw files with
json / the tool's own printed lines, never typed.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import thruput
from thruput.monitor import reader as mon
from thruput.errors import ContractError, ParseError, ThruputError

from .conftest import DATA, copy_campaign

CAMPAIGN = DATA / "campaigns" / "monitor-loopback"


@pytest.fixture(scope="module")
def ds():
    return thruput.open_campaign(CAMPAIGN)


def manifest():
    rows, _ = mon.read_monitor_manifest(CAMPAIGN)
    return {r.run: r for r in rows}


def test_runs_in_time_order_with_every_row(ds):
    rows = manifest()
    assert ds.sizes["run"] == len(rows) == 20
    assert set(ds["run"].values) == set(rows)
    assert (np.diff(ds["time"].values.astype(np.int64)) >= 0).all()
    assert ds["slot"].values.tolist() == [0] * 6 + [1] * 6 + [3] * 8
    assert ds.attrs["campaign_kind"] == "monitor" and ds.attrs["manifest_rows"] == 20
    assert ds["time"].values[0] == np.datetime64(rows[ds["run"].values[0]].started.rstrip("Z"), "ns")


def test_throughput_is_iperf3s_own(ds):
    for run in ("000000-lo-forward-tcp-b65536", "000003-lo-reverse-tcp-b65536", "000001-lo-forward-udp"):
        doc = json.loads((CAMPAIGN / manifest()[run].path).read_text())
        one = ds.sel(run=run)
        end = doc["end"]
        if "sum_received" in end:
            assert float(one["throughput"]) == end["sum_received"]["bits_per_second"]
            if "retransmits" in end["sum_sent"]:      # iperf3 -R: the sender is the server
                assert float(one["retransmits"]) == end["sum_sent"]["retransmits"]
            else:
                assert np.isnan(float(one["retransmits"]))
        else:                                   # UDP: the receiver's side is in "sum"
            assert float(one["loss_fraction"]) == end["sum"]["lost_percent"] / 100
    one = ds.sel(run="000001-lo-forward-udp")
    assert float(one["rate"]) == 2e7 and np.isnan(float(one["socket_buffer"]))
    assert float(ds.sel(run="000000-lo-forward-tcp-b262144")["socket_buffer"]) == 262144


def test_ping_summary_agrees_with_pings_own(ds):
    run = "000001-lo-forward-ping-z1480"
    text = (CAMPAIGN / manifest()[run].path).read_text()
    lo, avg, hi, mdev = map(float, re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", text).groups())
    one = ds.sel(run=run)
    assert float(one["size"]) == 1480
    assert (float(one["ping_transmitted"]), float(one["ping_received"]), float(one["ping_loss"])) == (5, 5, 0)
    assert float(one["rtt_min"]) == lo and float(one["rtt_max"]) == hi
    # ping prints each RTT and its avg rounded to 1 us, from times it holds more finely
    assert abs(float(one["rtt_mean"]) - avg) <= 0.001
    assert abs(float(one["rtt_mdev"]) - mdev) <= 0.0015
    times = [float(t) for t in re.findall(r"^\[([\d.]+)\]", text, re.M)]
    rtts = [float(t) for t in re.findall(r"time=([\d.]+) ms", text)]
    assert one["rtt"].values.tolist() == rtts
    assert float(one["rtt_median"]) == np.median(rtts)
    assert float(one["rtt_p10"]) == np.percentile(rtts, 10)
    stamp = one["probe_time"].values[0]
    assert stamp == np.datetime64(int(round(times[0] * 1e6)), "us")
    assert one["rtt_status"].values.tolist() == ["reply"] * 5


def test_failed_tests_are_data(ds):
    refused = ds.sel(run="000003-lo-forward-tcp-b1048576")
    assert str(refused["outcome"].values) == "refused"
    assert str(refused["reason"].values) == "unable to connect to server: Connection refused"
    assert np.isnan(float(refused["throughput"]))
    assert str(refused["source_sha256"].values) == manifest()[refused["run"].item()].sha256
    killed = ds.sel(run="000003-lo-reverse-ping-z108")
    text = (CAMPAIGN / manifest()[killed["run"].item()].path).read_text()
    replies = len(re.findall("time=", text))
    assert str(killed["outcome"].values) == "timeout"
    # no summary printed: the probes the log shows are the ones counted as sent
    assert float(killed["ping_transmitted"]) == float(killed["ping_received"]) == replies
    assert killed["rtt_status"].values.tolist() == ["reply"] * replies + [""] * (5 - replies)
    ok = ds["outcome"].values == "ok"
    assert ok.sum() == 18


def test_validate_dispatches_and_names_problems(ds):
    assert thruput.validate(ds) is ds
    bad = ds.copy()
    bad["outcome"] = bad["outcome"].copy(data=np.where(ds["outcome"] == "ok", "fine", ds["outcome"]))
    with pytest.raises(ContractError, match=r"outcome has values \['fine'\]"):
        thruput.validate(bad)
    with pytest.raises(ContractError, match="not in time order"):
        mon.validate_monitor(ds.isel(run=slice(None, None, -1)))
    with pytest.raises(ContractError, match="missing variable 'rtt_p90'"):
        mon.validate_monitor(ds.drop_vars("rtt_p90"))


def test_bad_manifest_rows_are_listed_with_lines(tmp_path):
    target = copy_campaign(CAMPAIGN, tmp_path)
    text = (target / "runs.csv").read_text().replace(",tcp,iperf3,65536,,,ok,", ",tcp,iperf3,65536,,,fine,", 1)
    text = text.replace(",ping,ping,,108,,ok,", ",ping,iperf3,,108,,ok,", 1)
    (target / "runs.csv").write_text(text)
    with pytest.raises(ParseError) as err:
        thruput.open_campaign(target)
    assert [line for line, _ in err.value.errors] == [2, 6]
    assert "outcome 'fine' is not one of ok, timeout" in err.value.errors[0][1]
    assert "tool 'iperf3' does not run test ping" in err.value.errors[1][1]


def test_a_file_changed_after_it_was_listed_is_an_error(tmp_path):
    target = copy_campaign(CAMPAIGN, tmp_path)
    path = target / manifest()["000000-lo-forward-ping-z108"].path
    path.write_text(path.read_text().replace("time=0.0", "time=9.0", 1))
    with pytest.raises(ThruputError, match=r"000000-lo-forward-ping-z108.txt \(runs.csv line 6\): "
                                           r"sha256 is .* the file changed after it was listed"):
        thruput.open_campaign(target)


# -- the lean ping path: the numbers of thruput.read without its Dataset ---------------

from hypothesis import given, settings, strategies as st  # noqa: E402

from thruput.campaign.dataset import _LedgerTotals  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 120).flatmap(lambda k: st.lists(
    st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=k, max_size=k),
    min_size=1, max_size=6)))
def test_a_batch_of_ping_runs_is_summarised_as_each_run_alone_bit_for_bit(rows):
    """The plain logs' summary over the batch (a matrix row per run, NumPy along an axis)
    is each run's own (:func:`mon._ping_summary`), bit for bit."""
    from thruput.formats._ping_many import Many

    n, k = len(rows), len(rows[0])
    rtt = np.array(rows, dtype=float).ravel()
    many = Many(np.arange(n), np.arange(0, n * k + 1, k), np.full(n, k), np.zeros(n * k, np.int8),
                rtt, np.full(n * k, np.nan), np.tile(np.arange(k, dtype=np.int32), n),
                [{"transmitted": k}] * n, {})
    got = mon._ping_summaries(many)
    for i, row in enumerate(rows):
        probes = {"status": np.array(["reply"] * k, dtype=object), "rtt": np.array(row),
                  "timestamp": np.full(k, np.nan), "seq": np.arange(k)}
        want, _ = mon._ping_summary(probes, {"transmitted": k})
        for name, value in want.items():
            assert np.float64(got[name][i]).tobytes() == np.float64(value).tobytes(), name


def _ping_logs(corpus):
    logs = sorted((DATA / "ping").glob("*.out"))
    if corpus is not None:
        logs += sorted((corpus / "ping").glob("*/*.out")) + sorted((corpus / "real").rglob("*ping*.txt"))
    return logs


def test_ping_runs_are_summarised_alike_with_and_without_their_dataset(corpus):
    """Every ping log that reads: the scan-only path (plain logs) and the Dataset path
    (thruput.read) give the same summary, probes and line accounting."""
    compared = 0
    for log in _ping_logs(corpus):
        try:
            ds = thruput.read(log, format="ping")
        except ThruputError:
            continue
        row = mon.MonitorRow(run="r", role="ping", path=log.name, sha256="", slot=0, started="",
                             path_name="p", direction="forward", test="ping", tool="ping",
                             socket_buffer=np.nan, size=np.nan, rate=np.nan, outcome="ok" if not
                             int(ds.attrs["truncated"]) else "failed", reason="", line=2)
        lean, full = _LedgerTotals(), _LedgerTotals()
        found = mon._read_ping(log.parent, row, lean)
        want = mon._ping_summary({n: ds.variables[n].values for n in ("status", "rtt", "timestamp", "seq")},
                                 json.loads(ds.attrs["tool_summary"]))
        full.add(ds)
        got = mon._ping_summary(*found[:2])
        assert got[0] == pytest.approx(want[0], nan_ok=True, rel=0, abs=0), log
        assert found[2] == sum(not c["ok"] for c in json.loads(ds.attrs["consistency"])), log
        for a, b in zip(got[1], want[1]):
            np.testing.assert_array_equal(a, b, err_msg=str(log))
        assert lean.attrs() == full.attrs(), log
        compared += 1
    assert compared >= 10


@pytest.mark.parametrize("text", ["h\na\nb\nc\n", "h\r\na\r\nb", "h\na\x85b\nc\n", "h\n", "", "h\na\n\nb\n",
                                  "h\ra\rb\n", "h\na\nb", "\n\n", "h\na\x0bb\n", "é\na\nb\n", "h\na\u2028b\n"])
def test_manifest_digests_grow_as_the_whole_prefix_hashed_again(text):
    import hashlib

    digest = mon.ManifestDigest(text)
    for rows in range(6):
        lines = text.splitlines(keepends=True)[: rows + 1]
        assert digest.upto(rows) == hashlib.sha256("".join(lines).encode()).hexdigest() == \
            mon.manifest_digest(text, rows)


@pytest.mark.parametrize("quote", [False, True])
def test_rows_after_a_start_are_those_of_the_whole_manifest(tmp_path, quote):
    from .conftest import copy_campaign

    target = copy_campaign(CAMPAIGN, tmp_path / "c")
    text = (target / "runs.csv").read_text()
    if quote:            # a quoted cell that ends on its line: the rows before are passed over
        header, first, rest = text.split("\n", 2)
        run, cells = first.split(",", 1)
        text = f'{header}\n"{run}",{cells}\n{rest}'
    (target / "runs.csv").write_text(text)
    rows, _ = mon.read_monitor_manifest(target)
    for start in (0, 1, 7, len(rows) - 1, len(rows)):
        assert mon.read_monitor_manifest(target, start)[0] == rows[start:]


@pytest.mark.parametrize("text", ["2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00Z", "2024-02-29T12:00:00.000001",
                                  "2026-01-01T23:59:59.123456789", "2026-11-22T18:03:00.5Z",
                                  "2026-11-22T18:03:00+02:00", "2026-11-22T18:03:00.250-04:00"])
def test_start_times_parse_as_pandas_parses_them(text):
    import pandas as pd

    from thruput.campaign.dataset import _timestamp

    ts = pd.Timestamp(text)
    ts = ts.tz_convert("UTC").tz_localize(None) if ts.tzinfo is not None else ts
    assert _timestamp(text) == ts.to_datetime64().astype("datetime64[ns]")
    assert _timestamp(text).dtype == np.dtype("datetime64[ns]")


def test_failed_checks_of_the_tools_own_totals_are_kept_per_run(tmp_path):
    """A ping log whose summary miscounts its replies and an iperf3 log whose end sum
    disagrees with its intervals keep their runs' numbers, and say so per run in
    ``tool_checks_failed`` (0 for the others, NaN for a row without a log); in a pile of
    iperf3 files (read_many) the failure goes to the right run."""

    from benchmarks import synthetic_monitor

    from .damage import scale_json

    directory = synthetic_monitor.write_archive(tmp_path / "a", paths=1, slots=4, probes=10)
    rows = mon.read_monitor_manifest(directory)[0]
    pings = [r for r in rows if r.role == "ping"]
    iperfs = [r for r in rows if r.role == "iperf"]
    log = directory / pings[1].path
    log.write_text(re.sub(r"(\d+) received", lambda m: f"{int(m.group(1)) - 1} received", log.read_text()))
    doc = directory / iperfs[2].path
    doc.write_text(scale_json(doc.read_text(), ["end", "sum_sent", "bytes"], 1.5))
    rows = [r._replace(sha256="") for r in rows]
    rows.append(iperfs[0]._replace(run="no-log", path="", outcome="failed",
                                    reason="no route"))
    ds = mon.read_batch(directory, rows)
    failed = dict(zip(ds["run"].values.tolist(), ds["tool_checks_failed"].values.tolist()))
    assert failed[pings[1].run] >= 1 and failed[iperfs[2].run] >= 1
    assert np.isnan(failed.pop("no-log"))
    assert {k: v for k, v in failed.items() if k not in (pings[1].run, iperfs[2].run)} == \
        dict.fromkeys(set(failed) - {pings[1].run, iperfs[2].run}, 0.0)
    one = thruput.read(doc)
    assert failed[iperfs[2].run] == sum(not c["ok"] for c in json.loads(one.attrs["consistency"]))




def test_a_batchs_iperf3_logs_are_read_as_one_pile(tmp_path, monkeypatch):
    """A batch's iperf3 logs go through iperf3_json.totals_many at once, none one by one,
    and give the numbers thruput.read gives each."""
    from benchmarks import synthetic_monitor

    directory = synthetic_monitor.write_archive(tmp_path / "a", paths=2, slots=3, probes=10)
    rows = mon.read_monitor_manifest(directory)[0]
    alone, read_one = [], mon._read_one
    monkeypatch.setattr(mon, "_read_one", lambda d, row, ledger: alone.append(row.role) or read_one(d, row, ledger))
    ds = mon.read_batch(directory, rows)
    assert "iperf" not in alone
    for row in (r for r in rows if r.role == "iperf"):
        one = thruput.read(directory / row.path)
        for name in mon.THROUGHPUT_FIELDS:
            assert ds[name].sel(run=row.run).values.tobytes() == one[name].values[0].tobytes(), name


@pytest.mark.parametrize("alone", [False, True], ids=["in a pile", "alone"])
def test_a_cut_off_iperf3_log_of_an_ok_test_is_an_error_read_in_a_pile_or_alone(tmp_path, alone):
    """The iperf3 logs of a batch are parsed as one pile (read_many); a log cut off in an
    interval, of a test whose outcome is ok, is the error it is when read alone (a pile
    once took it, with NaN numbers), naming the file and its runs.csv line."""
    from benchmarks import synthetic_monitor

    directory = synthetic_monitor.write_archive(tmp_path / "a", paths=1, slots=4, probes=10)
    rows = [r._replace(sha256="") for r in mon.read_monitor_manifest(directory)[0]]
    cut = [r for r in rows if r.role == "iperf"][2]
    doc = directory / cut.path
    text = doc.read_text()
    doc.write_text(text[: len(text) * 2 // 3])
    with pytest.raises(ThruputError, match=re.escape(f"{cut.path} (runs.csv line {cut.line}): cut off (")
                       + r".*\) but its outcome is ok"):
        mon.read_batch(directory, [cut] if alone else rows)


def _row_by_row(monkeypatch):
    """read_monitor_manifest without its column-wise reading (:func:`mon._split_rows`)."""
    monkeypatch.setattr(mon, "_split_rows", lambda body, first_line=2: None)


@pytest.mark.parametrize("campaign", [CAMPAIGN, DATA.parents[1] / "data" / "raw" / "netns-wan-monitor"])
def test_rows_read_column_wise_are_those_read_row_by_row(campaign, monkeypatch):
    text = (campaign / "runs.csv").read_text()
    n = text.count("\n") - 1
    body = text.split("\n", 1)[1]
    assert mon._split_rows(body, 2) is not None          # (the bundled rows take that way)
    fast = {start: mon.read_monitor_manifest(campaign, start, times=True) for start in (0, 1, n // 2, n)}
    _row_by_row(monkeypatch)
    for start, (rows, _, times) in fast.items():
        slow, _, slow_times = mon.read_monitor_manifest(campaign, start, times=True)
        assert [tuple(map(str, r)) for r in rows] == [tuple(map(str, r)) for r in slow]
        assert all(type(a) is type(b) for r, s in zip(rows, slow) for a, b in zip(r, s))
        assert times.dtype == slow_times.dtype and times.tolist() == slow_times.tolist()
        assert times.tolist() == mon.start_times(r.started for r in rows).tolist()


#: One row of CAMPAIGN's runs.csv changed (cell index -> text), or the line replaced.
ODD_ROWS = {
    "bad role": {1: "pong"}, "bad test": {8: "sctp"}, "bad tool": {9: "nuttcp"},
    "bad direction": {7: "up"}, "bad outcome": {13: "fine"}, "empty run": {0: ""},
    "ok without a file": {2: ""}, "slot not decimal": {4: "²"}, "negative slot": {4: "-1"},
    "started now": {5: "now"}, "no such month": {5: "2026-13-01T00:00:00Z"},
    "started with an offset": {5: "2026-11-22T18:03:00+02:00"}, "empty start": {5: ""}, "NaT": {5: "NaT"},
    "rate not a number": {12: "fast"}, "spaces around cells": {0: "  x1  ", 12: " 5e6 "},
    "a quoted cell": {0: '"quoted"'}, "a comma in quotes": {14: '"a, b"'},
    "a newline in quotes": {14: '"a\nb"'}, "non-ASCII": {14: "naïve"},
    "an em space": {14: "\u2003x\u2003"}, "a vertical tab": {0: "\x0bx"}, "a stray quote": {14: 'a"b'},
    "a stray quote, then a quoted cell left open": {6: 'l"o', 14: '"open'},
    "duplicate run": "duplicate", "empty line": "",
    "14 cells": "a,b,c,d,e,f,g,h,i,j,k,l,m,n", "carriage return": "crlf",
}


@pytest.mark.parametrize("case", ODD_ROWS)
def test_odd_rows_are_read_or_refused_as_row_by_row(case, tmp_path, monkeypatch):
    """Any row the column-wise reading does not take goes row by row: the same rows, or
    the same error naming the same lines."""
    target = copy_campaign(CAMPAIGN, tmp_path / "c")
    lines = (target / "runs.csv").read_text().split("\n")
    change = ODD_ROWS[case]
    if isinstance(change, dict):
        cells = lines[3].split(",")
        for k, v in change.items():
            cells[k] = v
        lines[3] = ",".join(cells)
    elif change == "duplicate":
        lines[5] = lines[3]
    elif change == "crlf":
        lines = [line + "\r" for line in lines[:-1]] + [lines[-1]]
    else:
        lines[3] = change
    (target / "runs.csv").write_text("\n".join(lines))

    def outcome():
        try:
            return mon.read_monitor_manifest(target)[0]
        except ParseError as exc:
            return str(exc), exc.errors if hasattr(exc, "errors") else None

    column_wise = outcome()
    _row_by_row(monkeypatch)
    assert column_wise == outcome()


@pytest.mark.parametrize("reason", ['"refused, twice"', '"a\nb"', 'a"b', '"open', '"a ""quoted"" word"'])
def test_rows_after_quoted_stored_rows_are_those_of_the_whole_file(reason, tmp_path, monkeypatch):
    """The rows after the ones a store holds are where the whole file's csv reading puts
    them, when a stored row has a quote in it (a quoted reason on its line, or over two)."""
    target = copy_campaign(CAMPAIGN, tmp_path / "c")
    lines = (target / "runs.csv").read_text().split("\n")
    cells = lines[3].split(",")
    cells[6], cells[14] = 'l"o', reason
    lines[3] = ",".join(cells)
    (target / "runs.csv").write_text("\n".join(lines))
    text = (target / "runs.csv").read_text()
    every = mon.read_monitor_manifest(target)[0]
    for start in (0, 2, 3, 5, len(every)):
        assert mon.read_monitor_manifest(target, start)[0] == every[start:]
    _row_by_row(monkeypatch)
    assert mon.read_monitor_manifest(target)[0] == every


def test_start_times_are_those_parsed_one_by_one():
    from thruput.campaign.dataset import _timestamp

    texts = ["2026-01-01T00:00:00.000000Z", "2024-02-29T12:00:00.000001", "2026-11-22T18:03:00+02:00"]
    for some in (texts[:2], texts):         # all NumPy's, and one pandas' among them
        assert np.array_equal(mon.start_times(some), np.array([_timestamp(t) for t in some]))
        assert mon.start_times(some).dtype == np.dtype("datetime64[ns]")
    with pytest.raises(ValueError):
        mon.start_times(["2026-13-01T00:00:00Z"])


#: Cells of runs.csv rows, valid and not, for the column-at-once reading below.
_CELLS = {
    "run": ["a", "b", "c", "", " d "],
    "role": ["iperf", "ping", "web"],
    "path": ["runs/x.json", "runs/y.txt", "", "/etc/passwd", "../up", "C:x", "a/../b", "a..b", "é/f"],
    "sha256": ["", "ab" * 32],
    "slot": ["", "0", "12", "-1", "x", "\u0663", "1.5"],
    "started": ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5", "2026-13-01T00:00:00Z",
                "2026-01-01T00:00:00+02:00", "", "yesterday"],
    "path_name": ["p", "", "q"],
    "direction": ["forward", "reverse", "sideways"],
    "test": ["tcp", "udp", "ping", "dns"],
    "tool": ["iperf3", "ping", "nuttcp", "curl"],
    "number": ["", "65536", "1e3", "-2.5", ".5", "1e400", "inf", "nan", "1_000", "0x10", "x", " 7"],
    "outcome": ["ok", "timeout", "error", "fine"],
    "reason": ["", "no route", "é"],
}


@pytest.mark.parametrize("seed", range(400))
def test_rows_read_column_at_once_are_those_read_row_by_row(seed):
    """runs.csv's rows read at once (pyarrow's CSV reader, Arrow's kernels) are those
    :func:`mon.rows_one_by_one` reads, or left to it (None) where it finds a problem."""
    import random

    rng = random.Random(seed)
    names = mon.MONITOR_MANIFEST_COLUMNS
    lines = []
    for _ in range(rng.randint(1, 6)):
        cells = [rng.choice(_CELLS["number" if name in ("socket_buffer", "size", "rate") else name])
                 if rng.random() < 0.08 else None for name in names]
        valid = {"run": f"r{len(lines)}", "role": "iperf", "path": "runs/x.json", "sha256": "",
                 "slot": "3", "started": "2026-01-01T00:00:00Z", "path_name": "p",
                 "direction": "forward", "test": "tcp", "tool": "iperf3", "socket_buffer": "",
                 "size": "", "rate": "", "outcome": "ok", "reason": ""}
        lines.append(",".join(c if c is not None else valid[n] for c, n in zip(cells, names)))
    body = "\n".join(lines) + "\n"
    at_once = mon._split_rows(body)
    try:
        one_by_one = mon.rows_one_by_one(body, 0)
    except ParseError:
        assert at_once is None
        return
    if at_once is not None:
        def key(rows):
            return [tuple("nan" if isinstance(v, float) and v != v else v for v in r) for r in rows]
        at_once, times = at_once
        assert key(at_once) == key(one_by_one)
        assert times.tolist() == mon.start_times(r.started for r in one_by_one).tolist()
