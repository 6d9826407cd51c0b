"""Latency against frame size (UDPmon ``udpmon_req`` scans).

Seed 001 fits a straight line to the request-response latency against the response
size: the slope (us/byte) is the time every byte spends on the data path, and the
intercept the fixed per-frame cost. The expected slope from bus widths, clocks and the
link is :func:`thruput.stats.theory.expected_latency_slope`.

References
----------
.. [1] R. Hughes-Jones et al. (seed 001): UDPmon latency slopes.
.. [2] N. R. Draper, H. Smith, *Applied Regression Analysis*, 3rd ed., Wiley, 1998,
   ch. 1 (standard errors of the straight-line fit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

import numpy as np
import xarray as xr

__all__ = ["latency_line", "latency_fit"]


def latency_line(size: ArrayLike, latency: ArrayLike,
                 size_range: tuple[float, float] | None = None) -> dict[str, Any]:
    """Least-squares line of request-response latency on response size.

    Parameters
    ----------
    size : array_like
        Response length, bytes.
    latency : array_like
        Mean request-response time, us.
    size_range : (float, float), optional
        Fit only sizes in ``[low, high]``, bytes (e.g. one flat section between the
        steps that interrupt coalescence makes, seed 001's "slope flat sections").

    Returns
    -------
    dict
        ``slope`` (us/byte), ``intercept`` (us), their standard errors ``slope_se`` and
        ``intercept_se``, ``n`` (points used), ``residual_std`` (us) and ``r2`` (1).

    Notes
    -----
    Ordinary least squares, in closed form on centred values with NumPy's pairwise sums
    (no LAPACK: the same bits on every CPU); standard errors from the residual variance
    with ``n - 2`` degrees of freedom [2]_ (NaN with two points or fewer). Pairs with a
    NaN are left out; with every point at one size there is no line (NaN). Hughes-Jones
    et al. read the slope as the sum of the inverse data rates of every copy along the
    path (seed 001).

    Examples
    --------
    >>> fit = latency_line([0, 100, 200, 300], [10.0, 12.0, 14.0, 16.0])
    >>> round(fit["slope"], 6), round(fit["intercept"], 6), fit["n"]
    (0.02, 10.0, 4)
    """
    x = np.asarray(size, dtype=float).ravel()
    y = np.asarray(latency, dtype=float).ravel()
    ok = np.isfinite(x) & np.isfinite(y)
    if size_range is not None:
        ok &= (x >= size_range[0]) & (x <= size_range[1])
    x, y = x[ok], y[ok]
    n = x.size
    if n < 2:
        return _no_line(n)
    x_mean, y_mean = _sum(x) / n, _sum(y) / n
    dx, dy = x - x_mean, y - y_mean
    sxx = _sum(dx * dx)
    if sxx == 0:          # every point at one size: no line
        return _no_line(n)
    slope = _sum(dx * dy) / sxx
    intercept = y_mean - slope * x_mean
    resid = y - (slope * x + intercept)
    sse = _sum(resid * resid)
    se_slope = se_intercept = residual_std = float("nan")
    if n > 2:
        s2 = sse / (n - 2)
        se_slope = np.sqrt(s2 / sxx)
        se_intercept = np.sqrt(s2 * (1 / n + x_mean * x_mean / sxx))
        residual_std = float(np.sqrt(s2))
    ss_tot = _sum(dy * dy)
    r2 = 1.0 - sse / ss_tot if ss_tot > 0 else float("nan")
    return {"slope": float(slope), "intercept": float(intercept),
            "slope_se": float(se_slope), "intercept_se": float(se_intercept), "n": int(n),
            "residual_std": residual_std, "r2": r2}


def _sum(a):
    return float(np.add.reduce(a))


def _no_line(n):
    nan = float("nan")
    return {"slope": nan, "intercept": nan, "slope_se": nan, "intercept_se": nan,
            "n": int(n), "residual_std": nan, "r2": nan}


def latency_fit(scan: xr.Dataset, size: str = "size", latency: str = "latency_avg",
                size_range: tuple[float, float] | None = None,
                expected_slope: float | None = None) -> xr.Dataset:
    """Fit a latency scan and return the fit beside the points, ready to plot.

    Parameters
    ----------
    scan : xarray.Dataset
        A ``latency_scan`` Dataset (``size`` in bytes and ``latency_avg`` in us on
        ``point``), or any Dataset with the two named variables.
    size, latency : str
        Names of the size (byte) and latency (us) variables.
    size_range : (float, float), optional
        Sizes fitted, bytes (see :func:`latency_line`).
    expected_slope : float, optional
        Slope expected from the data path, us/byte
        (:func:`thruput.stats.theory.expected_latency_slope`).

    Returns
    -------
    xarray.Dataset
        On the scan's dimension: ``size`` (byte), ``latency`` (us), ``fitted`` (the
        fitted line, us), ``residual`` (us) and, with ``expected_slope``, ``expected``
        (a line of that slope through the fit's intercept, us); scalars ``slope``,
        ``slope_se`` (us/byte), ``intercept``, ``intercept_se``, ``residual_std`` (us),
        ``r2`` (1), ``n`` (count) and ``slope_ratio`` (fitted / expected slope, 1;
        NaN without ``expected_slope``).

    Notes
    -----
    See :func:`latency_line` for the estimator. A ratio near one means the data path is
    what the bus and link rates predict; well above one, extra copies (seed 001:
    "Possible extra data moves ?").
    """
    x = scan[size].astype(float)
    y = scan[latency].astype(float)
    fit = latency_line(x.values, y.values, size_range=size_range)
    fitted = fit["intercept"] + fit["slope"] * x
    units = {"slope": "us/byte", "slope_se": "us/byte", "intercept": "us", "intercept_se": "us",
             "residual_std": "us", "r2": "1", "n": "count"}
    data = {
        "size": x.assign_attrs(units="byte", long_name="response size"),
        "latency": y.assign_attrs(units="us", long_name="request-response latency"),
        "fitted": fitted.assign_attrs(units="us", long_name="least-squares line"),
        "residual": (y - fitted).assign_attrs(units="us", long_name="latency minus fitted line"),
    }
    ratio = float("nan")
    if expected_slope is not None:
        data["expected"] = (fit["intercept"] + expected_slope * x).assign_attrs(
            units="us", long_name="line of the expected slope through the fitted intercept")
        ratio = fit["slope"] / expected_slope
    for key, value in fit.items():
        data[key] = xr.DataArray(value, attrs={"units": units[key], "long_name": key.replace("_", " ")})
    data["slope_ratio"] = xr.DataArray(ratio, attrs={"units": "1", "long_name": "fitted / expected slope"})
    if expected_slope is not None:
        data["expected_slope"] = xr.DataArray(float(expected_slope), attrs={
            "units": "us/byte", "long_name": "slope expected from the data path"})
    return xr.Dataset(data)


#: The name :func:`latency_line` had until it was told apart from :func:`latency_fit`;
#: report/studies.py still calls it.
fit_latency = latency_line
