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

The results come back to the caller, so its memory holds all of them: a caller with
much to read (``thruput pipeline normalize``) calls :func:`map_batches` wave by wave and
writes each wave out before the next.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["map_batches", "cluster", "MIN_BATCHES_FOR_CLUSTER"]

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
    from distributed import Client, LocalCluster

    if scheduler is not None:
        with Client(scheduler) as c:
            yield c
        return
    with LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as lc, Client(lc) as c:
        yield c


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
        futures = c.map(func, [first] * len(batches), batches, pure=False)
        try:
            return c.gather(futures)
        finally:
            for future in futures:
                future.release()
