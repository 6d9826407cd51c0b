"""Reading and writing ``runs.csv``, the manifest of a campaign, in one place.

Every kind of campaign (a recorded or imported sweep: :data:`~.layout.MANIFEST_COLUMNS`;
a monitor campaign: :data:`thruput.monitor.manifest.MONITOR_MANIFEST_COLUMNS`) keeps its
manifest the same way: a header line, then one row per raw file, appended (and synced to
disk) only once that file is complete. The callers check the cells of each kind; this
module cuts the text into rows and columns and says on which line each row is:

- :func:`bulk_table` reads a body of well-formed rows at once (pyarrow's CSV reader), and
  :func:`bulk_columns` gives its columns as lists; they give up (None) on anything they
  could not number line by line;
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

from .. import guard
from ..errors import ParseError
from .layout import MANIFEST_FILE, escapes, path_problem

__all__ = ["MANIFEST_FILE", "manifest_path", "read_text", "split_header", "bulk_table", "bulk_columns", "records",
           "append_rows", "write_rows", "path_problem", "escapes"]

#: Line breaks of ``str.splitlines`` other than "\n": a runs.csv holding one is read row
#: by row (its lines are not its rows).
OTHER_BREAKS = "\r\0\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: The ASCII characters ``str.strip`` takes off besides line ends.
ASCII_BLANKS = " \t\x0b\x0c\x1c\x1d\x1e\x1f"


def manifest_path(directory):
    """``directory/runs.csv`` as a :class:`~pathlib.Path`."""
    return Path(directory) / MANIFEST_FILE


def read_text(directory, kind=MANIFEST_FILE):
    """The text of ``directory/runs.csv`` through :func:`thruput.guard.read_text`: a regular
    file inside ``directory`` (links resolved), at most ``guard.LIMITS[kind]`` bytes,
    UTF-8 (else a FileRefused naming the line)."""
    return guard.read_text(manifest_path(directory), kind, root=directory)


def split_header(text):
    """``(header, end)`` of a runs.csv ``text``: the header's cells, stripped (a tuple;
    None for an empty text), and the offset where the data rows start."""
    end = text.find("\n") + 1 or len(text)
    if not end:
        return None, 0
    cells = next(_reader((text[:end],), 1), None)
    return (None if cells is None else tuple(c.strip() for c in cells)), end


def _reader(lines, first_line):
    """``csv.reader`` of ``lines`` whose errors (a cell past ``csv.field_size_limit``, a
    NUL) are a ParseError naming runs.csv and the line."""
    reader = csv.reader(lines)
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise ParseError(f"not a CSV row: {exc}", line=first_line + reader.line_num - 1,
                             path=MANIFEST_FILE) from None


def bulk_table(body, names):
    """The columns of ``body``, data lines of runs.csv, as a :class:`pyarrow.Table` of
    stripped strings named ``names``, read at once by pyarrow's CSV reader when every line
    is one row of ``len(names)`` cells; None for anything else (an empty body is no rows)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    if not body:
        return pa.table({name: pa.array([], pa.string()) for name in names})
    if (not body.strip() or any(c in body for c in OTHER_BREAKS)
            or body.startswith("\n") or "\n\n" in body):      # (pyarrow: a blank line is a row of "")
        return None
    lines = body.count("\n") + (not body.endswith("\n"))
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(body.encode("utf-8")),
            read_options=pa_csv.ReadOptions(column_names=list(names)),
            convert_options=pa_csv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()), null_values=[],
                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, ValueError):
        return None
    if table.num_rows != lines:             # (a quoted cell over lines, or a blank line)
        return None
    if not body.isascii() or any(c in body for c in ASCII_BLANKS):     # (str.strip's blanks)
        table = pa.table({name: pa.array(list(map(str.strip, table.column(name).to_pylist())),
                                         pa.string()) for name in names})
    return table


def bulk_columns(body, names):
    """:func:`bulk_table`'s columns as lists of str, in ``names`` order, or None."""
    table = bulk_table(body, names)
    return None if table is None else [table.column(name).to_pylist() for name in names]


def records(body, names, first_line=2, strip=True):
    """``(line, cells)`` of every row of ``body`` (data lines of runs.csv, the first on
    line ``first_line``): by :func:`bulk_columns` if it can, else by the ``csv`` module
    (then a blank line is a row of no cells, a row may have any number of cells).
    ``strip``: cells stripped of blanks (the bulk read always strips)."""
    columns = bulk_columns(body, names)
    if columns is not None:
        return list(enumerate(map(list, zip(*columns)), first_line))
    rows = enumerate(_reader(io.StringIO(body), first_line), first_line)
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
