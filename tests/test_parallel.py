"""thruput.read_many on a 2-worker dask LocalCluster gives what it gives in one process."""

from __future__ import annotations

import pytest
import xarray as xr

import thruput
from thruput import parallel, reader

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


def test_a_list_argument_travels_pickled_and_is_unpickled_by_the_task(client):
    """A batch of rows reaches the task as the list it was, and other arguments as they
    are (bytes included)."""
    rows = [("run", 1.5, float("nan"))] * 3
    assert parallel.submit(client, len, rows).result() == 3
    assert parallel.submit(client, lambda a, b: (a, len(b)), b"raw", rows).result() == (b"raw", 3)


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

    monkeypatch.setattr(reader, "FILES_PER_BATCH", 3)
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
