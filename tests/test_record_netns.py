"""``thruput record`` across network namespaces the tests create: a veth pair shaped with
``tc tbf`` (tools/netns.py) and a 40 ms path through the TUN delay line
(tools/delayline.py). Needs root and iproute2; skipped otherwise."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from thruput.record import Plan, Target, record
from thruput.record.manifest import complete_runs, read_rows

from .conftest import load_tool

pytestmark = [
    pytest.mark.netns,
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc")
                       or not shutil.which("iperf3"),
                       reason="needs root, iproute2 and iperf3"),
]


netns = load_tool("netns")
delayline = load_tool("delayline")

#: Unique per test process, so that parallel test runs (pytest -n 2) do not collide.
TAG = f"{os.getpid() % 100000}"


def _server_in(ns):
    proc = subprocess.Popen(["ip", "netns", "exec", ns, "iperf3", "-s", "-J"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # wait until it listens: ss in that namespace shows the socket
    for _ in range(100):
        out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Hltn", "sport", "= :5201"],
                             capture_output=True, text=True).stdout
        if out.strip():
            break
        subprocess.run(["sleep", "0.05"])
    return proc


@pytest.fixture
def shaped_pair():
    """Namespaces over a veth pair, tbf 100 Mbit/s on both ends, iperf3 -s -J in b."""
    with netns.pair(f"tr{TAG}", rate="100mbit", subnet="10.77.3") as pair:
        server = _server_in(pair.ns_b)
        yield pair
        server.terminate()
        server.wait(10)


def _rtts(path):
    return [float(m) for m in re.findall(r"time=([0-9.]+) ms", path.read_text())]


def test_netns_pair_is_created_and_destroyed():
    name = f"tp{TAG}"
    with netns.pair(name, rate="1gbit", subnet="10.77.4") as pair:
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert f"{name}-a" in listed and f"{name}-b" in listed
        qdisc = pair.run_a(["tc", "qdisc", "show", "dev", pair.dev_a], capture_output=True,
                           text=True).stdout
        assert qdisc.startswith("qdisc tbf") and "rate 1Gbit" in qdisc
        ping = pair.run_a(["ping", "-n", "-c", "1", pair.addr_b], capture_output=True, text=True)
        assert ping.returncode == 0 and "1 received" in ping.stdout
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"{name}-a" not in listed and f"{name}-b" not in listed


def test_record_between_namespaces_over_shaped_veth(tmp_path, shaped_pair):
    campaign = tmp_path / "veth"
    plan = Plan([65536], [1, 4], repeats=1, duration_s=1, pause_s=1)
    summary = record(campaign, plan, Target(shaped_pair.addr_b, netns=shaped_pair.ns_a),
                     source_name="ns-a", destination_name="ns-b", progress=False,
                     about={"capacity_bps": 1e8, "between": "veth, tbf 100mbit"})
    assert summary.recorded == ["w65536-s1-r0", "w65536-s4-r0"] and not summary.failed
    assert complete_runs(read_rows(campaign)) == {"w65536-s1-r0", "w65536-s4-r0"}
    for run in summary.recorded:
        result = json.loads((campaign / f"runs/{run}.iperf3.json").read_text())
        assert result["start"]["connecting_to"]["host"] == shaped_pair.addr_b
        # tbf at 100 Mbit/s is a hard ceiling on what the receiver can count
        assert 0 < result["end"]["sum_received"]["bits_per_second"] <= 1.0e8
    data = yaml.safe_load((campaign / "campaign.yaml").read_text())
    here = data["hosts"]["ns-a"]
    assert here["nic"].startswith(f"{shaped_pair.dev_a} (veth); qdisc tbf rate 100Mbit")
    assert here["link_speed_bps"] is None  # veth speed is nominal, not reported
    assert here["description"].startswith(f"network namespace {shaped_pair.ns_a} on host")
    assert data["path"] == {"source": "ns-a", "destination": "ns-b", "between": "veth, tbf 100mbit",
                            "capacity_bps": 1e8, "rtt_ms": None}


def test_delay_line_gives_the_path_its_round_trip_time(tmp_path):
    name = f"td{TAG}"
    with delayline.path(name, delay="20ms", rate="20mbit", queue="128k", subnet="10.78.3") as p:
        assert p["rtt_s"] == 0.04 and p["rate_bps"] == 2e7 and p["queue_bytes"] == 131072
        ping = subprocess.run(["ip", "netns", "exec", p["ns_a"], "ping", "-n", "-c", "3", "-i",
                               "0.2", p["addr_b"]], capture_output=True, text=True)
        assert ping.returncode == 0
        rtts = [float(x) for x in re.findall(r"time=([0-9.]+) ms", ping.stdout)]
        assert len(rtts) == 3 and min(rtts) >= 40.0  # 20 ms each way, never less
        server = _server_in(p["ns_b"])
        try:
            campaign = tmp_path / "long"
            plan = Plan([16384], [1], repeats=1, duration_s=2, pause_s=1)
            summary = record(campaign, plan, Target(p["addr_b"], netns=p["ns_a"]),
                             progress=False)
        finally:
            server.terminate()
            server.wait(10)
        assert summary.recorded == ["w16384-s1-r0"]
        result = json.loads((campaign / "runs/w16384-s1-r0.iperf3.json").read_text())
        # window-limited: at most two 16 KiB buffers per 40 ms round trip, far below 20 Mbit/s
        assert 0 < result["end"]["sum_received"]["bits_per_second"] <= 2 * 16384 * 8 / 0.040
        assert min(_rtts(campaign / "runs/w16384-s1-r0.unloaded.ping")) >= 40.0
        data = yaml.safe_load((campaign / "campaign.yaml").read_text())
        assert data["hosts"][data["path"]["source"]]["nic"] == f"{p['dev_a']} (tun)"
    assert p["counts"]["a_to_b"]["forwarded"] > 0 and p["counts"]["b_to_a"]["forwarded"] > 0
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"{name}-a" not in listed
