"""iperf 2 human-readable output (iperf 1.7, 2.0.x classic, 2.1.x enhanced ``-e``).

Reads client and server logs, TCP and UDP, with or without ``-i`` intervals, ``-P``
parallel streams (whose ``[SUM]`` lines come in any order with the stream lines), every
``-f`` unit, and several runs in one file (a server log holds one run per client
connection group; concatenated client logs are separated by banners or ``#`` lines).

Schema (kind ``throughput``, see :data:`thruput.contract.KINDS`)
----------------------------------------------------------------
One ``run`` per test. ``throughput`` is the whole-run rate summed over streams on the
receiver side where the log has it (a server log; the UDP ``Server Report`` in a client
log), else the sender side. Where the tool printed a ``[SUM]`` final line, its rate and
bytes *are* the run's numbers on that side (they are iperf's own total; summing the
rounded per-stream rates can differ from it by the rounding of each stream and because
iperf times the sum over a slightly different span); without one, the stream finals are
summed. ``throughput_sender`` / ``throughput_receiver`` are NaN where the log doesn't say.

Per stream: ``stream_throughput`` and ``stream_bytes`` (same side as ``throughput``),
``iperf2_stream_*`` extras (the ``[ID]`` number, both sides' rates, jitter, loss,
out-of-order, retransmits, connect time, addresses).

Per interval (``-i``): ``interval_bytes``/``interval_throughput`` per stream;
``interval_retransmits``, ``interval_cwnd``, ``interval_rtt``, ``interval_rttvar`` from
the ``-e`` client's ``Rtry`` and ``Cwnd/RTT(var)`` columns; ``iperf2_interval_*`` for the
other ``-e`` columns (Write/Err, NetPwr, PPS, Reads=Dist histogram, UDP latency) and UDP
jitter/loss; ``iperf2_sum_interval_*`` for the ``[SUM]`` interval lines.

``tool_summary`` keeps, per run, the ``[SUM]`` final line, the ``Sent N datagrams``
counts and every ``Server Report`` as printed, so that tests can check the parsed numbers.

Units: amounts use binary prefixes (``KByte`` = 1024 byte), rates in bits decimal ones,
rates in bytes (``-f K``) binary ones times 8 (:mod:`thruput.formats._units`). ``Cwnd``
is printed in KByte (``tcpi_snd_cwnd * mss / 1024``), ``RTT`` in microseconds.

Example
-------
>>> import thruput
>>> ds = thruput.read("tests/data/iperf2/v2.1.8--tcp-client-P4-e.txt")  # doctest: +SKIP
>>> float(ds.throughput[0])                                            # doctest: +SKIP
69000000000.0
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import math
import re
from dataclasses import dataclass, field

import numpy as np

from .. import contract
from ..errors import ParseError
from ._time import NAT, from_text
from ._units import to_bits_per_second, to_bytes

NAME = "iperf2"
KIND = "throughput"
TOOL = "iperf2"
BINARY = False

# ---------------------------------------------------------------------------------------
# The spec: every kind of line iperf 2 prints, as regular expressions.
# ---------------------------------------------------------------------------------------

#: (A stream id has at most 9 digits: a longer one is damage, not a number to convert.)
_ID = r"\[\s*(?P<id>\d{1,9}|SUM(?:-\d+)?)\]"
_SPAN = r"(?P<start>\d+(?:\.\d+)?)\s*-\s*(?P<end>\d+(?:\.\d+)?)\s+sec"
_NUM = r"(?:\d+(?:\.\d*)?|\.\d+|nan|-?inf)"

#: ``[  3]  0.0-10.0 sec  1.10 GBytes   943 Mbits/sec<tail>``: every bandwidth report.
REPORT_RE = re.compile(
    rf"^{_ID}\s+{_SPAN}\s+(?P<amount>{_NUM})\s+(?P<amount_unit>[KMGT]?Bytes)"
    rf"\s+(?P<rate>{_NUM})\s+(?P<rate_unit>[KMGT]?(?:bits|Bytes)/sec)(?P<tail>.*)$")

#: The columns after the rate, by report type. Tried in order; the first full match wins.
#: ``Cwnd`` is ``-1K`` when the kernel gave no tcp_info (2.0.1x), ``NA`` in some 2.1.x.
TAIL_RES = (
    # TCP client -e: Write/Err  Rtry  Cwnd/RTT(var)  NetPwr (2.0.1x: no (var); 2.2 with
    # in-flight bytes: InF(pkts)/Cwnd(pkts)/RTT(var))
    ("tcp_write", re.compile(
        r"^\s+(?P<writes>\d+)/(?P<write_errors>\d+)\s+(?P<retransmits>\d+)"
        r"\s+(?:(?P<inflight>-?\d+)K\((?P<inflight_pkts>\d+)\)/)?"
        r"(?:(?P<cwnd>-?\d+)K(?:\((?P<cwnd_pkts>\d+)\))?|NA)/(?P<rtt>\d+)(?:\((?P<rttvar>\d+)\))?\s*us"
        r"(?:\s+(?P<netpwr>\d+(?:\.\d+)?|NA))?\s*$")),
    # TCP client -e [SUM]: Write/Err  Rtry
    ("tcp_write_sum", re.compile(r"^\s+(?P<writes>\d+)/(?P<write_errors>\d+)\s+(?P<retransmits>\d+)\s*$")),
    # UDP client -e: Write/Err  PPS  (2.1.8 server -e prints its UDP [SUM] this way too)
    ("udp_write", re.compile(r"^\s+(?P<writes>\d+)/(?P<write_errors>\d+)\s+(?P<pps>\d+)\s+pps\s*$")),
    # UDP receiver: Jitter  Lost/Total (pct) [-e: Latency avg/min/max/stdev PPS Rx/inP NetPwr]
    ("udp_read", re.compile(
        rf"^\s+(?P<jitter>{_NUM})\s+ms\s+(?P<lost>-?\d+)/\s*(?P<datagrams>\d+)\s+\((?P<loss_pct>{_NUM}|-{_NUM})%\)"
        rf"(?:\s+(?P<latency_avg>-?{_NUM})/(?P<latency_min>-?{_NUM})/(?P<latency_max>-?{_NUM})/(?P<latency_stdev>-?{_NUM})\s+ms"
        rf"\s+(?P<pps>\d+)\s+pps(?:\s+(?P<rx>\d+)/(?P<inp>\d+)\((?P<inp_max>\d+)\)\s+pkts)?"
        rf"(?:\s+(?P<netpwr>{_NUM}))?)?\s*$")),
    # UDP server [SUM] (classic): Lost/Total (pct)
    ("udp_read_sum", re.compile(rf"^\s+(?P<lost>-?\d+)/\s*(?P<datagrams>\d+)\s+\((?P<loss_pct>{_NUM})%\)\s*$")),
    # TCP server -e: Reads=Dist (eight histogram bins of read sizes)
    ("tcp_read", re.compile(r"^\s+(?P<reads>\d+)=(?P<read_hist>\d+(?::\d+){7})\s*$")),
    ("plain", re.compile(r"^\s*$")),
)

#: ``[  3] local 10.0.0.1 port 5001 connected with 10.0.0.2 port 38000 (ct=1.62 ms) ...``
CONNECT_RE = re.compile(
    r"^\[\s*(?P<id>\d{1,9})\]\s+local\s+(?P<local>\S+)\s+port\s+(?P<lport>\d+)\s+connected\s+with\s+"
    r"(?P<remote>\S+)\s+port\s+(?P<rport>\d+)(?P<rest>.*)$")
CONNECT_CT_RE = re.compile(r"\(ct=(?P<ct>\d+(?:\.\d+)?) ms\)")
CONNECT_PEER_RE = re.compile(r"\(peer (?P<peer>[\w.\-]+)\)")
CONNECT_TIME_RE = re.compile(r"\bon (?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: \(\w+\))?)")

#: Banners that open a test: client and server (listener).
CLIENT_RE = re.compile(r"^Client connecting to (?P<host>\S+), (?P<protocol>TCP|UDP) port (?P<port>\d+)")
SERVER_RE = re.compile(r"^Server listening on (?P<protocol>TCP|UDP)(?: \(v6\))? port (?P<port>\d+)")
#: ``TCP window size: 128 KByte (WARNING: requested 64.0 KByte)``; ``(default)`` = none asked.
WINDOW_RE = re.compile(
    r"^(?:TCP window size|UDP buffer size):\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>[KMGT]?Byte)s?"
    r"(?:\s*\((?:(?P<default>default)|WARNING: requested\s*(?P<req>\d+(?:\.\d+)?)\s*(?P<req_unit>[KMGT]?Byte)s?)\))?\s*$")
BUFFER_RE = re.compile(r"^(?:Write|Read) buffer size:\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>[KMGT]?Byte)s?\b")
DATAGRAM_RE = re.compile(r"^(?:Sending|Receiving) (?P<size>\d+) byte datagrams")
SEPARATOR_RE = re.compile(r"^-{10,}\s*$")
#: '#' lines separate runs in concatenated logs (PerfKitBenchmarker's iperf_results.txt).
RUN_SEPARATOR_RE = re.compile(r"^#")
HEADER_RE = re.compile(r"^\[\s*(?:ID|SUM-cnt)\]\s+(?:Interval|Burst)")
SENT_RE = re.compile(rf"^{_ID}\s+Sent\s+(?P<n>\d+)\s+datagrams\s*$")
SERVER_REPORT_RE = re.compile(r"^\[\s*(?P<id>\d{1,9})\]\s+Server Report:\s*$")
OUT_OF_ORDER_RE = re.compile(rf"^{_ID}\s+{_SPAN}\s+(?P<n>\d+)\s+datagrams received out-of-order\s*$")
CONNECT_TIMES_RE = re.compile(r"^\[\s*CT\]\s+final connect times")
#: ``^C`` echoed by the terminal when the user interrupted the test (iperf then prints its
#: reports up to that moment): an interruption, kept in ``truncation``.
INTERRUPT_PREFIX = "^C"
#: The client's note that no Server Report came back (UDP): its absence is not a cut.
NO_ACK_RE = re.compile(r"did not receive ack of last datagram")
#: Messages iperf writes between reports (stderr is often captured too): kept as skips.
WARNING_RE = re.compile(r"^(?:\[\s*\d+\]\s+)?WARNING:|^will give poor performance\. See the Iperf documentation\.")
ERROR_RE = re.compile(r"^(?:\[\s*\d+\]\s+)?(?:\w+ )*\w+ failed: |^ERROR:|^error:", re.IGNORECASE)
MESSAGE_RE = re.compile(r"^Waiting for server threads to complete|^\[\s*\d+\]\s+MSS size \d+ bytes"
                        r"|^\[\s*\d+\]\s+(?:Read lengths occurring|\d+ bytes read\s+\d+ times)"
                        r"|^\[\s*\d+\]\s+(?:sender|receiver) statistics not available")

#: Sniffing: the banners, or report lines without iperf3's markers.
_SNIFF_BANNER_RE = re.compile(
    r"^(?:Client connecting to \S+, (?:TCP|UDP) port \d+|Server listening on (?:TCP|UDP)(?: \(v6\))? port \d+)",
    re.MULTILINE)
_SNIFF_REPORT_RE = re.compile(
    rf"^{_ID}\s+{_SPAN}\s+{_NUM}\s+[KMGT]?Bytes\s+{_NUM}\s+[KMGT]?(?:bits|Bytes)/sec", re.MULTILINE)
_SNIFF_IPERF3_RE = re.compile(
    r"Connecting to host|Accepted connection from|Server listening on \d|iperf Done|- - - - -"
    r"|\bsec\b.*\b(?:sender|receiver)\s*$", re.MULTILINE)


def sniff(head: str) -> bool:
    """True if ``head`` (first 4 KB) looks like iperf 2 text output."""
    try:
        if _SNIFF_BANNER_RE.search(head):
            return True
        return bool(_SNIFF_REPORT_RE.search(head)) and not _SNIFF_IPERF3_RE.search(head)
    except Exception:  # noqa: BLE001 - a sniffer never raises
        return False


# ---------------------------------------------------------------------------------------
# The parsed structure (shared with iperf2_csv, which fills the same classes).
# ---------------------------------------------------------------------------------------

@dataclass
class Stream:
    """One ``[ID]`` of one run: its report rows as dicts of SI-unit numbers."""

    id: int
    rows: list = field(default_factory=list)        # sender/receiver's own report lines
    server_report: dict | None = None                # UDP receiver numbers in a client log
    out_of_order: list = field(default_factory=list)  # (start, end, count)
    sent: float = math.nan
    connect: dict = field(default_factory=dict)


@dataclass
class Run:
    """One test: its settings (from the banner), streams and ``[SUM]`` rows.

    ``side`` is ``"client"`` (the sender wrote the log), ``"server"`` (the receiver) or
    ``""`` (the log doesn't say). ``reported`` is set by the first bandwidth report; a
    banner object also uses it to know whether its first run has begun.
    """

    line: int
    side: str = ""            # "client" (sender) or "server" (receiver)
    protocol: str = ""
    window_requested: float = math.nan
    window_actual: float = math.nan
    buffer_size: float = math.nan
    datagram_size: float = math.nan
    streams: dict = field(default_factory=dict)
    sum_rows: list = field(default_factory=list)
    sum_sent: float = math.nan
    sum_out_of_order: list = field(default_factory=list)
    enhanced: bool = False
    reported: bool = False
    finished: bool = False    # a line only printed after the finals was seen
    start_time: object = None  # datetime64[ns] UTC where the reader knows it (CSV)
    no_ack: bool = False      # UDP client: "did not receive ack" (no Server Report to come)
    reports_expected: bool = False  # a UDP client log of this layout prints Server Reports

    def stream(self, sid):
        if sid not in self.streams:
            self.streams[sid] = Stream(sid)
        return self.streams[sid]


def parse(text: str) -> xr.Dataset:
    """Parse iperf 2 text output into a ``throughput`` Dataset.

    Parameters
    ----------
    text : str
        The whole log (one or more runs; client or server side).

    Returns
    -------
    xarray.Dataset
        Kind ``throughput`` (see the module docstring): rates in bit/s, amounts in byte,
        times in s, jitter/RTT in ms; ``tool_summary`` holds the tool's own totals.

    Raises
    ------
    thruput.errors.ParseError
        Empty input, no bandwidth report at all, or lines that are not iperf 2 output
        (every one named by its line number).
    """
    lines = contract.split_lines(text)
    if not any(line.strip() for line in lines):
        raise ParseError("empty input")
    ledger = contract.Ledger(len(lines), lines=lines)
    runs = _parse_lines(lines, ledger, cut_last=not text.endswith("\n"))
    for run in runs:
        run.reports_expected = True   # (the CSV layouts of 2.1.8+ clients print none)
    return assemble(runs, ledger, fmt=NAME)


def _parse_lines(lines, ledger, cut_last=False):
    runs = []
    session = Run(line=0)        # settings from the latest banner, copied into its runs
    run = None
    in_banner = False
    pending_report = set()       # stream ids whose "Server Report:" line came last
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith(INTERRUPT_PREFIX):
            ledger.truncated(f"interrupted by ^C (line {n})")
            stripped = stripped[len(INTERRUPT_PREFIX):].strip()
            if not stripped:
                ledger.skip(n, "interrupt (^C)")
                continue
        if not stripped:
            ledger.skip(n, "blank")
            continue
        if SEPARATOR_RE.match(stripped):
            ledger.skip(n, "separator")
            in_banner = False
            continue
        if RUN_SEPARATOR_RE.match(stripped):
            ledger.skip(n, "run separator")
            run, in_banner = None, False
            continue
        m = CLIENT_RE.match(stripped) or SERVER_RE.match(stripped)
        if m:
            session = Run(line=n, side="client" if stripped.startswith("Client") else "server",
                          protocol=m["protocol"])
            # -P threads may print their "connected with" lines before the banner
            # (stdout is shared without a lock): such a run belongs to this banner.
            if run is not None and not run.reported and run.side == "":
                run.side, run.protocol = session.side, session.protocol
            else:
                run = None
            in_banner = True
            pending_report.clear()
            ledger.parsed(n)
            continue
        m = WINDOW_RE.match(stripped) or BUFFER_RE.match(stripped) or DATAGRAM_RE.match(stripped)
        if m:
            for target in (session, run) if run is not None and not run.reported else (session,):
                _apply_setting(target, m)
            ledger.parsed(n)
            continue
        if in_banner:  # other settings (TOS, congestion control, MSS, binding, ...)
            ledger.skip(n, "settings banner")
            continue
        if HEADER_RE.match(stripped):
            ledger.skip(n, "column header")
            continue
        if WARNING_RE.match(stripped):
            if run is not None and NO_ACK_RE.search(stripped):
                run.no_ack = True
            ledger.skip(n, "tool warning")
            continue
        if CONNECT_TIMES_RE.match(stripped):
            if run is not None:
                run.finished = True
            ledger.skip(n, "connect-time summary")
            continue
        m = CONNECT_RE.match(stripped)
        if m:
            if run is None or run.reported:
                run = _new_run(session, n, first=not session.reported)
                session.reported = True   # the session's later runs start at their connection
                runs.append(run)
            rest = m["rest"]
            connect = {"local": f"{m['local']}:{m['lport']}", "remote": f"{m['remote']}:{m['rport']}",
                       "line": n}
            for key, regex in (("ct", CONNECT_CT_RE), ("peer", CONNECT_PEER_RE), ("when", CONNECT_TIME_RE)):
                found = regex.search(rest)
                if found:
                    connect[key] = found.group(1)
            run.stream(int(m["id"])).connect = connect
            ledger.parsed(n)
            continue
        m = SERVER_REPORT_RE.match(stripped)
        if m:
            if run is None:
                ledger.error(n, "Server Report outside a run")
                continue
            pending_report.add(int(m["id"]))
            run.finished = True
            ledger.parsed(n)
            continue
        m = SENT_RE.match(stripped)
        if m:
            if run is None:
                ledger.error(n, "datagram count outside a run")
                continue
            if m["id"].startswith("SUM"):
                run.sum_sent = float(m["n"])
            else:
                run.stream(int(m["id"])).sent = float(m["n"])
            run.finished = True
            ledger.parsed(n)
            continue
        m = OUT_OF_ORDER_RE.match(stripped)
        if m:
            if run is None:
                ledger.error(n, "out-of-order count outside a run")
                continue
            entry = (float(m["start"]), float(m["end"]), float(m["n"]))
            if m["id"].startswith("SUM"):
                run.sum_out_of_order.append(entry)
            else:
                run.stream(int(m["id"])).out_of_order.append(entry)
            ledger.parsed(n)
            continue
        m = REPORT_RE.match(stripped)
        if m:
            row = _report_row(m, n, ledger, cut=cut_last and n == len(lines))
            if row is None:
                continue
            if run is None:
                run = _new_run(session, n, first=not session.reported)
                session.reported = True
                runs.append(run)
            run.reported = True
            run.enhanced = run.enhanced or row.pop("enhanced")
            if run.side == "server" and row["tail"] == "udp_write":
                # 2.1.8's -e UDP server prints its [SUM] under a "Write/Err PPS" header,
                # but the pair is Lost/Total of the summed streams
                row["lost"], row["datagrams"] = row.pop("writes"), row.pop("write_errors")
            if m["id"].startswith("SUM"):
                run.sum_rows.append(row)
            else:
                sid = int(m["id"])
                if sid in pending_report:
                    pending_report.discard(sid)
                    run.stream(sid).server_report = row
                else:
                    run.stream(sid).rows.append(row)
            ledger.parsed(n)
            continue
        if ERROR_RE.match(stripped):
            ledger.skip(n, "tool error message")
            continue
        if MESSAGE_RE.match(stripped):
            ledger.skip(n, "tool message")
            continue
        if cut_last and n == len(lines):  # a file cut mid-line: the rest was complete
            ledger.skip(n, "truncated line")
            ledger.truncated(f"the last line was cut off: {stripped[:60]!r}")
        # anything else stays unmarked: the ledger reports it with its line number
    if pending_report and runs:
        ledger.truncated(f"the Server Report of stream(s) {sorted(pending_report)} was cut off")
    return runs


def _apply_setting(run, m):
    """Store a window, buffer or datagram size banner line (matched by ``m``) in ``run``."""
    if m.re is DATAGRAM_RE:
        run.datagram_size = float(m["size"])
    elif m.re is BUFFER_RE:
        run.buffer_size = to_bytes(m["value"], m["unit"])
    else:
        actual = to_bytes(m["value"], m["unit"])
        run.window_actual = actual
        # "(default)": nothing was requested; no parenthesis: the request was granted
        run.window_requested = (math.nan if m["default"] else
                                to_bytes(m["req"], m["req_unit"]) if m["req"] else actual)


def _new_run(session, n, first):
    """A run that inherits the settings of the latest banner (its own line if first)."""
    run = Run(line=session.line if (first and session.line) else n, side=session.side,
              protocol=session.protocol, window_requested=session.window_requested,
              window_actual=session.window_actual, buffer_size=session.buffer_size,
              datagram_size=session.datagram_size)
    return run


def _report_row(m, n, ledger, cut=False):
    """One report line as a dict of numbers in SI units (byte, bit/s, s, ms), or None.

    ``cut``: the line is the file's last and has no line end, so columns it lacks were cut
    off (a truncation, not an error).
    """
    tail = m["tail"]
    for kind, regex in TAIL_RES:
        t = regex.match(tail)
        if t:
            break
    else:
        if cut:
            ledger.skip(n, "truncated line")
            ledger.truncated(f"the last line was cut off: {m.string.strip()[:60]!r}")
        else:
            ledger.error(n, f"unrecognised columns after the rate: {tail.strip()[:60]!r}")
        return None
    row = {"start": float(m["start"]), "end": float(m["end"]),
           "bytes": to_bytes(m["amount"], m["amount_unit"]),
           "rate": to_bits_per_second(m["rate"], m["rate_unit"]),
           "line": n, "tail": kind, "enhanced": kind not in ("plain", "udp_read", "udp_read_sum"),
           "grid": _on_interval_grid(m["end"]),
           "time_res": 0.5 * 10.0 ** -len(m["end"].partition(".")[2])}
    return _process(row, t.groupdict())


#: iperf 2.1+ prints times with 4 decimals: an interval report ends on the ``-i`` grid
#: (``0.0000-1.0000``), a stream's whole-run report at the measured end (``0.0000-2.0168``).
#: A lone report that starts at 0 and ends on a grid of :data:`INTERVAL_GRID` seconds is
#: therefore taken for the first interval of a log cut after it, not for a final report
#: (a final lands on the grid by chance once in 500 runs, and is then flagged truncated,
#: never silently wrong). Logs of iperf 2.0 print one decimal: there the two look alike.
INTERVAL_GRID = 0.05
INTERVAL_GRID_DECIMALS = 4


def _on_interval_grid(end):
    """True if the printed end time ``end`` (a string) is on the interval grid (see above)."""
    decimals = end.partition(".")[2]
    if len(decimals) != INTERVAL_GRID_DECIMALS:
        return False
    steps = float(end) / INTERVAL_GRID
    return math.isfinite(steps) and abs(steps - round(steps)) < 1e-6


#: iperf's [ID] (a socket descriptor, CSV's transfer id) is a C int: a larger one is a
#: damaged number, kept as NaN rather than overflowing a float.
MAX_STREAM_ID = 2**31 - 1

#: Printed sentinels meaning "not known": cwnd -1K when tcp_info was unavailable.
CWND_UNKNOWN = -1

#: Columns converted in :func:`_process`: name -> factor to the contract's unit.
_TAIL_FACTORS = {
    "writes": 1, "write_errors": 1, "retransmits": 1, "pps": 1, "reads": 1,
    "netpwr": 1, "lost": 1, "datagrams": 1, "rx": 1, "inp": 1, "inp_max": 1,
    "cwnd": 1024, "inflight": 1024,   # printed in KByte
    "cwnd_pkts": 1, "inflight_pkts": 1,
    "rtt": 1e-3, "rttvar": 1e-3,  # printed in us, the contract wants ms
    "jitter": 1, "latency_avg": 1, "latency_min": 1, "latency_max": 1, "latency_stdev": 1,  # ms
    "loss_pct": 1,
}


def _process(row, fields):
    """Every type conversion of a report's extra columns happens here."""
    for key, value in fields.items():
        if key == "read_hist":
            row[key] = value or ""
            continue
        if value is None or value == "NA":
            row[key] = math.nan
            continue
        number = float(value)
        if key == "cwnd" and number == CWND_UNKNOWN:
            number = math.nan
        row[key] = number * _TAIL_FACTORS[key]
    return row


# ---------------------------------------------------------------------------------------
# From runs to the contract Dataset (also used by iperf2_csv).
# ---------------------------------------------------------------------------------------

def split_final(rows, interval_mode, finished=True):
    """Split one stream's rows into (interval rows, final row or None).

    iperf prints the whole-run report last, starting at 0. With ``-i`` the first interval
    starts at 0 too (and for a run no longer than the interval, both lines are alike), so a
    lone row is the final one only when no stream of the run printed intervals, and, unless
    the run printed something that only follows its finals (``finished``), when it does not
    end on the interval grid (:data:`INTERVAL_GRID`).
    """
    if not rows:
        return [], None
    if len(rows) >= 2 and rows[-1]["start"] == 0:
        return rows[:-1], rows[-1]
    if len(rows) == 1 and rows[0]["start"] == 0 and not interval_mode \
            and (finished or not rows[0].get("grid", False)):
        return [], rows[0]
    return list(rows), None


def split_sum_final(rows, stream_finals, interval_mode):
    """Split the ``[SUM]`` rows of a run into (interval rows, final row or None).

    Like :func:`split_final`, except that iperf 2.1 sometimes skips the ``[SUM]`` of an
    interval: a lone ``[SUM]`` row starting at 0 is still the final one when it comes
    after the final row of every stream.
    """
    intervals, final = split_final(rows, interval_mode, finished=False)
    if final is None and rows and rows[-1]["start"] == 0 and stream_finals \
            and all(f is not None and f["line"] < rows[-1]["line"] for f in stream_finals):
        return rows[:-1], rows[-1]
    return intervals, final


def _nansum(values):
    values = [v for v in values if not math.isnan(v)]
    return float(sum(values)) if values else math.nan


def _run_numbers(run, truncation, index, checks):
    """Whole-run numbers of one run, per side: (run dict, per-stream dicts, intervals).

    What is missing is said in ``truncation``; the tool's totals checked against its other
    lines are appended to ``checks`` (:func:`_consistency`).
    """
    interval_mode = any(len(s.rows) >= 2 for s in run.streams.values()) or len(run.sum_rows) >= 2
    streams = []
    for sid, s in sorted(run.streams.items()):  # by iperf's [ID], not by print order
        intervals, final = split_final(s.rows, interval_mode, run.finished)
        streams.append((s, intervals, final))
    absent = _absent_streams(run)
    if absent:
        truncation.append(f"run {index}: no line of stream(s) {absent}: iperf 2.1 numbers a client's "
                          f"streams 1..{max(absent[-1], *run.streams)}, so the total is not the whole run's")
    missing = [s.id for s, _, final in streams if final is None and (s.rows or s.connect)]
    if missing:
        kept = max((len(i) for _, i, _ in streams), default=0)
        truncation.append(f"run {index}: no final report for stream(s) {missing} "
                          f"(cut after {kept} interval(s))")
    sum_intervals, sum_final = split_sum_final(run.sum_rows, [f for _, _, f in streams], interval_mode)
    if len(streams) > 1 and sum_final is None and all(f is not None for _, _, f in streams) \
            and run.side == "client" and run.sum_rows:
        truncation.append(f"run {index}: the [SUM] final report is missing")
    finals = [f for _, _, f in streams if f is not None]
    reports = [s.server_report for s, _, _ in streams if s.server_report is not None]

    def side_total(sum_row, rows):
        if sum_row is not None:
            return sum_row["rate"], sum_row["bytes"], sum_row["end"] - sum_row["start"]
        if not rows or len(rows) < len(streams):  # a stream's total is missing: no run total
            return math.nan, math.nan, math.nan
        return (_nansum([r["rate"] for r in rows]), _nansum([r["bytes"] for r in rows]),
                max(r["end"] - r["start"] for r in rows))

    unknown = (math.nan, math.nan, math.nan)
    if run.side == "server":
        sender, receiver = unknown, side_total(sum_final, finals)
        receiver_rows = {s.id: f for s, _, f in streams}
    elif run.side == "client":
        sender = side_total(sum_final, finals)
        complete = reports and len(reports) == len(streams)
        receiver = side_total(None, reports) if complete else unknown
        receiver_rows = {s.id: s.server_report for s, _, _ in streams}
    else:  # the log doesn't say which end wrote it (iperf 2.1.8 TCP CSV): neither side
        sender = receiver = unknown
        receiver_rows = {}
    use_receiver = not math.isnan(receiver[0])
    chosen = receiver if use_receiver else sender if run.side else side_total(sum_final, finals)

    # UDP receiver counts: the server's [SUM] where it printed lost/total, else the streams'
    udp = {"jitter": math.nan, "lost": math.nan, "datagrams": math.nan, "ooo": math.nan}
    if run.protocol == "UDP":
        rx = [r for r in receiver_rows.values() if r is not None and "lost" in r]
        if rx and len(rx) < len(streams):
            # a partial sum would pass for the whole run's counts (the server's missing
            # finals are reported above; a client's missing Server Reports here)
            if run.side == "client":
                missing = [s.id for s, _, _ in streams if s.server_report is None]
                truncation.append(f"run {index}: no Server Report for stream(s) {missing}: "
                                  "the receiver's counts are unknown")
            rx = []
        elif not rx and run.side == "client" and run.reports_expected and not run.no_ack:
            # a UDP client's text log always has the Server Report, or says it got no ack
            truncation.append(f"run {index}: no Server Report: the receiver's counts are unknown")
        if sum_final is not None and run.side == "server" and "lost" in sum_final:
            udp["lost"], udp["datagrams"] = sum_final["lost"], sum_final["datagrams"]
        elif rx:
            udp["lost"] = _nansum([r["lost"] for r in rx])
            udp["datagrams"] = _nansum([r["datagrams"] for r in rx])
        jitters = [r.get("jitter", math.nan) for r in rx]
        if any(not math.isnan(j) for j in jitters):
            udp["jitter"] = float(np.nanmean(jitters))   # mean over the streams
        ooo = [_pick_out_of_order(s, receiver_rows.get(s.id)) for s, _, _ in streams]
        udp["ooo"] = _nansum(ooo) if rx else math.nan
    sent = run.sum_sent
    if math.isnan(sent) and all(not math.isnan(s.sent) for s, _, _ in streams):
        sent = _nansum([s.sent for s, _, _ in streams])   # never a sum over some streams
    if math.isnan(sent) and run.protocol == "UDP":
        sent = udp["datagrams"]
    retransmits = math.nan
    if run.side == "client" and run.protocol == "TCP":
        if sum_final is not None and "retransmits" in sum_final:
            retransmits = sum_final["retransmits"]
        elif finals and all("retransmits" in f for f in finals):
            retransmits = _nansum([f["retransmits"] for f in finals])
    numbers = {
        "throughput": chosen[0], "bytes": chosen[1], "duration": chosen[2],
        "throughput_sender": sender[0], "throughput_receiver": receiver[0],
        "loss_fraction": (udp["lost"] / udp["datagrams"]) if udp["datagrams"] else math.nan,
        "jitter": udp["jitter"], "packets": sent, "packets_lost": udp["lost"],
        "out_of_order": udp["ooo"], "retransmits": retransmits,
    }
    checks.extend(_consistency(run, index, streams, sum_final, finals, reports))
    checks.extend(_interval_checks(index, streams, sum_intervals, sum_final))
    checks.extend(_sent_checks(run, index, streams, sum_final))
    per_stream = []
    for s, intervals, final in streams:
        rx_row = receiver_rows.get(s.id)
        own = rx_row if use_receiver else final
        per_stream.append({
            "id": s.id, "intervals": intervals, "final": final, "chosen": own,
            "sender": final if run.side == "client" else None,
            "receiver": rx_row, "stream": s,
            "ooo": _pick_out_of_order(s, rx_row),
        })
    summary = {
        "line": run.line,
        "sum": _printed(sum_final),
        "sent_datagrams": _count(run.sum_sent),
        "out_of_order": run.sum_out_of_order[-1][2] if run.sum_out_of_order else None,
        "streams": [{"id": s.id, "final": _printed(f),
                     "server_report": _printed(s.server_report),
                     "sent_datagrams": _count(s.sent)}
                    for s, _, f in streams],
    }
    return numbers, per_stream, sum_intervals, summary


def _start_time(run):
    """When ``run`` started (UTC), NaT if the log doesn't say: the reader's own estimate
    (CSV), else the earliest ``-e`` connection time (``on 2026-11-22 13:53:16 (UTC)``)."""
    if run.start_time is not None:
        return run.start_time
    times = [from_text(s.connect.get("when", "")) for s in run.streams.values()]
    times = [t for t in times if not np.isnat(t)]
    return min(times) if times else NAT


#: iperf 2 prints amounts and rates with 3 significant digits (``1.24 GBytes``, ``10.6
#: Gbits/sec``): each is off by up to 0.5 % (CSV rows print exact integers).
PRINT_RTOL = 0.005
#: A total against a sum of printed values, or a rate against printed bytes: both rounded.
SUM_RTOL = 2 * PRINT_RTOL
#: Half the last printed digit of a time when the row doesn't say (CSV: ``0.0-1.0``).
TIME_RESOLUTION = 0.05
#: Received datagrams (Total - Lost) against the bytes received over the datagram size:
#: the bytes are rounded (``643 KBytes``) and the last datagram may be short.
DATAGRAMS_ATOL = 1


def _consistency(run, index, streams, sum_final, finals, reports):
    """Checks of one run's printed totals against its other lines (docs/consistency.md):
    the ``[SUM]`` final against the streams' finals, every final's rate against its bytes
    over its span, and a UDP receiver's Total - Lost against its bytes / datagram size."""
    where = f"run {index}: "
    checks = []
    if sum_final is not None and len(streams) > 1:
        amounts = [f["bytes"] for f in finals] if len(finals) == len(streams) else [math.nan]
        checks.append(contract.consistency_check(
            where + "bytes: [SUM] final vs the streams' finals", sum_final["bytes"], sum(amounts),
            rtol=SUM_RTOL, note="3 significant digits printed"))
    labelled = [("[SUM] final", sum_final)] + [(f"stream {s.id} final", f) for s, _, f in streams] \
        + [(f"stream {s.id} Server Report", s.server_report) for s, _, _ in streams]
    for label, row in labelled:
        if row is None or not row["end"] > row["start"] or math.isnan(row["bytes"]):
            continue
        span = row["end"] - row["start"]
        checks.append(contract.consistency_check(
            where + f"{label}: bit/s vs bytes x 8 / seconds", row["rate"], row["bytes"] * 8 / span,
            rtol=SUM_RTOL + row.get("time_res", TIME_RESOLUTION) / span,
            note="amounts, rates and times as printed"))
    if run.protocol == "UDP" and run.datagram_size > 0:
        rx = reports if run.side == "client" else finals
        for row in rx:
            if "lost" in row and row["datagrams"] > 0:
                checks.append(contract.consistency_check(
                    where + f"UDP datagrams received (Total - Lost) vs bytes / {run.datagram_size:.0f}",
                    row["datagrams"] - row["lost"], row["bytes"] / run.datagram_size,
                    rtol=PRINT_RTOL, atol=DATAGRAMS_ATOL, note="bytes printed to 3 digits"))
    return checks


def _absent_streams(run):
    """Stream ids missing from a client's run numbered the iperf 2.1 way (1..N): every
    line of those streams is lost (a cut or edited log), so their sum is not the run's.
    iperf 2.0 numbers streams by socket (3, 4, ...) and a server by connection: not checked."""
    ids = [sid for sid in run.streams if sid >= 0]
    if run.side == "server" or not ids or min(ids) != 1 or max(ids) > MAX_NUMBERED_STREAMS:
        return []
    return sorted(set(range(1, max(ids) + 1)) - set(ids))


#: Beyond this many streams an id is not -P's numbering (a damaged number): not checked,
#: so that a huge id never builds a huge set.
MAX_NUMBERED_STREAMS = 1 << 16


#: A whole-run report against the sum of its interval reports: both printed to 3
#: significant digits (:data:`SUM_RTOL`), and iperf 2.1's final runs past the last
#: interval (``0.0000-2.0168`` after ``1.0000-2.0000``): the bytes of that tail are in the
#: final only, allowed at up to this many times the run's mean rate.
TAIL_RATE_FACTOR = 2.0
#: More -i grid points than this in a run is a damaged time, not a grid: no tail allowed
#: for (the whole final is then the tolerance), and no float overflow.
MAX_GRID_POINTS = 1e9


def _interval_checks(index, streams, sum_intervals, sum_final):
    """Each final (a stream's, the ``[SUM]``'s) against the sum of its interval reports:
    an interval line lost or repeated under an intact final changes the intervals only."""
    checks = []
    labelled = [(f"stream {s.id} final", intervals, final) for s, intervals, final in streams]
    labelled.append(("[SUM] final", sum_intervals, sum_final))
    for label, intervals, final in labelled:
        if final is None or not intervals or math.isnan(final["bytes"]):
            continue
        span = final["end"] - final["start"]
        if not span > 0 or intervals[0]["start"] != final["start"]:
            continue   # intervals that do not start with the run (a cut log): nothing to add up
        # the tail past the -i grid's last point (the grid, not this stream's last interval:
        # that one may be the line lost)
        step = intervals[0]["end"] - intervals[0]["start"]
        points = final["end"] / step if step > 0 else math.inf
        tail = final["end"] - step * math.floor(points + 1e-6) if points < MAX_GRID_POINTS else span
        checks.append(contract.consistency_check(
            f"run {index}: bytes: {label} vs the sum of its intervals", final["bytes"],
            _nansum([row["bytes"] for row in intervals]),
            rtol=SUM_RTOL + TAIL_RATE_FACTOR * tail / span,
            note=f"3 significant digits printed; the final's last {tail:.4g} s is in no interval"))
    return checks


#: ``Sent N datagrams`` against the sender's bytes over the datagram size: the bytes are
#: printed to 3 digits (:data:`PRINT_RTOL`) and iperf 2.1 counts the final datagrams that
#: end the test (1788 sent for 1786 writes in tests/data/iperf2/v2.1.8--udp-client-e.txt).
SENT_ATOL = 3


def _sent_checks(run, index, streams, sum_final):
    """A UDP client's ``Sent N datagrams`` against its final's bytes / datagram size."""
    if run.protocol != "UDP" or run.side != "client" or not run.datagram_size > 0:
        return []
    labelled = [(f"stream {s.id}", s.sent, final) for s, _, final in streams]
    labelled.append(("[SUM]", run.sum_sent, sum_final))
    return [contract.consistency_check(
        f"run {index}: {label}: Sent datagrams vs bytes / {run.datagram_size:.0f}", sent,
        final["bytes"] / run.datagram_size, rtol=PRINT_RTOL, atol=SENT_ATOL,
        note="bytes printed to 3 digits; the test's last datagrams are counted")
        for label, sent, final in labelled if final is not None and not math.isnan(sent)]


def _pick_out_of_order(stream, report):
    """The out-of-order count that belongs to the whole-run report of ``stream``."""
    if report is not None and not math.isnan(report.get("out_of_order", math.nan)):
        return report["out_of_order"]   # a column of its own in CSV rows
    if not stream.out_of_order:
        return 0.0 if report is not None and "lost" in report else math.nan
    if report is not None:
        for start, end, count in stream.out_of_order:
            if start == report["start"] and end == report["end"]:
                return count
    return stream.out_of_order[-1][2]


def _count(value):
    """A printed count for JSON: an int, or None where unknown (NaN) or absurd (inf)."""
    return int(value) if math.isfinite(value) else None


def _printed(row):
    """A report row as the tool printed it, for ``tool_summary`` (None if absent)."""
    if row is None:
        return None
    keep = ("start", "end", "bytes", "rate", "line", "retransmits", "jitter", "lost", "datagrams", "writes")
    return {("throughput_bps" if k == "rate" else k): (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in row.items() if k in keep}


#: Interval columns: row key -> (variable name, units, long_name); shared names first.
INTERVAL_COLUMNS = {
    "retransmits": ("interval_retransmits", None, None),
    "cwnd": ("interval_cwnd", None, None),
    "rtt": ("interval_rtt", None, None),
    "rttvar": ("interval_rttvar", None, None),
    "inflight": ("iperf2_interval_inflight", "byte", "TCP bytes in flight at the end of the interval (2.2 -e InF)"),
    "inflight_pkts": ("iperf2_interval_inflight_packets", "count", "TCP packets in flight (2.2 -e InF(pkts))"),
    "cwnd_pkts": ("iperf2_interval_cwnd_packets", "count", "TCP congestion window in packets (2.2 -e Cwnd(pkts))"),
    "writes": ("iperf2_interval_writes", "count", "write() calls in the interval (-e Write)"),
    "write_errors": ("iperf2_interval_write_errors", "count", "failed write() calls in the interval (-e Err)"),
    "netpwr": ("iperf2_interval_netpwr", "1", "network power: throughput / RTT (-e NetPwr, as printed)"),
    "pps": ("iperf2_interval_pps", "Hz", "packets per second (-e PPS)"),
    "reads": ("iperf2_interval_reads", "count", "read() calls in the interval (-e Reads)"),
    "jitter": ("iperf2_interval_jitter", "ms", "UDP jitter seen by the receiver"),
    "lost": ("iperf2_interval_lost", "count", "UDP datagrams lost in the interval"),
    "datagrams": ("iperf2_interval_datagrams", "count", "UDP datagrams expected in the interval (Total)"),
    "latency_avg": ("iperf2_interval_latency_avg", "ms", "UDP one-way latency, mean (-e)"),
    "latency_min": ("iperf2_interval_latency_min", "ms", "UDP one-way latency, minimum (-e)"),
    "latency_max": ("iperf2_interval_latency_max", "ms", "UDP one-way latency, maximum (-e)"),
    "latency_stdev": ("iperf2_interval_latency_stdev", "ms", "UDP one-way latency, standard deviation (-e)"),
}


#: Columns of a stream's own final line kept per stream: row key -> (units, long_name).
FINAL_COLUMNS = {
    "writes": ("count", "write() calls in the run (-e Write)"),
    "write_errors": ("count", "failed write() calls in the run (-e Err)"),
    "cwnd": ("byte", "TCP congestion window at the end (-e Cwnd; NaN for -1K)"),
    "rtt": ("ms", "TCP smoothed RTT at the end (-e RTT)"),
    "rttvar": ("ms", "TCP RTT variance at the end (-e var)"),
    "netpwr": ("1", "network power of the run (-e NetPwr, as printed)"),
    "pps": ("Hz", "packets per second over the run (-e PPS)"),
    "reads": ("count", "read() calls in the run (-e Reads)"),
    "latency_avg": ("ms", "UDP one-way latency over the run, mean (-e)"),
    "latency_max": ("ms", "UDP one-way latency over the run, maximum (-e)"),
}


def assemble(runs, ledger, *, fmt, tool_version="", attrs=None):
    """Build the ``throughput`` Dataset from parsed :class:`Run` objects.

    Shared by this reader and :mod:`thruput.formats.iperf2_csv`: both fill :class:`Run`
    and :class:`Stream` with report rows (dicts of numbers in the contract's units) and
    let this function pick finals, sides and totals the same way.

    Parameters
    ----------
    runs : list of Run
    ledger : thruput.contract.Ledger
        Closed here (raises for unaccounted lines); truncation found here is added to it.
    fmt : str
        Registry name of the calling format.
    """
    if not any(run.reported for run in runs):
        ledger.close()  # unrecognised lines, if any, are the better error
        raise ParseError("no iperf 2 bandwidth report in input (the test failed or was cut off "
                         "before its first report)")
    truncation = []
    checks = []
    parsed = [_run_numbers(run, truncation, i, checks) for i, run in enumerate(runs)]
    for message in truncation:  # after what the line parser found (a cut last line, a lost report)
        ledger.truncated(message)
    n_run = len(runs)
    n_stream = max(1, max(len(p[1]) for p in parsed))
    n_interval = max([len(s["intervals"]) for p in parsed for s in p[1]] + [len(p[2]) for p in parsed] + [0])

    def full(shape, fill=math.nan, dtype=float):
        return np.full(shape, fill, dtype=dtype)

    run_vars = {k: full(n_run) for k in (
        "throughput", "throughput_sender", "throughput_receiver", "bytes", "duration",
        "loss_fraction", "jitter", "packets", "packets_lost", "out_of_order", "retransmits")}
    streams = np.zeros(n_run, dtype=int)
    protocol = np.empty(n_run, dtype=object)
    run_line = np.zeros(n_run, dtype=int)
    start_time = np.full(n_run, NAT)
    window_req, window_act = full(n_run), full(n_run)
    side = np.empty(n_run, dtype=object)
    enhanced = np.zeros(n_run, dtype=int)
    buffer_size, datagram_size = full(n_run), full(n_run)
    sum_rate, sum_bytes = full(n_run), full(n_run)

    shape_s = (n_run, n_stream)
    stream_tp, stream_bytes = full(shape_s), full(shape_s)
    stream_dir = np.full(shape_s, "", dtype=object)
    st = {k: full(shape_s) for k in ("id", "sender", "receiver", "jitter", "lost", "datagrams",
                                      "ooo", "sent", "retransmits", "duration", "ct")}
    st_final = {key: full(shape_s) for key in FINAL_COLUMNS}
    st_local = np.full(shape_s, "", dtype=object)
    st_remote = np.full(shape_s, "", dtype=object)
    st_peer = np.full(shape_s, "", dtype=object)
    st_when = np.full(shape_s, "", dtype=object)

    shape_i = (n_run, n_stream, n_interval)
    i_start, i_end = full((n_run, n_interval)), full((n_run, n_interval))
    i_bytes, i_rate = full(shape_i), full(shape_i)
    i_line = np.full(shape_i, -1, dtype=int)
    i_cols = {key: full(shape_i) for key in INTERVAL_COLUMNS}
    i_hist = np.full(shape_i, "", dtype=object)
    sum_i_bytes, sum_i_rate = full((n_run, n_interval)), full((n_run, n_interval))
    summaries = []

    for r, (run, (numbers, per_stream, sum_intervals, summary)) in enumerate(zip(runs, parsed)):
        for key in run_vars:
            run_vars[key][r] = numbers[key]
        streams[r] = len(per_stream)
        protocol[r] = run.protocol
        run_line[r] = run.line
        start_time[r] = _start_time(run)
        window_req[r], window_act[r] = run.window_requested, run.window_actual
        side[r] = run.side
        enhanced[r] = int(run.enhanced)
        buffer_size[r], datagram_size[r] = run.buffer_size, run.datagram_size
        if summary["sum"] is not None:
            sum_rate[r], sum_bytes[r] = summary["sum"]["throughput_bps"], summary["sum"]["bytes"]
        summaries.append(summary)
        for k, row in enumerate(sum_intervals):
            sum_i_bytes[r, k], sum_i_rate[r, k] = row["bytes"], row["rate"]
            if math.isnan(i_start[r, k]):
                i_start[r, k], i_end[r, k] = row["start"], row["end"]
        for j, s in enumerate(per_stream):
            stream_dir[r, j] = "send"
            st["id"][r, j] = s["id"] if 0 <= s["id"] <= MAX_STREAM_ID else math.nan
            if s["chosen"] is not None:
                stream_tp[r, j], stream_bytes[r, j] = s["chosen"]["rate"], s["chosen"]["bytes"]
                st["duration"][r, j] = s["chosen"]["end"] - s["chosen"]["start"]
            if s["sender"] is not None:
                st["sender"][r, j] = s["sender"]["rate"]
                st["retransmits"][r, j] = s["sender"].get("retransmits", math.nan)
            if s["receiver"] is not None:
                st["receiver"][r, j] = s["receiver"]["rate"]
                for key in ("jitter", "lost", "datagrams"):
                    st[key][r, j] = s["receiver"].get(key, math.nan)
            if s["final"] is not None:
                for key in FINAL_COLUMNS:
                    st_final[key][r, j] = s["final"].get(key, math.nan)
            st["ooo"][r, j] = s["ooo"]
            st["sent"][r, j] = s["stream"].sent
            connect = s["stream"].connect
            st["ct"][r, j] = float(connect.get("ct", math.nan))
            st_local[r, j], st_remote[r, j] = connect.get("local", ""), connect.get("remote", "")
            st_peer[r, j], st_when[r, j] = connect.get("peer", ""), connect.get("when", "")
            for k, row in enumerate(s["intervals"]):
                if math.isnan(i_start[r, k]):
                    i_start[r, k], i_end[r, k] = row["start"], row["end"]
                i_bytes[r, j, k], i_rate[r, j, k], i_line[r, j, k] = row["bytes"], row["rate"], row["line"]
                for key in INTERVAL_COLUMNS:
                    if key in row:
                        i_cols[key][r, j, k] = row[key]
                i_hist[r, j, k] = row.get("read_hist", "")

    variables = {
        "throughput": (("run",), run_vars["throughput"]),
        "throughput_sender": (("run",), run_vars["throughput_sender"]),
        "throughput_receiver": (("run",), run_vars["throughput_receiver"]),
        "bytes": (("run",), run_vars["bytes"]),
        "duration": (("run",), run_vars["duration"]),
        "streams": (("run",), streams),
        "protocol": (("run",), protocol.astype(str)),
        "window_requested": (("run",), window_req),
        "window_actual": (("run",), window_act),
        "loss_fraction": (("run",), run_vars["loss_fraction"]),
        "retransmits": (("run",), run_vars["retransmits"]),
        "jitter": (("run",), run_vars["jitter"]),
        "packets": (("run",), run_vars["packets"]),
        "packets_lost": (("run",), run_vars["packets_lost"]),
        "out_of_order": (("run",), run_vars["out_of_order"]),
        "run_line": (("run",), run_line),
        "start_time": (("run",), start_time),
        "stream_throughput": (("run", "stream"), stream_tp),
        "stream_bytes": (("run", "stream"), stream_bytes),
        "stream_direction": (("run", "stream"), stream_dir.astype(str)),
        "interval_start": (("run", "interval"), i_start),
        "interval_end": (("run", "interval"), i_end),
        "interval_bytes": (("run", "stream", "interval"), i_bytes),
        "interval_throughput": (("run", "stream", "interval"), i_rate),
        "line": (("run", "stream", "interval"), i_line),
    }
    dims_i = ("run", "stream", "interval")
    extras = {}
    for key, (name, units, long_name) in INTERVAL_COLUMNS.items():
        if name in contract.VARIABLES:
            variables[name] = (dims_i, i_cols[key])
        else:
            extras[name] = (dims_i, i_cols[key], units, long_name)
    extras.update({
        "iperf2_interval_read_hist": (dims_i, i_hist.astype(str), "1",
                                      "read-size histogram, 8 bins of buffer/8 (-e Reads=Dist)"),
        "iperf2_sum_interval_bytes": (("run", "interval"), sum_i_bytes, "byte", "bytes in the interval, [SUM] line"),
        "iperf2_sum_interval_throughput": (("run", "interval"), sum_i_rate, "bit/s",
                                           "throughput in the interval, [SUM] line"),
        "iperf2_side": (("run",), side.astype(str), "1", "which end wrote the log: client (sender) or server"),
        "iperf2_enhanced": (("run",), enhanced, "1", "1 if -e (enhanced) columns were printed"),
        "iperf2_buffer_size": (("run",), buffer_size, "byte", "read/write buffer length (-l)"),
        "iperf2_datagram_size": (("run",), datagram_size, "byte", "UDP datagram size"),
        "iperf2_sum_throughput": (("run",), sum_rate, "bit/s", "whole-run throughput of the [SUM] line"),
        "iperf2_sum_bytes": (("run",), sum_bytes, "byte", "whole-run bytes of the [SUM] line"),
        "iperf2_stream_id": (("run", "stream"), st["id"], "1", "iperf's [ID] of the stream (NaN = padding)"),
        "iperf2_stream_throughput_sender": (("run", "stream"), st["sender"], "bit/s", "stream throughput, sender side"),
        "iperf2_stream_throughput_receiver": (("run", "stream"), st["receiver"], "bit/s",
                                              "stream throughput, receiver side"),
        "iperf2_stream_duration": (("run", "stream"), st["duration"], "s", "stream duration"),
        "iperf2_stream_retransmits": (("run", "stream"), st["retransmits"], "count", "TCP retransmissions (-e Rtry)"),
        "iperf2_stream_jitter": (("run", "stream"), st["jitter"], "ms", "UDP jitter seen by the receiver"),
        "iperf2_stream_lost": (("run", "stream"), st["lost"], "count", "UDP datagrams lost"),
        "iperf2_stream_datagrams": (("run", "stream"), st["datagrams"], "count",
                                    "UDP datagrams expected by the receiver (Total)"),
        "iperf2_stream_out_of_order": (("run", "stream"), st["ooo"], "count", "UDP datagrams received out of order"),
        "iperf2_stream_sent": (("run", "stream"), st["sent"], "count", "UDP datagrams sent (Sent N datagrams)"),
        "iperf2_stream_connect_time": (("run", "stream"), st["ct"], "ms", "TCP connect time (ct=)"),
        "iperf2_stream_local": (("run", "stream"), st_local.astype(str), "1", "local address:port"),
        "iperf2_stream_remote": (("run", "stream"), st_remote.astype(str), "1", "remote address:port"),
        "iperf2_stream_peer_version": (("run", "stream"), st_peer.astype(str), "1", "peer's iperf version (-e server)"),
        "iperf2_stream_start_time": (("run", "stream"), st_when.astype(str), "1", "connection time as printed (-e)"),
    })
    extras.update({f"iperf2_stream_{key}": (("run", "stream"), st_final[key], units, long_name)
                   for key, (units, long_name) in FINAL_COLUMNS.items()})
    return contract.build(
        KIND, variables, fmt=fmt, tool=TOOL, tool_version=tool_version, ledger=ledger, extras=extras,
        attrs=attrs, tool_summary={"runs": summaries}, consistency=checks)
