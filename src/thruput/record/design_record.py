"""``record_design()``: run a declared design (factors x levels x repeats) into a
``kind: design`` campaign, with host settings applied at both ends and restored.

A factor is applied as its ``applied`` text says:

``iperf3 -X``
    A client option of iperf3 (``-C``, ``-M``, ``-w``, ``-P``, ``--fq-rate``; ``-R`` and
    ``-Z`` are flags: levels ``1``/``true``/``on`` set them). It concerns the ``iperf3``
    and ``disk`` applications, and ``iperf2`` and ``nuttcp`` where they have an equivalent
    (:data:`EQUIVALENT`: ``-w``, ``-P``, ``-C``, ``-M``, ``-R``); elsewhere (``http``) the
    run's cell is empty (not applicable).
``sysctl NAME``, ``mtu``, ``tc qdisc``
    A host setting (:mod:`thruput.record.settings`), applied at both ends before the run
    and restored when the recording ends, fails or is interrupted.
``application``
    What moves the data: ``iperf3`` (memory to memory, ``iperf3 -c ... -J``), ``http``
    (a file of ``size_bytes`` served at the far end by ``python3 -m http.server``, fetched
    by ``curl -w '%{json}'``) or ``disk`` (``iperf3 -F``: the file read from disk at this
    end, written to disk at the far end), ``iperf2`` (``iperf -c -e``) or ``nuttcp``
    (``nuttcp -v``), each with its server started at the far end for the run.

The far end is this host, a network namespace or a host over ssh
(:class:`thruput.record.far.End`): thruput starts the servers there (``iperf3 -s -1 -J``
per run, one HTTP server per recording), keeps each iperf3 server's log under
``server/`` (listed as ``ancillary`` in campaign.yaml) and describes both hosts. Runs go
in a random order from a stored seed; rows already in runs.csv are skipped (resume).
"""

from __future__ import annotations

import itertools
import os
import random
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from tqdm import tqdm

from ..campaign import runs as runs_csv
from ..campaign.design import Design, Factor, design_columns, design_run_id, factor_problems
from ..campaign.layout import sha256_of
from . import far as far_mod
from ..quantities import utc_iso
from .settings import Settings, is_host_setting
from .sweep import RecordError, _sigterm_as_interrupt

__all__ = ["DesignPlan", "DEFAULT_APPLIED", "load_design_plan", "plan_from_factors", "record_design",
           "DesignSummary", "APPLICATIONS"]

APPLICATIONS = ("iperf3", "http", "disk", "iperf2", "nuttcp")
#: iperf3 client options and their equivalents in iperf 2 and nuttcp (a function of the
#: level where the spelling differs); an option without one is not applicable there.
EQUIVALENT = {
    "iperf2": {"-w": "-w", "-P": "-P", "-C": "-Z", "-M": "-M", "-R": "-R"},
    "nuttcp": {"-w": lambda v: [f"-w{max(int(float(v)) // 1024, 1)}"], "-P": lambda v: [f"-N{v}"],
               "-R": "-r"},
}
#: How a factor is applied when its declaration does not say (by its name).
DEFAULT_APPLIED = {
    "cc": "sysctl net.ipv4.tcp_congestion_control",
    "congestion_control": "sysctl net.ipv4.tcp_congestion_control",
    "mtu": "mtu", "qdisc": "tc qdisc", "application": "application",
    "tcp_rmem": "sysctl net.ipv4.tcp_rmem", "tcp_wmem": "sysctl net.ipv4.tcp_wmem",
    "window": "iperf3 -w", "socket_buffer": "iperf3 -w", "streams": "iperf3 -P", "mss": "iperf3 -M",
    "reverse": "iperf3 -R", "fq_rate": "iperf3 --fq-rate", "zerocopy": "iperf3 -Z",
}
#: Units of the numeric factors known by name.
DEFAULT_UNITS = {"mtu": "byte", "window": "byte", "socket_buffer": "byte", "mss": "byte", "streams": "count",
                 "fq_rate": "bit/s"}
#: iperf3 options that are flags (no value).
FLAGS = ("-R", "-Z", "--reverse", "--zerocopy", "--bidir")
TRUE = ("1", "true", "yes", "on")
#: Seconds a client may take beyond its duration before it is stopped.
GRACE_S = 30


@dataclass
class DesignPlan:
    """What to record: the factors (with ``applied``), repeats, seconds per run, the size
    of the file an ``http`` or ``disk`` run moves, and the seed of the random order."""

    factors: tuple
    repeats: int = 1
    duration_s: float = 2
    size_bytes: int = 8 * 2**20
    seed: int | None = None

    def __post_init__(self):
        problems = factor_problems([f.as_dict() for f in self.factors]) if self.factors else ["no factors"]
        problems = [p if isinstance(p, str) else p[1] for p in problems]
        if problems:
            raise ValueError("; ".join(problems))
        for f in self.factors:
            if not f.levels:
                raise ValueError(f"factor {f.name}: no levels to record")
            if f.applied == "application" and set(map(str, f.levels)) - set(APPLICATIONS):
                raise ValueError(f"factor {f.name}: applications are {', '.join(APPLICATIONS)}")
            if not (f.applied in ("application",) or is_host_setting(f.applied)
                    or (f.applied or "").startswith("iperf3 -")):
                raise ValueError(f"factor {f.name}: cannot apply {f.applied!r} (iperf3 -X, sysctl NAME, "
                                 "mtu, tc qdisc or application)")
        if self.seed is None:
            self.seed = random.SystemRandom().randrange(2**31)

    @property
    def design(self) -> Design:
        return Design(tuple(self.factors), time=False)

    def runs(self) -> list[tuple[str, dict, int]]:
        """``(run id, {factor: level or None}, repeat)`` in the recording order (shuffled by
        the seed); levels not applicable to a run's application are None, and the cells
        that become equal by that are recorded once."""
        seen, out = set(), []
        names = [f.name for f in self.factors]
        for combo in itertools.product(*(f.levels for f in self.factors)):
            values = dict(zip(names, combo))
            app = self.application(values)
            for f in self.factors:
                if (f.applied or "").startswith("iperf3 -") and not _applies(f.applied.split()[1], app):
                    values[f.name] = None
            key = tuple(values.values())
            if key in seen:
                continue
            seen.add(key)
            for repeat in range(self.repeats):
                out.append((design_run_id(["" if v is None else v for v in key], repeat), values, repeat))
        random.Random(self.seed).shuffle(out)
        return out

    def application(self, values) -> str:
        for f in self.factors:
            if f.applied == "application":
                return str(values[f.name])
        return "iperf3"


def _factor(spec) -> Factor:
    name = spec["name"]
    levels = tuple(spec.get("levels") or ())
    units = spec.get("units", DEFAULT_UNITS.get(name) if all(_is_number(v) for v in levels) else None)
    if units is None and levels and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in levels):
        units = "1"
    if units is not None:
        levels = tuple(int(v) if float(v).is_integer() else float(v) for v in levels)
    applied = spec.get("applied") or DEFAULT_APPLIED.get(name)
    return Factor(name, levels, units, bool(spec.get("ordered", units is not None)), None, applied)


def _is_number(value) -> bool:
    try:
        float(value)
        return not isinstance(value, bool)
    except (TypeError, ValueError):
        return False


def load_design_plan(path, **overrides) -> DesignPlan:
    """A :class:`DesignPlan` from a YAML file: ``factors`` (``name``, ``levels``,
    optional ``units``, ``applied``), ``repeats``, ``duration`` (s), ``size`` (bytes),
    ``seed``; keyword arguments that are not None override them."""
    doc = yaml.safe_load(Path(path).read_text()) or {}
    kw = {"factors": tuple(_factor(f) for f in doc.get("factors") or ()), "repeats": doc.get("repeats", 1),
          "duration_s": doc.get("duration", 2), "size_bytes": doc.get("size", 8 * 2**20), "seed": doc.get("seed")}
    kw.update({k: v for k, v in overrides.items() if v is not None})
    return DesignPlan(**kw)


def plan_from_factors(factors, applied=(), **kw) -> DesignPlan:
    """A :class:`DesignPlan` from ``--factor NAME=L1,L2`` and ``--apply NAME=HOW`` texts."""
    how = {}
    for text in applied:
        name, _, value = text.partition("=")
        how[name.strip()] = value.strip()
    specs = []
    for text in factors:
        name, sep, levels = text.partition("=")
        if not sep or not levels:
            raise ValueError(f"--factor {text!r}: expected NAME=LEVEL1,LEVEL2")
        values = [v.strip() for v in levels.split(",")]
        values = [int(v) if v.lstrip("-").isdigit() else v for v in values]
        specs.append({"name": name.strip(), "levels": values, "applied": how.get(name.strip())})
    unknown = set(how) - {s["name"] for s in specs}
    if unknown:
        raise ValueError(f"--apply names no factor: {', '.join(sorted(unknown))}")
    return DesignPlan(tuple(_factor(s) for s in specs), **{k: v for k, v in kw.items() if v is not None})


@dataclass
class DesignSummary:
    campaign_dir: str
    planned: int
    skipped: int
    recorded: list = field(default_factory=list)
    failed: dict = field(default_factory=dict)
    restore_errors: list = field(default_factory=list)


def _applies(option, app):
    """Whether iperf3's client ``option`` means something for application ``app``."""
    return app in ("iperf3", "disk") or option in EQUIVALENT.get(app, {})


def _tool_options(plan, values, app="iperf3"):
    """The client options of a run's tool-option factors, in ``app``'s spelling."""
    argv = []
    for f in plan.factors:
        level = values.get(f.name)
        if level is None or not (f.applied or "").startswith("iperf3 -"):
            continue
        option = f.applied.split()[1]
        if not _applies(option, app):
            continue
        spelled = EQUIVALENT[app][option] if app in EQUIVALENT else option
        if option in FLAGS:
            if str(level).lower() in TRUE:
                argv.append(spelled)
        elif callable(spelled):
            argv += spelled(level)
        else:
            argv += [spelled, str(level)]
    return argv


def record_design(campaign_dir, plan: DesignPlan, host: str, *, near=None, far=None, port=5201,
                  about=None, progress=True, command=None, capture=False) -> DesignSummary:
    """Record ``plan`` into ``campaign_dir`` (a ``kind: design`` campaign), resuming.

    Parameters
    ----------
    campaign_dir : path-like
    plan : DesignPlan
    host : str
        The far end's address, as this end reaches it.
    near, far : End, optional
        Where the clients run (default: this host) and where the servers run.
    port : int
        iperf3's port; the HTTP server uses ``port + 1``.
    about : dict, optional
        ``title``, ``description``, ``who``, ``notes`` for campaign.yaml.
    capture : bool
        Keep a headers-only capture of each run (``tcpdump -s 128``, pcap) taken at this
        end as ``runs/<run>.pcap`` (listed as ``ancillary``; read by
        :func:`thruput.packets.read_pcap`).

    Returns
    -------
    DesignSummary

    Raises
    ------
    RecordError
        A design that differs from the one recorded in ``campaign_dir``, or a far end that
        cannot be reached.
    KeyboardInterrupt
        On SIGINT/SIGTERM, after every host setting was restored.
    """
    near = near or far_mod.End()
    far = far or far_mod.End()
    directory = Path(campaign_dir)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "runs").mkdir(exist_ok=True)
    (directory / "server").mkdir(exist_ok=True)
    yaml_path = directory / "campaign.yaml"
    existing = yaml.safe_load(yaml_path.read_text()) if yaml_path.exists() else {}
    stored = (existing or {}).get("factors")
    if stored and [f["name"] for f in stored] != [f.name for f in plan.factors]:
        raise RecordError(f"{yaml_path}: its factors ({', '.join(f['name'] for f in stored)}) differ from "
                          f"this design's ({', '.join(f.name for f in plan.factors)}); record into a new folder")
    seed_note = _stored_seed(existing)
    if seed_note is not None:
        plan.seed = seed_note
    columns = design_columns(plan.design)
    rows = _read_rows(directory, columns)
    done = {r["run"] for r in rows}
    todo = [r for r in plan.runs() if r[0] not in done]
    summary = DesignSummary(str(directory), len(plan.runs()), len(plan.runs()) - len(todo))
    _, near_address = far_mod.address_towards(near, host)
    if near_address is None:
        raise RecordError(f"{near}: no route to {host}")
    try:
        far.run(["true"], timeout=30)
    except (RuntimeError, subprocess.SubprocessError) as exc:
        raise RecordError(f"far end {far}: {exc}") from None
    hosts = {"near": {**far_mod.describe(near, host), "address": near_address},
             "far": {**far_mod.describe(far, near_address), "address": host}}
    start = (existing or {}).get("dates", {}).get("start") or utc_iso(decimals=0)
    ancillary = list((existing or {}).get("ancillary") or [])
    tools = _tool_versions()
    settings = Settings({"near": (near, host), "far": (far, near_address)})
    restore_errors = []

    def write_yaml(end):
        doc = {"name": directory.resolve().name,
               "title": (about or {}).get("title") or existing.get("title") or
               f"design {' x '.join(f.name for f in plan.factors)} from {near} to {far}",
               "description": (about or {}).get("description") or existing.get("description") or
               f"Recorded by thruput record --design between {near} ({near_address}) and {far} ({host}).",
               "kind": "design",
               "dates": {"start": start, "end": end},
               "who": list((about or {}).get("who") or existing.get("who") or ["thruput record"]),
               "hosts": hosts, "tools": tools, "time": False,
               "factors": [{k: v for k, v in f.as_dict().items() if v is not None and k != "from"}
                           for f in plan.factors],
               "ancillary": ancillary,
               "notes": _notes(plan, near, far, command, restore_errors, (about or {}).get("notes"))}
        if not ancillary:
            doc.pop("ancillary")
        tmp = yaml_path.with_suffix(".yaml.part")
        tmp.write_text("# A design recorded by `thruput record --design` (docs/design.md, Designs).\n"
                       + yaml.safe_dump(doc, sort_keys=False, width=100))
        os.replace(tmp, yaml_path)

    write_yaml(None)
    if not todo:
        write_yaml(existing.get("dates", {}).get("end") or utc_iso(decimals=0))
        return summary
    near_dir, far_dir = near.mkdtemp(), far.mkdtemp()
    http = None
    bar = tqdm(total=summary.planned, initial=summary.skipped, unit="run", desc=directory.name,
               disable=not progress, file=sys.stderr, dynamic_ncols=True)
    finished = False
    try:
        with _sigterm_as_interrupt():
            for run_id, values, repeat in todo:
                bar.set_postfix_str(run_id, refresh=True)
                for f in plan.factors:
                    if is_host_setting(f.applied) and values[f.name] is not None:
                        settings.set(f.applied, values[f.name])
                app = plan.application(values)
                if app == "http" and http is None:
                    http = _start_http(far, far_dir, host, port + 1, plan.size_bytes)
                started = utc_iso()
                dump = _start_capture(near, near_dir, host, directory / f"runs/{run_id}.pcap", run_id) \
                    if capture else None
                try:
                    outcome, reason, text, server_log = _run_one(plan, app, values, near, far, host, port,
                                                                 near_dir, far_dir, run_id)
                finally:
                    if dump is not None:
                        _drain(directory / f"runs/{run_id}.pcap")
                        dump.stop()
                if dump is not None and not any(a["path"] == f"runs/{run_id}.pcap" for a in ancillary):
                    ancillary.append({"path": f"runs/{run_id}.pcap",
                                      "what": f"headers-only capture of run {run_id} at {near} (tcpdump -s 128)"})
                rel = f"runs/{run_id}{'.txt' if app in ('iperf2', 'nuttcp') else '.json'}"
                part = directory / (rel + ".part")
                part.write_text(text)
                os.replace(part, directory / rel)
                if server_log:
                    srel = f"server/{run_id}{'.txt' if app in ('iperf2', 'nuttcp') else '.json'}"
                    (directory / srel).write_text(server_log)
                    if not any(a["path"] == srel for a in ancillary):
                        ancillary.append({"path": srel, "what": f"{'iperf3' if app in ('iperf3', 'disk') else app} server log at {far}"})
                cells = {"run": run_id, "role": "iperf", "path": rel, "sha256": sha256_of(directory / rel),
                         "started": started, "repeat": repeat, "outcome": outcome, "reason": reason}
                cells.update({n: "" if v is None else v for n, v in values.items()})
                runs_csv.append_rows(directory, [cells], columns)
                if outcome == "ok":
                    summary.recorded.append(run_id)
                else:
                    summary.failed[run_id] = reason
                bar.update(1)
        finished = True
    except RuntimeError as exc:     # a setting or a server that could not be applied or started
        raise RecordError(f"{exc} (host settings restored; re-run to resume)") from None
    finally:
        bar.close()
        if http is not None:
            http.stop()
        restore_errors += settings.restore()
        summary.restore_errors = restore_errors
        near.rmtree(near_dir)
        far.rmtree(far_dir)
        write_yaml(utc_iso(decimals=0) if finished else None)
    return summary


def _run_one(plan, app, values, near, far, host, port, near_dir, far_dir, run_id):
    """Run one run; ``(outcome, reason, client log text, server log text)``."""
    duration = plan.duration_s
    if app == "http":
        argv = ["curl", "-s", "-o", "/dev/null", "--max-time", str(max(60, 20 * duration)),
                "-w", "%{json}\\n", f"http://{_url_host(host)}:{port + 1}/data"]
        out = near.run(argv, check=False, timeout=max(60, 20 * duration) + GRACE_S)
        text = out.stdout
        ok = out.returncode == 0 and '"exitcode":0' in text
        return ("ok" if ok else "error"), ("" if ok else f"curl exit {out.returncode}: "
                                           f"{out.stderr.strip()[:200] or text[:200]}"), text, None
    if app in ("iperf2", "nuttcp"):
        return _run_other(plan, app, values, near, far, host, port, far_dir, run_id)
    server_argv = ["iperf3", "-s", "-1", "-J", "-p", str(port)]
    client = ["iperf3", "-c", host, "-p", str(port), "-J", *_tool_options(plan, values)]
    if app == "disk":
        data = f"{near_dir}/send.dat"
        if not Path(data).exists() and near.ssh is None:
            near.run(["sh", "-c", f"head -c {int(plan.size_bytes)} /dev/urandom > {shlex.quote(data)}"])
        server_argv += ["-F", f"{far_dir}/recv.dat"]
        client += ["-F", data]
    else:
        client += ["-t", f"{duration:g}"]
    server = far_mod.Server(far, server_argv, far_dir, f"iperf3-{run_id}")
    try:
        server.wait_listening(port)
        out = near.run(client, check=False, timeout=duration * 20 + GRACE_S)
        server.wait(10)
    finally:
        server.stop()
    log = server.log()
    if app == "disk":
        far.run(["rm", "-f", f"{far_dir}/recv.dat"], check=False)
    text = out.stdout
    error = ""
    try:
        import json
        error = json.loads(text).get("error") or ""
    except ValueError:
        error = (out.stderr or text).strip()[:200] or f"iperf3 exit {out.returncode}"
    return ("error" if error or out.returncode else "ok"), error, text, log


def _run_other(plan, app, values, near, far, host, port, far_dir, run_id):
    """An iperf 2 (``iperf -s`` / ``iperf -c -e``) or nuttcp (``nuttcp -1`` / ``nuttcp -v``)
    run; the server is started for the run and stopped after it."""
    duration = f"{plan.duration_s:g}"
    if app == "iperf2":
        server_argv = ["iperf", "-s", "-p", str(port)]
        client = ["iperf", "-c", host, "-p", str(port), "-e", "-t", duration, *_tool_options(plan, values, app)]
    else:
        # control connection on port, data on port + 2 (the http server has port + 1)
        server_argv = ["nuttcp", "-1", "--nofork", f"-P{port}", f"-p{port + 2}"]
        client = ["nuttcp", "-v", f"-P{port}", f"-p{port + 2}", f"-T{duration}", *_tool_options(plan, values, app),
                  host]
    server = far_mod.Server(far, server_argv, far_dir, f"{app}-{run_id}")
    try:
        server.wait_listening(port)
        out = near.run(client, check=False, timeout=plan.duration_s * 20 + GRACE_S)
        server.wait(2)
    finally:
        server.stop()
    log = server.log()
    text = out.stdout + ("" if app == "iperf2" else out.stderr)
    failed = out.returncode != 0 or "connect failed" in text or not text.strip()
    reason = f"{app} exit {out.returncode}: {(out.stderr or text).strip()[:200]}" if failed else ""
    return ("error" if failed else "ok"), reason, text, log


def _start_capture(near, near_dir, host, path, run_id):
    """tcpdump -s 128 of the traffic to and from ``host`` at ``near``, into ``path``."""
    dev, _ = far_mod.address_towards(near, host)
    path.unlink(missing_ok=True)
    dump = far_mod.Server(near, ["tcpdump", "--immediate-mode", "-B", "16384", "-i", dev, "-s", "128", "-U", "-w", str(path), "host", host],
                          near_dir, f"tcpdump-{run_id}")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "listening on" not in dump.log():
        if dump.proc.poll() is not None:
            raise RuntimeError(f"tcpdump at {near} failed: {dump.log()[:300]}")
        time.sleep(0.05)
    return dump


def _drain(path, quiet_s=0.3, timeout_s=10.0):
    """Wait until tcpdump has written what its ring buffer holds: the file has not grown
    for ``quiet_s`` (a busy machine's tcpdump may lag behind by a second)."""
    size, still, deadline = -1, time.monotonic(), time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        now = path.stat().st_size if path.exists() else 0
        if now != size:
            size, still = now, time.monotonic()
        elif time.monotonic() - still >= quiet_s:
            return
        time.sleep(0.05)


def _url_host(host):
    return f"[{host}]" if ":" in host else host


def _start_http(far, far_dir, host, port, size):
    far.run(["sh", "-c", f"head -c {int(size)} /dev/urandom > {shlex.quote(far_dir)}/data"])
    server = far_mod.Server(far, ["python3", "-m", "http.server", str(port), "--bind", host,
                                  "--directory", far_dir], far_dir, "http")
    try:
        server.wait_listening(port)
    except BaseException:
        server.stop()
        raise
    return server


def _read_rows(directory, columns):
    path = directory / "runs.csv"
    if not path.exists():
        return []
    import csv
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != tuple(columns):
            raise RecordError(f"{path}: its header {reader.fieldnames} is not this design's {list(columns)}")
        return list(reader)


def _stored_seed(existing):
    import re
    m = re.search(r"random order, seed (\d+)", (existing or {}).get("notes") or "")
    return int(m.group(1)) if m else None


def _notes(plan, near, far, command, restore_errors, extra):
    settings = [f.name for f in plan.factors if is_host_setting(f.applied)]
    lines = [f"Recorded by thruput record --design: {plan.repeats} repeat(s), {plan.duration_s} s per "
             f"iperf3 run, {plan.size_bytes} bytes per http/disk transfer, random order, seed {plan.seed}; "
             f"clients at {near}, servers at {far}. "
             + (f"Host settings ({', '.join(settings)}) were applied at both ends before their runs and "
                "restored afterwards." if settings else "No host setting was changed.")]
    if command:
        lines.append(f"Recorded with: {command}")
    if restore_errors:
        lines.append("NOT restored: " + "; ".join(restore_errors))
    if extra:
        lines.append(extra)
    return "\n".join(lines)


def _tool_versions():
    versions = {}
    for name, argv in {"iperf3": ["iperf3", "--version"], "curl": ["curl", "--version"]}.items():
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
            versions[name] = (out.stdout.split("\n")[0].split() + ["", ""])[1]
        except (OSError, subprocess.SubprocessError):
            versions[name] = None
    return versions
