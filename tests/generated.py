"""Generated monitor campaigns made of recorded logs, with random schedules (issue 60).

:func:`generate` writes a whole monitor campaign (``campaign.yaml``, ``runs.csv``,
``runs/<date>/<run>.<ext>``) whose every log is a copy of one RECORDED by a real tool: the
bundled campaigns' raw logs (``data/raw/netns-*-monitor``) and the test fixture
``tests/data/campaigns/monitor-loopback`` are its building blocks (:func:`blocks`). What is
random (seeded) is the schedule and what became of it: which tests ran (tcp, udp, ping, any
subset but the empty one), one or two directions, 1 to 3 socket buffers and ping sizes,
1 to 50 paths, a span of minutes to months, failed tests (with the tool's log, or none),
cut-off runs (a log cut at a random line, outcome ``timeout``), gaps (explained in
campaign.yaml, as ``thruput campaign check`` asks), events and alert rules. A log's own
numbers are those of the recorded run; only its time (runs.csv ``started``) is the
schedule's.

:func:`build_pages` takes a generated campaign through the pipeline's steps (normalize,
stats, rollups, health) and executes every monitor page; :func:`page_problems` lists what
a reader would see wrong in an executed page (an error, NaN, "None", a bare e-notation
number, a chart with nothing drawn). tests/test_generated_campaigns.py runs a bounded
sample; ``make test-generated`` the long run.
"""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from thruput.hashing import sha256_file
from thruput.monitor.manifest import MONITOR_MANIFEST_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
#: The recorded monitor campaigns whose logs are copied.
SOURCES = (ROOT / "data" / "raw" / "netns-wan-monitor", ROOT / "data" / "raw" / "netns-tc-monitor",
           ROOT / "tests" / "data" / "campaigns" / "monitor-loopback")
#: The pages of a monitor campaign: notebook -> the products it reads.
NOTEBOOKS = (ROOT / "notebooks" / "monitor.ipynb", ROOT / "notebooks" / "monitor-health.ipynb")
TESTS = ("tcp", "udp", "ping")
BUFFERS = (65536, 131072, 262144, 1048576, 4194304)
SIZES = (56, 108, 1480)
#: Names a user gives paths (real ones, and the shapes a pile's folders take).
PATH_NAMES = ("starlink", "att", "verizon", "a-b", "cern-ral", "site_1", "lab.b", "uk-us-east")
#: Why a test failed, when the generator makes it fail without a log.
NO_LOG = (("unreachable", "connect: Network is unreachable"),
          ("busy", "iperf3: the server is busy running a test. try again later"),
          ("error", "iperf3: error - unable to connect to server: No route to host"))


@dataclass(frozen=True)
class Block:
    """One recorded log: its file and what runs.csv said of it."""

    file: Path | None
    test: str
    tool: str
    outcome: str
    reason: str


def blocks(sources=SOURCES):
    """The recorded logs: ``{("ok" | "failed", test, direction): [Block]}`` (ping is
    forward only; a failed TCP test's log serves UDP too, both being iperf3's)."""
    out = {}
    for source in sources:
        with open(source / "runs.csv", newline="") as f:
            for row in csv.DictReader(f):
                file = source / row["path"] if row["path"] else None
                kind = "ok" if row["outcome"] == "ok" else "failed"
                block = Block(file, row["test"], row["tool"], row["outcome"], row["reason"])
                out.setdefault((kind, row["test"], row["direction"]), []).append(block)
    return out


@dataclass
class Spec:
    """What :func:`generate` drew (kept for the report of a failing case)."""

    seed: int
    tests: tuple
    directions: tuple
    buffers: tuple
    sizes: tuple
    paths: tuple
    interval_s: float
    slots: int
    fail: float
    cut: float
    gaps: list = field(default_factory=list)
    dead_path: str | None = None

    def describe(self):
        span = pd.Timedelta(seconds=self.interval_s * self.slots)
        return (f"seed {self.seed}: tests {'/'.join(self.tests)}, {'+'.join(self.directions)}, "
                f"buffers {list(self.buffers)}, sizes {list(self.sizes)}, {len(self.paths)} paths, "
                f"{self.slots} slots of {self.interval_s:.0f} s ({span}), fail {self.fail:.2f}, "
                f"cut {self.cut:.2f}, gaps {self.gaps or 'none'}"
                + (f", every test of path {self.dead_path} failed" if self.dead_path else ""))


def draw(seed, max_rows=400, **fixed):
    """A random :class:`Spec` (``fixed``: fields to take as given) of at most ``max_rows``
    tests."""
    rng = np.random.default_rng(seed)
    tests = fixed.get("tests") or tuple(t for t in TESTS if rng.random() < 0.6) or (TESTS[rng.integers(3)],)
    directions = fixed.get("directions") or (("forward",) if rng.random() < 0.5 else ("forward", "reverse"))
    buffers = fixed.get("buffers") or tuple(sorted(rng.choice(BUFFERS, rng.integers(1, 4), replace=False).tolist()))
    sizes = fixed.get("sizes") or tuple(sorted(rng.choice(SIZES, rng.integers(1, 4), replace=False).tolist()))
    per_path = (len(directions) * (len(buffers) * ("tcp" in tests) + ("udp" in tests))
                + len(sizes) * ("ping" in tests))
    most_paths = max(1, min(50, max_rows // (3 * per_path)))
    n_paths = fixed.get("n_paths") or int(min(most_paths, np.ceil(np.exp(rng.uniform(0, np.log(50))))))
    n_paths = min(n_paths, most_paths)
    names = [PATH_NAMES[i] if i < len(PATH_NAMES) else f"p{i:02d}" for i in range(n_paths)]
    slots = fixed.get("slots") or int(max(3, min(max_rows // (n_paths * per_path), rng.integers(3, 200))))
    span_s = fixed.get("span_s") or float(np.exp(rng.uniform(np.log(300), np.log(90 * 86400))))
    interval = max(30.0, round(span_s / slots))
    spec = Spec(seed, tests, directions, buffers, sizes, tuple(names), interval, slots,
                fail=fixed.get("fail", float(rng.choice([0, 0.02, 0.1, 0.3]))),
                cut=fixed.get("cut", float(rng.choice([0, 0.02, 0.1]))))
    if slots >= 8 and rng.random() < 0.7:            # gaps: whole slots missed
        for _ in range(rng.integers(1, 3)):
            first = int(rng.integers(1, slots - 2))
            spec.gaps.append((first, min(slots - 2, first + int(rng.integers(1, max(2, slots // 5))))))
    if n_paths > 1 and rng.random() < 0.2:           # a path whose every test failed
        spec.dead_path = names[-1]
    return spec


START = pd.Timestamp("2026-03-02T06:00:00")


def generate(parent, seed, name=None, max_rows=400, **fixed):
    """Write a generated monitor campaign under ``parent``; return ``(directory, spec)``."""
    spec = draw(seed, max_rows, **fixed)
    rng = np.random.default_rng(seed + 1_000_003)
    name = name or f"gen-{seed:04d}"
    directory = Path(parent) / name
    (directory / "runs").mkdir(parents=True)
    pool = blocks()
    rows = []
    missed = {s for a, b in spec.gaps for s in range(a, b + 1)}
    tests_of_slot = []
    for path in spec.paths:
        for direction in spec.directions:
            if "tcp" in spec.tests:
                tests_of_slot += [(path, direction, "tcp", b, None) for b in spec.buffers]
            if "udp" in spec.tests:
                tests_of_slot.append((path, direction, "udp", None, None))
        if "ping" in spec.tests:
            tests_of_slot += [(path, "forward", "ping", None, z) for z in spec.sizes]
    step = min(10.0, 0.9 * spec.interval_s / len(tests_of_slot))
    for slot in range(spec.slots):
        if slot in missed:
            continue
        due = START + pd.Timedelta(seconds=slot * spec.interval_s)
        for k, (path, direction, test, buffer, size) in enumerate(tests_of_slot):
            started = due + pd.Timedelta(seconds=k * step + float(rng.uniform(0, 0.5 * step)))
            rows.append(_row(directory, pool, rng, spec, slot, started, path, direction, test, buffer, size))
    with open(directory / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=MONITOR_MANIFEST_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    _write_yaml(directory, name, spec, rng, rows)
    return directory, spec


def _row(directory, pool, rng, spec, slot, started, path, direction, test, buffer, size):
    run = f"{slot:06d}-{path}-{direction}-{test}" + (f"-b{buffer}" if buffer else "") + (f"-z{size}" if size else "")
    dead = path == spec.dead_path
    roll = rng.random()
    outcome, reason, block, cut = "ok", "", None, False
    if dead or roll < spec.fail:
        failed = pool.get(("failed", test, direction)) or pool.get(("failed", "tcp", "forward"))
        if test != "ping" and failed and rng.random() < 0.5:
            block = failed[rng.integers(len(failed))]
            outcome, reason = block.outcome, block.reason
        elif test == "ping" and pool.get(("failed", "ping", "forward")) and rng.random() < 0.5:
            block = pool[("failed", "ping", "forward")][0]
            outcome, reason = block.outcome, block.reason
        else:
            outcome, reason = NO_LOG[rng.integers(len(NO_LOG))]
    else:
        ok = pool[("ok", test, direction if test != "ping" else "forward")]
        block = ok[rng.integers(len(ok))]
        if roll < spec.fail + spec.cut:
            outcome, reason, cut = "timeout", f"killed after timeout_s ({spec.interval_s:g} s)", True
    tool = block.tool if block is not None else ("ping" if test == "ping" else "iperf3")
    if test == "ping" and tool != "ping":
        tool = "ping"
    file, sha = "", ""
    if block is not None and block.file is not None:
        ext = block.file.suffix
        rel = f"runs/{started:%Y-%m-%d}/{run}{ext}"
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if cut:
            data = block.file.read_bytes()
            target.write_bytes(data[: int(len(data) * rng.uniform(0.2, 0.8))])
        else:
            shutil.copyfile(block.file, target)
        file, sha = rel, sha256_file(target)
    rate = "" if test != "udp" else "20000000"
    return {"run": run, "role": "ping" if test == "ping" else "iperf", "path": file, "sha256": sha,
            "slot": slot, "started": started.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "path_name": path, "direction": direction, "test": test, "tool": tool,
            "socket_buffer": buffer or "", "size": size or "", "rate": rate,
            "outcome": outcome, "reason": reason}


def _iso(t):
    return pd.Timestamp(t).strftime("%Y-%m-%dT%H:%M:%SZ")


def _write_yaml(directory, name, spec, rng, rows):
    from thruput.monitor.campaign import write_yaml

    times = pd.to_datetime([r["started"] for r in rows]).tz_localize(None)
    start, end = START, max(times.max(), START)
    tests = []
    if "tcp" in spec.tests:
        tests.append({"test": "tcp", "tool": "iperf3", "duration_s": 5.0, "socket_buffers": list(spec.buffers)})
    if "udp" in spec.tests:
        tests.append({"test": "udp", "tool": "iperf3", "duration_s": 5.0, "rate_bps": 2.0e7})
    if "ping" in spec.tests:
        tests.append({"test": "ping", "count": 10, "interval_s": 0.2, "sizes": list(spec.sizes)})
    hosts = {}
    paths = []
    for i, p in enumerate(spec.paths):
        src, dst = ("here", f"far-{i}") if rng.random() < 0.7 else (None, None)
        paths.append({"name": p, "source": src, "destination": dst, "address": f"10.9.{i // 250}.{i % 250 + 1}",
                      "directions": list(spec.directions), "between": None,
                      "capacity_bps": None if rng.random() < 0.5 else 5.0e7})
        for h in (src, dst):
            if h is not None:
                hosts[h] = {"description": f"generated host {h}"}
    step = pd.Timedelta(seconds=spec.interval_s)
    explained = []
    for a, b in spec.gaps:
        explained.append({"from": _iso(START + a * step - pd.Timedelta(seconds=1)),
                          "to": _iso(START + (b + 1) * step - pd.Timedelta(seconds=1)),
                          "reason": "generated gap (maintenance)"})
    events = []
    if rng.random() < 0.6:
        events.append({"time": _iso(START + int(spec.slots * rng.uniform(0.3, 0.7)) * step),
                       "what": "generated change", "planned": True})
    alerts = []
    if "tcp" in spec.tests:
        alerts.append({"test": "tcp", "direction": "any", "metric": "throughput", "below": 3.0e7, "for": 2})
    if "udp" in spec.tests and rng.random() < 0.5:
        alerts.append({"test": "udp", "direction": "any", "metric": "loss", "above": 0.05, "for": 2})
    if "ping" in spec.tests and rng.random() < 0.7:
        alerts.append({"test": "ping", "direction": "any", "metric": "rtt", "above": 60, "for": 2,
                       "size": int(spec.sizes[0])})
    if rng.random() < 0.25:
        alerts = []
    data = {"name": name, "title": f"Generated monitor {name}",
            "description": "Generated by tests/generated.py from recorded logs: " + spec.describe(),
            "kind": "monitor", "dates": {"start": _iso(start), "end": _iso(end)},
            "who": ["tests/generated.py"], "paths": paths, "hosts": hosts,
            "tools": {"iperf3": "3.12", "ping": "iputils 20221126"},
            "schedule": {"interval_s": float(spec.interval_s), "jitter_s": 0.0, "order": "fixed",
                         "seed": int(spec.seed), "timeout_s": 30.0, "tests": tests},
            "events": events, "explained": explained, "notes": None}
    if alerts:
        data["alerts"] = alerts
    write_yaml(directory, data)


# ------------------------------------------------------------------ pipeline and pages

def pipeline_steps(stages, name, processed, directory=None, params=ROOT / "params.yaml"):
    """The commands of ``dvc.yaml``'s monitor stages ``stages`` (e.g. ``normalize-monitor``)
    for campaign ``name``, as argument lists of ``thruput``: its raw folder ``directory``,
    its products in ``processed``. The tests run what the pipeline runs, not a copy of it."""
    import shlex

    import yaml

    dvc = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    out = []
    for stage in stages:
        cmd = dvc[stage]["do"]["cmd"].replace("data/raw/${item}", str(directory)).replace(
            "data/processed/", f"{processed}/").replace("params.yaml", str(params)).replace("${item}", name)
        words = shlex.split(cmd)
        assert words[0] == "thruput", cmd
        out.append(words[1:])
    return out


def build_products(directory, processed, params=ROOT / "params.yaml"):
    """check, normalize, stats, rollups and health of a campaign, as the pipeline runs them
    (the CLI in this process). Raises AssertionError naming the step that failed."""
    from thruput.cli import main

    steps = [["campaign", "check", str(directory)], *pipeline_steps(
        ("normalize-monitor", "stats-monitor", "rollups-monitor", "health-monitor"), Path(directory).name,
        processed, directory, params)]
    for step in steps:
        status = main(step)
        assert status == 0, f"thruput {' '.join(step[:2])} exited {status}"


def build_health_page(name, processed, out, params=ROOT / "params.yaml"):
    """The health page of campaign ``name`` whose store and statistics product are in
    ``processed``: its rollups and health products (the pipeline's steps), then the
    executed notebook. For the tests of "any schedule builds its page", which built the
    monitor page only."""
    from thruput.cli import main
    from thruput.site.execute import execute

    for step in pipeline_steps(("rollups-monitor", "health-monitor"), name, processed, params=params):
        assert main(step) == 0, f"thruput {' '.join(step[:2])} failed"
    return execute(NOTEBOOKS[1], Path(out) / f"monitor-health-{name}.ipynb",
                   {"campaign": name, "processed": str(processed)}, cwd=ROOT)


def build_pages(name, processed, out):
    """Execute every monitor page of campaign ``name``; ``{notebook name: executed nb}``."""
    from thruput.site.execute import execute

    pages = {}
    for notebook in NOTEBOOKS:
        target = Path(out) / f"{notebook.stem}-{name}.ipynb"
        pages[notebook.name] = execute(notebook, target, {"campaign": name, "processed": str(processed)},
                                       cwd=ROOT)
    return pages


#: A number in e-notation as a reader would see it (``8.367e+06``), not inside a word.
E_NOTATION = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?[eE][-+]?\d+(?![\w.])")
_SCRIPT = re.compile(r"<script\b.*?</script>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_EMBED = re.compile(r'vegaEmbed\("#[^"]+", (\{.*\}), \{"actions"', re.DOTALL)


def page_text(nb):
    """What a reader reads of an executed page: its markdown and its outputs' text, charts'
    scripts left out (their specs are checked by :func:`chart_problems`)."""
    parts = [c.source for c in nb.cells if c.cell_type == "markdown"]
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/html" in data:
                parts.append(html.unescape(_TAG.sub(" ", _SCRIPT.sub(" ", data["text/html"]))))
            if "text/markdown" in data:
                parts.append(data["text/markdown"])
            if "text/plain" in data and not {"text/html", "text/markdown"} & set(data):
                parts.append(data["text/plain"])
            if out.get("output_type") == "stream":
                parts.append(out.get("text", ""))
    return "\n".join(parts)


def charts(nb):
    """The Vega-Lite spec of every chart of an executed page (site renderer)."""
    specs = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            for match in _EMBED.finditer(out.get("data", {}).get("text/html", "")):
                specs.append(json.loads(match.group(1)))
    return specs


def _units(spec, datasets, inherited=None):
    """``[(title, [rows of each mark's data])]`` of every unit (a layer or a single mark)
    of a spec: a panel of a vconcat is a unit of its own."""
    data = spec.get("data", {}).get("name") if isinstance(spec.get("data"), dict) else None
    data = data or inherited
    for key in ("vconcat", "hconcat", "concat"):
        if key in spec:
            return [u for sub in spec[key] for u in _units(sub, datasets, data)]
    if "spec" in spec:                             # facet / repeat
        return _units(spec["spec"], datasets, data)
    title = spec.get("title")
    title = title.get("text") if isinstance(title, dict) else title
    if "layer" in spec:
        marks = []
        for layer in spec["layer"]:
            for _t, rows in _units(layer, datasets, data):
                marks += rows
        return [(title, marks)]
    if "mark" in spec:
        return [(title, [len(datasets.get(data, []))])]
    return []


def chart_problems(spec):
    """Why a chart draws nothing: a unit none of whose marks has a row of data."""
    datasets = spec.get("datasets", {})
    units = _units(spec, datasets)
    if not units:
        return ["a chart with no mark"]
    return [f"chart {title!r}: no mark has data" for title, rows in units if not any(rows)]


def page_problems(nb):
    """What is wrong in an executed page: errors, NaN / None / e-notation in its text, NaN
    in a chart's spec, charts that draw nothing."""
    problems = [f"error in a cell: {o.get('ename')}: {o.get('evalue')}" for c in nb.cells
                for o in c.get("outputs", []) if o.get("output_type") == "error"]
    text = page_text(nb)
    for word in ("NaN", "None", "nan"):
        for m in re.finditer(rf"(?<!\w){word}(?!\w)", text):
            problems.append(f"{word!r} in the page: ...{text[max(0, m.start() - 80):m.end() + 40]!r}...")
    for m in E_NOTATION.finditer(text):
        problems.append(f"e-notation {m.group()!r}: ...{text[max(0, m.start() - 80):m.end() + 20]!r}...")
    for spec in charts(nb):
        problems += chart_problems(spec)
        if re.search(r"(?<![\w\"])NaN(?![\w\"])", json.dumps(spec)):
            problems.append(f"NaN in the spec of chart {spec.get('title')!r}")
    return problems
