"""Many small ping logs at once: a monitor archive's thousands of short runs.

:func:`thruput.formats.ping.scan` costs about half a millisecond of Python per log
whatever its length (ledger, sequence-number checks, consistency records), against some
tens of us for reading the replies of a 100-probe log. :func:`scan_many` reads the replies
of a whole batch the way ping reads them (:func:`~thruput.formats.ping.read_replies`), takes
the logs that hold nothing but a header, replies in sequence and the summary, with ping's
totals agreeing with the replies (the monitor's usual log), and decides all of them with
NumPy over the whole batch. Every other log (a loss or error line, a flagged reply, a
wrapped or repeated sequence number, a cut-off or damaged log, a disagreement with ping's
totals, Windows) is left to :func:`~thruput.formats.ping.scan`: the caller reads it one by
one, so its numbers, its records and its errors are exactly that reader's.

For the logs it takes, the probes, ping's summary and the line accounting are those of
:func:`~thruput.formats.ping.scan`, bit for bit (tests/test_format_ping_many.py compares both
on every recorded sample, corpus log and damaged variant).
"""

from __future__ import annotations

import itertools
import json
from typing import NamedTuple

import numpy as np

from ..contract import PROBE_STATUSES
from . import ping

__all__ = ["Many", "scan_many"]

#: Columns of :func:`_numbers`.
_TIMESTAMP, _SIZE, _SEQ, _TTL, _RTT = range(5)
#: Probe status codes (index into :data:`ping.STATUS_NAMES`).
_REPLY, _LOST = PROBE_STATUSES.index("reply"), PROBE_STATUSES.index("lost")


class Many(NamedTuple):
    """The logs :func:`scan_many` read, as flat arrays over their probes.

    Log ``k`` of ``taken`` holds probes ``offsets[k]:offsets[k + 1]``: its replies in line
    order (``replies[k]`` of them, status ``reply``), then the probes ping sent but never
    printed (status ``lost``, NaN RTT and timestamp), in sequence order, as
    :func:`ping.scan` orders them.
    """

    #: Indices (into the texts given) of the logs read here; the others need ping.scan.
    taken: np.ndarray
    offsets: np.ndarray
    replies: np.ndarray
    #: Probe status codes (index into :data:`ping.STATUS_NAMES`), int8.
    status: np.ndarray
    rtt: np.ndarray
    timestamp: np.ndarray
    seq: np.ndarray
    #: What ping printed as its totals, one dict per log taken.
    tool_summary: list
    #: The line accounting of the logs taken, summed (``Ledger.close`` keys, no truncation).
    ledger: dict


def scan_many(texts):
    """Read the plain logs among ``texts`` (str each) at once: a :class:`Many`.

    The logs not in ``Many.taken`` must be read with :func:`ping.scan` (which also gives
    any error they raise). Nothing here raises for a log's content.
    """
    found = _scan_batch(texts) or [_scan_one(text) for text in texts]
    taken = [k for k, f in enumerate(found) if f is not None]
    if not taken:
        return _empty()
    parts = [found[k] for k in taken]
    counts = np.array([len(p.lines) for p in parts], dtype=np.int64)
    numbers = np.concatenate([p.numbers for p in parts]) if counts.sum() else np.empty((0, 5))
    owner = np.repeat(np.arange(len(parts)), counts)
    origin = np.array([p.origin for p in parts], dtype=np.int64)
    transmitted = np.array([p.summary["transmitted"] for p in parts], dtype=np.int64)
    n_lines = np.array([p.n_lines for p in parts], dtype=np.int64)
    # (integers already, as ping.read_replies gives them: OUT_OF_RANGE where beyond the field)
    seq, size, ttl = (numbers[:, k].astype(np.int64) for k in (_SEQ, _SIZE, _TTL))
    rtt = numbers[:, _RTT].copy()
    end = origin + transmitted
    # a log is plain when its sequence numbers climb by less than half a period (no wrap,
    # no repeat) inside [origin, origin + transmitted), every field is in range, every
    # reply is timed, and ping's totals agree with what it printed
    bad = (seq < origin[owner]) | (seq >= end[owner]) | (size == ping.OUT_OF_RANGE) \
        | (ttl == ping.OUT_OF_RANGE) | ~np.isfinite(rtt)
    step = np.diff(seq)
    same = owner[1:] == owner[:-1]
    bad[1:] |= same & ((step <= 0) | (step >= ping.SEQ_PERIOD // 2))
    plain = np.bincount(owner[bad], minlength=len(parts)) == 0
    missing = np.where(counts > 0, transmitted - counts, 0)   # (none without replies)
    cap = ping.UNPRINTED_MAX + n_lines
    plain &= (missing <= cap) & _agrees(parts, counts, rtt, owner)
    if not plain.all():
        keep = np.flatnonzero(plain)
        taken = [taken[k] for k in keep]
        parts = [parts[k] for k in keep]
        rows = plain[owner]
        owner = np.repeat(np.arange(len(parts)), counts[keep])
        seq, rtt, numbers = seq[rows], rtt[rows], numbers[rows]
        origin, end, counts, missing = origin[keep], end[keep], counts[keep], missing[keep]
        if not parts:
            return _empty()
    return _assemble(taken, parts, counts, owner, seq, rtt, numbers[:, _TIMESTAMP].copy(),
                     origin, end, missing)


class _Plain(NamedTuple):
    variant: str
    lines: np.ndarray
    numbers: np.ndarray
    origin: int
    n_lines: int
    summary: dict
    skipped: dict
    parsed: int


def _scan_batch(texts):
    """:func:`_scan_one` of every text, the replies of all of them read by one pass of ping's
    vectorised path (:func:`ping.read_replies`) over their joined text: one Arrow pass for
    the batch instead of one per log, which was most of a 100-probe log's cost. None (read
    them one by one) where that path does not apply to the batch as a whole: logs whose
    replies have different layouts (``-D`` in some only), a flag, a name appearing later."""
    candidates = [k for k, t in enumerate(texts) if t.endswith("\n") and not ping.BLANK_TEXT.match(t)]
    if len(candidates) < 2:
        return None
    pieces = [texts[k] for k in candidates]
    n_lines = np.fromiter(map(str.count, pieces, itertools.repeat("\n")), dtype=np.int64, count=len(pieces))
    before = np.r_[0, np.cumsum(n_lines)[:-1]]           # lines of the logs before each
    found = ping.read_replies("".join(pieces), general=False)
    if found is None:
        return None
    replies, others = found
    numbers = _numbers(replies)
    owner = np.searchsorted(before, replies.line, side="left") - 1
    other_lines = list(others)
    other_owner = np.searchsorted(before, np.array([line for line, _ in other_lines], dtype=np.int64),
                                  side="left") - 1
    reply_bounds = np.searchsorted(owner, np.arange(len(pieces) + 1))
    other_bounds = np.searchsorted(other_owner, np.arange(len(pieces) + 1))
    out = [None] * len(texts)
    for j, k in enumerate(candidates):
        lo, hi = reply_bounds[j], reply_bounds[j + 1]
        mine = [(line - int(before[j]), content)
                for line, content in other_lines[other_bounds[j]:other_bounds[j + 1]]]
        out[k] = _plain(pieces[j], replies.line[lo:hi] - before[j], numbers[lo:hi], mine, int(n_lines[j]))
    return out


def _scan_one(text):
    """The replies of ``text`` (:func:`ping.read_replies`) and its few other lines read, or
    None when the log is not plain (see :func:`scan_many`)."""
    if not text.endswith("\n") or ping.BLANK_TEXT.match(text):
        return None
    try:
        variant, header_line = ping.variant_of(text, text[-ping.TAIL_CHARS:])
        if ping.SEQ_ORIGIN.get(variant) is None:       # (Windows: no sequence numbers)
            return None
        n_lines = text.count("\n")
        found = ping.read_replies(text)
    except ping.ParseError:
        return None
    replies, others = found
    if replies.flag is not None and any(replies.flag):     # (DUP!), (BAD CHECKSUM!)
        return None
    return _plain(text, replies.line, _numbers(replies), list(others), n_lines, variant, header_line)


def _numbers(replies):
    """The replies' fields as the float64 columns ``_TIMESTAMP`` ... ``_RTT``."""
    return np.column_stack([replies.timestamp, replies.size, replies.seq, replies.ttl,
                            replies.rtt]).astype(np.float64, copy=False)


def _plain(text, lines, numbers, others, n_lines, variant=None, header_line=None):
    """The :class:`_Plain` of one log from its replies (``lines``, ``numbers``) and its
    other lines (``others``: (line, text)), or None when it is not plain."""
    if variant is None:
        try:
            variant, header_line = ping.variant_of(text, text[-ping.TAIL_CHARS:])
        except ping.ParseError:
            return None
    origin = ping.SEQ_ORIGIN.get(variant)
    if origin is None:
        return None
    if len(lines) + len(others) != n_lines:
        return None
    # (any other line, a loss, an ICMP or send error among them, sends the log to
    # ping.scan: none of those has the shape of a line taken here)
    summary, skipped, parsed, stats = {}, {}, len(lines), 0
    for line, other in others:
        if not other.strip(" \t"):
            reason = "blank"
        elif ping.HEADER.match(other):
            if line != header_line:
                return None
            reason = "header"
        elif ping.STATS_HEADER.match(other):
            reason, stats = "statistics header", stats + 1
        elif (m := ping.TRANSMITTED.match(other)) and "transmitted" not in summary:
            totals = ping.transmitted_totals(m)
            if totals is None:
                return None
            summary.update(totals)
            parsed += 1
            continue
        elif (m := ping.RTT_STATS.match(other)) and "rtt_min" not in summary:
            summary.update(ping.rtt_statistics(m))
            parsed += 1
            continue
        else:
            return None
        skipped[reason] = skipped.get(reason, 0) + 1
    if stats != 1 or "transmitted" not in summary:
        return None
    return _Plain(variant, lines, numbers, origin, n_lines, summary, skipped, parsed)


def _agrees(parts, counts, rtt, owner):
    """Per log, whether every check ping's consistency records make passes: ``received``
    and ``duplicates`` exact, the replies' min and max RTT within ping's rounding."""
    ok = np.array([p.summary["received"] == c and p.summary.get("duplicates", 0) == 0
                   for p, c in zip(parts, counts)], dtype=bool)
    timed = counts > 0
    low = np.full(len(parts), np.inf)
    high = np.full(len(parts), -np.inf)
    finite = np.isfinite(rtt)                       # (a log with an untimed reply is not plain)
    np.minimum.at(low, owner[finite], rtt[finite])
    np.maximum.at(high, owner[finite], rtt[finite])
    for k, p in enumerate(parts):
        if ok[k] and timed[k] and "rtt_min" in p.summary:
            for key, value in (("rtt_min", low[k]), ("rtt_max", high[k])):
                tool = p.summary[key]
                if not abs(tool - float(value)) <= ping.rtt_rounding(tool, p.variant):
                    ok[k] = False
    return ok


def _assemble(taken, parts, counts, owner, seq, rtt, timestamp, origin, end, missing):
    """The :class:`Many` of the plain logs: replies, then each log's unprinted losses
    (``missing`` of them: the gaps before its first reply, between replies and after its
    last, below ``end``; none for a log without replies, as :func:`ping.scan`)."""
    first = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
    has = np.flatnonzero(counts > 0)
    inner = np.flatnonzero(owner[1:] == owner[:-1])
    starts = np.concatenate([origin[has], seq[inner] + 1, seq[first[has] + counts[has] - 1] + 1])
    stops = np.concatenate([seq[first[has]], seq[inner + 1], end[has]])
    whose = np.concatenate([has, owner[inner], has])
    order = np.argsort(whose, kind="stable")                # each log's gaps in sequence order
    starts, lengths, whose = starts[order], (stops - starts)[order], whose[order]
    total = int(lengths.sum())
    gaps = np.repeat(starts, lengths) + (np.arange(total, dtype=np.int64)
                                         - np.repeat(np.cumsum(lengths) - lengths, lengths))
    gap_owner = np.repeat(whose, lengths)
    offsets = np.r_[0, np.cumsum(counts + missing)].astype(np.int64)
    at_reply = offsets[owner] + (np.arange(len(seq)) - first[owner])
    at_gap = offsets[gap_owner] + counts[gap_owner] + (
        np.arange(total) - np.r_[0, np.cumsum(missing)[:-1]][gap_owner])
    n = int(offsets[-1])
    status = np.full(n, _LOST, dtype=np.int8)
    status[at_reply] = _REPLY
    values = {"rtt": np.full(n, np.nan), "timestamp": np.full(n, np.nan),
              "seq": np.empty(n, dtype=ping.INT)}
    values["rtt"][at_reply] = rtt
    values["timestamp"][at_reply] = timestamp
    values["seq"][at_reply] = seq
    values["seq"][at_gap] = gaps % ping.SEQ_PERIOD
    skipped = {}
    for p in parts:
        for reason, c in p.skipped.items():
            skipped[reason] = skipped.get(reason, 0) + c
    ledger = {"lines_total": sum(p.n_lines for p in parts),
              "lines_parsed": sum(p.parsed for p in parts),
              "lines_skipped": sum(skipped.values()),
              "skipped_reasons": json.dumps(skipped, sort_keys=True)}
    return Many(np.asarray(taken, dtype=np.int64), offsets, counts, status, values["rtt"],
                values["timestamp"], values["seq"], [p.summary for p in parts], ledger)


def _empty():
    none = np.empty(0)
    return Many(np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64),
                np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int8), none, none,
                np.empty(0, dtype=ping.INT), [],
                {"lines_total": 0, "lines_parsed": 0, "lines_skipped": 0, "skipped_reasons": "{}"})
