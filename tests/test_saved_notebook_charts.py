"""A notebook executed and saved as JupyterLab saves it keeps its charts (issue 39).

The notebook runs in a real kernel (nbclient) with no site-build flag, so ``import thruput``
sets the notebook renderer, exactly as in JupyterLab; it is then written to disk (the saved
``.ipynb``), read back with no kernel and converted by ``jupyter nbconvert --to html`` with
the offline settings ``tools/bootstrap.sh`` installs. Each chart must be in the saved file
(a Vega-Lite spec and a static SVG, no widget reference) and drawn in the HTML as SVG marks,
and the HTML must load nothing from any host.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from thruput.charts.rendering import VEGALITE_MIME
from thruput.site.html import write_nbconvert_config

from .conftest import ROOT

CAMPAIGN = "udpmon-veth-500m"


def _bin(name):
    return str(Path(sys.executable).parent / name)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A scratch project: dvc.yaml, one small campaign normalized with its statistics."""
    project = tmp_path_factory.mktemp("saved") / "project"
    (project / "notebooks").mkdir(parents=True)
    (project / "examples").mkdir()
    shutil.copy(ROOT / "dvc.yaml", project / "dvc.yaml")
    shutil.copy(ROOT / "params.yaml", project / "params.yaml")
    shutil.copytree(ROOT / "data" / "raw" / CAMPAIGN, project / "data" / "raw" / CAMPAIGN)
    shutil.copytree(ROOT / "data" / "raw" / "veth-1g", project / "data" / "raw" / "veth-1g")
    processed = project / "data" / "processed"
    for args in (["normalize", f"data/raw/{CAMPAIGN}", f"data/processed/{CAMPAIGN}.nc"],
                 ["stats", f"data/processed/{CAMPAIGN}.nc", f"data/processed/{CAMPAIGN}.stats.nc",
                  "--params", "params.yaml"]):
        subprocess.run([_bin("thruput"), "pipeline", *args], cwd=project, check=True,
                       capture_output=True, timeout=600)
    assert (processed / f"{CAMPAIGN}.stats.nc").is_file()
    return project


def _execute_and_save(project, notebook, parameters):
    """Run ``notebook`` as JupyterLab would (a kernel in its folder), save it, read it back."""
    nb = nbformat.read(ROOT / notebook, as_version=4)
    for cell in nb.cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            cell.source += "\n" + "\n".join(f"{k} = {v!r}" for k, v in parameters.items())
    env_flag = os.environ.pop("THRUPUT_SITE_BUILD", None)
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(project / Path(notebook).parent)}}).execute()
    finally:
        if env_flag is not None:
            os.environ["THRUPUT_SITE_BUILD"] = env_flag
    saved = project / notebook
    nbformat.write(nb, saved)
    return saved, nbformat.read(saved, as_version=4)


def _charts_in(nb):
    return [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if o.get("output_type") in ("display_data", "execute_result") and VEGALITE_MIME in o.get("data", {})]


def _to_html(project, saved, tmp_path):
    config = tmp_path / "jupyter-config"
    write_nbconvert_config(config)
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(config), "JUPYTER_CONFIG_DIR": str(tmp_path / "user-config"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run([_bin("jupyter"), "nbconvert", "--to", "html", str(saved), "--output-dir", str(tmp_path)],
                   check=True, capture_output=True, env=env, timeout=600)
    return (tmp_path / (saved.stem + ".html")).read_text()


def _assert_offline_with_charts(html, n_charts):
    # nbconvert draws an SVG output inline or as an <img> of its data (nbconvert 7)
    svgs = re.findall(r"<svg.*?</svg>", html, re.S) + [
        base64.b64decode(b).decode() for b in re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", html)]
    charts = [s for s in svgs if 'class="marks"' in s]
    assert len(charts) >= n_charts, f"{len(charts)} charts drawn, expected {n_charts}"
    for svg in charts:      # marks drawn: paths, rectangles or symbols of a Vega mark group
        assert re.search(r'class="mark-(symbol|rect|line|area|rule)', svg), svg[:300]
    loaded = re.findall(r"""(?:src|href)\s*=\s*["'](https?:[^"']*)""", html)
    assert loaded == [], f"the page loads from outside: {loaded}"
    code = re.sub(r"/\*.*?\*/", "", html, flags=re.S)        # CSS comments cite their sources
    hosts = {re.match(r"https?://([^/\s\"'<>]*)", u).group(1) for u in re.findall(r"https?://[^\s\"'<>]+", code)}
    # XML namespaces and the Vega-Lite schema's name are identifiers, never fetched
    assert hosts <= {"www.w3.org", "vega.github.io"}, f"hosts named in the page: {hosts}"
    assert "application/vnd.jupyter.widget-view+json" not in html


@pytest.mark.parametrize("notebook, parameters, n_charts", [
    ("notebooks/campaign.ipynb", {"campaign": CAMPAIGN}, 1),
    ("examples/explore.ipynb", {}, 2),
])
def test_saved_notebook_keeps_its_charts_through_nbconvert(project, notebook, parameters, n_charts, tmp_path):
    saved, nb = _execute_and_save(project, notebook, parameters)
    charts = _charts_in(nb)
    assert len(charts) >= n_charts
    for output in charts:
        data = output["data"]
        assert "application/vnd.jupyter.widget-view+json" not in data
        assert data["image/svg+xml"].lstrip().startswith("<svg")
        spec = data[VEGALITE_MIME]
        spec = json.loads(spec) if isinstance(spec, str) else spec
        assert spec["$schema"].endswith("v5.json") and ("data" in spec or "datasets" in spec)
    _assert_offline_with_charts(_to_html(project, saved, tmp_path), n_charts)
