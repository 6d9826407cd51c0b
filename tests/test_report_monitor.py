"""The monitor page: built from the statistics product alone, rendered with nbclient,
gaps drawn as gaps, seed 004's questions all answered."""

from __future__ import annotations

import ast
import json

import nbformat
import numpy as np
import pytest
import xarray as xr

from thruput import report
from thruput.report import monitor as page
from thruput.site.execute import execute
from thruput.stats import monitor_product
from thruput.campaign.store import write_product

from . import synthetic as syn
from .conftest import ROOT

NOTEBOOK = ROOT / "notebooks" / "monitor.ipynb"
PAGE_SOURCES = [ROOT / "src" / "thruput" / "report" / "monitor.py",
                ROOT / "src" / "thruput" / "charts" / "monitor.py"]


@pytest.fixture(scope="module")
def processed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("processed")
    product = monitor_product(syn.monitor_campaign(), {"n_boot": 100})
    write_product(product, folder / "synthetic-monitor.stats.nc")
    return folder


@pytest.fixture(scope="module")
def product(processed):
    return report.load_product(processed, "synthetic-monitor")


@pytest.mark.parametrize("path", PAGE_SOURCES + [NOTEBOOK], ids=lambda p: p.name)
def test_the_page_computes_nothing(path):
    if path.suffix == ".ipynb":
        text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    else:
        text = path.read_text()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            assert "stats" not in (node.module or "") and all(a.name != "stats" for a in node.names)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            assert node.value.id != "stats", f"{path.name}: calls stats.{node.attr}"


def test_product_round_trips_through_netcdf(product):
    assert {"rolling_tcp", "changes", "cycle", "buffer_curves", "gaps", "udp_tcp"} <= set(product)
    params = json.loads(product["changes"].attrs["params"])
    assert params["period_s"] == syn.MONITOR_DAY_S and params["freq"] == "300s"
    assert params["periods"]["before"][1].startswith("2026-11-22T14:00:00")


def test_time_series_break_at_the_gap(product):
    bins = page._bins(product, "tcp")
    one = bins[bins["series"] == "a-b forward, 1024 KiB"]
    assert one["segment"].nunique() == 2                      # one line before, one after
    before, after = (g for _, g in one.groupby("segment"))
    assert str(before["time"].max())[:16] == "2026-11-22 14:25"
    assert str(after["time"].min())[:16] == "2026-11-22 14:40"
    spec = page.monitor_time_series(product, "tcp", "forward").to_dict()
    line = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "line")
    assert line["encoding"]["detail"]["field"] == "segment"


def test_seed004_questions_are_all_answered(product):
    text = page.seed004_answers(product).data
    for key in page.SEED004_QUESTIONS:
        assert f"**{key}.**" in text
    assert text.count(page.CANNOT_SAY) == 3                   # TCP1, TCP8, TCP9
    # O3 quotes the UDP / TCP ratio the product holds for 64 KiB forward
    ratio = float(product["udp_tcp"]["ratio"].sel(path="a-b", direction="forward", socket_buffer=65536))
    assert f"UDP / TCP = {ratio:.2f}" in text


def test_the_notebook_renders_from_the_product(processed, tmp_path):
    out = tmp_path / "monitor.ipynb"
    execute(NOTEBOOK, out, {"campaign": "synthetic-monitor", "processed": str(processed)}, cwd=ROOT)
    nb = nbformat.read(out, as_version=4)
    html = "".join(o.get("data", {}).get("text/html", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.outputs)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    assert html.count("vegaEmbed(") == 10 and "cdn" not in html.lower()   # (the 10th: UDP loss and rates)
    assert "maintenance" in html and "Connection refused" in html


def test_the_site_makes_one_monitor_page_per_product():
    from thruput.site.config import load_config

    config = load_config(ROOT, campaigns=[], seeds=[], monitors=["synthetic-monitor"])
    pages = [p for p in config.pages if p.notebook.name == "monitor.ipynb"]
    assert [(p.output.name, p.parameters, p.title) for p in pages] == [
        ("monitor-synthetic-monitor.ipynb", {"campaign": "synthetic-monitor"}, "Monitor: synthetic-monitor")]
    assert ("Monitoring", pages) in config.navbar


def test_the_page_says_how_many_tests_disagree_with_their_tools_totals(tmp_path):
    ds = syn.monitor_campaign()
    failed = np.zeros(ds.sizes["run"])
    failed[:5] = 1
    product = monitor_product(ds.assign(tool_checks_failed=("run", failed)), {"n_boot": 20})
    write_product(product, tmp_path / "m.stats.nc")
    html = page.monitor_gaps(report.load_product(tmp_path, "m")).data
    assert "Tests whose tool disagrees with its own data" in html
    assert f"5 of {ds.sizes['run']} tests have a failed check" in html


def test_the_catalogue_row_of_a_monitor_gives_its_best_median_and_dates():
    from thruput.stats.monitor_tables import monitor_tree
    from thruput.report.campaigns import _dates
    from thruput.stats.product import catalogue_product

    tree = monitor_tree(syn.monitor_campaign(), {"n_boot": 100})
    row = catalogue_product({"m": tree}).sel(campaign="m")
    assert row["kind"].item() == "monitor"
    assert float(row["best_median"]) == float(tree["summary_tcp"]["median"].max())
    start, end = str(tree["campaign"].attrs["start"])[:10], str(tree["campaign"].attrs["end"])[:10]
    assert row["end"].item() == end and _dates(row) == start == end      # (one day)
    weeks = xr.Dataset({"start": ((), "2026-03-01"), "end": ((), "2026-04-15")})
    assert _dates(weeks) == "2026-03-01 → 2026-04-15"
    assert _dates(xr.Dataset({"start": ((), "2026-03-01T10:00")})) == "2026-03-01 10:00"   # a sweep


def _every_part(product):
    """Every part of the page, as notebooks/monitor.ipynb calls them."""
    parts = [page.monitor_title(product), page.monitor_overview(product),
             page.monitor_changes(product), page.monitor_buffer_curves(product),
             page.monitor_gaps(product), page.seed004_answers(product)]
    for test in ("tcp", "udp", "ping"):
        parts += [page.monitor_time_series(product, test), page.monitor_daily_profile(product, test),
                  page.monitor_distributions(product, test)]
    parts += [page.monitor_time_series(product, "tcp", d) for d in ("forward", "reverse")]
    return parts


def _every_health_part(ds, tmp_path):
    """Every part of the health page, as notebooks/monitor-health.ipynb calls them."""
    from thruput.monitor.alerts import evaluate
    from thruput.report import health
    from thruput.campaign.store import write_product
    from thruput.stats.rollups import rollups, rollups_encoding

    tables, path = evaluate(ds), tmp_path / "r.nc"
    tables_r = rollups(ds)
    write_product(tables_r, path, encoding=rollups_encoding(tables_r))
    parts = [health.health_title(tables), health.health_grid(tables), health.health_verdicts(tables),
             health.health_breaches(tables), health.health_sla(tables, "1D"), health.health_sla(tables, "1W"),
             health.health_throughput_delay(tables)]
    parts += [health.health_states(tables, p, d) for p in tables["verdict"]["path"].values
              for d in tables["verdict"]["direction"].values]
    for kind in ("ping_rtt", "tcp_throughput"):
        parts += [health.health_smokeping(path, kind, "auto", d) for d in ("forward", "reverse")]
    return parts


@pytest.mark.parametrize("keep, says", [
    # one socket buffer, one direction, no ping (issue 39: "expected 2, got 1")
    (lambda ds: ((ds["test"] == "tcp") & (ds["socket_buffer"] == 65536)) | (ds["test"] == "udp"),
     "only: growth with the buffer cannot be seen"),
    # ping only: no throughput at all
    (lambda ds: ds["test"] == "ping", "No TCP runs in this campaign."),
    # one test kind, one direction, before the change: no change point
    (lambda ds: (ds["test"] == "udp") & (ds["direction"] == "forward") & (ds["slot"] < 100),
     "Change points found (minute): none"),
], ids=["one-buffer-no-ping", "ping-only", "one-series-no-change"])
def test_every_part_of_the_page_takes_a_campaign_with_one_of_everything(keep, says, tmp_path):
    ds = syn.monitor_campaign()
    ds = ds.isel(run=np.flatnonzero(keep(ds).values))
    product = monitor_product(ds, {"n_boot": 30})
    parts = _every_part(product) + _every_health_part(ds, tmp_path)
    assert says in page.seed004_answers(product).data
    reverse = page.monitor_time_series(product, "tcp", "reverse")
    if not (ds["direction"] == "reverse").any():
        assert "No tcp runs in the reverse direction" in reverse.data or "No tcp runs" in reverse.data
    assert all(p is not None for p in parts)


def test_legends_and_facet_headers_show_path_names_whole(product):
    spec = json.dumps(page.monitor_time_series(product, "tcp", "forward").to_dict())
    assert '"labelLimit": 0' in spec
    curves = json.dumps(page.monitor_buffer_curves(product).to_dict())
    assert '"header": {"labelLimit": 0}' in curves
