"""``thruput.read``: one log file in, one contract Dataset out; ``read_many`` for a pile."""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path

from . import formats
from .contract import VARIABLES, validate
from .errors import ParseError

__all__ = ["read", "read_many", "read_bytes", "decode"]

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


#: The dimension along which logs of each kind are concatenated by :func:`read_many`.
RECORD_DIMS = {"throughput": "run", "rtt": "probe", "udp_sweep": "row",
               "latency_scan": "point", "tcp_instrumentation": "snapshot"}


def read_many(paths, format=None, *, workers=None, scheduler=None, client=None):
    """Read many logs of one format into one Dataset, their records concatenated.

    Runs (throughput), probes (rtt), rows, points or snapshots of every file follow each
    other along the kind's record dimension (``RECORD_DIMS``); ``file`` indexes the inputs,
    with ``file_path`` and ``file_sha256`` (file) and ``record_file`` (record dimension)
    saying which file each record came from. The line accounting adds up over all files.
    Formats with a batch parser (``parse_many``, e.g. iperf3 JSON) build the Dataset once,
    which is what makes ten thousand files cheap.

    Parameters
    ----------
    paths : sequence of path-like
        The logs, all of one format.
    format : str, optional
        A registry name; by default sniffed from the first file.

    workers, scheduler, client : optional
        Read the files in batches on a ``dask.distributed`` cluster (a LocalCluster of
        ``workers`` processes, the one at ``scheduler``, or ``client``'s), with the same
        result; see :func:`thruput.parallel.read_many`. Default: here.

    Raises
    ------
    thruput.errors.ThruputError
        As :func:`read`, naming the file that failed.
    """
    import xarray as xr

    if workers or scheduler or client:
        from .parallel import read_many as read_distributed

        return read_distributed(paths, format, workers=workers, scheduler=scheduler, client=client)

    paths = [str(p) for p in paths]
    if not paths:
        raise ParseError("no files to read")
    raws = [Path(p).read_bytes() for p in paths]
    hashes = [hashlib.sha256(raw).hexdigest() for raw in raws]
    datas = [_gunzip(raw, p) if raw[:2] == GZIP_MAGIC else raw for raw, p in zip(raws, paths)]
    name = format or formats.sniff(decode(datas[0][: formats.HEAD_BYTES]), paths[0])
    module = formats.get(name)
    dim = RECORD_DIMS[module.KIND]
    if hasattr(module, "parse_many"):
        ds = module.parse_many(datas if module.BINARY else [decode(d) for d in datas], names=paths)
        index = ds[f"{module.TOOL}_file"].values
        ds = ds.drop_vars(f"{module.TOOL}_file")
    else:
        parts, index = [], []
        for i, (data, path) in enumerate(zip(datas, paths)):
            one = read_bytes(data, format=name, path=path)
            parts.append(one)
            index += [i] * one.sizes[dim]
        ds = xr.concat(parts, dim=dim, data_vars="all", coords="minimal", compat="override", join="outer",
                       combine_attrs="drop_conflicts")
        for key in ("lines_total", "lines_parsed", "lines_skipped"):
            ds.attrs[key] = sum(int(p.attrs[key]) for p in parts)
        reasons = {}
        for p in parts:
            for reason, count in json.loads(p.attrs["skipped_reasons"]).items():
                reasons[reason] = reasons.get(reason, 0) + count
        ds.attrs["skipped_reasons"] = json.dumps(reasons, sort_keys=True)
        ds.attrs["truncated"] = int(any(int(p.attrs["truncated"]) for p in parts))
        ds.attrs["truncation"] = "; ".join(f"{p.attrs['source_path']}: {p.attrs['truncation']}"
                                          for p in parts if p.attrs["truncation"])
        ds.attrs["tool_summary"] = "{}"
        ds = ds.assign_coords({dim: range(ds.sizes[dim])})
        ds[dim].attrs = dict(zip(("units", "long_name"), VARIABLES[dim]))
    ds = ds.assign_coords(file=("file", range(len(paths)), _attrs("file")))
    ds["file_path"] = ("file", paths, _attrs("file_path"))
    ds["file_sha256"] = ("file", hashes, _attrs("file_sha256"))
    ds["record_file"] = (dim, index, _attrs("record_file"))
    ds.attrs["source_path"] = ""
    ds.attrs["source_sha256"] = ""
    return validate(ds)


def _attrs(name):
    units, long_name = VARIABLES[name]
    return {"units": units, "long_name": long_name}


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
