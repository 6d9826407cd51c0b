"""Raw files changed on purpose: ``thruput campaign accept``.

``runs.csv`` keeps the sha256 of every raw file as it was recorded or imported, and
``thruput campaign check`` (so ``normalize``) refuses a file whose bytes differ. When a
change is intended (a log re-exported, a known corruption repaired by hand), accepting it
writes the new hash into ``runs.csv`` and appends a dated entry with the reason to the
``accepted`` list of ``campaign.yaml``: the change stays on record beside the data.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from ..errors import ThruputError
from . import runs
from .layout import (ACCEPTED_KEY, CAMPAIGN_FILE, LEGACY_MANIFEST_COLUMNS, MANIFEST_COLUMNS,
                     MANIFEST_FILE, sha256_of)

__all__ = ["accept_changes", "Accepted"]


class Accepted(dict):
    """One accepted change: ``date``, ``file``, ``was`` ("" when no hash was kept), ``sha256``, ``reason``."""


def accept_changes(directory, files=(), reason="", now=None):
    """Record the current bytes of raw files as intended.

    Parameters
    ----------
    directory : path-like
        The campaign directory.
    files : sequence of str
        Paths as ``runs.csv`` lists them (relative to the campaign); empty: every listed
        file whose bytes differ from its kept sha256 or that keeps none.
    reason : str
        Why the bytes changed; required.
    now : datetime.datetime, optional
        The date recorded (default: now, UTC).

    Returns
    -------
    list of Accepted
        One per file whose kept hash changed (empty when all were already current).

    Raises
    ------
    ThruputError
        Without a reason, for a file that ``runs.csv`` does not list or that is missing.
    """
    directory = Path(directory)
    if not reason.strip():
        raise ThruputError("accepting a change needs a --reason (it is kept in campaign.yaml)")
    manifest = directory / MANIFEST_FILE
    rows = _read(manifest)
    listed = {r["path"]: r for r in rows}
    unknown = [f for f in files if f not in listed]
    if unknown:
        raise ThruputError(f"{manifest}: does not list {', '.join(unknown)}")
    stamp = (now or dt.datetime.now(dt.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    accepted = []
    for path in files or list(listed):
        row = listed[path]
        if not (directory / path).is_file():
            raise ThruputError(f"{directory / path}: listed in {manifest} but missing")
        sha = sha256_of(directory / path)
        if sha != row["sha256"]:
            accepted.append(Accepted(date=stamp, file=path, was=row["sha256"], sha256=sha, reason=reason.strip()))
            row["sha256"] = sha
    if accepted:
        _write(manifest, rows)
        _append_accepted(directory / CAMPAIGN_FILE, accepted)
    return accepted


def _read(manifest):
    if not manifest.is_file():
        raise ThruputError(f"{manifest}: missing")
    text = runs.read_text(manifest.parent)
    header, end = runs.split_header(text)
    if header not in (MANIFEST_COLUMNS, LEGACY_MANIFEST_COLUMNS):
        raise ThruputError(f"{manifest}:1: header must be {','.join(MANIFEST_COLUMNS)}, not {','.join(header or ())}")
    rows = (dict(zip(header, cells)) for _, cells in runs.records(text[end:], header) if any(cells))
    return [{k: row.get(k, "") for k in MANIFEST_COLUMNS} for row in rows]


def _write(manifest, rows):
    runs.write_rows(manifest.parent, rows, MANIFEST_COLUMNS)


def _append_accepted(path, entries):
    """Add ``entries`` to the ``accepted`` list of campaign.yaml, keeping the rest of the
    file (comments included) as it is."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    items = ["  - {" + ", ".join(f"{k}: {json.dumps(e[k])}" for k in ("date", "file", "was", "sha256", "reason"))
             + "}\n" for e in entries]
    start = next((i for i, line in enumerate(lines) if line.startswith(f"{ACCEPTED_KEY}:")), None)
    if start is None:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines += [f"{ACCEPTED_KEY}:\n", *items]
    else:
        if lines[start].split(":", 1)[1].strip() in ("[]", "null", "~"):
            lines[start] = f"{ACCEPTED_KEY}:\n"
        end = next((i for i in range(start + 1, len(lines))
                    if lines[i].strip() and not lines[i][0].isspace() and not lines[i].startswith("#")),
                   len(lines))
        lines[end:end] = items
    path.write_text("".join(lines), encoding="utf-8")
