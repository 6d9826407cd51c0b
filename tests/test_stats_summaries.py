"""thruput.stats.summaries: describe, bootstrap_ci, ecdf, frequency against known answers."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.stats
import xarray as xr

from thruput.stats import bootstrap_ci, describe, ecdf, frequency
from thruput.stats._util import cell_rngs

from . import synthetic


def grid():
    """2 windows x 2 streams x 4 repeats, one NaN run, one empty cell."""
    v = np.array([[[1.0, 2.0, 3.0, 4.0], [10.0, 20.0, np.nan, 40.0]],
                  [[5.0, 5.0, 5.0, 5.0], [np.nan] * 4]])
    return xr.DataArray(v, dims=("window", "streams", "repeat"),
                        coords={"window": [8192, 65536], "streams": [1, 4]},
                        attrs={"units": "bit/s", "long_name": "throughput"})


def test_describe_hand_computed():
    s = describe(grid(), "repeat")
    c = s.sel(window=8192, streams=1)
    # 1,2,3,4: mean 2.5, median 2.5, sample sd sqrt(5/3), linear quartiles 1.75 / 3.25
    assert int(c["n"]) == 4
    assert float(c["mean"]) == 2.5 and float(c["median"]) == 2.5
    assert float(c["min"]) == 1.0 and float(c["max"]) == 4.0
    assert float(c["std"]) == pytest.approx(np.sqrt(5 / 3), rel=1e-12)
    assert float(c["iqr"]) == 1.5
    assert float(c["p10"]) == pytest.approx(1.3) and float(c["p90"]) == pytest.approx(3.7)
    # NaN left out: 10, 20, 40
    c = s.sel(window=8192, streams=4)
    assert int(c["n"]) == 3 and float(c["median"]) == 20.0
    assert float(c["mean"]) == pytest.approx(70 / 3)
    assert float(c["p25"]) == 15.0 and float(c["p75"]) == 30.0
    # empty cell: n = 0, NaN elsewhere
    c = s.sel(window=65536, streams=4)
    assert int(c["n"]) == 0 and np.isnan(float(c["median"])) and np.isnan(float(c["std"]))
    # constant cell: no spread
    c = s.sel(window=65536, streams=1)
    assert float(c["std"]) == 0.0 and float(c["iqr"]) == 0.0


def test_describe_units_and_names():
    s = describe(grid(), "repeat", percentiles=(2.5, 50, 97.5))
    assert sorted(s.data_vars) == sorted(["n", "mean", "median", "min", "max", "std", "iqr",
                                          "p2_5", "p50", "p97_5"])
    assert s["n"].attrs["units"] == "count"
    for name in ("mean", "median", "iqr", "p2_5", "std"):
        assert s[name].attrs["units"] == "bit/s"
    assert s["median"].attrs["long_name"] == "median of throughput"
    np.testing.assert_array_equal(s["p50"].values, s["median"].values)
    assert s["median"].dims == ("window", "streams")
    np.testing.assert_array_equal(s["window"].values, [8192, 65536])


def test_describe_matches_numpy_over_several_dims():
    rng = np.random.default_rng(3)
    da = xr.DataArray(rng.normal(size=(3, 4, 5)), dims=("a", "b", "c"))
    s = describe(da, ("a", "c"))
    x = np.moveaxis(da.values, 1, 0).reshape(4, -1)
    np.testing.assert_allclose(s["median"].values, np.median(x, axis=1))
    np.testing.assert_allclose(s["std"].values, np.std(x, axis=1, ddof=1))
    np.testing.assert_allclose(s["p90"].values, np.percentile(x, 90, axis=1))
    whole = describe(da)
    assert int(whole["n"]) == 60
    assert float(whole["max"]) == da.values.max()


def test_describe_unknown_dim_is_an_error():
    with pytest.raises(ValueError, match="no dimension"):
        describe(grid(), "probe")


def test_bootstrap_ci_is_seeded_and_matches_a_direct_resampling():
    da = grid()
    a = bootstrap_ci(da, "repeat", n_boot=500, seed=7)
    b = bootstrap_ci(da, "repeat", n_boot=500, seed=7)
    xr.testing.assert_identical(a, b)
    # the same resampling done by hand for the cell 8192 x 4 (third cell, C order)
    rng = cell_rngs(7, 4)[1]
    x = np.array([10.0, 20.0, 40.0])
    reps = np.median(x[rng.integers(0, 3, size=(500, 3))], axis=-1)
    lo, hi = np.quantile(reps, [0.025, 0.975])
    c = a.sel(window=8192, streams=4)
    assert float(c["estimate"]) == 20.0
    assert float(c["low"]) == lo and float(c["high"]) == hi
    assert int(c["n"]) == 3
    # a constant cell has a zero-width interval, an empty cell is NaN
    c = a.sel(window=65536, streams=1)
    assert float(c["low"]) == float(c["high"]) == 5.0
    assert np.isnan(float(a.sel(window=65536, streams=4)["estimate"]))
    assert a["low"].attrs["units"] == "bit/s" and a.attrs["seed"] == 7


def test_bootstrap_ci_cell_does_not_depend_on_other_cells():
    da = grid()
    full = bootstrap_ci(da, "repeat", n_boot=200, seed=1)
    changed = da.copy()
    changed[1, 1] = [1.0, 2.0, 3.0, 4.0]
    again = bootstrap_ci(changed, "repeat", n_boot=200, seed=1)
    xr.testing.assert_equal(full.sel(window=8192), again.sel(window=8192))


def test_bootstrap_ci_agrees_with_scipy_percentile_bootstrap():
    x = np.random.default_rng(0).lognormal(size=40)
    da = xr.DataArray(x, dims="repeat")
    ours = bootstrap_ci(da, "repeat", statistic="median", n_boot=4000, seed=0)
    ref = scipy.stats.bootstrap((x,), np.median, n_resamples=4000, method="percentile",
                                random_state=np.random.default_rng(1)).confidence_interval
    # two Monte Carlo estimates of the same interval: within a few per cent of its width
    width = ref.high - ref.low
    assert abs(float(ours["low"]) - ref.low) < 0.15 * width
    assert abs(float(ours["high"]) - ref.high) < 0.15 * width


def test_bootstrap_ci_iqr_and_callable():
    da = xr.DataArray([1.0, 2.0, 3.0, 4.0, 5.0], dims="repeat", attrs={"units": "ms"})
    iqr = bootstrap_ci(da, statistic="iqr", n_boot=100)
    assert float(iqr["estimate"]) == 2.0 and iqr.attrs["statistic"] == "iqr"
    top = bootstrap_ci(da, statistic=lambda x, axis: np.max(x, axis=axis), n_boot=100)
    assert float(top["estimate"]) == 5.0 and float(top["high"]) == 5.0
    with pytest.raises(ValueError, match="unknown statistic"):
        bootstrap_ci(da, statistic="mode")
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(da, confidence=95)


def test_ecdf_matches_scipy():
    da = grid()
    e = ecdf(da, "repeat")
    c = e.sel(window=8192, streams=4)
    np.testing.assert_array_equal(c["value"].values, [10.0, 20.0, 40.0, np.nan])
    np.testing.assert_allclose(c["probability"].values, [1 / 3, 2 / 3, 1.0, np.nan])
    assert int(c["n"]) == 3 and c["value"].attrs["units"] == "bit/s"
    x = np.random.default_rng(2).normal(size=25)
    ref = scipy.stats.ecdf(x).cdf
    mine = ecdf(xr.DataArray(x, dims="probe"))
    np.testing.assert_allclose(mine["probability"].values, ref.evaluate(mine["value"].values))


def test_frequency_matches_numpy_histogram():
    da = grid()
    f = frequency(da, "repeat", bins=4, range=(0, 40))
    counts, edges = np.histogram([10.0, 20.0, 40.0], bins=4, range=(0, 40))
    np.testing.assert_array_equal(f["count"].sel(window=8192, streams=4).values, counts)
    np.testing.assert_array_equal(f["bin_low"].values, edges[:-1])
    assert f["bin_center"].attrs["units"] == "bit/s"
    np.testing.assert_allclose(f["fraction"].sel(window=8192, streams=4).values, counts / 3)
    assert f["count"].sel(window=65536, streams=4).values.sum() == 0
    # default bins: shared over all cells, spanning every finite value
    f = frequency(da, "repeat", bins=[0, 5, 50])
    np.testing.assert_array_equal(f["count"].sel(window=65536, streams=1).values, [0, 4])


def test_seed_004_percentile_range_of_a_campaign():
    ds = synthetic.campaign(noise=0.0)
    s = describe(ds["throughput"], ("window", "streams", "repeat"))
    values = np.sort(ds["throughput"].values.ravel())
    assert float(s["p10"]) == pytest.approx(np.percentile(values, 10))
    assert float(s["max"]) == synthetic.CAPACITY


def test_a_large_bootstrap_is_drawn_in_blocks_of_bounded_memory(monkeypatch):
    from thruput.stats import summaries
    x = np.random.default_rng(2).normal(size=20_000)
    small = summaries.bootstrap_samples(x[:100], np.median, 50, np.random.default_rng(1))
    # at or below the block: one draw, as always (the same replicates as before)
    idx = np.random.default_rng(1).integers(0, 100, size=(50, 100))
    np.testing.assert_array_equal(small, np.median(x[:100][idx], axis=-1))
    monkeypatch.setattr(summaries, "BOOTSTRAP_BLOCK", 1 << 18)
    tracemalloc.start()
    try:
        reps = summaries.bootstrap_samples(x, np.median, 400, np.random.default_rng(1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # 400 x 20000 resampled values would be 128 MB (indices and values); blocks of 13
    assert peak < 20e6
    again = summaries.bootstrap_samples(x, np.median, 400, np.random.default_rng(1))
    np.testing.assert_array_equal(reps, again)                  # the seed decides
    assert reps.shape == (400,) and np.all((reps >= x.min()) & (reps <= x.max()))
    # replicate medians of a 20000-run sample: spread about 1.25 / sqrt(n) sigma
    assert abs(reps.mean() - np.median(x)) < 0.01 and 0.005 < reps.std() < 0.015
