"""Monitor campaigns in Zarr: full normalize, appends, changed inputs, lazy opening, and
the same store from a 2-worker dask LocalCluster as from this process."""

from __future__ import annotations

import json
import os
import mmap
import shutil
import sys
import time
from pathlib import Path

import dask.array
import numpy as np
import pytest
import xarray as xr

import thruput
from thruput.campaign import monitor as mon
from thruput.campaign import regions, store
from thruput.cli import main
from thruput.errors import ThruputError

from .conftest import DATA, copy_campaign

CAMPAIGN = DATA / "campaigns" / "monitor-loopback"


def copy(tmp_path, rows=None, name=None):
    """A copy of the campaign under ``tmp_path/name`` keeping data ``rows`` of runs.csv."""
    return copy_campaign(CAMPAIGN, tmp_path / (name or "c"), rows)


def files(path):
    """Every file of a store: relative path -> bytes."""
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(Path(path).rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    out = tmp_path_factory.mktemp("full") / "m.zarr"
    assert main(["pipeline", "normalize", str(CAMPAIGN), str(out)]) == 0
    return out


def test_store_opens_as_the_campaign_built_from_raw(full):
    built = thruput.open_campaign(CAMPAIGN)
    stored = thruput.open_campaign(full)
    xr.testing.assert_identical(stored, built)
    assert stored.attrs["manifest_rows"] == 20 and (full / ".zmetadata").is_file()
    lazy = thruput.open_campaign(full, chunks={})
    assert isinstance(lazy["rtt"].data, dask.array.Array)
    assert lazy["rtt"].data.chunksize == (20, 5)           # all runs in one chunk, whole probe
    xr.testing.assert_identical(lazy.load(), built)
    assert float(lazy["rtt_median"].max().compute()) == float(built["rtt_median"].max())
    assert store.compute_chunks(full) == {"run": 8 * 1024}     # 8 stored chunks a task
    xr.testing.assert_identical(thruput.open_campaign(full, chunks=store.compute_chunks(full)).load(),
                                built)


@pytest.mark.filterwarnings("ignore:The specified chunks separate")
def test_names_resolve_to_the_store_first(full, tmp_path, monkeypatch):
    processed = tmp_path / "data" / "processed"
    processed.mkdir(parents=True)
    shutil.copytree(full, processed / "monitor-loopback.zarr")
    monkeypatch.chdir(tmp_path)
    ds = thruput.open_campaign("monitor-loopback", chunks={"run": 8})
    assert ds["throughput"].data.chunks == ((8, 8, 4),)


def test_append_gives_the_full_store_byte_for_byte(full, tmp_path, capsys):
    target = copy(tmp_path, rows=range(12))
    out = tmp_path / "m.zarr"
    assert main(["pipeline", "normalize", str(target), str(out)]) == 0
    assert xr.open_zarr(out).sizes["run"] == 12
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")        # 8 more rows arrive
    capsys.readouterr()
    assert main(["pipeline", "normalize", str(target), str(out)]) == 0
    assert "appended 8 runs; 20 runs, 19 files in the store" in capsys.readouterr().out
    # the appended rows carry longer strings (the refusal's reason) than any stored before
    assert files(out) == files(full)
    assert main(["pipeline", "normalize", str(target), str(out)]) == 0    # nothing new
    assert files(out) == files(full)


def test_a_changed_campaign_yaml_reaches_the_store_without_new_runs(full, tmp_path, capsys):
    """campaign.yaml is the store's too (title, description, events the statistics split
    periods at): edited with no new row, the next normalize replaces the store's copy and
    says so; unedited, it writes nothing."""
    import json

    target = copy(tmp_path)
    out = tmp_path / "m.zarr"
    assert main(["pipeline", "normalize", str(target), str(out)]) == 0
    yaml_text = (target / "campaign.yaml").read_text()
    (target / "campaign.yaml").write_text(yaml_text.replace('title: "Loopback monitor (test fixture)"',
                                                            'title: "Loopback monitor, renamed"'))
    capsys.readouterr()
    assert main(["pipeline", "normalize", str(target), str(out)]) == 0
    said = capsys.readouterr().out
    assert "campaign.yaml changed since the store was written" in said and "appended 0 runs" in said
    ds = thruput.open_campaign(out)
    assert ds.attrs["title"] == "Loopback monitor, renamed"
    assert json.loads(ds.attrs["metadata"])["title"] == "Loopback monitor, renamed"
    before = files(out)
    assert main(["pipeline", "normalize", str(target), str(out)]) == 0
    assert "campaign.yaml changed" not in capsys.readouterr().out
    assert files(out) == before
    (target / "campaign.yaml").write_text(yaml_text)             # back as it was: as written whole
    assert main(["pipeline", "normalize", str(target), str(out)]) == 0
    assert files(out) == files(full)


@pytest.mark.parametrize("step", ["attrs", "consolidation"])
def test_an_append_cut_short_is_done_again_or_refused(full, tmp_path, monkeypatch, step):
    """Killed before its attrs, an append has lengthened the arrays and written the new
    runs, but readers see the consolidated shapes and the old attrs: the store before the
    append, and the next normalize writes the same runs again. Killed between the attrs
    and the consolidation (zarr reads a group's attrs from .zattrs), it is refused."""
    import zarr
    from zarr.core.attributes import Attributes

    target = copy(tmp_path, rows=range(12))
    out = tmp_path / "m.zarr"
    store.normalize_monitor(target, out)
    before = store.open_store(out)
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(*((Attributes, "put") if step == "attrs" else (store, "_consolidate_again")), killed)
        m.setattr(zarr, "consolidate_metadata", killed)
        with pytest.raises(KeyboardInterrupt):
            store.normalize_monitor(target, out)
    assert zarr.open_group(str(out), mode="r", use_consolidated=False)["rtt"].shape[0] == 20
    if step == "consolidation":
        with pytest.raises(store.StoreError, match="holds 12 runs but records 20 rows of runs.csv: "
                                                   "an append was cut short"):
            store.normalize_monitor(target, out)
        return
    xr.testing.assert_identical(store.open_store(out), before)
    assert store.normalize_monitor(target, out)["runs_added"] == 8
    assert files(out) == files(full)


def test_append_with_more_probes_or_earlier_runs_rewrites_the_store(full, tmp_path):
    # rows 0-3 are TCP/UDP only (no probes): the ping rows that follow widen `probe`
    target = copy(tmp_path, rows=range(4))
    out = tmp_path / "m.zarr"
    store.normalize_monitor(target, out)
    assert xr.open_zarr(out).sizes["probe"] == 0
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")
    assert store.normalize_monitor(target, out)["runs_added"] == 16
    xr.testing.assert_identical(store.open_store(out), store.open_store(full))
    # slot 3 listed first (as an import of an archive may do): slots 0-1 come later but ran earlier
    order = list(range(12, 20)) + list(range(12))
    target = copy(tmp_path, rows=order[:8], name="late")
    out = tmp_path / "late.zarr"
    store.normalize_monitor(target, out)
    lines = (CAMPAIGN / "runs.csv").read_text().splitlines(keepends=True)
    (target / "runs.csv").write_text("".join([lines[0]] + [lines[1 + i] for i in order]))
    store.normalize_monitor(target, out)
    late = store.open_store(out)
    assert (np.diff(late["time"].values.astype(np.int64)) >= 0).all()
    xr.testing.assert_identical(late.drop_attrs(), store.open_store(full).drop_attrs())
    # the record of checked files follows the rewritten store's order, and is the store's
    record = store.load_verified(store.verified_path(out), target)
    again = store._index_of(xr.open_zarr(out, create_default_indexes=False))
    assert record.matches(xr.open_zarr(out))
    for name in ("run", "source", "time"):
        assert getattr(record, name).tolist() == getattr(again, name).tolist()
    assert (record.size[record.source != ""] > 0).all()


def test_whether_new_rows_follow_the_store_is_read_from_its_record_when_it_matches(full, tmp_path):
    """The store's last start time comes from its record of checked files (the same
    runs.csv rows: the same times) when there is one, else from the store itself."""
    base = xr.open_zarr(full, consolidated=True, chunks=None, create_default_indexes=False)
    record = store.load_verified(store.verified_path(full), CAMPAIGN)
    assert record.matches(base) and record.time[-1] == base["time"].values[-1].astype(np.int64)
    rows, _ = mon.read_monitor_manifest(CAMPAIGN)
    last = max(rows, key=lambda r: r.started)
    later = record.verified()._replace(time=record.time + 1)
    assert store._follows(base, [last], record) and store._follows(base, [last])
    assert not store._follows(base, [last], later)               # (the record is what is read)
    assert store._follows(base, [last], later._replace(time=later.time[:-1]))   # not the store's


def test_unverified_out_of_order_append_without_a_record_records_the_store_as_written(full, tmp_path):
    order = list(range(12, 20)) + list(range(12))        # slots 0-1 listed after slot 3
    target = copy(tmp_path, rows=order[:8])
    out = tmp_path / "m.zarr"
    store.normalize_monitor(target, out)
    store.verified_path(out).unlink()                     # no record, and none made below
    lines = (CAMPAIGN / "runs.csv").read_text().splitlines(keepends=True)
    (target / "runs.csv").write_text("".join([lines[0]] + [lines[1 + i] for i in order]))
    store.normalize_monitor(target, out, verify=False)    # rewrites the store in time order
    record = store.load_verified(store.verified_path(out), target)
    written = store._index_of(xr.open_zarr(out, create_default_indexes=False))
    for name in ("run", "source", "time"):
        assert getattr(record, name).tolist() == getattr(written, name).tolist()


def test_a_stored_file_changed_in_place_is_an_error(full, tmp_path, capsys):
    target = copy(tmp_path)
    out = tmp_path / "m.zarr"
    shutil.copytree(full, out)
    before = files(out)
    raw = target / "runs/2026-11-22/000001-lo-forward-udp.json"
    raw.write_text(raw.read_text().replace('"bytes":', '"bytes": ', 1))    # still valid JSON
    assert main(["pipeline", "normalize", str(target), str(out)]) == 1
    err = capsys.readouterr().err
    assert "1 raw files changed since they were stored" in err
    assert "000001-lo-forward-udp.json: changed since it was stored (sha256 was" in err
    assert files(out) == before


def test_an_append_hashes_only_the_files_whose_size_or_time_changed(tmp_path, monkeypatch, capsys):
    target = copy(tmp_path, rows=range(12))
    out = tmp_path / "m.zarr"
    store.normalize_monitor(target, out)
    assert store.verified_path(out).is_file() and not (out / store.verified_path(out).name).exists()
    hashed = []
    real = store._hash_batch
    monkeypatch.setattr(store, "_hash_batch", lambda d, paths: hashed.extend(paths) or real(d, paths))
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")
    assert store.normalize_monitor(target, out)["runs_added"] == 8
    assert hashed == []                         # nothing stored changed: stat only
    # the stat started ahead, in threads, gives what the stat here gives
    stored = xr.open_zarr(out, create_default_indexes=False)
    record = store.load_verified(store.verified_path(out), target)
    for threads in (1, 3, 40):
        ahead = store.stat_ahead(target, stored, record, threads=threads)
        assert ahead[0] is record
        found = ahead[1].result()
        assert [x.tolist() for x in found] == [x.tolist() for x in store._stat(target, record.source.tolist())]
        assert (found[0][record.source != ""] > 0).all()
    # an edit in place that still parses changes the file's time: hashed, and refused
    raw = target / "runs/2026-11-22/000001-lo-forward-udp.json"
    raw.write_text(raw.read_text().replace('"bytes":', '"bytes": ', 1))
    assert main(["pipeline", "normalize", str(target), str(out)]) == 1
    assert hashed == ["runs/2026-11-22/000001-lo-forward-udp.json"]
    assert "000001-lo-forward-udp.json: changed since it was stored" in capsys.readouterr().err
    # one that keeps size and time (touch -r) passes the stat check: --verify-all hashes all
    first = target / "runs/2026-11-22/000000-lo-forward-tcp-b65536.json"
    shutil.copy(CAMPAIGN / "runs/2026-11-22/000001-lo-forward-udp.json", raw)
    assert main(["pipeline", "normalize", str(target), str(out)]) == 0
    st = first.stat()
    data = first.read_bytes()
    first.write_bytes(data.replace(b"1", b"2", 1))
    os.utime(first, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert main(["pipeline", "normalize", str(target), str(out)]) == 0
    assert main(["pipeline", "normalize", "--verify-all", str(target), str(out)]) == 1
    assert "000000-lo-forward-tcp-b65536.json: changed since it was stored" in capsys.readouterr().err


def test_a_stored_row_changed_is_an_error(full, tmp_path):
    target = copy(tmp_path)
    out = tmp_path / "m.zarr"
    shutil.copytree(full, out)
    text = (target / "runs.csv").read_text()
    row = mon.read_monitor_manifest(target)[0][2]
    (target / "runs.csv").write_text(text.replace(row.sha256, "0" * 64))
    with pytest.raises(store.StoreError, match=rf"runs.csv line 4: {row.run}: sha256 000000000000..., stored "):
        store.normalize_monitor(target, out)


def test_a_new_row_with_a_stored_run_id_is_refused(tmp_path):
    target = copy(tmp_path, rows=range(12))
    out = tmp_path / "m.zarr"
    store.normalize_monitor(target, out)
    before = files(out)
    lines = (CAMPAIGN / "runs.csv").read_text().splitlines(keepends=True)
    stored, new = lines[1].split(",", 1)[0], lines[13].split(",", 1)[0]
    (target / "runs.csv").write_text("".join(lines[:13]) + lines[13].replace(new, stored, 1))
    with pytest.raises(store.StoreError, match=f"runs already stored: {stored}$"):
        store.normalize_monitor(target, out)
    assert files(out) == before


def test_a_monitor_campaign_needs_a_zarr_output(tmp_path, capsys):
    assert main(["pipeline", "normalize", str(CAMPAIGN), str(tmp_path / "m.nc")]) == 2
    assert "a monitor campaign is stored as Zarr" in capsys.readouterr().err


def test_two_local_workers_write_the_same_store(full, tmp_path, monkeypatch):
    """Each worker writes the units it read into their regions of the store; the store is
    the one this process writes alone, file for file."""
    from distributed import Client, LocalCluster, get_task_stream

    monkeypatch.setattr(regions, "UNIT_ROWS", 8)     # 3 units of the 20 rows, 8-run chunks
    here = tmp_path / "here.zarr"
    store.normalize_monitor(CAMPAIGN, here)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=40) as cluster, Client(cluster) as client:
        with get_task_stream(client) as tasks:
            there = tmp_path / "there.zarr"
            store.normalize_monitor(CAMPAIGN, there, client=client)
        reads = [t for t in tasks.data if "read_unit" in str(t["key"])]
        writes = [t for t in tasks.data if "write_read" in str(t["key"])]
    assert len(reads) == len(writes) == 3
    assert len({t["worker"] for t in writes}) == 2
    assert not [t for t in tasks.data if "read_batch" in str(t["key"])]    # no run came here
    assert files(there) == files(here)
    assert store.open_store(there)["rtt"].encoding["chunks"] == (8, store.open_store(full).sizes["probe"])
    xr.testing.assert_identical(store.open_store(there), store.open_store(full))
    xr.testing.assert_identical(store.open_store(there), thruput.open_campaign(CAMPAIGN))


def test_workers_read_a_new_stores_first_units_while_runs_csv_is_read(tmp_path, monkeypatch):
    """A new store's first runs (one unit here, the first in time order of the first two
    units' rows) go to the workers before runs.csv is read whole; the store is the one
    this process writes, whether that guess holds (a row of the second unit that starts
    first) or not (a later row that starts first, a quoted reason over two lines), and a
    bad later row is an error by its line that leaves no store."""
    from distributed import Client, LocalCluster, get_task_stream

    monkeypatch.setattr(regions, "UNIT_ROWS", 8)     # 3 units, the first read on the guess
    monkeypatch.setattr(regions, "GUESS_UNITS", 1)
    lines = (CAMPAIGN / "runs.csv").read_text().splitlines(keepends=True)
    earliest = lines[1].split(",")[5].replace("17:58:11", "17:58:10")
    cases = {"in order": lines,
             "a row of the second unit first": lines[:12] + [lines[12].replace(lines[12].split(",")[5], earliest)] + lines[13:],
             "a later row first": lines[:18] + [lines[18].replace(lines[18].split(",")[5], earliest)] + lines[19:],
             "a reason of two lines": lines[:20] + [lines[20].replace("killed after", '"killed\nafter').rstrip() + '"\n']}
    sent = []
    read = mon.read_monitor_manifest
    monkeypatch.setattr(mon, "read_monitor_manifest", lambda *a, **k: sent.append(len(client.futures)) or read(*a, **k))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=40) as cluster, Client(cluster) as client:
        for name, text in cases.items():
            target = copy(tmp_path, name=name.replace(" ", "-"))
            (target / "runs.csv").write_text("".join(text))
            here, there = tmp_path / f"{name}-here.zarr", tmp_path / f"{name}-there.zarr"
            store.normalize_monitor(target, here)
            sent.clear()
            with get_task_stream(client) as tasks:
                assert store.normalize_monitor(target, there, client=client)["runs"] == 20
            assert sent and sent[0] > 0, name       # the first unit out before runs.csv was read
            reads = [t for t in tasks.data if "read_unit" in str(t["key"])]
            if "unit" in name or name == "in order":    # (the guess held: one unit read apart)
                assert len(reads) == 1
            assert files(there) == files(here), name
        bad = copy(tmp_path, name="bad")
        (bad / "runs.csv").write_text("".join(lines[:19] + [lines[19].replace(",refused,", ",refuted,")]))
        with pytest.raises(ThruputError, match="runs.csv:20: outcome .refuted."):
            store.normalize_monitor(bad, tmp_path / "bad.zarr", client=client)
        deadline = time.monotonic() + 30
        while client.who_has() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not client.who_has()
    assert not list(tmp_path.glob("bad.zarr*"))


@pytest.mark.parametrize("on_cluster", [False, True])
def test_an_append_is_written_unit_by_unit_into_regions(tmp_path, monkeypatch, on_cluster):
    """New rows after the store's last run are read and written by units, each into its
    region by the worker that read it (none through this process); the first unit fills
    the store's last, partly written chunk, so no two units share a chunk. The store is
    the one written whole, file for file, and so is the record of checked files."""
    from distributed import Client, LocalCluster, get_task_stream

    monkeypatch.setattr(regions, "UNIT_ROWS", 4)     # 4-run chunks: 10 rows end mid-chunk
    whole = tmp_path / "whole.zarr"
    store.normalize_monitor(CAMPAIGN, whole)
    target = copy(tmp_path, rows=range(10))
    out = tmp_path / "m.zarr"
    store.normalize_monitor(target, out)
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")     # 10 more: units of 2, 4 and 4
    if not on_cluster:
        assert store.normalize_monitor(target, out)["runs_added"] == 10
    else:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                          silence_logs=40) as cluster, Client(cluster) as client:
            with get_task_stream(client) as tasks:
                assert store.normalize_monitor(target, out, client=client)["runs_added"] == 10
        writes = [t for t in tasks.data if "write_read" in str(t["key"])]
        assert len(writes) == 3 and len({t["worker"] for t in writes}) == 2
        assert not [t for t in tasks.data if "read_batch" in str(t["key"])]     # no run came here
    assert files(out) == files(whole)
    record = store.load_verified(store.verified_path(out), target)
    assert record.matches(xr.open_zarr(out)) and (record.size[record.source != ""] > 0).all()
    assert record.run.tolist() == store.load_verified(store.verified_path(whole), CAMPAIGN).run.tolist()


def test_on_a_cluster_a_changed_stored_file_stops_the_append_before_any_write(tmp_path, monkeypatch):
    from distributed import Client, LocalCluster

    monkeypatch.setattr(regions, "UNIT_ROWS", 2)     # 4 units to read: sent before the check
    target = copy(tmp_path, rows=range(12))
    out = tmp_path / "m.zarr"
    store.normalize_monitor(target, out)
    before = files(out)
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")
    raw = target / "runs/2026-11-22/000001-lo-forward-udp.json"
    raw.write_text(raw.read_text().replace('"bytes":', '"bytes": ', 1))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=40) as cluster, Client(cluster) as client:
        with pytest.raises(store.StoreError, match="000001-lo-forward-udp.json: changed since it was stored"):
            store.normalize_monitor(target, out, client=client)
        assert files(out) == before
        # the batches sent ahead are let go of (the scheduler hears of it a moment later)
        deadline = time.monotonic() + 30
        while client.who_has() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not client.who_has()


def test_a_sweep_opens_the_same_from_netcdf_and_raw_lazily_too(tmp_path):
    mini = DATA / "campaigns" / "loopback-mini"
    nc = tmp_path / "loopback-mini.nc"
    assert main(["pipeline", "normalize", str(mini), str(nc)]) == 0
    built = thruput.open_campaign(mini)
    xr.testing.assert_identical(thruput.open_campaign(nc), built)
    lazy = thruput.open_campaign(nc, chunks={"window": 1})
    assert isinstance(lazy["throughput"].data, dask.array.Array)
    assert lazy["throughput"].data.chunks[0] == (1, 1)
    xr.testing.assert_identical(lazy.load(), built)
    chunked = thruput.open_campaign(mini, chunks={"window": 1})     # built from raw, then chunked
    assert isinstance(chunked["throughput"].data, dask.array.Array)


def test_on_a_cluster_a_bad_file_in_a_later_unit_stops_the_store_by_name(tmp_path, monkeypatch):
    """A unit's error reaches the caller as the reader raised it (file and runs.csv line);
    no store is left, the units still out are let go of."""
    from distributed import Client, LocalCluster

    monkeypatch.setattr(regions, "UNIT_ROWS", 4)     # 5 units: the bad file is in the last
    target = copy(tmp_path)
    raw = target / "runs/2026-11-22/000003-lo-forward-tcp-b1048576.json"
    raw.write_bytes(raw.read_bytes() + b"\n")
    out = tmp_path / "m.zarr"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=40) as cluster, Client(cluster) as client:
        with pytest.raises(ThruputError, match="000003-lo-forward-tcp-b1048576.json.*runs.csv line 20"):
            store.normalize_monitor(target, out, client=client)
        deadline = time.monotonic() + 30
        while client.who_has() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not client.who_has()
    assert not out.exists()


def test_a_unit_with_longer_ping_runs_than_the_first_has_the_store_written_again(full, tmp_path,
                                                                                monkeypatch):
    """The store is as wide as its first unit's longest ping run; a later, longer one
    makes every unit be read again into a store of the longest width (the first 4 runs
    here are iperf tests: width 0)."""
    monkeypatch.setattr(regions, "UNIT_ROWS", 4)
    calls = []
    write_unit = regions.write_unit
    monkeypatch.setattr(regions, "write_unit", lambda target, unit, first=None: calls.append(
        (unit.offset, max(target.width, first.width if first else 0)))
        or write_unit(target, unit, first))
    out = tmp_path / "m.zarr"
    store.normalize_monitor(CAMPAIGN, out)
    widest = store.open_store(full).sizes["probe"]
    assert calls[0] == (0, 0) and [w for _, w in calls[1:5]] == [0] * 4
    assert calls[5:] == [(k, widest) for k in range(0, 20, 4)]
    assert not out.with_name("m.zarr.part").exists()
    xr.testing.assert_identical(store.open_store(out), store.open_store(full))


def test_cli_workers_start_a_local_cluster(full, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(regions, "UNIT_ROWS", 4)     # 5 units: enough to start the cluster
    here = tmp_path / "here.zarr"
    store.normalize_monitor(CAMPAIGN, here)
    out = tmp_path / "w.zarr"
    assert main(["pipeline", "normalize", str(CAMPAIGN), str(out), "--workers", "2"]) == 0
    assert "wrote 20 runs; 20 runs, 19 files in the store" in capsys.readouterr().out
    assert files(out) == files(here)
    xr.testing.assert_identical(store.open_store(out), store.open_store(full))


def test_check_against_a_store_names_a_changed_file(full, tmp_path, capsys):
    target = copy(tmp_path)
    assert main(["campaign", "check", str(target), "--against", str(full)]) == 0
    raw = target / "runs/2026-11-22/000003-lo-forward-udp.json"
    raw.write_bytes(raw.read_bytes() + b"\n")
    assert main(["campaign", "check", str(target), "--against", str(full)]) == 1
    assert "000003-lo-forward-udp.json: error: changed since the campaign was normalized" in capsys.readouterr().out


def test_a_store_of_an_older_thruput_is_refused_by_name(tmp_path, capsys):
    """A store written before a variable was added (here ``tool_checks_failed``) is not
    appended to (its runs would lack it): the error names the variable and the way out."""
    import zarr

    target = copy(tmp_path, rows=range(12))
    out = tmp_path / "m.zarr"
    assert main(["pipeline", "normalize", str(target), str(out)]) == 0
    shutil.rmtree(out / "tool_checks_failed")
    zarr.consolidate_metadata(str(out))
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")
    capsys.readouterr()
    assert main(["pipeline", "normalize", str(target), str(out)]) == 1
    err = capsys.readouterr().err
    assert "has no tool_checks_failed" in err and "older thruput" in err and "normalize again" in err


def test_a_store_of_another_reader_version_is_rebuilt_whole(full, tmp_path, capsys):
    """A store written by another monitor reader version (a variable added, values read
    otherwise) is read anew from every row, not appended to nor left as it was, even when
    runs.csv has no new row: the result is the store a fresh normalize writes."""
    import zarr

    out = tmp_path / "m.zarr"
    shutil.copytree(full, out)
    group = zarr.open_group(str(out), mode="r+")
    group.attrs["monitor_version"] = 1
    del group["tool_checks_failed"]                   # (what version 1 did not have)
    zarr.consolidate_metadata(str(out))
    capsys.readouterr()
    assert main(["pipeline", "normalize", str(CAMPAIGN), str(out)]) == 0
    said = capsys.readouterr().out
    assert "rebuilt: the store was written by monitor reader version 1" in said and "wrote 20 runs" in said
    assert files(out) == files(full)
    assert main(["pipeline", "normalize", str(CAMPAIGN), str(out)]) == 0     # now current: a no-op
    assert "rebuilt" not in capsys.readouterr().out


def test_the_c_stat_of_stored_files_gives_the_python_numbers(tmp_path):
    """store._stat in C (where built) and in Python: the same size and modification time
    (ns) for files in the top folder, in folders met again later, through a symlink, a
    folder, a name that is not valid UTF-8, and -1 for an empty path, a missing file or
    folder and a NUL."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "c").mkdir()
    for i, rel in enumerate(["top.json", "a/one.txt", "a/b/two.txt", "c/three.txt", "c/é.txt"]):
        (tmp_path / rel).write_bytes(b"x" * (i * 7 + 1))
    os.utime(tmp_path / "a/one.txt", ns=(1, 1_234_567_891))
    (tmp_path / "c" / "link.txt").symlink_to(tmp_path / "a" / "one.txt")
    (tmp_path / os.fsdecode(b"c/bad\xff.txt")).write_bytes(b"yy")
    paths = ["top.json", "a/one.txt", "c/three.txt", "", "a/b/two.txt", "a/one.txt", "c/link.txt",
             "c/é.txt", "nowhere/x.txt", "a/missing.txt", "a/b", "a/n\0ul.txt", os.fsdecode(b"c/bad\xff.txt")]
    os.mkfifo(tmp_path / "c" / "fifo")     # (opened to be loaded, it must not wait for a writer)
    paths += ["c/fifo"]
    python = store._stat_python(tmp_path, paths)
    assert python[0].tolist() == [1, 8, 22, -1, 15, 8, 8, 29, -1, -1, python[0][10], -1, 2, 0]
    assert python[1][1] == python[1][5] == python[1][6] == 1_234_567_891 and python[1][3] == -1
    # loading each file into the page cache as it is stat-ed gives the same numbers
    assert [x.tolist() for x in store._stat_python(tmp_path, paths, load=True)] == [x.tolist() for x in python]
    if store._statmany is None:
        pytest.skip("the C extension is not built here")
    c = store._stat(tmp_path, paths)
    assert [x.tolist() for x in c] == [x.tolist() for x in python]
    assert [x.tolist() for x in store._stat(tmp_path, paths, load=True)] == [x.tolist() for x in python]
    assert [x.tolist() for x in store._stat(str(tmp_path) + "/", paths)] == [x.tolist() for x in python]
    assert [x.tolist() for x in store._stat(tmp_path / "nowhere", paths[:2])] == [[-1, -1], [-1, -1]]
    # the same of paths NUL-joined (a record's sources as its file holds them), in two parts
    plain = [p for p in paths if p.isascii() and "\0" not in p]
    joined = "\0".join(plain).encode()
    parts = [store._stat_joined(tmp_path, joined, a, b - a) for a, b in ((0, 4), (4, len(plain)))]
    assert [np.concatenate([p[k] for p in parts]).tolist() for k in (0, 1)] == \
        [x.tolist() for x in store._stat(tmp_path, plain)]
    for first, count in ((0, len(plain) + 1), (len(plain), 1), (-1, 1), (0, 2**62)):
        with pytest.raises(ValueError):
            store._stat_joined(tmp_path, joined, first, count)


@pytest.mark.parametrize("in_c", [True, False])
def test_new_run_ids_are_looked_up_among_the_stored_ones_as_the_record_holds_them(monkeypatch, in_c):
    """The C look-up and the split-and-set agree: a new id equal to a stored one (first,
    middle, last), or only a part of one, or none at all."""
    if in_c and store._statmany is None:
        pytest.skip("the C extension is not built here")
    if not in_c:
        monkeypatch.setattr(store, "_statmany", None)
    stored = [f"r{i:05d}".encode() for i in range(3000)] + ["é-ü".encode(), b"x"]
    joined = b"\0".join(stored)
    cases = {(b"r00000",): True, (b"s", b"r01500"): True, (b"x",): True, ("é-ü".encode(),): True,
             (b"r0000", b"00001", b"r000001", b"xx", b""): False, (): False}
    for new, found in cases.items():
        assert store._any_stored(joined, list(new)) is found, new
    assert store._any_stored(b"", [b"a"]) is False


def _resident_pages(path):
    """How many of the file's pages are in the page cache: ``mincore(2)`` of a mapping of
    it, which reads nothing (a read, even one with ``RWF_NOWAIT``, starts the kernel's
    read-ahead of the file)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = os.path.getsize(path)
    vec = ctypes.create_string_buffer(-(-size // mmap.PAGESIZE))
    fd = os.open(path, os.O_RDONLY)
    try:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        assert address not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
        try:
            assert libc.mincore(address, size, vec) == 0, ctypes.get_errno()
        finally:
            libc.munmap(address, size)
    finally:
        os.close(fd)
    return sum(b & 1 for b in vec.raw)


@pytest.mark.skipif(not (hasattr(os, "posix_fadvise") and sys.platform.startswith("linux")),
                    reason="no posix_fadvise or mincore here")
@pytest.mark.parametrize("c", [True, False], ids=["C", "Python"])
def test_stat_with_load_asks_the_kernel_to_load_the_files(tmp_path, monkeypatch, c):
    """store._stat(..., load=True), which read_unit runs in a thread while it parses a
    unit's files: each file dropped from the page cache (written back, then
    POSIX_FADV_DONTNEED) is in it again afterwards (mincore), and stat alone loads
    nothing."""
    if not c:
        monkeypatch.setattr(store, "_statmany", None)
    elif store._statmany is None:
        pytest.skip("the C extension is not built here")
    paths = [f"d/{i}.txt" for i in range(8)]
    (tmp_path / "d").mkdir()
    for p in paths:
        (tmp_path / p).write_bytes(os.urandom(64 * 1024))

    def dropped():
        for p in paths:
            fd = os.open(tmp_path / p, os.O_RDONLY)
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        return sum(_resident_pages(tmp_path / p) for p in paths) == 0

    if not dropped():
        pytest.skip("this file system keeps the files in memory (tmpfs?)")
    assert store._stat(tmp_path, paths)[0].tolist() == [64 * 1024] * 8
    assert sum(_resident_pages(tmp_path / p) for p in paths) == 0      # stat alone: nothing
    assert store._stat(tmp_path, paths, load=True)[0].tolist() == [64 * 1024] * 8
    pages = -(-64 * 1024 // mmap.PAGESIZE)
    deadline = time.monotonic() + 10
    while sum(_resident_pages(tmp_path / p) for p in paths) < 8 * pages and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [_resident_pages(tmp_path / p) for p in paths] == [pages] * 8


def test_write_region_opens_a_store_again_once_its_metadata_changed(full, tmp_path):
    """The arrays a write opened are used again by the next write into the same store
    only while their metadata files are the same bytes: a store written anew at the
    same path (here narrower: no probes) or lengthened is opened again."""
    out = tmp_path / "m.zarr"
    shutil.copytree(full, out)
    ds = store.open_store(full).isel(run=slice(0, 4))
    ds = mon.finish(ds, json.loads(ds.attrs["metadata"]), None, 0, "", fixed_width=False)
    store.write_region(ds, out, 0)
    opened = store._OPENED[str(out)][1]
    store.write_region(ds, out, 4)
    assert store._OPENED[str(out)][1] is opened                     # the same arrays
    store.grow_runs(out, 24)                                        # lengthened: opened again
    store.write_region(ds, out, 20)
    store.write_region(ds, out, 8)
    assert store._OPENED[str(out)][1] is not opened
    narrow = ds.isel(probe=slice(0, 0))
    store.write_store(narrow, out)                                  # anew, 0 probes wide
    store.write_region(narrow.isel(run=slice(0, 2)), out, 2)
    assert store.open_store(out).sizes["probe"] == 0
    assert store.open_store(out)["run"].values.tolist() == ds["run"].values[[0, 1, 0, 1]].tolist()


def test_grow_runs_writes_the_metadata_zarrs_resize_writes(full, tmp_path, monkeypatch):
    """The run arrays' ``.zarray`` rewritten here are zarr's bytes for the new shape (the
    other files untouched); a file zarr would not write so, or an array that would get
    shorter, is left to zarr."""
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    shutil.copytree(full, ours)
    shutil.copytree(full, theirs)
    n = xr.open_zarr(full).sizes["run"]
    assert store._grow_zarray(ours, n + 1000)
    monkeypatch.setattr(store, "_grow_zarray", lambda path, n_runs: False)
    store.grow_runs(theirs, n + 1000)
    assert files(ours) == files(theirs) != files(full)
    changed = {k for k, v in files(ours).items() if files(full)[k] != v}
    assert changed and all(k.endswith(".zarray") for k in changed)
    assert {k.split("/")[0] for k in changed} == {k for k, v in xr.open_zarr(full).variables.items()
                                                  if v.dims[:1] == ("run",)}
    monkeypatch.undo()
    before = files(ours)
    assert not store._grow_zarray(ours, n)                  # shorter: zarr's (it deletes chunks)
    zarray = ours / "time" / ".zarray"
    zarray.write_bytes(zarray.read_bytes().replace(b"\n  ", b"\n    "))       # not zarr's indent
    assert not store._grow_zarray(ours, n + 2000)
    assert files(ours) == {**before, "time/.zarray": zarray.read_bytes()}
    shutil.copy(theirs / "time" / ".zarray", zarray)
    (ours / "time" / ".zattrs").write_text("[]")                  # not what zarr writes either
    assert not store._grow_zarray(ours, n + 2000)


def test_an_appends_consolidated_metadata_is_zarrs(full, tmp_path, monkeypatch):
    """After an append's lengthening and attrs, ``.zmetadata`` is consolidated again from
    the one there with zarr's bytes; a store whose members or other metadata changed, or a
    ``.zmetadata`` zarr would not write so, is left to zarr."""
    import zarr

    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    attrs = {**xr.open_zarr(full).attrs, "manifest_rows": 10**6, "note": float("nan")}
    for path in (ours, theirs):
        shutil.copytree(full, path)
        store.grow_runs(path, 10**6)
    monkeypatch.setattr(store, "_consolidate_again", lambda path: False)
    store.put_attrs(theirs, attrs)
    monkeypatch.undo()
    calls = []
    real = zarr.consolidate_metadata
    monkeypatch.setattr(zarr, "consolidate_metadata", lambda *a, **k: calls.append(a) or real(*a, **k))
    store.put_attrs(ours, attrs)
    assert not calls and files(ours) == files(theirs) != files(full)
    assert xr.open_zarr(ours).sizes["run"] == 10**6
    meta = (ours / ".zmetadata").read_bytes()
    for change in ("member", "units", "indent"):
        shutil.copytree(theirs, tmp_path / change)
        if change == "member":          # (a folder zarr would list)
            shutil.copytree(tmp_path / change / "time", tmp_path / change / "time2")
        elif change == "units":
            zattrs = tmp_path / change / "time" / ".zattrs"
            zattrs.write_text(json.dumps({**json.loads(zattrs.read_text()), "units": "s"}))
        else:
            (tmp_path / change / ".zmetadata").write_bytes(json.dumps(json.loads(meta), indent=1).encode())
        assert not store._consolidate_again(tmp_path / change)
        assert (tmp_path / change / ".zmetadata").read_bytes() == (meta if change != "indent" else
                                                                   json.dumps(json.loads(meta), indent=1).encode())


@pytest.mark.parametrize("variant", ["plain", "non-ASCII stored row", "quoted stored cell", "CRLF",
                                     "stored cell over two lines", "older store"])
def test_an_append_finds_the_new_rows_by_the_stored_bytes(tmp_path, monkeypatch, variant):
    """An append reads runs.csv's new rows from where the stored ones end
    (``manifest_bytes``), and checks and hashes the bytes before them meanwhile; runs.csv
    with a carriage return, a stored row over two lines (found only once the new rows are
    parsed: nothing is written, and all is done again), or a store written before
    ``manifest_bytes``, are read whole as before (the older store gets it). Either way the
    store is the one written whole."""
    import zarr

    quoted = {"non-ASCII stored row": (6, "lö"), "quoted stored cell": (14, '"x, y"'),
              "stored cell over two lines": (14, '"x,\ny"')}

    def edit(target):
        text = (target / "runs.csv").read_text()
        if variant in quoted:
            lines = text.split("\n")
            cells = lines[2].split(",")
            column, cell = quoted[variant]
            cells[column] = cell
            lines[2] = ",".join(cells)
            text = "\n".join(lines)
        newline = "\r\n" if variant == "CRLF" else "\n"
        (target / "runs.csv").write_bytes(text.replace("\n", newline).encode())

    whole_dir = copy(tmp_path, name="whole")
    edit(whole_dir)
    whole = tmp_path / "whole.zarr"
    store.normalize_monitor(whole_dir, whole)
    assert store.open_store(whole).attrs["manifest_bytes"] > 0
    target = copy(tmp_path, rows=range(12))
    edit(target)
    out = tmp_path / "m.zarr"
    store.normalize_monitor(target, out)
    if variant == "older store":
        group = zarr.open_group(str(out), mode="r+", use_consolidated=False)
        group.attrs.put({k: v for k, v in group.attrs.asdict().items() if k != "manifest_bytes"})
        zarr.consolidate_metadata(str(out))
        assert store.normalize_monitor(target, out)["runs_added"] == 0     # given it, no more
        assert store.open_store(out).attrs["manifest_bytes"] > 0
        group.attrs.put({k: v for k, v in group.attrs.asdict().items() if k != "manifest_bytes"})
        zarr.consolidate_metadata(str(out))
    (target / "runs.csv").write_bytes((whole_dir / "runs.csv").read_bytes())
    whole_text, by_bytes = [], []
    real, real_after = mon.read_manifest_text, mon.read_manifest_after
    monkeypatch.setattr(mon, "read_manifest_text", lambda d: whole_text.append(d) or real(d))
    monkeypatch.setattr(mon, "read_manifest_after", lambda *a: by_bytes.append(real_after(*a)) or by_bytes[-1])
    assert store.normalize_monitor(target, out)["runs_added"] == 8
    assert bool(whole_text) == (variant in ("CRLF", "stored cell over two lines", "older store"))
    if variant == "stored cell over two lines":     # (the new rows were parsed, then all again)
        assert len(by_bytes) == 1 and by_bytes[0].prefix.result() is None
    assert files(out) == files(whole)


def test_a_changed_stored_row_is_found_by_the_stored_bytes_too(full, tmp_path):
    """The hash of the bytes before the new rows is the check: a stored row changed in
    place, even to the same length, is refused before anything is written, naming it."""
    target = copy(tmp_path, rows=range(12))
    out = tmp_path / "m.zarr"
    store.normalize_monitor(target, out)
    before = files(out)
    text = (CAMPAIGN / "runs.csv").read_text()
    row = mon.read_monitor_manifest(target)[0][5]
    (target / "runs.csv").write_text(text.replace(row.sha256, "f" * 64))
    with pytest.raises(store.StoreError, match=rf"runs.csv line 7: {row.run}: sha256 ffffffffffff..."):
        store.normalize_monitor(target, out)
    assert files(out) == before


def test_the_data_package_gives_a_monitor_campaigns_runs_as_csv(full, tmp_path):
    import hashlib

    import pandas as pd

    from thruput.site import datapackage

    processed = tmp_path / "processed"
    processed.mkdir()
    shutil.copytree(full, processed / "m.zarr")
    package = datapackage.export(processed, tmp_path / "site-data")
    (resource,) = [r for r in package["resources"] if r["name"] == "m-runs-csv"]
    path = tmp_path / "site-data" / resource["path"]
    assert resource["hash"] == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    assert "data/processed/m.zarr" in resource["description"]
    table = pd.read_csv(path)
    ds = thruput.open_campaign(full)
    assert table["run"].tolist() == ds["run"].values.tolist()
    np.testing.assert_allclose(table["throughput"], ds["throughput"].values, rtol=1e-15)
    assert table["outcome"].fillna("").tolist() == ds["outcome"].values.tolist()
    assert table["source_sha256"].tolist() == ds["source_sha256"].values.tolist()
    assert {f["name"] for f in resource["schema"]["fields"]} >= {"time", "path", "direction", "rtt_median"}


def test_a_small_append_is_cut_so_that_every_worker_reads_a_share():
    """Units of an append are chunk multiples: :data:`~regions.UNIT_ROWS` where there are
    rows enough for two units a worker, else single chunks (a 1 % append of 2000 rows to a
    store of 1024-run chunks is read as 656 + 1024 + 320, not 656 + 1344)."""
    assert regions.append_unit_rows(2000, 1024, 2) == 1024
    assert regions.append_unit_rows(20000, 1024, 2) == regions.UNIT_ROWS
    assert regions.append_unit_rows(5000, 256, 2) == 1024       # 5000 // (4 x 256) chunks
    for rows in (1, 100, 5000, 10**6):
        for chunk in (64, 256, 1024):
            for workers in (1, 2, 64):
                size = regions.append_unit_rows(rows, chunk, workers)
                assert size % chunk == 0 and chunk <= size <= max(chunk, regions.UNIT_ROWS)
