"""Routes over time: `route_changes` on hop sequences, and a route changed mid-campaign
between network namespaces (an extra router) found after a monitor import."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import numpy as np
import pytest
import xarray as xr
import yaml

from thruput.monitor.importer import import_pile
from thruput.monitor.routes import read_routes
from thruput.stats import route_changes

from .piles import wrap


def _sequence(rows):
    """rows: (minute, path, hops) -> the DataArray route_changes takes."""
    t0 = np.datetime64("2024-05-27T12:00", "ns")
    return xr.DataArray([h for _, _, h in rows], dims="route",
                        coords={"time": ("route", [t0 + np.timedelta64(m, "m") for m, _, _ in rows]),
                                "path": ("route", [p for _, p, _ in rows])})


def test_changes_per_path_unanswered_hops_and_load_balancing_are_no_change():
    got = route_changes(_sequence([
        (0, "a", "r1 r2 b"), (1, "a", "r1 * b"), (2, "b", "x y"), (3, "a", "r1 r2|r5 b"),
        (4, "a", "r1 r3 b"), (5, "a", "* * * *"), (6, "a", "r1 r3 b"), (7, "b", "x y z")]))
    assert got["path"].values.tolist() == ["a", "b"]
    assert got["before"].values.tolist() == ["r1 r2 b", "x y"]
    assert got["after"].values.tolist() == ["r1 r3 b", "x y z"]
    minutes = ((got["time"].values - np.datetime64("2024-05-27T12:00")) // np.timedelta64(1, "m")).tolist()
    previous = ((got["previous_time"].values - np.datetime64("2024-05-27T12:00")) // np.timedelta64(1, "m")).tolist()
    assert (minutes, previous) == ([4, 7], [3, 2])


def test_unanswered_hops_before_a_rate_limiting_target_are_no_change():
    """tests/data/traceroute/linux-2.1.2--names.txt: b answered hop 8 only."""
    got = route_changes(_sequence([(0, "a", "r1 r2 b"), (1, "a", "r1 r2 * * * * * b"), (2, "a", "r1 r2 b"),
                                   (3, "a", "r1 * b x")]))
    assert got["after"].values.tolist() == ["r1 * b x"]


def test_no_routes_no_changes():
    assert route_changes(_sequence([]))["time"].size == 0


# -- a route changed between namespaces mid-campaign

#: Unique per test process (pytest -n 2 runs the two tests below side by side).
PREFIX = f"tph5-{os.getpid() % 100000}-"
NS = [PREFIX + n for n in ("a", "r1", "r2", "r3", "b")]


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True)


def _in(ns, *cmd, check=False):
    return subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True, check=check)


@pytest.fixture
def network():
    """a - r1 - r2 - b, and r1 - r3 - b (the second way, unused at first)."""
    if os.geteuid() != 0 or not shutil.which("traceroute") or not shutil.which("ip"):
        pytest.skip("needs root, ip and traceroute")
    for ns in NS:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    try:
        for ns in NS:
            _ip("netns", "add", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            _in(ns, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.icmp_ratelimit=0", check=True)
        links = [("a", "r1", "10.78.1"), ("r1", "r2", "10.78.2"), ("r2", "b", "10.78.3"),
                 ("r1", "r3", "10.78.4"), ("r3", "b", "10.78.5")]
        for i, (x, y, net) in enumerate(links):
            _ip("link", "add", f"h5t{i}x", "netns", PREFIX + x, "type", "veth", "peer", "name", f"h5t{i}y",
                "netns", PREFIX + y)
            for ns, dev, host in ((PREFIX + x, f"h5t{i}x", 1), (PREFIX + y, f"h5t{i}y", 2)):
                _ip("-n", ns, "addr", "add", f"{net}.{host}/24", "dev", dev)
                _ip("-n", ns, "link", "set", dev, "up")
        routes = {"a": [("default", "10.78.1.2")],
                  "r1": [("10.78.3.0/24", "10.78.2.2"), ("10.78.5.0/24", "10.78.4.2")],
                  "r2": [("default", "10.78.2.1")], "r3": [("default", "10.78.4.1"), ("10.78.3.0/24", "10.78.5.2")],
                  "b": [("default", "10.78.3.1")]}
        for ns, table in routes.items():
            for dst, via in table:
                _ip("-n", PREFIX + ns, "route", "add", dst, "via", via)
        yield
    finally:
        for ns in NS:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _wrapped(ns, *cmd):
    """The command's output as the starlink scripts' wrapper writes it (Start time, each
    line stamped, End time: tests/piles.py)."""
    start = int(time.time() * 1000)
    return wrap(_in(ns, *cmd).stdout, start, 0)[0]


def test_a_route_changed_mid_campaign_is_found(network, tmp_path):
    pile = tmp_path / "pile"
    switched = None
    for k in range(6):
        if k == 3:      # r1 now reaches b's network through r3
            switched = np.datetime64(int(time.time() * 1000), "ms")
            _ip("-n", PREFIX + "r1", "route", "replace", "10.78.3.0/24", "via", "10.78.4.2")
        folder = pile / "ab" / f"{k:02d}"
        folder.mkdir(parents=True)
        (folder / f"traceroute_{k}.out").write_text(
            _wrapped(PREFIX + "a", "traceroute", "-n", "-q", "1", "-w", "1", "-m", "6", "10.78.3.2"))
        (folder / f"ping_{k}.out").write_text(_in(PREFIX + "a", "ping", "-n", "-D", "-c", "2", "-i", "0.2",
                                                  "10.78.3.2").stdout)
        time.sleep(0.3)
    done = import_pile("ab", [pile], tmp_path / "raw", path_pattern=r"^(?P<path>ab)/")
    assert (done.runs, done.ancillary) == (6, {"route": 6})
    routes = read_routes(done.directory)
    assert routes.sizes["route"] == 6 and set(routes["path"].values) == {"ab"}
    (change,) = route_changes(routes).to_dataframe().itertuples()
    assert (change.before, change.after) == ("10.78.1.2 10.78.2.2 10.78.3.2", "10.78.1.2 10.78.4.2 10.78.3.2")
    assert change.previous_time < switched <= change.time


def test_a_monitor_traces_each_slot_and_finds_the_route_change(network, tmp_path):
    """``thruput monitor`` with a traceroute test: routes.csv and routes/, the change found,
    the runs (ping) untouched by them, ``campaign check`` clean."""
    from thruput.campaign.check import check_campaign
    from thruput.monitor.campaign import monitor
    from thruput.monitor.manifest import read_rows
    from thruput.monitor.new import new_campaign
    from thruput.monitor.routes import read_route_rows

    directory = tmp_path / "mon"
    new_campaign(str(directory), to="10.78.3.2", path_name="ab", source="a", destination="b",
                 directions=("forward",), interval_s=2.0, timeout_s=10.0, ping_sizes=[56], ping_count=2,
                 ping_interval_s=0.2, description="test")
    meta = yaml.safe_load((directory / "campaign.yaml").read_text())
    meta["schedule"]["tests"].append({"test": "traceroute", "probes": 1, "max_hops": 6})
    (directory / "campaign.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    monitor(str(directory), duration_s=5, netns=PREFIX + "a")
    switched = np.datetime64(int(time.time() * 1000), "ms")
    _ip("-n", PREFIX + "r1", "route", "replace", "10.78.3.0/24", "via", "10.78.4.2")
    monitor(str(directory), duration_s=5, netns=PREFIX + "a")
    traced = read_route_rows(directory)
    assert len(traced) >= 4 and {r["outcome"] for _, r in traced} == {"ok"}
    assert all(r["path"].startswith("routes/") for _, r in traced)
    assert {r.test for r in read_rows(str(directory))} == {"ping"}
    (change,) = route_changes(read_routes(directory)).to_dataframe().itertuples()
    assert (change.path, change.before, change.after) == \
        ("ab", "10.78.1.2 10.78.2.2 10.78.3.2", "10.78.1.2 10.78.4.2 10.78.3.2")
    assert change.previous_time < switched <= change.time
    assert [str(p) for p in check_campaign(directory) if p.severity == "error"] == []
    from thruput.monitor.routes import route_changes_table
    from thruput.report.monitor import monitor_route_changes
    page = monitor_route_changes({"changes": xr.Dataset(), "route_changes": route_changes_table(directory)}).data
    assert "10.78.1.2 10.78.4.2 10.78.3.2" in page and "<td>none</td>" in page
