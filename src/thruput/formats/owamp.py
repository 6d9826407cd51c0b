"""owamp's ``owping`` and ``twping`` text output: one statistics block per direction.

``owping`` runs two one-way sessions (to and from the peer) and prints one block for each;
``twping`` (TWAMP) prints one block of round-trip, send and reflect times. A block, as
owamp's ``OWPStatsPrintSummary`` writes it::

    --- owping statistics from [HOST]:PORT to [HOST]:PORT ---
    SID:    <hex>
    first:  2019-02-13T11:54:19.387
    last:   2019-02-13T11:54:20.139
    10 sent, 0 lost (0.000%), 0 duplicates
    one-way delay min/median/max = 12.8/12.9/12.8 ms, (err=9.01 ms)     [or "(unsync)"]
    one-way jitter = 0 ms (P95-P50)
    Percentiles:                                                        [-a P ...]
        99.0: 12.9 ms
    hops = 0 (consistently)                  [older owamp: "TTL is 255 (consistently)"]
    no reordering                            [or "1-reordering = 2.000000%" ...]

``twping`` prints ``N sent, L lost (x%), D send duplicates, R reflect duplicates`` and
``round-trip time``, ``send time``, ``reflect time`` min/median/max, ``reflector
processing time min/max``, ``two-way``/``send``/``reflect jitter`` and ``send``/``reflect
hops``. ``-v`` adds one ``seq_no=N delay=D ms (sync, err=E ms)`` or ``seq_no=N *LOST*``
line per packet before the block; ``-n`` prints another unit (``s``, ``us``, ``ns``),
converted here to ms. Numbers are printed ``%.3g``: three significant digits.

Mapped onto the ``rtt`` kind
----------------------------
Probes are the ``-v`` packet lines (``seq``; one-way delay as ``owamp_delay``, ``rtt``
NaN; ``status`` reply or lost); without ``-v`` there are none. Each block is one
``owamp_block`` with its direction's ``owamp_from``/``owamp_to``, packets sent, lost,
duplicates (twping: send and reflect), delay min/median/max (twping: round trip, send,
reflect), the error estimate (NaN when unsynchronised), jitter (P95-P50), ``-a``
percentiles (``owamp_percentile`` over ``owamp_level``), hops/TTL and j-reordering.

Checks: each block's loss percentage against lost/sent, and min <= median <= max; with
``-v``, the packet lines against the block's sent and lost counts and its min/max delay
(to the printed 3 digits).

A file cut off inside a block keeps the complete lines (the block's missing fields are
NaN) and says so in ``truncation``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import xarray as xr

import re

import numpy as np

from ..contract import Ledger, build, consistency_check, split_lines
from ..errors import ParseError

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "owamp"
KIND = "rtt"
TOOL = "owamp"
BINARY = False

#: Unit of a printed time (owping -n) -> factor to ms.
UNITS_MS = {"s": 1e3, "ms": 1.0, "us": 1e-3, "ns": 1e-6}
_U = r"(s|ms|us|ns)"
_N = r"(-?[0-9.]+(?:e[-+]?[0-9]+)?|nan|-?inf|XXX)"
#: Line patterns (anchored, no nested quantifiers: linear time).
HEADER = re.compile(r"^--- (owping|twping) statistics from \[([^\]]*)\]:(\S*) to \[([^\]]*)\]:(\S*) ---$")
SID = re.compile(r"^SID:\s+(\S+)$")
FIRST_LAST = re.compile(r"^(first|last):\s+(\S+)$")
SENT = re.compile(r"^([0-9]{1,15}) sent, ([0-9]{1,15}) lost \(" + _N + r"%\)(?:, ([0-9]{1,15}) duplicates"
                  r"|, ([0-9]{1,15}) send duplicates, ([0-9]{1,15}) reflect duplicates)?$")
DELAY = re.compile(r"^(one-way delay|round-trip time|send time|reflect time) min/median/max = "
                   + _N + "/" + _N + "/" + _N + " " + _U + r",? ?(?:\((?:err=" + _N + " " + _U + r"|(unsync))\))?$")
PROCESSING = re.compile(r"^reflector processing time min/max = " + _N + "/" + _N + " " + _U + "$")
JITTER = re.compile(r"^(one-way|two-way|send|reflect) jitter = " + _N + " " + _U + r"(?: \(P95-P50\))?$")
PERCENTILES = re.compile(r"^Percentiles:$")
PERCENTILE = re.compile(r"^\s+([0-9]+(?:\.[0-9]+)?): " + _N + " " + _U + "$")
HOPS = re.compile(r"^(?:(send|reflect) )?(?:hops|TTL) (?:= |is )([0-9]+) \(consistently\)$")
HOPS_VARY = re.compile(r"^(?:(send|reflect) )?(?:hops|TTL) takes ([0-9]+) values; min(?: hops)?=? ?([0-9]+), "
                       r"max(?: hops)?=? ?([0-9]+)$")
NO_HOPS = re.compile(r"^(?:(send|reflect) )?(?:hops|TTL) not reported$")
REORDER = re.compile(r"^([0-9]+)-reordering = ([0-9]+(?:\.[0-9]+)?)%$")
NO_REORDER = re.compile(r"^no (?:([0-9]+)-)?reordering$|^([0-9]+)-reordering not handled$")
APPROX = re.compile(r"^Approximately [0-9.]+ seconds until results available$")
PACKET = re.compile(r"^seq_no=([0-9]{1,15})\s+(?:delay=" + _N + " " + _U + r"\s+\((?:sync, err=" + _N + " " + _U
                    + r"|unsync)\)|\*LOST\*)$")

#: Per-block fields: name -> (units, long_name).
BLOCK_FIELDS = {
    "sent": ("count", "packets sent"),
    "lost": ("count", "packets lost"),
    "loss_percent": ("percent", "loss as printed"),
    "duplicates": ("count", "duplicate packets (owping; twping: send duplicates)"),
    "reflect_duplicates": ("count", "reflect duplicates (twping)"),
    "delay_min": ("ms", "minimum delay (owping one-way; twping round trip)"),
    "delay_median": ("ms", "median delay (owping one-way; twping round trip)"),
    "delay_max": ("ms", "maximum delay (owping one-way; twping round trip)"),
    "err": ("ms", "maximum clock error estimate (NaN when unsynchronised)"),
    "send_min": ("ms", "minimum send time (twping)"),
    "send_median": ("ms", "median send time (twping)"),
    "send_max": ("ms", "maximum send time (twping)"),
    "reflect_min": ("ms", "minimum reflect time (twping)"),
    "reflect_median": ("ms", "median reflect time (twping)"),
    "reflect_max": ("ms", "maximum reflect time (twping)"),
    "processing_min": ("ms", "minimum reflector processing time (twping)"),
    "processing_max": ("ms", "maximum reflector processing time (twping)"),
    "jitter": ("ms", "jitter, P95 - P50 (owping one-way; twping two-way)"),
    "send_jitter": ("ms", "send jitter, P95 - P50 (twping)"),
    "reflect_jitter": ("ms", "reflect jitter, P95 - P50 (twping)"),
    "hops": ("count", "hops (or TTL, older owamp) where consistent; NaN where it varies or is not reported"),
    "reflect_hops": ("count", "reflect hops (twping)"),
    "reordering": ("percent", "1-reordering (0 when 'no reordering')"),
}
_DELAY_PREFIX = {"one-way delay": "delay", "round-trip time": "delay", "send time": "send", "reflect time": "reflect"}
_JITTER_NAME = {"one-way": "jitter", "two-way": "jitter", "send": "send_jitter", "reflect": "reflect_jitter"}

_NAN = np.nan


def sniff(head: str) -> bool:
    """True if ``head`` holds an owping/twping statistics block (or owping's first line)."""
    for line in head.split("\n")[:60]:
        line = line.rstrip("\r")
        if HEADER.match(line) or PACKET.match(line):
            return True
        if line.strip() and not APPROX.match(line):
            return False
    return False


def _num(text, unit=None):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return _NAN
    return value * UNITS_MS[unit] if unit else value


def parse(text: str) -> xr.Dataset:
    """Parse owping/twping output into an rtt Dataset (probes from ``-v`` lines, one
    ``owamp_block`` per statistics block).

    Raises
    ------
    ParseError
        Empty input, or a line that is no part of owping/twping output (naming it).
    """
    lines = split_lines(text)
    if not lines or not text.strip():
        raise ParseError("empty input", line=1 if lines else None)
    ledger = Ledger(len(lines), lines=lines)
    blocks: list[dict[str, Any]] = []
    packets: list[tuple[Any, ...]] = []
    block: dict[str, Any] | None = None
    in_percentiles = False
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        if not line.strip():
            ledger.skip(n, "blank")
            in_percentiles = False
            continue
        m = HEADER.match(line)
        if m and block is not None and not block["fields"] and \
                (block["from"], block["to"]) == (f"[{m.group(2)}]:{m.group(3)}", f"[{m.group(4)}]:{m.group(5)}"):
            # owping -v prints a session's header before its packet lines and again before
            # its summary: one block
            ledger.parsed(n)
            in_percentiles = False
            continue
        if m:
            block = {"tool": m.group(1), "from": f"[{m.group(2)}]:{m.group(3)}", "to": f"[{m.group(4)}]:{m.group(5)}",
                     "line": n, "sid": "", "first": "", "last": "", "percentiles": {}, "fields": {}}
            blocks.append(block)
            ledger.parsed(n)
            in_percentiles = False
            continue
        if APPROX.match(line):
            ledger.parsed(n)
            continue
        m = PACKET.match(line)
        if m:
            packets.append((n, int(m.group(1)), _num(m.group(2), m.group(3)) if m.group(2) else _NAN,
                            m.group(2) is None, len(blocks) - 1))
            ledger.parsed(n)
            continue
        if block is None:
            continue   # left unmarked: an unrecognised line before any block
        if _block_line(block, line, in_percentiles):
            in_percentiles = bool(PERCENTILES.match(line)) or (in_percentiles and bool(PERCENTILE.match(line)))
            ledger.parsed(n)
    last = len(lines)
    if not text.endswith("\n") and last in set(ledger.unmarked().tolist()):
        ledger.cut_off(last)    # the file ends inside its last line
    if not blocks and not packets:
        ledger.close()   # raises for the unrecognised lines
        raise ParseError("no owping/twping statistics block", line=1)
    expected = ("sent", "delay_median")
    cut = blocks and any(k not in blocks[-1]["fields"] for k in expected)
    if cut:
        ledger.truncated(f"the last statistics block (line {blocks[-1]['line']}) is incomplete; its missing "
                         "fields are NaN")
    return _build(blocks, packets, ledger, bool(cut))


def _block_line(block, line, in_percentiles):
    f = block["fields"]
    m = SID.match(line)
    if m:
        block["sid"] = m.group(1)
        return True
    m = FIRST_LAST.match(line)
    if m:
        block[m.group(1)] = m.group(2)
        return True
    m = SENT.match(line)
    if m:
        f["sent"], f["lost"], f["loss_percent"] = float(m.group(1)), float(m.group(2)), _num(m.group(3))
        dup = m.group(4) if m.group(4) is not None else m.group(5)
        f["duplicates"] = _num(dup)
        f["reflect_duplicates"] = _num(m.group(6))
        return True
    m = DELAY.match(line)
    if m:
        prefix, unit = _DELAY_PREFIX[m.group(1)], m.group(5)
        for k, g in (("min", 2), ("median", 3), ("max", 4)):
            f[f"{prefix}_{k}"] = _num(m.group(g), unit)
        if prefix == "delay":
            f["err"] = _NAN if m.group(8) else _num(m.group(6), m.group(7))
        return True
    m = PROCESSING.match(line)
    if m:
        f["processing_min"], f["processing_max"] = _num(m.group(1), m.group(3)), _num(m.group(2), m.group(3))
        return True
    m = JITTER.match(line)
    if m:
        f[_JITTER_NAME[m.group(1)]] = _num(m.group(2), m.group(3))
        return True
    if PERCENTILES.match(line):
        return True
    m = PERCENTILE.match(line)
    if m and in_percentiles:
        block["percentiles"][float(m.group(1))] = _num(m.group(2), m.group(3))
        return True
    m = HOPS.match(line)
    if m:
        f["reflect_hops" if m.group(1) == "reflect" else "hops"] = float(m.group(2))
        return True
    if HOPS_VARY.match(line) or NO_HOPS.match(line):
        return True
    m = REORDER.match(line)
    if m:
        if m.group(1) == "1":
            f["reordering"] = float(m.group(2))
        return True
    m = NO_REORDER.match(line)
    if m:
        if not m.group(1) and not m.group(2):
            f["reordering"] = 0.0
        return True
    return False


def _build(blocks, packets, ledger, cut):
    B, P = len(blocks), len(packets)
    levels = sorted({p for b in blocks for p in b["percentiles"]})
    pct = np.full((B, len(levels)), _NAN)
    for i, b in enumerate(blocks):
        for j, level in enumerate(levels):
            pct[i, j] = b["percentiles"].get(level, _NAN)
    field = {k: np.array([b["fields"].get(k, _NAN) for b in blocks], dtype=float) for k in BLOCK_FIELDS}
    variables = {
        "seq": (("probe",), np.array([p[1] for p in packets], dtype=np.int64)),
        "rtt": (("probe",), np.full(P, _NAN)),
        "status": (("probe",), np.array(["lost" if p[3] else "reply" for p in packets], dtype="<U5")),
        "timestamp": (("probe",), np.full(P, _NAN)),
        "size": (("probe",), np.full(P, _NAN)),
        "ttl": (("probe",), np.full(P, -1, dtype=np.int64)),
        "line": (("probe",), np.array([p[0] for p in packets], dtype=np.int64)),
    }
    extras = {
        "owamp_delay": (("probe",), np.array([p[2] for p in packets], dtype=float), "ms",
                        "one-way delay of the packet (owping -v)"),
        "owamp_probe_block": (("probe",), np.array([p[4] for p in packets], dtype=np.int64), "1",
                              "index of the statistics block the packet line precedes"),
        "owamp_tool": (("owamp_block",), np.array([b["tool"] for b in blocks], dtype=str), "1", "owping or twping"),
        "owamp_from": (("owamp_block",), np.array([b["from"] for b in blocks], dtype=str), "1", "sender [host]:port"),
        "owamp_to": (("owamp_block",), np.array([b["to"] for b in blocks], dtype=str), "1", "receiver [host]:port"),
        "owamp_sid": (("owamp_block",), np.array([b["sid"] for b in blocks], dtype=str), "1", "session id"),
        "owamp_first": (("owamp_block",), np.array([b["first"] for b in blocks], dtype=str), "1",
                        "first packet's time as printed (local time, no zone)"),
        "owamp_last": (("owamp_block",), np.array([b["last"] for b in blocks], dtype=str), "1",
                       "last packet's time as printed"),
        "owamp_block_line": (("owamp_block",), np.array([b["line"] for b in blocks], dtype=np.int64), "1",
                             "line of the block's header"),
        "owamp_percentile": (("owamp_block", "owamp_level"), pct, "ms", "delay percentiles printed (-a)"),
    }
    for k, (units, long_name) in BLOCK_FIELDS.items():
        extras[f"owamp_{k}"] = (("owamp_block",), field[k], units, long_name)
    coords = {"owamp_level": (("owamp_level",), np.array(levels, dtype=float), "percent", "percentile level")}
    checks = []
    for i, b in enumerate(blocks):
        f = b["fields"]
        tag = f"block {i} ({b['from']} -> {b['to']})"
        if f.get("sent"):
            checks.append(consistency_check(f"{tag}: loss % vs lost/sent", f["loss_percent"],
                                            100.0 * f["lost"] / f["sent"], rtol=0.0, atol=0.0006,
                                            note="printed with 3 decimals (1 in older owamp)"))
        values = [f.get(k, _NAN) for k in ("delay_min", "delay_median", "delay_max")]
        if not np.isnan(values).any():
            # owamp prints %.3g: one unit of the third significant digit
            digit = 10.0 ** (np.floor(np.log10(max(abs(v) for v in values) or 1.0)) - 2)
            outside = max(0.0, values[0] - values[1], values[1] - values[2])
            checks.append(consistency_check(f"{tag}: median outside [min, max] by", 0.0, outside, rtol=0.0,
                                            atol=digit, note="owamp's median is its histogram bucket's, its "
                                            "min/max the exact extremes, each printed to 3 digits"))
        mine = [p for p in packets if p[4] == i and b["tool"] == "owping"]
        if mine and not cut:
            delays = np.array([p[2] for p in mine if not p[3]])
            checks.append(consistency_check(f"{tag}: sent vs packet lines", f.get("sent"), float(len(mine)), rtol=0.0))
            checks.append(consistency_check(f"{tag}: lost vs *LOST* lines", f.get("lost"),
                                            float(sum(p[3] for p in mine)), rtol=0.0))
            if delays.size:
                checks.append(consistency_check(f"{tag}: min delay vs packet lines", f.get("delay_min"),
                                                float(delays.min()), rtol=0.005))
    summary = [{"tool": b["tool"], "from": b["from"], "to": b["to"], "sid": b["sid"], **b["fields"],
                "percentiles": {str(k): v for k, v in b["percentiles"].items()}} for b in blocks]
    version = ""
    # what thruput inspect shows for the rtt kind: packets sent and received over all blocks
    # (each direction's session counts its own), and twping's round-trip min/max
    totals = {"transmitted": int(np.nansum(field["sent"])),
              "received": int(np.nansum(field["sent"] - field["lost"]))}
    if B and all(b["tool"] == "twping" for b in blocks) and not np.isnan(field["delay_min"]).all():
        highs = field["delay_max"]      # (NaN where no block printed one: a damaged log)
        totals.update(rtt_min=float(np.nanmin(field["delay_min"])),
                      rtt_max=float(np.nanmax(highs)) if not np.isnan(highs).all() else _NAN)
    return build(KIND, variables, fmt=NAME, tool=TOOL, tool_version=version, ledger=ledger, extras=extras,
                 coords=coords, tool_summary={"blocks": _jsonable(summary), **totals}, consistency=checks,
                 attrs={"owamp_blocks": B})


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value
