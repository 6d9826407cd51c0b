"""Build a throw-away copy of thruput's DVC project (for tests/test_dvc.py and benchmarks).

The copy is a real git repository with the project's ``dvc.yaml`` (its ``normalize`` and
``stats`` stages, or with ``site=True`` all of them and what the pages need),
``params.yaml`` with the campaigns given, ``.dvc/config`` (so its local directory remote, ``../dvc-store`` beside
the repository), ``.dvcignore`` and ``src/thruput`` (a dependency of every stage). The
stages run the ``thruput`` of the interpreter running this code.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
#: Stages of the project's dvc.yaml that a copy keeps.
STAGES = ("normalize", "stats")
#: What a copy with the site needs besides src/thruput and the campaigns.
SITE_FILES = ("_quarto.yml", "CITATION.cff")
SITE_DIRS = ("notebooks", "data/published")
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "thruput tests", "GIT_AUTHOR_EMAIL": "tests@thruput.invalid",
                "GIT_COMMITTER_NAME": "thruput tests", "GIT_COMMITTER_EMAIL": "tests@thruput.invalid"}


def environment():
    """The environment stages run in: this interpreter's bin first on PATH, no analytics."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(GIT_IDENTITY, DVC_NO_ANALYTICS="1", DVC_NO_UPDATER="1")
    return env


def run(args, cwd, check=True):
    """Run a command (list) in ``cwd``; return the CompletedProcess (stdout+stderr merged)."""
    if args[0] == "dvc":
        args = [str(Path(sys.executable).parent / "dvc"), *args[1:]]
    proc = subprocess.run(args, cwd=cwd, env=environment(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stdout}")
    return proc


def copy_campaign(source, raw, name):
    """Copy campaign directory ``source`` to ``raw/name``, renaming it in campaign.yaml."""
    target = Path(raw) / name
    shutil.copytree(source, target)
    meta = target / "campaign.yaml"
    meta.write_text(re.sub(r"(?m)^name: .*$", f"name: {name}", meta.read_text(), count=1))
    return target


def set_campaigns(repo, names):
    """Write the campaign list of ``repo/params.yaml`` (other sections kept)."""
    path = Path(repo) / "params.yaml"
    params = yaml.safe_load(path.read_text())
    params["campaigns"] = list(names)
    path.write_text(yaml.safe_dump(params, sort_keys=False))


def make_project(repo, campaigns, dvc_added=(), site=False, studies=None, comparisons=None, monitors=None,
                 study_show=None, stages=STAGES):
    """Create the project copy at ``repo`` and commit it.

    Parameters
    ----------
    repo : path-like
        New directory; its DVC remote is ``repo/../dvc-store``.
    campaigns : dict
        Campaign name -> source campaign directory, copied to ``data/raw/<name>``.
    dvc_added : sequence of str
        Names among ``campaigns`` tracked with ``dvc add`` instead of git.
    site : bool
        Keep every stage of the project (catalogue, comparisons, one stage per page, the
        site) with the notebooks, ``_quarto.yml`` and the published numbers; else only
        ``normalize`` and ``stats``.
    studies, comparisons, monitors : optional
        The ``studies`` list, ``comparisons`` mapping and ``monitors`` list of
        ``params.yaml`` (default: the project's; the copy has no monitor campaign's raw
        data, so a copy with the site needs ``monitors=[]``).
    study_show : dict, optional
        ``study-effects: show`` of ``params.yaml`` (effect -> campaign); by default the
        project's entries that name a campaign of the copy.
    stages : sequence of str
        Without the site, the stages of the project's dvc.yaml to keep (default
        :data:`STAGES`); with ``reproduce`` the copy also gets ``data/published``.
    """
    repo = Path(repo)
    (repo / ".dvc").mkdir(parents=True)
    for name in (".dvc/config", ".dvc/.gitignore", ".dvcignore", "params.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    pipeline = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    if not site:
        pipeline["stages"] = {k: v for k, v in pipeline["stages"].items() if k in stages}
        if "metrics" not in stages:
            pipeline.pop("metrics", None)
        if "reproduce" in stages:
            shutil.copytree(ROOT / "data" / "published", repo / "data" / "published")
    else:
        for name in SITE_FILES:
            shutil.copy2(ROOT / name, repo / name)
        for name in SITE_DIRS:
            shutil.copytree(ROOT / name, repo / name)
    (repo / "dvc.yaml").write_text(yaml.safe_dump(pipeline, sort_keys=False))
    shutil.copytree(ROOT / "src" / "thruput", repo / "src" / "thruput",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name, source in campaigns.items():
        copy_campaign(source, repo / "data" / "raw", name)
    set_campaigns(repo, campaigns)
    params = yaml.safe_load((repo / "params.yaml").read_text())
    if studies is not None:
        params["studies"] = list(studies)
    if comparisons is not None:
        params["comparisons"] = dict(comparisons)
    if monitors is not None:
        params["monitors"] = list(monitors)
    section = params.get("study-effects") or {}
    show = study_show if study_show is not None else {
        e: c for e, c in (section.get("show") or {}).items() if c in campaigns}
    if section:
        params["study-effects"] = {**section, "show": dict(show)}
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    run(["git", "init", "-q", "-b", "main"], repo)
    for name in dvc_added:
        run(["dvc", "add", "-q", f"data/raw/{name}"], repo)
    run(["git", "add", "-A"], repo)
    run(["git", "commit", "-q", "-m", "campaigns and pipeline"], repo)
    return repo


def commit(repo, message):
    run(["git", "add", "-A"], repo)
    run(["git", "commit", "-q", "-m", message], repo)


def clone(repo, target):
    """``git clone`` of ``repo`` at ``target`` (a sibling, so it shares the remote)."""
    run(["git", "clone", "-q", str(repo), str(target)], Path(target).parent)
    return Path(target)


def stages_run(output):
    """Names of the stages ``dvc repro`` says it ran, in order."""
    return re.findall(r"Running stage '([^']+)'", output)
