"""thruput.stats.tcp and .periodic: TCP instrumentation series, daily cycles."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal
import scipy.stats
import xarray as xr

from thruput.stats import (congestion_vs_throughput, counter_increments, counter_total,
                           daily_cycle, periodogram, tcp_series, tcp_summary)

from . import synthetic


def test_counter_increments_resets_and_groups():
    np.testing.assert_array_equal(counter_increments([0, 2, 5, 1, 4]), [np.nan, 2, 3, 1, 3])
    np.testing.assert_array_equal(counter_increments([1, 5, 2, 9, np.nan, 10], groups=list("ababab")),
                                  [np.nan, np.nan, 1, 4, np.nan, 1])


def test_counter_total():
    assert counter_total([5, 6, 8, 2, 3]) == 11.0
    # two connections read once each (web100 sidestream): the readings add up
    assert counter_total([4, 7], groups=["a", "b"]) == 11.0
    assert counter_total([np.nan, 2, 3, np.nan]) == 3.0
    assert np.isnan(counter_total([np.nan]))


def test_tcp_summary_of_recorded_web100():
    import thruput
    from .conftest import DATA

    path = DATA / "web100_sidestream" / "loopback--3-connections.web100"
    if not path.exists():
        pytest.skip("web100 sidestream sample absent")
    ds = thruput.read(path)
    t = tcp_summary(ds)
    last = {}
    for conn, value in zip(ds["connection"].values, ds["retransmits_total"].values):
        last[conn] = value
    assert float(t["retransmits"]) == pytest.approx(np.nansum(list(last.values())))
    # one snapshot per connection: no interval to measure a rate over
    assert np.isnan(float(t["throughput"]))
    assert float(t["srtt_max"]) == float(ds["srtt"].max())


def test_tcp_series_of_a_synthetic_run():
    ds = synthetic.tcp_instrumentation(loss_every=20)
    s = tcp_series(ds)
    assert s.sizes["snapshot"] == 101
    np.testing.assert_allclose(s["time"].values, np.arange(101) * 0.1)
    # counters start at 5; one retransmit at every 20th snapshot
    np.testing.assert_array_equal(np.flatnonzero(s["retransmits"].values == 1), [20, 40, 60, 80, 100])
    assert np.nansum(s["retransmits"].values) == 5 and np.isnan(s["retransmits"].values[0])
    np.testing.assert_allclose(s["throughput"].values[1:], 400e6)
    # cwnd / srtt: 50 x 1448 bytes over 2 ms at snapshot 0
    assert float(s["window_rate"][0]) == pytest.approx(8 * 50 * 1448 / 2e-3)
    assert s["throughput"].attrs["units"] == "bit/s" and s["cwnd"].attrs["units"] == "byte"


def test_tcp_summary_of_a_synthetic_run():
    t = tcp_summary(synthetic.tcp_instrumentation(loss_every=20))
    assert float(t["duration"]) == pytest.approx(10.0)
    # the counters count since the connection started: 5 before the first snapshot + 5
    assert float(t["retransmits"]) == 10 and float(t["congestion_signals"]) == 10
    assert float(t["throughput"]) == pytest.approx(400e6)
    assert float(t["cwnd_max"]) == 1448 * 69
    assert float(t["srtt_min"]) == 2.0
    assert float(t["srtt_growth"]) == pytest.approx(float(t["srtt_median"]) / 2.0)
    # without bytes_acked or congestion_signals: NaN, not zero
    bare = tcp_summary(synthetic.tcp_instrumentation().drop_vars(["bytes_acked", "congestion_signals"]))
    assert np.isnan(float(bare["throughput"])) and np.isnan(float(bare["congestion_signals"]))


def test_congestion_vs_throughput():
    ds = synthetic.campaign(noise=0.0)
    c = congestion_vs_throughput(ds["throughput"], ds["retransmits"], window=5)
    # the synthetic retransmits are round(10 x utilisation): monotone in throughput, with
    # ties, so rho is SciPy's tie-corrected value, just under 1
    ref = scipy.stats.spearmanr(ds["throughput"].values.ravel(), ds["retransmits"].values.ravel())
    assert float(c["spearman_rho"]) == pytest.approx(ref.statistic, rel=1e-12)
    assert 0.99 < float(c["spearman_rho"]) < 1.0
    assert float(c["value"].max()) == 10


def test_periodogram_finds_the_daily_cycle_across_a_gap():
    series = synthetic.daily_series()
    p = periodogram(series)
    assert abs(float(p["dominant_period"]) - 24) < 0.5
    # a 100 Mbit/s cosine in 20 Mbit/s noise: power = share of variance ~ 0.5 / (0.5 + 0.04)
    assert 0.85 < float(p["dominant_power"]) < 0.97
    assert p["period"].attrs["units"] == "h" and int(p["n"]) == series.size
    # the same numbers as SciPy on the same hours
    hours = (series["time"].values - series["time"].values[0]) / np.timedelta64(1, "h")
    ref = scipy.signal.lombscargle(hours, series.values, 2 * np.pi / p["period"].values,
                                   normalize=True, floating_mean=True)
    np.testing.assert_allclose(p["power"].values, ref)


def test_periodogram_with_separate_time_and_errors():
    ds = synthetic.campaign(repeats=3)
    p = periodogram(ds["throughput"], ds["start_time"], periods=[0.5, 1, 2])
    assert p.sizes["period"] == 3 and int(p["n"]) == ds["throughput"].size
    with pytest.raises(ValueError, match="datetime64"):
        periodogram(xr.DataArray([1.0, 2.0, 3.0], dims="run"))


def test_daily_cycle():
    series = synthetic.daily_series(noise=0.0)
    d = daily_cycle(series)
    assert d.sizes["hour"] == 24 and int(d["n"].sum()) == series.size
    # cosine peaking at midnight, lowest at noon UTC
    assert np.argmax(d["median"].values) in (0, 23) and np.argmin(d["median"].values) in (11, 12)
    assert 180e6 < float(d["amplitude"]) <= 200e6
    assert float(d["relative_amplitude"]) == pytest.approx(float(d["amplitude"]) / np.median(series.values))
    assert d["median"].attrs["units"] == "bit/s"
