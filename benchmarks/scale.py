"""Scale: normalize a SYNTHETIC monitor archive on a dask LocalCluster, append 1 %, and
compute hourly percentiles; optionally side by side with another checkout of thruput.

    python -m benchmarks.scale [--paths 10] [--slots 1000] [--probes 100] [--workers 2]
                               [--repeats 3] [--against /path/to/other/checkout]
                               [--out benchmarks/output]

:mod:`benchmarks.synthetic_monitor` writes (once) a SYNTHETIC archive of ``paths x slots``
iperf3 -J runs and as many ping logs of ``probes`` probes each (10 x 1000 x 100: 10^4
iperf3 runs and 10^6 probes). Then, for this checkout and (``--against``) another one,
each in a fresh child process (``PYTHONPATH=<checkout>/src``) with its own LocalCluster
of ``--workers`` single-threaded workers, started as ``thruput pipeline normalize
--workers N`` starts it (:func:`thruput.parallel.local_cluster` of that checkout):

normalize
    ``thruput.monitor.normalize.normalize_monitor`` of the whole archive into a new store.
append
    runs.csv cut to its first 99 % of rows, normalized, then the whole runs.csv again:
    only the last 1 % is read and appended, the stored raw files checked as by default.
    Its time is compared with the full normalize's.
percentiles
    The store opened lazily; per path and hour, :func:`thruput.stats.rolling_summary`
    (exact) of TCP throughput and of every ping probe's RTT, on the cluster.

The checkouts alternate (``--repeats`` rounds of: this one, the other), so that both meet
a shared machine in the same states; the shortest time of each step is reported, and the
ratio of each round's pair (their median and range). Peak RSS
is sampled every 0.1 s from the workers' processes (psutil) and the driver's. Imports and
the cluster's start are not timed; every file of the archive is read once before the first
round (page cache). Writes ``<out>/scale.json`` and ``<out>/scale.md``; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "output"
QUANTILES = (0.1, 0.5, 0.9)
#: What issue 41 asks of this checkout against the one it replaced.
TARGETS = {"normalize_ratio_max": 1.5, "worker_rss_mb_max": 1024, "append_fraction_max": 0.15,
           "percentiles_ratio_max": 1.5}


class PeakRSS:
    """Samples the resident set of some processes every ``period`` s; keeps each one's peak."""

    def __init__(self, pids, period=0.1):
        import psutil

        self.procs = {pid: psutil.Process(pid) for pid in pids}
        self.peak = dict.fromkeys(pids, 0)
        self.period = period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            for pid, proc in self.procs.items():
                try:
                    self.peak[pid] = max(self.peak[pid], proc.memory_info().rss)
                except Exception:       # a worker that ended: keep its peak
                    pass
            self._stop.wait(self.period)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False


def measure(fn, workers):
    """``{"seconds", "worker_rss_mb", "driver_rss_mb"}`` of ``fn()`` (worker PIDs
    ``workers``), and its result."""
    me = os.getpid()
    with PeakRSS(list(workers) + [me]) as sampler:
        t0 = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - t0
    peaks = {pid: rss / 2**20 for pid, rss in sampler.peak.items()}
    return {"seconds": seconds, "driver_rss_mb": peaks.pop(me),
            "worker_rss_mb": max(peaks.values(), default=0.0)}, result


def hourly_percentiles(store):
    """Per path and hour: :func:`thruput.stats.rolling_summary` of TCP throughput (one
    value per run) and of every ping probe's RTT (run x probe), on the current client."""
    import numpy as np
    import xarray as xr

    import thruput
    from thruput.campaign.store import compute_chunks
    from thruput.stats import rolling_summary

    ds = thruput.open_campaign(store, chunks=compute_chunks(store))
    ds = ds.assign_coords({k: ds[k].compute().variable for k in ("time", "path", "test")})
    test = xr.DataArray(np.asarray(ds["test"].values).astype(str), dims="run")
    percentiles = [100 * q for q in QUANTILES]
    tcp = rolling_summary(ds["throughput"].where(test == "tcp"), freq="1h", by=("path",),
                          percentiles=percentiles)
    rtt = rolling_summary(ds["rtt"].where(test == "ping"), freq="1h", by=("path",),
                          percentiles=percentiles)
    return {"groups": int(tcp["n"].size), "exact": bool(tcp.attrs["exact"] and rtt.attrs["exact"]),
            "median_rtt_ms": float(rtt["median"].median())}


def _warm():
    """Import what normalize uses (not timed)."""
    import importlib

    for name in ("thruput.monitor.normalize", "thruput.formats.iperf3_json", "thruput.formats.ping",
                 "dask.array", "zarr", "thruput.stats"):
        importlib.import_module(name)


def warm_page_cache(directory):
    """Read every file of the archive once (seconds taken)."""
    t0 = time.perf_counter()
    for p in Path(directory).rglob("*"):
        if p.is_file():
            with open(p, "rb") as f:
                while f.read(1 << 20):
                    pass
    return time.perf_counter() - t0


def _cut_campaign(directory, target, fraction=0.99):
    """A campaign beside ``target`` with the raw files of ``directory`` (hard links) and the
    first ``fraction`` of its runs.csv rows; returns it and the whole runs.csv text."""
    copy = target / (directory.name + "-append")
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir(parents=True)
    # the same files, hard-linked (a symbolic link out of the campaign folder is refused)
    shutil.copytree(directory / "runs", copy / "runs", copy_function=os.link)
    meta = json.loads((directory / "campaign.yaml").read_text())       # (JSON is YAML)
    meta["name"] = copy.name
    (copy / "campaign.yaml").write_text(json.dumps(meta))
    text = (directory / "runs.csv").read_text().splitlines(keepends=True)
    keep = 1 + int(round((len(text) - 1) * fraction))
    (copy / "runs.csv").write_text("".join(text[:keep]))
    return copy, "".join(text), keep - 1


def run_once(directory, target, workers):
    """One round in this process (the child): normalize, 1 % append, percentiles."""
    from distributed import Client

    from thruput.monitor.normalize import normalize_monitor
    from thruput.parallel import local_cluster

    _warm()
    target.mkdir(parents=True, exist_ok=True)
    for p in target.iterdir():
        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
    with local_cluster(workers) as cluster, Client(cluster) as client:
        client.wait_for_workers(workers)
        client.run(_warm)
        pids = list(client.run(os.getpid).values())
        out = {}
        full = target / "full.zarr"
        os.sync()
        out["normalize"], done = measure(lambda: normalize_monitor(directory, full, client=client), pids)
        out["runs"] = done["runs"]
        copy, whole, first = _cut_campaign(directory, target)
        part = target / "append.zarr"
        out["normalize_99"], _ = measure(lambda: normalize_monitor(copy, part, client=client), pids)
        (copy / "runs.csv").write_text(whole)
        os.sync()
        out["append"], done = measure(lambda: normalize_monitor(copy, part, client=client), pids)
        out["rows_first"], out["rows_appended"] = first, done["runs_added"]
        out["percentiles"], out["percentile_result"] = measure(lambda: hourly_percentiles(full), pids)
    return out


def _child(checkout, directory, target, workers):
    """:func:`run_once` in a child process running ``checkout``'s thruput."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(checkout) / "src"), str(ROOT)]))
    done = subprocess.run([sys.executable, "-m", "benchmarks.scale", "--child", str(directory),
                           str(target), str(workers)], env=env, cwd=ROOT, capture_output=True,
                          text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{checkout}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench(out, paths, slots, probes, workers=2, repeats=3, against=None):
    """The side-by-side run (see the module's docstring); returns the result dict."""
    from . import synthetic_monitor

    t0 = time.perf_counter()
    directory = synthetic_monitor.write_archive(out / "synthetic", paths, slots, probes)
    result = {"synthetic": True, "paths": paths, "slots": slots, "probes": probes,
              "iperf3_runs": paths * slots, "ping_probes": paths * slots * probes,
              "workers": workers, "generate_seconds": time.perf_counter() - t0,
              "page_cache_warm_seconds": warm_page_cache(directory), "checkouts": {}}
    checkouts = {"this": ROOT} | ({"against": Path(against).resolve()} if against else {})
    rounds = {name: [] for name in checkouts}
    for _ in range(repeats):
        for name, checkout in checkouts.items():
            rounds[name].append(_child(checkout, directory, out / "synthetic-stores" / name, workers))
    for name, runs in rounds.items():
        best = {step: min((r[step] for r in runs), key=lambda m: m["seconds"])
                for step in ("normalize", "normalize_99", "append", "percentiles")}
        best["normalize_seconds_each"] = [r["normalize"]["seconds"] for r in runs]
        best["append_seconds_each"] = [r["append"]["seconds"] for r in runs]
        best["worker_rss_mb_max"] = max(r[s]["worker_rss_mb"] for r in runs
                                        for s in ("normalize", "normalize_99", "append", "percentiles"))
        best["append_fraction"] = best["append"]["seconds"] / best["normalize"]["seconds"]
        best["rows_appended"] = runs[-1]["rows_appended"]
        best["checkout"] = str(checkouts[name])
        result["checkouts"][name] = best
    if against:
        this, other = result["checkouts"]["this"], result["checkouts"]["against"]
        result["ratios"] = {step: this[step]["seconds"] / other[step]["seconds"]
                            for step in ("normalize", "append", "percentiles")}
        # (each round's pair ran back to back: on a shared machine whose speed drifts by
        # tens of per cent within minutes, their ratios say more than the two shortest)
        result["round_ratios"] = {step: [a[step]["seconds"] / b[step]["seconds"]
                                         for a, b in zip(rounds["this"], rounds["against"])]
                                  for step in ("normalize", "append", "percentiles")}
    return result


def bench_large(out, paths, slots, probes, n=2):
    """This checkout only, one round in this process (what ``tests/test_benchmarks_scale.py``
    runs on a tiny archive)."""
    from . import synthetic_monitor

    directory = synthetic_monitor.write_archive(out / "synthetic", paths, slots, probes)
    run = run_once(directory, out / "synthetic-stores" / "this", n)
    return {"synthetic": True, "iperf3_runs": paths * slots, "ping_probes": paths * slots * probes,
            "append": {"rows_first": run["rows_first"], "rows_appended": run["rows_appended"],
                       "seconds_append_1_percent": run["append"]["seconds"]},
            "append_fraction": run["append"]["seconds"] / run["normalize"]["seconds"],
            "percentiles_seconds": run["percentiles"]["seconds"]}


def markdown(result):
    """The table of one run."""
    lines = [f"{result['iperf3_runs']} iperf3 runs, {result['ping_probes']} ping probes "
             f"(SYNTHETIC), {result['workers']} workers; shortest of each step",
             "",
             "| checkout | normalize (s) | 1 % append (s) | append / normalize | hourly percentiles (s) "
             "| worker RSS max (MB) | driver RSS, normalize (MB) |",
             "|---|---|---|---|---|---|---|"]
    for name, r in result["checkouts"].items():
        lines.append(f"| {name} | {r['normalize']['seconds']:.2f} | {r['append']['seconds']:.2f} "
                     f"| {100 * r['append_fraction']:.1f} % | {r['percentiles']['seconds']:.2f} "
                     f"| {r['worker_rss_mb_max']:.0f} | {r['normalize']['driver_rss_mb']:.0f} |")
    if "ratios" in result:
        lines += ["", "this / against, shortest: " + ", ".join(f"{k} {v:.2f}x" for k, v in result["ratios"].items())]
        lines += ["this / against, round by round: " + ", ".join(
            f"{k} median {statistics.median(v):.2f}x ({min(v):.2f}-{max(v):.2f})"
            for k, v in result["round_ratios"].items())]
    return "\n".join(lines) + "\n"


def main(argv=None):
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--child":
        directory, target, workers = sys.argv[2:5]
        print(json.dumps(run_once(Path(directory), Path(target), int(workers))))
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--paths", type=int, default=10)
    parser.add_argument("--slots", type=int, default=1000)
    parser.add_argument("--probes", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--against", help="another checkout of thruput, run side by side")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = bench(out, args.paths, args.slots, args.probes, args.workers, args.repeats, args.against)
    name = f"scale-{result['iperf3_runs']}"
    (out / f"{name}.json").write_text(json.dumps(result, indent=1))
    (out / f"{name}.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
