"""Cycles in long campaigns: Lomb-Scargle periodogram and the daily profile.

Seed 004 ran iperf and ping between CERN and RAL for weeks and saw "the cyclic variation
of the iperf transfers in September", with a gap of several days without tests. Runs of
a campaign are unevenly spaced in time, so the periodogram is Lomb-Scargle's, which
needs no regular sampling and no filling of gaps.

References
----------
.. [1] N. R. Lomb, "Least-squares frequency analysis of unequally spaced data",
   Astrophysics and Space Science 39, 447-462, 1976.
.. [2] J. D. Scargle, "Studies in astronomical time series analysis II", The
   Astrophysical Journal 263, 835-853, 1982.
.. [3] M. Zechmeister, M. Kürster, "The generalised Lomb-Scargle periodogram", Astronomy
   & Astrophysics 496, 577-584, 2009 (floating mean).
.. [5] J. H. Horne, S. L. Baliunas, "A prescription for period analysis of unevenly sampled
   time series", The Astrophysical Journal 302, 757-763, 1986 (independent frequencies).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

import numpy as np
import xarray as xr

from ..formatting import duration, number

from ._portable import dot_rows, geomspace, sincos
from ._util import alpha_bounds, cell_rngs, quiet, units_of
from .summaries import bootstrap_samples

__all__ = ["periodogram", "daily_cycle", "time_series", "false_alarm", "dominant_period",
           "FALSE_ALARM", "MIN_CYCLES"]

_HOUR = np.timedelta64(3600, "s")


def time_series(values: xr.DataArray, time: xr.DataArray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Flatten ``values`` and their times into two 1-D arrays, in time order, finite only.

    Parameters
    ----------
    values : xarray.DataArray
        Any quantity (e.g. a campaign's ``throughput``).
    time : xarray.DataArray, optional
        Times (datetime64) broadcastable against ``values`` (e.g. ``start_time``);
        default: the one datetime64 coordinate of ``values``.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Times (datetime64[ns]) and values (float), NaN/NaT pairs left out.
    """
    if time is None:
        found = [c for c in values.coords.values() if np.issubdtype(c.dtype, np.datetime64)]
        if len(found) != 1:
            raise ValueError("pass time=: values need exactly one datetime64 coordinate, "
                             f"found {[c.name for c in found]}")
        time = found[0]
    v: Any
    t: Any
    v, t = xr.broadcast(values.astype(float), time)
    v = np.asarray(v.values, dtype=float).ravel()
    t = np.asarray(t.values).astype("datetime64[ns]").ravel()
    ok = np.isfinite(v) & ~np.isnat(t)
    order = np.argsort(t[ok], kind="stable")
    return t[ok][order], v[ok][order]


#: Points of the fine grid on which the dominant peak is refined and its width measured.
PEAK_GRID = 401
#: The peak's interval: the periods around the maximum whose power stays above this
#: fraction of the maximum (half power, the usual "full width at half maximum").
PEAK_LEVEL = 0.5
#: Bins of the cycle's profile: 24 "hours" whatever the length of the day.
CYCLE_BINS = 24
#: Seconds in a day: the default cycle of :func:`daily_cycle`.
DAY_S = 86400.0
#: A periodogram's highest peak is a period when noise alone would give a peak as high
#: anywhere on the grid with at most this probability (:func:`false_alarm`).
FALSE_ALARM = 0.01
#: Cycles a series must span for a period to be estimated or removed: with fewer, a
#: "cycle" cannot be told from a level shift or a trend.
MIN_CYCLES = 2
#: Fewest values of a series :func:`dominant_period` looks for a period in.
MIN_FOR_PERIOD = 10


#: Frequencies x samples evaluated at once by :func:`_lombscargle` (its memory: some ten
#: float arrays of this many elements).
_BLOCK = 1 << 17


def _lombscargle(hours, v, periods):
    """Normalised generalised Lomb-Scargle power (0-1) of ``v`` at ``hours`` for each
    period (h): Zechmeister & Kürster's eqs. 5-20 with the phase offset ``tau`` that makes
    the sine and cosine uncorrelated, as :func:`scipy.signal.lombscargle` (``floating_mean``,
    ``normalize``) computes them, with ``sin``/``cos`` and sums that give the same bits on
    every CPU (:mod:`._portable`); ``tau`` is never formed, only its cosine and sine (half
    angles, from ``2 tau``'s, with ``sqrt``)."""
    hours = np.asarray(hours, dtype=float)
    y = np.asarray(v, dtype=float)
    y = y - np.add.reduce(y) / y.size          # (the floating mean makes this no change)
    n = y.size
    my = np.add.reduce(y) / n
    yy = np.add.reduce(y * y) / n - my ** 2
    omega = (2 * np.pi) / np.asarray(periods, dtype=float)
    tiny = np.finfo(float).epsneg
    power = np.empty(omega.size)
    step = max(1, _BLOCK // max(n, 1))
    with quiet():
        for at in range(0, omega.size, step):
            s, c = sincos(omega[at:at + step, None] * hours[None, :])
            mc, ms = _mean(c), _mean(s)
            cc = _mean(c, c) - mc * mc
            ss = _mean(s, s) - ms * ms
            cs = _mean(c, s) - mc * ms
            half = (cc - ss) / 2
            h = np.sqrt(half * half + cs * cs)
            flat = h == 0
            cos2 = np.where(flat, 1.0, half / np.where(flat, 1.0, h))
            cos_tau = np.sqrt((1 + cos2) / 2)[:, None]
            sin_tau = np.copysign(np.sqrt(np.maximum(1 - cos2, 0) / 2), cs)[:, None]
            c, s = c * cos_tau + s * sin_tau, s * cos_tau - c * sin_tau
            mc, ms = _mean(c), _mean(s)
            yc = _mean(c, y) - my * mc
            ys = _mean(s, y) - my * ms
            cc = np.maximum(_mean(c, c) - mc * mc, tiny)
            ss = np.maximum(_mean(s, s) - ms * ms, tiny)
            power[at:at + step] = (yc * yc / cc + ys * ys / ss) / yy
    return power


def _mean(a, b=None):
    """Mean along the last axis of ``a``, or of ``a * b`` (``b`` broadcast against it)."""
    return (np.add.reduce(a, axis=-1) if b is None else dot_rows(a, b)) / a.shape[-1]


def _peak(hours, v, periods, power):
    """The dominant period refined on a fine frequency grid, and its half-power bounds."""
    best = int(np.nanargmax(power))
    span = hours[-1] - hours[0]
    f0 = 1 / periods[best]
    df = 2 / span if span > 0 else f0 / 10       # two natural resolutions 1/T either side
    freqs = np.linspace(max(f0 - df, f0 / 10), f0 + df, PEAK_GRID)
    fine = _lombscargle(hours, v, 1 / freqs)
    k = int(np.nanargmax(fine))
    above = fine >= PEAK_LEVEL * fine[k]
    lo = k
    while lo > 0 and above[lo - 1]:
        lo -= 1
    hi = k
    while hi < freqs.size - 1 and above[hi + 1]:
        hi += 1
    return 1 / freqs[k], fine[k], 1 / freqs[hi], 1 / freqs[lo]


def periodogram(values: xr.DataArray, time: xr.DataArray | None = None, periods: ArrayLike | None = None,
                n_periods: int = 500, min_period: float | None = None,
                max_period: float | None = None) -> xr.Dataset:
    """Generalised Lomb-Scargle periodogram of an unevenly sampled series.

    Parameters
    ----------
    values : xarray.DataArray
        The quantity (throughput in bit/s, RTT in ms, ...), any shape.
    time : xarray.DataArray, optional
        When each value was measured (datetime64), broadcastable against ``values``;
        default: the datetime64 coordinate of ``values``.
    periods : array_like, optional
        Periods to evaluate, h. Default: ``n_periods`` log-spaced values from
        ``min_period`` to ``max_period``.
    n_periods : int, default 500
        Number of default periods.
    min_period : float, optional
        Shortest default period, h; default twice the median time between samples.
    max_period : float, optional
        Longest default period, h; default half the time spanned.

    Returns
    -------
    xarray.Dataset
        ``power`` on dimension ``period`` (h): the fraction of the series' variance
        explained by a sinusoid of that period (0-1); scalars ``dominant_period`` (h,
        refined between grid points), ``dominant_period_low`` and
        ``dominant_period_high`` (h, where the peak falls to half its power),
        ``dominant_power`` (1) and ``n`` (samples, count).

    Notes
    -----
    The normalised power of :func:`scipy.signal.lombscargle` (``floating_mean=True``),
    computed with sines, cosines and sums of thruput's own, which give the same bits on
    every CPU: the generalised periodogram [3]_ of Lomb [1]_ and Scargle [2]_,
    which fits a sinusoid plus offset at each frequency by least squares, so gaps in the
    campaign need no filling. A daily cycle shows as a peak at 24 h; its power says how
    much of the variation it explains.

    The grid's highest peak is refined on :data:`PEAK_GRID` frequencies within two
    natural resolutions (``1/T``, ``T`` the time spanned) on either side; the half-power
    bounds are that refined peak's full width at half maximum, about ``P^2 / T`` wide
    for a period ``P``: a series must span several cycles to pin a period down.
    A series that spans four cycles resolves its period to about +-12 %.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> t = np.datetime64("2002-09-01") + (np.arange(0, 24 * 7, 0.5) * 3600).astype("timedelta64[s]")
    >>> tp = xr.DataArray(100 + 10 * np.sin(2 * np.pi * np.arange(t.size) * 0.5 / 24),
    ...                   dims="run", coords={"time": ("run", t)})
    >>> round(float(periodogram(tp, periods=[12, 24, 48])["dominant_period"]))
    24
    """
    t, v = time_series(values, time)
    hours = (t - t[0]) / _HOUR if t.size else np.array([])
    if periods is None:
        if t.size < 3:
            raise ValueError("a periodogram needs at least 3 timed values")
        step = np.median(np.diff(hours)[np.diff(hours) > 0])
        lo = min_period if min_period is not None else 2 * step
        hi = max_period if max_period is not None else hours[-1] / 2
        periods = geomspace(lo, hi, n_periods)
    periods = np.asarray(periods, dtype=float)
    power = _lombscargle(hours, v, periods)
    dominant, top, low, high = _peak(hours, v, periods, power)
    name = values.attrs.get("long_name", values.name or "value")

    def scalar(x, units, long_name):
        return xr.DataArray(x, attrs={"units": units, "long_name": long_name})

    return xr.Dataset({
        "power": xr.DataArray(power, dims="period", attrs={
            "units": "1", "long_name": f"Lomb-Scargle power of {name} (fraction of variance)"}),
        "dominant_period": scalar(dominant, "h", "period of highest power"),
        "dominant_period_low": scalar(low, "h", "shortest period above half the peak power"),
        "dominant_period_high": scalar(high, "h", "longest period above half the peak power"),
        "dominant_power": scalar(top, "1", "highest power"),
        "n": scalar(v.size, "count", "samples"),
    }, coords={"period": ("period", periods, {"units": "h", "long_name": "period"})},
        attrs={"method": "generalised Lomb-Scargle (Zechmeister & Kürster 2009)"})


def daily_cycle(values: xr.DataArray, time: xr.DataArray | None = None, period: float = DAY_S,
                bins: int = CYCLE_BINS, n_boot: int = 1000, confidence: float = 0.95,
                seed: int = 0) -> xr.Dataset:
    """Profile of a quantity by hour of day (UTC), with confidence intervals.

    Parameters
    ----------
    values : xarray.DataArray
        The quantity, any shape and unit.
    time : xarray.DataArray, optional
        Times (datetime64, UTC), as :func:`periodogram`.
    period : float, default 86400
        Length of the "day", s. A campaign that compresses a day into minutes (its
        ``schedule.day_s``) passes it here; the profile still has ``bins`` "hours".
    bins : int, default 24
        Bins of the day.
    n_boot, confidence, seed
        Percentile bootstrap of each bin's median (resamples, coverage, seed).

    Returns
    -------
    xarray.Dataset
        On ``hour`` (0 .. bins - 1, hour of the (possibly compressed) day, UTC):
        ``median``, ``low``, ``high`` (bootstrap interval of the median), ``mean``
        (units of ``values``) and ``n`` (count), coordinate ``offset`` (s from the start
        of the day to the bin's start); scalars ``amplitude`` (largest minus smallest
        hourly median, units of ``values``) and ``relative_amplitude`` (amplitude /
        overall median, 1). Attrs: ``period`` (s) and the bootstrap's settings.

    Notes
    -----
    A descriptive companion of :func:`periodogram`: the hours with the lowest medians
    are when cross-traffic is heaviest. The phase of a value is its time since
    1970-01-01T00:00Z modulo ``period`` (so with 86400 s, the UTC hour). Hours without
    samples are NaN and ignored in the amplitude. The intervals are percentile
    bootstraps of each bin's median [4]_, treating runs of one bin as independent.

    References
    ----------
    .. [4] B. Efron, R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman &
       Hall, 1993, ch. 13.
    """
    t, v = time_series(values, time)
    seconds = (t - np.datetime64(0, "s")) / np.timedelta64(1, "s")
    hour = np.floor((seconds % period) / period * bins).astype(int)
    med, mean, low, high = (np.full(bins, np.nan) for _ in range(4))
    n = np.zeros(bins, dtype=int)
    lo_q, hi_q = alpha_bounds(confidence)
    for h, rng in enumerate(cell_rngs(seed, bins)):
        x = v[hour == h]
        n[h] = x.size
        if x.size:
            med[h], mean[h] = np.median(x), np.mean(x)
            low[h], high[h] = np.quantile(bootstrap_samples(x, np.median, n_boot, rng), [lo_q, hi_q])
    units = units_of(values)
    with quiet():
        amplitude = np.nanmax(med) - np.nanmin(med) if np.isfinite(med).any() else np.nan
        relative = amplitude / np.median(v) if v.size else np.nan
    coords = {"hour": ("hour", np.arange(bins), {"units": "h", "long_name": "hour of day, UTC"}),
              "offset": ("hour", np.arange(bins) * period / bins,
                         {"units": "s", "long_name": "start of the bin since the start of the day"})}

    def by_hour(x, units, long_name):
        return xr.DataArray(x, dims="hour", attrs={"units": units, "long_name": long_name})

    return xr.Dataset({
        "median": by_hour(med, units, "median by hour"),
        "low": by_hour(low, units, f"lower {confidence:.0%} bootstrap bound of the median"),
        "high": by_hour(high, units, f"upper {confidence:.0%} bootstrap bound of the median"),
        "mean": by_hour(mean, units, "mean by hour"),
        "n": by_hour(n, "count", "samples in the hour"),
        "amplitude": xr.DataArray(amplitude, attrs={"units": units,
                                                    "long_name": "largest minus smallest hourly median"}),
        "relative_amplitude": xr.DataArray(relative, attrs={"units": "1",
                                                            "long_name": "amplitude / overall median"}),
    }, coords=coords, attrs={"period": period, "n_boot": n_boot, "confidence": confidence,
                             "seed": seed})


def false_alarm(power: float | np.ndarray, n: int, span: float, shortest: float) -> Any:
    """Probability that white Gaussian noise gives a peak of ``power`` or more anywhere
    on a periodogram grid: the false-alarm probability of the peak.

    Parameters
    ----------
    power : float or array_like
        Normalised generalised Lomb-Scargle power (0-1) of :func:`periodogram`.
    n : int
        Values in the series.
    span, shortest : float
        Time spanned by the series and the shortest period of the grid (same unit).

    Returns
    -------
    float or numpy.ndarray

    Notes
    -----
    At one frequency, the normalised power of the generalised periodogram of ``n``
    Gaussian values exceeds ``p`` with probability ``(1 - p)^((n - 3) / 2)``
    (Zechmeister & Kürster [3]_, eq. 24). A search over the grid tries about
    ``M = span / shortest`` independent frequencies (Horne & Baliunas [5]_), so the
    probability that the highest of them reaches ``p`` is ``1 - (1 - q)^M``. Serially
    correlated noise (cross traffic that lingers) makes peaks more likely than this.
    """
    power = np.clip(np.asarray(power, dtype=float), 0.0, 1.0)
    single = (1.0 - power) ** (max(n - 3, 0) / 2.0)
    independent = max(1.0, float(span) / float(shortest)) if shortest > 0 else 1.0
    with quiet():
        return -np.expm1(independent * np.log1p(-np.minimum(single, 1.0 - 1e-300)))


def dominant_period(values: xr.DataArray, time: xr.DataArray | None = None, periods: ArrayLike | None = None,
                    alarm: float = FALSE_ALARM) -> dict[str, Any]:
    """The series' period, when its periodogram has a significant peak: ``period="auto"``.

    Parameters
    ----------
    values : xarray.DataArray
        The series (its level shifts removed first: a step shows as a long period).
    time : xarray.DataArray, optional
        As :func:`periodogram`.
    periods : array_like, optional
        Grid (h); default that of :func:`periodogram`, longest period half the span (so
        a period found is seen at least :data:`MIN_CYCLES` times).
    alarm : float, default :data:`FALSE_ALARM` (0.01)
        Largest false-alarm probability (:func:`false_alarm`) of a peak taken as a period.

    Returns
    -------
    dict
        ``period_s`` (float, or None when there is no significant period), ``power``
        (the highest peak's, 1), ``false_alarm`` (its probability), ``n`` and ``reason``
        (one sentence: which period and why, or why none).
    """
    t, v = time_series(values, time)
    if v.size < MIN_FOR_PERIOD:
        return {"period_s": None, "power": np.nan, "false_alarm": np.nan, "n": int(v.size),
                "reason": f"{v.size} values: too few for a periodogram "
                          f"(at least {MIN_FOR_PERIOD})"}
    found = periodogram(values, time, periods=periods)
    hours = (t - t[0]) / _HOUR
    grid = np.asarray(found["period"].values, float)
    fap = float(false_alarm(float(found["dominant_power"]), v.size, hours[-1], grid.min()))
    period_s = float(found["dominant_period"]) * 3600
    top = float(found["dominant_power"])
    if fap <= alarm:
        reason = (f"the periodogram's highest peak, {duration(period_s, 4)}, explains {top:.0%} of the "
                  f"variance, with false-alarm probability {number(fap, 2)} (the chance that noise "
                  f"alone gives such a peak; at most {alarm:g})")
        return {"period_s": period_s, "power": top, "false_alarm": fap, "n": int(v.size),
                "reason": reason}
    reason = (f"no significant period: the periodogram's highest peak ({duration(period_s, 4)}, "
              f"{top:.0%} of the variance) has false-alarm probability {number(fap, 2)} "
              f"(more than {alarm:g})")
    return {"period_s": None, "power": top, "false_alarm": fap, "n": int(v.size), "reason": reason}
