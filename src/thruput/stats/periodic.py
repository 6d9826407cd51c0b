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
"""

from __future__ import annotations

import numpy as np
import scipy.signal
import xarray as xr

from ._util import quiet, units_of

__all__ = ["periodogram", "daily_cycle", "time_series"]

_HOUR = np.timedelta64(3600, "s")


def time_series(values, time=None):
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
    v, t = xr.broadcast(values.astype(float), time)
    v = np.asarray(v.values, dtype=float).ravel()
    t = np.asarray(t.values).astype("datetime64[ns]").ravel()
    ok = np.isfinite(v) & ~np.isnat(t)
    order = np.argsort(t[ok], kind="stable")
    return t[ok][order], v[ok][order]


def periodogram(values, time=None, periods=None, n_periods=500, min_period=None, max_period=None):
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
        explained by a sinusoid of that period (0-1); scalars ``dominant_period`` (h),
        ``dominant_power`` (1) and ``n`` (samples, count).

    Notes
    -----
    :func:`scipy.signal.lombscargle` with ``floating_mean=True`` and
    ``normalize=True``: the generalised periodogram [3]_ of Lomb [1]_ and Scargle [2]_,
    which fits a sinusoid plus offset at each frequency by least squares, so gaps in the
    campaign need no filling. A daily cycle shows as a peak at 24 h; its power says how
    much of the variation it explains.

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
        periods = np.geomspace(lo, hi, n_periods)
    periods = np.asarray(periods, dtype=float)
    with quiet():
        power = scipy.signal.lombscargle(hours, v, 2 * np.pi / periods,
                                         normalize=True, floating_mean=True)
    best = int(np.nanargmax(power))
    name = values.attrs.get("long_name", values.name or "value")
    return xr.Dataset({
        "power": xr.DataArray(power, dims="period", attrs={
            "units": "1", "long_name": f"Lomb-Scargle power of {name} (fraction of variance)"}),
        "dominant_period": xr.DataArray(periods[best], attrs={"units": "h", "long_name": "period of highest power"}),
        "dominant_power": xr.DataArray(power[best], attrs={"units": "1", "long_name": "highest power"}),
        "n": xr.DataArray(v.size, attrs={"units": "count", "long_name": "samples"}),
    }, coords={"period": ("period", periods, {"units": "h", "long_name": "period"})},
        attrs={"method": "generalised Lomb-Scargle (Zechmeister & Kürster 2009)"})


def daily_cycle(values, time=None):
    """Profile of a quantity by hour of day (UTC): the shape of a daily cycle.

    Parameters
    ----------
    values : xarray.DataArray
        The quantity, any shape and unit.
    time : xarray.DataArray, optional
        Times (datetime64, UTC), as :func:`periodogram`.

    Returns
    -------
    xarray.Dataset
        On ``hour`` (0-23, UTC): ``median``, ``mean`` (units of ``values``) and ``n``
        (count); scalars ``amplitude`` (largest minus smallest hourly median, units of
        ``values``) and ``relative_amplitude`` (amplitude / overall median, 1).

    Notes
    -----
    A descriptive companion of :func:`periodogram`: the hours with the lowest medians
    are when cross-traffic is heaviest. Hours without samples are NaN and ignored in
    the amplitude.
    """
    t, v = time_series(values, time)
    hour = ((t - t.astype("datetime64[D]")) // _HOUR).astype(int)
    med, mean, n = np.full(24, np.nan), np.full(24, np.nan), np.zeros(24, dtype=int)
    for h in range(24):
        x = v[hour == h]
        n[h] = x.size
        if x.size:
            med[h], mean[h] = np.median(x), np.mean(x)
    units = units_of(values)
    with quiet():
        amplitude = np.nanmax(med) - np.nanmin(med) if np.isfinite(med).any() else np.nan
        relative = amplitude / np.median(v) if v.size else np.nan
    coords = {"hour": ("hour", np.arange(24), {"units": "h", "long_name": "hour of day, UTC"})}
    return xr.Dataset({
        "median": xr.DataArray(med, dims="hour", attrs={"units": units, "long_name": "median by hour"}),
        "mean": xr.DataArray(mean, dims="hour", attrs={"units": units, "long_name": "mean by hour"}),
        "n": xr.DataArray(n, dims="hour", attrs={"units": "count", "long_name": "samples in the hour"}),
        "amplitude": xr.DataArray(amplitude, attrs={"units": units,
                                                    "long_name": "largest minus smallest hourly median"}),
        "relative_amplitude": xr.DataArray(relative, attrs={"units": "1",
                                                            "long_name": "amplitude / overall median"}),
    }, coords=coords)
