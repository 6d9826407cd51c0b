"""iperf3 text reader: hand-checked values from the printed summary lines of the recorded
fixtures (--bidir, -R, -P, UDP, server side, -f k, -V, -O, interrupted, truncated), error
cases, sniffing against iperf 2 output, and a live run of the installed iperf3."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from decimal import Decimal

import numpy as np
import pytest

import thruput
from thruput.errors import ParseError
from thruput.formats import iperf3_json, iperf3_text

from .conftest import DATA

HERE = DATA / "iperf3_text"
MiB, GiB, KiB = 1024**2, 1024**3, 1024


def _read(name):
    return thruput.read(HERE / f"3.12--{name}.txt")


def test_single_stream_tcp():
    # [  5]   0.00-2.00   sec  5.64 GBytes  24.2 Gbits/sec    1             sender
    # [  5]   0.00-2.00   sec  5.64 GBytes  24.2 Gbits/sec                  receiver
    ds = _read("tcp")
    lines = (HERE / "3.12--tcp.txt").read_text().split("\n")
    sender = next(line for line in lines if line.endswith("sender"))
    receiver = next(line for line in lines if line.endswith("receiver"))
    xfer, unit, rate = receiver.split()[4:7]
    assert float(ds.throughput[0]) == float(rate) * 1e9
    assert float(ds.bytes[0]) == float(xfer) * {"GBytes": GiB, "MBytes": MiB}[unit]
    assert float(ds.throughput_sender[0]) == float(sender.split()[6]) * 1e9
    assert float(ds.retransmits[0]) == float(sender.split()[8])
    assert float(ds.duration[0]) == 2.0
    assert ds.sizes == {"run": 1, "stream": 1, "interval": 4}
    assert ds.interval_start[0].values.tolist() == [0.0, 0.5, 1.0, 1.5]
    # every interval line is the source of its values
    for j in range(4):
        fields = lines[int(ds.line[0, 0, j]) - 1].split()
        # "[", "5]", "0.00-0.50", "sec", xfer, unit, rate, unit, retr, cwnd, unit
        assert float(ds.interval_retransmits[0, 0, j]) == float(fields[8])
        unit = {"KBytes": KiB, "MBytes": MiB}[fields[10]]
        assert float(ds.interval_cwnd[0, 0, j]) == float(fields[9]) * unit
    assert math.isnan(float(ds.window_actual[0]))  # the text output never prints it


def test_parallel_streams_use_the_sum_lines():
    ds = _read("tcp-P4")
    text = (HERE / "3.12--tcp-P4.txt").read_text()
    sums = [line.split() for line in text.split("\n") if line.startswith("[SUM]")]
    assert float(ds.throughput[0]) == float(sums[-1][5]) * 1e9          # [SUM] ... receiver
    assert float(ds.throughput_sender[0]) == float(sums[-2][5]) * 1e9   # [SUM] ... sender
    assert float(ds.retransmits[0]) == float(sums[-2][7])
    assert float(ds.streams[0]) == 4
    assert ds.iperf3_interval_sum_throughput[0].values.tolist() == [float(s[5]) * 1e9 for s in sums[:2]]


def test_bidir_forward_is_tx_c():
    ds = _read("tcp-bidir")
    # [  5][TX-C] 0.00-1.01 sec 430 MBytes 3.57 Gbits/sec receiver; [  7][RX-C] ... 4.04 Gbits/sec receiver
    assert float(ds.throughput[0]) == 3.57e9
    assert float(ds.throughput_sender[0]) == 3.58e9
    assert float(ds.bytes[0]) == 430 * MiB
    assert float(ds.retransmits[0]) == 3
    assert float(ds.iperf3_throughput_reverse[0]) == 4.04e9
    assert ds.stream_direction.values.tolist() == [["send", "receive"]]
    assert ds.stream_throughput.values.tolist() == [[3.57e9, 4.04e9]]
    assert int(ds.iperf3_bidir[0]) == 1


def test_bidir_parallel_sums_per_direction():
    ds = _read("tcp-bidir-P2")
    # [SUM][TX-C] 0.00-1.00 sec 1.99 GBytes 17.1 Gbits/sec receiver; [SUM][RX-C] ... 9.53 Gbits/sec receiver
    assert float(ds.throughput[0]) == 17.1e9
    assert float(ds.iperf3_throughput_reverse[0]) == 9.53e9
    assert ds.stream_direction.values.tolist() == [["send", "send", "receive", "receive"]]
    assert ds.iperf3_interval_sum_throughput[0].values.tolist() == [16.7e9, 17.5e9]
    summary = json.loads(ds.attrs["tool_summary"])["runs"][0]
    assert summary["receiver"]["bits_per_second"] == 17.1e9
    assert summary["reverse_sender"]["retransmits"] == 3


def test_reverse_client_receives():
    ds = _read("tcp-R")
    assert ds.stream_direction.values.tolist() == [["receive"]]
    assert int(ds.iperf3_reverse[0]) == 1
    assert float(ds.throughput[0]) == 16.2e9
    assert np.isnan(ds.interval_retransmits.values).all()


def test_udp_client():
    # [  5] 0.00-1.00 sec 2.41 MBytes 20.2 Mbits/sec 0.358 ms 0/77 (0%) receiver
    ds = _read("udp")
    assert str(ds.protocol[0].values) == "UDP"
    assert float(ds.throughput[0]) == 20.2e6
    assert float(ds.jitter[0]) == 0.358
    assert float(ds.packets[0]) == 77 and float(ds.packets_lost[0]) == 0
    assert float(ds.loss_fraction[0]) == 0.0
    assert ds.iperf3_interval_packets[0, 0].values.tolist() == [38, 39]
    assert math.isnan(float(ds.retransmits[0]))


def test_udp_parallel_reverse():
    ds = _read("udp-P2-R")
    # [SUM] 0.00-1.00 sec 2.44 MBytes 20.4 Mbits/sec 0.220 ms 0/78 (0%) receiver
    assert float(ds.throughput[0]) == 20.4e6
    assert float(ds.bytes[0]) == 2.44 * MiB
    assert float(ds.jitter[0]) == 0.220 and float(ds.packets[0]) == 78
    assert ds.stream_direction.values.tolist() == [["receive", "receive"]]
    assert ds.iperf3_interval_jitter[0, 0].values.tolist() == [0.428, 0.220]
    assert ds.iperf3_interval_lost_packets[0, 1].values.tolist() == [0, 0]


def test_udp_bidir():
    ds = _read("udp-bidir")
    assert ds.stream_direction.values.tolist() == [["send", "receive"]]
    assert float(ds.jitter[0]) == 0.004                 # forward stream's receiver line
    assert ds.iperf3_interval_packets[0, 0].values.tolist() == [20, 19]
    assert ds.iperf3_interval_jitter[0, 1].values.tolist() == [0.004, 0.099]


def test_rates_in_kbits():
    ds = _read("tcp-fk")
    assert float(ds.throughput[0]) == 14116964e3
    assert float(ds.throughput_sender[0]) == 14121847e3
    assert float(ds.bytes[0]) == 1.64 * GiB


def test_verbose_output():
    ds = _read("tcp-verbose-window64K")
    assert ds.attrs["tool_version"] == "3.12"
    assert str(ds.iperf3_system_info[0].values).startswith("Linux ")
    assert float(ds.iperf3_blksize[0]) == 131072
    assert float(ds.iperf3_duration_requested[0]) == 1
    assert float(ds.iperf3_cpu_host[0]) == 34.9 and float(ds.iperf3_cpu_remote[0]) == 40.4
    assert str(ds.iperf3_sender_congestion[0].values) == "bbr"
    assert json.loads(ds.attrs["skipped_reasons"])["verbose info"] == 4   # "Time:" is read (start_time)


def test_omitted_intervals_are_flagged():
    ds = _read("tcp-omit1")
    assert ds.iperf3_interval_omitted[0, 0].values.tolist() == [1, 0, 0, 0, 0]


def test_server_side_log():
    ds = _read("server-tcp")
    assert str(ds.iperf3_role[0].values) == "server"
    assert ds.stream_direction.values.tolist() == [["receive", "receive"]]
    # [SUM]   0.00-1.01   sec  1.74 GBytes  14.8 Gbits/sec                  receiver
    assert float(ds.throughput[0]) == 14.8e9
    assert float(ds.duration[0]) == pytest.approx(1.01)
    assert math.isnan(float(ds.throughput_sender[0]))
    assert json.loads(ds.attrs["skipped_reasons"])["banner"] == 3


def test_server_side_of_reverse_and_udp_tests():
    ds = _read("server-tcp-R")
    # the server sends (Retr/Cwnd columns); only its sender line: "3.51 GBytes  30.1 Gbits/sec   42  sender"
    assert ds.stream_direction.values.tolist() == [["send"]]
    assert float(ds.throughput[0]) == float(ds.throughput_sender[0]) == 30.1e9
    assert math.isnan(float(ds.throughput_receiver[0]))
    assert float(ds.retransmits[0]) == 42 and float(ds.bytes[0]) == 3.51 * GiB
    ds = _read("server-udp")
    # "1.22 MBytes  10.2 Mbits/sec  0.012 ms  0/39 (0%)  receiver"
    assert ds.stream_direction.values.tolist() == [["receive"]]
    assert float(ds.throughput_receiver[0]) == 10.2e6 and math.isnan(float(ds.throughput_sender[0]))
    assert float(ds.jitter[0]) == 0.012 and float(ds.packets[0]) == 39 and float(ds.loss_fraction[0]) == 0


def test_interrupted_client():
    ds = _read("tcp-interrupted")
    # receiver line "0.00 Bytes  0.00 bits/sec" was never exchanged: NaN, not 0
    assert math.isnan(float(ds.throughput_receiver[0]))
    assert float(ds.throughput[0]) == 16.4e9
    assert str(ds.iperf3_error[0].values) == "interrupt - the client has terminated"
    assert ds.attrs["truncated"] == 1


def test_truncated_log_keeps_complete_intervals():
    ds = _read("truncated-P4")
    full = _read("tcp-P4")
    assert ds.attrs["truncated"] == 1 and "summary lines are lost" in ds.attrs["truncation"]
    assert ds.sizes == {"run": 1, "stream": 4, "interval": 1}
    np.testing.assert_array_equal(ds.interval_bytes[0, :, 0], full.interval_bytes[0, :, 0])
    assert math.isnan(float(ds.throughput[0]))


def test_file_cut_in_its_last_summary_line_keeps_the_others():
    text = (HERE / "3.12--tcp-P4.txt").read_text()
    cut = text[: text.rindex("receiver")]  # "[SUM] ... 14.4 Gbits/sec" without its tag
    ds = iperf3_text.parse(cut)
    full = _read("tcp-P4")
    assert ds.attrs["truncated"] == 1
    assert ds.attrs["truncation"].startswith("the last line was cut off: '[SUM]   0.00-1.01")
    assert json.loads(ds.attrs["skipped_reasons"])["truncated line"] == 1
    assert float(ds.throughput_sender[0]) == float(full.throughput_sender[0]) == 14.5e9
    # the receiver's [SUM] was cut: its streams' receiver lines are summed instead
    assert float(ds.throughput_receiver[0]) == 3.65e9 + 3.61e9 + 3.63e9 + 3.54e9
    np.testing.assert_array_equal(ds.stream_throughput, full.stream_throughput)


def test_file_cut_in_iperf_done_is_truncated_not_an_error():
    text = (HERE / "3.12--tcp.txt").read_text()
    ds = iperf3_text.parse(text[: text.rindex("Done")])
    assert ds.attrs["truncated"] == 1 and ds.attrs["truncation"] == "the last line was cut off: 'iperf'"
    assert float(ds.throughput[0]) == float(_read("tcp").throughput[0])


def test_two_runs():
    ds = _read("two-runs")
    assert ds.run_line.values.tolist() == [1, 12]  # after 'iperf Done.'
    assert ds.streams.values.tolist() == [1, 2]
    assert ds.throughput.values.tolist() == [17.7e9, 22.2e9]


def test_error_only_log_raises_iperf3s_message():
    with pytest.raises(ParseError, match="Connection refused") as info:
        thruput.read(HERE / "3.12--refused.txt")
    assert info.value.line == 1


def test_unrecognised_line_is_named():
    text = (HERE / "3.12--tcp.txt").read_text().split("\n")
    text.insert(4, "this is not iperf3")
    with pytest.raises(ParseError, match="unrecognised line") as info:
        iperf3_text.parse("\n".join(text))
    assert info.value.line == 5


def test_bad_columns_after_the_rate_are_an_error():
    text = ("Connecting to host 127.0.0.1, port 5201\n"
            "[  5]   0.00-1.00   sec  1.00 GBytes  8.59 Gbits/sec  what is this\n")
    with pytest.raises(ParseError, match="unrecognised columns") as info:
        iperf3_text.parse(text)
    assert info.value.line == 2


def test_sniff_tells_iperf3_from_iperf2_and_json():
    assert iperf3_text.sniff((HERE / "3.12--tcp.txt").read_text())
    assert iperf3_text.sniff((HERE / "3.12--server-tcp.txt").read_text())
    assert not iperf3_text.sniff((HERE / "not-text--json.json").read_text())
    iperf2 = [p for p in (DATA / "iperf2").glob("*") if p.is_file() and not p.name.endswith(
        (".expected.json", ".sh", ".md", ".py"))] if (DATA / "iperf2").is_dir() else []
    for p in iperf2:
        assert not iperf3_text.sniff(p.read_text(errors="replace")[:4096]), p
    classic = ("------------------------------------------------------------\n"
               "Client connecting to 127.0.0.1, TCP port 5001\n"
               "TCP window size: 2.50 MByte (default)\n"
               "[  1] local 127.0.0.1 port 40000 connected with 127.0.0.1 port 5001\n"
               "[ ID] Interval       Transfer     Bandwidth\n"
               "[  1] 0.0000-1.0000 sec  3.00 GBytes  25.8 Gbits/sec\n")
    assert not iperf3_text.sniff(classic)


@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 not installed")
def test_live_text_and_json_of_one_server_agree_to_print_precision(tmp_path):
    """Two short loopback runs, text and -J: the text reader's numbers are iperf3's rounding."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(["iperf3", "-s", "-p", str(port), "--forceflush"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        for line in server.stdout:
            if line.startswith("Server listening"):
                break
        text = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-t", "1", "-i", "0.5"],
                              capture_output=True, text=True, timeout=30, check=True).stdout
    finally:
        server.terminate()
        server.wait(timeout=5)
        server.stdout.close()
    ds = iperf3_text.parse(text)
    receiver = next(line for line in text.split("\n") if line.endswith("receiver")).split()
    # the printed decimal times the prefix, rounded once (as the reader does): 16.6 Gbits/sec is
    # 1.66e10, where float("16.6") * 1e9 rounds twice to 16599999999.999998
    scale = {"Gbits/sec": 10**9, "Mbits/sec": 10**6}[receiver[7]]
    assert float(ds.throughput[0]) == float(Decimal(receiver[6]) * scale)
    assert not iperf3_json.sniff(text)


# --- issue 10: cut logs and ^C ---------------------------------------------------------------

def test_summary_missing_one_receiver_line_and_the_sum_is_truncated():
    from .damage import head, sample
    full = sample("iperf3_text", "3.12--tcp-P4.txt")
    n = len(full.splitlines())
    ds = iperf3_text.parse(head(full, n - 5))   # lost: [ 12] receiver, both [SUM], "iperf Done."
    assert ds.attrs["truncation"] == (
        "run at line 1: the [SUM] sender line is missing (the total is the sum of the streams' lines); "
        "run at line 1: no receiver summary line for stream(s) [12]; the receiver total is unknown")
    assert math.isnan(float(ds.throughput_receiver[0]))
    # no partial receiver sum (3.65 + 3.61 + 3.63 Gbit/s) stands in for the run's total
    assert float(ds.throughput[0]) == float(ds.throughput_sender[0]) == pytest.approx(3.66e9 + 3.62e9 + 3.64e9 + 3.55e9)
    assert np.asarray(ds.stream_throughput[0]).tolist() == [3.65e9, 3.61e9, 3.63e9, 3.55e9]


def test_interrupt_echoed_into_the_log_is_a_truncation():
    from .damage import interrupt, sample
    full = sample("iperf3_text", "3.12--tcp.txt")
    ds = iperf3_text.parse(interrupt(full, 3))
    assert ds.attrs["truncation"] == "interrupted by ^C (line 3)"
    assert float(ds.throughput[0]) == float(iperf3_text.parse(full).throughput[0])


def test_genuine_interrupted_log(corpus):
    path = (corpus / "real/intercloud/results/old/host-eu-west-2_aws/target-us-west2_gcp"
            "/proxy-us-east1_gcp/time-19-07-2021_16-17/large_file_proxy_target_direct.res")
    ds = thruput.read(path)
    assert ds.attrs["truncation"].startswith("interrupted by ^C (line 3); ")
    # [  5]   0.00-0.56   sec  5.37 MBytes  79.8 Mbits/sec    0             sender
    assert float(ds.throughput_sender[0]) == 79.8e6 and math.isnan(float(ds.throughput_receiver[0]))


def test_summary_lines_are_checked_against_streams_intervals_and_rates():
    ds = _read("tcp-P4")
    checks = json.loads(ds.attrs["consistency"])
    assert [c["check"] for c in checks] == [
        "run at line 1: bytes: [SUM] sender line vs the streams' sender lines",
        "run at line 1: bytes: [SUM] receiver line vs the streams' receiver lines",
        "run at line 1: sender summary: bit/s vs bytes x 8 / seconds",
        "run at line 1: receiver summary: bit/s vs bytes x 8 / seconds",
        "run at line 1: bytes: sender summary vs the sum of the interval lines",
        *(f"run at line 1: bytes: stream [{i}] sender line vs the sum of its interval lines" for i in (5, 7, 9, 12))]
    assert ds.attrs["consistent"] == 1
    # [SUM] 0.00-1.00 sec 1.69 GBytes 14.5 Gbits/sec 11 sender; streams 439+434+436+425 MBytes
    assert checks[0]["tool"] == pytest.approx(1.69 * GiB)
    assert checks[0]["data"] == pytest.approx((439 + 434 + 436 + 425) * MiB)


def test_a_lost_interval_line_makes_the_summary_disagree():
    from .damage import drop, sample
    ds = iperf3_text.parse(drop(sample("iperf3_text", "3.12--tcp-P4.txt"), 8))  # [  7] 0.00-0.51 218 MBytes
    assert ds.attrs["consistent"] == 0
    [bad, stream] = [c for c in json.loads(ds.attrs["consistency"]) if not c["ok"]]
    assert bad["check"] == "run at line 1: bytes: sender summary vs the sum of the interval lines"
    assert stream["check"] == "run at line 1: bytes: stream [7] sender line vs the sum of its interval lines"
    assert bad["tool"] - bad["data"] == pytest.approx(218 * MiB, rel=0.02)  # printed rounding


def test_genuine_text_logs_pass_their_checks(corpus):
    paths = sorted(p for p in (corpus / "real" / "intercloud").rglob("bw_*.res"))
    read = [thruput.read(p) for p in paths]
    text = [ds for ds in read if ds.attrs["format"] == "iperf3_text"]
    assert len(text) >= 7
    # 3 checks of the run, 1 of its stream's line against its intervals
    assert all(ds.attrs["consistent"] == 1 and len(json.loads(ds.attrs["consistency"])) == 4 for ds in text)


def test_start_time_from_verbose_time_line_and_timestamps():
    # Time: Sun, 22 Nov 2026 13:54:09 GMT
    assert str(_read("tcp-verbose-window64K").start_time.values[0]) == "2026-11-22T13:54:09.000000000"
    ds = _read("tcp-timestamps")   # Sun Nov 22 18:31:42 2026 Connecting to host ...
    assert str(ds.start_time.values[0]) == "2026-11-22T18:31:42.000000000"
    assert float(ds.throughput[0]) == 3.05e9 and ds.attrs["consistent"] == 1
    assert np.isnat(_read("tcp").start_time.values).all()
