"""Statistics along any factor of a design campaign (thruput.stats.design), exact values
on a small hand-made design, and the product of random ones."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

import thruput  # noqa: F401  (registers ds.thruput)
from thruput.stats import design as sd
from thruput.stats.compare import compare
from thruput.stats.plateau import plateau
from thruput.stats.product import campaign_product

from .designs import random_design

CC = ["reno", "cubic", "bbr"]
BUFFERS = [65536, 262144, 1048576]


def small_design():
    """cc x socket_buffer x 3 repeats; bbr = 4 x reno, cubic = 2 x reno; the cell
    (cubic, 1 MiB) never ran; one reno run at 64 KiB failed."""
    rows = []
    for cc, factor in zip(CC, (1.0, 2.0, 4.0)):
        for b in BUFFERS:
            if (cc, b) == ("cubic", 1048576):
                continue
            for r in range(3):
                rows.append((cc, b, r, factor * b / 65536 * 1e6 * (1 + 0.01 * r)))
    cc, buf, rep, tput = (np.asarray(x) for x in zip(*rows))
    outcome = np.full(len(rows), "ok", dtype=object)
    outcome[0] = "error"
    tput = tput.astype(float)
    tput[0] = np.nan
    ds = xr.Dataset(
        {"throughput": ("run", tput, {"units": "bit/s"}),
         "outcome": ("run", outcome.astype(str)),
         "reason": ("run", np.where(outcome == "ok", "", "iperf3: error - the server is busy"))},
        coords={"run": [f"cc{c}-b{b}-r{r}" for c, b, r in zip(cc, buf, rep)], "cc": ("run", cc),
                "socket_buffer": ("run", buf), "repeat": ("run", rep)},
        attrs={"campaign": "small", "campaign_kind": "design", "design_time": 0,
               "factors": json.dumps([
                   {"name": "cc", "levels": CC, "units": "", "ordered": False},
                   {"name": "socket_buffer", "levels": BUFFERS, "units": "byte", "ordered": True}])})
    return ds


def test_factors_keep_the_declared_order():
    f = sd.factors_of(small_design())
    assert [(x["name"], x["levels"], x["ordered"], x["numeric"]) for x in f] == [
        ("cc", CC, False, False), ("socket_buffer", BUFFERS, True, True)]


def test_summary_per_cell_with_a_missing_cell_and_a_failed_run():
    s = sd.design_summary(small_design(), "throughput", ["cc", "socket_buffer"])
    assert s["median"].dims == ("cc", "socket_buffer")
    assert float(s["median"].sel(cc="bbr", socket_buffer=262144)) == pytest.approx(4 * 4 * 1e6 * 1.01)
    assert int(s["n"].sel(cc="cubic", socket_buffer=1048576)) == 0
    assert np.isnan(float(s["median"].sel(cc="cubic", socket_buffer=1048576)))
    assert int(s["n"].sel(cc="reno", socket_buffer=65536)) == 2
    assert int(s["n_failed"].sel(cc="reno", socket_buffer=65536)) == 1
    assert int(s["n_failed"].sum()) == 1
    assert s["median"].attrs["units"] == "bit/s"
    pooled = sd.design_summary(small_design(), "throughput", ["cc"])
    assert list(pooled["cc"].values) == CC
    assert [int(v) for v in pooled["n"].values] == [8, 6, 9]
    whole = sd.design_summary(small_design(), "throughput", [])
    assert int(whole["n"]) == 23


def test_level_ratios_per_buffer_against_the_first_level():
    ds = small_design()
    c = sd.level_comparison(ds, "cc", by=["socket_buffer"], n_boot=200)
    assert c.attrs["reference"] == "reno" and list(c["cc"].values) == ["cubic", "bbr"]
    assert c["ratio"].dims == ("cc", "socket_buffer")
    # (reno's first run at 64 KiB failed: its median is that of the two others)
    np.testing.assert_allclose(c["ratio"].sel(cc="bbr").values, [4 * 1.01 / 1.015, 4, 4])
    assert np.isnan(float(c["ratio"].sel(cc="cubic", socket_buffer=1048576)))
    assert (c["ratio_low"] <= c["ratio"]).sel(cc="bbr").all() and (c["ratio_high"] >= c["ratio"]).sel(cc="bbr").all()
    # what compare gives on the same samples, cell by cell
    grid = sd.design_grid(ds, "throughput", ["cc", "socket_buffer"])
    direct = compare(grid.sel(cc="reno", drop=True), grid.sel(cc="bbr", drop=True), dim="sample", n_boot=200)
    xr.testing.assert_allclose(c["ratio_low"].sel(cc="bbr", drop=True), direct["ratio_low"])
    other = sd.level_comparison(ds, "cc", by=["socket_buffer"], reference="bbr", n_boot=50)
    np.testing.assert_allclose(other["ratio"].sel(cc="reno").values, [1.015 / 1.01 / 4, 0.25, 0.25])
    with pytest.raises(ValueError, match="no level 'vegas'"):
        sd.level_comparison(ds, "cc", reference="vegas")


def test_plateau_along_the_buffer_per_cc_is_stats_plateau():
    ds = small_design()
    p = sd.design_plateau(ds, "socket_buffer", by=["cc"], n_boot=100)
    grid = sd.design_grid(ds, "throughput", ["socket_buffer", "cc"])
    expected = plateau(grid, dim="socket_buffer", repeat_dim="sample", n_boot=100)
    xr.testing.assert_identical(p.drop_attrs(), expected.drop_attrs())
    assert float(p["level"].sel(cc="bbr")) == pytest.approx(4 * 16 * 1e6 * 1.01)
    with pytest.raises(ValueError, match="not ordered and numeric"):
        sd.design_plateau(ds, "cc")


def test_two_campaigns_compared_on_their_shared_factor():
    a = small_design()
    b = a.assign(throughput=a["throughput"] * 3)
    c = sd.compare_designs(a, b, by=["cc"], n_boot=50)
    np.testing.assert_allclose(c["ratio"].values, 3.0)
    assert list(c["cc"].values) == CC


def test_the_accessor_takes_factor_names():
    ds = small_design()
    s = ds.thruput.design_summary(by=["cc"])
    assert [int(v) for v in s["n"].values] == [8, 6, 9]
    c = ds.thruput.level_comparison("cc", by=["socket_buffer"], n_boot=20)
    assert c.attrs["factor"] == "cc"
    listed = repr(ds.thruput).split("methods: ")[1].split(", ")
    assert "level_comparison" in listed and "plateau" not in listed and "change_points" not in listed
    from .synthetic import campaign

    assert "level_comparison" not in repr(campaign(repeats=2).thruput)


def test_layout_never_colours_by_a_factor_of_many_levels():
    factors = [{"name": "site", "levels": [f"s{i}" for i in range(57)], "ordered": False, "numeric": False},
               {"name": "client", "levels": [f"c{i}" for i in range(20)], "ordered": False, "numeric": False},
               {"name": "direction", "levels": ["forward", "reverse"], "ordered": False, "numeric": False},
               {"name": "window", "levels": [1, 2, 4, 8], "ordered": True, "numeric": True},
               {"name": "kernel", "levels": ["6.1"], "ordered": False, "numeric": False}]
    layout = sd.design_layout(factors)
    assert layout == {"x": "window", "color": "direction", "column": None, "row": None,
                      "pooled": ["site", "client"], "fixed": ["kernel"]}


def test_the_product_of_a_design():
    tree = campaign_product(small_design(), {"bootstrap": 50})
    assert tree.attrs["campaign_kind"] == "design"
    assert {"design", "failures", "cells", "shown", "levels", "compare", "plateau"} <= set(tree.children)
    assert set(tree["compare"].children) == {"cc", "socket_buffer"}
    failures = tree["failures"].to_dataset()
    assert list(failures["reason"].values) == ["iperf3: error - the server is busy"]
    assert int(failures["n"][0]) == 1


@pytest.mark.parametrize("seed", range(6))
def test_random_designs_have_a_product(seed):
    ds = random_design(seed)
    tree = campaign_product(ds, {"bootstrap": 20})
    design = tree["design"].to_dataset()
    assert int(design.attrs["n_runs"]) == ds.sizes["run"]
    for name in json.loads(design.attrs["metrics"]):
        cells = tree["cells"][name].to_dataset()
        ok = ds["outcome"] == "ok"
        assert int(cells["n"].sum()) == int((ok & np.isfinite(ds[name])).sum())


def test_the_catalogue_row_of_a_design_gives_its_best_cell():
    from thruput.stats.product import catalogue_product

    tree = campaign_product(small_design(), {"bootstrap": 20})
    row = catalogue_product({"small": tree}).sel(campaign="small")
    assert row["kind"].item() == "design"
    assert float(row["best_median"]) == float(tree["cells/throughput"]["median"].max())
    assert float(row["best_median"]) == pytest.approx(4 * 16 * 1e6 * 1.01)
