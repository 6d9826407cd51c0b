"""Files read ahead by the kernel while others are parsed.

A monitor archive is hundreds of thousands of small files. On the bench VM a file read
from disk took 110-220 µs against 8-11 µs from the page cache, and in a 1-worker
normalize of the synthetic 10^5-run archive a third of the files came from disk although
the bench had just read them all (the VM's kernel runs DAMON's pageout, which reclaims
page-cache pages untouched for about a minute): 8.3 of 43 s went to waiting for them.
Parallel reads did not help (the disk serves one at a time).

:class:`ReadAhead` hands lists of files to a thread that asks the kernel to load each one
(``posix_fadvise(..., POSIX_FADV_WILLNEED)``: it starts the read and returns; 29-43 µs
a file there, the open included), in the order given, so that by the time a reader opens
a file it is in memory. Only a hint: nothing is read into this process, a file that
cannot be opened is passed over (its reader says what is wrong with it), and where there
is no ``posix_fadvise`` (macOS, Windows) nothing is done. It helps the readers on this
machine only: :func:`thruput.parallel.workers_here` tells whether a cluster's are.
"""

from __future__ import annotations

import os
import queue
import threading

__all__ = ["ReadAhead", "hint"]

#: Whether this platform can hint at all.
AVAILABLE = hasattr(os, "posix_fadvise")


def hint(path):
    """Ask the kernel to load the file at ``path`` into the page cache; quietly nothing if
    it cannot be opened. Opened without blocking (a FIFO would wait for a writer)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
    except OSError:
        pass
    finally:
        os.close(fd)


class ReadAhead:
    """A thread that hints (:func:`hint`) the files of each list given to :meth:`add`, list
    after list, in order. A context manager: leaving it stops the thread (files not yet
    hinted are left) and waits for it."""

    def __init__(self):
        self._todo = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread = None
        if AVAILABLE:
            self._thread = threading.Thread(target=self._hint_all, name="thruput-readahead",
                                            daemon=True)
            self._thread.start()

    def add(self, paths):
        """Hint ``paths`` (strings) after those given before."""
        if self._thread is not None:
            self._todo.put(list(paths))

    def close(self):
        if self._thread is not None:
            self._stop.set()
            self._todo.put(None)
            self._thread.join()
            self._thread = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _hint_all(self):
        while (paths := self._todo.get()) is not None:
            for path in paths:
                if self._stop.is_set():
                    return
                hint(path)
