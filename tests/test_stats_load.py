"""thruput.stats.load: loaded vs unloaded RTT, loss counts and RTT growth with throughput."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from thruput.stats import rtt_growth, rtt_load, trend_vs_throughput

from . import synthetic


@pytest.fixture(scope="module")
def sweep():
    return synthetic.campaign()


def test_rtt_load_counts_and_medians(sweep):
    r = rtt_load(sweep["rtt"], sweep["rtt_status"], n_boot=200)
    reps, probes = sweep.sizes["repeat"], synthetic.PROBES
    c = r.sel(window=8192, streams=1)
    # loaded: probe 0 of every run lost; unloaded: last two probes are padding
    assert int(c["sent"].sel(phase="loaded")) == reps * probes
    assert int(c["lost"].sel(phase="loaded")) == reps
    assert int(c["sent"].sel(phase="unloaded")) == reps * (probes - 2)
    assert int(c["lost"].sel(phase="unloaded")) == 0
    assert float(c["loss_fraction"].sel(phase="loaded")) == pytest.approx(1 / probes)
    assert int(c["n"].sel(phase="loaded")) == reps * (probes - 1)
    cell = sweep["rtt"].sel(window=8192, streams=1)
    for phase in ("loaded", "unloaded"):
        x = cell.sel(phase=phase).values.ravel()
        x = x[np.isfinite(x)]
        assert float(c["median"].sel(phase=phase)) == np.median(x)
        assert float(c["max"].sel(phase=phase)) == x.max()
        assert float(c["p90"].sel(phase=phase)) == np.percentile(x, 90)
    diff = float(c["median"].sel(phase="loaded") - c["median"].sel(phase="unloaded"))
    assert float(c["difference"]) == pytest.approx(diff)
    assert float(c["difference_low"]) <= diff <= float(c["difference_high"])
    assert r["difference"].attrs["units"] == "ms" and r["lost"].attrs["units"] == "count"


def test_rtt_load_ratio_follows_the_queue_model():
    ds = synthetic.campaign(noise=0.0, rtt_noise=0.0)
    r = rtt_load(ds["rtt"], ds["rtt_status"], n_boot=50)
    util = synthetic.model_throughput(ds.window.values[:, None], ds.streams.values[None, :]) / synthetic.CAPACITY
    np.testing.assert_allclose(r["ratio"].values, 1 + synthetic.QUEUE_GROWTH * util)
    # no spread: the bootstrap interval collapses on the difference
    np.testing.assert_allclose(r["difference_low"].values, r["difference"].values)
    np.testing.assert_allclose(r["difference"].values, synthetic.RTT_MS * synthetic.QUEUE_GROWTH * util)


def test_rtt_load_whole_campaign_as_one_row(sweep):
    r = rtt_load(sweep["rtt"], sweep["rtt_status"], pool=("window", "streams", "repeat", "probe"),
                 n_boot=100)
    assert r["n"].dims == ("phase",)
    runs = sweep.sizes["window"] * sweep.sizes["streams"] * sweep.sizes["repeat"]
    # seed 000's "Loaded loss 2/1360": lost / sent over the campaign
    assert int(r["lost"].sel(phase="loaded")) == runs
    assert int(r["sent"].sel(phase="loaded")) == runs * synthetic.PROBES
    assert float(r["min"].sel(phase="loaded")) == float(
        sweep["rtt"].sel(phase="loaded").min())


def test_rtt_load_without_status_and_duplicates():
    rtt = xr.DataArray([[[1.0, 2.0, 30.0], [1.0, 1.0, np.nan]]], dims=("repeat", "phase", "probe"),
                       coords={"phase": ["loaded", "unloaded"]}, attrs={"units": "ms"})
    r = rtt_load(rtt, n_boot=20)
    assert np.isnan(float(r["sent"].sel(phase="loaded")))
    assert float(r["median"].sel(phase="loaded")) == 2.0
    status = xr.DataArray([[["reply", "reply", "duplicate"], ["reply", "reply", "lost"]]],
                          dims=rtt.dims)
    r = rtt_load(rtt, status, n_boot=20)
    # the duplicate's RTT is left out; the lost probe counts as sent
    assert float(r["max"].sel(phase="loaded")) == 2.0
    assert int(r["sent"].sel(phase="loaded")) == 2 and int(r["sent"].sel(phase="unloaded")) == 3
    assert int(r["lost"].sel(phase="unloaded")) == 1
    assert float(r["ratio"]) == 1.5


def test_rtt_growth_reaches_the_factor_of_the_model():
    ds = synthetic.campaign(noise=0.0, rtt_noise=0.0)
    per_run = ds["rtt"].sel(phase="loaded").median("probe")
    g = rtt_growth(ds["throughput"], per_run, window=10, baseline=synthetic.RTT_MS)
    # at capacity the loaded RTT is 1 + 4 = 5 times the unloaded one (seed 002: "up to 5")
    assert float(g["max_growth"]) == pytest.approx(1 + synthetic.QUEUE_GROWTH)
    assert np.all(np.diff(g["throughput"].values) >= 0)
    assert float(g["spearman_rho"]) == pytest.approx(1.0)
    assert g.sizes["run"] == ds["throughput"].size
    assert {"window", "streams", "repeat"} <= set(g.coords)
    assert np.isnan(g["smoothed"].values[:9]).all() and np.isfinite(g["smoothed"].values[9:]).all()
    np.testing.assert_allclose(g["smoothed"].values[9], g["value"].values[:10].mean())


def test_trend_hand_case():
    tp = xr.DataArray([3.0, 1.0, 2.0, np.nan, 4.0], dims="run")
    y = xr.DataArray([30.0, 10.0, 20.0, 99.0, 80.0], dims="run", attrs={"units": "ms"})
    t = trend_vs_throughput(tp, y, window=2)
    np.testing.assert_array_equal(t["throughput"].values, [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(t["smoothed"].values, [np.nan, 15.0, 25.0, 55.0])
    np.testing.assert_allclose(t["growth"].values, [np.nan, 1.0, 25 / 15, 55 / 15])
    assert float(t["spearman_rho"]) == 1.0
    assert t["smoothed"].attrs["units"] == "ms"
