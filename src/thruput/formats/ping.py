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
    (``line`` = -1, appended after the printed probes in sequence order); without the
    summary (cut off), the gaps below the highest number printed. At most
    :data:`UNPRINTED_MAX` plus the log's line count are made up this way (memory never
    follows a number printed in the file): beyond, none, and a failed consistency check.
    ``unreachable``: ICMP destination unreachable. ``error``: other ICMP errors (time
    exceeded, ...), ``(BAD CHECKSUM!)`` replies and local send failures
    (``ping: sendmsg: ...``, ``seq`` = -1).

Duplicates and RTT statistics
    Duplicate replies keep their RTT in ``rtt``. iputils, BSD and BusyBox all include
    duplicates in their printed min/avg/max (they divide the RTT sum by received +
    duplicates), so the ``tool_summary`` statistics are those of ``reply`` and ``duplicate``
    probes together. ping computes them from exact times but prints each reply rounded:
    :func:`thruput.inspection.summarize` shows ping's own figures where it printed them and
    the probes' (replies and duplicates, as ping counts) beside them, labelled.

Consistency (``attrs["consistency"]``, see :func:`_consistency`)
    ``received`` and ``duplicates`` against the replies, the sequence numbers printed
    against ``transmitted``, ping's min/max RTT against the replies' within the printed
    rounding, lines holding two replies merged by a lost newline (skipped as such, see
    :data:`MERGED_REPLIES`), unprinted losses beyond the bound above.

Damage
    A log cut without its summary loses its last line if that has no newline (it may be
    cut inside a number: ``icmp_seq=1`` of ``icmp_seq=13``); a summary cut after its
    statistics header is a truncation (totals unknown). Numbers beyond their field
    (:data:`REPLY_LIMITS`, counts of more than :data:`MAX_DIGITS` digits) are errors naming
    the line, never an overflow.

Memory
    ``status`` is an object array of references to five shared strings, ``seq``, ``size``
    and ``ttl`` are int32. :func:`parse_chunks` reads a log given in pieces (what
    :func:`thruput.read` does with large files) into arrays allocated once for the line
    count, so memory is a constant plus the output; :func:`parse` cuts a long text into
    such pieces (:data:`PIECE_CHARS`) too.

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
    No per-line Python for replies. :func:`read_replies` is the one way replies are read,
    for a piece of one log (:func:`scan_chunks`) and for a batch of many
    (:mod:`._ping_many`), by one of two paths. The vectorised path
    (:func:`_replies_fast`) cuts the text into lines and checks all of them at once with
    Arrow's compiled kernels (``pyarrow.compute.match_substring_regex``, RE2, linear in
    time); where every reply has the layout of the first, their numbers are cut out of
    their bytes by position with NumPy and cast to float64 by Arrow, one field at a time.
    Logs it cannot take (``(DUP!)`` flags, replies of differing layouts) and Windows logs
    take the general path (:func:`_replies_general`): one ``findall`` with one match per
    line (the match index is the line number) and NumPy conversions; it is the reference
    the vectorised path is tested against (same Datasets on every sample, corpus file and
    damaged log). Only the few other lines (header, summary, losses, errors) go through
    per-line Python. ``python -m benchmarks ingest`` measures it.

References
    iputils ``ping/ping_common.c`` (statistics, ``pr_echo_reply``), FreeBSD ``sbin/ping``,
    BusyBox ``networking/ping.c``, Solaris ``ping(1M)``, Microsoft ``ping`` documentation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import gc
import re
from contextlib import contextmanager

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ..contract import PROBE_STATUSES, Ledger, build, consistency_check
from ..errors import ParseError

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
    r"(?m)^(?:(?:\[(\d+\.\d+)\] )?(\d+) bytes from (?:(?! bytes from )[^\n])*?[:,] (?:icmp_)?seq=(\d+)\.?"
    r"(?: (?:ttl|hlim)=(\d+))?(?: time=(\d+(?:\.\d*)?) ?ms)?"
    r"(?: \((DUP!|BAD CHECKSUM!)\))?|([^\n]*))$")

#: The vectorised path (:func:`_replies_fast`): a whole reply line of UNIX_LINES' shape,
#: for ``pyarrow.compute.match_substring_regex`` (RE2: linear time; its ``\s`` lacks
#: ``\v``, so "not blank" is spelt out); its named groups tell the first reply's layout.
#: Two forms, as the address is printed: a bare address (``from 127.0.0.1:``), or a name
#: and the address (``from host (10.0.0.1):``), used only where the log has it. A
#: ``(DUP!)``/``(BAD CHECKSUM!)`` line does not match: it is left to :func:`_replies_general`.
_NOT_BLANK = r"[^ \t\n\r\f\v]"
_FAST_HEAD = r"^(?:\[(?P<timestamp>[0-9]+\.[0-9]+)\] )?(?P<size>[0-9]+) bytes from " + _NOT_BLANK + "+"
_FAST_TAIL = (r"[:,] (?:icmp_)?seq=(?P<seq>[0-9]+)\.?(?: (?:ttl|hlim)=(?P<ttl>[0-9]+))?"
              r"(?: time=(?P<rtt>[0-9]+(?:\.[0-9]*)?) ?ms)?$")
FAST_REPLY = _FAST_HEAD + _FAST_TAIL
FAST_REPLY_NAMED = _FAST_HEAD + r"(?: \([^)\n]*\))?" + _FAST_TAIL
#: The fields of a vectorised-path reply; a field is printed on every reply or on none.
FAST_FIELDS = ("timestamp", "size", "seq", "ttl", "rtt")
#: A reply with a name before the address, among the first lines (picks FAST_REPLY_NAMED).
NAMED_REPLY = _ascii(r"\n(?:\[\d+\.\d+\] )?\d+ bytes from \S+ \(")
#: A reply line of any Unix form (to check that the vectorised path left none among the others).
UNIX_REPLY = _ascii(r"(?:\[\d+\.\d+\] )?\d+ bytes from (?:(?! bytes from )[^\n])*?[:,] (?:icmp_)?seq=\d")
#: Two replies on one line: the newline between them was lost (``... time=0.045 ms64 bytes
#: from ...``). Not one reply with a long address (UNIX_LINES' address may not hold
#: `` bytes from ``): skipped and reported by a consistency check.
MERGED_REPLIES = _ascii(r"^(?:\[\d+\.\d+\] )?\d+ bytes from .* bytes from .*[:,] (?:icmp_)?seq=\d")

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
#: The largest number each reply field can hold (16-bit sequence number and ICMP length,
#: 8-bit TTL / hop limit); a larger one is not ping output: an error naming the line.
REPLY_LIMITS = {"seq": SEQ_PERIOD - 1, "size": 65535, "ttl": 255}
#: Lost probes that ping never printed are materialised (from the gaps between printed
#: sequence numbers and from the printed ``transmitted``) only up to this many plus the
#: number of lines of the log: memory never follows a number printed in the file. More
#: are recorded as a consistency failure instead.
UNPRINTED_MAX = SEQ_PERIOD
#: Counts with more digits than this (10**15 probes would take ping 31 years at 1000/s)
#: are not ping output (and Python's int() refuses some 4300 digits and more).
MAX_DIGITS = 15
#: First sequence number by variant (iputils counts from 1, the others from 0).
SEQ_ORIGIN = {"iputils": 1, "busybox": 0, "bsd": 0, "solaris": 0, "windows": None}

_STATUS = {name: code for code, name in enumerate(PROBE_STATUSES)}
_REPLY, _DUP, _LOST, _UNREACH, _ERROR = (_STATUS[s] for s in
                                         ("reply", "duplicate", "lost", "unreachable", "error"))


def sniff(head: str) -> bool:
    """True if ``head`` (the first few KB) holds a ping run header."""
    try:
        return SNIFF.search(head[:4096]) is not None
    except Exception:
        return False


def parse(text: str) -> xr.Dataset:
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
    return dataset(scan(text))


def scan(text):
    """:func:`parse` without the Dataset: a :class:`Scan` of the plain arrays and attrs.

    For callers that read thousands of small logs and keep only some numbers of each (a
    monitor campaign's normalize): building and validating one Dataset per log costs
    several times the parse itself. ``dataset(scan(text))`` is ``parse(text)``.
    """
    if BLANK_TEXT.match(text):
        raise ParseError("empty input")
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    return scan_chunks(_pieces(text), head=text, tail=text[-TAIL_CHARS:], n_lines=n_lines)


#: How much of the end of a log :func:`_variant` looks at (BusyBox and Solaris summaries).
TAIL_CHARS = 2048
#: A long text is scanned in pieces of about this many characters (cut after a newline),
#: as :func:`thruput.read` streams a large file: the vectorised path's temporaries (the lines
#: of a piece, their joined copy) are some 6 times the text they come from.
PIECE_CHARS = 4 * 2**20


#: The most lines of one piece scanned at once: the line-by-line path holds a tuple of
#: seven strings a line (some 200 bytes), so 4 M characters of blank lines must not be
#: one piece.
PIECE_LINES = 100_000


def _by_lines(chunks):
    """The pieces ``chunks``, each of more than :data:`PIECE_LINES` lines cut after
    newlines into pieces of about that many (by their mean line length; again where a
    piece still holds twice as many)."""
    for chunk in chunks:
        n = chunk.count("\n")
        if n <= 2 * PIECE_LINES:
            yield chunk
            continue
        step = max(1, len(chunk) * PIECE_LINES // n)
        start = 0
        while len(chunk) - start > step:
            cut = chunk.find("\n", start + step - 1) + 1
            if not cut:
                break
            yield from _by_lines((chunk[start:cut],)) if cut - start < len(chunk) else (chunk[start:cut],)
            start = cut
        if start < len(chunk):
            yield chunk[start:]


def _pieces(text):
    """``text`` in consecutive pieces of about :data:`PIECE_CHARS`, each but the last
    ending with a newline (the whole text when it is short)."""
    start = 0
    while len(text) - start > PIECE_CHARS:
        cut = text.find("\n", start + PIECE_CHARS) + 1
        if not cut:
            break
        yield text[start:cut]
        start = cut
    if start == 0:
        yield text
    elif start < len(text):
        yield text[start:]


class Scan(NamedTuple):
    """One parsed ping run before it becomes a Dataset (:func:`scan`, :func:`dataset`)."""

    #: ``name -> (dims, values)`` of the probe variables (``status`` as names).
    probes: dict
    #: The closed line accounting (:meth:`thruput.contract.Ledger.close`).
    ledger: dict
    #: What ping printed as its own totals.
    tool_summary: dict
    #: The checks of those totals against the probes.
    consistency: list
    #: ``ping_variant``, ``ping_target``, ``ping_payload_bytes``.
    attrs: dict


def dataset(run):
    """The contract Dataset of a :class:`Scan`."""
    return build(KIND, run.probes, fmt=NAME, tool=TOOL, ledger=run.ledger,
                 tool_summary=run.tool_summary, consistency=run.consistency, attrs=run.attrs)


def parse_chunks(chunks, *, head, tail, n_lines):
    """:func:`parse` of a log given in pieces: ``dataset(scan_chunks(...))``."""
    return dataset(scan_chunks(chunks, head=head, tail=tail, n_lines=n_lines))


def scan_chunks(chunks, *, head, tail, n_lines):
    """Scan one ping run given as consecutive pieces of its text (bounded memory).

    What :func:`parse` does with the whole text, piece by piece: each piece is scanned
    (:func:`read_replies`) on its own and only the replies' numbers are kept, so
    that memory holds one piece of text and the growing output, never the whole log
    (:func:`thruput.read` streams large files through here). ``dataset()`` of the result
    is the Dataset :func:`parse` gives for the joined text.

    Parameters
    ----------
    chunks : iterable of str
        The text in order, cut after a newline (every piece but the last ends with "\n").
    head : str
        The beginning of the text, holding the run header and the 4 KB after it.
    tail : str
        The last :data:`TAIL_CHARS` characters of the text.
    n_lines : int
        Lines of the whole text (``count("\n")``, plus one if it does not end with one).
    """
    variant, header_line = variant_of(head, tail)
    quotes = _Quotes(n_lines)
    ledger = Ledger(n_lines, lines=quotes)
    others = _OtherLines(variant, header_line, ledger, quotes)
    store, offset, ends_with_newline = _Store(n_lines, variant), 0, True
    for chunk in _by_lines(chunks):
        k = chunk.count("\n") + (0 if chunk.endswith("\n") else 1)
        if not chunk.strip(" \t\n"):       # a piece of blank lines only: skipped at once
            others.blank(np.arange(offset + 1, offset + k + 1))
            offset += k
            ends_with_newline = chunk.endswith("\n")
            continue
        replies, other_lines = read_replies(chunk, windows=variant == "windows")
        blanks = []         # a run of blank lines, skipped at once (30 M of them: not 30 M calls)
        for line, content in other_lines:
            if not content.strip(" \t"):
                blanks.append(line + offset)
                continue
            if blanks:
                others.blank(blanks)
                blanks = []
            others.feed(line + offset, content)
        if blanks:
            others.blank(blanks)
        store.add(replies, offset, others.events)
        others.events.clear()
        offset += k
        ends_with_newline = chunk.endswith("\n")
        if not ledger.lenient and (ledger.failing or others.unrecognised - {n_lines}):
            _refuse_early(store, ledger, offset, n_lines)
    replies = store.replies()
    del store
    replies = _in_range(replies, ledger)
    if not ends_with_newline and not others.summary_seen:
        replies = _cut_last_line(replies, others, n_lines, ledger)
    elif not ends_with_newline and n_lines in others.unrecognised:  # a summary line, cut
        others.unrecognised.discard(n_lines)
        ledger.cut_off(n_lines)
    ledger.parsed(replies.line)
    probes, consistency = _process(replies, others, variant, ledger)
    _truncation(others, variant, ledger)
    return Scan(probes, ledger.close(), others.summary, consistency,
                {"ping_variant": variant, "ping_target": others.target,
                 "ping_payload_bytes": others.payload})


def _refuse_early(store, ledger, read, n_lines):
    """A strict read that met an error or an unrecognised line in its first ``read`` lines
    stops there, raising the ParseError of the first one: the rest of the log is not read
    (a 1 GB file that is not one ping run is refused at its line 13, not after its last)."""
    ledger.parsed(store.replies().line)
    if read < n_lines:
        ledger.skip(slice(read + 1, n_lines + 1), "not read: the log is refused")
    ledger.close()  # raises: the errors and the unrecognised lines read so far


class _Store:
    """Every probe event of all pieces in line order: replies and the events of the other
    lines (lost, errors), with their status, written into arrays allocated once for
    ``capacity`` events (the log's line count, a bound). Untouched pages of such an
    allocation take no memory and no piece's arrays are kept or joined, so memory follows
    what was read."""

    DTYPES = {"line": np.int64, "timestamp": np.float64, "size": None, "seq": None,
              "ttl": None, "rtt": np.float64, "status": np.int8}
    #: Where each field sits in an event tuple of :class:`_OtherLines` (others: absent).
    EVENT_COLUMNS = {"line": 0, "status": 1, "seq": 2, "timestamp": 3, "size": 4}
    ABSENT = {"ttl": -1, "rtt": np.nan}

    def __init__(self, capacity, variant):
        self.n = 0
        self.variant = variant
        self.arrays = {name: np.empty(capacity, dtype=dtype or INT)
                       for name, dtype in self.DTYPES.items()}

    def add(self, replies, offset, events):
        """The replies of one piece (lines counted from its start, after ``offset`` lines)
        and the events of its other lines (lines of the whole text)."""
        k = len(replies.line)
        fields = {"line": replies.line + offset if offset else replies.line,
                  "timestamp": replies.timestamp, "size": replies.size, "seq": replies.seq,
                  "ttl": replies.ttl, "rtt": replies.rtt,
                  "status": np.full(k, _REPLY, dtype=np.int8)}
        flag = replies.flag
        if k and flag is not None:
            if self.variant == "windows":  # time<1ms: Windows' own value is 0
                fields["rtt"] = np.where(flag == "<", 0.0, fields["rtt"])
            else:
                fields["status"][flag == "DUP!"] = _DUP
                fields["status"][flag == "BAD CHECKSUM!"] = _ERROR
        if events:  # few: inserted at their place (reply and event lines are all distinct)
            at = np.searchsorted(fields["line"], np.array([e[0] for e in events], dtype=np.int64))
            for name, values in fields.items():
                column = self.EVENT_COLUMNS.get(name)
                inserted = ([e[column] for e in events] if column is not None
                            else [self.ABSENT[name]] * len(events))
                fields[name] = np.insert(values, at, np.array(inserted, dtype=values.dtype))
        part = slice(self.n, self.n + len(fields["line"]))
        for name, array in self.arrays.items():
            array[part] = fields[name]
        self.n = part.stop

    def replies(self):
        out = Replies()
        for name, array in self.arrays.items():
            setattr(out, name, array[: self.n])
        out.flag = None
        return out


class _Quotes:
    """The text of the lines no reader recognised (the first 50), for error messages."""

    LIMIT = 50

    def __init__(self, n_lines):
        self._n = n_lines
        self._text = {}

    def add(self, line, text):
        if len(self._text) < self.LIMIT:
            self._text[line] = text

    def __len__(self):
        return self._n

    def __getitem__(self, index):
        return self._text.get(index + 1, "")


def _in_range(replies, ledger):
    """Replies whose numbers fit their fields (:data:`REPLY_LIMITS`); the others are errors
    naming their line (``icmp_seq=99999999999999999999`` is not ping output)."""
    bad = np.zeros(len(replies.line), dtype=bool)
    for name, limit in REPLY_LIMITS.items():
        bad |= getattr(replies, name) == OUT_OF_RANGE
    for line in replies.line[bad][:50]:
        ledger.error(int(line), f"a number beyond its field in a reply (icmp_seq above "
                                f"{REPLY_LIMITS['seq']}, size above {REPLY_LIMITS['size']} or "
                                f"ttl above {REPLY_LIMITS['ttl']}): not ping output")
    return _select(replies, ~bad) if bad.any() else replies


def _select(replies, keep):
    out = Replies()
    for name in Replies.__slots__:
        value = getattr(replies, name, None)
        setattr(out, name, value[keep] if value is not None else None)
    return out


def _cut_last_line(replies, others, n_lines, ledger):
    """A log that ends without a newline and without its summary was cut inside its last
    line: ``icmp_seq=1`` may be ``icmp_seq=13`` and ``ttl=6`` ``ttl=64``, so that line is
    no data, whatever it looks like. (With the summary present, a missing final newline
    is only a stripped newline.)"""
    n = len(replies.line)
    if n and replies.line[-1] == n_lines:
        replies = _select(replies, np.arange(n) < n - 1)
    others.unrecognised.discard(n_lines)
    ledger.cut_off(n_lines)
    return replies


def _truncation(others, variant, ledger):
    """Say what is missing when the summary is: probes never printed are then unknown."""
    if not others.summary_seen:
        missing = "the run has no summary (cut off): probes never printed are unknown"
    elif "transmitted" not in others.summary:
        missing = ("the summary was cut off after its statistics header: ping's totals are "
                   "unknown, and so are the probes it never printed")
    else:
        return
    ledger.truncated("; ".join(([ledger.truncation] if ledger.truncation else []) + [missing]))


# ---------------------------------------------------------------------------------------
# Reading


def variant_of(text: str, tail: str) -> tuple[str, int]:
    """The variant and the 1-based line of the first run header (``text``: the head of the
    log, ``tail``: its end)."""
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
            or "round-trip min/avg/max =" in tail):
        return "busybox", line
    if re.search(r"icmp_seq=\d+\. ", body) or "PING Statistics----" in tail \
            or re.match(r"PING [^\s(]+: \d+ data bytes$", header):
        return "solaris", line
    return "bsd", line


class Replies:
    """Probe events as arrays, one field each: the reply lines of a text
    (:func:`read_replies`), then every event of a log (:class:`_Store`)."""

    __slots__ = ("line", "timestamp", "size", "seq", "ttl", "rtt", "flag", "status")


def read_replies(text: str, *, windows: bool = False,
                 general: bool = True) -> tuple[Replies, Iterable[tuple[int, str]]] | None:
    """The reply lines of ``text`` as arrays (:class:`Replies`: ``line`` counted from 1 at
    the start of ``text``, ``timestamp``, ``size``, ``seq``, ``ttl``, ``rtt``, ``flag``)
    and its other lines as ``(line, text)`` pairs: what :func:`scan_chunks` reads of each
    piece and :mod:`._ping_many` of a batch of logs.

    The vectorised path (:func:`_replies_fast`) reads a Unix log where every reply has
    one layout; any other text (and every Windows log) is read by the general path
    (:func:`_replies_general`), which gives the same numbers, bit for bit, wherever both
    apply. ``general=False``: None instead of the general path.
    """
    found = None if windows else _replies_fast(text)
    if found is None and general:
        found = _replies_general(text, windows)
    return found


def _replies_fast(text):
    """The reply lines of a Unix ping log read at once by Arrow and NumPy, or None.

    The text is cut into lines and every line checked against :data:`FAST_REPLY` at once
    (``pyarrow.compute.match_substring_regex``, RE2's DFA, linear in time). Where every
    reply has the layout of the first, their numbers are cut out of the replies' bytes by
    position (:func:`_numbers_by_position`) and each field cast to float64 by Arrow
    (correctly rounded, as Python's ``float``). None where the replies' layouts differ
    (``-D``, TTL or time on some only), another line is a reply of another form (a flag, a
    name appearing later) or a number is beyond float64: :func:`_replies_general` reads
    such a log.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    named = NAMED_REPLY.search("\n" + text[:65535])
    pattern = FAST_REPLY_NAMED if named else FAST_REPLY
    lines = pc.list_flatten(pc.split_pattern(pa.array([text], pa.large_string()), "\n"))
    if text.endswith("\n"):
        lines = lines.slice(0, len(lines) - 1)     # (the newline that ends the text)
    is_reply = pc.match_substring_regex(lines, pattern).to_numpy(zero_copy_only=False)
    at = np.flatnonzero(is_reply)
    n = at.size
    if not n:
        return None
    other_at = np.flatnonzero(~is_reply)
    others = list(zip((other_at + 1).tolist(), lines.take(other_at).to_pylist()))
    if any(UNIX_REPLY.match(content) for _, content in others):
        return None  # replies of another form (a flag, a name appearing later): line by line
    columns = _numbers_by_position(lines.take(at), _FAST_PATTERNS[pattern])
    if columns is None:
        return None
    absent = np.full(n, np.nan)
    out = Replies()
    out.line = at.astype(np.int64) + 1
    out.timestamp = absent if columns["timestamp"] is None else columns["timestamp"]
    out.size = _as_int(columns["size"], "size")
    out.seq = _as_int(columns["seq"], "seq")
    out.ttl = _as_int(np.full(n, -1.0) if columns["ttl"] is None else columns["ttl"], "ttl")
    out.rtt = absent.copy() if columns["rtt"] is None else columns["rtt"]
    out.flag = None
    return out, others


def _numbers_by_position(replies, pattern):
    """``{field: float64 array, or None where the replies do not print it}`` of
    ``replies`` (Arrow strings, each matching ``pattern``), or None where their layouts
    differ or a number is beyond float64.

    The first reply's words (the text between spaces, :func:`_layout`) tell in which word
    each field is and which text surrounds its number (``icmp_seq=`` before, ``.``
    after). Every reply must have as many words, and in each one the words that tell the
    layout must be those of the first: the same literal word (``bytes``, ``from``,
    ``ms``), or a field's word with the same text around a number; a line that matched
    ``pattern`` cannot then hold its numbers elsewhere. This is checked, and each number
    cut out, for all replies at once on their UTF-8 bytes (NumPy), and each field cast by
    Arrow.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    first = replies[0].as_py()
    m = pattern.match(first)
    if m is None or not first.isascii() or replies.null_count:
        return None
    n, k = len(replies), first.count(" ") + 1
    _, offsets, data = replies.buffers()
    large = pa.types.is_large_string(replies.type)
    bounds = np.frombuffer(offsets, dtype=np.int64 if large else np.int32)
    bounds = bounds[replies.offset: replies.offset + n + 1].astype(np.int64, copy=False)
    raw = np.frombuffer(data, dtype=np.uint8)
    spaces = np.flatnonzero(raw[bounds[0]: bounds[-1]] == ord(" "))
    if spaces.size != n * (k - 1):
        return None                                 # (a reply with another number of words)
    spaces += bounds[0]
    spaces = spaces.reshape(n, k - 1)               # (in order: each reply's, if inside it)
    # (scratch arrays of the replies' length, written again by every check: in a dask
    # worker, whose glibc malloc maps every block above 128 KiB afresh, each new array
    # is paid page by page)
    ok, where = np.empty(n, dtype=bool), np.empty(n, dtype=np.int64)
    if not (np.greater_equal(spaces[:, 0], bounds[:-1], out=ok).all()
            and np.less(spaces[:, -1], bounds[1:], out=ok).all()):
        return None
    after_space = spaces + 1

    def word(j):                                    # (where word j of each reply starts and ends)
        return (bounds[:-1] if j == 0 else after_space[:, j - 1],
                bounds[1:] if j == k - 1 else spaces[:, j])

    def width(start, end, compare, size):           # (whether each word's width compares to size)
        return compare(np.subtract(end, start, out=where), size, out=ok).all()

    def at(offset, text):                           # (whether the bytes from each offset are text)
        return all(np.equal(raw[i:][offset], byte, out=ok).all() for i, byte in enumerate(text))

    cut = {}
    for j, literal, name, before, after in _layout(first, m):
        start, end = word(j)
        if name is None:                            # a literal word: bytes, from, ms
            if not (width(start, end, np.equal, len(literal)) and at(start, literal.encode())):
                return None
            continue
        before, after = before.encode(), after.encode()
        if not (width(start, end, np.greater, len(before) + len(after)) and at(start, before)
                and at(np.subtract(end, len(after), out=where), after)):
            return None
        cut[name] = (start, len(before), end, len(after))
    columns = dict.fromkeys(FAST_FIELDS)
    edges, numbers = np.empty(2 * n, dtype=np.int64), np.arange(0, 2 * n, 2)
    for name, (start, before, end, after) in cut.items():
        # (Arrow strings over the bytes: the numbers and the text between them; the numbers taken)
        head = int(start[0]) + before
        np.add(start, before - head, out=edges[0::2])
        np.subtract(end, after + head, out=edges[1::2])
        pieces = pa.Array.from_buffers(pa.large_string(), 2 * n - 1,
                                       [None, pa.py_buffer(edges), data.slice(head)])
        try:
            columns[name] = pc.cast(pieces.take(numbers), pa.float64()).to_numpy(zero_copy_only=False)
        except pa.ArrowInvalid:                     # (beyond float64: the general path says so)
            return None
        del pieces                                  # (edges is written again for the next field)
    return columns


#: :data:`FAST_REPLY` and :data:`FAST_REPLY_NAMED` for Python's ``re`` (the first reply's
#: layout, :func:`_numbers_by_position`).
_FAST_PATTERNS = {p: _ascii(p) for p in (FAST_REPLY, FAST_REPLY_NAMED)}


def _layout(first, m):
    """The words of the first reply ``first`` (``m``: its match) that tell every reply's
    layout, in order: ``(j, word, field, before, after)`` for word ``j`` (the text between
    its spaces): ``field`` None for a literal word (``bytes``, ``from``, ``ms``), else the
    field in it and the text ``before`` and ``after`` its number (``icmp_seq=``, ``.``).
    Those are ``bytes`` and ``from``, every field's word and every word from the sequence
    number on (:func:`_numbers_by_position`)."""
    k = first.count(" ") + 1
    starts = [0] + [i + 1 for i, c in enumerate(first) if c == " "]
    word_of = {name: first.count(" ", 0, m.start(name)) for name in FAST_FIELDS
               if m.group(name) is not None}
    checked = set(range(word_of["seq"], k)) | set(range(word_of["size"], word_of["size"] + 3))
    by_word = {j: name for name, j in word_of.items()}
    for j in sorted(checked | set(by_word)):
        word = first[starts[j]: (starts[j + 1] - 1) if j + 1 < k else len(first)]
        name = by_word.get(j)
        if name is None:
            yield j, word, None, "", ""
        else:
            yield j, word, name, first[starts[j]: m.start(name)], word[m.end(name) - starts[j]:]


#: Integer fields read as floats (the scanners' and NumPy's common ground) whose value is
#: beyond :data:`REPLY_LIMITS` (or not finite) become this; -1 stays "not printed".
OUT_OF_RANGE = -2
#: The integer type of ``seq``, ``size`` and ``ttl`` (16-bit and 8-bit fields: int32 holds
#: them and halves their memory beside int64; ``line`` stays int64).
INT = np.int32


def _as_int(values, field):
    """Float field values to :data:`INT` without overflow: beyond the field's limit ->
    :data:`OUT_OF_RANGE` (the float is compared before any cast)."""
    ok = (values >= -1) & (values <= REPLY_LIMITS[field])  # NaN and inf fail both
    if ok.all():
        return values.astype(INT)
    return np.where(ok, np.where(ok, values, 0).astype(INT), OUT_OF_RANGE).astype(INT)


@contextmanager
def paused_gc():
    """Python's cyclic garbage collector off for the block. Millions of small objects (the
    pieces of a large log, the rows of a monitor's runs.csv) trigger it over and over
    although none of them can form a cycle: pausing it saves a third of the time of a
    large log, and 3-8 µs of the 9-17 µs a runs.csv row took at 2 x 10^5 rows."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _replies_general(text, windows=False):
    """Every line by one regex pass (:data:`UNIX_LINES` or :data:`WINDOWS_LINES`): one
    match a line, so the match index is the line number; the fields converted by NumPy."""
    pattern = WINDOWS_LINES if windows else UNIX_LINES
    with paused_gc():
        rows = pattern.findall(text)
    del rows[text.count("\n") + (0 if text.endswith("\n") else 1):]  # (the empty match after a final "\n")
    out = Replies()
    if windows:
        rows = [tuple(r[i] for i in _WINDOWS_ORDER) for r in rows]
        key = 4  # time= is in every Windows reply
    else:
        key = 2  # icmp_seq= is in every Unix reply
    if rows:
        with paused_gc():
            columns = list(zip(*rows))
    else:
        columns = [()] * 7
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
    out.size = _as_int(numbers(1, -1), "size")
    out.seq = _as_int(numbers(2, -1), "seq")
    out.ttl = _as_int(numbers(3, -1), "ttl")
    out.rtt = numbers(4)
    out.flag = column(5)
    others = ((int(i) + 1, rows[i][6]) for i in np.flatnonzero(~is_reply))
    return out, others


class _OtherLines:
    """Header, summary, lost probes and errors: the few lines that are not replies."""

    def __init__(self, variant, header_line, ledger, quotes):
        self.variant = variant
        self.quotes = quotes
        self.header_line = header_line
        self.ledger = ledger
        self.events = []  # (line, status, seq, timestamp, size)
        self.summary = {}
        self.summary_seen = False
        self.target = ""
        self.payload = -1
        self.unrecognised = set()
        self.merged = 0
        self._after_error = 0

    def blank(self, lines):
        """Blank ``lines`` (a list of line numbers, in order), as :meth:`feed` takes each."""
        self._after_error = 0
        self.ledger.skip(np.asarray(lines, dtype=np.int64), "blank")

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
            self.quotes.add(line, text)

    def _header(self, text):
        match = re.match(r"^(?:PING6?\(?|Pinging )(\S+)", text)
        self.target = match.group(1).split("(")[0] if match else ""
        # (at most 6 digits: a payload is below 65536 bytes; more is a damaged header)
        size = re.search(r"(?<!\d)(\d{1,6})(?:\(\d+\))? (?:data )?bytes", text) or re.search(r"\((\d{1,6})=", text)
        self.payload = int(size.group(1)) if size else -1
        if text.startswith("PING6("):  # BSD: PING6(56=40+8+8 bytes) src --> dst
            self.target = text.rsplit("--> ", 1)[-1]
            size = re.search(r"\+(\d{1,6}) bytes\)", text)
            self.payload = int(size.group(1)) if size else -1

    def _unix(self, line, text):
        skip, event = self.ledger.skip, self.events.append
        if (m := NO_ANSWER.match(text)):
            self._event(line, _LOST, m.group(2), _float(m.group(1)), None)
        elif (m := BSD_TIMEOUT.match(text)):
            self._event(line, _LOST, m.group(1), np.nan, None)
        elif (m := BSD_ERROR.match(text)):
            self._event(line, _status_of(m.group(2)), None, np.nan, m.group(1))
            self._after_error = 2
        elif self._after_error and (BSD_DUMP_HEADER.match(text) or BSD_DUMP_ROW.match(text)):
            skip(line, "icmp error packet dump")
            self._after_error -= 1
        elif (m := ICMP_ERROR.match(text)):
            self._event(line, _status_of(m.group(3)), m.group(2), _float(m.group(1)), None)
        elif SEND_ERROR.match(text):
            event((line, _ERROR, -1, np.nan, -1))
            self.ledger.parsed(line)
        elif STATS_HEADER.match(text):
            self.summary_seen = True
            skip(line, "statistics header")
        elif (m := TRANSMITTED.match(text)):
            totals = transmitted_totals(m)
            if totals is None:
                self.ledger.error(line, f"a count of more than {MAX_DIGITS} digits: not ping output")
                return True
            self.summary.update(totals)
            self.ledger.parsed(line)
        elif (m := RTT_STATS.match(text)):
            self.summary.update(rtt_statistics(m))
            self.ledger.parsed(line)
        elif (m := PIPE.match(text)) and len(m.group(1)) <= MAX_DIGITS:
            self.summary["pipe"] = int(m.group(1))
            self.ledger.parsed(line)
        elif MERGED_REPLIES.match(text):
            skip(line, "two replies on one line (a lost newline): not read")
            self.merged += 1
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

    def _event(self, line, status, seq, timestamp, size):
        """One probe event from a non-reply line; ``seq`` and ``size`` as printed (None
        when absent), checked against :data:`REPLY_LIMITS` before they become ints."""
        values = []
        for field, text in (("seq", seq), ("size", size)):
            value = int(text) if text and len(text) <= MAX_DIGITS else -1 if not text else None
            if value is None or value > REPLY_LIMITS[field]:
                self.ledger.error(line, f"{field} {text[:30]} is beyond its field's limit "
                                        f"({REPLY_LIMITS[field]}): not ping output")
                return
            values.append(value)
        self.events.append((line, status, values[0], timestamp, values[1]))
        self.ledger.parsed(line)

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
            if any(len(v) > MAX_DIGITS for v in m.groups()):
                self.ledger.error(line, f"a count of more than {MAX_DIGITS} digits: not ping output")
                return True
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


def transmitted_totals(match):
    """``tool_summary`` entries of a :data:`TRANSMITTED` match, or None for a count of more
    than :data:`MAX_DIGITS` digits (not ping output)."""
    keys = ("transmitted", "received", "duplicates", "corrupted", "errors")
    if any(v is not None and len(v) > MAX_DIGITS for v in match.groups()):
        return None
    out = {k: int(v) for k, v in zip(keys, match.groups()) if v is not None}
    out["loss_percent"] = float(match.group(6))
    if match.group(7):
        out["time_ms"] = float(match.group(7)) if len(match.group(7)) > MAX_DIGITS else int(match.group(7))
    return out


def rtt_statistics(match):
    """``tool_summary`` entries (ms) of an :data:`RTT_STATS` match."""
    dev = {"mdev": "rtt_mdev", "stddev": "rtt_stddev", "std-dev": "rtt_stddev"}
    out = {key: float(value) for key, value in zip(("rtt_min", "rtt_avg", "rtt_max"), match.group(2, 3, 4))}
    if match.group(5):
        out[dev[match.group(1)]] = float(match.group(5))
    for key, value in zip(("pipe", "ipg", "ewma"), match.group(6, 7, 8)):
        if value:
            out[key] = int(value) if key == "pipe" and len(value) <= MAX_DIGITS else float(value)
    return out


def _status_of(message):
    return _UNREACH if "unreachable" in message.lower() else _ERROR


def _float(value):
    return float(value) if value else np.nan


# ---------------------------------------------------------------------------------------
# Conversion: every type and status decision in one place


def _process(replies, others, variant, ledger):
    """Decide duplicates and late answers, add unprinted lost probes (``replies``: every
    probe event in line order, from :class:`_Store`).

    Written for memory: the arrays of ``replies`` are taken over (and let go of there),
    every field is replaced one at a time, and the usual case (sequence numbers that only
    grow) is recognised block by block, so that no sort, search or copy of the whole log's
    numbers is made beyond one field at a time. Returns the probe variables and the
    consistency records.
    """
    f = {"line": replies.line, "seq": replies.seq, "timestamp": replies.timestamp,
         "size": replies.size, "ttl": replies.ttl, "rtt": replies.rtt, "status": replies.status}
    for name in Replies.__slots__:
        setattr(replies, name, None)

    seq, status = f["seq"], f["status"]
    has_seq = seq >= 0
    gaps, unprinted_check, printed = np.array([], dtype=np.int64), None, 0
    if has_seq.any():
        full = _unwrap(seq) if has_seq.all() else _unwrapped_where(seq, has_seq)
        answered = (status == _REPLY) & has_seq
        # a second reply to one sequence number is a duplicate, marked (DUP!) or not
        # (sequence numbers that only grow, the usual case, need no search)
        if not _strictly_increasing(full, answered):
            first = np.zeros(len(seq), dtype=bool)
            _, first_index = np.unique(full[answered], return_index=True)
            first[np.flatnonzero(answered)[first_index]] = True
            status[answered & ~first] = _DUP
            del first, first_index
        del answered
        # "no answer yet" / "Request timeout" for a probe answered later is not a loss
        lost = np.flatnonzero((status == _LOST) & has_seq)
        if lost.size:
            late = lost[_answered_later(full, status, lost)]
            if late.size:
                ledger.skip(f["line"][late], "no answer yet, answered later")
                keep = np.ones(len(seq), dtype=bool)
                keep[late] = False
                for name in f:
                    f[name] = f[name][keep]
                full, has_seq = full[keep], has_seq[keep]
                seq, status = f["seq"], f["status"]
        counted = has_seq & (status != _DUP)
        increasing = _strictly_increasing(full, counted)
        printed = int(counted.sum()) if increasing else int(np.unique(full[counted]).size)
        cap = UNPRINTED_MAX + ledger.total
        gaps, unprinted_check = _unprinted(full[has_seq] if not has_seq.all() else full,
                                           others.summary.get("transmitted"),
                                           SEQ_ORIGIN.get(variant), cap,
                                           increasing=increasing and not (status == _DUP).any())
        del full, counted
    del has_seq, seq, status

    m = len(gaps)
    if m:
        fill = {"line": -1, "seq": None, "timestamp": np.nan, "size": -1, "ttl": -1,
                "rtt": np.nan, "status": _LOST}
        for name in f:
            values = gaps % SEQ_PERIOD if name == "seq" else np.full(m, fill[name])
            f[name] = np.concatenate([f[name], values.astype(f[name].dtype)])
    checks = _consistency(f["status"], f["rtt"], printed, others, variant, unprinted_check)
    status = f.pop("status")
    probes = {name: (("probe",), f.pop(name)) for name in list(f)}
    probes["status"] = (("probe",), STATUS_NAMES[status])
    return probes, checks


#: Block length of the block-wise passes over whole-log arrays (bounds their temporaries).
BLOCK = 1 << 20


def _strictly_increasing(values, mask):
    """True if ``values[mask]`` strictly increases (checked block by block, no copy of it
    whole)."""
    last = None
    for start in range(0, len(values), BLOCK):
        sub = values[start:start + BLOCK][mask[start:start + BLOCK]]
        if not sub.size:
            continue
        if (last is not None and sub[0] <= last) or np.any(sub[1:] <= sub[:-1]):
            return False
        last = sub[-1]
    return True


def _answered_later(full, status, lost):
    """For the probe indices ``lost``, whether a reply to the same number exists."""
    found = np.zeros(len(lost), dtype=bool)
    wanted = full[lost]
    for start in range(0, len(full), BLOCK):
        block = slice(start, start + BLOCK)
        found |= np.isin(wanted, full[block][status[block] == _REPLY])
    return found


def _unwrapped_where(seq, has_seq):
    """:func:`_unwrap` of the printed numbers, -1 where a probe has none."""
    full = np.full(len(seq), -1, dtype=np.int64)
    full[has_seq] = _unwrap(seq[has_seq])
    return full


def _consistency(status, rtt, printed, others, variant, unprinted_check):
    """What ping printed against what the probes say (:func:`contract.consistency_check`).

    ``received`` and ``duplicates`` against the first and repeated replies (exact); the
    distinct sequence numbers printed (``printed``) against ``transmitted`` (never more); min
    and max RTT of replies and duplicates (ping's statistics include duplicates) against
    ping's own, within the rounding of the printed times (ping computes from exact times
    and prints integers above 100 ms, one decimal above 10 ms); lines holding two replies
    (none expected); and, where ``transmitted`` asked for more unprinted lost probes than
    :data:`UNPRINTED_MAX`, that disagreement. Windows counts differently (unreachable
    replies as received) and is checked on its RTTs only.
    """
    summary, checks = others.summary, []
    replies = status == _REPLY
    if variant != "windows" and "received" in summary:
        checks.append(consistency_check("received: ping's count vs first replies",
                                        summary["received"], int(replies.sum()), rtol=0))
        checks.append(consistency_check("duplicates: ping's count vs repeated replies",
                                        summary.get("duplicates", 0), int((status == _DUP).sum()),
                                        rtol=0))
        checks.append(_at_most("transmitted: sequence numbers printed vs ping's count",
                               summary["transmitted"], printed))
    if variant == "windows" and "received" in summary:
        # Windows counts a router's "Destination host unreachable" reply as received, and
        # prints one line per probe sent
        checks.append(consistency_check(
            "received: ping's count vs replies and unreachable replies", summary["received"],
            int((replies | (status == _UNREACH)).sum()), rtol=0, note="Windows counts both"))
        checks.append(consistency_check("transmitted: ping's count vs probes printed",
                                        summary["transmitted"], len(status), rtol=0,
                                        note="Windows prints one line per probe"))
        checks.append(consistency_check("lost: ping's count vs sent - received", summary["lost"],
                                        summary["transmitted"] - summary["received"], rtol=0))
    if summary.get("transmitted", 0) > 0 and "received" in summary and "loss_percent" in summary:
        checks.append(consistency_check(
            "loss: ping's percent vs its own transmitted and received", summary["loss_percent"],
            100.0 * (summary["transmitted"] - summary["received"]) / summary["transmitted"],
            rtol=0, atol=LOSS_PERCENT_ATOL, note="printed as a whole percent by some pings (cut, not rounded)"))
    timed = (replies | (status == _DUP)) & ~np.isnan(rtt)
    if "rtt_min" in summary and timed.any():
        low = np.min(rtt, where=timed, initial=np.inf)
        high = np.max(rtt, where=timed, initial=-np.inf)
        for key, value in (("rtt_min", low), ("rtt_max", high)):
            checks.append(consistency_check(
                f"{key}: ping's own (exact times) vs replies and duplicates (printed, rounded)",
                summary[key], value, rtol=0, atol=rtt_rounding(summary[key], variant),
                note="ping rounds the times it prints: integer ms from 100 ms, 0.1 ms from 10 ms"))
    if others.merged:
        checks.append(consistency_check("lines holding two replies (a lost newline)", 0,
                                        others.merged, rtol=0,
                                        note="their replies are not read: they count as lost"))
    if unprinted_check is not None:
        checks.append(unprinted_check)
    return checks


#: Status names by code, as an object array: indexing it gives an array of references to
#: five shared str objects (8 bytes a probe, where ``<U11`` would take 44).
STATUS_NAMES = np.array(PROBE_STATUSES, dtype=object)


#: ping's loss percent against its own counts: iputils prints it with ``%g`` (16.6667%),
#: Windows, busybox and old iputils as an integer they cut (2 of 6 lost: "33% loss"), so a
#: whole percent apart at most.
LOSS_PERCENT_ATOL = 1.0 + 1e-9


def rtt_rounding(value: float, variant: str) -> float:
    """The last printed digit of an RTT near ``value`` (iputils' pr_echo_reply: 3 decimals
    below 1 ms, 2 below 10, 1 below 100, none above; Windows whole ms). A whole digit, not
    half: iputils builds the printed time by integer division of microseconds, so it cuts
    (genuine Starlink logs print 149 for ping's own 149.631 and 71.7 for 71.756)."""
    if variant == "windows":
        return 1.0
    for bound, digit in ((1.0, 0.001), (10.0, 0.01), (100.0, 0.1)):
        if value < bound:
            return digit + 1e-9
    return 1.0 + 1e-9


def _at_most(check, tool, data, note=""):
    """A :func:`consistency_check` record that passes when ``data <= tool``."""
    record = consistency_check(check, tool, data, note=note)
    record["ok"] = bool(record["data"] is not None and record["tool"] is not None
                        and record["data"] <= record["tool"])
    return record


def _unwrap(seq):
    """16-bit sequence numbers made monotonic across wraps (int32 where they fit, else int64).

    ``numpy.unwrap(seq, period=SEQ_PERIOD)`` in integers (the same values, exactly: the
    float version is exact for these magnitudes): a step of half a period or more is taken
    as a wrap and corrected by whole periods, a step of exactly half a period upwards kept.
    Absurd numbers (beyond 2**52, negative from a cast overflow) take ``numpy.unwrap``.
    """
    if seq.min() < 0 or seq.max() >= 2**52:
        return np.unwrap(seq.astype(float), period=SEQ_PERIOD).astype(np.int64)
    half = SEQ_PERIOD // 2
    at, correction = [], []
    for start in range(0, max(len(seq) - 1, 0), BLOCK):  # the wraps, block by block
        step = np.diff(seq[start:start + BLOCK + 1].astype(np.int64))
        where = np.flatnonzero(np.abs(step) >= half)
        if where.size:
            step = step[where]
            wrapped = np.mod(step + half, SEQ_PERIOD) - half
            wrapped[(wrapped == -half) & (step > 0)] = half
            at.append(where + start + 1)
            correction.append(wrapped - step)
    # the result in int32 where its values fit (half the memory of int64 on a large log)
    offsets = np.cumsum(np.concatenate(correction)) if at else np.zeros(1, dtype=np.int64)
    low, high = int(seq.min()) + min(0, int(offsets.min())), int(seq.max()) + max(0, int(offsets.max()))
    fits = np.iinfo(np.int32).min <= low and high <= np.iinfo(np.int32).max
    out = np.zeros(len(seq), dtype=np.int32 if fits else np.int64)
    if at:
        out[np.concatenate(at)] = np.concatenate(correction)
        np.cumsum(out, out=out)
    out += seq
    return out


def _unprinted(printed, transmitted, origin, cap, increasing=False):
    """Sequence numbers ping sent but never printed (lost probes), and a consistency record
    when ``transmitted`` disagrees with the data beyond ``cap``.

    With ``transmitted`` (ping's summary): every number in ``[origin, origin +
    transmitted)`` that the log never mentions. Without it (the summary was cut off): the
    gaps below the highest number printed, which the data alone proves lost. At most
    ``cap`` are materialised: a count beyond it (``1000000000000 packets transmitted``
    above a few replies) is not turned into an allocation but recorded (None otherwise).
    ``increasing``: ``printed`` is known to be strictly increasing (no sort needed).
    """
    none = np.array([], dtype=np.int64)
    if origin is None:
        return none, None
    if not increasing:
        printed = np.unique(printed)
    if printed.size and printed[0] < origin:
        printed = printed[printed >= origin]
    if transmitted is None:
        if not printed.size:
            return none, None
        end = int(printed[-1]) + 1
    else:
        end = origin + int(transmitted)
    inside = printed[printed < end] if printed.size and printed[-1] >= end else printed
    missing = (end - origin) - inside.size
    if missing <= 0:
        return none, None
    if missing > cap:
        record = consistency_check(
            "transmitted: ping's count vs sequence numbers printed", end - origin, inside.size,
            note=f"{missing} probes never printed would be lost: more than the {cap} "
                 f"materialised at most (UNPRINTED_MAX plus the lines of the log); none were "
                 f"added")
        record["ok"] = False
        return none, record
    seen = np.zeros(end - origin, dtype=bool)
    seen[inside - origin] = True
    return np.flatnonzero(~seen).astype(np.int64) + origin, None
