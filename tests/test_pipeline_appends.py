"""The pipeline's appendable monitor products (dvc.yaml's ``rollups-monitor`` and
``health-monitor``, run as dvc.yaml gives them): a run after nothing changed appends
nothing and rebuilds nothing; a store built by other thruput code is built whole again."""

from __future__ import annotations

import pytest

from .generated import ROOT, pipeline_steps
from thruput.campaign.store import finish_tables, table_attrs
from thruput.cli import main
from thruput.hashing import code_digest

CAMPAIGN = "netns-tc-monitor"


@pytest.fixture(scope="module")
def processed(tmp_path_factory):
    out = tmp_path_factory.mktemp("processed")
    for step in pipeline_steps(("normalize-monitor", "stats-monitor"), CAMPAIGN, out, ROOT / "data/raw" / CAMPAIGN):
        assert main(step) == 0
    return out


@pytest.mark.parametrize("stage, suffix, kept", [("rollups-monitor", ".rollups.zarr", "appended"),
                                                 ("health-monitor", ".health.zarr", "updated")])
def test_a_store_is_appended_to_and_built_again_by_other_code(processed, stage, suffix, kept, capsys):
    (step,) = pipeline_steps((stage,), CAMPAIGN, processed, ROOT / "data/raw" / CAMPAIGN)
    store = processed / f"{CAMPAIGN}{suffix}"
    assert main(step) == 0
    assert "built: no " in capsys.readouterr().out                  # (none there yet)
    assert table_attrs(store)["code"] == code_digest()
    assert main(step) == 0                                           # nothing new: nothing rebuilt
    said = capsys.readouterr().out
    assert kept in said and "built" not in said
    finish_tables(store, {**table_attrs(store), "code": "0" * 64})   # as an older thruput left it
    assert main(step) == 0
    assert "built: built by other thruput code" in capsys.readouterr().out
    assert table_attrs(store)["code"] == code_digest()
