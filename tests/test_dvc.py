"""The DVC pipeline for real: push, fresh clone, pull, repro; corruption; incremental runs.

A module fixture builds a copy of the project (tests/dvcproject.py) with two campaigns:
``loopback-mini`` kept in git (a small bundled campaign) and ``big``, the same logs
``dvc add``-ed (how large campaigns are kept), runs ``dvc repro`` and ``dvc push`` to the
local directory remote. Each test then works in its own ``git clone`` of it.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml

from .conftest import DATA
from .dvcproject import clone, commit, copy_campaign, make_project, run, set_campaigns, stages_run

MINI = DATA / "campaigns" / "loopback-mini"
OUTPUTS = ("loopback-mini.nc", "loopback-mini.stats.nc", "big.nc", "big.stats.nc")

pytestmark = pytest.mark.slow
pytest.importorskip("dvc", reason="dvc is in thruput's [site] extra")
if shutil.which("git") is None:
    pytest.skip("git is needed", allow_module_level=True)


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tree_digests(directory):
    directory = Path(directory)
    return {p.relative_to(directory).as_posix(): digest(p)
            for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """The project copy, built, committed and pushed; its output digests."""
    base = tmp_path_factory.mktemp("dvc")
    repo = make_project(base / "origin", {"loopback-mini": MINI, "big": MINI}, dvc_added=["big"])
    ran = stages_run(run(["dvc", "repro"], repo).stdout)
    assert sorted(ran) == ["normalize@big", "normalize@loopback-mini", "stats@big", "stats@loopback-mini"]
    commit(repo, "dvc repro")
    run(["dvc", "push", "-q"], repo)
    assert (base / "dvc-store" / "files" / "md5").is_dir()
    return repo, {name: digest(repo / "data" / "processed" / name) for name in OUTPUTS}


def test_raw_data_of_dvc_added_campaign_is_not_in_git(origin):
    repo, _ = origin
    tracked = run(["git", "ls-files", "data/raw"], repo).stdout.split()
    assert "data/raw/big.dvc" in tracked
    assert not [f for f in tracked if f.startswith("data/raw/big/")]
    assert "data/raw/loopback-mini/runs.csv" in tracked


def test_clone_pull_repro_gives_identical_outputs(origin, tmp_path_factory):
    repo, digests = origin
    work = clone(repo, repo.parent / "clone-rebuild")
    assert not (work / "data" / "raw" / "big").exists()         # not in git
    run(["dvc", "pull", "-q", "data/raw/big.dvc"], work)          # the raw logs only
    assert tree_digests(work / "data" / "raw" / "big") == tree_digests(repo / "data" / "raw" / "big")
    ran = stages_run(run(["dvc", "repro"], work).stdout)
    assert sorted(ran) == ["normalize@big", "normalize@loopback-mini", "stats@big", "stats@loopback-mini"]
    assert {name: digest(work / "data" / "processed" / name) for name in OUTPUTS} == digests
    assert (work / "dvc.lock").read_text() == (repo / "dvc.lock").read_text()


def test_corrupted_raw_file_is_detected_never_analysed(origin):
    repo, digests = origin
    work = clone(repo, repo.parent / "clone-corrupt")
    run(["dvc", "pull", "-q"], work)                              # raw logs and outputs
    assert {name: digest(work / "data" / "processed" / name) for name in OUTPUTS} == digests
    assert "Data and pipelines are up to date" in run(["dvc", "status"], work).stdout
    lock = (work / "dvc.lock").read_text()
    # a git-tracked campaign: one byte of a log changed in place
    victim = work / "data" / "raw" / "loopback-mini" / "runs" / "w65536-s2-r1.iperf3.json"
    data = bytearray(victim.read_bytes())
    at = data.index(b'"bits_per_second":')
    at = next(i for i in range(at + 18, len(data)) if chr(data[i]).isdigit())
    data[at] = ord("x")                                      # a number no longer a number
    victim.write_bytes(bytes(data))
    status = run(["dvc", "status"], work).stdout
    assert "normalize@loopback-mini:" in status and "modified:           data/raw/loopback-mini" in status
    check = run(["thruput", "campaign", "check", "data/raw/loopback-mini"], work, check=False)
    assert check.returncode == 1
    assert check.stdout.startswith("data/raw/loopback-mini/runs/w65536-s2-r1.iperf3.json:")
    repro = run(["dvc", "repro"], work, check=False)
    assert repro.returncode != 0
    assert "w65536-s2-r1.iperf3.json" in repro.stdout
    assert not (work / "data" / "processed" / "loopback-mini.nc").exists()
    assert (work / "dvc.lock").read_text() == lock
    # a dvc-added campaign: a log truncated behind DVC's back
    other = work / "data" / "raw" / "big" / "runs" / "w65536-s1-r0.loaded.ping"
    other.write_bytes(other.read_bytes()[:-40])
    status = run(["dvc", "status", "data/raw/big.dvc"], work).stdout
    assert "data/raw/big.dvc:" in status and "modified:           data/raw/big" in status


def test_adding_a_campaign_reruns_only_its_stages(origin):
    repo, digests = origin
    work = clone(repo, repo.parent / "clone-add")
    run(["dvc", "pull", "-q"], work)
    before = yaml.safe_load((work / "dvc.lock").read_text())["stages"]
    copy_campaign(MINI, work / "data" / "raw", "extra")
    set_campaigns(work, ["loopback-mini", "big", "extra"])
    out = run(["dvc", "repro"], work).stdout
    assert stages_run(out) == ["normalize@extra", "stats@extra"]
    assert "Stage 'normalize@loopback-mini' didn't change, skipping" in out
    after = yaml.safe_load((work / "dvc.lock").read_text())["stages"]
    assert {k: v for k, v in after.items() if not k.endswith("@extra")} == before
    assert (work / "data" / "processed" / "extra.stats.nc").is_file()
