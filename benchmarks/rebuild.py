"""Incremental vs full rebuild of the DVC pipeline with 10 campaigns.

    python -m benchmarks.rebuild [--campaigns 10] [--source DIR] [--out benchmarks/output]

Builds a throw-away copy of the project (tests/dvcproject.py) whose campaigns are copies
of a small recorded one (tests/data/campaigns/loopback-mini by default), then times, with
real ``dvc repro``:

full
    every stage from raw logs (normalize@c and stats@c for each of the N campaigns);
no-op
    ``dvc repro`` again with nothing changed (DVC only hashes and compares);
incremental
    one more campaign added to ``params.yaml``: only its two stages should run.

Prints the times and the ratio incremental / full, and writes them to
``<out>/rebuild.json``. The report stages (reproduce, site) are left out: they are
rebuilt in both cases and would only add the same constant to each side.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.dvcproject import commit, copy_campaign, make_project, run, set_campaigns, stages_run  # noqa: E402

DEFAULT_SOURCE = ROOT / "tests" / "data" / "campaigns" / "loopback-mini"


def timed_repro(repo):
    """Wall time of ``dvc repro`` in ``repo`` (s) and the stages it ran."""
    start = time.perf_counter()
    out = run(["dvc", "repro"], repo).stdout
    return time.perf_counter() - start, stages_run(out)


def benchmark(n_campaigns=10, source=DEFAULT_SOURCE, workdir=None):
    """Run the three rebuilds; return a JSON-ready dict of times (s) and stage counts."""
    names = [f"c{i:02d}" for i in range(n_campaigns)]
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        repo = make_project(Path(tmp) / "repo", {name: source for name in names})
        full, full_stages = timed_repro(repo)
        commit(repo, "full rebuild")
        noop, noop_stages = timed_repro(repo)
        added = f"c{n_campaigns:02d}"
        copy_campaign(source, repo / "data" / "raw", added)
        set_campaigns(repo, names + [added])
        incremental, inc_stages = timed_repro(repo)
    return {
        "campaigns": n_campaigns,
        "source": str(source),
        "full_s": round(full, 3), "full_stages": len(full_stages),
        "noop_s": round(noop, 3), "noop_stages": len(noop_stages),
        "incremental_s": round(incremental, 3), "incremental_stages": inc_stages,
        "ratio_incremental_to_full": round(incremental / full, 4),
        "python": platform.python_version(), "machine": platform.machine(),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rebuild", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--campaigns", type=int, default=10)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="campaign to copy")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "output")
    args = parser.parse_args(argv)
    if shutil.which("git") is None:
        parser.error("git is needed")
    result = benchmark(args.campaigns, args.source)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "rebuild.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"rebuild, {result['campaigns']} campaigns copied from {Path(result['source']).name}:")
    print(f"  full        {result['full_s']:8.2f} s  ({result['full_stages']} stages)")
    print(f"  no change   {result['noop_s']:8.2f} s  ({result['noop_stages']} stages)")
    print(f"  +1 campaign {result['incremental_s']:8.2f} s  ({', '.join(result['incremental_stages'])})")
    print(f"  ratio incremental / full = {result['ratio_incremental_to_full']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
