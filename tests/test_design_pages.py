"""Every design page builds: random designs (1-4 factors, ordered or not, numbers or text,
cells missing, runs failing, with and without time, TCP / UDP / ping variables present or
absent) go through the statistics product, netCDF and the page's report functions, and a
few through the real notebook: no error, no NaN, "None" or bare e-notation in the page's
text, and every chart has data.

A bounded sample runs with the tests; ``make test-designs`` (``THRUPUT_DESIGN_SEEDS``,
``THRUPUT_DESIGN_SEED0``) runs it at length.
"""

from __future__ import annotations

import json
import os
import re

import altair as alt
import nbformat
import numpy as np
import pytest
from IPython.display import HTML, Markdown

from thruput.cli.pipeline import write_netcdf, write_product
from thruput.report import campaigns as report
from thruput.report import design as page
from thruput.site.execute import execute
from thruput.stats.product import campaign_product

from .conftest import ROOT
from .designs import random_design

NOTEBOOK = ROOT / "notebooks" / "campaign.ipynb"
#: Designs tried (the long run: make test-designs).
SEEDS = int(os.environ.get("THRUPUT_DESIGN_SEEDS", "5"))
SEED0 = int(os.environ.get("THRUPUT_DESIGN_SEED0", "0"))
#: Designs also rendered by the real notebook (a kernel each).
NOTEBOOK_SEEDS = int(os.environ.get("THRUPUT_DESIGN_NOTEBOOKS", "1"))
#: What a page's text must never show: NaN, None, a number in e-notation ("8.367e+06").
BAD = re.compile(r"\b(nan|NaN|None|inf)\b|(?<![\w.-])\d+(\.\d+)?[eE][+-]?\d+(?![\w.-])")
PARAMS = {"bootstrap": 20}


def processed(tmp_path, ds):
    """``ds`` and its product as the pipeline leaves them, read back as the page does."""
    name = ds.attrs["campaign"]
    write_netcdf(ds, tmp_path / "processed" / f"{name}.nc")
    write_product(campaign_product(ds, PARAMS, PARAMS), tmp_path / "processed" / f"{name}.stats.nc")
    return report.read_processed(tmp_path / "processed", name)


def text_of(item):
    """The text a reader sees of a displayed item (tags and scripts removed)."""
    data = item.data if isinstance(item, (HTML, Markdown)) else str(item)
    data = re.sub(r"<script.*?</script>", " ", data, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", data))


def chart_problems(chart):
    """What is wrong with a chart: a dataset without rows, NaN in its spec."""
    spec = chart.to_dict()
    text = json.dumps(spec)
    problems = ["NaN in the spec"] if "NaN" in text else []
    datasets = spec.get("datasets", {})
    if not datasets or any(len(v) == 0 for v in datasets.values()):
        problems.append(f"a dataset without rows: { {k: len(v) for k, v in datasets.items()} }")
    return problems


def page_items(ds, monkeypatch):
    """Everything the campaign notebook shows of ``ds``, in order."""
    items = []
    monkeypatch.setattr(report, "display", items.append)
    monkeypatch.setattr(page, "display", items.append)
    product = report.read_product(ds)
    for result in (report.title(ds), report.hosts_intro(), report.hosts_table(ds),
                   report.statistics(ds, product), report.campaign_charts(ds, product)):
        items.append(result)
    return items


def check_page(items):
    headings = [i.data.split("\n")[0] for i in items if isinstance(i, Markdown) and i.data.startswith("#")]
    problems = [f"{h!r} shown twice" for h in sorted(set(headings)) if headings.count(h) > 1]
    for item in items:
        if isinstance(item, alt.TopLevelMixin):
            problems += chart_problems(item)
        else:
            bad = BAD.findall(text_of(item))
            if bad:
                problems.append(f"{bad[:3]} in {text_of(item)[:300]!r}")
    return problems


@pytest.mark.parametrize("seed", range(SEED0, SEED0 + SEEDS))
def test_a_random_design_builds_its_page(seed, tmp_path, monkeypatch):
    ds = processed(tmp_path, random_design(seed, max_runs=250))
    items = page_items(ds, monkeypatch)
    assert check_page(items) == []
    headings = [i.data.splitlines()[0] for i in items if isinstance(i, Markdown) and i.data.startswith("## ")]
    # every section says something: a chart, a table, or why not in one line
    for section in ("## What was varied", "## Per level", "## Levels compared", "## Plateau",
                    "## Runs that failed", "## Over time"):
        assert any(h.startswith(section) for h in headings), (section, headings)
    timed = [h for h in headings if h.startswith("## Over time:")]
    has_values = any(np.isfinite(ds[m]).any() for m in page.METRICS if m in ds)
    assert bool(timed) == bool(ds.attrs["design_time"] and has_values), headings
    # a design over time is watched per cell for changes; one without time has no period
    changes = [h for h in headings if h.startswith("## Changes over time")]
    assert bool(changes) == bool(ds.attrs["design_time"]), headings
    one_liners = [i.data.split("\n\n") for i in items if isinstance(i, Markdown) and i.data.startswith("## ")]
    assert all(len(parts) <= 2 for parts in one_liners)


def test_designs_at_their_edges(tmp_path, monkeypatch):
    """One factor of one level; no run yet; every run failed; 57 levels (no legend of more than 8); ping
    only over time; time with a factor of 30 levels (no colour)."""
    cases = [random_design(1, n_factors=1, max_levels=1, failing=0.0, name="one-level"),
             random_design(7, n_factors=3, time=True, name="no-run-yet").isel(run=slice(0, 0)),
             random_design(6, n_factors=1, min_levels=57, max_levels=57, repeats=2, failing=0.0, name="one-of-many",
                           metrics={"tcp"}),
             random_design(2, n_factors=2, failing=1.0, name="all-failed"),
             random_design(3, n_factors=2, max_levels=57, repeats=1, name="many-levels", metrics={"tcp"}),
             random_design(4, n_factors=3, metrics={"ping"}, time=True, name="ping-over-time"),
             random_design(5, n_factors=1, min_levels=30, max_levels=30, time=True, name="time-no-colour",
                           metrics={"tcp"})]
    for ds in cases:
        ds = processed(tmp_path, ds)
        items = page_items(ds, monkeypatch)
        assert check_page(items) == [], ds.attrs["campaign"]
        for item in items:                # no legend of many levels
            if isinstance(item, alt.TopLevelMixin):
                for domain in re.findall(r'"domain": \[(.*?)\]', json.dumps(item.to_dict())):
                    assert domain.count(",") < 8, (ds.attrs["campaign"], domain[:200])
        texts = " ".join(text_of(i) for i in items)
        design = report.read_product(ds)["design"].to_dataset()
        x = design.attrs["layout"] and json.loads(design.attrs["layout"])["x"]
        many = [int(n) for name, n in zip(design["name"].values, design["n_levels"].values) if name == x]
        if many and many[0] > page.MAX_X_LEVELS and "throughput" in ds:
            assert f"levels with the most runs of {many[0]} are drawn" in texts
        if ds.attrs["campaign"] == "all-failed":
            assert "did not complete" in texts and "No run reported" in texts
        if ds.attrs["campaign"] == "time-no-colour":
            assert "## Over time: throughput" in [i.data.split("\n")[0] for i in items if isinstance(i, Markdown)]


@pytest.mark.parametrize("seed", range(SEED0, SEED0 + NOTEBOOK_SEEDS))
def test_the_notebook_renders_a_random_design(seed, tmp_path):
    ds = random_design(seed + 1000, max_runs=300, time=bool(seed % 2))
    processed(tmp_path, ds)
    out = tmp_path / "page.ipynb"
    execute(NOTEBOOK, out, {"campaign": ds.attrs["campaign"], "processed": str(tmp_path / "processed")}, cwd=ROOT)
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    shown = " ".join(text_of(HTML(o.get("data", {}).get("text/html", "")))
                     + " " + o.get("data", {}).get("text/markdown", "") for o in outputs)
    assert "What was varied" in shown
    assert not BAD.findall(shown)
    assert "vegaEmbed(" in "".join(o.get("data", {}).get("text/html", "") for o in outputs) \
        or not np.isfinite(ds["throughput"]).any() if "throughput" in ds else True


@pytest.mark.parametrize("seed", range(SEED0, SEED0 + max(1, SEEDS // 2)))
def test_a_generated_campaign_of_real_logs_builds_its_page(seed, tmp_path, monkeypatch):
    """tests/test_design_generated.py's campaigns (random factors over the recorded loopback
    pile, ping beside iperf3, cells empty, runs failed) opened and paged."""
    import thruput

    from .test_design_generated import _campaign

    directory = tmp_path / f"g{seed}"
    _campaign(directory, seed)
    ds = processed(tmp_path, thruput.open_campaign(directory))
    assert check_page(page_items(ds, monkeypatch)) == []
