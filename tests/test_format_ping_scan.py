"""The C scanner of ping logs (``thruput.formats._pingscan``) against its reference, the
pure-Python readers of :mod:`thruput.formats.ping`.

Whole logs: the same Dataset (or the same error at the same line) with and without the
scanner on every sample here, every corpus file, and cut, spliced and junk-filled logs.
Single lines: the same decision (reply or not) and bit-identical numbers as the regex
:data:`~thruput.formats.ping.UNIX_LINES` and ``float()``, on generated near-replies and on
arbitrary text (which also checks that no input makes the scanner crash or overrun).
"""

from __future__ import annotations

import shutil
import sysconfig

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import thruput
from thruput.errors import ThruputError
from thruput.formats import ping
from thruput.reader import decode

from .conftest import DATA


def _compiler():
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc)


def test_scanner_is_built_where_a_compiler_is():
    """``pip install -e .`` compiles the extension when a C compiler is present; if this
    fails, the build was skipped (it is optional): re-run the install and read its log."""
    if not _compiler():
        pytest.skip("no C compiler: the pure-Python reader is used")
    assert ping._pingscan is not None, "thruput.formats._pingscan was not built"


scan = pytest.importorskip("thruput.formats._pingscan").scan

SAMPLES = sorted((DATA / "ping").glob("*.out"))
SETTINGS = settings(max_examples=150, deadline=2000,
                    suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------------------------------
# The reference, line by line


def _reference(text):
    """What ``scan`` must return, from UNIX_LINES and float() (the Python readers' way)."""
    lines = text.split("\n")
    if text.endswith("\n") and len(lines) > 1:
        lines.pop()  # the newline that ends the text starts no line
    replies, numbers, flags, others, texts = [], [], [], [], []
    for number, line in enumerate(lines, start=1):
        m = ping.UNIX_LINES.match(line)
        if m.group(3) is None:
            others.append(number)
            texts.append(line)
            continue
        ts, size, seq, ttl, rtt, flag = m.groups()[:6]
        replies.append(number)
        numbers.append([float(ts) if ts else np.nan, float(size), float(seq),
                        float(ttl) if ttl else -1.0, float(rtt) if rtt else np.nan])
        flags.append({None: 0, "DUP!": 1, "BAD CHECKSUM!": 2}[flag])
    return replies, numbers, flags, others, texts


def assert_scans_like_reference(text):
    lines, numbers, flags, others, texts = scan(text)
    ref = _reference(text)
    assert np.frombuffer(lines, np.int64).tolist() == ref[0]
    got = np.frombuffer(numbers, np.float64).reshape(-1, 5)
    want = np.array(ref[1], dtype=np.float64).reshape(-1, 5)
    # bit for bit: the same doubles (NaN where absent)
    assert got.view(np.int64).tolist() == want.view(np.int64).tolist()
    assert np.frombuffer(flags, np.int8).tolist() == ref[2]
    assert np.frombuffer(others, np.int64).tolist() == ref[3]
    assert texts == ref[4]


def test_reply_shapes():
    """One line of each shape, hand-checked values."""
    text = ("PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.\n"
            "[1594978465.914536] 64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.045 ms\n"
            "64 bytes from ::1: seq=0 ttl=64 time=0.101 ms\n"
            "16 bytes from fe80::1%lo0, icmp_seq=2 hlim=64 time=1. ms (DUP!)\n"
            "16 bytes from host (10.0.0.1): icmp_seq=3. time=12ms\n"
            "8 bytes from 127.0.0.1: icmp_seq=4\n"
            "64 bytes from 10.0.0.1: icmp_seq=5 ttl=64 time=0.3 ms (BAD CHECKSUM!)\n"
            "64 bytes from 10.0.0.1: icmp_seq=6 ttl=64 time=0.3 ms trailing\n"
            "no answer yet for icmp_seq=7")
    lines, numbers, flags, others, texts = scan(text)
    assert np.frombuffer(lines, np.int64).tolist() == [2, 3, 4, 5, 6, 7]
    got = np.frombuffer(numbers, np.float64).reshape(-1, 5)
    np.testing.assert_array_equal(got, [
        [1594978465.914536, 64, 1, 64, 0.045],
        [np.nan, 64, 0, 64, 0.101],
        [np.nan, 16, 2, 64, 1.0],
        [np.nan, 16, 3, -1, 12.0],
        [np.nan, 8, 4, -1, np.nan],
        [np.nan, 64, 5, 64, 0.3]])
    assert np.frombuffer(flags, np.int8).tolist() == [0, 0, 1, 0, 0, 2]
    assert np.frombuffer(others, np.int64).tolist() == [1, 8, 9]
    assert texts == [text.split("\n")[0], text.split("\n")[7], "no answer yet for icmp_seq=7"]
    assert_scans_like_reference(text)


@pytest.mark.parametrize("text", ["", "\n", "\n\n", "x", "x\n", "\r\n", "\x00", "é\n\x00é"])
def test_edge_texts(text):
    assert_scans_like_reference(text)


NEAR_MISSES = [
    "[.5] 64 bytes from a: icmp_seq=1", "[5.] 64 bytes from a: icmp_seq=1",
    "[5] 64 bytes from a: icmp_seq=1", "[5.5]64 bytes from a: icmp_seq=1",
    "[5.5 64 bytes from a: icmp_seq=1", " 64 bytes from a: icmp_seq=1",
    "bytes from a: icmp_seq=1", "64 bytes from a icmp_seq=1", "64 bytes from a:icmp_seq=1",
    "64 bytes from a: icmp_seq=", "64 bytes from a: icmpseq=1", "64 bytes from a: icmp_seq=1..",
    "64 bytes from a: icmp_seq=1 ttl=", "64 bytes from a: icmp_seq=1 ttl=1 ",
    "64 bytes from a: icmp_seq=1 hlim=x", "64 bytes from a: icmp_seq=1 time=.5 ms",
    "64 bytes from a: icmp_seq=1 time=5  ms", "64 bytes from a: icmp_seq=1 time=5 m",
    "64 bytes from a: icmp_seq=1 time=5", "64 bytes from a: icmp_seq=1 time=5 ms (DUP!",
    "64 bytes from a: icmp_seq=1 (DUP!) (DUP!)", "64 bytes from a: icmp_seq=1 time=1 ms ttl=1",
    "64 bytes from a: icmp_seq=1\r", "64 bytes from a: icmp_seq=\u0661",
    "\u0666\u0664 bytes from a: icmp_seq=1", "64 bytes from a:, icmp_seq=1",
    "64 bytes from a,: icmp_seq=1", "64 bytes from a: b: icmp_seq=1 ttl=2",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_misses(line):
    assert_scans_like_reference(line + "\n" + line)


def test_numbers_past_the_exact_fast_path():
    """2**53 + 1, 20+ digits, 23+ decimals and overflow go through float()'s own reader."""
    for number in ("9007199254740992", "9007199254740993", "18446744073709551617",
                   "1" * 400, "0.1234567890123456789012345", "1" * 17 + "." + "9" * 30,
                   "00000000000000000000000001.5",
                   # m / 10**k of a mantissa beyond 2**53 would round twice and be off
                   "8145407785712.0239", "69977848286370.165", "64325869505121.36892"):
        whole = number.split(".")[0]
        text = (f"[{number if '.' in number else number + '.5'}] 64 bytes from a: "
                f"icmp_seq={whole} ttl=1 time={number} ms\n")
        assert_scans_like_reference(text)


def test_not_str_is_a_type_error():
    with pytest.raises(TypeError):
        scan(b"64 bytes from a: icmp_seq=1")


def test_lone_surrogate_falls_back_to_python():
    text = ("PING a (1.2.3.4) 56(84) bytes of data.\n"
            "64 bytes from \ud800: icmp_seq=1 ttl=64 time=0.1 ms\n")
    with pytest.raises(UnicodeEncodeError):
        scan(text)
    assert_same_outcome(text)


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


@SETTINGS
@given(st.lists(_LINE, max_size=12), st.booleans())
@example(["64 bytes from : icmp_seq=1"], True)  # an empty address
@example(["64 bytes from a: icmp_seq=1 ttl=1 time=1 ms: x"], False)  # a ':' in the tail
def test_generated_lines_scan_like_the_regex(lines, final_newline):
    assert_scans_like_reference("\n".join(lines) + ("\n" if final_newline else ""))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_reply_like(), min_size=2, max_size=4))
@example(["64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.045 ms",
          "64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 time=0.05 ms"])
def test_replies_merged_by_a_lost_newline_scan_like_the_regex(replies):
    """Two or more replies on one line (a lost newline) are no reply in both readers."""
    assert_scans_like_reference("".join(replies) + "\n")
    assert_same_outcome("PING a (a) 56(84) bytes of data.\n" + "".join(replies) + "\n")


@SETTINGS
@given(st.text(max_size=400))
def test_any_text_scans_like_the_regex(text):
    assert_scans_like_reference(text)


@SETTINGS
@given(st.binary(max_size=400))
def test_any_bytes_scan_like_the_regex(data):
    assert_scans_like_reference(decode(data))


# ---------------------------------------------------------------------------------------
# Whole logs: the same Dataset


def _outcome(text):
    try:
        return ping.parse(text)
    except ThruputError as exc:
        return (type(exc).__name__, str(exc), exc.line)


def _without_scanner(function, *args, general=False):
    """``function(*args)`` by the pure-Python readers (``general``: the line-by-line one)."""
    scanner, fast = ping._pingscan, ping._replies_fast
    ping._pingscan = None
    if general:
        ping._replies_fast = lambda text: None
    try:
        return function(*args)
    finally:
        ping._pingscan, ping._replies_fast = scanner, fast


def assert_same_outcome(text):
    """The C scanner gives what the fast and the general Python readers give."""
    with_c = _outcome(text)
    for general in (False, True):
        python = _without_scanner(_outcome, text, general=general)
        if isinstance(with_c, tuple) or isinstance(python, tuple):
            assert with_c == python
        else:
            assert with_c.identical(python)


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
            assert ds.identical(_without_scanner(thruput.read, path)), path
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
