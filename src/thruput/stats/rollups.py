"""Rollups of a monitor campaign: per path, direction, test (and socket buffer or ping
size) and fixed time bin, the distribution of the runs, computed once.

esmond (perfSONAR's archive) keeps summaries at fixed resolutions so that a year of many
paths is drawn from a few thousand rows, not from every run; :func:`rollups` does the same
at :data:`FREQS` (5 minutes, 1 hour, 1 day), one table per resolution and series kind
(e.g. ``1h/ping_rtt``).

The pipeline's ``rollups-monitor`` stage keeps them in a Zarr store,
``data/processed/<c>.rollups.zarr`` (the same groups, growing along ``time``):
:func:`write_rollups` builds it a window of runs at a time from the campaign's store read
lazily, and :func:`append_rollups` brings it up to date after an append: the bins from the
last day built on are computed again from the runs since then and written in place, the
arrays lengthened; the bins before are neither read nor written. Both give what
:func:`rollups` gives for the whole campaign. Pages read a resolution lazily with
:func:`open_rollup`. A netCDF file of every table (:func:`rollups_encoding`) is the other
form, for a campaign outside the pipeline; :func:`update_rollups` recomputes only the
bins the new runs can touch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os
    from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from ..campaign.store import ROLLUP_FREQS, open_rollup, run_values
from ._util import percentile_name
from .grouped import SUMMARY_LONG_NAMES, _sorted_table, group_median

__all__ = ["rollups", "update_rollups", "write_rollups", "append_rollups", "rollup_labels", "rollups_encoding",
           "open_rollup", "open_rollups", "throughput_delay", "FREQS", "KINDS", "PERCENTILES"]

#: Resolutions of the rollups (pandas offsets; bins start at multiples since 1970 UTC).
FREQS = ROLLUP_FREQS
#: Series kinds: name -> (test, variable, what splits a test's runs besides path and
#: direction: its ``variant`` coordinate).
KINDS = {
    "tcp_throughput": ("tcp", "throughput", "socket_buffer"),
    "udp_throughput": ("udp", "throughput", None),
    "udp_offered": ("udp", "throughput_sender", None),      # the load offered: the sender's rate
    "udp_jitter": ("udp", "jitter", None),
    "ping_rtt": ("ping", "rtt_median", "size"),
}
#: Percentiles of every bin (the median is ``median``).
PERCENTILES = (10, 25, 50, 75, 90)


def _column(ds, name, cache):
    """The per-run NumPy values of ``name`` (read once: a dask column is computed whole,
    one 1-D array of the campaign's runs, never a fancy index of a dask array)."""
    if name not in cache:
        cache[name] = np.asarray(ds[name].transpose("run", ...).values)
    return cache[name]


def _factorize(labels):
    """Sorted distinct labels and the code of each (NaN labels: code -1)."""
    missing = np.asarray(pd.isna(labels))
    uniques = np.unique(labels[~missing]) if missing.any() else np.unique(labels)
    codes = np.searchsorted(uniques, np.where(missing, uniques[0] if uniques.size else labels, labels))
    return uniques, np.where(missing, -1, codes)


def _loss(frame, code, test, ngroups):
    """Per dense group code (``code`` of each run of ``frame``'s columns, -1: none):
    ``runs`` (tests started, any outcome), ``failed`` (not ``ok``) and ``loss``: ping,
    probes lost / sent; UDP, datagrams lost / sent (the mean of the runs' fractions); TCP,
    failed runs / runs. Empty groups: 0, 0, NaN."""
    keep = code >= 0
    code = code[keep]
    runs = np.bincount(code, minlength=ngroups)
    failed = np.bincount(code, weights=frame["failed"][keep], minlength=ngroups).astype(np.int64)

    def total(col):             # (NaN skipped; NaN where a group has no number)
        v = frame[col][keep]
        has = ~np.isnan(v)
        got = np.bincount(code, weights=np.where(has, v, 0.0), minlength=ngroups)
        return got, np.bincount(code, weights=has, minlength=ngroups)

    with np.errstate(invalid="ignore", divide="ignore"):
        if test == "ping":
            (sent, n_sent), (lost, n_lost) = total("sent"), total("lost")
            loss = np.where((n_sent > 0) & (n_lost > 0) & (sent > 0), lost / sent, np.nan)
        elif test == "udp":
            got, n = total("loss")
            loss = np.where(n > 0, got / n, np.nan)
        else:
            loss = np.where(runs > 0, failed / runs, np.nan)
    return {"runs": runs.astype(np.int64), "failed": failed, "loss": loss}


def _summary_vars(table, ngroups, qs):
    """:func:`~thruput.stats.grouped._table`'s rows placed at their dense group codes."""
    index = table.index.to_numpy()
    out = {}
    for col in ("n", "mean", "std", "min", "max", *qs):
        full = np.zeros(ngroups, np.int64) if col == "n" else np.full(ngroups, np.nan)
        full[index] = table[col].to_numpy()
        out[col] = full
    return out


def rollups(ds: xr.Dataset, freqs: Sequence[str] = FREQS,
            percentiles: Sequence[float] = PERCENTILES,
            labels: Mapping[str, Mapping[str, np.ndarray]] | None = None,
            columns: Mapping[str, np.ndarray] | None = None) -> dict[str, xr.Dataset]:
    """Every rollup of a monitor campaign.

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign, NumPy or dask (each per-run variable used is read whole, once:
        one float or label per run).
    freqs : sequence of str
        Bin widths (fixed: ``"5min"``, ``"1h"``, ``"1D"``).
    percentiles : sequence of float
    labels : dict, optional
        Per kind, the sorted ``path``, ``direction`` and ``variant`` labels the tables are
        laid out on (:func:`rollup_labels` of the whole campaign, so that the tables of
        a part of it line up with the rest); default: those of ``ds``.
    columns : dict, optional
        Per-run columns of ``ds`` read already (name -> NumPy array): not read again.

    Returns
    -------
    dict of str to xarray.Dataset
        ``"<freq>/<kind>"`` (:data:`KINDS`) -> on ``(path, direction, variant, time)``:
        ``n`` (ok runs), ``median``, ``p<q>``, ``min``, ``max``, ``mean``, ``std``,
        ``runs``, ``failed``, ``loss``; every bin from the first to the last (empty bins:
        ``n`` 0, NaN). ``variant`` is the socket buffer (TCP) or ping size (bytes), 0
        where the test has none.

    Notes
    -----
    The same numbers as :func:`~thruput.stats.monitor.rolling_summary` per kind and
    resolution (exact percentiles, Hyndman & Fan 7), computed on one dense group code per
    run, ``((path, direction, variant), bin)``, which is also the position of its group in
    the output: one sort per resolution and no label index.
    """
    cache: dict[str, Any] = dict(columns or {})
    test = _column(ds, "test", cache)
    ok = _column(ds, "outcome", cache) == "ok"
    times = _column(ds, "time", cache).astype("datetime64[ns]")
    out = {}
    for kind, (name, var, split) in KINDS.items():
        idx = np.flatnonzero(test == name)
        if idx.size == 0 or var not in ds:
            continue
        variant = np.nan_to_num(np.asarray(_column(ds, split, cache)[idx], float)) if split else np.zeros(idx.size)
        coded = {}
        for key, lab in (("path", _column(ds, "path", cache)[idx]), ("direction", _column(ds, "direction", cache)[idx]),
                         ("variant", variant)):
            if labels is None:
                coded[key] = _factorize(lab)
            else:
                uniques = np.asarray(labels[kind][key])
                coded[key] = (uniques, pd.Index(uniques).get_indexer(lab))
        values = np.where(ok[idx], np.asarray(_column(ds, var, cache)[idx], float), np.nan)
        extra = {col: np.asarray(_column(ds, col, cache)[idx], float) for col in _EXTRA.get(name, ())}
        out.update(_kind_rollups(kind, times[idx], ok[idx], coded, values, extra, ds[var].attrs, freqs, percentiles))
    return out


#: Per-run columns besides the value that a test's loss is computed from.
_EXTRA = {"ping": ("ping_transmitted", "ping_received"), "udp": ("loss_fraction",)}


def _kind_rollups(kind, t, ok, coded, values, extra, attrs, freqs, percentiles):
    """:func:`rollups` of one kind's runs: their times ``t``, ``ok``, ``coded`` labels
    (``{"path"|"direction"|"variant": (labels, codes)}``, code -1: none), ``values`` (NaN
    where not ok) and :data:`_EXTRA` columns. ``{"<freq>/<kind>": Dataset}``, or ``{}``
    where no run has a time and every label."""
    name, var, _ = KINDS[kind]
    qs = sorted({float(q) for q in percentiles} | {25.0, 50.0, 75.0})
    valid = ~np.isnat(t)
    series, coords = np.zeros(t.size, np.int64), {}
    for key, (uniques, codes) in coded.items():
        valid &= codes >= 0
        coords[key] = uniques
        series = series * max(uniques.size, 1) + codes
    if not valid.any():
        return {}
    nseries = int(np.prod([c.size for c in coords.values()]))
    rank = np.full(values.size, -1, np.int64)     # (each value's rank; NaN: -1)
    finite = np.flatnonzero(~np.isnan(values))
    rank[finite[np.argsort(values[finite])]] = np.arange(finite.size)    # (equal values: either order)
    frame = {"failed": ~ok}
    if name == "ping":
        frame["sent"] = extra["ping_transmitted"]
        frame["lost"] = extra["ping_transmitted"] - extra["ping_received"]
    elif name == "udp":
        frame["loss"] = extra["loss_fraction"]
    return {f"{freq}/{kind}": _rollup(t, valid, series, nseries, coords, values, rank, frame, kind, name, var,
                                      attrs, freq, percentiles, qs) for freq in freqs}


def _rollup(t, valid, series, nseries, coords, values, rank, frame, kind, test, var, attrs, freq, percentiles, qs):
    """One resolution of one kind (:func:`rollups`)."""
    step = pd.Timedelta(freq).value
    bins = t.view(np.int64) // step * step         # (pandas' floor of a fixed freq; NaT: not valid)
    first, last = bins[valid].min(), bins[valid].max()
    nbins = int((last - first) // step) + 1
    code = np.where(valid, series * nbins + (bins - first) // step, -1)
    ngroups = nseries * nbins
    keep = (code >= 0) & (rank >= 0)
    order = np.argsort(code[keep] * np.int64(rank.size) + rank[keep])   # (by group, then by value)
    table = _sorted_table(values[keep][order], code[keep][order], qs)
    summary = _summary_vars(table, ngroups, qs)
    extra = _loss(frame, code, test, ngroups)
    shape = tuple(c.size for c in coords.values()) + (nbins,)
    units = attrs.get("units", "1")
    long = attrs.get("long_name", var)
    columns = {"n": summary["n"], "mean": summary["mean"], "std": summary["std"], "min": summary["min"],
               "max": summary["max"], "median": summary[50.0]}
    for q in percentiles:
        if float(q) != 50.0:
            columns[percentile_name(q)] = summary[float(q)]
    data = {}
    for col, v in columns.items():
        what = SUMMARY_LONG_NAMES.get(col) or f"{col[1:].replace('_', '.')}th percentile"
        data[col] = (tuple(_DIMS), v.reshape(shape),
                     {"units": "count" if col == "n" else units, "long_name": f"{what} of {long}"})
    data["median"][2].update(units=attrs.get("units", ""), long_name=long)
    data["runs"] = (tuple(_DIMS), extra["runs"].reshape(shape))
    data["failed"] = (tuple(_DIMS), extra["failed"].reshape(shape))
    data["loss"] = (tuple(_DIMS), extra["loss"].reshape(shape), {"units": "1", "long_name": _LOSS[test]})
    time = (first + np.arange(nbins, dtype=np.int64) * step).astype("datetime64[ns]")
    ds = xr.Dataset(data, coords={**{k: (k, _as_label(v)) for k, v in coords.items()},
                                  "time": ("time", time)})
    ds.attrs.update({"exact": 1, "quantile_error_bound": 0.0, "quantile_method": "linear (Hyndman & Fan 7)",
                     "freq": freq, "kind": kind, "test": test, "variable": var,
                     "units": attrs.get("units", "")})
    return ds


_DIMS = ("path", "direction", "variant", "time")
#: Fill of a group without runs (the rest: NaN).
_EMPTY = {"n": 0, "runs": 0, "failed": 0}


def update_rollups(tables, ds, freqs=FREQS, percentiles=PERCENTILES):
    """The rollups of ``ds`` from ``tables``, the rollups of its earlier runs: the bins
    already built are kept and only the bins from the last one of the coarsest resolution
    on are computed again, from the runs since its start.

    Parameters
    ----------
    tables : dict of str to xarray.Dataset
        :func:`rollups` of the campaign before the append (same ``freqs``, ``percentiles``).
    ds : xarray.Dataset
        The campaign after the append, in time order (the store refuses older runs), NumPy
        or dask; of a dask campaign only the chunks at its end that hold the recomputed
        bins are read.

    Returns
    -------
    dict of str to xarray.Dataset
        Equal to ``rollups(ds, freqs, percentiles)``; a new day costs in proportion to the
        day (plus copying the kept bins in memory), not the year.
    """
    if not tables:
        return rollups(ds, freqs, percentiles)
    last = min(np.datetime64(t["time"].values[-1], "ns") for t in tables.values() if t.sizes["time"])
    since = min(pd.Timestamp(last).floor(f) for f in freqs).to_datetime64()
    start = _first_run_since(ds, since)
    tail = rollups(ds.isel(run=slice(start, None)), freqs, percentiles)
    out = {}
    for key in list(tables) + [k for k in tail if k not in tables]:
        old, new = tables.get(key), tail.get(key)
        if new is None or old is None:
            out[key] = old if new is None else new
            continue
        cut = np.datetime64(pd.Timestamp(since).floor(old.attrs["freq"]), "ns")
        kept = old.isel(time=slice(0, int(np.searchsorted(old["time"].values, cut))))   # (a view)
        labels = {d: np.union1d(old[d].values, new[d].values) for d in _DIMS[:-1]}
        kept, new = (t if all(t.sizes[d] == v.size for d, v in labels.items())
                     else t.reindex(labels, fill_value=_EMPTY) for t in (kept, new))
        freq = old.attrs["freq"]
        after = kept["time"].values[-1] + pd.Timedelta(freq).to_timedelta64() if kept.sizes["time"] else None
        gap = pd.date_range(after, new["time"].values[0], freq=freq, inclusive="left").to_numpy() \
            if after is not None else np.zeros(0, "datetime64[ns]")
        parts = [kept, new.reindex(time=gap, fill_value=_EMPTY), new] if gap.size else [kept, new]
        both = xr.concat(parts, "time", data_vars="all", coords="minimal", compat="override",
                         combine_attrs="override")
        for d, v in labels.items():
            both[d] = v
        out[key] = both
    # (as rollups builds them: object labels, no encoding kept from a file read back)
    return {k: t.drop_encoding().assign_coords({d: _as_label(t[d].values) for d in _DIMS[:-1]})
            for k, t in out.items()}


#: Whole chunks of a table :func:`write_rollups` holds before writing them (Zarr's cost
#: of a write is mostly per array: its metadata read, resized and written again).
WRITE_CHUNKS = 2
#: Runs read at once by :func:`write_rollups` (one window of whole bins: its columns and
#: sorts take a few hundred MB at most).
WINDOW_RUNS = 1 << 18


def rollup_labels(ds: xr.Dataset, runs: int = WINDOW_RUNS, cache: dict | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Per kind (:data:`KINDS`) with runs in ``ds``: the sorted ``path``, ``direction`` and
    ``variant`` labels of its runs, read ``runs`` runs at a time (a dask campaign is
    never read whole; ``cache``: its columns read already, when one part)."""
    found: dict[str, dict[str, set]] = {}
    for a in range(0, ds.sizes["run"], runs):
        part = ds.isel(run=slice(a, a + runs)) if ds.sizes["run"] > runs else ds
        cache = cache if cache is not None and part is ds else {}
        test = _column(part, "test", cache)
        for kind, (name, var, split) in KINDS.items():
            idx = np.flatnonzero(test == name)
            if idx.size == 0 or var not in ds:
                continue
            variant = np.nan_to_num(np.asarray(_column(part, split, cache)[idx], float)) if split else np.zeros(1)
            seen = found.setdefault(kind, {"path": set(), "direction": set(), "variant": set()})
            for key, lab in (("path", _column(part, "path", cache)[idx]),
                             ("direction", _column(part, "direction", cache)[idx]), ("variant", variant)):
                seen[key].update(pd.unique(lab[~np.asarray(pd.isna(lab))]).tolist())
    return _sorted_labels(found)


#: The label columns :func:`write_rollups` reads once, kept as codes between its passes.
_CODED = ("test", "outcome", "path", "direction", "socket_buffer", "size")


def _label_pass(ds):
    """The :data:`_CODED` columns of ``ds`` as ``(sorted labels, codes)``
    (:func:`~thruput.campaign.store.label_codes`, kept in the smallest signed integer
    type: 1 byte a run for up to 127 labels; no label read again) and :func:`rollup_labels` of ``ds`` from them."""
    from ..campaign.store import label_codes

    coded = {}
    for name in (n for n in _CODED if n in ds.variables):
        uniques, codes = label_codes(ds, name)
        coded[name] = (uniques, codes.astype(np.min_scalar_type(-uniques.size - 1)))   # (int8 for a few labels)
    found = {}
    tests, test_codes = coded["test"]
    for kind, (name, var, split) in KINDS.items():
        mine = test_codes == _position(tests, name)
        if var not in ds or not mine.any():
            continue
        seen = {}
        for key, column in (("path", "path"), ("direction", "direction"), ("variant", split)):
            if column is None:
                seen[key] = {0.0}
                continue
            uniques, codes = coded[column]
            present = np.bincount(codes[mine] + 1, minlength=uniques.size + 1) > 0    # (code -1 first)
            seen[key] = set(uniques[present[1:]].tolist())
            if key == "variant" and present[0]:
                seen[key].add(0.0)          # (no socket buffer or size: variant 0)
        found[kind] = seen
    return _sorted_labels(found), coded


def _position(labels, label):
    """Position of ``label`` among sorted ``labels``, or -2 (no code)."""
    at = int(np.searchsorted(labels, label)) if len(labels) else 0
    return at if at < len(labels) and labels[at] == label else -2


def _recode(uniques, codes, labels, variant=False):
    """Codes into ``uniques`` (-1: none) as codes into ``labels`` (sorted; -1 where not
    there); ``variant``: a missing one is 0."""
    at = np.searchsorted(labels, uniques) if labels.size else np.zeros(uniques.size, np.int64)
    there = at < labels.size
    there[there] = labels[at[there]] == uniques[there]
    lookup = np.append(np.where(there, at, -1), _position(labels, 0.0) if variant else -1)
    return np.where(lookup == -2, -1, lookup)[codes]


def _window_rollups(ds, a, b, coded, labels, times, freqs, percentiles):
    """:func:`rollups` of the runs ``[a, b)`` of ``ds`` laid out on ``labels``, from the
    :data:`_CODED` codes of :func:`_label_pass` and the float columns of the window read
    (:func:`~thruput.campaign.store.run_values`)."""
    from ..campaign.store import run_values

    tests, test_codes = coded["test"]
    test = test_codes[a:b]
    outcomes, outcome_codes = coded["outcome"]
    ok = outcome_codes[a:b] == _position(outcomes, "ok")
    t = times[a:b].view("datetime64[ns]")
    out = {}
    for kind, (name, var, split) in KINDS.items():
        if kind not in labels:
            continue
        idx = np.flatnonzero(test == _position(tests, name))
        if idx.size == 0:
            continue
        kind_labels = labels[kind]
        tables = {}
        for key, column in (("path", "path"), ("direction", "direction"), ("variant", split)):
            uniques, codes = coded[column] if column else (np.zeros(0), np.full(b - a, -1, np.int32))
            tables[key] = (kind_labels[key], _recode(uniques, codes[a:b][idx] if column else codes[idx],
                                                     kind_labels[key], key == "variant"))
        values = np.where(ok[idx], np.asarray(run_values(ds, var, a, b), float)[idx], np.nan)
        extra = {col: np.asarray(run_values(ds, col, a, b), float)[idx] for col in _EXTRA.get(name, ())}
        out.update(_kind_rollups(kind, t[idx], ok[idx], tables, values, extra, ds[var].attrs, freqs, percentiles))
    return out


def _sorted_labels(found):
    return {kind: {key: np.array(sorted(v), dtype=float if key == "variant" else object)
                   for key, v in seen.items()} for kind, seen in found.items()}


def _period_ns(freqs):
    """The shortest span (ns) that is a whole number of bins of every one of ``freqs``:
    windows cut at its multiples since 1970 hold whole bins of each."""
    import math

    return math.lcm(*(pd.Timedelta(f).value for f in freqs))


def _windows(times, period, runs):
    """``[(start, stop)]`` run ranges of a time-ordered campaign (``times``, int64 ns),
    each about ``runs`` runs and cut where a multiple of ``period`` ns since 1970 begins."""
    n = times.size
    out, a = [], 0
    while a < n:
        b = min(a + runs, n)
        if b < n:
            cut = (times[b - 1] // period + 1) * period
            b = int(np.searchsorted(times, cut, side="left"))
        out.append((a, b))
        a = b
    return out


def _with_gap(table, after):
    """``table`` with the empty bins from ``after`` (the bin after the last one written)
    to its first prepended."""
    freq = table.attrs["freq"]
    gap = pd.date_range(after, table["time"].values[0], freq=freq, inclusive="left").to_numpy()
    if not gap.size:
        return table
    return _concat_time([_empty_bins(table, gap), table])


def _empty_bins(table, times):
    """A table like ``table`` on the bins ``times``, every one empty (:data:`_EMPTY`, else NaN)."""
    shape = tuple(table.sizes[d] for d in _DIMS[:-1]) + (times.size,)
    data = {name: (var.dims, np.full(shape, _EMPTY.get(name, np.nan), var.dtype), var.attrs)
            for name, var in table.data_vars.items()}
    return xr.Dataset(data, coords={**{d: table[d] for d in _DIMS[:-1]}, "time": ("time", times)},
                      attrs=table.attrs)


def _concat_time(parts):
    """Tables of the same labels and consecutive bins as one (``xarray.concat`` along
    ``time`` with the first one's attrs, without its alignment: a copy of each array)."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    data = {name: (var.dims, np.concatenate([p[name].values for p in parts], axis=-1), var.attrs)
            for name, var in first.data_vars.items()}
    time = np.concatenate([p["time"].values for p in parts])
    return xr.Dataset(data, coords={**{d: first[d] for d in _DIMS[:-1]}, "time": ("time", time)},
                      attrs=first.attrs)


def write_rollups(ds: xr.Dataset, path: str | os.PathLike[str], freqs: Sequence[str] = FREQS,
                  percentiles: Sequence[float] = PERCENTILES, runs: int = WINDOW_RUNS) -> dict[str, Any]:
    """Build the rollups of ``ds`` into the Zarr store ``path`` (one group per table,
    ``<freq>/<kind>``, growing along ``time``), window by window of about ``runs`` runs.

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign in time order, best opened lazily from its store
        (:func:`thruput.campaign.store.open_store` with ``chunks``): a window's runs are
        read at a time, so memory stays that of a window, whatever the campaign's length.
    path : path-like
        The store (replaced).

    Returns
    -------
    dict
        The store's attrs: ``freqs``, ``percentiles``, ``runs`` (runs built from) and
        ``last_time`` (ISO, the last run's), read back by :func:`append_rollups`.

    Notes
    -----
    Each window ends where a bin of every resolution ends (a multiple of their least
    common multiple since 1970), so every bin is computed once, from all its runs, by
    :func:`rollups`; the tables are those of :func:`rollups` of the whole campaign.
    """
    import shutil
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    from ..campaign.store import finish_tables

    path = Path(path)
    shutil.rmtree(path, ignore_errors=True)
    times = _times(ds)
    windows = _windows(times, _period_ns(freqs), runs)
    labels, coded = _label_pass(ds)
    written: dict[str, Any] = {}
    pending: dict[str, list[xr.Dataset]] = {}       # (tables of windows not written yet)
    # (a window's tables are written in a thread while the next window is computed:
    # compression and file writes let go of the GIL; one window's writes at a time)
    with ThreadPoolExecutor(1) as background:
        writing = None
        for a, b in windows:
            pending, writing = _next_window(path, ds, a, b, coded, labels, times, freqs, percentiles, pending,
                                            written, writing, background)
        if writing is not None:
            writing.result()
    _write_window(path, {key: _joined(parts) for key, parts in pending.items()}, written)
    attrs = _store_attrs(freqs, percentiles, times.size, times[-1] if times.size else None, sorted(written),
                         _before_last(times))
    finish_tables(path, attrs)
    return attrs


def _next_window(path, ds, a, b, coded, labels, times, freqs, percentiles, pending, written, writing, background):
    """One window of :func:`write_rollups`: its tables computed, added to ``pending`` and
    the whole chunks of each written (in ``background``, once the writes of the window
    before, ``writing``, are done). Returns ``(pending, writing)``."""
    from ..campaign.store import TABLE_CHUNK

    for key, table in _window_rollups(ds, a, b, coded, labels, times, freqs, percentiles).items():
        pending.setdefault(key, []).append(table)
    # (a table's bins written whole chunks at a time: Zarr's cost is per write, and
    # a chunk written in part is read back and written again by the next write)
    full = {}
    for key, parts in pending.items():
        if sum(t.sizes["time"] for t in parts) >= WRITE_CHUNKS * TABLE_CHUNK:
            table = _joined(parts)
            held, after = written.get(key, (0, None))
            table = _with_gap(table, after) if after is not None and after < table["time"].values[0] else table
            cut = (held + table.sizes["time"]) // TABLE_CHUNK * TABLE_CHUNK - held
            if cut <= 0:
                pending[key] = [table]
                continue
            full[key] = table.isel(time=slice(0, cut))
            pending[key] = [table.isel(time=slice(cut, None))] if cut < table.sizes["time"] else []
    if writing is not None:
        writing.result()
    writing = _write_window(path, full, written, background)
    return {key: parts for key, parts in pending.items() if parts}, writing


def append_rollups(ds: xr.Dataset, path: str | os.PathLike[str], freqs: Sequence[str] | None = None,
                   percentiles: Sequence[float] | None = None, runs: int = WINDOW_RUNS) -> dict[str, Any]:
    """Bring the rollups store ``path`` (:func:`write_rollups`) up to date with ``ds``, the
    campaign after an append: only the bins from the last one of the coarsest resolution
    on are computed again, from the runs since its start, and written in place or
    appended; the bins before are not read.

    Parameters
    ----------
    ds : xarray.Dataset
        The campaign now (time-ordered, best lazily opened: only the runs from the
        recomputed bins on are read, and ``time`` from its end).
    path : path-like
        The store; built whole (:func:`write_rollups`) where there is none, where it was
        built with other ``freqs`` or ``percentiles`` (default: the store's), where the
        campaign's runs up to the store's last one are not those it was built from (a
        run inserted before it), or where the new runs bring a path, direction or variant
        the store's tables have no place for.

    Returns
    -------
    dict
        The store's attrs (:func:`write_rollups`), plus ``"rebuilt"``: why it was built
        whole, or ``""``.
    """
    from ..campaign.store import finish_tables, table_attrs, table_coords

    attrs = table_attrs(path)
    freqs = tuple(freqs or attrs.get("freqs") or FREQS)
    percentiles = tuple(percentiles or attrs.get("percentiles") or PERCENTILES)
    why = _rebuild_why(attrs, freqs, percentiles)
    held, last_ns = int(attrs.get("runs", 0)), 0
    if not why and not held:
        why = "built from no run"
    if not why:
        last_ns = int(pd.Timestamp(attrs["last_time"]).value)
        last = np.datetime64(last_ns, "ns")
        if ds.sizes["run"] < held or (_first_run_since(ds, last) != attrs["runs_before_last"]
                                      or _first_run_since(ds, last + np.timedelta64(1, "ns")) < held):
            why = "the campaign's runs up to the store's last are not those it was built from"
    if why:
        return {**write_rollups(ds, path, freqs, percentiles, runs), "rebuilt": why}
    if ds.sizes["run"] == held:
        return {**attrs, "rebuilt": ""}
    period = _period_ns(freqs)
    since = np.datetime64(last_ns // period * period, "ns")
    tail = ds.isel(run=slice(_first_run_since(ds, since), None))
    labels, written = rollup_labels(tail, runs), {}
    for key, stored in table_coords(path, attrs["tables"], _DIMS).items():
        kind, bins = key.split("/", 1)[1], stored["time"]
        have = {d: stored[d] for d in _DIMS[:-1]}
        new = labels.get(kind)
        if new is not None and any(np.setdiff1d(new[d], have[d]).size for d in have):
            return {**write_rollups(ds, path, freqs, percentiles, runs),
                    "rebuilt": f"new labels of {kind} (a path, direction or variant)"}
        labels[kind] = have
        held_bins = int(np.searchsorted(bins, since))
        step = pd.Timedelta(key.split("/", 1)[0]).to_timedelta64()
        written[key] = (held_bins, bins[held_bins - 1] + step if held_bins else None)
    times = _times(tail)
    for a, b in _windows(times, period, runs):
        _write_window(path, rollups(tail.isel(run=slice(a, b)), freqs, percentiles, labels=labels), written)
    out = _store_attrs(freqs, percentiles, ds.sizes["run"], times[-1], sorted(set(written) | set(attrs["tables"])),
                       ds.sizes["run"] - tail.sizes["run"] + _before_last(times))
    finish_tables(path, out)
    return {**out, "rebuilt": ""}


def _rebuild_why(attrs, freqs, percentiles):
    """Why a rollups store (its ``attrs``) cannot be appended to, or ``""``."""
    if attrs.get("table") != "rollups":
        return "no rollups store"
    if list(attrs["freqs"]) != list(freqs) or [float(q) for q in attrs["percentiles"]] != [float(q) for q in percentiles]:
        return "built with other freqs or percentiles"
    return ""


def _times(ds):
    """Every run's time, int64 ns (NaT: int64's least)."""
    from ..campaign.store import run_values

    return np.asarray(run_values(ds, "time"), "datetime64[ns]").view(np.int64)


def _before_last(times):
    """Runs earlier than the last one (of ``times``, in order; ties with it left out)."""
    return int(np.searchsorted(times, times[-1], side="left")) if times.size else 0


def _store_attrs(freqs, percentiles, runs, last, tables, before_last):
    """What a rollups store was built from: its resolutions and percentiles, its tables,
    how many runs, the last one's time and how many runs were earlier (an append checks
    that the campaign still has those)."""
    return {"table": "rollups", "freqs": list(freqs), "percentiles": [float(q) for q in percentiles],
            "runs": int(runs), "last_time": pd.Timestamp(int(last)).isoformat() if last is not None else "",
            "runs_before_last": int(before_last), "tables": list(tables)}


def _joined(parts):
    """Tables of consecutive windows as one (the empty bins between them filled in)."""
    out = [parts[0]]
    for table in parts[1:]:
        after = out[-1]["time"].values[-1] + pd.Timedelta(table.attrs["freq"]).to_timedelta64()
        out.append(_with_gap(table, after) if after < table["time"].values[0] else table)
    return _concat_time(out)


def _write_window(path, tables, written, background=None):
    """Write each table of ``tables`` into its group of the store ``path`` after the bins
    written already: ``written`` maps a key to ``(bins held, the bin after the last)``
    (updated here, at once); a key not in it is a new group. ``background``: an executor
    of one thread to write in (the future returned), while the caller computes on."""
    from ..campaign.store import append_table, write_table

    jobs = []
    for key, table in tables.items():
        if key in written:
            held, after = written[key]
            table = _with_gap(table, after) if after is not None and after < table["time"].values[0] else table
            jobs.append((append_table, (table, path, key, held)))
            held += table.sizes["time"]
        else:
            jobs.append((write_table, (table, path, key)))
            held = table.sizes["time"]
        written[key] = (held, table["time"].values[-1] + pd.Timedelta(table.attrs["freq"]).to_timedelta64())

    def write():
        for func, args in jobs:
            func(*args)
    if background is None:
        write()
        return None
    return background.submit(write)


def _first_run_since(ds, since):
    """Index of the first run at or after ``since`` of a time-ordered campaign (a dask
    ``time`` read chunk by chunk from the end)."""
    data = ds["time"].data
    if not hasattr(data, "chunks") or not type(data).__module__.startswith("dask"):
        return int(np.searchsorted(np.asarray(data, "datetime64[ns]"), since, side="left"))
    ends = np.cumsum((0,) + data.chunks[0])
    for i in range(len(data.chunks[0]) - 1, -1, -1):
        block = np.asarray(data[ends[i]:ends[i + 1]].compute(), "datetime64[ns]")
        if block.size and block[0] < since:
            return int(ends[i] + np.searchsorted(block, since, side="left"))
    return 0


def _as_label(values):
    """String labels as an object array (as a pandas index holds them)."""
    return values.astype(object) if values.dtype.kind in "UO" else values


_LOSS = {"ping": "probes lost / probes sent", "udp": "mean datagram loss fraction of the ok runs",
         "tcp": "failed runs / runs"}


def rollups_encoding(tables: Mapping[str, xr.Dataset]) -> dict[str, dict[Hashable, Any]]:
    """The netCDF encoding of :func:`rollups` written as one file (group ``/<freq>/<kind>``,
    by :func:`thruput.campaign.store.write_product`): chunked and compressed along ``time``
    so that a window of a long campaign reads a few chunks."""
    encoding = {}
    for name, table in tables.items():
        enc = {}
        for var in table.data_vars:
            chunks = tuple(min(s, 4096) if d == "time" else s for d, s in zip(table[var].dims, table[var].shape))
            enc[var] = {"zlib": True, "complevel": 4, "chunksizes": chunks}
        encoding[f"/{name}"] = enc
    return encoding


def open_rollups(path: str | os.PathLike[str]) -> dict[str, xr.Dataset]:
    """Every table of a rollups store (:func:`write_rollups`), loaded: ``{"<freq>/<kind>":
    Dataset}`` (a year of many paths is large: pages read one with :func:`open_rollup`)."""
    from ..campaign.store import table_attrs

    return {key: open_rollup(path, *key.split("/", 1)) for key in table_attrs(path).get("tables", [])}


#: Vertices of each spread ellipse (closed: the last is the first).
ELLIPSE_VERTICES = 65


def _run_window(ds):
    """Runs read at a time from ``ds``: its dask chunk along ``run`` (the whole of a NumPy
    campaign)."""
    chunks = ds.chunksizes.get("run") if ds.chunks else None
    return int(chunks[0]) if chunks else max(ds.sizes["run"], 1)


def _is(coded, label):
    """Per run, whether a label column given as ``(labels, codes)`` (:func:`~thruput.campaign.store.label_codes`) is ``label``."""
    labels, codes = coded
    found = np.flatnonzero(labels == label) if labels.size else np.zeros(0, np.int64)
    return codes == found[0] if found.size else np.zeros(codes.size, bool)


def _rows(ds, idx, names, window):
    """The values of the per-run variables ``names`` at the sorted run positions ``idx``,
    read ``window`` runs at a time (a dask campaign is never computed whole): ``{name:
    ndarray}``."""
    parts: dict[str, list[np.ndarray]] = {name: [] for name in names}
    for a in range(0, ds.sizes["run"], window):
        lo, hi = np.searchsorted(idx, [a, a + window])
        if lo == hi:
            continue
        for name in names:
            parts[name].append(run_values(ds, name, a, a + window)[idx[lo:hi] - a])
    return {name: np.concatenate(v) if v else np.zeros(0) for name, v in parts.items()}


def throughput_delay(ds: xr.Dataset, periods: Mapping[str, tuple[Any, Any]],
                     sigma: float = 1.0) -> xr.Dataset:
    """Throughput against delay per path, direction, socket buffer and period (Pantheon's
    view): each slot's TCP throughput paired with the median RTT of the path's pings of
    the smallest size in the same slot; their median and the ellipse of their spread.

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign.
    periods : dict
        ``{name: (start, end)}`` (the statistics product's compared periods).
    sigma : float, default 1
        The ellipse is the ``sigma`` contour of the pairs' covariance about their mean.

    Returns
    -------
    xarray.Dataset
        On ``series``: ``path``, ``direction``, ``socket_buffer``, ``period``, ``n``
        (pairs), ``rtt`` (median, ms), ``throughput`` (median, bit/s); on ``(series,
        vertex)``: ``ellipse_rtt``, ``ellipse_throughput``.

    Notes
    -----
    Pantheon (Yan et al., USENIX ATC 2018) draws each scheme's median and a 1-sigma
    ellipse of its per-run (delay, throughput); here a run is a slot.
    """
    from ..campaign.store import label_codes
    from .monitor import period_labels

    window = _run_window(ds)
    codes = {name: label_codes(ds, name, window) for name in ("test", "outcome", "path", "direction")}
    ok = _is(codes["outcome"], "ok")
    ping, tcp = (np.flatnonzero(_is(codes["test"], name) & ok) for name in ("ping", "tcp"))
    del ok
    empty = xr.Dataset({v: ("series", np.zeros(0)) for v in ("n", "rtt", "throughput")})
    if ping.size == 0 or tcp.size == 0:
        return empty
    paths, path = codes["path"]
    directions, direction = codes["direction"]
    pings = _rows(ds, ping, ("size", "slot", "rtt_median"), window)
    tcps = _rows(ds, tcp, ("slot", "socket_buffer", "throughput", "time"), window)
    small = np.flatnonzero((pings["size"] == np.nanmin(pings["size"])) & np.isfinite(pings["slot"]))
    # (one int64 key per (path, slot): a path's pings of a slot and its TCP runs meet on it)
    for part in (pings, tcps):
        part["slot"] = part["slot"].astype(float)
    first = int(min(np.nanmin(pings["slot"]), np.nanmin(tcps["slot"])))
    span = int(max(np.nanmax(pings["slot"]), np.nanmax(tcps["slot"]))) - first + 1
    keys, medians = group_median(path[ping][small].astype(np.int64) * span
                                 + (pings["slot"][small].astype(np.int64) - first), pings["rtt_median"][small])
    del pings
    have = np.isfinite(tcps["slot"]) & (path[tcp] >= 0)
    key = path[tcp].astype(np.int64) * span + (np.where(have, tcps["slot"], first).astype(np.int64) - first)
    at = np.minimum(np.searchsorted(keys, key), max(keys.size - 1, 0))
    paired = np.where(have & (keys.size > 0) & (keys[at] == key), medians[at] if keys.size else np.nan, np.nan)
    # (the series: path, direction, socket buffer and period as codes into sorted labels, so
    # that one stable sort orders them as a groupby of the labels would, rows in run order)
    period_codes, period_names = pd.factorize(period_labels(tcps["time"], periods), sort=True)
    buffers, buffer_codes = np.unique(tcps["socket_buffer"], return_inverse=True)
    keep = np.flatnonzero(np.isfinite(paired) & np.isfinite(tcps["throughput"]) & (period_codes >= 0)
                          & np.isfinite(tcps["socket_buffer"]) & (direction[tcp] >= 0))
    shape = (max(paths.size, 1), max(directions.size, 1), max(buffers.size, 1), max(len(period_names), 1))
    series = np.ravel_multi_index((path[tcp][keep], direction[tcp][keep], buffer_codes.reshape(-1)[keep],
                                   period_codes[keep]), shape)
    order = np.argsort(series, kind="stable")
    series, rtt, tput = series[order], paired[keep][order], tcps["throughput"][keep][order]
    del tcps, paired, keep, order
    starts = np.flatnonzero(np.r_[True, series[1:] != series[:-1]]) if series.size else np.zeros(0, np.int64)
    rows, ex, ey = [], [], []
    angle = np.linspace(0, 2 * np.pi, ELLIPSE_VERTICES)
    circle = np.vstack([np.cos(angle), np.sin(angle)])
    for lo, hi in zip(starts, np.r_[starts[1:], series.size].astype(np.int64)):
        i, j, k, m = np.unravel_index(series[lo], shape)
        xy = np.vstack([rtt[lo:hi], tput[lo:hi]])
        if xy.shape[1] >= 3:
            vals, vecs = np.linalg.eigh(np.cov(xy))
            ellipse = vecs @ (sigma * np.sqrt(np.clip(vals, 0, None))[:, None] * circle)
            ell = xy.mean(axis=1)[:, None] + ellipse
        else:
            ell = np.full((2, ELLIPSE_VERTICES), np.nan)
        rows.append((paths[i], directions[j], buffers[k], period_names[m], xy.shape[1],
                     float(np.median(xy[0])), float(np.median(xy[1]))))
        ex.append(ell[0])
        ey.append(ell[1])
    if not rows:
        return empty
    cols = list(zip(*rows))
    return xr.Dataset({
        "n": ("series", np.array(cols[4], int), {"long_name": "slots paired"}),
        "rtt": ("series", np.array(cols[5]), {"units": "ms", "long_name": "median RTT of the slots"}),
        "throughput": ("series", np.array(cols[6]), {"units": "bit/s", "long_name": "median throughput"}),
        "ellipse_rtt": (("series", "vertex"), np.array(ex), {"units": "ms"}),
        "ellipse_throughput": (("series", "vertex"), np.array(ey), {"units": "bit/s"}),
    }, coords={"path": ("series", np.array(cols[0], str)), "direction": ("series", np.array(cols[1], str)),
               "socket_buffer": ("series", np.array(cols[2], float)), "period": ("series", np.array(cols[3], str))},
        attrs={"sigma": sigma, "periods": str(periods)})
