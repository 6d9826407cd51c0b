"""Monitor alerts, rollups, SLA and the health page's tables: ``thruput monitor report``
driven as a subprocess on the bundled monitor (a planned change half-way), and a
synthetic 20-path campaign with a planned change on two of its paths."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from thruput.campaign.store import write_product
from thruput.campaign.dataset import load_metadata
from thruput.errors import ThruputError
from thruput.monitor import alerts
from thruput.report.health import grid_cells
from thruput.stats import rollups as R

from .conftest import ROOT

CAMPAIGN = ROOT / "data" / "raw" / "netns-wan-monitor"
#: The bundled campaign's planned change (its campaign.yaml events).
CHANGE = np.datetime64("2026-11-22T19:11:50")
SLOT = np.timedelta64(65, "s")          # interval 60 s + jitter up to 5 s


def _report(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "thruput.cli", "monitor", "report", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.skipif(not (CAMPAIGN / "runs.csv").exists(), reason="bundled monitor campaign not present")
def test_report_bundled_opens_a_breach_at_the_planned_change():
    done = _report(CAMPAIGN, "--json")
    assert done.returncode == 1, done.stderr        # a breach is open
    rep = json.loads(done.stdout)
    assert rep["state"] == "breach" and rep["exit_status"] == 1
    assert [(s["path"], s["direction"], s["state"]) for s in rep["series"]] == \
        [("a-b", "forward", "breach"), ("a-b", "reverse", "breach")]
    for s in rep["series"]:
        tcp = [b for b in s["breaches"] if b["rule"].startswith("tcp throughput socket_buffer=1048576")]
        assert len(tcp) == 1 and tcp[0]["open"] and tcp[0]["end"] is None
        start = np.datetime64(tcp[0]["start"][:-1])
        assert CHANGE <= start <= CHANGE + SLOT                 # the first slot after the change
        assert s["since"] == tcp[0]["start"]
        assert 12e6 < tcp[0]["worst"] < 28e6 and tcp[0]["threshold"] == 2.8e7
        assert tcp[0]["changes"], "the change point of the series falls in the breach"
        for when in tcp[0]["changes"]:
            assert abs(np.datetime64(when[:-1]) - CHANGE) <= 2 * SLOT
        # the 20 %-below-baseline rule opens at the change and closes once its 30 min window
        # holds the new level
        base = [b for b in s["breaches"] if "median of the last 30m" in b["rule"]]
        assert len(base) == 1 and not base[0]["open"] and base[0]["start"] == tcp[0]["start"]
        day = [r for r in s["sla"]["1D"] if r["rule"] == tcp[0]["rule"]]
        assert len(day) == 1 and day[0]["due"] == 122 and day[0]["longest_breach_slots"] >= 50
        assert 0.5 < day[0]["fraction_met"] < 0.6 and day[0]["availability"] > 0.99
    fwd = rep["series"][0]
    assert any(b["rule"] == "ping rtt above 60 ms for 3 slots" and b["open"] for b in fwd["breaches"])
    # --since after the baseline breach ended: it is left out, the open ones stay
    later = json.loads(_report(CAMPAIGN, "--json", "--since", "2026-11-22T19:40:00Z").stdout)
    assert all(b["open"] for s in later["series"] for b in s["breaches"])
    text = _report(CAMPAIGN)
    assert text.returncode == 1 and "BREACH" in text.stdout and "OPEN" in text.stdout


OWN = ROOT / "data" / "raw" / "netns-tc-monitor"
#: Its tc change (campaign.yaml events): between slot 15 and slot 16 (due 15:04:13, 30 s slots).
OWN_CHANGE, OWN_SLOT = np.datetime64("2026-11-27T15:04:03.802"), np.timedelta64(30, "s")


@pytest.mark.skipif(not (OWN / "runs.csv").exists(), reason="recorded monitor campaign not present")
def test_report_on_a_recorded_monitor_opens_its_breaches_at_the_tc_change():
    """A monitor recorded as a user would (one buffer, no day_s, 30 s slots, tc 50 -> 20
    Mbit/s half way): each throughput rule opens its breach at the first slot after the
    change, both ways, with the series' change point inside it."""
    done = _report(OWN, "--json")
    assert done.returncode == 1, done.stderr
    rep = json.loads(done.stdout)
    assert [(s["direction"], s["state"]) for s in rep["series"]] == [("forward", "breach"), ("reverse", "breach")]
    for s in rep["series"]:
        assert len(s["breaches"]) == 2
        for b in s["breaches"]:
            start = np.datetime64(b["start"][:-1])
            assert b["open"] and OWN_CHANGE < start <= OWN_CHANGE + OWN_SLOT
            assert b["changes"] and all(abs(np.datetime64(c[:-1]) - start) <= 2 * OWN_SLOT for c in b["changes"])


def test_report_input_errors_exit_2(tmp_path):
    done = _report(tmp_path / "nothing")
    assert done.returncode == 2 and "no such campaign" in done.stderr


def test_rules_schema_errors_name_the_line(tmp_path):
    text = (CAMPAIGN / "campaign.yaml").read_text()
    (tmp_path / "campaign.yaml").write_text(text.replace("metric: rtt, above: 60", "metric: rtt, over: 60"))
    with pytest.raises(ThruputError, match=r"campaign.yaml:\d+: alerts/1"):
        load_metadata(tmp_path)
    meta = load_metadata(CAMPAIGN)
    rules = alerts.rules_of(meta)
    assert [r["kind"] for r in rules] == ["threshold", "threshold", "threshold", "baseline"]
    assert rules[0]["below"] == 2.8e7 and rules[3]["window_s"] == 1800
    twice = alerts.rules_of({"alerts": [{"test": "tcp", "metric": "throughput", "below": 1, "path": "a-b"}] * 2})
    assert [r["id"] for r in twice] == ["tcp throughput below 1 bit/s for 1 slots (a-b)",
                                        "tcp throughput below 1 bit/s for 1 slots (a-b) #2"]
    with pytest.raises(ValueError, match="no metric 'rtt' for test 'tcp'"):
        alerts.rules_of({"alerts": [{"test": "tcp", "metric": "rtt", "above": 1}]})


# --- a synthetic 20-path campaign: 5 sources x 4 destinations, a planned change on two

SOURCES = [f"src{i}" for i in range(5)]
DESTS = [f"dst{j}" for j in range(4)]
N_SLOTS, CHANGE_SLOT, INTERVAL = 48, 30, 300
CHANGED = {"src1-dst2", "src3-dst0"}      # throughput 50 -> 20 Mbit/s, RTT 40 -> 80 ms
SILENT = "src4-dst3"                      # no run in its last 6 slots


def synthetic_20_paths(seed=0):
    """A SYNTHETIC monitor Dataset (no measurement): per slot and path one TCP test and
    one ping, with the planned change on :data:`CHANGED` from :data:`CHANGE_SLOT`."""
    rng = np.random.default_rng(seed)
    rows = []
    t0 = np.datetime64("2026-11-23T00:00:00", "ns")
    for slot in range(N_SLOTS):
        for s in SOURCES:
            for d in DESTS:
                path = f"{s}-{d}"
                if path == SILENT and slot >= N_SLOTS - 6:
                    continue
                after = path in CHANGED and slot >= CHANGE_SLOT
                when = t0 + np.timedelta64(slot * INTERVAL, "s")
                rows.append((when, slot, path, "tcp", 1048576.0, np.nan,
                             (20e6 if after else 50e6) * rng.uniform(0.95, 1.05), np.nan, np.nan, np.nan))
                rows.append((when + np.timedelta64(10, "s"), slot, path, "ping", np.nan, 108.0, np.nan,
                             (80 if after else 40) + rng.gamma(2, 0.5), 10.0, 10.0 - (slot % 7 == 0)))
    f = pd.DataFrame(rows, columns=["time", "slot", "path", "test", "socket_buffer", "size", "throughput",
                                    "rtt_median", "ping_transmitted", "ping_received"])
    meta = {"name": "synthetic-20-paths", "kind": "monitor",
            "paths": [{"name": f"{s}-{d}", "source": s, "destination": d, "directions": ["forward"]}
                      for s in SOURCES for d in DESTS],
            "schedule": {"interval_s": INTERVAL, "tests": []},
            "events": [{"time": str(t0 + np.timedelta64(CHANGE_SLOT * INTERVAL - 60, "s")) + "Z",
                        "what": "SYNTHETIC planned change", "planned": True}],
            "alerts": [{"test": "tcp", "metric": "throughput", "below": "3.0e7", "for": 3},
                       {"test": "ping", "metric": "rtt", "above": 60, "for": 3}],
            "baseline": [{"test": "ping", "metric": "rtt", "above": 0.5, "window": "1h", "for": 2}]}
    n = len(f)
    ds = xr.Dataset({
        "throughput": ("run", f["throughput"].to_numpy(), {"units": "bit/s"}),
        "rtt_median": ("run", f["rtt_median"].to_numpy(), {"units": "ms"}),
        "ping_transmitted": ("run", f["ping_transmitted"].to_numpy()),
        "ping_received": ("run", f["ping_received"].to_numpy()),
        "loss_fraction": ("run", np.full(n, np.nan)), "jitter": ("run", np.full(n, np.nan)),
        "ping_loss": ("run", 1 - f["ping_received"].to_numpy() / f["ping_transmitted"].to_numpy()),
        "outcome": ("run", np.full(n, "ok")),
    }, coords={"time": ("run", f["time"].to_numpy()), "slot": ("run", f["slot"].to_numpy()),
               "path": ("run", f["path"].to_numpy()), "direction": ("run", np.full(n, "forward")),
               "test": ("run", f["test"].to_numpy()), "socket_buffer": ("run", f["socket_buffer"].to_numpy()),
               "size": ("run", f["size"].to_numpy())},
        attrs={"campaign": meta["name"], "campaign_kind": "monitor", "metadata": json.dumps(meta)})
    return ds


@pytest.fixture(scope="module")
def twenty():
    ds = synthetic_20_paths()
    return ds, alerts.evaluate(ds)


def test_synthetic_20_paths_verdicts_and_breaches(twenty):
    ds, tables = twenty
    verdict = tables["verdict"]["state"].sel(direction="forward").to_series()
    assert sorted(verdict[verdict == "breach"].index) == sorted(CHANGED)
    assert list(verdict[verdict == "no data"].index) == [SILENT]
    assert (verdict == "ok").sum() == 17
    br = tables["breaches"].to_dataframe()
    change_time = tables["alert_state"]["time"].values[CHANGE_SLOT]
    fixed = br[br["rule"].str.startswith("tcp throughput below 30 Mbit/s")]
    assert sorted(fixed["path"]) == sorted(CHANGED)
    assert (fixed["start"] == change_time).all() and fixed["open"].all()
    assert (fixed["opened"] == tables["alert_state"]["time"].values[CHANGE_SLOT + 2]).all()   # for: 3
    assert (fixed["worst"] < 21e6).all() and (fixed["slots"] == N_SLOTS - CHANGE_SLOT).all()
    # the baseline rule (RTT 50 % above the last hour's median) opens at the change and
    # closes once the hour holds the new level (a breach that ended)
    base = br[br["rule"].str.contains("median of the last 1h")]
    assert sorted(base["path"]) == sorted(CHANGED) and not base["open"].any()
    assert (base["start"] == change_time).all()
    state = tables["alert_state"]["state"].sel(path="src1-dst2", direction="forward")
    assert (state.isel(rule=0, slot=slice(None, CHANGE_SLOT)) == alerts.OK).all()
    assert (state.isel(rule=0, slot=slice(CHANGE_SLOT, None)) == alerts.BREACH).all()
    silent = tables["alert_state"]["state"].sel(path=SILENT, direction="forward").isel(rule=0)
    assert (silent[-6:] == alerts.NO_DATA).all()
    rep = alerts.report_json(tables)
    assert rep["exit_status"] == 1 and rep["state"] == "breach"
    sla = tables["sla_1D"].sel(direction="forward").isel(rule=0)
    assert float(sla["availability"].sel(path=SILENT).squeeze()) == pytest.approx(42 / 48)
    assert float(sla["fraction_met"].sel(path="src1-dst2").squeeze()) == pytest.approx(30 / 48)
    assert int(sla["longest_breach"].sel(path="src1-dst2").squeeze()) == 18


def test_a_series_no_rule_applies_to_is_ok_while_it_has_data():
    """Without rules (a new user's first campaign) the report is ok, exit 0, not "no
    data", while the last slot has an ok run of any test; a series silent in its last
    slot is no data (the monitor may have stopped), with the time of its last data."""
    ds = synthetic_20_paths()
    meta = json.loads(ds.attrs["metadata"])
    meta.pop("alerts"), meta.pop("baseline")
    ds.attrs["metadata"] = json.dumps(meta)
    rep = alerts.report_json(alerts.evaluate(ds))
    states = {s["path"]: s for s in rep["series"]}
    assert rep["rules"] == [] and rep["state"] == "no data" and rep["exit_status"] == 3
    assert states[SILENT]["state"] == "no data" and states[SILENT]["last_data"] is not None
    assert {s["state"] for p, s in states.items() if p != SILENT} == {"ok"}
    assert all(s["last_data"] == rep["last_slot"] for p, s in states.items() if p != SILENT)
    rep = alerts.report_json(alerts.evaluate(ds.where(ds["path"] != SILENT, drop=True)))
    assert rep["state"] == "ok" and rep["exit_status"] == 0
    text = alerts.format_report(rep)
    assert "every slot is ok" in text and "None" not in text
    from thruput.report import health
    tables = alerts.evaluate(ds)
    assert "None" not in health.health_verdicts(tables).data
    assert health.health_sla(tables).data.startswith("No rule, so no SLA")


def test_synthetic_20_paths_grid(twenty):
    _, tables = twenty
    cells = grid_cells(tables, json.loads(tables["alert_state"].attrs["metadata"])["paths"])
    assert len(cells) == 20 and set(cells["source"]) == set(SOURCES) and set(cells["destination"]) == set(DESTS)
    red = cells[cells["state"] == "breach"]
    assert sorted(zip(red["source"], red["destination"])) == [("src1", "dst2"), ("src3", "dst0")]
    assert cells.set_index("path").loc["src1-dst2", "href"] == "#src1-dst2-forward"


def test_synthetic_20_paths_rollups(twenty, tmp_path):
    ds, _ = twenty
    tables = R.rollups(ds.chunk({"run": 500}))
    assert set(tables) == {f"{f}/{k}" for f in R.FREQS for k in ("tcp_throughput", "ping_rtt")}
    write_product(tables, tmp_path / "r.nc", encoding=R.rollups_encoding(tables))
    hour = R.open_rollup(tmp_path / "r.nc", "1h", "tcp_throughput")
    assert hour.sizes["time"] == 4 and hour.sizes["path"] == 20
    med = hour["median"].sel(path="src1-dst2", direction="forward").squeeze()
    assert 47e6 < float(med[0]) < 53e6 and 17e6 < float(med[-1]) < 23e6    # the change shows
    assert int(hour["n"].sel(path="src0-dst0").sum()) == N_SLOTS
    ping = R.open_rollup(tmp_path / "r.nc", "5min", "ping_rtt", "2026-11-23T02:00", "2026-11-23T03:00")
    assert ping.sizes["time"] == 12
    lost = ping["loss"].sel(path="src0-dst0", direction="forward").squeeze()
    assert float(lost.sum()) == pytest.approx(0.1 * 2)    # slots 28 and 35: one of ten probes lost
    td = R.throughput_delay(ds, {"before": ["2026-11-23T00:00", "2026-11-23T02:29"],
                                 "after": ["2026-11-23T02:29", "2026-11-23T04:00"]})
    pick = lambda p: td.isel(series=int(np.flatnonzero(   # noqa: E731
        (td["path"].values == "src1-dst2") & (td["period"].values == p))[0]))
    before, after = pick("before"), pick("after")
    assert float(before["rtt"]) < 42 and float(after["rtt"]) > 78
    assert float(after["throughput"]) < 0.5 * float(before["throughput"])
    assert int(before["n"]) == CHANGE_SLOT and int(after["n"]) == N_SLOTS - CHANGE_SLOT
    assert np.isfinite(before["ellipse_rtt"].values).all()


def test_report_synthetic_raw_campaign_20_paths(tmp_path):
    """A raw SYNTHETIC campaign of 20 paths (benchmarks/synthetic_monitor.py) with a
    planned change on two: the report opens a breach at the change on those two only."""
    from benchmarks.synthetic_monitor import write_archive

    directory = write_archive(tmp_path, paths=20, slots=60, probes=10, change_slot=40, changed=(5, 14))
    done = _report(directory, "--json")
    assert done.returncode == 1, done.stderr
    rep = json.loads(done.stdout)
    assert len(rep["series"]) == 20
    state = {s["path"]: s["state"] for s in rep["series"]}
    assert sorted(p for p, s in state.items() if s == "breach") == ["p005", "p014"]
    assert all(s == "ok" for p, s in state.items() if p not in ("p005", "p014"))
    for s in rep["series"]:
        if s["path"] in ("p005", "p014"):
            assert {b["rule"].split()[0] for b in s["breaches"]} == {"tcp", "ping"}
            assert all(b["open"] and b["start"] == "2026-01-01T06:40:00Z" and b["slots"] == 20
                       for b in s["breaches"])
        else:
            assert s["breaches"] == []
    # the same from the campaign's Zarr store (what the pipeline's normalize writes)
    store = tmp_path / "synthetic.zarr"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    subprocess.run([sys.executable, "-m", "thruput.cli", "pipeline", "normalize", str(directory), str(store)],
                   check=True, capture_output=True, env=env, timeout=600)
    stored = _report(store, "--json")
    assert stored.returncode == 1 and json.loads(stored.stdout)["series"] == rep["series"]
    cells = grid_cells(alerts.evaluate(__import__("thruput").open_campaign(directory)),
                       load_metadata(directory)["paths"])
    assert sorted(cells.loc[cells["state"] == "breach", ["source", "destination"]].itertuples(index=False)) \
        == [("src1", "dst1"), ("src3", "dst2")]


def test_slot_medians_by_one_sort_equal_pandas_groupby_median():
    """``group_median`` (the slots' medians without a hash groupby of millions of keys):
    bit for bit pandas' groupby median, NaN left out, even and odd counts, all-NaN groups."""
    from thruput.stats.grouped import group_median

    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(1, 3000))
        key = rng.integers(0, int(rng.integers(1, 500)), n).astype(np.int64)
        v = rng.normal(size=n) * 10.0 ** rng.integers(-3, 9)
        v[rng.uniform(size=n) < 0.3] = np.nan
        at, median = group_median(key, v)
        want = pd.Series(v).groupby(key).median()
        np.testing.assert_array_equal(at, want.index.to_numpy())
        np.testing.assert_array_equal(median, want.to_numpy())
