"""``runs.csv`` of a monitor campaign: one row per test started, failed ones included.

Columns (:data:`MONITOR_MANIFEST_COLUMNS`) and their meaning are fixed by docs/design.md
("Monitor campaigns"). A row is appended, and flushed to disk, only after the test ended
and its raw file (if the tool wrote anything) was renamed from ``.part``; so every file a
row names is complete, and a test cut short by a kill leaves no row.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

from ..campaign.outcome import OUTCOMES
from ..campaign.runs import manifest_path, read_text, records, split_header
from ..record.manifest import MANIFEST, append_rows

__all__ = ["MONITOR_MANIFEST_COLUMNS", "MANIFEST", "MonitorRow", "read_rows", "append_row",
           "read_rows_lenient",
           "OUTCOMES"]

MONITOR_MANIFEST_COLUMNS = ("run", "role", "path", "sha256", "slot", "started", "path_name",
                            "direction", "test", "tool", "socket_buffer", "size", "rate",
                            "outcome", "reason")


@dataclass(frozen=True)
class MonitorRow:
    """One runs.csv row; every field as the text written (empty = not applicable)."""

    run: str
    role: str
    path: str
    sha256: str
    slot: str
    started: str
    path_name: str
    direction: str
    test: str
    tool: str
    socket_buffer: str
    size: str
    rate: str
    outcome: str
    reason: str


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}" if value != int(value) else str(int(value))
    return str(value)


def read_rows(campaign_dir):
    """The rows of ``campaign_dir/runs.csv`` (empty list if it does not exist yet).

    Raises
    ------
    ValueError
        If the header is not :data:`MONITOR_MANIFEST_COLUMNS` or a row has the wrong
        number of cells (the message names file and line).
    """
    if not os.path.exists(os.path.join(campaign_dir, MANIFEST)):
        return []
    rows, errors = read_rows_lenient(campaign_dir)
    if errors:
        line, message = errors[0]
        raise ValueError(f"{os.path.join(campaign_dir, MANIFEST)}:{line}: {message}")
    return [row for _line, row in rows]


def read_rows_lenient(campaign_dir):
    """``(rows, errors)`` of runs.csv read as far as it goes, for listing every problem.

    ``rows`` is a list of ``(line, MonitorRow)``; ``errors`` of ``(line, message)``: a bad
    header (then no rows), rows with the wrong number of cells (skipped).
    """
    path = manifest_path(campaign_dir)
    if not path.exists():
        return [], [(None, "missing: no test was recorded")]
    text = read_text(campaign_dir)
    header, end = split_header(text)
    if header != MONITOR_MANIFEST_COLUMNS:
        return [], [(1, f"header {None if header is None else list(header)} is not "
                        f"{list(MONITOR_MANIFEST_COLUMNS)}")]
    rows, errors = [], []
    for line, cells in records(text[end:], header, strip=False):
        if not cells:
            continue
        if len(cells) != len(MONITOR_MANIFEST_COLUMNS):
            errors.append((line, f"{len(cells)} cells, expected {len(MONITOR_MANIFEST_COLUMNS)}"))
            continue
        rows.append((line, MonitorRow(*cells)))
    return rows, errors


def append_row(campaign_dir, **values):
    """Append one row (header first if the file is new), flushed and synced to disk.

    ``values`` are the columns; missing ones and None are written empty. Returns the row.
    """
    row = MonitorRow(**{c: _cell(values.get(c)) for c in MONITOR_MANIFEST_COLUMNS})
    append_rows(campaign_dir, [row], MONITOR_MANIFEST_COLUMNS)
    return row


assert tuple(f.name for f in fields(MonitorRow)) == MONITOR_MANIFEST_COLUMNS
