"""Random design campaigns, in the layout ``open_campaign`` gives a ``kind: design``.

One ``run`` dimension with one coordinate per factor, ``repeat``, ``time``, ``outcome``,
``reason``; variables as a design campaign holds them (throughput bit/s, rtt summaries ms,
UDP loss and jitter), each present or absent; ``attrs["factors"]`` the declared factors
(JSON) and ``design_time``. :func:`random_design` draws every shape a user can make: 1-4
factors (more with ``max_factors``), ordered or not, numbers or text, cells missing, runs
failing, with and without time.
"""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

#: Text levels the generator draws factor levels from (names users give).
WORDS = ("reno", "cubic", "bbr", "htcp", "vegas", "illinois", "forward", "reverse", "tmobile",
         "verizon", "att", "starlink", "fq", "fq_codel", "pfifo", "sfq", "cake", "red", "lon",
         "ams", "fra", "nyc", "sea", "mia", "gru", "syd")
#: Numeric factors: name, units, a generator of levels.
NUMERIC = (("socket_buffer", "byte", lambda rng, k: sorted(int(v) for v in 2 ** rng.choice(np.arange(12, 25), k, replace=False))),
           ("streams", "count", lambda rng, k: sorted(int(v) for v in rng.choice([1, 2, 4, 8, 16, 32, 64], k, replace=False))),
           ("mss", "byte", lambda rng, k: sorted(int(v) for v in rng.choice([536, 1000, 1220, 1448, 8948], k, replace=False))),
           ("delay", "ms", lambda rng, k: sorted(float(v) for v in rng.choice([0.5, 2.5, 10.0, 20.0, 40.0, 80.0, 160.0], k, replace=False))))
TEXT = ("cc", "qdisc", "operator", "site", "direction", "kernel")
REASONS = ("iperf3: error - unable to connect to server: Connection refused",
           "timeout after 30 s", "ping: connect: Network is unreachable", "")


def _factors(rng, n_factors, max_levels, min_levels=1):
    names = list(rng.permutation(len(NUMERIC) + len(TEXT)))
    out = []
    for i in names[:n_factors]:
        k = int(rng.integers(min_levels, max_levels + 1))
        if i < len(NUMERIC):
            name, units, levels = NUMERIC[i]
            k = min(k, 5 if name in ("mss", "streams") else 7)
            out.append({"name": name, "levels": levels(rng, k), "units": units,
                        "ordered": bool(rng.random() < 0.8), "applied": f"iperf3 --{name}"})
        else:
            name = TEXT[i - len(NUMERIC)]
            pool = WORDS if k <= len(WORDS) else [f"{w}{j}" for j in range(k) for w in WORDS][:k]
            levels = [str(v) for v in rng.choice(pool, min(k, len(pool)), replace=False)]
            if k > len(levels):
                levels = [f"{name}-{j:02d}" for j in range(k)]
            out.append({"name": name, "levels": levels, "units": "", "ordered": bool(rng.random() < 0.2),
                        "applied": "" if rng.random() < 0.5 else "sysctl net.ipv4.tcp_congestion_control"})
    return out


def random_design(seed=0, n_factors=None, max_levels=6, min_levels=1, time=None, repeats=None, missing=None,
                  failing=None, metrics=None, max_runs=3000, name=None):
    """A random design campaign Dataset (see the module docstring).

    Parameters
    ----------
    seed : int
        Everything drawn from it.
    n_factors : int, optional
        Default 1 to 4.
    max_levels, min_levels : int, default 6 and 1
        Most and fewest levels of a factor (numeric factors have at most 5 or 7).
    time : bool, optional
        A design over time (runs spread over days, ``design_time`` true).
    repeats : int, optional
        Runs per cell (default 1 to 5; a time design: 3 to 20).
    missing, failing : float, optional
        Share of cells never run and of runs that failed.
    metrics : set of str, optional
        Among "tcp", "udp", "ping" (default: a random non-empty subset).
    """
    rng = np.random.default_rng(seed)
    n_factors = int(rng.integers(1, 5)) if n_factors is None else n_factors
    time = bool(rng.random() < 0.4) if time is None else time
    factors = _factors(rng, n_factors, max_levels, min_levels)
    repeats = int(rng.integers(3, 21) if time else rng.integers(1, 6)) if repeats is None else repeats
    missing = float(rng.choice([0.0, 0.0, 0.1, 0.5])) if missing is None else missing
    failing = float(rng.choice([0.0, 0.05, 0.3, 1.0], p=[0.3, 0.4, 0.25, 0.05])) if failing is None else failing
    if metrics is None:
        metrics = {m for m in ("tcp", "udp", "ping") if rng.random() < 0.5} or {"tcp"}
    grids = np.meshgrid(*[np.arange(len(f["levels"])) for f in factors], indexing="ij")
    cells = np.stack([g.ravel() for g in grids], axis=1)
    while len(cells) * repeats > max_runs and repeats > 1:
        repeats -= 1
    if len(cells) * repeats > max_runs:
        cells = cells[rng.choice(len(cells), max_runs, replace=False)]
    cells = cells[rng.random(len(cells)) >= missing] if missing else cells
    idx = np.repeat(cells, repeats, axis=0)
    n = len(idx)
    rep = np.tile(np.arange(repeats), len(cells))
    effect = np.ones(n)
    for j, f in enumerate(factors):
        effect *= (1 + idx[:, j]) ** rng.uniform(-0.5, 0.8)
    ok = rng.random(n) >= failing
    outcome = np.where(ok, "ok", rng.choice(["error", "timeout", "refused"], n))
    reason = np.where(ok, "", rng.choice(REASONS, n))
    start = np.datetime64("2026-11-22T14:00:00", "ns")
    if time:
        span = rng.choice([600, 3600 * 6, 86400 * 2.4, 86400 * 40])
        offsets = np.sort(rng.uniform(0, span, n))
        order = rng.permutation(n)
        tt = start + (offsets[order] * 1e9).astype("timedelta64[ns]")
    else:
        tt = start + (np.arange(n) * 20 * 1e9).astype("timedelta64[ns]")

    def var(values, units, long_name, mask=None):
        values = np.asarray(values, dtype=float)
        values = np.where(ok if mask is None else ok & mask, values, np.nan)
        return xr.DataArray(values, dims="run", attrs={"units": units, "long_name": long_name})

    # (run ids: one part per factor, as runs.csv names them)
    runs = ["-".join(f"{f['name']}{f['levels'][c]}" for f, c in zip(factors, row)) + f"-r{r}"
            for row, r in zip(idx, rep)]
    runs = [f"{i:06d}-{r}" for i, r in enumerate(runs)] if time else runs
    coords = {"run": ("run", np.asarray(runs, dtype=str)), "repeat": ("run", rep),
              "time": ("run", tt)}
    for j, f in enumerate(factors):
        levels = np.asarray(f["levels"])[idx[:, j]] if n else np.asarray([], dtype=np.asarray(f["levels"]).dtype)
        coords[f["name"]] = ("run", levels, {"units": f["units"] or "1", "long_name": f"factor {f['name']}"})
    data = {"outcome": ("run", outcome), "reason": ("run", reason),
            "source": ("run", np.asarray([f"runs/{r}.json" for r in runs], dtype=str))}
    if "tcp" in metrics or "udp" in metrics:
        base = rng.uniform(1e6, 5e9)
        tput = base * effect * rng.lognormal(0, 0.1, n)
        data["throughput"] = var(tput, "bit/s", "throughput (receiver)")
        data["throughput_sender"] = var(tput * 1.01, "bit/s", "throughput (sender)")
        data["duration"] = var(np.full(n, 10.0), "s", "duration")
        if "tcp" in metrics:
            data["retransmits"] = var(rng.poisson(5, n), "count", "retransmits")
        if "udp" in metrics:
            data["loss_fraction"] = var(rng.beta(1, 20, n), "1", "datagrams lost")
            data["jitter"] = var(rng.gamma(2, 0.1, n), "ms", "jitter")
    if "ping" in metrics:
        rtt = rng.uniform(0.05, 300) * effect ** 0.3 * rng.lognormal(0, 0.05, n)
        for k, m in (("rtt_min", 0.9), ("rtt_median", 1.0), ("rtt_mean", 1.02), ("rtt_max", 1.5)):
            data[k] = var(rtt * m, "ms", f"ping {k[4:]}")
        data["ping_loss"] = var(rng.beta(1, 50, n), "1", "ping loss")
    ds = xr.Dataset(data, coords=coords)
    ds.attrs = {"kind": "campaign", "campaign": name or f"design-{seed}", "campaign_kind": "design",
                "title": f"Random design {seed}", "factors": json.dumps(factors),
                "design_time": int(time),
                "metadata": json.dumps({"name": name or f"design-{seed}", "title": f"Random design {seed}",
                                        "kind": "design", "factors": factors, "time": time,
                                        "description": "A generated design."})}
    return ds


def assert_runs_are_their_logs(ds, directory):
    """Every run of a design recorded with iperf3 (``thruput record design``) holds what its
    JSON log says: the receiver's bit/s, the congestion control and the socket buffer."""
    for run in ds.run.values:
        one = ds.sel(run=run)
        log = json.loads((directory / str(one.source.values)).read_text())
        assert float(one.throughput) == log["end"]["sum_received"]["bits_per_second"]
        assert log["end"]["sender_tcp_congestion"] == str(one.cc.values)
        assert log["start"]["sock_bufsize"] == int(one.socket_buffer)
