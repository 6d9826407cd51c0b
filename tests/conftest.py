"""Shared fixtures: paths to the project, its test data and the shared corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CORPUS = ROOT.parent / "shared" / "corpus"
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
