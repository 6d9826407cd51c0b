"""Study pages and the reproduction summary (thruput.report.studies): what they show is the
published numbers and the ledger, unchanged, and every chart is a valid Vega-Lite spec.

The ledger is built here from data/published (thruput.reproduce.build_ledger), the bundled
campaign is a synthetic sweep (tests/synthetic.py) with known shape, and the side-by-side
panels read the study-effects product made from it as the pipeline's stage makes it.
"""

from __future__ import annotations

import re

import altair as alt
import numpy as np
import pandas as pd
import pytest

from thruput.cli.pipeline import open_product, write_product
from thruput.stats.product import campaign_product
from thruput.stats.study_effects import study_effects_product
from thruput import published, reproduce
from thruput.report import studies

from . import synthetic
from .conftest import ROOT

PUBLISHED = ROOT / "data" / "published"
SEEDS = ["000", "001", "002", "003", "004"]


@pytest.fixture(scope="module")
def ledger():
    return reproduce.build_ledger(published.load(path=PUBLISHED))


@pytest.fixture(scope="module")
def processed(tmp_path_factory, ledger):
    """A processed folder: the ledger and one synthetic TCP sweep on a shaped path."""
    folder = tmp_path_factory.mktemp("processed")
    ledger.to_csv(folder / "reproduction.csv", index=False)
    meta = dict(synthetic.METADATA, name="shaped", title="Shaped sweep",
                path={"source": "alpha", "destination": "beta", "between": "veth, tc tbf 1 Gbit/s",
                      "capacity_bps": synthetic.CAPACITY},
                dates={"start": "2026-11-22T14:00:00Z", "end": "2026-11-22T14:30:00Z"})
    ds = synthetic.campaign(metadata=meta, repeats=3)
    ds.attrs["campaign"] = "shaped"
    ds.to_netcdf(folder / "shaped.nc")
    # as the pipeline's stats stage leaves it beside the campaign: pages read it
    write_product(campaign_product(ds), folder / "shaped.stats.nc")
    return folder


def effects_of(folder, **campaigns):
    """``folder/study-effects.nc`` as the study-effects stage writes it for these campaigns."""
    products = {name: campaign_product(ds) for name, ds in campaigns.items()}
    write_product(study_effects_product(products, campaigns), folder / "study-effects.nc")
    return folder


@pytest.fixture(scope="module")
def reports(tmp_path_factory, processed):
    """The reports folder of the pipeline's study-effects stage over the shaped sweep."""
    import xarray as xr

    with xr.open_dataset(processed / "shaped.nc") as ds:
        return effects_of(tmp_path_factory.mktemp("reports"), shaped=ds.load())


@pytest.fixture
def shown(monkeypatch):
    """Everything the study functions display, in order."""
    out = []
    monkeypatch.setattr(studies, "display", lambda *objs, **kw: out.extend(objs))
    return out


def _charts(objs):
    return [o for o in objs if isinstance(o, alt.TopLevelMixin)]


def _compile(chart):
    """The chart's Vega-Lite spec, compiled to Vega as the browser would (vl-convert ships the
    same Vega-Lite the site serves): schema-valid specs can still fail to compile."""
    vl_convert = pytest.importorskip("vl_convert")
    spec = chart.to_dict()
    vl_convert.vegalite_to_vega(spec)
    return spec


def _layer_data(chart):
    """The DataFrames of a chart's layers (inline data), in layer order."""
    layers = getattr(chart, "layer", None) or [chart]
    return [layer.data for layer in layers if isinstance(layer.data, pd.DataFrame)]


# --------------------------------------------------------------------------- values

def test_published_frame_replaces_errata_with_their_derived_value(processed):
    p = studies.published_frame(PUBLISHED, processed).set_index("id")
    # "345bits/s" in seed 000's table: printed bit/s, the ledger derives 345 Mbit/s
    assert p.at["000-table-median-kangadata03-r2", "status"] == "erratum"
    assert p.at["000-table-median-kangadata03-r2", "value_si"] == 345.0
    assert p.at["000-table-median-kangadata03-r2", "value_fixed_si"] == 345e6
    # a value that is not an erratum keeps its own exact SI value
    assert p.at["000-table-median-kangadata01", "value_fixed_si"] == 272e6
    # the ledger's note does not overwrite the transcription note
    assert "ledger_note" in p and "note" in p


def test_published_frame_without_ledger_has_empty_status():
    p = studies.published_frame(PUBLISHED)
    assert set(p["status"]) == {""}
    assert np.array_equal(p["value_fixed_si"].to_numpy(), p["value_si"].to_numpy(), equal_nan=True)


@pytest.mark.parametrize("value, digits, text", [
    (8191.999, 10, "8191.999"),         # printed values stay as printed
    (3858732054.0, 10, "3,858,732,054"),  # sequence numbers
    (5.4e-9, 10, "5.4e-09"),
    (52.978515625, 6, "52.9785"),        # derived values: 6 digits
    (float("nan"), 10, "–"),
    ("2031-02-01T07:53", 10, "2031-02-01T07:53"),
    (0.0, 10, "0"),
])
def test_ledger_cell_format(value, digits, text):
    assert studies._fmt(value, digits) == text


# --------------------------------------------------------------------------- ledger tables

def test_study_ledger_groups_rows_by_status(processed, ledger):
    page = studies.study_ledger(processed, "000").data
    rows = ledger[ledger["seed"] == "000"]
    counts = rows["status"].value_counts()
    positions = []
    for status in reproduce.STATUSES:
        n = int(counts.get(status, 0))
        heading = re.search(rf">{status}</span> {n} figures?", page)
        assert bool(heading) == (n > 0), status    # seed 000 has no measured-vs-model and no input rows
        if heading:
            positions.append(heading.start())
    assert positions == sorted(positions)          # errata first, not-reproducible last
    # consistent, bound and not-reproducible are folded (seed 000 has no input rows)
    assert page.count('<details class="thruput-fold">') == 3
    for claim in rows["claim"]:
        assert page.count(f'<td class="claim">{claim}</td>') == 1
    # the erratum's reasoning is there, split into its findings
    assert "345 Mbit/s fits its mean 335 and max 502 Mbit/s" in page


def test_study_ledger_without_ledger(tmp_path):
    assert "has not been built" in studies.study_ledger(tmp_path, "000").data


def test_ledger_summary_counts(processed, ledger):
    page = studies.ledger_summary(processed).data
    expected = reproduce.summary(ledger)
    for seed in SEEDS:
        cells = [int(v) for v in expected.loc[seed]]
        row = re.search(rf'<a href="study-{seed}.html">{seed}</a></td>(.*?)</tr>', page, re.S).group(1)
        assert [int(v) for v in re.findall(r"<td>(\d+)</td>", row)] == cells
    assert f"<td>{len(ledger)}</td>" in page


def test_ledger_problems_lists_every_differs_and_erratum_once(processed, ledger):
    page = studies.ledger_problems(processed).data
    listed = re.findall(r'<td class="claim">([^<]+)</td>', page)
    wanted = ledger.loc[ledger["status"].isin(["differs", "erratum"]), "claim"]
    assert sorted(listed) == sorted(wanted)
    assert f"{(ledger['status'] == 'erratum').sum()} errata and {(ledger['status'] == 'differs').sum()} figures" in page
    for seed in sorted(set(ledger.loc[ledger["status"].isin(["differs", "erratum"]), "seed"])):
        assert f'<a href="study-{seed}.html">Study {seed}</a>' in page


def test_status_chart_counts(processed, ledger):
    chart = studies.ledger_status_chart(processed)
    _compile(chart)
    data = chart.data
    assert data["n"].sum() == len(ledger)
    assert set(data["status"]) <= set(charts_status_domain())


def charts_status_domain():
    from thruput import charts

    assert list(charts.STATUS_DOMAIN) == list(reproduce.STATUSES)
    return charts.STATUS_DOMAIN


# --------------------------------------------------------------------------- study pages

def test_title_names_the_document_and_counts(processed, ledger):
    page = studies.study_title(PUBLISHED, "3", processed).data
    assert "<h1>Study 003: SC2000 bulk throughput to SLAC" in page
    n = int((ledger["seed"] == "003").sum())
    assert f"<b>{n} published figures</b>" in page


@pytest.mark.parametrize("seed", SEEDS)
def test_study_charts_and_theory_are_valid_specs(seed, processed, shown):
    studies.study_charts(PUBLISHED, seed, processed)
    studies.study_theory(PUBLISHED, seed, processed)
    specs = [_compile(c) for c in _charts(shown)]
    assert len(specs) >= 2
    for spec in specs:
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_seed_000_host_chart_shows_the_table(processed, shown):
    studies.study_charts(PUBLISHED, "000", processed)
    ranges, points, flagged = _layer_data(_charts(shown)[0])
    med = points[(points["category"] == "Kangadata03 - 2") & (points["statistic"] == "median")].iloc[0]
    assert med["value"] == 345.0 and med["status"] == "erratum" and med["quote"] == "345bits/s"
    assert list(flagged["category"]) == ["Kangadata03 - 2"]
    # IQR 124 Mbit/s drawn centred on the 272 Mbit/s median of Kangadata01
    bar = ranges.set_index("category").loc["Kangadata01"]
    assert (bar["low"], bar["high"]) == (210.0, 334.0)
    assert len(points) == 8 * 3


def test_seed_004_ping_chart_flags_the_median(processed, shown):
    studies.study_charts(PUBLISHED, "004", processed)
    _, points, flagged = _layer_data(_charts(shown)[0])
    assert len(points) == 16
    assert flagged[["category", "statistic", "value"]].values.tolist() == [
        ["September · 1480 bytes · 101 pings", "median", 17.615]]


def test_seed_001_reno_points_sit_on_the_200_ms_line(processed, shown):
    studies.study_theory(PUBLISHED, "001", processed)
    mathis = _charts(shown)[0]
    curves, points = _layer_data(mathis)[0], _layer_data(mathis)[-1]
    assert points["x"].tolist() == [5.4e-5, 5.4e-7, 5.4e-9, 5.4e-11]
    assert points["y"].tolist() == [10.0, 100.0, 1000.0, 10000.0]
    line = curves[curves["label"].str.contains("200 ms")]
    # on the line within the table's 2 significant figures
    at = np.interp(np.log10(points["x"]), np.log10(line["x"].to_numpy()), np.log10(line["y"].to_numpy()))
    assert np.allclose(10 ** at, points["y"], rtol=0.01)


def test_side_by_side_marks_the_new_measurement(reports, processed, shown):
    studies.study_side_by_side(reports, "000", PUBLISHED, processed)
    callouts = [o.data for o in shown if hasattr(o, "data") and "thruput-new" in str(o.data)]
    assert len(callouts) == 2                    # window plateau, RTT under load
    for text in callouts:
        assert "New measurement on different hardware, not the original data." in text
        assert 'href="campaign-shaped.html"' in text and "veth, tc tbf 1 Gbit/s" in text
    pairs = [c for c in _charts(shown) if isinstance(c, alt.HConcatChart)]
    assert len(pairs) == 2
    for pair in pairs:
        spec = _compile(pair)
        assert spec["hconcat"][1]["title"]["subtitle"].startswith("NEW measurement")


def test_side_by_side_without_a_matching_campaign(reports, processed, shown):
    studies.study_side_by_side(reports, "001", PUBLISHED, processed)   # needs a UDPmon campaign
    assert len(shown) == 1 and "No bundled campaign" in shown[0].data


def test_a_campaign_without_the_effect_is_not_shown(tmp_path, shown):
    # RTT 1 us: even 8 KiB per stream exceeds the capacity, so no window is limiting
    flat = synthetic.campaign(rtt_ms=0.001, repeats=2)
    flat.attrs["campaign"] = "flat"
    studies.study_side_by_side(effects_of(tmp_path, flat=flat), "004", PUBLISHED)
    assert len(shown) == 1
    assert "No bundled campaign shows window-limited throughput and its plateau yet" in shown[0].data
    assert "by at least 1.5 x" in shown[0].data


def test_side_by_side_before_the_stage_ran(tmp_path, shown):
    studies.study_side_by_side(tmp_path, "000", PUBLISHED)
    assert len(shown) == 1 and "`thruput pipeline study-effects`" in shown[0].data


def test_quotes_lose_markdown_bold_only(processed):
    p = studies.published_frame(PUBLISHED, processed).set_index("id")
    assert p.at["001-370dle-32-slope", "quote"] == "Latency Slope 0.0286 μ s/byte"
    page = studies.study_ledger(processed, "001").data        # a measured-vs-model row
    assert "Latency Slope 0.0286 μ s/byte" in page and "**" not in page


def test_side_by_side_of_study_002(reports, processed, shown):
    studies.study_side_by_side(reports, "002", PUBLISHED, processed)
    callouts = [o.data for o in shown if hasattr(o, "data") and "thruput-new" in str(o.data)]
    assert len(callouts) == 2                    # streams (a pair), RTT under load (the campaign alone)
    assert "two charts" in callouts[0] and "two charts" not in callouts[1]
    pair, rtt = _charts(shown)
    _compile(pair), _compile(rtt)
    assert isinstance(pair, alt.HConcatChart) and isinstance(rtt, alt.LayerChart)
    # the published maximum on the left: > 118 Mbit/s at 8 streams, flagged by the ledger
    left = pair.hconcat[0]
    point = _layer_data(left)[-1]
    assert point[["x", "y", "status"]].values.tolist() == [[8, 118.0, "differs"]]
    # the RTT chart carries the published five-fold growth as a rule at 5 x the unloaded RTT
    rules = _layer_data(rtt)[1]
    assert rules["rtt"].iloc[1] == pytest.approx(5 * rules["rtt"].iloc[0])


def test_differences_chart(processed, ledger):
    chart = studies.ledger_differences_chart(processed)
    _compile(chart)
    diffs = _layer_data(chart)[-1].set_index("claim")
    differs = ledger[ledger["status"] == "differs"]
    assert set(diffs.index) <= set(differs["claim"])
    # 000-iperf-avg-mbit: 425 printed, 426 derived (the table's value of the same run)
    assert diffs.at["000-iperf-avg-mbit", "percent"] == pytest.approx((425 - 426) / 426 * 100)
    # a bound check: 118 Mbit/s against 8 x 64 KiB / 50.1 ms
    bound = 8 * 65536 * 8 / 0.05013 / 1e6
    assert diffs.at["002-sep2001-max", "percent"] == pytest.approx((118 - bound) / bound * 100)


@pytest.fixture(scope="module")
def processed_udp(tmp_path_factory, ledger):
    """The bundled UDPmon campaign (data/raw/udpmon-veth-500m), normalized as the pipeline does."""
    from thruput.campaign import open_campaign
    from thruput.cli.pipeline import write_netcdf

    folder = tmp_path_factory.mktemp("processed-udp")
    ledger.to_csv(folder / "reproduction.csv", index=False)
    ds = open_campaign(ROOT / "data" / "raw" / "udpmon-veth-500m")
    write_netcdf(ds, folder / "udpmon-veth-500m.nc")
    write_product(campaign_product(ds), folder / "udpmon-veth-500m.stats.nc")
    return effects_of(folder, **{"udpmon-veth-500m": ds})


def test_side_by_side_of_study_001_with_the_udpmon_campaign(processed_udp, shown):
    studies.study_side_by_side(processed_udp, "001", PUBLISHED, processed_udp)
    callouts = [o.data for o in shown if hasattr(o, "data") and "thruput-new" in str(o.data)]
    assert len(callouts) == 2                    # latency vs frame size, UDP rate vs spacing
    assert all('href="campaign-udpmon-veth-500m.html"' in c for c in callouts)
    pair, udp = _charts(shown)
    _compile(pair), _compile(udp)
    # left: the published slopes only (four boards, measured and expected), no campaign row
    left = pair.hconcat[0]   # both layers share one frame, which Altair hoists to the layer chart
    slopes = left.data if isinstance(left.data, pd.DataFrame) else left.layer[1].data
    assert len(slopes) == 8 and not slopes["board"].str.contains("campaign").any()
    assert sorted(slopes.loc[slopes["kind"].str.startswith("measured"), "slope"]) == [0.009, 0.0146, 0.0231, 0.0286]
    text = [o.data for o in shown if hasattr(o, "data") and "fitted slope" in str(o.data)][0]
    # the campaign page's fit (the statistics product's latency_fit of the main scan), not a second one
    fit = open_product(processed_udp / "udpmon-veth-500m.stats.nc")["latency_fit"]
    assert f"fitted slope is {float(fit['slope']):.5f} ± {float(fit['slope_se']):.5f} us/byte" in text
    assert f"(intercept {float(fit['intercept']):.1f} us)" in text
    assert len(pair.hconcat[1].layer[0].data) == int(fit["n"]) == 23


# --------------------------------------------------------------------------- a study by YAML alone

#: A sixth study as a user adds it: a CSV of its published numbers and a claims.yaml, no
#: page.yaml and no code.
_STUDY_CSV = """id,seed,section,quote,value,unit,measures,statistic,src,dst,window,streams,tool,date,group,config,note
005-window,005,Tuning,a 64 KB window,64,KiB,window,value,a,b,,,iperf,,,,
005-rtt,005,Tuning,the RTT was 10 ms,10,ms,rtt,min,a,b,,,ping,,,,
005-rate,005,Tuning,we got 52 Mbit/s,52,Mbit/s,throughput,max,a,b,64 KiB,1,iperf,,005-runs,,
005-rate-mean,005,Tuning,on average 45 Mbit/s,45,Mbit/s,throughput,mean,a,b,64 KiB,1,iperf,,005-runs,,
005-rate-min,005,Tuning,at worst 30 Mbit/s,30,Mbit/s,throughput,min,a,b,64 KiB,1,iperf,,005-runs,,
005-mbyte,005,Tuning,or 6.5 MByte/s,6.5,MByte/s,throughput,max,a,b,64 KiB,1,iperf,,,,
005-link,005,Setup,on a gigabit link,0.9,Gbit/s,throughput,value,a,b,,,,,,,
005-hosts,005,Setup,two hosts,2,count,hosts,value,,,,,,,,,
"""
_STUDY_CLAIMS = {
    "title": "A made-up study added by YAML alone",
    "checks": [
        {"claim": "005-rate", "at_most": "window_limited_throughput(window, rtt)",
         "inputs": {"window": "005-window", "rtt": "005-rtt"}},
        {"claim": "005-mbyte", "derive": "rate", "inputs": {"rate": "005-rate"}},
        {"claim": "005-link", "at_most": "GIGE_BPS"},
        {"claim": "005-window", "input": True},
        {"claim": "005-rtt", "input": True},
    ],
}


@pytest.fixture
def sixth_study(tmp_path, monkeypatch):
    """Study 005 in a folder outside the package, found through THRUPUT_STUDIES."""
    import yaml

    from thruput import studies as study_data

    (tmp_path / "studies" / "seed_005").mkdir(parents=True)
    (tmp_path / "studies" / "seed_005" / "claims.yaml").write_text(yaml.safe_dump(_STUDY_CLAIMS, sort_keys=False))
    (tmp_path / "published").mkdir()
    (tmp_path / "published" / "seed_005.csv").write_text(_STUDY_CSV)
    monkeypatch.setenv(study_data.STUDIES_ENV, str(tmp_path / "studies"))
    monkeypatch.setattr(study_data, "SEEDS", study_data._scan())
    study_data._load.cache_clear()
    yield tmp_path
    study_data._load.cache_clear()


def test_a_study_by_yaml_alone_has_a_ledger(sixth_study):
    from thruput import studies as study_data

    assert "005" in study_data.SEEDS
    assert study_data.page("005")["title"] == "A made-up study added by YAML alone"   # no page.yaml
    led = reproduce.build_ledger(published.load(path=sixth_study / "published")).set_index("claim")
    assert led["status"].to_dict() == {
        "005-window": "input", "005-rtt": "input",
        "005-rate": "consistent",            # 52 <= 64 KiB / 10 ms = 52.4 Mbit/s, from published figures
        "005-rate-mean": "consistent", "005-rate-min": "consistent",   # order statistics of 005-runs
        "005-mbyte": "consistent",           # the same figure in another unit
        "005-link": "bound",                 # <= GigE: a limit no published figure enters
        "005-hosts": "not-reproducible"}
    assert led.at["005-rate", "derived_value"] == pytest.approx(65536 * 8 / 0.01 / 1e6)


def test_a_study_by_yaml_alone_gets_a_page(sixth_study):
    """notebooks/study.ipynb, executed as the page stage runs it, on the new study: its
    title, its ledger and generic charts of its tables, with no page.yaml and no code."""
    from thruput.site.execute import execute

    processed = sixth_study / "processed"
    processed.mkdir()
    reproduce.build_ledger(published.load(path=sixth_study / "published")).to_csv(
        processed / "reproduction.csv", index=False)
    target = sixth_study / "study-005.ipynb"
    nb = execute(ROOT / "notebooks" / "study.ipynb", target,
                 {"seed": "005", "published": str(sixth_study / "published"), "processed": str(processed),
                  "reports": str(sixth_study / "reports")}, cwd=ROOT, timeout=300)
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "\n".join(str(o.get("data", {}).get("text/html", "")) + str(o.get("data", {}).get("text/markdown", ""))
                     + str(o.get("text", "")) for o in outputs)
    assert "Study 005: A made-up study added by YAML alone" in text
    assert "8 published figures</b> in the reproduction ledger" in text
    assert "005-rate" in text and "No theory curves for this study." in text
    assert "has not been built" in text                      # no study-effects product: said so
    charts_html = [o["data"]["text/html"] for o in outputs if "vegaEmbed(" in o.get("data", {}).get("text/html", "")]
    assert len(charts_html) == 7                             # the status counts and six tables x units
    assert "Study 005: published figures by reproduction status" in charts_html[0]
    assert sum("005-runs: published vs derived (Mbit/s)" in h for h in charts_html) == 1
    assert sum("Tuning: published vs derived (KiB)" in h for h in charts_html) == 1
    assert sum("005-rate \\u00b7 derived" in h for h in charts_html) == 1   # the bound beside the printed 52


#: The same study with a page of its own, still without code: the sections, curves and text
#: are declared in page.yaml and drawn by the generic chart kinds of thruput.report.studies.
_STUDY_PAGE = {
    "title": "A made-up study with a page of its own",
    "summary": "Two hosts, one window, a few iperf runs.",
    "curves": [{"curve": "window_limit", "label": "1 stream, RTT {rtt_ms:g} ms", "rtt": "005-rtt",
                "x": {"geomspace": [8, 1024, 8]}, "cap": "GIGE_BPS"}],
    "published": [
        {"kind": "bars", "claims": ["005-rate", "005-link"], "labels": ["best run", "the link"],
         "kinds": ["measured", "capacity"], "unit": "Mbit/s", "axis": "throughput (Mbit/s)",
         "text": "rates", "title": "rates_title"},
        {"kind": "statistic_ranges", "group": "005-runs", "category": "the runs", "unit": "Mbit/s",
         "statistics": {"min": "minimum", "mean": "average", "max": "maximum"},
         "range": {"low": "min", "high": "max", "what": "min to max"}, "axis": "throughput (Mbit/s)",
         "text": "runs", "title": "runs_title"}],
    "theory": [
        {"kind": "theory", "curve": "window_limit", "points": "windows", "x_scale": "log",
         "values": {"limit": {"formula": "window_limited_throughput(w, rtt) / 1e6",
                              "inputs": {"w": "005-window", "rtt": "005-rtt"}}},
         "x_title": "window (KiB)", "y_title": "throughput (Mbit/s)", "text": "theory", "title": "theory_title"}],
    "text": {"rates": "### The rates\n\nThe best run beside the link.", "rates_title": "Study 005: rates",
             "runs": "### The runs\n\nWorst, average and best run.", "runs_title": "Study 005: runs",
             "theory": "### One window per RTT\n\n64 KiB over 10 ms carry at most {limit:.1f} Mbit/s.",
             "theory_title": "Study 005: window / RTT"},
}


def _page_outputs(nb):
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "\n".join(str(o.get("data", {}).get("text/html", "")) + str(o.get("data", {}).get("text/markdown", ""))
                     + str(o.get("text", "")) for o in outputs)
    charts_html = [o["data"]["text/html"] for o in outputs if "vegaEmbed(" in o.get("data", {}).get("text/html", "")]
    return text, charts_html


def test_a_study_with_a_page_of_its_own_needs_no_code(sixth_study):
    """A study folder holding only data (claims.yaml, page.yaml, its CSV) gets the page its
    page.yaml declares: its sections, its theory line and the text computed from its claims."""
    import yaml

    from thruput.site.execute import execute
    from thruput import studies as study_data

    (sixth_study / "studies" / "seed_005" / "page.yaml").write_text(
        yaml.safe_dump(_STUDY_PAGE, sort_keys=False, allow_unicode=True))
    study_data._load.cache_clear()
    processed = sixth_study / "processed"
    processed.mkdir()
    reproduce.build_ledger(published.load(path=sixth_study / "published")).to_csv(
        processed / "reproduction.csv", index=False)
    nb = execute(ROOT / "notebooks" / "study.ipynb", sixth_study / "study-005.ipynb",
                 {"seed": "005", "published": str(sixth_study / "published"), "processed": str(processed),
                  "reports": str(sixth_study / "reports")}, cwd=ROOT, timeout=300)
    text, charts_html = _page_outputs(nb)
    assert "Study 005: A made-up study with a page of its own" in text
    assert "Two hosts, one window, a few iperf runs." in text
    assert "### The rates" in text and "### The runs" in text
    assert "64 KiB over 10 ms carry at most 52.4 Mbit/s." in text     # 65536 x 8 / 0.01 s
    assert "No theory curves for this study." not in text
    assert "8 published figures</b> in the reproduction ledger" in text
    assert len(charts_html) == 3                                       # two sections, one theory chart
    for title in ("Study 005: rates", "Study 005: runs", "Study 005: window / RTT"):
        assert sum(title in h for h in charts_html) == 1
    assert "1 stream, RTT 10 ms" in charts_html[2]                     # the declared curve's label


def test_an_unknown_section_kind_names_the_study_and_the_kinds(sixth_study, shown):
    import yaml

    from thruput import studies as study_data

    (sixth_study / "studies" / "seed_005" / "page.yaml").write_text(
        yaml.safe_dump({"published": [{"kind": "pie"}]}))
    study_data._load.cache_clear()
    with pytest.raises(study_data.StudyError, match=r"study 005: page.yaml: section kind 'pie' is not one of "
                                                    r"statistic_ranges, .*bars"):
        studies.study_charts(sixth_study / "published", "005")
