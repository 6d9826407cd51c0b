"""One-line summaries of a contract Dataset, by kind (what ``thruput inspect`` prints)."""

from __future__ import annotations

import json
import math

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
    summary = dict(runs[0]) if len(runs) == 1 else {key: None for key in runs[0]} if runs else {}
    summary["runs"] = len(runs)
    summary["per_run"] = runs
    return summary


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
    return {
        "sent": int(sent),
        "received": int(received),
        "duplicates": int((status == "duplicate").sum()),
        "loss_fraction": _num(1 - received / sent) if sent else None,
        "rtt_ms": rtt,
        "rtt_source": "ping summary" if own else "probes",
        "rtt_ms_probes": probes,
    }


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


_BY_KIND = {
    "throughput": _throughput,
    "rtt": _rtt,
    "udp_sweep": _udp_sweep,
    "latency_scan": _latency_scan,
    "tcp_instrumentation": _tcp_instrumentation,
}
