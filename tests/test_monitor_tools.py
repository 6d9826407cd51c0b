"""The tooling behind the bundled monitor campaign: the delay line changed while it runs
(``delayline.py set``) and the cyclic cross traffic (``crosstraffic.py``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from .conftest import ROOT, load_tool

delayline = load_tool("delayline")
crosstraffic = load_tool("crosstraffic")

NEEDS_ROOT = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip")
                                or not os.path.exists("/dev/net/tun"),
                                reason="needs root, iproute2 and /dev/net/tun")


def test_link_reconfigured_keeps_packets_in_order():
    r, w = os.pipe()
    try:
        # 8000 bit/s = 1000 byte/s, 1 s one way
        link = delayline.Link(w, delay_s=1.0, rate_bps=8000, queue_bytes=10_000)
        link.admit(b"a" * 100, now=0.0)          # wire 0..0.1 s, due 1.1 s
        link.reconfigure(delay_s=0.2, rate_bps=16000)
        link.admit(b"b" * 100, now=0.0)          # wire 0.1..0.15 s (2000 byte/s), due 0.35 s:
        link.admit(b"c" * 2000, now=2.0)         # ... held behind "a" (no reordering)
        assert [due for due, _ in link.in_flight] == pytest.approx([1.1, 1.1, 3.2])
        link.deliver(1.1)
        assert os.read(r, 4096) == b"a" * 100 + b"b" * 100
    finally:
        os.close(r)
        os.close(w)


def test_cross_traffic_follows_a_raised_cosine():
    low, high, period, t0 = 2e6, 16e6, 600.0, 1000.0
    rate = [crosstraffic.rate_at(t0 + f * period, t0, low, high, period)
            for f in (0, 0.25, 0.5, 0.75, 1)]
    assert rate == pytest.approx([2e6, 9e6, 16e6, 9e6, 2e6])
    # the byte budget is the integral of the rate: a whole period at the mean rate
    assert crosstraffic.budget(t0 + period, t0, low, high, period) == pytest.approx(
        (low + high) / 2 * period / 8)
    assert crosstraffic.budget(t0 + period / 2, t0, low, high, period) == pytest.approx(
        (low + high) / 2 * period / 2 / 8)
    assert crosstraffic.parse_rate("16mbit") == 16e6
    assert crosstraffic.parse_rate("2500") == 2500.0


@NEEDS_ROOT
@pytest.mark.netns
def test_delayline_set_changes_the_round_trip_of_a_running_path():
    name = f"tmd{os.getpid() % 100000}"
    with delayline.path(name, delay="10ms", rate="20mbit", subnet="10.78.41") as p:
        def rtt():
            out = subprocess.run(["ip", "netns", "exec", p["ns_a"], "ping", "-n", "-c", "3",
                                  "-i", "0.2", p["addr_b"]], capture_output=True, text=True)
            return [float(x) for x in re.findall(r"time=([0-9.]+) ms", out.stdout)]
        before = rtt()
        subprocess.run([sys.executable, str(ROOT / "tools" / "delayline.py"), "set", name,
                        "--delay", "30ms"], check=True, capture_output=True)
        time.sleep(0.6)  # applied within the forwarder's 0.5 s poll
        after = rtt()
    assert len(before) == 3 and len(after) == 3
    # never below the delay set; the median below the next 10 ms (the forwarder runs in
    # Python: on a loaded machine one packet in three may wait for the CPU)
    assert 20 <= min(before) and sorted(before)[1] < 30      # 2 x 10 ms
    assert 60 <= min(after) and sorted(after)[1] < 70        # 2 x 30 ms
