"""The one sha256 helper: of bytes, of a file read in blocks, and one fed piece by piece."""

from __future__ import annotations

import hashlib
import os
import stat

__all__ = ["sha256_bytes", "sha256_file", "sha256_hasher"]

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
