"""A monitor campaign into its Zarr store (:mod:`thruput.campaign.store`), new or appended.

:func:`normalize_monitor` reads the rows of ``runs.csv`` the store does not hold yet in
batches (here, or on the workers of a dask cluster: :func:`thruput.parallel.iter_batches`)
and writes them wave by wave (:data:`WAVE_BATCHES` batches each): the first wave of a new
store by :func:`~thruput.campaign.store.create_part`, the others into the run rows they add
(the arrays resized, then a region write of the store's: :func:`append_store`). A new store on a cluster is written by the
workers instead, each unit of a wave's rows into its own region (:func:`write_unit`). A
changed row or raw file already in the store is an error
(:class:`~thruput.campaign.store.StoreError`), never a silent rewrite.

Appends keep the Dataset exactly what a full normalize would give (same values, same
chunks, same files; a test checks): runs that arrive out of time order, or ping runs with
more probes than the store's ``probe`` dimension holds, make the store be rewritten whole
(from the store itself, no raw file read again).
"""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from ..campaign import store
from ..campaign.store import (
    StoreError,
    create_part,
    decode_codes,
    is_store,
    load_record,
    open_store,
    put_attrs,
    refuse_older,
    refuse_stored_runs,
    resize_runs,
    save_record,
    stat_each,
    verify_sources,
    write_region,
    write_store,
)
from ..errors import ThruputError
from . import reader as mon

__all__ = ["normalize_monitor", "append_store", "read_stat_batch", "write_unit", "WAVE_BATCHES"]

#: Batches joined per wave: this process gathers this many batches' fragments (in
#: order, while the workers read the next ones), joins them and writes or appends them,
#: so its memory holds about ``WAVE_BATCHES`` x ``monitor.BATCH_ROWS`` runs whatever the
#: archive's size. A multiple of :data:`MAX_RUN_CHUNK` runs, so waves fill whole chunks
#: (and a unit of a new store written by the workers is a chunk of its own).
WAVE_BATCHES = 4


def append_store(ds, path, *, checked=False):
    """Append the runs of ``ds`` to the store at ``path`` along ``run``.

    ``ds.attrs`` replace the store's (the caller merges them: line totals, manifest rows).
    The store is rewritten whole (from itself) when ``ds`` has more probes than the store
    or runs earlier than its last, so that the result is the Dataset a full normalize
    would give. Otherwise the run arrays are resized to hold the new runs and ``ds`` is
    written into those rows (:func:`~thruput.campaign.store.write_region`); the attrs and consolidated
    metadata come last, so an append cut short before them leaves the store as readers
    saw it, and the next one writes the same rows again.

    Parameters
    ----------
    checked : bool, default False
        The caller has made sure no run of ``ds`` is stored already.

    Raises
    ------
    StoreError
        If a run id of ``ds`` is already in the store.
    """
    import zarr

    group = zarr.open_consolidated(str(path), mode="r")
    if not checked:
        refuse_stored_runs(path, group["run"][:], ds["run"].values)
    refuse_older(path, group, ds.data_vars)
    n_runs, width = group["rtt"].shape
    last = np.datetime64(int(group["time"][n_runs - 1]), "ns") if n_runs else None
    if ds.sizes["probe"] > width or (last is not None and ds["time"].values[0] < last):
        whole = mon.combine([open_store(path), decode_codes(ds.copy())])
        whole = whole.assign_coords(probe=np.arange(whole.sizes["probe"]))
        for name in ds.variables:
            whole[name].attrs = ds[name].attrs
        whole.attrs = ds.attrs
        return write_store(whole, path)
    ds = mon.pad_probes(ds, width)
    resize_runs(path, ds, n_runs + ds.sizes["run"])
    write_region(ds, path, n_runs)
    put_attrs(path, ds.attrs)
    return Path(path)


def read_stat_batch(directory, rows):
    """``(fragment, stats)`` of one batch: :func:`~thruput.monitor.reader.read_batch` of
    ``rows`` (:class:`~thruput.monitor.reader.MonitorRow` or plain tuples of its fields),
    and each row's file's ``(size, mtime_ns)`` (an int64 array, ``-1`` for none) taken
    just before the batch is read, by the worker that reads it."""
    rows = list(map(tuple.__new__, itertools.repeat(mon.MonitorRow), rows))
    stats = np.array(stat_each(directory, [r.path for r in rows]), dtype=np.int64).reshape(-1, 2)
    return mon.read_batch(directory, rows), stats


def _plain_rows(batch):
    """A batch's rows as plain tuples: pickled at C speed (a named tuple's pickling runs
    Python for each row), rebuilt by :func:`read_stat_batch`."""
    return list(map(tuple, batch))


def _fragments(pairs, stats):
    """The fragments of :func:`read_stat_batch`'s ``pairs``, their stats appended to ``stats``."""
    for fragment, stat in pairs:
        stats.append(stat)
        yield fragment


# -- normalize ------------------------------------------------------------------------------

def _check_prefix(directory, out, stored, text, digest):
    """The rows the store holds must be the first rows of runs.csv (``text``, whose
    :class:`~thruput.monitor.reader.ManifestDigest` is ``digest``), unchanged."""
    n = int(stored.attrs["manifest_rows"])
    if digest.upto(n) == stored.attrs["manifest_sha256"]:
        return
    rows, _ = mon.read_monitor_manifest(directory, text=text)   # only now: to say which rows
    runs = stored["run"].values.astype(object).astype(str)
    shas = dict(zip(runs, stored["source_sha256"].values.astype(object).astype(str)))
    listed = {r.run: r for r in rows}
    problems = [f"runs.csv line {listed[r].line}: {r}: sha256 {listed[r].sha256[:12]}..., "
                f"stored {shas[r][:12]}..." for r in runs if r in listed and listed[r].sha256 != shas[r]]
    problems += [f"run {r} is stored but no longer in runs.csv" for r in runs if r not in listed]
    raise StoreError(f"{out}: the first {n} rows of {Path(directory) / 'runs.csv'} changed "
                     "since they were stored (rows are only ever appended); "
                     + ("; ".join(problems[:5]) or "rows were edited or reordered")
                     + f". Delete {out} to normalize anew")


def normalize_monitor(directory, out, *, workers=None, scheduler=None, client=None,
                      verify=True):
    """Bring the Zarr store ``out`` up to date with monitor campaign ``directory``.

    A new store is written from every row; an existing one gets the rows of runs.csv it
    does not hold yet, appended wave by wave (:data:`WAVE_BATCHES` batches each), or the
    store is rewritten with them when they start before its last run or hold a wider ping
    run.

    Parameters
    ----------
    directory, out : path-like
    workers, scheduler, client
        Where the batches are read: :func:`thruput.parallel.cluster`.
    verify : {True, "all", False}
        Check that the raw files the store already holds are unchanged (a file changed in
        place is an error): by default those whose size or modification time differ from
        :func:`~thruput.campaign.store.record_path`'s are hashed again; ``"all"`` hashes every one; False none.
        The rows themselves are always checked against ``manifest_sha256``.

    Returns
    -------
    dict
        ``runs_added`` (this call), ``runs`` and ``files_read`` (in the store now),
        ``appended`` (False for a new store), ``runs_added_disagreeing`` (runs added with
        a failed check of their tool's own totals: ``tool_checks_failed > 0``),
        ``rebuilt`` (why a store was written anew from every row, or ``""``: one written
        by another :data:`monitor.MONITOR_VERSION`), ``metadata_updated`` (the top-level
        keys of campaign.yaml that changed since the store's copy, replaced by the one
        there now, with or without new rows; ``[]`` if none).

    Raises
    ------
    StoreError
        For changed rows or files already stored, or runs stored twice.
    thruput.errors.ThruputError
        For a bad campaign.yaml, runs.csv or raw file, naming file and line.
    """
    from ..campaign.metadata import load_metadata
    from ..parallel import MIN_BATCHES_FOR_CLUSTER, cluster

    out = Path(out)
    metadata = load_metadata(directory)
    base, rebuilt = _stored(out, metadata)
    start = int(base.attrs["manifest_rows"]) if base is not None else 0
    text = mon.read_manifest_text(directory)
    digest = mon.ManifestDigest(text)
    rows = _rows_to_add(directory, out, base, start, text, digest)
    record = load_record(out)
    pieces = mon.batches(rows)
    if client is None and len(pieces) < MIN_BATCHES_FOR_CLUSTER:
        workers = scheduler = None          # a cluster would take longer to start
    stats = []                              # (each batch's files' size and time, in order)
    with cluster(workers, scheduler, client) as c:
        written, checked = None, record.iloc[:0]
        if c is not None and base is None and rows and _in_units():
            written = _write_units(c, directory, out, metadata, text, rows, pieces, stats)
        if written is None:                 # (also where a unit held a wider ping run)
            stats.clear()
            written, checked = _write_here(c, directory, out, metadata, text, digest, base, start,
                                           rows, pieces, stats, record, verify)
    attrs, disagreeing = written
    found = np.concatenate(stats) if stats else np.empty((0, 2), dtype=np.int64)
    new = pd.DataFrame({"size": found[:, 0], "mtime_ns": found[:, 1], "sha256": [r.sha256 for r in rows]},
                       index=pd.Index([r.path for r in rows], name="path", dtype=object))
    new = new[new.index != ""]
    save_record(out, pd.concat([checked, new]) if len(checked) else new)
    stored = int(base.sizes.get("run", 0)) if base is not None else 0
    metadata_updated = _changed_keys(base.attrs.get("metadata"), attrs.get("metadata")) if base is not None else []
    return {"runs_added": len(rows), "runs": stored + len(rows), "appended": base is not None,
            "files_read": int(attrs["files_read"]), "runs_added_disagreeing": disagreeing,
            "rebuilt": rebuilt, "metadata_updated": metadata_updated}


def _stored(out, metadata):
    """``(the store at out as it is, lazily, or None; why it is written anew or "")``:
    None where there is none, or one read by another monitor reader version (every run
    read again). StoreError for another campaign's store, or one whose append was cut
    short after its attrs were written."""
    if not is_store(out):
        return None, ""
    # (no index of the run ids: only some arrays are read, lazily)
    base = xr.open_zarr(out, consolidated=True, chunks=None, create_default_indexes=False)
    if base.attrs.get("campaign") != metadata["name"]:
        raise StoreError(f"{out}: holds campaign {base.attrs.get('campaign')!r}, not {metadata['name']!r}")
    if base.sizes.get("run", 0) != int(base.attrs.get("manifest_rows", -1)):
        raise StoreError(f"{out}: holds {base.sizes.get('run', 0)} runs but records "
                         f"{base.attrs.get('manifest_rows')} rows of runs.csv: an append was "
                         f"cut short after its attrs were written. Delete {out} to normalize anew")
    version = base.attrs.get("monitor_version", 1)
    if version != mon.MONITOR_VERSION:
        return None, (f"the store was written by monitor reader version {version}, this is "
                      f"version {mon.MONITOR_VERSION}: every run read again")
    return base, ""


def _rows_to_add(directory, out, base, start, text, digest):
    """The rows of runs.csv (``text``) from row ``start`` on, in time order; the rows the
    store ``base`` holds must be unchanged (:func:`_check_prefix`, said before a later
    row's own error) and none of the new runs stored already."""
    try:
        rows, _, times = mon.read_monitor_manifest(directory, start, text=text, times=True)
    except ThruputError:
        if base is not None:
            _check_prefix(directory, out, base, text, digest)
        raise
    rows, _ = mon.in_time_order(rows, times)
    if base is not None:
        _check_prefix(directory, out, base, text, digest)
        if rows:
            refuse_stored_runs(out, base["run"].values, [r.run for r in rows])
    return rows


def _write_here(c, directory, out, metadata, text, digest, base, start, rows, pieces, stats, record,
                verify):
    """Read the batches ``pieces`` (on the cluster of ``c``, or here if None; two waves
    ahead, so the workers go on reading while this process writes a wave) and write them
    wave by wave here (:func:`_write_waves`), the stored files checked meanwhile
    (:func:`~thruput.campaign.store.verify_sources`). Returns ``((attrs, runs with a
    failed check of their tool's totals), the stored files found right)``."""
    from ..parallel import iter_batches

    read = iter_batches(read_stat_batch, str(directory), map(_plain_rows, pieces), client=c,
                        ahead=2 * WAVE_BATCHES)
    try:
        checked = record.iloc[:0]
        if base is not None and verify:     # (while the workers read the first batches)
            problems, checked = verify_sources(directory, base, record=None if verify == "all" else record,
                                               **({"client": c} if c is not None else {}))
            if problems:
                raise StoreError(f"{out}: {len(problems)} raw files changed since they were "
                                 f"stored: {'; '.join(problems[:5])}. Delete {out} to normalize anew")
        elif base is not None:
            checked = record
        return _write_waves(out, metadata, text, digest, base, start, rows, _fragments(read, stats)), checked
    finally:
        close = getattr(read, "close", None)
        if close is not None:
            close()


def _changed_keys(old, new):
    """The top-level keys whose values differ between two campaign.yaml copies (JSON texts,
    as a store's attrs hold them), sorted."""
    import json

    if old == new:
        return []
    old, new = (json.loads(text) if text else {} for text in (old, new))
    return sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))


def _refresh_campaign_attrs(out, base, metadata, manifest):
    """The attrs of the store ``out`` (``base``) with those that come from campaign.yaml
    (``metadata``: its name, title and the whole of it, which the statistics read: events,
    periods) as they are now, and those of runs.csv (``manifest``:
    :meth:`~thruput.monitor.reader.ManifestDigest.attrs`), written if any differs.
    Returns the attrs."""
    attrs, fresh = dict(base.attrs), mon.campaign_attrs(metadata) | manifest
    if all(attrs.get(k) == v for k, v in fresh.items()):
        return attrs
    attrs.update(fresh)
    put_attrs(out, attrs)
    return attrs


def _write_waves(out, metadata, text, digest, base, start, rows, fragments):
    """Join the ``fragments`` of ``rows`` wave by wave and write or append them to the
    store ``out`` (``base``: the store as it was, holding ``start`` rows, or None).
    Returns the store's attrs after the last write, and how many of the runs written have
    a failed check of their tool's own totals."""
    if base is None and not rows:
        ds = mon.validate_monitor(mon.empty(metadata, text))
        write_store(ds, out)
        return ds.attrs, 0
    if not rows:        # no run to add, but campaign.yaml may have changed (its events, say)
        return _refresh_campaign_attrs(out, base, metadata, digest.attrs(start)), 0
    attrs, added, disagreeing = (dict(base.attrs) if base is not None else None), 0, 0
    for wave in mon.batches(mon.batches(rows), WAVE_BATCHES):
        joined = mon.combine([next(fragments) for _ in wave])
        n = start + added + sum(len(b) for b in wave)
        # (strings kept Python objects, as the store writes them: no round trip through
        # ``<U`` of ten million probe statuses a 10^5-run campaign)
        ds = mon.finish(joined, metadata, text, n, digest, fixed_width=False)
        del joined
        if attrs is not None:
            ds.attrs.update(mon.merge_ledgers([attrs, ds.attrs]))
        mon.validate_monitor(ds)
        if attrs is None:                   # a new store (or one rebuilt: replaced)
            write_store(ds, out)
        else:
            append_store(ds, out, checked=True)
        attrs = ds.attrs
        added = n - start
        disagreeing += mon.disagreeing(ds)
    return attrs, disagreeing


# -- a new store written by the workers ------------------------------------------------------

def _in_units():
    """Whether a unit (:data:`WAVE_BATCHES` batches) fills whole chunks of every run
    array, so that workers can write units at once (:func:`_write_units`)."""
    unit = WAVE_BATCHES * mon.BATCH_ROWS
    chunk = store.MAX_RUN_CHUNK
    return unit % chunk == 0 and chunk & (chunk - 1) == 0


def _write_units(client, directory, out, metadata, text, rows, pieces, stats):
    """Write a new store ``out`` on the cluster of ``client``: each unit of
    :data:`WAVE_BATCHES` batches of ``rows`` (``pieces``, in order) is read and written
    into its own region (chunks of its own: :func:`_in_units`) by the workers
    (:func:`write_unit`), so no run passes through this process.

    The store is made at ``<out>.part`` from the first batch, its ``probe`` dimension that
    batch's longest ping run (the first unit's, if it has none) and its run arrays as long
    as every row; the attrs come last (the units' line accounting added up, the
    campaign's, runs.csv's), then the rename. Returns ``(attrs, runs with a failed check of their tool's totals)``;
    each unit's files' ``(size, mtime_ns)`` (:func:`read_stat_batch`) are appended to ``stats``.
    Returns None where a later unit holds a longer ping run than the first batch's (nothing
    is left: the caller writes the store itself). A reader's error is raised as it was
    raised (nothing is left either).
    """
    from collections import deque

    import zarr

    from ..parallel import submit

    pieces = iter(pieces)
    units = iter(lambda: list(itertools.islice(pieces, WAVE_BATCHES)), [])
    size = WAVE_BATCHES * mon.BATCH_ROWS
    ahead = max(2, 2 * len(client.scheduler_info().get("workers", {})))
    reads, writes, outcomes = deque(), deque(), []
    part = None

    def read_next():
        for unit in units:
            reads.append([submit(client, read_stat_batch, str(directory), _plain_rows(b)) for b in unit])
            return

    try:
        for _ in range(ahead):
            read_next()
        first, _ = reads[0][0].result()
        width = int(first.sizes.get("probe", 0))
        if not width:                           # (no ping run in it: the first unit's longest)
            width = max(client.gather([submit(client, _probe_width, f, priority=1) for f in reads[0]]))
        # (a digest of its own: the caller's goes on from row 0 if a unit turns out wider)
        head = mon.finish(mon.combine([first], n_probe=width), metadata, text, len(rows),
                          mon.ManifestDigest(text), fixed_width=False)
        del first
        part = create_part(mon.validate_monitor(head), Path(out))
        resize_runs(part, head, len(rows))
        zarr.consolidate_metadata(str(part))    # (the lengths the workers' writes open)
        start = 0
        while reads or writes:
            while reads:                        # (each unit written once the store is there)
                writes.append((submit(client, write_unit, str(part), start, width, metadata,
                                      *reads[0], priority=1), reads.popleft()))
                start += size
            done = writes[0][0].result()
            _let_go([writes.popleft()])
            if done["wider"]:
                _abandon(reads, writes, part)
                return None
            outcomes.append(done)
            stats.append(done["stats"])
            read_next()
        attrs = dict(head.attrs)               # (in the order a single writer gives them)
        attrs.update(mon.merge_ledgers([o["attrs"] for o in outcomes]))
        put_attrs(part, attrs)
        if Path(out).exists():
            shutil.rmtree(out)
        os.replace(part, out)
        return attrs, sum(o["disagreeing"] for o in outcomes)
    except BaseException:
        _abandon(reads, writes, part)
        raise


def _abandon(reads, writes, part):
    """Cancel and let go of the units still being read or written and remove the store
    being made (``part``, if made)."""
    _let_go(list(writes) + [(None, unit) for unit in reads], cancel=True)
    reads.clear()
    writes.clear()
    if part is not None:
        shutil.rmtree(part, ignore_errors=True)


def _let_go(sent, cancel=False):
    """Let go of (and ``cancel``) the futures of ``sent``, ``(write, its reads)`` pairs (the
    write or None): a future kept by a traceback would keep its batch on the cluster."""
    for write, unit in sent:
        for future in ([write] if write is not None else []) + list(unit):
            if cancel:
                future.cancel()
            future.release()


def _probe_width(read):
    """The ``probe`` dimension of a batch's fragment (``read``: :func:`read_stat_batch`'s
    pair; a task beside it on its worker)."""
    return int(read[0].sizes.get("probe", 0))


def write_unit(path, start, width, metadata, *reads):
    """Join the batch fragments of one unit (``reads``: :func:`read_stat_batch`'s pairs)
    and write them into rows ``start`` on of the store at ``path`` (:func:`write_region`),
    ``width`` probes wide: a worker's task of :func:`_write_units`. Returns ``{"attrs":
    the unit's line accounting, "disagreeing": its runs with a failed check of their
    tool's totals, "stats": its files' (size, mtime_ns), "wider": its longest ping run if
    longer than width (nothing written), else 0}``."""
    joined = mon.combine([fragment for fragment, _ in reads], n_probe=width)
    if joined.sizes["probe"] > width:
        return {"wider": int(joined.sizes["probe"])}
    ledger = dict(joined.attrs)
    ds = mon.validate_monitor(mon.finish(joined, metadata, "", 0, "", fixed_width=False))
    write_region(ds, path, start, consolidated=True)
    return {"attrs": ledger, "disagreeing": mon.disagreeing(ds), "wider": 0,
            "stats": np.concatenate([stat for _, stat in reads])}
