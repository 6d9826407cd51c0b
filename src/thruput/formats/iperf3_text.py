"""iperf3 human-readable output (client and server side, TCP and UDP, ``-P``, ``-R``,
``--bidir``, ``-V``, ``-O``, ``-f``), versions 3.0 ("Bandwidth") to 3.1x ("Bitrate").

A run starts at ``Connecting to host`` (client) or ``Accepted connection from`` (server);
several runs in one file (``--logfile`` appends) are several runs. Every line is parsed or
skipped with a reason (banner, blank, header, separator, verbose info, ...).

Schema (kind ``throughput``; dims ``run``, ``stream``, ``interval``): the same names as
:mod:`thruput.formats.iperf3_json`, filled from the printed lines:

``throughput``, ``throughput_sender``, ``throughput_receiver``, ``bytes``, ``duration``,
``retransmits`` (run)
    From the summary lines after the last separator: the ``[SUM] ... receiver`` line of
    the forward direction where there is one, else the one stream's ``receiver`` line;
    ``throughput`` is the receiver's where printed, else the sender's. ``duration`` is the
    summary line's interval length. A ``receiver`` line of ``0.00 Bytes`` after a sender
    that moved data (an interrupted client) was never exchanged: NaN, not 0. UDP without
    the receiver's line: ``throughput`` and ``bytes`` NaN (the sender's rate is the load
    offered: ``throughput_sender``), except 3.0's one untagged line. Summary
    lines without a ``sender``/``receiver`` tag (3.0/3.1 UDP client) count as the sender's.
``jitter``, ``packets``, ``packets_lost``, ``loss_fraction`` (run)
    UDP: the receiver's summary line (``0.220 ms  0/78 (0%)``), lost / total. A receiver
    line of ``0/0`` in a run without an error received nothing of the sender's N
    datagrams: ``throughput`` 0, ``packets`` and ``packets_lost`` N, ``loss_fraction`` 1,
    ``jitter`` NaN; after an error its counts, the loss and the throughput are unknown (NaN).
``window_requested``, ``window_actual``
    NaN: iperf3's text output does not print socket buffer sizes (not even with ``-V``).
``stream_throughput``, ``stream_bytes``, ``stream_direction`` (run, stream)
    Streams in order of their ``[ ID] local ... connected to`` lines (both directions of
    ``--bidir``); the stream's receiver line where printed, else its sender line.
    ``stream_direction`` is ``"send"`` where the host that wrote the log sends: from the
    ``[TX-C]``/``[RX-C]``/``[TX-S]``/``[RX-S]`` role, else ``Reverse mode`` (client), else
    the shape of the interval lines (a server's log shows Retr/Cwnd or datagram counts only
    when it sends).
``interval_*`` (run, stream, interval)
    The k-th interval line of each stream is interval k; ``interval_retransmits`` and
    ``interval_cwnd`` where printed (TCP sender), UDP datagrams/jitter/loss as
    ``iperf3_interval_*`` extras, ``(omitted)`` lines flagged by ``iperf3_interval_omitted``.
``line`` (run, stream, interval)
    Source line of each interval line.

Numbers are as printed: 3 significant digits and binary prefixes for amounts (``1.26
GBytes`` = 1.26 * 1024**3 byte), decimal for rates (``10.8 Gbits/sec``); see
:mod:`thruput.formats._units`. They agree with ``iperf3 -J`` of the same run to that
precision only.

``--bidir``: as in :mod:`thruput.formats.iperf3_json`, the run-level numbers are the
forward direction's (``[TX-C]`` in a client's log, ``[RX-S]`` in a server's); the reverse
direction's summary is ``iperf3_throughput_reverse`` (receiver, else sender).

``tool_summary`` holds per run the printed summary lines of both directions
(``{"runs": [{"sender": {...}, "receiver": {...}}]}``).

Truncated logs keep every complete line; a run without summary lines says so in
``truncation``. iperf3's own message lines (``iperf3: error - ...``, ``iperf3: interrupt -
...``, a server's ``iperf3: the client has unexpectedly closed the connection``) mark a run
as cut short (``iperf3_error``); a log holding nothing but such a message raises
:class:`~thruput.errors.ParseError` with iperf3's message. ``--timestamps`` prefixes are not
supported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import xarray as xr

import re

import numpy as np

from ..contract import Ledger, build, consistency_check, split_lines
from ..errors import ParseError
from ._time import from_text
from ._units import to_bits_per_second, to_bytes

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "iperf3_text"
KIND = "throughput"
TOOL = "iperf3"
BINARY = False

# --- the spec: every kind of line iperf3 prints ----------------------------------------------------
_CONNECTING = re.compile(r"^Connecting to host (?P<host>\S+), port (?P<port>\d+)\s*$")
_ACCEPTED = re.compile(r"^Accepted connection from (?P<host>\S+), port (?P<port>\d+)\s*$")
_LISTENING = re.compile(r"^Server listening on \d+")
_REVERSE = re.compile(r"^Reverse mode, remote host \S+ is sending\s*$")
#: iperf2 says "connected with"; iperf3 "connected to"
_CONNECTED = re.compile(
    r"^\[\s*(?P<id>\d{1,9})\] local (?P<lhost>\S+) port (?P<lport>\d+) connected to (?P<rhost>\S+) port (?P<rport>\d+)\s*$")
#: 3.0-3.6 head the rate column "Bandwidth", 3.7+ "Bitrate"; --bidir adds "[Role]"
_HEADER = re.compile(r"^\[ ID\](?:\[Role\])? Interval\s+Transfer\s+(?:Bitrate|Bandwidth)(?P<rest>.*)$")
_SEPARATOR = re.compile(r"^(?:- ){10,}-?\s*$")
_RULE = re.compile(r"^-{20,}\s*$")
_DONE = re.compile(r"^iperf Done\.\s*$")
#: one report line: "[  5][TX-C]   0.00-0.50   sec   549 MBytes  9.20 Gbits/sec <rest>"
_REPORT = re.compile(
    r"^\[(?P<id>\s*\d{1,9}|SUM)\](?:\[(?P<role>[TR]X-[CS])\])?\s+(?P<start>\d+\.\d+)-\s*(?P<end>\d+\.\d+)\s+sec"
    r"\s+(?P<xfer>\d+(?:\.\d+)?)\s+(?P<xunit>[KMGT]?(?:Bytes|bits))"
    r"\s+(?P<rate>\d+(?:\.\d+)?)\s+(?P<runit>[KMGT]?(?:bits|Bytes)/sec)(?P<rest>.*)$")
#: what follows the rate: TCP sender "Retr [Cwnd]", UDP sender "datagrams",
#: UDP receiver "jitter ms lost/total (pct%)"; then "(omitted)" or "sender"/"receiver"
_REST_NUMBER = re.compile(r"^(?P<n>\d+)(?:\s+(?P<cwnd>\d+(?:\.\d+)?)\s+(?P<cunit>[KMGT]?Bytes))?$")
_REST_UDP = re.compile(
    r"^(?P<jitter>\d+(?:\.\d+)?)\s+ms\s+(?P<lost>-?\d+)/(?P<total>\d+)\s+\((?P<pct>[^)]*)%\)$")
#: (searched: ``(?<!\s)`` tries a run of blanks from its first one only, in linear time)
_TAG = re.compile(r"(?<!\s)\s*\b(?P<tag>sender|receiver)$")
_OMITTED = re.compile(r"(?<!\s)\s*\(omitted\)$")
_SENT = re.compile(r"^\[\s*\d+\] Sent \d+ datagrams\s*$")  # 3.1 UDP client, after the summary
# -V (verbose) lines
_VERSION = re.compile(r"^iperf (?P<version>3\.\d+\S*)\s*$")
_STARTING = re.compile(
    r"^Starting Test: protocol: (?P<protocol>TCP|UDP|SCTP), (?P<streams>\d+) streams, (?P<blksize>\d+) byte blocks,"
    r" omitting (?P<omit>\d+) seconds, (?P<duration>\d+) second test")
_CPU = re.compile(
    r"^CPU Utilization: local/\w+ (?P<host>[\d.]+)% \([^)]*\), remote/\w+ (?P<remote>[\d.]+)% \([^)]*\)\s*$")
_CONGESTION = re.compile(r"^(?P<side>snd|rcv)_tcp_congestion (?P<algo>\S+)\s*$")
_VERBOSE_INFO = re.compile(
    r"^(?:Control connection MSS \d+|Time: .*|\s+Cookie: .*|\s+TCP MSS: .*|Test Complete\. Summary Results:"
    r"|Linux .*|Darwin .*|FreeBSD .*|Windows .*|CYGWIN.*|Warning: .*|Connecting to host .* with .*)\s*$")
#: iperf3's own messages: "iperf3: error - ...", "iperf3: interrupt - ...", and the server's
#: "iperf3: the client has unexpectedly closed the connection"
_ERROR = re.compile(r"^iperf3: (?P<message>.*\S)\s*$")
#: ``^C`` echoed by the terminal when the user interrupted iperf3 (which then prints its
#: summary of what it had): an interruption, kept in ``truncation``; the rest of the line
#: is read as usual.
INTERRUPT = "^C"
#: ``Time: Sun, 22 Nov 2026 13:54:09 GMT`` (-V): when the test started, UTC.
_TIME = re.compile(r"^Time: (?P<when>.*\S)\s*$")
#: ``--timestamps`` prefixes every line with ``%c`` (``Sun Nov 22 18:31:42 2026 ``), the
#: local time of the host; its zone is not printed: taken as UTC (see formats/_time.py).
_STAMP = re.compile(r"^(?P<when>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})(?: |$)")
_NOTICE = re.compile(r"^iperf3: OUT OF ORDER - .*$")
#: UDP receiver's total of datagrams that arrived out of order, printed before its summary
#: line when there were any (per stream, or [SUM] as iperf 3.9-3.16 print it).
_OUT_OF_ORDER = re.compile(r"^\[\s*(?:\d+|SUM)\]\s+[0-9.]+-\s*[0-9.]+\s+sec\s+([0-9]{1,15})\s+"
                           r"datagrams received out-of-order\s*$")
_WARNING = re.compile(r"^(?:iperf3: )?warning: .*$", re.IGNORECASE)

_SNIFF = re.compile(
    r"^(?:[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4} )?(?:Connecting to host \S+, port \d+"
    r"|\[\s*\d+\] local \S+ port \d+ connected to \S+ port \d+"
    r"|Server listening on \d+"
    r"|iperf3: (?:error|interrupt) - "
    r"|\[ ID\]\[Role\] Interval)", re.MULTILINE)

_NAN = float("nan")


def sniff(head: str) -> bool:
    """True if ``head`` (the first 4 KB) holds lines only iperf3's text output prints."""
    return _SNIFF.search(head) is not None


class _Run:
    """What one run printed, as raw strings and line numbers (converted in :func:`_process`)."""

    def __init__(self, line, server):
        self.line = line
        self.server = server
        self.reverse = False
        self.out_of_order = np.nan  # UDP datagrams received out of order (receiver's total)
        self.protocol = ""
        self.streams = {}        # printed id -> stream index
        self.role = {}           # stream index -> "TX-C" ...
        self.sends = {}          # stream index -> True if its interval lines are the sender's
        self.intervals = {}      # stream index -> [(line, match, rest)]
        self.sums = {}           # direction ("fwd"/"rev") -> [(line, match)]
        self.summary = {}        # (stream index or "SUM", direction, tag) -> (line, match, rest)
        self.in_summary = False
        self.tagged = False      # a summary line tagged sender/receiver (3.1+; 3.0 UDP prints one untagged)
        self.seen_separator = False
        self.error = ""
        self.version = ""
        self.system_info = ""
        self.meta = {}


def parse(text: str) -> xr.Dataset:
    """Parse iperf3's text output (one or more runs) into a throughput Dataset.

    Raises
    ------
    ParseError
        Empty input, unrecognised lines (naming them), a log with no report lines or one
        holding only iperf3's error message.
    """
    lines = split_lines(text)
    if not lines or not text.strip():
        raise ParseError("empty input", line=1 if lines else None)
    ledger = Ledger(len(lines), lines=lines)
    # iperf3 ends every line, and prints "iperf Done." or a banner after the summary: a last
    # line without a line end was cut off, and a report line cut off may still match
    # (a summary without its sender/receiver tag, a number cut short)
    cut = len(lines) if not text.endswith("\n") else 0
    runs: list[Any] = []
    run = None
    errors = []          # (line, message) of iperf3 errors outside any run
    pending = {}         # -V lines printed before "Connecting to host"
    expect_system = False
    stamp = ""           # the --timestamps prefix of the current line
    for n, raw in enumerate(lines, start=1):
        s = raw.rstrip()
        if m := _STAMP.match(s):
            stamp, s = m["when"], s[m.end():]
        if s.lstrip().startswith(INTERRUPT):
            ledger.truncated(f"interrupted by ^C (line {n})")
            s = s.lstrip()[len(INTERRUPT):]
            if not s.strip():
                ledger.skip(n, "interrupt (^C)")
                continue
        if expect_system and s and not s.startswith(("Control connection", "Time:", "Connecting")):
            pending["system_info"] = s.strip()
            ledger.parsed(n)
            expect_system = False
            continue
        expect_system = False
        if not s.strip():
            ledger.skip(n, "blank")
            continue
        m = _REPORT.match(s)
        if m and n == cut:
            _cut_off(ledger, n, s)
            continue
        if m:
            if run is None:  # a log whose head was cut off: the run starts here
                run = _new_run(runs, n, server=False, pending=pending, stamp=stamp)
            _report(run, n, m, ledger)
            continue
        if (m := _CONNECTING.match(s)) or (m := _ACCEPTED.match(s)):
            run = _new_run(runs, n, server=s.startswith("Accepted"), pending=pending, stamp=stamp)
            ledger.parsed(n)
            continue
        if m := _CONNECTED.match(s):
            if run is None:
                run = _new_run(runs, n, server=False, pending=pending, stamp=stamp)
            run.streams.setdefault(m["id"], len(run.streams))
            ledger.parsed(n)
            continue
        if m := _HEADER.match(s):
            if run is not None:
                if run.seen_separator and run.intervals:
                    run.in_summary = True
                if "Datagrams" in m["rest"] or "Jitter" in m["rest"]:
                    run.protocol = run.protocol or "UDP"
            ledger.skip(n, "header")
            continue
        if _SEPARATOR.match(s):
            if run is not None:
                run.seen_separator = True
            ledger.skip(n, "separator")
            continue
        if _REVERSE.match(s):
            if run is not None:
                run.reverse = True
            ledger.parsed(n)
            continue
        if _NOTICE.match(s):
            ledger.skip(n, "out-of-order notice")
            continue
        m = _OUT_OF_ORDER.match(s)
        if m and run is not None:
            run.out_of_order = np.nansum([run.out_of_order, int(m.group(1))])
            ledger.parsed(n)
            continue
        if _WARNING.match(s):
            ledger.skip(n, "warning")
            continue
        if m := _ERROR.match(s):
            if run is not None and not run.error:
                run.error = m["message"]
            else:
                errors.append((n, f"iperf3 reported: {m['message']}"))
            ledger.parsed(n)
            continue
        if m := _VERSION.match(s):
            pending["version"] = m["version"]
            expect_system = True
            ledger.parsed(n)
            continue
        if m := _STARTING.match(s):
            target = run.meta if run is not None else pending
            target.update(m.groupdict())
            ledger.parsed(n)
            continue
        if m := _CPU.match(s):
            if run is not None:
                run.meta.update(cpu_host=m["host"], cpu_remote=m["remote"])
            ledger.parsed(n)
            continue
        if m := _CONGESTION.match(s):
            if run is not None:
                run.meta[m["side"] + "_congestion"] = m["algo"]
            ledger.parsed(n)
            continue
        if _DONE.match(s) or _LISTENING.match(s) or _RULE.match(s):
            ledger.skip(n, "banner")
            continue
        if _SENT.match(s):
            ledger.skip(n, "datagram count (repeats the summary)")
            continue
        if m := _TIME.match(s):
            (run.meta if run is not None else pending)["time"] = m["when"]
            ledger.parsed(n)
            continue
        if _VERBOSE_INFO.match(s):
            ledger.skip(n, "verbose info")
            continue
        # anything else stays unmarked: the ledger reports it as unrecognised
    if cut and cut in ledger.unmarked():
        _cut_off(ledger, cut, lines[-1])
    runs = [r for r in runs if r.intervals or r.summary]
    if not runs:
        if errors:
            line, message = errors[0]
            raise ParseError(message, line=line)
        ledger.close()  # raises for the first error or unrecognised line, if any
        raise ParseError("no iperf3 report lines", line=1)
    return _process(runs, ledger)


def _cut_off(ledger, n, line):
    ledger.skip(n, "truncated line")
    ledger.truncated(f"the last line was cut off: {line.strip()[:60]!r}")


def _new_run(runs, n, server, pending, stamp=""):
    run = _Run(n, server)
    run.meta["stamp"] = stamp
    if "time" in pending:
        run.meta["time"] = pending.pop("time")
    run.version = pending.pop("version", "")
    run.system_info = pending.pop("system_info", "")
    for key in ("protocol", "streams", "blksize", "omit", "duration"):
        if key in pending:
            run.meta[key] = pending.pop(key)
    runs.append(run)
    return run


def _report(run, n, m, ledger):
    """File one report line of ``run`` (interval, [SUM] or summary) by its shape."""
    rest = m["rest"].rstrip()
    tag = _TAG.search(rest)
    if tag:
        rest = rest[: tag.start()]
    omitted = _OMITTED.search(rest)
    if omitted:
        rest = rest[: omitted.start()]
    rest = rest.strip()
    if rest and not (_REST_NUMBER.match(rest) or _REST_UDP.match(rest)):
        ledger.error(n, f"unrecognised columns after the rate: {rest!r}")
        return
    if _REST_UDP.match(rest):
        run.protocol = run.protocol or "UDP"
    role = m["role"] or ""
    # forward = client to server; a bidir client's forward streams are TX-C, a server's RX-S
    direction = "rev" if role in ("RX-C", "TX-S") else "fwd"
    summary = run.in_summary or tag is not None
    run.tagged = run.tagged or (summary and tag is not None)
    if m["id"] == "SUM":
        if summary:
            run.summary[("SUM", direction, tag["tag"] if tag else "sender")] = (n, m, rest)
        else:
            run.sums.setdefault(direction, []).append((n, m, rest, bool(omitted)))
        ledger.parsed(n)
        return
    index = run.streams.setdefault(m["id"].strip(), len(run.streams))
    if role:
        run.role[index] = role
    if summary:
        run.summary[(index, direction, tag["tag"] if tag else "sender")] = (n, m, rest)
    else:
        run.intervals.setdefault(index, []).append((n, m, rest, bool(omitted)))
        if rest and index not in run.sends:
            # TCP Retr/Cwnd or a bare datagram count: the sender's view; jitter/loss: receiver's
            run.sends[index] = bool(_REST_NUMBER.match(rest))
    ledger.parsed(n)


# --- conversion: the one place where printed strings become numbers --------------------------------

def _values(m, rest, protocol):
    """(start, end, bytes, bit/s, retransmits, cwnd, packets, jitter, lost) of one report line."""
    out = [float(m["start"]), float(m["end"]), to_bytes(m["xfer"], m["xunit"]),
           to_bits_per_second(m["rate"], m["runit"]), _NAN, _NAN, _NAN, _NAN, _NAN]
    if u := _REST_UDP.match(rest):
        out[6], out[7], out[8] = float(u["total"]), float(u["jitter"]), float(u["lost"])
    elif t := _REST_NUMBER.match(rest):
        if protocol == "UDP":
            out[6] = float(t["n"])
        else:
            out[4] = float(t["n"])
            if t["cwnd"]:
                out[5] = to_bytes(t["cwnd"], t["cunit"])
    return out


_W = 9  # width of a _values row


def _process(runs, ledger):
    R = len(runs)
    S = max(max(len(r.streams), 1) for r in runs)
    I = max((max((len(v) for v in r.intervals.values()), default=0) for r in runs), default=0)
    iv = np.full((R, S, I, _W), _NAN)
    omitted = np.zeros((R, S, I), np.int8)
    line = np.full((R, S, I), -1, np.int64)
    times = np.full((R, I, 2), _NAN)
    sums = np.full((R, I, 2), _NAN)        # iperf3's own [SUM] bytes, bit/s (forward)
    st = np.full((R, S, 2, _W), _NAN)      # per stream: sender, receiver summary
    direction = np.full((R, S), "", dtype="<U7")
    run_sum = np.full((R, 4, _W), _NAN)    # forward sender, forward receiver, reverse sender, reverse receiver
    protocol, error, version, sysinfo, congestion = [], [], [], [], ([], [])
    num = {k: np.full(R, _NAN) for k in ("streams", "blksize", "omit", "duration", "cpu_host", "cpu_remote")}
    truncation = []
    summaries = []
    checks = []
    for r, run in enumerate(runs):
        proto = run.protocol or run.meta.get("protocol") or "TCP"
        protocol.append(proto)
        forward = []
        for index in range(len(run.streams)):
            role = run.role.get(index, "")
            if role:
                sends = role[0] == "T"
                fwd = (role == "TX-C") if not run.server else (role == "RX-S")
            elif not run.server:
                sends, fwd = not run.reverse, True
            else:
                sends, fwd = run.sends.get(index, False), True
            direction[r, index] = "send" if sends else "receive"
            if fwd:
                forward.append(index)
            for k, (n, m, rest, omit) in enumerate(run.intervals.get(index, ())):
                iv[r, index, k] = _values(m, rest, proto)
                omitted[r, index, k] = omit
                line[r, index, k] = n
                if np.isnan(times[r, k, 0]):
                    times[r, k] = iv[r, index, k, :2]
            for t, tag in enumerate(("sender", "receiver")):
                for d in ("fwd", "rev"):
                    if (index, d, tag) in run.summary:
                        _, m, rest = run.summary[(index, d, tag)]
                        st[r, index, t] = _values(m, rest, proto)
        for k, (n, m, rest, omit) in enumerate(run.sums.get("fwd", ())):
            if k < I:
                sums[r, k] = _values(m, rest, proto)[2:4]
        printed = {}
        for slot, (d, tag) in enumerate((("fwd", "sender"), ("fwd", "receiver"), ("rev", "sender"), ("rev", "receiver"))):
            if ("SUM", d, tag) in run.summary:
                _, m, rest = run.summary[("SUM", d, tag)]
                run_sum[r, slot] = _values(m, rest, proto)
            else:
                chosen = forward if d == "fwd" else [i for i in range(len(run.streams)) if i not in forward]
                rows = st[r, chosen, slot % 2] if chosen else np.full((0, _W), _NAN)
                have = ~np.isnan(rows[:, 2]) if rows.size else np.zeros(0, bool)
                if have.any() and not have.all():
                    # a stream's line was lost (the log was cut inside the summary): a sum
                    # over the others would pass for the run's total
                    ids = sorted(int(i) for i, k in run.streams.items() if k in np.asarray(chosen)[~have])
                    truncation.append(f"run at line {run.line}: no {tag} summary line for stream(s) {ids}; "
                                      f"the {tag} total is unknown")
                elif have.any():
                    run_sum[r, slot] = rows[0]
                    run_sum[r, slot, 2:] = np.nansum(rows[:, 2:], axis=0) if len(rows) > 1 else rows[0, 2:]
                    if len(rows) > 1:   # iperf3 prints a [SUM] for every -P run
                        truncation.append(f"run at line {run.line}: the [SUM] {tag} line is missing "
                                          "(the total is the sum of the streams' lines)")
            if not np.isnan(run_sum[r, slot, 2]):
                printed[("" if d == "fwd" else "reverse_") + tag] = _summary_dict(run_sum[r, slot])
        summaries.append(printed)
        checks.extend(_consistency(run, r, st[r], run_sum[r], iv[r], omitted[r], sums[r], forward))
        checks.extend(_stream_interval_checks(run, st[r], iv[r], omitted[r], direction[r]))
        num["streams"][r] = float(run.meta["streams"]) if "streams" in run.meta else len(forward)
        for key in ("blksize", "omit", "duration", "cpu_host", "cpu_remote"):
            if key in run.meta:
                num[key][r] = float(run.meta[key])
        error.append(run.error)
        version.append(run.version)
        sysinfo.append(run.system_info)
        congestion[0].append(run.meta.get("snd_congestion", ""))
        congestion[1].append(run.meta.get("rcv_congestion", ""))
        if not run.summary:
            n_iv = max((len(v) for v in run.intervals.values()), default=0)
            truncation.append(f"run at line {run.line}: cut off after {n_iv} interval(s); "
                              "its summary lines are lost")
        elif run.error:
            truncation.append(f"run at line {run.line}: iperf3 reported {run.error!r}; "
                              "totals not exchanged are NaN")
        else:
            # iperf3 prints each sender summary line with its receiver line after it: a
            # log ending in between lost the receiver's (throughput is then the sender's)
            for d in ("fwd", "rev"):
                tags = {tag for _, direction, tag in run.summary if direction == d}
                if "sender" in tags and "receiver" not in tags:
                    truncation.append(f"run at line {run.line}: the {'reverse ' if d == 'rev' else ''}"
                                      "receiver summary lines are lost")
    # a receiver's 0 bytes after a sender that moved data: never exchanged (interrupted client);
    # a UDP receiver line of 0 datagrams (0/0): in a run that ended in an error the server's
    # report never came back, and its counts (so the loss) are unknown, not the sender's; in
    # a complete run no datagram arrived (throughput 0, every datagram sent lost)
    udp = np.array(protocol) == "UDP"
    zero = udp & (run_sum[:, 1, 2] == 0) & (run_sum[:, 1, 6] == 0) & (run_sum[:, 0, 2] > 0)
    failed = np.array([bool(run.error) for run in runs], dtype=bool)
    unreported, none_arrived = zero & failed, zero & ~failed & (run_sum[:, 0, 6] > 0)
    for r in np.flatnonzero(unreported).tolist():
        truncation.append(f"run at line {runs[r].line}: the receiver's report never came back (its line "
                          "holds 0 datagrams): its counts, the loss and the throughput are unknown (the sender's "
                          "rate is the load offered)")
    for s_slot, r_slot in ((0, 1), (2, 3)):
        lost = (run_sum[:, r_slot, 2] == 0) & (run_sum[:, s_slot, 2] > 0) & ~none_arrived
        run_sum[lost, r_slot] = _NAN
    lost = (st[:, :, 1, 2] == 0) & (st[:, :, 0, 2] > 0) & ~none_arrived[:, None]
    st[lost, 1] = _NAN
    sender, receiver = run_sum[:, 0], run_sum[:, 1]
    have_rcv = ~np.isnan(receiver[:, 3])
    chosen = np.where(have_rcv[:, None], receiver, sender)
    # a UDP sender's rate is the load offered, not a throughput: without the receiver's
    # line (lost, or never came back) the throughput is unknown (3.0's one untagged line
    # holds the receiver's loss beside the sender's rate: it stays the throughput)
    offered_only = udp & ~have_rcv & np.array([run.tagged for run in runs], dtype=bool)
    chosen[offered_only, 2:4] = _NAN
    stream_chosen = np.where(np.isnan(st[:, :, 1, 3])[..., None], st[:, :, 0], st[:, :, 1])
    udp_src = np.where((np.isnan(receiver[:, 6]) & ~unreported)[:, None], sender, receiver)
    # without the receiver's line (a log cut before it), a tagged sender line's jitter and
    # lost count are iperf3's placeholders (0.000 ms, 0/N): the loss is unknown, not 0 %
    sender_only = udp & np.isnan(receiver[:, 6]) & ~unreported & np.array([run.tagged for run in runs], dtype=bool)
    udp_src[sender_only, 7] = udp_src[sender_only, 8] = _NAN
    udp_src[none_arrived, 6] = udp_src[none_arrived, 8] = sender[none_arrived, 6]
    udp_src[none_arrived, 7] = _NAN
    loss = np.where(udp & (udp_src[:, 6] > 0), udp_src[:, 8] / np.where(udp_src[:, 6] > 0, udp_src[:, 6], 1), _NAN)
    reverse = np.where(np.isnan(run_sum[:, 3, 3]), run_sum[:, 2, 3], run_sum[:, 3, 3])

    R1, RS, RSI, RI = ("run",), ("run", "stream"), ("run", "stream", "interval"), ("run", "interval")
    variables = {
        "throughput": (R1, chosen[:, 3]),
        "throughput_sender": (R1, sender[:, 3]),
        "throughput_receiver": (R1, receiver[:, 3]),
        "bytes": (R1, chosen[:, 2]),
        "duration": (R1, chosen[:, 1] - chosen[:, 0]),
        "streams": (R1, num["streams"]),
        "protocol": (R1, np.array(protocol, dtype=str)),
        "window_requested": (R1, np.full(R, _NAN)),
        "window_actual": (R1, np.full(R, _NAN)),
        "loss_fraction": (R1, loss),
        "retransmits": (R1, np.where(udp, _NAN, sender[:, 4])),
        "jitter": (R1, np.where(udp, udp_src[:, 7], _NAN)),
        "packets": (R1, np.where(udp, udp_src[:, 6], _NAN)),
        "packets_lost": (R1, np.where(udp, udp_src[:, 8], _NAN)),
        "run_line": (R1, np.array([run.line for run in runs], dtype=np.int64)),
        "start_time": (R1, np.array([from_text(run.meta.get("time") or run.meta.get("stamp")) for run in runs],
                                    dtype="datetime64[ns]")),
        "stream_throughput": (RS, stream_chosen[..., 3]),
        "stream_bytes": (RS, stream_chosen[..., 2]),
        "stream_direction": (RS, direction),
        "interval_start": (RI, times[..., 0]),
        "interval_end": (RI, times[..., 1]),
        "interval_bytes": (RSI, iv[..., 2]),
        "interval_throughput": (RSI, iv[..., 3]),
        "interval_retransmits": (RSI, iv[..., 4]),
        "interval_cwnd": (RSI, iv[..., 5]),
        "line": (RSI, line),
    }
    extras = {
        "iperf3_version": (R1, np.array(version, dtype=str), "1", "iperf3 version (-V)"),
        "iperf3_role": (R1, np.array(["server" if run.server else "client" for run in runs]), "1",
                        "side that wrote the log"),
        "iperf3_reverse": (R1, np.array([run.reverse for run in runs], dtype=np.int8), "1", "1 if 'Reverse mode'"),
        "iperf3_bidir": (R1, np.array([bool(run.role) for run in runs], dtype=np.int8), "1", "1 if --bidir"),
        "iperf3_error": (R1, np.array(error, dtype=str), "1", "error iperf3 printed (empty if none)"),
        "iperf3_system_info": (R1, np.array(sysinfo, dtype=str), "1", "system line printed with -V"),
        "iperf3_out_of_order": (R1, np.array([run.out_of_order for run in runs], dtype=float), "count",
                                "UDP datagrams received out of order (NaN where not printed)"),
        "iperf3_blksize": (R1, num["blksize"], "byte", "length of each write (-V)"),
        "iperf3_omit": (R1, num["omit"], "s", "seconds omitted at the start (-V)"),
        "iperf3_duration_requested": (R1, num["duration"], "s", "requested test length (-V)"),
        "iperf3_cpu_host": (R1, num["cpu_host"], "percent", "CPU use of the host that wrote the log (-V)"),
        "iperf3_cpu_remote": (R1, num["cpu_remote"], "percent", "CPU use of the other host (-V)"),
        "iperf3_sender_congestion": (R1, np.array(congestion[0], dtype=str), "1", "sender's TCP congestion control (-V)"),
        "iperf3_receiver_congestion": (R1, np.array(congestion[1], dtype=str), "1", "receiver's TCP congestion control (-V)"),
        "iperf3_bytes_sender": (R1, sender[:, 2], "byte", "bytes in the sender's summary line"),
        "iperf3_bytes_receiver": (R1, receiver[:, 2], "byte", "bytes in the receiver's summary line"),
        "iperf3_throughput_reverse": (R1, reverse, "bit/s", "--bidir: reverse direction, receiver side where printed"),
        "iperf3_stream_throughput_sender": (RS, st[:, :, 0, 3], "bit/s", "stream's sender summary line"),
        "iperf3_stream_retransmits": (RS, st[:, :, 0, 4], "count", "stream's TCP retransmissions"),
        "iperf3_stream_jitter": (RS, st[:, :, 1, 7], "ms", "stream's UDP jitter (receiver line)"),
        "iperf3_stream_packets": (RS, stream_chosen[..., 6], "count", "stream's UDP datagrams"),
        "iperf3_stream_lost_packets": (RS, st[:, :, 1, 8], "count", "stream's UDP datagrams lost"),
        "iperf3_interval_packets": (RSI, iv[..., 6], "count", "UDP datagrams in the interval"),
        "iperf3_interval_jitter": (RSI, iv[..., 7], "ms", "UDP jitter in the interval (receiver)"),
        "iperf3_interval_lost_packets": (RSI, iv[..., 8], "count", "UDP datagrams lost in the interval"),
        "iperf3_interval_omitted": (RSI, omitted, "1", "1 if printed '(omitted)' (-O)"),
        "iperf3_interval_sum_bytes": (RI, sums[..., 0], "byte", "iperf3's own [SUM] line, forward direction"),
        "iperf3_interval_sum_throughput": (RI, sums[..., 1], "bit/s", "iperf3's own [SUM] line, forward direction"),
    }
    if truncation:
        for message in truncation:
            ledger.truncated(message)
    versions = [v for v in version if v]
    return build(KIND, variables, fmt=NAME, tool=TOOL, tool_version=versions[0] if versions else "",
                 ledger=ledger, extras=extras, tool_summary={"runs": summaries}, consistency=checks)


#: iperf3 prints amounts and rates with 3 significant digits (``1.22 MBytes``, ``9.96
#: Mbits/sec``): each is off by up to half a unit of its last digit, 0.5 % of ``1.00``.
PRINT_RTOL = 0.005
#: A total against a sum of printed values: both sides rounded.
SUM_RTOL = 2 * PRINT_RTOL
#: Interval times are printed to 0.01 s: a rate is bytes x 8 / duration up to that.
TIME_RESOLUTION = 0.005
_SLOTS = (("fwd", "sender"), ("fwd", "receiver"), ("rev", "sender"), ("rev", "receiver"))
_INTERVALS_NOTE = "omitted (-O) intervals excluded; 3 significant digits printed"
#: The last interval line may start after the one before it ends: a genuine iperf3 log of
#: ../shared/corpus/real/starlink-drive-as-found (a stalled UDP run, -R -t 120) prints
#: ``119.00-119.50`` then ``120.00-136.58``: the bytes of 119.50-120.00 are in its summary
#: and in no interval line. A gap of more than the 0.01 s the times are printed to, there
#: only: a gap between two earlier lines is a line lost from the log.
GAP_S = 0.015


def _uncovered(times):
    """Seconds between the last interval line's start and the end of the one before it
    (``times``: (interval, 2) start and end, NaN rows ignored), where more than
    :data:`GAP_S`; else 0."""
    times = times[~np.isnan(times[:, 0])]
    if len(times) < 2:
        return 0.0
    times = times[np.argsort(times[:, 0], kind="stable")]
    gap = float(times[-1, 0] - times[:-1, 1].max())
    return gap if gap > GAP_S else 0.0


def _against_intervals(name, total, amounts, times):
    """A summary's bytes against the sum of its interval lines: equal where the lines tile
    the run, at most the summary where the last one starts late (:func:`_uncovered`)."""
    gap = _uncovered(times)
    late = f"; the last interval line starts {gap:.2f} s late: their sum is at most the summary"
    note = _INTERVALS_NOTE + (late if gap else "")
    return consistency_check(name, total, float(np.nansum(amounts)), rtol=SUM_RTOL, note=note, at_most=bool(gap))


def _consistency(run, r, streams, totals, iv, omitted, sums, forward):
    """Checks of one run's summary lines against its other lines (see docs/consistency.md).

    ``streams`` (stream, side, column) and ``totals`` (slot, column) are the summary lines
    as :func:`_values` rows; ``iv``/``omitted`` the interval lines; ``sums`` the interval
    ``[SUM]`` lines (bytes, bit/s); ``forward`` the forward streams' indices.
    """
    where = f"run at line {run.line}: "
    checks = []
    for slot, (d, tag) in enumerate(_SLOTS):
        if ("SUM", d, tag) not in run.summary:
            continue
        chosen = forward if d == "fwd" else [i for i in range(len(run.streams)) if i not in forward]
        rows = streams[chosen, slot % 2] if chosen else np.full((0, _W), _NAN)
        if len(rows):   # a stream's line lost: NaN, which disagrees
            checks.append(consistency_check(
                where + f"bytes: [SUM] {tag} line vs the streams' {tag} lines", totals[slot, 2],
                float(rows[:, 2].sum()), rtol=SUM_RTOL, note="3 significant digits printed"))
    for slot, (d, tag) in enumerate(_SLOTS):
        start, end, amount, rate = totals[slot, :4]
        if np.isnan(amount) or not end > start:
            continue
        duration = end - start
        checks.append(consistency_check(
            where + f"{'reverse ' if d == 'rev' else ''}{tag} summary: bit/s vs bytes x 8 / seconds",
            rate, amount * 8 / duration, rtol=SUM_RTOL + TIME_RESOLUTION / duration,
            note="amounts, rates and times as printed (3 digits, 0.01 s)"))
    # this host's own side: its interval lines add up to its summary line
    own = 1 if (run.server != run.reverse) else 0   # 0 = sender, 1 = receiver
    if not run.role and forward and not np.isnan(totals[own, 2]):
        kept = omitted[forward] == 0
        per_interval = np.where(kept, iv[forward, :, 2], np.nan)
        n_iv = int((~np.isnan(iv[forward[0], :, 2])).sum())
        if n_iv:
            checks.append(_against_intervals(
                where + f"bytes: {_SLOTS[own][1]} summary vs the sum of the interval lines", totals[own, 2],
                per_interval, iv[forward[0], :, :2]))
    return checks


def _stream_interval_checks(run, streams, iv, omitted, direction):
    """Each stream's summary line of this host's side (sender where it sends, receiver
    where it receives, per stream: ``--bidir`` has both) against the sum of its interval
    lines: an interval line lost or repeated under an intact summary changes only those."""
    checks = []
    ids = {k: sid for sid, k in run.streams.items()}
    for index in range(len(run.streams)):
        side = 0 if direction[index] == "send" else 1
        total = streams[index, side, 2]
        amounts = np.where(omitted[index] == 0, iv[index, :, 2], np.nan)
        if np.isnan(total) or np.isnan(amounts).all():
            continue
        label = f"[{ids.get(index, index)}]" + (f"[{run.role[index]}]" if run.role.get(index) else "")
        checks.append(_against_intervals(
            f"run at line {run.line}: bytes: stream {label} {_SLOTS[side][1]} line vs the sum of its interval lines",
            total, amounts, iv[index, :, :2]))
    return checks


def _summary_dict(row):
    out = {"seconds": row[1] - row[0], "bytes": row[2], "bits_per_second": row[3]}
    for key, i in (("retransmits", 4), ("packets", 6), ("jitter_ms", 7), ("lost_packets", 8)):
        if not np.isnan(row[i]):
            out[key] = row[i]
    return {k: float(v) for k, v in out.items()}
