"""iperf 2 CSV (-y C) reader: hand-checked values of every layout and its quirks.

Rates in CSV rows are integers in bit/s and bytes are exact, so the expected values are
the printed numbers themselves (sums done by hand from the rows).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import thruput
from thruput.errors import ParseError
from thruput.formats import iperf2_csv

from .conftest import DATA

SAMPLES = DATA / "iperf2_csv"


def read(name):
    return thruput.read(SAMPLES / name)


def values(da):
    return np.asarray(da.values).tolist()


def test_2_1_8_parallel_without_sum_row_is_one_run():
    ds = read("v2.1.8--tcp-client-P3.csv")
    assert ds.sizes["run"] == 1 and int(ds.streams[0]) == 3
    # each stream's second 0.0-1.0 row is its final (the first is the -i 1 interval)
    assert values(ds.stream_throughput[0]) == [3810486491.0, 2290904915.0, 2331859311.0]   # ids 1, 2, 3
    assert float(ds.throughput[0]) == 3810486491 + 2290904915 + 2331859311
    assert float(ds.bytes[0]) == 482607164 + 290586684 + 297009212
    # a TCP CSV log doesn't say which end wrote it
    assert str(ds.iperf2_side[0].values) == ""
    assert math.isnan(float(ds.throughput_sender[0])) and math.isnan(float(ds.throughput_receiver[0]))
    assert values(ds.interval_throughput[0, :, 0]) == [3859808736.0, 2323644896.0, 2375025120.0]


def test_server_log_is_split_into_runs():
    ds = read("v2.1.8--tcp-server.csv")
    assert values(ds.streams) == [1, 3, 1]
    assert values(ds.throughput) == [21952174646.0, 2318565503 + 3842260769 + 2385453298.0, 28230413846.0]
    assert values(ds.interval_throughput[0, 0]) == [29328671200.0, 14539993032.0]
    assert values(ds.run_line) == [1, 4, 10]


def test_udp_sides():
    client = read("v2.1.8--udp-client.csv")     # final row: Total -1 -> the sender's log
    assert str(client.iperf2_side[0].values) == "client"
    assert float(client.throughput[0]) == 10508428 == float(client.throughput_sender[0])
    assert math.isnan(float(client.loss_fraction[0]))
    server = read("v2.1.8--udp-server.csv")
    assert str(server.iperf2_side[0].values) == "server"
    assert float(server.throughput_receiver[0]) == 10508564 and float(server.loss_fraction[0]) == 0.0
    assert float(server.packets[0]) == 895 and float(server.jitter[0]) == 0.001
    old = read("v2.0--udp-client.csv")          # 9-field own row, then the 14-field report
    assert float(old.throughput[0]) == 1046640 == float(old.throughput_receiver[0])
    assert float(old.throughput_sender[0]) == 1050168
    assert float(old.loss_fraction[0]) == 3 / 893 and float(old.out_of_order[0]) == 1


def test_2_0_sum_rows():
    ds = read("v2.0--tcp-client-P2.csv")
    assert float(ds.throughput[0]) == 1888485376 and float(ds.bytes[0]) == 472121344
    assert values(ds.iperf2_sum_interval_throughput[0]) == [1886388224.0, 1890582528.0]
    assert float(ds.stream_bytes.sum()) == 472121344


def test_2_1_9_enhanced_fifteen_fields():
    ds = read("v2.1.9--tcp-client-e.csv")
    assert float(ds.throughput[0]) == 41392537840 and float(ds.retransmits[0]) == 15
    assert values(ds.interval_retransmits[0, 0]) == [3.0, 12.0]
    assert values(ds.interval_cwnd[0, 0]) == [2302 * 1024.0, 1790 * 1024.0]
    assert values(ds.interval_rtt[0, 0]) == pytest.approx([0.145, 0.211])
    assert values(ds.interval_rttvar[0, 0]) == pytest.approx([0.037, 0.058])
    assert values(ds.iperf2_interval_writes[0, 0]) == [39829.0, 39121.0]
    assert int(ds.iperf2_enhanced[0]) == 1


def test_2_2_header_and_placeholders():
    ds = read("v2.2--tcp-client-e.csv")
    assert json.loads(ds.attrs["skipped_reasons"]) == {"header": 1}
    assert float(ds.throughput[0]) == 61472768256 and float(ds.duration[0]) == 2.0
    # -1 / 4294967295 / rtt 0 with cwnd -1: "not available", NaN
    for name in ("interval_cwnd", "interval_rtt", "interval_retransmits", "iperf2_interval_writes"):
        assert np.isnan(ds[name].values).all(), name
    udp = read("v2.2--udp-client-P2-e.csv")
    assert str(udp.iperf2_side[0].values) == "client"      # writecnt: a sender's rows
    assert float(udp.throughput[0]) == 2100336 and int(udp.streams[0]) == 2
    assert values(udp.stream_throughput[0]) == [1051344.0, 1048992.0]


def test_truncated_row():
    ds = read("v2.1.8--tcp-client-P3-truncated.csv")
    assert ds.attrs["truncated"] == 1
    assert "last row was cut off" in ds.attrs["truncation"] and "stream(s) [2]" in ds.attrs["truncation"]
    assert math.isnan(float(ds.throughput[0]))
    assert values(ds.stream_throughput[0])[0] == 3810486491.0


@pytest.mark.parametrize("kept", ["2", "20261122", "+0100:2026"])
def test_row_cut_inside_its_time_field_is_truncated(kept):
    text = (SAMPLES / "v2.1.8--tcp-client-P3.csv").read_text()
    cut = text[: text.rstrip("\n").rindex("\n") + 1] + kept
    ds = iperf2_csv.parse(cut)
    assert ds.attrs["truncated"] == 1 and json.loads(ds.attrs["skipped_reasons"]) == {"truncated row": 1}
    assert ds.attrs["truncation"].startswith(f"the last row was cut off: {kept!r}")


@pytest.mark.parametrize("name, fields", [("v2.2--tcp-client-e.csv", 9), ("v2.2--tcp-client-e.csv", 10),
                                          ("v2.1.9--tcp-client-e.csv", 9)])
def test_last_row_cut_to_fewer_fields_is_truncated_not_read_as_another_layout(name, fields):
    text = (SAMPLES / name).read_text()
    body, last = text[: text.rstrip("\n").rindex("\n") + 1], text.rstrip("\n").rsplit("\n", 1)[1]
    ds = iperf2_csv.parse(body + ",".join(last.split(",")[:fields]))
    full = iperf2_csv.parse(text)
    assert ds.attrs["truncated"] == 1 and json.loads(ds.attrs["skipped_reasons"])["truncated row"] == 1
    assert math.isnan(float(ds.throughput[0]))  # the final row was lost, not misread
    np.testing.assert_array_equal(ds.interval_bytes, full.interval_bytes)


def test_bad_rows_are_errors_naming_the_line():
    good = (SAMPLES / "v2.1.8--tcp-client.csv").read_text()
    with pytest.raises(ParseError) as err:
        iperf2_csv.parse(good + "20261122135612,127.0.0.1,1,127.0.0.1,2,1,0.0-2.0,5,6,7\n")
    assert err.value.line == 4 and "10 fields" in err.value.message
    with pytest.raises(ParseError) as err:
        iperf2_csv.parse(good + "something else\n")
    assert err.value.line == 4
    with pytest.raises(ParseError, match="empty input"):
        iperf2_csv.parse("")


def test_sniffer():
    assert iperf2_csv.sniff((SAMPLES / "v2.2--udp-client-P2-e.csv").read_text())
    assert iperf2_csv.sniff((SAMPLES / "v2.1.9--tcp-client-e.csv").read_text())
    assert not iperf2_csv.sniff((DATA / "iperf2" / "v2.1.8--tcp-client.txt").read_text())
    assert not iperf2_csv.sniff("a,b,c\n1,2,3\n")


def test_row_cut_inside_its_last_field_is_not_data():
    """Issue 10: '...,2290904915' cut to '...,22909' read as 22,909 bit/s for a stream."""
    from .damage import cut, sample
    full = sample("iperf2_csv", "v2.1.8--tcp-client-P3.csv")
    ds = iperf2_csv.parse(cut(full, 6))
    assert ds.attrs["truncation"] == ("the last row was cut off: "
                                      "'20261122135613,127.0.0.1,60114,127.0.0.1,38600,2,0.0-1.0,290'; "
                                      "run 0: no final report for stream(s) [2] (cut after 1 interval(s))")
    assert json.loads(ds.attrs["skipped_reasons"]) == {"truncated row": 1}
    assert np.asarray(ds.stream_throughput[0]).tolist()[1] != np.asarray(ds.stream_throughput[0]).tolist()[1]
    assert math.isnan(float(ds.throughput[0]))


def test_start_time_is_the_first_stamp_less_its_interval_end():
    # +0000:20240908113035.128,...,0.0-1.0,...: the stamp is written at the interval's end
    assert str(read("v2.1.9--tcp-client-e.csv").start_time.values[0]) == "2024-09-08T11:30:34.128000000"
    # 20261122135611,...,0.0-1.0: no zone printed, taken as UTC
    assert str(read("v2.1.8--tcp-client.csv").start_time.values[0]) == "2026-11-22T13:56:10.000000000"
    # 2.1.8 -e prints 19700101000000.000: not a time
    assert np.isnat(read("v2.1.8--tcp-client-e.csv").start_time.values).all()
