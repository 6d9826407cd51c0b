"""The README's Quick start runs as written in a new shell (issue 39).

A new shell has no environment activated: ``dvc`` and ``thruput`` are not on PATH. The
README's commands are ``make`` targets, which find ``./.venv`` themselves and put it first
on the PATH of every stage ``dvc repro`` runs.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dvcproject import ROOT, make_project

MINI = ROOT / "tests" / "data" / "campaigns" / "loopback-mini"
#: A new shell: the system's PATH only, no venv or conda env active.
BARE_PATH = "/usr/local/bin:/usr/bin:/bin"


def _targets(makefile):
    return set(re.findall(r"(?m)^([a-z][\w-]*):", makefile.read_text()))


def _quick_start():
    text = (ROOT / "README.md").read_text()
    return text.split("## Quick start", 1)[1].split("\n## ", 1)[0]


def test_readme_commands_are_make_targets():
    section = _quick_start()
    commands = re.findall(r"`(make [a-z-]+)", section) + re.findall(r"(?m)^(make [a-z-]+)", section)
    assert {"make site", "make test", "make repro", "make serve", "make lab"} <= set(commands)
    # the Quick start itself is two commands: install and build the site, run the tests
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in block.splitlines()] == ["make site", "make test"]
    targets = _targets(ROOT / "Makefile")
    for command in commands:
        assert command.split()[1] in targets, command
    # no command of the section needs an activated environment
    assert not re.search(r"(?m)^\s*(dvc|thruput|jupyter) ", section)
    assert "`dvc repro`" not in section.replace("(`dvc repro`", "").replace("then `dvc repro`", "")


@pytest.mark.skipif(shutil.which("make", path=BARE_PATH) is None, reason="make not installed")
def test_make_repro_in_a_new_shell(tmp_path):
    repo = make_project(tmp_path / "proj", {"mini": MINI})
    shutil.copy2(ROOT / "Makefile", repo / "Makefile")
    (repo / ".venv").symlink_to(Path(sys.prefix))
    env = {"HOME": str(tmp_path), "PATH": BARE_PATH, "LANG": "C.UTF-8",
           "DVC_NO_ANALYTICS": "1", "DVC_NO_UPDATER": "1",
           # the worktree's code, not the one installed editable in the shared venv
           "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    assert shutil.which("thruput", path=BARE_PATH) is None or "venv" not in shutil.which("thruput", path=BARE_PATH)
    proc = subprocess.run(["make", "repro"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Running stage 'normalize@mini'" in proc.stdout
    assert (repo / "data" / "processed" / "mini.stats.nc").is_file()
    # and a named stage, as the Makefile's STAGES= allows
    proc = subprocess.run(["make", "repro", "STAGES=stats@mini"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0 and "didn't change" in proc.stdout + proc.stderr, proc.stdout
