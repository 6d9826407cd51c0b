"""The pure parts of the test tooling under tools/: the delay line's link model and its
tc-style quantities (no root needed; the namespaces themselves: test_record_netns.py)."""

from __future__ import annotations

import os

import pytest

from .conftest import load_tool


delayline = load_tool("delayline")


def test_delayline_parses_tc_style_quantities():
    assert delayline.parse_rate("50mbit") == 5e7
    assert delayline.parse_rate("1gbit") == 1e9
    assert delayline.parse_size("256k") == 262144
    assert delayline.parse_size("1500") == 1500
    assert delayline.parse_time("20ms") == 0.02
    with pytest.raises(ValueError, match="bad rate"):
        delayline.parse_rate("50 furlongs")


@pytest.fixture
def pipe():
    r, w = os.pipe()
    yield r, w
    os.close(r)
    os.close(w)


def test_link_serialises_delays_and_drops_at_the_queue(pipe):
    r, w = pipe
    # 8000 bit/s = 1000 byte/s; 0.1 s one way; room for 1500 bytes waiting
    link = delayline.Link(w, delay_s=0.1, rate_bps=8000, queue_bytes=1500)
    link.admit(b"a" * 1000, now=0.0)   # on the wire 0..1 s, arrives at 1.1 s
    link.admit(b"b" * 1000, now=0.0)   # 1000 waiting + 1000 > 1500: dropped
    link.admit(b"c" * 1000, now=0.6)   # 400 waiting + 1000 fits: wire 1..2 s, arrives 2.1 s
    assert (link.dropped, [due for due, _ in link.in_flight]) == (1, [1.1, 2.1])
    assert link.deliver(1.05) == pytest.approx(0.05)
    assert link.forwarded == 0
    assert link.deliver(1.1) == pytest.approx(1.0)
    assert os.read(r, 4096) == b"a" * 1000
    assert link.deliver(2.2) is None
    assert os.read(r, 4096) == b"c" * 1000
    assert (link.forwarded, link.dropped) == (2, 1)
