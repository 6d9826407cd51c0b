"""Robust summaries along any dimension: describe, bootstrap intervals, ECDFs, histograms.

Every function takes a labelled :class:`xarray.DataArray`, ignores NaN (a lost probe, a
missing run) and carries the input's ``units`` to every output that has them.

References
----------
.. [1] R. J. Hyndman, Y. Fan, "Sample quantiles in statistical packages", The American
   Statistician 50(4), 361-365, 1996 (definition 7, NumPy's default "linear").
.. [2] B. Efron, R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall,
   1993, ch. 13 (percentile intervals).
.. [3] A. W. van der Vaart, *Asymptotic Statistics*, Cambridge, 1998, ch. 19
   (the empirical distribution function).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence

from .defaults import CONFIDENCE, N_BOOT, PERCENTILES, SEED

import numpy as np
import xarray as xr

from ._util import (alpha_bounds, as_dims, cell_rngs, cell_samples, cell_shape, cells,
                    labelled, percentile_name, quiet, units_of)
from .grouped import grouped_summary, is_lazy

__all__ = ["describe", "bootstrap_ci", "ecdf", "frequency", "STATISTICS", "DEFAULT_PERCENTILES"]

#: Percentiles :func:`describe` reports unless told otherwise (seed 004's "10th to 90th
#: percentile" range and the quartiles).
DEFAULT_PERCENTILES = PERCENTILES


def _iqr(x, axis=-1):
    q1, q3 = np.percentile(x, [25, 75], axis=axis)
    return q3 - q1


#: Named statistics for :func:`bootstrap_ci`: ``f(finite values, axis) -> values``.
STATISTICS = {
    "median": np.median,
    "mean": np.mean,
    "iqr": _iqr,
}


def describe(da: xr.DataArray, dim: str | Sequence[Hashable] | None = None,
             percentiles: Sequence[float] = DEFAULT_PERCENTILES, method: str = "linear") -> xr.Dataset:
    """Count, mean, median, extremes, spread and percentiles along ``dim``, NaN-aware.

    Parameters
    ----------
    da : xarray.DataArray
        Values in any unit (e.g. ``throughput`` in bit/s).
    dim : str or sequence of str, optional
        Dimension(s) reduced (e.g. ``"repeat"`` for one row per window x streams cell);
        ``None`` reduces all of them.
    percentiles : sequence of float, default (10, 25, 75, 90)
        Percentiles reported (0-100), each as a variable ``p<q>`` (``p2_5`` for 2.5).
    method : str, default "linear"
        Quantile definition, as :func:`numpy.nanpercentile` (``"linear"`` is Hyndman &
        Fan's definition 7 [1]_).

    Returns
    -------
    xarray.Dataset
        Over the remaining dimensions: ``n`` (count of non-NaN values), ``mean``,
        ``median``, ``min``, ``max``, ``std`` (sample standard deviation, ``ddof=1``),
        ``iqr`` (75th minus 25th percentile) and ``p<q>``, all in the units of ``da``
        except ``n`` (count). Cells with no values give ``n = 0`` and NaN elsewhere.
        Index with ``s["median"]``: ``s.median`` is the Dataset's method.

    Notes
    -----
    NaN marks a missing value and is left out of every statistic; ``n`` says how many
    values each cell rests on. The IQR always uses the 25th and 75th percentiles with
    the same ``method``, whether or not they are in ``percentiles``.

    Examples
    --------
    >>> import xarray as xr
    >>> da = xr.DataArray([1.0, 2.0, 3.0, 4.0, float("nan")], dims="repeat",
    ...                   attrs={"units": "bit/s"})
    >>> s = describe(da, "repeat")
    >>> int(s["n"]), float(s["median"]), float(s["iqr"]), s["iqr"].units
    (4, 2.5, 1.5, 'bit/s')
    """
    dims = as_dims(dim, da)
    if is_lazy(da):
        return _lazy_describe(da, dims, percentiles, method)
    units = units_of(da)
    name = da.attrs.get("long_name", da.name or "value")
    axes = tuple(da.get_axis_num(d) for d in dims)
    values = np.asarray(da.values, dtype=float)
    qs = sorted(set(float(q) for q in percentiles) | {25.0, 75.0})
    keep = [d for d in da.dims if d not in dims]
    coords = {k: v for k, v in da.coords.items() if set(v.dims) <= set(keep)}
    with quiet():
        n = np.sum(~np.isnan(values), axis=axes)
        stats = {
            "mean": np.nanmean(values, axis=axes),
            "median": np.nanmedian(values, axis=axes),
            "min": np.nanmin(values, axis=axes) if values.size else np.nan,
            "max": np.nanmax(values, axis=axes) if values.size else np.nan,
            "std": np.nanstd(values, axis=axes, ddof=1),
        }
        pct = dict(zip(qs, np.nanpercentile(values, qs, axis=axes, method=method)))  # type: ignore[call-overload]
    stats["std"] = np.where(n > 1, stats["std"], np.nan)
    stats["iqr"] = pct[75.0] - pct[25.0]
    out = {"n": labelled(n, keep, coords, "count", f"number of values of {name}")}
    long = {"mean": "mean", "median": "median", "min": "minimum", "max": "maximum",
            "std": "sample standard deviation", "iqr": "interquartile range"}
    for key, value in stats.items():
        out[key] = labelled(value, keep, coords, units, f"{long[key]} of {name}")
    for q in percentiles:
        out[percentile_name(q)] = labelled(pct[float(q)], keep, coords, units,
                                           f"{q:g}th percentile of {name}")
    return xr.Dataset(out, attrs={"reduced_dims": " ".join(dims), "quantile_method": method})


def _statistic(statistic):
    if callable(statistic):
        return statistic
    try:
        return STATISTICS[statistic]
    except KeyError:
        raise ValueError(f"unknown statistic {statistic!r}; known: {sorted(STATISTICS)} "
                         "or a callable f(values, axis)") from None


def bootstrap_samples(x, statistic, n_boot, rng):
    """``n_boot`` bootstrap replicates of ``statistic`` on the finite 1-D sample ``x``.

    Up to :data:`BOOTSTRAP_BLOCK` resampled values at once: a larger bootstrap (1000
    replicates of a series of 10^5 runs would hold 10^8 indices and values, 1.6 GB) is
    drawn in blocks of replicates, from the same generator (another stream of it)."""
    rows = max(1, BOOTSTRAP_BLOCK // max(x.size, 1))     # (up to the block: one draw of all)
    out = np.empty(n_boot)
    for at in range(0, n_boot, rows):
        idx = rng.integers(0, x.size, size=(min(rows, n_boot - at), x.size))
        out[at:at + idx.shape[0]] = statistic(x[idx], axis=-1)
    return out


#: Resampled values a bootstrap holds at once (16 bytes each: index and value).
BOOTSTRAP_BLOCK = 1 << 24


def bootstrap_ci(da: xr.DataArray, dim: str | Sequence[Hashable] | None = None,
                 statistic: str | Callable[..., Any] = "median", n_boot: int = N_BOOT,
                 confidence: float = CONFIDENCE, seed: int = SEED) -> xr.Dataset:
    """Percentile-bootstrap confidence interval of a statistic along ``dim``, per cell.

    Parameters
    ----------
    da : xarray.DataArray
        Values, any unit.
    dim : str or sequence of str, optional
        Dimension(s) that hold the sample of each cell (e.g. ``"repeat"``); ``None``
        pools all.
    statistic : {"median", "iqr", "mean"} or callable, default "median"
        The statistic; a callable takes ``(values, axis)`` like :func:`numpy.median`.
    n_boot : int, default 1000 (:data:`thruput.stats.DEFAULTS`)
        Bootstrap resamples per cell.
    confidence : float, default 0.95
        Coverage of the two-sided interval.
    seed : int, default 20261122 (:data:`thruput.stats.DEFAULTS`)
        Seed of the resampling; the same seed gives the same interval, and a cell's
        interval does not depend on the other cells.

    Returns
    -------
    xarray.Dataset
        ``estimate`` (the statistic of the sample), ``low`` and ``high`` (interval
        bounds), in the units of ``da``, and ``n`` (sample size, count).

    Notes
    -----
    Each cell's finite values are resampled with replacement ``n_boot`` times; the
    bounds are the ``(1 - confidence)/2`` and ``(1 + confidence)/2`` quantiles of the
    replicated statistic (percentile interval, Efron & Tibshirani [2]_, ch. 13). With a
    single value the interval collapses on it; with none everything is NaN. For the
    median of a few repeats the interval is coarse: it can only take sample values (or
    midpoints of two).
    """
    dims = as_dims(dim, da)
    if is_lazy(da):
        return by_blocks(lambda block, first: _bootstrap_ci(block, dims, statistic, n_boot, confidence,
                                                            seed, first), da, dims, "bootstrap_ci")
    return _bootstrap_ci(da, dims, statistic, n_boot, confidence, seed)


def _bootstrap_ci(da, dims, statistic, n_boot, confidence, seed, first_cell=0):
    """:func:`bootstrap_ci` of in-memory ``da``; its cells are numbered from ``first_cell``
    (so a block of a dask array draws what the same cells draw in memory)."""
    func = _statistic(statistic)
    lo_q, hi_q = alpha_bounds(confidence)
    stacked = cells(da, dims)
    shape, keep, coords = cell_shape(stacked)
    ncell = int(np.prod(shape, dtype=int))
    est, low, high = (np.full(ncell, np.nan) for _ in range(3))
    n = np.zeros(ncell, dtype=int)
    rngs = cell_rngs(seed, first_cell + ncell)[first_cell:]
    for i, x in cell_samples(stacked):
        n[i] = x.size
        if x.size == 0:
            continue
        est[i] = float(func(x, axis=-1))
        reps = bootstrap_samples(x, func, n_boot, rngs[i])
        low[i], high[i] = np.quantile(reps, [lo_q, hi_q])
    units = units_of(da)
    label = statistic if isinstance(statistic, str) else getattr(statistic, "__name__", "statistic")
    name = da.attrs.get("long_name", da.name or "value")

    def lab(v, units, what):
        return labelled(v.reshape(shape), keep, coords, units, what)

    return xr.Dataset({
        "estimate": lab(est, units, f"{label} of {name}"),
        "low": lab(low, units, f"lower {confidence:.0%} bootstrap bound of the {label}"),
        "high": lab(high, units, f"upper {confidence:.0%} bootstrap bound of the {label}"),
        "n": lab(n, "count", "sample size"),
    }, attrs={"statistic": label, "confidence": confidence, "n_boot": n_boot, "seed": seed,
              "method": "percentile bootstrap (Efron & Tibshirani 1993)"})


def ecdf(da: xr.DataArray, dim: str | Sequence[Hashable] | None = None) -> xr.Dataset:
    """Empirical cumulative distribution function along ``dim``, per cell.

    Parameters
    ----------
    da : xarray.DataArray
        Values, any unit (e.g. ``rtt`` in ms).
    dim : str or sequence of str, optional
        Dimension(s) pooled into each distribution; ``None`` pools all.

    Returns
    -------
    xarray.Dataset
        On a new dimension ``rank`` (0-based, the longest sample's length): ``value``
        (sorted finite values, units of ``da``; NaN padding after each cell's last
        value) and ``probability`` (``F(value) = (rank + 1) / n``, 1; NaN padding), plus
        ``n`` (count) per cell.

    Notes
    -----
    F̂(x) = #{xᵢ ≤ x} / n jumps by ``1/n`` at each sorted value
    [3]_; ties appear as repeated values, the last of them carrying the jump's top.
    Plot it as a step function (``interpolate="step-after"``).
    """
    dims = as_dims(dim, da)
    if is_lazy(da):
        return by_blocks(lambda block, first: ecdf(block, dims), da, dims, "ecdf")
    stacked = cells(da, dims)
    shape, keep, coords = cell_shape(stacked)
    ncell = int(np.prod(shape, dtype=int))
    samples = dict(cell_samples(stacked))
    width = max((x.size for x in samples.values()), default=0)
    value = np.full((ncell, width), np.nan)
    prob = np.full((ncell, width), np.nan)
    n = np.zeros(ncell, dtype=int)
    for i, x in samples.items():
        n[i] = x.size
        value[i, :x.size] = np.sort(x)
        prob[i, :x.size] = np.arange(1, x.size + 1) / x.size
    dims_out = (*keep, "rank")
    coords = {**coords, "rank": np.arange(width)}
    name = da.attrs.get("long_name", da.name or "value")
    return xr.Dataset({
        "value": labelled(value.reshape(*shape, width), dims_out, coords, units_of(da),
                          f"sorted {name}"),
        "probability": labelled(prob.reshape(*shape, width), dims_out, coords, "1",
                                "empirical cumulative probability"),
        "n": labelled(n.reshape(shape), keep, {k: v for k, v in coords.items() if k != "rank"},
                      "count", "sample size"),
    })


def frequency(da: xr.DataArray, dim: str | Sequence[Hashable] | None = None, bins: Any = 20,
              range: tuple[float, float] | None = None) -> xr.Dataset:
    """Frequency distribution (histogram) along ``dim``, per cell, on shared bins.

    Parameters
    ----------
    da : xarray.DataArray
        Values, any unit (seed 004 histograms UDP throughput in Mbit/s).
    dim : str or sequence of str, optional
        Dimension(s) pooled into each histogram; ``None`` pools all.
    bins : int or sequence of float, default 20
        Number of equal-width bins over ``range``, or the bin edges (units of ``da``).
    range : (float, float), optional
        Lower and upper edge when ``bins`` is a count; default: min and max of all
        finite values of ``da``, so every cell shares the same bins.

    Returns
    -------
    xarray.Dataset
        On dimension ``bin``: ``count`` (count), ``fraction`` (count / n, 1) and
        coordinates ``bin_low``, ``bin_high``, ``bin_center`` (units of ``da``).

    Notes
    -----
    Bins are half-open ``[low, high)`` except the last, which includes its upper edge,
    as :func:`numpy.histogram`; values outside the edges are not counted (``fraction``
    is still relative to all finite values, so it then sums to less than one).
    """
    dims = as_dims(dim, da)
    if np.ndim(bins) == 0:
        if range is None:
            lo, hi = (da.min().compute(), da.max().compute()) if is_lazy(da) else (da.min(), da.max())
            range = (float(lo), float(hi)) if np.isfinite(float(lo)) else (0.0, 1.0)
        edges = np.histogram_bin_edges([], bins=int(bins), range=range)
    else:
        edges = np.asarray(bins, dtype=float)
    if is_lazy(da):
        if set(dims) == set(da.dims):
            return _histogram(da, dims, *_lazy_counts(da, edges), edges)  # type: ignore[call-arg]
        return by_blocks(lambda block, first: frequency(block, dims, bins=edges), da, dims, "frequency")
    stacked = cells(da, dims)
    shape, keep, coords = cell_shape(stacked)
    ncell = int(np.prod(shape, dtype=int))
    counts = np.zeros((ncell, edges.size - 1), dtype=int)
    n = np.zeros(ncell, dtype=int)
    for i, x in cell_samples(stacked):
        counts[i], _ = np.histogram(x, bins=edges)
        n[i] = x.size
    return _histogram(da, dims, counts, n, edges, (shape, keep, coords))


def _histogram(da, dims, counts, n, edges, cell=None):
    """The Dataset of :func:`frequency` from ``(cells, bins)`` counts and cell sizes."""
    shape, keep, coords = cell if cell is not None else ((), (), {})
    with quiet():
        frac = counts / n[:, None]
    units = units_of(da)
    dims_out = (*keep, "bin")
    coords = {**coords, "bin": np.arange(edges.size - 1),
              "bin_low": ("bin", edges[:-1], {"units": units, "long_name": "lower bin edge"}),
              "bin_high": ("bin", edges[1:], {"units": units, "long_name": "upper bin edge"}),
              "bin_center": ("bin", (edges[:-1] + edges[1:]) / 2,
                             {"units": units, "long_name": "bin centre"})}
    shp = (*shape, edges.size - 1)
    return xr.Dataset({
        "count": labelled(counts.reshape(shp), dims_out, coords, "count", "values in the bin"),
        "fraction": labelled(frac.reshape(shp), dims_out, coords, "1",
                             "fraction of the cell's values in the bin"),
    })


# ------------------------------------------------------------------ dask (out of core)

def _chunk_histogram(x, edges):
    x = np.asarray(x, float).ravel()
    x = x[~np.isnan(x)]
    counts = np.histogram(x, bins=edges)[0]
    return np.concatenate([counts, [x.size]])[None, :]


def _lazy_counts(da, edges):
    """Histogram counts and number of finite values of a whole dask array: per-chunk
    counts on fixed edges, summed (exact; a chunk's table has ``len(edges)`` numbers)."""
    import dask.array

    flat = da.data.reshape(-1) if da.ndim != 1 else da.data
    parts = dask.array.map_blocks(_chunk_histogram, flat, edges, new_axis=1, dtype=np.int64,
                                  chunks=((1,) * flat.numblocks[0], (edges.size,)))
    total = parts.sum(axis=0).compute()
    return total[None, :-1], np.array([total[-1]])


def by_blocks(func, da, dims, what):
    """``func`` of a dask array one block of cells at a time, concatenated (exact).

    The reduced ``dims`` are re-chunked whole, so each block holds complete samples of
    its cells; the block is loaded, reduced in memory, and let go. ``func(block,
    first_cell)`` gets the number of cells before the block (for per-cell seeds).
    """
    other = [d for d in da.dims if d not in dims]
    if not other:
        raise ValueError(f"{what} of a dask array over all its dimensions would hold every "
                         "value at once; reduce per cell (keep a dimension) or use "
                         "describe / frequency, which merge per-chunk summaries")
    da = da.chunk({d: -1 for d in dims})
    lead = other[0]
    per_cell = int(np.prod([da.sizes[d] for d in other[1:]], dtype=int))
    pieces, start = [], 0
    for size in da.chunksizes[lead]:
        block = da.isel({lead: slice(start, start + size)}).load()
        pieces.append(func(block, start * per_cell))
        start += size
    return xr.concat(pieces, dim=lead, data_vars="minimal", coords="minimal",
                     compat="override", combine_attrs="override")


def _lazy_describe(da, dims, percentiles, method):
    """:func:`describe` of a dask array: exact per block of cells, or, reducing every
    dimension, from mergeable sums and a histogram sketch (error bound in attrs)."""
    if [d for d in da.dims if d not in dims]:
        out = by_blocks(lambda block, first: describe(block, dims, percentiles, method), da, dims,
                        "describe")
        out.attrs.update({"exact": 1, "quantile_error_bound": 0.0})
        return out
    if method != "linear":
        raise ValueError(f"describe of a whole dask array uses the linear method; got {method!r}")
    flat = da.stack(_all=list(da.dims)) if da.ndim > 1 else da
    g = grouped_summary(flat, {"_one": np.zeros(flat.size, dtype=int)}, percentiles,
                        dim=flat.dims[0]).isel(_one=0, drop=True)
    name = da.attrs.get("long_name", da.name or "value")
    for var in g.data_vars:
        g[var].attrs["long_name"] = g[var].attrs["long_name"].replace(" of value", f" of {name}")
    g.attrs.update({"reduced_dims": " ".join(dims), "quantile_method": method})
    return g
