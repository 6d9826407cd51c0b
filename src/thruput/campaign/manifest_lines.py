"""Rows of runs.csv sent to a worker by where they are in the file, not as rows.

A normalize on a cluster sends each unit of work its rows of runs.csv
(:mod:`thruput.campaign.regions`). Pickled, 1024 rows are about 240 KB: at 2 x 10^5
rows, this process spent about 0.3 core-s pickling them and its event loop as much again
sending them twice (to the scheduler, then to a worker), on a machine whose cores the
workers need (docs/scale.md). Sent as :class:`Lines` they are a few numbers and the
unit's order: the worker reads those bytes of runs.csv itself, checks them against the
CRC-32 of what this process read, and parses them with the same function
(:func:`read_lines`).

Only a runs.csv read the usual way is sent so (:meth:`LineIndex.of`): ASCII, every
row one line ending in "\\n"; any other is sent as rows.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import monitor as mon

__all__ = ["Lines", "LineIndex", "read_lines"]

#: A unit is sent as :class:`Lines` if the lines from its first row's to its last row's
#: are at most this many times its rows (rows of other units in between, read and
#: dropped by the worker); as rows otherwise.
MAX_SPREAD = 2
#: Characters of runs.csv searched for line ends at once (:meth:`LineIndex.of`).
_BLOCK_CHARS = 1 << 22


class Lines(NamedTuple):
    """The ``count`` lines of runs.csv from line ``first_line``, bytes ``start`` to
    ``end`` of the file (CRC-32 ``crc``), one row a line; the unit's rows are those at
    ``take`` (positions among the lines, in store order; None: all, in file order)."""

    start: int
    end: int
    first_line: int
    count: int
    crc: int
    take: np.ndarray = None


class LineIndex:
    """Where the data lines of a runs.csv text begin in the file: made by :meth:`of`."""

    def __init__(self, text, starts, line, file_at):
        self._text, self._starts, self._line = text, starts, line
        self._shift = file_at - int(starts[0])     # (a character of the text -> a byte of the file)

    @classmethod
    def of(cls, text, at, line, file_at):
        """The index of ``text``'s data lines from character ``at`` on: the first is line
        ``line`` of runs.csv and begins at byte ``file_at`` (an append's text holds the
        header and the new rows only: :func:`~thruput.campaign.monitor.read_manifest_after`).
        None unless ``text`` is ASCII with every row one line ending in "\\n" (no carriage
        return, no quoted cell going on past its line): only then are a row's line and
        its bytes where the worker will look."""
        if (not text.isascii() or "\r" in text or not text.endswith("\n")
                or not mon._rows_are_lines(text, len(text))):
            return None
        ends = [np.array([at - 1], dtype=np.int64)]
        for pos in range(at, len(text), _BLOCK_CHARS):
            block = np.frombuffer(text[pos:pos + _BLOCK_CHARS].encode("ascii"), dtype=np.uint8)
            ends.append(np.flatnonzero(block == 10) + pos)
        return cls(text, np.concatenate(ends) + 1, line, file_at)

    def lines(self, rows):
        """``rows`` (of this text, in store order) as :class:`Lines`, or None if the
        lines they span are more than :data:`MAX_SPREAD` times as many."""
        numbers = np.fromiter((r.line for r in rows), dtype=np.int64, count=len(rows))
        if not len(numbers):
            return None
        low, high = int(numbers.min()), int(numbers.max())
        count = high - low + 1
        if (count > MAX_SPREAD * len(rows) or low < self._line
                or high - self._line + 1 >= len(self._starts)):
            return None
        begin, end = int(self._starts[low - self._line]), int(self._starts[high - self._line + 1])
        crc = zlib.crc32(self._text[begin:end].encode("ascii"))
        take = numbers - low
        if count == len(rows) and (np.diff(take) == 1).all():
            take = None
        else:
            take = take.astype(np.int32 if count < 2**31 else np.int64)
        return Lines(begin + self._shift, end + self._shift, low, count, crc, take)


def read_lines(directory, lines):
    """The rows of :class:`Lines` ``lines``, read from ``directory``'s runs.csv as
    :func:`~thruput.campaign.monitor.read_monitor_manifest` reads them.

    Raises
    ------
    MonitorError
        If those bytes of runs.csv are not the ones this normalize read (runs.csv changed
        meanwhile: normalize again), or do not parse as many rows.
    """
    path = Path(directory) / "runs.csv"
    size = lines.end - lines.start
    fd = os.open(path, os.O_RDONLY)
    try:
        data = mon._read_at(fd, size, lines.start)
    finally:
        os.close(fd)
    last = lines.first_line + lines.count - 1
    if len(data) != size or zlib.crc32(data) != lines.crc:
        raise mon.MonitorError(f"{path}: lines {lines.first_line}-{last} are not what was read "
                               f"when this normalize began: runs.csv changed meanwhile; "
                               f"normalize again")
    body = data.decode("ascii")
    rows = mon._split_rows(body, lines.first_line)
    if rows is None:        # (what the C and column-wise readers leave to the row-by-row one)
        rows = mon.rows_one_by_one(body, lines.first_line - 2, path=path)
    if len(rows) != lines.count:
        raise mon.MonitorError(f"{path}: lines {lines.first_line}-{last} hold {len(rows)} rows, "
                               f"not {lines.count}")
    return rows if lines.take is None else [rows[i] for i in lines.take.tolist()]
