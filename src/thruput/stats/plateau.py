"""Where throughput stops growing with the window (or the streams): plateaus and best cells.

Seeds 000, 002, 003 and 004 read their window x streams sweeps the same way: throughput
rises with the window until something else limits it, then stays on a plateau; the
start of the plateau is "the optimal window size for the link" (seed 004). These
functions put numbers on that reading.

References
----------
.. [1] B. Efron, R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall,
   1993, ch. 13 (percentile intervals).
.. [2] R. L. Cottrell et al., "Bulk throughput measurements" (seeds 000, 002): window x
   streams sweeps read for their maxima and the smallest settings that reach them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

from .defaults import BEST_CELLS, CONFIDENCE, N_BOOT, PLATEAU_TOLERANCE, SEED

import numpy as np
import xarray as xr

from ._util import alpha_bounds, as_dims, cell_rngs, labelled, quiet, units_of
from .summaries import bootstrap_samples, describe

__all__ = ["plateau", "best_cells", "top_fraction", "smallest_product", "LIMITED_BY"]

#: Values of ``limited_by``: still rising at the largest ``dim`` value ("window"),
#: flat over at least two values ("capacity": the link, the hosts, a receiver window
#: cap, anything but ``dim``), or not decidable from the data ("undetermined").
LIMITED_BY = ("window", "capacity", "undetermined")


def _onset(medians, tolerance):
    """Level (highest median) and index of the first median within ``tolerance`` of it.

    ``medians`` has ``dim`` last; returns ``(level, index)`` with index -1 where every
    median is NaN.
    """
    with quiet():
        level = np.nanmax(medians, axis=-1)
    reached = medians >= (1.0 - tolerance) * level[..., None]
    index = np.where(np.isnan(level), -1, np.argmax(reached, axis=-1))
    return level, index


def plateau(throughput: xr.DataArray, dim: str = "window", repeat_dim: str = "repeat",
            tolerance: float = PLATEAU_TOLERANCE, confidence: float = CONFIDENCE, n_boot: int = N_BOOT,
            seed: int = SEED) -> xr.Dataset:
    """Plateau level and onset of throughput along ``dim``, for every other coordinate.

    Parameters
    ----------
    throughput : xarray.DataArray
        Throughput (bit/s, or any unit) with dimensions ``dim``, ``repeat_dim`` and any
        others (e.g. ``streams``); NaN = missing run.
    dim : str, default "window"
        The swept dimension (window in bytes, or ``"streams"``).
    repeat_dim : str, default "repeat"
        Dimension of repeated runs of one cell.
    tolerance : float, default 0.1
        Relative distance to the level that counts as on the plateau: a median ``m`` is
        on it when ``m >= (1 - tolerance) * level``.
    confidence : float, default 0.95
        Coverage of the bootstrap intervals.
    n_boot : int, default 1000 (:data:`thruput.stats.DEFAULTS`)
        Bootstrap resamples.
    seed : int, default 20261122 (:data:`thruput.stats.DEFAULTS`)
        Seed of the resampling.

    Returns
    -------
    xarray.Dataset
        Over the other dimensions:

        ``level``, ``level_low``, ``level_high``
            Plateau throughput (the highest median over ``dim``) and its bootstrap
            bounds, units of ``throughput``.
        ``onset``, ``onset_low``, ``onset_high``
            Smallest ``dim`` value whose median is within ``tolerance`` of the level,
            and its bootstrap bounds (always values of ``dim``), units of ``dim``.
        ``limited_by``
            ``"window"`` when even the lower bound of the onset is the largest ``dim``
            value with data (throughput still rising), ``"capacity"`` when even the
            upper bound lies below it (flat over at least two values: something other
            than ``dim`` limits), ``"undetermined"`` otherwise or with fewer than two
            ``dim`` values with data.
        ``censored``
            ``"below"`` when the onset is the smallest ``dim`` value with data (the real
            onset may lie below the sweep: the onset is then an upper bound), ``"above"``
            when it is the largest (the plateau may lie beyond the sweep: the level is then
            a lower bound), ``"no"`` otherwise.
        ``n_points``
            ``dim`` values with at least one run (count).

    Notes
    -----
    The median over ``repeat_dim`` of each ``dim`` value is the curve; its maximum is
    the level, and the onset the first point within ``tolerance`` of it. The bounds
    come from resampling each ``dim`` value's repeats with replacement (a stratified
    percentile bootstrap [1]_) and recomputing level and onset; the onset's bounds use
    the ``"lower"`` and ``"higher"`` quantiles so they are values of ``dim``. The level
    is the maximum of noisy medians, so it leans high by about the noise of one median;
    ``level_low`` shows by how much. A plateau set by a receiver window cap (seed 002's
    ``wscale 0``) reads as ``"capacity"``: compare ``level`` with
    :func:`thruput.stats.theory.window_limited_throughput` to tell (or use
    :func:`thruput.stats.window_bound`). With one repeat per ``dim`` value there is
    nothing to resample: the bounds collapse on the estimates, and ``limited_by`` rests
    on single runs.

    Examples
    --------
    A window-limited rise to 100 at window 4, flat after:

    >>> import xarray as xr, numpy as np
    >>> w = [1, 2, 4, 8, 16]
    >>> tp = xr.DataArray(np.repeat([[25.0, 50, 100, 100, 100]], 3, 0).T,
    ...                   dims=("window", "repeat"), coords={"window": w})
    >>> p = plateau(tp, n_boot=50)
    >>> float(p.level), int(p.onset), str(p.limited_by.values)
    (100.0, 4, 'capacity')
    """
    as_dims((dim, repeat_dim), throughput)
    lo_q, hi_q = alpha_bounds(confidence)
    da = throughput.sortby(dim)
    other = [d for d in da.dims if d not in (dim, repeat_dim)]
    da = da.transpose(*other, dim, repeat_dim)
    xs = da[dim].values
    values = np.asarray(da.values, dtype=float)
    shape = values.shape[:-2]
    ncell = int(np.prod(shape, dtype=int))
    values = values.reshape(ncell, xs.size, values.shape[-1])
    out = {k: np.full(ncell, np.nan) for k in
           ("level", "level_low", "level_high", "onset", "onset_low", "onset_high")}
    limited = np.full(ncell, "undetermined", dtype=object)
    censored = np.full(ncell, "no", dtype=object)
    npoints = np.zeros(ncell, dtype=int)
    rngs = cell_rngs(seed, ncell)
    for c in range(ncell):
        samples = [row[~np.isnan(row)] for row in values[c]]
        has = np.array([s.size > 0 for s in samples])
        npoints[c] = has.sum()
        if not has.any():
            continue
        with quiet():
            med = np.array([np.median(s) if s.size else np.nan for s in samples])
        level, onset = _onset(med, tolerance)
        reps = np.full((n_boot, xs.size), np.nan)
        for i, s in enumerate(samples):
            if s.size:
                reps[:, i] = bootstrap_samples(s, np.median, n_boot, rngs[c])
        blevel, bonset = _onset(reps, tolerance)
        low_i = int(np.quantile(bonset, lo_q, method="lower"))
        high_i = int(np.quantile(bonset, hi_q, method="higher"))
        out["level"][c] = level
        out["level_low"][c], out["level_high"][c] = np.quantile(blevel, [lo_q, hi_q])
        out["onset"][c], out["onset_low"][c], out["onset_high"][c] = xs[[onset, low_i, high_i]]
        first, last = np.flatnonzero(has)[[0, -1]]
        censored[c] = "below" if onset == first else "above" if onset == last else "no"
        if npoints[c] >= 2:
            if low_i == last:
                limited[c] = "window"
            elif high_i < last:
                limited[c] = "capacity"
    coords = {k: v for k, v in da.coords.items() if set(v.dims) <= set(other)}
    units, dim_units = units_of(throughput), units_of(da[dim])
    name = throughput.attrs.get("long_name", throughput.name or "throughput")

    def lab(key, units, what):
        return labelled(out[key].reshape(shape), other, coords, units, what)

    return xr.Dataset({
        "level": lab("level", units, f"plateau level: highest median {name} over {dim}"),
        "level_low": lab("level_low", units, "lower bootstrap bound of the plateau level"),
        "level_high": lab("level_high", units, "upper bootstrap bound of the plateau level"),
        "onset": lab("onset", dim_units, f"smallest {dim} whose median is on the plateau"),
        "onset_low": lab("onset_low", dim_units, "lower bootstrap bound of the onset"),
        "onset_high": lab("onset_high", dim_units, "upper bootstrap bound of the onset"),
        "limited_by": labelled(limited.astype(str).reshape(shape), other, coords, "1",
                               "what limits throughput: window, capacity or undetermined"),
        "censored": labelled(censored.astype(str).reshape(shape), other, coords, "1",
                             "onset at the edge of the sweep: below, above or no"),
        "n_points": labelled(npoints.reshape(shape), other, coords, "count",
                             f"{dim} values with at least one run"),
    }, attrs={"dim": dim, "repeat_dim": repeat_dim, "tolerance": tolerance,
              "confidence": confidence, "n_boot": n_boot, "seed": seed,
              "method": "highest median; stratified percentile bootstrap (Efron & Tibshirani 1993)"})


def best_cells(throughput: xr.DataArray, n: int = BEST_CELLS, repeat_dim: str = "repeat") -> xr.Dataset:
    """The ``n`` cells with the highest median throughput, best first.

    Parameters
    ----------
    throughput : xarray.DataArray
        Throughput (bit/s) over cell dimensions (e.g. window, streams) and
        ``repeat_dim``.
    n : int, default 5
        How many cells.
    repeat_dim : str, default "repeat"
        Dimension of repeats within a cell.

    Returns
    -------
    xarray.Dataset
        On dimension ``rank`` (0 = best): the cell's coordinates (e.g. ``window``,
        ``streams``) as variables, and its ``median``, ``mean``, ``max``, ``iqr``
        (units of ``throughput``) and ``n`` (runs, count). Cells without runs are left
        out; ties keep the order of the cells in ``throughput``.

    Notes
    -----
    Seed 003 reports "990 Mbit/s peak with 128 KB windows and 25 streams"; seed 000
    "over 700 Mbit/s with a window of 512 kBytes and 15 parallel streams" [2]_.
    """
    s = describe(throughput, repeat_dim, percentiles=())
    cell_dims = list(s["median"].dims)
    flat = s.stack(rank=cell_dims) if cell_dims else s.expand_dims("rank")
    flat = flat.reset_index("rank") if cell_dims else flat
    med = flat["median"].values
    order = [i for i in np.argsort(-med, kind="stable") if not np.isnan(med[i])][:n]
    flat = flat.isel(rank=order)
    flat = flat.reset_coords([d for d in cell_dims if d in flat.coords])
    flat = flat.drop_vars(["std", "min"]).assign_coords(rank=np.arange(len(order)))
    for d in cell_dims:
        flat[d].attrs = dict(throughput[d].attrs)
    return flat


def top_fraction(throughput: xr.DataArray, fraction: float = 0.1,
                 dim: str | Sequence[Hashable] | None = None) -> xr.Dataset:
    """Where the top ``fraction`` of all measurements were made, per cell.

    Parameters
    ----------
    throughput : xarray.DataArray
        Throughput (bit/s), NaN = missing.
    fraction : float, default 0.1
        Share of the highest measurements (0.1 = the top 10%, seed 002's "maxima").
    dim : str or sequence of str, optional
        Dimension(s) counted within each cell; default ``"repeat"`` if present, else
        all.

    Returns
    -------
    xarray.Dataset
        ``count`` (measurements at or above the threshold, count) and ``share``
        (count over all such measurements, 1) per cell, and ``threshold`` (the
        ``1 - fraction`` quantile of all finite measurements, units of ``throughput``).

    Notes
    -----
    Seed 002: "The maxima (i.e. top 10% of the throughput measurements) were over 118
    Mbits/s and were achieved for 8 or more streams for window sizes of 64 KBytes or
    more" [2]_. The threshold is NumPy's linear quantile.
    """
    if dim is None:
        dim = "repeat" if "repeat" in throughput.dims else list(throughput.dims)
    dims = as_dims(dim, throughput)
    values = np.asarray(throughput.values, dtype=float)
    threshold = float(np.nanquantile(values, 1.0 - fraction)) if np.isfinite(values).any() else np.nan
    hit = (throughput >= threshold).sum(dims)
    total = int(hit.sum())
    units = units_of(throughput)
    return xr.Dataset({
        "count": hit.assign_attrs(units="count", long_name="measurements in the top fraction"),
        "share": (hit / total if total else hit * np.nan).assign_attrs(
            units="1", long_name="share of the top-fraction measurements in the cell"),
        "threshold": xr.DataArray(threshold, attrs={
            "units": units, "long_name": f"{1 - fraction:g} quantile of all measurements"}),
    }, attrs={"fraction": fraction})


def smallest_product(throughput: xr.DataArray, tolerance: float = PLATEAU_TOLERANCE,
                     window_dim: str = "window", streams_dim: str = "streams", repeat_dim: str = "repeat",
                     level: float | None = None) -> xr.Dataset:
    """The cell with the smallest window x streams product that reaches the plateau.

    Parameters
    ----------
    throughput : xarray.DataArray
        Throughput (bit/s) over ``window_dim`` (bytes), ``streams_dim`` (count) and
        ``repeat_dim``.
    tolerance : float, default 0.1
        A cell reaches the plateau when its median is at least ``(1 - tolerance)``
        times the level.
    window_dim, streams_dim, repeat_dim : str
        Names of the dimensions.
    level : float, optional
        Plateau level (units of ``throughput``); default: the highest cell median.

    Returns
    -------
    xarray.Dataset
        Scalars ``window`` (byte), ``streams`` (count), ``product`` (window x streams,
        byte), ``median`` (the cell's median), ``level`` and ``threshold``
        (``(1 - tolerance) x level``), in the units of ``throughput``. All NaN when no
        cell reaches the threshold.

    Notes
    -----
    The total bytes in flight a sender may keep, ``window x streams``, is what the
    bandwidth-delay product bounds; the smallest product that reaches the plateau is
    the cheapest setting in memory (seeds 000, 002). Ties go to fewer streams, then to
    the smaller window.
    """
    as_dims((window_dim, streams_dim, repeat_dim), throughput)
    with quiet():
        med = throughput.median(repeat_dim).transpose(window_dim, streams_dim)
    m = np.asarray(med.values, dtype=float)
    if level is None:
        level = float(np.nanmax(m)) if np.isfinite(m).any() else np.nan
    threshold = (1.0 - tolerance) * level
    w = np.asarray(med[window_dim].values, dtype=float)
    s = np.asarray(med[streams_dim].values, dtype=float)
    W, S = np.meshgrid(w, s, indexing="ij")
    ok = m >= threshold
    units = units_of(throughput)
    result = {"window": np.nan, "streams": np.nan, "product": np.nan, "median": np.nan}
    if ok.any():
        cand = np.flatnonzero(ok.ravel())
        key = np.lexsort((W.ravel()[cand], S.ravel()[cand], (W * S).ravel()[cand]))
        best = cand[key[0]]
        result = {"window": W.ravel()[best], "streams": S.ravel()[best],
                  "product": (W * S).ravel()[best], "median": m.ravel()[best]}
    spec = {"window": ("byte", "window of the cell"), "streams": ("count", "streams of the cell"),
            "product": ("byte", "window x streams"), "median": (units, "median throughput of the cell")}
    data = {k: xr.DataArray(v, attrs={"units": spec[k][0], "long_name": spec[k][1]})
            for k, v in result.items()}
    data["level"] = xr.DataArray(level, attrs={"units": units, "long_name": "plateau level"})
    data["threshold"] = xr.DataArray(threshold, attrs={
        "units": units, "long_name": "(1 - tolerance) x level"})
    return xr.Dataset(data, attrs={"tolerance": tolerance})
