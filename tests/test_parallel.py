"""thruput.read_many on a 2-worker dask LocalCluster gives what it gives in one process."""

from __future__ import annotations

import pytest
import xarray as xr

import thruput
from thruput import parallel

from .conftest import DATA

#: iperf3 -J samples of different shapes (1-4 streams, 2-5 intervals, TCP/UDP, -R, two runs).
IPERF3 = sorted(p for p in (DATA / "iperf3_json").glob("3.12--*[!d].json")
                if not any(w in p.name for w in ("refused", "truncated", "interrupted")))
PING = sorted(p for p in (DATA / "ping").glob("iputils--*.out") if not any(w in p.name for w in ("truncated", "two-runs")))
#: ping logs wrapped in timestamping prefixes: the format is sniffed through the wrapper.
WRAPPED = sorted((DATA / "wrapped" / "recorded").glob("ping--*.out"))


@pytest.fixture(scope="module")
def client():
    """A 2-worker cluster as ``workers=2`` starts it (:func:`thruput.parallel.local_cluster`)."""
    from distributed import Client

    with parallel.local_cluster(2) as cluster, Client(cluster) as c:
        yield c


def test_local_workers_run_without_dask_profiler(client):
    """The workers thruput starts take no stack samples (``parallel.WORKER_CONFIG``): the
    setting reaches each worker process and its profiling callback is not there."""
    import dask

    def profiling(dask_worker):
        return (dask.config.get("distributed.worker.profile.enabled"),
                "profile" in dask_worker.periodic_callbacks)

    assert list(client.run(profiling).values()) == [(False, False)] * 2


def test_local_workers_start_with_glibc_s_largest_dynamic_malloc_thresholds(monkeypatch):
    """The workers thruput starts get ``parallel.ALLOCATOR_ENVIRON`` (dask's nannies would
    set ``MALLOC_TRIM_THRESHOLD_`` to 64 KiB), unless this environment sets its own."""
    import os

    from distributed import Client

    for name in parallel.ALLOCATOR_ENVIRON:     # (a default LocalCluster leaves it set here)
        monkeypatch.delenv(name, raising=False)
    names = list(parallel.ALLOCATOR_ENVIRON)
    with parallel.local_cluster(1) as cluster, Client(cluster) as c:
        seen = list(c.run(lambda: [os.environ.get(n) for n in names]).values())
    assert seen == [[str(v) for v in parallel.ALLOCATOR_ENVIRON.values()]]
    assert parallel.ALLOCATOR_ENVIRON == {"MALLOC_MMAP_THRESHOLD_": 32 << 20, "MALLOC_TRIM_THRESHOLD_": 64 << 20}


def test_the_local_scheduler_sends_the_workers_every_task_at_once(client):
    """No queuing on the scheduler thruput starts (``parallel.SCHEDULER_CONFIG``); the
    setting is not left behind in this process."""
    import math

    import dask

    assert client.cluster.scheduler.WORKER_SATURATION == math.inf
    assert dask.config.get("distributed.scheduler.worker-saturation") != "inf"


def test_the_local_cluster_keeps_house_at_coarser_intervals(client):
    """The scheduler, the nannies and the workers thruput starts tick, monitor the system
    and watch memory at ``parallel.HOUSEKEEPING_CONFIG``'s intervals; this process keeps
    dask's defaults."""
    import dask
    from dask.utils import parse_timedelta

    def intervals(dask_worker):
        return (dask.config.get("distributed.admin.tick.interval"),
                dask.config.get("distributed.admin.system-monitor.interval"),
                dask.config.get("distributed.worker.memory.monitor-interval"))

    wanted = tuple(parallel.HOUSEKEEPING_CONFIG[k] for k in (
        "distributed.admin.tick.interval", "distributed.admin.system-monitor.interval",
        "distributed.worker.memory.monitor-interval"))
    assert list(client.run(intervals).values()) == [wanted] * 2
    scheduler = client.cluster.scheduler
    assert scheduler.periodic_callbacks["tick"].callback_time == 1000 * parse_timedelta(wanted[0])
    for nanny in client.cluster.workers.values():
        assert nanny.periodic_callbacks["tick"].callback_time == 1000 * parse_timedelta(wanted[0])
    assert dask.config.get("distributed.admin.tick.interval") != wanted[0]


def test_a_parcel_travels_as_its_pickle_and_is_opened_by_the_task(client):
    """The scheduler unpickles and pickles again every task it is sent: a parcel's value
    goes through it as bytes, unpickled once, on the worker."""
    import pickle

    rows = [("run", 1.5, float("nan"))] * 3
    sealed = pickle.loads(pickle.dumps(parallel.Parcel(rows)))
    assert isinstance(sealed.data, bytes) and pickle.loads(pickle.dumps(sealed)).data == sealed.data
    assert parallel._opened(len, sealed) == 3
    assert parallel.submit(client, len, parallel.Parcel(rows)).result() == 3


def test_placed_returns_once_the_scheduler_has_given_each_task_to_a_worker(client):
    """:func:`parallel.placed` waits until every task is on a worker (or done), not for
    them to finish, and at most its timeout."""
    import time

    sleeping = [client.submit(time.sleep, 3, pure=False) for _ in range(3)]
    parallel.placed(client, sleeping)
    held = {key for keys in client.processing().values() for key in keys}
    assert {f.key for f in sleeping} <= held and not any(f.done() for f in sleeping)
    client.cancel(sleeping)
    nowhere = client.submit(len, [1], pure=False, workers=["tcp://127.0.0.1:1"], allow_other_workers=False)
    started = time.monotonic()
    parallel.placed(client, [nowhere], timeout=0.2)     # (no such worker: it waits 0.2 s)
    assert time.monotonic() - started >= 0.2 and not nowhere.done()
    client.cancel([nowhere])


def same_bits(a, b):
    xr.testing.assert_identical(a, b)
    assert a.attrs == b.attrs
    for name, var in a.variables.items():
        other = b[name].variable
        if var.dtype.kind in "fiubM":
            assert var.dtype == other.dtype and var.values.tobytes() == other.values.tobytes(), name


@pytest.mark.parametrize("paths", [IPERF3, PING, WRAPPED], ids=["iperf3_json", "ping", "wrapped ping"])
def test_distributed_read_many_is_bit_identical(paths, client, monkeypatch):
    from distributed import get_task_stream

    monkeypatch.setattr(parallel, "FILES_PER_BATCH", 3)
    here = thruput.read_many(paths)
    with get_task_stream(client) as tasks:
        there = thruput.read_many(paths, client=client)
    batches = [t for t in tasks.data if "_read_batch" in str(t["key"])]
    assert len(batches) == -(-len(paths) // 3)
    assert len({t["worker"] for t in batches}) == 2
    same_bits(there, here)
    assert there.sizes["file"] == len(paths)


def test_few_files_stay_in_this_process(monkeypatch):
    started = []
    monkeypatch.setattr(parallel, "cluster", lambda *a, **k: started.append(a) or _nothing())
    ds = thruput.read_many(IPERF3[:2], workers=2)
    assert started == [(None, None, None)]
    same_bits(ds, thruput.read_many(IPERF3[:2]))


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
