"""scamper's traceroute in JSON (kind ``route``): ``scamper -O json``, ``sc_warts2json``.

One JSON object a line: ``cycle-start``, one ``trace``, ``cycle-stop``. A trace::

    {"type":"trace", "method":"udp-paris", "src":"10.77.1.2", "dst":"10.77.3.2",
     "stop_reason":"COMPLETED", "start":{"sec":1796530697, "usec":254125, ...},
     "hop_count":3, "firsthop":1, "attempts":3, ...,
     "hops":[{"addr":"10.77.1.1", "probe_ttl":1, "probe_id":1, "rtt":0.117,
              "icmp_type":11, "icmp_code":0, ...}, ...]}

``hops`` lists the *responses* only, each with the TTL of the probe it answers; a TTL
from ``firsthop`` to ``hop_count`` that no response names got no answer.

Mapped onto the ``route`` kind: one ``hop`` per TTL from ``firsthop`` to ``hop_count``,
its responses as ``probe`` in the order of their ``probe_id`` (a TTL without any: one
probe with no answer, traceroute's ``*``; scamper does not list the attempts that went
unanswered); ``hop_rtt`` is scamper's ``rtt`` (ms); ``hop_name`` is ``""`` (scamper
prints addresses only); ``hop_annotation`` is traceroute's mark for an ICMP destination
unreachable (:data:`UNREACH_V4`, :data:`UNREACH_V6`; none for port unreachable, the
target's answer to UDP probes). ``route_time`` is the trace's ``start``. Attrs:
``route_target``/``route_target_address`` (``dst``), ``route_reached`` (stop reason
``COMPLETED``, the trace not cut off), ``scamper_method``, ``scamper_stop_reason``, ``scamper_attempts``.

A file holds one trace (a file of several is refused: one route per file). A trace line
cut off keeps its complete responses and says so in ``truncation``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import json
import re

import numpy as np

from ..contract import Ledger, build, split_lines
from ..errors import ParseError
from ._json import DECODER, salvage

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "scamper_json"
KIND = "route"
TOOL = "scamper"
BINARY = False

#: A scamper JSON record's first key.
RECORD = re.compile(r'^\{"type":"(cycle-start|cycle-stop|cycle-def|list|trace|ping|tracelb|dealias|'
                    r'tbit|sting|sniff|host|http|udpprobe)"')
#: ICMP (IPv4) destination unreachable code -> traceroute's mark (traceroute(8): 3, port
#: unreachable, is the target's answer: no mark).
UNREACH_V4 = {0: "!N", 1: "!H", 2: "!P", 3: "", 4: "!F", 5: "!S", 9: "!X", 10: "!X", 13: "!X",
              14: "!V", 15: "!C"}
#: ICMPv6 destination unreachable code -> mark (4, port unreachable: the target's answer).
UNREACH_V6 = {0: "!N", 1: "!X", 3: "!H", 4: ""}
_NAN = float("nan")
#: The largest TTL of an IP packet.
MAX_TTL = 255


def _ttl(value, what, line):
    """A TTL (int 0..255) from the trace, else a ParseError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
            or not 0 <= value <= MAX_TTL or int(value) != value:
        raise ParseError(f"{what} {value!r} is not a TTL (0 to {MAX_TTL})", line=line)
    return int(value)


def _count(value, what, line):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise ParseError(f"{what} {value!r} is not a count", line=line)
    return value


def _float(value, what, line):
    if value is None:
        return _NAN
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"{what} {value!r} is not a number", line=line)
    return float(value)


def sniff(head: str) -> bool:
    """True if ``head`` holds scamper JSON records, one a trace."""
    lines = [line for line in head.split("\n")[:8] if line.strip()]
    return bool(lines) and RECORD.match(lines[0]) is not None and \
        any(line.startswith('{"type":"trace"') for line in lines)


def _mark(response):
    kind, code = response.get("icmp_type"), response.get("icmp_code")
    code = code if isinstance(code, int) and not isinstance(code, bool) else str(code)[:12]
    if kind == 3 and ":" not in str(response.get("addr", "")):
        return UNREACH_V4.get(code, f"!{code}")
    if kind == 1 and ":" in str(response.get("addr", "")):
        return UNREACH_V6.get(code, f"!{code}")
    return ""


def parse(text: str) -> xr.Dataset:
    """Parse scamper JSON output holding one trace into a ``route`` Dataset.

    Raises
    ------
    ParseError
        Empty input, bad JSON, no trace or several, or a record of another kind.
    """
    lines = split_lines(text)
    if not lines or not text.strip():
        raise ParseError("empty input", line=1 if lines else None)
    ledger = Ledger(len(lines), lines=lines)
    trace, trace_line, cut = None, None, False
    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            ledger.skip(n, "blank")
            continue
        try:
            record = DECODER.decode(line)
        except json.JSONDecodeError as exc:
            found = salvage(line, descend={("hops",)}) if n == len(lines) else None
            if found is None or found.doc.get("type") != "trace":
                raise ParseError(f"not valid JSON: {exc.msg}", line=n) from None
            record, cut = found.doc, True
            ledger.truncated(f"cut off inside the trace at line {n}: kept its "
                             f"{len(record.get('hops') or [])} complete responses")
        kind = record.get("type") if isinstance(record, dict) else None
        if kind in ("cycle-start", "cycle-stop", "cycle-def", "list"):
            ledger.skip(n, f"scamper {kind} record")
        elif kind == "trace":
            if trace is not None:
                raise ParseError(f"a second trace (the first at line {trace_line}): one route a "
                                 "file; split the file", line=n)
            trace, trace_line = record, n
            ledger.parsed(n)
        else:
            raise ParseError(f"a scamper {kind!r} record, not a trace", line=n)
    if trace is None:
        raise ParseError("no trace record", line=1)
    first = _ttl(trace.get("firsthop") or 1, "firsthop", trace_line)
    responses = [r for r in trace.get("hops") or [] if isinstance(r, dict)]
    sent = [_ttl(r.get("probe_ttl"), "probe_ttl", trace_line) for r in responses]
    last = max([_ttl(trace.get("hop_count") or 0, "hop_count", trace_line)] + sent)
    ttls = list(range(first, last + 1))
    order = [_float(r.get("probe_id", 0), "probe_id", trace_line) for r in responses]
    by_ttl = {t: [r for _, r in sorted((o, i) for i, (o, s) in enumerate(zip(order, sent)) if s == t)]
              for t in ttls}
    by_ttl = {t: [responses[i] for i in v] for t, v in by_ttl.items()}  # type: ignore[misc]
    width = max([1] + [len(v) for v in by_ttl.values()])
    shape = (len(ttls), width)
    address, name, mark = (np.full(shape, "", dtype=object) for _ in range(3))
    rtt = np.full(shape, _NAN)
    for h, t in enumerate(ttls):
        for k, r in enumerate(by_ttl[t]):
            address[h, k] = str(r.get("addr", ""))  # type: ignore[attr-defined]
            rtt[h, k] = _float(r.get("rtt"), "rtt", trace_line)  # type: ignore[attr-defined]
            mark[h, k] = _mark(r)
    start = trace.get("start") if isinstance(trace.get("start"), dict) else {}
    when = np.datetime64("NaT", "ns")
    if "sec" in start:
        sec, usec = _float(start["sec"], "start.sec", trace_line), _float(start.get("usec", 0), "start.usec", trace_line)
        if not (0 <= sec < 9e9 and 0 <= usec < 1e6):
            raise ParseError(f"start {start['sec']!r} s {start.get('usec')!r} us is not a time", line=trace_line)
        when = np.datetime64(int(sec) * 1_000_000 + int(usec), "us").astype("datetime64[ns]")
    return build(
        KIND,
        {"hop_ttl": (("hop",), np.array(ttls, dtype=np.int64)),
         "hop_address": (("hop", "probe"), address),
         "hop_name": (("hop", "probe"), name),
         "hop_rtt": (("hop", "probe"), rtt),
         "hop_annotation": (("hop", "probe"), mark),
         "route_time": ((), when),
         "line": (("hop",), np.full(len(ttls), trace_line, dtype=np.int64))},
        fmt=NAME, tool=TOOL, ledger=ledger,
        attrs={"route_target": str(trace.get("dst", "")), "route_target_address": str(trace.get("dst", "")),
               "route_reached": int(trace.get("stop_reason") == "COMPLETED" and not cut),
               "scamper_method": str(trace.get("method", "")),
               "scamper_stop_reason": str(trace.get("stop_reason", "")),
               "scamper_attempts": _count(trace.get("attempts") or 0, "attempts", trace_line)},
        tool_summary={"stop_reason": trace.get("stop_reason"), "hop_count": trace.get("hop_count")},
    )
