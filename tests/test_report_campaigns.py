"""Campaign pages and statistics when cells of the plan never ran (NaN everywhere in them)
or when a campaign has no ping logs."""

from __future__ import annotations

import re
import shutil

import pytest

from thruput import open_campaign
from thruput.campaign.importer import import_campaign
from thruput.cli import main
from thruput.cli.pipeline import write_netcdf, write_product
from thruput.report import campaigns as report
from thruput.stats.product import campaign_product

from .conftest import DATA

MINI = DATA / "campaigns" / "loopback-mini"


def campaign_without(tmp_path, name, dropped):
    """loopback-mini as campaign ``name`` with the runs whose id contains ``dropped`` gone
    (listed as explained, as `thruput record` does with runs that failed)."""
    directory = shutil.copytree(MINI, tmp_path / name)
    rows = (directory / "runs.csv").read_text().splitlines(keepends=True)
    gone = sorted({r.split(",")[0] for r in rows[1:] if dropped in r.split(",")[0]})
    (directory / "runs.csv").write_text("".join(r for r in rows if r.split(",")[0] not in gone))
    for path in (directory / "runs").glob(f"*{dropped}*"):
        path.unlink()
    meta = (directory / "campaign.yaml").read_text().replace("name: loopback-mini", f"name: {name}")
    explained = "".join(f"  - {{run: {run}, reason: iperf3 failed}}\n" for run in gone)
    (directory / "campaign.yaml").write_text(meta.replace("explained: []\n", f"explained:\n{explained}"))
    return processed(tmp_path, open_campaign(directory))


def processed(tmp_path, ds):
    """``ds`` as the pipeline leaves it: ``<c>.nc`` and ``<c>.stats.nc`` in ``tmp_path/processed``,
    read back as a page reads it."""
    name = ds.attrs["campaign"]
    write_netcdf(ds, tmp_path / "processed" / f"{name}.nc")
    write_product(campaign_product(ds), tmp_path / "processed" / f"{name}.stats.nc")
    return report.read_processed(tmp_path / "processed", name)


@pytest.fixture
def shown(monkeypatch):
    """What the report functions display, in order."""
    items = []
    monkeypatch.setattr(report, "display", items.append)
    return items


def text(html):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def test_charts_when_no_single_stream_run_completed(tmp_path, shown):
    ds = campaign_without(tmp_path, "no-one-stream", "-s1-")
    assert int(ds["throughput"].sel(streams=1).count()) == 0
    report.campaign_charts(ds)
    headings = [item.data.splitlines()[0] for item in shown if hasattr(item, "data")
                and isinstance(item.data, str) and item.data.startswith("## ")]
    assert headings == ["## Throughput over window and streams",
                        "## Per-interval throughput of the best cell's runs",
                        "## TCP congestion window and smoothed RTT",
                        "## Ping RTT with and without load", "## Window plateau per streams count"]
    plateau = text(shown[-1].data)
    assert "nan" not in plateau.lower()
    assert plateau.startswith("streams plateau (Mbit/s) onset window (KiB) onset 95% CI (KiB) "
                              "limited by 1 – – – undetermined 2 ")
    trace = report._tcp_trace_frame(ds, report.cell_summary(ds))
    # the fewest streams that ran: 2; its smallest window is also its best one
    assert float(ds["throughput"].sel(streams=2).median("repeat").idxmax()) == 65536
    assert list(trace["run"].unique()) == ["64 KiB x 2 stream"]


def test_charts_when_the_first_repeat_is_missing(tmp_path):
    ds = campaign_without(tmp_path, "no-r0", "-r0")
    trace = report._tcp_trace_frame(ds, report.cell_summary(ds))
    assert sorted(trace["run"].unique()) == ["256 KiB x 1 stream", "64 KiB x 1 stream"]
    first = ds.sel(window=65536, streams=1, repeat=1)["interval_cwnd"].dropna("interval").values
    assert list(trace[trace["run"] == "64 KiB x 1 stream"]["cwnd"]) == list(first)


def test_charts_when_nothing_completed(tmp_path, shown):
    ds = campaign_without(tmp_path, "nothing", "w")
    result = report.campaign_charts(ds)
    assert result.data == "No run of this campaign completed: there is nothing to chart."
    assert shown == []
    assert text(report.cell_table(ds).data).endswith("IQR (Mbit/s) 64 1 0 – – – – 64 2 0 – – – – 256 1 0 – – – – 256 2 0 – – – –")


def iperf_only(tmp_path):
    """loopback-mini imported without its ping logs (the plan then has no ping)."""
    logs = sorted((MINI / "runs").glob("*.iperf3.json"))
    return processed(tmp_path, open_campaign(import_campaign("iperf-only", logs, root=tmp_path)))


def test_a_campaign_without_ping_logs(tmp_path, shown):
    ds = iperf_only(tmp_path)
    assert ds.sizes["probe"] == 0
    table = text(report.cell_table(ds).data)
    assert "RTT" not in table and table.startswith("window (KiB) streams runs average (Mbit/s)")
    report.campaign_charts(ds)
    headings = [item.data.splitlines()[0] for item in shown if hasattr(item, "data")
                and isinstance(item.data, str) and item.data.startswith("## ")]
    assert "## Ping RTT with and without load" not in headings
    assert headings[-1] == "## Window plateau per streams count"
    assert set(report.read_product(ds).children) == {"cells", "plateau", "best_cells", "smallest_product"}


def test_cell_table_marks_a_cell_that_never_ran(tmp_path):
    ds = campaign_without(tmp_path, "gap", "w65536-s2")
    rows = re.findall(r"<tr.*?</tr>", report.cell_table(ds).data, flags=re.S)
    gap = [text(r) for r in rows if text(r).startswith("64 2 ")]
    assert gap == ["64 2 0 – – – – – –"]


def catalogue_of(tmp_path, names):
    params = tmp_path / "params.yaml"
    params.write_text(f"campaigns: [{', '.join(names)}]\n")
    assert main(["pipeline", "catalogue", str(tmp_path / "processed"), str(tmp_path / "report" / "catalogue.nc"),
                 "--params", str(params)]) == 0
    return text(report.catalogue(tmp_path / "report").data)


def test_catalogue_without_single_stream_runs(tmp_path):
    campaign_without(tmp_path, "no-one-stream", "-s1-")
    table = catalogue_of(tmp_path, ["no-one-stream"])
    assert "nan" not in table.lower()
    assert re.search(r"no-one-stream vm → vm 2026-11-22 tcp_sweep [0-9.]+ – [0-9.]+ / [0-9.]+$", table)


def test_catalogue_shows_the_product_numbers(tmp_path):
    directory = shutil.copytree(MINI, tmp_path / "all")
    meta = directory / "campaign.yaml"
    meta.write_text(meta.read_text().replace("name: loopback-mini", "name: all"))
    ds = processed(tmp_path, open_campaign(directory))
    product = report.read_product(ds)
    one = product["plateau"].to_dataset().sel(streams=1)
    rtt = product["rtt_pooled"]["median"]
    assert catalogue_of(tmp_path, ["all"]).endswith(
        f"all vm → vm 2026-11-22 tcp_sweep {float(product['cells']['median'].max()) / 1e6:.1f} "
        f"{float(one['onset']) / 1024:.0f} {float(rtt.sel(phase='unloaded')):.3f} / {float(rtt.sel(phase='loaded')):.3f}")


def test_comparison_page_shows_the_stage_output(tmp_path, shown):
    for name, dropped in (("zeta", "-s2-"), ("alpha", "-r1")):
        campaign_without(tmp_path, name, dropped)
    out = tmp_path / "report" / "compare-z-vs-a.nc"
    assert main(["pipeline", "compare", str(tmp_path / "processed" / "zeta.nc"),
                 str(tmp_path / "processed" / "alpha.nc"), str(out), "--name", "z-vs-a"]) == 0
    setup = text(report.comparison(tmp_path / "report", "z-vs-a").data)
    assert shown[0].data.startswith("## zeta → alpha\n")
    assert type(shown[1]).__name__ == "LayerChart"                   # differences with their CIs
    cells = text(shown[2].data)
    # only streams 1 is in both; each row: window, streams, medians, difference, CI, HL, p
    assert cells.startswith("window (KiB) streams median zeta (Mbit/s) median alpha (Mbit/s) difference (Mbit/s) "
                            "95% CI (Mbit/s) ratio alpha / zeta 95% CI (ratio) Hodges-Lehmann (Mbit/s) "
                            "Mann-Whitney p 64 1 ")
    assert len(re.findall(r"<tr>", shown[2].data)) == 2                # the 2 windows
    assert setup.startswith("key zeta alpha change")


def test_comparison_of_levels_orders_apart_is_a_ratio_on_a_log_scale():
    import numpy as np
    import pandas as pd

    from thruput.charts.comparison import difference_intervals, levels_differ

    cells = pd.DataFrame({"window": [65536.0, 131072.0], "streams": [1, 1],
                          "median_a": [9.4e8, 9.4e8], "median_b": [4.7e7, 4.8e7],
                          "difference": [-8.93e8, -8.92e8], "difference_low": [-8.95e8, -8.94e8],
                          "difference_high": [-8.9e8, -8.9e8], "ratio": [0.05, 0.051],
                          "ratio_low": [0.049, 0.05], "ratio_high": [0.051, 0.052]})
    assert levels_differ(cells)
    spec = difference_intervals(cells, "veth-1g", "delay-40ms").to_dict()
    y = spec["layer"][2]["encoding"]["y"]
    assert y["field"] == "value" and y["scale"]["type"] == "log" and "delay-40ms / veth-1g" in y["title"]
    assert spec["datasets"][spec["layer"][0]["data"]["name"]] == [{"ref": 1.0}]
    assert spec["title"] == "Ratio of median throughput, delay-40ms / veth-1g"
    near = cells.assign(median_b=cells["median_a"] * 0.8)
    assert not levels_differ(near)
    spec = difference_intervals(near, "a", "b").to_dict()
    assert spec["title"].startswith("Difference of median throughput")
    values = spec["datasets"][spec["layer"][2]["data"]["name"]]
    assert np.isclose(values[0]["value"], -893.0)


def test_comparison_setup_table_keeps_line_breaks(tmp_path, shown):
    for name, dropped in (("zeta", "-s2-"), ("alpha", "-r1")):
        campaign_without(tmp_path, name, dropped)
    import yaml
    for name, notes in (("zeta", "first line\nsecond <line>"), ("alpha", "other")):
        path = tmp_path / "processed" / f"{name}.nc"
        import xarray as xr
        ds = xr.open_dataset(path).load()
        ds.close()
        meta = __import__("json").loads(ds.attrs["metadata"])
        meta["notes"] = notes
        ds.attrs["metadata"] = __import__("json").dumps(meta)
        write_netcdf(ds, path)
    out = tmp_path / "report" / "compare-z-vs-a.nc"
    assert main(["pipeline", "compare", str(tmp_path / "processed" / "zeta.nc"),
                 str(tmp_path / "processed" / "alpha.nc"), str(out), "--name", "z-vs-a"]) == 0
    setup = report.comparison(tmp_path / "report", "z-vs-a").data
    assert "first line<br>second &lt;line&gt;" in setup and "\\n" not in setup
