"""A page is the same bytes wherever it is built (issue 39: a fresh clone's ``make site``
changed ``dvc.lock``).

The page stage runs twice, in two copies of the project at different paths, with another
time zone, locale and hash seed, and must write identical notebooks; a chart's spec keeps
12 significant digits, so a last-bit difference of NumPy's vectorised functions between
two CPUs leaves the page unchanged.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import pytest

from thruput.charts import rendering

from .conftest import ROOT

CAMPAIGN = "udpmon-veth-500m"


def _bin(name):
    return str(Path(sys.executable).parent / name)


def test_a_last_bit_difference_leaves_the_chart_unchanged():
    x = np.logspace(0, 3, 50)
    y = np.power(x, 0.5) * np.exp(-x / 500)
    nudged = np.nextafter(y, np.inf)                  # one ulp: another CPU's np.power
    assert (nudged != y).all()

    def html(values):
        chart = alt.Chart(pd.DataFrame({"x": x, "y": values})).mark_line().encode(x="x:Q", y="y:Q")
        # (the id's last part counts the charts of one kernel: one page's)
        return re.sub(r"(vis-[0-9a-f]+)-\d+", r"\1", rendering._site_renderer(chart.to_dict())["text/html"])

    assert html(y) == html(nudged)
    assert rendering.canonical_spec({"a": [0.1 + 0.2, None, 3, "t"], "b": 1 / 3}) == {
        "a": [0.3, None, 3, "t"], "b": 0.333333333333}
    bundle, _ = rendering.notebook_bundle(alt.Chart(pd.DataFrame({"x": x, "y": y})).mark_point().encode(
        x="x:Q", y="y:Q").to_dict())
    assert bundle == rendering.notebook_bundle(alt.Chart(pd.DataFrame({"x": x, "y": nudged})).mark_point().encode(
        x="x:Q", y="y:Q").to_dict())[0]


def _project(base):
    project = base / "project"
    (project / "notebooks").mkdir(parents=True)
    for name in ("dvc.yaml", "params.yaml", "notebooks/campaign.ipynb"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "data" / "raw" / CAMPAIGN, project / "data" / "raw" / CAMPAIGN)
    return project


def _build_page(project, env):
    run = dict(cwd=project, check=True, capture_output=True, timeout=900, env=env)
    subprocess.run([_bin("thruput"), "pipeline", "normalize", f"data/raw/{CAMPAIGN}",
                    f"data/processed/{CAMPAIGN}.nc"], **run)
    subprocess.run([_bin("thruput"), "pipeline", "stats", f"data/processed/{CAMPAIGN}.nc",
                    f"data/processed/{CAMPAIGN}.stats.nc", "--params", "params.yaml"], **run)
    out = f"build/pages/notebooks/campaign-{CAMPAIGN}.ipynb"
    subprocess.run([_bin("thruput"), "site", "page", "notebooks/campaign.ipynb", out,
                    "-p", f"campaign={CAMPAIGN}"], **run)
    return {p.relative_to(project).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((project / "data" / "processed").glob("*")) + [project / out]}


@pytest.mark.slow
def test_the_page_stage_writes_the_same_bytes_in_another_clone(tmp_path):
    first = _build_page(_project(tmp_path / "a"), {**os.environ, "TZ": "UTC", "PYTHONHASHSEED": "1"})
    second = _build_page(_project(tmp_path / "b" / "deeper" / "fresh-clone"),
                         {**os.environ, "TZ": "Pacific/Auckland", "LC_ALL": "C", "PYTHONHASHSEED": "2"})
    assert first == second
    assert f"build/pages/notebooks/campaign-{CAMPAIGN}.ipynb" in first
