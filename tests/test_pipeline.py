"""``thruput pipeline normalize | stats``: what each dvc.yaml stage runs."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import xarray as xr
import yaml

from thruput import open_campaign, stats
from thruput.cli import main
from thruput.cli.pipeline import STATS_DEFAULTS, load_stats_params

from .conftest import DATA, ROOT

MINI = DATA / "campaigns" / "loopback-mini"
UDPMON = ROOT / "data" / "raw" / "udpmon-veth-500m"
PARAMS = ROOT / "params.yaml"


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_normalize_round_trips_and_is_reproducible(tmp_path):
    for i in range(2):
        assert main(["pipeline", "normalize", str(MINI), str(tmp_path / f"{i}.nc")]) == 0
    assert sha256(tmp_path / "0.nc") == sha256(tmp_path / "1.nc")
    assert not list(tmp_path.glob("*.part"))
    with xr.open_dataset(tmp_path / "0.nc") as stored:
        xr.testing.assert_identical(stored.load(), open_campaign(MINI))


def test_normalize_udpmon_round_trips(tmp_path):
    assert main(["pipeline", "normalize", str(UDPMON), str(tmp_path / "u.nc")]) == 0
    with xr.open_dataset(tmp_path / "u.nc") as stored:
        xr.testing.assert_identical(stored.load(), open_campaign(UDPMON))


def test_normalize_refuses_a_corrupted_campaign(tmp_path, capsys):
    mini = Path(shutil.copytree(MINI, tmp_path / "loopback-mini"))
    victim = mini / "runs" / "w65536-s1-r0.iperf3.json"
    victim.write_bytes(victim.read_bytes()[:-200])
    out = tmp_path / "mini.nc"
    assert main(["pipeline", "normalize", str(mini), str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{victim}" in err and "1 errors; nothing written" in err
    assert not out.exists()


def test_stats_params_come_from_the_stats_section(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("campaigns: []\nstats: {bootstrap: 50, seed: 3}\n")
    assert load_stats_params(params) == {**STATS_DEFAULTS, "bootstrap": 50, "seed": 3}
    assert set(yaml.safe_load(PARAMS.read_text())["stats"]) == set(STATS_DEFAULTS)


def test_stats_tcp_sweep(tmp_path):
    nc, out = tmp_path / "mini.nc", tmp_path / "mini.stats.json"
    assert main(["pipeline", "normalize", str(MINI), str(nc)]) == 0
    assert main(["pipeline", "stats", str(nc), str(out), "--params", str(PARAMS)]) == 0
    result = json.loads(out.read_text())
    assert result["campaign"] == "loopback-mini" and result["kind"] == "tcp_sweep"
    assert result["params"] == load_stats_params(PARAMS)
    assert set(result) == {"campaign", "kind", "params", "cells", "plateau", "best_cells",
                           "smallest_product", "rtt"}
    ds = open_campaign(MINI)
    cells = result["cells"]["records"]
    assert len(cells) == 4
    assert result["cells"]["units"]["median"] == "bit/s"
    for cell in cells:
        runs = ds["throughput"].sel(window=cell["window"], streams=cell["streams"]).values
        assert cell["median"] == float(np.median(runs))
        assert cell["n"] == 2
    assert len(result["plateau"]["records"]) == 2           # one per streams count
    best = result["best_cells"]["records"][0]
    medians = ds["throughput"].median("repeat")
    assert best["median"] == float(medians.max())
    loaded = ds["rtt"].sel(phase="loaded", window=65536, streams=1)
    row = next(r for r in result["rtt"]["records"]
               if (r["window"], r["streams"], r["phase"]) == (65536, 1, "loaded"))
    assert row["median"] == float(np.nanmedian(loaded.values))      # pooled over repeats
    assert (row["sent"], row["lost"]) == (int(np.isfinite(loaded.values).sum()), 0)
    assert result["rtt"]["units"]["median"] == "ms"


def test_stats_is_reproducible(tmp_path):
    nc = tmp_path / "mini.nc"
    assert main(["pipeline", "normalize", str(MINI), str(nc)]) == 0
    for i in range(2):
        assert main(["pipeline", "stats", str(nc), str(tmp_path / f"{i}.json"), "--params", str(PARAMS)]) == 0
    assert sha256(tmp_path / "0.json") == sha256(tmp_path / "1.json")


def test_stats_udpmon(tmp_path):
    nc, out = tmp_path / "u.nc", tmp_path / "u.stats.json"
    assert main(["pipeline", "normalize", str(UDPMON), str(nc)]) == 0
    assert main(["pipeline", "stats", str(nc), str(out), "--params", str(PARAMS)]) == 0
    result = json.loads(out.read_text())
    assert set(result) == {"campaign", "kind", "params", "udp_grid", "udp_onset", "latency_fit"}
    assert sorted({r["packet_size"] for r in result["udp_onset"]["records"]}) == [200.0, 1000.0, 1400.0, 1472.0]
    ds = open_campaign(UDPMON)
    scan = ds.where(ds["scan_file"] == "runs/req-latency-scan.txt", drop=True)
    fit = stats.fit_latency(scan["scan_size"].values, scan["scan_latency_avg"].values)
    assert result["latency_fit"]["scalars"]["slope"] == fit["slope"]
    assert result["latency_fit"]["units"]["slope"] == "us/byte"
    assert len(result["latency_fit"]["records"]) == 23
