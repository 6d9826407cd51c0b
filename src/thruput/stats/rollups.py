"""Rollups of a monitor campaign: per path, direction, test (and socket buffer or ping
size) and fixed time bin, the distribution of the runs, computed once.

esmond (perfSONAR's archive) keeps summaries at fixed resolutions so that a year of many
paths is drawn from a few thousand rows, not from every run; :func:`rollups` does the same
at :data:`FREQS` (5 minutes, 1 hour, 1 day). The pipeline's ``rollups-monitor`` stage
writes them to ``data/processed/<c>.rollups.nc`` (:func:`rollups_encoding`, one group per
resolution and series kind, e.g. ``1h/ping_rtt``); pages and ``thruput monitor report``
read a resolution lazily with :func:`open_rollup`; after an append,
:func:`update_rollups` recomputes only the bins the new runs can touch.

For a campaign too long to hold its tables in memory, :func:`write_rollups` builds them
into a Zarr store (the same groups, growing along ``time``) a window of runs at a time
from the campaign's store read lazily, and :func:`append_rollups` brings that store up to
date after an append: the bins from the last day built on are computed again from the
runs since then and written in place, the arrays lengthened; the bins before are neither
read nor written. Both give what :func:`rollups` gives for the whole campaign.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os
    from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from ..campaign.store import ROLLUP_FREQS, open_rollup
from ._util import percentile_name
from .grouped import SUMMARY_LONG_NAMES, _sorted_table

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


def _loss(frame, test, ngroups):
    """Per dense group code: ``runs`` (tests started, any outcome), ``failed`` (not
    ``ok``) and ``loss``: ping, probes lost / sent; UDP, datagrams lost / sent (the mean
    of the runs' fractions); TCP, failed runs / runs. Empty groups: 0, 0, NaN."""
    g = frame.groupby("code", sort=True)
    runs, failed = g.size(), g["failed"].sum()
    if test == "ping":
        sent = g["sent"].sum(min_count=1)
        loss = g["lost"].sum(min_count=1) / sent.where(sent > 0)
    elif test == "udp":
        loss = g["loss"].mean()
    else:
        loss = failed / runs
    index = runs.index.to_numpy()
    out = {"runs": np.zeros(ngroups, np.int64), "failed": np.zeros(ngroups, np.int64),
           "loss": np.full(ngroups, np.nan)}
    out["runs"][index] = runs.to_numpy()
    out["failed"][index] = failed.to_numpy().astype(np.int64)
    out["loss"][index] = loss.to_numpy(float)
    return out


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
    qs = sorted({float(q) for q in percentiles} | {25.0, 50.0, 75.0})
    out = {}
    for kind, (name, var, split) in KINDS.items():
        idx = np.flatnonzero(test == name)
        if idx.size == 0 or var not in ds:
            continue
        variant = np.nan_to_num(np.asarray(_column(ds, split, cache)[idx], float)) if split else np.zeros(idx.size)
        runs_labels = {"path": _column(ds, "path", cache)[idx], "direction": _column(ds, "direction", cache)[idx],
                       "variant": variant}
        t = times[idx]
        valid = ~np.isnat(t)
        series, coords = np.zeros(idx.size, np.int64), {}
        for key, lab in runs_labels.items():
            if labels is None:
                uniques, codes = _factorize(lab)
            else:
                uniques = np.asarray(labels[kind][key])
                codes = pd.Index(uniques).get_indexer(lab)
            valid &= codes >= 0
            coords[key] = uniques
            series = series * max(uniques.size, 1) + codes
        if not valid.any():
            continue
        nseries = int(np.prod([c.size for c in coords.values()]))
        values = np.where(ok[idx], np.asarray(_column(ds, var, cache)[idx], float), np.nan)
        rank = np.full(values.size, -1, np.int64)     # (each value's rank; NaN: -1)
        finite = np.flatnonzero(~np.isnan(values))
        rank[finite[np.argsort(values[finite], kind="stable")]] = np.arange(finite.size)
        frame = pd.DataFrame({"failed": ~ok[idx]})
        if name == "ping":
            frame["sent"] = np.asarray(_column(ds, "ping_transmitted", cache)[idx], float)
            frame["lost"] = frame["sent"] - np.asarray(_column(ds, "ping_received", cache)[idx], float)
        elif name == "udp":
            frame["loss"] = np.asarray(_column(ds, "loss_fraction", cache)[idx], float)
        attrs = ds[var].attrs
        for freq in freqs:
            out[f"{freq}/{kind}"] = _rollup(t, valid, series, nseries, coords, values, rank, frame, kind, name, var,
                                            attrs, freq, percentiles, qs)
    return out


def _rollup(t, valid, series, nseries, coords, values, rank, frame, kind, test, var, attrs, freq, percentiles, qs):
    """One resolution of one kind (:func:`rollups`)."""
    step = pd.Timedelta(freq).value
    bins = pd.DatetimeIndex(t).floor(freq).asi8
    first, last = bins[valid].min(), bins[valid].max()
    nbins = int((last - first) // step) + 1
    code = np.where(valid, series * nbins + (bins - first) // step, -1)
    ngroups = nseries * nbins
    keep = (code >= 0) & (rank >= 0)
    order = np.argsort(code[keep] * np.int64(rank.size) + rank[keep])   # (by group, then by value)
    table = _sorted_table(values[keep][order], code[keep][order], qs)
    summary = _summary_vars(table, ngroups, qs)
    frame = frame.assign(code=code)[valid]
    extra = _loss(frame, test, ngroups)
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
_CODED = ("test", "path", "direction", "socket_buffer", "size")


def _label_pass(ds, windows):
    """:func:`rollup_labels` of the runs of ``windows``, and per window its
    :data:`_CODED` columns as ``(uniques, int32 codes)`` (4 bytes a run each: the second
    pass reads no label again)."""
    found: dict[str, dict[str, set]] = {}
    coded = []
    for a, b in windows:
        part, cache = ds.isel(run=slice(a, b)), {}
        kept = {}
        for name in (n for n in _CODED if n in ds.variables):
            codes, uniques = pd.factorize(_column(part, name, cache))
            uniques = np.asarray(uniques, dtype=float if uniques.dtype.kind == "f" else object)
            kept[name] = (np.append(uniques, np.nan), codes.astype(np.int32))
        coded.append(kept)
        for kind, got in rollup_labels(part, b - a, cache).items():
            seen = found.setdefault(kind, {"path": set(), "direction": set(), "variant": set()})
            for key, v in got.items():
                seen[key].update(v.tolist())
    return _sorted_labels(found), coded


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
    return xr.concat([table.reindex(time=gap, fill_value=_EMPTY), table], "time", data_vars="all",
                     coords="minimal", compat="override", combine_attrs="override")


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
    from pathlib import Path

    from ..campaign.store import TABLE_CHUNK, finish_tables

    path = Path(path)
    shutil.rmtree(path, ignore_errors=True)
    times = _times(ds)
    windows = _windows(times, _period_ns(freqs), runs)
    labels, coded = _label_pass(ds, windows)
    written: dict[str, Any] = {}
    pending: dict[str, list[xr.Dataset]] = {}       # (tables of windows not written yet)
    for (a, b), kept in zip(windows, coded):
        columns = {name: uniques[codes] for name, (uniques, codes) in kept.items()}
        columns["time"] = times[a:b].view("datetime64[ns]")         # (read once, above)
        for key, table in rollups(ds.isel(run=slice(a, b)), freqs, percentiles, labels=labels,
                                  columns=columns).items():
            pending.setdefault(key, []).append(table)
        # (a table's bins written a chunk's worth at a time: Zarr's cost is per write)
        full = {key: _joined(parts) for key, parts in pending.items() if sum(t.sizes["time"] for t in parts) >= TABLE_CHUNK}
        _write_window(path, full, written)
        pending = {key: parts for key, parts in pending.items() if key not in full}
    _write_window(path, {key: _joined(parts) for key, parts in pending.items()}, written)
    attrs = _store_attrs(freqs, percentiles, times.size, times[-1] if times.size else None, sorted(written),
                         _before_last(times))
    finish_tables(path, attrs)
    return attrs


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
    return np.asarray(ds["time"].values, "datetime64[ns]").view(np.int64)


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
    if len(out) == 1:
        return out[0]
    return xr.concat(out, "time", data_vars="all", coords="minimal", compat="override", combine_attrs="override")


def _write_window(path, tables, written):
    """Write each table of ``tables`` into its group of the store ``path`` after the bins
    written already: ``written`` maps a key to ``(bins held, the bin after the last)``
    (updated here); a key not in it is a new group."""
    from ..campaign.store import append_table, write_table

    for key, table in tables.items():
        if key in written:
            held, after = written[key]
            table = _with_gap(table, after) if after is not None and after < table["time"].values[0] else table
            append_table(table, path, key, held)
            held += table.sizes["time"]
        else:
            write_table(table, path, key)
            held = table.sizes["time"]
        written[key] = (held, table["time"].values[-1] + pd.Timedelta(table.attrs["freq"]).to_timedelta64())


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


def _rows(ds, idx, names, window):
    """The values of the per-run variables ``names`` at the sorted run positions ``idx``,
    read ``window`` runs at a time (a dask campaign is never computed whole): ``{name:
    ndarray}``."""
    parts: dict[str, list[np.ndarray]] = {name: [] for name in names}
    for a in range(0, ds.sizes["run"], window):
        lo, hi = np.searchsorted(idx, [a, a + window])
        if lo == hi:
            continue
        part = ds[list(names)].isel(run=slice(a, a + window)).isel(run=idx[lo:hi] - a).compute()
        for name in names:
            parts[name].append(np.asarray(part[name].values))
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
    test, outcome = (labels[c].astype(str) if labels.size else np.full(c.size, "")
                     for labels, c in (codes["test"], codes["outcome"]))
    ping = np.flatnonzero((test == "ping") & (outcome == "ok"))
    tcp = np.flatnonzero((test == "tcp") & (outcome == "ok"))
    del test, outcome
    empty = xr.Dataset({v: ("series", np.zeros(0)) for v in ("n", "rtt", "throughput")})
    if ping.size == 0 or tcp.size == 0:
        return empty
    paths, path = codes["path"]
    directions, direction = codes["direction"]
    pings = _rows(ds, ping, ("size", "slot", "rtt_median"), window)
    small = pings["size"] == np.nanmin(pings["size"])
    rtt = pd.DataFrame({"path": path[ping][small], "slot": pings["slot"][small],
                        "rtt": pings["rtt_median"][small]}).groupby(["path", "slot"])["rtt"].median()
    tcps = _rows(ds, tcp, ("slot", "socket_buffer", "throughput", "time"), window)
    frame = pd.DataFrame({"path": path[tcp], "slot": tcps["slot"], "direction": direction[tcp],
                          "socket_buffer": tcps["socket_buffer"], "throughput": tcps["throughput"],
                          "period": period_labels(tcps["time"], periods)})
    frame = frame.join(rtt, on=["path", "slot"]).dropna(subset=["rtt", "throughput", "period"])
    frame["path"] = paths[frame["path"].to_numpy()] if paths.size else frame["path"]
    frame["direction"] = directions[frame["direction"].to_numpy()] if directions.size else frame["direction"]
    rows, ex, ey = [], [], []
    angle = np.linspace(0, 2 * np.pi, ELLIPSE_VERTICES)
    circle = np.vstack([np.cos(angle), np.sin(angle)])
    for key, part in frame.groupby(["path", "direction", "socket_buffer", "period"], sort=True):
        xy = part[["rtt", "throughput"]].to_numpy().T
        if xy.shape[1] >= 3:
            vals, vecs = np.linalg.eigh(np.cov(xy))
            shape = vecs @ (sigma * np.sqrt(np.clip(vals, 0, None))[:, None] * circle)
            ell = xy.mean(axis=1)[:, None] + shape
        else:
            ell = np.full((2, ELLIPSE_VERTICES), np.nan)
        rows.append((*key, xy.shape[1], float(np.median(xy[0])), float(np.median(xy[1]))))
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
