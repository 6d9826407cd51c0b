"""tcp_info reader (polled ``ss -tin``): hand-checked values of the recorded samples."""

from __future__ import annotations

import numpy as np
import pytest

import thruput
from thruput.errors import ParseError
from thruput.formats import tcp_info

from .conftest import DATA

TCP = DATA / "tcp_info"
DATA_CONN = "10.16.0.1:54062->10.16.1.2:39806"     # iperf3's data connection (cubic)


def test_shaped_run_with_retransmissions_by_hand():
    ds = thruput.read(TCP / "tbf-netns--iperf3-3s-retrans.txt")
    assert ds.sizes["snapshot"] == 12                     # 6 polls x (control + data socket)
    data = ds.where(ds.connection == DATA_CONN, drop=True)
    # line 12: "cubic ... rtt:11.775/1.148 mss:1448 ... cwnd:20 ssthresh:14 ... bytes_acked:1242422
    #           ... retrans:0/29"
    second = data.isel(snapshot=1)
    assert int(second.line) == 11                          # the socket line; info on line 12
    assert float(second.cwnd) == 20 * 1448 and float(second.ssthresh) == 14 * 1448
    assert float(second.tcp_info_cwnd_segments) == 20
    assert (float(second.srtt), float(second.rttvar)) == (11.775, 1.148)
    assert float(second.bytes_acked) == 1242422 and float(second.tcp_info_bytes_retrans) == 41992
    assert float(second.retransmits_total) == 29 and float(second.tcp_info_retrans) == 0
    assert float(second.tcp_info_send) == 19675584 and float(second.tcp_info_busy) == 512
    assert second.tcp_info_cc.item() == "cubic"
    assert data.retransmits_total.values.tolist() == [0, 29, 55, 78, 102, 127]
    # first poll: ssthresh not printed yet ("infinite") -> NaN; no retrans field -> 0
    assert np.isnan(data.ssthresh.values[0]) and data.retransmits_total.values[0] == 0
    assert data.time.values[-1] == pytest.approx(1795355809.542635 - 1795355806.986303)
    assert ds.tcp_info_timestamp.values[0] == 1795355806.986303
    control = ds.where(ds.connection != DATA_CONN, drop=True)
    assert set(control.tcp_info_cc.values) == {"bbr"}
    assert control.tcp_info_bbr_bw.values[0] == 1053090592 and control.tcp_info_bbr_bw.attrs["units"] == "bit/s"
    assert control.tcp_info_bbr_mrtt.values[0] == 0.009 and control.tcp_info_bbr_mrtt.attrs["units"] == "ms"
    # a retransmitted byte count can only grow
    assert (np.diff(data.tcp_info_bytes_retrans.values) >= 0).all()


def test_oneline_and_multiline_forms_agree():
    multi = thruput.read(TCP / "loopback--iperf3-2s.txt")
    one = thruput.read(TCP / "oneline-O--iperf3-1s.txt")
    core = {"time", "line", "connection", "cwnd", "ssthresh", "srtt", "rttvar", "mss", "bytes_acked",
            "retransmits_total", "tcp_info_cc", "tcp_info_send", "tcp_info_pacing_rate",
            "tcp_info_delivery_rate", "tcp_info_snd_wscale", "tcp_info_minrtt", "tcp_info_state"}
    assert core <= set(one.data_vars) and core <= set(multi.data_vars)
    first = one.isel(snapshot=1)      # "cubic ... rtt:0.009/0.006 mss:60416 ... cwnd:11 ..."
    assert float(first.cwnd) == 11 * 60416 and float(first.srtt) == 0.009
    assert float(first.retransmits_total) == 0      # loopback: ss prints no retrans field
    assert int(first.line) == 4 and one.attrs["lines_total"] == 8


def test_truncated_last_snapshot_is_dropped():
    ds = thruput.read(TCP / "truncated--tbf-cut-in-info.txt")
    whole = thruput.read(TCP / "tbf-netns--iperf3-3s-retrans.txt")
    assert ds.sizes["snapshot"] == whole.sizes["snapshot"] - 1
    np.testing.assert_array_equal(ds.cwnd.values, whole.cwnd.values[:-1])
    assert ds.attrs["truncation"] == "last snapshot (line 36) cut off"


def test_rates_with_and_without_n():
    assert tcp_info._number("send", "20857040bps", 1) == (20857040.0, None)
    assert tcp_info._number("send", "20.9Mbps", 1) == (20.9e6, None)
    assert tcp_info._number("rwnd_limited", "120ms(12.5%)", 1) == (120.0, 12.5)
    with pytest.raises(ParseError) as err:
        tcp_info._number("rto", "fast", 7)
    assert err.value.line == 7


def test_empty_and_foreign_input():
    with pytest.raises(ParseError, match="empty input"):
        tcp_info.parse("\n")
    assert not tcp_info.sniff((TCP / "notmine--ss-tn-without-info.txt").read_text())


def test_socket_line_without_info_is_skipped_with_reason():
    text = (TCP / "tbf-netns--iperf3-3s-retrans.txt").read_text().split("\n")
    del text[3]                       # drop the first info line: its socket line stands alone
    ds = tcp_info.parse("\n".join(text))
    assert ds.sizes["snapshot"] == 11
    assert '"socket without tcp_info": 1' in ds.attrs["skipped_reasons"]


def test_a_poll_time_too_long_to_be_a_number_is_an_error_naming_its_line():
    text = (TCP / "tbf-netns--iperf3-3s-retrans.txt").read_text().split("\n")
    times = [k for k, line in enumerate(text) if line.startswith("# time: ")]
    text[times[1]] = "# time: " + "9" * 400          # (a float of it is inf)
    with pytest.raises(ParseError, match="not a finite number of seconds") as err:
        tcp_info.parse("\n".join(text))
    assert err.value.line == times[1] + 1
