"""Issue 40's hangs: every registered reader finishes 1 MB of digits, dots and blanks.

The inputs are :mod:`tests.hostile`'s (each blob alone and spliced into recorded samples).
They run in a child process, because a backtracking regular expression holds the
interpreter (no signal, no timeout inside the process can stop it). The bound is generous:
all of them take under a minute on a loaded 2-core machine; a quadratic pattern on one
1 MB line takes hours. ``python -m benchmarks hostile`` measures the times.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from thruput import formats

from .conftest import DATA, ROOT
from .hostile import SHAPES, SPLICED, inputs

#: Seconds all the hostile inputs of every format may take together: only a hang misses it.
BOUND_S = 600
#: Formats that read a lone line without a newline as a record cut off, not an error.
CUT_LINE_READ = ("tcp_info",)


def test_every_reader_finishes_hostile_megabytes_with_a_result_or_a_thruput_error():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    done = subprocess.run([sys.executable, "-m", "tests.hostile"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=BOUND_S)
    assert done.returncode == 0, done.stderr[-2000:]
    results = [json.loads(line) for line in done.stdout.splitlines()]
    expected = [(name, label) for name in formats.REGISTRY for label, _ in inputs(name, size=16)]
    assert [(r["format"], r["label"]) for r in results] == expected
    crashes = [r for r in results if r["outcome"] not in ("ok", "refused")]
    assert not crashes, crashes
    # the blobs alone are no log of any format (ss -ti output whose one line has no
    # newline reads as a snapshot cut off: nothing parsed, truncated); spliced ones are
    # refused or read
    alone = [r for r in results if r["label"] in SHAPES]
    assert len(alone) == len(SHAPES) * len(formats.REGISTRY)
    assert {r["outcome"] for r in alone if r["format"] not in CUT_LINE_READ} == {"refused"}
    assert all(r["bytes"] >= 2**20 - 100 for r in alone)
    assert sum(1 for r in results if " + " in r["label"]) >= len(SPLICED) * len(formats.REGISTRY)


def test_a_readers_own_exception_reaches_the_user_as_a_thruput_error(monkeypatch):
    """A bug in a reader (an exception it should never raise) still gives the user a
    ThruputError naming the file and where the reader failed; the fuzzer counts it as a
    crash (tests/hostile.read_fuzzed)."""
    from thruput import formats
    from thruput.errors import ReaderBug
    from thruput.reader import read_bytes

    from .hostile import read_fuzzed

    sample = next(p for p in sorted((DATA / "nuttcp").glob("*.out")))
    module = formats.get("nuttcp")

    def broken(text):
        return {}["missing"]

    monkeypatch.setattr(module, "parse", broken)
    with pytest.raises(ReaderBug) as caught:
        read_bytes(sample.read_bytes(), format="nuttcp", path="pile/run-7.log")
    assert caught.value.path == "pile/run-7.log"
    assert "the nuttcp reader failed on this file (KeyError" in str(caught.value)
    assert read_fuzzed("nuttcp", sample.read_bytes()).startswith("crash: the nuttcp reader failed")
