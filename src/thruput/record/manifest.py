"""``runs.csv``: the manifest of a campaign's complete raw files (docs/design.md).

One row per raw file, appended only after the file is complete and renamed from its
``.part`` name; so a file without a row is not part of the campaign, and re-recording
skips the runs whose rows are all present.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..campaign.runs import append_rows as _append_rows, manifest_path, read_text, records, split_header
from ..campaign.layout import LEGACY_MANIFEST_COLUMNS, MANIFEST_COLUMNS, MANIFEST_FILE

__all__ = ["COLUMNS", "MANIFEST", "Row", "read_rows", "append_rows", "complete_runs"]

#: File name and column order (:mod:`thruput.campaign.layout`); empty cells mean "not
#: applicable".
MANIFEST = MANIFEST_FILE
COLUMNS = MANIFEST_COLUMNS
#: The (role, phase) rows a recorded TCP sweep run has: the iperf log, the ping alongside
#: it and the ping alone after it.
RUN_PARTS = (("iperf", ""), ("ping", "loaded"), ("ping", "unloaded"))


@dataclass(frozen=True)
class Row:
    """One manifest row; ``path`` relative to the campaign directory, ``sha256`` that file's
    hash when it was recorded, ``started`` ISO UTC."""

    run: str
    role: str
    path: str
    sha256: str
    window: int | str
    streams: int | str
    repeat: int | str
    phase: str
    started: str


def read_rows(campaign_dir):
    """Rows of ``campaign_dir/runs.csv`` (empty list if there is none yet).

    Raises
    ------
    ValueError
        If the header is not :data:`COLUMNS` (names the file).
    """
    path = manifest_path(campaign_dir)
    if not path.exists():
        return []
    text = read_text(campaign_dir)
    header, end = split_header(text)
    if header is None:
        return []
    if header == LEGACY_MANIFEST_COLUMNS:     # before sha256 was kept
        at = COLUMNS.index("sha256")
        return [Row(*r[:at], "", *r[at:]) for _, r in records(text[end:], header, strip=False) if r]
    if header != COLUMNS:
        raise ValueError(f"{path}:1: header {list(header)} is not {list(COLUMNS)}")
    return [Row(*r) for _, r in records(text[end:], header, strip=False) if r]


def append_rows(campaign_dir, rows, columns=COLUMNS):
    """Append ``rows`` (dataclasses with ``columns`` as fields) to runs.csv, writing the
    header first if the file is new; flushed and synced to disk before returning
    (:func:`thruput.campaign.runs.append_rows`)."""
    _append_rows(campaign_dir, rows, columns)


def complete_runs(rows, parts=RUN_PARTS):
    """Run ids that have a row for every (role, phase) in ``parts``."""
    have = {}
    for row in rows:
        have.setdefault(row.run, set()).add((row.role, row.phase))
    return {run for run, got in have.items() if set(parts) <= got}


assert tuple(f.name for f in fields(Row)) == COLUMNS
