"""One-line summaries of a contract Dataset, by kind (what ``thruput inspect`` prints)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np

__all__ = ["summarize", "line_accounting"]


def summarize(ds):
    """Return a JSON-ready dict of the headline numbers of ``ds`` (see ``thruput inspect``)."""
    return _BY_KIND[ds.attrs["kind"]](ds)


def line_accounting(ds):
    """The ledger attrs of ``ds`` as ``{total, parsed, skipped, skipped_reasons}``."""
    return {
        "total": int(ds.attrs["lines_total"]),
        "parsed": int(ds.attrs["lines_parsed"]),
        "skipped": int(ds.attrs["lines_skipped"]),
        "skipped_reasons": json.loads(ds.attrs["skipped_reasons"]),
    }


def _num(value):
    """A float for JSON, or None for NaN/missing."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _int(value):
    value = _num(value)
    return None if value is None else int(round(value))


def _throughput(ds):
    runs = []
    for i in range(ds.sizes["run"]):
        r = ds.isel(run=i)
        runs.append({
            "throughput_bps": _num(r["throughput"]),
            "streams": _int(r["streams"]),
            "duration_s": _num(r["duration"]),
            "protocol": str(r["protocol"].values),
            "window_requested_bytes": _int(r["window_requested"]),
            "window_actual_bytes": _int(r["window_actual"]),
            "loss_fraction": _num(r["loss_fraction"]),
        })
    summary = dict(runs[0]) if len(runs) == 1 else {key: _across(runs, key) for key in runs[0]} if runs else {}
    summary["runs"] = len(runs)
    summary["per_run"] = runs
    return summary


def _across(runs, key):
    """One field over the runs of a series (an esmond time series, an archive dump): the
    value where every run has the same, else the median, min and max of the runs' numbers
    (and how many runs have one), else the distinct values joined."""
    values = [r[key] for r in runs]
    if all(v == values[0] for v in values):
        return values[0]
    numbers = np.array([v for v in values if isinstance(v, (int, float))], dtype=float)
    if numbers.size and len(numbers) == sum(v is not None for v in values):
        return {"median": float(np.median(numbers)), "min": float(numbers.min()),
                "max": float(numbers.max()), "runs": int(numbers.size)}
    return "/".join(sorted({str(v) for v in values if v is not None})) or None


#: Probe statuses whose RTT enters the statistics: iputils, BSD and BusyBox ping include
#: duplicates in their min/avg/max/mdev (they divide by received + duplicates).
RTT_STATUSES = ("reply", "duplicate")
#: ping's own statistics in ``tool_summary`` -> the key shown.
PING_RTT_KEYS = {"rtt_min": "min", "rtt_avg": "avg", "rtt_max": "max", "rtt_mdev": "mdev",
                 "rtt_stddev": "mdev"}


def _rtt(ds):
    """Counts and RTT statistics of a ping run.

    ``rtt_ms`` shows ping's own min/avg/max/mdev where it printed them (computed by ping
    from exact times; the times it prints per reply are rounded) and the probes' where it
    did not (``rtt_source`` says which); ping prints no percentiles, so median, p10 and p90
    are always the probes'. ``rtt_ms_probes`` holds the statistics of the parsed probes
    (replies and duplicates, as ping counts them), labelled as such.
    """
    # status as stored (names shared by reference): a fixed-width str copy of 12 M names is
    # 530 MB, and np.isin sorts one
    status = np.asarray(ds["status"].values)
    replies = int((status == "reply").sum())
    rtt = ds["rtt"].values
    timed = rtt[_any_of(status, RTT_STATUSES) & ~np.isnan(rtt)]     # (one copy, ours)
    printed = json.loads(ds.attrs["tool_summary"])
    sent = printed.get("transmitted", int(_any_of(status, ("reply", "lost", "unreachable", "error")).sum()))
    received = printed.get("received", replies)
    probes = {k: None for k in ("min", "avg", "max", "mdev", "median", "p10", "p90")}
    if timed.size:
        mean = float(timed.mean())
        # iputils' mdev: sqrt(mean of squares - square of mean), over replies and duplicates
        mdev = math.sqrt(max(float(np.dot(timed, timed)) / timed.size - mean * mean, 0.0))   # (no squared copy)
        low, high = float(timed.min()), float(timed.max())
        # last: partitions the copy in place (no second copy of 12 M round trips)
        p10, median, p90 = np.percentile(timed, [10, 50, 90], overwrite_input=True)
        probes = {"min": low, "avg": mean, "max": high, "mdev": mdev,
                  "median": float(median), "p10": float(p10), "p90": float(p90)}
    probes["count"] = int(timed.size)
    own = {PING_RTT_KEYS[k]: float(v) for k, v in printed.items() if k in PING_RTT_KEYS}
    rtt = {k: own.get(k, probes[k]) for k in ("min", "avg", "max", "mdev", "median", "p10", "p90")}
    out = {
        "sent": int(sent),
        "received": int(received),
        "duplicates": int((status == "duplicate").sum()),
        "loss_fraction": _num(1 - received / sent) if sent else None,
        "rtt_ms": rtt,
        "rtt_source": "ping summary" if own else "probes",
        "rtt_ms_probes": probes,
    }
    delay = _delay(ds)
    if delay is not None:
        out["delay_ms"] = delay
    return out


#: One-way delay statistics a latency reader holds beside (or instead of) probes, as
#: ``(prefix of min/mean/max/stddev, percentile variable, its percentile coordinate)``:
#: a pScheduler latency result's histogram (and an archived latency document's, per
#: document), an esmond series' pooled histogram.
DELAY_VARIABLES = (("pscheduler_delay_", "pscheduler_delay_percentile", "pscheduler_percentile"),
                   ("esmond_series_delay_", "esmond_series_delay_percentile", "esmond_percentile"))


def _delay(ds):
    """``{min, mean, max, stddev, p<q>...}`` (ms) of a latency reader's one-way delays, or
    None when the reader holds none. A reader's per-document values (an archive dump of
    several runs) are shown as their median."""
    for prefix, pct, coord in DELAY_VARIABLES:
        if f"{prefix}min" not in ds.variables or ds[f"{prefix}min"].ndim > 1:
            continue
        values = {k: ds[f"{prefix}{k}"].values.astype(float) for k in ("min", "mean", "max", "stddev")
                  if f"{prefix}{k}" in ds.variables}
        if pct in ds.variables and ds[pct].ndim <= 2:
            table = ds[pct].values.astype(float).reshape(-1, ds.sizes[coord])
            values.update({f"p{q:g}": table[:, j] for j, q in enumerate(ds[coord].values)})
        if not any(np.isfinite(v).any() for v in values.values()):
            return None
        with warnings.catch_warnings():          # (a document without a histogram: all NaN)
            warnings.simplefilter("ignore", RuntimeWarning)
            return {k: _num(np.nanmedian(v)) for k, v in values.items()}
    return None


def _any_of(values, names):
    """Where ``values`` is one of ``names`` (a bool array)."""
    mask = np.zeros(values.shape, dtype=bool)
    for name in names:
        mask |= values == name
    return mask


def _udp_sweep(ds):
    return {"rows": int(ds.sizes["row"]), "recv_rate_bps_max": _num(ds["recv_rate"].max(skipna=True))}


def _latency_scan(ds):
    size = ds["size"].values.astype(float)
    latency = ds["latency_avg"].values.astype(float)
    ok = ~(np.isnan(size) | np.isnan(latency))
    slope = intercept = None
    if ok.sum() >= 2:
        from .stats.latency import latency_line
        fit = latency_line(size[ok], latency[ok])
        slope, intercept = fit["slope"], fit["intercept"]
    return {"points": int(ds.sizes["point"]), "slope_us_per_byte": _num(slope), "intercept_us": _num(intercept)}


def _tcp_instrumentation(ds):
    time = ds["time"].values.astype(float)
    duration = float(np.nanmax(time) - np.nanmin(time)) if time.size and not np.isnan(time).all() else None
    variables = sorted(name for name in ds.data_vars if name != "line")
    return {"snapshots": int(ds.sizes["snapshot"]), "variables": len(variables), "duration_s": duration}


def _route(ds):
    """Target, hops and the path (each hop's first answering address, else its name
    where only that was printed, ``*`` where none answered)."""
    addresses, names = ds["hop_address"].values, ds["hop_name"].values
    path = [next((a or n for a, n in zip(row, named) if a or n), "*") for row, named in zip(addresses, names)]
    rtt = ds["hop_rtt"].values
    last = rtt[-1][~np.isnan(rtt[-1])] if rtt.size else np.array([])
    return {"target": ds.attrs.get("route_target_address", ""), "hops": int(ds.sizes["hop"]),
            "reached": bool(int(ds.attrs.get("route_reached", 0))),
            "last_hop_rtt_ms": _num(np.median(last)) if last.size else None,
            "path": " ".join(path)}


_BY_KIND = {
    "route": _route,
    "throughput": _throughput,
    "rtt": _rtt,
    "udp_sweep": _udp_sweep,
    "latency_scan": _latency_scan,
    "tcp_instrumentation": _tcp_instrumentation,
}
