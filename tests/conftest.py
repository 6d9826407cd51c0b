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
#: (THRUPUT_CORPUS: where a worktree of the project lies elsewhere than beside ../shared)
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
