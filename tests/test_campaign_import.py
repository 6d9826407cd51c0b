"""``thruput campaign import`` of a partial pile: the campaign it makes passes its own check,
with the gaps explained, campaign-wide baseline pings and everything the logs say."""

from __future__ import annotations

import csv
import shutil

import yaml

from thruput import open_campaign
from thruput.campaign.check import check_campaign
from thruput.campaign.importer import NOT_IN_PILE
from thruput.cli import main

from .conftest import ROOT

VETH = ROOT / "data" / "raw" / "veth-1g" / "runs"


def _pile(tmp_path):
    """Seven of the eight iperf3 runs of 64 and 128 KiB x 1 and 2 streams x 2 repeats, and
    one ping taken alone (a copy of an unloaded ping, named as a user would)."""
    files = sorted(p for p in VETH.glob("*.iperf3.json")
                   if p.name.split(".")[0].rsplit("-", 1)[0] in
                   ("w65536-s1", "w65536-s2", "w131072-s1", "w131072-s2")
                   and p.name.split("-r")[1][0] in "01")
    files.remove(VETH / "w131072-s2-r1.iperf3.json")
    baseline = tmp_path / "path-at-rest.ping"
    shutil.copy(VETH / "w4096-s1-r0.unloaded.ping", baseline)
    return [*map(str, files), str(baseline)]


def test_a_partial_pile_passes_its_own_check(tmp_path, capsys):
    assert main(["campaign", "import", "pile", *_pile(tmp_path), "--root", str(tmp_path),
                 "--title", "Veth, part of a sweep", "--between", "veth pair, tc tbf 1 Gbit/s",
                 "--capacity", "1e9", "--who", "a tester"]) == 0
    directory = tmp_path / "pile"
    meta = yaml.safe_load((directory / "campaign.yaml").read_text())
    assert meta["explained"] == [{"run": "w131072-s2-r1", "reason": f"{NOT_IN_PILE} (iperf log)"}]
    assert meta["title"] == "Veth, part of a sweep" and meta["who"] == ["a tester"]
    assert meta["path"]["between"] == "veth pair, tc tbf 1 Gbit/s"
    assert meta["path"]["capacity_bps"] == 1e9
    assert meta["tools"] == {"iperf3": "3.12"}
    assert meta["hosts"]["host-a"]["os"] == "Linux" and meta["hosts"]["host-a"]["kernel"]
    assert "system_info" in meta["hosts"]["host-a"]["description"]
    assert meta["hosts"]["host-b"]["os"] is None           # iperf3 -J says nothing of the server here
    assert meta["dates"]["end"] == "2026-11-22T14:09:05Z"  # the last run's start
    assert "ping" not in meta["plan"]                       # no loaded/unloaded pings in the pile
    assert [p for p in check_campaign(directory) if p.severity == "error"] == []


def test_a_ping_tied_to_no_run_is_a_campaign_wide_baseline(tmp_path):
    assert main(["campaign", "import", "pile", *_pile(tmp_path), "--root", str(tmp_path)]) == 0
    with open(tmp_path / "pile" / "runs.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["phase"] == "baseline"]
    assert [(r["run"], r["window"], r["streams"], r["repeat"]) for r in rows] == [("baseline-0", "", "", "")]
    ds = open_campaign(tmp_path / "pile")
    assert ds.sizes["baseline"] == 1 and ds.sizes["baseline_probe"] == 5
    assert ds["baseline_source"].values.tolist() == ["runs/path-at-rest.ping"]
    assert float(ds["baseline_rtt"].median()) == 0.055
    assert ds["baseline_rtt"].attrs["units"] == "ms"
