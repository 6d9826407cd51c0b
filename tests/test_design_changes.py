"""A design over time is watched as a monitor is: per cell of its factors, the change points
of each metric (the monitor's detector and settings) and the daily cycle, in its statistics
product and on its page; a design without time gets neither."""

from __future__ import annotations

import json

import numpy as np
import pytest
from IPython.display import HTML, Markdown

from thruput.stats.design import design_product
from thruput.stats.design_series import MAX_SERIES, series_factors

from .designs import random_design
from .test_design_pages import check_page, page_items, text_of
from .test_design_pages import processed as processed_stats

#: Time between the runs of one cell (s), and the slot of the planted shift.
INTERVAL = 600
SHIFT_SLOT = 22
MONITOR = {"bootstrap": 50}


def timed_design(slots=40, shift=0.5, cycle=0.0, seed=3):
    """Two factors (cc x direction, 2 x 2 cells), every cell run once a slot of ``INTERVAL``
    s; the throughput of cell (first cc, first direction) times ``shift`` from slot
    :data:`SHIFT_SLOT` on, and every cell with a daily cycle of relative amplitude ``cycle``."""
    ds = random_design(seed, n_factors=2, min_levels=2, max_levels=2, time=True, repeats=slots, missing=0.0,
                       failing=0.0, metrics={"tcp", "ping"}, name="timed")
    factors = json.loads(ds.attrs["factors"])
    names = [f["name"] for f in factors]
    slot = ds["repeat"].values
    start = np.datetime64("2026-11-22T14:00:00", "ns")
    cell = np.unique(np.stack([ds[n].values.astype(str) for n in names], axis=1), axis=0, return_inverse=True)[1].ravel()
    t = start + ((slot * INTERVAL + cell * 7) * 1e9).astype("timedelta64[ns]")
    rng = np.random.default_rng(seed)
    tput = 1e8 * (1 + 0.3 * cell) * rng.lognormal(0, 0.05, slot.size)
    hours = (t - t.min()) / np.timedelta64(1, "h")
    tput *= 1 + cycle * np.sin(2 * np.pi * hours / 24)
    planted = np.ones(slot.size, bool)
    for f in factors:
        planted &= ds[f["name"]].values.astype(str) == str(f["levels"][0])
    tput = np.where(planted & (slot >= SHIFT_SLOT), tput * shift, tput)
    ds = ds.assign_coords(time=("run", t)).sortby("time")
    order = np.argsort(t, kind="stable")
    ds["throughput"] = ds["throughput"].copy(data=tput[order])
    ds["rtt_median"] = ds["rtt_median"].copy(data=20 * (1 + 0.2 * cell[order]) * rng.lognormal(0, 0.05, slot.size))
    ds.attrs["planted"] = str(t[planted & (slot == SHIFT_SLOT)][0])
    return ds, factors


def test_a_planted_shift_is_found_in_its_cell_only():
    ds, factors = timed_design()
    g = design_product(ds, {"bootstrap": 20}, MONITOR)
    ch = g["changes/throughput"]
    assert ch.sizes["change"] == 1, ch
    for f in factors:                    # in the cell where it was planted
        assert str(ch[f["name"]].values[0]) == str(np.asarray(f["levels"], dtype=str)[0])
    planted = np.datetime64(ds.attrs["planted"], "ns")
    assert abs((ch["time"].values[0] - planted) / np.timedelta64(INTERVAL, "s")) <= 2
    assert ch["time_lower"].values[0] <= planted <= ch["time_upper"].values[0]
    assert ch["ratio_low"].values[0] < 0.5 < ch["ratio_high"].values[0]
    assert abs(float(ch["ratio"][0]) - 0.5) < 0.05
    s = g["series/throughput"]
    assert s.sizes["series"] == 4 and s["n_changes"].values.sum() == 1
    assert sorted(s["n"].values) == [40] * 4
    assert "no change found in 40 runs" in " ".join(s["change_reason"].values)
    # a 6.5 h campaign: no daily cycle, and says why
    assert all("less than 2 days" in r for r in s["cycle_reason"].values)
    # the rtt series (not shifted) has none
    assert g["changes/rtt_median"].sizes["change"] == 0
    assert json.loads(ch.attrs["change_params"])["penalty"] == 3.0


def test_the_settings_are_the_monitors():
    ds, _ = timed_design()
    strict = design_product(ds, {"bootstrap": 20}, {**MONITOR, "penalty": 1e6})
    assert strict["changes/throughput"].sizes["change"] == 0
    with pytest.raises(ValueError, match="unknown monitor parameters"):
        design_product(ds, {"bootstrap": 20}, {"penaltyy": 3})


def test_a_daily_cycle_is_measured_where_the_span_allows():
    ds, _ = timed_design(slots=4 * 144, shift=1.0, cycle=0.2)       # four days of 10 min slots
    ds = ds.isel(run=np.flatnonzero(np.isin(ds["repeat"].values % 6, [0])))   # one run an hour
    s = design_product(ds, {"bootstrap": 20}, {**MONITOR, "bootstrap": 20})["series/throughput"]
    assert (s["cycle_false_alarm"].values < 0.01).all()
    assert np.allclose(s["cycle_relative_amplitude"].values, 0.4, atol=0.15)
    assert (s["period_used"].values == 86400).all()
    assert s["n_changes"].values.sum() == 0


@pytest.mark.slow
def test_the_page_shows_the_change(tmp_path, monkeypatch):
    ds, factors = timed_design()
    ds = processed_stats(tmp_path, ds)
    items = page_items(ds, monkeypatch)
    assert check_page(items) == []
    text = " ".join(text_of(i) for i in items if isinstance(i, (HTML, Markdown)))
    assert "## Changes over time: throughput" in text
    label = ", ".join(f"{f['name']} {f['levels'][0]}" for f in factors)
    tables = [text_of(i) for i in items if isinstance(i, HTML) and "after / before" in i.data]
    assert len(tables) == 1 and label in tables[0] and "2026-11-22 17:" in tables[0]
    assert "No change found" in text           # the rtt: no change, in one line
    assert "No daily cycle measured: the longest series spans 6.5 h, less than 2 d." in text


def test_a_design_without_time_has_no_changes_or_cycles(tmp_path, monkeypatch):
    ds = random_design(11, n_factors=2, time=False, repeats=12, failing=0.0, name="untimed")
    g = design_product(ds, {"bootstrap": 20}, MONITOR)
    assert not [k for k in g if k.split("/")[0] in ("changes", "series", "series_bins", "time")]
    items = page_items(processed_stats(tmp_path, ds), monkeypatch)
    text = " ".join(text_of(i) for i in items if isinstance(i, (HTML, Markdown)))
    assert "Changes over time" not in text and "before/after" not in text and "cycle" not in text


def test_series_are_bounded():
    many = [{"name": "site", "levels": list(range(57))}, {"name": "cc", "levels": [1, 2, 3]},
            {"name": "dir", "levels": [1, 2]}]
    assert series_factors(many, ["site", "cc", "dir"]) == ["site"]
    assert series_factors(many, ["cc", "dir", "site"]) == ["cc", "dir"]
    ds = random_design(5, n_factors=1, min_levels=57, max_levels=57, time=True, repeats=3, failing=0.0,
                       metrics={"tcp"}, name="many")
    s = design_product(ds, {"bootstrap": 20}, MONITOR)["series/throughput"]
    assert s.sizes["series"] == MAX_SERIES and s.attrs["n_cells"] == 57


def test_a_factor_that_does_not_apply_to_a_metric_does_not_split_it():
    """Pings have no direction: their rtt series are per level of the other factors."""
    ds, factors = timed_design()
    first, second = (f["name"] for f in factors)
    ping = np.asarray(ds[first].values).astype(str) == str(factors[0]["levels"][0])
    ds = ds.assign_coords({second: ("run", np.where(ping, "", ds[second].values.astype(str)))})
    ds["rtt_median"] = ds["rtt_median"].where(ping)
    ds["throughput"] = ds["throughput"].where(~ping)
    g = design_product(ds, {"bootstrap": 20}, MONITOR)
    shown = json.loads(g["series/throughput"].attrs["by"])
    assert set(shown) == {first, second}
    assert json.loads(g["series/rtt_median"].attrs["by"]) == [n for n in shown if n != second]
    assert int(g["series/rtt_median"]["n"].sum()) == int(ping.sum())
    assert int(g["series/throughput"]["n"].sum()) == int((~ping).sum())
