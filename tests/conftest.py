"""Shared fixtures: paths to the project, its test data and the shared corpus."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

try:  # xarray imports dask on the first Variable it builds (its duck-array check): pay that
    import dask.array  # noqa: F401  import (2-6 s on a loaded machine) once here, not inside
except ImportError:  # the first timed example of a hypothesis test (tests/test_fuzz.py)
    pass

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
#: The shared corpus (``THRUPUT_CORPUS`` overrides where it is: a worktree elsewhere).
CORPUS = Path(os.environ.get("THRUPUT_CORPUS") or ROOT.parent / "shared" / "corpus")
OUTPUT = ROOT / "tests" / "output"


@pytest.fixture(scope="session")
def corpus():
    """The shared corpus of genuine logs; tests that need it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus not present")
    return CORPUS


@pytest.fixture(scope="session")
def output_dir():
    """A folder for artefacts a test leaves for people to look at (screenshots...)."""
    OUTPUT.mkdir(parents=True, exist_ok=True)
    return OUTPUT


def load_tool(name):
    """Import the test tooling ``tools/<name>.py`` (not a package) as a module."""
    spec = importlib.util.spec_from_file_location(f"tools_{name}", ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def copy_campaign(source, parent, rows=None):
    """Copy campaign directory ``source`` into ``parent``; keep only data ``rows`` of its
    runs.csv (in that order; all by default). Returns the copy."""
    target = Path(parent) / Path(source).name
    shutil.copytree(source, target)
    if rows is not None:
        lines = (Path(source) / "runs.csv").read_text().splitlines(keepends=True)
        (target / "runs.csv").write_text("".join([lines[0]] + [lines[1 + i] for i in rows]))
    return target


#: Test modules that build sites or pages, run DVC or start Jupyter kernels: the whole suite
#: runs them, ``make test-fast`` (``-m "not (... or site or kernel)"``) leaves them out.
SITE_MODULES = {"test_site_build", "test_site_e2e", "test_site_reproducible", "test_site_serve", "test_dvc",
                "test_dvc_yaml", "test_pipeline", "test_quickstart", "test_lab_e2e", "test_notebooks",
                "test_saved_notebook_charts", "test_benchmarks_scale", "test_benchmarks_hostile"}
KERNEL_MODULES = {"test_report_monitor", "test_report_studies"}
#: Test modules of whole pipelines (stores, dask clusters, imports, real servers, big or
#: hostile files): the whole suite runs them, ``make test-fast`` leaves them out.
HEAVY_MODULES = {"test_monitor_alerts", "test_campaign_store", "test_record", "test_monitor_importer",
                 "test_monitor_metrics", "test_hostile_files", "test_cli_inspect", "test_format_pscheduler_archive",
                 "test_stats_rollups_incremental", "test_guard", "test_iperf3_genuine_consistent", "test_hostile",
                 "test_format_ping_stream", "test_stats_portable", "test_monitor_own_campaign",
                 "test_monitor_bundled", "test_stats_outofcore", "test_route_changes", "test_bundled_products",
                 "test_parallel", "test_fuzz", "test_design_pages", "test_monitor_new_user"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.module.__name__.rpartition(".")[2] if item.module else ""
        if module in SITE_MODULES:
            item.add_marker(pytest.mark.site)
        if module in KERNEL_MODULES:
            item.add_marker(pytest.mark.kernel)
        if module in HEAVY_MODULES:
            item.add_marker(pytest.mark.heavy)
