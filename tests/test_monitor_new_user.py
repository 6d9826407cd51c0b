"""What a new user met with their own monitor data (issue 60), each held by a test: the
health page of a campaign without ping, TCP or a direction; the page's failures grouped by
reason; a fresh template that passes check; an import that keeps --title and --who and
whose status reads; a report that gives every rule's SLA and says "no data" once; a data
package of only the campaigns params.yaml lists."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
import yaml

from thruput.campaign.store import write_product
from thruput.cli import main
from thruput.monitor import alerts
from thruput.report import health
from thruput.report import monitor as page
from thruput.stats import monitor_product
from thruput.stats import rollups as R

from . import synthetic as syn
from .conftest import DATA

PILE = DATA / "wrapped" / "monitor-pile"


def _health(ds, tmp_path):
    """(health tables, rollups path) of a monitor Dataset, as the pipeline writes them."""
    path = tmp_path / "r.nc"
    tables = R.rollups(ds)
    write_product(tables, path, encoding=R.rollups_encoding(tables))
    return alerts.evaluate(ds), path


@pytest.mark.parametrize("keep, missing", [
    (lambda ds: ds["test"] != "ping", ("ping_rtt", "forward", "No ping RTT to draw: no ping test")),
    (lambda ds: ds["test"] == "ping", ("tcp_throughput", "forward", "No TCP throughput to draw: no TCP test")),
    (lambda ds: ds["direction"] == "forward",
     ("tcp_throughput", "reverse", "No TCP throughput in the reverse direction")),
], ids=["no-ping", "ping-only", "forward-only"])
def test_the_health_page_says_in_one_line_what_a_campaign_lacks(tmp_path, keep, missing):
    ds = syn.monitor_campaign()
    ds = ds.isel(run=np.flatnonzero(keep(ds).values))
    tables, rollups = _health(ds, tmp_path)
    kind, direction, says = missing
    out = health.health_smokeping(rollups, kind, "auto", direction)
    assert says in out.data and out.data.count("\n") == 0
    for kind in R.KINDS:            # every chart of the notebook builds or says why not
        for direction in ("forward", "reverse"):
            assert health.health_smokeping(rollups, kind, "auto", direction) is not None
    assert health.health_throughput_delay(tables) is not None
    assert "e+0" not in health.health_breaches(tables).data


def test_breach_tables_give_values_with_units(tmp_path):
    ds = syn.monitor_campaign()
    meta = json.loads(ds.attrs["metadata"])
    meta["alerts"] = [{"test": "tcp", "metric": "throughput", "below": 1e12, "for": 1}]
    ds.attrs["metadata"] = json.dumps(meta)
    tables = alerts.evaluate(ds)
    text = health.health_breaches(tables).data
    assert "tcp throughput below 1000 Gbit/s for 1 slots" in text
    assert "Mbit/s" in text and "e+" not in text


def test_failed_tests_are_grouped_by_reason_with_their_files():
    ds = syn.monitor_campaign()
    n = ds.sizes["run"]
    outcome = np.asarray(ds["outcome"].values).astype(object)
    reason = np.asarray(ds["reason"].values).astype(object)
    source = np.asarray(ds["source"].values).astype(object)
    bad = np.arange(0, n, 7)
    long = "unknown format: " + ", ".join(f"format{i}" for i in range(40))
    outcome[bad], reason[bad] = "error", long
    source[bad] = [f"runs/x/{i}.log" for i in bad]
    ds = ds.assign(outcome=("run", outcome), reason=("run", reason), source=("run", source))
    product = monitor_product(ds, {"n_boot": 20})
    html = page.monitor_gaps(product).data
    assert html.count(long) == 1                         # once, not once per failed test
    assert f"<td>{bad.size}</td>" in html and f"runs/x/{bad[0]}.log" in html
    assert f"and {bad.size - page.EXAMPLES} more" in html


def test_no_gap_before_the_first_slot():
    ds = syn.monitor_campaign()
    ds = ds.assign_coords(slot=ds["slot"] + 500)      # an archive numbered from an earlier start
    product = monitor_product(ds, {"n_boot": 20})
    gaps = product["gaps"]
    assert int(gaps["first_slot"].min()) > 500
    assert gaps.attrs["slots_expected"] == int(ds["slot"].max() - ds["slot"].min() + 1)


def test_paths_show_only_what_campaign_yaml_knows():
    ds = syn.monitor_campaign()
    meta = json.loads(ds.attrs["metadata"])
    meta["paths"][0].update(source=None, destination=None)
    ds.attrs["metadata"] = json.dumps(meta)
    product = monitor_product(ds, {"n_boot": 20})
    title = page.monitor_title(product).data
    assert "None" not in title and f"**Paths:** {meta['paths'][0]['name']}" in title


def test_a_fresh_template_passes_check(tmp_path, capsys):
    directory = tmp_path / "fresh"
    assert main(["monitor", "new", str(directory), "--to", "10.0.0.2", "--tcp-buffers", "256K"]) == 0
    assert main(["campaign", "check", str(directory)]) == 0
    out = capsys.readouterr().out
    assert "not recorded yet" in out and ": error:" not in out and "ok (0 errors" in out


def test_an_import_keeps_what_the_command_line_says_and_its_status_reads(tmp_path, capsys):
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path), "pile", str(PILE),
                 "--title", "My pile", "--who", "Me", "--who", "You", "--between", "a wire"]) == 0
    meta = yaml.safe_load((tmp_path / "pile" / "campaign.yaml").read_text())
    assert meta["title"] == "My pile" and meta["who"] == ["Me", "You"]
    assert {p["between"] for p in meta["paths"]} == {"a wire"}
    capsys.readouterr()
    assert main(["monitor", "status", str(tmp_path / "pile")]) == 0
    out = capsys.readouterr().out
    assert "18 tests in" in out and "0 slots missing" in out


def test_the_report_gives_every_rules_sla_and_says_no_data_once():
    ds = syn.monitor_campaign()
    meta = json.loads(ds.attrs["metadata"])
    meta["alerts"] = [{"test": "tcp", "metric": "throughput", "below": 1.0, "for": 1},
                      {"test": "ping", "metric": "rtt", "above": 1e6, "for": 1}]
    ds.attrs["metadata"] = json.dumps(meta)
    rep = alerts.report_json(alerts.evaluate(ds))
    text = alerts.format_report(rep)
    for rule in rep["rules"]:                   # met all along, still listed
        assert any(line.strip().startswith("SLA 1D") and rule in line for line in text.splitlines())
    assert "ping rtt above 1000000 ms" in text
    silent = {**rep, "series": [{**rep["series"][0], "state": "no data", "since": "2026-01-01T00:00:00Z",
                                 "last_data": "2026-01-01T00:00:00Z", "breaches": [], "sla": {}}]}
    line = alerts.format_report(silent).splitlines()[-1]
    assert line.endswith("no data since 2026-01-01T00:00:00Z") and line.count("2026-01-01") == 1


def test_the_data_package_holds_only_the_campaigns_listed(tmp_path, capsys):
    processed = tmp_path / "processed"
    processed.mkdir()
    for name in ("kept.stats.nc", "kept.health.nc", "dropped.stats.nc", "dropped.rollups.nc"):
        xr.Dataset({"x": ("i", [1.0])}).to_netcdf(processed / name)
    for name in ("kept.rollups.zarr", "dropped.health.zarr"):      # the pipeline's appendable stores
        xr.Dataset({"x": ("time", [1.0, 2.0])}).to_zarr(processed / name, group="1h/ping_rtt", zarr_format=2)
    (tmp_path / "params.yaml").write_text("campaigns: []\nmonitors: [kept]\n")
    out = tmp_path / "site-data"
    assert main(["site", "data", str(processed), str(out), "--params", str(tmp_path / "params.yaml")]) == 0
    package = json.loads((out / "datapackage.json").read_text())
    assert {r["path"] for r in package["resources"]} == {"kept.stats.nc", "kept.health.nc", "kept.rollups.zarr.zip"}
    assert not (out / "dropped.stats.nc").exists() and not (out / "dropped.health.zarr.zip").exists()
    first = (out / "kept.rollups.zarr.zip").read_bytes()          # the same store, the same bytes
    assert main(["site", "data", str(processed), str(out), "--params", str(tmp_path / "params.yaml")]) == 0
    assert (out / "kept.rollups.zarr.zip").read_bytes() == first
    import zarr
    with zarr.storage.ZipStore(out / "kept.rollups.zarr.zip", mode="r") as store:   # as the package says
        assert xr.open_zarr(store, group="1h/ping_rtt")["x"].values.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("call, text", [
    (lambda f: f.number(8367000.0), "8370000"), (lambda f: f.number(1.2e-5, 2), "0.000012"),
    (lambda f: f.rate(8.367e6), "8.37 Mbit/s"), (lambda f: f.rate(1.55e10), "15.5 Gbit/s"),
    (lambda f: f.rate(1.55e10, unit="Mbit/s"), "15500 Mbit/s"), (lambda f: f.rate(3e6, sign="+"), "+3 Mbit/s"),
    (lambda f: f.duration(89730), "24.9 h"), (lambda f: f.duration(45), "45 s"),
    (lambda f: f.duration(4e6), "46.3 d"), (lambda f: f.value(0.47, "1"), "47 %"),
    (lambda f: f.value(60, "ms"), "60 ms"), (lambda f: f.value(float("nan"), "ms"), "–"),
    (lambda f: f.number(None), "–"),
])
def test_numbers_are_written_without_e_notation_and_with_units(call, text):
    from thruput import formatting

    assert call(formatting) == text
