"""The record of a store's checked raw files (thruput.campaign.verified): written whole,
added to block by block, and read back the same; anything cut short or foreign is not used."""

from __future__ import annotations

import shutil
import struct

import numpy as np
import pytest
import xarray as xr

from thruput.campaign import store, verified
from thruput.campaign.verified import Verified

from .test_campaign_store import CAMPAIGN, copy


def record(runs, sources, start=0, sha="a" * 64):
    n = len(runs)
    return Verified(sha, np.array(runs, dtype=object), np.array(sources, dtype=object),
                    np.arange(start, start + n, dtype=np.int64) * 10**9,
                    np.arange(n, dtype=np.int64) + 100, np.full(n, -1, dtype=np.int64))


def same(a, b):
    assert a.manifest_sha256 == b.manifest_sha256
    for k in ("run", "source", "time", "size", "mtime"):
        assert getattr(a, k).tolist() == getattr(b, k).tolist(), k
        assert getattr(a, k).dtype == getattr(b, k).dtype, k


@pytest.mark.parametrize("strings", [[], [""], ["a", "", "runs/é/x.txt"], ["a\0b", "c"], ["\udcff", "x"]])
def test_a_record_is_read_back_as_written(tmp_path, strings):
    path = tmp_path / "s.zarr.verified"
    written = record(strings, list(reversed(strings)))
    verified.save_verified(path, tmp_path, written)
    back = verified.load_verified(path, tmp_path)
    same(back, written)
    assert back.on_disk == (path.stat().st_size, 1)


def test_a_records_sources_are_given_joined_as_its_file_holds_them(tmp_path):
    """A record as loaded gives its sources NUL-joined as the file holds them (for the
    stat that begins before any string is made), over every block, and makes its strings
    only when they are asked for; a block of non-ASCII or JSON-listed strings gives None."""
    path = tmp_path / "s.zarr.verified"
    verified.save_verified(path, tmp_path, record(["r0", "r1"], ["a/0", ""]))
    assert verified.append_verified(path, verified.load_verified(path, tmp_path),
                                    record([], []), "a" * 64)          # (a block of no run)
    before = verified.load_verified(path, tmp_path)
    assert verified.append_verified(path, before, record(["r2"], ["a/2"], start=2), "b" * 64)
    back = verified.load_verified(path, tmp_path)
    assert "run" not in vars(back) and "source" not in vars(back)      # (not made yet)
    assert back.joined_sources() == b"a/0\0\0a/2"
    assert back.source.tolist() == ["a/0", "", "a/2"] and back.run.tolist() == ["r0", "r1", "r2"]
    assert back.verified().run is back.run and back._replace(size=back.size).source is back.source
    for strange in (["a/é"], ["a\0b"]):
        verified.save_verified(path, tmp_path, back.verified())
        assert verified.load_verified(path, tmp_path).joined_sources() == b"a/0\0\0a/2"
        assert verified.append_verified(path, verified.load_verified(path, tmp_path),
                                        record(["r3"], strange, start=3), "c" * 64)
        assert verified.load_verified(path, tmp_path).joined_sources() is None


def test_a_loaded_records_runs_and_named_files_are_told_from_its_bytes(tmp_path):
    """Run ids joined, whether every run has a file, and a copy with new numbers (sharing
    the strings made, and the bytes of those not) need no string; a record with a run without a file says
    which."""
    path = tmp_path / "s.zarr.verified"
    verified.save_verified(path, tmp_path, record(["r0", "r1"], ["a/0", "a/1"]))
    assert verified.append_verified(path, verified.load_verified(path, tmp_path),
                                    record(["r2"], ["a/2"], start=2), "b" * 64)
    back = verified.load_verified(path, tmp_path)
    checked = back._replace(size=back.size + 1, mtime=back.mtime)
    assert back.joined_runs() == b"r0\0r1\0r2" and back.named() is True
    assert isinstance(checked, verified.Loaded) and checked.same_runs(back) and back.same_runs(checked)
    assert checked.size.tolist() == (back.size + 1).tolist() and checked.on_disk == back.on_disk
    assert "run" not in vars(back) and "source" not in vars(back) and "run" not in vars(checked)
    assert not back.same_runs(verified.load_verified(path, tmp_path))   # (read again: other strings)
    made = back.source
    assert back._replace(size=back.size).source is made and back._replace(run=back.run).run is back.run
    for sources, named in ((["", "a/1"], [False, True]), (["a/0", ""], [True, False])):
        verified.save_verified(path, tmp_path, record(["r0", "r1"], sources))
        assert verified.load_verified(path, tmp_path).named().tolist() == named


def test_an_append_makes_none_of_its_records_strings(tmp_path, monkeypatch):
    """The stored runs' ids and files are checked from the record's bytes, and the new
    runs added as a block, without a string made of the stored ones."""
    target = copy(tmp_path, rows=range(8))
    out = tmp_path / "m.zarr"
    store.normalize_monitor(target, out)
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")
    made = []
    strings_now = verified._strings_now
    monkeypatch.setattr(verified, "_strings_now", lambda *a: made.append(a) or strings_now(*a))
    assert store.normalize_monitor(target, out)["runs_added"] == 12
    assert made == []
    assert store.load_verified(store.verified_path(out), target).on_disk[1] == 2


def test_writing_a_record_removes_one_of_its_older_name(tmp_path):
    path = tmp_path / "s.zarr.verified"
    old = tmp_path / "s.zarr.verified.npz"
    old.write_bytes(b"PK")
    verified.save_verified(path, tmp_path, record(["r0"], ["a"]))
    assert not old.exists() and verified.load_verified(path, tmp_path).run.tolist() == ["r0"]


def test_an_append_adds_a_block_and_reads_as_one_record(tmp_path):
    path = tmp_path / "s.zarr.verified"
    first, second = record(["r0", "r1"], ["a/0", "a/1"]), record(["r2"], ["a/é"], start=2, sha="b" * 64)
    verified.save_verified(path, tmp_path, first)
    before = verified.load_verified(path, tmp_path)
    data = path.read_bytes()
    assert verified.append_verified(path, before, second, "b" * 64)
    assert path.read_bytes()[:len(data)] == data            # only added to
    back = verified.load_verified(path, tmp_path)
    whole = tmp_path / "whole.verified"
    joined = Verified("b" * 64, *(np.concatenate([getattr(first, k), getattr(second, k)])
                                  for k in ("run", "source", "time", "size", "mtime")))
    verified.save_verified(whole, tmp_path, joined)
    same(back, verified.load_verified(whole, tmp_path))
    assert back.on_disk == (path.stat().st_size, 2)
    # strings with a NUL in a later block (JSON), after NUL-joined ones
    assert verified.append_verified(path, back, record(["x\0y"], ["z"], start=3), "c" * 64)
    assert verified.load_verified(path, tmp_path).run.tolist() == ["r0", "r1", "r2", "x\0y"]


def test_an_append_to_a_file_that_changed_writes_nothing(tmp_path):
    path = tmp_path / "s.zarr.verified"
    verified.save_verified(path, tmp_path, record(["r0"], ["a"]))
    before = verified.load_verified(path, tmp_path)
    verified.save_verified(path, tmp_path, record(["r0", "r1"], ["a", "b"]))      # rewritten since
    data = path.read_bytes()
    assert not verified.append_verified(path, before, record(["r2"], ["c"]), "b" * 64)
    assert path.read_bytes() == data
    assert not verified.append_verified(path, None, record(["r2"], ["c"]), "b" * 64)
    assert not verified.append_verified(path, record(["r0"], ["a"]), record(["r2"], ["c"]), "b" * 64)
    # a record holding MAX_BLOCKS blocks is written whole by the caller
    assert not verified.append_verified(path, before._replace(on_disk=(len(data), verified.MAX_BLOCKS)),
                                        record(["r2"], ["c"]), "b" * 64)


def test_a_block_cut_short_ends_the_record_and_the_next_append_rewrites_it(tmp_path):
    path = tmp_path / "s.zarr.verified"
    verified.save_verified(path, tmp_path, record(["r0", "r1"], ["a", "b"]))
    before = verified.load_verified(path, tmp_path)
    assert verified.append_verified(path, before, record(["r2"], ["c"], start=2), "b" * 64)
    whole = path.read_bytes()
    for cut in range(before.on_disk[0] + 1, len(whole)):
        path.write_bytes(whole[:cut])
        back = verified.load_verified(path, tmp_path)
        assert back.manifest_sha256 == "a" * 64 and back.run.tolist() == ["r0", "r1"]
        assert back.on_disk == (before.on_disk[0], 1)
        assert not verified.append_verified(path, back, record(["r2"], ["c"]), "b" * 64)


def test_a_foreign_damaged_or_lying_file_is_no_record(tmp_path):
    path = tmp_path / "s.zarr.verified"
    assert verified.load_verified(path, tmp_path) is None                 # none
    verified.save_verified(path, tmp_path, record(["r0"], ["a"]))
    assert verified.load_verified(path, tmp_path / "other") is None       # another raw directory
    data = path.read_bytes()
    for bad in (b"", data[:10], b"PK\x03\x04" + data[4:], data[:len(verified.MAGIC) + 2]):
        path.write_bytes(bad)
        assert verified.load_verified(path, tmp_path) is None
    # lengths no file could hold: read as a block cut short, nothing allocated for them
    head = len(verified.MAGIC) + 4 + len(str(tmp_path.resolve()).encode())
    for fields in ((b"B", 2**62, 0, 0, 0, 64), (b"B", 1, 2**63, 0, 0, 64), (b"B", 1, 1, 1, 0, 2**31),
                   (b"B", 1, 1, 1, 7, 64), (b"X", 1, 1, 1, 0, 64)):
        path.write_bytes(data[:head] + struct.pack("<cQQQBI", *fields) + data[head + verified._BLOCK.size:])
        assert verified.load_verified(path, tmp_path) is None
    # a string count that does not match the runs
    path.write_bytes(data.replace(b"r0", b"r\0"))
    assert verified.load_verified(path, tmp_path) is None


def test_appends_to_a_store_add_blocks_to_its_record(tmp_path):
    """Three appends: the record gains a block each and reads as the record of the store
    written at once; a stored file touched (size kept) makes it be written whole again."""
    target = copy(tmp_path, rows=range(8))
    out = tmp_path / "m.zarr"
    store.normalize_monitor(target, out)
    lines = (CAMPAIGN / "runs.csv").read_text().splitlines(keepends=True)
    for rows, blocks in ((12, 2), (16, 3)):
        (target / "runs.csv").write_text("".join(lines[:1 + rows]))
        store.normalize_monitor(target, out)
        back = store.load_verified(store.verified_path(out), target)
        assert back.on_disk[1] == blocks and back.matches(xr.open_zarr(out))
    again = store._index_of(xr.open_zarr(out, create_default_indexes=False))
    for name in ("run", "source", "time"):
        assert getattr(back, name).tolist() == getattr(again, name).tolist()
    assert (back.size[back.source != ""] > 0).all()
    raw = target / back.source[0]
    raw.write_bytes(raw.read_bytes())          # same bytes, a new modification time
    shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")
    store.normalize_monitor(target, out)
    rewritten = store.load_verified(store.verified_path(out), target)
    assert rewritten.on_disk[1] == 1 and rewritten.mtime[0] == raw.stat().st_mtime_ns
    assert rewritten.run.tolist() == store._index_of(xr.open_zarr(out, create_default_indexes=False)).run.tolist()
    # a normalize that changes nothing leaves the record as it is, and drops its older name
    older = store.verified_path(out).with_name(store.verified_path(out).name + ".npz")
    older.write_bytes(b"PK")
    data = store.verified_path(out).read_bytes()
    store.normalize_monitor(target, out)
    assert store.verified_path(out).read_bytes() == data and not older.exists()
