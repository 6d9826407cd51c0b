"""The C reading of runs.csv rows and start times (``thruput.campaign._rowscan``) against
its reference, the Python code of :mod:`thruput.campaign.monitor`.

Whole bodies: :func:`mon._split_rows` gives the same rows (same values, same types) or
the same None with and without the C code, on the bundled campaigns, on rows with odd
cells and on arbitrary text; the C code takes the rows thruput writes (it is not always
passing them back to Python). Start times: the same datetime64[ns] as NumPy's parse, or
None where NumPy is left to answer.
"""

from __future__ import annotations

import shutil
import sysconfig
from datetime import datetime

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thruput.campaign import monitor as mon

from .conftest import DATA

BUNDLED = [DATA / "campaigns" / "monitor-loopback", DATA.parents[1] / "data" / "raw" / "netns-wan-monitor"]


def test_rowscan_is_built_where_a_compiler_is():
    """``pip install -e .`` compiles the extension when a C compiler is present; if this
    fails, the build was skipped (it is optional): re-run the install and read its log."""
    if not shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]):
        pytest.skip("no C compiler: the Python reading is used")
    assert mon._rowscan is not None, "thruput.campaign._rowscan was not built"


rowscan = pytest.importorskip("thruput.campaign._rowscan")


def _both(body):
    """:func:`mon._split_rows` of ``body`` with the C code, and in Python."""
    with_c = mon._split_rows(body, 2)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(mon, "_rowscan", None)
        in_python = mon._split_rows(body, 2)
    return with_c, in_python


def _same(a, b):
    """Rows equal value for value (NaN equal to NaN) and type for type."""
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(
        type(r) is type(s) and all(type(x) is type(y) and (x == y or x != x and y != y)
                                   for x, y in zip(r, s)) for r, s in zip(a, b))


def _body(campaign):
    return (campaign / "runs.csv").read_text().split("\n", 1)[1]


@pytest.mark.parametrize("campaign", BUNDLED, ids=lambda c: c.name)
def test_bundled_rows_are_cut_in_c_as_in_python(campaign):
    body = _body(campaign)
    assert rowscan.cut(body, mon.MonitorRow, 2, mon._quoted_cells, np.nan) is not None
    with_c, in_python = _both(body)
    assert with_c is not None and _same(with_c, in_python)


#: One cell of a bundled row changed (index -> text): what the C code takes, what it
#: leaves to Python, and what neither takes.
CELLS = {
    "reason with spaces": {14: "iperf3: unable to connect: Connection refused"},
    "quoted reason": {14: '"refused, twice"'}, "doubled quotes": {14: '"a ""quoted"" word"'},
    "quote left open": {14: '"open'}, "stray quote": {14: 'a"b'}, "blanks around": {0: " \tx1\x0c ", 12: "\x1f 5e6 "},
    "spaces then a quoted cell": {0: ' x1 ', 14: ' "a, b" '},
    "exponent": {12: "5e6"}, "negative": {10: "-1"}, "fraction": {11: "0.1"}, "nan": {12: "nan"},
    "inf": {12: "-Infinity"}, "huge": {12: "1e999"}, "underscore": {12: "1_000"},
    "hex": {12: "0x10"}, "sixteen digits": {12: "9007199254740993"}, "fifteen digits": {12: "999999999999999"},
    "long number": {12: "1." + "0" * 70}, "not a number": {12: "fast"}, "empty number": {10: ""},
    "leading zeros": {4: "0007", 10: "000262144"}, "slot of 18 digits": {4: "9" * 18},
    "slot of 19 digits": {4: "9" * 19}, "superscript slot": {4: "²"}, "negative slot": {4: "-1"},
    "empty slot": {4: ""}, "non-ASCII": {14: "naïve"}, "em space": {14: "\u2003x"},
    "bad test": {8: "sctp"}, "bad outcome": {13: "fine"}, "empty run": {0: ""},
    "ok without a file": {2: ""}, "started without Z": {5: "2026-11-22T18:03:00.5"},
    "started with an offset": {5: "2026-11-22T18:03:00+02:00"}, "no such day": {5: "2026-02-29T00:00:00Z"},
    "leap day": {5: "2024-02-29T00:00:00Z"}, "started empty": {5: ""}, "started in 1600": {5: "1600-01-01T00:00:00Z"},
    "ten fraction digits": {5: "2026-01-01T00:00:00.1234567891Z"},
}


@pytest.mark.parametrize("case", CELLS)
def test_odd_cells_are_read_in_c_as_in_python(case):
    lines = _body(BUNDLED[0]).split("\n")
    cells = lines[2].split(",")
    for k, v in CELLS[case].items():
        cells[k] = v
    lines[2] = ",".join(cells)
    body = "\n".join(lines)
    with_c, in_python = _both(body)
    assert _same(with_c, in_python)


@pytest.mark.parametrize("change", ["", "\n", "no final line end", "an empty line", "14 cells",
                                    "16 cells", "NUL", "carriage return", "duplicate run"])
def test_odd_lines_are_read_in_c_as_in_python(change):
    body = _body(BUNDLED[0])
    lines = body.split("\n")
    body = {"": "", "\n": "\n", "no final line end": body.rstrip("\n"),
            "an empty line": "\n".join(lines[:3] + [""] + lines[3:]),
            "14 cells": "\n".join(lines[:3] + [lines[3].rsplit(",", 1)[0]] + lines[4:]),
            "16 cells": "\n".join(lines[:3] + [lines[3] + ","] + lines[4:]),
            "NUL": body.replace(",ok,", ",o\0k,", 1), "carriage return": body.replace("\n", "\r\n"),
            "duplicate run": "\n".join(lines[:3] + [lines[2]] + lines[3:])}[change]
    with_c, in_python = _both(body)
    assert _same(with_c, in_python)


@pytest.mark.parametrize("chars", [1, 200])
@pytest.mark.parametrize("change", ["", "no final line end", "an empty line", "a quote left open",
                                    "a quoted cell over two lines", "duplicate run"])
def test_rows_cut_a_piece_at_a_time_are_those_cut_whole(monkeypatch, chars, change):
    """runs.csv is cut in C some ``mon._CUT_CHARS`` at a time (a whole line each): the
    same rows as cut whole, line numbers and all, and None where that is None."""
    body = _body(BUNDLED[0])
    lines = body.split("\n")
    body = {"": body, "no final line end": body.rstrip("\n"),
            "an empty line": "\n".join(lines[:9] + [""] + lines[9:]),
            "a quote left open": body.replace(",ok,", ',"ok,', 1),
            "a quoted cell over two lines": "\n".join(lines[:8] + [lines[8] + ',"a', 'b"'] + lines[9:]),
            "duplicate run": "\n".join(lines[:9] + [lines[2]] + lines[9:])}[change]
    whole = mon._split_rows(body, 2)
    monkeypatch.setattr(mon, "_CUT_CHARS", chars)
    assert _same(mon._split_rows(body, 2), whole)
    assert (whole is not None) == (change in ("", "no final line end"))


def test_rows_cut_from_an_offset_are_those_of_the_body_after_it(monkeypatch):
    """``_split_rows(text, line, at)`` reads ``text[at:]`` without copying it: the same
    rows, piece by piece or whole, as the body cut out first."""
    text = (BUNDLED[0] / "runs.csv").read_text()
    at = text.index("\n") + 1
    whole = mon._split_rows(text[at:], 2)
    assert whole is not None and _same(mon._split_rows(text, 2, at), whole)
    monkeypatch.setattr(mon, "_CUT_CHARS", 200)
    assert _same(mon._split_rows(text, 2, at), whole)


def test_rows_cut_in_c_are_not_tracked_by_the_garbage_collector():
    """A row holds only str, int and float: the cyclic collector is told not to walk the
    rows (2 x 10^5 of them cost 0.06 s at the first collection after a normalize)."""
    import gc

    rows = rowscan.cut(_body(BUNDLED[0]), mon.MonitorRow, 2, mon._quoted_cells, np.nan)
    assert rows and not any(map(gc.is_tracked, rows))
    assert all(type(v) in (str, int, float) for r in rows for v in r)


SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


#: Cells put in place of others by the arbitrary bodies below: values rows hold, and odd ones.
POOL = ["", " ", "x", "0", "12", " 7 ", "1e3", "nan", "-0", '"', '"a,b"', '"ok"', "ok", "error", "ping",
        "tcp", "iperf", "iperf3", "forward", "\t", "é", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5",
        "a,b", "9" * 19]


@SETTINGS
@given(changes=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 14), st.sampled_from(POOL)), max_size=4),
       count=st.integers(0, 6), final_newline=st.booleans())
def test_arbitrary_bodies_are_read_in_c_as_in_python(changes, count, final_newline):
    """Bundled rows with arbitrary cells put in: many still valid, many not."""
    rows = [line.split(",") for line in _body(BUNDLED[0]).split("\n")[:count]]
    for row, k, cell in changes:
        if row < len(rows):
            rows[row][k] = cell
    body = "\n".join(",".join(cells) for cells in rows) + ("\n" if final_newline and rows else "")
    with_c, in_python = _both(body)
    assert _same(with_c, in_python)


def _numpy_ns(texts):
    return np.array([t[:-1] if t.endswith("Z") else t for t in texts], dtype="datetime64[ns]")


@SETTINGS
@given(when=st.datetimes(min_value=datetime(1678, 1, 1), max_value=datetime(2261, 12, 31, 23, 59, 59)),
       ns=st.integers(0, 999_999_999), places=st.integers(0, 9), zulu=st.booleans())
def test_start_times_in_c_are_numpys(when, ns, places, zulu):
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    if places:
        text += "." + f"{ns:09d}"[:places]
    text += "Z" if zulu else ""
    got = rowscan.iso_ns([text])
    assert got is not None
    assert np.array_equal(np.frombuffer(got, dtype="datetime64[ns]"), _numpy_ns([text]))


@pytest.mark.parametrize("text", ["1677-12-31T23:59:59Z", "2262-01-01T00:00:00Z", "2026-13-01T00:00:00Z",
                                  "2026-02-29T00:00:00Z", "2026-04-31T00:00:00", "2026-01-01T24:00:00",
                                  "2026-01-01T00:60:00", "2026-01-01T00:00:60", "2026-01-01T00:00:00.",
                                  "2026-01-01T00:00:00.1234567890", "2026-01-01 00:00:00", "2026-1-01T00:00:00",
                                  "2026-01-01T00:00:00+02:00", "NaT", "", "Z", "2026-01-01", "2026-01-01T00:00:00ZZ",
                                  "２026-01-01T00:00:00"])
def test_start_times_c_does_not_read_are_left_to_python(text, monkeypatch):
    assert rowscan.iso_ns(["2026-01-01T00:00:00Z", text]) is None

    def parse():
        try:
            return mon.start_times([text])
        except ValueError as exc:
            return type(exc)

    with_c = parse()
    monkeypatch.setattr(mon, "_rowscan", None)
    in_python = parse()
    assert (with_c is in_python if isinstance(with_c, type)
            else np.array_equal(with_c, in_python, equal_nan=True) and with_c.dtype == in_python.dtype)


def test_start_times_of_none_and_of_many():
    assert mon.start_times([]).dtype == np.dtype("datetime64[ns]") and mon.start_times([]).size == 0
    texts = [f"2026-01-{d:02d}T{h:02d}:30:00.{h}Z" for d in range(1, 32) for h in range(24)]
    assert np.array_equal(mon.start_times(texts), _numpy_ns(texts))
    assert mon.start_times(texts).flags.writeable
