"""Monitor campaigns in Zarr: full normalize, appends, changed inputs, lazy opening, and
the same store from a 2-worker dask LocalCluster as from this process."""

from __future__ import annotations

import hashlib
import json
import os
import mmap
import re
import shutil
import sys
import time
from pathlib import Path

import dask.array
import numpy as np
import pytest
import xarray as xr

import thruput
from thruput.monitor import reader as mon
from thruput.campaign import store
from thruput.monitor import normalize
from thruput.monitor.normalize import normalize_monitor
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
    assert "campaign.yaml changed since the store was written (title)" in said and "appended 0 runs" in said
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
    normalize_monitor(target, out)
    before = store.open_store(out)
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        if step == "attrs":
            m.setattr(Attributes, "put", killed)
        m.setattr(zarr, "consolidate_metadata", killed)
        with pytest.raises(KeyboardInterrupt):
            normalize_monitor(target, out)
    assert zarr.open_group(str(out), mode="r", use_consolidated=False)["rtt"].shape[0] == 20
    if step == "consolidation":
        with pytest.raises(store.StoreError, match="holds 12 runs but records 20 rows of runs.csv: "
                                                   "an append was cut short"):
            normalize_monitor(target, out)
        return
    xr.testing.assert_identical(store.open_store(out), before)
    assert normalize_monitor(target, out)["runs_added"] == 8
    assert files(out) == files(full)


def test_append_with_more_probes_or_earlier_runs_rewrites_the_store(full, tmp_path):
    # rows 0-3 are TCP/UDP only (no probes): the ping rows that follow widen `probe`
    target = copy(tmp_path, rows=range(4))
    out = tmp_path / "m.zarr"
    normalize_monitor(target, out)
    assert xr.open_zarr(out).sizes["probe"] == 0
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")
    assert normalize_monitor(target, out)["runs_added"] == 16
    xr.testing.assert_identical(store.open_store(out), store.open_store(full))
    # slot 3 listed first (as an import of an archive may do): slots 0-1 come later but ran earlier
    order = list(range(12, 20)) + list(range(12))
    target = copy(tmp_path, rows=order[:8], name="late")
    out = tmp_path / "late.zarr"
    normalize_monitor(target, out)
    lines = (CAMPAIGN / "runs.csv").read_text().splitlines(keepends=True)
    (target / "runs.csv").write_text("".join([lines[0]] + [lines[1 + i] for i in order]))
    normalize_monitor(target, out)
    late = store.open_store(out)
    assert (np.diff(late["time"].values.astype(np.int64)) >= 0).all()
    xr.testing.assert_identical(late.drop_attrs(), store.open_store(full).drop_attrs())
    # the record of checked files holds every stored file, with the store's sha256
    assert_record_is_the_stores(out, target)


def assert_record_is_the_stores(out, directory):
    """The record beside the store ``out`` names every stored raw file with its sha256,
    and the size and modification time it has now."""
    record = store.load_record(out)
    stored = xr.open_zarr(out, create_default_indexes=False)
    sources = stored["source"].values.astype(object).astype(str)
    shas = dict(zip(sources, stored["source_sha256"].values.astype(object).astype(str)))
    assert sorted(record.index) == sorted(s for s in sources if s)
    for path, row in record.iterrows():
        st = (Path(directory) / path).stat()
        assert (row["size"], row["mtime_ns"], row["sha256"]) == (st.st_size, st.st_mtime_ns, shas[path])
    text = store.record_path(out).read_text()
    assert text.splitlines()[0] == "path,size,mtime_ns,sha256"


def test_unverified_out_of_order_append_without_a_record_records_the_files_read(full, tmp_path):
    order = list(range(12, 20)) + list(range(12))        # slots 0-1 listed after slot 3
    target = copy(tmp_path, rows=order[:8])
    out = tmp_path / "m.zarr"
    normalize_monitor(target, out)
    assert_record_is_the_stores(out, target)
    store.record_path(out).unlink()                      # no record: the files read now only
    lines = (CAMPAIGN / "runs.csv").read_text().splitlines(keepends=True)
    (target / "runs.csv").write_text("".join([lines[0]] + [lines[1 + i] for i in order]))
    normalize_monitor(target, out, verify=False)    # rewrites the store in time order
    record = store.load_record(out)
    new = [r.path for r in mon.read_monitor_manifest(target, 8)[0] if r.path]
    assert sorted(record.index) == sorted(new)
    normalize_monitor(target, out)                  # checked: every file recorded
    assert_record_is_the_stores(out, target)


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
    normalize_monitor(target, out)
    assert store.record_path(out).is_file() and not (out / store.record_path(out).name).exists()
    hashed = []
    real = store._hash_batch
    monkeypatch.setattr(store, "_hash_batch", lambda d, paths: hashed.extend(paths) or real(d, paths))
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")
    assert normalize_monitor(target, out)["runs_added"] == 8
    assert hashed == []                         # nothing stored changed: stat only
    assert_record_is_the_stores(out, target)
    # the stat in threads gives what os.stat gives, -1 for a missing file or none
    record = store.load_record(out)
    names = list(record.index) + ["", "runs/none.json"]
    wanted = [(os.stat(target / n).st_size, os.stat(target / n).st_mtime_ns) for n in record.index]
    for threads in (None, 1, 3, 40):
        size, mtime = store.stat_files(target, names, threads=threads)
        assert list(zip(size.tolist(), mtime.tolist())) == wanted + [(-1, -1)] * 2
    with monkeypatch.context() as m:            # (stat timed as slow: the rest in threads)
        m.setattr(store, "STAT_PROBE", 1)
        m.setattr(store, "SLOW_STAT", -1.0)
        size, mtime = store.stat_files(target, names)
        assert list(zip(size.tolist(), mtime.tolist())) == wanted + [(-1, -1)] * 2
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
        normalize_monitor(target, out)


def test_a_new_row_with_a_stored_run_id_is_refused(tmp_path):
    target = copy(tmp_path, rows=range(12))
    out = tmp_path / "m.zarr"
    normalize_monitor(target, out)
    before = files(out)
    lines = (CAMPAIGN / "runs.csv").read_text().splitlines(keepends=True)
    stored, new = lines[1].split(",", 1)[0], lines[13].split(",", 1)[0]
    (target / "runs.csv").write_text("".join(lines[:13]) + lines[13].replace(new, stored, 1))
    with pytest.raises(store.StoreError, match=f"runs already stored: {stored}$"):
        normalize_monitor(target, out)
    assert files(out) == before


def test_a_monitor_campaign_needs_a_zarr_output(tmp_path, capsys):
    assert main(["pipeline", "normalize", str(CAMPAIGN), str(tmp_path / "m.nc")]) == 2
    assert "a monitor campaign is stored as Zarr" in capsys.readouterr().err


def normalize_on_two_workers(campaign, out):
    """:func:`normalize_monitor` of ``campaign`` into ``out`` on a 2-worker
    LocalCluster; the tasks it ran (dask's task stream)."""
    from distributed import Client, LocalCluster, get_task_stream

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=40) as cluster, Client(cluster) as client:
        with get_task_stream(client) as tasks:
            normalize_monitor(campaign, out, client=client)
    return tasks.data


@pytest.mark.parametrize("chunk", [8192, 8])
def test_two_local_workers_write_the_same_store(full, tmp_path, monkeypatch, chunk):
    """The workers read the batches; where units of waves fill whole chunks (8-run
    chunks) they write them too, each its own region, else this process writes them wave
    by wave; the store is the one this process writes alone, file for file."""
    monkeypatch.setattr(mon, "BATCH_ROWS", 4)       # 5 batches of the 20 rows
    monkeypatch.setattr(normalize, "WAVE_BATCHES", 2)   # waves of 8 runs: two appends, or 3 units
    monkeypatch.setattr(store, "MAX_RUN_CHUNK", chunk)
    here = tmp_path / "here.zarr"
    normalize_monitor(CAMPAIGN, here)
    there = tmp_path / "there.zarr"
    tasks = normalize_on_two_workers(CAMPAIGN, there)
    reads = [t for t in tasks if "read_stat_batch" in str(t["key"])]
    units = [t for t in tasks if "write_unit" in str(t["key"])]
    assert len(reads) == 5 and len({t["worker"] for t in reads}) == 2
    assert len(units) == (3 if chunk == 8 else 0)
    assert not list(tmp_path.glob("*.part"))
    assert files(there) == files(here)
    # (every file's size and time as the worker that read it found them)
    assert store.record_path(there).read_bytes() == store.record_path(here).read_bytes()
    xr.testing.assert_identical(store.open_store(there), store.open_store(full))
    xr.testing.assert_identical(store.open_store(there), thruput.open_campaign(CAMPAIGN))


def test_a_unit_with_a_longer_ping_run_than_the_first_gives_the_same_store(full, tmp_path, monkeypatch):
    """The store's probe dimension is the first batch's longest ping run: a later, longer
    one makes this process write the store itself, the same as ever."""
    target = copy(tmp_path)
    text = (target / "runs.csv").read_text().splitlines(keepends=True)
    last = max(i for i, line in enumerate(text) if ",ping," in line and ",ok," in line)
    cells = text[last].split(",")
    raw = target / cells[2]
    log = raw.read_text().splitlines(keepends=True)
    replies = [line for line in log if " bytes from " in line]
    # (the recorded log, its replies printed twice over: ping -c 10 instead of 5)
    again = [re.sub(r"icmp_seq=(\d+)", lambda m: f"icmp_seq={int(m.group(1)) + len(replies)}", r)
             for r in replies]
    summary = [line.replace(f"{len(replies)} packets transmitted, {len(replies)} received",
                            f"{2 * len(replies)} packets transmitted, {2 * len(replies)} received")
               for line in log[1 + len(replies):]]
    longer = "".join(log[:1] + replies + again + summary)
    raw.write_text(longer)
    cells[3] = hashlib.sha256(longer.encode()).hexdigest()
    text[last] = ",".join(cells)
    (target / "runs.csv").write_text("".join(text))
    monkeypatch.setattr(mon, "BATCH_ROWS", 4)
    monkeypatch.setattr(normalize, "WAVE_BATCHES", 2)
    monkeypatch.setattr(store, "MAX_RUN_CHUNK", 8)
    here = tmp_path / "here.zarr"
    normalize_monitor(target, here)
    there = tmp_path / "there.zarr"
    tasks = normalize_on_two_workers(target, there)
    assert any("write_unit" in str(t["key"]) for t in tasks)
    assert store.open_store(there).sizes["probe"] > store.open_store(full).sizes["probe"]
    assert files(there) == files(here)
    assert not list(tmp_path.glob("*.part"))


def test_a_bad_row_on_a_cluster_is_an_error_by_its_line_that_leaves_no_store(tmp_path):
    from distributed import Client, LocalCluster

    lines = (CAMPAIGN / "runs.csv").read_text().splitlines(keepends=True)
    bad = copy(tmp_path, name="bad")
    (bad / "runs.csv").write_text("".join(lines[:19] + [lines[19].replace(",refused,", ",refuted,")]))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=40) as cluster, Client(cluster) as client:
        with pytest.raises(ThruputError, match="runs.csv:20: outcome .refuted."):
            normalize_monitor(bad, tmp_path / "bad.zarr", client=client)
    assert not list(tmp_path.glob("bad.zarr*"))


@pytest.mark.parametrize("on_cluster", [False, True])
def test_an_append_gives_the_store_written_whole(tmp_path, monkeypatch, on_cluster):
    """New rows after the store's last run are read (on the workers, if any) and written
    into the rows they add, the store's last, partly written chunk filled; the store is
    the one written whole, file for file, and the record names every stored file."""
    from distributed import Client, LocalCluster, get_task_stream

    monkeypatch.setattr(mon, "BATCH_ROWS", 2)       # 5 batches of the 10 new rows
    monkeypatch.setattr(store, "MAX_RUN_CHUNK", 4)  # 4-run chunks: 10 rows end mid-chunk
    whole = tmp_path / "whole.zarr"
    normalize_monitor(CAMPAIGN, whole)
    target = copy(tmp_path, rows=range(10))
    out = tmp_path / "m.zarr"
    normalize_monitor(target, out)
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")     # 10 more: units of 2, 4 and 4
    if not on_cluster:
        assert normalize_monitor(target, out)["runs_added"] == 10
    else:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                          silence_logs=40) as cluster, Client(cluster) as client:
            with get_task_stream(client) as tasks:
                assert normalize_monitor(target, out, client=client)["runs_added"] == 10
        reads = [t for t in tasks.data if "read_stat_batch" in str(t["key"])]
        assert len(reads) == 5 and len({t["worker"] for t in reads}) == 2
    assert files(out) == files(whole)
    assert store.open_store(out)["rtt"].encoding["chunks"][0] == 4
    assert_record_is_the_stores(out, target)


def test_on_a_cluster_a_changed_stored_file_stops_the_append_before_any_write(tmp_path, monkeypatch):
    from distributed import Client, LocalCluster

    monkeypatch.setattr(mon, "BATCH_ROWS", 2)       # 4 batches to read: sent before the check
    target = copy(tmp_path, rows=range(12))
    out = tmp_path / "m.zarr"
    normalize_monitor(target, out)
    before = files(out)
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")
    raw = target / "runs/2026-11-22/000001-lo-forward-udp.json"
    raw.write_text(raw.read_text().replace('"bytes":', '"bytes": ', 1))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=40) as cluster, Client(cluster) as client:
        with pytest.raises(store.StoreError, match="000001-lo-forward-udp.json: changed since it was stored"):
            normalize_monitor(target, out, client=client)
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


@pytest.mark.parametrize("chunk", [8192, 8])
def test_on_a_cluster_a_bad_file_in_a_later_unit_stops_the_store_by_name(tmp_path, monkeypatch, chunk):
    """A unit's error reaches the caller as the reader raised it (file and runs.csv line);
    no store is left, the units still out are let go of (read by the workers and written
    here, or written by the workers: units of 8 runs in 8-run chunks)."""
    from distributed import Client, LocalCluster

    monkeypatch.setattr(mon, "BATCH_ROWS", 4)       # 5 batches: the bad file is in the last
    # (units of 8 runs written by the workers; else one wave of them all, written here)
    monkeypatch.setattr(normalize, "WAVE_BATCHES", 2 if chunk == 8 else 8)
    monkeypatch.setattr(store, "MAX_RUN_CHUNK", chunk)
    target = copy(tmp_path)
    raw = target / "runs/2026-11-22/000003-lo-forward-tcp-b1048576.json"
    raw.write_bytes(raw.read_bytes() + b"\n")
    out = tmp_path / "m.zarr"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=40) as cluster, Client(cluster) as client:
        with pytest.raises(ThruputError, match="000003-lo-forward-tcp-b1048576.json.*runs.csv line 20"):
            normalize_monitor(target, out, client=client)
        deadline = time.monotonic() + 30
        while client.who_has() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not client.who_has()
    assert not out.exists() and not list(tmp_path.glob("*.part"))


def test_cli_workers_start_a_local_cluster(full, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(mon, "BATCH_ROWS", 4)       # 5 batches: enough to start the cluster
    here = tmp_path / "here.zarr"
    normalize_monitor(CAMPAIGN, here)
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


def test_a_changed_stored_row_is_found_by_the_stored_bytes_too(full, tmp_path):
    """The hash of the bytes before the new rows is the check: a stored row changed in
    place, even to the same length, is refused before anything is written, naming it."""
    target = copy(tmp_path, rows=range(12))
    out = tmp_path / "m.zarr"
    normalize_monitor(target, out)
    before = files(out)
    text = (CAMPAIGN / "runs.csv").read_text()
    row = mon.read_monitor_manifest(target)[0][5]
    (target / "runs.csv").write_text(text.replace(row.sha256, "f" * 64))
    with pytest.raises(store.StoreError, match=rf"runs.csv line 7: {row.run}: sha256 ffffffffffff..."):
        normalize_monitor(target, out)
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


