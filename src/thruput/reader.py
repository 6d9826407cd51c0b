"""``thruput.read``: one log file in, one contract Dataset out."""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path

from . import formats
from .contract import validate
from .errors import ParseError

__all__ = ["read", "read_bytes", "decode"]

GZIP_MAGIC = b"\x1f\x8b"


def read(path, format=None):
    """Read one raw log into an :class:`xarray.Dataset` that follows :mod:`thruput.contract`.

    Parameters
    ----------
    path : str or path-like
        The log file; gzip-compressed files are decompressed transparently.
    format : str, optional
        A name from :data:`thruput.formats.REGISTRY`; by default the content is sniffed.

    Returns
    -------
    xarray.Dataset
        With ``attrs["source_path"]`` and ``attrs["source_sha256"]`` (of the file as
        stored) set.

    Raises
    ------
    thruput.errors.ThruputError
        ``ParseError`` naming file and line, ``UnknownFormatError`` or
        ``AmbiguousFormatError`` listing the formats.
    """
    path = Path(path)
    raw = path.read_bytes()
    return read_bytes(raw, format=format, path=str(path))


def read_bytes(raw, format=None, path="<bytes>"):
    """Like :func:`read`, for the bytes of a file already in memory."""
    sha256 = hashlib.sha256(raw).hexdigest()
    data = _gunzip(raw, path) if raw[:2] == GZIP_MAGIC else raw
    head = decode(data[: formats.HEAD_BYTES])
    name = format or formats.sniff(head, path)
    module = formats.get(name)
    try:
        ds = module.parse(data if module.BINARY else decode(data))
    except ParseError as exc:
        raise exc.with_path(path) from None
    ds.attrs["source_path"] = path
    ds.attrs["source_sha256"] = sha256
    return validate(ds)


def _gunzip(raw, path):
    """Decompress every gzip member of ``raw``.

    A stream cut off mid-way yields the bytes that were complete (the format's parser then
    reports the truncation) instead of ``EOFError``; corrupt data is a ParseError.
    """
    out = []
    while raw[:2] == GZIP_MAGIC:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            out.append(inflater.decompress(raw))
            out.append(inflater.flush())
        except zlib.error as exc:
            raise ParseError(f"corrupt gzip data: {exc}", path=path) from None
        raw = inflater.unused_data
    return b"".join(out)


def decode(data):
    """Bytes to text: UTF-8 (BOM dropped), else Latin-1; CRLF and CR become LF."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    if "\r" not in text:  # the usual case: no pass over (and copy of) a large text
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")
