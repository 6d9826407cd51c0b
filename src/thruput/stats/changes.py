"""Change points: where the level of a monitored series shifts, with uncertainty.

Seed 002 measured SLAC to ANL on dated days around a link upgrade (5 Nov 2001) and a
window change at the far end (7 Nov); seed 004 saw CERN to RAL throughput shift between
August and September. :func:`change_points` finds such shifts in one series (one path,
direction, test and buffer), says when each happened with a confidence interval, and
how large it was.

References
----------
.. [1] R. Killick, P. Fearnhead, I. A. Eckley, "Optimal detection of changepoints with a
   linear computational cost", Journal of the American Statistical Association
   107(500), 1590-1598, 2012 (PELT).
.. [2] C. Truong, L. Oudre, N. Vayatis, "Selective review of offline change point
   detection methods", Signal Processing 167, 107299, 2020 (``ruptures``).
.. [3] M. Hušková, C. Kirch, "Bootstrapping confidence intervals for the change-point
   of time series", Journal of Time Series Analysis 29(6), 947-972, 2008.
.. [4] G. Schwarz, "Estimating the dimension of a model", The Annals of Statistics
   6(2), 461-464, 1978 (BIC).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

import numpy as np
import pandas as pd
import xarray as xr

from ..formatting import duration
from ._util import alpha_bounds, units_of
from .defaults import CONFIDENCE, N_BOOT, SEED
from .load import median_difference
from .periodic import MIN_CYCLES, dominant_period, time_series

__all__ = ["change_points", "robust_scale", "PENALTY", "MIN_SIZE", "CHANGE_VARIABLES"]

#: Penalty per change, in units of ``log(n)`` on the series scaled to unit noise. BIC [4]_
#: charges ``2 log(n)`` for one change of mean (its location and the new level); 3 is
#: stricter because monitoring series are not white noise (cross traffic lingers from
#: one slot to the next). Measured false-alarm rate on white noise: see
#: docs/statistics-monitoring.md and tests/test_stats_changes.py.
PENALTY = 3.0
#: Fewest values in a segment: a "level" needs a few runs to be one.
MIN_SIZE = 5
#: Floor of the noise scale, relative to the series' median: a tool that reports rounded
#: values (UDP at a fixed rate, ping in 0.001 ms) has most first differences exactly 0,
#: so the MAD would call kbit/s wiggles on 20 Mbit/s "levels".
MIN_RELATIVE_SCALE = 1e-3
#: ``period="auto"`` removes levels between changes at least 1/AUTO_SEGMENTS of the series
#: apart before the periodogram (finer ones would cut a cycle into levels).
AUTO_SEGMENTS = 4
#: Consistency factor of the median absolute deviation for Gaussian noise.
MAD_TO_SIGMA = 1.4826
#: Variables of the result, in order, with their long names (units follow the input).
CHANGE_VARIABLES = {
    "time": "first run after the change",
    "time_lower": "lower confidence bound of the change's time: the last run before its earliest location",
    "time_upper": "upper confidence bound of the change's time: the first run after its latest location",
    "index": "position of the first run after the change in the time-ordered series",
    "before": "median of the segment before the change",
    "after": "median of the segment after the change",
    "shift": "after - before (difference of segment medians)",
    "shift_lower": "lower bootstrap bound of the shift",
    "shift_upper": "upper bootstrap bound of the shift",
}


def robust_scale(v: ArrayLike) -> float:
    """Noise scale of a series that may shift level: MAD of first differences / sqrt 2.

    Differences cancel the level, so a few shifts barely move the estimate; the MAD
    ignores outliers. Gaussian-consistent (x 1.4826). Returns 0 for fewer than 3 values.
    """
    v = np.asarray(v, dtype=float)
    if v.size < 3:
        return 0.0
    d = np.diff(v)
    return float(MAD_TO_SIGMA * np.median(np.abs(d - np.median(d))) / np.sqrt(2))


def _rolling_level(seconds, v, period):
    """Centred rolling median over as many values as the first ``period`` seconds hold."""
    width = max(3, int(np.sum(seconds - seconds[0] < period)))
    return pd.Series(v).rolling(width, center=True, min_periods=1).median().to_numpy()


def _residual_scale(seconds, x, period):
    """Noise scale of a de-cycled series: MAD of its deviations from a one-period rolling
    median, so that what is left of the cycle counts as noise, not as level shifts."""
    resid = x - _rolling_level(seconds, x, period)
    return float(MAD_TO_SIGMA * np.median(np.abs(resid - np.median(resid))))


def _seasonal(seconds, v, period, bins=24):
    """The cycle of period ``period`` s in ``v``: median per phase bin of ``v`` minus its
    rolling median over one period (so a level shift does not leak into the profile)."""
    phase = np.floor((seconds % period) / period * bins).astype(int)
    resid = v - _rolling_level(seconds, v, period)
    profile = np.zeros(bins)
    for b in range(bins):
        if np.any(phase == b):
            profile[b] = np.median(resid[phase == b])
    return profile[phase]


def _best_split(x, lo, hi, min_size):
    """The one split of ``x[lo:hi]`` minimising the within-segment squared error."""
    seg = x[lo:hi]
    n = seg.size
    k = np.arange(min_size, n - min_size + 1)
    if k.size == 0:
        return None
    c = np.cumsum(seg)
    c2 = np.cumsum(seg ** 2)
    left = c2[k - 1] - c[k - 1] ** 2 / k
    right = (c2[-1] - c2[k - 1]) - (c[-1] - c[k - 1]) ** 2 / (n - k)
    return lo + int(k[np.argmin(left + right)])


def change_points(values: xr.DataArray, time: xr.DataArray | None = None, penalty: float = PENALTY,
                  min_size: int = MIN_SIZE, period: float | str | None = None, n_boot: int = N_BOOT,
                  confidence: float = CONFIDENCE, seed: int = SEED) -> xr.Dataset:
    """Where the level of a series shifts, when (with bounds) and by how much.

    Parameters
    ----------
    values : xarray.DataArray
        One homogeneous series (e.g. the throughput of one path, direction, test and
        socket buffer, bit/s), any shape; NaN values (failed runs) are left out.
    time : xarray.DataArray, optional
        When each value was measured (datetime64), broadcastable against ``values``;
        default: the datetime64 coordinate of ``values``.
    penalty : float, default :data:`PENALTY` (3)
        Cost of one more change, in units of ``log(n)`` on the series divided by its
        :func:`robust_scale`. Larger finds fewer changes.
    min_size : int, default :data:`MIN_SIZE` (5)
        Fewest runs in a segment.
    period : float or "auto", optional
        Length of a cycle in seconds (86400 for a real day; a compressed campaign's
        ``schedule.day_s``). When given, the cycle's profile is subtracted before the
        search and every segment must last at least one period, so that a daily cycle
        is not taken for a sequence of level shifts. Used only where the series spans
        :data:`~thruput.stats.periodic.MIN_CYCLES` (2) periods or more: a shorter one
        is searched without it (segments of ``min_size`` runs), and the result's
        ``period_reason`` says so. ``"auto"``: the period of the series' own
        periodogram where significant (:func:`~thruput.stats.periodic.dominant_period`),
        else none.
    n_boot : int, default :data:`thruput.stats.DEFAULTS` ``bootstrap`` (1000)
        Bootstrap resamples for the bounds.
    confidence : float, default 0.95
        Coverage of the two-sided bounds.
    seed : int, default :data:`thruput.stats.DEFAULTS` ``seed``
        Seed of the bootstrap; the same seed gives the same bounds.

    Returns
    -------
    xarray.Dataset
        On dimension ``change`` (length 0 when none is found), in time order:
        ``time``, ``time_lower``, ``time_upper`` (datetime64, UTC), ``index`` (1),
        ``before``, ``after``, ``shift``, ``shift_lower``, ``shift_upper`` (units of
        ``values``). Attrs: ``n`` (values used), ``scale`` (noise scale, units of
        ``values``), ``period_used`` (s, "" for none), ``period_reason`` (which period
        and why) and every parameter.

    Notes
    -----
    *Search.* The series, in time order and divided by its noise scale (median absolute
    deviation of first differences over sqrt 2, Gaussian-consistent: insensitive to the
    level shifts themselves), is segmented by PELT [1]_ as implemented in ``ruptures``
    [2]_ (``KernelCPD(kernel="linear")``, its compiled least-squares cost): the exact
    minimiser of the sum of within-segment squared deviations plus ``penalty x log(n)``
    per change. BIC [4]_
    would charge ``2 log n``; the default 3 keeps the false-alarm rate on white noise
    low (measured in docs/statistics-monitoring.md).

    *Bounds.* For each change, the two segments on either side are resampled: each
    keeps its own median plus residuals drawn with replacement from that segment
    (residual bootstrap, Hušková & Kirch [3]_, who study it for dependent data too).
    In every resample the single best split between the neighbouring changes is found
    again; the ``(1 - confidence)/2`` and ``(1 + confidence)/2`` quantiles of its
    position give ``time_lower`` and ``time_upper``. The shift is the difference of
    the two segments' medians, its interval a two-sample percentile bootstrap.

    With ``period``, the cycle's profile (median per 1/24 of the period of the
    deviations from a one-period rolling median) is subtracted, and the noise scale is
    the MAD of what is left around that rolling median. The profile is pooled over the
    whole series: if the cycle changes shape at a change (a window-limited series that
    becomes capacity-limited), what is left of it could show as changes of about its
    amplitude; segments of at least one period (as many runs as the first period
    holds) keep it from being cut into half cycles.

    *Pruning.* A change whose shift interval contains 0 is dropped (the weakest first:
    smallest shift relative to its interval) and the others are bounded again, until
    every reported shift is distinguishable from none at ``confidence``. The noise scale
    is never below :data:`MIN_RELATIVE_SCALE` x the median, for tools that round.

    The location bounds are in runs, mapped to the runs' times: ``time_lower`` is the
    last run before the earliest location found, ``time_upper`` the first run after the
    latest, so a change made between two runs is always inside its bounds (they are
    never narrower than the gap between the last run before the change and the first
    after it); on a series with gaps the interval may span a gap.

    With ``period="auto"``, the levels between the changes found without a period (in
    segments of at least a quarter of the series) are removed, and the highest peak of the Lomb-Scargle periodogram of what is left is the
    period where its false-alarm probability (Zechmeister & Kürster's single-frequency
    distribution over ``span / shortest period`` independent frequencies, Horne &
    Baliunas) is at most 0.01; otherwise the series has no period. The shift's interval treats runs as independent;
    slowly varying cross traffic makes it too narrow.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> t = np.datetime64("2001-11-01") + np.arange(60).astype("timedelta64[h]")
    >>> v = xr.DataArray(np.r_[np.full(30, 100.0), np.full(30, 60.0)]
    ...                  + np.tile([-1.0, 1.0, 0.5, -0.5], 15),
    ...                  dims="run", coords={"time": ("run", t)}, attrs={"units": "Mbit/s"})
    >>> c = change_points(v)
    >>> str(c["time"].values[0])[:19], float(c["shift"][0])
    ('2001-11-02T06:00:00', -40.0)
    """
    t, v = time_series(values, time)
    requested = period
    period, reason = _period_used(t, v, period, penalty, min_size)
    scale = robust_scale(v)
    x = v.copy()
    if period is not None:
        seconds = (t - t[0]) / np.timedelta64(1, "s")
        x = x - _seasonal(seconds, v, period)
        scale = _residual_scale(seconds, x, period)
        min_size = max(min_size, int(np.sum(seconds - seconds[0] < period)))
    scale = max(scale, MIN_RELATIVE_SCALE * abs(float(np.median(v)))) if v.size else scale
    breaks = _search(x, scale, min_size, penalty)
    rows = _bounded(t, v, x, breaks, min_size, n_boot, confidence, seed)
    while rows and (weak := [i for i, r in enumerate(rows) if r[7] <= 0 <= r[8]]):
        # a shift whose interval holds 0 is not a change: drop the weakest, bound the rest again
        del breaks[min(weak, key=lambda i: abs(rows[i][6]) / max(rows[i][8] - rows[i][7], 1e-300))]
        rows = _bounded(t, v, x, breaks, min_size, n_boot, confidence, seed)
    return _result(rows, units_of(values), values, v.size, scale,
                   dict(penalty=penalty, min_size=min_size, period=requested, n_boot=n_boot,
                        confidence=confidence, seed=seed, period_used=period,
                        period_reason=reason))


def _search(x, scale, min_size, penalty):
    """PELT on ``x / scale``: the positions of the changes (first value after each)."""
    if x.size < 2 * min_size or not scale > 0:
        return []
    import ruptures  # here, not at the top: importing thruput.stats stays fast

    algo = ruptures.KernelCPD(kernel="linear", min_size=min_size).fit((x / scale)[:, None])
    return [b for b in algo.predict(pen=penalty * np.log(x.size)) if b < x.size]


def _period_used(t, v, period, penalty, min_size):
    """``(period in s or None, why)``: ``period`` as given, found (``"auto"``), or none
    when the series spans fewer than :data:`MIN_CYCLES` periods."""
    if period is None or period == "":
        return None, "no period given: no cycle removed"
    span = float((t[-1] - t[0]) / np.timedelta64(1, "s")) if t.size else 0.0
    if isinstance(period, str):
        if period != "auto":
            raise ValueError(f"period must be a number of seconds, None or 'auto', not {period!r}")
        scale = max(robust_scale(v), MIN_RELATIVE_SCALE * abs(float(np.median(v))) if v.size else 0)
        # coarse levels (segments of a quarter of the series at least), so that a step
        # does not pass for a long period and a cycle is not cut into "levels"
        edges = [0, *_search(v, scale, max(min_size, v.size // AUTO_SEGMENTS), penalty), v.size]
        level = np.concatenate([np.full(hi - lo, np.median(v[lo:hi])) for lo, hi in
                                zip(edges[:-1], edges[1:]) if hi > lo] or [np.array([])])
        found = dominant_period(xr.DataArray(v - level, dims="run", coords={"time": ("run", t)}))
        if found["period_s"] is None:
            return None, f"period 'auto': {found['reason']}"
        return found["period_s"], f"period 'auto': {found['reason']}"
    period = float(period)
    if span < MIN_CYCLES * period:
        return None, (f"the series spans {duration(span, 4)}, less than {MIN_CYCLES} periods of "
                      f"{duration(period, 4)}: no cycle removed")
    return period, f"period {duration(period, 4)} given"


def _bounded(t, v, x, breaks, min_size, n_boot, confidence, seed):
    """Rows of the result for ``breaks``: location bounds by re-splitting resampled
    neighbouring segments, shift bounds by a two-sample bootstrap of the medians."""
    lo_q, hi_q = alpha_bounds(confidence)
    rng = np.random.default_rng(seed)
    edges = [0, *breaks, v.size]
    rows = []
    for j, k in enumerate(breaks):
        lo, hi = edges[j], edges[j + 2]
        a, b = x[lo:k], x[k:hi]
        ra, rb = a - np.median(a), b - np.median(b)
        found = np.empty(n_boot, dtype=int)
        for r in range(n_boot):
            y = np.concatenate([np.median(a) + rng.choice(ra, ra.size),
                                np.median(b) + rng.choice(rb, rb.size)])
            found[r] = _best_split(y, 0, y.size, min(min_size, a.size, b.size)) + lo
        k_lo, k_hi = np.quantile(found, [lo_q, hi_q], method="inverted_cdf")
        # between the last run before the earliest location and the first run after the
        # latest: the change happened somewhere in that gap, never narrower than one gap
        k_lo, k_hi = min(int(k_lo), k), max(int(k_hi), k)
        shift, s_lo, s_hi = median_difference(v[lo:k], v[k:hi], n_boot, confidence, rng)
        rows.append((t[k], t[k_lo - 1], t[k_hi], k, np.median(v[lo:k]), np.median(v[k:hi]),
                     shift, s_lo, s_hi))
    return rows


def _result(rows, units, values, n, scale, params):
    cols = list(zip(*rows)) if rows else [[] for _ in CHANGE_VARIABLES]
    data = {}
    for (name, long_name), col in zip(CHANGE_VARIABLES.items(), cols):
        if name.startswith("time"):
            arr, attrs = np.array(col, dtype="datetime64[ns]"), {"long_name": long_name}
        elif name == "index":
            arr, attrs = np.array(col, dtype=int), {"units": "1", "long_name": long_name}
        else:
            arr, attrs = np.array(col, dtype=float), {"units": units, "long_name": long_name}
        data[name] = xr.DataArray(arr, dims="change", attrs=attrs)
    label = values.attrs.get("long_name", values.name or "value")
    params = {k: ("" if v is None else v) for k, v in params.items()}
    return xr.Dataset(data, attrs={"n": n, "scale": scale, "scale_units": units,
                                   "of": str(label), **params,
                                   "method": "PELT, least squares (ruptures KernelCPD linear) + residual bootstrap"})
