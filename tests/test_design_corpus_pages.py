"""The pages of real piles imported as designs (../shared/corpus/real, skipped when absent),
built as the site builds them: imported by ``thruput campaign import``, normalized and given
their product by the pipeline's commands, and ``notebooks/campaign.ipynb`` executed.

- starlink-drive as operator x test x direction over time: the operators compared each way
  (throughput per test and direction, ping RTT per operator), series in short bins, no
  before/after period, no "day";
- M-Lab ndt7 daily archives as server site x client network: the sites compared per
  direction, pooled over the client networks each measured at one site; with 57 client
  networks (the genuine results copied with the client's address changed) no legend of
  57 entries.

Every number checked is the one each log gives read alone (``thruput.read``).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
import yaml
from IPython.display import HTML

import thruput
from thruput.cli import main
from thruput.report import campaigns as report
from thruput.report.design import number_text
from thruput.site.execute import execute

from .conftest import ROOT
from .test_design_corpus import _tgz
from .test_design_page_e2e import BAD, DRIVE_PATTERN, STATS
from .test_design_pages import text_of

pytestmark = [pytest.mark.slow, pytest.mark.kernel]

NOTEBOOK = ROOT / "notebooks" / "campaign.ipynb"
NDT7_PATTERN = r"mlab\d-(?P<site>[a-z0-9]+)-ndt/"
#: What a page of a design without periods must not say.
PERIODS = re.compile(r"\b(before|after|change points?|cycles?|days?|period [ab])\b", re.IGNORECASE)


def page(tmp_path: Path, name: str, *import_args: str):
    """Import, normalize, compute the product and execute the campaign notebook: the
    campaign's Dataset, its product, the page's text and its chart specs."""
    assert main(["campaign", "import", name, *import_args, "--root", str(tmp_path)]) == 0
    processed = tmp_path / "processed"
    processed.mkdir()
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(STATS))
    assert main(["pipeline", "normalize", str(tmp_path / name), str(processed / f"{name}.nc")]) == 0
    assert main(["pipeline", "stats", "--params", str(params), str(processed / f"{name}.nc"),
                 str(processed / f"{name}.stats.nc")]) == 0
    out = tmp_path / "page.ipynb"
    execute(NOTEBOOK, out, {"campaign": name, "processed": str(processed)}, cwd=ROOT)
    outputs = [o for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code" for o in c.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    html = [o.get("data", {}).get("text/html", "") for o in outputs]
    words = " ".join([text_of(HTML(h)) for h in html if "vegaEmbed(" not in h]
                     + [re.sub(r"\s+", " ", o.get("data", {}).get("text/markdown", "")) for o in outputs])
    charts = [h for h in html if "vegaEmbed(" in h]
    ds = report.read_processed(processed, name)
    return ds, report.read_product(ds), words, charts


def row(*cells) -> str:
    """A table row as the page's text gives it."""
    return " ".join(str(c) for c in cells)


def own_numbers(directory: Path, ds):
    """Per run, the throughput (bit/s) or median RTT (ms) its log gives read alone."""
    out = {}
    for run, source in zip(ds.run.values, ds.source.values):
        one = thruput.read(directory / str(source))
        out[str(run)] = (float(one.throughput.values[0]) if "throughput" in one
                         else float(np.nanmedian(one.rtt.where(one.status == "reply").values)))
    return out


def test_the_drive_page_compares_the_operators_each_way(corpus, tmp_path):
    ds, product, words, charts = page(tmp_path, "drive", str(corpus / "real/starlink-drive"), "--kind", "design",
                                      "--over-time", f"--pattern={DRIVE_PATTERN}")
    assert not BAD.findall(words)
    # a design over time is watched for changes per series, and a drive's cells of 3 to 5
    # runs are too short for one: each such section says so in one line; no other section
    # speaks of periods, before and after, or days (the product's list of its variables
    # names the changes group's, "before [bit/s]")
    watched = re.compile(r"## Changes over time.*?(?=## |$)")
    assert watched.findall(words) and all("no change to find" in w for w in watched.findall(words))
    rest = watched.sub("", words)
    assert [m.group() for m in PERIODS.finditer(rest) if rest[m.end():m.end() + 2] != " ["] == []
    own = own_numbers(tmp_path / "drive", ds)
    ok = ds.outcome.values == "ok"

    def median(op, test, way, *, k):
        runs = ok & (ds.operator.values == op) & (ds.test.values == test) & (ds.direction.values == way)
        return float(np.median([own[r] for r in ds.run.values[runs]])) * k, int(runs.sum())

    assert "### operator: each level over att, per test and direction" in words
    for op in ("starlink", "verizon"):
        for test in ("tcp", "udp"):
            for way in ("downlink", "uplink"):
                (a, na), (b, nb) = median("att", test, way, k=1e-6), median(op, test, way, k=1e-6)
                assert na == nb == 3
                assert row(op, test, way, "3 / 3", number_text(a), number_text(b), number_text(b / a)) in words
                got = product["compare/operator"].to_dataset().sel(operator=op, test=test, direction=way)
                assert float(got["ratio"]) == pytest.approx(b / a, rel=1e-12)
                assert got["ratio_low"] <= got["ratio"] <= got["ratio_high"]
    # ping has no direction: the operators' RTT compared per test alone, and drawn
    assert "### operator: median ping RTT of each level over att, per test" in words
    for op in ("starlink", "verizon"):
        (a, na), (b, nb) = median("att", "ping", "", k=1.0), median(op, "ping", "", k=1.0)
        assert row(op, "ping", f"{na} / {nb}", number_text(a), number_text(b), number_text(b / a)) in words
    assert "No run reported a median ping RTT" not in words
    # a drive of half an hour is binned in seconds, not in days; no before/after
    span_s = float((ds.time.values.max() - ds.time.values.min()) / np.timedelta64(1, "s"))
    bins = product["time/throughput"].to_dataset()
    assert 1 <= int(bins.attrs["bin_s"]) <= span_s / 30
    assert f"per {int(bins.attrs['bin_s'])} s bin, one line per test, one row per direction" in words
    assert json.loads(bins.attrs["by"]) == ["test", "direction"]
    assert any('"format": "%H:%M"' in c for c in charts)          # 24-hour times of one afternoon
    assert not any(name.startswith(("period", "cycle")) for name in product.children)
    changes = [product[f"changes/{m}"].to_dataset() for m in product["changes"].children]
    assert changes and all(c.sizes.get("change", 0) == 0 for c in changes)   # too few runs a cell
    assert len(charts) >= 8


def test_mlab_archives_page_compares_the_sites(corpus, tmp_path):
    """The three genuine results in two daily archives (lga03: a download and an upload of
    2020; syd02: a download of 2022)."""
    files = sorted((corpus / "real/ndt7").glob("ndt7-*.json"))
    pile = tmp_path / "in"
    pile.mkdir()
    _tgz(pile / "20200318T000000.000000Z-ndt7-mlab1-lga03-ndt.tgz",
         {f"2020/03/18/{f.name}.gz": gzip.compress(f.read_bytes()) for f in files if "2020" in f.name})
    _tgz(pile / "20221130T000000.000000Z-ndt7-mlab2-syd02-ndt.tgz",
         {f"2022/11/30/{f.name}.gz": gzip.compress(f.read_bytes()) for f in files if "2022" in f.name})
    ds, product, words, charts = page(tmp_path, "mlab", str(pile), f"--pattern={NDT7_PATTERN}",
                                      "--factor-from-log", "client_network,direction")
    assert not BAD.findall(words)
    own = own_numbers(tmp_path / "mlab", ds)
    download = {str(s): own[str(r)] / 1e6 for r, s, d in zip(ds.run.values, ds.site.values, ds.direction.values)
                if d == "reverse"}
    assert "### site: each level over lga03, per direction" in words
    assert "Pooled over client_network: each of its levels has runs of one site only." in words
    ratio = download["syd02"] / download["lga03"]
    assert row("syd02 reverse 1 / 1", number_text(download["lga03"]), number_text(download["syd02"]),
               number_text(ratio), number_text(ratio), "–", number_text(ratio)) in words
    compared = product["compare/site"].to_dataset()
    assert json.loads(compared.attrs["by"]) == ["direction"] and json.loads(compared.attrs["nested"]) == {"client_network": "site"}
    assert float(compared.sel(site="syd02", direction="reverse")["ratio"]) == pytest.approx(ratio, rel=1e-12)
    assert "Not a design over time" in words and charts


def test_57_client_networks_at_three_sites_make_a_readable_page(corpus, tmp_path):
    """114 results (a download and an upload from each of 57 client networks, 19 per site):
    the genuine results with the client's address changed, each network's /24 its own."""
    files = {"".join(re.match(r"ndt7-(download|upload)-(\d{4})", f.name).groups()): json.loads(f.read_text())
             for f in sorted((corpus / "real/ndt7").glob("ndt7-*.json"))}
    assert set(files) == {"download2020", "download2022", "upload2020"}
    sites = {"lga03": "download2020", "syd02": "download2022", "ams08": "download2020"}
    pile = tmp_path / "in"
    pile.mkdir()
    for k, (site, download) in enumerate(sites.items()):
        members = {}
        for i in range(19 * k, 19 * (k + 1)):
            for kind in (download, "upload2020"):
                result = dict(files[kind], ClientIP=f"10.20.{i}.7")
                members[f"2024/01/02/ndt7-{kind[:-4]}-{i:02d}.json.gz"] = gzip.compress(json.dumps(result).encode())
        _tgz(pile / f"20240102T000000.000000Z-ndt7-mlab1-{site}-ndt.tgz", members)
    ds, _, words, charts = page(tmp_path, "mlab57", str(pile), f"--pattern={NDT7_PATTERN}",
                                      "--factor-from-log", "client_network,direction")
    assert ds.sizes["run"] == 114 and len(set(ds.client_network.values)) == 57
    assert not BAD.findall(words)
    # client networks along x (40 of 57 drawn), sites as colour, directions as columns
    assert "x: client_network, colour: site, columns: direction" in words
    assert "The 40 client_network levels with the most runs of 57 are drawn." in words
    assert "client_network: the 12 levels with the most runs of 57 are listed." in words
    for chart in charts:
        for domain in re.findall(r'"domain": \[(.*?)\]', chart):
            assert domain.count(",") < 8, domain[:200]
    # the sites compared per direction, pooled over the client networks
    own = own_numbers(tmp_path / "mlab57", ds)
    assert "### site: each level over ams08, per direction" in words
    for site in ("lga03", "syd02"):
        for way in ("forward", "reverse"):
            a = np.median([own[r] for r, s, d in zip(ds.run.values, ds.site.values, ds.direction.values)
                           if s == "ams08" and d == way]) / 1e6
            b = np.median([own[r] for r, s, d in zip(ds.run.values, ds.site.values, ds.direction.values)
                           if s == site and d == way]) / 1e6
            assert row(site, way, "19 / 19", number_text(a), number_text(b), number_text(b / a)) in words
    # the directions compared per site (each client network is at one site: pooled)
    assert "### direction: each level over forward, per site" in words
    assert words.count("Pooled over client_network: each of its levels has runs of one site only.") == 2
    for site in sites:
        way = {d: np.median([own[r] for r, s, d2 in zip(ds.run.values, ds.site.values, ds.direction.values)
                             if s == site and d2 == d]) / 1e6 for d in ("forward", "reverse")}
        assert row("reverse", site, "19 / 19", number_text(way["forward"]), number_text(way["reverse"]),
                   number_text(way["reverse"] / way["forward"])) in words
