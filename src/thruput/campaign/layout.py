"""The layout of a campaign directory, shared by ``campaign/`` and ``record/``.

File names, the manifest's columns, run ids and the size notation (``64K``) are decided
here once; ``docs/design.md`` describes them for people.

A campaign directory ``data/raw/<name>/`` holds ``campaign.yaml`` (:data:`CAMPAIGN_FILE`),
``runs.csv`` (:data:`MANIFEST_FILE`, columns :data:`MANIFEST_COLUMNS`) and the raw logs.
Every manifest row keeps the sha256 of its file as it was recorded or imported, so a log
whose bytes change afterwards is refused (``thruput campaign check``, ``normalize``) until
the change is accepted on purpose (``thruput campaign accept``).
"""

from __future__ import annotations

import hashlib
import re

__all__ = [
    "CAMPAIGN_FILE", "MANIFEST_FILE", "MANIFEST_COLUMNS", "LEGACY_MANIFEST_COLUMNS", "RUN_ID",
    "SIZE_SUFFIXES", "ACCEPTED_KEY", "run_id", "parse_run_id", "parse_size", "sha256_of",
]

CAMPAIGN_FILE = "campaign.yaml"
MANIFEST_FILE = "runs.csv"
#: Columns of a sweep's runs.csv, in order (docs/design.md); ``sha256`` follows ``path`` as
#: in a monitor campaign's manifest.
MANIFEST_COLUMNS = ("run", "role", "path", "sha256", "window", "streams", "repeat", "phase", "started")
#: The columns before sha256 was kept (still read: such a manifest cannot tell a changed
#: file, and ``thruput campaign check`` says so).
LEGACY_MANIFEST_COLUMNS = tuple(c for c in MANIFEST_COLUMNS if c != "sha256")
#: Key of campaign.yaml listing the raw-file changes accepted on purpose.
ACCEPTED_KEY = "accepted"
#: Run ids of TCP sweeps: requested window in bytes, streams, repeat.
RUN_ID = re.compile(r"^w(?P<window>[0-9]+)-s(?P<streams>[0-9]+)-r(?P<repeat>[0-9]+)$")
#: Size suffixes as iperf reads them for -w: binary multiples (iperf's K is 1024 bytes);
#: ``KiB``, ``kB`` and ``KB`` are read the same way.
SIZE_SUFFIXES = {"": 1, "b": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgb]?)(?:i?b)?\s*$", re.IGNORECASE)
#: Bytes read at a time when hashing a file.
_CHUNK = 1 << 20


def run_id(window, streams, repeat):
    """The run id of a TCP sweep cell, e.g. ``run_id(65536, 4, 0) == "w65536-s4-r0"``."""
    return f"w{int(window)}-s{int(streams)}-r{int(repeat)}"


def parse_run_id(run):
    """``"w65536-s4-r0"`` -> ``(65536, 4, 0)``; ``None`` if ``run`` is not of that shape."""
    m = RUN_ID.match(run)
    return None if m is None else (int(m["window"]), int(m["streams"]), int(m["repeat"]))


def parse_size(text):
    """A size in bytes: ``"64K"`` -> 65536; ``"256k"``, ``"1M"``, ``"4096"``, ``"2MB"``,
    ``"64KiB"`` likewise (K, M, G are powers of 1024, as for ``iperf -w``).

    Raises
    ------
    ValueError
        If ``text`` is not a positive whole number of bytes.
    """
    m = _SIZE.match(str(text))
    if m is None:
        raise ValueError(f"bad size {text!r}; use bytes or a number with K, M or G (1024-based)")
    value = float(m[1]) * SIZE_SUFFIXES[m[2].lower()]
    if value != int(value) or value <= 0:
        raise ValueError(f"bad size {text!r}: not a positive whole number of bytes")
    return int(value)


def sha256_of(path):
    """The sha256 of the file at ``path``, hexadecimal."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()
