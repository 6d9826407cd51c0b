"""The alert tables kept in a Zarr store and brought up to date after an append
(thruput.monitor.alerts_store): every table equals a full ``evaluate`` of the campaign
after the append, on a SYNTHETIC monitor campaign (hourly slots, two paths, both
directions) with a breach that spans the join, a baseline rule, an open breach, an SLA
week across the join, a slot without runs, failed runs and a path that falls silent; and
the cases that build the store whole again."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from thruput.monitor import alerts
from thruput.monitor.alerts_store import append_alerts, open_alerts, write_alerts

INTERVAL = 3600
PER_DAY = 86400 // INTERVAL
DAYS = 10                               # 2026-01-01 (Thu) + 10 days: the week of Jan 5 spans the join
JOIN = DAYS * PER_DAY                   # first slot of the appended day
EMPTY_SLOT = 30                         # no run at all
META = {"name": "synthetic-alerts-store", "kind": "monitor", "schedule": {"interval_s": INTERVAL, "tests": []},
        "alerts": [{"test": "tcp", "metric": "throughput", "below": 3e7, "for": 3},
                   {"test": "ping", "metric": "rtt", "above": 60, "for": 3}],
        "baseline": [{"test": "tcp", "metric": "throughput", "below": 0.2, "window": "1d", "for": 2}]}


def campaign(days=DAYS + 1, meta=META, extra_path=False, jitter_s=0, outages=()):
    """A SYNTHETIC monitor Dataset of ``days`` days, the same runs whatever ``days``
    (``extra_path``: a path ``c`` from the appended day on; ``jitter_s``: each slot
    starts up to that late, at random; ``outages``: ``(first, last)`` slots without runs)."""
    rows = []
    t0 = np.datetime64("2026-01-01T00:00:00", "ns")
    for slot in range(days * PER_DAY):
        if slot == EMPTY_SLOT or any(a <= slot <= b for a, b in outages):
            continue
        paths = ["a", "b"] + (["c"] if extra_path and slot >= JOIN else [])
        rng = np.random.default_rng([1, slot])
        late = int(np.random.default_rng([2, slot]).integers(0, jitter_s * 1000 + 1))
        when = t0 + np.timedelta64(slot * INTERVAL, "s") + np.timedelta64(late, "ms")
        for path in paths:
            for direction in ("forward", "reverse"):
                if path == "a" and direction == "reverse" and slot >= (DAYS + 1) * PER_DAY - 5:
                    continue                                      # falls silent at the end
                low = (path == "a" and direction == "forward" and JOIN - 2 <= slot < JOIN + 3) or \
                      (path == "b" and direction == "reverse" and slot >= 6 * PER_DAY + 5)
                tput = (20e6 if low else 50e6) * rng.uniform(0.9, 1.1)
                outcome = "failed" if rng.uniform() < 0.03 else "ok"
                rows.append((when, slot, path, direction, "tcp", 262144.0, np.nan, tput, np.nan, outcome))
            rtt = (80.0 if path == "b" and slot >= 5 * PER_DAY else 40.0) + rng.gamma(2, 0.5)
            rows.append((when + np.timedelta64(15, "s"), slot, path, "forward", "ping", np.nan, 56.0, np.nan,
                         rtt, "ok"))
    cols = list(zip(*rows))
    n = len(rows)
    return xr.Dataset({
        "throughput": ("run", np.array(cols[7], float)), "rtt_median": ("run", np.array(cols[8], float)),
        "ping_loss": ("run", np.zeros(n)), "loss_fraction": ("run", np.full(n, np.nan)),
        "jitter": ("run", np.full(n, np.nan)), "outcome": ("run", np.array(cols[9])),
    }, coords={"run": np.arange(n), "time": ("run", np.array(cols[0], "datetime64[ns]")),
               "slot": ("run", np.array(cols[1])), "path": ("run", np.array(cols[2])),
               "direction": ("run", np.array(cols[3])), "test": ("run", np.array(cols[4])),
               "socket_buffer": ("run", np.array(cols[5], float)), "size": ("run", np.array(cols[6], float))},
        attrs={"campaign": meta["name"], "campaign_kind": "monitor", "metadata": json.dumps(meta)})


def before(ds, slot=JOIN, extra=0):
    """The runs of ``ds`` before ``slot`` (and ``extra`` more: runs of the next slot)."""
    return ds.isel(run=slice(0, int(np.searchsorted(ds["slot"].values, slot)) + extra))


def assert_same(got, want):
    assert sorted(got) == sorted(want)
    for name, table in want.items():
        mine = got[name]
        assert set(mine.variables) == set(table.variables), name
        for key, var in table.variables.items():
            a, b = np.asarray(mine[key].values), np.asarray(var.values)
            assert a.shape == b.shape, (name, key)
            if b.dtype.kind == "f":
                np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True, err_msg=f"{name}/{key}")
            else:
                np.testing.assert_array_equal(a.astype(b.dtype), b, err_msg=f"{name}/{key}")


@pytest.fixture(scope="module")
def whole():
    ds = campaign()
    return ds, alerts.evaluate(ds)


def test_the_store_holds_what_evaluate_gives(whole, tmp_path):
    ds, want = whole
    write_alerts(ds, tmp_path / "a.zarr")
    assert_same(open_alerts(tmp_path / "a.zarr"), want)


@pytest.mark.parametrize("extra", [0, 3])
def test_a_day_appended_equals_the_whole_evaluated(whole, tmp_path, extra):
    """``extra``: the stored part ends inside a slot, whose other runs come with the new day."""
    ds, want = whole
    store = tmp_path / "a.zarr"
    write_alerts(before(ds, JOIN - 1, extra), store)
    done = append_alerts(ds, store)
    assert done["rebuilt"] == ""
    got = open_alerts(store)
    assert_same(got, want)
    br = want["breaches"]
    # the breach that spans the join (pending before it), the baseline one, an open one
    spans = (br["path"].values == "a") & (br["rule"].values == "tcp throughput below 30 Mbit/s for 3 slots")
    assert spans.sum() == 1 and br["start"].values[spans][0] < ds["time"].values[ds["slot"].values == JOIN][0]
    assert any("median" in r for r in br["rule"].values) and br["open"].values.any()
    assert str(got["verdict"]["state"].sel(path="a", direction="reverse").values) == "no data"
    assert np.datetime64("2026-01-05") in got["sla_1W"]["period"].values
    mine, theirs = alerts.report_json(got), alerts.report_json(want)      # what the report reads
    assert [(s["path"], s["direction"], s["state"], s["since"]) for s in mine["series"]] == \
        [(s["path"], s["direction"], s["state"], s["since"]) for s in theirs["series"]]


def test_appending_twice_and_nothing(whole, tmp_path):
    ds, want = whole
    store = tmp_path / "a.zarr"
    write_alerts(before(ds, JOIN - 30), store)
    assert append_alerts(before(ds, JOIN - 2), store)["rebuilt"] == ""
    assert append_alerts(ds, store)["rebuilt"] == ""
    assert append_alerts(ds, store)["rebuilt"] == ""
    assert_same(open_alerts(store), want)


def test_cases_that_build_the_store_whole(whole, tmp_path):
    ds, _ = whole
    store = tmp_path / "a.zarr"
    write_alerts(before(ds), store)
    # other params
    done = append_alerts(ds, store, params={"min_baseline": 4})
    assert done["rebuilt"] == "other params"
    assert_same(open_alerts(store), alerts.evaluate(ds, {"min_baseline": 4}))
    # other rules
    meta = {**META, "baseline": [{**META["baseline"][0], "window": "12h"}]}
    other = ds.assign_attrs(metadata=json.dumps(meta))
    write_alerts(before(ds), store)
    assert "metadata" in append_alerts(other, store)["rebuilt"]
    assert_same(open_alerts(store), alerts.evaluate(other))
    # a new path
    three = campaign(extra_path=True)
    write_alerts(before(three), store)
    assert append_alerts(three, store)["rebuilt"] == "a new path or direction"
    assert_same(open_alerts(store), alerts.evaluate(three))
    # a run landing in an old slot (appended at the end)
    write_alerts(before(ds), store)
    old_slot = ds.isel(run=[int(np.flatnonzero(ds["slot"].values == 100)[0])]).assign_coords(run=[10**6])
    late = xr.concat([ds, old_slot], "run")
    assert "a run lands in a slot before" in append_alerts(late, store)["rebuilt"]
    assert_same(open_alerts(store), alerts.evaluate(late))
    # a store whose campaign lost runs
    write_alerts(ds, store)
    assert "not those it was built from" in append_alerts(before(ds), store)["rebuilt"]
    assert_same(open_alerts(store), alerts.evaluate(before(ds)))


def test_change_points_are_matched_with_every_breach_again(whole, tmp_path):
    ds, _ = whole
    t = ds["time"].values
    at = lambda slot: t[ds["slot"].values == slot][0]
    changes = xr.Dataset({"time": ("change", [at(JOIN - 2), at(6 * PER_DAY + 5), at(JOIN + 5)]),
                          "path": ("change", ["a", "b", "b"]), "direction": ("change", ["forward", "reverse", "forward"]),
                          "test": ("change", ["tcp", "tcp", "ping"])})
    store = tmp_path / "a.zarr"
    write_alerts(before(ds), store)
    assert append_alerts(ds, store, changes=changes)["rebuilt"] == ""
    want = alerts.evaluate(ds, changes=changes)
    assert (want["breaches"]["changes"].values != "").sum() >= 2
    assert_same(open_alerts(store), want)


def test_pipeline_health_into_a_store_and_update(whole, tmp_path, capsys):
    """``thruput pipeline health IN.zarr OUT.zarr``, then ``--update`` after runs were
    appended to the campaign's store."""
    from thruput.campaign.store import put_attrs, resize_runs, write_region, write_store
    from thruput.cli import main

    ds, _ = whole
    ds = ds.assign_coords(run=np.array([f"r{i:05d}" for i in range(ds.sizes["run"])]))
    store, out = tmp_path / "c.zarr", tmp_path / "c.alerts.zarr"
    cut = before(ds).sizes["run"]
    write_store(ds.isel(run=slice(0, cut)), store)
    assert main(["pipeline", "health", str(store), str(out)]) == 0
    resize_runs(store, ds, ds.sizes["run"])
    write_region(ds.isel(run=slice(cut, None)), store, cut)
    put_attrs(store, ds.attrs)
    assert main(["pipeline", "health", str(store), str(out), "--update"]) == 0
    assert "updated" in capsys.readouterr().out
    assert_same(open_alerts(out), alerts.evaluate(ds, changes=alerts.series_changes(ds)))
    assert main(["pipeline", "health", str(store), str(tmp_path / "c.health.nc"), "--update"]) == 2


@pytest.mark.parametrize("name", ["netns-wan-monitor", "netns-tc-monitor"])
def test_recorded_monitors_appended_equal_the_whole_evaluated(name, tmp_path):
    """The bundled and the recorded monitor (real runs, jittered slot times, several
    buffers and sizes), stored up to half-way and appended."""
    from thruput.campaign.dataset import open_campaign

    from .conftest import ROOT

    raw = ROOT / "data" / "raw" / name
    if not (raw / "runs.csv").exists():
        pytest.skip(f"{name} not present")
    ds = open_campaign(raw)
    ds = ds.isel(run=np.argsort(ds["time"].values, kind="stable"))
    write_alerts(ds.isel(run=slice(0, ds.sizes["run"] // 2)), tmp_path / "a.zarr")
    assert append_alerts(ds, tmp_path / "a.zarr")["rebuilt"] == ""
    assert_same(open_alerts(tmp_path / "a.zarr"), alerts.evaluate(ds))


def test_a_campaign_shorter_than_a_rules_for(whole, tmp_path):
    ds, _ = whole
    store = tmp_path / "a.zarr"
    write_alerts(before(ds, 1), store)
    assert append_alerts(before(ds, 2), store)["rebuilt"] == ""
    assert_same(open_alerts(store), alerts.evaluate(before(ds, 2)))


def test_a_jittered_campaign_with_an_outage_appended_day_by_day(tmp_path):
    """Slots start up to 20 min late, and no run at all for 7 h on day 3 and 5 h at the
    end of day 6: every day's append equals a full evaluate, and no stored slot moves
    (a slot without runs is placed between the slots either side, not by an offset that
    each new day's runs would move)."""
    outages = [(2 * PER_DAY + 3, 2 * PER_DAY + 9), (6 * PER_DAY - 5, 6 * PER_DAY - 1)]
    ds = campaign(jitter_s=1200, outages=outages)
    store = tmp_path / "a.zarr"
    write_alerts(before(ds, 2 * PER_DAY), store)
    first = open_alerts(store)["alert_state"]["time"].values
    for day in range(3, DAYS + 2):
        now = before(ds, day * PER_DAY)
        assert append_alerts(now, store)["rebuilt"] == "", day
        got = open_alerts(store)
        assert_same(got, alerts.evaluate(now))
        np.testing.assert_array_equal(got["alert_state"]["time"].values[:first.size], first)
    ns = got["alert_state"]["time"].values.astype(np.int64)
    assert (np.diff(ns) > 0).all()
    gap = np.arange(2 * PER_DAY + 3, 2 * PER_DAY + 10)                   # evenly between the slots either side
    step = (ns[gap[-1] + 1] - ns[gap[0] - 1]) / (gap.size + 1)
    np.testing.assert_array_equal(ns[gap], ns[gap[0] - 1] + np.rint(np.arange(1, gap.size + 1) * step).astype(np.int64))
