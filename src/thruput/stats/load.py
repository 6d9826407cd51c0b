"""Round-trip time and loss with and without load, and RTT growth with throughput.

Seed 000 pings while iperf runs ("loaded") and in the pause after it ("unloaded") and
reports min/avg/max loaded RTT and loaded loss per host pair; seed 002 plots web100's
smoothed RTT against throughput ("as the throughput starts to exceed 300 Mbits/sec the
smoothed RTT increases by up to a factor of 5").

References
----------
.. [1] B. Efron, R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall,
   1993, ch. 13 and 16 (two-sample percentile intervals).
.. [2] C. Spearman, "The proof and measurement of association between two things",
   American Journal of Psychology 15(1), 72-101, 1904.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

from .defaults import CONFIDENCE, N_BOOT, SEED

import numpy as np
import pandas as pd
import scipy.stats
import xarray as xr

from ._util import alpha_bounds, as_dims, cell_rngs, labelled, quiet, units_of
from .summaries import bootstrap_samples

__all__ = ["rtt_load", "rtt_growth", "trend_vs_throughput", "REPLY", "NO_REPLY"]

#: Probe statuses whose RTT is a measurement of the path (duplicates are left out: they
#: repeat a reply already counted).
REPLY = ("reply",)
#: Probe statuses that count as sent without an answer (lost).
NO_REPLY = ("lost", "unreachable", "error")


def median_difference(a, b, n_boot, confidence, rng):
    """``median(b) - median(a)`` and its percentile-bootstrap interval (two samples
    resampled independently, Efron & Tibshirani [1]_ ch. 16); NaN when either is empty."""
    if a.size == 0 or b.size == 0:
        return np.nan, np.nan, np.nan
    lo_q, hi_q = alpha_bounds(confidence)
    reps = (bootstrap_samples(b, np.median, n_boot, rng)
            - bootstrap_samples(a, np.median, n_boot, rng))
    low, high = np.quantile(reps, [lo_q, hi_q])
    return float(np.median(b) - np.median(a)), float(low), float(high)


def rtt_load(rtt: xr.DataArray, status: xr.DataArray | None = None, pool: Sequence[str] = ("repeat", "probe"),
             phase_dim: str = "phase", loaded: str = "loaded", unloaded: str = "unloaded",
             n_boot: int = N_BOOT, confidence: float = CONFIDENCE, seed: int = SEED) -> xr.Dataset:
    """RTT statistics per phase (loaded / unloaded) and their difference, per cell.

    Parameters
    ----------
    rtt : xarray.DataArray
        Ping round-trip times, ms, with ``phase_dim`` and the ``pool`` dimensions
        (a campaign's ``rtt``: window, streams, repeat, phase, probe). NaN = no reply or
        padding.
    status : xarray.DataArray, optional
        Probe outcomes on the same dimensions (a campaign's ``rtt_status``). With it,
        only ``"reply"`` probes count as RTTs and lost probes are counted; without it,
        every finite RTT counts and ``sent``/``lost`` are NaN.
    pool : sequence of str, default ("repeat", "probe")
        Dimensions pooled into one sample per cell and phase. Add ``"window"`` and
        ``"streams"`` for one row per campaign, as seed 000's per-host table.
    phase_dim, loaded, unloaded : str
        The phase dimension and its two labels.
    n_boot, confidence, seed
        Bootstrap of the difference of medians (resamples, coverage, seed).

    Returns
    -------
    xarray.Dataset
        Per cell and phase: ``n`` (RTTs, count), ``min``, ``mean``, ``median``, ``p90``,
        ``max`` (ms), ``sent``, ``lost`` (probes, count) and ``loss_fraction`` (1).
        Per cell: ``difference`` (median loaded - median unloaded, ms) with
        ``difference_low``/``difference_high`` (bootstrap bounds) and ``ratio``
        (median loaded / median unloaded, 1).

    Notes
    -----
    Loaded and unloaded probes are resampled independently, each with replacement, and
    the interval is the percentile interval of the difference of medians [1]_. Probes
    within a run are not independent (queues persist for many pings), so the interval
    is narrower than one over runs would be; pool over runs first for a conservative
    one.
    """
    pool = as_dims(pool, rtt)
    as_dims(phase_dim, rtt)
    units = units_of(rtt, "ms")
    values = rtt.astype(float)
    if status is not None:
        st = status.astype(str)
        values = values.where(st.isin(list(REPLY)))
        sent = st.isin(list(REPLY + NO_REPLY)).sum(pool)
        lost = st.isin(list(NO_REPLY)).sum(pool)
    other = [d for d in rtt.dims if d not in pool and d != phase_dim]
    stacked = values.stack(_sample=list(pool)).transpose(*other, phase_dim, "_sample")
    stacked = stacked.drop_vars([c for c in stacked.coords if "_sample" in stacked[c].dims])
    arr = np.asarray(stacked.values, dtype=float)
    with quiet():
        stats = {
            "n": np.sum(np.isfinite(arr), axis=-1),
            "min": np.nanmin(arr, axis=-1),
            "mean": np.nanmean(arr, axis=-1),
            "median": np.nanmedian(arr, axis=-1),
            "p90": np.nanpercentile(arr, 90, axis=-1),
            "max": np.nanmax(arr, axis=-1),
        }
    dims = (*other, phase_dim)
    coords = {k: v for k, v in stacked.coords.items() if set(v.dims) <= set(dims)}
    long = {"n": "RTTs measured", "min": "minimum RTT", "mean": "mean RTT",
            "median": "median RTT", "p90": "90th percentile of RTT", "max": "maximum RTT"}
    out = {k: labelled(v, dims, coords, "count" if k == "n" else units, long[k])
           for k, v in stats.items()}
    if status is not None:
        out["sent"] = sent.transpose(*dims).assign_attrs(units="count", long_name="probes sent")
        out["lost"] = lost.transpose(*dims).assign_attrs(units="count", long_name="probes without reply")
        out["loss_fraction"] = (out["lost"] / out["sent"].where(out["sent"] > 0)).assign_attrs(
            units="1", long_name="fraction of probes without reply")
    else:
        nan = xr.full_like(out["n"], np.nan, dtype=float)
        out["sent"] = nan.assign_attrs(units="count", long_name="probes sent (unknown without status)")
        out["lost"] = nan.assign_attrs(units="count", long_name="probes without reply (unknown)")
        out["loss_fraction"] = nan.assign_attrs(units="1", long_name="fraction lost (unknown)")
    phases = list(stacked[phase_dim].values)
    i_l, i_u = phases.index(loaded), phases.index(unloaded)
    flat = arr.reshape(-1, arr.shape[-2], arr.shape[-1])
    shape = arr.shape[:-2]
    diff = np.full((flat.shape[0], 3), np.nan)
    for c, rng in enumerate(cell_rngs(seed, flat.shape[0])):
        a, b = flat[c, i_u], flat[c, i_l]
        diff[c] = median_difference(a[np.isfinite(a)], b[np.isfinite(b)], n_boot, confidence, rng)
    cell_coords = {k: v for k, v in coords.items() if phase_dim not in v.dims}
    out["difference"] = labelled(diff[:, 0].reshape(shape), other, cell_coords, units,
                                 "median loaded RTT minus median unloaded RTT")
    out["difference_low"] = labelled(diff[:, 1].reshape(shape), other, cell_coords, units,
                                     "lower bootstrap bound of the difference")
    out["difference_high"] = labelled(diff[:, 2].reshape(shape), other, cell_coords, units,
                                      "upper bootstrap bound of the difference")
    with quiet():
        ratio = stats["median"].take(i_l, axis=-1) / stats["median"].take(i_u, axis=-1)
    out["ratio"] = labelled(ratio, other, cell_coords, "1", "median loaded RTT / median unloaded RTT")
    return xr.Dataset(out, attrs={"pooled_dims": " ".join(pool), "n_boot": n_boot,
                                  "confidence": confidence, "seed": seed})


def trend_vs_throughput(throughput: xr.DataArray, other: xr.DataArray, window: int = 10,
                        baseline: float | None = None) -> xr.Dataset:
    """Another per-run quantity against throughput: sorted, smoothed, rank-correlated.

    Parameters
    ----------
    throughput : xarray.DataArray
        Per-run throughput (bit/s), e.g. a campaign's ``throughput``.
    other : xarray.DataArray
        Per-run quantity on dimensions that broadcast against ``throughput`` (smoothed
        RTT in ms, congestion signals in counts, ...).
    window : int, default 10
        Length of the trailing moving average, in runs (seed 002: "moving averages of
        the last 10 points").
    baseline : float, optional
        Value that ``growth`` is relative to (units of ``other``); default: the first
        full moving average, i.e. the ``window`` lowest-throughput runs.

    Returns
    -------
    xarray.Dataset
        On dimension ``run`` in order of increasing throughput (runs with NaN in either
        left out; the original coordinates of each run kept): ``throughput``, ``value``
        (``other``), ``smoothed`` (trailing mean of ``value`` over ``window`` runs,
        NaN for the first ``window - 1``) and ``growth`` (``smoothed / baseline``, 1);
        scalars ``max_growth`` (1), ``spearman_rho`` (1) and ``spearman_p`` (1).

    Notes
    -----
    Spearman's rank correlation [2]_ (:func:`scipy.stats.spearmanr`) says whether
    ``other`` rises with throughput without assuming a shape; the moving average is the
    visual guide of seed 002.
    """
    tp, ov = xr.broadcast(throughput.astype(float), other.astype(float))
    tp = tp.stack(_run=list(tp.dims)) if tp.dims else tp.expand_dims("_run")
    ov = ov.stack(_run=list(ov.dims)) if ov.dims else ov.expand_dims("_run")
    if isinstance(tp.indexes.get("_run"), pd.MultiIndex):
        tp = tp.reset_index("_run")
    ok = np.isfinite(tp.values) & np.isfinite(ov.values)
    order = np.flatnonzero(ok)[np.argsort(tp.values[ok], kind="stable")]
    tp, ov = tp.isel(_run=order), ov.isel(_run=order)
    smooth = pd.Series(ov.values).rolling(window, min_periods=window).mean().to_numpy()
    if baseline is None:
        valid = smooth[np.isfinite(smooth)]
        baseline = valid[0] if valid.size else np.nan
    with quiet():
        growth = smooth / baseline
        max_growth = np.nanmax(growth) if np.isfinite(growth).any() else np.nan
    if order.size >= 3:
        rho, p = scipy.stats.spearmanr(tp.values, ov.values)
    else:
        rho = p = np.nan
    # each run keeps the coordinates of its cell (window, streams, repeat, ...)
    run_coords: dict[Hashable, Any] = {name: ("run", coord.values, dict(coord.attrs))
                  for name, coord in tp.coords.items()
                  if coord.dims == ("_run",) and name not in ("_run", "run")}
    run_coords["run"] = np.arange(order.size)
    ounits, oname = units_of(other), other.attrs.get("long_name", other.name or "value")

    def lab(v, units, what):
        return xr.DataArray(v, dims="run", coords=run_coords, attrs={"units": units, "long_name": what})

    return xr.Dataset({
        "throughput": lab(tp.values, units_of(throughput, "bit/s"), "throughput of the run"),
        "value": lab(ov.values, ounits, oname),
        "smoothed": lab(smooth, ounits, f"moving average of the last {window} runs"),
        "growth": lab(growth, "1", "smoothed value / baseline"),
        "max_growth": xr.DataArray(max_growth, attrs={"units": "1", "long_name": "largest growth"}),
        "spearman_rho": xr.DataArray(rho, attrs={"units": "1", "long_name": "Spearman rank correlation"}),
        "spearman_p": xr.DataArray(p, attrs={"units": "1", "long_name": "two-sided p-value of rho = 0"}),
    }, attrs={"window": window, "baseline": float(baseline)})


def rtt_growth(throughput: xr.DataArray, rtt: xr.DataArray, window: int = 10,
               baseline: float | None = None) -> xr.Dataset:
    """How far RTT grows as throughput rises (seed 002's "up to a factor of 5").

    Parameters
    ----------
    throughput : xarray.DataArray
        Per-run throughput, bit/s.
    rtt : xarray.DataArray
        Per-run RTT, ms: web100/tcp_info smoothed RTT, or the median loaded ping RTT of
        each run (``rtt.sel(phase="loaded").median("probe")``).
    window : int, default 10
        Trailing moving-average length, runs.
    baseline : float, optional
        RTT that growth is relative to, ms (e.g. the unloaded median); default: the
        mean of the ``window`` lowest-throughput runs.

    Returns
    -------
    xarray.Dataset
        As :func:`trend_vs_throughput`; ``max_growth`` is the largest factor by which
        the smoothed RTT exceeds the baseline.

    Notes
    -----
    A thin, named use of :func:`trend_vs_throughput` (Spearman [2]_).
    """
    return trend_vs_throughput(throughput, rtt, window=window, baseline=baseline)
