"""iperf3 -J reader: the parsed numbers against iperf3's own end sums, hand-checked values of
the tricky cases (--bidir, -R, server side, interrupted, truncated, -O, 3.0.x), parse_many,
and a live run of the installed iperf3 on loopback."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import socket
import subprocess

import numpy as np
import pytest

import thruput
from thruput.contract import validate
from thruput.errors import ParseError
from thruput.formats import _iperf3_server, iperf3_json

from .conftest import DATA

HERE = DATA / "iperf3_json"
COMPLETE = ["tcp", "tcp-P4", "tcp-R", "tcp-bidir", "tcp-window64K", "tcp-omit1", "udp", "udp-P2-R",
            "udp-bidir"]


def _doc(name):
    return json.loads((HERE / f"3.12--{name}.json").read_text())


def _read(name):
    return thruput.read(HERE / f"3.12--{name}.json")


@pytest.mark.parametrize("name", COMPLETE)
def test_run_totals_are_iperf3s_own_end_sums(name):
    end = _doc(name)["end"]
    ds = _read(name)
    assert float(ds.throughput[0]) == end["sum_received"]["bits_per_second"]
    assert float(ds.throughput_receiver[0]) == end["sum_received"]["bits_per_second"]
    assert float(ds.throughput_sender[0]) == end["sum_sent"]["bits_per_second"]
    assert float(ds.bytes[0]) == end["sum_received"]["bytes"]
    assert float(ds.duration[0]) == end["sum_received"]["seconds"]
    summary = json.loads(ds.attrs["tool_summary"])["runs"][0]
    assert summary["sum_sent"] == end["sum_sent"] and summary["sum_received"] == end["sum_received"]
    if "retransmits" in end["sum_sent"]:
        assert float(ds.retransmits[0]) == end["sum_sent"]["retransmits"]
    else:
        assert math.isnan(float(ds.retransmits[0]))


@pytest.mark.parametrize("name", COMPLETE)
def test_intervals_add_up_to_iperf3s_interval_sums_and_totals(name):
    doc = _doc(name)
    ds = _read(name)
    forward = (ds.stream_direction[0] == ("receive" if doc["start"]["test_start"]["reverse"] else "send"))
    per_interval = ds.interval_bytes[0].where(forward).sum("stream").values
    assert per_interval.tolist() == [i["sum"]["bytes"] for i in doc["intervals"]]
    assert ds.iperf3_interval_sum_throughput[0].values.tolist() == \
        [i["sum"]["bits_per_second"] for i in doc["intervals"]]
    kept = ds.iperf3_interval_omitted[0].values == 0
    side = "sum_received" if doc["start"]["test_start"]["reverse"] else "sum_sent"
    assert per_interval[kept].sum() == doc["end"][side]["bytes"]


def test_tcp_hand_checked_values():
    ds = _read("tcp")
    validate(ds)
    doc = _doc("tcp")
    first = doc["intervals"][0]["streams"][0]
    assert ds.sizes == {"run": 1, "stream": 1, "interval": 4}
    assert float(ds.interval_rtt[0, 0, 0]) == first["rtt"] / 1000  # printed in microseconds
    assert float(ds.interval_rttvar[0, 0, 0]) == first["rttvar"] / 1000
    assert float(ds.interval_cwnd[0, 0, 0]) == first["snd_cwnd"]
    assert float(ds.interval_retransmits[0, 0, 0]) == first["retransmits"]
    assert ds.interval_start[0].values.tolist() == [i["sum"]["start"] for i in doc["intervals"]]
    assert ds.interval_end[0].values.tolist() == [i["sum"]["end"] for i in doc["intervals"]]
    assert ds.attrs["tool_version"] == "3.12"
    assert str(ds.iperf3_role[0].values) == "client"
    assert str(ds.protocol[0].values) == "TCP"
    assert math.isnan(float(ds.window_requested[0]))        # no -w
    assert float(ds.window_actual[0]) == doc["start"]["sndbuf_actual"]  # the client sends
    assert float(ds.iperf3_start_time[0]) == doc["start"]["timestamp"]["timesecs"]
    # line provenance: each interval stream's "socket" key
    lines = (HERE / "3.12--tcp.json").read_text().split("\n")
    for j in range(4):
        assert lines[int(ds.line[0, 0, j]) - 1].strip().startswith('"socket"')
    assert ds.attrs["lines_total"] == ds.attrs["lines_parsed"] == len(lines) - 1


def test_window_requested_and_granted():
    ds = _read("tcp-window64K")
    assert float(ds.window_requested[0]) == 65536
    assert float(ds.window_actual[0]) == 131072 == float(ds.iperf3_rcvbuf_actual[0])


def test_reverse_client_receives():
    ds = _read("tcp-R")
    doc = _doc("tcp-R")
    assert ds.stream_direction.values.tolist() == [["receive"]]
    assert int(ds.iperf3_reverse[0]) == 1
    assert float(ds.window_actual[0]) == doc["start"]["rcvbuf_actual"]
    assert np.isnan(ds.interval_retransmits.values).all()  # only the sender knows TCP state


def test_bidir_forward_and_reverse():
    ds = _read("tcp-bidir")
    end = _doc("tcp-bidir")["end"]
    assert ds.stream_direction.values.tolist() == [["send", "receive"]]
    assert int(ds.iperf3_bidir[0]) == 1
    assert float(ds.streams[0]) == 1
    assert float(ds.throughput[0]) == end["sum_received"]["bits_per_second"]
    assert float(ds.iperf3_throughput_reverse[0]) == end["sum_received_bidir_reverse"]["bits_per_second"]
    assert float(ds.iperf3_throughput_sender_reverse[0]) == end["sum_sent_bidir_reverse"]["bits_per_second"]
    assert ds.stream_throughput.values.tolist() == [[s["receiver"]["bits_per_second"] for s in end["streams"]]]
    # the reverse stream's intervals are the receiver's: no TCP state
    assert not np.isnan(ds.interval_cwnd[0, 0]).any() and np.isnan(ds.interval_cwnd[0, 1]).all()


def test_udp_statistics_are_the_receivers():
    for name in ("udp", "udp-P2-R", "udp-bidir"):
        ds = _read(name)
        rcv = _doc(name)["end"]["sum_received"]
        assert float(ds.jitter[0]) == rcv["jitter_ms"]
        assert float(ds.packets[0]) == rcv["packets"]
        assert float(ds.packets_lost[0]) == rcv["lost_packets"]
        assert float(ds.loss_fraction[0]) == rcv["lost_packets"] / rcv["packets"]
        assert float(ds.out_of_order[0]) == 0
        assert str(ds.protocol[0].values) == "UDP"
        assert math.isnan(float(ds.retransmits[0]))
    ds = _read("udp-P2-R")
    streams = _doc("udp-P2-R")["end"]["streams"]
    assert ds.iperf3_stream_jitter.values.tolist() == [[s["udp"]["jitter_ms"] for s in streams]]
    assert float(ds.window_actual[0]) == 212992


def test_omitted_intervals_are_flagged():
    ds = _read("tcp-omit1")
    assert ds.iperf3_interval_omitted.values.tolist() == [[1, 0, 0, 0, 0]]


def test_server_side_log():
    ds = _read("server-tcp")
    end = _doc("server-tcp")["end"]
    assert str(ds.iperf3_role[0].values) == "server"
    assert ds.stream_direction.values.tolist() == [["receive"]]
    # the server's sum_sent is written with 0 bytes: not exchanged, so NaN, not 0
    assert end["sum_sent"]["bytes"] == 0
    assert math.isnan(float(ds.throughput_sender[0]))
    assert float(ds.throughput[0]) == end["sum_received"]["bits_per_second"]
    assert float(ds.window_actual[0]) == _doc("server-tcp")["start"]["rcvbuf_actual"]


def test_interrupted_client_keeps_the_senders_totals():
    ds = _read("tcp-interrupted")
    doc = _doc("tcp-interrupted")
    assert doc["error"] == "interrupt - the client has terminated"
    assert doc["end"]["sum_received"]["bytes"] == 0
    assert math.isnan(float(ds.throughput_receiver[0]))
    assert float(ds.throughput[0]) == doc["end"]["sum_sent"]["bits_per_second"]
    assert ds.attrs["truncated"] == 1 and "interrupt" in ds.attrs["truncation"]
    assert str(ds.iperf3_error[0].values) == doc["error"]
    assert ds.sizes["interval"] == 3


def test_truncated_document_keeps_complete_intervals():
    cut = _read("truncated-P4")
    full = _read("tcp-P4")
    assert cut.attrs["truncated"] == 1
    assert "interval 2" in cut.attrs["truncation"] and "end" in cut.attrs["truncation"]
    assert cut.sizes == {"run": 1, "stream": 4, "interval": 1}
    np.testing.assert_array_equal(cut.interval_bytes[0, :, 0], full.interval_bytes[0, :, 0])
    np.testing.assert_array_equal(cut.line[0, :, 0], full.line[0, :, 0])
    assert math.isnan(float(cut.throughput[0]))
    reasons = json.loads(cut.attrs["skipped_reasons"])
    assert cut.attrs["lines_parsed"] + reasons["incomplete JSON (run cut off)"] == cut.attrs["lines_total"]


def test_two_documents_in_one_log_are_two_runs():
    ds = _read("two-runs")
    text = (HERE / "3.12--two-runs.json").read_text()
    starts = [i + 1 for i, line in enumerate(text.split("\n")) if line == "{"]
    assert ds.run_line.values.tolist() == starts
    assert ds.streams.values.tolist() == [1, 2]
    assert ds.stream_direction.values.tolist() == [["send", ""], ["send", "send"]]
    assert ds.line[0, 1].values.tolist() == [-1, -1]  # padding


def test_error_only_document_raises_iperf3s_message():
    with pytest.raises(ParseError, match="Connection refused") as info:
        thruput.read(HERE / "3.12--refused.json")
    assert info.value.line == 10
    assert str(HERE / "3.12--refused.json") in str(info.value)


@pytest.mark.parametrize("text, line", [
    ("[1, 2]\n", 1),
    ('{"start": {"connected": []}, "intervals": 5, "end": {}}\n', 1),
    ('{"start": {"connected": []},\n garbage here\n "end": {}}\n', 2),
    ('{"start": {"connected": []}, "intervals": [{"streams": [{"bytes": "many"}], "sum": {}}], "end": {}}', 1),
])
def test_bad_documents_raise_parse_errors(text, line):
    with pytest.raises(ParseError) as info:
        iperf3_json.parse(text)
    assert info.value.line == line


def test_a_word_where_a_number_belongs_names_its_line():
    text = json.dumps(_doc("tcp-P4"), indent=1) + "\n"
    lines = text.split("\n")
    start = lines.index(' "intervals": [')
    n = next(i for i in range(start, len(lines)) if '"socket"' in lines[i]) + 1  # interval stream
    k = next(i for i in range(n, len(lines)) if '"bytes": ' in lines[i])
    lines[k] = lines[k].replace('"bytes": ', '"bytes": "many", "x": ')
    bad = "\n".join(lines)
    with pytest.raises(ParseError, match="non-numeric") as info:
        iperf3_json.parse(bad)
    assert info.value.line == n


def test_parse_many_names_the_file_with_a_non_numeric_value():
    texts = [(HERE / "3.12--tcp.json").read_text(), (HERE / "3.12--tcp-R.json").read_text()]
    texts.append(texts[1].replace('"host_total":', '"host_total": "x", "y":', 1))
    with pytest.raises(ParseError, match="non-numeric") as info:
        iperf3_json.parse_many(texts, names=["a.json", "b.json", "c.json"])
    assert info.value.path == "c.json"
    assert info.value.line == 1  # the run's first line (run-level values have no line of their own)


@pytest.mark.parametrize("cut_after", ['"start":\t0.', '"omitted":\tfal'])
def test_document_cut_inside_a_number_or_literal_is_truncated(cut_after):
    text = (HERE / "3.12--truncated-P4.json").read_text()
    ds = iperf3_json.parse(text[: text.rindex(cut_after) + len(cut_after)])
    assert ds.attrs["truncated"] == 1 and ds.sizes["interval"] == 1


def test_keys_sorted_by_another_tool_still_parse():
    doc = _doc("tcp-P4")
    text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
    ds = iperf3_json.parse(text)
    ref = _read("tcp-P4")
    np.testing.assert_array_equal(ds.interval_bytes, ref.interval_bytes)
    lines = text.split("\n")
    assert all(lines[n - 1].strip().startswith('"socket"') for n in ds.line.values.ravel())


def test_sniff():
    assert iperf3_json.sniff((HERE / "3.12--tcp.json").read_text()[:4096])
    assert iperf3_json.sniff((HERE / "3.12--refused.json").read_text())
    assert not iperf3_json.sniff((HERE / "not-iperf3--ip-link.json").read_text())
    assert not iperf3_json.sniff((DATA / "iperf3_text" / "3.12--tcp.txt").read_text())
    assert not iperf3_json.sniff('{"metadata": {"FLENT_VERSION": "2.1"}}')


def test_parse_many_concatenates_runs():
    names = ["tcp", "udp-P2-R", "two-runs", "truncated-P4"]
    texts = [(HERE / f"3.12--{n}.json").read_text() for n in names]
    texts[1] = texts[1].encode()  # bytes are accepted too
    ds = iperf3_json.parse_many(texts)
    validate(ds)
    assert ds.iperf3_file.values.tolist() == [0, 1, 2, 2, 3]
    assert ds.sizes == {"run": 5, "stream": 4, "interval": 4}
    singles = [_read(n) for n in names]
    flat = [s.throughput.values[i] for s in singles for i in range(s.sizes["run"])]
    np.testing.assert_array_equal(ds.throughput.values, flat)
    np.testing.assert_array_equal(ds.interval_bytes[1, :2, :2], singles[1].interval_bytes[0])
    assert ds.attrs["lines_total"] == sum(s.attrs["lines_total"] for s in singles)
    assert ds.attrs["truncated"] == 1



def test_parse_many_keeps_the_servers_view_of_each_file():
    """A pile with --get-server-output logs (JSON and text) among plain ones: each run has
    the server's numbers and check it has read alone (a pile once dropped them), the
    others none; a failed check stays with its run."""
    names = ["tcp", "get-server-output-json", "two-runs", "get-server-output-text",
             "get-server-output-json-udp-R"]
    texts = [(HERE / f"3.12--{n}.json").read_text() for n in names]
    ds = iperf3_json.parse_many(texts)
    validate(ds)
    singles = [_read(n) for n in names]
    at = 0
    checks = json.loads(ds.attrs["consistency"])
    for single in singles:
        for r in range(single.sizes["run"]):
            for name in _iperf3_server.EXTRAS:
                expected = single[name].values[r] if name in single else (
                    "" if name == "iperf3_server_output" else np.nan)
                np.testing.assert_array_equal(ds[name].values[at + r], expected)
            own = [c for c in json.loads(single.attrs["consistency"]) if c["check"].startswith(f"run {r}:")]
            mine = [c for c in checks if c["check"].startswith(f"run {at + r}:")]
            strip = lambda cs: sorted((c["check"].split(":", 1)[1], c["tool"], c["data"], c["ok"]) for c in cs)  # noqa: E731
            assert strip(mine) == strip(own)
        at += single.sizes["run"]
    assert ds.iperf3_server_output.values.tolist() == ["", "json", "", "", "text", "json"]


def test_parse_many_names_the_bad_file():
    texts = [(HERE / "3.12--tcp.json").read_text(), "{oops\n  not json at all\n}\n"]
    with pytest.raises(ParseError, match="b.json"):
        iperf3_json.parse_many(texts, names=["a.json", "b.json"])


def test_corpus_iperf3_3_0_11(corpus):
    """iperf 3.0.11: 6 significant digits, no sender flags; must agree with its end sums."""
    path = corpus / "iperf3" / "iperf3-3.0.11-tcp.json"
    doc = json.loads(path.read_text())
    ds = thruput.read(path)
    assert ds.attrs["format"] == "iperf3_json" and ds.attrs["tool_version"] == "3.0.11"
    assert float(ds.throughput[0]) == doc["end"]["sum_received"]["bits_per_second"] == 934268000
    assert float(ds.throughput_sender[0]) == 935992000
    assert float(ds.retransmits[0]) == 0
    assert ds.sizes == {"run": 1, "stream": 1, "interval": 13}
    assert ds.stream_direction.values.tolist() == [["send"]]   # no flag: the client sends
    assert float(ds.interval_cwnd[0, 0, 0]) == 573408
    assert np.isnan(ds.interval_rtt.values).all()               # 3.0 prints no rtt
    assert ds.interval_bytes[0, 0].sum() == doc["end"]["sum_sent"]["bytes"]
    assert ds.attrs["lines_parsed"] == ds.attrs["lines_total"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def iperf3_server():
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed")
    port = _free_port()
    proc = subprocess.Popen(["iperf3", "-s", "-p", str(port), "--forceflush"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        # wait for its banner: probing the port would take the server's one test slot
        for line in proc.stdout:
            if line.startswith("Server listening"):
                break
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=5)
        proc.stdout.close()


def test_live_loopback_run_agrees_with_its_end_sums(iperf3_server, tmp_path):
    out = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(iperf3_server), "-t", "1", "-i", "0.5",
                          "-P", "2", "-J"], capture_output=True, text=True, timeout=30, check=True).stdout
    path = tmp_path / f"live-{os.getpid()}.json"
    path.write_text(out)
    doc = json.loads(out)
    ds = thruput.read(path)
    assert float(ds.throughput[0]) == doc["end"]["sum_received"]["bits_per_second"]
    assert ds.sizes["stream"] == 2
    assert ds.interval_bytes[0].sum("stream").values.tolist() == [i["sum"]["bytes"] for i in doc["intervals"]]


def test_interrupt_echoed_before_the_document(corpus):
    """A genuine -J log whose terminal echoed ^C before the '{' (and then cut off)."""
    path = (corpus / "real/intercloud/results/host-us-east4_gcp/target-us-west3_gcp"
            "/proxy-us-east1-b_gcp/time-25-07-2021_16-00/10k_file/10k_file_reverse_host_target_direct_1.res")
    ds = thruput.read(path)
    assert ds.attrs["format"] == "iperf3_json"
    assert ds.attrs["truncation"].startswith("interrupted by ^C (line 1); ")
    assert ds.sizes["interval"] == 15 and int(ds.start_time[0].values.astype("datetime64[s]").astype(int)) == 1627218023


def test_end_sums_are_checked_against_intervals_and_streams():
    ds = thruput.read(DATA / "iperf3_json" / "3.12--tcp-P4.json")
    checks = json.loads(ds.attrs["consistency"])
    assert [c["check"] for c in checks[:3]] == [
        "run 0: bytes: end.sum_sent vs the sum of the intervals",
        "run 0: bytes: end.sum_sent vs the sum of end.streams[].sender",
        "run 0: bytes: end.sum_received at most end.sum_sent"]
    # then every rate against its bytes and seconds (2 sums, 4 streams x 2 sides), the
    # receiver's total against its streams, and each stream's sender total against its
    # intervals (tests/test_consistency_lies.py damages them)
    assert [c["check"] for c in checks[3:]] == [
        "run 0: end.sum_sent: bit/s vs bytes x 8 / seconds",
        "run 0: end.sum_received: bit/s vs bytes x 8 / seconds",
        *(f"run 0: end.streams[{j}].{side}: bit/s vs bytes x 8 / seconds"
          for j in range(4) for side in ("sender", "receiver")),
        "run 0: bytes: end.sum_received vs the sum of end.streams[].receiver",
        *(f"run 0: bytes: end.streams[{j}].sender vs the sum of its intervals" for j in range(4))]
    assert ds.attrs["consistent"] == 1
    # "sum_sent": {"bytes": 3613655040}, "sum_received": {"bytes": 3595042816}
    assert (checks[2]["tool"], checks[2]["data"]) == (3613655040, 3595042816)


def test_sum_received_ten_times_the_data_is_flagged():
    """Issue 10: an end.sum_received 10x the intervals was accepted silently."""
    from .damage import sample, scale_json
    text = scale_json(sample("iperf3_json", "3.12--tcp.json"), ("end", "sum_received", "bytes"), 10)
    ds = iperf3_json.parse(text)
    assert ds.attrs["consistent"] == 0
    failed = {c["check"]: c for c in json.loads(ds.attrs["consistency"]) if not c["ok"]}
    # also its rate against its bytes and its streams' receiver bytes
    assert sorted(failed) == ["run 0: bytes: end.sum_received at most end.sum_sent",
                              "run 0: bytes: end.sum_received vs the sum of end.streams[].receiver",
                              "run 0: end.sum_received: bit/s vs bytes x 8 / seconds"]
    bad = failed["run 0: bytes: end.sum_received at most end.sum_sent"]
    assert bad["data"] == 10 * bad["tool"]


def test_genuine_archive_passes_its_checks(corpus):
    """Every complete run of the inter-cloud sample: its sums agree with its data (the
    receivers of iperf 3.9 count 1.0-1.8 % more than the senders: within tolerance)."""
    paths = sorted((corpus / "real" / "intercloud").rglob("baseline_*.res"))
    assert len(paths) == 20
    for path in paths:
        ds = thruput.read(path)
        checks = json.loads(ds.attrs["consistency"])
        assert len(checks) >= 3 and ds.attrs["consistent"] == 1, path


# -- totals_many: parse_many's runs without its Dataset ---------------------------------

def _readable():
    return sorted(p for p in HERE.glob("*.json") if not p.name.endswith(".expected.json"))


def _same_totals(texts, names=None):
    """totals_many gives parse_many's run variables, files, checks and line accounting,
    bit for bit, or raises its error; with failed_only, the checks that fail, in order."""
    try:
        ds = iperf3_json.parse_many(texts, names=names)
    except ParseError as exc:
        with pytest.raises(ParseError) as err:
            iperf3_json.totals_many(texts, names=names)
        assert str(err.value) == str(exc)
        return None
    totals = iperf3_json.totals_many(texts, names=names)
    run_vars = [n for n, v in ds.data_vars.items() if v.dims == ("run",) and not n.startswith("iperf3_")]
    assert sorted(totals.variables) == sorted(run_vars)
    for name, values in totals.variables.items():
        mine, theirs = np.asarray(values), ds[name].values
        assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes(), name
    assert totals.file.tolist() == ds.iperf3_file.values.tolist()
    assert json.loads(json.dumps(totals.checks, sort_keys=True)) == json.loads(ds.attrs["consistency"])
    failed = iperf3_json.totals_many(texts, names=names, failed_only=True).checks
    assert failed == [c for c in totals.checks if not c["ok"]]          # (as a monitor counts them)
    for key, value in totals.ledger.items():
        if key != "ledger_unit":
            assert ds.attrs[key] == value, key
    return totals


def test_totals_many_are_parse_manys_for_every_sample_alone_and_in_a_pile():
    texts = [p.read_text() for p in _readable()]
    names = [p.name for p in _readable()]
    readable = []
    for text, name in zip(texts, names):
        if _same_totals([text], [name]) is not None:
            readable.append((text, name))
    assert len(readable) >= 12
    totals = _same_totals([t for t, _ in readable], [n for _, n in readable])
    assert len(totals.file) > len(readable)          # (a file of two runs among them)
    # a pile with an unreadable log: the same error, naming it
    _same_totals([readable[0][0], "{oops\n"], ["a.json", "b.json"])


@pytest.mark.parametrize("damage, raises", [("cut", False), ("interrupt", False), ("drop", True),
                                            ("scale", False), ("non-numeric", True)])
def test_totals_many_are_parse_manys_for_damaged_logs(damage, raises):
    """A log cut off, interrupted, missing a line (not JSON), disagreeing with itself or
    holding a word where a number goes, among others: the same numbers, checks and accounting, or
    the same error."""
    from . import damage as dmg

    text = (HERE / "3.12--tcp-P4.json").read_text()
    damaged = {"cut": lambda: dmg.cut(text, 900), "interrupt": lambda: dmg.interrupt(text, 40),
               "drop": lambda: dmg.drop(text, 30),
               "scale": lambda: dmg.scale_json(text, ["end", "sum_sent", "bytes"], 1.5),
               "non-numeric": lambda: re.sub(r'("rtt":\s*)(\d+)', r'\1"n/a"', text, count=1)}[damage]()
    other = (HERE / "3.12--udp.json").read_text()
    totals = _same_totals([other, damaged, other], ["u1.json", "damaged.json", "u2.json"])
    assert (totals is None) == raises


def test_totals_many_are_parse_manys_for_the_corpus(corpus):
    paths = sorted((corpus / "iperf3").glob("*.json")) + sorted((corpus / "real" / "intercloud").rglob("bw_*.res"))
    texts, names = [], []
    for path in paths:
        text = path.read_text(errors="replace")
        if iperf3_json.sniff(text[:4096]):
            texts.append(text)
            names.append(str(path))
    assert texts
    for text, name in zip(texts, names):
        _same_totals([text], [name])
    _same_totals(texts, names)
