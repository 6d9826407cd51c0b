"""esmond archive readers (esmond_throughput, esmond_latency): time series constructed from
esmond's documented schema (see tests/data/esmond_*/README.md), values worked out by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

import thruput
from thruput.contract import validate
from thruput.errors import ParseError
from thruput.formats import _pscheduler, esmond_latency, esmond_throughput, sniff

from .conftest import DATA

T = DATA / "esmond_throughput"
L = DATA / "esmond_latency"


def test_bare_throughput_series_is_one_run_per_point():
    ds = validate(thruput.read(T / "constructed--throughput-base.json"))
    assert ds.attrs["format"] == "esmond_throughput" and ds.sizes["run"] == 4
    assert ds.throughput.values.tolist() == [9412345678.0, 9398765432.5, 8123456789.0, 9401122334.25]
    assert ds.throughput.attrs["units"] == "bit/s"
    assert ds.start_time.values[1] == np.datetime64(1700003600, "s")
    assert ds.run_line.values.tolist() == [2, 3, 4, 5]
    assert float(ds.esmond_summary_window) == 0.0


def test_wrapped_throughput_keeps_metadata_and_checks_the_summary_window():
    ds = validate(thruput.read(T / "constructed--throughput-average-86400-wrapped.json"))
    assert ds.throughput.values.tolist() == [9400000000.0, 9350000000.5]
    assert ds.attrs["esmond_source"] == "198.51.100.10" and ds.attrs["esmond_tool_name"] == "pscheduler/iperf3"
    assert float(ds.esmond_summary_window) == 86400.0
    checks = json.loads(ds.attrs["consistency"])
    assert [c["ok"] for c in checks] == [True] and "average/86400" in checks[0]["check"]


def test_a_window_the_metadata_does_not_list_is_reported():
    doc = json.loads((T / "constructed--throughput-average-86400-wrapped.json").read_text())
    doc["series"][0]["summary-window"] = "3600"
    ds = esmond_throughput.parse(json.dumps(doc))
    assert ds.attrs["consistent"] == 0


def test_cut_throughput_keeps_complete_points():
    ds = validate(thruput.read(T / "constructed--throughput-base-cut-in-third-point.json"))
    assert ds.attrs["truncated"] == 1 and ds.sizes["run"] == 2
    assert ds.throughput.values.tolist() == [9412345678.0, 9398765432.5]


def test_histogram_points_kept_as_histograms_with_weighted_percentiles():
    ds = validate(thruput.read(L / "constructed--histogram-owdelay-base.json"))
    assert ds.attrs["kind"] == "rtt" and ds.sizes["probe"] == 0 and ds.sizes["esmond_point"] == 3
    assert ds.esmond_hist_delay.values.tolist() == [9.9, 10.4, 10.5, 10.6, 11.1, 12.0]
    assert ds.esmond_hist_count.values.tolist() == [[0, 120, 400, 60, 0, 20], [0, 0, 500, 0, 95, 0],
                                                   [1, 300, 299, 0, 0, 0]]
    assert ds.esmond_packets_received.values.tolist() == [600, 595, 600]
    # point 0: mean (10.4*120 + 10.5*400 + 10.6*60 + 12*20) / 600; nearest rank: p95 = rank 570
    assert ds.esmond_delay_mean.values[0] == pytest.approx(6324 / 600, rel=1e-12)
    assert ds.esmond_delay_percentile.values.tolist() == [[10.5, 10.5, 10.5, 10.6], [10.5, 10.5, 10.5, 11.1],
                                                         [10.4, 10.4, 10.5, 10.5]]
    assert ds.esmond_delay_min.values.tolist() == [10.4, 10.5, 9.9]
    assert ds.esmond_delay_max.values.tolist() == [12.0, 11.1, 10.5]
    # all 1795 packets pooled: ranks 449, 898, 1347 fall in 10.5 (cumulative 1620), 1706 in 11.1
    assert ds.esmond_series_delay_percentile.values.tolist() == [10.5, 10.5, 10.5, 11.1]
    assert float(ds.esmond_series_delay_min) == 9.9 and float(ds.esmond_series_delay_max) == 12.0
    assert ds.esmond_hist_delay.attrs["units"] == "ms"


def test_statistics_reuse_pschedulers_weighted_helper():
    ds = thruput.read(L / "constructed--histogram-owdelay-base.json")
    st = _pscheduler.weighted_stats(ds.esmond_hist_delay.values, ds.esmond_hist_count.values[1])
    assert float(ds.esmond_delay_stddev[1]) == st["stddev"]


def test_aggregation_of_the_base_points_has_the_pooled_statistics():
    base = thruput.read(L / "constructed--histogram-owdelay-base.json")
    agg = validate(thruput.read(L / "constructed--powstream-aggregation-3600-wrapped.json"))
    assert agg.sizes["esmond_point"] == 1
    assert agg.esmond_delay_percentile.values[0].tolist() == base.esmond_series_delay_percentile.values.tolist()
    assert float(agg.esmond_delay_mean[0]) == pytest.approx(float(base.esmond_series_delay_mean), rel=1e-12)
    assert float(agg.esmond_loss_fraction[0]) == 5 / 1800
    assert agg.attrs["consistent"] == 1


@pytest.mark.parametrize("name", ["constructed--packet-loss-rate-fraction.json",
                                  "constructed--packet-loss-rate-numerator-denominator.json"])
def test_loss_rate_as_fraction_or_numerator_denominator(name):
    ds = validate(thruput.read(L / name))
    assert ds.esmond_loss_fraction.values.tolist() == pytest.approx([0.0, 0.0083 if "fraction" in name else 5 / 600,
                                                                    0.0], rel=1e-12)
    assert ds.esmond_time.values.tolist() == [1700000000, 1700000060, 1700000120]
    assert ds.esmond_hist_count.shape == (3, 0)


def test_wrapped_series_are_aligned_and_checked_against_each_other():
    ds = validate(thruput.read(L / "constructed--powstream-base-wrapped.json"))
    assert ds.esmond_packets_sent.values.tolist() == [600, 600, 600]
    assert ds.esmond_packets_lost.values.tolist() == [0, 5, 0]
    checks = {c["check"].split(":")[0]: c for c in json.loads(ds.attrs["consistency"])}
    assert checks["received"]["tool"] == 1795 and checks["received"]["ok"]
    assert checks["loss"]["ok"] and ds.attrs["consistent"] == 1
    assert json.loads(ds.attrs["tool_summary"])["lost"] == 5


def test_histogram_disagreeing_with_the_counts_is_reported():
    doc = json.loads((L / "constructed--powstream-base-wrapped.json").read_text())
    doc["series"][2]["data"][1]["val"] = 7
    ds = esmond_latency.parse(json.dumps(doc))
    assert ds.attrs["consistent"] == 0


def test_sniffing_by_the_shape_of_val():
    assert sniff('[{"ts": 1, "val": 9400000000}]') == "esmond_throughput"
    assert sniff('[{"ts": 1, "val": {"10.40": 3}}]') == "esmond_latency"
    assert sniff('[{"ts": 1, "val": 0.25}]') == "esmond_latency"
    assert sniff('[{"ts": 1, "val": {"numerator": 1, "denominator": 4}}]') == "esmond_latency"
    # bare integers are throughput unless the reader is chosen: then packets lost
    ds = esmond_latency.parse('[{"ts": 1, "val": 3}]')
    assert ds.esmond_packets_lost.values.tolist() == [3]


def test_the_other_formats_series_is_refused_naming_the_right_one():
    with pytest.raises(ParseError, match="esmond_latency"):
        esmond_throughput.parse('[{"ts": 1, "val": {"10.40": 3}}]')
    with pytest.raises(ParseError, match="esmond_throughput"):
        esmond_latency.parse('{"series": [{"event-type": "throughput", "data": []}]}')


@pytest.mark.parametrize("text, line", [
    ('[{"ts": 1, "val": 1e9},\n {"ts": 2}]', 2),
    ('[{"ts": 1, "val": 1e9},\n x]', 2),
    ('[\n{"ts": 1, "val": {"10', 2),
    ('{"series": 3}', 1),
    ('[{"ts": 1, "val": 1e9}]\n]', 2),
])
def test_damage_is_a_parse_error_naming_the_line(text, line):
    with pytest.raises(ParseError) as exc:
        esmond_throughput.parse(text)
    assert exc.value.line == line


def test_a_histogram_key_that_is_not_a_delay_is_a_parse_error():
    with pytest.raises(ParseError):
        esmond_latency.parse('{"series": [{"event-type": "histogram-owdelay", "data": [{"ts": 1, "val": {"x": 1}}]}]}')


def test_a_cut_wrapper_or_a_negative_count_is_a_parse_error_naming_the_line():
    text = (L / "constructed--powstream-base-wrapped.json").read_text()
    with pytest.raises(ParseError, match="cut off") as exc:
        esmond_latency.parse(text[:len(text) // 2])
    assert exc.value.line == text[:len(text) // 2].count("\n") + 1
    with pytest.raises(ParseError, match="negative") as exc:
        esmond_latency.parse('[{"ts": 1, "val": {"1.0": 3}},\n{"ts": 2, "val": {"1.0": -3}}]')
    assert exc.value.line == 2
