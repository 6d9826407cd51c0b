"""iperf3 ``--json-stream`` output (iperf3 3.17+): one JSON event per line (kind
``throughput``).

Each line is ``{"event": NAME, "data": VALUE}`` written unformatted as the test runs:
``start`` (the object ``-J`` has as ``start``), one ``interval`` per report (an element
of ``-J``'s ``intervals``), ``end`` (``-J``'s ``end``), and where they happen ``error``
(iperf3's message, a string) and, with ``--get-server-output``, ``server_output_json`` /
``server_output_text``. A new ``start`` begins a new run (``--logfile`` appends).

The events of a run are put together as the ``-J`` document they stand for and read by
:mod:`thruput.formats.iperf3_json`, so the schema, units and extras are the same as
there (see its docstring), with these differences:

``line``
    The line of the ``interval`` event each value came from.
Truncation
    A stream cut off mid-run (the writer died, or iperf3 is still running) keeps every
    complete ``interval`` event; a run without its ``end`` event says so in
    ``truncation`` and its run totals are NaN (no interval stands in for them). A last line
    cut off inside its JSON is skipped as ``truncated line``. Any other line that is not a
    JSON event raises :class:`~thruput.errors.ParseError` naming it.
Consistency
    Per run, iperf3's ``end.sum_sent`` bytes against the sum of the sender's interval
    events outside ``-O`` (relative tolerance 1 %: iperf3's last interval may end a few
    ms after the end sums' time), plus the server-output check of
    :mod:`thruput.formats._iperf3_server`.

Reference: iperf3 3.17 release notes and ``iperf3(1)`` (``--json-stream``: "output in
line-delimited JSON format"); ``JSONStream_Output`` in iperf3's ``src/iperf_api.c``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import xarray as xr

import json

import numpy as np

from ..contract import Ledger, consistency_check, split_lines
from ..errors import ParseError
from . import _iperf3_server, iperf3_json
from ._json import loads

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse", "EVENTS"]

NAME = "iperf3_stream"
KIND = "throughput"
TOOL = "iperf3"
BINARY = False

#: --json-stream events and where their data goes in the -J document they stand for
EVENTS = {"start": "start", "interval": "intervals", "end": "end", "error": "error",
          "server_output_json": "server_output_json", "server_output_text": "server_output_text"}
#: relative tolerance of the end sums against the interval events (see the module docstring)
INTERVAL_RTOL = 0.01

def sniff(head: str) -> bool:
    """True if ``head`` (the first 4 KB) starts with an iperf3 --json-stream event."""
    return _iperf3_server.STREAM_EVENT.match(head) is not None


def parse(text: str) -> xr.Dataset:
    """Parse iperf3 ``--json-stream`` output (one or more runs) into a throughput Dataset.

    Raises
    ------
    ParseError
        Empty input, a line that is not a JSON event (naming it), an unknown event, events
        before the first ``start``, or a stream holding only iperf3's error.
    """
    lines = split_lines(text)
    if not lines or not text.strip():
        raise ParseError("empty input", line=1 if lines else None)
    ledger = Ledger(len(lines), lines=lines)
    runs: list[Any] = []   # [first line, document, [interval lines]]
    errors = []
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            ledger.skip(n, "blank")
            continue
        try:
            event = loads(raw)
        except json.JSONDecodeError as exc:
            if n == len(lines) and (not text.endswith("\n") or exc.pos >= len(raw.rstrip())):
                ledger.cut_off(n)
            else:
                ledger.error(n, f"not a JSON event: {exc.msg}")
            continue
        if not isinstance(event, dict) or set(event) != {"event", "data"}:
            ledger.error(n, 'not an iperf3 --json-stream event ({"event": ..., "data": ...})')
            continue
        name, data = event["event"], event["data"]
        if not isinstance(name, str) or name not in EVENTS:
            ledger.error(n, f"unknown iperf3 --json-stream event {name!r}")
            continue
        if name == "start":
            runs.append([n, {"start": data}, []])
        elif not runs:
            if name == "error":
                errors.append((n, data))
                ledger.parsed(n)
                continue
            ledger.error(n, f"{name!r} event before any 'start' event")
            continue
        elif name == "interval":
            runs[-1][1].setdefault("intervals", []).append(data)
            runs[-1][2].append(n)
        else:
            runs[-1][1][EVENTS[name]] = data
        ledger.parsed(n)
    if not runs:
        if errors:
            raise ParseError(f"iperf3 reported an error: {errors[0][1]}", line=errors[0][0])
        ledger.close()
        raise ParseError("no iperf3 --json-stream start event", line=1)
    return _process(runs, ledger)


def _process(runs, ledger):
    rows = iperf3_json._Rows()
    for first, doc, iv_lines in runs:
        lost = "" if "end" in doc else f"cut off after {len(iv_lines)} interval event(s): the end event is lost"
        doc.setdefault("intervals", [])
        iperf3_json._extract_run(doc, "", 0, 0, first, 0, rows, lost)
        streams = rows.shape[-1][0]
        # the -J reader finds no text positions here: every stream's line is its event's
        rows.iv_line[len(rows.iv_line) - len(iv_lines) * streams:] = np.repeat(iv_lines, streams).tolist()
    ds = iperf3_json._assemble(rows, ledger, tool_summary={"runs": rows.tool_summary})
    ds.attrs["format"] = NAME
    checks = json.loads(ds.attrs["consistency"])    # the -J reader's checks of the end event
    omitted = ds["iperf3_interval_omitted"].values.astype(bool)
    for r, (first, doc, iv_lines) in enumerate(runs):
        sent = float(ds["iperf3_bytes_sender"][r])
        sends = ds["stream_direction"].values[r] == "send"
        if "end" not in doc or np.isnan(sent) or not sends.any():
            continue
        kept = ~omitted[r, : len(iv_lines)]
        data = float(np.nansum(ds["interval_bytes"].values[r][sends][:, : len(iv_lines)][:, kept]))
        checks.append(consistency_check(f"run {r}: bytes sent: end.sum_sent vs sum of interval events",
                                        sent, data, rtol=INTERVAL_RTOL))
    if checks:
        ds.attrs["consistency"] = json.dumps(checks, sort_keys=True)
        ds.attrs["consistent"] = int(all(c["ok"] for c in checks))
    return _iperf3_server.add(ds, [_iperf3_server.server_view(doc) for _, doc, _ in runs])
