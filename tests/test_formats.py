"""Every sample under tests/data/<format>/ against its expected values (golden files).

A sample is any file in ``tests/data/<format>/`` except ``*.expected.json``, ``record.sh``
and ``README.md``. Beside it, ``<sample>.expected.json`` holds what ``thruput inspect``
must report for it: ``format`` (``null`` when no format may claim it), ``kind``,
``summary``, ``lines`` and ``errors``; optionally ``read_as`` (force a format) and
``values`` ({variable: list}) for exact values of chosen variables. New samples need no
new test code.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import thruput
from thruput.cli.inspect import inspect_file

from .conftest import DATA

#: Files under tests/data/<folder>/ that are no log: the scripts that recorded the samples
#: (record.sh; record-<campaign>.sh under campaigns/) and READMEs.
NOT_SAMPLES = {"record.sh", "README.md"}


def samples():
    return sorted(
        p for p in DATA.glob("*/*")
        if p.is_file() and p.name not in NOT_SAMPLES and not p.name.endswith(".expected.json")
        and not (p.name.startswith("record-") and p.suffix == ".sh")
    )


def _ids(paths):
    return [str(p.relative_to(DATA)) for p in paths]


def assert_close(actual, expected, where=""):
    """Equal, with floats compared to 1e-9 relative (JSON round trip) and NaN == None."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), where
        assert sorted(actual) == sorted(expected), f"{where}: keys {sorted(actual)} != {sorted(expected)}"
        for key in expected:
            assert_close(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert len(actual) == len(expected), f"{where}: length {len(actual)} != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, f"{where}[{i}]")
    elif isinstance(expected, float) or isinstance(actual, float):
        if expected is None:
            assert actual is None or math.isnan(actual), f"{where}: {actual} != None"
        else:
            assert actual is not None and math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-12), \
                f"{where}: {actual} != {expected}"
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


@pytest.mark.parametrize("sample", samples(), ids=_ids(samples()))
def test_sample_matches_expected(sample):
    expected_path = sample.with_name(sample.name + ".expected.json")
    assert expected_path.exists(), f"{sample} has no {expected_path.name}"
    expected = json.loads(expected_path.read_text())
    report = inspect_file(sample, expected.get("read_as"))
    for key in ("format", "kind", "summary", "lines"):
        assert_close(report[key], expected[key], key)
    assert [e["line"] for e in report["errors"]] == [e["line"] for e in expected.get("errors", [])]
    for got, want in zip(report["errors"], expected.get("errors", [])):
        assert want["message"] in got["message"]
    if report["errors"]:
        assert str(sample) in report["message"], "errors must name the file"
    if expected.get("values"):
        ds = thruput.read(sample, format=expected.get("read_as"))
        for name, values in expected["values"].items():
            got = np.asarray(ds[name].values).tolist()
            assert_close(_nan_to_none(got), values, name)


def _nan_to_none(value):
    if isinstance(value, list):
        return [_nan_to_none(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


@pytest.mark.parametrize("sample", samples(), ids=_ids(samples()))
def test_each_sample_is_claimed_by_at_most_one_format(sample):
    """The cross-format test: sniffing never finds two formats for one sample."""
    from thruput import formats
    from thruput.reader import decode
    import gzip

    raw = sample.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    head = decode(raw[: formats.HEAD_BYTES])
    claims = [n for n in formats.REGISTRY if formats._claims(formats.get(n), head)]
    expected = json.loads(sample.with_name(sample.name + ".expected.json").read_text())
    if expected.get("read_as") is None and expected["format"] is not None:
        assert claims == [expected["format"]]
    else:
        assert len(claims) <= 1, claims


def test_every_format_has_samples():
    names = {p.parent.name for p in samples()}
    from thruput.formats import REGISTRY
    missing = [n for n in REGISTRY if n not in names]
    assert not missing, f"formats without samples in tests/data: {missing}"


def write_expected(sample, read_as=None, values=()):
    """Write ``<sample>.expected.json`` from the current parser (review it before committing).

    Use from a record script: ``python -c 'from tests.test_formats import write_expected; ...'``.
    """
    sample = Path(sample)
    report = inspect_file(sample, read_as)
    out = {k: report[k] for k in ("format", "kind", "summary", "lines", "errors")}
    if read_as:
        out["read_as"] = read_as
    if values and not report["errors"]:
        ds = thruput.read(sample, format=read_as)
        out["values"] = {name: _nan_to_none(np.asarray(ds[name].values).tolist()) for name in values}
    sample.with_name(sample.name + ".expected.json").write_text(json.dumps(out, indent=1) + "\n")
    return out
