"""``thruput pipeline normalize | stats``: what each dvc.yaml stage runs."""

from __future__ import annotations

import hashlib
import inspect
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml

from thruput import open_campaign, stats
from thruput.cli import main
from thruput.cli.pipeline import load_stats_params, open_product

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
    assert f"{victim}" in err and "changed since it was recorded" in err
    assert "2 errors; nothing written" in err        # changed, and cut off (so truncated)
    assert not out.exists()


def test_stats_params_come_from_the_stats_section(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("campaigns: []\nstats: {bootstrap: 50, seed: 3}\n")
    assert load_stats_params(params) == {**stats.DEFAULTS, "bootstrap": 50, "seed": 3}


def test_one_set_of_defaults_documented_in_params_yaml():
    """params.yaml states the library's defaults: a key left out changes nothing."""
    assert yaml.safe_load(PARAMS.read_text())["stats"] == stats.DEFAULTS
    assert stats.DEFAULTS["seed"] == 20261122 and stats.DEFAULTS["bootstrap"] == 1000
    for fn in (stats.bootstrap_ci, stats.plateau, stats.compare, stats.rtt_load):
        defaults = inspect.signature(fn).parameters
        assert defaults["seed"].default == 20261122, fn.__name__
        assert defaults["n_boot"].default == 1000, fn.__name__
        assert defaults["confidence"].default == 0.95, fn.__name__


def test_an_unknown_stats_parameter_is_refused(tmp_path, capsys):
    params = tmp_path / "params.yaml"
    params.write_text("stats: {boostrap: 50}\n")
    assert main(["pipeline", "stats", str(tmp_path / "x.nc"), str(tmp_path / "x.stats.nc"),
                 "--params", str(params)]) == 1
    assert "unknown stats parameters ['boostrap']" in capsys.readouterr().err


@pytest.fixture(scope="module")
def mini_product(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mini")
    nc, out = tmp / "mini.nc", tmp / "mini.stats.nc"
    assert main(["pipeline", "normalize", str(MINI), str(nc)]) == 0
    assert main(["pipeline", "stats", str(nc), str(out), "--params", str(PARAMS)]) == 0
    return nc, out


def test_stats_tcp_sweep(mini_product):
    tree = open_product(mini_product[1])
    assert tree.attrs["campaign"] == "loopback-mini" and tree.attrs["campaign_kind"] == "tcp_sweep"
    assert json.loads(tree.attrs["params"]) == load_stats_params(PARAMS)
    assert set(tree.children) == {"cells", "plateau", "best_cells", "smallest_product", "rtt",
                                  "rtt_pooled", "rtt_ecdf", "bound"}
    ds = open_campaign(MINI)
    cells = tree["cells"].to_dataset()
    assert cells.sizes == {"window": 2, "streams": 2}
    assert cells["median"].attrs["units"] == "bit/s"
    np.testing.assert_array_equal(cells["median"].values, ds["throughput"].median("repeat").values)
    assert (cells["n"] == 2).all()
    plateau = tree["plateau"].to_dataset()
    assert plateau.sizes["streams"] == 2                      # one per streams count
    assert (plateau.attrs["seed"], plateau.attrs["n_boot"], plateau.attrs["confidence"]) == (20261122, 1000, 0.95)
    xr.testing.assert_identical(plateau.drop_attrs(), stats.plateau(ds["throughput"]).drop_attrs())
    best = tree["best_cells"].to_dataset()
    assert float(best["median"][0]) == float(ds["throughput"].median("repeat").max())
    loaded = ds["rtt"].sel(phase="loaded", window=65536, streams=1)
    rtt = tree["rtt"].to_dataset().sel(phase="loaded", window=65536, streams=1)
    assert float(rtt["median"]) == float(np.nanmedian(loaded.values))      # pooled over repeats
    assert (int(rtt["sent"]), int(rtt["lost"])) == (int(np.isfinite(loaded.values).sum()), 0)
    assert rtt["median"].attrs["units"] == "ms"
    bound = tree["bound"].to_dataset()
    unloaded = ds["rtt"].sel(phase="unloaded").where(ds["rtt_status"].sel(phase="unloaded") == "reply")
    assert float(bound["rtt"]) == float(unloaded.median())
    assert float(bound["bound"].sel(window=65536, streams=2)) == pytest.approx(
        2 * 65536 * 8 / (float(unloaded.median()) / 1000), rel=1e-12)


def test_open_product_reads_every_variable(mini_product):
    # xarray's DataTree.load leaves lazy a variable named like a group (bound/rtt beside /rtt)
    tree = open_product(mini_product[1])
    assert "rtt" in tree.children and "rtt" in tree["bound"].variables
    for node in tree.subtree:
        for name, variable in node.variables.items():
            assert isinstance(variable._data, (np.ndarray, pd.Index)) or name in node.indexes, (node.path, name)


def test_stats_is_reproducible(mini_product, tmp_path):
    nc, first = mini_product
    assert main(["pipeline", "stats", str(nc), str(tmp_path / "again.stats.nc"), "--params", str(PARAMS)]) == 0
    assert sha256(first) == sha256(tmp_path / "again.stats.nc")


def test_stats_udpmon(tmp_path):
    nc, out = tmp_path / "u.nc", tmp_path / "u.stats.nc"
    assert main(["pipeline", "normalize", str(UDPMON), str(nc)]) == 0
    assert main(["pipeline", "stats", str(nc), str(out), "--params", str(PARAMS)]) == 0
    tree = open_product(out)
    assert set(tree.children) == {"udp_grid", "udp_onset", "udp_peak", "latency_fit"}
    assert tree["udp_onset"]["packet_size"].values.tolist() == [200.0, 1000.0, 1400.0, 1472.0]
    ds = open_campaign(UDPMON)
    scan = ds.where(ds["scan_file"] == "runs/req-latency-scan.txt", drop=True)
    fit = stats.latency_line(scan["scan_size"].values, scan["scan_latency_avg"].values)
    latency = tree["latency_fit"].to_dataset()
    assert float(latency["slope"]) == fit["slope"] and float(latency["intercept"]) == fit["intercept"]
    assert latency["slope"].attrs["units"] == "us/byte"
    assert latency.attrs["scan_file"] == "runs/req-latency-scan.txt"
    assert latency.sizes["point"] == 23
    assert float(tree["udp_peak"]["peak_rate"]) == float(ds["recv_rate"].max())


def test_catalogue_follows_the_campaign_list(mini_product, tmp_path):
    nc, product = mini_product
    processed = tmp_path / "processed"
    processed.mkdir()
    for name in ("b-copy", "a-copy"):
        shutil.copy(product, processed / f"{name}.stats.nc")
    params = tmp_path / "params.yaml"
    params.write_text("campaigns: [b-copy, a-copy]\n")
    out = tmp_path / "catalogue.nc"
    assert main(["pipeline", "catalogue", str(processed), str(out), "--params", str(params)]) == 0
    table = open_product(out).to_dataset()
    assert table["campaign"].values.tolist() == ["b-copy", "a-copy"]      # params order, not names
    tree = open_product(product)
    one = tree["plateau"].to_dataset().sel(streams=1)
    row = table.sel(campaign="a-copy")
    assert float(row["best_median"]) == float(tree["cells"]["median"].max())
    assert float(row["plateau_onset"]) == float(one["onset"])
    assert float(row["plateau_onset_high"]) == float(one["onset_high"])
    assert float(row["rtt_loaded"]) == float(tree["rtt_pooled"]["median"].sel(phase="loaded"))
    assert row["start"].item() == "2026-11-22" and row["kind"].item() == "tcp_sweep"


def test_catalogue_names_a_missing_product(tmp_path, capsys):
    params = tmp_path / "params.yaml"
    params.write_text("campaigns: [absent]\n")
    assert main(["pipeline", "catalogue", str(tmp_path), str(tmp_path / "c.nc"), "--params", str(params)]) == 1
    assert "no statistics product for absent" in capsys.readouterr().err


def test_compare_two_sweeps(mini_product, tmp_path):
    nc, _ = mini_product
    out = tmp_path / "cmp.nc"
    assert main(["pipeline", "compare", str(nc), str(nc), str(out), "--name", "self",
                 "--params", str(PARAMS)]) == 0
    tree = open_product(out)
    assert (tree.attrs["name"], tree.attrs["a"], tree.attrs["b"]) == ("self", "loopback-mini", "loopback-mini")
    cells = tree["cells"].to_dataset()
    assert (cells["difference"] == 0).all() and cells.attrs["seed"] == 20261122
    assert tree["metadata"].sizes.get("entry", 0) == 0          # nothing differs from itself


def test_compare_refuses_a_udp_campaign(mini_product, tmp_path, capsys):
    u = tmp_path / "u.nc"
    assert main(["pipeline", "normalize", str(UDPMON), str(u)]) == 0
    assert main(["pipeline", "compare", str(mini_product[0]), str(u), str(tmp_path / "x.nc"),
                 "--name", "bad", "--params", str(PARAMS)]) == 1
    assert "udpmon-veth-500m is a udp_sweep campaign" in capsys.readouterr().err


def test_normalize_refuses_a_file_changed_since_it_was_recorded(tmp_path, capsys):
    """A flipped digit that still parses: refused, naming the file and both hashes."""
    mini = Path(shutil.copytree(MINI, tmp_path / "loopback-mini"))
    victim = mini / "runs" / "w65536-s1-r0.iperf3.json"
    kept = sha256(victim)
    victim.write_text(victim.read_text().replace("31110991834.342953", "31110991834.342958"))
    out = tmp_path / "mini.nc"
    assert main(["pipeline", "normalize", str(mini), str(out)]) == 1
    err = capsys.readouterr().err
    assert (f"{victim}: error: changed since it was recorded: runs.csv line 2 keeps sha256 {kept}, "
            f"the file's is {sha256(victim)}") in err
    assert not out.exists()
