"""Incremental vs full rebuild of the DVC pipeline, site included, with 10 campaigns.

    python -m benchmarks.rebuild [--campaigns 10] [--no-studies] [--source DIR] [--out benchmarks/output]

Builds a throw-away copy of the whole project (tests/dvcproject.py, ``site=True``: every
stage of ``dvc.yaml``, the notebooks, ``_quarto.yml``, the published numbers) whose
campaigns are copies of a small recorded one (tests/data/campaigns/loopback-mini by
default), one comparison (the first two campaigns) and no monitor campaign, then times,
with real ``dvc repro``:

full
    every stage from raw logs: normalize@, stats@ and page-campaign@ of each campaign, the
    catalogue, the comparison, the study-effects choice, the reproduction ledger, the data
    package, every page (the five study pages included) and the assembly of the site;
no-op
    ``dvc repro`` again with nothing changed (DVC only hashes and compares);
incremental
    one more campaign added to ``params.yaml``: a tiny one (``loopback-mini`` with its
    first repeat only: 4 runs, 4 cells), as a user adds a first sweep of their own. Its
    three stages, the catalogue and its page, ``study-effects``, the data package and its
    page, and the assembly should run, no other page: the study pages show the campaigns
    ``study-effects: show`` names (here ``c00`` for the streams and RTT effects, as an
    author would choose), the tiny sweep is below ``min_cells`` so it changes no
    suggestion, ``study-effects`` writes the same bytes and DVC executes no study page.

``--no-studies`` leaves the study pages out of the copy.

Prints the times and the ratio incremental / full, and writes them to
``<out>/rebuild.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.dvcproject import commit, copy_campaign, make_project, run, set_campaigns, stages_run  # noqa: E402

DEFAULT_SOURCE = ROOT / "tests" / "data" / "campaigns" / "loopback-mini"


def first_repeat_only(campaign):
    """Keep the runs of repeat 0 of ``campaign`` (runs.csv rows and files; plan repeats 1)."""
    rows = (campaign / "runs.csv").read_text().splitlines(keepends=True)
    col = rows[0].strip().split(",").index("repeat")
    kept = [rows[0]] + [r for r in rows[1:] if r.split(",")[col] == "0"]
    for r in rows[1:]:
        if r not in kept:
            (campaign / r.split(",")[2]).unlink(missing_ok=True)
    (campaign / "runs.csv").write_text("".join(kept))
    meta = campaign / "campaign.yaml"
    meta.write_text(re.sub(r"(?m)^(\s+repeats:) \d+$", r"\1 1", meta.read_text(), count=1))
    return campaign


def timed_repro(repo):
    """Wall time of ``dvc repro`` in ``repo`` (s) and the stages it ran."""
    start = time.perf_counter()
    out = run(["dvc", "repro"], repo).stdout
    return time.perf_counter() - start, stages_run(out)


def benchmark(n_campaigns=10, source=DEFAULT_SOURCE, workdir=None, studies=True):
    """Run the three rebuilds; return a JSON-ready dict of times (s) and stage counts."""
    names = [f"c{i:02d}" for i in range(n_campaigns)]
    study_list = yaml.safe_load((ROOT / "params.yaml").read_text())["studies"] if studies else []
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        repo = make_project(Path(tmp) / "repo", {name: source for name in names}, site=True,
                            studies=study_list, monitors=[], study_show={"streams": names[0], "rtt": names[0]},
                            comparisons={f"{names[0]}-vs-{names[1]}": {"a": names[0], "b": names[1]}})
        full, full_stages = timed_repro(repo)
        commit(repo, "full rebuild")
        noop, noop_stages = timed_repro(repo)
        added = "tiny"
        first_repeat_only(copy_campaign(source, repo / "data" / "raw", added))
        set_campaigns(repo, names + [added])
        incremental, inc_stages = timed_repro(repo)
        pages = len(list((repo / "_site" / "notebooks").glob("*.html")))
    return {
        "campaigns": n_campaigns,
        "source": str(source),
        "study_pages": len(study_list),
        "site_pages": pages,
        "full_s": round(full, 3), "full_stages": len(full_stages),
        "noop_s": round(noop, 3), "noop_stages": len(noop_stages),
        "incremental_s": round(incremental, 3), "incremental_stages": inc_stages,
        "incremental_study_pages": sum(s.startswith("page-study@") for s in inc_stages),
        "ratio_incremental_to_full": round(incremental / full, 4),
        "python": platform.python_version(), "machine": platform.machine(),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rebuild", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--campaigns", type=int, default=10)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="campaign to copy")
    parser.add_argument("--no-studies", dest="studies", action="store_false",
                        help="leave the five study pages out of the copy")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "output")
    args = parser.parse_args(argv)
    if shutil.which("git") is None:
        parser.error("git is needed")
    result = benchmark(args.campaigns, args.source, studies=args.studies)
    args.out.mkdir(parents=True, exist_ok=True)
    name = "rebuild.json" if args.studies else "rebuild-no-studies.json"
    (args.out / name).write_text(json.dumps(result, indent=2) + "\n")
    print(f"rebuild, {result['campaigns']} campaigns copied from {Path(result['source']).name}, "
          f"site of {result['site_pages']} pages ({result['study_pages']} study pages):")
    print(f"  full        {result['full_s']:8.2f} s  ({result['full_stages']} stages)")
    print(f"  no change   {result['noop_s']:8.2f} s  ({result['noop_stages']} stages)")
    print(f"  +1 tiny     {result['incremental_s']:8.2f} s  ({', '.join(result['incremental_stages'])}; "
          f"{result['incremental_study_pages']} study pages)")
    print(f"  ratio incremental / full = {result['ratio_incremental_to_full']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
