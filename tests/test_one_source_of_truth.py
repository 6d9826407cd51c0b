"""The pipeline computes, pages arrange: no statistic is computed in report/ or a notebook,
and no page reads its parameters from the working directory or the environment."""

from __future__ import annotations

import ast

import nbformat
import pytest

from .conftest import ROOT

REPORT = ROOT / "src" / "thruput" / "report"
MODULES = sorted(REPORT.glob("*.py"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def stats_calls(tree):
    """``stats.<name>(...)`` calls and names imported from thruput.stats."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            root = node.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id == "stats":
                found.append(ast.unparse(node.func))
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "stats":
            found += [f"from {node.module} import {a.name}" for a in node.names]
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(("stats.", "thruput.stats.")):
            found += [f"from {node.module} import {a.name}" for a in node.names]
    return found


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_report_computes_no_statistic(path):
    assert stats_calls(ast.parse(path.read_text())) == []


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_report_reads_no_environment_and_no_working_directory_params(path):
    text = path.read_text()
    assert "os.environ" not in text and "getenv" not in text
    assert '"params.yaml"' not in text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebooks_compute_no_statistic(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert stats_calls(ast.parse(cell.source)) == [], f"{path.name}: {cell.source}"
            assert "stats" not in cell.source.replace("report.", ""), f"{path.name}: {cell.source}"


def test_the_check_finds_a_statistic_computed_in_a_page():
    assert stats_calls(ast.parse("from thruput import stats\nstats.plateau(ds['throughput'], n_boot=200)")) == [
        "stats.plateau"]
    assert stats_calls(ast.parse("from ..stats import describe")) == ["from stats import describe"]
