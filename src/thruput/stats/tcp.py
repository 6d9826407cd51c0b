"""TCP instrumentation (web100, tcp_info) as per-run time series and summaries.

Seed 001 plots web100's cwnd through a transfer; seed 002 plots smoothed RTT and
congestion signals ("one or more packet losses within a single round trip time")
against throughput. The instrumentation reports cumulative counters; these functions
turn them into per-snapshot increments and rates.

References
----------
.. [1] M. Mathis, J. Heffner, R. Reddy, "Web100: extended TCP instrumentation for
   research, education and diagnosis", ACM SIGCOMM CCR 33(3), 2003.
.. [2] V. Paxson, M. Allman, J. Chu, M. Sargent, RFC 6298, "Computing TCP's
   retransmission timer", 2011 (smoothed RTT).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

import numpy as np
import xarray as xr

from ._util import quiet
from .load import trend_vs_throughput
from .theory import window_limited_throughput

__all__ = ["tcp_series", "tcp_summary", "congestion_vs_throughput", "counter_increments",
           "counter_total"]

#: Cumulative counters of the ``tcp_instrumentation`` kind and the name of their
#: per-snapshot increment in :func:`tcp_series`.
COUNTERS = {"retransmits_total": "retransmits", "congestion_signals": "congestion_signals"}
#: Gauges passed through unchanged when present.
GAUGES = ("cwnd", "ssthresh", "srtt", "rttvar", "mss")


def counter_increments(values: ArrayLike, groups: ArrayLike | None = None) -> np.ndarray:
    """Per-sample increments of a cumulative counter, reset-aware.

    Parameters
    ----------
    values : array_like
        Counter readings in order of time (count or byte); NaN = not reported.
    groups : array_like, optional
        Label of the connection each reading belongs to; increments are taken within
        each label.

    Returns
    -------
    numpy.ndarray
        ``values[i] - values[previous]``: NaN at each connection's first reading and
        where either reading is NaN; where the counter fell (a new connection reusing
        the label, a wrap), the new reading itself, as counted since the reset.

    Examples
    --------
    >>> counter_increments([0, 2, 5, 1, 4]).tolist()
    [nan, 2.0, 3.0, 1.0, 3.0]
    """
    v = np.asarray(values, dtype=float)
    out = np.full(v.shape, np.nan)
    labels = np.zeros(v.size, dtype=int) if groups is None else np.asarray(groups)
    for label in dict.fromkeys(labels.tolist()):
        idx = np.flatnonzero(labels == label)
        d = np.diff(v[idx])
        d = np.where(d < 0, v[idx][1:], d)
        out[idx[1:]] = d
    return out


def counter_total(values: ArrayLike, groups: ArrayLike | None = None) -> float:
    """Total of a cumulative counter that counts from the start of each connection.

    Parameters
    ----------
    values : array_like
        Counter readings in order of time (count or byte); NaN = not reported.
    groups : array_like, optional
        Connection label of each reading.

    Returns
    -------
    float
        Sum over connections of the first reading plus every later increment
        (:func:`counter_increments`), i.e. the last reading when the counter never fell;
        NaN when no reading is finite.

    Notes
    -----
    The contract's ``retransmits_total`` and ``congestion_signals`` count since the
    connection started, so the first reading already holds what happened before the
    first snapshot (web100 sidestream logs hold a single, final reading per connection).

    Examples
    --------
    >>> counter_total([5, 6, 8, 2, 3])      # a reset after 8: 8 + 3
    11.0
    """
    v = np.asarray(values, dtype=float)
    labels = np.zeros(v.size, dtype=int) if groups is None else np.asarray(groups)
    if not np.isfinite(v).any():
        return float("nan")
    inc = counter_increments(v, labels)
    total = 0.0
    for label in dict.fromkeys(labels.tolist()):
        idx = np.flatnonzero(labels == label)
        finite = idx[np.isfinite(v[idx])]
        if finite.size:
            total += v[finite[0]] + np.nansum(inc[finite[1:]])
    return float(total)


def _groups(ds):
    if "connection" in ds and ds["connection"].dims == ("snapshot",):
        return ds["connection"].values.astype(str)
    return None


def tcp_series(ds: xr.Dataset) -> xr.Dataset:
    """One run's TCP instrumentation as time series of gauges, increments and rates.

    Parameters
    ----------
    ds : xarray.Dataset
        A ``tcp_instrumentation`` Dataset: ``time`` (s), ``cwnd`` (byte), ``srtt`` (ms),
        ``retransmits_total`` (count) on ``snapshot``; optionally ``ssthresh``,
        ``rttvar``, ``mss``, ``bytes_acked``, ``congestion_signals`` and
        ``connection`` (several connections in one file are kept apart).

    Returns
    -------
    xarray.Dataset
        On ``snapshot``, with coordinate ``time`` (s): the gauges present (``cwnd``,
        ``ssthresh``, ``srtt``, ``rttvar``, ``mss``); ``retransmits`` and
        ``congestion_signals`` (increments since the previous snapshot of the same
        connection, count); ``throughput`` (``8 x`` increment of ``bytes_acked`` over
        the time step, bit/s) when ``bytes_acked`` is there; ``window_rate`` (cwnd /
        srtt, the rate the congestion window allows, bit/s).

    Notes
    -----
    Web100 counts a congestion signal once per window with losses [1]_; the smoothed
    RTT follows RFC 6298 [2]_. Counters that fall are taken as restarted
    (:func:`counter_increments`).
    """
    groups = _groups(ds)
    out = {}
    for name in GAUGES:
        if name in ds:
            out[name] = ds[name].astype(float)
    for name, inc in COUNTERS.items():
        if name in ds:
            out[inc] = xr.DataArray(counter_increments(ds[name].values, groups), dims="snapshot",
                                    attrs={"units": "count",
                                           "long_name": f"{inc.replace('_', ' ')} since the previous snapshot"})
    time = ds["time"].values.astype(float)
    dt = counter_increments(time, groups)
    if "bytes_acked" in ds:
        with quiet():
            rate = 8.0 * counter_increments(ds["bytes_acked"].values, groups) / np.where(dt > 0, dt, np.nan)
        out["throughput"] = xr.DataArray(rate, dims="snapshot", attrs={
            "units": "bit/s", "long_name": "throughput from bytes acknowledged in the step"})
    if "cwnd" in ds and "srtt" in ds:
        with quiet():
            rate = window_limited_throughput(ds["cwnd"].values.astype(float),
                                             ds["srtt"].values.astype(float) / 1e3)
        out["window_rate"] = xr.DataArray(np.where(np.isfinite(rate), rate, np.nan), dims="snapshot",
                                          attrs={"units": "bit/s", "long_name": "cwnd / srtt"})
    series = xr.Dataset(out).assign_coords(time=("snapshot", time, dict(ds["time"].attrs)))
    if groups is not None:
        series = series.assign_coords(connection=("snapshot", groups, dict(ds["connection"].attrs)))
    return series


def tcp_summary(ds: xr.Dataset) -> xr.Dataset:
    """Headline numbers of one run's TCP instrumentation.

    Parameters
    ----------
    ds : xarray.Dataset
        A ``tcp_instrumentation`` Dataset (see :func:`tcp_series`).

    Returns
    -------
    xarray.Dataset
        Scalars: ``duration`` (s), ``cwnd_median``, ``cwnd_max`` (byte),
        ``srtt_min``, ``srtt_median``, ``srtt_max`` (ms), ``srtt_growth`` (median /
        min, 1), ``retransmits`` and ``congestion_signals`` (totals of the run's
        connections, :func:`counter_total`, count; NaN when not reported) and
        ``throughput`` (bytes acknowledged between the first and last snapshot over
        that time, bit/s; NaN without ``bytes_acked`` or with one snapshot per
        connection).
    """
    s = tcp_series(ds)
    time = s["time"].values
    with quiet():
        duration = float(np.nanmax(time) - np.nanmin(time)) if np.isfinite(time).any() else np.nan

        def stat(name, f):
            return float(f(s[name].values)) if name in s and np.isfinite(s[name].values).any() else np.nan

        groups = _groups(ds)

        def total(name):
            return counter_total(ds[name].values, groups) if name in ds else np.nan

        srtt_min, srtt_med = stat("srtt", np.nanmin), stat("srtt", np.nanmedian)
        throughput = np.nan
        if "bytes_acked" in ds:
            steps = counter_increments(ds["bytes_acked"].values, groups)
            if np.isfinite(steps).any() and duration > 0:
                throughput = 8.0 * np.nansum(steps) / duration
    spec = {
        "duration": (duration, "s", "time from first to last snapshot"),
        "cwnd_median": (stat("cwnd", np.nanmedian), "byte", "median congestion window"),
        "cwnd_max": (stat("cwnd", np.nanmax), "byte", "largest congestion window"),
        "srtt_min": (srtt_min, "ms", "smallest smoothed RTT"),
        "srtt_median": (srtt_med, "ms", "median smoothed RTT"),
        "srtt_max": (stat("srtt", np.nanmax), "ms", "largest smoothed RTT"),
        "srtt_growth": (srtt_med / srtt_min if srtt_min > 0 else np.nan, "1",
                        "median smoothed RTT / smallest"),
        "retransmits": (total("retransmits_total"), "count", "segments retransmitted in the run"),
        "congestion_signals": (total("congestion_signals"), "count", "congestion signals in the run"),
        "throughput": (throughput, "bit/s", "mean throughput from bytes acknowledged"),
    }
    return xr.Dataset({k: xr.DataArray(v, attrs={"units": u, "long_name": ln})
                       for k, (v, u, ln) in spec.items()})


def congestion_vs_throughput(throughput: xr.DataArray, signals: xr.DataArray, window: int = 10) -> xr.Dataset:
    """Congestion signals (or retransmits) per run against the run's throughput.

    Parameters
    ----------
    throughput : xarray.DataArray
        Per-run throughput, bit/s.
    signals : xarray.DataArray
        Per-run congestion signals or retransmits, count, broadcastable against
        ``throughput`` (e.g. ``tcp_summary`` totals stacked over runs, or a campaign's
        ``retransmits``).
    window : int, default 10
        Trailing moving-average length, runs (seed 002).

    Returns
    -------
    xarray.Dataset
        As :func:`thruput.stats.load.trend_vs_throughput` (Spearman's rho says whether
        signals rise with throughput).
    """
    return trend_vs_throughput(throughput, signals, window=window)
