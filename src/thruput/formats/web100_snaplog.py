"""web100 binary snaplog: a text header naming the variables, then fixed-size snapshots.

Written by the web100 userland library (``web100_snap``/``web100_log_write``; e.g. by NDT
servers, one snaplog per test direction). Layout, as in M-Lab's ``web100`` parser
(m-lab/etl, ``web100/pure.go``) and the web100 userland sources:

1. A version line (``2.5.27 201001301335 net100``) and a blank line.
2. Groups, each a ``/<group>`` line, one ``<name> <offset> <type> <size>`` line per
   variable and a blank line (``/spec``, ``/read``, ``/tune``); the last group ends with
   ``\\0----End-Of-Header---- -1 -1\\n`` instead.
3. The log record: log time (uint32 Unix seconds), the group name logged (32 bytes,
   NUL-padded; ``read``) and the connection spec (16 bytes: remote port, remote IPv4,
   local port, local IPv4, each 32-bit aligned).
4. Snapshots until EOF, each ``----Begin-Snap-Data----\\n`` followed by the logged
   group's variables at their offsets, little-endian.

Types (the web100 library's ``WEB100_TYPE_*`` order) are in ``TYPES``. Variables whose
names start with ``_`` are deprecated duplicates kept by old kernels (``_CurrTime`` =
``Duration``); they are not read, and their names are listed in the attr
``web100_deprecated``.

Schema (kind ``tcp_instrumentation``, dimension ``snapshot``)
------------------------------------------------------------
Shared names for CurCwnd (``cwnd``), CurSsthresh (``ssthresh``), SmoothedRTT (``srtt``),
RTTVar (``rttvar``), CurMSS (``mss``), HCThruOctetsAcked/ThruBytesAcked (``bytes_acked``),
SegsRetrans/PktsRetrans (``retransmits_total``), CongSignals/CongestionSignals
(``congestion_signals``); ``time`` is ``Duration`` (µs since the connection started, in
every snapshot) relative to the first snapshot, in s; ``connection`` from the snapshot's
addresses and ports. Every other variable is ``web100_<current name>`` (see
:mod:`thruput.formats._web100`). The ledger counts records: header lines, the log record,
and the snapshots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import ipaddress
import json
import re

import numpy as np

from ..contract import Ledger
from ..errors import ParseError
from . import _web100

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "web100_snaplog"
KIND = "tcp_instrumentation"
TOOL = "web100"
BINARY = True

END_OF_HEADER = b"\x00----End-Of-Header---- -1 -1\n"
BEGIN_SNAP = b"----Begin-Snap-Data----\n"
#: After the header: log time (4), group name (32), connection spec (16).
LOG_RECORD = np.dtype([("time", "<u4"), ("group", "S32"), ("rport", "<u2"), ("pad1", "V2"),
                       ("raddr", "u1", 4), ("lport", "<u2"), ("pad2", "V2"), ("laddr", "u1", 4)])
#: web100 type code -> (NumPy dtype or decoder name, size in bytes).
TYPES = {
    0: ("<i4", 4),        # INTEGER
    1: ("<i4", 4),        # INTEGER32
    2: ("ipv4", 4),       # INET_ADDRESS_IPV4
    3: ("<u4", 4),        # COUNTER32
    4: ("<u4", 4),        # GAUGE32
    5: ("<u4", 4),        # UNSIGNED32
    6: ("<u4", 4),        # TIME_TICKS
    7: ("<u8", 8),        # COUNTER64
    8: ("<u2", 2),        # INET_PORT_NUMBER
    9: ("inet", 17),      # INET_ADDRESS: 16 address bytes + type (1 = IPv4, 2 = IPv6)
    10: ("inet", 17),     # INET_ADDRESS_IPV6
    11: ("str32", 32),    # STR32
    12: ("u1", 1),        # OCTET
}
VERSION_RE = re.compile(rb"^(\S+) (\S+) (\S+)$")
#: A variable: name, offset in the snapshot, type code, size. (At most 9 digits each: a
#: longer number is damage, and no number read from a file may size an allocation beyond
#: :data:`MAX_SNAPSHOT_BYTES`.)
VARIABLE_RE = re.compile(rb"^([A-Za-z_][\w]*) (\d{1,9}) (\d{1,9}) (\d{1,9})$")
#: The largest offset of a variable in a snapshot: web100's largest group (``read``, 150
#: variables of at most 32 bytes) takes about 1 KB.
MAX_SNAPSHOT_BYTES = 65536
SNIFF_RE = re.compile(r"^\S+ \S+ \S+\n\n/\w+\n[A-Za-z_]\w* \d+ \d+ \d+\n")


def sniff(head: str) -> bool:
    """True for a web100 snaplog: version line, blank line, ``/group`` and a variable line."""
    return bool(SNIFF_RE.match(head))


def parse(data: bytes | str) -> xr.Dataset:
    """Parse the bytes of a web100 snaplog into a ``tcp_instrumentation`` Dataset."""
    if isinstance(data, str):
        data = data.encode("latin-1")
    if not data.strip():
        raise ParseError("empty input")
    end = data.find(END_OF_HEADER)
    if end < 0:
        raise ParseError("no ----End-Of-Header---- marker: not a complete web100 snaplog header",
                         line=None)
    header = data[:end].split(b"\n")          # the marker's record follows the last "\n"
    n_header = len(header)                      # header lines including the marker's
    body = end + len(END_OF_HEADER)
    log_end = body + LOG_RECORD.itemsize
    n_bytes = max(len(data) - log_end, 0)
    groups, version, marks = _header(header)
    if len(data) < log_end:
        raise ParseError("file ends inside the log record after the header", line=n_header + 1)
    log = np.frombuffer(data, LOG_RECORD, count=1, offset=body)[0]
    group = log["group"].split(b"\0")[0].decode("latin-1")
    if group not in groups:
        raise ParseError(f"logged group {group!r} not described in the header", line=n_header + 1)
    fields = groups[group]
    length = len(BEGIN_SNAP) + (max(o + TYPES[t][1] for _, o, t, _ in fields) if fields else 0)
    n_snaps, rest = divmod(n_bytes, length)
    ledger = Ledger(n_header + 1 + n_snaps + (1 if rest else 0), unit="record")
    for lineno, reason in marks:
        if reason is None or reason == group:       # version line, the logged group's variables
            ledger.parsed(lineno)
        elif reason in groups:
            ledger.skip(lineno, "variable of a group not logged")
        else:
            ledger.skip(lineno, reason)
    ledger.skip(n_header, "end-of-header marker")
    ledger.parsed(n_header + 1)
    if rest:
        ledger.skip(n_header + 2 + n_snaps, "truncated snapshot")
        ledger.truncated(f"last snapshot cut off: {rest} of {length} bytes")
    records = np.frombuffer(data, np.uint8, count=n_snaps * length, offset=log_end).reshape(n_snaps, length)
    bad = np.flatnonzero((records[:, : len(BEGIN_SNAP)] != np.frombuffer(BEGIN_SNAP, np.uint8)).any(axis=1))
    first = n_header + 2
    for k in bad[:20]:
        ledger.error(first + k, "snapshot does not start with ----Begin-Snap-Data----")
    ledger.skip(first + bad, "corrupt snapshot")
    ledger.parsed(first + np.setdiff1d(np.arange(n_snaps), bad))
    attrs = {
        "web100_version": version,
        "web100_group": group,
        "web100_log_time": int(log["time"]),
        "web100_log_connection": _web100.connection_label(
            _ipv4(log["laddr"]), int(log["lport"]), _ipv4(log["raddr"]), int(log["rport"])),
        "web100_deprecated": json.dumps([f[0] for f in fields if f[0].startswith("_")]),
    }
    return _process(records, fields, first, ledger, attrs, version.split(" ")[0])


def _header(lines):
    """Header lines -> ({group: [(name, offset, type, size)]}, version, [(line, reason)])."""
    marks = []
    m = VERSION_RE.match(lines[0])
    if not m:
        raise ParseError("first line is not a web100 version line", line=1)
    version = lines[0].decode("latin-1")
    marks.append((1, None))
    groups, current = {}, None
    for i, raw in enumerate(lines[1:-1], start=2):
        if not raw:
            marks.append((i, "blank"))
            current = None
        elif raw.startswith(b"/") and current is None:
            current = raw[1:].decode("latin-1")
            groups[current] = []
            marks.append((i, "group name"))
        elif current is not None and (v := VARIABLE_RE.match(raw)):
            name, offset, typ, size = v[1].decode(), int(v[2]), int(v[3]), int(v[4])
            if typ not in TYPES or TYPES[typ][1] != size:
                raise ParseError(f"variable {name}: type {typ} with size {size} is not a web100 type",
                                 line=i)
            if offset + size > MAX_SNAPSHOT_BYTES:
                raise ParseError(f"variable {name}: offset {offset} is past the largest web100 "
                                 f"snapshot ({MAX_SNAPSHOT_BYTES} bytes)", line=i)
            groups[current].append((name, offset, typ, size))
            marks.append((i, current))
        else:
            raise ParseError(f"unrecognised header line {raw[:60]!r}", line=i)
    if lines[-1]:
        raise ParseError(f"unrecognised header line {lines[-1][:60]!r}", line=len(lines))
    return groups, version, marks


def _process(records, fields, first, ledger, attrs, version):
    """Decode the snapshot columns (every type conversion) and assemble the Dataset."""
    live = [f for f in fields if not f[0].startswith("_")]
    names = _web100.canonical([f[0] for f in live])
    columns = {}
    body = records[:, len(BEGIN_SNAP):]
    for (raw_name, offset, typ, size), name in zip(live, names):
        kind, _ = TYPES[typ]
        chunk = body[:, offset: offset + size]
        if kind == "ipv4":
            columns[name] = np.array([_ipv4(c) for c in chunk], dtype=object)
        elif kind == "inet":
            columns[name] = np.array([_inet(c) for c in chunk], dtype=object)
        elif kind == "str32":
            columns[name] = np.array([bytes(c).split(b"\0")[0].decode("latin-1") for c in chunk], dtype=object)
        else:
            columns[name] = np.ascontiguousarray(chunk).view(kind).reshape(-1).astype(
                np.int64 if kind != "<u8" else np.float64)
    n = len(records)
    time = _web100.elapsed(columns, first + np.arange(n))
    connection = None
    if all(k in columns for k in ("LocalAddress", "LocalPort", "RemAddress", "RemPort")):
        connection = [_web100.connection_label(*t) for t in zip(
            columns["LocalAddress"], columns["LocalPort"], columns["RemAddress"], columns["RemPort"])]
    return _web100.assemble(NAME, columns, time=time, line=first + np.arange(n), ledger=ledger,
                            connection=connection, attrs=attrs, tool_version=version,
                            tool_summary={})


def _ipv4(raw):
    return ".".join(str(int(b)) for b in raw[:4])


def _inet(raw):
    kind = int(raw[16])
    if kind == 1:
        return _ipv4(raw)
    if kind == 2:
        return str(ipaddress.IPv6Address(bytes(raw[:16])))
    return ""       # WEB100_ADDRTYPE_UNKNOWN: no address recorded
