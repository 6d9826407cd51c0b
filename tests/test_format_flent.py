"""flent reader: the mapping of flent's series onto the throughput kind, checked against the
genuine corpus files (rrul, tcp_nup; read here, never copied) and the ping test recorded on
loopback with flent + irtt."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import thruput
from thruput.errors import ParseError
from thruput.formats import flent, iperf3_json

from .conftest import DATA

HERE = DATA / "flent"


def _doc(path):
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


@pytest.fixture(scope="module")
def rrul(corpus):
    path = corpus / "flent" / "test-rrul.flent.gz"
    return thruput.read(path), _doc(path)


@pytest.fixture(scope="module")
def tcp_nup(corpus):
    path = corpus / "flent" / "test-tcp_nup.flent.gz"
    return thruput.read(path), _doc(path)


def test_rrul_streams_and_directions(rrul):
    ds, doc = rrul
    meta = doc["metadata"]["SERIES_META"]
    names = ds.flent_stream_name[0].values.tolist()
    assert names == ["TCP upload BE", "TCP upload BE2", "TCP upload BE3", "TCP upload BE4",
                     "TCP download BE", "TCP download BE2", "TCP download BE3", "TCP download BE4"]
    assert ds.stream_direction[0].values.tolist() == ["send"] * 4 + ["receive"] * 4
    # each stream's whole-run figure is netperf's own MEAN_VALUE, in bit/s
    assert ds.stream_throughput[0].values.tolist() == [meta[n]["MEAN_VALUE"] * 1e6 for n in names]
    assert ds.attrs["tool_version"] == "1.0.1-git-1cfb649"
    assert str(ds.flent_test[0].values) == "rrul_be"


def test_rrul_totals_agree_with_flents_sums(rrul):
    ds, doc = rrul
    meta = doc["metadata"]["SERIES_META"]
    # forward = upload: 2.22 + 2.51 + 2.18 + 2.28 Mbit/s = flent's "TCP upload sum" 9.19
    assert float(ds.throughput[0]) == pytest.approx(meta["TCP upload sum"]["MEAN_VALUE"] * 1e6, rel=1e-12)
    assert float(ds.throughput[0]) == pytest.approx(9.19e6, rel=1e-12)
    assert float(ds.throughput_sender[0]) == float(ds.throughput[0])
    assert np.isnan(float(ds.throughput_receiver[0]))
    assert float(ds.flent_throughput_reverse[0]) == pytest.approx(meta["TCP download sum"]["MEAN_VALUE"] * 1e6)
    assert float(ds.streams[0]) == 4 and float(ds.duration[0]) == 140
    summary = json.loads(ds.attrs["tool_summary"])
    assert summary["series"]["TCP totals"]["MEAN_VALUE"] == 17.97
    assert summary["test"] == "rrul_be" and summary["step_size"] == 0.2


def test_rrul_series_on_the_grid(rrul):
    ds, doc = rrul
    x = doc["x_values"]
    assert ds.sizes["interval"] == len(x) == 760
    assert ds.interval_start[0].values.tolist() == x
    np.testing.assert_allclose(ds.interval_end[0] - ds.interval_start[0], 0.2)
    up = [None if v is None else v * 1e6 for v in doc["results"]["TCP upload BE2"]]
    got = ds.interval_throughput[0, 1].values
    assert [None if np.isnan(v) else v for v in got.tolist()] == up
    assert np.isnan(ds.interval_bytes.values).all()        # flent keeps no byte counts
    # the stream's tcp_info sub-series: rtt in ms, cwnd in segments
    rtt = np.array([np.nan if v is None else v for v in doc["results"]["TCP upload BE2::tcp_rtt"]])
    np.testing.assert_array_equal(ds.interval_rtt[0, 1].values, rtt)
    cwnd = np.array([np.nan if v is None else v for v in doc["results"]["TCP upload BE2::tcp_cwnd"]])
    np.testing.assert_array_equal(ds.flent_interval_cwnd[0, 1].values, cwnd)
    assert np.isnan(ds.interval_cwnd.values).all() and np.isnan(ds.interval_rtt[0, 4:].values).all()
    # line provenance: the value's own line in "results"
    text = gzip.decompress((DATA.parents[1].parent / "shared" / "corpus" / "flent" / "test-rrul.flent.gz")
                           .read_bytes()).decode().split("\n")
    j = int(np.flatnonzero(~np.isnan(got))[0])
    assert float(text[int(ds.line[0, 1, j]) - 1].strip().rstrip(",")) * 1e6 == got[j]


def test_rrul_ping_under_load(rrul):
    ds, doc = rrul
    assert ds.flent_ping_series.values.tolist() == ["Ping (ms) UDP BE1", "Ping (ms) UDP BE2", "Ping (ms) UDP BE3",
                                                   "Ping (ms) ICMP", "Ping (ms) avg"]
    icmp = ds.flent_ping.sel(flent_ping_series="Ping (ms) ICMP")[0].values
    ref = np.array([np.nan if v is None else v for v in doc["results"]["Ping (ms) ICMP"]])
    np.testing.assert_array_equal(icmp, ref)
    raw = ds.flent_ping_raw_rtt.sel(flent_ping_series="Ping (ms) ICMP")[0].values
    assert raw[~np.isnan(raw)].tolist() == [p["val"] for p in doc["raw_values"]["Ping (ms) ICMP"]]
    meta = doc["metadata"]["SERIES_META"]["Ping (ms) ICMP"]
    # MIN/MEAN/MAX_VALUE are ping's own summary line (3 decimals); the probes print 3 significant
    # digits, truncated (10.452 ms prints as 10.4)
    assert np.nanmin(raw) <= meta["MIN_VALUE"] < np.nanmin(raw) + 0.1
    assert np.nanmax(raw) <= meta["MAX_VALUE"] < np.nanmax(raw) + 1
    assert np.nanmean(raw) == pytest.approx(meta["MEAN_VALUE"], abs=0.1)
    assert ds.sizes["flent_other_series"] == 32  # CPU and qdisc statistics
    assert "qdisc_stats_testbed-02::dropped" in ds.flent_other_series.values.tolist()
    assert ds.flent_aggregate.sel(flent_aggregate_series="TCP upload sum").attrs["units"] == "bit/s"


def test_tcp_nup_fifty_streams(tcp_nup):
    ds, doc = tcp_nup
    meta = doc["metadata"]["SERIES_META"]
    assert ds.sizes["stream"] == 50 and float(ds.streams[0]) == 50
    assert ds.flent_stream_name[0].values.tolist() == [f"TCP upload::{i}" for i in range(1, 51)]
    assert (ds.stream_direction.values == "send").all()
    total = sum(meta[f"TCP upload::{i}"]["MEAN_VALUE"] for i in range(1, 51))
    assert float(ds.throughput[0]) == pytest.approx(total * 1e6, rel=1e-12)
    assert float(ds.throughput[0]) == pytest.approx(meta["TCP upload sum"]["MEAN_VALUE"] * 1e6, rel=1e-9)
    assert ds.attrs["lines_parsed"] == ds.attrs["lines_total"]
    rttvar = np.array([np.nan if v is None else v for v in doc["results"]["TCP upload::7::tcp_rtt_var"]])
    np.testing.assert_array_equal(ds.interval_rttvar[0, 6].values, rttvar)


def test_recorded_ping_test_has_no_streams():
    ds = thruput.read(HERE / "2.1.1--ping-loopback.flent.gz")
    doc = _doc(HERE / "2.1.1--ping-loopback.flent.gz")
    assert ds.sizes["stream"] == 0 and float(ds.streams[0]) == 0
    assert np.isnan(float(ds.throughput[0]))
    assert ds.flent_ping_series.values.tolist() == ["Ping (ms) ICMP", "Ping (ms) UDP"]
    for name in ("Ping (ms) ICMP", "Ping (ms) UDP"):
        raw = ds.flent_ping_raw_rtt.sel(flent_ping_series=name)[0].values
        assert raw.tolist() == [p["val"] for p in doc["raw_values"][name]]
    udp_meta = doc["metadata"]["SERIES_META"]["Ping (ms) UDP"]
    raw = ds.flent_ping_raw_rtt.sel(flent_ping_series="Ping (ms) UDP")[0].values
    assert raw.min() == udp_meta["RTT_MIN"] and raw.max() == udp_meta["RTT_MAX"]
    assert ds.attrs["tool_version"] == "2.1.1"


def test_truncated_file_keeps_complete_series():
    cut = thruput.read(HERE / "2.1.1--truncated-ping.flent")
    full = thruput.read(HERE / "2.1.1--ping-loopback.flent.gz")
    assert cut.attrs["truncated"] == 1
    assert "Ping (ms) UDP" in cut.attrs["truncation"] and "rebuilt from STEP_SIZE" in cut.attrs["truncation"]
    assert cut.flent_ping_series.values.tolist() == ["Ping (ms) ICMP"]
    np.testing.assert_array_equal(cut.flent_ping[0, 0], full.flent_ping[0, 0])
    np.testing.assert_allclose(cut.interval_start, full.interval_start)


def test_cut_gzip_stream_keeps_what_was_complete():
    from thruput.reader import read_bytes
    raw = (HERE / "2.1.1--ping-loopback.flent.gz").read_bytes()
    ds = read_bytes(raw[: int(len(raw) * 0.99)], path="cut.flent.gz")  # cut in x_values
    full = thruput.read(HERE / "2.1.1--ping-loopback.flent.gz")
    assert ds.attrs["truncated"] == 1 and "x_values" in ds.attrs["truncation"]
    np.testing.assert_array_equal(ds.flent_ping, full.flent_ping)
    with pytest.raises(ParseError, match="cut.flent.gz"):
        read_bytes(raw[: len(raw) // 2], path="cut.flent.gz")  # cut in metadata: nothing complete


def test_file_cut_inside_a_number_keeps_what_was_complete():
    text = gzip.decompress((HERE / "2.1.1--ping-loopback.flent.gz").read_bytes()).decode()
    cut = text[: text.index("0.1396361670504476") + 2]  # "0."
    ds, full = flent.parse(cut), flent.parse(text)
    assert ds.attrs["truncated"] == 1 and "'Ping (ms) UDP'" in ds.attrs["truncation"]
    assert ds.flent_ping_series.values.tolist() == ["Ping (ms) ICMP"]  # the UDP series was cut
    np.testing.assert_array_equal(ds.flent_ping[0, 0], full.flent_ping[0, 0])


@pytest.mark.parametrize("text, line", [
    ('{"metadata": {"NAME": "x"}}\n', 1),
    ('{"metadata": {"NAME": "x"},\n  "results": oops\n}\n', 2),
    ("[1]\n", 1),
])
def test_bad_files_raise_parse_errors(text, line):
    with pytest.raises(ParseError) as info:
        flent.parse(text)
    assert info.value.line == line


def test_sniff():
    text = gzip.decompress((HERE / "2.1.1--ping-loopback.flent.gz").read_bytes()).decode()
    assert flent.sniff(text[:4096])
    assert not flent.sniff(gzip.decompress((HERE / "not-flent--irtt.json.gz").read_bytes()).decode()[:4096])
    assert not flent.sniff((DATA / "iperf3_json" / "3.12--tcp.json").read_text())
    assert not iperf3_json.sniff(text[:4096])


def test_corpus_files_are_claimed_by_flent(corpus):
    for path in sorted((corpus / "flent").glob("*.flent.gz")):
        head = gzip.decompress(path.read_bytes()).decode()[:4096]
        from thruput import formats
        assert formats.sniff(head, str(path)) == "flent"


def test_start_time_is_t0(corpus):
    """start_time + interval_start is the UTC time of an interval: flent's grid starts at T0."""
    ds = thruput.read(corpus / "flent" / "test-tcp_nup.flent.gz")
    assert str(ds.start_time.values[0]) == "2017-02-21T20:55:11.677001000"   # "T0": "...11.677001Z"


# --- older data-file versions and other tests, derived from the genuine rrul_be file -------
# flent's own test files of data formats 1-2 (rrul_icmp), rtt_fair_up, http-1up and
# voip-1up are not in the corpus; these variants of test-rrul.flent.gz change only what
# those versions and tests change (flent's resultset.unserialise_compat and tests/*.conf).

def _variant(doc, edit):
    doc = json.loads(json.dumps(doc))
    edit(doc)
    return flent.parse(json.dumps(doc, indent=2, sort_keys=True))


def test_flows_without_units_or_command_in_series_meta_are_streams(rrul):
    """Data formats 1-2: SERIES_META without UNITS/COMMAND/RUNNER for the flows (or no
    entry at all): every TCP flow is still a stream, by its name."""
    _, doc = rrul

    def old(d):
        sm = d["metadata"]["SERIES_META"]
        d["version"] = 2
        d["metadata"]["NETPERF_WRAPPER_VERSION"] = d["metadata"].pop("FLENT_VERSION")
        del d["metadata"]["T0"]        # old files have TIME only
        for name in list(sm):
            if name.startswith("TCP upload BE") and "::" not in name:
                sm[name] = {"MEAN_VALUE": sm[name]["MEAN_VALUE"]}
            elif name.startswith("TCP download BE") and "::" not in name:
                del sm[name]
    ds = _variant(doc, old)
    thruput.contract.validate(ds)
    assert ds.sizes["stream"] == 8 and float(ds.streams[0]) == 4
    # without IDX, the flows are in the order of their names
    direction = dict(zip(ds.flent_stream_name[0].values.tolist(), ds.stream_direction[0].values.tolist()))
    assert direction == {**{f"TCP upload {x}": "send" for x in ("BE", "BE2", "BE3", "BE4")},
                         **{f"TCP download {x}": "receive" for x in ("BE", "BE2", "BE3", "BE4")}}
    assert float(ds.throughput[0]) == pytest.approx(9.19e6, rel=1e-12)
    down = ds.stream_direction[0].values == "receive"
    assert np.isnan(ds.stream_throughput[0].values[down]).all()   # no MEAN_VALUE kept for them
    assert ds.attrs["tool_version"] == "1.0.1-git-1cfb649" and ds.attrs["flent_data_version"] == 2
    assert ds.start_time.values[0] == np.datetime64(doc["metadata"]["TIME"].rstrip("Z"), "ns")
    assert ds.flent_aggregate_series.values.tolist() == ["TCP upload avg", "TCP upload sum", "TCP download avg",
                                                        "TCP download sum", "TCP totals"]


def test_single_upload_flow_of_http_and_voip_tests(rrul):
    """http-1up / voip-1up: one 'TCP upload' flow (netperf_demo) beside HTTP or VoIP series."""
    _, doc = rrul

    def one(d):
        res, sm = d["results"], d["metadata"]["SERIES_META"]
        d["metadata"]["NAME"] = "voip-1up"
        for name in list(res):
            if name.startswith("TCP") and name != "TCP upload BE":
                del res[name]
                sm.pop(name, None)
        res["TCP upload"] = res.pop("TCP upload BE")
        sm["TCP upload"] = sm.pop("TCP upload BE")
        res["VoIP::bitrate"] = [64.0] * len(d["x_values"])
        sm["VoIP::bitrate"] = {"UNITS": "Kbits/s", "RUNNER": "NullRunner", "IDX": 90}
    ds = _variant(doc, one)
    assert ds.flent_stream_name[0].values.tolist() == ["TCP upload"]
    assert ds.stream_throughput[0].values.tolist() == [2.22e6]
    assert ds.attrs["flent_test"] == "voip-1up" and ds.attrs["flent_test_shown"] == "tcp_1up"
    assert "VoIP::bitrate" in ds.flent_other_series.values.tolist()


def test_rtt_fair_flows_to_four_hosts(tcp_nup):
    """rtt_fair_up: 'TCP upload BE<i> <host>' to four hosts, each with its ping."""
    _, doc = tcp_nup
    hosts = ["flent-fremont.bufferbloat.net", "flent-eu.bufferbloat.net", "flent-newark.bufferbloat.net",
             "flent-tokyo.bufferbloat.net"]

    def fair(d):
        res, sm = d["results"], d["metadata"]["SERIES_META"]
        d["metadata"]["NAME"] = "rtt_fair_up"
        for name in list(res):
            if name.startswith("TCP upload::") and name.split("::")[1] not in ("1", "2", "3", "4"):
                del res[name]
                sm.pop(name, None)
        for i, host in enumerate(hosts, 1):
            new = f"TCP upload BE{i} {host}"
            for suffix in ("", "::tcp_cwnd", "::tcp_rtt", "::tcp_rtt_var"):
                if f"TCP upload::{i}{suffix}" in res:
                    res[new + suffix] = res.pop(f"TCP upload::{i}{suffix}")
                    sm[new + suffix] = sm.pop(f"TCP upload::{i}{suffix}", {})
            sm[new]["COMMAND"] = sm[new]["COMMAND"].replace("kau.toke.dk", host)
        sm["TCP upload sum"]["MEAN_VALUE"] = sum(sm[f"TCP upload BE{i} {h}"]["MEAN_VALUE"]
                                                 for i, h in enumerate(hosts, 1))
    ds = _variant(doc, fair)
    assert ds.sizes["stream"] == 4 and ds.flent_stream_host[0].values.tolist() == hosts
    assert ds.attrs["flent_test_shown"] == "rtt_fair_up" and ds.attrs["consistent"] == 1
    assert float(ds.throughput[0]) == pytest.approx((0.7 + 0.73 + doc["metadata"]["SERIES_META"]["TCP upload::3"]
                                                     ["MEAN_VALUE"] + doc["metadata"]["SERIES_META"]["TCP upload::4"]
                                                     ["MEAN_VALUE"]) * 1e6)


def test_socket_stats_rates_per_flow(rrul):
    """flent's ss runner: <flow>::tcp_pacing_rate / ::tcp_delivery_rate in Mbits/s -> bit/s."""
    _, doc = rrul

    def rates(d):
        n = len(d["x_values"])
        d["results"]["TCP upload BE3::tcp_pacing_rate"] = [12.5] * n
        d["results"]["TCP upload BE3::tcp_delivery_rate"] = [None] + [2.0] * (n - 1)
    ds = _variant(doc, rates)
    assert (ds.flent_interval_pacing_rate[0, 2].values == 12.5e6).all()
    assert np.isnan(ds.flent_interval_delivery_rate[0, 2, 0]) and ds.flent_interval_delivery_rate[0, 2, 1] == 2e6
    assert np.isnan(ds.flent_interval_pacing_rate[0, 0].values).all()
    assert ds.flent_interval_pacing_rate.attrs["units"] == "bit/s"


def test_a_disagreeing_sum_is_reported(rrul):
    _, doc = rrul
    ds = _variant(doc, lambda d: d["metadata"]["SERIES_META"]["TCP upload sum"].update(MEAN_VALUE=10.0))
    assert ds.attrs["consistent"] == 0
    bad = [c for c in json.loads(ds.attrs["consistency"]) if not c["ok"]]
    assert bad[0]["tool"] == 10e6 and bad[0]["data"] == pytest.approx(9.19e6)


def test_ping_hosts_and_test_shown(rrul):
    ds, _ = rrul
    assert ds.flent_ping_host.values.tolist()[:4] == ["testserv-05"] * 4
    assert ds.attrs["flent_test"] == "rrul_be" and ds.attrs["flent_test_shown"] == "rrul_be"
    assert ds.attrs["consistent"] == 1
