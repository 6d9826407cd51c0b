"""``thruput release``: a validated, citable folder whose numbers can be diffed.

In a throw-away git + DVC copy of the project (tests/dvcproject.py) with one small campaign
and the ledger: release 1.0.0 (Frictionless and RO-Crate validators pass offline, SHA256SUMS
verify); a stale pipeline, uncommitted raw data and an existing version are refused; add a
campaign, ``dvc repro``, release 1.1.0: changes.json lists that campaign's numbers as added
and nothing else, ``dvc metrics diff`` shows its headline numbers.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import DATA
from .dvcproject import commit, copy_campaign, make_project, run, set_campaigns, stages_run
from .rocrate_offline import validate, warm

MINI = DATA / "campaigns" / "loopback-mini"
STAGES = ("normalize", "stats", "reproduce", "metrics")

pytestmark = pytest.mark.slow
pytest.importorskip("dvc", reason="dvc is in thruput's [site] extra")
if shutil.which("git") is None:
    pytest.skip("git is needed", allow_module_level=True)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The copy built and committed, then released as 1.0.0 by the command line."""
    base = tmp_path_factory.mktemp("release")
    repo = make_project(base / "origin", {"mini": MINI}, stages=STAGES, monitors=[], comparisons={})
    import xarray as xr                 # a Zarr store among the products, as a monitor's rollups are
    xr.Dataset({"n": ("time", [1, 2])}).to_zarr(repo / "data/processed/mini.rollups.zarr", group="1h/x", zarr_format=2)
    with open(repo / "data/processed/.gitignore", "a") as ignore:
        ignore.write("/mini.rollups.zarr\n")
    assert sorted(stages_run(run(["dvc", "repro"], repo).stdout)) == [
        "metrics", "normalize@mini", "reproduce", "stats@mini"]
    commit(repo, "dvc repro")
    out = run(["thruput", "release", "1.0.0"], repo).stdout
    assert "release/thruput-1.0.0" in out
    return repo


def test_release_validates_offline(project, tmp_path):
    folder = project / "release" / "thruput-1.0.0"
    for name in ("datapackage.json", "ro-crate-metadata.json", "CITATION.cff", ".zenodo.json", "SHA256SUMS",
                 "CHANGES.md", "changes.json", "numbers.csv", "data/metrics.json", "pipeline/dvc.lock",
                 "data/raw/mini/runs.csv", "data/processed/mini.stats.nc", "data/processed/reproduction.csv",
                 "data/processed/mini.rollups.zarr.zip"):
        assert (folder / name).is_file(), name
    import xarray as xr
    import zarr
    with zarr.storage.ZipStore(folder / "data/processed/mini.rollups.zarr.zip", mode="r") as store:
        assert xr.open_zarr(store, group="1h/x")["n"].values.tolist() == [1, 2]
    subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=folder, check=True)
    frictionless = Path(sys.executable).parent / "frictionless"
    if not frictionless.exists():
        pytest.skip("frictionless is in thruput's [release] extra")
    proc = subprocess.run([str(frictionless), "validate", "--json", "datapackage.json"], cwd=folder,
                          capture_output=True, text=True)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["valid"], proc.stdout[:3000]
    package = json.loads((folder / "datapackage.json").read_text())
    assert package["$schema"] == "https://datapackage.org/profiles/2.0/datapackage.json"
    tables = [r for r in package["resources"] if r.get("type") == "table"]
    assert {"numbers.csv", "tables/mini.csv", "data/processed/reproduction.csv"} <= {r["path"] for r in tables}
    run_table = next(r for r in tables if r["path"] == "tables/mini.csv")
    throughput = next(f for f in run_table["schema"]["fields"] if f["name"] == "throughput")
    assert throughput["unit"] == "bit/s" and "[bit/s]" in throughput["description"]
    cache = warm(tmp_path / "rocrate-cache")
    proc = validate(folder, cache)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    crate = {e["@id"]: e for e in json.loads((folder / "ro-crate-metadata.json").read_text())["@graph"]}
    stats = crate["#stage-stats@mini"]
    assert stats["@type"] == "CreateAction" and "thruput pipeline stats" in stats["description"]
    assert stats["result"] == {"@id": "data/processed/mini.stats.nc"}
    assert {"@id": "data/processed/mini.nc"} in stats["object"]
    assert crate[stats["instrument"]["@id"]]["name"] == "thruput"


def test_every_number_has_unit_and_source(project):
    folder = project / "release" / "thruput-1.0.0"
    collected = json.loads((folder / "numbers.json").read_text())
    items = {i["id"]: i for i in collected["items"]}
    median = items["statistic:mini/cells/median[window=65536,streams=2]"]
    assert median["unit"] == "bit/s"
    source = collected["sources"][median["source"]]
    assert source["function"] == "thruput.stats.describe" and source["params"]["reduced_dims"] == "repeat"
    raw = collected["raw_sha256"]["mini"]
    assert raw["runs.csv"] == hashlib.sha256((MINI / "runs.csv").read_bytes()).hexdigest()
    verdict = items["verdict:001-370dle-32-expect/status"]
    assert verdict["value"] == "reproduced" and verdict["quote"] == "Expect: **0.0232 μ s/byte**"
    assert "PCI:32 bit 33 MHz" in verdict["note"] and verdict["inputs"] == "001-370dle-32-pci-width,001-370dle-32-pci-clock"
    changes = json.loads((folder / "changes.json").read_text())
    assert set(changes) == {"added", "removed", "changed"}
    assert len(changes["added"]) == len(collected["items"]) and not changes["removed"] and not changes["changed"]


def test_refuses_existing_stale_or_uncommitted(project):
    from thruput.release import ReleaseError, make_release
    from thruput.release.build import check_raw_committed

    proc = run(["thruput", "release", "1.0.0"], project, check=False)
    assert proc.returncode == 1 and "never overwritten" in proc.stdout
    params = project / "params.yaml"
    saved = params.read_text()
    try:
        params.write_text(saved.replace("seed: 20261122", "seed: 7", 1))
        with pytest.raises(ReleaseError, match=r"not up to date \(dvc status: .*stats@mini"):
            make_release(project, "1.0.1")
    finally:
        params.write_text(saved)
    extra = project / "data" / "raw" / "mini" / "notes.txt"
    extra.write_text("an afterthought\n")
    try:
        with pytest.raises(ReleaseError, match="raw data not committed"):
            check_raw_committed(project, "mini")
    finally:
        extra.unlink()
    with pytest.raises(ReleaseError, match="bad version"):
        make_release(project, "one")
    assert not (project / "release" / "thruput-1.0.1").exists()
    assert sorted(p.name for p in (project / "release").iterdir()) == ["thruput-1.0.0"]


def test_added_campaign_is_added_and_nothing_else_changes(project):
    from thruput.release import make_release

    copy_campaign(MINI, project / "data" / "raw", "second")
    set_campaigns(project, ["mini", "second"])
    ran = stages_run(run(["dvc", "repro"], project).stdout)
    assert sorted(ran) == ["metrics", "normalize@second", "stats@second"]
    commit(project, "a second campaign")
    folder = make_release(project, "1.1.0", raw_limit=1)
    changes = json.loads((folder / "changes.json").read_text())
    assert changes["added"] and {i.get("campaign") for i in changes["added"]} == {"second"}
    assert changes["removed"] == [] and changes["changed"] == []
    added = {i["id"]: i for i in changes["added"]}
    cell = added["statistic:second/cells/median[window=65536,streams=2]"]
    assert cell["old"] is None and cell["unit"] == "bit/s" and cell["source"]["function"] == "thruput.stats.describe"
    assert "Since 1.0.0." in (folder / "CHANGES.md").read_text()
    # past the raw limit, a campaign is a reference: every file's sha256
    ref = json.loads((folder / "data" / "raw" / "second.remote.json").read_text())
    assert ref["kept_by"] == "git" and {f["path"] for f in ref["files"]} >= {"runs.csv", "campaign.yaml"}
    assert not (folder / "data" / "raw" / "second").exists()
    # the same from the command line, between any two releases
    out = run(["thruput", "release", "diff", "1.0.0", "1.1.0", "--json"], project).stdout
    assert json.loads(out) == changes
    # and the headline numbers for dvc metrics diff
    metrics = json.loads(run(["dvc", "metrics", "diff", "HEAD~1", "--json"], project).stdout)
    changed = metrics["data/metrics.json"]
    assert "second.best_median_Mbit_s" in changed and changed["second.best_median_Mbit_s"]["old"] is None
    assert not any(k.startswith("mini.") for k in changed)
