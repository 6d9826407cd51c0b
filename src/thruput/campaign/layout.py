"""The layout of a campaign directory, shared by ``campaign/`` and ``record/``.

File names, the manifest's columns and run ids are decided here once (sizes such as
``64K``: :mod:`thruput.quantities`); ``docs/design.md`` describes them for people.

A campaign directory ``data/raw/<name>/`` holds ``campaign.yaml`` (:data:`CAMPAIGN_FILE`),
``runs.csv`` (:data:`MANIFEST_FILE`, columns :data:`MANIFEST_COLUMNS`) and the raw logs.
Every manifest row keeps the sha256 of its file as it was recorded or imported, so a log
whose bytes change afterwards is refused (``thruput campaign check``, ``normalize``) until
the change is accepted on purpose (``thruput campaign accept``).
"""

from __future__ import annotations

import json
import os
import re

from ..hashing import sha256_file
from ..quantities import SIZE_SUFFIXES, parse_size

__all__ = [
    "CAMPAIGN_FILE", "MANIFEST_FILE", "MANIFEST_COLUMNS", "ROLE_KINDS", "LEGACY_MANIFEST_COLUMNS", "RUN_ID",
    "SIZE_SUFFIXES", "ACCEPTED_KEY", "LedgerTotals", "path_problem", "escapes", "run_id", "parse_run_id", "parse_size", "sha256_of",
]

CAMPAIGN_FILE = "campaign.yaml"
MANIFEST_FILE = "runs.csv"
#: Columns of a sweep's runs.csv, in order (docs/design.md); ``sha256`` follows ``path`` as
#: in a monitor campaign's manifest.
MANIFEST_COLUMNS = ("run", "role", "path", "sha256", "window", "streams", "repeat", "phase", "started")
#: The columns before sha256 was kept (still read: such a manifest cannot tell a changed
#: file, and ``thruput campaign check`` says so).
LEGACY_MANIFEST_COLUMNS = tuple(c for c in MANIFEST_COLUMNS if c != "sha256")
#: Role of a raw file (runs.csv ``role``) -> the contract kind its reader must return
#: (a monitor or design uses ``iperf`` and ``ping``; a UDPmon sweep the other two).
ROLE_KINDS = {"iperf": "throughput", "ping": "rtt", "udpmon_bw": "udp_sweep",
              "udpmon_req": "latency_scan"}
#: Key of campaign.yaml listing the raw-file changes accepted on purpose.
ACCEPTED_KEY = "accepted"
#: Run ids of TCP sweeps: requested window in bytes, streams, repeat.
RUN_ID = re.compile(r"^w(?P<window>[0-9]+)-s(?P<streams>[0-9]+)-r(?P<repeat>[0-9]+)$")


def run_id(window: float, streams: float, repeat: float) -> str:
    """The run id of a TCP sweep cell, e.g. ``run_id(65536, 4, 0) == "w65536-s4-r0"``."""
    return f"w{int(window)}-s{int(streams)}-r{int(repeat)}"


def parse_run_id(run: str) -> tuple[int, int, int] | None:
    """``"w65536-s4-r0"`` -> ``(65536, 4, 0)``; ``None`` if ``run`` is not of that shape."""
    m = RUN_ID.match(run)
    return None if m is None else (int(m["window"]), int(m["streams"]), int(m["repeat"]))


def path_problem(rel):
    """What is wrong with ``rel``, a runs.csv ``path`` cell, as a path inside the campaign
    folder (``None`` if nothing; ``""`` is no file): an absolute path or a ``..`` component
    would name a file outside the campaign, and outside its DVC dependency."""
    if not rel:
        return None
    if "\0" in rel:
        return f"path {rel!r} holds a NUL"
    if rel.startswith(("/", "\\")) or rel[1:2] == ":":         # (C:, a Windows drive)
        return f"path {rel!r} is absolute: it must be relative to the campaign folder"
    if ".." in rel and ".." in rel.replace("\\", "/").split("/"):
        return f"path {rel!r} goes up ('..'): it must stay inside the campaign folder"
    return None


def escapes(directory, rel, folders=None):
    """What is wrong with the file ``rel`` of the campaign ``directory`` (``None`` if
    nothing): :func:`path_problem`, or a symbolic link on its way that leads out of the
    campaign folder. ``folders``: a dict the caller keeps for many files of one campaign
    (each folder is resolved once, then one ``lstat`` a file)."""
    problem = path_problem(rel)
    if problem is not None or not rel:
        return problem
    folders = {} if folders is None else folders
    top = folders.get("")
    if top is None:
        top = folders[""] = os.path.realpath(directory)
    head = os.path.dirname(rel)
    where = folders.get(head)
    if where is None:
        where = folders[head] = os.path.realpath(os.path.join(directory, head))
    path = os.path.join(where, os.path.basename(rel))
    if os.path.islink(path):
        path = os.path.realpath(path)
    if path != top and not path.startswith(top.rstrip(os.sep) + os.sep):
        return f"path {rel!r} leads out of the campaign folder (a symbolic link to {path})"
    return None


def sha256_of(path):
    """The sha256 of the file at ``path``, hexadecimal (:func:`thruput.hashing.sha256_file`)."""
    return sha256_file(path)


class LedgerTotals:
    """Sums the line accounting of every file read into campaign attrs."""

    def __init__(self):
        self.files = 0
        self.totals = {"lines_total": 0, "lines_parsed": 0, "lines_skipped": 0}
        self.reasons = {}

    def add(self, ds, files=1):
        """Add the accounting of ``ds`` (a Dataset, or its attrs), read from ``files``
        files (``read_many``: many)."""
        attrs = getattr(ds, "attrs", ds)
        self.files += files
        for key in self.totals:
            self.totals[key] += int(attrs[key])
        for reason, count in json.loads(attrs["skipped_reasons"]).items():
            self.reasons[reason] = self.reasons.get(reason, 0) + int(count)

    def attrs(self):
        return {"files_read": self.files, **self.totals,
                "skipped_reasons": json.dumps(self.reasons, sort_keys=True)}
