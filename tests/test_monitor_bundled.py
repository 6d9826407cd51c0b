"""The bundled monitor campaign data/raw/netns-wan-monitor (tools/record-monitor.sh): it is
sound, and its series show what was built into the path: the 600 s cross-traffic cycle
and the planned change of capacity and RTT half-way."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
import yaml

import thruput
from thruput import stats
from thruput.campaign.check import check_campaign
from thruput.monitor.manifest import read_rows
from thruput.monitor.schedule import parse_time

from .conftest import ROOT

CAMPAIGN = ROOT / "data" / "raw" / "netns-wan-monitor"
#: The cross traffic's period (tools/record-monitor.sh CT_PERIOD), s.
CYCLE_S = 600.0

pytestmark = pytest.mark.skipif(not (CAMPAIGN / "runs.csv").exists(),
                                reason="bundled monitor campaign not present")


@pytest.fixture(scope="module")
def meta():
    return yaml.safe_load((CAMPAIGN / "campaign.yaml").read_text())


def _series(direction="forward", test="tcp", buffer="1048576", until=None):
    """Throughput (bit/s) of one kind of test, on a ``run`` dimension with ``time``."""
    times, values = [], []
    for row in read_rows(str(CAMPAIGN)):
        if (row.direction, row.test, row.socket_buffer, row.outcome) != \
                (direction, test, buffer, "ok"):
            continue
        t = parse_time(row.started)
        if until is not None and t >= until:
            continue
        times.append(np.datetime64(int(t * 1000), "ms"))
        values.append(float(thruput.read(str(CAMPAIGN / row.path))["throughput"][0]))
    return xr.DataArray(values, dims="run", name="throughput", attrs={"units": "bit/s"},
                        coords={"time": ("run", np.array(times, dtype="datetime64[ns]"))})


def test_the_bundled_campaign_is_sound():
    assert check_campaign(CAMPAIGN) == []


def test_periodogram_finds_the_cross_traffic_cycle(meta):
    change = parse_time(meta["events"][0]["time"])
    for direction in ("forward", "reverse"):
        before = _series(direction, until=change)   # the cycle, without the step
        result = stats.periodogram(before, min_period=0.05, max_period=0.5)
        assert float(result["dominant_period"]) * 3600 == pytest.approx(CYCLE_S, rel=0.10)


def test_change_points_finds_the_planned_change(meta):
    if not hasattr(stats, "change_points"):
        pytest.skip("thruput.stats.change_points not in this build")
    event = np.datetime64(meta["events"][0]["time"].replace("Z", ""), "ns")
    interval = np.timedelta64(int(meta["schedule"]["interval_s"]), "s")
    found = stats.change_points(_series())
    assert found.sizes["change"] >= 1
    nearest = np.abs(found["time"].values - event).min()
    assert nearest <= 2 * interval
    # its bounds contain the time the change was made (19:11:50), between two slots: the
    # page once showed 19:12:00-19:12:00, the first run after it twice
    for direction in ("forward", "reverse"):
        for buffer in ("65536", "1048576"):
            found = stats.change_points(_series(direction, buffer=buffer), period=meta["schedule"]["day_s"])
            near = int(np.argmin(np.abs(found["time"].values - event)))
            assert found["time_lower"].values[near] < event < found["time_upper"].values[near]


def test_the_monitor_commands_read_the_bundled_schedule(capsys):
    from thruput.cli import main
    assert main(["monitor", "status", str(CAMPAIGN)]) == 0     # (its schedule.day_s is the statistics')
    assert "ok" in capsys.readouterr().out
