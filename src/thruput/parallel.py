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

__all__ = ["map_batches", "iter_batches", "cluster", "local_cluster", "submit",
           "MIN_BATCHES_FOR_CLUSTER"]


#: Fewer batches than this are read in this process even when workers are asked for:
#: a LocalCluster takes 2-5 s to start, more than a few batches take to read.
MIN_BATCHES_FOR_CLUSTER = 4
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


def local_cluster(workers):
    """The :class:`distributed.LocalCluster` of :func:`cluster`: ``workers``
    single-threaded worker processes (the readers hold the GIL), dask's defaults
    otherwise, and a dashboard on a free port."""
    from distributed import LocalCluster

    return LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=True,
                        dashboard_address=":0", silence_logs=40)


def submit(client, func, *args, priority=0):
    """``client.submit(func, *args)``: the task's key named after ``func`` (as dask names
    its own) and never reused (the readers are pure, but a file may change between two
    calls). A list argument travels pickled whole (:func:`_unpickled`): dask would look
    through each of its items (a runs.csv row is a tuple of 16) for other tasks' keys.
    ``priority``: dask's (higher runs first among the tasks that are ready)."""
    import pickle
    import uuid

    flags = [isinstance(a, list) for a in args]
    args = [pickle.dumps(a, protocol=pickle.HIGHEST_PROTOCOL) if f else a for f, a in zip(flags, args)]
    return client.submit(_unpickled, func, flags, *args, key=f"{func.__name__}-{uuid.uuid4().hex}",
                         pure=False, priority=priority)


def _unpickled(func, flags, *args):
    import pickle

    return func(*(pickle.loads(a) if pickled else a for pickled, a in zip(flags, args)))


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
        futures = [submit(c, func, first, list(batch)) for batch in batches]
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

        self._submit = lambda batch: submit(client, func, first, list(batch))
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
            future.release()
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
