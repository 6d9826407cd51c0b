"""Generated piles (tests/piles.py): each imports with every test log kept, every other
file skipped with its count or kept as ancillary, each run dated by its own log, and
passes `thruput campaign check`. A bounded sample here; THRUPUT_PILES=N (``make
test-piles``) tries N piles, THRUPUT_PILES_SEED the first seed."""

from __future__ import annotations

import csv
import os

import numpy as np
import pytest
import yaml

from thruput.campaign.check import check_campaign
from thruput.monitor.importer import import_pile

from . import piles

COUNT = int(os.environ.get("THRUPUT_PILES", "3"))
FIRST = int(os.environ.get("THRUPUT_PILES_SEED", "1"))
#: Every generated log's path names its operator (op0, op1 ...).
OPERATOR = r"(?P<path>op\d)"


@pytest.mark.parametrize("seed", range(FIRST, FIRST + COUNT))
def test_a_generated_pile_imports_whole(tmp_path, seed):
    want = piles.build(tmp_path / "pile", seed, size=30 if COUNT <= 3 else 60)
    done = import_pile("pile", [tmp_path / "pile"], tmp_path / "raw", path_pattern=OPERATOR)
    with open(done.directory / "runs.csv", newline="") as f:
        rows = {r["path"].removeprefix("runs/"): r for r in csv.DictReader(f)}
    assert sorted(rows) == sorted(want.tests), f"seed {seed}"
    assert done.skipped == dict(want.skipped), f"seed {seed}"
    meta = yaml.safe_load((done.directory / "campaign.yaml").read_text())
    assert sorted(a["path"].removeprefix("ancillary/") for a in meta.get("ancillary") or []) == \
        sorted(want.ancillary), f"seed {seed}"
    for rel, (lo, hi) in want.tests.items():
        started = np.datetime64(rows[rel]["started"].removesuffix("Z"), "ms")
        assert lo <= started <= hi, (seed, rel, started, lo, hi)
    assert [str(p) for p in check_campaign(done.directory) if p.severity == "error"] == [], f"seed {seed}"
