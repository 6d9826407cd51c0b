"""Group-wise summaries of one variable, the same on NumPy and on dask (out of core).

A monitor campaign is one long ``run`` dimension; its statistics are summaries per group
of runs (path, direction, hour, socket buffer, period). :func:`grouped_summary` computes
count, mean, standard deviation, extremes and percentiles per group:

- NumPy input: exact, each group's values sorted once (:func:`_table`).
- dask input, every group within one chunk (a campaign in time order, grouped by time
  bins: :func:`aligned_chunks` cuts the chunks at the bins' edges): the same, one task a
  chunk, each for its own groups: the same numbers, bit for bit.
- dask input, groups across chunks: count, sums, extremes by ``flox``'s map-reduce
  (exact and mergeable); percentiles from a mergeable fixed-bin histogram per group
  (:func:`histogram_sketch`), whose error is at most one bin width.

Nothing here calls ``.compute()`` on the whole array: every task holds one chunk and
its per-group partial results (tests/test_stats_outofcore.py counts them).

References
----------
.. [1] R. J. Hyndman, Y. Fan, "Sample quantiles in statistical packages", The American
   Statistician 50(4), 361-365, 1996 (definition 7, the "linear" method used here).
.. [2] G. Cormode, M. Garofalakis, P. J. Haas, C. Jermaine, "Synopses for massive data:
   samples, histograms, wavelets, sketches", Foundations and Trends in Databases 4,
   1-294, 2012 (mergeable histograms).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Hashable, Mapping, Sequence
    from numpy.typing import ArrayLike

import numpy as np
import pandas as pd
import xarray as xr

from ._util import percentile_name, quiet, units_of

__all__ = ["grouped_summary", "group_median", "histogram_sketch", "sketch_quantiles", "aligned_chunks",
           "is_lazy", "SKETCH_BINS", "SUMMARY_LONG_NAMES"]

#: Bins of the fixed-width histogram sketch between a variable's minimum and maximum: the
#: sketch's percentiles are off by at most (max - min) / SKETCH_BINS.
SKETCH_BINS = 4096
#: Long names of the summary variables (percentiles are added as ``p<q>``).
SUMMARY_LONG_NAMES = {"n": "number of values", "mean": "mean", "std": "sample standard deviation",
                      "min": "minimum", "max": "maximum", "median": "median",
                      "iqr": "interquartile range (p75 - p25)"}


def _is_dask(data):
    # by module, so that importing thruput.stats does not import dask (the CLI starts faster)
    return type(data).__module__.split(".")[0] == "dask"


def is_lazy(da: Any) -> bool:
    """True when ``da`` is backed by a dask array."""
    return _is_dask(getattr(da, "data", None))


def aligned_chunks(labels: ArrayLike, target: int) -> tuple[int, ...]:
    """Chunk sizes along one dimension whose edges fall only where ``labels`` change.

    ``labels`` must be sorted (a time-ordered campaign's time bins); chunks are about
    ``target`` long, longer where one label spans more.
    """
    labels = np.asarray(labels)
    if labels.size == 0:
        return (0,)
    edges = np.flatnonzero(labels[1:] != labels[:-1]) + 1
    chunks, start = [], 0
    for e in edges:
        if e - start >= target:
            chunks.append(int(e - start))
            start = e  # type: ignore[assignment]
    chunks.append(int(labels.size - start))
    return tuple(chunks)


def _codes(keys):
    """Group code per run and the table of distinct keys (pandas' factorisation)."""
    frame = pd.DataFrame({k: np.asarray(v) for k, v in keys.items()})
    codes = frame.groupby(list(keys), sort=True).ngroup().to_numpy()
    uniques = frame.drop_duplicates().sort_values(list(keys)).reset_index(drop=True)
    return codes, uniques


def _flat(values, codes):
    """``values`` (runs first, then any other dimension) as one float array, and the
    group code of each (its run's)."""
    values = np.asarray(values, float)
    return values.ravel(), np.repeat(np.asarray(codes).ravel(), values[:1].size)


def _chunk_counts(values, codes, lo, width, bins, ngroups):
    values, codes = _flat(values, codes)
    ok = ~np.isnan(values) & (codes >= 0)
    idx = np.clip(((values[ok] - lo) / width).astype(np.int64), 0, bins - 1)
    flat = np.bincount(codes[ok] * bins + idx, minlength=ngroups * bins)
    return flat.reshape(1, ngroups, bins)


def histogram_sketch(values: Any, codes: np.ndarray, ngroups: int, lo: float, hi: float,
                     bins: int = SKETCH_BINS) -> np.ndarray:
    """Counts per group and fixed-width bin over ``[lo, hi]``, merged over chunks.

    Parameters
    ----------
    values : dask.array.Array or numpy.ndarray
        Values (NaN = missing) on the grouped dimension first, then any others (a ping
        run's probes), whose values count in their run's group.
    codes : numpy.ndarray
        Group code (0 .. ngroups - 1, -1 = none) along the first dimension.
    ngroups, lo, hi, bins
        Number of groups; range and number of bins.

    Returns
    -------
    numpy.ndarray
        ``(ngroups, bins)`` counts (int). Each chunk contributes a ``(ngroups, bins)``
        table; tables add up (a mergeable summary [2]_).
    """
    width = (hi - lo) / bins if hi > lo else 1.0
    if _is_dask(values):
        import dask.array

        values = values.rechunk({i: -1 for i in range(1, values.ndim)})   # (a run's probes in one)
        flat = values if values.ndim == 1 else values.reshape(values.shape[:1] + (-1,))
        c = np.asarray(codes).reshape((-1,) + (1,) * (flat.ndim - 1))     # (aligned on run)
        c = dask.array.from_array(c, chunks=values.chunks[:1] + ((1,),) * (flat.ndim - 1))
        parts = dask.array.map_blocks(_chunk_counts, flat, c, lo, width, bins, ngroups,
                                      drop_axis=list(range(1, flat.ndim)), new_axis=[1, 2],
                                      dtype=np.int64,
                                      chunks=((1,) * values.numblocks[0], (ngroups,), (bins,)))
        return parts.sum(axis=0).compute()
    return _chunk_counts(values, codes, lo, width, bins, ngroups)[0]


def sketch_quantiles(counts: ArrayLike, lo: float, hi: float, q: Sequence[float]) -> np.ndarray:
    """Linear-interpolation percentiles (Hyndman & Fan 7 [1]_) from histogram counts.

    Each order statistic is placed inside its bin as if the bin's values were evenly
    spread; it is then off by at most one bin width ``(hi - lo) / bins``, and so is
    every percentile interpolated between two of them.

    Returns ``(ngroups, len(q))`` values; NaN for empty groups.
    """
    counts = np.atleast_2d(counts)
    bins = counts.shape[1]
    width = (hi - lo) / bins if hi > lo else 1.0
    cum = np.cumsum(counts, axis=1)
    n = cum[:, -1]
    out = np.full((counts.shape[0], len(q)), np.nan)

    def order_stat(g, k):
        b = int(np.searchsorted(cum[g], k, side="right"))
        before = cum[g][b - 1] if b else 0
        return lo + width * (b + (k - before + 0.5) / counts[g, b])

    for g in range(counts.shape[0]):
        if n[g] == 0:
            continue
        for j, p in enumerate(q):
            r = p / 100 * (n[g] - 1)
            k = int(np.floor(r))
            a = order_stat(g, k)
            b = order_stat(g, min(k + 1, n[g] - 1))
            out[g, j] = a + (r - k) * (b - a)
    return out


def _table(values, codes, qs):
    """Count, mean, std, extremes and percentiles ``qs`` of each group with a value:
    exact, from the values sorted once within their groups (a frame indexed by code).
    ``values`` has the runs first (other dimensions count in their run's group)."""
    values, codes = _flat(values, codes)
    ok = ~np.isnan(values) & (codes >= 0)
    values, codes = values[ok], codes[ok]
    order = np.lexsort((values, codes))
    return _sorted_table(values[order], codes[order], qs)


def _sorted_table(values, codes, qs):
    """:func:`_table` of values without NaN, sorted by group code and by value within each."""
    start = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if codes.size else np.zeros(0, np.int64)
    groups, n = codes[start], np.diff(np.r_[start, codes.size])
    if not n.size:      # (no value: reduceat needs one)
        return pd.DataFrame({k: np.array([], float) for k in ("n", "mean", "std", "min", "max", *qs)})
    mean = np.add.reduceat(values, start) / n
    with quiet():
        std = np.sqrt(np.add.reduceat((values - np.repeat(mean, n)) ** 2, start) / (n - 1))
    last = start + n - 1
    columns = {"n": n, "mean": mean, "std": np.where(n > 1, std, np.nan), "min": values[start],
               "max": values[last]}
    for q in qs:        # Hyndman & Fan 7: between order statistics k and k + 1 of each group
        rank = q / 100 * (n - 1)
        k = np.floor(rank).astype(np.int64)
        low, high = values[start + k], values[np.minimum(start + k + 1, last)]
        columns[q] = low + (rank - k) * (high - low)
    return pd.DataFrame(columns, index=groups)


def _exact(values, codes, ngroups, qs):
    return _every_group(_table(values, codes, qs), ngroups)


def _every_group(table, ngroups):
    """``table`` (:func:`_table`'s rows) with a row for every code, ``n = 0`` where none."""
    table = table.reindex(range(ngroups))
    table["n"] = table["n"].fillna(0).astype(int)
    return table


def _blockwise(values, codes, ngroups, qs):
    """:func:`_exact` of dask ``values`` whose every group lies within one chunk: one task
    a chunk, which reads it and returns its groups' rows (every statistic at once: one
    ``flox`` reduction per statistic kept each chunk until the last had read it, a
    worker's peak at 10^8 probes then 1.4-1.8 GB)."""
    import dask

    values = values.rechunk({i: -1 for i in range(1, values.ndim)})
    codes = codes.astype(np.min_scalar_type(-max(ngroups, 1)))    # (a task carries its own)
    edges = np.cumsum((0,) + values.chunks[0])
    parts = [dask.delayed(_table)(block, codes[a:b], qs)
             for block, a, b in zip(values.to_delayed().ravel(), edges, edges[1:])]
    return _every_group(pd.concat(dask.compute(*parts)), ngroups)


def _lazy(values, codes, ngroups, qs):
    """Count, sums and extremes merged over chunks (``flox`` map-reduce) and percentiles
    from :func:`histogram_sketch`: dask ``values`` whose groups span chunks."""
    import dask
    import flox.xarray

    dims = ["run"] + [f"_{i}" for i in range(1, values.ndim)]   # (all reduced: names do not matter)
    da = xr.DataArray(values, dims=dims, coords={"g": ("run", codes)})
    da = da.where(da["g"] >= 0)
    expected = np.arange(ngroups)
    reduced = {}
    for key, func in (("n", "count"), ("sum", "nansum"), ("min", "nanmin"), ("max", "nanmax")):
        reduced[key] = flox.xarray.xarray_reduce(da, "g", func=func, expected_groups=expected,
                                                 method="map-reduce", fill_value=np.nan, dim=dims)
    reduced["sq"] = flox.xarray.xarray_reduce(da ** 2, "g", func="nansum", expected_groups=expected,
                                              method="map-reduce", fill_value=np.nan, dim=dims)
    (got,) = dask.compute(reduced)
    n = np.nan_to_num(got["n"].values).astype(int)
    with quiet():
        mean = got["sum"].values / n
        var = (got["sq"].values - n * mean ** 2) / (n - 1)
    table = pd.DataFrame({"n": n, "mean": np.where(n > 0, mean, np.nan),
                          "std": np.where(n > 1, np.sqrt(np.maximum(var, 0)), np.nan),
                          "min": got["min"].values, "max": got["max"].values})
    lo, hi = np.nanmin(table["min"]), np.nanmax(table["max"])
    counts = histogram_sketch(values, codes, ngroups, lo, hi)
    qv = sketch_quantiles(counts, lo, hi, qs)
    for j, q in enumerate(qs):
        table[q] = qv[:, j]
    return table


def grouped_summary(da: xr.DataArray, keys: Mapping[str, Any], percentiles: Sequence[float] = (10, 50, 90),
                    dim: Hashable = "run", exact: bool | None = None) -> xr.Dataset:
    """Count, mean, std, extremes, IQR and percentiles of ``da`` per group of runs.

    Parameters
    ----------
    da : xarray.DataArray
        One variable on ``dim`` (NumPy or dask), e.g. a monitor campaign's
        ``throughput`` (bit/s); on other dimensions too, whose values count in their
        run's group (``rtt`` on ``run`` x ``probe``: every probe's RTT, ms).
    keys : dict of str to array_like
        Group labels, one 1-D array (length of ``dim``) per output dimension, e.g.
        ``{"path": ..., "direction": ..., "time": hour_of_each_run}``. Runs whose label is
        missing (NaN/NaT) belong to no group.
    percentiles : sequence of float, default (10, 50, 90)
        Reported as ``p<q>``; ``median`` and ``iqr`` are always reported.
    dim : str, default "run"
        The dimension grouped.
    exact : bool, optional
        dask only: True when every group lies within one chunk (everything then exact,
        one task a chunk); False to use the histogram sketch; default: checked.

    Returns
    -------
    xarray.Dataset
        On one dimension per key (the full product of distinct labels; empty
        combinations have ``n = 0`` and NaN): ``n`` (count), ``mean``, ``std``, ``min``,
        ``max``, ``median``, ``iqr`` and ``p<q>`` (units of ``da``). Attrs ``exact``
        (1 when percentiles are exact) and ``quantile_error_bound`` (units of ``da``: 0
        when exact, else one sketch bin).

    Notes
    -----
    Exact percentiles are Hyndman & Fan's definition 7 [1]_ (NumPy's ``linear``); the
    sketch's are within ``(max - min) / SKETCH_BINS`` of them
    (:func:`sketch_quantiles`). Means and standard deviations of dask input whose
    groups span chunks are merged from per-chunk sums and sums of squares.
    """
    keys = {k: np.asarray(v.values if hasattr(v, "values") else v) for k, v in keys.items()}
    valid = np.ones(da.sizes[dim], dtype=bool)
    for v in keys.values():
        valid &= ~pd.isna(v)
    codes, table_keys = _codes({k: np.where(valid, v, v[valid][0] if valid.any() else v) for k, v in keys.items()})
    codes = np.where(valid, codes, -1)
    ngroups = len(table_keys)
    qs = sorted(set(float(q) for q in percentiles) | {25.0, 50.0, 75.0})
    data = da.transpose(dim, ...).data
    bound = 0.0
    if _is_dask(data):
        if exact is None:
            exact = _groups_within_chunks(codes, data.chunks[0])
        table = (_blockwise if exact else _lazy)(data, codes, ngroups, qs)
        if not exact:
            bound = (np.nanmax(table["max"]) - np.nanmin(table["min"])) / SKETCH_BINS
    else:
        exact = True
        table = _exact(data, codes, ngroups, qs)
    return _as_dataset(table, table_keys, keys, da, percentiles, qs, exact, bound)


def _groups_within_chunks(codes, chunks):
    """True when no group has runs in two chunks."""
    bounds = np.cumsum((0,) + tuple(chunks))
    chunk_of = np.searchsorted(bounds, np.arange(codes.size), side="right") - 1
    frame = pd.DataFrame({"g": codes, "c": chunk_of})
    return bool((frame[frame["g"] >= 0].groupby("g")["c"].nunique() <= 1).all())


def _as_dataset(table, table_keys, keys, da, percentiles, qs, exact, bound):
    index = pd.MultiIndex.from_frame(table_keys)
    units = units_of(da)
    name = da.attrs.get("long_name", da.name or "value")
    columns = {"n": table["n"], "mean": table["mean"], "std": table["std"], "min": table["min"],
               "max": table["max"], "median": table[50.0], "iqr": table[75.0] - table[25.0]}
    for q in percentiles:
        columns[percentile_name(q)] = table[float(q)]
    frame = pd.DataFrame({k: np.asarray(v) for k, v in columns.items()}, index=index)
    full = pd.MultiIndex.from_product([pd.unique(np.sort(table_keys[k].values)) for k in keys],
                                      names=list(keys))
    frame = frame.reindex(full)
    frame["n"] = frame["n"].fillna(0).astype(int)
    ds = xr.Dataset.from_dataframe(frame)
    for var in ds.data_vars:
        what = SUMMARY_LONG_NAMES.get(var) or f"{var[1:].replace('_', '.')}th percentile"
        ds[var].attrs = {"units": "count" if var == "n" else units, "long_name": f"{what} of {name}"}
    ds.attrs.update({"exact": int(bool(exact)), "quantile_error_bound": float(bound),
                     "quantile_method": "linear (Hyndman & Fan 7)"})
    return ds


def group_median(key: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, medians)``: the distinct ``key`` (sorted) and the median of the finite
    ``values`` of each (NaN when none), as pandas' groupby median finds it (the middle
    value, or the mean of the two middle ones), by one sort (a hash groupby of millions of
    keys takes several times the memory)."""
    order = np.lexsort((values, key))               # by key, then value; NaN last
    key, values = key[order], values[order]
    del order
    start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    count = np.add.reduceat(np.isfinite(values), start) if start.size else np.zeros(0, np.int64)
    lo, hi = start + np.maximum(count - 1, 0) // 2, start + count // 2
    with np.errstate(invalid="ignore"):
        median = np.where(count > 0, (values[lo] + values[np.minimum(hi, key.size - 1)]) / 2, np.nan)
    return key[start], median
