"""thruput.readahead: the kernel asked to load files ahead, in a thread, in order."""

from __future__ import annotations

import os
import threading

import pytest

from thruput import readahead


def test_each_list_is_hinted_in_order_and_leaving_stops_the_thread(monkeypatch):
    seen, done = [], threading.Event()
    monkeypatch.setattr(readahead, "hint", lambda p: done.set() if p is done else seen.append(p))
    with readahead.ReadAhead() as ahead:
        ahead.add(["a", "b"])
        ahead.add(iter(["c"]))
        ahead.add([])
        ahead.add(["d", done])
        assert done.wait(10)
    assert seen == ["a", "b", "c", "d"]
    assert not any(t.name == "thruput-readahead" for t in threading.enumerate())


def test_leaving_early_leaves_the_rest(monkeypatch):
    started, release, seen = threading.Event(), threading.Event(), []

    def slow(path):
        started.set()
        release.wait(10)
        seen.append(path)

    monkeypatch.setattr(readahead, "hint", slow)
    ahead = readahead.ReadAhead()
    ahead.add(["first", "second", "third"])
    assert started.wait(10)
    closing = threading.Thread(target=ahead.close)
    closing.start()
    assert ahead._stop.wait(10)         # (told to stop while it hints the first)
    release.set()
    closing.join(10)
    assert seen == ["first"]
    ahead.close()                       # (again: nothing)


@pytest.mark.skipif(not readahead.AVAILABLE, reason="no posix_fadvise here")
def test_a_hint_never_raises_nor_waits(tmp_path):
    """A missing file, a folder and a FIFO without a writer (opening it to read would wait
    for one) are passed over; a file is left as it was."""
    data = tmp_path / "data"
    data.write_bytes(b"x" * 100_000)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (tmp_path / "missing", tmp_path, fifo, data):
        readahead.hint(str(path))
    assert data.read_bytes() == b"x" * 100_000


def test_without_posix_fadvise_nothing_runs(monkeypatch):
    monkeypatch.setattr(readahead, "AVAILABLE", False)
    monkeypatch.setattr(readahead, "hint", lambda p: pytest.fail("hinted"))
    with readahead.ReadAhead() as ahead:
        ahead.add(["a"])
    assert not any(t.name == "thruput-readahead" for t in threading.enumerate())
