"""irtt JSON output (``irtt client -o FILE``; gzip read transparently by :func:`thruput.read`),
JSON format version 1 (irtt 0.9), kind ``rtt``.

One probe per round trip in ``round_trips``, in the order irtt wrote them (sequence
order), with the 1-based ``line`` of its ``"seqno"`` key (-1 where the file is not laid
out one key per line as irtt writes it).

Schema (dim ``probe``)
    ``seq``: ``seqno``. ``rtt``: ``delay.rtt`` (ms; NaN when lost). ``status``:
    ``reply``, or ``lost`` for ``lost`` = ``true``, ``true_up`` (the server never got the
    request) or ``true_down`` (its reply never came back); the raw value is kept in
    ``irtt_lost``. ``timestamp``: the client's *send* wall clock (Unix s), known for every
    probe, lost or not. ``size``: the packet length irtt used (``config.params.length``,
    byte). ``ttl``: -1 (not recorded).

Extras (ms unless said)
    ``irtt_send_delay``, ``irtt_receive_delay``: one-way delays (``delay.send``,
    ``delay.receive``; they include the clock offset between the hosts, so only their
    variation is meaningful unless the clocks are synchronised); ``irtt_ipdv_rtt``,
    ``irtt_ipdv_send``, ``irtt_ipdv_receive``: irtt's own IPDV against the previous probe
    (NaN where irtt gives none); ``irtt_server_processing``: server send minus server
    receive time (monotonic clock); ``irtt_receive_time``: the client's receive wall clock
    (Unix s).

Duplicates and late packets
    irtt lists one round trip per request; duplicate and late replies appear only as
    counts in its ``stats`` (``duplicates``, ``late_packets``): they are kept in
    ``tool_summary``, and no probe has status ``duplicate``.

tool_summary and consistency
    ``tool_summary`` holds irtt's ``stats`` as printed (counts; durations converted from ns
    to ms). ``consistency`` checks them against the probes: packets sent and received,
    requests the server received (sent minus ``true_up``), and min/mean/median/max RTT of
    the replies, and the mean absolute round-trip IPDV. A file cut off mid-way (irtt writes the whole document at the end) keeps
    its complete round trips and irtt's stats (which describe the whole run); the checks
    needing every probe are then left out, and ``truncation`` says how many probes irtt's
    stats count beyond those kept.

Reference: irtt(1) and irtt-client(1), JSON output section; irtt 0.9.0 ``results.go``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import json
import re

import numpy as np

from ..contract import Ledger, build, consistency_check, count_lines, newline_offsets
from ..errors import ParseError
from ._json import DECODER as _DECODER
from ._json import is_cut_off, loads

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "irtt"
KIND = "rtt"
TOOL = "irtt"
BINARY = False

#: irtt's JSON format version this reader follows
JSON_FORMAT = 1
#: irtt writes durations and wall clocks in nanoseconds
NS_PER_MS = 1.0e6
NS_PER_S = 1.0e9
#: values of ``lost`` and the contract status they become
LOST_STATUS = {"false": "reply", "true": "lost", "true_up": "lost", "true_down": "lost"}
#: duration statistics in ``stats`` (ns) kept in tool_summary as ms
DURATION_STATS = ("rtt", "send_delay", "receive_delay", "ipdv_send", "ipdv_receive",
                  "ipdv_round_trip", "server_processing_time", "send_call", "timer_error")
#: counts and percentages in ``stats`` kept as they are
COUNT_STATS = ("packets_sent", "packets_received", "server_packets_received", "duplicates",
               "late_packets", "bytes_sent", "bytes_received", "packet_loss_percent",
               "upstream_loss_percent", "downstream_loss_percent", "duplicate_percent",
               "late_packets_percent", "timer_misses")

_SNIFF = re.compile(r'\A\s*\{\s*"version"\s*:\s*\{\s*"irtt"\s*:')
_ROUND_TRIPS = re.compile(r'"round_trips"\s*:\s*\[')
_SEQNO = re.compile(r'"seqno"\s*:')
_WS = re.compile(r"\s*")
_NAN = float("nan")


def sniff(head: str) -> bool:
    """True if ``head`` (the first 4 KB, decompressed) is an irtt JSON document."""
    return _SNIFF.match(head) is not None


def parse(text: str) -> xr.Dataset:
    """Parse the (decompressed) text of an irtt JSON file into an rtt Dataset.

    Raises
    ------
    ParseError
        Empty input, text that is not JSON (naming the line), JSON that is not irtt's, or a
        file cut off before its ``round_trips``.
    """
    n_lines = count_lines(text)  # not split_lines: a list of every line costs 5 times the text
    if not n_lines or not text.strip():
        raise ParseError("empty input", line=1 if n_lines else None)
    ledger = Ledger(n_lines)     # every line is marked parsed or skipped: none to quote
    at = _ROUND_TRIPS.search(text)
    try:
        doc = loads(text)
        cut = False
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise ParseError("text after the irtt JSON document", line=exc.lineno) from None
        if not is_cut_off(text, exc):
            raise ParseError(f"not valid JSON: {exc.msg}", line=exc.lineno) from None
        if at is None:
            raise ParseError("irtt JSON cut off before its round_trips", line=exc.lineno) from None
        doc, cut = None, True
    if doc is not None and (not isinstance(doc, dict) or not isinstance(doc.get("round_trips"), list)):
        raise ParseError('not an irtt JSON document (no "round_trips")', line=1)
    if cut:  # irtt writes "round_trips" last: the members before it are complete
        assert at is not None   # a cut document without it raised above
        try:
            head = loads(text[:at.start()].rstrip().rstrip(",") + "}")
        except json.JSONDecodeError as exc:
            raise ParseError(f"not valid JSON: {exc.msg}", line=exc.lineno) from None
        trips, end = _round_trips(text, at.end())
    else:
        assert doc is not None   # not cut: loaded above
        head, trips, end = doc, doc["round_trips"], len(text.rstrip())
    if not isinstance(head.get("version"), dict) or "irtt" not in head["version"]:
        raise ParseError('not an irtt JSON document (no "version": {"irtt": ...})', line=1)
    newlines = newline_offsets(text)
    last = int(np.searchsorted(newlines, end - 1, side="right")) + 1 if end else 0
    ledger.parsed(slice(1, last + 1))
    if last < n_lines:
        ledger.skip(slice(last + 1, n_lines + 1),
                    "incomplete round trip (file cut off)" if cut else "blank")
    if cut:
        ledger.truncated(f"file cut off after {len(trips)} complete round trips (line {last})")
    # each probe's line: its "seqno" key (irtt writes one key per line, seqno first)
    keys = [m.start() for m, _ in zip(_SEQNO.finditer(text, at.end() if at else 0), trips)]
    probe_lines = np.full(len(trips), -1, dtype=np.int64)
    probe_lines[: len(keys)] = np.searchsorted(newlines, np.array(keys, dtype=np.int64), side="right") + 1
    try:
        return _process(head, trips, probe_lines, ledger, cut)
    except (AttributeError, TypeError, ValueError, KeyError) as exc:
        raise ParseError(f"unexpected irtt JSON structure ({type(exc).__name__}: {exc})", line=1) from None


def _round_trips(text, i):
    """Decode the ``round_trips`` of a cut-off file one object at a time: (objects, end offset)."""
    trips = []
    end = i
    while True:
        i = _WS.match(text, i).end()
        if i >= len(text) or text.startswith("]", i):
            return trips, end
        try:
            obj, j = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            if is_cut_off(text, exc):
                return trips, end
            raise ParseError(f"not valid JSON: {exc.msg}", line=exc.lineno) from None
        trips.append(obj)
        end = j
        i = _WS.match(text, j).end()
        if text.startswith(",", i):
            i += 1


# --- conversion: the one place where JSON values become numbers ------------------------------------

def _ns(d, *keys):
    """A nested value in ns (NaN where absent or empty: irtt writes ``{}`` for lost probes)."""
    try:
        for key in keys:
            d = d[key]
    except (KeyError, TypeError, IndexError):
        return _NAN
    return float(d) if type(d) in (int, float) else _NAN


def _integer(value, what, line):
    """``value`` (a JSON number) as an int64; a ParseError naming ``what`` and ``line`` if it
    is none (too many digits, a fraction, not a number)."""
    try:
        whole = int(value)
    except (TypeError, ValueError, OverflowError):
        whole = None
    if whole is None or (isinstance(value, float) and whole != value) or not -2**63 <= whole < 2**63:
        raise ParseError(f"{what} {str(value)[:30]} is not an integer of at most 64 bits", line=line)
    return whole


def _process(head, trips, lines, ledger, cut):
    n = len(trips)
    if not n and not cut:
        raise ParseError("irtt JSON without round trips", line=1)
    cols = ("rtt", "send", "receive", "ipdv_rtt", "ipdv_send", "ipdv_receive", "sent", "received",
            "srv_in", "srv_out")
    v = np.full((n, len(cols)), _NAN)
    seq = np.empty(n, dtype=np.int64)
    lost = []
    for k, t in enumerate(trips):
        seq[k] = _integer(t["seqno"], "seqno", int(lines[k]) if lines[k] > 0 else None)
        lost.append(str(t["lost"]))
        delay, ipdv, stamps = t.get("delay") or {}, t.get("ipdv") or {}, t.get("timestamps") or {}
        v[k] = (_ns(delay, "rtt"), _ns(delay, "send"), _ns(delay, "receive"), _ns(ipdv, "rtt"),
                _ns(ipdv, "send"), _ns(ipdv, "receive"), _ns(stamps, "client", "send", "wall"),
                _ns(stamps, "client", "receive", "wall"), _ns(stamps, "server", "receive", "monotonic"),
                _ns(stamps, "server", "send", "monotonic"))
    unknown = sorted(set(lost) - set(LOST_STATUS))
    if unknown:
        raise ParseError(f"unknown irtt 'lost' values {unknown}", line=lines[lost.index(unknown[0])])
    status = np.array([LOST_STATUS[x] for x in lost], dtype=str) if n else np.zeros(0, dtype="<U5")
    ms = v / NS_PER_MS
    length = float(head["config"]["params"]["length"])
    stats = head.get("stats") or {}
    summary = {k: float(stats[k]) for k in COUNT_STATS if k in stats}
    for k in DURATION_STATS:
        for stat in ("min", "mean", "median", "max", "stddev"):
            if isinstance(stats.get(k), dict) and stat in stats[k]:
                summary[f"{k}_{stat}_ms"] = float(stats[k][stat]) / NS_PER_MS
        if isinstance(stats.get(k), dict) and "n" in stats[k]:
            summary[f"{k}_n"] = float(stats[k]["n"])
    if "duration" in stats:
        summary["duration_s"] = float(stats["duration"]) / NS_PER_S
    checks = [] if cut else _checks(summary, ms[:, 0], status, lost, ms[:, 3])
    if cut and "packets_sent" in summary:
        ledger.truncated(f"{ledger.truncation}; irtt's stats count {summary['packets_sent']:g} probes sent, "
                         f"{n} kept")
    variables = {
        "seq": (("probe",), seq),
        "rtt": (("probe",), ms[:, 0]),
        "status": (("probe",), status),
        "timestamp": (("probe",), v[:, 6] / NS_PER_S),
        "size": (("probe",), np.full(n, length)),
        "ttl": (("probe",), np.full(n, -1, dtype=np.int64)),
        "line": (("probe",), lines),
    }
    P = ("probe",)
    extras = {
        "irtt_lost": (P, np.array(lost, dtype=str), "1", "irtt's lost value: false, true, true_up or true_down"),
        "irtt_send_delay": (P, ms[:, 1], "ms", "one-way delay client to server (includes clock offset)"),
        "irtt_receive_delay": (P, ms[:, 2], "ms", "one-way delay server to client (includes clock offset)"),
        "irtt_ipdv_rtt": (P, ms[:, 3], "ms", "irtt's round-trip IPDV against the previous probe"),
        "irtt_ipdv_send": (P, ms[:, 4], "ms", "irtt's send-direction IPDV against the previous probe"),
        "irtt_ipdv_receive": (P, ms[:, 5], "ms", "irtt's receive-direction IPDV against the previous probe"),
        "irtt_server_processing": (P, ms[:, 9] - ms[:, 8], "ms", "server send minus server receive time"),
        "irtt_receive_time": (P, v[:, 7] / NS_PER_S, "s", "client's receive wall clock, Unix time"),
    }
    version = head["version"]
    attrs = {"irtt_json_format": _integer(version.get("json_format", JSON_FORMAT), "json_format", None),
             "irtt_interval_s": float(head["config"]["params"]["interval"]) / NS_PER_S,
             "irtt_duration_s": float(head["config"]["params"]["duration"]) / NS_PER_S,
             "irtt_remote_address": str(head["config"].get("remote_address", ""))}
    return build(KIND, variables, fmt=NAME, tool=TOOL, tool_version=str(version.get("irtt", "")),
                 ledger=ledger, extras=extras, attrs=attrs, tool_summary=summary, consistency=checks)


def _checks(summary, rtt, status, lost, ipdv):
    """irtt's stats against the round trips."""
    checks = []
    replies = rtt[status == "reply"]
    if "packets_sent" in summary:
        checks.append(consistency_check("packets sent: stats vs round trips", summary["packets_sent"],
                                        len(status), rtol=0.0))
    if "packets_received" in summary:
        checks.append(consistency_check("packets received: stats vs replies", summary["packets_received"],
                                        len(replies), rtol=0.0))
    if "server_packets_received" in summary and "packets_sent" in summary and "true" not in lost:
        checks.append(consistency_check(
            "requests the server received: stats vs sent minus lost upstream",
            summary["server_packets_received"], len(status) - lost.count("true_up"), rtol=0.0))
    if len(replies):
        for stat, value in (("min", np.min(replies)), ("mean", np.mean(replies)),
                            ("median", np.median(replies)), ("max", np.max(replies))):
            key = f"rtt_{stat}_ms"
            if key in summary:
                # irtt rounds its statistics to whole nanoseconds
                checks.append(consistency_check(f"RTT {stat}: stats vs replies", summary[key], value,
                                                rtol=0.0, atol=1e-6 + 1e-12))
    ipdv = np.abs(ipdv[~np.isnan(ipdv)])  # irtt's IPDV statistics are of absolute values
    if len(ipdv) and "ipdv_round_trip_mean_ms" in summary:
        checks.append(consistency_check("round-trip IPDV mean: stats vs mean |irtt_ipdv_rtt|",
                                        summary["ipdv_round_trip_mean_ms"], np.mean(ipdv),
                                        rtol=0.0, atol=1e-6 + 1e-12))
    return checks
