"""The one sha256 helper: of bytes, of a file read in blocks, and one fed piece by piece."""

from __future__ import annotations

import hashlib
import os
import stat

__all__ = ["sha256_bytes", "sha256_file", "sha256_hasher", "code_digest"]

#: Bytes read at a time when hashing a file.
BLOCK = 1 << 20


def sha256_bytes(data):
    """The sha256 of ``data`` (bytes), hexadecimal."""
    return hashlib.sha256(data).hexdigest()


def sha256_hasher():
    """A new sha256 to feed piece by piece (``update(bytes)``, ``hexdigest()``): for a
    file read once for several purposes, or a text hashed as it grows."""
    return hashlib.sha256()


def sha256_file(path, missing=None):
    """The sha256 of the file at ``path``, hexadecimal; ``missing`` if there is none
    (or it is not a regular file) and ``missing`` is not None, else the OSError."""
    h = sha256_hasher()
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):     # a FIFO would block, /dev/zero never end
            if missing is None:
                from .guard import check
                check(path)                             # the FileRefused that says what it is
            return missing
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(BLOCK), b""):
                h.update(block)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        if missing is None:
            raise
        return missing
    return h.hexdigest()


def code_digest():
    """The sha256 of thruput's own code as it runs: every file of the package (sorted by
    path, each path and its bytes), compiled caches and hidden files left out, as .dvcignore leaves them out of
    the pipeline's dependency ``src/thruput``. Stores that later runs
    append to (the rollups and alert stores) record it, and are built whole again when
    the code that built them is not the code running: a changed statistic must not be
    appended to tables computed the old way."""
    global _CODE
    if _CODE is None:
        from pathlib import Path

        root = Path(__file__).resolve().parent
        h = sha256_hasher()
        for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix not in (".pyc", ".pyo", ".part")
                           and not any(part.startswith(".") or part == "__pycache__"
                                       for part in p.relative_to(root).parts)):
            h.update(path.relative_to(root).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
        _CODE = h.hexdigest()
    return _CODE


_CODE: str | None = None
