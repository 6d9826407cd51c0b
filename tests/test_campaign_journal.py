"""The change journal of a raw directory (inotify, ``thruput monitor watch``): what it
names, and an append that stats and hashes only those files, falling back to every file
whenever the journal cannot vouch for what happened."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from thruput.campaign import journal, store
from thruput.campaign.watcher import Watcher, WatchError
from thruput.cli import main

from .conftest import DATA, copy_campaign

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

CAMPAIGN = DATA / "campaigns" / "monitor-loopback"
UDP = "runs/2026-11-22/000001-lo-forward-udp.json"
TCP = "runs/2026-11-22/000000-lo-forward-tcp-b65536.json"


@contextlib.contextmanager
def watching(directory):
    """A watcher of ``directory`` in a thread of this process while the block runs."""
    w = Watcher(directory)
    done = threading.Event()
    thread = threading.Thread(target=w.run, args=(done.is_set,), daemon=True)
    thread.start()
    try:
        yield w
    finally:
        done.set()
        thread.join(5)
        w.close()


def lines(directory):
    return (directory / journal.JOURNAL).read_text().splitlines()


def test_the_journal_names_every_change_before_a_readers_cookie(tmp_path):
    (tmp_path / "runs/d1").mkdir(parents=True)
    (tmp_path / "runs/d1/a").write_text("a")
    (tmp_path / "runs/d1/b").write_text("b")
    record = tmp_path / "m.zarr.verified"
    record.write_bytes(b"record")
    with watching(tmp_path) as w:
        changes, now = journal.changes_since(tmp_path, record)
        assert changes is None and now.token == w.token        # no point saved yet
        journal.save_since(record, now)
        with open(tmp_path / "runs/d1/a", "a") as f:           # written in place
            f.write("more")
        st = (tmp_path / "runs/d1/b").stat()
        os.utime(tmp_path / "runs/d1/b", ns=(st.st_atime_ns, st.st_mtime_ns))   # touch -r
        (tmp_path / "runs/d1/odd\nname").write_text("x")
        os.rename(tmp_path / "runs/d1/odd\nname", tmp_path / "runs/d1/c")     # renamed over
        (tmp_path / "runs/d2").mkdir()      # a new folder: whatever is in it, by its 'd' line
        (tmp_path / "runs/d2/c").write_text("c")
        changes, now = journal.changes_since(tmp_path, record)
    assert changes.files - {"m.zarr.verified.since", "m.zarr.verified.since.part"} == {
        "runs/d1/a", "runs/d1/b", "runs/d1/odd\nname", "runs/d1/c"} | (changes.files & {"runs/d2/c"})
    assert changes.folders == ("runs/d2",) and now.token == w.token
    assert changes.touches("runs/d2/c") and not changes.touches("runs/d1/other")
    text = lines(tmp_path)
    assert text[0] == f"{journal.MAGIC} {w.token}" and "c runs/d1/odd\\nname" in text
    assert sum(t.startswith("k ") for t in text) == 2 and text[-1] == "x the watcher stopped"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(journal.COOKIE_PREFIX)]


def test_without_a_watcher_or_its_point_the_journal_says_nothing_at_once(tmp_path):
    record = tmp_path / "m.zarr.verified"
    record.write_bytes(b"record")
    assert journal.changes_since(tmp_path, record) == (None, None)             # no journal
    with watching(tmp_path):
        _, now = journal.changes_since(tmp_path, record)
        journal.save_since(record, now)
    t = time.perf_counter()
    assert journal.changes_since(tmp_path, record) == (None, None)             # the watcher stopped
    assert time.perf_counter() - t < journal.COOKIE_TIMEOUT_S / 4              # (no wait for a cookie)
    with watching(tmp_path) as w:       # a new watcher: a new token, so nothing is vouched for
        changes, now = journal.changes_since(tmp_path, record)
        assert changes is None and now.token == w.token
        journal.save_since(record, now)
        record.write_bytes(b"written again")     # a record written since disowns the point
        assert journal.changes_since(tmp_path, record)[0] is None


def test_a_folder_moved_starts_the_journal_anew(tmp_path):
    (tmp_path / "runs/d1").mkdir(parents=True)
    record = tmp_path / "m.zarr.verified"
    record.write_bytes(b"record")
    with watching(tmp_path) as w:
        first = w.token
        journal.save_since(record, journal.changes_since(tmp_path, record)[1])
        os.rename(tmp_path / "runs/d1", tmp_path / "runs/d9")      # an 'x' line, then anew
        changes, now = journal.changes_since(tmp_path, record)
        assert changes is None and now.token != first and now.token == w.token
    assert lines(tmp_path)[0].endswith(now.token)


def test_one_watcher_a_directory(tmp_path):
    with watching(tmp_path):
        with pytest.raises(WatchError, match="another watcher"):
            Watcher(tmp_path)


def _spy_stat(monkeypatch):
    asked = []
    real = store._stat
    monkeypatch.setattr(store, "_stat", lambda d, sources, load=False: asked.extend(sources) or real(d, sources, load))
    hashed = []
    real_hash = store._hash_batch
    monkeypatch.setattr(store, "_hash_batch", lambda d, paths: hashed.extend(paths) or real_hash(d, paths))
    return asked, hashed


def test_an_append_with_a_watcher_stats_only_the_files_the_journal_names(tmp_path, monkeypatch, capsys):
    target = copy_campaign(CAMPAIGN, tmp_path / "c", range(12))
    out = tmp_path / "m.zarr"
    plain = tmp_path / "plain.zarr"
    with watching(target):
        store.normalize_monitor(target, out)
        assert journal.since_path(store.verified_path(out)).is_file()
        store.normalize_monitor(target, plain, verify=False)
        assert not journal.since_path(store.verified_path(plain)).exists()
        stored = store.load_verified(store.verified_path(out), target).source.tolist()
        asked, hashed = _spy_stat(monkeypatch)
        shutil.copy(CAMPAIGN / "runs.csv", target / "runs.csv")
        assert store.normalize_monitor(target, out)["runs_added"] == 8
        assert not set(asked) & set(stored) and hashed == []       # no stored file stat-ed
        # an edit that keeps size and time (touch -r), which a stat misses, is named: refused
        raw = target / TCP
        st = raw.stat()
        raw.write_bytes(raw.read_bytes().replace(b"1", b"2", 1))
        os.utime(raw, ns=(st.st_atime_ns, st.st_mtime_ns))
        asked.clear()
        assert main(["pipeline", "normalize", str(target), str(out)]) == 1
        assert asked == [TCP] and hashed == [TCP]
        assert f"{TCP}: changed since it was stored" in capsys.readouterr().err
        raw.write_bytes((CAMPAIGN / TCP).read_bytes())         # put back: found right again
        assert main(["pipeline", "normalize", str(target), str(out)]) == 0
    # an edit while no watcher runs is found by the stat of every file, as without a journal
    shutil.copy(CAMPAIGN / TCP, target / UDP)
    with watching(target):
        hashed.clear()
        assert main(["pipeline", "normalize", str(target), str(out)]) == 1
        assert hashed == [UDP]          # (found by its stat: every stored file stat-ed)
    assert f"{UDP}: changed since it was stored" in capsys.readouterr().err


def test_the_command_keeps_the_journal_until_sigterm(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "thruput.cli", "monitor", "watch", str(tmp_path)],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert "keeping" in proc.stderr.readline()       # (once every folder is watched)
        record = tmp_path / "m.zarr.verified"
        record.write_bytes(b"record")
        assert journal.changes_since(tmp_path, record)[1] is not None
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert lines(tmp_path)[-1] == "x the watcher stopped"
    assert journal.changes_since(tmp_path, tmp_path / "m.zarr.verified") == (None, None)


@pytest.mark.parametrize("in_c", [True, False])
def test_the_stored_runs_a_journal_names_are_found_from_the_records_bytes_or_strings(tmp_path, monkeypatch,
                                                                                      in_c):
    if in_c and store._statmany is None:
        pytest.skip("thruput.campaign._statmany is not built")
    if not in_c:
        monkeypatch.setattr(store, "_statmany", None)
    import numpy as np
    since = journal.Since("t", 0)
    for sources in (["runs/d1/a", "", "runs/d1/b", "runs/d2/a", "runs/d20/a"],
                    ["runs/d1/a", "runs/d1/b", "runs/d2/a", "runs/d20/a"], [""], []):
        n = len(sources)
        record = store.Verified("x", np.array([f"r{i}" for i in range(n)], dtype=object),
                                np.array(sources, dtype=object), np.arange(n), np.ones(n, int), np.ones(n, int))
        store.save_verified(tmp_path / "r.verified", tmp_path, record)
        loaded = store.load_verified(tmp_path / "r.verified", tmp_path)
        assert loaded.joined_sources() is not None          # (the C look-up of its bytes)
        named = "" not in sources
        for changes in [journal.Changes(frozenset({"runs.csv", "runs/d3/new"}), ("runs/d9",), since),
                        journal.Changes(frozenset({"runs/d1/b"}), (), since),
                        journal.Changes(frozenset(), ("runs/d2",), since),
                        journal.Changes(frozenset({"runs/d1/a", "runs/é"}), ("runs/d20", "runs/é"), since),
                        journal.Changes(frozenset({"runs/x"}), ("runs",), since)]:
            want = [i for i, s in enumerate(sources) if changes.touches(s)]
            assert store.touched(record, changes).tolist() == want
            for r in (loaded, record):
                hits, all_named = store.journaled(r, changes)
                assert (hits.tolist(), np.all(all_named)) == (want, named), (sources, changes)


def test_a_folder_reached_by_two_paths_is_refused(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "again").symlink_to(tmp_path / "runs")
    with pytest.raises(WatchError, match="are the same folder"):
        Watcher(tmp_path)


@pytest.mark.parametrize("in_c", [True, False])
def test_sources_not_written_as_the_journal_names_files_are_all_stat_ed(tmp_path, monkeypatch, in_c):
    if in_c and store._statmany is None:
        pytest.skip("thruput.campaign._statmany is not built")
    if not in_c:
        monkeypatch.setattr(store, "_statmany", None)
    import numpy as np
    changes = journal.Changes(frozenset({"runs/a"}), (), journal.Since("t", 0))
    for sources, ok in [(["runs/d1/a", "", "runs/d2/b"], True), (["a"], True), (["", ""], True),
                        (["runs/.a", "..b", "a..", "x/y.z"], True),
                        (["./runs/a"], False), (["runs//a"], False), (["runs/../runs/a"], False),
                        (["/abs/a"], False), (["runs/a", "runs/./b"], False), (["runs/a", "runs/"], False),
                        (["."], False), ([".."], False), (["a", ".", "b"], False), (["a", ".."], False),
                        ([".", "a"], False), (["a/."], False), (["a/.."], False), (["a", "/"], False)]:
        n = len(sources)
        record = store.Verified("x", np.array(sources, dtype=object), np.array(sources, dtype=object),
                                np.arange(n), np.ones(n, int), np.ones(n, int))
        assert store._as_journaled(record) is ok, sources
        store.save_verified(tmp_path / "r.verified", tmp_path, record)
        loaded = store.load_verified(tmp_path / "r.verified", tmp_path)
        assert (store.journaled(loaded, changes) is not None) is ok, sources


def test_a_link_to_a_file_is_refused_before_and_while_watching(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "elsewhere").write_text("x")
    (tmp_path / "runs" / "a").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(WatchError, match="symbolic link to a file"):
        Watcher(tmp_path)
    (tmp_path / "runs" / "a").unlink()
    w = Watcher(tmp_path)
    try:
        (tmp_path / "runs" / "b").symlink_to(tmp_path / "elsewhere")
        with pytest.raises(WatchError, match="runs/b is a symbolic link"):
            w.step(5)
    finally:
        w.close()
