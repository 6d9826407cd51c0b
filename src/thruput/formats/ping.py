"""ping output of Linux iputils, BusyBox, FreeBSD/macOS, Solaris and Windows (kind ``rtt``).

One probe event per reply, duplicate, lost probe, ICMP error or send failure, in the
order the tool printed them, with the 1-based ``line`` it came from.

Variants (``attrs["ping_variant"]``, told apart by the header and the reply lines)

``iputils``
    ``PING host (ip) 56(84) bytes of data.`` / ``PING ::1(::1) 56 data bytes``;
    ``64 bytes from ip: icmp_seq=1 ttl=64 time=0.045 ms``; ``-D`` prefixes
    ``[1594978465.914536]`` (Unix time, stored in ``timestamp``); ``-O`` prints
    ``no answer yet for icmp_seq=N``; ``(DUP!)``; ICMP errors as
    ``From ip icmp_seq=N Destination Host Unreachable``; summary
    ``N packets transmitted, N received, +N duplicates, +N errors, X% packet loss, time Nms``
    and ``rtt min/avg/max/mdev = ...``. Sequence numbers start at 1.
``busybox``
    Like BSD but ``seq=N`` and ``round-trip min/avg/max = ...`` (no deviation).
``bsd``
    FreeBSD and macOS ``ping``/``ping6``: ``icmp_seq=N`` (``hlim=`` for IPv6),
    ``Request timeout for icmp_seq N``, ICMP errors as ``92 bytes from ip: Destination Host
    Unreachable`` followed by a dump of the returned IP header (``Vr HL TOS ...`` and one
    row of hex, skipped as ``icmp error packet dump``), and ``round-trip
    min/avg/max/stddev``. Sequence numbers start at 0.
``solaris``
    ``ping -s``: ``icmp_seq=N.`` (trailing dot), ``----host PING Statistics----`` and
    ``round-trip (ms)  min/avg/max/stddev = ...``. Built from the documented format.
``windows``
    ``Reply from ip: bytes=32 time=1ms TTL=128`` (``time<1ms`` when under 1 ms: stored as
    0 ms, the value Windows itself uses in its Minimum/Average), ``Request timed out.``,
    ``Packets: Sent = 4, Received = 4, Lost = 0 (0% loss),``. Windows prints no sequence
    numbers (``seq`` = -1) and counts ``Reply from ...: Destination host unreachable.`` as
    *received*. Built from the documented format.

Probe statuses
    ``reply``: the first reply to a sequence number. ``duplicate``: any further reply to it,
    whether or not the tool printed ``(DUP!)`` (the tools count repeats with a table of
    sequence numbers seen, and macOS does not always print the marker); 16-bit sequence
    numbers that wrap after 65535 are unwrapped first. ``lost``: a ``no answer yet`` /
    ``Request timeout`` / ``Request timed out.`` line whose probe was never answered later
    (if it was, the line is skipped as ``no answer yet, answered later``), and every
    sequence number below the printed ``transmitted`` count that appears nowhere in the log
    (``line`` = -1, appended after the printed probes in sequence order).
    ``unreachable``: ICMP destination unreachable. ``error``: other ICMP errors (time
    exceeded, ...), ``(BAD CHECKSUM!)`` replies and local send failures
    (``ping: sendmsg: ...``, ``seq`` = -1).

Duplicates and RTT statistics
    Duplicate replies keep their RTT in ``rtt``. iputils, BSD and BusyBox all include
    duplicates in their printed min/avg/max (they divide the RTT sum by received +
    duplicates), so the ``tool_summary`` statistics are those of ``reply`` and ``duplicate``
    probes together; :func:`thruput.inspection.summarize` reports ``rtt_ms`` over ``reply``
    probes only (the RTT of the probe, not of other hosts answering a broadcast).

tool_summary
    What the tool printed as its totals: ``transmitted``, ``received``, ``duplicates``,
    ``errors``, ``corrupted``, ``loss_percent``, ``time_ms``, ``rtt_min``, ``rtt_avg``,
    ``rtt_max``, ``rtt_mdev`` (iputils) or ``rtt_stddev`` (BSD, Solaris), ``pipe``,
    ``ipg``, ``ewma`` (ms; Windows: ``Minimum``, ``Average``, ``Maximum``, ``lost``);
    only the keys the log holds.

Several runs in one file
    Not supported: a second ``PING``/``Pinging`` header raises
    :class:`~thruput.errors.ParseError` naming its line (split the file, one run each).

Speed
    No per-line Python for replies. Where the optional C extension
    :mod:`thruput.formats._pingscan` is built (``pip install`` compiles it when a C compiler
    is present), :func:`_replies_c` reads every Unix log with it: one pass in C that decides
    for each line whether it has :data:`UNIX_LINES`' reply shape and converts its numbers as
    ``float()`` does; every other line is handed back with its number and text and read
    below exactly as by the Python readers. Without the extension (``_pingscan`` is None),
    :func:`_replies_fast` validates every reply line with one regex ``split`` over the whole
    text, which also hands back the text between them (whose newlines give every line
    number), and reads all the replies' numbers with one ``numpy.fromstring`` once the
    address and the words are blanked out. Logs it cannot take (``(DUP!)`` flags, replies
    with differing fields) and Windows logs are read by :func:`_replies_general`: one
    ``findall`` with one match per line (the match index is the line number) and NumPy
    conversions; it is the reference the other two are tested against (same Datasets on
    every sample, corpus file and damaged log). Only the few other lines (header, summary,
    losses, errors) go through per-line Python. ``python -m benchmarks ingest`` measures it.
    (An editable install compiles the extension once: after editing ``_pingscan.c``, run
    ``pip install -e .`` again.)

References
    iputils ``ping/ping_common.c`` (statistics, ``pr_echo_reply``), FreeBSD ``sbin/ping``,
    BusyBox ``networking/ping.c``, Solaris ``ping(1M)``, Microsoft ``ping`` documentation.
"""

from __future__ import annotations

import gc
import itertools
import re
import warnings

import numpy as np

from ..contract import PROBE_STATUSES, Ledger, build
from ..errors import ParseError

try:  # the optional C scanner (see "Speed" above); None: the pure-Python readers
    from . import _pingscan
except ImportError:  # pragma: no cover - built wherever a C compiler was present
    _pingscan = None

NAME = "ping"
KIND = "rtt"
TOOL = "ping"
BINARY = False

# ---------------------------------------------------------------------------------------
# The spec: every line shape, as module constants.


def _ascii(pattern):
    # ping prints ASCII: \d, \s and \S must not match other Unicode digits and spaces
    return re.compile(pattern, re.ASCII)


#: Nothing but blanks: empty input.
BLANK_TEXT = _ascii(r"[ \t\n]*\Z")

#: A run header of any variant (sniffing and run splitting).
HEADER = _ascii(
    r"^(?:PING6?[ (].*(?:bytes of data\.|data bytes|bytes\) \S+ --> \S+)"
    r"|Pinging \S.* with \d+ bytes of data:)$")

#: The bulk of a log: one match per line. Reply lines fill groups 1-6; every other line
#: lands whole in group 7 (so the match index is the line index and no offsets are needed).
#: Groups: 1 timestamp (-D), 2 size, 3 seq, 4 ttl/hlim, 5 rtt, 6 flag, 7 other line.
#: ``icmp_seq=N.`` has a trailing dot on Solaris; ``seq=`` is BusyBox; ``hlim=`` BSD ping6;
#: iputils omits ``time=`` for payloads too small to carry a timestamp; Solaris prints
#: ``time=1. ms`` with a bare dot on old releases.
UNIX_LINES = _ascii(
    r"(?m)^(?:(?:\[(\d+\.\d+)\] )?(\d+) bytes from [^\n]*?[:,] (?:icmp_)?seq=(\d+)\.?"
    r"(?: (?:ttl|hlim)=(\d+))?(?: time=(\d+(?:\.\d*)?) ?ms)?"
    r"(?: \((DUP!|BAD CHECKSUM!)\))?|([^\n]*))$")

#: The fast path (:func:`_replies_fast`): a reply line of UNIX_LINES' shape (group 1 = the
#: whole line), anchored on the newline before it so that the regex engine jumps from line
#: to line instead of trying every character. Two forms, as the address is printed: a bare
#: address (``from 127.0.0.1:``), or a name and the address (``from host (10.0.0.1):``);
#: the optional part costs a third of the time, so it is used only where the log has it.
_FAST_TAIL = (r"[:,] (?:icmp_)?seq=\d+\.?(?: (?:ttl|hlim)=\d+)?(?: time=\d+(?:\.\d*)? ?ms)?"
              r"(?: \((?:DUP!|BAD CHECKSUM!)\))?)(?=\n)")
FAST_REPLY = _ascii(r"\n((?:\[\d+\.\d+\] )?\d+ bytes from \S+" + _FAST_TAIL)
FAST_REPLY_NAMED = _ascii(r"\n((?:\[\d+\.\d+\] )?\d+ bytes from \S+(?: \([^)\n]*\))?" + _FAST_TAIL)
#: A reply with a name before the address, among the first lines (picks FAST_REPLY_NAMED).
NAMED_REPLY = _ascii(r"\n(?:\[\d+\.\d+\] )?\d+ bytes from \S+ \(")
#: A reply line of any Unix form (to check that the fast path left none among the others).
UNIX_REPLY = _ascii(r"(?:\[\d+\.\d+\] )?\d+ bytes from [^\n]*?[:,] (?:icmp_)?seq=\d")

#: What sits between the size and the sequence number (blanked out before reading numbers).
FAST_MIDDLE = _ascii(r" bytes from \S+(?: \([^)\n]*\))?[:,] (?:icmp_)?seq=")
FAST_SIZE_MIDDLE = _ascii(r"(\d+)(" + FAST_MIDDLE.pattern + ")")
FAST_TTL = _ascii(r" (?:ttl|hlim)=(\d+)")
#: Everything else of a validated reply line that is not part of a number becomes a blank.
FAST_BLANKS = str.maketrans(dict.fromkeys(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ=[]", " "))

#: Windows replies in the same group layout: 2 bytes=, 4 TTL=, 5 time, 6 ``<`` or ``=``.
WINDOWS_LINES = _ascii(
    r"(?m)^(?:()Reply from [^\n]*?: (?:bytes=(\d+) )?()time([<=])?(\d+)ms(?: TTL=(\d+))?"
    r"|([^\n]*))$")
#: WINDOWS_LINES puts the comparison before the time; this maps its groups to UNIX_LINES'.
_WINDOWS_ORDER = (0, 1, 2, 5, 4, 3, 6)

#: Lines other than replies (per-line regexes; few of them in any log).
NO_ANSWER = _ascii(r"^(?:\[(\d+\.\d+)\] )?no answer yet for icmp_seq=(\d+)$")
BSD_TIMEOUT = _ascii(r"^Request timeout for icmp_seq[= ](\d+)$")
#: iputils ICMP errors: ``From 10.0.0.1 icmp_seq=1 Destination Host Unreachable``.
ICMP_ERROR = _ascii(
    r"^(?:\[(\d+\.\d+)\] )?From \S+(?: \([^)]*\))?(?: icmp_seq=(\d+))? (.+)$")
#: BSD ICMP errors: ``92 bytes from host (ip): Destination Host Unreachable``.
BSD_ERROR = _ascii(r"^(\d+) bytes from [^=\n]*?: ([A-Z][^=\n]*)$")
#: The returned IP header BSD dumps after an ICMP error (two lines).
BSD_DUMP_HEADER = _ascii(r"^Vr HL TOS\s+Len\s+ID Flg\s+off TTL Pro\s+cks\s+Src\s+Dst")
BSD_DUMP_ROW = _ascii(r"^ ?[0-9a-f]{1,2}\s+[0-9a-f]+\s+[0-9a-f]{2}\s+[0-9a-f]{4}\s.*$")
SEND_ERROR = _ascii(r"^ping6?: (?:sendmsg|sendto|send)\b.*$")
TOOL_MESSAGE = _ascii(r"^ping6?: .*$")
PATTERN_LINE = _ascii(r"^PATTERN: 0x[0-9a-f]+$")
WARNING_LINE = _ascii(r"^WARNING: .*$")
INTERRUPT = _ascii(r"^(?:\^C|Control-C(?:\^C)?)$")

STATS_HEADER = _ascii(r"^(?:--- .* ping6? statistics ---|----.* PING Statistics----)$")
#: iputils, BSD, BusyBox and Solaris share this line; the optional parts are iputils'.
TRANSMITTED = _ascii(
    r"^(\d+) packets transmitted, (\d+) (?:packets )?received,"
    r"(?: \+(\d+) duplicates,)?(?: \+(\d+) corrupted,)?(?: \+(\d+) errors,)?"
    r" (\d+(?:\.\d+)?)% packet loss(?:, time (\d+)ms)?$")
RTT_STATS = _ascii(
    r"^(?:rtt|round-trip) (?:\(ms\)\s+)?min/avg/max(?:/(mdev|stddev|std-dev))? = "
    r"(\d+\.\d+)/(\d+\.\d+)/(\d+\.\d+)(?:/(\d+\.\d+))?(?: ms)?(?:, pipe (\d+))?"
    r"(?:, ipg/ewma (\d+\.\d+)/(\d+\.\d+) ms)?$")
PIPE = _ascii(r"^pipe (\d+)$")

WINDOWS_TIMEOUT = _ascii(r"^Request timed out\.$")
WINDOWS_ERROR = _ascii(
    r"^(?:Reply from \S+: )?(?:(Destination (?:host|net|protocol|port) unreachable)"
    r"|(TTL expired in transit|General failure|Transmit failed\..*|PING: transmit failed\..*))\.?$")
WINDOWS_STATS_HEADER = _ascii(r"^Ping statistics for \S+:$")
WINDOWS_PACKETS = _ascii(
    r"^\s+Packets: Sent = (\d+), Received = (\d+), Lost = (\d+) \((\d+)% loss\),?$")
#: "round trip ... milli-seconds" since Windows XP, "roundtrip ... milliseconds" before.
WINDOWS_RTT_HEADER = _ascii(r"^Approximate round ?trip times in milli-?seconds:$")
WINDOWS_RTT = _ascii(r"^\s+Minimum =\s*(\d+)ms, Maximum =\s*(\d+)ms, Average =\s*(\d+)ms$")

#: iputils ping6 writes the address in parentheses right after the target, without a space
#: (``PING ::1(::1) 56 data bytes``); BSD, BusyBox and Solaris put a space or nothing there.
IPUTILS_PING6 = _ascii(r"^PING [^\s(]+\(")

#: Sniffing: a header among the first lines.
SNIFF = _ascii(HEADER.pattern.replace("^", "(?m)^", 1))

#: Sequence numbers are 16-bit on the wire: they wrap after 65535.
SEQ_PERIOD = 65536
#: First sequence number by variant (iputils counts from 1, the others from 0).
SEQ_ORIGIN = {"iputils": 1, "busybox": 0, "bsd": 0, "solaris": 0, "windows": None}

_STATUS = {name: code for code, name in enumerate(PROBE_STATUSES)}
_REPLY, _DUP, _LOST, _UNREACH, _ERROR = (_STATUS[s] for s in
                                         ("reply", "duplicate", "lost", "unreachable", "error"))


def sniff(head):
    """True if ``head`` (the first few KB) holds a ping run header."""
    try:
        return SNIFF.search(head[:4096]) is not None
    except Exception:
        return False


def parse(text):
    """Parse the output of one ping run into an ``rtt`` Dataset.

    Parameters
    ----------
    text : str
        The whole log (LF line ends).

    Returns
    -------
    xarray.Dataset
        Kind ``rtt``: ``seq``, ``rtt`` (ms), ``status``, ``timestamp`` (s, Unix time),
        ``size`` (byte, -1 if not printed), ``ttl`` and ``line`` on dimension ``probe``.

    Raises
    ------
    ParseError
        Empty input, no header, unrecognised lines, a second run in the file.
    """
    if BLANK_TEXT.match(text):  # (stops at the first other character: no copy of the text)
        raise ParseError("empty input")
    variant, header_line = _variant(text)
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    ledger = Ledger(n_lines, lines=_Lines(text))
    found = _replies_bulk(text) if variant != "windows" else None
    replies, other_lines = found or _replies_general(text, variant, n_lines)
    others = _OtherLines(variant, header_line, ledger)
    for line, content in other_lines:
        others.feed(line, content)
    if not text.endswith("\n") and n_lines in others.unrecognised:
        ledger.skip(n_lines, "incomplete last line")
        others.unrecognised.discard(n_lines)
        ledger.truncated(f"the last line ({n_lines}) was cut off")
    ledger.parsed(replies.line)
    probes = _process(replies, others, variant, ledger)
    if not others.summary_seen:
        cut = [ledger.truncation] if ledger.truncation else []
        ledger.truncated("; ".join(cut + ["the run has no summary (cut off): probes never "
                                          "printed are unknown"]))
    return build(
        KIND, probes, fmt=NAME, tool=TOOL, ledger=ledger, tool_summary=others.summary,
        attrs={"ping_variant": variant, "ping_target": others.target,
               "ping_payload_bytes": others.payload})


# ---------------------------------------------------------------------------------------
# Reading


class _Lines:
    """The lines of ``text``, split only when an error message needs to quote one."""

    def __init__(self, text):
        self._text = text
        self._lines = None

    def _split(self):
        if self._lines is None:
            self._lines = self._text.split("\n")
        return self._lines

    def __len__(self):
        return len(self._split())

    def __getitem__(self, index):
        return self._split()[index]


def _variant(text):
    """The variant and the 1-based line of the first run header."""
    match = SNIFF.search(text)
    if match is None:
        skipped = len(text) - len(text.lstrip("\n"))
        first = text[skipped:].split("\n", 1)[0]
        raise ParseError(f"no ping header (PING ... / Pinging ...): {first[:80]!r}",
                         line=text.count("\n", 0, skipped) + 1)
    header = match.group(0)
    line = text.count("\n", 0, match.start()) + 1
    if header.startswith("Pinging"):
        return "windows", line
    if "bytes of data." in header or IPUTILS_PING6.match(header):
        return "iputils", line
    body = text[match.end(): match.end() + 4096]
    if (re.search(r"(?m)^\d+ bytes from .*: seq=", body)
            or "round-trip min/avg/max =" in text[-2048:]):
        return "busybox", line
    if re.search(r"icmp_seq=\d+\. ", body) or "PING Statistics----" in text[-2048:] \
            or re.match(r"PING [^\s(]+: \d+ data bytes$", header):
        return "solaris", line
    return "bsd", line


class _Replies:
    """The reply lines as arrays, and the indices of every other line."""

    __slots__ = ("line", "timestamp", "size", "seq", "ttl", "rtt", "flag")


def _replies_bulk(text):
    """The reply lines of a Unix log by the C scanner if it is built, else by the fast path
    (both None when the log needs :func:`_replies_general`)."""
    if _pingscan is not None:
        try:
            return _replies_c(text)
        except UnicodeEncodeError:  # lone surrogates (not from decode): Python reads it
            pass
    return _replies_fast(text)


#: ``flags`` codes of :mod:`._pingscan` to UNIX_LINES' group 6.
_FLAG_TEXT = np.array(["", "DUP!", "BAD CHECKSUM!"], dtype=object)
#: Columns of ``numbers`` of :mod:`._pingscan`.
_TIMESTAMP, _SIZE, _SEQ, _TTL, _RTT = range(5)


def _replies_c(text):
    """Every line of a Unix log by :func:`thruput.formats._pingscan.scan` (one C pass).

    Replies come back as arrays with the values :func:`_replies_general` gives them (the
    numbers converted from the same digits as ``float()`` does, absent timestamp and RTT
    NaN, absent TTL -1, cast to integers here by NumPy in the same way); every other line
    as its number and text, for :class:`_OtherLines`.
    """
    lines, numbers, flags, other_lines, other_texts = _pingscan.scan(text)
    numbers = np.frombuffer(numbers, dtype=np.float64).reshape(-1, 5)
    out = _Replies()
    out.line = np.frombuffer(lines, dtype=np.int64)
    out.timestamp = numbers[:, _TIMESTAMP].copy()
    out.size = numbers[:, _SIZE].astype(np.int64)
    out.seq = numbers[:, _SEQ].astype(np.int64)
    out.ttl = numbers[:, _TTL].astype(np.int64)
    out.rtt = numbers[:, _RTT].copy()
    codes = np.frombuffer(flags, dtype=np.int8)
    out.flag = _FLAG_TEXT[codes] if codes.any() else None
    others = zip(np.frombuffer(other_lines, dtype=np.int64).tolist(), other_texts)
    return out, others


def _replies_fast(text):
    """The reply lines of a Unix ping log by bulk string operations, or None.

    One ``split`` on :data:`FAST_REPLY` validates every reply line and hands back the text
    between them (the other lines: their newlines give every line number); the replies'
    numbers are then read by NumPy in one go after the address and the words are blanked
    out. This needs every reply to have the same fields (with or without ``-D``
    timestamp, TTL and time) and no ``(DUP!)``/``(BAD CHECKSUM!)`` flag; otherwise None,
    and :func:`_replies_general` reads the log line by line in a single regex pass.
    """
    padded = "\n" + text if text.endswith("\n") else "\n" + text + "\n"
    named = NAMED_REPLY.search(padded, 0, 65536)
    parts = _paused_gc((FAST_REPLY_NAMED if named else FAST_REPLY).split, padded)
    pieces, lines = parts[0::2], parts[1::2]
    n = len(lines)
    if not n:
        return None
    newlines = np.fromiter(map(str.count, pieces, itertools.repeat("\n")),
                           dtype=np.int64, count=len(pieces))
    others = list(_other_lines_fast(pieces, newlines))
    if any(UNIX_REPLY.match(content) for _, content in others):
        return None  # replies of another form (a name appearing later): read line by line
    joined = "\n".join(lines)
    if "(" in joined and ("(DUP!)" in joined or "(BAD CHECKSUM!)" in joined):
        return None
    # every reply must have the fields of the first: the counts of "[" (-D) and of "="
    # (seq=, ttl=/hlim=, time=: at most one each per line) say so, and where the first
    # line has only one of ttl and time, the count of "time=" tells which
    first = lines[0]
    has_ts, has_ttl = first.startswith("["), "ttl=" in first or "hlim=" in first
    has_rtt = "time=" in first
    if joined.count("[") != n * has_ts or joined.count("=") != n * (1 + has_ttl + has_rtt):
        return None
    if has_ttl != has_rtt and joined.count("time=") != n * has_rtt:
        return None
    # Blank out the words. Where every reply has the size, address and TTL of the first
    # (the usual case: one count each), those numbers are known and left out of the numbers
    # NumPy has to read: 3 a line instead of 5.
    joined = "\n" + joined + "\n"
    anchor = "] " if has_ts else "\n"
    size, middle = FAST_SIZE_MIDDLE.search(first).groups()
    same_size = joined.count(anchor + size + middle) == n
    if same_size:
        joined = joined.replace(anchor + size + middle, anchor + " ")
    elif joined.count(middle) == n:  # one address answered every probe: a plain replace
        joined = joined.replace(middle, " ")
    else:
        joined = FAST_MIDDLE.sub(" ", joined)
    same_ttl = False
    if has_ttl:
        ttl_text = FAST_TTL.search(first).group(0) + (" time=" if has_rtt else "\n")
        same_ttl = joined.count(ttl_text) == n
        if same_ttl:
            joined = joined.replace(ttl_text, " " if has_rtt else "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # numbers not all read: say so
        try:
            numbers = np.fromstring(joined.translate(FAST_BLANKS), sep=" ")
        except (DeprecationWarning, ValueError):
            return None
    read_size, read_ttl = not same_size, has_ttl and not same_ttl
    k = 1 + has_ts + read_size + read_ttl + has_rtt
    if numbers.size != n * k:
        return None
    numbers = numbers.reshape(n, k)
    out = _Replies()
    out.line = np.arange(1, n + 1, dtype=np.int64) + np.cumsum(newlines[:-1])
    column = iter(range(k))
    out.timestamp = numbers[:, next(column)] if has_ts else np.full(n, np.nan)
    out.size = (numbers[:, next(column)].astype(np.int64) if read_size
                else np.full(n, int(size), np.int64))
    out.seq = numbers[:, next(column)].astype(np.int64)
    if read_ttl:
        out.ttl = numbers[:, next(column)].astype(np.int64)
    else:
        ttl = FAST_TTL.search(first) if has_ttl else None
        out.ttl = np.full(n, int(ttl.group(1)) if ttl else -1, np.int64)
    out.rtt = numbers[:, next(column)] if has_rtt else np.full(n, np.nan)
    out.flag = None
    return out, others


def _other_lines_fast(pieces, newlines):
    """(line number, text) of the lines between the replies (pieces of the split)."""
    before = np.arange(len(pieces)) + np.concatenate([[0], np.cumsum(newlines[:-1])])
    last = len(pieces) - 1
    for j in np.flatnonzero(newlines):
        lines = pieces[j].split("\n")[1:]
        if j == last:
            lines = lines[:-1]  # the newline that ends the text
        for offset, content in enumerate(lines, start=1):
            yield int(before[j]) + offset, content


def _paused_gc(function, *args):
    # Millions of small objects trigger the cyclic garbage collector over and over although
    # none of them can form a cycle; pausing it saves a third of the time of a large log.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return function(*args)
    finally:
        if enabled:
            gc.enable()


def _replies_general(text, variant, n_lines):
    """Every line by one regex pass (:data:`UNIX_LINES` or :data:`WINDOWS_LINES`)."""
    pattern = WINDOWS_LINES if variant == "windows" else UNIX_LINES
    rows = _paused_gc(pattern.findall, text)
    del rows[n_lines:]  # the pattern also matches the empty string after a final "\n"
    out = _Replies()
    if variant == "windows":
        rows = [tuple(r[i] for i in _WINDOWS_ORDER) for r in rows]
        key = 4  # time= is in every Windows reply
    else:
        key = 2  # icmp_seq= is in every Unix reply
    columns = _paused_gc(lambda: list(zip(*rows))) if rows else [()] * 7
    is_reply = np.fromiter(map(bool, columns[key]), dtype=bool, count=len(rows))
    index = np.flatnonzero(is_reply)
    out.line = index + 1

    def column(k):
        return np.asarray(columns[k], dtype=object)[index] if len(index) else np.array([], object)

    def numbers(k, missing=np.nan):
        values = column(k)
        present = values != ""
        result = np.full(len(values), missing, dtype=float)
        if present.any():
            result[present] = values[present].astype(float)
        return result

    out.timestamp = numbers(0)
    out.size = numbers(1, -1).astype(np.int64)
    out.seq = numbers(2, -1).astype(np.int64)
    out.ttl = numbers(3, -1).astype(np.int64)
    out.rtt = numbers(4)
    out.flag = column(5)
    others = ((int(i) + 1, rows[i][6]) for i in np.flatnonzero(~is_reply))
    return out, others


class _OtherLines:
    """Header, summary, lost probes and errors: the few lines that are not replies."""

    def __init__(self, variant, header_line, ledger):
        self.variant = variant
        self.header_line = header_line
        self.ledger = ledger
        self.events = []  # (line, status, seq, timestamp, size)
        self.summary = {}
        self.summary_seen = False
        self.target = ""
        self.payload = -1
        self.unrecognised = set()
        self._after_error = 0

    def feed(self, line, text):
        skip = self.ledger.skip
        if not text.strip(" \t"):
            self._after_error = 0
            skip(line, "blank")
            return
        if HEADER.match(text):
            if line != self.header_line:
                self.ledger.error(line, "a second ping run starts here; thruput reads one run "
                                        "per file (split the file)")
                skip(line, "second run header")  # reported once, as the error above
                return
            self._header(text)
            skip(line, "header")
            return
        handler = self._windows if self.variant == "windows" else self._unix
        if not handler(line, text):
            self.unrecognised.add(line)

    def _header(self, text):
        match = re.match(r"^(?:PING6?\(?|Pinging )(\S+)", text)
        self.target = match.group(1).split("(")[0] if match else ""
        size = re.search(r"(\d+)(?:\(\d+\))? (?:data )?bytes", text) or re.search(r"\((\d+)=", text)
        self.payload = int(size.group(1)) if size else -1
        if text.startswith("PING6("):  # BSD: PING6(56=40+8+8 bytes) src --> dst
            self.target = text.rsplit("--> ", 1)[-1]
            size = re.search(r"\+(\d+) bytes\)", text)
            self.payload = int(size.group(1)) if size else -1

    def _unix(self, line, text):
        skip, event = self.ledger.skip, self.events.append
        if (m := NO_ANSWER.match(text)):
            event((line, _LOST, int(m.group(2)), _float(m.group(1)), -1))
            self.ledger.parsed(line)
        elif (m := BSD_TIMEOUT.match(text)):
            event((line, _LOST, int(m.group(1)), np.nan, -1))
            self.ledger.parsed(line)
        elif (m := BSD_ERROR.match(text)):
            event((line, _status_of(m.group(2)), -1, np.nan, int(m.group(1))))
            self.ledger.parsed(line)
            self._after_error = 2
        elif self._after_error and (BSD_DUMP_HEADER.match(text) or BSD_DUMP_ROW.match(text)):
            skip(line, "icmp error packet dump")
            self._after_error -= 1
        elif (m := ICMP_ERROR.match(text)):
            seq = int(m.group(2)) if m.group(2) else -1
            event((line, _status_of(m.group(3)), seq, _float(m.group(1)), -1))
            self.ledger.parsed(line)
        elif SEND_ERROR.match(text):
            event((line, _ERROR, -1, np.nan, -1))
            self.ledger.parsed(line)
        elif STATS_HEADER.match(text):
            self.summary_seen = True
            skip(line, "statistics header")
        elif (m := TRANSMITTED.match(text)):
            keys = ("transmitted", "received", "duplicates", "corrupted", "errors")
            self.summary.update({k: int(v) for k, v in zip(keys, m.groups()) if v is not None})
            self.summary["loss_percent"] = float(m.group(6))
            if m.group(7):
                self.summary["time_ms"] = int(m.group(7))
            self.ledger.parsed(line)
        elif (m := RTT_STATS.match(text)):
            dev = {"mdev": "rtt_mdev", "stddev": "rtt_stddev", "std-dev": "rtt_stddev"}
            for key, value in zip(("rtt_min", "rtt_avg", "rtt_max"), m.group(2, 3, 4)):
                self.summary[key] = float(value)
            if m.group(5):
                self.summary[dev[m.group(1)]] = float(m.group(5))
            for key, value in zip(("pipe", "ipg", "ewma"), m.group(6, 7, 8)):
                if value:
                    self.summary[key] = int(value) if key == "pipe" else float(value)
            self.ledger.parsed(line)
        elif (m := PIPE.match(text)):
            self.summary["pipe"] = int(m.group(1))
            self.ledger.parsed(line)
        elif PATTERN_LINE.match(text):
            skip(line, "pattern")
        elif WARNING_LINE.match(text):
            skip(line, "warning")
        elif INTERRUPT.match(text):
            skip(line, "interrupt")
        elif TOOL_MESSAGE.match(text):
            skip(line, "message from ping")
        else:
            return False
        return True

    def _windows(self, line, text):
        skip, event = self.ledger.skip, self.events.append
        if WINDOWS_TIMEOUT.match(text):
            event((line, _LOST, -1, np.nan, -1))
            self.ledger.parsed(line)
        elif (m := WINDOWS_ERROR.match(text)):
            event((line, _UNREACH if m.group(1) else _ERROR, -1, np.nan, -1))
            self.ledger.parsed(line)
        elif WINDOWS_STATS_HEADER.match(text):
            self.summary_seen = True
            skip(line, "statistics header")
        elif (m := WINDOWS_PACKETS.match(text)):
            sent, received, lost, loss = (int(v) for v in m.groups())
            self.summary.update(transmitted=sent, received=received, lost=lost,
                                loss_percent=float(loss))
            self.ledger.parsed(line)
        elif WINDOWS_RTT_HEADER.match(text):
            skip(line, "statistics header")
        elif (m := WINDOWS_RTT.match(text)):
            low, high, mean = (float(v) for v in m.groups())
            self.summary.update(rtt_min=low, rtt_max=high, rtt_avg=mean)
            self.ledger.parsed(line)
        elif INTERRUPT.match(text):
            skip(line, "interrupt")
        else:
            return False
        return True


def _status_of(message):
    return _UNREACH if "unreachable" in message.lower() else _ERROR


def _float(value):
    return float(value) if value else np.nan


# ---------------------------------------------------------------------------------------
# Conversion: every type and status decision in one place


def _process(replies, others, variant, ledger):
    """Merge replies and other events, decide statuses, add unprinted lost probes."""
    n = len(replies.line)
    status = np.full(n, _REPLY, dtype=np.int8)
    flag = replies.flag
    if n and flag is not None:
        status[flag == "DUP!"] = _DUP
        status[flag == "BAD CHECKSUM!"] = _ERROR
    rtt = replies.rtt
    if variant == "windows" and n and flag is not None:
        rtt = np.where(flag == "<", 0.0, rtt)  # time<1ms: Windows' own value is 0

    ev = others.events
    e_line = np.array([e[0] for e in ev], dtype=np.int64)
    e_status = np.array([e[1] for e in ev], dtype=np.int8)
    e_seq = np.array([e[2] for e in ev], dtype=np.int64)
    e_time = np.array([e[3] for e in ev], dtype=float)
    e_size = np.array([e[4] for e in ev], dtype=np.int64)

    line = np.concatenate([replies.line, e_line])
    order = np.argsort(line, kind="stable")
    line = line[order]
    status = np.concatenate([status, e_status])[order]
    seq = np.concatenate([replies.seq, e_seq])[order]
    timestamp = np.concatenate([replies.timestamp, e_time])[order]
    size = np.concatenate([replies.size, e_size])[order]
    ttl = np.concatenate([replies.ttl, np.full(len(ev), -1, np.int64)])[order]
    rtt = np.concatenate([rtt, np.full(len(ev), np.nan)])[order]

    keep = np.ones(len(line), dtype=bool)
    has_seq = seq >= 0
    if has_seq.any():
        full = np.full(len(seq), -1, dtype=np.int64)
        printed = seq[has_seq]
        step = np.diff(printed)
        if np.any(np.abs(step) >= SEQ_PERIOD // 2):  # wrapped after 65535 somewhere
            printed = _unwrap(printed)
        full[has_seq] = printed
        answered = (status == _REPLY) & has_seq
        # a second reply to one sequence number is a duplicate, marked (DUP!) or not
        # (sequence numbers that only grow, the usual case, need no search)
        if np.any(np.diff(full[answered]) <= 0):
            first = np.zeros(len(seq), dtype=bool)
            _, first_index = np.unique(full[answered], return_index=True)
            first[np.flatnonzero(answered)[first_index]] = True
            status[answered & ~first] = _DUP
        # "no answer yet" / "Request timeout" for a probe answered later is not a loss
        lost = (status == _LOST) & has_seq
        if lost.any():
            late = lost & np.isin(full, full[status == _REPLY])
            if late.any():
                ledger.skip(line[late], "no answer yet, answered later")
                keep &= ~late
        gaps = _unprinted(full[keep & has_seq], others.summary.get("transmitted"),
                          SEQ_ORIGIN.get(variant))
    else:
        gaps = np.array([], dtype=np.int64)

    m = len(gaps)
    return {
        "seq": (("probe",), np.concatenate([seq[keep], gaps % SEQ_PERIOD])),
        "rtt": (("probe",), np.concatenate([rtt[keep], np.full(m, np.nan)])),
        "status": (("probe",), np.array(PROBE_STATUSES)[
            np.concatenate([status[keep], np.full(m, _LOST, np.int8)])]),
        "timestamp": (("probe",), np.concatenate([timestamp[keep], np.full(m, np.nan)])),
        "size": (("probe",), np.concatenate([size[keep], np.full(m, -1, np.int64)])),
        "ttl": (("probe",), np.concatenate([ttl[keep], np.full(m, -1, np.int64)])),
        "line": (("probe",), np.concatenate([line[keep], np.full(m, -1, np.int64)])),
    }


def _unwrap(seq):
    """16-bit sequence numbers made monotonic across wraps.

    ``numpy.unwrap(seq, period=SEQ_PERIOD)`` in integers (the same values, exactly: the
    float version is exact for these magnitudes): a step of half a period or more is taken
    as a wrap and corrected by whole periods, a step of exactly half a period upwards kept.
    Absurd numbers (beyond 2**52, negative from a cast overflow) take ``numpy.unwrap``.
    """
    if seq.min() < 0 or seq.max() >= 2**52:
        return np.unwrap(seq.astype(float), period=SEQ_PERIOD).astype(np.int64)
    step = np.diff(seq)
    half = SEQ_PERIOD // 2
    wrapped = np.mod(step + half, SEQ_PERIOD) - half
    wrapped[(wrapped == -half) & (step > 0)] = half
    correction = wrapped - step
    correction[np.abs(step) < half] = 0
    out = seq.copy()
    out[1:] += np.cumsum(correction)
    return out


def _unprinted(printed, transmitted, origin):
    """Sequence numbers below ``transmitted`` that the log never mentions (lost probes)."""
    if transmitted is None or origin is None:
        return np.array([], dtype=np.int64)
    seen = np.zeros(transmitted, dtype=bool)
    inside = (printed >= origin) & (printed < origin + transmitted)
    seen[printed[inside] - origin] = True
    return np.flatnonzero(~seen).astype(np.int64) + origin
