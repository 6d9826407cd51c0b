"""Which campaign each study page shows beside a published effect (thruput.stats.study_effects
and the ``study-effects`` stage): strengths from the statistics products, the choice, and a
product that changes only when a choice does."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from thruput import open_campaign
from thruput.cli import main
from thruput.cli.pipeline import open_product, write_netcdf, write_product
from thruput.stats import study_effects as se
from thruput.stats.product import campaign_product

from . import synthetic
from .conftest import ROOT

UDPMON = ROOT / "data" / "raw" / "udpmon-veth-500m"
LOOPBACK = dict(synthetic.METADATA, path={"source": "vm", "destination": "vm", "between": "loopback (lo)",
                                          "capacity_bps": None})


def sweep(name, **kw):
    ds = synthetic.campaign(repeats=kw.pop("repeats", 3), **kw)
    ds.attrs["campaign"] = name
    return ds


def products(**campaigns):
    return {name: campaign_product(ds) for name, ds in campaigns.items()}


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def shaped():
    return sweep("shaped")


def test_strengths_are_ratios_of_the_products_medians(shaped):
    product = campaign_product(shaped)
    med = shaped["throughput"].median("repeat")
    one = med.sel(streams=1)
    assert se.effect_strength(product, "window") == float(one.max()) / float(one.min())
    smallest = med.isel(window=0)
    assert se.effect_strength(product, "streams") == float(smallest.isel(streams=-1)) / float(smallest.isel(streams=0))
    replies = shaped["rtt"].where(shaped["rtt_status"] == "reply")
    unloaded = float(np.nanmedian(replies.sel(phase="unloaded").values))
    loaded = replies.sel(phase="loaded").median(["repeat", "probe"])
    assert se.effect_strength(product, "rtt") == float(loaded.max()) / unloaded
    # the model: 8 KiB over 1 ms is 65.5 Mbit/s, the plateau 1 Gbit/s (noise 2 %)
    assert se.effect_strength(product, "window") == pytest.approx(1e9 / (8192 * 8 / 1e-3), rel=0.05)
    assert se.effect_strength(product, "udp") == 1.0


def test_what_applies_to_a_tcp_sweep(shaped):
    product = campaign_product(shaped)
    assert [e for e in se.EFFECTS if se.effect_applies(product, e)] == ["window", "streams", "rtt"]
    narrow = campaign_product(sweep("narrow", windows=(8192, 16384)))
    assert not se.effect_applies(narrow, "window") and se.effect_applies(narrow, "streams")
    with pytest.raises(ValueError, match="unknown effect 'plateau'"):
        se.effect_applies(product, "plateau")


def test_a_shaped_path_is_preferred_over_loopback():
    p = products(**{"big-loop": sweep("big-loop", metadata=LOOPBACK, streams=(1, 2, 4, 8, 16), repeats=2),
                    "small-shaped": sweep("small-shaped", streams=(1, 2), repeats=2)})
    tree = se.study_effects_product(p, {})
    assert tree["streams"].attrs["campaign"] == "small-shaped"
    assert tree["latency"].attrs["campaign"] == "" and not tree["latency"].children
    scores = se.effect_scores(p)
    assert scores["chosen"].sel(effect="streams").values.tolist() == [False, True]
    assert scores["shaped"].values.tolist() == [False, True] and scores["loopback"].values.tolist() == [True, False]
    assert scores["size"].values.tolist() == [7 * 5, 7 * 2]


def test_a_campaign_without_the_effect_is_not_chosen():
    # RTT 1 us: even 8 KiB per stream exceeds the capacity, so no window is limiting
    p = products(flat=sweep("flat", rtt_ms=0.001, repeats=2))
    assert se.effect_strength(p["flat"], "window") < se.MIN_STRENGTH
    assert se.study_effects_product(p, {})["window"].attrs["campaign"] == ""
    scores = se.effect_scores(p).sel(campaign="flat")
    assert bool(scores["applies"].sel(effect="window")) and not bool(scores["shows"].sel(effect="window"))
    # and with a lower threshold, from params.yaml's study-effects section, it is
    assert se.study_effects_product(p, {}, {"min_strength": 1.0})["window"].attrs["campaign"] == "flat"


def test_equal_scores_go_to_the_first_name(shaped):
    same = campaign_product(shaped)
    tree = se.study_effects_product({"b": same, "a": same}, {})
    assert {tree[e].attrs["campaign"] for e in ("window", "streams", "rtt")} == {"a"}


def test_the_panels_are_the_chosen_campaigns_product(shaped):
    product = campaign_product(shaped)
    tree = se.study_effects_product({"shaped": product}, {})
    window = tree["window"]
    assert window.attrs["metadata"] == product.attrs["metadata"]
    assert window.attrs["strength"] == se.effect_strength(product, "window")
    assert set(window.children) == {"cells", "rtt", "bound"}
    for group in window.children:
        xr.testing.assert_identical(window[group].to_dataset(), product[group].to_dataset())
    assert tree.attrs["min_strength"] == 1.5 and json.loads(tree.attrs["effects"]) == list(se.EFFECTS)


def test_unknown_parameters_are_refused():
    with pytest.raises(ValueError, match=r"unknown study-effects parameters \['min_strenght'\]"):
        se.params_with_defaults({"min_strenght": 2})
    section = yaml.safe_load((ROOT / "params.yaml").read_text())["study-effects"]
    assert {k: section[k] for k in ("min_strength", "min_cells")} == {
        "min_strength": se.MIN_STRENGTH, "min_cells": se.MIN_CELLS}
    # the author's choices name effects the pages know, and campaigns of `campaigns:`
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    assert set(se.params_with_defaults(section)["show"]) <= set(se.EFFECTS)
    assert set(section["show"].values()) <= set(params["campaigns"])
    with pytest.raises(ValueError, match=r"show names unknown effects \['plateau'\]"):
        se.params_with_defaults({"show": {"plateau": "x"}})


def test_the_authors_choice_is_shown_and_the_pick_only_suggested(shaped):
    big = sweep("big", metadata=LOOPBACK, streams=(1, 2, 4, 8, 16), repeats=2)
    p = products(shaped=shaped, big=big)
    auto = se.study_effects_product(p, {})
    assert auto["streams"].attrs["campaign"] == "shaped" and auto["streams"].attrs["chosen_by"] == "suggestion"
    tree = se.study_effects_product(p, {}, {"show": {"streams": "big"}})
    assert tree["streams"].attrs["campaign"] == "big"
    assert tree["streams"].attrs["chosen_by"] == "author" and tree["streams"].attrs["suggested"] == "shaped"
    xr.testing.assert_identical(tree["streams"]["cells"].to_dataset(), p["big"]["cells"].to_dataset())
    scores = se.effect_scores(p, {"show": {"streams": "big"}})
    assert scores["chosen"].sel(effect="streams").values.tolist() == [True, False]       # big, shaped
    assert scores["suggested"].sel(effect="streams").values.tolist() == [False, True]
    with pytest.raises(ValueError, match="'nope' is not a campaign"):
        se.study_effects_product(p, {}, {"show": {"rtt": "nope"}})
    with pytest.raises(ValueError, match="did not measure this effect"):
        se.study_effects_product(p, {}, {"show": {"latency": "shaped"}})


def test_a_tiny_sweep_is_never_suggested(shaped):
    # 3 windows x 2 streams x 2 repeats: 12 runs, a panel of 6 dots, and a strong effect
    tiny = sweep("a-tiny", windows=(8192, 65536, 1048576), streams=(1, 2), repeats=2)
    p = products(shaped=shaped, **{"a-tiny": tiny})
    tree = se.study_effects_product(p, {})
    assert {tree[e].attrs["campaign"] for e in ("window", "streams", "rtt")} == {"shaped"}
    alone = se.study_effects_product(products(**{"a-tiny": tiny}), {})
    assert alone["window"].attrs["campaign"] == ""
    assert se.study_effects_product(products(**{"a-tiny": tiny}), {}, {"min_cells": 6})["window"].attrs["campaign"] == "a-tiny"


@pytest.fixture(scope="module")
def processed(tmp_path_factory):
    """A processed folder as the pipeline leaves it: the UDPmon campaign and two TCP sweeps,
    one strong (shaped) and one a copy of it on loopback."""
    folder = tmp_path_factory.mktemp("processed")
    campaigns = {"udpmon-veth-500m": open_campaign(UDPMON), "shaped": sweep("shaped"),
                 "zz-loop": sweep("zz-loop", metadata=LOOPBACK)}
    for name, ds in campaigns.items():
        write_netcdf(ds, folder / f"{name}.nc")
        write_product(campaign_product(ds), folder / f"{name}.stats.nc")
    return folder


def run_stage(processed, out, names, section=""):
    params = out / "params.yaml"
    out.mkdir(exist_ok=True)
    params.write_text(f"campaigns: {json.dumps(names)}\n{section}")
    return main(["pipeline", "study-effects", str(processed), str(out / "study-effects.nc"),
                 "--scores", str(out / "scores.nc"), "--params", str(params)])


def test_stage_on_the_bundled_udpmon_campaign(processed, tmp_path):
    assert run_stage(processed, tmp_path, ["udpmon-veth-500m", "shaped"]) == 0
    tree = open_product(tmp_path / "study-effects.nc")
    assert {e: tree[e].attrs["campaign"] for e in se.EFFECTS} == {
        "window": "shaped", "streams": "shaped", "rtt": "shaped",
        "latency": "udpmon-veth-500m", "udp": "udpmon-veth-500m"}
    udp = open_product(processed / "udpmon-veth-500m.stats.nc")
    # the campaign page's fit of the main scan, not a second one
    xr.testing.assert_identical(tree["latency"]["latency_fit"].to_dataset(), udp["latency_fit"].to_dataset())
    with xr.open_dataset(processed / "udpmon-veth-500m.nc") as ds:
        rows = ds[list(se.UDP_ROWS)].load()
    xr.testing.assert_equal(tree["udp"]["udp_rows"].to_dataset(), rows)
    scores = xr.open_dataset(tmp_path / "scores.nc").load()
    assert scores["campaign"].values.tolist() == ["shaped", "udpmon-veth-500m"]
    assert scores["chosen"].sum("campaign").values.tolist() == [1, 1, 1, 1, 1]


def test_a_campaign_that_changes_no_choice_leaves_the_product_identical(processed, tmp_path):
    assert run_stage(processed, tmp_path / "a", ["udpmon-veth-500m", "shaped"]) == 0
    assert run_stage(processed, tmp_path / "b", ["udpmon-veth-500m", "shaped"]) == 0
    assert run_stage(processed, tmp_path / "c", ["udpmon-veth-500m", "shaped", "zz-loop"]) == 0
    first = sha256(tmp_path / "a" / "study-effects.nc")
    assert sha256(tmp_path / "b" / "study-effects.nc") == first          # reproducible
    assert sha256(tmp_path / "c" / "study-effects.nc") == first          # so DVC runs no study page
    assert sha256(tmp_path / "c" / "scores.nc") != sha256(tmp_path / "a" / "scores.nc")
    # a threshold no campaign reaches changes the choice, and so the product
    assert run_stage(processed, tmp_path / "d", ["udpmon-veth-500m", "shaped"],
                     "study-effects: {min_strength: 1000}\n") == 0
    tree = open_product(tmp_path / "d" / "study-effects.nc")
    assert [tree[e].attrs["campaign"] for e in se.EFFECTS] == ["", "", "", "udpmon-veth-500m", "udpmon-veth-500m"]


def test_stage_names_what_is_missing(processed, tmp_path, capsys):
    assert run_stage(processed, tmp_path, ["shaped", "absent"]) == 1
    assert "no normalized campaign or statistics product for absent" in capsys.readouterr().err
    assert run_stage(processed, tmp_path, ["shaped"], "study-effects: {strength: 2}\n") == 1
    assert "unknown study-effects parameters ['strength']" in capsys.readouterr().err
    assert run_stage(processed, tmp_path, ["shaped"], "study-effects: {show: {rtt: veth-1g}}\n") == 1
    assert "show: rtt: 'veth-1g' is not a campaign of `campaigns:`" in capsys.readouterr().err
    assert not (tmp_path / "study-effects.nc").exists()


def test_a_tiny_sweep_added_leaves_the_authors_product_identical(processed, tmp_path):
    # a 12-run sweep with a strong effect (3 windows x 2 streams x 2 repeats: 6 cells)
    tiny = sweep("a-tiny", windows=(8192, 65536, 1048576), streams=(1, 2), repeats=2)
    write_netcdf(tiny, processed / "a-tiny.nc")
    write_product(campaign_product(tiny), processed / "a-tiny.stats.nc")
    show = "study-effects: {show: {window: shaped, streams: shaped, rtt: shaped}}\n"
    assert run_stage(processed, tmp_path / "a", ["udpmon-veth-500m", "shaped"], show) == 0
    assert run_stage(processed, tmp_path / "b", ["a-tiny", "udpmon-veth-500m", "shaped"], show) == 0
    assert sha256(tmp_path / "b" / "study-effects.nc") == sha256(tmp_path / "a" / "study-effects.nc")
    scores = xr.open_dataset(tmp_path / "b" / "scores.nc").load()
    assert not scores["suggested"].sel(campaign="a-tiny").any()      # below min_cells
