"""irtt JSON reader: every probe checked against the JSON it came from (read here with the
json module, independently of the reader), irtt's own stats cross-checked, losses in both
directions through a shaped namespace path, a cut-off file, errors, and the real irtt
files of the corpus against irtt's own stats."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest

import thruput
from thruput.contract import validate
from thruput.errors import ParseError
from thruput.formats import flent, irtt

from .conftest import DATA

HERE = DATA / "irtt"


def _doc(path):
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def test_loss_in_both_directions_probe_by_probe():
    path = HERE / "0.9.0--netns-loss.json"
    ds, doc = thruput.read(path), _doc(path)
    trips = doc["round_trips"]
    assert ds.sizes["probe"] == len(trips)
    assert ds.seq.values.tolist() == [t["seqno"] for t in trips]
    assert ds.irtt_lost.values.tolist() == [t["lost"] for t in trips]
    assert ds.status.values.tolist() == ["reply" if t["lost"] == "false" else "lost" for t in trips]
    assert {"true_up", "true_down"} <= set(ds.irtt_lost.values.tolist())
    for k, t in enumerate(trips):
        assert float(ds.timestamp[k]) == t["timestamps"]["client"]["send"]["wall"] / 1e9
        if t["lost"] == "false":
            assert float(ds.rtt[k]) == t["delay"]["rtt"] / 1e6
            assert float(ds.irtt_send_delay[k]) == t["delay"]["send"] / 1e6
            assert float(ds.irtt_receive_delay[k]) == t["delay"]["receive"] / 1e6
            server = t["timestamps"]["server"]
            assert float(ds.irtt_server_processing[k]) == pytest.approx(
                (server["send"]["monotonic"] - server["receive"]["monotonic"]) / 1e6, abs=1e-9)
        else:
            assert math.isnan(float(ds.rtt[k]))
        if "rtt" in t["ipdv"]:
            assert float(ds.irtt_ipdv_rtt[k]) == t["ipdv"]["rtt"] / 1e6
    assert (ds.size.values == doc["config"]["params"]["length"]).all()
    stats = doc["stats"]
    summary = json.loads(ds.attrs["tool_summary"])
    assert summary["packets_sent"] == stats["packets_sent"] == len(trips)
    assert summary["upstream_loss_percent"] == stats["upstream_loss_percent"]
    assert summary["rtt_mean_ms"] == stats["rtt"]["mean"] / 1e6
    checks = json.loads(ds.attrs["consistency"])
    assert [c["check"].split(":")[0] for c in checks] == [
        "packets sent", "packets received", "requests the server received", "RTT min", "RTT mean",
        "RTT median", "RTT max", "round-trip IPDV mean"]
    assert all(c["ok"] for c in checks) and ds.attrs["consistent"] == 1
    # the probe's line is that of its "seqno" key
    lines = path.read_text().split("\n")
    assert [int(lines[n - 1].split(":")[1].strip(" ,")) for n in ds.line.values] == ds.seq.values.tolist()
    validate(ds)


def test_gzip_and_packet_length():
    ds = thruput.read(HERE / "0.9.0--loopback-l172.json.gz")
    assert (ds.size.values == 172).all()
    assert ds.attrs["irtt_interval_s"] == 0.02
    assert (ds.status.values == "reply").all()


def test_cut_off_file_keeps_complete_round_trips():
    full, cut = thruput.read(HERE / "0.9.0--netns-loss.json"), thruput.read(HERE / "0.9.0--truncated.json")
    n = cut.sizes["probe"]
    assert 0 < n < full.sizes["probe"]
    assert cut.attrs["truncated"] == 1
    assert f"after {n} complete round trips" in cut.attrs["truncation"]
    assert f"count {full.sizes['probe']} probes sent, {n} kept" in cut.attrs["truncation"]
    for name in ("seq", "rtt", "status", "timestamp", "line"):
        np.testing.assert_array_equal(cut[name].values, full[name].values[:n])
    assert json.loads(cut.attrs["consistency"]) == []  # the whole-run checks need every probe
    assert "incomplete round trip (file cut off)" in json.loads(cut.attrs["skipped_reasons"])


def test_errors():
    with pytest.raises(ParseError, match="empty input"):
        irtt.parse("")
    with pytest.raises(ParseError, match="not an irtt JSON document"):
        irtt.parse('{"version": {"iperf": 1}, "round_trips": []}')
    text = (HERE / "0.9.0--loopback.json").read_text()
    bad = text.replace('"lost": "false"', '"lost": "maybe"', 1)
    with pytest.raises(ParseError, match="unknown irtt 'lost' values"):
        irtt.parse(bad)
    with pytest.raises(ParseError, match="after the irtt JSON document"):
        irtt.parse(text + "{}\n")


def test_sniffing_is_specific():
    head = (HERE / "0.9.0--loopback.json").read_text()[:4096]
    assert irtt.sniff(head) and not flent.sniff(head)
    assert not irtt.sniff((HERE / "not-irtt--ip-addr.json").read_text())


def test_corpus_irtt_against_its_own_stats(corpus):
    paths = sorted((corpus / "real" / "irtt").glob("*.json.gz"))
    if not paths:
        pytest.skip("no irtt files in the corpus")
    for path in paths:
        ds, doc = thruput.read(path), _doc(path)
        stats = doc["stats"]
        assert ds.attrs["consistent"] == 1, (path, ds.attrs["consistency"])
        replies = ds.rtt.where(ds.status == "reply")
        assert int(replies.count()) == stats["packets_received"]
        assert float(replies.min()) == stats["rtt"]["min"] / 1e6
        assert float(replies.max()) == stats["rtt"]["max"] / 1e6
        assert abs(float(replies.mean()) - stats["rtt"]["mean"] / 1e6) <= 1e-6
        assert abs(float(np.abs(ds.irtt_ipdv_rtt).mean()) - stats["ipdv_round_trip"]["mean"] / 1e6) <= 1e-6
