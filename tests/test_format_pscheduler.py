"""pScheduler readers (pscheduler_throughput, pscheduler_latency): pScheduler's public rtt
example, and results constructed from runs recorded here by pScheduler's documented
mappings (tools/pscheduler_from_recordings.py; see tests/data/pscheduler_*/README.md),
checked against the readers of the recordings themselves."""

from __future__ import annotations

import json

import numpy as np
import pytest

import thruput
from thruput.contract import validate
from thruput.errors import ParseError
from thruput.formats import _pscheduler, iperf3_json, irtt, pscheduler_latency, pscheduler_throughput

from .conftest import DATA

T = DATA / "pscheduler_throughput"
L = DATA / "pscheduler_latency"


def test_throughput_matches_the_iperf3_run_it_was_made_from():
    ps = validate(thruput.read(T / "constructed--iperf3-3.12-tcp-P4.json"))
    ip = thruput.read(DATA / "iperf3_json" / "3.12--tcp-P4.json")
    doc = json.loads((DATA / "iperf3_json" / "3.12--tcp-P4.json").read_text())
    assert ps.sizes["stream"] == 4 and ps.attrs["format"] == "pscheduler_throughput"
    assert float(ps.bytes[0]) == doc["end"]["sum_sent"]["bytes"]
    assert float(ps.throughput[0]) == doc["end"]["sum_sent"]["bits_per_second"] == float(ps.throughput_sender[0])
    assert float(ps.retransmits[0]) == doc["end"]["sum_sent"]["retransmits"]
    np.testing.assert_array_equal(ps.interval_bytes.values, ip.interval_bytes.values)
    np.testing.assert_array_equal(ps.interval_rtt.values, ip.interval_rtt.values)       # us -> ms
    np.testing.assert_array_equal(ps.interval_cwnd.values, ip.interval_cwnd.values)
    assert ps.stream_bytes[0].values.tolist() == [s["sender"]["bytes"] for s in doc["end"]["streams"]]
    assert ps.pscheduler_stream_id[0].values.tolist() == [str(s["sender"]["socket"]) for s in doc["end"]["streams"]]
    assert ps.attrs["consistent"] == 1 and len(json.loads(ps.attrs["consistency"])) == 3


def test_udp_throughput_packets_loss_and_jitter():
    ps = validate(thruput.read(T / "constructed--iperf3-3.12-udp.json"))
    doc = json.loads((DATA / "iperf3_json" / "3.12--udp.json").read_text())
    # pScheduler's iperf3 tool takes end.sum_sent where iperf3 writes one (3.12 does, for UDP
    # too): the sender's view, whose loss and jitter are 0
    total = doc["end"]["sum_sent"]
    assert total["jitter_ms"] == 0 and doc["end"]["sum"]["jitter_ms"] > 0
    assert ps.protocol.values.tolist() == ["UDP"]
    assert float(ps.packets[0]) == total["packets"] and float(ps.packets_lost[0]) == total["lost_packets"]
    assert float(ps.jitter[0]) == total["jitter_ms"]
    assert float(ps.loss_fraction[0]) == total["lost_packets"] / total["packets"]
    assert np.isnan(float(ps.throughput_sender[0]))


def test_archiver_wrapping_gives_spec_and_start_time():
    ps = validate(thruput.read(T / "constructed--iperf3-3.12-tcp-R-archiver.json"))
    doc = json.loads((DATA / "iperf3_json" / "3.12--tcp-R.json").read_text())
    assert ps.stream_direction.values.tolist() == [["receive"]]
    assert ps.start_time.values[0] == np.datetime64(doc["start"]["timestamp"]["timesecs"], "s")
    # -R: the intervals are the receiver's (no retransmits), so only the bytes are checked
    assert [c["check"].split(":")[0] for c in json.loads(ps.attrs["consistency"])] == ["bytes", "bytes"]


def test_cut_throughput_keeps_complete_intervals():
    ps = validate(thruput.read(T / "constructed--iperf3-3.12-tcp-P4-cut-in-second-interval.json"))
    full = thruput.read(T / "constructed--iperf3-3.12-tcp-P4.json")
    assert ps.attrs["truncated"] == 1 and ps.sizes["interval"] == 1 and np.isnan(float(ps.throughput[0]))
    np.testing.assert_array_equal(ps.interval_bytes[0, :, 0], full.interval_bytes[0, :, 0])


def test_latency_histogram_and_raw_packets_match_the_irtt_run():
    ps = validate(thruput.read(L / "constructed--irtt-0.9.0-netns-loss-latency.json"))
    ir = thruput.read(DATA / "irtt" / "0.9.0--netns-loss.json")
    assert ps.attrs["kind"] == "rtt" and ps.sizes["probe"] == ir.sizes["probe"] == 199
    received = ~np.isnan(ir.irtt_send_delay.values)
    assert (ps.status.values == "reply").tolist() == received.tolist()
    # NTP timestamps keep 1/2**32 s: the one-way delays agree to a nanosecond
    np.testing.assert_allclose(ps.pscheduler_owd.values[received], ir.irtt_send_delay.values[received], atol=1e-6)
    assert float(ps.pscheduler_packets_lost) == 31 and float(ps.pscheduler_hist_count.sum()) == 168
    assert ps.pscheduler_hist_delay.attrs["units"] == "ms" and ps.attrs["consistent"] == 1
    # the histogram's statistics, weighted by count
    delay, count = ps.pscheduler_hist_delay.values, ps.pscheduler_hist_count.values
    assert float(ps.pscheduler_delay_mean) == pytest.approx((delay * count).sum() / count.sum(), rel=1e-12)
    assert ps.pscheduler_delay_percentile.values.tolist() == [0.07, 0.09, 0.13, 15.61]
    # nearest rank: the median bin holds the 84th of 168 delays, sorted
    owd = np.sort(np.round(ps.pscheduler_owd.values[received], 2))
    assert float(ps.pscheduler_delay_percentile.sel(pscheduler_percentile=50)) == pytest.approx(owd[83], abs=0.011)


def test_weighted_stats_nearest_rank():
    st = _pscheduler.weighted_stats(np.array([1.0, 2.0, 3.0, 10.0]), np.array([1.0, 1.0, 1.0, 1.0]))
    assert st["percentiles"].tolist() == [1.0, 2.0, 3.0, 10.0] and st["mean"] == 4.0
    st = _pscheduler.weighted_stats(np.array([1.0, 2.0]), np.array([3.0, 1.0]))
    assert st["percentiles"].tolist() == [1.0, 1.0, 1.0, 2.0] and st["stddev"] == pytest.approx(0.4330127018922193)
    assert np.isnan(_pscheduler.weighted_stats(np.zeros(0), np.zeros(0))["mean"])


def test_public_rtt_example_is_read_and_its_inconsistencies_reported():
    ps = validate(thruput.read(L / "public--rtt-result-format-example.json"))
    assert ps.status.values.tolist() == ["reply"] * 4 + ["unreachable", "lost", "unreachable"]
    assert ps.rtt.values[:4].tolist() == [0.012, 0.011, 0.008, 0.008]
    assert ps.seq.values.tolist() == [1, 2, 3, 4, -1, -1, -1]
    # pScheduler's hand-written example says 5 sent, 0 lost, loss 0.1234 beside 7 round trips
    bad = {c["check"].split(":")[0] for c in json.loads(ps.attrs["consistency"]) if not c["ok"]}
    assert bad == {"sent", "received", "lost", "loss"} and ps.attrs["consistent"] == 0


def test_iso_durations():
    assert _pscheduler._duration_ms("PT0.000012S") == pytest.approx(0.012)
    assert _pscheduler._duration_ms("PT1M2.5S") == 62500.0
    assert np.isnan(_pscheduler._duration_ms("P")) and np.isnan(_pscheduler._duration_ms("12 ms"))


@pytest.mark.parametrize("reader, text, message", [
    (pscheduler_throughput, '{"succeeded": false, "error": "iperf3 refused", "intervals": []}', "iperf3 refused"),
    (pscheduler_latency, '{"succeeded": true, "intervals": [], "summary": {}}', "pscheduler_throughput"),
    (pscheduler_throughput, '{"succeeded": true, "roundtrips": []}', "pscheduler_latency"),
    (pscheduler_throughput, '{"succeeded": true,\n "intervals": [oops]}', "not valid JSON"),
    (pscheduler_latency, '{"histogram-latency": {"1.0": 3', "cut off before"),
])
def test_bad_input_raises_parse_errors(reader, text, message):
    with pytest.raises(ParseError, match=message):
        reader.parse(text)


def test_sniffers_are_exclusive():
    heads = {p: p.read_text()[:4096] for p in sorted(T.glob("constructed--*.json")) + sorted(L.glob("*--*.json"))
             if "empty" not in p.name and "not-" not in p.name and not p.name.endswith(".expected.json")}
    for path, head in heads.items():
        want = "pscheduler_throughput" if path.parent == T else "pscheduler_latency"
        assert [m.NAME for m in (pscheduler_throughput, pscheduler_latency) if m.sniff(head)] == [want], path
        assert not iperf3_json.sniff(head) and not irtt.sniff(head)
    assert not pscheduler_throughput.sniff((T / "not-pscheduler--iperf3-3.12-tcp-P4.json").read_text()[:4096])
