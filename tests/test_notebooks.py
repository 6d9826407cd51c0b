"""The site's notebooks stay thin and clean: no outputs in git, a parameters cell, and code
cells that only call the library (``thruput.report`` / ``thruput.charts``)."""

from __future__ import annotations

import ast

import nbformat
import pytest

from .conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: Names a notebook cell may call: the library's presentation layer only.
ALLOWED_CALLS = {"report", "charts"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: outputs in git"


def _parameters_cells(path):
    """The cells of the notebook at ``path`` tagged ``parameters``."""
    nb = nbformat.read(path, as_version=4)
    return [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_has_a_parameters_cell(path):
    assert len(_parameters_cells(path)) == 1


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_code_only_calls_the_library(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                pytest.fail(f"{path.name}: plain import in a cell: {ast.unparse(node)}")
            if isinstance(node, ast.ImportFrom):
                assert node.module == "thruput", f"{path.name}: imports from {node.module}"
            if isinstance(node, ast.Call):
                root = node.func
                while isinstance(root, ast.Attribute):
                    root = root.value
                assert isinstance(root, ast.Name) and root.id in ALLOWED_CALLS, \
                    f"{path.name}: calls {ast.unparse(node.func)}; notebooks call report/charts only"
            if isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.Lambda)):
                pytest.fail(f"{path.name}: logic in a cell: {ast.unparse(node)[:60]}")


def _defaults(path):
    """The names the notebook's parameters cell sets, with their literal values."""
    (cell,) = _parameters_cells(path)
    return {t.id: ast.literal_eval(node.value) for node in ast.parse(cell.source).body
            if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}


def test_each_notebook_opens_on_something_the_pipeline_bundles():
    """Opened in JupyterLab as it is (no parameters injected), each notebook's defaults name
    a campaign, monitor campaign, study or comparison of params.yaml, so that Run All works
    on the bundled data (monitor.ipynb named a test fixture's campaign until 26 Nov 2026)."""
    import yaml

    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    named = {"campaign.ipynb": ("campaign", params["campaigns"]),
             "monitor.ipynb": ("campaign", params["monitors"]),
             "monitor-health.ipynb": ("campaign", params["monitors"]),
             "study.ipynb": ("seed", params["studies"]),
             "compare.ipynb": ("comparison", list(params["comparisons"]))}
    for name, (key, bundled) in named.items():
        assert _defaults(ROOT / "notebooks" / name)[key] in bundled, name
