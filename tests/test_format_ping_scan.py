"""Ping's two paths for Unix logs against each other: the vectorised path
(:func:`thruput.formats.ping._replies_fast`: Arrow's match of every line, the replies'
numbers taken by position) and the general path, the reference
(:func:`~thruput.formats.ping._replies_general`).

Whole logs: the same Dataset (or the same error at the same line) by both on every sample
here, every corpus file, a long log with every kind of line, and cut, spliced and
junk-filled logs.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import thruput
from thruput.errors import ThruputError
from thruput.formats import ping
from thruput.reader import decode

from .conftest import DATA

SAMPLES = sorted((DATA / "ping").glob("*.out"))

# Pieces of reply lines and of near misses, for the generated lines below.
_DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=24)
_NUMBER = st.one_of(_DIGITS, st.builds(lambda a, b: f"{a}.{b}", _DIGITS,
                                       st.text(alphabet="0123456789", max_size=26)))
_PIECES = st.sampled_from([
    "[", "]", "] ", ".", " ", "0", "64", "1594978465.914536", " bytes from ", "127.0.0.1",
    "::1", "host (10.0.0.1)", ": ", ", ", ":", ",", "icmp_", "seq=", " ttl=", " hlim=",
    "ttl=", " time=", "0.045", "1.", " ms", "ms", " (DUP!)", " (BAD CHECKSUM!)", "(DUP!",
    "\r", "\x00", "\t", "é", "\u2003", "\u0663", "\U0001f600", "x"])


@st.composite
def _reply_like(draw):
    """A reply line with each part present, absent or damaged."""
    def part(text, p=0.8):
        return text if draw(st.floats(0, 1)) < p else draw(st.sampled_from(["", "x", " "]))

    ts = f"[{draw(_DIGITS)}.{draw(_DIGITS)}] " if draw(st.booleans()) else ""
    address = draw(st.sampled_from(["127.0.0.1", "::1", "", "a: b", "h (1.2.3.4)", "é,x"]))
    line = (part(ts) + part(draw(_DIGITS)) + part(" bytes from ") + address
            + part(draw(st.sampled_from([": ", ", "])))
            + part(draw(st.sampled_from(["icmp_seq=", "seq="]))) + part(draw(_DIGITS))
            + part(".", 0.2)
            + part(draw(st.sampled_from([" ttl=", " hlim="])) + draw(_DIGITS), 0.6)
            + part(f" time={draw(_NUMBER)}{draw(st.sampled_from([' ms', 'ms']))}", 0.7)
            + part(draw(st.sampled_from([" (DUP!)", " (BAD CHECKSUM!)"])), 0.2))
    cut = draw(st.integers(0, len(line)))
    return line if draw(st.floats(0, 1)) < 0.7 else line[:cut] + draw(_PIECES) + line[cut:]


_LINE = st.one_of(_reply_like(), st.lists(_PIECES, max_size=14).map("".join))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_reply_like(), min_size=2, max_size=4))
@example(["64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.045 ms",
          "64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 time=0.05 ms"])
def test_replies_merged_by_a_lost_newline_read_alike(replies):
    """Two or more replies on one line (a lost newline) are the same in both readers."""
    assert_same_outcome("PING a (a) 56(84) bytes of data.\n" + "".join(replies) + "\n")


# ---------------------------------------------------------------------------------------
# Whole logs: the same Dataset


def _outcome(text):
    try:
        return ping.parse(text)
    except ThruputError as exc:
        return (type(exc).__name__, str(exc), exc.line)


def _general(function, *args):
    """``function(*args)`` by the line-by-line reader only (no fast path)."""
    fast = ping._replies_fast
    ping._replies_fast = lambda text: None
    try:
        return function(*args)
    finally:
        ping._replies_fast = fast


def assert_same_outcome(text):
    """The fast path gives what the line-by-line reader gives."""
    fast = _outcome(text)
    general = _general(_outcome, text)
    if isinstance(fast, tuple) or isinstance(general, tuple):
        assert fast == general
    else:
        assert fast.identical(general)


def test_every_sample_and_corpus_file_reads_alike(corpus):
    paths = SAMPLES + sorted((corpus / "ping").glob("*/*.out"))
    assert len(paths) == len(SAMPLES) + 69
    replies = 0
    for path in paths:
        assert_same_outcome(decode(path.read_bytes()))
        # and through thruput.read (sniffing, sha256, validate)
        ds = thruput.read(path) if "empty" not in path.name and "not-a-run" not in path.name \
            and "two-runs" not in path.name else None
        if ds is not None:
            assert ds.identical(_general(thruput.read, path)), path
            replies += int((ds["status"].values.astype(str) == "reply").sum())
    assert replies == 722


def test_large_log_reads_alike():
    """A long log with every kind of line (wraps, DUP!, no answer yet, errors) in bulk."""
    rows, seq = ["PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data."], 0
    for i in range(70000):
        seq = (seq + 1) % 65536
        stamp = f"[{1594978465 + i * 0.2:.6f}] "
        if i % 997 == 5:
            rows.append(f"{stamp}no answer yet for icmp_seq={seq}")
        elif i % 1009 == 7:
            rows.append(f"{stamp}From 10.0.0.2 icmp_seq={seq} Destination Host Unreachable")
        else:
            dup = " (DUP!)" if i % 3001 == 0 else ""
            rows.append(f"{stamp}64 bytes from 10.0.0.1: icmp_seq={seq} ttl=64 "
                        f"time={(i % 97) / 7:.3f} ms{dup}")
    rows += ["", "--- 10.0.0.1 ping statistics ---",
             "70000 packets transmitted, 69860 received, +24 duplicates, 0.2% packet loss",
             ""]
    assert_same_outcome("\n".join(rows))


@settings(max_examples=120, deadline=4000, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.floats(0, 1), st.floats(0, 1),
       st.one_of(st.binary(max_size=60), _LINE.map(lambda s: ("\n" + s + "\n").encode())))
def test_damaged_logs_read_alike(sample, cut, at, junk):
    """Cut logs, and junk or generated reply-like lines spliced in anywhere."""
    raw = sample.read_bytes()
    raw = raw[: max(1, int(len(raw) * cut))] if cut < 0.5 else raw
    k = int(len(raw) * at)
    assert_same_outcome(decode(raw[:k] + junk + raw[k:]))


# ---------------------------------------------------------------------------------------
# The integer unwrap of sequence numbers (used by every path)


@given(st.lists(st.integers(0, 65535), min_size=1, max_size=60))
@example([0, 32768])
@example([32768, 0])
@example([0, 32768, 65535, 0])
def test_unwrap_is_numpy_unwrap(seq):
    seq = np.array(seq, dtype=np.int64)
    want = np.unwrap(seq.astype(float), period=ping.SEQ_PERIOD).astype(np.int64)
    assert ping._unwrap(seq).tolist() == want.tolist()


def test_unwrap_falls_back_to_int64_past_int32():
    """Steps just under half a period, 10**5 times: the numbers grow past 2**31."""
    seq = (np.arange(100_000, dtype=np.int64) * 30000) % ping.SEQ_PERIOD
    got = ping._unwrap(seq.astype(np.int32))
    assert got.dtype == np.int64 and got[-1] == 30000 * (100_000 - 1)
    assert got.tolist() == np.unwrap(seq.astype(float), period=ping.SEQ_PERIOD).astype(np.int64).tolist()
    assert ping._unwrap(seq[:1000].astype(np.int32)).dtype == np.int32


_VARIANTS = st.lists(st.tuples(
    st.sampled_from(["", "[1594978465.914536] "]),
    st.sampled_from(["127.0.0.1:", "host (10.0.0.1):", "host (a b):", "host (icmp_seq=7 ttl=3):"]),
    st.sampled_from(["icmp_seq=", "seq="]), st.integers(1, 70000), st.sampled_from(["", "."]),
    st.sampled_from(["", " ttl=64", " hlim=64", " ttl=999"]),
    st.sampled_from(["", " time=0.045 ms", " time=0.045ms", " time=12 ms", " time=1. ms"])),
    min_size=1, max_size=8)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_VARIANTS)
def test_replies_of_differing_layouts_read_alike(replies):
    """Replies taken by position (:func:`ping._numbers_by_position`: the layout of the
    first) or, where any reply's words differ from it, by the general path: the same
    Dataset whatever mixture of forms a log holds."""
    lines = [f"{ts}64 bytes from {where} {seq}{n}{dot}{ttl}{time}"
             for ts, where, seq, n, dot, ttl, time in replies]
    text = ("PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.\n" + "\n".join(lines) + "\n\n"
            "--- 127.0.0.1 ping statistics ---\n"
            f"{len(lines)} packets transmitted, {len(lines)} received, 0% packet loss, time 1ms\n")
    assert_same_outcome(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_VARIANTS, st.integers(0, 7), st.integers(0, 80),
       st.sampled_from(["", "x", " ", "0", ".", "é", "ms", "1e5", "\u0663"]))
@example([("", "127.0.0.1:", "icmp_seq=", 1, "", " ttl=64", " time=0.045 ms")] * 2, 1, 999, "x")
@example([("[1594978465.914536] ", "127.0.0.1:", "icmp_seq=", 1, "", "", " time=0.045 ms")] * 3, 2, 999, "s")
def test_numbers_by_position_are_the_general_paths_or_none(replies, which, at, junk):
    """The replies' numbers read from their bytes by position
    (:func:`ping._numbers_by_position`) are, bit for bit, those of the general path
    (:func:`ping._replies_general`) on the same lines, or None (then the general path reads
    them): for every mixture of layouts and one reply damaged anywhere, its end (the last
    bytes of the buffer) included."""
    import pyarrow as pa

    lines = [f"{ts}64 bytes from {where} {seq}{n}{dot}{ttl}{time}"
             for ts, where, seq, n, dot, ttl, time in replies]
    k = which % len(lines)
    lines[k] = lines[k][:at] + junk + lines[k][at + len(junk) // 2:]
    pattern = ping.FAST_REPLY_NAMED if any(" (" in line for line in lines) else ping.FAST_REPLY
    matched = [line for line in lines if ping._FAST_PATTERNS[pattern].match(line)]
    if not matched:
        return
    general, _ = ping._replies_general("\n".join(matched))
    assert len(general.line) == len(matched)
    kinds = (pa.large_string(), pa.string())
    arrays = [pa.array(matched, kind) for kind in kinds]
    # (and slices: their offsets start inside the buffer, after another string)
    arrays += [pa.array(["64 bytes"] + matched, kind).slice(1) for kind in kinds]
    for array in arrays:
        fast = ping._numbers_by_position(array, ping._FAST_PATTERNS[pattern])
        if fast is None:
            continue
        for name in ("timestamp", "rtt"):
            want = getattr(general, name)
            got = np.full(len(matched), np.nan) if fast[name] is None else fast[name]
            assert got.tobytes() == want.tobytes(), name
        for name in ("size", "seq", "ttl"):
            got = np.full(len(matched), -1.0) if fast[name] is None else fast[name]
            assert ping._as_int(got, name).tolist() == getattr(general, name).tolist(), name
