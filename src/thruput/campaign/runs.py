"""Reading and writing ``runs.csv``, the manifest of a campaign, in one place.

Every kind of campaign (a recorded or imported sweep: :data:`~.layout.MANIFEST_COLUMNS`;
a monitor campaign: :data:`thruput.monitor.manifest.MONITOR_MANIFEST_COLUMNS`) keeps its
manifest the same way: a header line, then one row per raw file, appended (and synced to
disk) only once that file is complete. The callers check the cells of each kind; this
module cuts the text into rows and columns and says on which line each row is:

- :func:`bulk_columns` reads a body of well-formed rows at once (pandas, pyarrow's CSV
  reader); it gives up (None) on anything it could not number line by line;
- :func:`records` gives ``(line, cells)`` of every row, by :func:`bulk_columns` when it
  can and by the ``csv`` module otherwise (quoted line breaks, blank lines, rows with
  the wrong number of cells), so that every problem is named by its line.

Paths in it must stay inside the campaign folder: :func:`~.layout.path_problem` (a cell),
:func:`~.layout.escapes` (a cell and the symbolic links on its way), re-exported here.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import astuple, is_dataclass
from pathlib import Path

import pandas as pd

from .layout import MANIFEST_FILE, escapes, path_problem

__all__ = ["MANIFEST_FILE", "manifest_path", "split_header", "bulk_columns", "records",
           "append_rows", "write_rows", "path_problem", "escapes"]

#: Line breaks of ``str.splitlines`` other than "\n": a runs.csv holding one is read row
#: by row (its lines are not its rows).
OTHER_BREAKS = "\r\0\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: The ASCII characters ``str.strip`` takes off besides line ends.
ASCII_BLANKS = " \t\x0b\x0c\x1c\x1d\x1e\x1f"


def manifest_path(directory):
    """``directory/runs.csv`` as a :class:`~pathlib.Path`."""
    return Path(directory) / MANIFEST_FILE


def split_header(text):
    """``(header, end)`` of a runs.csv ``text``: the header's cells, stripped (a tuple;
    None for an empty text), and the offset where the data rows start."""
    end = text.find("\n") + 1 or len(text)
    if not end:
        return None, 0
    cells = next(csv.reader((text[:end],)), None)
    return (None if cells is None else tuple(c.strip() for c in cells)), end


def bulk_columns(body, names):
    """The columns (lists of stripped strings, in ``names`` order) of ``body``, data lines
    of runs.csv, read at once by pandas (pyarrow's CSV reader) when every line is one row
    of ``len(names)`` cells; None for anything else (an empty body is no rows)."""
    if not body:
        return [[] for _ in names]
    if (not body.strip() or any(c in body for c in OTHER_BREAKS)
            or body.startswith("\n") or "\n\n" in body):      # (pyarrow: a blank line is a row of "")
        return None
    lines = body.count("\n") + (not body.endswith("\n"))
    try:
        frame = pd.read_csv(io.BytesIO(body.encode("utf-8")), engine="pyarrow", header=None,
                            names=list(names), dtype=str, keep_default_na=False,
                            na_values=[], skip_blank_lines=False)
    except (ValueError, pd.errors.ParserError, ImportError):
        return None
    if len(frame) != lines:                 # (a quoted cell over lines, or a blank line)
        return None
    columns = [frame[name].to_numpy(dtype=object).tolist() for name in names]
    if not body.isascii() or any(c in body for c in ASCII_BLANKS):
        columns = [list(map(str.strip, column)) for column in columns]
    return columns


def records(body, names, first_line=2, strip=True):
    """``(line, cells)`` of every row of ``body`` (data lines of runs.csv, the first on
    line ``first_line``): by :func:`bulk_columns` if it can, else by the ``csv`` module
    (then a blank line is a row of no cells, a row may have any number of cells).
    ``strip``: cells stripped of blanks (the bulk read always strips)."""
    columns = bulk_columns(body, names)
    if columns is not None:
        return list(enumerate(map(list, zip(*columns)), first_line))
    rows = enumerate(csv.reader(io.StringIO(body)), first_line)
    return [(line, [c.strip() for c in cells] if strip else cells) for line, cells in rows]


def _cells(row, columns):
    if is_dataclass(row):
        return astuple(row)[:len(columns)]
    if isinstance(row, dict):
        return ["" if row.get(k) is None else row[k] for k in columns]
    return row


def append_rows(directory, rows, columns):
    """Append ``rows`` (dataclasses whose first fields are ``columns``, dicts, or lists of
    cells) to ``directory/runs.csv``, writing the header ``columns`` first if the file is
    new; flushed and synced to disk before returning."""
    path = manifest_path(directory)
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        if new:
            writer.writerow(columns)
        writer.writerows(_cells(row, columns) for row in rows)
        f.flush()
        os.fsync(f.fileno())


def write_rows(directory, rows, columns):
    """Write ``directory/runs.csv`` anew: header ``columns`` and ``rows`` (as
    :func:`append_rows`), through a ``.part`` file renamed over it."""
    path = manifest_path(directory)
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(_cells(row, columns) for row in rows)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)
