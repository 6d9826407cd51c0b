"""thruput.stats.compare: two campaigns compared per cell, and their set-ups diffed."""

from __future__ import annotations

import importlib
import json
import tracemalloc

import numpy as np
import pytest
import scipy.stats
import xarray as xr

from thruput.stats import compare, hodges_lehmann, metadata_diff

compare_module = importlib.import_module("thruput.stats.compare")   # (the name is the function's)

from . import synthetic


def test_hodges_lehmann_hand_computed():
    # b - a over all pairs: -1 0 1 1 2 3 4 5 6 -> median 2
    assert hodges_lehmann([1, 2, 3], [2, 4, 7]) == 2.0
    assert hodges_lehmann([1, np.nan], [3]) == 2.0
    assert np.isnan(hodges_lehmann([], [1.0]))
    # a pure shift is recovered exactly
    x = np.random.default_rng(0).normal(size=30)
    assert hodges_lehmann(x, x + 2.5) == pytest.approx(2.5)


def _outer_median(a, b):
    return float(np.median(np.subtract.outer(np.asarray(b, float), np.asarray(a, float))))


@pytest.mark.parametrize("kind", ["normal", "ties", "scales", "rounded"])
def test_hodges_lehmann_selected_is_the_formed_median_bit_for_bit(kind, monkeypatch):
    monkeypatch.setattr(compare_module, "HL_PAIRS_FORMED", 0)     # always the selection
    rng = np.random.default_rng(len(kind))
    for _ in range(60):
        na, nb = rng.integers(1, 50, 2)
        a, b = {"normal": lambda: (rng.normal(size=na), rng.normal(size=nb)),
                "ties": lambda: (rng.integers(-3, 4, na) * 1.0, rng.integers(-3, 4, nb) * 1.0),
                "scales": lambda: (rng.normal(size=na) * 1e9, rng.normal(size=nb) * 1e-9),
                "rounded": lambda: (np.round(rng.normal(size=na), 2), np.round(rng.normal(size=nb), 2) + 0.1),
                }[kind]()
        assert hodges_lehmann(a, b) == _outer_median(a, b)      # odd and even numbers of pairs


def test_hodges_lehmann_selected_with_infinities_and_signed_zeros(monkeypatch):
    monkeypatch.setattr(compare_module, "HL_PAIRS_FORMED", 0)
    assert hodges_lehmann([np.inf, 1.0], [2.0, 3.0]) == _outer_median([np.inf, 1.0], [2.0, 3.0]) == -np.inf
    with np.errstate(invalid="ignore"):     # (inf - inf in the formed reference)
        assert np.isnan(hodges_lehmann([1.0, 2.0], [np.inf, -np.inf]))
        assert np.isnan(_outer_median([1.0, 2.0], [np.inf, -np.inf]))
        assert np.isnan(hodges_lehmann([np.inf], [np.inf, 1.0]))
    assert hodges_lehmann([0.0, -0.0], [0.0]) == 0.0


def test_hodges_lehmann_of_large_samples_holds_no_pair():
    # 4000 x 5000 runs: 2 x 10^7 differences (160 MB) if they were formed
    rng = np.random.default_rng(11)
    a, b = rng.normal(size=4000), rng.normal(size=5000) + 0.25
    tracemalloc.start()
    try:
        got = hodges_lehmann(a, b)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2e6
    assert got == _outer_median(a, b)


def test_compare_against_scipy_and_hand_values():
    a = xr.DataArray([[1.0, 2.0, 3.0, np.nan], [5.0, 6.0, 7.0, 8.0]], dims=("window", "repeat"),
                     coords={"window": [1, 2]}, attrs={"units": "bit/s"})
    b = xr.DataArray([[2.0, 4.0, 7.0], [5.0, 6.0, 7.0]], dims=("window", "repeat"),
                     coords={"window": [1, 2]}, attrs={"units": "bit/s"})
    c = compare(a, b, n_boot=300, seed=1)
    first = c.sel(window=1)
    assert int(first["n_a"]) == 3 and int(first["n_b"]) == 3
    assert float(first["median_a"]) == 2.0 and float(first["median_b"]) == 4.0
    assert float(first["difference"]) == 2.0
    assert float(first["hodges_lehmann"]) == 2.0
    ref = scipy.stats.mannwhitneyu([2.0, 4.0, 7.0], [1.0, 2.0, 3.0], alternative="two-sided")
    assert float(first["u"]) == ref.statistic and float(first["p_value"]) == ref.pvalue
    # U of b: pairs with b > a, ties half: (2>1) .5 (4>1,2,3) (7>1,2,3) = 7.5 of 9
    assert float(first["u"]) == 7.5
    assert float(first["prob_superiority"]) == pytest.approx(7.5 / 9)
    assert float(first["difference_low"]) <= 2.0 <= float(first["difference_high"])
    assert c["difference"].attrs["units"] == "bit/s" and c["u"].attrs["units"] == "1"


def test_compare_aligns_cells_and_detects_an_upgrade():
    before = synthetic.campaign(seed=1)
    after = synthetic.campaign(seed=2, capacity=2 * synthetic.CAPACITY, repeats=4)
    # 'after' lacks the largest window: only shared cells are compared
    after = after.isel(window=slice(0, -1))
    c = compare(before["throughput"], after["throughput"], n_boot=200)
    assert c.sizes["window"] == len(synthetic.WINDOWS) - 1
    # window-limited cells are the same model on both sides; capacity-limited ones doubled
    big = c.sel(window=262144, streams=8)
    assert float(big["hodges_lehmann"]) == pytest.approx(synthetic.CAPACITY, rel=0.05)
    assert float(big["p_value"]) < 0.05 and float(big["prob_superiority"]) == 1.0
    small = c.sel(window=8192, streams=1)
    assert abs(float(small["hodges_lehmann"])) < 0.04 * float(small["median_a"])
    assert int(small["n_a"]) == 5 and int(small["n_b"]) == 4


def test_metadata_diff_by_role():
    a = dict(synthetic.METADATA)
    b = json.loads(json.dumps(a))
    # the hosts are renamed, the sender's kernel and a tool are upgraded
    b["hosts"] = {"gamma": b["hosts"].pop("alpha"), "beta": b["hosts"]["beta"]}
    b["path"]["source"] = "gamma"
    b["hosts"]["gamma"]["kernel"] = "6.12.0-1"
    b["hosts"]["beta"]["tcp"]["rmem_max"] = 8388608
    b["tools"]["iperf3"] = "3.16"
    del b["tools"]["ping"]
    b["notes"] = "after the upgrade"
    rows = metadata_diff(a, b)
    assert rows == [
        {"key": "hosts.destination.tcp.rmem_max", "a": 212992, "b": 8388608, "change": "changed"},
        {"key": "hosts.source.kernel", "a": "6.1.0-18", "b": "6.12.0-1", "change": "changed"},
        {"key": "hosts.source.name", "a": "alpha", "b": "gamma", "change": "changed"},
        {"key": "notes", "a": None, "b": "after the upgrade", "change": "added"},
        {"key": "path.source", "a": "alpha", "b": "gamma", "change": "changed"},
        {"key": "tools.iperf3", "a": "3.12", "b": "3.16", "change": "changed"},
        {"key": "tools.ping", "a": "iputils 20221126", "b": None, "change": "removed"},
    ]
    keys = [r["key"] for r in metadata_diff(a, b, ignore=("notes", "path", "hosts.source.name"))]
    assert keys == ["hosts.destination.tcp.rmem_max", "hosts.source.kernel", "tools.iperf3", "tools.ping"]
    # by name, the renamed host is one removed and one added subtree
    by_name = metadata_diff(a, b, by_role=False)
    assert {"key": "hosts.alpha.kernel", "a": "6.1.0-18", "b": None, "change": "removed"} in by_name


def test_metadata_diff_from_datasets():
    a = synthetic.campaign(repeats=1)
    meta = dict(synthetic.METADATA, tools={"iperf3": "3.9"})
    b = synthetic.campaign(repeats=1, metadata=meta)
    assert metadata_diff(a, b) == [
        {"key": "tools.iperf3", "a": "3.12", "b": "3.9", "change": "changed"},
        {"key": "tools.ping", "a": "iputils 20221126", "b": None, "change": "removed"},
    ]
    assert metadata_diff(a, a) == []
