"""UDP loss and the rate offered, visible (issue 60: "UDP loss is shown nowhere").

On the synthetic monitor campaign with its UDP runs made lossy (a path offered 150 Mbit/s
that carries what is left after each run's loss), the statistics product's ``udp_loss``
table, the ``udp_offered`` rollups, the monitor page's chart and the health page's table
show the loss and the offered rate beside the received one.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from thruput.report.health import health_udp_loss
from thruput.report.monitor import monitor_udp_loss
from thruput.stats.monitor import udp_loss_offered
from thruput.campaign.store import write_product
from thruput.stats.rollups import rollups, rollups_encoding

from . import synthetic as syn

OFFERED = 150e6


@pytest.fixture(scope="module")
def lossy():
    """The synthetic campaign, its UDP runs offered 150 Mbit/s and losing 40-50 % (forward)
    or 10-20 % (reverse); the first UDP run received nothing (loss 1, 0 bit/s)."""
    ds = syn.monitor_campaign()
    udp = (ds.test == "udp").values
    rng = np.random.default_rng(7)
    forward = (ds.direction == "forward").values
    loss = np.where(forward, rng.uniform(0.4, 0.5, udp.size), rng.uniform(0.1, 0.2, udp.size))
    first = np.flatnonzero(udp & (ds.outcome == "ok").values)[0]
    loss[first] = 1.0
    ds["loss_fraction"] = ("run", np.where(udp, loss, np.nan), ds.loss_fraction.attrs)
    ds["throughput_sender"] = ("run", np.where(udp, OFFERED, ds.throughput_sender.values),
                               ds.throughput_sender.attrs)
    ds["throughput"] = ("run", np.where(udp, OFFERED * (1 - loss), ds.throughput.values), ds.throughput.attrs)
    return ds


def _ok_udp(ds, direction):
    keep = (ds.test == "udp") & (ds.outcome == "ok") & (ds.direction == direction)
    return ds.where(keep, drop=True)


def test_udp_loss_offered_against_numpy(lossy):
    out = udp_loss_offered(lossy, freq="30min")
    for direction in ("forward", "reverse"):
        runs = _ok_udp(lossy, direction)
        cell = out.sel(path="a-b", direction=direction)
        loss = runs.loss_fraction.values
        assert int(cell.n) == loss.size
        assert float(cell.loss_median) == pytest.approx(np.median(loss))
        assert float(cell.loss_mean) == pytest.approx(np.mean(loss))
        assert float(cell.loss_p90) == pytest.approx(np.percentile(loss, 90))
        assert float(cell.offered_median) == OFFERED
        assert float(cell.received_median) == pytest.approx(np.median(runs.throughput.values))
        assert float(cell.received_over_offered) == pytest.approx(np.median(runs.throughput.values) / OFFERED)
    # per bin: the runs of each 30 min bin
    runs = _ok_udp(lossy, "forward")
    bins = runs.time.values.astype("datetime64[ns]").astype("datetime64[m]")
    first = out.time.values[0]
    mask = (runs.time.values >= first) & (runs.time.values < first + np.timedelta64(30, "m"))
    assert float(out.bin_loss_median.sel(path="a-b", direction="forward").isel(time=0)) == pytest.approx(
        np.median(runs.loss_fraction.values[mask]))
    assert int(out.bin_n.sel(path="a-b", direction="forward").isel(time=0)) == mask.sum() and bins.size


def test_the_run_that_received_nothing_counts_as_all_lost(lossy):
    """A run whose receiver got none of the datagrams is a loss of 1 at 0 bit/s, counted."""
    out = udp_loss_offered(lossy, freq="30min")
    runs = _ok_udp(lossy, "forward")
    assert float(runs.loss_fraction.max()) == 1.0 and float(runs.throughput.min()) == 0.0
    assert float(out.loss_mean.sel(path="a-b", direction="forward")) == pytest.approx(
        float(runs.loss_fraction.mean()))


def test_no_udp_no_table():
    ds = syn.monitor_campaign()
    tcp = ds.isel(run=np.flatnonzero((ds.test != "udp").values))
    assert not udp_loss_offered(tcp).data_vars
    product = {"udp_loss": udp_loss_offered(tcp), "campaign": xr.Dataset(attrs={"params": "{}"})}
    assert "No UDP runs" in monitor_udp_loss(product).data


def test_the_monitor_page_shows_loss_and_both_rates(lossy, capsys):
    product = {"udp_loss": udp_loss_offered(lossy, freq="30min"),
               "campaign": xr.Dataset(attrs={"params": json.dumps({"freq": "30min"})})}
    chart = monitor_udp_loss(product)
    spec = chart.to_dict()
    top, bottom = spec["vconcat"]
    rates = spec["datasets"][top["data"]["name"]]
    assert {r["rate"] for r in rates} == {"offered (sender)", "received (receiver)"}
    assert {r["value"] for r in rates if r["rate"] == "offered (sender)"} == {150.0}
    loss = spec["datasets"][bottom["data"]["name"]]
    assert all(0 <= r["loss"] <= 100 for r in loss) and max(r["loss"] for r in loss) > 40
    assert not any(isinstance(v, float) and np.isnan(v) for r in rates + loss for v in r.values())


def test_rollups_keep_the_offered_rate_and_the_health_page_shows_it(lossy, tmp_path):
    tables = rollups(lossy, freqs=("1h",))
    offered = tables["1h/udp_offered"]
    assert float(offered["median"].max()) == OFFERED
    assert float(tables["1h/udp_throughput"]["loss"].max()) > 0.4
    path = write_product(tables, tmp_path / "c.rollups.nc", encoding=rollups_encoding(tables))
    html = health_udp_loss(path, "1h").data
    assert "datagram loss (%)" in html and "offered, median (Mbit/s)" in html
    assert "<td>150</td>" in html
    assert "nan" not in html.lower() and "None" not in html
    no_udp = rollups(lossy.isel(run=np.flatnonzero((lossy.test != "udp").values)), freqs=("1h",))
    assert "No UDP test" in health_udp_loss(write_product(no_udp, tmp_path / "t.rollups.nc", encoding=rollups_encoding(no_udp)), "1h").data
