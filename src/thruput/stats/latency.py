"""Latency against frame size (UDPmon ``udpmon_req`` scans)."""

from __future__ import annotations

import numpy as np

__all__ = ["fit_latency"]


def fit_latency(size, latency):
    """Least-squares line of request-response latency on response size.

    Parameters
    ----------
    size : array_like
        Response length, bytes.
    latency : array_like
        Mean request-response time, us.

    Returns
    -------
    dict
        ``slope`` (us/byte), ``intercept`` (us), their standard errors ``slope_se`` and
        ``intercept_se``, and ``n``.

    Notes
    -----
    Ordinary least squares; standard errors from the residual variance with ``n - 2``
    degrees of freedom. Hughes-Jones et al. read the slope as the sum of the inverse
    data rates of every copy along the path (seed 001).
    """
    x = np.asarray(size, dtype=float)
    y = np.asarray(latency, dtype=float)
    n = x.size
    X = np.column_stack([x, np.ones(n)])
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    slope, intercept = coef
    se_slope = se_intercept = np.nan
    if n > 2:
        resid = y - X @ coef
        s2 = resid @ resid / (n - 2)
        cov = s2 * np.linalg.inv(X.T @ X)
        se_slope, se_intercept = np.sqrt(np.diag(cov))
    return {"slope": float(slope), "intercept": float(intercept),
            "slope_se": float(se_slope), "intercept_se": float(se_intercept), "n": int(n)}
