"""Property-based tests: every parser, fed random, truncated and mixed content, either
returns a valid contract Dataset or raises ThruputError (ParseError). Never anything else,
never a hang (hypothesis' deadline)."""

from __future__ import annotations

import gzip
import json
import os
import re
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numpy as np
import pytest

from thruput import formats
from thruput.contract import validate
from thruput.errors import ParseError, ThruputError
from thruput.reader import decode

from .conftest import DATA

#: The deadline only catches hangs: one example takes milliseconds, but a shared 2-core
#: machine (load 11 seen while eight sessions test) can stall one for seconds.
SETTINGS = settings(max_examples=60, deadline=20000, suppress_health_check=[HealthCheck.too_slow])
#: The damage tests parse whole recorded samples (a 4-run server log, a 30-interval -J).
DAMAGE = SETTINGS


def _sample_texts(name):
    texts = []
    for p in sorted((DATA / name).glob("*")):
        if p.name.endswith(".expected.json") or p.name in ("record.sh", "README.md") or not p.is_file():
            continue
        raw = p.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        texts.append(raw)
    return texts or [b""]


def _parse_or_fail_cleanly(module, data):
    payload = data if module.BINARY else decode(data)
    try:
        ds = module.parse(payload)
    except ThruputError:
        return
    except NotImplementedError:
        pytest.skip(f"{module.NAME} not implemented")
    validate(ds)
    infinite = [k for k, v in ds.variables.items() if v.dtype.kind == "f" and np.isinf(v.values).any()]
    assert not infinite, f"{module.NAME}: {infinite} read as inf, silently"


@pytest.mark.parametrize("name", formats.REGISTRY)
def test_random_bytes(name):
    module = formats.get(name)

    @SETTINGS
    @given(st.binary(max_size=2000))
    def check(data):
        _parse_or_fail_cleanly(module, data)
        module.sniff(decode(data))

    check()


@pytest.mark.parametrize("name", formats.REGISTRY)
def test_truncated_and_spliced_samples(name):
    module = formats.get(name)
    texts = _sample_texts(name)
    others = [t for other in formats.REGISTRY if other != name for t in _sample_texts(other)]

    @SETTINGS
    @given(st.sampled_from(texts), st.floats(0, 1), st.sampled_from(others or [b""]),
           st.floats(0, 1), st.booleans())
    def check(text, cut, other, at, splice):
        data = text[: int(len(text) * cut)]
        if splice:  # mixed content: a piece of another format's sample inside this one
            k = int(len(data) * at)
            data = data[:k] + other[: 400] + data[k:]
        _parse_or_fail_cleanly(module, data)

    check()


# --- issue 10: damage at line boundaries and in the digits -----------------------------------

#: The formats whose readers this file holds to "only ThruputError escapes" on line and
#: digit damage (ping has its own, ingest-a's, tests).
LINE_FORMATS = ("iperf2", "iperf2_csv", "iperf3_text", "iperf3_json", "flent", "udpmon_bw",
                "udpmon_req", "web100_dump", "web100_sidestream", "tcp_info")

#: Whole-run numbers a cut log may leave unknown (NaN) but never get different: iperf's
#: own totals, or the sum of the streams' lines where a [SUM] was lost (then equal to
#: the tool's total up to the rounding of its printed rates: 3 significant digits).
RUN_TOTALS = ("throughput", "throughput_sender", "throughput_receiver", "bytes", "duration",
              "packets", "packets_lost")
PRINT_RTOL = 0.01
#: Samples a cut at a line boundary cannot be told from a complete log in (a known limit,
#: docs/consistency.md): iperf 2.0 prints times with one decimal, so a cut after the first
#: interval block looks like a run without -i; and the .expected.json files.
AMBIGUOUS_WHEN_CUT = ("v2.0--", ".expected.json")
#: Whole-run numbers of the receiver's side where the log has it, else the sender's.
SIDE_CHOSEN = ("throughput", "bytes", "duration")

#: Replacements of a digit run: absurd sizes, overflows and an exponent, all of which a
#: reader must refuse or take, never crash on.
DIGITS = ("9" * 20, "1" + "0" * 400, "0", "-1", "1e999", "4294967295", "0.6x148")


def _text_samples(name):
    return [decode(t) for t in _sample_texts(name) if t]


def _mutate_lines(text, ops):
    """Apply line operations (drop, duplicate, swap, cut) to ``text``."""
    lines = text.splitlines(keepends=True)
    for op, where, other in ops:
        if not lines:
            break
        i, j = int(where * (len(lines) - 1)), int(other * (len(lines) - 1))
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "cut":
            lines[i] = lines[i][: int(other * len(lines[i]))]
            del lines[i + 1:]
    return "".join(lines)


@pytest.mark.parametrize("name", LINE_FORMATS)
def test_line_boundary_damage(name):
    module = formats.get(name)
    texts = _text_samples(name)
    ops = st.lists(st.tuples(st.sampled_from(("drop", "dup", "swap", "cut")), st.floats(0, 1),
                             st.floats(0, 1)), min_size=1, max_size=4)

    @DAMAGE
    @given(st.sampled_from(texts), ops)
    def check(text, operations):
        _parse_or_fail_cleanly(module, _mutate_lines(text, operations).encode())

    check()


@pytest.mark.parametrize("name", LINE_FORMATS)
def test_digit_damage(name):
    module = formats.get(name)
    texts = _text_samples(name)

    @DAMAGE
    @given(st.sampled_from(texts), st.floats(0, 1), st.sampled_from(DIGITS))
    def check(text, where, digits):
        runs = list(re.finditer(r"\d+", text))
        if not runs:
            return
        m = runs[int(where * (len(runs) - 1))]
        _parse_or_fail_cleanly(module, (text[: m.start()] + digits + text[m.end():]).encode())

    check()


def _agree(kept, full, name):
    """Every number ``kept`` holds is NaN or the complete parse's (see RUN_TOTALS)."""
    kept, full = np.asarray(kept, dtype=float), np.asarray(full, dtype=float)
    if kept.size == 0:
        return
    index = tuple(slice(0, n) for n in kept.shape)
    assert all(a <= b for a, b in zip(kept.shape, full.shape)), name
    ref = full[index]
    known = ~np.isnan(kept)
    np.testing.assert_allclose(kept[known], ref[known], rtol=PRINT_RTOL, err_msg=name)


@pytest.mark.parametrize("name", ("iperf2", "iperf3_text", "iperf3_json", "flent"))
def test_a_cut_parse_agrees_with_the_complete_one(name):
    """Cut a recorded sample after any line: what the reader keeps is what the complete
    log says (or NaN), never an interval standing in for a final report."""
    module = formats.get(name)
    texts = []
    for path in sorted((DATA / name).glob("*")):
        if path.name.endswith(AMBIGUOUS_WHEN_CUT) or path.name.startswith(AMBIGUOUS_WHEN_CUT):
            continue
        raw = path.read_bytes()
        raw = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        try:
            text = decode(raw)
            texts.append((text, module.parse(text)))
        except (ThruputError, UnicodeDecodeError):
            continue   # the not-this-format and empty samples, record.sh, README.md

    @DAMAGE
    @given(st.sampled_from(texts), st.floats(0, 1))
    def check(sample, where):
        text, full = sample
        lines = text.splitlines(keepends=True)
        try:
            cut = module.parse("".join(lines[: int(where * len(lines))]))
        except ThruputError:
            return
        if full.sizes["run"] == 1 and "iperf2_stream_id" in full:
            ids_kept = [i for i in cut.iperf2_stream_id.values[0] if not np.isnan(i)]
            ids_full = list(full.iperf2_stream_id.values[0][: len(ids_kept)])
            if ids_kept != ids_full:  # a stream not yet connected sorts in between
                return
        for var in RUN_TOTALS:
            if var in cut:
                kept = cut[var].values.astype(float)
                if var in SIDE_CHOSEN:   # the receiver's lines lost: documented fallback to the sender's
                    n = len(kept)
                    switched = np.isnan(cut.throughput_receiver.values) & ~np.isnan(
                        full.throughput_receiver.values[:n])
                    assert not switched.any() or cut.attrs["truncated"] == 1
                    kept = np.where(switched, np.nan, kept)
                _agree(kept, full[var].values, var)
        _agree(cut.interval_bytes.values, full.interval_bytes.values, "interval_bytes")

    check()


#: Issue 10's crash reproducers, on recorded samples: (format, sample, line, old, new).
CRASHES = (
    ("iperf2", "v2.1.8--tcp-client.txt", 9, "5.52 GBytes", "99999999999999999999 GBytes"),
    ("iperf2_csv", "v2.1.8--tcp-client.csv", 3, "5493882940", "99999999999999999999"),
    ("iperf2_csv", "v2.1.8--tcp-client.csv", 1, "0.0-1.0", "0.0-99999999999999999999"),
    ("iperf3_text", "3.12--tcp.txt", 11, "5.62 GBytes", "99999999999999999999 GBytes"),
    ("udpmon_req", "histogram--r64-l5000-H.txt", None, "coeff_skew 0.6148", "coeff_skew 0.6x148"),
)


@pytest.mark.parametrize("fmt, name, line, old, new", CRASHES)
def test_issue_10_crash_reproducers(fmt, name, line, old, new):
    from .damage import replace, sample
    text = sample(fmt, name)
    if line is None:
        line = next(k for k, x in enumerate(text.splitlines(), 1) if old in x)
    _parse_or_fail_cleanly(formats.get(fmt), replace(text, line, old, new).encode())


@pytest.mark.parametrize("name, sample, number", [
    ("ping", "busybox--loopback.out", "time="),
    ("irtt", "0.9.0--loopback.json", '"seqno": '),
    ("irtt", "0.9.0--loopback.json", '"json_format": '),
    ("iperf3_json", "3.12--get-server-output-json.json", '"bytes":\t830996480'),
    ("web100_dump", "loopback--3-snapshots.txt", "Duration: "),
    ("esmond_throughput", "constructed--throughput-base.json", '"val": '),
    ("esmond_throughput", "constructed--throughput-base.json", '"ts": '),
    ("esmond_latency", "constructed--histogram-owdelay-base.json", '"10.40": '),
    ("esmond_latency", "constructed--powstream-base-wrapped.json", '"numerator": '),
])
def test_a_number_of_hundreds_of_digits_is_an_error_not_inf_nor_a_crash(name, sample, number):
    """A damaged number the reader uses, too large for a float64 (401 digits), is a
    ParseError (naming a line where the reader knows it), never ``inf`` in the Dataset nor
    an OverflowError."""
    text = (DATA / name / sample).read_text()
    at = text.find(number)
    assert at >= 0, f"{sample} has no {number!r}"
    start = at + re.match(r"[^0-9]*", number).end()         # (the number's first digit)
    end = re.match(r"[0-9.]*", text[start:]).end() + start
    with pytest.raises(ParseError, match="infinite|not an integer|not valid|too large"):
        formats.get(name).parse(text[:start] + "1" + "0" * 400 + text[end:])


# --- issue 40: a seeded fuzzer over every format ---------------------------------------

#: Damaged copies per format (``tests/hostile.py``: one to four damages at and inside line
#: boundaries, then CRLF, UTF-16, BOM or gzip, whole or cut). ``make fuzz`` raises it.
FUZZ_COUNT = int(os.environ.get("THRUPUT_FUZZ_COUNT", "60"))
FUZZ_SEED = int(os.environ.get("THRUPUT_FUZZ_SEED", "0"))
#: Seconds one input may take: small samples read in milliseconds; only a hang misses it.
FUZZ_BOUND_S = 30


@pytest.mark.parametrize("name", formats.REGISTRY)
def test_seeded_fuzz_only_thruput_errors(name):
    """Every damaged copy is read (``thruput.read_bytes``, every fourth one sniffed) into a
    valid Dataset or refused with a ThruputError; nothing else escapes, each finishes."""
    from .hostile import fuzz_inputs, read_fuzzed

    outcomes, slow = {}, []
    for k, data in fuzz_inputs(name, FUZZ_COUNT, FUZZ_SEED):
        start = time.perf_counter()
        outcome = read_fuzzed(name, data, sniffed=k % 4 == 3)
        if time.perf_counter() - start > FUZZ_BOUND_S:
            slow.append(k)
        outcomes.setdefault(outcome, []).append(k)
    crashes = {o: ks for o, ks in outcomes.items() if o.startswith("crash")}
    _record(name, outcomes, slow)
    assert not crashes, f"{name} (seed {FUZZ_SEED}): {crashes}"
    assert not slow, f"{name} (seed {FUZZ_SEED}): inputs {slow} took over {FUZZ_BOUND_S} s"
    assert sum(map(len, outcomes.values())) == FUZZ_COUNT
    assert outcomes.get("refused"), f"{name}: no damaged copy was refused"


def _record(name, outcomes, slow):
    """The counts of one format's run, for ``make fuzz``'s table
    (``tests/output/fuzz/<seed>-<count>/<format>.json``; ``python -m tests.fuzz_summary``)."""
    out = Path(__file__).parent / "output" / "fuzz" / f"{FUZZ_SEED}-{FUZZ_COUNT}"
    out.mkdir(parents=True, exist_ok=True)
    counts = {k: len(outcomes.get(k, ())) for k in ("ok", "flagged", "refused")}
    counts["crashes"] = sum(len(v) for o, v in outcomes.items() if o.startswith("crash"))
    counts["hangs"] = len(slow)
    (out / f"{name}.json").write_text(json.dumps({"format": name, "seed": FUZZ_SEED, "inputs": FUZZ_COUNT, **counts}) + "\n")
