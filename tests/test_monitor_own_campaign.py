"""A monitor campaign set up as a new user would (issue 39): ONE socket buffer, 30 s slots,
no ``schedule.day_s``, a ``tc`` rate change half way. The bundled data/raw/netns-tc-monitor
(tools/record-monitor-tc.sh) goes through check -> normalize -> stats -> page, and a
shorter one is recorded here with the real tools in namespaces this test creates."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import yaml

from thruput.campaign.check import check_campaign
from thruput.cli import main
from thruput.monitor.campaign import monitor
from thruput.monitor.new import new_campaign
from thruput.monitor.manifest import read_rows
from thruput.report import monitor as page
from thruput.stats.changes import change_points

from . import generated
from .conftest import ROOT, load_tool

CAMPAIGN = ROOT / "data" / "raw" / "netns-tc-monitor"
#: The tests watched for a change (all but ping: tbf shapes rate, not delay).
THROUGHPUT = ("tcp", "udp")


def _pipeline(campaign, processed, capsys):
    """check -> normalize -> stats of ``campaign`` into ``processed``; the product."""
    assert main(["campaign", "check", str(campaign)]) == 0
    name = campaign.name
    assert main(["pipeline", "normalize", str(campaign), str(processed / f"{name}.zarr")]) == 0
    assert main(["pipeline", "stats", str(processed / f"{name}.zarr"),
                 str(processed / f"{name}.stats.nc"), "--params", str(ROOT / "params.yaml")]) == 0
    capsys.readouterr()
    return page.load_product(processed, name)


def _change_found(product, change, interval_s, tests=THROUGHPUT):
    """Every throughput series has exactly one change, within two slots of ``change``,
    with bounds that contain it."""
    found = product["changes"].to_dataframe().reset_index()
    for test in tests:
        for direction in ("forward", "reverse"):
            rows = found[(found["test"] == test) & (found["direction"] == direction)]
            assert len(rows) == 1, (test, direction, found)
            r = rows.iloc[0]
            assert abs((r["time"] - change) / np.timedelta64(1, "s")) <= 2 * interval_s
            assert r["time_lower"] < change < r["time_upper"], (test, direction, r)
            assert r["after"] < 0.75 * r["before"]     # 50 -> 20 Mbit/s (UDP: 30 -> 20)


@pytest.mark.skipif(not (CAMPAIGN / "runs.csv").exists(), reason="campaign not present")
def test_the_recorded_campaign_finds_its_change_and_builds_its_page(tmp_path, capsys):
    meta = yaml.safe_load((CAMPAIGN / "campaign.yaml").read_text())
    assert "day_s" not in meta["schedule"]
    assert meta["schedule"]["tests"][0]["socket_buffers"] == [262144]
    assert check_campaign(CAMPAIGN) == []
    product = _pipeline(CAMPAIGN, tmp_path, capsys)
    change = np.datetime64(meta["events"][0]["time"].rstrip("Z"), "ns")
    _change_found(product, change, meta["schedule"]["interval_s"])
    params = json.loads(product["changes"].attrs["params"])
    # no day_s: the period comes from the data; this one has none, and the page says why
    assert params["period_s"] is None
    assert params["period_reason"].startswith("period 'auto' (no schedule.day_s): no significant period")
    assert "false-alarm probability" in params["period_reason"]
    assert "why this period" in page.monitor_overview(product).data
    assert page.monitor_daily_profile(product, "tcp").data.startswith("*No daily profile of TCP throughput: period 'auto'")
    answers = page.seed004_answers(product).data
    assert "one socket buffer (256 KiB) only: growth with the buffer cannot be seen" in answers
    out = tmp_path / "page.ipynb"
    assert main(["site", "page", "notebooks/monitor.ipynb", str(out), "--root", str(ROOT),
                 "-p", "campaign=netns-tc-monitor", "-p", f"processed={tmp_path}"]) == 0
    cells = json.loads(out.read_text())["cells"]
    errors = [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    assert generated.page_problems(generated.build_health_page("netns-tc-monitor", tmp_path, tmp_path)) == []


@pytest.mark.skipif(not (CAMPAIGN / "runs.csv").exists(), reason="campaign not present")
def test_a_short_campaign_with_a_day_still_finds_the_change():
    """With a day (86 400 s) longer than the whole campaign, the day is not used (a
    campaign shorter than two periods): segments stay 5 runs, the change is found."""
    import thruput
    ds = thruput.open_campaign(str(CAMPAIGN))
    tcp = ds["throughput"].where((ds["test"] == "tcp") & (ds["direction"] == "forward")
                                 & (ds["outcome"] == "ok"), drop=True)
    found = change_points(tcp, tcp["time"], period=86400, n_boot=200)
    assert found.sizes["change"] == 1
    assert found.attrs["min_size"] == 5
    assert "less than 2 periods of 24 h: no cycle removed" in found.attrs["period_reason"]


NETNS = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc")
    or not shutil.which("iperf3"), reason="needs root, iproute2 and iperf3")
#: The short recording: slots, interval (s), and the slot before which the rate changes.
SLOTS, INTERVAL_S, CHANGE_SLOT = 12, 4.0, 6


@NETNS
@pytest.mark.netns
def test_a_short_recording_with_a_tc_change_is_found_within_two_slots(tmp_path, capsys):
    netns = load_tool("netns")
    name = f"umt{os.getpid() % 100000}"
    directory = tmp_path / "raw" / "short-tc-monitor"
    with netns.pair(name, rate="50mbit", subnet="10.203.7") as p:
        server = subprocess.Popen(["ip", "netns", "exec", p.ns_b, "iperf3", "-s"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            new_campaign(str(directory), to=p.addr_b, source=p.ns_a, destination=p.ns_b,
                         path_name="a-b", interval_s=INTERVAL_S, timeout_s=10.0,
                         tcp_buffers=[262144], tcp_duration_s=1.0, description="test",
                         title="short tc monitor")
            changed = []

            def change():
                # between two slots: once slot CHANGE_SLOT - 1's two tests are written
                while len(read_rows(str(directory))) < 2 * CHANGE_SLOT \
                        if (directory / "runs.csv").exists() else True:
                    time.sleep(0.05)
                for ns, dev in ((p.ns_a, p.dev_a), (p.ns_b, p.dev_b)):
                    subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "change", "dev", dev,
                                    "root", "tbf", "rate", "10mbit", "burst", "256k", "latency",
                                    "10ms"], check=True)
                changed.append(time.time())

            changer = threading.Thread(target=change, daemon=True)
            changer.start()
            monitor(str(directory), duration_s=SLOTS * INTERVAL_S - 1, netns=p.ns_a)
            changer.join(5)
        finally:
            server.terminate()
            server.wait(10)
    assert changed
    meta = yaml.safe_load((directory / "campaign.yaml").read_text())
    meta["hosts"][p.ns_b] = {"description": "namespace on the same host"}
    (directory / "campaign.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    product = _pipeline(directory, tmp_path, capsys)
    assert product["campaign"].attrs["runs"] >= 2 * (SLOTS - 1)
    change = np.datetime64(int(changed[0] * 1e6), "us").astype("datetime64[ns]")
    _change_found(product, change, INTERVAL_S, tests=("tcp",))
