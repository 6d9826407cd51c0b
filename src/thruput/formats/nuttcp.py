"""nuttcp output (client side; brief, ``-v`` verbose and ``-fparse`` key=value forms),
nuttcp 6.x to 8.x, TCP and UDP (kind ``throughput``).

One run per file. nuttcp prints, depending on its options:

brief (default)
    One line per ``-i`` interval from the receiver, ``2.8125 MB /   0.50 sec =   47.1827
    Mbps     0 retrans`` (8.x adds ``13 KB-cwnd``; UDP: ``731 /  3641 ~drop/pkt 20.08
    ~%loss``), then a blank line and the final line ``18.5 MB /   3.26 sec =   47.5 Mbps 0
    %TX 2 %RX 0 retrans 0.10 msRTT`` (UDP: ``... 0 / 306 drop/pkt 0.00 %loss``). nuttcp
    computes the brief final line from the receiver's statistics.
``-v``
    Both ends' own lines, prefixed ``nuttcp-t:`` (transmitter) and ``nuttcp-r:``
    (receiver): version, buffer length and stream count, windows, ``connect``/``accept``
    (MSS, RTT), and each end's final ``X MB in Y real seconds = Z KB/sec = R Mbps``;
    the transmitter adds ``retrans = N`` (8.x: ``cwnd = K KB``), a UDP receiver ``D / P
    drop/pkt L% data loss``. The interval lines are the brief ones.
``-fparse``
    The same facts as ``key=value`` words (``megabytes=2.8 real_sec=0.50 rate_Mbps=47.2
    retrans=0``; final ``megabytes=... real_seconds=... rate_Mbps=... tx_cpu=...``).

Schema (dims ``run`` = 1, ``stream`` = 1, ``interval``)
    ``throughput``, ``throughput_receiver``, ``bytes``, ``duration``: the receiver's final
    line (``nuttcp-r:`` in verbose logs, else the brief/fparse final line). A run cut off
    before it keeps what it measured: ``throughput``, ``bytes`` and ``duration`` are its
    intervals' (their bytes x 8 over their seconds; UDP ``packets`` and ``packets_lost``
    their sums), ``throughput_receiver`` NaN (not printed), flagged in ``truncation``.
    ``throughput_sender``: the transmitter's final line (``-v`` only, else NaN).
    ``retransmits``: the transmitter's ``retrans =`` or the brief final line's count.
    ``packets``, ``packets_lost``, ``loss_fraction``: UDP drop/pkt of the final line.
    ``streams``: ``nstream=`` (``-v``), NaN in brief output (it does not say). nuttcp reports ``-N`` streams summed only, so
    the ``stream`` dimension has one entry holding the sum (``nuttcp_streams_summed`` = 1).
    ``stream_direction``: ``send`` when the client transmits, ``receive`` under ``-r``;
    known from the order of the ``-v`` lines (the client prints its own end first), else
    ``""``. ``window_actual``: the transmitter's ``send window size`` (``-v``), else NaN;
    ``window_requested`` NaN (not printed). ``interval_*``: the receiver's interval lines;
    ``interval_start``/``interval_end`` accumulate their durations; ``interval_cwnd``
    from 8.x's ``KB-cwnd`` (1 KB = 1024 byte).

Units
    nuttcp's ``MB`` is 2**20 byte and ``Mbps`` 10**6 bit/s (``3281.8125 MB in 2.00 s =
    13764.36 Mbps``); ``KB`` (cwnd) is 1024 byte.

Consistency (``attrs["consistency"]``)
    Bytes and retransmits of the final line against the sums of the interval lines where
    the intervals cover the run (to the rounding of their printed lengths); nuttcp prints
    no partial last interval, so where they do not, the check is only that the intervals'
    bytes do not exceed the final line's. Sender against receiver bytes (TCP); the printed UDP
    loss percentage against drop/pkt.

Truncation
    A log without the receiver's final line (or, in ``-v`` logs, without the
    transmitter's) keeps its intervals and says what is lost in ``truncation`` (with the
    error nuttcp printed, if any); a last line without its line end is skipped as cut off.
    A log holding only nuttcp's error (``nuttcp-t: v6.1.2: Error: connect: Connection
    refused``, ``nuttcp-t: v8.1.4: error from server`` and the reason that follows) is a
    failed test: :class:`~thruput.errors.ParseError` with that message.

Quirks
    A negative interval ``retrans`` (``-2 retrans``: some versions print the difference of
    the kernel's counter, which can go backwards) is read, kept NaN in
    ``interval_retransmits`` and flagged by a failed check (a count cannot be negative).
    Fields may touch where a number outgrows its printf column (``sec =10068.1314
    Mbps0 retrans``): spaces between fields are optional.

Reference: nuttcp(8) manual and ``nuttcp -h`` of nuttcp 6.1.2; nuttcp 8.1.4 logs of
the NUWiNS Starlink drive (``../shared/corpus/real/starlink-drive``).
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

NAME = "nuttcp"
KIND = "throughput"
TOOL = "nuttcp"
BINARY = False

#: nuttcp's MB (2**20 byte), KB (cwnd, 1024 byte) and Mbps (10**6 bit/s)
MB = 1024.0 ** 2
KB = 1024.0
MBPS = 1.0e6

# --- the spec: every kind of line nuttcp prints --------------------------------------------------
_NUM = r"\d+(?:\.\d+)?"
#: a brief report line, interval or final: "  2.8125 MB /   0.50 sec =   47.1827 Mbps <rest>"
#: (the spaces between fields may be missing: a number wider than its printf column
#: touches the word before it, "sec =10068.1314 Mbps0 retrans")
_BRIEF = re.compile(
    rf"^\s*(?P<mb>{_NUM}) MB /\s*(?P<sec>{_NUM}) sec =\s*(?P<rate>{_NUM}) Mbps(?P<rest>.*)$")
#: what follows the rate of an interval line (TCP, 8.x cwnd; UDP drops; then -frunningtotal
#: "Tot: ..." and -fxmitstats "Trans: ..." columns, which repeat the counts and are not kept)
_REST_INTERVAL = re.compile(
    rf"^(?:\s*(?P<retrans>-?\d+) retrans(?:\s*(?P<cwnd>\d+) KB-cwnd)?"
    rf"|\s*(?P<drop>-?\d+) /\s*(?P<pkt>\d+) ~drop/pkt\s*(?P<loss>-?{_NUM}) ~%loss)?"
    rf"(?P<extra>\s+(?:Tot|Trans):.*)?\s*$")
#: what follows the rate of the final brief line
_REST_FINAL = re.compile(
    rf"^\s*(?P<tx>\d+) %TX\s*(?P<rx>\d+) %RX"
    rf"(?:\s*(?P<retrans>-?\d+) retrans(?:\s*(?P<cwnd>\d+) KB-cwnd)?"
    rf"|\s+(?P<drop>-?\d+) / (?P<pkt>\d+) drop/pkt (?P<loss>-?{_NUM}) %loss)?"
    rf"(?:\s+(?P<rtt>{_NUM}) msRTT)?(?P<extra>\s+Trans:.*)?\s*$")
#: -fparse: "megabytes=2.8125 real_sec=0.50 rate_Mbps=47.18 retrans=0" (no side prefix)
_PARSE_WORDS = re.compile(r"^megabytes=\S+(?: \w+=\S+)+\s*$")
_WORD = re.compile(r"(?<!\w)(\w+)=(\S+)")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
#: -fparse keys read as numbers (after renaming by _FPARSE); the first three must be there
_FPARSE_REQUIRED = {"interval": ("megabytes", "real_sec", "rate_Mbps"),
                    "final": ("megabytes", "real_seconds", "rate_Mbps")}
_FPARSE_NUMBERS = ("megabytes", "real_sec", "real_seconds", "rate_Mbps", "retrans", "cwnd", "drop", "pkt",
                   "loss", "tx", "rx", "rtt", "nstream", "buflen", "mss", "rtt_ms", "send_window_size",
                   "receive_window_size", "reporting_interval")
#: a line of one end (-v): "nuttcp-t: ...", "nuttcp-r: ..."
#: (nuttcp writes "server " on stderr before its stdout line "nuttcp-t: ...: error from
#: server": a log of both streams holds them on one line)
_SIDE = re.compile(r"^(?:server )?nuttcp-(?P<side>[tr]): (?P<msg>.*\S|)\s*$")
_SIDE_LINES = {   # message -> what it holds (the converter in _process reads the groups)
    "version": re.compile(r"^v(?P<version>\d+\.\d+\.\d+\S*): socket$"),
    "socket": re.compile(
        r"^buflen=(?P<buflen>\d+),? nstream=(?P<nstream>\d+),? port=\d+,?"
        r" (?:mode=)?(?P<protocol>tcp|udp)(?: -> \S+| host=\S+)?$"),
    "final": re.compile(
        rf"^(?P<mb>{_NUM}) MB in (?P<sec>{_NUM}) real seconds = (?P<kbps>{_NUM}) KB/sec = (?P<rate>{_NUM}) Mbps$"),
    "retrans": re.compile(r"^retrans = (?P<retrans>-?\d+)(?: cwnd = (?P<cwnd>\d+) KB)?$"),
    "drops": re.compile(rf"^(?P<drop>-?\d+) / (?P<pkt>\d+) drop/pkt (?P<loss>-?{_NUM})% data loss$"),
    "windows": re.compile(r"^send window size = (?P<send>\d+), receive window size = (?P<receive>\d+)$"),
    "connect": re.compile(
        rf"^(?:connect to|accept from) \S+(?: with(?: mss=(?P<mss>\d+),?)?(?: RTT=(?P<rtt>{_NUM}) ms)?)?"
        r"(?: af=\w+)?$"),
    "interval": re.compile(rf"^interval reporting every (?P<interval>{_NUM}) seconds?$"),
    "time_limit": re.compile(rf"^time limit = (?P<time_limit>{_NUM}) seconds?$"),
    "error": re.compile(r"^(?:v\S+: )?(?P<error>Error: .+|error from server.*|server aborted connection.*)$"),
}
#: -v lines kept only as text (not data): why they are skipped
_SIDE_SKIPPED = (
    (re.compile(r"^available send window = \d+, available receive window = \d+$"), "available windows"),
    (re.compile(r"^send_window_avail=\d+ receive_window_avail=\d+$"), "available windows"),
    (re.compile(r"^initial congestion window = .*$"), "initial congestion window"),
    (re.compile(r"^rate limit = .*$|^rate_limit=.*$"), "rate limit"),
    (re.compile(r"^\d+ I/O calls, .*$|^io_calls=.*$"), "I/O call counts"),
    (re.compile(r"^(?=.*\duser )(?=.*sys )(?=.*real )|^stats=cpu "), "CPU usage"),
    (re.compile(rf"^{_NUM} MB in {_NUM} CPU seconds = .*$|^megabytes=\S+ cpu_seconds=.*$"), "CPU rate"),
    (re.compile(r"^Info: .*$"), "info"),
)
_ERRNO = re.compile(r"^errno=\d+\s*$")

_SNIFF = re.compile(
    r"^(?:(?:server )?nuttcp-[tr]: v\d+\.\d+\.\d+\S*: (?:socket|Error|error from server|server aborted connection)"
    rf"|\s*{_NUM} MB /\s*{_NUM} sec =\s*{_NUM} Mbps(?:\s*-?\d+ (?:retrans|%TX)|\s*-?\d+ /\s*\d+ ~?drop/pkt)"
    r"|megabytes=\d+\.\d+ real_sec(?:onds)?=\d+\.\d+ rate_Mbps=)", re.MULTILINE)

#: half the last digit of the seconds nuttcp prints ("0.50 sec", "129.84 real seconds")
PRINTED_SECONDS_ROUNDING = 0.005

_NAN = float("nan")


def sniff(head: str) -> bool:
    """True if ``head`` (the first 4 KB) holds lines only nuttcp prints."""
    return _SNIFF.search(head) is not None


def parse(text: str) -> xr.Dataset:
    """Parse nuttcp's client output (one run) into a throughput Dataset.

    Raises
    ------
    ParseError
        Empty input, unrecognised lines (naming them), a second run in the file, a log
        with nothing but nuttcp's error message, or one without any report.
    """
    lines = split_lines(text)
    if not lines or not text.strip():
        raise ParseError("empty input", line=1 if lines else None)
    ledger = Ledger(len(lines), lines=lines)
    cut = len(lines) if not text.endswith("\n") else 0
    found: dict[str, Any] = {"intervals": [], "brief": None, "t": {}, "r": {}, "first_side": "", "error": ""}
    for n, raw in enumerate(lines, start=1):
        s = raw.rstrip()
        if not s.strip():
            ledger.skip(n, "blank")
            continue
        if n == cut:  # nuttcp ends every line: a last line without its end was cut off
            ledger.cut_off(n, detail=f": {s.strip()[:60]!r}")
            continue
        if m := _BRIEF.match(s):
            _brief(found, n, m, ledger)
        elif _PARSE_WORDS.match(s):
            _words(found, n, dict(_WORD.findall(s)), ledger)
        elif m := _SIDE.match(s):
            _side(found, n, m["side"], m["msg"], ledger)
        elif _ERRNO.match(s):
            ledger.skip(n, "errno of the error above")
        # anything else stays unmarked: the ledger reports it as unrecognised
    if not found["intervals"] and found["brief"] is None and "final" not in found["t"] \
            and "final" not in found["r"]:
        if found["error"]:
            raise ParseError(f"nuttcp reported: {found['error']}", line=found["error_line"])
        ledger.close()
        raise ParseError("no nuttcp report lines", line=1)
    try:
        return _process(found, ledger)
    except (KeyError, ValueError, TypeError, IndexError) as exc:
        raise ParseError(f"unexpected nuttcp output ({type(exc).__name__}: {exc})", line=1) from None


def _brief(found, n, m, ledger):
    """File a brief report line: an interval, or the final line (it has %TX/%RX)."""
    rest = m["rest"]
    if f := _REST_FINAL.match(rest):
        _final_once(found, n)
        found["brief"] = (n, {"megabytes": m["mb"], "real_seconds": m["sec"], "rate_Mbps": m["rate"],
                              **{k: v for k, v in f.groupdict().items() if v is not None}})
        ledger.parsed(n)
    elif i := _REST_INTERVAL.match(rest):
        found["intervals"].append((n, {"megabytes": m["mb"], "real_sec": m["sec"], "rate_Mbps": m["rate"],
                                        **{k: v for k, v in i.groupdict().items() if v is not None}}))
        ledger.parsed(n)
    else:
        ledger.error(n, f"unrecognised columns after the rate: {rest.strip()!r}")


#: -fparse names -> the names used for brief lines
_FPARSE = {"data_loss": "loss", "tx_cpu": "tx", "rx_cpu": "rx", "rtt_ms": "rtt"}


def _bad_words(words, kind=None):
    """Why the -fparse ``words`` cannot be read (missing or non-numeric values), or ""."""
    missing = [k for k in _FPARSE_REQUIRED.get(kind, ()) if k not in words]
    if missing:
        return f"-fparse line without {', '.join(missing)}"
    bad = [k for k in _FPARSE_NUMBERS if k in words and not _NUMBER.match(words[k])]
    return f"-fparse value not a number: {bad[0]}={words[bad[0]][:30]!r}" if bad else ""


def _words(found, n, words, ledger):
    """File an -fparse line without side prefix: an interval (real_sec) or the final line."""
    words = {_FPARSE.get(k, k): v for k, v in words.items()}
    if problem := _bad_words(words, "final" if "real_seconds" in words else "interval"):
        ledger.error(n, problem)
        return
    if "real_seconds" in words:
        _final_once(found, n)
        found["brief"] = (n, words)
    else:
        found["intervals"].append((n, words))
    ledger.parsed(n)


def _final_once(found, n):
    if found["brief"] is not None:
        raise ParseError(f"a second run's final line at line {n} (the first at line "
                         f"{found['brief'][0]}): thruput reads one nuttcp run per file", line=n)


def _side(found, n, side, msg, ledger):
    """File one ``nuttcp-t:``/``nuttcp-r:`` line (-v, or -v -fparse)."""
    facts = found[side]
    found["first_side"] = found["first_side"] or side
    for key, pattern in _SIDE_LINES.items():
        if m := pattern.match(msg):
            if key == "error":   # each end's error, in order ("error from server", then its reason)
                reason = m["error"].removeprefix("Error: ")
                if reason not in found["error"]:
                    found["error"] = f"{found['error']}; {reason}" if found["error"] else reason
                found.setdefault("error_line", n)
            _set(found, facts, key, m.groupdict(), n, side)
            ledger.parsed(n)
            return
    # -fparse: "key=value key=value" (the -v forms above have commas and spaces around "=")
    if msg.startswith(("megabytes=", "buflen=", "connect=", "accept=", "send_window_size=",
                       "time_limit=", "reporting_interval=", "retrans=", "drop=")) and "=" in msg.split()[0]:
        words = dict(_WORD.findall(msg))
        if problem := _bad_words(words, "final" if "real_seconds" in words else None):
            ledger.error(n, problem)
            return
        if "real_seconds" in words:
            words = {"mb": words["megabytes"], "sec": words["real_seconds"], "rate": words["rate_Mbps"],
                     "kbps": words.get("rate_KBps")}
            key = "final"
        elif "cpu_seconds" in words:
            ledger.skip(n, "CPU rate")
            return
        else:
            key = "words"
            words = {**facts.get("words", {}), **words}
        _set(found, facts, key, words, n, side)
        ledger.parsed(n)
        return
    for pattern, reason in _SIDE_SKIPPED:
        if pattern.match(msg):
            ledger.skip(n, reason)
            return
    ledger.error(n, f"unrecognised nuttcp-{side} line: {msg[:60]!r}")


def _set(found, facts, key, values, n, side):
    if key in ("version", "final") and key in facts:
        raise ParseError(f"a second nuttcp-{side} {'header' if key == 'version' else 'final line'} "
                         f"at line {n}: thruput reads one nuttcp run per file", line=n)
    facts[key] = values
    facts.setdefault("lines", {})[key] = n


# --- conversion: the one place where printed strings become numbers --------------------------------

def _f(d, *keys):
    """The first of ``keys`` present in ``d`` as a float (NaN when none is)."""
    for key in keys:
        if d is not None and d.get(key) is not None:
            return float(d[key])
    return _NAN


def _process(found, ledger):
    t, r = found["t"], found["r"]
    tw = {**t.get("words", {})}
    rw = {**r.get("words", {})}
    brief = found["brief"][1] if found["brief"] else None
    intervals = found["intervals"]
    I = len(intervals)
    iv = np.full((I, 7), _NAN)  # sec, bytes, bit/s, retrans, cwnd, drop, pkt
    for k, (_, w) in enumerate(intervals):
        iv[k] = [_f(w, "real_sec"), _f(w, "megabytes") * MB, _f(w, "rate_Mbps") * MBPS,
                 _f(w, "retrans"), _f(w, "cwnd") * KB, _f(w, "drop"), _f(w, "pkt")]
    with np.errstate(over="ignore"):
        ends = np.cumsum(iv[:, 0]) if I else np.zeros(0)
    # a negative retrans count (a difference of a counter that went backwards) cannot be a
    # count: NaN, flagged by a failed check naming its line
    negative = [consistency_check(f"retransmits: interval line {intervals[k][0]} printed {iv[k, 3]:g}, "
                                  "a count below 0", iv[k, 3], _NAN,
                                  note="a difference of a counter that went backwards?")
                for k in np.flatnonzero(iv[:, 3] < 0).tolist()]
    iv[iv[:, 3] < 0, 3] = _NAN
    far = np.isinf(iv).any(axis=1) | np.isinf(ends)      # (a 400-digit number: damage)
    if far.any():
        raise ParseError("a number too large for a float (a damaged log?)",
                         line=intervals[int(np.flatnonzero(far)[0])][0])
    # the receiver's final numbers: its own -v line, else the brief / -fparse final line
    r_final, t_final = r.get("final"), t.get("final")
    if r_final:
        rcv = (_f(r_final, "mb") * MB, _f(r_final, "sec"), _f(r_final, "rate") * MBPS)
    elif brief:
        rcv = (_f(brief, "megabytes") * MB, _f(brief, "real_seconds"), _f(brief, "rate_Mbps") * MBPS)
    else:
        rcv = (_NAN, _NAN, _NAN)
    snd = (_f(t_final, "mb") * MB, _f(t_final, "sec"), _f(t_final, "rate") * MBPS) if t_final else (_NAN,) * 3
    socket = t.get("socket") or r.get("socket") or {}
    protocol = (socket.get("protocol") or tw.get("mode") or rw.get("mode") or "").upper()
    udp_drops = r.get("drops") or ({"drop": rw["drop"], "pkt": rw["pkt"]} if "drop" in rw else None) or \
        (brief if brief and "drop" in brief else None)
    if not protocol:
        protocol = "UDP" if udp_drops or (I and not np.isnan(iv[:, 6]).all()) else "TCP"
    retrans = _f(t.get("retrans"), "retrans")
    if np.isnan(retrans):
        retrans = _f(tw, "retrans") if "retrans" in tw else _f(brief, "retrans")
    cwnd = _f(t.get("retrans"), "cwnd") * KB
    if np.isnan(cwnd):
        cwnd = _f(brief, "cwnd") * KB
    packets, lost = _f(udp_drops, "pkt"), _f(udp_drops, "drop")
    loss_printed = _f(udp_drops, "loss")
    udp = protocol == "UDP"
    nstream = _f(socket, "nstream")
    if np.isnan(nstream):  # NaN where only the brief output is there: it does not say
        nstream = _f(tw, "nstream")
    windows = t.get("windows") or {}
    send_window = _f(windows, "send")
    if np.isnan(send_window):
        send_window = _f(tw, "send_window_size")
    connect = t.get("connect") or r.get("connect") or {}
    rtt = _f(brief, "rtt")
    if np.isnan(rtt):  # the end that connected measured it: the client's
        rtt = _f(t.get("connect"), "rtt")
    if np.isnan(rtt):
        rtt = _f(r.get("connect"), "rtt")
    if np.isnan(rtt):
        rtt = _f(tw, "rtt_ms")
    first = found["first_side"]
    direction = {"t": "send", "r": "receive"}.get(first, "")
    version = (t.get("version") or r.get("version") or {}).get("version", "")

    truncation = []
    measured = float(np.nansum(iv[:, 0])) if I else _NAN
    kept = rcv                      # what the run measured: its final line, else its intervals'
    if np.isnan(rcv[0]):
        # a cut run keeps what it measured: its intervals' bytes over their seconds
        what = (f"; throughput, bytes and duration are its intervals' ({measured:g} s measured)"
                if I and measured > 0 else "")
        truncation.append(f"cut off after {I} interval(s): the receiver's final line is lost{what}")
        if what:
            got = float(np.nansum(iv[:, 1]))
            kept = (got, measured, got * 8 / measured)
            if udp_drops is None and not np.isnan(iv[:, 6]).all():
                udp_drops = {"pkt": np.nansum(iv[:, 6]), "drop": np.nansum(iv[:, 5])}
                packets, lost = float(udp_drops["pkt"]), float(udp_drops["drop"])
        if found["error"]:
            truncation.append(f"nuttcp reported: {found['error']}")
    elif (t or r) and first and ("final" not in t):
        truncation.append("the transmitter's final lines (nuttcp-t) are lost")
    if truncation:
        ledger.truncated("; ".join(([ledger.truncation] if ledger.truncation else []) + truncation))

    summary = {}
    for label, values in (("receiver", rcv), ("sender", snd)):
        if not np.isnan(values[0]):
            summary[label] = {"bytes": values[0], "seconds": values[1], "bits_per_second": values[2]}
    if not np.isnan(retrans):
        summary.setdefault("sender", {})["retransmits"] = retrans
    if udp_drops:
        summary.setdefault("receiver", {}).update(packets=packets, lost_packets=lost, loss_percent=loss_printed)
    checks = negative + _checks(iv, rcv, snd, retrans, udp, packets, lost, loss_printed, bool(negative))
    finals = (("nuttcp-r", r_final), ("nuttcp-t", t_final),
              ("final", {"mb": brief.get("megabytes"), "sec": brief.get("real_seconds"),
                         "rate": brief.get("rate_Mbps"), "kbps": brief.get("rate_KBps")} if brief else None))
    checks.extend(_rate_checks(finals))

    R1, RS, RSI, RI = ("run",), ("run", "stream"), ("run", "stream", "interval"), ("run", "interval")
    one = lambda v: np.array([v], dtype=float)  # noqa: E731
    per_iv = lambda col: iv[:, col].reshape(1, 1, I)  # noqa: E731
    variables = {
        "throughput": (R1, one(kept[2])),
        "throughput_sender": (R1, one(snd[2])),
        "throughput_receiver": (R1, one(rcv[2])),
        "bytes": (R1, one(kept[0])),
        "duration": (R1, one(kept[1])),
        "streams": (R1, one(nstream)),
        "protocol": (R1, np.array([protocol])),
        "window_requested": (R1, one(_NAN)),
        "window_actual": (R1, one(send_window)),
        "loss_fraction": (R1, one(lost / packets if udp and packets > 0 else _NAN)),
        "retransmits": (R1, one(_NAN if udp else retrans)),
        "packets": (R1, one(packets if udp else _NAN)),
        "packets_lost": (R1, one(lost if udp else _NAN)),
        "run_line": (R1, np.array([1], dtype=np.int64)),
        "stream_throughput": (RS, one(kept[2]).reshape(1, 1)),
        "stream_bytes": (RS, one(kept[0]).reshape(1, 1)),
        "stream_direction": (RS, np.array([[direction]])),
        "interval_start": (RI, (ends - iv[:, 0]).reshape(1, I)),
        "interval_end": (RI, ends.reshape(1, I)),
        "interval_bytes": (RSI, per_iv(1)),
        "interval_throughput": (RSI, per_iv(2)),
        "interval_retransmits": (RSI, per_iv(3)),
        "interval_cwnd": (RSI, per_iv(4)),
        "line": (RSI, np.array([n for n, _ in intervals], dtype=np.int64).reshape(1, 1, I)),
    }
    extras = {
        "nuttcp_version": (R1, np.array([version]), "1", "nuttcp version (-v)"),
        "nuttcp_bytes_sender": (R1, one(snd[0]), "byte", "bytes in the transmitter's final line (-v)"),
        "nuttcp_duration_sender": (R1, one(snd[1]), "s", "real seconds in the transmitter's final line (-v)"),
        "nuttcp_cwnd": (R1, one(cwnd), "byte", "transmitter's congestion window at the end (8.x)"),
        "nuttcp_rtt": (R1, one(rtt), "ms", "RTT nuttcp printed (final line msRTT, else the -v connect line)"),
        "nuttcp_cpu_tx": (R1, one(_f(brief, "tx")), "percent", "transmitter CPU use (final line %TX)"),
        "nuttcp_cpu_rx": (R1, one(_f(brief, "rx")), "percent", "receiver CPU use (final line %RX)"),
        "nuttcp_buflen": (R1, one(_f(socket, "buflen") if socket else _f(tw, "buflen")), "byte",
                          "length of each write/read (-l, printed with -v)"),
        "nuttcp_mss": (R1, one(_f(connect, "mss") if connect else _f(tw, "mss")), "byte",
                       "TCP MSS of the data connection (-v)"),
        "nuttcp_receive_window": (R1, one(_f(r.get("windows"), "receive")), "byte",
                                  "receiver's receive window size (-v)"),
        "nuttcp_streams_summed": (R1, np.array([1], dtype=np.int8), "1",
                                  "1: the stream dimension holds all -N streams summed"),
        "nuttcp_interval_packets": (RSI, per_iv(6), "count", "UDP datagrams in the interval (~pkt)"),
        "nuttcp_interval_packets_lost": (RSI, per_iv(5), "count", "UDP datagrams lost in the interval (~drop)"),
    }
    return build(KIND, variables, fmt=NAME, tool=TOOL, tool_version=version, ledger=ledger,
                 extras=extras, tool_summary=summary, consistency=checks)


#: nuttcp prints MB with 4 decimals, KB/sec with 2, Mbps with 4 (3 with -fparse rate_Mbps
#: on 8.x: half a unit of the last digit either way is below 5e-4), seconds with 2; its
#: KB/sec and Mbps are computed from the exact seconds (``MB x 1024 / seconds``,
#: ``KB/sec x 8.192``), so each pair agrees up to the rounding of what it prints.
PRINTED_RATE_ROUNDING = 5e-4
PRINTED_MB_ROUNDING = 5e-5
PRINTED_KBPS_ROUNDING = 0.005
#: MB against KB/sec x seconds allows a whole unit of the printed seconds (0.01 s), not
#: half: in 3 of the 27 genuine 120 s runs of ../shared/corpus/real/starlink-drive the
#: seconds that KB/sec implies round to the other side of the printed ones by up to 0.0054 s
#: (``69.5944 MB in 121.21 real seconds = 587.97 KB/sec``: 121.2046 s).
SECONDS_UNIT = 0.01
#: 1 KB/sec (1024 byte/s) in Mbps (10**6 bit/s)
MBPS_PER_KBPS = 1024 * 8 / 1e6


def _rate_checks(finals):
    """Each final line's three figures against each other: MB against KB/sec x seconds,
    Mbps against KB/sec (or, where KB/sec is not printed, against MB x 8 / seconds)."""
    checks = []
    for label, final in finals:
        mb, sec, rate, kbps = (_f(final, key) for key in ("mb", "sec", "rate", "kbps"))
        if not (sec > 0 and mb >= 0 and rate >= 0):
            continue
        seconds = PRINTED_SECONDS_ROUNDING / sec
        if kbps >= 0:
            checks.append(consistency_check(
                f"{label} final line: MB vs KB/sec x seconds", mb * KB, kbps * sec,
                rtol=SECONDS_UNIT / sec + PRINTED_MB_ROUNDING / max(mb, PRINTED_MB_ROUNDING) + 1e-9,
                atol=PRINTED_KBPS_ROUNDING * sec, note="seconds printed to 0.01 s"))
            checks.append(consistency_check(
                f"{label} final line: Mbps vs KB/sec x 8.192", rate, kbps * MBPS_PER_KBPS,
                rtol=1e-6, atol=PRINTED_RATE_ROUNDING + PRINTED_RATE_ROUNDING * MBPS_PER_KBPS,
                note="both printed from the exact seconds"))
        else:
            checks.append(consistency_check(
                f"{label} final line: Mbps vs MB x 8 / seconds", rate, mb * MB * 8 / MBPS / sec,
                rtol=seconds + 1e-6, atol=PRINTED_RATE_ROUNDING, note="seconds printed to 0.01 s"))
    return checks


def _checks(iv, rcv, snd, retrans, udp, packets, lost, loss_printed, negative=False):
    """nuttcp's final lines against its interval lines and against each other (the
    retransmits not where an interval printed a ``negative`` count: flagged already)."""
    checks = []
    if np.isnan(rcv[0]) or not len(iv):
        return checks
    covered = float(np.nansum(iv[:, 0]))
    # the intervals cover the run when what is left is within the rounding of the printed
    # seconds (the final line's and the intervals' last digit); any longer tail may have
    # carried data and retransmissions nuttcp never printed in an interval
    complete = rcv[1] - covered <= 2 * PRINTED_SECONDS_ROUNDING + 1e-9
    where = f"intervals cover {covered:g} of {rcv[1]:g} s"
    if complete:
        checks.append(consistency_check(
            "bytes received: final line vs sum of interval lines", rcv[0], np.nansum(iv[:, 1]),
            rtol=0.01, note=where))
        if not udp and not negative and not np.isnan(retrans) and not np.isnan(iv[:, 3]).all():
            checks.append(consistency_check(
                "retransmits: final line vs sum of interval lines", retrans, np.nansum(iv[:, 3]),
                rtol=0.0, note=where))
    else:
        # nuttcp prints no partial last interval: the intervals can only fall short
        data = float(np.nansum(iv[:, 1]))
        checks.append({"check": "bytes received: sum of interval lines at most the final line",
                       "tool": rcv[0], "data": data, "ok": bool(data <= rcv[0] * 1.01),
                       "note": f"{where}; nuttcp prints no partial last interval"})
    if not udp and not np.isnan(snd[0]):
        checks.append(consistency_check("bytes: transmitter's vs receiver's final line", snd[0], rcv[0],
                                        rtol=0.001))
    if udp and packets > 0 and not np.isnan(loss_printed):
        checks.append(consistency_check("UDP loss percent: printed vs drop/pkt", loss_printed,
                                        100.0 * lost / packets, atol=0.005 + 1e-9,
                                        note="printed with two decimals"))
    return checks
