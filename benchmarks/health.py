"""Monitor health at the scale of a year of many paths: the rollups
(``thruput.stats.rollups``) built into their Zarr store from the campaign's store read
lazily, beside a plain pandas groupby of the same table over the same bins and statistics;
the rollups' append of one more day (``append_rollups``) against their full build; and the
alert state of every slot (``thruput.monitor.alerts.evaluate``, what ``thruput monitor
report`` and the pipeline's health stage run) with the report's JSON.

    python -m benchmarks.health --paths 50 --days 365 --interval 600

The campaign is SYNTHETIC (no raw files: reading them is benchmarked by
benchmarks/ingest.py and scale.py): per slot and path one TCP test and one ping, a planned
change on two paths half-way, written as a campaign store (``campaign.store``) ten days at
a time. Each step runs in a process of its own, so its peak RSS is its own: ``store``
(writing it), ``pandas`` (the reference: the columns read whole, then grouped),
``rollups`` (every day but the last, window by window), ``rollups_memory`` (``rollups``
of the pandas step's columns in memory: compute only, like for like with the groupby),
``append`` (the last day), ``alerts`` (``evaluate`` on the store opened lazily, as the
pipeline opens it), ``alerts_write`` (the alerts store of every day but the last),
``alerts_append`` (the last day); and, not by default (the statistics product's
periodograms and change points of 100 series of 52,560 slots take about an hour),
``stats`` (``thruput pipeline stats``) then ``health_tables`` (``thruput pipeline health
--stats``: the DVC stages). Prints seconds and peak RSS per step; writes
``benchmarks/output/health.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr

ROOT = Path(__file__).resolve().parents[1]
#: Days of slots written to the store at a time.
STORE_DAYS = 10


def campaign(paths=50, days=365, interval=600, seed=0, first=0, last=None):
    """A SYNTHETIC monitor Dataset: ``paths`` x ``days`` x one slot per ``interval`` s
    (slots ``first`` to ``last``, exclusive: a part of it, numbered as in the whole)."""
    total = int(days * 86400 // interval)
    last = total if last is None else min(last, total)
    rng = np.random.default_rng([seed, first])
    slot = np.repeat(np.arange(first, last), paths * 2)
    slots = last - first
    path = np.tile(np.repeat([f"p{p:03d}" for p in range(paths)], 2), slots)
    test = np.tile(["tcp", "ping"], slots * paths)
    t0 = np.datetime64("2026-01-01T00:00:00", "ns")
    time_ = t0 + slot * np.timedelta64(interval, "s") + (test == "ping") * np.timedelta64(15, "s")
    after = (slot >= total // 2) & np.isin(path, ["p003", "p011"])
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
        "throughput_sender": ("run", tput * 1.01, {"units": "bit/s"}),     # (the stats product's sender_receiver)
        "ping_transmitted": ("run", np.where(test == "ping", 10.0, np.nan)),
        "ping_received": ("run", np.where(test == "ping", 10.0, np.nan)),
        "ping_loss": ("run", np.where(test == "ping", 0.0, np.nan)),
        "loss_fraction": ("run", nan), "jitter": ("run", nan), "outcome": ("run", np.full(n, "ok")),
    }, coords={"run": ("run", first * paths * 2 + np.arange(n)), "time": ("run", time_),
               "slot": ("run", slot), "path": ("run", path),
               "direction": ("run", np.full(n, "forward")), "test": ("run", test),
               "socket_buffer": ("run", np.where(test == "tcp", 262144.0, np.nan)),
               "size": ("run", np.where(test == "ping", 56.0, np.nan))},
        attrs={"campaign": meta["name"], "campaign_kind": "monitor", "metadata": json.dumps(meta)})


def write_campaign(path, paths, days, interval):
    """:func:`campaign` written as a campaign store at ``path``, :data:`STORE_DAYS` days at
    a time (never whole in memory)."""
    from thruput.campaign.store import put_attrs, resize_runs, write_region, write_store

    per = int(STORE_DAYS * 86400 // interval)
    total = int(days * 86400 // interval)
    held = 0
    for first in range(0, total, per):
        part = campaign(paths, days, interval, first=first, last=first + per)
        if first == 0:
            write_store(part, path)
        else:
            resize_runs(path, part, held + part.sizes["run"])
            write_region(part, path, held)
        held += part.sizes["run"]
        attrs = part.attrs
    put_attrs(path, attrs)
    return held


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


def _lazy(store):
    from thruput.campaign.store import compute_chunks, open_store

    return open_store(store, chunks=compute_chunks(store))


def _all_but_last_day(ds):
    times = np.asarray(ds["time"].values, "datetime64[ns]")
    return int(np.searchsorted(times, times[-1] - np.timedelta64(1, "D")))


def _columns(ds):
    """The columns the rollups use of ``ds`` (lazy), read whole into memory (xarray and
    dask, as a pandas user would)."""
    names = ["test", "outcome", "path", "direction", "time", "socket_buffer", "size", "throughput",
             "rtt_median", "ping_transmitted", "ping_received"]
    return ds[[n for n in names if n in ds.data_vars]].reset_coords()[names].load()


def step(name, store, out):
    """One step in this process: ``{"<name>_s": seconds, ...}`` with its peak RSS."""
    from thruput.stats.rollups import append_rollups, write_rollups

    got = {}
    if name == "pandas":
        ds = _lazy(store)
        ds = ds.isel(run=slice(0, _all_but_last_day(ds)))
        t = time.perf_counter()
        ds = _columns(ds)
        got["pandas_read_s"] = time.perf_counter() - t
        t = time.perf_counter()
        pandas_rollups(ds)
        got["pandas_groupby_s"] = time.perf_counter() - t
    elif name == "rollups_memory":        # rollups() of the pandas step's columns in memory: compute only
        from thruput.stats.rollups import rollups

        ds = _lazy(store)
        ds = _columns(ds.isel(run=slice(0, _all_but_last_day(ds))))
        t = time.perf_counter()
        rollups(ds)
        got["rollups_memory_s"] = time.perf_counter() - t
    elif name == "rollups":
        ds = _lazy(store)
        ds = ds.isel(run=slice(0, _all_but_last_day(ds)))     # (untimed, as for pandas)
        t = time.perf_counter()
        write_rollups(ds, out)
        got["rollups_s"] = time.perf_counter() - t
    elif name == "append":
        t = time.perf_counter()
        done = append_rollups(_lazy(store), out)
        got["append_s"] = time.perf_counter() - t
        got["append_rebuilt"] = done["rebuilt"]
    elif name == "alerts_write":          # the alerts store of every day but the last
        from thruput.monitor.alerts_store import write_alerts

        ds = _lazy(store)
        t = time.perf_counter()
        write_alerts(ds.isel(run=slice(0, _all_but_last_day(ds))), out.with_name("alerts.zarr"))
        got["alerts_write_s"] = time.perf_counter() - t
    elif name == "alerts_append":         # ... brought up to date with the last day
        from thruput.monitor.alerts_store import append_alerts

        t = time.perf_counter()
        done = append_alerts(_lazy(store), out.with_name("alerts.zarr"))
        got["alerts_append_s"] = time.perf_counter() - t
        got["alerts_append_rebuilt"] = done["rebuilt"]
    elif name == "alerts":                # lazily, as the pipeline and thruput monitor report open it
        from thruput.monitor.alerts import evaluate, report_json

        ds = _lazy(store)
        t = time.perf_counter()
        tables = evaluate(ds)
        got["evaluate_s"] = time.perf_counter() - t
        t = time.perf_counter()
        report = report_json(tables)
        got.update(report_json_s=time.perf_counter() - t, state=report["state"],
                   breaches=int(tables["breaches"].sizes["breach"]))
    elif name in ("stats", "health_tables"):    # the pipeline's commands, as dvc.yaml runs them
        from thruput.cli import main as thruput

        product = out.with_name("campaign.stats.nc")
        if name == "stats":
            argv = ["stats", str(store), str(product)]
        elif product.exists():         # the health stage takes the change points of the stats product
            argv = ["health", str(store), str(out.with_name("campaign.health.zarr")), "--update", "--stats", str(product)]
        else:
            raise SystemExit(f"{product}: run the stats step first (the health stage reads its change points)")
        t = time.perf_counter()
        code = thruput(["pipeline", *argv, "--params", str(ROOT / "params.yaml")])
        got[f"{name}_s"] = time.perf_counter() - t
        if code:
            raise SystemExit(f"thruput pipeline {argv[0]}: exit status {code}")
    got[f"{name}_peak_rss_mb"] = _rss_mb()
    return got


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.health", description=__doc__.split("\n\n")[0])
    parser.add_argument("--paths", type=int, default=50)
    parser.add_argument("--days", type=float, default=365)
    parser.add_argument("--interval", type=int, default=600, help="s between slots")
    parser.add_argument("--steps", default="pandas,rollups,rollups_memory,append,alerts,alerts_write,alerts_append")
    parser.add_argument("--work", default=str(ROOT / "benchmarks/output/health"),
                        help="folder of the campaign store and the rollups store")
    parser.add_argument("--out", default=str(ROOT / "benchmarks/output/health.json"))
    parser.add_argument("--step", help=argparse.SUPPRESS)       # (one step, in a process of its own)
    args = parser.parse_args(argv)
    work = Path(args.work)
    store, rolled = work / f"campaign-{args.paths}p-{args.days:g}d.zarr", work / "rollups.zarr"
    if args.step:
        print(json.dumps(step(args.step, store, rolled)))
        return 0
    results = {"paths": args.paths, "days": args.days, "interval_s": args.interval}
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    t = time.perf_counter()
    results["runs"] = write_campaign(store, args.paths, args.days, args.interval)
    results.update(store_s=time.perf_counter() - t, store_peak_rss_mb=_rss_mb())
    for name in args.steps.split(","):
        done = subprocess.run([sys.executable, "-m", "benchmarks.health", "--step", name, "--paths", str(args.paths),
                               "--days", str(args.days), "--interval", str(args.interval), "--work", str(work)],
                              cwd=ROOT, check=True, capture_output=True, text=True)
        results.update(json.loads(done.stdout.strip().splitlines()[-1]))
        print(name, json.dumps(results), flush=True)
    if "rollups_s" in results and "pandas_groupby_s" in results:
        results["rollups_over_pandas_groupby"] = results["rollups_s"] / results["pandas_groupby_s"]
        results["rollups_over_pandas_read_and_groupby"] = results["rollups_s"] / (
            results["pandas_groupby_s"] + results["pandas_read_s"])
    if "rollups_memory_s" in results and "pandas_groupby_s" in results:
        results["rollups_memory_over_pandas_groupby"] = results["rollups_memory_s"] / results["pandas_groupby_s"]
    if "append_s" in results and "rollups_s" in results:
        results["append_over_rollups"] = results["append_s"] / results["rollups_s"]
    if "alerts_append_s" in results and "evaluate_s" in results:
        results["alerts_append_over_evaluate"] = results["alerts_append_s"] / results["evaluate_s"]
    if "alerts_append_s" in results and "alerts_write_s" in results:
        results["alerts_append_over_write"] = results["alerts_append_s"] / results["alerts_write_s"]
    print(json.dumps(results, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
