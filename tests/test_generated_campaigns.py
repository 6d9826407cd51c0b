"""Generated monitor campaigns (tests/generated.py): recorded logs under random schedules
go through check, normalize, stats, rollups and health, and every monitor page builds
with no error, no NaN, "None" or bare e-notation in its text and no chart that draws
nothing (issue 60).

A bounded sample runs with the suite: a few fixed shapes a user met (no ping, ping only,
one direction, many paths, months) and a few seeded random ones. The long run:
``make test-generated`` (``THRUPUT_GENERATED_COUNT`` random campaigns from
``THRUPUT_GENERATED_SEED``, up to ``THRUPUT_GENERATED_ROWS`` tests each).
"""

from __future__ import annotations

import os

import pandas as pd
import pytest

from . import generated as gen

COUNT = int(os.environ.get("THRUPUT_GENERATED_COUNT", "1"))
FIRST_SEED = int(os.environ.get("THRUPUT_GENERATED_SEED", "1"))
MAX_ROWS = int(os.environ.get("THRUPUT_GENERATED_ROWS", "300"))
#: Shapes users met, each with everything else random.
SHAPES = {
    "no-ping-one-direction-months": {"tests": ("tcp", "udp"), "directions": ("forward",),
                                     "span_s": 60 * 86400.0, "fail": 0.1, "cut": 0.1},
    "ping-only-many-paths": {"tests": ("ping",), "n_paths": 30, "slots": 4},
}


def _build(tmp_path, seed, **fixed):
    directory, spec = gen.generate(tmp_path / "raw", seed, max_rows=MAX_ROWS, **fixed)
    processed = tmp_path / "processed"
    processed.mkdir()
    try:
        gen.build_products(directory, processed)
        pages = gen.build_pages(directory.name, processed, tmp_path / "pages")
    except Exception as exc:
        raise AssertionError(f"{spec.describe()}: {exc}") from exc
    problems = {name: gen.page_problems(nb) for name, nb in pages.items()}
    assert not any(problems.values()), (spec.describe(), {k: v[:10] for k, v in problems.items()})
    return spec, pages


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_generated_campaign_of_each_shape_builds_every_page(tmp_path, shape):
    seed = 1000 + list(SHAPES).index(shape)
    spec, pages = _build(tmp_path, seed, **SHAPES[shape])
    assert set(pages) == {nb.name for nb in gen.NOTEBOOKS}
    if "ping" not in spec.tests:        # the health page says why it has no latency chart
        assert "No ping RTT to draw" in gen.page_text(pages["monitor-health.ipynb"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + COUNT))
def test_a_random_generated_campaign_builds_every_page(tmp_path, seed):
    _build(tmp_path, seed)


def test_the_generator_makes_what_it_says(tmp_path):
    """The campaign is what its spec drew: its tests, directions, paths, gaps, failures
    (every one with a reason) and cut runs; every log a byte copy, or a cut, of a
    recorded one; and thruput campaign check finds nothing wrong."""
    import csv

    from thruput.campaign.check import check_campaign

    directory, spec = gen.generate(tmp_path, 7, max_rows=300, fail=0.2, cut=0.1, slots=12,
                                   tests=("tcp", "ping"), directions=("forward", "reverse"))
    with open(directory / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["test"] for r in rows} == {"tcp", "ping"}
    assert {r["direction"] for r in rows if r["test"] == "tcp"} == {"forward", "reverse"}
    assert {r["direction"] for r in rows if r["test"] == "ping"} == {"forward"}
    assert {r["path_name"] for r in rows} == set(spec.paths)
    assert {int(r["socket_buffer"]) for r in rows if r["test"] == "tcp"} == set(spec.buffers)
    missed = {s for a, b in spec.gaps for s in range(a, b + 1)}
    assert {int(r["slot"]) for r in rows} == set(range(spec.slots)) - missed
    failed = [r for r in rows if r["outcome"] != "ok"]
    assert failed and all(r["reason"] for r in failed)
    assert any(r["outcome"] == "timeout" and r["path"] for r in failed)          # cut runs
    recorded = {p.read_bytes() for key, blocks in gen.blocks().items() for b in blocks
                for p in [b.file] if p is not None}
    for r in rows:
        if r["path"] and r["outcome"] != "timeout":
            assert (directory / r["path"]).read_bytes() in recorded, r["run"]
    assert [p for p in check_campaign(directory) if p.severity == "error"] == []


def test_page_problems_sees_what_a_reader_would():
    import nbformat

    nb = nbformat.v4.new_notebook()
    bad = nbformat.v4.new_code_cell("x")
    bad.outputs = [nbformat.v4.new_output("display_data", data={
        "text/markdown": "**Paths:** a (None → None); median 8.367e+06 bit/s, p nan",
        "text/html": '<div></div><script>vegaEmbed("#v", {"datasets": {"d": []}, "data": {"name": "d"}, '
                     '"mark": "point", "title": "empty"}, {"actions": false})</script>'})]
    nb.cells = [bad]
    problems = gen.page_problems(nb)
    assert any("'None'" in p for p in problems) and any("8.367e+06" in p for p in problems)
    assert any("'nan'" in p for p in problems) and any("'empty': no mark has data" in p for p in problems)
    good = nbformat.v4.new_code_cell("y")
    good.outputs = [nbformat.v4.new_output("display_data", data={
        "text/markdown": "No test failed; median 8.37 Mbit/s (run 000050-a-b, sha 8471cf72e1439)"})]
    nb.cells = [good]
    assert gen.page_problems(nb) == []


def test_campaign_check_and_the_page_report_the_same_gaps(tmp_path):
    """One definition of a gap (:func:`thruput.stats.monitor.missing_slots`): on a generated
    campaign with gaps of every path, and one of a single path (its tests of one slot
    removed), ``thruput campaign check`` warns of exactly the gaps the page's table lists
    (unexplained), and of none once the page gives each a reason."""
    import csv
    import re

    import yaml

    import thruput
    from thruput.campaign.check import check_campaign
    from thruput.stats.monitor import UNEXPLAINED, gap_report

    fixed = {"tests": ("tcp",), "n_paths": 3, "slots": 24, "fail": 0.0, "cut": 0.0}
    seed = next(s for s in range(200) if gen.draw(s, max_rows=300, **fixed).gaps)
    directory, spec = gen.generate(tmp_path, seed, max_rows=300, **fixed)
    with open(directory / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    missed = {s for a, b in spec.gaps for s in range(a, b + 1)}
    alone = next(s for s in range(2, spec.slots - 2) if not {s - 1, s, s + 1} & missed)
    lost = spec.paths[1]
    for r in rows:
        if int(r["slot"]) == alone and r["path_name"] == lost:
            (directory / r["path"]).unlink()
    with open(directory / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(r for r in rows if not (int(r["slot"]) == alone and r["path_name"] == lost))
    meta = yaml.safe_load((directory / "campaign.yaml").read_text())
    explained = meta["explained"]
    meta["explained"] = []
    (directory / "campaign.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))

    warned = set()
    for p in check_campaign(directory):
        assert p.severity == "warning", p
        m = re.match(r"path (\S+): (\d+) slots \((\d+)-(\d+), due", p.message)
        if m:
            assert int(m[2]) == int(m[4]) - int(m[3]) + 1
            warned.add((m[1], int(m[3]), int(m[4])))
    report = gap_report(thruput.open_campaign(directory), spec.interval_s)
    listed = {(str(p), int(a), int(a) + int(n) - 1)
              for p, a, n in zip(report["gap_path"].values, report["first_slot"].values, report["slots"].values)}
    every_path = {(p, a, b) for p in spec.paths for a, b in sorted(spec.gaps)}
    assert {(p, a, b) for p, a, b in every_path} <= listed       # (generated gaps may touch)
    assert (lost, alone, alone) in listed and warned == listed
    assert set(report["gap_reason"].values.tolist()) == {UNEXPLAINED}

    down = report["gap_start"].values[(report["gap_path"].values == lost) & (report["slots"].values == 1)]
    meta["explained"] = explained + [{"from": pd.Timestamp(t).floor("s").strftime("%Y-%m-%dT%H:%M:%SZ"),
                                      "to": pd.Timestamp(t).ceil("s").strftime("%Y-%m-%dT%H:%M:%SZ"),
                                      "path": lost, "reason": "one path down"} for t in down]
    (directory / "campaign.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    assert [p for p in check_campaign(directory) if "not explained" in p.message] == []
    report = gap_report(thruput.open_campaign(directory), spec.interval_s, meta["explained"])
    assert UNEXPLAINED not in report["gap_reason"].values.tolist()
