"""iperf 2 comma-separated output (``iperf -y C``), every layout it has printed.

Layouts (fields per row; the first nine are common to all)::

    time, srcaddress, srcport, dstaddr, dstport, transferid, interval, bytes, speed
    9   TCP, every version; 2.0.x adds a [SUM] row with transferid -1 under -P,
        2.1.8 prints none
    14  UDP: + jitter (ms), errors (lost), datagrams (total), errpercent, outoforder
    15  TCP client -e, 2.1.9+: + writecnt, writeerr, tcpretry, tcpcwnd (KByte), tcprtt (us),
        tcprttvar (us)
    17  UDP client -e, 2.1.9+: the 14 UDP fields + writecnt, writeerr, pps
    18  TCP server -e, 2.1.9+: + readcnt, bin0..bin7 (read-size histogram)

From 2.2 on, iperf prints a header row (``time,srcaddress,...``) that names the columns,
splits ``interval`` into ``istart,iend`` and adds ``tcppcwnd`` (packets); rows after a
header are read by its names. ``time`` is ``YYYYMMDDHHMMSS`` (``.mmm`` with -e; 2.1.9+
prefixes the UTC offset, ``+0000:``); 2.1.8 sometimes prints 1970-01-01 there.

Which end wrote the log is not printed: a log whose rows' source port is below their
destination port is taken for a server's (listening port, e.g. 5001, vs. the client's
ephemeral port). Runs are not delimited either. A new run starts where a stream's id comes back after
its final row, after a ``-1`` [SUM] final row, and where a new stream appears after every
stream of the run printed its final row *and* its time stamp is a later second (-P
threads race: a stream's first row may follow the others' finals). Where the time stamps
are 2.1.8's 1970 placeholder, a higher transfer id than any in the run decides instead.

The Dataset is the one of :mod:`thruput.formats.iperf2` (same variables and extras).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import math
import re

import numpy as np

from .. import contract
from ..errors import ParseError
from . import iperf2
from ._time import NAT, from_text
from .iperf2 import Run

NAME = "iperf2_csv"
KIND = "throughput"
TOOL = "iperf2"
BINARY = False

# ---------------------------------------------------------------------------------------
# The spec: column layouts, sentinels, row and header patterns.
# ---------------------------------------------------------------------------------------

_BASE = ("time", "srcaddress", "srcport", "dstaddr", "dstport", "transferid", "interval", "bytes", "speed")
_UDP = ("jitter", "errors", "datagrams", "errpercent", "outoforder")
_BINS = tuple(f"bin{i}" for i in range(8))

#: Columns every layout has (``interval``, or ``istart`` and ``iend`` from 2.2 on).
_REQUIRED = frozenset(("time", "srcaddress", "srcport", "dstaddr", "dstport", "transferid", "bytes", "speed"))

#: Headerless layouts by field count (iperf 2.0.x-2.1.9 Locale.c reportCSV_* formats).
LAYOUTS = {
    9: _BASE,
    14: _BASE + _UDP,
    15: _BASE + ("writecnt", "writeerr", "tcpretry", "tcpcwnd", "tcprtt", "tcprttvar"),
    17: _BASE + _UDP + ("writecnt", "writeerr", "pps"),
    18: _BASE + ("readcnt",) + _BINS,
}

#: Values that mean "not available": -1, and -1 printed as unsigned 32-bit (2.2 tcpretry).
SENTINELS = (-1.0, 4294967295.0)

#: Columns converted to the contract's units: name -> (row key, factor).
COLUMNS = {
    "jitter": ("jitter", 1.0),                # ms
    "errors": ("lost", 1.0),
    "datagrams": ("datagrams", 1.0),
    "outoforder": ("out_of_order", 1.0),
    "writecnt": ("writes", 1.0),
    "writeerr": ("write_errors", 1.0),
    "tcpretry": ("retransmits", 1.0),
    "tcpcwnd": ("cwnd", 1024.0),              # KByte (tcpi_snd_cwnd * mss / 1024)
    "tcprtt": ("rtt", 1e-3),                  # us -> ms
    "tcprttvar": ("rttvar", 1e-3),
    "pps": ("pps", 1.0),
    "readcnt": ("reads", 1.0),
}

#: Longest interval end taken as a time (a year): beyond it the number is damaged, and
#: would overflow a datetime64[ns] offset.
MAX_RUN_SECONDS = 365 * 86400.0
#: 2.1.8 prints the Unix epoch as the time of some rows (its CSV time stamp bug).
EPOCH_PLACEHOLDER = "19700101"

HEADER_RE = re.compile(r"^time,srcaddress,srcport,dstaddr,dstport,transferid,")
#: time, then local address/port, remote address/port, id, interval: enough to sniff a row.
ROW_RE = re.compile(
    r"^(?:[+-]\d{4}:)?\d{14}(?:\.\d+)?,[^,\s]*,\d+,[^,\s]*,\d+,-?\d+,"
    r"\d+(?:\.\d+)?(?:-|,)\d+(?:\.\d+)?,-?\d+,-?\d+(?:,|$)")
#: The start of a row (time field), or a row cut inside its time field: to recognise a
#: last row cut off mid-way.
_ROW_START_RE = re.compile(r"^(?:[+-]\d{4}:)?\d{14}(?:\.\d*)?(?:,|$)|^[+-]?\d*(?::\d*)?$")
_INTERVAL_RE = re.compile(r"^(?P<start>\d+(?:\.\d+)?)-(?P<end>\d+(?:\.\d+)?)$")


def sniff(head: str) -> bool:
    """True if the first non-blank lines of ``head`` are iperf 2 CSV rows or its header."""
    try:
        lines = [line.strip() for line in head.splitlines() if line.strip()][:5]
        return bool(lines) and any(HEADER_RE.match(x) or ROW_RE.match(x) for x in lines[:2])
    except Exception:  # noqa: BLE001 - a sniffer never raises
        return False


def parse(text: str) -> xr.Dataset:
    """Parse ``iperf -y C`` output into a ``throughput`` Dataset."""
    lines = contract.split_lines(text)
    if not any(line.strip() for line in lines):
        raise ParseError("empty input")
    ledger = contract.Ledger(len(lines), lines=lines)
    records = _read_rows(lines, ledger, cut_last=not text.endswith("\n"))
    if not records:
        ledger.close()  # unrecognised lines are the better error
        raise ParseError("no iperf 2 CSV rows in input")
    runs = _group_runs(records)
    return iperf2.assemble(runs, ledger, fmt=NAME)


def _read_rows(lines, ledger, cut_last=False):
    """Every data row as a dict of named strings (``_line`` = its line number)."""
    records = []
    header = None
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            ledger.skip(n, "blank")
            continue
        if HEADER_RE.match(stripped):
            names = tuple(stripped.split(","))
            if not _REQUIRED.issubset(names) or not ("interval" in names or {"istart", "iend"} <= set(names)):
                ledger.error(n, f"header row lacks columns {sorted(_REQUIRED - set(names))} or the interval")
                continue
            header = names
            ledger.skip(n, "header")
            continue
        if not ROW_RE.match(stripped):
            for regex, reason in ((iperf2.WARNING_RE, "tool warning"), (iperf2.ERROR_RE, "tool error message"),
                                  (iperf2.MESSAGE_RE, "tool message")):
                if regex.match(stripped):
                    ledger.skip(n, reason)
                    break
            else:
                if cut_last and n == len(lines) and _ROW_START_RE.match(stripped):
                    _cut_off(ledger, n, stripped)
            continue  # anything else stays unmarked: an error naming the line
        fields = stripped.split(",")
        cut = cut_last and n == len(lines)
        if cut:
            # iperf ends every row with a line end: a last row without one was cut off,
            # even where what is left still parses (a number cut short inside the last
            # field reads as a smaller number: 2290904915 bit/s cut to 229090)
            _cut_off(ledger, n, stripped)
            continue
        names = header if header is not None and len(header) == len(fields) else LAYOUTS.get(len(fields))
        if names is None:
            ledger.error(n, f"{len(fields)} fields: not an iperf 2 CSV layout "
                            f"(known: {sorted(LAYOUTS)} or a header row)")
            continue
        try:
            record = _process(dict(zip(names, fields)))
        except (ValueError, KeyError) as exc:
            if cut:  # cut inside or right after a field separator
                _cut_off(ledger, n, stripped)
            else:
                ledger.error(n, f"bad value: {exc}")
            continue
        record["line"] = n
        record["_fields"] = len(fields)
        records.append(record)
        ledger.parsed(n)
    return records


def _cut_off(ledger, n, row):
    ledger.skip(n, "truncated row")
    ledger.truncated(f"the last row was cut off: {row[:60]!r}")


def _number(value):
    number = float(value)
    return math.nan if number in SENTINELS else number


def _process(raw):
    """One row's strings -> numbers in the contract's units; every conversion is here."""
    if "interval" in raw:
        m = _INTERVAL_RE.match(raw["interval"])
        if not m:
            raise ValueError(f"interval {raw['interval']!r}")
        start, end = float(m["start"]), float(m["end"])
    else:
        start, end = float(raw["istart"]), float(raw["iend"])
    row = {
        "start": start, "end": end, "bytes": float(raw["bytes"]), "rate": float(raw["speed"]),
        "id": int(raw["transferid"]), "local": f"{raw['srcaddress']}:{raw['srcport']}",
        "remote": f"{raw['dstaddr']}:{raw['dstport']}", "time": raw["time"],
        "srcport": int(raw["srcport"]), "dstport": int(raw["dstport"]),
        "tail": "udp_read" if "jitter" in raw else "plain", "enhanced": False,
    }
    for name, (key, factor) in COLUMNS.items():
        if name in raw:
            row[key] = _number(raw[name]) * factor
            row["enhanced"] = row["enhanced"] or name not in _UDP
    if "cwnd" in row and math.isnan(row["cwnd"]) and row.get("rtt") == 0:
        row["rtt"] = row["rttvar"] = math.nan  # no tcp_info: iperf prints rtt 0 with cwnd -1
    if "bin0" in raw:
        row["read_hist"] = ":".join(str(int(raw[b])) for b in _BINS)
        row["enhanced"] = True
    return row


def _group_runs(records):
    """Split the rows into runs of streams (see the module docstring for the rules)."""
    # Which end wrote the log is not printed (2.1.8 servers even print the client's 4-tuple
    # order), except for UDP: only the receiver counts datagrams in its whole-run row
    # (the 2.1.8 client prints Total -1 there; 2.0.x clients print 9-field rows).
    # Rows with Write/Err counts (2.1.9+ -e) are a sender's, whatever else they hold.
    # So are UDP whole-run rows whose Total is -1 (the 2.1.8 client doesn't know it).
    # And a 2.0.x UDP client prints its own 9-field rows, then the server's 14-field report.
    whole = _whole_run_rows(records)
    mixed = {(r["id"], r["local"]) for r in records if "jitter" in r} & \
        {(r["id"], r["local"]) for r in records if "jitter" not in r}
    sender = bool(mixed) or any(not math.isnan(r.get("writes", math.nan)) for r in records) or any(
        "jitter" in r and math.isnan(r.get("datagrams", math.nan)) for r in whole)
    server = not sender and any("jitter" in r and not math.isnan(r.get("datagrams", math.nan)) for r in whole)
    # -i is one setting per log: with it, finals are the *second* row starting at 0
    interval_mode = any(r["start"] != 0 for r in records)
    runs = []
    run = None
    state = {}   # stream key -> "open" | "final", in the current run

    def new_run(record):
        nonlocal run, state
        run = Run(line=record["line"], side="server" if server else "client" if sender else "",
                  protocol="TCP")
        runs.append(run)
        state = {}

    for rec in records:
        if run is None:
            new_run(rec)
        if "jitter" in rec:
            run.protocol = "UDP"
        sid = rec["id"]
        if sid < 0:   # [SUM] row (transferid -1); a [SUM] final closes its run
            run.sum_rows.append(rec)
            run.reported = True
            finals = [r for r in run.sum_rows if r["start"] == 0]
            if rec["start"] == 0 and (not interval_mode or len(finals) > 1
                                      or (state and all(v == "final" for v in state.values()))):
                run = None
            continue
        key = (sid, rec["local"], rec["remote"])
        stream = run.streams.get(sid)
        if (not server and "jitter" in rec and stream is not None and stream.server_report is None
                and (not any("jitter" in r for r in stream.rows) or state.get(key) == "final")):
            # UDP clients print the server's report as one more whole-run row (2.0.x:
            # 14 fields after the client's own 9-field rows)
            stream.server_report = rec
            run.side = "client"  # only a client log holds a report from the other end
            continue
        if key in state:
            # a stream whose final row came already starts a new run, unless that "final"
            # was a lone first row and this is the real one (-i as long as the run)
            if state[key] == "final" and not (len(stream.rows) == 1 and rec["start"] == 0):
                new_run(rec)
        elif state and (any(k[0] == sid for k in state)
                        or (all(v == "final" for v in state.values()) and _later(rec, run))):
            new_run(rec)
        if "jitter" in rec:
            run.protocol = "UDP"
        stream = run.stream(sid)
        if not stream.connect:
            stream.connect = {"local": rec["local"], "remote": rec["remote"], "line": rec["line"],
                              "when": rec["time"]}
        final = rec["start"] == 0 and (bool(stream.rows) or not interval_mode)
        state[key] = "final" if final else "open"
        stream.rows.append(rec)
        run.reported = True
        run.enhanced = run.enhanced or rec["enhanced"]
    for run in runs:
        run.start_time = _run_start(run)
    return runs


def _run_start(run):
    """When ``run`` started: the time stamp of its first row (written when the report was
    made, i.e. at the row's interval end: 2.1.9's ``11:30:35.128`` for ``0.0-1.0`` and
    ``11:30:36.128`` for ``1.0-2.0``) minus that end. The stamp is the writer's local
    time: taken as UTC unless a ``+HHMM:`` offset prefix (2.1.9+) says otherwise. NaT
    for 2.1.8's ``19700101...`` placeholder."""
    rows = [r for s in run.streams.values() for r in s.rows] + list(run.sum_rows)
    if not rows:
        return NAT
    first = min(rows, key=lambda r: r["line"])
    stamp = from_text(first["time"])
    if np.isnat(stamp) or not 0 <= first["end"] <= MAX_RUN_SECONDS:
        return NAT
    return stamp - np.timedelta64(int(round(first["end"] * 1e9)), "ns")


def _whole_run_rows(records):
    """The whole-run row of each stream: the last row of a (id, local address) that starts
    at 0 (any row starting at 0 where no row starts elsewhere: no -i)."""
    last = {}
    for r in records:
        if r["id"] >= 0:
            last[(r["id"], r["local"])] = r
    interval_mode = any(r["start"] != 0 for r in records)
    if not interval_mode:
        return [r for r in records if r["id"] >= 0]
    return [r for r in last.values() if r["start"] == 0]



def _later(row, run):
    """True if ``row`` comes from a later second than every row of ``run`` (see above)."""
    rows = [r for st in run.streams.values() for r in st.rows]
    stamps = [_stamp(r["time"]) for r in rows]
    mine = _stamp(row["time"])
    if mine is None or None in stamps:   # 2.1.8's 1970 placeholder: compare the ids
        return row["id"] > max(r["id"] for r in rows)
    return mine > max(stamps)


def _stamp(time):
    """``[+0000:]YYYYMMDDHHMMSS[.mmm]`` -> int seconds-resolution stamp; None for 1970."""
    digits = time.split(":")[-1].split(".")[0]
    return None if digits.startswith(EPOCH_PLACEHOLDER) else int(digits)
