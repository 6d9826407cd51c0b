"""The record of a Zarr store's raw files as last checked: ``<store>.verified``.

Per run, in the store's order: its id, raw file, start time (ns), and the file's size and
modification time (ns) when its sha256 was last found to be the stored one (-1: never
checked, or no file). With it an append hashes again only the files whose size or time
changed (:func:`thruput.campaign.store.verify_sources`), the way DVC and git decide what
to hash. It is a cache beside the store, not part of it nor of any DVC output: deleting
it only makes the next check hash every file.

The file is a header, then blocks of runs. An append adds one block holding its new runs
(:func:`append_verified`: a few kB) instead of writing every stored run's again (20 MB at
2 x 10^5 runs, 0.06-0.09 s of a 0.7 s append): what it costs follows what is appended,
not the archive. A block cut short (a write interrupted) ends the record at the block
before it; the record then names an older state of the store and is not used, and the
next write replaces the file whole (:func:`save_verified`, as after
:data:`MAX_BLOCKS` appends).

Layout (little-endian): :data:`MAGIC`, the raw directory (u32 length, UTF-8); then per
block ``b"B"``, the runs ``n`` (u64), the byte lengths of its run ids and its sources
(u64 each), how its strings are written (u8: 0 NUL-joined UTF-8, 1 a JSON list, for a
string holding a NUL), ``manifest_sha256`` (u32 length, ASCII), then ``time``, ``size``
and ``mtime`` (n int64 each), then the run ids and the sources. A length read from the
file is only ever compared with the bytes there are: none sizes an allocation.
"""

from __future__ import annotations

import json
import os
import struct
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["Verified", "Loaded", "verified_path", "load_verified", "save_verified", "append_verified", "forget_older_name",
           "MAX_BLOCKS", "PER_RUN"]

#: The file's first bytes (the format's version is its last digit).
MAGIC = b"thruput verified record 1\n"
_DIRECTORY = struct.Struct("<I")
_BLOCK = struct.Struct("<cQQQBI")      # b"B", runs, run-id bytes, source bytes, strings, sha bytes
#: Blocks a record may hold before the next write replaces it whole (one block): loading
#: stays one read and a few joins however many appends a monitor campaign has had.
MAX_BLOCKS = 256
_NUMBERS = ("time", "size", "mtime")
#: The per-run fields of a :class:`Verified`, in its order.
PER_RUN = ("run", "source", *_NUMBERS)


class Verified(NamedTuple):
    """The record of a store (see the module): per run, in the store's order, ``run``,
    ``source`` (object arrays of str), ``time``, ``size``, ``mtime`` (int64: ns, bytes,
    ns; -1 for never checked or no file).

    It belongs to the store whose ``manifest_sha256`` it names: the store's runs, files and
    order follow from those runs.csv rows alone (sorted by start time, ties in row order),
    so a store that names the same rows holds these runs in this order. ``on_disk``:
    ``(bytes, blocks)`` of the file it was loaded from, None if it was not loaded.
    """

    manifest_sha256: str
    run: np.ndarray
    source: np.ndarray
    time: np.ndarray
    size: np.ndarray
    mtime: np.ndarray
    on_disk: tuple | None = None

    def matches(self, stored):
        """True if this records the store ``stored`` (its attrs and run count)."""
        return (self.manifest_sha256 == stored.attrs.get("manifest_sha256")
                and len(self.time) == stored.sizes.get("run", 0))


class Loaded:
    """A :class:`Verified` as :func:`load_verified` read it, used in its stead: its numbers
    at once, its strings (``run``, ``source``) made when first asked for (2 x 10^5 of each
    take 0.03-0.04 s), and meanwhile :meth:`joined_sources`, the sources as the file holds
    them, for a stat of the files that begins first
    (:func:`thruput.campaign.store.stat_ahead`)."""

    def __init__(self, manifest_sha256, numbers, strings, on_disk):
        self.manifest_sha256, self.on_disk = manifest_sha256, on_disk
        self.time, self.size, self.mtime = numbers
        self._strings = strings         # (per field, per block: (bytes, runs) or an array: _strings)

    matches = Verified.matches

    @cached_property
    def run(self):
        return _joined(self._strings["run"])

    @cached_property
    def source(self):
        return _joined(self._strings["source"])

    def joined_sources(self):
        """The sources NUL-joined as ASCII bytes (one per run, as the file holds them), or
        None if any block holds them otherwise (a JSON list, a non-ASCII path)."""
        return self._joined_bytes("source")

    def joined_runs(self):
        """The run ids as :meth:`joined_sources` gives the sources."""
        return self._joined_bytes("run")

    def _joined_bytes(self, field):
        parts = self._strings[field]
        if not all(isinstance(p, tuple) for p in parts):
            return None
        return b"\0".join(data for data, n in parts if n)

    def named(self):
        """True if every run has a raw file (told from the file's bytes: no string made),
        else ``source != ""``, per run."""
        for part in self._strings["source"]:
            if not isinstance(part, tuple):
                return self.source != ""
            data, n = part
            if n and (not data or data[:1] == b"\0" or data[-1:] == b"\0" or b"\0\0" in data):
                return self.source != ""
        return True

    def same_runs(self, other):
        """True if ``other`` is this record, or a :meth:`_replace` of it (the same strings)."""
        return isinstance(other, Loaded) and other._strings is self._strings

    def verified(self):
        """The :class:`Verified` record (every string made)."""
        return Verified(self.manifest_sha256, self.run, self.source, self.time, self.size, self.mtime,
                        self.on_disk)

    def _replace(self, **fields):
        """:meth:`Verified._replace` of :meth:`verified`; a :class:`Loaded` sharing these
        strings (those made, and the bytes of the others) if only numbers (``time``,
        ``size``, ``mtime``) change."""
        if not set(fields) <= set(_NUMBERS):
            return self.verified()._replace(**fields)
        out = Loaded(self.manifest_sha256, [fields.get(k, getattr(self, k)) for k in _NUMBERS],
                     self._strings, self.on_disk)
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k in ("run", "source")})
        return out


def verified_path(out):
    """The record of the store at ``out``: ``<store>.verified`` beside it."""
    out = Path(out)
    return out.with_name(out.name + ".verified")


def load_verified(path, directory):
    """The record at ``path`` (a :class:`Loaded`: its strings made when first used), or
    None if there is none, it is unreadable or it was written for another raw directory.
    Blocks after one cut short (or whose strings are not as many as its runs, or not
    UTF-8) are not read (see the module)."""
    try:
        raw = Path(path).read_bytes()
    except OSError:
        return None
    if not raw.startswith(MAGIC) or len(raw) < len(MAGIC) + _DIRECTORY.size:
        return None
    pos = len(MAGIC) + _DIRECTORY.size
    (length,) = _DIRECTORY.unpack_from(raw, len(MAGIC))
    if length > len(raw) - pos:
        return None
    try:
        if raw[pos:pos + length].decode("utf-8", "surrogatepass") != _directory(directory):
            return None
    except UnicodeDecodeError:
        return None
    pos += length
    blocks, end = [], pos
    while True:
        block = _read_block(raw, pos)
        if block is None:
            break
        blocks.append(block[0])
        pos = end = block[1]
    if not blocks:
        return None
    numbers = [np.concatenate([b[k] for b in blocks]) for k in _NUMBERS]
    strings = {k: [b[k] for b in blocks] for k in ("run", "source")}
    return Loaded(blocks[-1]["manifest_sha256"], numbers, strings, (end, len(blocks)))


def _read_block(raw, pos):
    """``(fields, end)`` of the block at ``pos`` of ``raw``, or None if there is no whole
    valid block there."""
    if len(raw) - pos < _BLOCK.size:
        return None
    mark, n, run_bytes, source_bytes, how, sha_bytes = _BLOCK.unpack_from(raw, pos)
    pos += _BLOCK.size
    left = len(raw) - pos
    # (each length is checked against the bytes left before it is used)
    if mark != b"B" or how not in (0, 1) or n > left // 24 or sha_bytes > left - 24 * n:
        return None
    if run_bytes > left - 24 * n - sha_bytes or source_bytes > left - 24 * n - sha_bytes - run_bytes:
        return None
    try:
        sha = raw[pos:pos + sha_bytes].decode("ascii")
        pos += sha_bytes
        numbers = np.frombuffer(raw, dtype="<i8", count=3 * n, offset=pos).reshape(3, n).astype(np.int64)
        pos += 24 * n
        run = _strings(raw[pos:pos + run_bytes], n, how)
        pos += run_bytes
        source = _strings(raw[pos:pos + source_bytes], n, how)
        pos += source_bytes
    except (UnicodeDecodeError, ValueError):
        return None
    if run is None or source is None:
        return None
    return dict(manifest_sha256=sha, run=run, source=source, **dict(zip(_NUMBERS, numbers))), pos


def _strings(data, n, how):
    """The ``n`` strings ``data`` holds (written ``how``: :func:`_pack`), or None if it
    does not hold ``n`` valid ones: NUL-joined ASCII as ``(data, n)``, made into
    strings only when used (:func:`_joined`); otherwise their object array."""
    if how == 0 and data.isascii():
        return (data, n) if not n or data.count(b"\0") == n - 1 else None
    if how == 1:
        values = json.loads(data.decode("ascii"))
        if not isinstance(values, list) or len(values) != n or not all(isinstance(v, str) for v in values):
            return None
    else:
        values = data.decode("utf-8", "surrogatepass").split("\0") if n else []
        if len(values) != n:
            return None
    return _objects(values)


def _joined(parts):
    """The object array of the strings of every block (``parts``, as :func:`_strings`
    gives them)."""
    arrays = [_strings_now(*p) if isinstance(p, tuple) else p for p in parts]
    return np.concatenate(arrays) if arrays else np.empty(0, dtype=object)


def _strings_now(data, n):
    """The object array of the ``n`` strings of NUL-joined ASCII ``data``."""
    return _objects(data.decode("ascii").split("\0") if n else [])


def _objects(values):
    """``values`` (a list of str) as a 1-d object array (``np.array`` could make it 2-d)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _pack(*columns):
    """``(bytes of each column, how)``: each column of strings NUL-joined in UTF-8 (0), or
    every one as a JSON list (1) when a string holds a NUL (run ids and relative paths
    never do)."""
    columns = [c.tolist() if isinstance(c, np.ndarray) else list(c) for c in columns]
    try:
        texts = ["\0".join(c) for c in columns]
    except TypeError:                   # (not all str: converted only then)
        columns = [[str(s) for s in c] for c in columns]
        texts = ["\0".join(c) for c in columns]
    if all(t.count("\0") == max(len(c) - 1, 0) for t, c in zip(texts, columns)):
        return [t.encode("utf-8", "surrogatepass") for t in texts], 0
    return [json.dumps(c).encode("ascii") for c in columns], 1


def _block(verified, manifest_sha256):
    """The bytes of a block holding every run of ``verified``."""
    n = len(verified.run)
    (runs, sources), how = _pack(verified.run, verified.source)
    sha = str(manifest_sha256).encode("ascii")
    numbers = np.stack([np.asarray(getattr(verified, k), dtype="<i8").reshape(n) for k in _NUMBERS])
    return b"".join([_BLOCK.pack(b"B", n, len(runs), len(sources), how, len(sha)), sha,
                     numbers.tobytes(), runs, sources])


def _directory(directory):
    return str(Path(directory).resolve())


def save_verified(path, directory, verified):
    """Write ``verified`` (:class:`Verified`) to ``path`` as one block, replacing the
    file (atomically)."""
    path = Path(path)
    name = _directory(directory).encode("utf-8", "surrogatepass")
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(b"".join([MAGIC, _DIRECTORY.pack(len(name)), name,
                              _block(verified, verified.manifest_sha256)]))
    os.replace(tmp, path)
    forget_older_name(path)


def forget_older_name(path):
    """Remove the record of ``path`` left under its older name (``<store>.verified.npz``,
    read and written whole before the record was added to), if there is one."""
    Path(path).with_name(Path(path).name + ".npz").unlink(missing_ok=True)


def append_verified(path, before, added, manifest_sha256):
    """Add the runs of ``added`` (:class:`Verified`) after those of ``before`` (the record
    as :func:`load_verified` read it from ``path``), the whole naming ``manifest_sha256``.
    False, and nothing written, if the file is no longer what ``before`` was read from
    (or ends in a block cut short), or holds :data:`MAX_BLOCKS` blocks already: the
    caller then writes the whole record (:func:`save_verified`)."""
    if before is None or before.on_disk is None or before.on_disk[1] >= MAX_BLOCKS:
        return False
    block = _block(added, manifest_sha256)
    try:
        with open(path, "r+b") as f:
            if os.fstat(f.fileno()).st_size != before.on_disk[0]:
                return False
            f.seek(0, os.SEEK_END)
            f.write(block)
    except OSError:
        return False
    return True
