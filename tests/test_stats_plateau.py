"""thruput.stats.plateau: plateau level and onset on a synthetic sweep with a known answer."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from thruput.stats import best_cells, plateau, smallest_product, top_fraction, window_bound

from . import synthetic


@pytest.fixture(scope="module")
def sweep():
    return synthetic.campaign()


def test_plateau_of_the_synthetic_sweep(sweep):
    p = plateau(sweep["throughput"], tolerance=0.1, n_boot=200, seed=0)
    assert p["onset"].dims == ("streams",)
    for n in synthetic.STREAMS:
        c = p.sel(streams=n)
        onset = synthetic.expected_onset(n, 0.1)
        assert int(c["onset"]) == onset
        # every window-limited point is at most half of the capacity: the bounds are exact
        assert int(c["onset_low"]) == int(c["onset_high"]) == onset
        assert str(c["limited_by"].values) == "capacity"
        assert int(c["n_points"]) == len(synthetic.WINDOWS)
        # level: the highest median, inside the +-2 % noise band around the capacity
        med = sweep["throughput"].sel(streams=n).median("repeat")
        assert float(c["level"]) == float(med.max())
        assert 0.98 * synthetic.CAPACITY <= float(c["level"]) <= 1.02 * synthetic.CAPACITY
        assert float(c["level_low"]) <= float(c["level"]) <= float(c["level_high"])
    assert p["level"].attrs["units"] == "bit/s"
    assert p["onset"].attrs["units"] == "byte"
    assert p.attrs["tolerance"] == 0.1


def test_plateau_along_streams(sweep):
    p = plateau(sweep["throughput"], dim="streams", n_boot=100)
    # window 131072 reaches capacity with one stream; 8192 never does within 8 streams
    assert int(p["onset"].sel(window=131072)) == 1
    assert str(p["limited_by"].sel(window=131072).values) == "capacity"
    assert int(p["onset"].sel(window=8192)) == 8
    assert str(p["limited_by"].sel(window=8192).values) == "window"
    assert float(p["level"].sel(window=8192)) == pytest.approx(
        float(sweep["throughput"].sel(window=8192, streams=8).median()))


def test_plateau_hand_cases():
    w = [1, 2, 4, 8]
    rising = [10.0, 20.0, 40.0, 80.0]
    flat = [10.0, 95.0, 100.0, 98.0]
    v = np.stack([np.repeat([rising], 3, 0).T, np.repeat([flat], 3, 0).T])
    da = xr.DataArray(v, dims=("host", "window", "repeat"),
                      coords={"host": ["a", "b"], "window": w}, attrs={"units": "bit/s"})
    p = plateau(da, n_boot=50)
    assert list(p["limited_by"].values) == ["window", "capacity"]
    assert list(p["onset"].values) == [8, 2]
    assert list(p["level"].values) == [80.0, 100.0]
    # a tighter tolerance moves the onset: 95 is within 10 % of 100 but not within 2 %
    assert list(plateau(da, tolerance=0.02, n_boot=50)["onset"].values) == [8, 4]


def test_plateau_unsorted_nan_and_undetermined():
    # windows given out of order; one missing run; a cell with a single window of data
    da = xr.DataArray([[50.0, 52.0, np.nan], [100.0, 101.0, 99.0], [np.nan] * 3],
                      dims=("window", "repeat"), coords={"window": [8, 16, 4]})
    p = plateau(da, n_boot=50)
    assert int(p["onset"]) == 16 and int(p["n_points"]) == 2
    assert str(p["limited_by"].values) == "window"
    one = plateau(da.isel(window=[0]), n_boot=50)
    assert str(one["limited_by"].values) == "undetermined" and int(one["onset"]) == 8
    # overlapping noise: the onset could be either point
    noisy = xr.DataArray([[80.0, 100.0, 60.0], [90.0, 85.0, 100.0]], dims=("window", "repeat"),
                         coords={"window": [1, 2]})
    q = plateau(noisy, n_boot=400, tolerance=0.05)
    assert int(q["onset_low"]) == 1 and int(q["onset_high"]) == 2
    assert str(q["limited_by"].values) == "undetermined"


def test_plateau_is_reproducible(sweep):
    a = plateau(sweep["throughput"], n_boot=100, seed=3)
    b = plateau(sweep["throughput"], n_boot=100, seed=3)
    xr.testing.assert_identical(a, b)


def test_best_cells(sweep):
    b = best_cells(sweep["throughput"], n=4)
    med = sweep["throughput"].median("repeat")
    top = np.sort(med.values.ravel())[::-1][:4]
    np.testing.assert_array_equal(b["median"].values, top)
    for i in range(4):
        cell = med.sel(window=int(b["window"][i]), streams=int(b["streams"][i]))
        assert float(cell) == float(b["median"][i])
    assert b["window"].attrs["units"] == "byte"
    assert list(b["rank"].values) == [0, 1, 2, 3]
    assert set(b.data_vars) == {"n", "mean", "median", "max", "iqr", "window", "streams"}


def test_top_fraction(sweep):
    t = top_fraction(sweep["throughput"], fraction=0.1)
    all_values = sweep["throughput"].values.ravel()
    threshold = np.quantile(all_values, 0.9)
    assert float(t["threshold"]) == threshold
    assert int(t["count"].sum()) == int((all_values >= threshold).sum())
    # only plateau cells hold top-10 % runs
    hit = t["count"] > 0
    for w in sweep.window.values:
        for n in sweep.streams.values:
            if bool(hit.sel(window=w, streams=n)):
                assert w >= synthetic.expected_onset(n)
    assert float(t["share"].sum()) == pytest.approx(1.0)


def test_smallest_product(sweep):
    s = smallest_product(sweep["throughput"])
    # every streams count reaches the plateau at window x streams = 131072 bytes (BDP
    # 125000 bytes); ties go to fewer streams
    assert float(s["product"]) == 131072 and float(s["streams"]) == 1
    assert float(s["window"]) == 131072
    assert float(s["threshold"]) == pytest.approx(0.9 * float(s["level"]))
    assert s["product"].attrs["units"] == "byte"
    # with a level nobody reaches, all NaN
    none = smallest_product(sweep["throughput"], level=10 * synthetic.CAPACITY)
    assert np.isnan(float(none["window"]))


def test_smallest_product_prefers_the_smaller_product():
    v = np.array([[[10.0], [100.0]], [[100.0], [100.0]]])  # (window, streams, repeat)
    da = xr.DataArray(v, dims=("window", "streams", "repeat"),
                      coords={"window": [1000, 4000], "streams": [1, 2]})
    s = smallest_product(da)
    assert (float(s["window"]), float(s["streams"]), float(s["product"])) == (1000, 2, 2000)


def test_window_bound_of_the_noise_free_sweep():
    ds = synthetic.campaign(noise=0.0)
    b = window_bound(ds["throughput"], synthetic.RTT_MS, synthetic.CAPACITY)
    # throughput is min(n x window / RTT, capacity): efficiency 1 everywhere
    np.testing.assert_allclose(b["efficiency"].values, 1.0)
    assert float(b["bound"].sel(window=8192, streams=2)) == 8 * 2 * 8192 / 1e-3
    assert float(b["bdp"]) == 125000.0
    assert not b["exceeds_bound"].values.any()
    # with the window the OS granted (twice the request) the bound doubles
    doubled = window_bound(ds["throughput"], synthetic.RTT_MS, window=ds["window_actual"])
    np.testing.assert_allclose(doubled["bound"].values, 2 * b["bound"].values)
    assert np.isnan(float(doubled["bdp"]))


def test_window_bound_flags_impossible_cells():
    ds = synthetic.campaign(noise=0.0)
    # a 10x too small RTT makes every window-limited cell exceed its bound
    b = window_bound(ds["throughput"], synthetic.RTT_MS * 10)
    limited = ds["throughput"].median("repeat") < 0.999 * synthetic.CAPACITY
    np.testing.assert_array_equal(b["exceeds_bound"].values, limited.values | (b["bound"] < synthetic.CAPACITY).values)
    via = ds.thruput.window_bound()
    assert float(via["bdp"]) == pytest.approx(125000.0, rel=0.1)


def test_plateau_says_when_its_onset_is_at_the_edge_of_the_sweep():
    import numpy as np
    import xarray as xr

    from thruput.stats import plateau

    w = [1, 2, 4, 8]
    flat = xr.DataArray(np.repeat([[100.0, 100, 100, 100]], 3, 0).T, dims=("window", "repeat"),
                        coords={"window": w})
    rising = xr.DataArray(np.repeat([[10.0, 20, 40, 80]], 3, 0).T, dims=("window", "repeat"),
                          coords={"window": w})
    middle = xr.DataArray(np.repeat([[10.0, 100, 100, 100]], 3, 0).T, dims=("window", "repeat"),
                          coords={"window": w})
    assert str(plateau(flat, n_boot=20).censored.values) == "below"   # onset <= 1: upper bound
    assert str(plateau(rising, n_boot=20).censored.values) == "above"  # level >= 80: lower bound
    assert str(plateau(middle, n_boot=20).censored.values) == "no"
