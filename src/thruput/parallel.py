"""Map readers over many files on a ``dask.distributed`` cluster, or here.

The work is cut into batches of files that do not depend on the number of workers, so
the results are the same, bit for bit, however they are run; only where they run
changes:

``workers=None`` and no ``scheduler``/``client`` (the default)
    In this process, one batch after the other. Also what a few batches get whatever is
    asked (fewer than :data:`MIN_BATCHES_FOR_CLUSTER`): starting a cluster takes seconds.
``workers=N``
    A :class:`distributed.LocalCluster` of N worker *processes* with one thread each
    (the readers hold the GIL), started for the call and closed after it.
``scheduler="tcp://host:8786"``
    Any running cluster: a dask-jobqueue ``SLURMCluster``, a Kubernetes ``KubeCluster``,
    ``dask scheduler`` + ``dask worker`` by hand (docs/scale.md). The workers must see
    the files at the same paths (a shared file system) and have thruput installed.
``client=``
    A :class:`distributed.Client` the caller already holds (not closed here).

:func:`map_batches` returns every result at once, so the caller's memory holds all of
them; a caller with much to read (``thruput pipeline normalize``) takes them one by one
from :func:`iter_batches`, which keeps a few batches in flight, and writes them out as
they come.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["map_batches", "iter_batches", "cluster", "local_cluster", "answering", "read_many",
           "submit", "placed", "Parcel", "MIN_BATCHES_FOR_CLUSTER", "FILES_PER_BATCH"]


#: Fewer batches than this are read in this process even when workers are asked for:
#: a LocalCluster takes 2-5 s to start, more than a few batches take to read.
MIN_BATCHES_FOR_CLUSTER = 4
#: What the LocalCluster started here changes of dask's configuration for its workers:
#: dask's statistical profiler off. For the dashboard it takes a sample of the task
#: thread's stack every 10 ms; the readers hold the GIL, and in back-to-back 1-worker
#: normalizes the samples cost about 8 % of the time (docs/scale.md). A cluster started
#: elsewhere (``scheduler=``) keeps its own configuration.
WORKER_CONFIG = {"distributed.worker.profile.enabled": False}
#: Thread switch interval (s) while this process reads for long with tasks out
#: (:func:`answering`): at Python's 5 ms, a 1-worker normalize's first task started 2.0 s
#: after it was sent, while runs.csv (2 x 10^5 rows) was read; at 0.5 ms, 0.4 s after.
SWITCH_WHILE_BUSY = 0.0005
#: What the LocalCluster started here changes of its scheduler's configuration: no
#: queuing of tasks on the scheduler (dask's default keeps about one task a worker thread
#: beyond the one running). The callers here hold only a few units per worker in flight
#: anyway, and with them on the worker, it goes from one to the next without the
#: scheduler, whose event loop shares the driver's GIL with the reading of runs.csv: with
#: queuing, a 1-worker normalize's worker sat idle 0.5-1.3 s while that was read.
SCHEDULER_CONFIG = {"distributed.scheduler.worker-saturation": "inf"}
#: dask's housekeeping in the LocalCluster started here (scheduler, nannies and workers)
#: at coarser intervals than its defaults. The event-loop tick, every 0.5 s, not 20 ms: it
#: only finds a loop blocked for long (warned of beyond ``distributed.admin.tick.limit``,
#: 3 s). The system monitor of the dashboard's plots, every 2 s, not 0.5 s; the memory
#: monitors that pause or restart a worker near its memory limit, every 1 s, not 0.1 s.
#: With two idle clusters up, dask's defaults cost this process 0.45 core-s every 10 s
#: and each worker 0.11-0.19; these, 0.12-0.14 and 0.02-0.05 (docs/scale.md). thruput's
#: workers hold a few units at a time, far below any memory limit.
HOUSEKEEPING_CONFIG = {"distributed.admin.tick.interval": "500ms",
                       "distributed.admin.system-monitor.interval": "2s",
                       "distributed.worker.memory.monitor-interval": "1s"}
#: Longest wait of :func:`placed`, s.
PLACING_SECONDS = 0.5
#: The memory allocator of the LocalCluster's worker processes (environment variables
#: of glibc's malloc, set as they start). dask's nannies set ``MALLOC_TRIM_THRESHOLD_``
#: to 64 KiB, so that freed memory goes back to the system at once; setting it also fixes
#: glibc's mmap threshold at 128 KiB, and every array of a unit above that size is then
#: mapped, faulted in page by page and unmapped again. A normalize of 2 x 10^5 files in one
#: process took 17.9-18.8 s that way against 13.6-16.5 s with glibc's defaults, and
#: 14.0-14.4 s with these: glibc's largest dynamic thresholds (blocks up to 32 MiB from
#: the heap, the heap given back beyond 64 MiB free), what its defaults reach once large
#: blocks have been freed. A worker holds a few units at a time (docs/scale.md), so memory
#: kept for reuse stays bounded. Variables already in the environment win (dask's rule).
ALLOCATOR_ENVIRON = {"MALLOC_MMAP_THRESHOLD_": 32 << 20, "MALLOC_TRIM_THRESHOLD_": 64 << 20}


@contextmanager
def cluster(workers=None, scheduler=None, client=None):
    """A :class:`distributed.Client` for the given choice, or ``None`` for "here".

    Parameters
    ----------
    workers : int, optional
        Start a LocalCluster of this many single-threaded worker processes.
    scheduler : str, optional
        Address of a running scheduler (``tcp://...``); takes precedence over ``workers``.
    client : distributed.Client, optional
        Use this one (it stays open).
    """
    if client is not None:
        yield client
        return
    if scheduler is None and not workers:
        yield None
        return
    from distributed import Client

    if scheduler is not None:
        with Client(scheduler) as c:
            yield c
        return
    with local_cluster(workers) as lc, Client(lc) as c:
        yield c


@contextmanager
def answering(interval=SWITCH_WHILE_BUSY):
    """Python's thread switch interval set to ``interval`` s for the block, in which this
    thread runs Python for long while the workers are busy (reading runs.csv whole): the
    client's event loop, and a LocalCluster's scheduler in it, wait for the GIL at most
    that long, not 5 ms, at each of the many steps of sending a task (docs/scale.md)."""
    import sys

    before = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def local_cluster(workers):
    """The :class:`distributed.LocalCluster` of :func:`cluster`: ``workers``
    single-threaded worker processes configured with :data:`WORKER_CONFIG` and
    :data:`ALLOCATOR_ENVIRON`, a scheduler configured with :data:`SCHEDULER_CONFIG`, all
    with :data:`HOUSEKEEPING_CONFIG`, and a dashboard on a free port."""
    import dask
    from distributed import LocalCluster

    spawn = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in ALLOCATOR_ENVIRON.items()}
    # (read as they start, here; each nanny passes this configuration on to its worker)
    with dask.config.set({**SCHEDULER_CONFIG, **HOUSEKEEPING_CONFIG, **spawn}):
        return LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=True,
                            dashboard_address=":0", silence_logs=40, config=WORKER_CONFIG)


class Parcel:
    """An argument sent to the workers as it is, pickled once, here (:func:`submit`).

    dask looks through every list, tuple and dict of a task's arguments for the keys of
    other tasks, item by item: about 45 µs a runs.csv row (a ``MonitorRow`` is a tuple of
    16) in the process that submits, against about 5 µs to pickle the row. At 2 x 10^5
    rows that was 10-20 s of the driver's time, taken from the workers on a small machine
    (docs/scale.md). And dask's scheduler unpickles every task it is sent, and pickles it
    again for its worker: a parcel travels as its value's pickle (:class:`_Sealed`),
    opened on the worker only (2.6 s of the driver's 8 s in a 2-worker normalize of 2 x
    10^5 rows were the scheduler's). A parcel must hold no future: dask would not see it.
    """

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __reduce__(self):
        import pickle

        return _Sealed, (pickle.dumps(self.value, protocol=pickle.HIGHEST_PROTOCOL),)


class _Sealed:
    """A :class:`Parcel` on its way: the pickle of its value, unpickled by :func:`_opened`."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data

    def __reduce__(self):
        return _Sealed, (self.data,)


def submit(client, func, *args):
    """``client.submit(func, *args)`` with every :class:`Parcel` of ``args`` opened on
    the worker; the task's key is named after ``func`` (as dask names its own), and never
    reused (the readers are pure, but a file may change between two calls)."""
    import uuid

    return client.submit(_opened, func, *args, key=f"{func.__name__}-{uuid.uuid4().hex}",
                         pure=False)


def placed(client, futures, timeout=None):
    """Wait until the scheduler has given each of ``futures`` to a worker (or it is done),
    at most ``timeout`` s (default :data:`PLACING_SECONDS`): called by a caller about to
    hold the GIL for long (reading runs.csv whole), so that a LocalCluster's scheduler,
    which runs on this process's event loop, places them first. Meanwhile this thread
    waits on the scheduler's answer, not holding the GIL."""
    import time

    keys = {f.key for f in futures}
    deadline = time.monotonic() + (PLACING_SECONDS if timeout is None else timeout)
    while keys and time.monotonic() < deadline:
        keys -= {key for held in client.processing().values() for key in held}
        keys -= {f.key for f in futures if f.done()}
        if keys:
            time.sleep(0.002)


def _opened(func, *args):
    import pickle

    return func(*(pickle.loads(a.data) if isinstance(a, _Sealed) else a.value if isinstance(a, Parcel) else a
                  for a in args))


def map_batches(func, first, batches, *, workers=None, scheduler=None, client=None):
    """``[func(first, batch) for batch in batches]``, here or on a dask cluster.

    Parameters
    ----------
    func : callable
        A module-level function (workers import it by name); pure: same input, same output.
    first
        Its first argument, the same for every batch (e.g. a campaign directory).
    batches : sequence
        One item of work each (e.g. a list of manifest rows).
    workers, scheduler, client
        Where to run, see :func:`cluster`. Fewer than :data:`MIN_BATCHES_FOR_CLUSTER`
        batches always run here.

    Returns
    -------
    list
        The results in the order of ``batches``.

    Raises
    ------
    Exception
        The first batch's exception, as the function raised it (dask re-raises it here).
    """
    batches = list(batches)
    if len(batches) < MIN_BATCHES_FOR_CLUSTER and client is None:
        workers = scheduler = None
    with cluster(workers, scheduler, client) as c:
        if c is None:
            return [func(first, batch) for batch in batches]
        futures = [submit(c, func, first, Parcel(batch)) for batch in batches]
        try:
            return c.gather(futures)
        finally:
            for future in futures:
                future.release()


def iter_batches(func, first, batches, *, client=None, ahead=None):
    """``func(first, batch)`` for each batch, yielded in order as they are ready.

    With a ``client``, the first batches go to the cluster at once (so the caller can do
    other work while they are read), at most ``ahead`` at a time (default: two per
    worker, so every worker has the next batch while the caller handles the one before),
    and each result is let go of there once yielded: a caller that writes each result out
    before asking for the next holds a bounded number of them, whatever the number of
    batches. ``close()`` cancels those still on the cluster. Without a client, in this
    process, one after the other as they are asked for.
    """
    if client is None:
        return (func(first, batch) for batch in batches)
    return _Ahead(func, first, batches, client,
                  ahead or 2 * max(1, len(client.scheduler_info().get("workers", {}))))


class _Ahead:
    """The iterator of :func:`iter_batches` on a cluster."""

    def __init__(self, func, first, batches, client, ahead):
        from collections import deque

        self._submit = lambda batch: submit(client, func, first, Parcel(batch))
        self._todo = iter(batches)
        self._pending = deque()
        for _ in range(ahead):
            self._next_batch()

    def _next_batch(self):
        for batch in self._todo:
            self._pending.append(self._submit(batch))
            return

    def __iter__(self):
        return self

    def __next__(self):
        if not self._pending:
            raise StopIteration
        future = self._pending.popleft()
        try:
            result = future.result()
        except BaseException:
            self.close()
            raise
        future.release()
        self._next_batch()
        return result

    def close(self):
        """Cancel the batches still on the cluster; no more are sent."""
        self._todo = iter(())
        while self._pending:
            self._pending.popleft().cancel()

    def __del__(self):
        self.close()


#: Files per batch of :func:`read_many`: large enough that a batch parser (iperf3 JSON's
#: ``parse_many``) keeps its speed, small enough to spread a few thousand files.
FILES_PER_BATCH = 256
#: Padding of integer variables past the end of a shorter stream/interval axis, as the
#: readers write it: -1 for the contract's "none" (line, seq, ttl), else 0 (format flags
#: such as iperf3_interval_omitted).
INT_PADDING = {"line": -1, "seq": -1, "ttl": -1}


def _read_batch(format, paths):
    from .reader import read_many

    return read_many(paths, format=format)


def read_many(paths, format=None, *, workers=None, scheduler=None, client=None):
    """:func:`thruput.read_many` with the files read in batches on a dask cluster.

    Batches of :data:`FILES_PER_BATCH` files are read by ``thruput.read_many`` on the
    workers and joined here so that the result is the one ``thruput.read_many(paths)``
    gives in one process, bit for bit: records renumbered, ``record_file`` offset,
    padding (NaN, NaT, ``""``, :data:`INT_PADDING`) out to the widest batch, line
    accounting and consistency checks added up.
    """
    import json

    import numpy as np
    import xarray as xr

    from . import formats
    from .contract import RUN_CHECK, validate
    from .reader import RECORD_DIMS, added_ledgers, read_pile

    paths = [str(p) for p in paths]
    if format is None and paths:            # as thruput.read_many does: from the first file
        format = read_pile(paths[:1])[2]
    batches = [paths[i:i + FILES_PER_BATCH] for i in range(0, len(paths), FILES_PER_BATCH)]
    parts = map_batches(_read_batch, format, batches, workers=workers, scheduler=scheduler,
                        client=client)
    if len(parts) == 1:
        return parts[0]
    dim = RECORD_DIMS[formats.get(format).KIND]
    shifted, files = [], 0
    for part in parts:
        part = part.drop_vars([dim, "file"])
        part["record_file"] = part["record_file"] + files
        files += part.sizes["file"]
        shifted.append(part)
    widths = {d: max(p.sizes.get(d, 0) for p in shifted) for p in shifted for d in p.dims}
    shifted = _with_every_variable(shifted)
    records = [_pad(p.drop_dims("file"), widths, dim) for p in shifted]
    ds = xr.concat(records, dim=dim, data_vars="minimal", coords="minimal", compat="override",
                   join="override", combine_attrs="override")
    per_file = xr.concat([p[["file_path", "file_sha256"]].drop_dims(dim, errors="ignore")
                          for p in shifted], dim="file", combine_attrs="override")
    ds = ds.assign(per_file.data_vars)
    ds.attrs = _joined_attrs(parts, hasattr(formats.get(format), "parse_many"))
    ds.attrs.update(added_ledgers(parts))
    ds.attrs["truncation"] = "; ".join(p.attrs["truncation"] for p in parts if p.attrs["truncation"])
    # a batch parser names its checks by run index ("run 3: ..."): shift them as the runs are
    checks, offset = [], 0
    for p in parts:
        for c in json.loads(p.attrs["consistency"]):
            m = RUN_CHECK.match(c["check"]) if dim == "run" else None
            checks.append({**c, "check": f"run {int(m[1]) + offset}:{m[2]}"} if m else c)
        offset += p.sizes.get(dim, 0)
    ds.attrs["consistency"] = json.dumps(checks, sort_keys=True)
    ds.attrs["consistent"] = int(all(int(p.attrs["consistent"]) for p in parts))
    ds = ds.assign_coords({dim: xr.Variable(dim, np.arange(ds.sizes[dim]), parts[0][dim].attrs),
                           "file": xr.Variable("file", np.arange(ds.sizes["file"]), parts[0]["file"].attrs)})
    return validate(ds)


def _joined_attrs(parts, batch_parser):
    """The attrs of the batches ``parts`` joined as one ``read_many`` would give them
    (before the line accounting and checks are added up): a batch parser parses every
    file at once, and the first batch's attrs are those of that parse; files read one by
    one keep the attrs they agree on (``combine_attrs="drop_conflicts"``), so here those
    every batch holds with the same value. Exact when the files of a format carry the
    same attrs (a pile mixing wrapped and plain logs may differ: a ``line_prefix`` only
    some batches hold is dropped here)."""
    attrs = dict(parts[0].attrs)
    if batch_parser:
        return attrs
    missing = object()
    return {key: value for key, value in attrs.items()
            if all(_same_attr(p.attrs.get(key, missing), value) for p in parts[1:])}


def _same_attr(a, b):
    """Equal attr values (strings and numbers; NaN equals NaN, as xarray compares them)."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


def _padding(name, dtype):
    """What a reader writes past the end of a shorter stream/interval axis."""
    import numpy as np

    if dtype.kind in "iu":
        return INT_PADDING.get(name, 0)
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "M":
        return np.datetime64("NaT", "ns")
    if dtype.kind in "UOT":
        return ""
    return False


def _with_every_variable(parts):
    """``parts`` each with every data variable of any of them: one a part lacks (the
    server's view of ``--get-server-output``, which only some batches hold) filled with
    what a reader writes where there is none (:func:`_padding`), as one read of every
    file gives it."""
    import numpy as np
    import xarray as xr

    model = {}
    for part in parts:
        for name, var in part.data_vars.items():
            model.setdefault(name, var.variable)
    out = []
    for part in parts:
        missing = {name: xr.Variable(var.dims, np.full(tuple(part.sizes.get(d, 0) for d in var.dims),
                                                       _padding(name, var.dtype), dtype=var.dtype),
                                     var.attrs)
                   for name, var in model.items() if name not in part.variables}
        out.append(part.assign(missing) if missing else part)
    return out


def _pad(ds, widths, record_dim):
    """``ds`` padded along every dimension but ``record_dim`` to ``widths``."""
    import numpy as np
    import xarray as xr

    short = {d: widths[d] - n for d, n in ds.sizes.items() if d != record_dim and n < widths[d]}
    if not short:
        return ds
    wide = {}
    for name, var in ds.variables.items():
        pads = [(0, short.get(d, 0)) for d in var.dims]
        if name not in short and any(after for _, after in pads):
            values = np.pad(var.values, pads, constant_values=_padding(name, var.dtype))
            wide[name] = xr.Variable(var.dims, values, var.attrs)
    out = ds.drop_vars(list(wide) + [d for d in short if d in ds.coords])
    out = out.assign({n: v for n, v in wide.items() if n not in ds.coords})
    return out.assign_coords({d: xr.Variable(d, np.arange(widths[d]), ds[d].attrs)
                              for d in short if d in ds.coords}
                             | {n: v for n, v in wide.items() if n in ds.coords})
