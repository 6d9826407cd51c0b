"""Generated designs: random campaign.yaml factors (1-4, numeric or not, declared levels or
not, ordered or not, with or without time) over the recorded loopback pile
(tests/data/designs/loopback-cc), with empty cells and failed runs; each must pass
``campaign check``, open, validate, keep every run's own numbers and give the factors'
levels in their order. ``DESIGN_SEEDS`` sets how many (default 12; e.g. 500 at length)."""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

import thruput
from thruput.campaign.check import check_campaign
from thruput.campaign.design import DESIGN_COLUMNS, design_run_id
from thruput.campaign.layout import sha256_of

PILE = Path(__file__).parent / "data" / "designs" / "loopback-cc"
SEEDS = int(os.environ.get("DESIGN_SEEDS", "12"))
WORDS = ("reno", "cubic", "bbr", "att", "verizon", "lga03", "a b", "x/y", "1e", "É")
UNITS = ("byte", "bit/s", "count", "1", "ms")


def _factor(rng, k):
    numeric = rng.random() < 0.5
    n = rng.randint(1, 4)
    if numeric:
        levels = sorted(rng.sample([1, 2.5, 64, 1500, 9000, 65536, 1e9, 0], n))
        spec = {"name": f"f{k}_n", "units": rng.choice(UNITS)}
    else:
        levels = rng.sample(WORDS, n)
        spec = {"name": f"f{k}_s"}
    if rng.random() < 0.6:
        spec["levels"] = levels
    if rng.random() < 0.5:
        spec["ordered"] = rng.random() < 0.5
    return spec, levels


def _campaign(directory, seed):
    rng = random.Random(seed)
    specs = [_factor(rng, k) for k in range(rng.randint(1, 4))]
    time = rng.random() < 0.5
    files = sorted(PILE.glob("cc-*.json")) + [PILE / "ping_size-56.txt"]
    (directory / "runs").mkdir(parents=True)
    rows, expected, ids = [], {}, set()
    for i, source in enumerate(files):
        shutil.copy2(source, directory / "runs" / source.name)
        values = [rng.choice(levels) if rng.random() > 0.15 else "" for _, levels in specs]
        repeat = rng.randint(0, 2)
        run = design_run_id(values, repeat)
        while run in ids:
            repeat += 3
            run = design_run_id(values, repeat)
        ids.add(run)
        failed = rng.random() < 0.15
        role = "ping" if source.suffix == ".txt" else "iperf"
        rows.append({"run": run, "role": role, "path": f"runs/{source.name}",
                     "sha256": sha256_of(source),
                     "started": f"2026-01-01T00:{rng.randint(0, 59):02d}:00Z" if time or rng.random() < 0.5 else "",
                     "repeat": repeat, "outcome": "error" if failed else "ok",
                     "reason": "server busy" if failed else "",
                     **{spec["name"]: v for (spec, _), v in zip(specs, values)}})
        expected[run] = (source, failed, values)
    meta = {"name": directory.name, "title": "generated", "description": "generated", "kind": "design",
            "dates": {"start": "2026-01-01"}, "hosts": {"a": {}}, "time": time,
            "factors": [spec for spec, _ in specs]}
    (directory / "campaign.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True), encoding="utf-8")
    with open(directory / "runs.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, DESIGN_COLUMNS + tuple(spec["name"] for spec, _ in specs),
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return specs, expected, time


@pytest.mark.parametrize("seed", range(SEEDS))
def test_a_generated_design_opens_with_every_run(tmp_path, seed):
    directory = tmp_path / f"g{seed}"
    specs, expected, time = _campaign(directory, seed)
    assert [p for p in check_campaign(directory) if p.severity == "error"] == []
    ds = thruput.open_campaign(directory)
    assert thruput.validate(ds) is ds and ds.attrs["design_time"] == int(time)
    factors = json.loads(ds.attrs["factors"])
    for (spec, _), f in zip(specs, factors):
        assert f["name"] == spec["name"]
        if "levels" in spec:
            assert f["levels"] == spec["levels"]        # declared: as declared, in order
        else:                                           # found: sorted
            assert f["levels"] == sorted(f["levels"], key=lambda v: (isinstance(v, str), v))
        assert ds[spec["name"]].attrs["units"] == spec.get("units", "1")
    for run, (source, failed, values) in expected.items():
        one = ds.sel(run=run)
        assert str(one.outcome.values) == ("error" if failed else "ok")
        for (spec, _), value in zip(specs, values):
            got = one[spec["name"]].values
            if "units" in spec:
                assert (np.isnan(got) if value == "" else float(got) == float(value))
            else:
                assert str(got) == str(value)
        if source.suffix == ".json" and not failed:
            rate = json.loads(source.read_text())["end"]["sum_received"]["bits_per_second"]
            assert float(one.throughput) == rate
        elif not failed:
            assert float(one.ping_transmitted) == 5
    if time:
        assert (np.diff(ds.time.values.astype(np.int64)) >= 0).all()
    for name in ("throughput", "rtt_median", "outcome", "source"):
        assert "nan" not in str(ds[name].attrs) and "None" not in str(ds[name].attrs)
