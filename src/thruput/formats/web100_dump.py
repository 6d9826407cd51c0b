"""web100 ``Name: value`` dumps: one variable per line, one block per snapshot.

The web100 userland tools (``readall``/``readvar``) and NDT's ``web100srv`` print a
connection's variables as ``Name: value`` lines::

    LocalAddress: 127.0.0.1
    CurCwnd: 14480
    SmoothedRTT: 12

A file may hold several such dumps (polled one after another): a blank line, or a
variable that appears a second time, starts the next snapshot. Names may be old or current
web100 names (mapped as in :mod:`thruput.formats._web100`); names starting with ``_`` are
deprecated duplicates of old kernels and are skipped with that reason.

Schema (kind ``tcp_instrumentation``, dimension ``snapshot``)
------------------------------------------------------------
As :mod:`thruput.formats.web100_snaplog`: shared names for cwnd, ssthresh, srtt, rttvar,
mss, bytes_acked, retransmits_total, congestion_signals; ``time`` from ``Duration`` (µs
since the connection started) relative to the first snapshot (NaN without it);
``connection`` when the addresses and ports are present; the rest as ``web100_<Name>``.
A variable missing from one snapshot is NaN (or ``""``) there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import xarray as xr

import re

import numpy as np

from ..contract import Ledger, split_lines
from ..errors import ParseError
from . import _web100

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "web100_dump"
KIND = "tcp_instrumentation"
TOOL = "web100"
BINARY = False

LINE_RE = re.compile(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*):[ \t]*(?P<value>\S*)\s*$")
ADDRESS = ("LocalAddress", "LocalPort", "RemAddress", "RemPort")
#: Names that identify web100 (current, old, and the shared ones) for the sniffer.
KNOWN_NAMES = frozenset(_web100.RENAMES) | frozenset(_web100.RENAMES.values()) \
    | frozenset(_web100.SHARED) | frozenset(_web100._UNITS) | frozenset(ADDRESS)
#: How many of the first lines must be web100 ``Name: value`` lines for the sniffer.
SNIFF_MIN_KNOWN = 3


def sniff(head: str) -> bool:
    """True when the first non-blank lines are all ``Name: value`` with web100 names."""
    lines = [l for l in head.split("\n")[:-1] if l.strip()][:12]
    if len(lines) < SNIFF_MIN_KNOWN:
        return False
    matches = [LINE_RE.match(l) for l in lines]
    return all(matches) and sum(m["name"] in KNOWN_NAMES for m in matches if m is not None) >= SNIFF_MIN_KNOWN


def parse(text: str) -> xr.Dataset:
    """Parse ``Name: value`` web100 dumps into a ``tcp_instrumentation`` Dataset."""
    if not text.strip():
        raise ParseError("empty input")
    lines = split_lines(text)
    ledger = Ledger(len(lines), lines=lines)
    snapshots: list[Any] = []          # (first line, {current name: token})
    current: Any = None
    for i, line in enumerate(lines):
        lineno = i + 1
        if not line.strip():
            ledger.skip(lineno, "blank")
            current = None
            continue
        m = LINE_RE.match(line)
        if m is None:
            if i == len(lines) - 1 and not text.endswith("\n") and re.match(r"^\s*[A-Za-z_]\w*$", line):
                ledger.cut_off(lineno, "line")
            continue        # left unmarked: the ledger reports it with file and line
        name = m["name"]
        if name.startswith("_"):
            ledger.skip(lineno, "deprecated variable")
            continue
        if not m["value"]:
            if i == len(lines) - 1 and not text.endswith("\n"):
                ledger.cut_off(lineno, "line")
            else:
                ledger.error(lineno, f"variable {name} has no value")
            continue
        if current is None or name in current[1]:
            current = (lineno, {}, [])
            snapshots.append(current)
        current[1][name] = m["value"]
        current[2].append(lineno)
        ledger.parsed(lineno)
    if ledger.truncation and len(snapshots) > 1 and len(snapshots[-1][1]) < len(snapshots[0][1]):
        # the last dump was cut off: it lacks variables the first one had, so drop it whole
        lost = snapshots.pop()
        ledger.skip(lost[2], "truncated snapshot")
        ledger.truncated(f"last snapshot (from line {lost[0]}) cut off")
    return _process(snapshots, ledger)


def _process(snapshots, ledger):
    """Every type conversion: tokens -> numbers or strings; rename; assemble."""
    raw_names = []
    for _, snap, _ in snapshots:
        raw_names.extend(k for k in snap if k not in raw_names)
    columns = {}
    for raw, name in zip(raw_names, _web100.canonical(raw_names)):
        tokens = [snap.get(raw, "") for _, snap, _ in snapshots]
        if all(_web100.NUMBER_RE.match(t) or t == "" for t in tokens):
            columns[name] = np.array([float(t) if t else np.nan for t in tokens])
        else:
            columns[name] = np.array(tokens, dtype=object)
    lines = [s[0] for s in snapshots]
    time = _web100.elapsed(columns, lines)
    connection = None
    if all(k in columns for k in ADDRESS):
        connection = [_web100.connection_label(a, p, b, q)
                      for a, p, b, q in zip(*(columns[k] for k in ADDRESS))]
    return _web100.assemble(NAME, columns, time=time, line=lines,
                            ledger=ledger, connection=connection, tool_summary={})

