"""iperf 2 text reader: hand-checked values of the tricky cases, and the genuine corpus.

Every expected number below was read off the sample by hand: the tool's own [SUM] line,
Server Report or stream final line, converted with KByte = 1024 byte and Mbits = 10**6 bit.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import thruput
from thruput.contract import validate
from thruput.errors import ParseError
from thruput.formats import iperf2

from .conftest import DATA

SAMPLES = DATA / "iperf2"
GiB, MiB, KiB = 1024**3, 1024**2, 1024


def read(name):
    return thruput.read(SAMPLES / name)


def values(da):
    return np.asarray(da.values).tolist()


def test_parallel_enhanced_client_uses_the_sum_line_and_keeps_tcp_info():
    ds = read("v2.1.8--tcp-client-P4-e.txt")
    # [SUM] 0.0000-2.0074 sec  12.1 GBytes  51.9 Gbits/sec  99444/0        20
    assert float(ds.throughput[0]) == 51.9e9 == float(ds.throughput_sender[0])
    assert math.isnan(float(ds.throughput_receiver[0]))
    assert float(ds.bytes[0]) == pytest.approx(12.1 * GiB)
    assert float(ds.duration[0]) == pytest.approx(2.0074)
    assert float(ds.retransmits[0]) == 20
    assert int(ds.streams[0]) == 4 and str(ds.protocol[0].values) == "TCP"
    assert values(ds.iperf2_stream_id[0]) == [1, 2, 3, 4]            # sorted by [ID]
    assert values(ds.stream_throughput[0]) == [14.4e9, 14.8e9, 12.6e9, 9.99e9]
    assert values(ds.iperf2_stream_retransmits[0]) == [3, 2, 2, 13]
    # [  1] 0.0000-1.0000 sec  1.24 GBytes  10.6 Gbits/sec  10141/0  2  4348K/672(1035) us  1977978
    first = ds.isel(run=0, stream=0, interval=0)
    assert float(first.interval_throughput) == 10.6e9
    assert float(first.interval_bytes) == pytest.approx(1.24 * GiB)
    assert float(first.interval_retransmits) == 2
    assert float(first.interval_cwnd) == 4348 * KiB
    assert float(first.interval_rtt) == pytest.approx(0.672)
    assert float(first.interval_rttvar) == pytest.approx(1.035)
    assert float(first.iperf2_interval_writes) == 10141
    assert float(first.iperf2_interval_netpwr) == 1977978
    assert int(first.line) == 12
    assert values(ds.interval_start[0]) == [0.0, 1.0] and values(ds.interval_end[0]) == [1.0, 2.0]
    assert values(ds.iperf2_sum_interval_throughput[0]) == [48.6e9, 55.6e9]
    # a -P thread printed its "connected with" line before the banner: still this run
    assert int(ds.run_line[0]) == 1
    skipped = json.loads(ds.attrs["skipped_reasons"])
    assert skipped == {"column header": 1, "connect-time summary": 1, "separator": 2, "settings banner": 1}


def test_sum_agrees_with_the_streams():
    """The [SUM] bytes are the streams' bytes (to print rounding); rates are timed alike."""
    for name in ("v2.1.8--tcp-client-P4-e.txt", "v2.1.8--tcp-server-e.txt", "v2.0--tcp-client-P2.txt"):
        ds = read(name)
        for r in range(ds.sizes["run"]):
            run = ds.isel(run=r)
            if math.isnan(float(run.iperf2_sum_bytes)):
                continue
            assert float(run.stream_bytes.sum()) == pytest.approx(float(run.iperf2_sum_bytes), rel=0.01)
            assert float(run.stream_throughput.sum()) == pytest.approx(float(run.throughput), rel=0.01)


def test_server_log_holds_one_run_per_client_connection():
    ds = read("v2.1.8--tcp-server-e.txt")
    assert ds.sizes["run"] == 3
    assert values(ds.streams) == [1, 1, 4]
    assert values(ds.iperf2_side) == ["server"] * 3
    # receiver side: the server's own numbers
    assert values(ds.throughput) == [23.7e9, 27.7e9, 51.9e9] == values(ds.throughput_receiver)
    assert all(math.isnan(v) for v in values(ds.throughput_sender))
    assert values(ds.run_line) == [2, 11, 16]   # the first run starts at its banner
    # stream [6] printed 1.0000-1.9994 then its final 0.0000-1.9994 before the others
    assert values(ds.iperf2_stream_id[2]) == [3, 4, 5, 6]
    assert values(ds.stream_throughput[2]) == [14.9e9, 14.5e9, 12.6e9, 10.0e9]
    assert str(ds.iperf2_interval_read_hist[0, 0, 0].values) == "327:2:4:571:389:6:6:25299"
    assert float(ds.iperf2_interval_reads[0, 0, 0]) == 26604
    assert values(ds.iperf2_stream_peer_version[0]) == ["2.1.8", "", "", ""]  # padding: ""
    assert float(ds.iperf2_buffer_size[0]) == 128 * KiB


def test_window_warning_keeps_requested_and_granted():
    ds = read("v2.1.8--tcp-client-window-warning.txt")
    # TCP window size:  128 KByte (WARNING: requested 64.0 KByte)
    assert float(ds.window_requested[0]) == 64 * KiB
    assert float(ds.window_actual[0]) == 128 * KiB
    small = read("v2.1.8--tcp-client-small-window.txt")
    assert float(small.window_requested[0]) == 1024 and float(small.window_actual[0]) == 4.5 * KiB
    assert json.loads(small.attrs["skipped_reasons"])["tool warning"] == 2
    default = read("v2.1.8--tcp-client.txt")   # "(default)": nothing was requested
    assert math.isnan(float(default.window_requested[0])) and float(default.window_actual[0]) == 16 * KiB


def test_every_format_unit():
    ds = read("v2.1.8--tcp-client-units.txt")   # -f b k m g B K M, one run each
    assert ds.sizes["run"] == 7
    assert values(ds.throughput) == [
        26449152486.0,                 # bits/sec
        11058329 * 1e3,                # Kbits/sec
        22399e6,                       # Mbits/sec
        16.9e9,                        # Gbits/sec
        3236936495 * 8.0,              # Bytes/sec
        3140095 * 8.0 * KiB,           # KBytes/sec
        3296 * 8.0 * MiB,              # MBytes/sec
    ]
    assert values(ds.bytes) == [1696071740.0, 687872.0 * KiB, 1361.0 * MiB, 0.990 * GiB,
                                1658191932.0, 1619840.0 * KiB, 1711.0 * MiB]
    assert json.loads(ds.attrs["skipped_reasons"])["run separator"] == 6


def test_udp_client_takes_the_server_report():
    ds = read("v2.1.8--udp-client-P2.txt")
    # Server Reports: 5.27 + 5.27 Mbits/sec, 1/449 and 0/449 lost; [SUM] sender 10.5 Mbits/sec
    assert float(ds.throughput[0]) == pytest.approx(10.54e6) == float(ds.throughput_receiver[0])
    assert float(ds.throughput_sender[0]) == 10.5e6
    assert float(ds.loss_fraction[0]) == 1 / 898
    assert float(ds.packets[0]) == 900 and float(ds.packets_lost[0]) == 1   # [SUM-2] Sent 900
    assert values(ds.iperf2_stream_lost[0]) == [1.0, 0.0]
    assert values(ds.iperf2_sum_interval_throughput[0]) == [10.5e6, 10.5e6]
    enhanced = read("v2.1.8--udp-client-e.txt")
    assert float(enhanced.throughput[0]) == 10.5e6 and float(enhanced.jitter[0]) == 0.001
    assert float(enhanced.loss_fraction[0]) == 0.0 and float(enhanced.packets[0]) == 1788
    assert values(enhanced.iperf2_interval_pps[0, 0]) == [894.0, 892.0]
    p2e = read("v2.1.8--udp-client-P2-e.txt")
    assert float(p2e.out_of_order[0]) == 0


def test_udp_server_sums_and_the_enhanced_sum_quirk():
    ds = read("v2.1.8--udp-server.txt")
    # [SUM] 0.0000-1.0026 sec  1.26 MBytes  10.5 Mbits/sec   1/898 (0.11%)
    assert float(ds.throughput[0]) == 10.5e6 and float(ds.loss_fraction[0]) == 1 / 898
    assert values(ds.iperf2_sum_interval_throughput[0]) == [10.5e6, 10.5e6]
    assert values(ds.iperf2_interval_lost[0, :, 0]) == [0.0, 1.0]   # streams [1], [2]
    # -e: "[SUM] ... 10.5 Mbits/sec  0/898      896 pps" under a Write/Err header = Lost/Total
    quirk = read("v2.1.8--udp-server-P2-e.txt")
    assert float(quirk.loss_fraction[0]) == 0.0 and float(quirk.packets[0]) == 898
    assert values(quirk.iperf2_stream_latency_avg[0]) == [0.004, 0.003]   # streams [1], [2]


def test_classic_20_output():
    ds = read("v2.0--tcp-client-P2.txt")
    assert float(ds.throughput[0]) == 943e6 and float(ds.bytes[0]) == 337 * MiB
    assert values(ds.interval_start[0]) == [0.0, 1.0, 2.0]
    assert values(ds.iperf2_sum_interval_throughput[0]) == [941e6, 945e6, 943e6]
    udp = read("v2.0--udp-client.txt")
    assert float(udp.out_of_order[0]) == 1 and float(udp.loss_fraction[0]) == 3 / 893
    assert float(udp.jitter[0]) == 0.032 and float(udp.iperf2_datagram_size[0]) == 1470
    server = read("v2.0--udp-server-P2.txt")
    assert float(server.loss_fraction[0]) == 2 / 893 and float(server.throughput[0]) == 2.10e6


def test_truncated_run_keeps_what_is_complete():
    ds = read("v2.1.8--tcp-client-P4-e-truncated.txt")
    assert ds.attrs["truncated"] == 1 and "no final report for stream(s) [3]" in ds.attrs["truncation"]
    assert math.isnan(float(ds.throughput[0]))      # no [SUM], one stream unfinished
    assert values(ds.stream_throughput[0])[:2] == [14.4e9, 14.8e9]
    assert math.isnan(values(ds.stream_throughput[0])[2])
    assert values(ds.interval_throughput[0, 2]) == [12.7e9, 12.7e9]   # its intervals stay


def test_file_cut_mid_line_is_truncated_not_an_error():
    text = (SAMPLES / "v2.1.8--tcp-client.txt").read_text()
    ds = iperf2.parse(text + "[  1] 0.0000-2.00")
    assert ds.attrs["truncated"] == 1 and float(ds.throughput[0]) == 23.7e9


def test_file_cut_in_the_enhanced_columns_is_truncated_not_an_error():
    text = (SAMPLES / "v2.1.8--tcp-client-e.txt").read_text()
    cut = text[: text.rindex("/145(147) us") + 3]  # the final report, cut inside RTT
    ds = iperf2.parse(cut)
    assert ds.attrs["truncated"] == 1
    assert ds.attrs["truncation"].startswith("the last line was cut off: '[  1] 0.0000-2.0137 sec")
    assert json.loads(ds.attrs["skipped_reasons"])["truncated line"] == 1
    assert math.isnan(float(ds.throughput[0]))          # the final report was lost
    assert values(ds.interval_throughput[0, 0]) == [27.8e9, 27.6e9]  # the intervals stay


def test_unrecognised_lines_are_errors_naming_the_line():
    text = (SAMPLES / "v2.1.8--tcp-client.txt").read_text().splitlines()
    text.insert(7, "[  1] 0.0000-1.0000 sec  3.16 GBytes  27.1 Gbits/sec  what is this")
    with pytest.raises(ParseError) as err:
        iperf2.parse("\n".join(text) + "\n")
    assert err.value.line == 8 and "unrecognised columns" in err.value.message
    with pytest.raises(ParseError) as err:
        iperf2.parse("Client connecting to h, TCP port 5001\n-----------\nhello\n")
    assert err.value.line == 3 and "unrecognised line: 'hello'" in err.value.message
    with pytest.raises(ParseError, match="empty input"):
        iperf2.parse("\n\n")


def test_sniffer_claims_iperf2_only():
    assert iperf2.sniff((SAMPLES / "v2.1.8--udp-server.txt").read_text())
    assert not iperf2.sniff((DATA / "iperf2_csv" / "v2.1.8--tcp-client.csv").read_text())
    iperf3_text = ("Connecting to host 127.0.0.1, port 5201\n"
                   "[  5] local 127.0.0.1 port 1 connected to 127.0.0.1 port 5201\n"
                   "[ ID] Interval           Transfer     Bitrate         Retr  Cwnd\n"
                   "[  5]   0.00-1.00   sec  5.31 GBytes  45.6 Gbits/sec    0   1.37 MBytes\n")
    assert not iperf2.sniff(iperf3_text)
    assert not iperf2.sniff("")


def _agree(ds):
    """Parsed numbers against the tool's own totals in tool_summary."""
    printed = json.loads(ds.attrs["tool_summary"])["runs"]
    assert len(printed) == ds.sizes["run"]
    for r, run in enumerate(printed):
        got = ds.isel(run=r)
        side = str(got.iperf2_side.values)
        reports = [s["server_report"] for s in run["streams"] if s["server_report"]]
        if side == "client" and reports and len(reports) == int(got.streams):
            assert float(got.throughput) == pytest.approx(sum(x["throughput_bps"] for x in reports))
            lost = sum(x["lost"] for x in reports)
            total = sum(x["datagrams"] for x in reports)
            assert float(got.loss_fraction) == pytest.approx(lost / total)
        elif run["sum"] is not None:
            assert float(got.throughput) == run["sum"]["throughput_bps"]
            assert float(got.bytes) == run["sum"]["bytes"]
        else:
            finals = [s["final"]["throughput_bps"] for s in run["streams"]]
            assert float(got.throughput) == pytest.approx(sum(finals))


def test_every_sample_agrees_with_its_own_summary():
    for path in sorted(SAMPLES.glob("v*.txt")):
        ds = thruput.read(path)
        if ds.attrs["truncated"]:
            continue
        _agree(ds)


def test_corpus_agrees_with_the_tools_summary_lines(corpus):
    paths = sorted((corpus / "iperf2").glob("*"))
    assert paths
    for path in paths:
        ds = validate(thruput.read(path))
        assert ds.attrs["format"] == "iperf2" and ds.attrs["truncated"] == 0
        _agree(ds)
        if path.name == "perfkitbenchmarker-iperf_results.txt":
            # four runs: UDP, UDP -P 2, TCP -e, TCP -e -P 2 (2.0.1x enhanced output)
            assert values(ds.protocol) == ["UDP", "UDP", "TCP", "TCP"]
            assert values(ds.streams) == [1, 2, 1, 2]
            assert values(ds.throughput) == [1.05e6, 2.10e6, 1966e6, 1970e6]
            assert values(ds.throughput_sender) == [1.05e6, 2.10e6, 1966e6, 1970e6]
            assert values(ds.packets)[:2] == [5350.0, 10700.0] and np.isnan(values(ds.packets)[2:]).all()
            assert float(ds.loss_fraction[1]) == 1 / 10700 and float(ds.out_of_order[1]) == 1
            assert float(ds.jitter[0]) == 0.017
            assert float(ds.window_actual[2]) == pytest.approx(1.67 * MiB)
            assert values(ds.retransmits)[2:] == [0.0, 0.0]
            # "-1K/1346 us  182579.69": Cwnd unknown, RTT 1.346 ms, NetPwr as printed
            assert math.isnan(float(ds.iperf2_stream_cwnd[2, 0]))
            assert float(ds.iperf2_stream_rtt[2, 0]) == pytest.approx(1.346)
            assert float(ds.iperf2_stream_netpwr[2, 0]) == 182579.69
            assert values(ds.iperf2_stream_writes[3]) == [56387.0, 56373.0]   # [3], [4]
            assert values(ds.iperf2_stream_connect_time[3]) == [0.30, 0.16]


def test_2_2_inflight_and_packet_counts():
    """iperf 2.2's -e client columns InF(pkts)/Cwnd(pkts)/RTT(var), as its documented output."""
    text = "\n".join([
        "Client connecting to 192.0.2.10, TCP port 5001 with pid 1 (1/0 flows/load)",
        "TCP window size: 16.0 KByte (default)",
        "-" * 60,
        "[  1] local 192.0.2.20 port 44778 connected with 192.0.2.10 port 5001 (ct=6.37 ms)",
        "[ ID] Interval        Transfer    Bandwidth       Write/Err  Rtry     "
        "InF(pkts)/Cwnd(pkts)/RTT(var)        NetPwr",
        "[  1] 0.00-1.00 sec   197 MBytes  1.65 Gbits/sec  1574/0         0      "
        "658K(466)/5664K(4006)/7632(1329) us  27032",
        "[  1] 0.00-1.00 sec   197 MBytes  1.65 Gbits/sec  1574/0         0      "
        "658K(466)/5664K(4006)/7632(1329) us  27032", ""])
    ds = iperf2.parse(text)
    assert float(ds.throughput[0]) == 1.65e9
    assert float(ds.iperf2_interval_inflight[0, 0, 0]) == 658 * KiB
    assert float(ds.interval_cwnd[0, 0, 0]) == 5664 * KiB
    assert float(ds.interval_rtt[0, 0, 0]) == pytest.approx(7.632)
    assert float(ds.iperf2_stream_cwnd[0, 0]) == 5664 * KiB
    assert float(ds.iperf2_interval_cwnd_packets[0, 0, 0]) == 4006
    assert float(ds.iperf2_interval_inflight_packets[0, 0, 0]) == 466


# --- issue 10: a log cut at a line boundary is flagged, never read as a shorter run ------------

def test_cut_after_the_first_interval_block_is_truncated_not_a_one_second_run():
    from .damage import head, sample
    full = sample("iperf2", "v2.1.8--tcp-client-P4-e.txt")
    ds = iperf2.parse(head(full, 16))        # up to the first [SUM] 0.0000-1.0000
    assert ds.attrs["truncated"] == 1
    assert ds.attrs["truncation"] == "run 0: no final report for stream(s) [1, 2, 3, 4] (cut after 1 interval(s))"
    for name in ("throughput", "bytes", "duration", "throughput_sender"):
        assert math.isnan(float(ds[name][0])), name
    assert np.isnan(ds.stream_throughput.values).all()
    # the interval is kept as an interval
    assert values(ds.interval_throughput[0, :, 0]) == [10.6e9, 17.5e9, 12.7e9, 7.79e9]
    assert values(ds.iperf2_sum_interval_throughput[0]) == [48.6e9]
    assert values(ds.interval_end[0]) == [1.0]


def test_a_lone_report_off_the_interval_grid_is_a_final_one():
    """Without -i, iperf 2.1 prints each stream's final at its measured end (2.0168 s)."""
    from .damage import drop, sample
    full = sample("iperf2", "v2.1.8--tcp-client-P4-e.txt")
    ds = iperf2.parse(drop(full, *range(12, 22)))   # as if run without -i
    assert ds.attrs["truncated"] == 0
    assert float(ds.throughput[0]) == 51.9e9 and ds.sizes["interval"] == 0


def test_udp_client_missing_one_server_report_has_unknown_receiver_counts():
    from .damage import head, sample
    full = sample("iperf2", "v2.1.8--udp-client-P2.txt")
    complete = iperf2.parse(full)
    assert float(complete.iperf2_stream_datagrams[0].sum()) == 898 and float(complete.packets_lost[0]) == 1
    ds = iperf2.parse(head(full, 23))        # stream 2's Server Report lost
    assert ds.attrs["truncation"] == ("run 0: no Server Report for stream(s) [2]: "
                                      "the receiver's counts are unknown")
    assert math.isnan(float(ds.packets_lost[0])) and math.isnan(float(ds.loss_fraction[0]))
    assert math.isnan(float(ds.throughput_receiver[0]))
    assert float(ds.throughput_sender[0]) == 10.5e6       # the [SUM] the client printed
    assert float(ds.packets[0]) == 900                    # [SUM-2] Sent 900 datagrams


def test_interrupt_echoed_into_the_log_is_a_truncation():
    from .damage import interrupt, sample
    full = sample("iperf2", "v2.1.8--tcp-client.txt")
    ds = iperf2.parse(interrupt(full, 7))
    assert ds.attrs["truncated"] == 1 and ds.attrs["truncation"] == "interrupted by ^C (line 7)"
    assert float(ds.throughput[0]) == float(iperf2.parse(full).throughput[0])


def test_printed_totals_are_checked_against_the_streams_and_the_rates():
    ds = read("v2.1.8--tcp-client-P4-e.txt")
    checks = json.loads(ds.attrs["consistency"])
    assert [c["check"] for c in checks] == [
        "run 0: bytes: [SUM] final vs the streams' finals",
        "run 0: [SUM] final: bit/s vs bytes x 8 / seconds",
        *(f"run 0: stream {i} final: bit/s vs bytes x 8 / seconds" for i in (1, 2, 3, 4)),
        *(f"run 0: bytes: stream {i} final vs the sum of its intervals" for i in (1, 2, 3, 4)),
        "run 0: bytes: [SUM] final vs the sum of its intervals"]
    assert ds.attrs["consistent"] == 1
    # [SUM] 12.1 GBytes; streams 3.37 + 3.47 + 2.96 + 2.34 GBytes
    assert checks[0]["tool"] == pytest.approx(12.1 * GiB)
    assert checks[0]["data"] == pytest.approx((3.37 + 3.47 + 2.96 + 2.34) * GiB)


def test_a_damaged_sum_line_is_inconsistent():
    from .damage import replace, sample
    text = replace(sample("iperf2", "v2.1.8--tcp-client-P4-e.txt"), 26, "12.1 GBytes", "121 GBytes")
    ds = iperf2.parse(text)
    assert ds.attrs["consistent"] == 0
    bad = [c["check"] for c in json.loads(ds.attrs["consistency"]) if not c["ok"]]
    assert bad == ["run 0: bytes: [SUM] final vs the streams' finals",
                   "run 0: [SUM] final: bit/s vs bytes x 8 / seconds",
                   "run 0: bytes: [SUM] final vs the sum of its intervals"]


def test_udp_received_datagrams_agree_with_the_bytes():
    ds = read("v2.1.8--udp-client-P2.txt")
    checks = [c for c in json.loads(ds.attrs["consistency"]) if c["check"].startswith("run 0: UDP")]
    # [  1] ... 643 KBytes ... 1/449: 448 received of 1470 bytes; [  2] 645 KBytes 0/449
    assert [(c["tool"], round(c["data"], 1)) for c in checks] == [(448, 447.9), (449, 449.3)]
    assert all(c["ok"] for c in checks)


def test_genuine_corpus_passes_its_checks(corpus):
    ds = thruput.read(corpus / "iperf2" / "perfkitbenchmarker-iperf_results.txt")
    # 16 rates and totals, and 4 finals against their intervals
    assert ds.attrs["consistent"] == 1 and len(json.loads(ds.attrs["consistency"])) == 20


def test_start_time_is_the_earliest_enhanced_connection_time():
    # (ct=0.05 ms) on 2026-11-22 13:53:16 (UTC); the server saw three clients
    assert str(read("v2.1.8--tcp-client-P4-e.txt").start_time.values[0]) == "2026-11-22T13:53:16.000000000"
    assert [str(t) for t in read("v2.1.8--tcp-server-e.txt").start_time.values] == [
        "2026-11-22T13:53:12.000000000", "2026-11-22T13:53:14.000000000", "2026-11-22T13:53:16.000000000"]
    assert np.isnat(read("v2.1.8--tcp-client.txt").start_time.values).all()   # classic: no time printed
