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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_has_a_parameters_cell(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1


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
