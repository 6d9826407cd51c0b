"""Monitor statistics on the synthetic monitor campaign, whose answers are known."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from thruput.stats import (buffer_curves, change_points, compare_periods, daily_cycle, direction_asymmetry,
                           gap_report, periodogram, rolling_summary, udp_tcp_ratio)

from . import synthetic as syn

BEFORE = ("2026-11-22T12:00", "2026-11-22T14:00")
AFTER = ("2026-11-22T14:00", "2026-11-22T16:00")
PERIODS = {"before": BEFORE, "after": AFTER}
WINDOW_LIMITED = {(b, rtt): 8 * b / (rtt / 1e3) for b in syn.MONITOR_BUFFERS for rtt in syn.MONITOR_RTT_MS}


@pytest.fixture(scope="module")
def ds():
    return syn.monitor_campaign()


def series(ds, test="tcp", buffer=65536, direction=None):
    keep = (ds.test == test) & (ds.outcome == "ok")
    if test == "tcp":
        keep &= ds.socket_buffer == buffer
    if direction:
        keep &= ds.direction == direction
    return ds["throughput"].where(keep, drop=True)


def test_rolling_summary_matches_numpy_in_every_bin_and_keeps_gaps_empty(ds):
    tp = series(ds, buffer=1048576)
    r = rolling_summary(tp, freq="5min")
    assert r.sizes == {"path": 1, "direction": 2, "time": 48}
    fwd = tp.where(tp.direction == "forward", drop=True)
    minute = fwd["time"].values.astype("datetime64[m]").astype(np.int64)
    for t in r["time"].values[:12]:
        x = fwd.values[minute // 5 == t.astype("datetime64[m]").astype(np.int64) // 5]
        cell = r.sel(path="a-b", direction="forward", time=t)
        assert int(cell["n"]) == x.size
        assert float(cell["p10"]) == np.percentile(x, 10)
        assert float(cell["median"]) == np.median(x)
        assert float(cell["iqr"]) == np.subtract(*np.percentile(x, [75, 25]))
    gap = r.sel(time=slice("2026-11-22T14:30", "2026-11-22T14:35"))
    assert (gap["n"] == 0).all() and gap["median"].isnull().all()
    assert r["median"].units == "bit/s" and r.attrs["exact"] == 1


def test_buffer_curves_follow_the_window_limit_per_period(ds):
    tcp = ds["throughput"].where((ds.test == "tcp") & (ds.outcome == "ok"), drop=True)
    b = buffer_curves(tcp, PERIODS)
    assert list(b["period"].values) == ["before", "after"]
    fwd = b.sel(path="a-b", direction="forward")
    assert float(fwd["median"].sel(period="before", socket_buffer=65536)) == pytest.approx(
        WINDOW_LIMITED[65536, 40.0], rel=0.02)
    assert float(fwd["median"].sel(period="after", socket_buffer=65536)) == pytest.approx(
        WINDOW_LIMITED[65536, 80.0], rel=0.02)
    # capacity-limited at 1 MiB: never above the capacity of the period
    assert float(fwd["max"].sel(period="before", socket_buffer=1048576)) <= 50e6 * 1.02
    assert float(fwd["max"].sel(period="after", socket_buffer=1048576)) <= 30e6 * 1.02
    assert int(fwd["n"].sel(period="before", socket_buffer=1048576)) == 118   # 120 slots, 2 failed


def test_udp_tcp_ratio(ds):
    ok = ds.where(ds.outcome == "ok", drop=True)
    u = udp_tcp_ratio(ok)
    cell = u.sel(path="a-b", direction="forward")
    assert float(cell["udp_median"].sel(socket_buffer=65536)) == pytest.approx(20e6, rel=0.02)
    assert np.allclose(u["ratio"], u["udp_median"] / u["tcp_median"])
    assert (u["ratio"].sel(socket_buffer=65536) > 1.5).all()
    assert int(cell["udp_n"].sel(socket_buffer=65536)) == 230


def test_compare_periods_finds_the_planned_shift(ds):
    c = compare_periods(series(ds), BEFORE, AFTER)
    fwd = c.sel(path="a-b", direction="forward")
    expected = WINDOW_LIMITED[65536, 80.0] - WINDOW_LIMITED[65536, 40.0]
    assert float(fwd["difference"]) == pytest.approx(expected, rel=0.02)
    assert float(fwd["hodges_lehmann"]) == pytest.approx(expected, rel=0.02)
    assert float(fwd["difference_low"]) < float(fwd["difference"]) < float(fwd["difference_high"])
    assert int(fwd["n_a"]) == 120 and int(fwd["n_b"]) == 110
    assert int(fwd["count_a"].sum()) == 120 and int(fwd["count_b"].sum()) == 110


def test_direction_asymmetry_is_the_reverse_factor(ds):
    a = direction_asymmetry(series(ds))
    assert float(a["ratio"].sel(path="a-b")) == pytest.approx(syn.MONITOR_REVERSE, abs=0.01)


def test_gap_report_lists_the_maintenance_gap_and_every_failure(ds):
    g = gap_report(ds, syn.MONITOR_INTERVAL_S, syn.MONITOR_METADATA["explained"])
    assert g.sizes == {"gap": 1, "failure": 3}
    assert int(g["first_slot"][0]) == 150 and int(g["slots"][0]) == 10
    assert str(g["gap_reason"].values[0]) == "maintenance"
    assert list(g["failure_outcome"].values) == ["timeout", "refused", "busy"]
    assert g.attrs["slots_expected"] == 240 and g.attrs["slots_run"] == 230
    assert g.attrs["tests_failed"] == 3 and g.attrs["tests"] == 2760
    unexplained = gap_report(ds, syn.MONITOR_INTERVAL_S)
    assert str(unexplained["gap_reason"].values[0]) == "not run (no reason recorded)"


def test_periodogram_finds_the_compressed_day_within_ten_percent(ds):
    p = periodogram(series(ds, buffer=1048576, direction="forward"))
    day_h = syn.MONITOR_DAY_S / 3600
    assert float(p["dominant_period"]) == pytest.approx(day_h, rel=0.1)
    assert float(p["dominant_period_low"]) < day_h < float(p["dominant_period_high"])


def test_daily_cycle_with_a_compressed_day(ds):
    tp = series(ds, buffer=1048576, direction="forward")
    before = tp.where(tp.time < np.datetime64("2026-11-22T14:00"), drop=True)
    d = daily_cycle(before, period=syn.MONITOR_DAY_S, n_boot=200)
    # cross traffic peaks a quarter of the way into the "day" (sin at 300 s of 1200 s)
    assert int(d["median"].argmin("hour")) in (4, 5, 6, 7, 8)    # flat trough, 2 % noise
    assert int(d["median"].argmax("hour")) in (16, 17, 18, 19, 20)
    assert float(d["offset"][6]) == 300.0 and d.attrs["period"] == 1200
    assert (d["low"] <= d["median"]).all() and (d["median"] <= d["high"]).all()
    assert int(d["n"].sum()) == before.size
    # amplitude: available capacity spans 0.7-1.0 of 50 Mbit/s (binned: a little less)
    assert 12e6 < float(d["amplitude"]) < 15.5e6


def test_accessors_forward(ds):
    tp = series(ds, direction="forward")
    xr.testing.assert_identical(tp.thruput.rolling_summary(freq="1h"), rolling_summary(tp, freq="1h"))
    xr.testing.assert_identical(ds.thruput.gap_report(60), gap_report(ds, 60))
    xr.testing.assert_identical(tp.thruput.change_points(n_boot=20), change_points(tp, n_boot=20))


def test_monitor_product_refuses_a_sweep_and_copes_with_short_series(ds):
    from thruput.stats import monitor_product

    with pytest.raises(ValueError, match=r"synthetic: not a monitor campaign .*'time'"):
        monitor_product(syn.campaign(repeats=2))
    two = ds.isel(run=np.flatnonzero((ds.slot < 2).values))      # two slots: 2 runs a series
    p = monitor_product(two, {"n_boot": 20})
    assert "periodogram" not in p or p["periodogram"].sizes.get("series", 0) == 0
    assert p["changes"].sizes.get("change", 0) == 0 and p["gaps"].sizes["gap"] == 0


def test_gap_report_counts_the_tests_whose_tool_disagrees_with_its_data(ds):
    assert "tests_disagreeing" not in gap_report(ds, syn.MONITOR_INTERVAL_S).attrs  # not recorded
    failed = np.zeros(ds.sizes["run"])
    failed[[3, 10, 11]] = [1, 2, 1]
    failed[[4]] = np.nan                                                       # no log read
    g = gap_report(ds.assign(tool_checks_failed=("run", failed)), syn.MONITOR_INTERVAL_S)
    tests = np.asarray(ds["test"].values).astype(str)[[3, 10, 11]]
    expected = {t: int((tests == t).sum()) for t in sorted(set(tests))}
    assert g.attrs["tests_disagreeing"] == 3
    assert json.loads(g.attrs["tests_disagreeing_by_test"]) == expected


def test_without_day_s_the_product_finds_the_period_in_the_data():
    """The synthetic campaign's cross traffic cycles every MONITOR_DAY_S; without
    schedule.day_s, period 'auto' finds it and says why; with a day_s, that is used."""
    import json as _json

    from thruput.stats import monitor_product as _product
    ds = syn.monitor_campaign()
    meta = _json.loads(ds.attrs["metadata"])
    given = _json.loads(_product(ds, {"n_boot": 20})["changes"].attrs["params"])
    assert given["period_s"] == meta["schedule"]["day_s"]
    assert given["period_reason"] == f"schedule.day_s of campaign.yaml: {meta['schedule']['day_s']:g} s"
    del meta["schedule"]["day_s"]
    ds.attrs["metadata"] = _json.dumps(meta)
    product = _product(ds, {"n_boot": 20})
    p = _json.loads(product["changes"].attrs["params"])
    assert p["period_s"] == pytest.approx(syn.MONITOR_DAY_S, rel=0.05)
    assert p["period_reason"].startswith("period 'auto' (no schedule.day_s): the periodogram of")
    assert "cycle" in product and "false_alarm" in product["periodogram"]
