"""``thruput monitor`` across network namespaces the tests create (tools/netns.py): a real
``tc`` rate change mid-run, a far end killed and restarted, the monitor itself killed with
SIGKILL and restarted, and every way a test fails (busy, refused, unreachable, timeout).
Needs root, iproute2 and iperf3; skipped otherwise. Each test runs for 10-25 s."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml

from thruput.campaign.check import check_campaign
from thruput.monitor.manifest import read_rows
from thruput.monitor.new import new_campaign
from thruput.monitor.runner import run_test
from thruput.monitor.schedule import Path as MonitorPath
from thruput.monitor.schedule import TestSpec, parse_time

from .conftest import load_tool

pytestmark = [
    pytest.mark.netns,
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc")
                       or not shutil.which("iperf3"),
                       reason="needs root, iproute2 and iperf3"),
]

netns = load_tool("netns")
#: Unique per test process, so that parallel runs (pytest -n 2) do not collide.
TAG = f"{os.getpid() % 100000}"
#: Longest a monitor subprocess may take beyond its --duration before the test fails.
GRACE_S = 30


def _server(ns, port=5201):
    proc = subprocess.Popen(["ip", "netns", "exec", ns, "iperf3", "-s", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):  # until it listens
        out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Hltn", f"sport = :{port}"],
                             capture_output=True, text=True).stdout
        if out.strip():
            break
        time.sleep(0.05)
    return proc


def _stop(proc):
    if proc.poll() is None:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def pair():
    """Namespaces over a veth pair shaped with tbf 40 Mbit/s, iperf3 -s in b."""
    with netns.pair(f"tm{TAG}", rate="40mbit", subnet="10.77.41") as p:
        server = _server(p.ns_b)
        try:
            yield p, server
        finally:
            _stop(server)


def _campaign(tmp_path, pair, **kwargs):
    directory = tmp_path / "mon"
    settings = dict(to=pair.addr_b, source="a", destination="b", path_name="a-b",
                    directions=("forward",), interval_s=3.0, timeout_s=10.0,
                    tcp_buffers=[1048576], tcp_duration_s=1.0, description="test")
    settings.update(kwargs)
    new_campaign(str(directory), **settings)
    return directory


def _monitor(directory, pair, duration):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-m", "thruput.cli", "monitor", str(directory),
                             "--duration", f"{duration}s", "--netns", pair.ns_a],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_rows(directory, n, proc, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        rows = read_rows(str(directory)) if (directory / "runs.csv").exists() else []
        if len(rows) >= n:
            return rows
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError(f"fewer than {n} rows after {timeout} s")


def _finish(proc, duration):
    out, err = proc.communicate(timeout=duration + GRACE_S)
    assert proc.returncode == 0, err
    return err


def _problems(directory):
    """check's findings, but for the far host that the template leaves TODO."""
    return [str(p) for p in check_campaign(directory)
            if "TODO: the far host" not in p.message]


def _throughput(directory, row):
    result = json.loads((directory / row.path).read_text())
    return result["end"]["sum_received"]["bits_per_second"]


def test_tc_rate_change_mid_run_is_in_the_data(tmp_path, pair):
    p, _server_proc = pair
    directory = _campaign(tmp_path, p)
    proc = _monitor(directory, p, 14)
    done_before = {r.run for r in _wait_rows(directory, 2, proc)}  # ended before the change
    changed = time.time()
    subprocess.run(["ip", "netns", "exec", p.ns_a, "tc", "qdisc", "change", "dev", p.dev_a,
                    "root", "tbf", "rate", "10mbit", "burst", "256k", "latency", "10ms"],
                   check=True)
    _finish(proc, 14)
    rows = read_rows(str(directory))
    assert [r.outcome for r in rows] == ["ok"] * len(rows)
    slots = [int(r.slot) for r in rows]
    # every slot ran, from slot 0: a new campaign's slot 0 runs however long its start took
    # (before the eleventh round a loaded machine could make it a gap)
    assert slots == list(range(len(slots)))
    before = [_throughput(directory, r) for r in rows if r.run in done_before]
    after = [_throughput(directory, r) for r in rows if parse_time(r.started) > changed]
    assert len(before) >= 2 and len(after) >= 2
    assert min(before) > 30e6      # tbf 40 Mbit/s
    assert max(after) < 12e6       # tbf 10 Mbit/s (+ its 256 KiB bucket over a 1 s test)
    assert _problems(directory) == []


def test_far_end_killed_and_restarted(tmp_path, pair):
    p, server = pair
    directory = _campaign(tmp_path, p, interval_s=2.0, tcp_buffers=[65536])
    proc = _monitor(directory, p, 16)
    _wait_rows(directory, 1, proc)
    _stop(server)
    rows = _wait_rows(directory, 3, proc)
    restarted = _server(p.ns_b)
    try:
        _finish(proc, 16)
    finally:
        _stop(restarted)
    rows = read_rows(str(directory))
    outcomes = [r.outcome for r in rows]
    first_refused = outcomes.index("refused")
    last_refused = len(outcomes) - 1 - outcomes[::-1].index("refused")
    assert outcomes[0] == "ok"
    assert set(outcomes[first_refused:last_refused + 1]) == {"refused"}
    assert outcomes[last_refused + 1:] and set(outcomes[last_refused + 1:]) == {"ok"}
    refused = rows[first_refused]
    assert refused.reason == "iperf3: unable to connect to server: Connection refused"
    # what iperf3 wrote is kept, listed with its hash
    assert json.loads((directory / refused.path).read_text())["error"] == \
        "unable to connect to server: Connection refused"
    assert _problems(directory) == []


def test_monitor_killed_and_restarted_resumes_on_schedule(tmp_path, pair):
    p, _server_proc = pair
    directory = _campaign(tmp_path, p, interval_s=3.0, tcp_duration_s=2.0)
    proc = _monitor(directory, p, 60)
    _wait_rows(directory, 1, proc)
    # kill one second into the slot after the first that ended (on a loaded machine the
    # monitor may start late and miss slot 0: the first row then names a later slot)
    first = int(read_rows(str(directory))[0].slot)
    start = parse_time(yaml.safe_load((directory / "campaign.yaml").read_text())["dates"]["start"])
    time.sleep(max(0.0, start + 3.0 * (first + 1) + 1.0 - time.time()))  # its test is running
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    # the test it was running died with it (no process left in the namespace; on a loaded
    # machine its exit may take a moment: once .ci/run found it there 0.5 s after the kill)
    left = None
    for _ in range(50):
        time.sleep(0.1)
        left = subprocess.run(["ip", "netns", "pids", p.ns_a], capture_output=True,
                              text=True).stdout.split()
        if not left:
            break
    assert left == []
    done = [int(r.slot) for r in read_rows(str(directory))]
    assert done[0] == first and done == sorted(set(done))   # only tests that ended are listed
    # what a kill during the rename would leave: a .part file (simulated here)
    part = directory / "runs" / "2026-11-22" / "000001-a-b-forward-tcp-b1048576.json.part"
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_text('{"start": {')
    again = _monitor(directory, p, 7)
    err = _finish(again, 7)
    assert f"removed {part}" in err
    assert not part.exists()
    slots = [int(r.slot) for r in read_rows(str(directory))]
    assert slots[:len(done)] == done and len(slots) > len(done)   # resumed on the schedule
    assert slots == sorted(set(slots))                  # no slot twice
    assert [f.name for f in directory.rglob("*.part")] == []
    # every listed file whole, none unlisted; the slots missed while the monitor was down
    # are the one finding, a warning (gaps are data)
    found = _problems(directory)
    assert all(": warning: path a-b:" in f and "did not run" in f for f in found), found


def test_every_failure_is_a_row_with_its_reason(tmp_path, pair):
    p, _server_proc = pair
    blocker = subprocess.Popen(["ip", "netns", "exec", p.ns_a, "iperf3", "-c", p.addr_b,
                                "-t", "20"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)  # the server is now busy with it
        directory = _campaign(tmp_path, p, interval_s=60.0, tcp_buffers=[65536],
                              ping_sizes=[56], ping_count=2)
        data = yaml.safe_load((directory / "campaign.yaml").read_text())
        data["paths"] += [{**data["paths"][0], "name": "closed", "port": 5999},
                          {**data["paths"][0], "name": "nohost", "address": "10.77.41.9"}]
        (directory / "campaign.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
        proc = _monitor(directory, p, 15)
        _finish(proc, 15)
    finally:
        _stop(blocker)
    got = {(r.path_name, r.test): (r.outcome, r.reason) for r in read_rows(str(directory))}
    assert got == {
        ("a-b", "tcp"): ("busy", "iperf3: the server is busy running a test. try again later"),
        ("a-b", "ping"): ("ok", ""),
        ("closed", "tcp"): ("refused", "iperf3: unable to connect to server: Connection refused"),
        ("closed", "ping"): ("ok", ""),
        ("nohost", "tcp"): ("unreachable", got[("nohost", "tcp")][1]),
        ("nohost", "ping"): ("unreachable", got[("nohost", "ping")][1])}
    # iperf3 meets the missing host at its connect or at the cookie it sends first (ARP's
    # failure comes back on whichever runs into it): both are the same unreachable outcome
    assert got[("nohost", "tcp")][1] in (
        "iperf3: unable to connect to server: No route to host",
        "iperf3: unable to send cookie to server: No route to host"), got[("nohost", "tcp")]
    # ping keeps probing until its -w deadline when nothing answers: counts vary
    assert re.fullmatch(r"\[[0-9.]+\] From 10\.77\.41\.1 icmp_seq=\d+ Destination Host "
                        r"Unreachable \d+ packets transmitted, 0 received, \+\d+ errors, "
                        r"100% packet loss, time \d+ms", got[("nohost", "ping")][1])
    assert _problems(directory) == []


def test_a_test_past_its_timeout_is_killed_and_kept(pair):
    p, _server_proc = pair
    spec = TestSpec(MonitorPath("a-b", p.addr_b), "forward", "tcp", "iperf3", duration_s=5.0,
                    socket_buffer=65536)
    result = run_test(spec, timeout_s=2.0, netns=p.ns_a)
    assert (result.outcome, result.reason) == ("timeout", "still running after 2 s: killed")
    partial = json.loads(result.stdout)  # iperf3 -J prints what it has on SIGINT
    assert partial["error"] == "interrupt - the client has terminated"
    assert len(partial["intervals"]) >= 1
