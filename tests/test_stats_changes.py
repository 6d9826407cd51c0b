"""change_points: known level shifts found with their bounds; none found in noise."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from thruput.stats import change_points

from . import synthetic as syn

T0 = np.datetime64("2001-11-01T00:00:00", "ns")


def series(values, step_min=60):
    t = T0 + (np.arange(len(values)) * step_min * 60e9).astype("timedelta64[ns]")
    return xr.DataArray(np.asarray(values, float), dims="run", coords={"time": ("run", t)},
                        attrs={"units": "bit/s", "long_name": "throughput"})


def test_two_steps_found_exactly_with_bounds_around_them():
    rng = np.random.default_rng(1)
    v = np.r_[np.full(40, 100.0), np.full(40, 60.0), np.full(40, 80.0)] + rng.normal(0, 2, 120)
    c = change_points(series(v))
    assert c.sizes["change"] == 2
    assert list(c["index"].values) == [40, 80]
    assert list(c["time"].values) == [T0 + np.timedelta64(40, "h"), T0 + np.timedelta64(80, "h")]
    assert (c["time_lower"] <= c["time"]).all() and (c["time"] <= c["time_upper"]).all()
    assert c["shift"].values == pytest.approx([-40, 20], abs=1.5)
    assert (c["shift_lower"] < c["shift"]).all() and (c["shift"] < c["shift_upper"]).all()
    assert c["before"].values == pytest.approx([100, 60], abs=1.5)
    assert c["shift"].units == "bit/s" and c.attrs["n"] == 120


def test_a_flat_series_gives_an_empty_change_dimension():
    c = change_points(series(np.full(50, 7.0)))
    assert c.sizes["change"] == 0 and c["time"].dtype.kind == "M"


def test_false_alarm_rate_on_white_noise_is_below_two_percent():
    found = [change_points(series(np.random.default_rng(s).normal(100, 5, 200)), n_boot=10)
             .sizes["change"] > 0 for s in range(200)]
    assert np.mean(found) <= 0.02          # measured 0.005 (1 of 200)


def test_false_alarm_rate_with_a_period_is_below_five_percent():
    found = [change_points(series(np.random.default_rng(s).normal(100, 5, 200), step_min=1),
                           period=1200, n_boot=10).sizes["change"] > 0 for s in range(200)]
    assert np.mean(found) <= 0.05          # measured 0.015 (3 of 200)


def test_nan_runs_are_left_out_and_bounds_are_seeded():
    v = np.r_[np.full(30, 10.0), np.full(30, 20.0)] + np.tile([0.3, -0.3, 0.1], 20)
    v[[3, 33]] = np.nan
    a, b = change_points(series(v), seed=4), change_points(series(v), seed=4)
    assert a.attrs["n"] == 58 and int(a["index"][0]) == 29
    xr.testing.assert_identical(a, b)


@pytest.mark.parametrize("direction", ["forward", "reverse"])
@pytest.mark.parametrize("buffer", [65536, 1048576])
def test_planned_change_of_the_synthetic_monitor_is_found_within_two_slots(direction, buffer):
    ds = syn.monitor_campaign()
    keep = (ds.test == "tcp") & (ds.socket_buffer == buffer) & (ds.direction == direction)
    c = change_points(ds["throughput"].where(keep, drop=True), period=syn.MONITOR_DAY_S)
    slot_of = dict(zip(ds["time"].values, ds["slot"].values))
    big = c.isel(change=int(np.argmax(np.abs(c["shift"].values))))
    assert abs(slot_of[big["time"].values] - syn.MONITOR_CHANGE_SLOT) <= 2
    assert slot_of[big["time_lower"].values] >= syn.MONITOR_CHANGE_SLOT - 2
    assert slot_of[big["time_upper"].values] <= syn.MONITOR_CHANGE_SLOT + 2
    others = np.delete(c["shift"].values, int(big["change"]) if "change" in big.coords else
                       int(np.argmax(np.abs(c["shift"].values))))
    assert (np.abs(others) < 0.02 * float(big["before"])).all()   # seed 0: two of 1.4 %
    factor = syn.MONITOR_REVERSE if direction == "reverse" else 1.0
    if buffer == 65536:   # window-limited: 8 x 65536 / RTT, RTT 40 -> 80 ms
        expected = factor * 8 * 65536 * (1 / 0.08 - 1 / 0.04)
        assert float(big["shift"]) == pytest.approx(expected, rel=0.03)


def test_dated_repeats_around_an_upgrade_as_in_seed_002():
    # seed 002: the same sweep repeated on dated days; the link upgrade on 5 Nov 2001
    days = np.array(["2001-10-30", "2001-11-01", "2001-11-02", "2001-11-04",
                     "2001-11-06", "2001-11-08", "2001-11-09", "2001-11-12"], "datetime64[ns]")
    t = (days[:, None] + (np.arange(6) * 20 * 60e9).astype("timedelta64[ns]")).ravel()
    rng = np.random.default_rng(2)
    level = np.where(t < np.datetime64("2001-11-05"), 120e6, 300e6)
    v = xr.DataArray(level * (1 + rng.uniform(-0.05, 0.05, t.size)), dims="run",
                     coords={"time": ("run", t)}, attrs={"units": "bit/s"})
    c = change_points(v)
    assert c.sizes["change"] == 1 and int(c["index"][0]) == 24
    assert c["time"].values[0] == np.datetime64("2001-11-06T00:00", "ns")
    assert c["time_lower"].values[0] >= np.datetime64("2001-11-04", "ns")
    assert float(c["shift"][0]) == pytest.approx(180e6, rel=0.05)


def test_bounds_are_never_narrower_than_the_gap_between_the_runs_around_the_change():
    """A clean step: every resample splits at the same run, yet the change happened
    somewhere between the last run before it and the first after it (the bundled page
    showed 19:12:00-19:12:00 for a change made at 19:11:50)."""
    v = np.r_[np.full(30, 100.0), np.full(30, 60.0)] + np.tile([-0.5, 0.5, 0.25, -0.25], 15)
    c = change_points(series(v, step_min=1), n_boot=200)
    assert c.sizes["change"] == 1
    last_before, first_after = T0 + np.timedelta64(29, "m"), T0 + np.timedelta64(30, "m")
    assert c["time"].values[0] == first_after
    assert c["time_lower"].values[0] <= last_before and c["time_upper"].values[0] >= first_after
    made = last_before + np.timedelta64(50, "s")       # the change itself, between two runs
    assert c["time_lower"].values[0] < made < c["time_upper"].values[0]


def test_the_defaults_are_those_of_stats_defaults():
    import inspect

    from thruput.stats import DEFAULTS
    params = inspect.signature(change_points).parameters
    assert params["n_boot"].default == DEFAULTS["bootstrap"]
    assert params["seed"].default == DEFAULTS["seed"]
    assert params["confidence"].default == DEFAULTS["confidence"]


def test_a_short_campaign_without_a_period_finds_a_change_half_way():
    """15 minutes of 30 s slots, a step half way: period 'auto' finds no period (noise),
    so segments are 5 runs, not a day, and the change is found."""
    rng = np.random.default_rng(3)
    v = np.r_[np.full(15, 48e6), np.full(15, 20e6)] * (1 + rng.uniform(-0.03, 0.03, 30))
    c = change_points(series(v, step_min=0.5), period="auto", n_boot=200)
    assert c.sizes["change"] == 1 and int(c["index"][0]) == 15
    assert c.attrs["period_used"] == "" and c.attrs["min_size"] == 5
    assert c.attrs["period_reason"].startswith("period 'auto': no significant period")
    # a day given for a campaign shorter than two of them is not used either
    day = change_points(series(v, step_min=0.5), period=86400, n_boot=200)
    assert day.sizes["change"] == 1
    assert "less than 2 periods" in day.attrs["period_reason"]


def test_period_auto_finds_a_cycle_the_data_has():
    """A 20-minute cycle over 4 hours of 1-minute slots, with a step half way."""
    rng = np.random.default_rng(4)
    minutes = np.arange(240)
    v = 100 + 10 * np.sin(2 * np.pi * minutes / 20) + rng.normal(0, 1, 240)
    v[120:] -= 40
    c = change_points(series(v, step_min=1), period="auto", n_boot=200)
    assert c.attrs["period_used"] == pytest.approx(1200, rel=0.05)
    assert "false-alarm probability" in c.attrs["period_reason"]
    assert c.sizes["change"] == 1 and abs(int(c["index"][0]) - 120) <= 2


def test_the_false_alarm_probability_holds_on_white_noise():
    """At most about 1 % of white-noise series get a period (FALSE_ALARM = 0.01)."""
    from thruput.stats.periodic import FALSE_ALARM, dominant_period
    rng = np.random.default_rng(5)
    found = sum(dominant_period(series(rng.normal(0, 1, 80), step_min=1))["period_s"] is not None
                for _ in range(200))
    assert found <= 200 * 3 * FALSE_ALARM      # 6 of 200: 3 x the nominal rate, for chance
