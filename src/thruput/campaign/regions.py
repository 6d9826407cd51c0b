"""A monitor store written by the workers that read it, each its own region.

:func:`thruput.campaign.store.normalize_monitor` writes a new store (or one rebuilt) this
way (:func:`write_new_store`), and appends the rows that follow a store's last run
(:func:`append_units`). The runs, in the store's order (time order, ties in runs.csv
order), are cut into units of :data:`UNIT_ROWS`; unit ``k`` holds runs ``k * UNIT_ROWS``
on, so it is known where each run goes before any file is read. Then:

1. unit 0 is read and written as a new store at ``<out>.part``, not consolidated, its
   ``run`` dimension sized for every run at once (``zarr`` resize);
2. every other unit is read and written into its region of that store by the worker
   that read it: a run chunk divides :data:`UNIT_ROWS`, so no two units share a chunk
   and the workers never write the same file;
3. this process adds up the units' line accounting, writes the attrs (campaign,
   accounting, ``manifest_rows``/``_sha256``/``_bytes``), consolidates the metadata and
   renames ``<out>.part`` to ``<out>``.

An append (:func:`append_units`) goes the same way into the store that is there: its
units are cut at multiples of the store's run chunk (the first fills the last, partly
written one), read while the caller checks the stored rows and files, and written once
the run arrays are lengthened; then step 3 in place, with no rename.

No run passes through this process: it sends each unit where its rows are in runs.csv
(:mod:`thruput.campaign.manifest_lines`; the rows themselves if runs.csv is not read the
usual way) and receives a few numbers per unit, so the cluster's speed is the workers'
(docs/scale.md). The store is the one a single
process writes, file for file (a test checks).

The store's ``probe`` dimension is unit 0's longest ping run. A later unit with a longer
one does not write; it says how long, and once every unit has reported the store is
written again, from the raw files, at the longest width: every unit read twice, but
memory stays one unit per worker (a campaign whose first runs hold no ping, say).
"""

from __future__ import annotations

import functools
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..formats.ping import paused_gc
from . import monitor as mon
from . import store
from .manifest_lines import read_lines

__all__ = ["UNIT_ROWS", "GUESS_UNITS", "Guess", "write_new_store", "append_units"]

#: Units sent ahead per worker: enough that none waits for the next, few enough that the
#: cluster holds a bounded number of rows (a unit's task keeps its rows until let go of).
AHEAD_PER_WORKER = 4
#: Units of a new store read by the workers while runs.csv is read whole (:class:`Guess`):
#: about the time that takes at 2 x 10^5 rows (1-1.5 s) on two workers. They are the
#: first in time order of one unit's rows more (rows of paths run at once interleave).
GUESS_UNITS = 8
#: Runs per unit of work: one worker reads and writes them. A multiple of every run chunk
#: (:func:`thruput.campaign.store.run_chunk` is a power of two, at most half this). A
#: unit costs about 20 ms whatever its size (its Dataset made, joined and checked, a
#: region written per variable): at 2 x 10^5 rows, units of 1024 took the workers
#: 19.7-21.6 core-s, units of 2048 18.3-19.2 (2 workers, alternating runs; docs/scale.md).
UNIT_ROWS = 2 * store.MAX_RUN_CHUNK


class Target(NamedTuple):
    """What every unit shares: the campaign, the store being written and its shape."""

    directory: str
    path: str
    n_runs: int
    width: int
    metadata: dict
    unit_rows: int


class Unit(NamedTuple):
    """Rows of runs.csv (in store order), or where they are in it
    (:class:`~thruput.campaign.manifest_lines.Lines`), and where the first goes."""

    offset: int
    rows: list


class Written(NamedTuple):
    """What a unit reports: its line accounting, how many of its runs have a failed check
    of their tool's own totals, its longest ping run, whether it was written, and the size
    and modification time of its raw files once read (for
    :func:`thruput.campaign.store.verified_path`)."""

    ledger: dict
    disagreeing: int
    width: int
    written: bool
    stats: tuple = None


class Guess(NamedTuple):
    """A new store's first runs, guessed before runs.csv is read whole: the first of its
    first rows in time order (:func:`thruput.campaign.monitor.first_rows`), and ``rest``, a
    function that reads every row and returns them in store order (raising for a bad
    runs.csv). The guessed runs are read by the workers while ``rest`` runs, and written
    once it has returned, if the guess :meth:`holds`."""

    first: object
    rest: object

    def holds(self, rows):
        """True if ``rows`` (every row, in store order) begins with the guessed rows (the
        same lines of runs.csv) and is as many as runs.csv has lines."""
        guessed = self.first.rows
        return (len(rows) == self.first.lines
                and [r.line for r in rows[:len(guessed)]] == [r.line for r in guessed])


class _WrongGuess(Exception):
    """A :class:`Guess` that did not hold: read in store order from the start."""


def units(rows, size=None, offset=0):
    """``rows`` cut into :class:`Unit` of ``size`` rows (default :data:`UNIT_ROWS`), the
    first going to row ``offset``."""
    size = size or UNIT_ROWS
    return [Unit(offset + i, rows[i:i + size]) for i in range(0, len(rows), size)]


def chunk_of(width, unit_rows):
    """Runs per chunk of a store ``width`` probes wide: a power of two that divides
    ``unit_rows`` (a power of two), so that a chunk never spans two units."""
    return min(store.run_chunk(width), unit_rows)


def write_unit(target, unit, first=None):
    """Read ``unit`` and write it into its region of the store ``target.path`` (unit 0
    creates the store; ``first``: its report, for any other). A pure function of the files
    and its arguments: the same bytes whichever worker runs it."""
    return write_read(read_unit(target, unit), target, unit.offset, first)


def read_unit(target, unit):
    """The runs of ``unit``, read and joined in store order, and the size and modification
    time of their files (:func:`thruput.campaign.store._stat`). Python's cyclic garbage
    collector is paused meanwhile (:func:`~thruput.formats.ping.paused_gc`), as in
    :func:`write_read`: the pieces of 1024 runs are freed as they go, and its
    collections, which also walk every object of the worker, took 5-6 % of a worker's
    time. Rows sent as :class:`~thruput.campaign.manifest_lines.Lines` are first read
    from runs.csv (:func:`~thruput.campaign.manifest_lines.read_lines`).

    While the files are parsed, a thread asks the kernel to load each one into the page
    cache and stat-s it, in the unit's order (``store._stat(..., load=True)``: in C
    without the GIL where it is built), so that the parser finds them in memory: a file
    read from disk took 110-220 µs on the first bench VM, 60 µs on the second, against
    8-17 µs from the page cache, and the VMs reclaim cached files within minutes
    (docs/scale.md). Each worker loads its own files, on whatever machine it runs. A file's size
    and time are taken before it is parsed, so that a file changed meanwhile shows as
    changed at the next append's check."""
    rows = unit.rows if isinstance(unit.rows, list) else read_lines(target.directory, unit.rows)
    with paused_gc():
        stats = _loader().submit(store._stat, target.directory, [r.path for r in rows], True)
        ds = mon.combine([mon.read_batch(target.directory, rows)])
        return ds, stats.result()


@functools.lru_cache(maxsize=None)
def _loader():
    """The thread that loads and stat-s the files of the units read in this process
    (:func:`read_unit`), started when first needed."""
    return ThreadPoolExecutor(1, thread_name_prefix="thruput-load")


def write_read(read, target, offset, first=None):
    """Write the runs ``read`` (:func:`read_unit`) of the unit whose first run goes to
    row ``offset`` into their region of the store: unit 0 creates it, ``target.width``
    wide or as wide as its longest ping run; any other is written into it if no wider,
    given ``first``, unit 0's :class:`Written` (the store is then as wide as
    ``first.width`` at least)."""
    with paused_gc():
        return _write_read(read, target, offset, first)


def _write_read(read, target, offset, first):
    ds, stats = read
    ledger = dict(ds.attrs)
    width = ds.sizes["probe"]
    disagreeing = mon.disagreeing(ds)
    wide = max(target.width, first.width if first is not None else 0)
    if offset and width > wide:
        return Written(ledger, disagreeing, width, False)
    ds = mon.finish(mon.pad_probes(ds, max(width, wide)), target.metadata, None, 0, "",
                    fixed_width=False)
    mon.validate_monitor(ds)
    if offset == 0:
        _create(ds, target.path, target.n_runs, chunk_of(ds.sizes["probe"], target.unit_rows))
    else:
        store.write_region(ds, target.path, offset)
    return Written(ledger, disagreeing, width, True, stats)


def _create(ds, path, n_runs, chunk):
    """Write ``ds`` (unit 0) as a new store at ``path`` with ``chunk`` runs a chunk, its
    runs resized to ``n_runs``."""
    shutil.rmtree(path, ignore_errors=True)
    store._for_zarr(ds.drop_encoding()).to_zarr(
        path, mode="w", zarr_format=store.ZARR_FORMAT, consolidated=False,
        encoding=store._encoding(ds, chunk))
    store.grow_runs(path, n_runs)


def write_new_store(out, directory, metadata, digest, rows, client=None, lines=None):
    """Write the store ``out`` of ``rows`` (in store order), unit by unit on the
    ``client``'s workers (or here, one after the other); ``digest``: runs.csv's
    :class:`~thruput.campaign.monitor.ManifestDigest`. ``rows`` may be a :class:`Guess`:
    the workers then read its first units while this process reads runs.csv whole (all
    again from the start if the guess is wrong). ``lines``: runs.csv's
    :class:`~thruput.campaign.manifest_lines.LineIndex`, if the workers are to be sent
    where their rows are rather than the rows (:func:`_run`).

    Returns
    -------
    attrs : dict
        The store's attrs.
    disagreeing : int
        Runs with a failed check of their tool's own totals.
    stats : tuple of numpy.ndarray
        Size and modification time (ns) of each row's raw file, taken by the worker that
        read it (:func:`thruput.campaign.store._stat`).
    rows : list
        Every row, in store order (``rows``, or what the guess's ``rest`` returned).
    """
    out = Path(out)
    tmp = out.with_name(out.name + ".part")
    out.parent.mkdir(parents=True, exist_ok=True)
    size = UNIT_ROWS        # (read here, not on the workers: they must cut the same chunks)
    if size & (size - 1):
        raise ValueError(f"UNIT_ROWS must be a power of two, not {size}")
    target, reports = Target(str(directory), str(tmp), 0, 0, metadata, size), None
    if isinstance(rows, Guess):
        guess, rows = rows, []
        known = len(guess.first.rows)

        def ready():        # (while the workers read the guessed units)
            rows[:] = guess.rest()
            if not guess.holds(rows):
                raise _WrongGuess
            digest.upto(len(rows))      # (hashed now, not once the workers are done)
            return units(rows[known:], size, known)

        try:
            reports = _run(target._replace(n_runs=guess.first.lines), units(guess.first.rows, size),
                           client, ready=ready, read_first=-(-known // size), lines=lines)
        except _WrongGuess:
            pass            # (nothing written yet: read from the start, in store order)
    target = target._replace(n_runs=len(rows))
    if reports is None:
        reports = _run(target, units(rows, size), client, lines=lines)
    widest = max(r.width for r in reports)
    if not all(r.written for r in reports):     # a unit longer than unit 0: all again
        reports = _run(target._replace(width=widest), units(rows, size), client, lines=lines)
    attrs = mon.merge_ledgers([r.ledger for r in reports])
    attrs.update(mon.campaign_attrs(metadata))
    attrs.update(digest.attrs(len(rows)))
    store.put_attrs(tmp, attrs)
    if out.exists():
        shutil.rmtree(out)
    tmp.replace(out)
    stats = tuple(np.concatenate([r.stats[k] for r in reports]) for k in (0, 1))
    return attrs, sum(r.disagreeing for r in reports), stats, rows


def append_units(out, directory, metadata, digest, base_attrs, start, width, chunk, rows,
                 client=None, ready=None, lines=None):
    """Append ``rows`` (in store order, none before the store's last run) to the store
    ``out``, which holds ``start`` runs, ``width`` probes wide, ``chunk`` runs a chunk:
    unit by unit, each read and written into its region by one worker, as a new store
    is. The units are cut at multiples of the chunk, so that no two share one (the first
    fills the store's last chunk). ``ready`` is called once before anything is written
    (the caller's checks of the stored rows and files, while the first units are read);
    then the run arrays are lengthened; then
    the units are written, the attrs replaced and the metadata consolidated (``lines``:
    as :func:`write_new_store`'s). Cut short
    anywhere before that, the store reads as it was (its consolidated shapes) and the next
    append writes the same rows again.

    Returns
    -------
    (attrs, disagreeing, stats) as :func:`write_new_store`, or None if a unit holds a
    ping run longer than the store is wide: nothing is consolidated, and the caller
    writes the store anew (:func:`thruput.campaign.store.append_store`).
    """
    size = append_unit_rows(len(rows), chunk, _worker_count(client))
    end = start + len(rows)
    cuts = [start, *range(-(-start // size) * size or size, end, size), end]
    todo = [Unit(a, rows[a - start:b - start]) for a, b in zip(cuts, cuts[1:]) if b > a]
    target = Target(str(directory), str(out), end, width, metadata, size)

    def lengthen():
        if ready is not None:
            ready()
        store.grow_runs(out, end)

    reports = _run(target, todo, client, Written({}, 0, width, True), lengthen, lines=lines)
    if not all(r.written for r in reports):
        return None
    attrs = mon.merge_ledgers([base_attrs] + [r.ledger for r in reports])
    attrs.update(mon.campaign_attrs(metadata))
    attrs.update(digest.attrs(end))
    store.put_attrs(out, attrs)
    stats = tuple(np.concatenate([r.stats[k] for r in reports]) for k in (0, 1))
    return attrs, sum(r.disagreeing for r in reports), stats


def append_unit_rows(rows, chunk, workers):
    """Runs per unit of an append of ``rows`` runs to a store of ``chunk`` runs a chunk,
    on ``workers`` workers: :data:`UNIT_ROWS`, or a smaller multiple of the chunk where
    there would otherwise be fewer than two units per worker (a 1 % append of 2000 rows
    onto a store's chunk edge was cut 656 + 1344: one worker read twice the other's share
    while the other waited; in chunks, 656 + 1024 + 320, read 976 + 1024)."""
    return max(chunk, min(UNIT_ROWS, chunk * (rows // (2 * chunk * workers))))


def _worker_count(client):
    return 1 if client is None else max(1, len(client.scheduler_info().get("workers", {})))


def _run(target, todo, client, first=None, ready=None, read_first=None, lines=None):
    """:func:`write_unit` of every unit: unit 0 creates the store (as wide as
    ``target.width`` or its own longest ping run), the others write into it once it is
    there; given ``first`` (a :class:`Written` standing for a store already there: an
    append), every unit writes into it. ``ready``: called once before anything is
    written (an append's check of the stored files, then its lengthening of the store;
    a guess's reading of runs.csv); it may return more units, which follow ``todo``.

    On a cluster the first units (``read_first``, or :data:`AHEAD_PER_WORKER` per
    worker) are read meanwhile (:func:`read_unit`, then
    :func:`write_read` on the worker that read it, once unit 0 is written); every later
    unit is one task (:func:`write_unit`: no second task to schedule, no Dataset kept as
    a task's result). At most :data:`AHEAD_PER_WORKER` units per worker are in flight, each let
    go of as soon as it has reported: the cluster holds a few units' rows whatever the
    archive's size. The first error is raised, the rest let go. Given ``lines`` (a
    :class:`~thruput.campaign.manifest_lines.LineIndex`), a unit is sent as where its rows
    are in runs.csv where it can be, not as its rows.

    Each unit's files are loaded into the page cache by the process that reads them
    (:func:`read_unit`), not by this one. While tasks are out, this process
    answers at a short thread switch interval (:func:`thruput.parallel.answering`) and
    without cyclic garbage collection (:func:`~thruput.formats.ping.paused_gc`), as every
    unit's task runs."""
    todo = list(todo)       # (``ready`` may lengthen it)
    if client is None:
        if ready is not None:
            todo += ready() or []
        reports = []
        for unit in todo:
            reports.append(write_unit(target, unit, first))
            first = first if first is not None else reports[0]
        return reports
    from collections import deque

    from distributed import Future, as_completed

    from ..parallel import Parcel, answering, placed, submit

    workers = _worker_count(client)
    where = {}
    pending = as_completed()
    sent, reading, writing = 0, deque(), False

    def read():
        nonlocal sent
        if sent == len(todo):
            return
        k, unit = sent, todo[sent]
        sent += 1
        where_rows = lines.lines(unit.rows) if lines is not None else None
        if where_rows is not None:
            unit = unit._replace(rows=where_rows)
        if writing:     # one task reads and writes it (its rows, or their lines, sent once)
            written = submit(client, write_unit, target, Parcel(unit), first)
            where[written.key] = k
            pending.add(written)
        else:
            reading.append((k, unit.offset, submit(client, read_unit, target, Parcel(unit))))

    def write():
        nonlocal first
        if reading:
            k, offset, rows = reading.popleft()
            written = submit(client, write_read, rows, target, offset, first)
            first = first if first is not None else written      # (unit 0's, held to the end)
            where[written.key] = k
            pending.add(written)

    try:
        # (``ready`` must not hold up the units sent meanwhile; nor must a collection of
        # every object here, 0.1-0.26 s holding the GIL at 2 x 10^5 rows, the scheduler)
        with answering(), paused_gc():
            for _ in range(read_first or AHEAD_PER_WORKER * workers):
                read()
            if ready is not None:
                placed(client, [f for _, _, f in reading])
                todo += ready() or []
            reports = [None] * len(todo)
            while reading:
                write()
            writing = True
            for _ in range(AHEAD_PER_WORKER * workers - sent):     # (fewer may have been read)
                read()
            for future in pending:
                reports[where.pop(future.key)] = future.result()
                if future is not first:
                    future.release()
                read()
                write()
            return reports
    finally:
        for future in [*pending.futures, first, *(f for _, _, f in reading)]:
            if isinstance(future, Future):
                future.cancel()
