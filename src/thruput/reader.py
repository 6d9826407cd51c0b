"""``thruput.read``: one log file in, one contract Dataset out; ``read_many`` for a pile."""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import stat
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    import xarray as xr

from . import formats, guard
from .formats import _prefix
from .contract import VARIABLES, lenient as _lenient, validate
from .errors import ParseError, ReaderBug, ThruputError
from .hashing import sha256_bytes, sha256_hasher

__all__ = ["read", "read_many", "read_bytes", "decode"]

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = codecs.BOM_UTF8
#: Files larger than this are streamed where the format can take its text in pieces
#: (``parse_chunks``: ping), so that memory is bounded by a constant plus the output.
STREAM_BYTES = 64 * 2**20
#: The pieces of a streamed file (cut after a newline).
CHUNK_BYTES = 4 * 2**20
#: The longest line a streamed log may have (bytes): a longer one is cut to this much
#: and a note (no reader takes it for a record), never held whole.
STREAM_LINE_BYTES = 64 * 2**10
#: How much of a streamed log's beginning the format sees whole (its header and more).
STREAM_HEAD_CHARS = 65536
#: The largest log (bytes, gzip undone) a format without a streaming reader reads whole:
#: its text, lines and arrays take many times the file, and the peak resident set must
#: stay under 1 GB (measured on a valid log at each limit by ``python -m benchmarks.hostile
#: --at-limit``: 406 to 888 MB, see the README). A larger log is refused with a ParseError
#: naming the file and the limit (split it, one run per file).
WHOLE_BYTES = 32 * 2**20
#: Formats whose whole read costs more (iperf 2 CSV: 45 times the file) or less (iperf3 -J,
#: irtt and flent JSON, binary snaplogs: 5 to 8 times; ping with a wrapper prefix) per byte.
WHOLE_BYTES_BY_FORMAT = {"iperf2_csv": 16 * 2**20, "iperf3_json": 96 * 2**20, "irtt": 96 * 2**20,
                         "flent": 96 * 2**20, "web100_snaplog": 96 * 2**20, "ping": 128 * 2**20}
#: gzip data is refused past this many bytes decompressed when read whole (a 25 MB gzip
#: of zeros expands to 5.5 GB), and, when streamed, past this expansion factor once it is
#: past :data:`STREAM_BYTES` (logs compress 5 to 30 times; a gzip bomb some 1000 times).
GUNZIP_BYTES = 128 * 2**20
GUNZIP_RATIO = 200
#: Output bytes per step of a whole-file gunzip: each step copies the input not yet
#: consumed, so the steps must be few (a small piece made the read quadratic in the file).
GUNZIP_PIECE = 4 * 2**20


def read(path: str | os.PathLike[str], format: str | None = None, lenient: bool | None = None, *,
         tz: str | None = None, year: int | None = None) -> xr.Dataset:
    """Read one raw log into an :class:`xarray.Dataset` that follows :mod:`thruput.contract`.

    Parameters
    ----------
    path : str or path-like
        The log file; gzip-compressed files are decompressed transparently.
    format : str, optional
        A name from :data:`thruput.formats.REGISTRY`; by default the content is sniffed.
    lenient : bool, optional
        For messy archives: lines the reader does not recognise are counted as skipped
        (reason ``"unrecognised line"``) instead of failing the file (see
        :func:`thruput.contract.lenient`). Default: strict (or the enclosing context).
    tz : str, optional
        Where the file's lines carry a timestamping wrapper's prefix without a time zone
        (``[2024-05-27 15:17:01.317910] ...``, moreutils ``ts``), the IANA zone they were
        written in. By default UTC, or the offset a wrapper ``Start time:`` line (epoch
        ms) shows. See :mod:`thruput.formats._prefix`.
    year : int, optional
        The year of year-less prefixes (``ts``' default ``Nov 22 15:17:01``) when no
        wrapper ``Start time:`` line tells it.

    Returns
    -------
    xarray.Dataset
        With ``attrs["source_path"]`` and ``attrs["source_sha256"]`` (of the file as
        stored) set. A wrapped file's Dataset has ``attrs["line_prefix"]`` (the style
        found), its times as data (probe ``timestamp``, run ``start_time`` where the tool
        printed none) and its line numbers, ``line`` and ``run_line`` included, are those
        of the file as stored; wrapper-added lines are skipped as ``wrapper line: ...``.

    Raises
    ------
    thruput.errors.ThruputError
        ``ParseError`` naming file and line, ``UnknownFormatError`` or
        ``AmbiguousFormatError`` listing the formats; ``FileRefused`` for a path that is
        missing or not a regular file (a FIFO, a device, a folder) or past
        ``thruput.guard.LIMITS["log"]`` (:mod:`thruput.guard`), before a byte is read.
    """
    path = Path(path)
    size = guard.check(path, "log").st_size        # a regular file, under its limit
    if size > STREAM_BYTES:
        with _lenient(lenient):
            ds, name = _read_streaming(path, format)
        if ds is not None:
            return ds
        if name:
            _check_size(size, whole_limit(name), f"{name} logs", str(path))
        else:
            _check_size(size, max([WHOLE_BYTES, *WHOLE_BYTES_BY_FORMAT.values()]), "logs", str(path))
    raw = guard.read_bytes(path, "log", limit=max([WHOLE_BYTES, *WHOLE_BYTES_BY_FORMAT.values()]))
    return read_bytes(raw, format=format, path=str(path), lenient=lenient, tz=tz, year=year)


#: What a reader may raise by a bug of its own on odd bytes (int() of 5,000 digits, a key
#: missing from a damaged row, int(inf)): turned into a :class:`ReaderBug`.
_BUGS = (ArithmeticError, LookupError, ValueError, TypeError, AttributeError, RecursionError,
         MemoryError)


@contextlib.contextmanager
def reader_bugs(name, path):
    """Any exception but a ThruputError escaping reader ``name`` on ``path`` becomes a
    :class:`~thruput.errors.ReaderBug` naming the file and where the reader failed."""
    try:
        yield
    except ThruputError:
        raise
    except _BUGS as exc:
        import traceback

        where = traceback.extract_tb(exc.__traceback__)[-1]
        if isinstance(exc, RecursionError) and Path(where.filename).parts[-2:] == ("json", "decoder.py"):
            # the json module's own bound on nesting (the readers' documents nest a few levels)
            raise ParseError("not valid JSON: nested deeper than Python's recursion limit",
                             path=str(path)) from None
        raise ReaderBug(f"the {name} reader failed on this file ({type(exc).__name__}: {str(exc)[:200]} at "
                        f"{Path(where.filename).name}:{where.lineno}): a bug in thruput, please report it "
                        "with the file", path=str(path)) from exc


def whole_limit(name):
    """The largest log (bytes) format ``name`` reads whole (:data:`WHOLE_BYTES`)."""
    return WHOLE_BYTES_BY_FORMAT.get(name, WHOLE_BYTES)


def _check_size(size, limit, what, path):
    if size > limit:
        raise ParseError(f"{size / 2**20:.0f} MB: past the {limit / 2**20:.0f} MB limit for reading "
                         f"{what} whole (thruput.reader.WHOLE_BYTES); split the log", path=path)


def read_bytes(raw: bytes, format: str | None = None, path: str = "<bytes>", lenient: bool | None = None, *,
               tz: str | None = None, year: int | None = None) -> xr.Dataset:
    """Like :func:`read`, for the bytes of a file already in memory."""
    sha256 = sha256_bytes(raw)
    data = _gunzip(raw, path) if raw[:2] == GZIP_MAGIC else raw
    head = decode(data[: formats.HEAD_BYTES])
    name, style = formats.sniff_wrapped(head, path, format)
    _check_size(len(data), whole_limit(name), f"{name} logs", path)
    module = formats.get(name)
    stripped = None
    try:
        with _lenient(lenient), reader_bugs(name, path):
            if module.BINARY:
                ds = module.parse(data)
            else:
                text = decode(data)
                if style:
                    stripped = _prefix.strip(text, style, tz=tz, year=year)
                    text = stripped.text
                ds = module.parse(text)
    except ParseError as exc:
        if stripped is not None:
            exc = _prefix.shift_error(exc, stripped)
        raise exc.with_path(path) from None
    if stripped is not None:
        _prefix.apply_times(_prefix.account(ds, stripped), stripped)
    ds.attrs["source_path"] = path
    ds.attrs["source_sha256"] = sha256
    return validate(ds)


#: The dimension along which logs of each kind are concatenated by :func:`read_many`.
RECORD_DIMS = {"throughput": "run", "rtt": "probe", "udp_sweep": "row",
               "latency_scan": "point", "tcp_instrumentation": "snapshot"}


def file_bytes(path, limit=None):
    """The bytes of the file at ``path`` (a str: no Path built per file), or None if it
    is larger than ``limit`` bytes. One open, one ``fstat`` and, for a regular file, one
    read of its size and a byte more: as many bytes as ``fstat`` said is its end (read on
    to the end if it grew, or where a read comes back short); no Python file object.
    6-7 us a file from the page cache, against 11-14 us for ``open(path, "rb").read()``
    (which reads once more to find the end). Anything but a regular file (a FIFO, a
    device, a folder) or a missing one is a :class:`~thruput.errors.FileRefused`
    (:func:`thruput.guard.open_fd`)."""
    fd, st = guard.open_fd(path, "log")     # regular (never blocking on a FIFO), under its limit
    try:
        if limit is not None and st.st_size > limit:
            return None
        regular = stat.S_ISREG(st.st_mode)
        try:
            data = os.read(fd, st.st_size + 1 if regular else _READ_BYTES)
            if regular and len(data) == st.st_size:
                return data
            parts = [data]
            while parts[-1]:
                parts.append(os.read(fd, _READ_BYTES))
        except OSError as exc:          # (a folder, say): named, as open() names it
            raise type(exc)(exc.errno, exc.strerror, os.fspath(path)) from None
        return b"".join(parts)
    finally:
        os.close(fd)


#: Bytes asked of each further read of a file that is not regular, grew, or came back short.
_READ_BYTES = 1 << 20


def read_many(paths: Iterable[str | os.PathLike[str]], format: str | None = None, *, workers: int | None = None,
              scheduler: str | None = None, client: Any = None) -> xr.Dataset:
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
        result (:func:`_read_many_on_cluster`). Default: here.

    Raises
    ------
    thruput.errors.ThruputError
        As :func:`read`, naming the file that failed.
    """
    import xarray as xr

    if workers or scheduler or client:
        return _read_many_on_cluster(paths, format, workers=workers, scheduler=scheduler, client=client)

    paths = [str(p) for p in paths]
    if not paths:
        raise ParseError("no files to read")
    hashes, datas, name = read_pile(paths, format)
    module = formats.get(name)
    if module.KIND not in RECORD_DIMS:   # (routes: one Dataset a traced route, read each)
        raise ThruputError(f"{paths[0]}: {name} files hold {module.KIND}s, which read_many does not "
                           "concatenate; read each with thruput.read")
    dim = RECORD_DIMS[module.KIND]
    if hasattr(module, "parse_many"):
        with reader_bugs(name, paths[0] if len(paths) == 1 else f"{len(paths)} files ({paths[0]}, ...)"):
            ds = module.parse_many(datas if module.BINARY else [decode(d) for d in datas], names=paths)
        index = ds[f"{module.TOOL}_file"].values
        ds = ds.drop_vars(f"{module.TOOL}_file")
    else:
        parts, index = [], []
        for i, (data, path) in enumerate(zip(datas, paths)):
            one = read_bytes(data, format=name, path=str(path))
            parts.append(one)
            index += [i] * one.sizes[dim]
        ds = xr.concat(parts, dim=dim, data_vars="all", coords="minimal", compat="override", join="outer",
                       combine_attrs="drop_conflicts")
        ds.attrs.update(added_ledgers(parts))
        ds.attrs["truncation"] = "; ".join(f"{p.attrs['source_path']}: {p.attrs['truncation']}"
                                          for p in parts if p.attrs["truncation"])
        ds.attrs["tool_summary"] = "{}"
        checks = [{**c, "check": f"{p.attrs['source_path']}: {c['check']}"}
                  for p in parts for c in json.loads(p.attrs["consistency"])]
        ds.attrs["consistency"] = json.dumps(checks, sort_keys=True)
        ds.attrs["consistent"] = int(all(c["ok"] for c in checks))
        ds = ds.assign_coords({dim: range(ds.sizes[dim])})
        ds[dim].attrs = dict(zip(("units", "long_name"), VARIABLES[dim]))
    ds = ds.assign_coords(file=("file", range(len(paths)), _attrs("file")))
    ds["file_path"] = ("file", paths, _attrs("file_path"))
    ds["file_sha256"] = ("file", hashes, _attrs("file_sha256"))
    ds["record_file"] = (dim, index, _attrs("record_file"))
    ds.attrs["source_path"] = ""
    ds.attrs["source_sha256"] = ""
    return validate(ds)


def read_pile(paths, format=None):
    """The files ``paths`` (str) as :func:`read_many` reads them, before parsing: ``(their
    sha256, their bytes with gzip undone, the format)``, the format ``format`` or, by
    default, the one sniffed from the first file (through any timestamping wrapper:
    :func:`thruput.formats.sniff_wrapped`)."""
    raws = [file_bytes(p) for p in paths]
    hashes = [sha256_bytes(raw) for raw in raws]
    datas = [_gunzip(raw, p) if raw[:2] == GZIP_MAGIC else raw for raw, p in zip(raws, paths)]
    name = format or formats.sniff_wrapped(decode(datas[0][: formats.HEAD_BYTES]), paths[0])[0]
    return hashes, datas, name


def _read_streaming(path, format=None):
    """Read a large file piece by piece (:data:`CHUNK_BYTES`): ``(Dataset, format)``, or
    ``(None, format)`` where it cannot be (``format`` None for an empty file).

    Two passes over the file, neither holding it whole: the first computes the sha256,
    counts the lines and checks the encoding (UTF-8, else Latin-1, as :func:`decode`), the
    second hands the decoded pieces to the format's ``parse_chunks``. gzip files are
    decompressed on the way (in both passes; past :data:`GUNZIP_RATIO` times their size,
    refused), CRLF and CR line ends become LF as in :func:`decode`. The Dataset is the one
    :func:`read_bytes` gives. None (the caller reads the file whole, up to
    :data:`WHOLE_BYTES`) for wrapped files (:mod:`thruput.formats._prefix`), formats
    without ``parse_chunks`` and logs whose run header is not in the first piece.
    """
    gz = False
    with open(path, "rb") as f:
        first = f.read(formats.HEAD_BYTES)
        if first[:2] == GZIP_MAGIC:
            gz = True
            f.seek(0)
            first = b""
            for _, block in _blocks(f, True, str(path)):
                first += block
                if len(first) >= formats.HEAD_BYTES:
                    break
            first = first[: formats.HEAD_BYTES]
    if not first:
        return None, None
    name, style = formats.sniff_wrapped(decode(first), str(path), format)
    module = formats.get(name)
    if style or not hasattr(module, "parse_chunks"):
        return None, name
    facts = _file_facts(path, gz)
    encoding = "utf-8" if facts["utf8"] else "latin-1"
    pieces = _pieces(path, encoding, gz)
    piece = next(pieces, None)
    head = piece[:STREAM_HEAD_CHARS] if piece is not None else None
    if head is None or not module.SNIFF.search(head[: STREAM_HEAD_CHARS - formats.HEAD_BYTES]):
        return None, name
    n_lines = facts["newlines"] + (0 if facts["last"] in (b"\n", b"\r") else 1)
    chunks = _chain(piece, pieces)
    del piece
    try:
        with reader_bugs(name, str(path)):
            ds = module.parse_chunks(chunks, head=head, tail=facts["tail"][-module.TAIL_CHARS:],
                                     n_lines=n_lines)
    except ParseError as exc:
        raise exc.with_path(str(path)) from None
    ds.attrs["source_path"] = str(path)
    ds.attrs["source_sha256"] = facts["sha256"]
    return validate(ds), name


def _chain(first, rest):
    yield first
    yield from rest


def _blocks(f, gz, path):
    """``(bytes as stored, bytes as read)`` of the open file ``f`` in :data:`CHUNK_BYTES`
    reads, gzip members decompressed (each output block at most :data:`CHUNK_BYTES`);
    past :data:`GUNZIP_RATIO` times the bytes stored (and :data:`STREAM_BYTES`), a
    ParseError: a gzip bomb is refused, not expanded."""
    if not gz:
        while block := f.read(CHUNK_BYTES):
            yield block, block
        return
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    stored = expanded = 0
    while raw := f.read(CHUNK_BYTES):
        stored += len(raw)
        data = raw
        try:
            while data:
                if inflater.eof:
                    if data[:2] != GZIP_MAGIC:   # bytes after the last member: ignored
                        break
                    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
                chunk = inflater.decompress(data, CHUNK_BYTES)
                expanded += len(chunk)
                if expanded > max(STREAM_BYTES, GUNZIP_RATIO * stored):
                    raise ParseError(f"gzip data expands more than {GUNZIP_RATIO} times "
                                     "(thruput.reader.GUNZIP_RATIO): refused", path=path)
                data = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
                yield raw, chunk
                raw = b""
        except zlib.error as exc:
            raise ParseError(f"corrupt gzip data: {exc}", path=path) from None
        if raw:
            yield raw, b""


def _file_facts(path, gz=False):
    """sha256 (of the file as stored), and of its content: line count (LF, CRLF or CR
    ends), valid UTF-8, last byte and the decoded tail, in one pass of
    :data:`CHUNK_BYTES` reads."""
    sha, newlines, last = sha256_hasher(), 0, b""
    utf8 = codecs.getincrementaldecoder("utf-8")()
    valid = True
    tail = b""
    with open(path, "rb") as f:
        for raw, block in _blocks(f, gz, str(path)):
            sha.update(raw)
            if not block:
                continue
            # lines as decode() makes them: every LF, and every CR not before an LF
            newlines += block.count(b"\n") + block.count(b"\r") - block.count(b"\r\n")
            if last == b"\r" and block[:1] == b"\n":
                newlines -= 1
            if valid:
                try:
                    utf8.decode(block)
                except UnicodeDecodeError:
                    valid = False
            last = block[-1:]
            tail = (tail + block[-4 * 2048:])[-4 * 2048:]
        if valid:
            try:
                utf8.decode(b"", final=True)
            except UnicodeDecodeError:
                valid = False
    tail = tail.decode("utf-8" if valid else "latin-1", errors="ignore")
    return {"sha256": sha.hexdigest(), "newlines": newlines, "utf8": valid,
            "last": last, "tail": tail.replace("\r\n", "\n").replace("\r", "\n")}


def _pieces(path, encoding, gz=False):
    """The text of ``path`` in pieces of about :data:`CHUNK_BYTES`, each cut after a
    line end (the last one as it ends), decoded as :func:`decode` does (BOM dropped,
    CRLF and CR to LF; a CR at the end of a piece waits for the next, which may start
    with its LF)."""
    carry = b""
    dropped = 0         # bytes of an over-long line left out so far
    first = True
    with open(path, "rb") as f:
        for _, block in _blocks(f, gz, str(path)):
            if not block:
                continue
            if first and encoding == "utf-8" and block.startswith(UTF8_BOM):
                block = block[len(UTF8_BOM):]
            first = False
            if dropped:     # inside a line past STREAM_LINE_BYTES: drop up to its end
                end = min((i for i in (block.find(b"\n"), block.find(b"\r")) if i >= 0), default=-1)
                if end < 0:
                    dropped += len(block)
                    continue
                carry, dropped, block = _cut_line(carry, dropped + end, encoding), 0, block[end:]
            block = carry + block
            cut = max(block.rfind(b"\n"), block.rfind(b"\r", 0, len(block) - 1)) + 1
            if cut == 0:
                carry = block
                if len(carry) > STREAM_LINE_BYTES:      # never held whole (a 400 MB line)
                    carry, dropped = carry[:STREAM_LINE_BYTES], len(carry) - STREAM_LINE_BYTES
                continue
            carry = block[cut:]
            if len(carry) > STREAM_LINE_BYTES:
                carry, dropped = carry[:STREAM_LINE_BYTES], len(carry) - STREAM_LINE_BYTES
            yield _lf(block[:cut].decode(encoding))
            del block
    if dropped:
        carry = _cut_line(carry, dropped, encoding)
    if carry:
        yield _lf(carry.decode(encoding))


def _cut_line(kept, dropped, encoding):
    """The bytes a streamed line past :data:`STREAM_LINE_BYTES` becomes: its beginning
    (whole characters) and a note of the bytes left out, without its line end, which no
    reader takes for a record: an unrecognised line, refused or skipped with its number."""
    head = kept.decode(encoding, errors="ignore").encode(encoding)
    return head + (f" ... [{dropped:,} more bytes of this line not read: past "
                   "thruput.reader.STREAM_LINE_BYTES]").encode(encoding)


def _lf(text):
    return text if "\r" not in text else text.replace("\r\n", "\n").replace("\r", "\n")


#: The line accounting attrs that add up over the files of a joined Dataset.
LEDGER_TOTALS = ("lines_total", "lines_parsed", "lines_skipped")


def added_ledgers(parts):
    """The line accounting of Datasets read from several files, added up: the totals, the
    skipped lines by reason, and ``truncated`` when any part was."""
    attrs = {key: sum(int(p.attrs[key]) for p in parts) for key in LEDGER_TOTALS}
    reasons = {}
    for p in parts:
        for reason, count in json.loads(p.attrs["skipped_reasons"]).items():
            reasons[reason] = reasons.get(reason, 0) + count
    attrs["skipped_reasons"] = json.dumps(reasons, sort_keys=True)
    attrs["truncated"] = int(any(int(p.attrs["truncated"]) for p in parts))
    return attrs


def _attrs(name):
    units, long_name = VARIABLES[name]
    return {"units": units, "long_name": long_name}


def _gunzip(raw, path, limit=None):
    """Decompress every gzip member of ``raw``, at most ``limit`` bytes (default
    :data:`GUNZIP_BYTES`): past it, a ParseError (a gzip bomb is refused, not expanded).

    A stream cut off mid-way yields the bytes that were complete (the format's parser then
    reports the truncation) instead of ``EOFError``; corrupt data is a ParseError.
    """
    limit = GUNZIP_BYTES if limit is None else limit
    out, total = [], 0
    while raw[:2] == GZIP_MAGIC:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            data = raw
            while data:         # in pieces: no buffer grown (and copied) past the limit
                out.append(inflater.decompress(data, GUNZIP_PIECE))
                total += len(out[-1])
                if total > limit:
                    raise ParseError(f"gzip data expands past {limit / 2**20:.0f} MB "
                                     "(thruput.reader.GUNZIP_BYTES): refused", path=path)
                data = inflater.unconsumed_tail
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


# -- read_many on a dask cluster ------------------------------------------------------------

#: Files per batch of :func:`read_many`: large enough that a batch parser (iperf3 JSON's
#: ``parse_many``) keeps its speed, small enough to spread a few thousand files.
FILES_PER_BATCH = 256
#: Padding of integer variables past the end of a shorter stream/interval axis, as the
#: readers write it: -1 for the contract's "none" (line, seq, ttl), else 0 (format flags
#: such as iperf3_interval_omitted).
INT_PADDING = {"line": -1, "seq": -1, "ttl": -1}


def _read_batch(format, paths):
    return read_many(paths, format=format)


def _read_many_on_cluster(paths, format=None, *, workers=None, scheduler=None, client=None):
    """:func:`read_many` with the files read in batches on a dask cluster
    (:func:`thruput.parallel.map_batches`).

    Batches of :data:`FILES_PER_BATCH` files are read by ``thruput.read_many`` on the
    workers and joined here so that the result is the one ``thruput.read_many(paths)``
    gives in one process, bit for bit: records renumbered, ``record_file`` offset,
    padding (NaN, NaT, ``""``, :data:`INT_PADDING`) out to the widest batch, line
    accounting and consistency checks added up.
    """
    import json

    import numpy as np
    import xarray as xr

    from .contract import RUN_CHECK, validate
    from .parallel import map_batches

    paths = [str(p) for p in paths]
    if format is None and paths:            # as thruput.read_many does: from the first file
        format = read_pile(paths[:1])[2]
    batches = [paths[i:i + FILES_PER_BATCH] for i in range(0, len(paths), FILES_PER_BATCH)]
    parts = map_batches(_read_batch, format, batches, workers=workers, scheduler=scheduler,
                        client=client)
    if len(parts) == 1:
        return parts[0]
    dim = RECORD_DIMS[formats.get(format).KIND]
    shifted, files = [], 0
    for part in parts:
        part = part.drop_vars([dim, "file"])
        part["record_file"] = part["record_file"] + files
        files += part.sizes["file"]
        shifted.append(part)
    widths = {d: max(p.sizes.get(d, 0) for p in shifted) for p in shifted for d in p.dims}
    shifted = _with_every_variable(shifted)
    records = [_pad(p.drop_dims("file"), widths, dim) for p in shifted]
    ds = xr.concat(records, dim=dim, data_vars="minimal", coords="minimal", compat="override",
                   join="override", combine_attrs="override")
    per_file = xr.concat([p[["file_path", "file_sha256"]].drop_dims(dim, errors="ignore")
                          for p in shifted], dim="file", combine_attrs="override")
    ds = ds.assign(per_file.data_vars)
    ds.attrs = _joined_attrs(parts, hasattr(formats.get(format), "parse_many"))
    ds.attrs.update(added_ledgers(parts))
    ds.attrs["truncation"] = "; ".join(p.attrs["truncation"] for p in parts if p.attrs["truncation"])
    # a batch parser names its checks by run index ("run 3: ..."): shift them as the runs are
    checks, offset = [], 0
    for p in parts:
        for c in json.loads(p.attrs["consistency"]):
            m = RUN_CHECK.match(c["check"]) if dim == "run" else None
            checks.append({**c, "check": f"run {int(m[1]) + offset}:{m[2]}"} if m else c)
        offset += p.sizes.get(dim, 0)
    ds.attrs["consistency"] = json.dumps(checks, sort_keys=True)
    ds.attrs["consistent"] = int(all(int(p.attrs["consistent"]) for p in parts))
    ds = ds.assign_coords({dim: xr.Variable(dim, np.arange(ds.sizes[dim]), parts[0][dim].attrs),
                           "file": xr.Variable("file", np.arange(ds.sizes["file"]), parts[0]["file"].attrs)})
    return validate(ds)


def _joined_attrs(parts, batch_parser):
    """The attrs of the batches ``parts`` joined as one ``read_many`` would give them
    (before the line accounting and checks are added up): a batch parser parses every
    file at once, and the first batch's attrs are those of that parse; files read one by
    one keep the attrs they agree on (``combine_attrs="drop_conflicts"``), so here those
    every batch holds with the same value. Exact when the files of a format carry the
    same attrs (a pile mixing wrapped and plain logs may differ: a ``line_prefix`` only
    some batches hold is dropped here)."""
    attrs = dict(parts[0].attrs)
    if batch_parser:
        return attrs
    missing = object()
    return {key: value for key, value in attrs.items()
            if all(_same_attr(p.attrs.get(key, missing), value) for p in parts[1:])}


def _same_attr(a, b):
    """Equal attr values (strings and numbers; NaN equals NaN, as xarray compares them)."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


def _padding(name, dtype):
    """What a reader writes past the end of a shorter stream/interval axis."""
    import numpy as np

    if dtype.kind in "iu":
        return INT_PADDING.get(name, 0)
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "M":
        return np.datetime64("NaT", "ns")
    if dtype.kind in "UOT":
        return ""
    return False


def _with_every_variable(parts):
    """``parts`` each with every data variable of any of them: one a part lacks (the
    server's view of ``--get-server-output``, which only some batches hold) filled with
    what a reader writes where there is none (:func:`_padding`), as one read of every
    file gives it."""
    import numpy as np
    import xarray as xr

    model = {}
    for part in parts:
        for name, var in part.data_vars.items():
            model.setdefault(name, var.variable)
    out = []
    for part in parts:
        missing = {name: xr.Variable(var.dims, np.full(tuple(part.sizes.get(d, 0) for d in var.dims),
                                                       _padding(name, var.dtype), dtype=var.dtype),
                                     var.attrs)
                   for name, var in model.items() if name not in part.variables}
        out.append(part.assign(missing) if missing else part)
    return out


def _pad(ds, widths, record_dim):
    """``ds`` padded along every dimension but ``record_dim`` to ``widths``."""
    import numpy as np
    import xarray as xr

    short = {d: widths[d] - n for d, n in ds.sizes.items() if d != record_dim and n < widths[d]}
    if not short:
        return ds
    wide = {}
    for name, var in ds.variables.items():
        pads = [(0, short.get(d, 0)) for d in var.dims]
        if name not in short and any(after for _, after in pads):
            values = np.pad(var.values, pads, constant_values=_padding(name, var.dtype))
            wide[name] = xr.Variable(var.dims, values, var.attrs)
    out = ds.drop_vars(list(wide) + [d for d in short if d in ds.coords])
    out = out.assign({n: v for n, v in wide.items() if n not in ds.coords})
    return out.assign_coords({d: xr.Variable(d, np.arange(widths[d]), ds[d].attrs)
                              for d in short if d in ds.coords}
                             | {n: v for n, v in wide.items() if n in ds.coords})
