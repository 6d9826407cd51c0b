"""Issue 57: every file thruput opens, hostile beyond its lines, is read or refused with a
ThruputError naming it, in bounded time and memory, and nothing outside its folder is
opened. The cases are :mod:`tests.hostile_files`' (paths, campaign files, archives, JSON
shapes, huge and sparse files), run in a child process per strategy so that its peak
resident set is its own. ``make fuzz`` runs more of them at the sizes the issue measured
(``THRUPUT_FILES_COUNT``, ``THRUPUT_FILES_HEAVY=1``) and prints their table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT
from .hostile_files import STRATEGIES

COUNT = os.environ.get("THRUPUT_FILES_COUNT")
HEAVY = os.environ.get("THRUPUT_FILES_HEAVY") == "1"
SEED = int(os.environ.get("THRUPUT_FUZZ_SEED", "0"))
#: The peak resident set any strategy's child may reach (MB).
PEAK_MB = 1000
#: Seconds a strategy's cases may take together.
BOUND_S = 1800 if HEAVY else 300


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_hostile_files_are_read_or_refused_naming_the_file(strategy):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    argv = [sys.executable, "-m", "tests.hostile_files", strategy, "--seed", str(SEED)]
    argv += ["--count", COUNT] if COUNT else []
    argv += ["--heavy"] if HEAVY else []
    done = subprocess.run(argv, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=BOUND_S)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    cases, counts = lines[:-1], lines[-1]
    _record(counts)
    bad = [c for c in cases if c["outcome"] not in ("read", "refused")]
    assert not bad, bad
    assert counts["inputs"] == len(cases) > 0 and counts["refused"] > 0
    assert counts["peak_mb"] < PEAK_MB, counts


def _record(counts):
    """The counts of one strategy for ``make fuzz``'s second table
    (``tests/output/fuzz/files-<seed>-<count>/<strategy>.json``; ``python -m tests.fuzz_summary``)."""
    out = Path(__file__).parent / "output" / "fuzz" / f"files-{SEED}-{COUNT or 'quick'}{'-heavy' if HEAVY else ''}"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{counts['strategy']}.json").write_text(json.dumps(counts) + "\n")
