"""nuttcp reader: values checked against nuttcp's own final lines in the recorded fixtures
(brief, -v, -r, -N 2, -fparse, UDP with drops through a shaped namespace path), the
truncated and cut-off cases, errors, and the nuttcp 8.1.4 logs of the real Starlink drive
corpus (wrapper prefix stripped here, values checked against nuttcp's own lines)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

import thruput
from thruput.contract import validate
from thruput.errors import ParseError
from thruput import formats
from thruput.formats import iperf3_text, nuttcp

from .conftest import DATA

HERE = DATA / "nuttcp"
MB = 1024**2


def _read(name):
    return thruput.read(HERE / f"6.1.2--{name}.out")


def _side_final(text, side):
    """(MB, seconds, Mbps) of nuttcp-<side>'s own final line, read with str.split."""
    line = next(x for x in text.split("\n") if x.startswith(f"nuttcp-{side}: ") and "real seconds" in x)
    words = line.split()
    return float(words[1]), float(words[4]), float(words[-2])


def test_verbose_tcp_against_both_ends_final_lines():
    ds = _read("tcp-i-v")
    text = (HERE / "6.1.2--tcp-i-v.out").read_text()
    mb, sec, mbps = _side_final(text, "r")
    assert float(ds.bytes[0]) == mb * MB
    assert float(ds.duration[0]) == sec
    assert float(ds.throughput[0]) == float(ds.throughput_receiver[0]) == mbps * 1e6
    mb_t, sec_t, mbps_t = _side_final(text, "t")
    assert float(ds.throughput_sender[0]) == mbps_t * 1e6
    assert float(ds.nuttcp_bytes_sender[0]) == mb_t * MB
    assert float(ds.retransmits[0]) == 0.0  # "nuttcp-t: retrans = 0"
    assert float(ds.window_actual[0]) == 4194304  # "nuttcp-t: send window size = 4194304"
    assert ds.stream_direction.values.tolist() == [["send"]]  # the client printed nuttcp-t first
    assert ds.protocol.values.tolist() == ["TCP"]
    assert ds.attrs["tool_version"] == "6.1.2"
    # every interval line is the source of its values
    lines = text.split("\n")
    seconds = []
    for j in range(ds.sizes["interval"]):
        words = lines[int(ds.line[0, 0, j]) - 1].split()
        assert float(ds.interval_bytes[0, 0, j]) == float(words[0]) * MB
        assert float(ds.interval_throughput[0, 0, j]) == float(words[6]) * 1e6
        seconds.append(float(words[3]))
    # interval times accumulate the printed interval lengths
    np.testing.assert_array_equal(ds.interval_end[0].values, np.cumsum(seconds))
    assert ds.attrs["consistent"] == 1
    validate(ds)


def test_receive_mode_is_told_by_the_order_of_the_ends():
    ds = _read("tcp-r-v")
    assert ds.stream_direction.values.tolist() == [["receive"]]  # nuttcp-r printed first
    text = (HERE / "6.1.2--tcp-r-v.out").read_text()
    assert float(ds.throughput[0]) == _side_final(text, "r")[2] * 1e6


def test_brief_final_line():
    # "2491.9375 MB /   2.00 sec = 10452.3354 Mbps 23 %TX 25 %RX 0 retrans 0.07 msRTT"
    text = (HERE / "6.1.2--tcp-i.out").read_text()
    final = [x.split() for x in text.split("\n") if "%TX" in x][0]
    ds = _read("tcp-i")
    assert float(ds.bytes[0]) == float(final[0]) * MB
    assert float(ds.throughput[0]) == float(final[6]) * 1e6
    assert float(ds.nuttcp_cpu_tx[0]) == float(final[8])
    assert float(ds.nuttcp_cpu_rx[0]) == float(final[10])
    assert float(ds.retransmits[0]) == float(final[12])
    assert float(ds.nuttcp_rtt[0]) == float(final[14])
    assert math.isnan(float(ds.throughput_sender[0]))  # brief output has no transmitter line
    assert math.isnan(float(ds.streams[0]))  # nor a stream count
    assert ds.stream_direction.values.tolist() == [[""]]
    # nuttcp printed no partial last interval: the check says how much the intervals cover
    checks = json.loads(ds.attrs["consistency"])
    assert checks[0]["check"].startswith("bytes received")
    assert checks[0]["ok"] is True


def test_udp_drops_through_the_shaped_path():
    ds = _read("udp-netns-loss-v")
    text = (HERE / "6.1.2--udp-netns-loss-v.out").read_text()
    drops = re.search(r"nuttcp-r: (\d+) / (\d+) drop/pkt ([\d.]+)% data loss", text)
    lost, packets = float(drops[1]), float(drops[2])
    assert float(ds.packets[0]) == packets
    assert float(ds.packets_lost[0]) == lost
    assert float(ds.loss_fraction[0]) == lost / packets
    assert lost > 0
    assert math.isnan(float(ds.retransmits[0]))
    assert ds.protocol.values.tolist() == ["UDP"]
    # interval drop/pkt columns
    lines = text.split("\n")
    for j in range(ds.sizes["interval"]):
        words = lines[int(ds.line[0, 0, j]) - 1].split()
        assert float(ds.nuttcp_interval_packets_lost[0, 0, j]) == float(words[8])
        assert float(ds.nuttcp_interval_packets[0, 0, j]) == float(words[10])
    check = [c for c in json.loads(ds.attrs["consistency"]) if c["check"].startswith("UDP loss")][0]
    assert check["ok"] and check["tool"] == float(drops[3])


def test_fparse_equals_its_key_values():
    ds = _read("tcp-fparse-v")
    text = (HERE / "6.1.2--tcp-fparse-v.out").read_text()
    final = dict(re.findall(r"(\w+)=(\S+)", next(x for x in text.split("\n")
                                                  if x.startswith("nuttcp-r: megabytes=") and "real_seconds" in x)))
    assert float(ds.bytes[0]) == float(final["megabytes"]) * MB
    assert float(ds.throughput[0]) == float(final["rate_Mbps"]) * 1e6
    assert ds.stream_direction.values.tolist() == [["send"]]
    verbose = _read("udp-fparse-v")
    assert verbose.protocol.values.tolist() == ["UDP"] and float(verbose.streams[0]) == 1.0
    assert json.loads(verbose.attrs["skipped_reasons"])["rate limit"] == 1  # "rate_limit=20.000 ..."
    udp = _read("udp-fparse")
    final = dict(re.findall(r"(\w+)=(\S+)", [x for x in (HERE / "6.1.2--udp-fparse.out").read_text().split("\n")
                                             if "real_seconds" in x][0]))
    assert float(udp.packets[0]) == float(final["pkt"])
    assert float(udp.packets_lost[0]) == float(final["drop"])


def test_delay_line_rtt_and_what_nuttcp_says_about_retransmits():
    ds = _read("tcp-delayline-drops-v")
    text = (HERE / "6.1.2--tcp-delayline-drops-v.out").read_text()
    rtt = re.search(r"nuttcp-t: connect to \S+ with mss=(\d+), RTT=([\d.]+) ms", text)
    assert float(ds.nuttcp_rtt[0]) == float(rtt[2]) and float(ds.nuttcp_mss[0]) == float(rtt[1])
    assert float(ds.nuttcp_rtt[0]) > 20.0  # 10 ms each way on the delay line
    # the delay line dropped packets (README.md), nuttcp 6.1.2 printed "retrans = 0": kept as printed
    assert float(ds.retransmits[0]) == 0.0 and "nuttcp-t: retrans = 0" in text
    assert ds.attrs["consistent"] == 1


def test_two_streams_are_reported_summed():
    ds = _read("tcp-N2-v")
    assert float(ds.streams[0]) == 2.0  # "nstream=2"
    assert ds.sizes["stream"] == 1 and int(ds.nuttcp_streams_summed[0]) == 1
    assert np.isnan(ds.interval_retransmits.values).all()  # -N prints no retrans column


def test_truncated_keeps_the_complete_intervals():
    full, cut = _read("tcp-netns-loss-v"), _read("truncated-v")
    assert cut.attrs["truncated"] == 1
    assert "receiver's final line is lost" in cut.attrs["truncation"]
    assert "cut off" in cut.attrs["truncation"]
    n = cut.sizes["interval"]
    assert n >= 1
    np.testing.assert_array_equal(cut.interval_bytes.values, full.interval_bytes.values[..., :n])
    # a cut run keeps what it measured: its intervals' bytes over their seconds
    seconds = float(cut.interval_end[0, n - 1])
    assert float(cut.duration[0]) == seconds == 0.5 * n
    assert float(cut.bytes[0]) == float(cut.interval_bytes.sum())
    assert float(cut.throughput[0]) == float(cut.bytes[0]) * 8 / seconds
    assert math.isnan(float(cut.throughput_receiver[0]))      # nuttcp printed none
    assert f"its intervals' ({seconds:g} s measured)" in cut.attrs["truncation"]
    assert json.loads(cut.attrs["skipped_reasons"])["truncated line"] == 1


@pytest.mark.parametrize("name", ["tcp-cut-v", "tcp-cut", "tcp-r-cut-v", "udp-cut"])
def test_a_run_killed_mid_way_keeps_its_intervals(name):
    """nuttcp killed 2.3 s into a 10 s run (record.sh): no final line, and the run keeps the
    throughput of the intervals it printed, flagged as cut off."""
    ds = _read(name)
    text = (HERE / f"6.1.2--{name}.out").read_text()
    rows = [x.split() for x in text.split("\n") if " MB / " in x]
    assert not any("%TX" in r for r in rows) and "real seconds" not in text
    mb, sec = sum(float(r[0]) for r in rows), sum(float(r[3]) for r in rows)
    assert ds.attrs["truncated"] == 1 and ds.attrs["consistent"] == 1
    assert "the receiver's final line is lost" in ds.attrs["truncation"]
    assert (float(ds.duration[0]), ds.sizes["interval"]) == (sec, len(rows))
    assert float(ds.bytes[0]) == pytest.approx(mb * MB, rel=1e-12)
    assert float(ds.throughput[0]) == pytest.approx(mb * MB * 8 / sec, rel=1e-12)
    if name.startswith("udp"):
        # "0 /   156 ~drop/pkt": the loss of the datagrams the intervals counted
        assert float(ds.packets[0]) == sum(float(r[10]) for r in rows)
        assert float(ds.loss_fraction[0]) == sum(float(r[8]) for r in rows) / float(ds.packets[0])
    validate(ds)


def test_a_negative_retrans_count_is_read_and_flagged():
    """'-2 retrans' (hand-edited copy of tcp-i, record.sh): read, NaN, and a failed check."""
    ds = _read("tcp-i-negative-retrans-edited")
    assert ds.interval_retransmits.values.ravel().tolist()[:2] == [0.0, 0.0]
    assert math.isnan(float(ds.interval_retransmits[0, 0, 2]))
    failed = [c["check"] for c in json.loads(ds.attrs["consistency"]) if not c["ok"]]
    assert failed == ["retransmits: interval line 3 printed -2, a count below 0"]
    assert float(ds.throughput[0]) == float(_read("tcp-i").throughput[0])


def test_fields_that_touch_are_read():
    """'sec =2990.1617 Mbps0 retrans' (a number wider than its column; hand-edited copy of
    tcp-i, record.sh): the same values as the recorded log."""
    edited, original = _read("tcp-i-merged-columns-edited"), _read("tcp-i")
    assert "=2990.1617 Mbps0 retrans" in (HERE / "6.1.2--tcp-i-merged-columns-edited.out").read_text()
    for name in ("interval_bytes", "interval_throughput", "interval_retransmits", "throughput"):
        np.testing.assert_array_equal(edited[name].values, original[name].values)
    assert edited.attrs["consistent"] == 1


def test_an_error_from_the_server_is_a_failed_test_with_its_reason():
    """nuttcp 8.1.4's 'error from server' (the line a user's pile held) is nuttcp's, with
    the reason that follows it, never an unknown format."""
    alone = "nuttcp-t: v8.1.4: error from server\n"
    assert formats.sniff(alone) == "nuttcp"
    with pytest.raises(ParseError, match="nuttcp reported: error from server") as err:
        nuttcp.parse(alone)
    assert err.value.line == 1
    with_reason = ("nuttcp-t: v8.1.4: socket\nnuttcp-t: buflen=65536, nstream=1, port=5101 tcp -> 192.0.2.1\n"
                   + alone + "nuttcp-r: v8.1.4: Error: bind: Address already in use\nerrno=98\n")
    with pytest.raises(ParseError, match="error from server; bind: Address already in use"):
        nuttcp.parse(with_reason)
    # recorded (record.sh): nuttcp 6.1.2 refused by its server, stdout alone and with stderr
    for name in ("not-a-run--error-from-server.out", "not-a-run--error-from-server-stderr.out"):
        text = (HERE / name).read_text()
        assert text.endswith("nuttcp-t: v6.1.2: error from server\n")
        assert formats.sniff(text) == "nuttcp"
        with pytest.raises(ParseError, match="nuttcp reported: error from server"):
            nuttcp.parse(text)


def test_errors_and_empty_input():
    with pytest.raises(ParseError, match="empty input"):
        nuttcp.parse("")
    with pytest.raises(ParseError, match="Connection refused"):
        nuttcp.parse((HERE / "not-a-run--refused.out").read_text())
    with pytest.raises(ParseError, match="unrecognised"):
        nuttcp.parse((HERE / "6.1.2--tcp-i.out").read_text() + "something else\n")
    two = (HERE / "6.1.2--tcp-i.out").read_text() * 2
    with pytest.raises(ParseError, match="second run") as err:
        nuttcp.parse(two)
    assert err.value.line == 2 * len((HERE / "6.1.2--tcp-i.out").read_text().split("\n")) - 2


def test_sniffing_is_specific():
    iperf3 = (DATA / "iperf3_text" / "3.12--tcp.txt").read_text()
    assert not nuttcp.sniff(iperf3)
    for sample in HERE.glob("6.1.2--*.out"):
        head = sample.read_text()[:4096]
        assert nuttcp.sniff(head), sample.name
        assert not iperf3_text.sniff(head), sample.name


# --- the real corpus: nuttcp 8.1.4 behind a timestamping wrapper ----------------------------------
#: "[2024-05-28 11:40:59.323313] " before every line, and the wrapper's own lines around
WRAPPER_PREFIX = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+\] ?", re.MULTILINE)
WRAPPER_LINES = re.compile(r"^(?:Start|End) time: \d+\n", re.MULTILINE)


def _corpus_logs(corpus):
    logs = sorted((corpus / "real" / "starlink-drive").glob("*/*/*/tcp_*.out"))
    if not logs:
        pytest.skip("no nuttcp logs in the corpus")
    return logs


def test_corpus_nuttcp_8_against_its_own_final_lines(corpus):
    complete = 0
    for path in _corpus_logs(corpus):
        text = WRAPPER_PREFIX.sub("", WRAPPER_LINES.sub("", path.read_text()))
        assert formats.sniff(text[: formats.HEAD_BYTES]) == "nuttcp"  # claimed by nuttcp alone
        ds = nuttcp.parse(text)
        assert ds.attrs["tool_version"] == "8.1.4"
        assert ds.attrs["consistent"] == 1, (path, ds.attrs["consistency"])
        # every interval line holds a KB-cwnd column in 8.1.4
        assert not np.isnan(ds.interval_cwnd.values).any()
        if not re.search(r"^nuttcp-r: [\d.]+ MB in [\d.]+ real seconds", text, re.MULTILINE):
            # the wrapper stopped nuttcp before its final lines: what it measured is kept
            assert ds.attrs["truncated"] == 1, path
            assert float(ds.throughput[0]) == pytest.approx(
                float(ds.interval_bytes.sum()) * 8 / float(ds.interval_end[0, -1]), rel=1e-12)
            assert float(ds.duration[0]) == float(ds.interval_end[0, -1]) > 0
            continue
        complete += 1
        assert ds.attrs["truncated"] == 0, path
        assert float(ds.throughput[0]) == _side_final(text, "r")[2] * 1e6
        assert float(ds.throughput_sender[0]) == _side_final(text, "t")[2] * 1e6
        retrans = re.search(r"nuttcp-t: retrans = (\d+) cwnd = (\d+) KB", text)
        assert float(ds.retransmits[0]) == float(retrans[1])
        assert float(ds.nuttcp_cwnd[0]) == float(retrans[2]) * 1024
    assert complete >= 5


def test_corpus_starlink_downlink_values(corpus):
    path = corpus / "real/starlink-drive/starlink/20240528/114055495/tcp_downlink_114058528.out"
    if not path.exists():
        pytest.skip("sample absent")
    ds = nuttcp.parse(WRAPPER_PREFIX.sub("", WRAPPER_LINES.sub("", path.read_text())))
    # nuttcp-r: 2818.3955 MB in 129.84 real seconds = 22228.03 KB/sec = 182.0921 Mbps
    assert float(ds.bytes[0]) == 2818.3955 * MB
    assert float(ds.duration[0]) == 129.84
    assert float(ds.throughput[0]) == 182.0921e6
    # nuttcp-t: 2818.3955 MB in 120.00 real seconds = 24050.29 KB/sec = 197.0199 Mbps
    assert float(ds.throughput_sender[0]) == 197.0199e6
    assert float(ds.retransmits[0]) == 21371  # nuttcp-t: retrans = 21371 cwnd = 3564 KB
    assert float(ds.nuttcp_rtt[0]) == 45.961   # connect to ... with RTT=45.961 ms
    assert ds.stream_direction.values.tolist() == [["receive"]]  # nuttcp -r: downlink
    assert float(ds.interval_cwnd[0, 0, 0]) == 13 * 1024
