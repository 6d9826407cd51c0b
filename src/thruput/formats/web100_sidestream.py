"""web100 sidestream text: a ``K:`` line naming the variables, ``C:`` rows of values.

M-Lab's sidestream collector (``exitstats``, m-lab/etl ``parser/ss.go``) polls every
connection's web100 variables when it closes and writes one line per connection::

    K: cid PollTime LocalAddress LocalPort RemAddress RemPort State SACKEnabled ...
    C: 21605 2017-02-03-12:00:03Z 213.248.112.75 41131 5.228.253.100 52290 1 3 ...

Values are space-separated in the order of the ``K:`` names; ``PollTime`` is UTC
(``%Y-%m-%d-%H:%M:%SZ``); a later ``K:`` line changes the names for the rows after it.

Schema (kind ``tcp_instrumentation``, dimension ``snapshot``: one ``C:`` row each)
--------------------------------------------------------------------------------
``connection`` (``local:port->remote:port``), ``time`` (``PollTime`` in s since the first
row), the shared names of :mod:`thruput.formats._web100` (``cwnd`` from CurCwnd,
``retransmits_total`` from PktsRetrans, ...) and every other column as
``web100_<current name>`` (``web100_cid``, ``web100_PollTime`` in Unix seconds, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import re
from datetime import datetime, timezone

import numpy as np

from ..contract import Ledger, split_lines
from ..errors import ParseError
from . import _web100

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "web100_sidestream"
KIND = "tcp_instrumentation"
TOOL = "web100"
BINARY = False

KEYS_RE = re.compile(r"^K: (\S+(?: \S+)+)\s*$")
ROW_RE = re.compile(r"^C: (.*\S|)\s*$")
POLL_TIME_FORMAT = "%Y-%m-%d-%H:%M:%SZ"
#: Columns that are not web100 variables: the collector's connection id and poll time.
COLLECTOR_COLUMNS = {"cid": "sidestream connection id", "PollTime": "time the connection was polled (Unix s)"}
ADDRESS = ("LocalAddress", "LocalPort", "RemAddress", "RemPort")


def sniff(head: str) -> bool:
    """True when the text starts with a ``K:`` line of web100 names."""
    m = KEYS_RE.match(head.split("\n", 1)[0])
    return m is not None and "LocalAddress" in m[1].split()


def parse(text: str) -> xr.Dataset:
    """Parse sidestream ``K:``/``C:`` text into a ``tcp_instrumentation`` Dataset."""
    if not text.strip():
        raise ParseError("empty input")
    lines = split_lines(text)
    ledger = Ledger(len(lines), lines=lines)
    keys = None
    rows = []               # (line, {current name: token})
    for i, line in enumerate(lines):
        lineno = i + 1
        is_last = i == len(lines) - 1 and not text.endswith("\n")
        if not line.strip():
            ledger.skip(lineno, "blank")
        elif m := KEYS_RE.match(line):
            keys = _web100.canonical(m[1].split())
            ledger.skip(lineno, "header")
        elif (m := ROW_RE.match(line)) and keys is not None:
            values = m[1].split()
            if len(values) == len(keys):
                rows.append((lineno, dict(zip(keys, values))))
                ledger.parsed(lineno)
            elif is_last and len(values) < len(keys):
                ledger.cut_off(lineno, "row", f": {len(values)} of {len(keys)} values")
            else:
                ledger.error(lineno, f"C: row has {len(values)} values, K: line names {len(keys)}")
        elif is_last and keys is not None and "C: ".startswith(line):
            ledger.cut_off(lineno, "row")
    return _process(rows, ledger)


def _process(rows, ledger):
    """Every type conversion: tokens -> numbers, strings and Unix times; assemble."""
    names = []
    for _, row in rows:
        names.extend(k for k in row if k not in names)
    columns = {}
    for name in names:
        tokens = [row.get(name, "") for _, row in rows]
        if name == "PollTime":
            try:
                columns[name] = np.array([_poll_time(t) for t in tokens], dtype=float)
            except ValueError as exc:
                raise ParseError(f"bad PollTime: {exc}", line=rows[0][0]) from None
        elif all(_web100.NUMBER_RE.match(t) for t in tokens):
            columns[name] = np.array(tokens, dtype=float)
        else:
            columns[name] = np.array(tokens, dtype=object)
    n = len(rows)
    poll = columns.get("PollTime")
    time = poll - poll[0] if poll is not None and n else np.full(n, np.nan)
    connection = None
    if all(k in columns for k in ADDRESS):
        connection = [_web100.connection_label(a, p, b, q) for a, p, b, q in zip(
            *(columns[k] for k in ADDRESS))]
    return _web100.assemble(NAME, columns, time=time, line=[r[0] for r in rows], ledger=ledger,
                            connection=connection, extra_long_names=COLLECTOR_COLUMNS,
                            extra_units={"PollTime": "s"},
                            tool_summary={})


def _poll_time(token):
    if not token:
        return np.nan
    return datetime.strptime(token, POLL_TIME_FORMAT).replace(tzinfo=timezone.utc).timestamp()

