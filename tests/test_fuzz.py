"""Property-based tests: every parser, fed random, truncated and mixed content, either
returns a valid contract Dataset or raises ThruputError (ParseError). Never anything else,
never a hang (hypothesis' deadline)."""

from __future__ import annotations

import gzip

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

from thruput import formats
from thruput.contract import validate
from thruput.errors import ThruputError
from thruput.reader import decode

from .conftest import DATA

SETTINGS = settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


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
