"""Monitor health at the scale of a year of many paths: the alert state of every slot
(``thruput.monitor.alerts.evaluate``, what ``thruput monitor report`` and the pipeline's
health stage run), the report's JSON, the rollups (``thruput.stats.rollups``) beside a
plain pandas groupby of the same table over the same bins and statistics, and the
rollups' update after one more day (``update_rollups``) against their full build.

    python -m benchmarks.health --paths 50 --days 365 --interval 600

The campaign is SYNTHETIC and in memory (no raw files: reading them is benchmarked by
benchmarks/ingest.py and scale.py): per slot and path one TCP test and one ping, a planned
change on two paths half-way. Prints seconds and peak RSS per step; writes
``benchmarks/output/health.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr

ROOT = Path(__file__).resolve().parents[1]


def campaign(paths=50, days=365, interval=600, seed=0):
    """A SYNTHETIC monitor Dataset: ``paths`` x ``days`` x one slot per ``interval`` s."""
    rng = np.random.default_rng(seed)
    slots = int(days * 86400 // interval)
    slot = np.repeat(np.arange(slots), paths * 2)
    path = np.tile(np.repeat([f"p{p:03d}" for p in range(paths)], 2), slots)
    test = np.tile(["tcp", "ping"], slots * paths)
    t0 = np.datetime64("2026-01-01T00:00:00", "ns")
    time_ = t0 + slot * np.timedelta64(interval, "s") + (test == "ping") * np.timedelta64(15, "s")
    after = (slot >= slots // 2) & np.isin(path, ["p003", "p011"])
    n = slot.size
    tput = np.where(test == "tcp", np.where(after, 20e6, 50e6) * rng.uniform(0.9, 1.1, n), np.nan)
    rtt = np.where(test == "ping", np.where(after, 80.0, 40.0) + rng.gamma(2, 0.5, n), np.nan)
    meta = {"name": "synthetic-health-benchmark", "kind": "monitor",
            "schedule": {"interval_s": interval, "tests": []},
            "alerts": [{"test": "tcp", "metric": "throughput", "below": 3e7, "for": 3},
                       {"test": "ping", "metric": "rtt", "above": 60, "for": 3}],
            "baseline": [{"test": "tcp", "metric": "throughput", "below": 0.2, "window": "7d", "for": 3}]}
    nan = np.full(n, np.nan)
    return xr.Dataset({
        "throughput": ("run", tput, {"units": "bit/s"}), "rtt_median": ("run", rtt, {"units": "ms"}),
        "ping_transmitted": ("run", np.where(test == "ping", 10.0, np.nan)),
        "ping_received": ("run", np.where(test == "ping", 10.0, np.nan)),
        "ping_loss": ("run", np.where(test == "ping", 0.0, np.nan)),
        "loss_fraction": ("run", nan), "jitter": ("run", nan), "outcome": ("run", np.full(n, "ok")),
    }, coords={"time": ("run", time_), "slot": ("run", slot), "path": ("run", path),
               "direction": ("run", np.full(n, "forward")), "test": ("run", test),
               "socket_buffer": ("run", np.where(test == "tcp", 262144.0, np.nan)),
               "size": ("run", np.where(test == "ping", 56.0, np.nan))},
        attrs={"campaign": meta["name"], "campaign_kind": "monitor", "metadata": json.dumps(meta)})


def pandas_rollups(ds, freqs=("5min", "1h", "1D"), percentiles=(10, 25, 50, 75, 90)):
    """The reference: per kind and resolution one pandas groupby over (path, direction,
    variant, bin) of count, mean, std, min, max, percentiles, runs, failed runs and loss."""
    import pandas as pd

    from thruput.stats.rollups import KINDS

    test = np.asarray(ds["test"].values)
    ok = np.asarray(ds["outcome"].values) == "ok"
    out = {}
    for kind, (name, var, split) in KINDS.items():
        idx = np.flatnonzero(test == name)
        if idx.size == 0 or var not in ds:
            continue
        frame = pd.DataFrame({
            "path": np.asarray(ds["path"].values)[idx], "direction": np.asarray(ds["direction"].values)[idx],
            "variant": np.nan_to_num(np.asarray(ds[split].values, float)[idx]) if split else 0.0,
            "value": np.where(ok[idx], np.asarray(ds[var].values, float)[idx], np.nan), "failed": ~ok[idx]})
        if name == "ping":
            frame["sent"] = np.asarray(ds["ping_transmitted"].values, float)[idx]
            frame["lost"] = frame["sent"] - np.asarray(ds["ping_received"].values, float)[idx]
        times = pd.DatetimeIndex(np.asarray(ds["time"].values)[idx])
        for freq in freqs:
            g = frame.assign(time=times.floor(freq)).groupby(["path", "direction", "variant", "time"])
            table = g["value"].agg(["count", "mean", "std", "min", "max"])
            table = table.join(g["value"].quantile([q / 100 for q in percentiles]).unstack())
            table["runs"], table["failed"] = g.size(), g["failed"].sum()
            table["loss"] = (g["lost"].sum(min_count=1) / g["sent"].sum(min_count=1)) if name == "ping" \
                else table["failed"] / table["runs"]
            out[f"{freq}/{kind}"] = table
    return out


def _rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None):
    from thruput.monitor.alerts import evaluate, report_json
    from thruput.stats.rollups import rollups, update_rollups

    parser = argparse.ArgumentParser(prog="python -m benchmarks.health", description=__doc__.split("\n\n")[0])
    parser.add_argument("--paths", type=int, default=50)
    parser.add_argument("--days", type=float, default=365)
    parser.add_argument("--interval", type=int, default=600, help="s between slots")
    parser.add_argument("--out", default=str(ROOT / "benchmarks/output/health.json"))
    args = parser.parse_args(argv)
    results = {"paths": args.paths, "days": args.days, "interval_s": args.interval}
    t = time.perf_counter()
    ds = campaign(args.paths, args.days, args.interval)
    results.update(runs=int(ds.sizes["run"]), build_s=time.perf_counter() - t)
    t = time.perf_counter()
    tables = evaluate(ds)
    results["evaluate_s"] = time.perf_counter() - t
    t = time.perf_counter()
    report = report_json(tables)
    results.update(report_json_s=time.perf_counter() - t, state=report["state"],
                   breaches=int(tables["breaches"].sizes["breach"]))
    ds.isel(run=slice(0, 10)).chunk().compute()     # (dask's imports, once a process: not timed)
    t = time.perf_counter()
    pandas_rollups(ds)
    results["pandas_groupby_s"] = time.perf_counter() - t
    t = time.perf_counter()
    rollups(ds.chunk({"run": 1_000_000}))
    results["rollups_s"] = time.perf_counter() - t
    results["rollups_over_pandas"] = results["rollups_s"] / results["pandas_groupby_s"]
    last_day = int(np.searchsorted(ds["time"].values, ds["time"].values[-1] - np.timedelta64(1, "D")))
    before = rollups(ds.isel(run=slice(0, last_day)))
    t = time.perf_counter()
    update_rollups(before, ds.chunk({"run": 1_000_000}))
    results["rollups_update_one_day_s"] = time.perf_counter() - t
    results["peak_rss_mb"] = _rss_mb()
    print(json.dumps(results, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
