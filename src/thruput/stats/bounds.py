"""Theory beside measurement: each cell's throughput against its window bound and capacity.

The sources read a sweep against two lines: ``n x window / RTT`` (no more than one
window per stream can be in flight each round trip) and the capacity of the path. This
module puts both beside every cell's median, and flags cells whose median exceeds the
window bound, which cannot happen unless the RTT or the window used is wrong (Linux
doubles the requested socket buffer; seed 002's receiver capped the window at 64 KB).

References
----------
.. [1] W. R. Stevens, *TCP/IP Illustrated* vol. 1, Addison-Wesley, 1994, ch. 20
   (bandwidth-delay product).
.. [2] R. L. Cottrell et al. (seeds 000, 002): window x streams sweeps against the
   bandwidth-delay product.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ._util import as_dims, quiet, units_of
from .theory import bdp, window_limited_throughput

__all__ = ["window_bound"]


def window_bound(throughput: xr.DataArray, rtt_ms: float | xr.DataArray, capacity_bps: float | None = None,
                 window: xr.DataArray | None = None, window_dim: str = "window", streams_dim: str = "streams",
                 repeat_dim: str = "repeat") -> xr.Dataset:
    """Median throughput per cell beside ``n x window / RTT`` and the capacity.

    Parameters
    ----------
    throughput : xarray.DataArray
        Throughput, bit/s, over ``window_dim`` (requested window, bytes),
        ``streams_dim`` (count) and ``repeat_dim``.
    rtt_ms : float or xarray.DataArray
        Round-trip time, ms: the unloaded median RTT of the campaign, or one per cell.
    capacity_bps : float, optional
        Path capacity, bit/s (a campaign's ``attrs["capacity_bps"]``).
    window : xarray.DataArray, optional
        Window per stream to use instead of the ``window_dim`` coordinate, bytes (e.g.
        a campaign's ``window_actual``; reduced by its median over ``repeat_dim``).
    window_dim, streams_dim, repeat_dim : str
        Names of the dimensions.

    Returns
    -------
    xarray.Dataset
        Per (window, streams) cell: ``median`` (bit/s), ``bound`` (``8 x streams x
        window / RTT``, bit/s), ``expected`` (``min(bound, capacity)``, bit/s; the bound
        without a capacity), ``efficiency`` (median / expected, 1) and
        ``exceeds_bound`` (median above the bound, bool); scalar ``bdp`` (capacity x
        RTT / 8, byte; NaN without a capacity or with a per-cell RTT).

    Notes
    -----
    :func:`thruput.stats.theory.window_limited_throughput` and
    :func:`thruput.stats.theory.bdp` [1]_; the window must reach ``bdp / streams`` for
    a cell to fill the path [2]_.

    Examples
    --------
    >>> import xarray as xr
    >>> tp = xr.DataArray([[[50e6]], [[100e6]]], dims=("window", "streams", "repeat"),
    ...                   coords={"window": [8192, 65536], "streams": [1]})
    >>> b = window_bound(tp, rtt_ms=1.0, capacity_bps=100e6)
    >>> b["bound"].values.ravel().tolist(), b["efficiency"].values.ravel().round(3).tolist()
    ([65536000.0, 524288000.0], [0.763, 1.0])
    """
    as_dims((window_dim, streams_dim, repeat_dim), throughput)
    with quiet():
        median = throughput.median(repeat_dim)
        if window is None:
            w = median[window_dim].astype(float)
        else:
            w = window.median(repeat_dim) if repeat_dim in window.dims else window
        w, n = xr.broadcast(w, median[streams_dim].astype(float))
        rtt_s = rtt_ms / 1e3
        bound = window_limited_throughput(w, rtt_s, n)
        capacity = np.nan if capacity_bps is None else float(capacity_bps)
        expected = bound if capacity_bps is None else np.minimum(bound, capacity)
        efficiency = median / expected
    units = units_of(throughput, "bit/s")
    order = [d for d in median.dims]
    ds = xr.Dataset({
        "median": median.assign_attrs(units=units, long_name="median throughput of the cell"),
        "bound": bound.transpose(*order).assign_attrs(units="bit/s", long_name="8 x streams x window / RTT"),
        "expected": expected.transpose(*order).assign_attrs(units="bit/s", long_name="min(window bound, capacity)"),
        "efficiency": efficiency.transpose(*order).assign_attrs(units="1", long_name="median / expected"),
        "exceeds_bound": (median > bound).transpose(*order).assign_attrs(
            units="1", long_name="median above the window bound"),
        "bdp": xr.DataArray(bdp(capacity, rtt_s) if np.ndim(rtt_s) == 0 else np.nan,
                            attrs={"units": "byte", "long_name": "bandwidth-delay product"}),
    }, attrs={"capacity_bps": capacity})
    return ds
