"""Make campaign directories: a fresh template, or one built from a pile of existing logs.

:func:`new_campaign` writes ``campaign.yaml`` (a template that passes the schema, every
unknown left ``null`` and every sentence to write marked ``TODO``), an empty ``runs.csv``
and ``runs/``.

:func:`import_campaign` copies logs into ``runs/`` and writes the manifest. Each run's
window and streams are taken from the log where the log states them (iperf3 ``-J``
``sock_bufsize`` and ``num_streams``, iperf 2's ``TCP window size``...), else from the
named groups of a regular expression the user gives, matched against the file name:
``window`` (bytes, or with a K/M/G suffix meaning KiB/MiB/GiB), ``streams``, ``repeat``,
``phase`` (loaded/unloaded) and ``run``. Repeats not given are numbered in file-name order
within a (window, streams) cell. A ping log the pattern ties to no run is a campaign-wide
baseline (the path at rest). Everything the logs say goes into ``campaign.yaml``: the
tools' versions, the client's system (iperf3 ``system_info``), the first and last start
(iperf3 -J, ping -D, a timestamp wrapper), and the plan of every window x streams x repeat
seen, with each combination the pile lacks listed under ``explained``, so the imported
campaign passes its own ``thruput campaign check``.
"""

from __future__ import annotations

import copy
import io
import math
import re
import shutil
from pathlib import Path

import numpy as np
from ruamel.yaml import YAML

from . import dataset as cp
from . import runs
from .layout import sha256_of
from ..quantities import parse_size, utc_iso
from ..errors import ThruputError
from ..reader import read
from .metadata import UNAME

__all__ = ["new_campaign", "import_campaign", "template", "parse_size"]

#: Kind of a log (contract) -> its role in runs.csv.
KIND_ROLES = {kind: role for role, kind in cp.ROLE_KINDS.items()}
#: Size suffixes in file names: iperf's convention, K = 1024 bytes (binary prefixes).
#: The tool of the plan, from the format that read the throughput logs.
FORMAT_TOOLS = {"iperf3_json": "iperf3", "iperf3_text": "iperf3", "iperf2": "iperf2",
                "iperf2_csv": "iperf2"}

TEMPLATE = """\
# Campaign description: see docs/design.md and thruput's schemas/campaign.schema.json.
# Fill in what you know; leave null what you do not. Sizes in bytes, rates in bit/s.
name: {name}
title: "TODO: one line"
description: >-
  TODO: where and how it was measured, honestly (hardware, virtual or not, what else ran).
kind: {kind}
dates: {{start: "{start}", end: null}}
who: ["TODO"]
path:
  source: host-a
  destination: host-b
  between: null                  # what lies between, if known
  capacity_bps: null             # bottleneck capacity, if known
hosts:
  host-a: &host
    cpu_model: null
    cpu_count: null
    cpu_mhz: null
    memory_bytes: null
    os: null
    kernel: null
    nic: null
    link_speed_bps: null
    tcp: {{rmem_default: null, rmem_max: null, wmem_default: null, wmem_max: null,
           tcp_rmem: null, tcp_wmem: null, congestion_control: null,
           window_scaling: null, sack: null}}
  host-b: *host
tools: {{}}
plan:
{plan}
explained: []                    # - {{run: w4096-s16-r2, reason: "why it is missing"}}
notes: null
"""


def template(name, kind="tcp_sweep", plan=None, start=None):
    """The text of a template ``campaign.yaml`` for campaign ``name``."""
    plan = plan or ({"tool": "udpmon", "files": []} if kind == "udp_sweep" else
                    {"tool": "iperf3", "windows": [65536], "streams": [1], "repeats": 3,
                     "duration_s": 10, "pause_s": 10, "order": "sequential",
                     "ping": {"interval_s": 0.2, "size_bytes": 56}})
    start = start or utc_iso(decimals=0)
    lines = [f"  {key}: {_flow(value)}" for key, value in plan.items()]
    return TEMPLATE.format(name=name, kind=kind, start=start, plan="\n".join(lines))


def _flow(value):
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def new_campaign(name, root=cp.DEFAULT_ROOT, kind="tcp_sweep"):
    """Create ``root/name`` with a template ``campaign.yaml``, an empty ``runs.csv``, ``runs/``.

    Raises
    ------
    ThruputError
        If ``root/name/campaign.yaml`` already exists.
    """
    directory = Path(root) / name
    if (directory / cp.CAMPAIGN_FILE).exists():
        raise ThruputError(f"{directory / cp.CAMPAIGN_FILE}: already exists")
    (directory / "runs").mkdir(parents=True, exist_ok=True)
    if kind == "design":
        from .design import design_columns, design_of
        from .metadata import load_yaml

        (directory / cp.CAMPAIGN_FILE).write_text(DESIGN_TEMPLATE.format(
            name=name, start=utc_iso(decimals=0)),
            encoding="utf-8")
        metadata, _ = load_yaml(directory / cp.CAMPAIGN_FILE)
        runs.write_rows(directory, [], design_columns(design_of(metadata)))
        return directory
    (directory / cp.CAMPAIGN_FILE).write_text(template(name, kind), encoding="utf-8")
    _write_manifest(directory, [])
    return directory


#: The template of ``thruput campaign new --kind design`` (docs/design.md, Designs).
DESIGN_TEMPLATE = """\
# A design: runs with declared factors (docs/design.md, Designs). runs.csv has the columns
# run,role,path,sha256,started,repeat,outcome,reason and then one per factor, in this order:
# change the factors, then its header line to match.
name: {name}
title: "TODO: one line"
description: >-
  TODO: where and how it was measured, honestly (hardware, virtual or not, what else ran).
kind: design
dates: {{start: "{start}", end: null}}
who: ["TODO"]
hosts:
  host-a: {{description: "TODO: the hosts that ran the tests"}}
tools: {{}}
time: false                      # true: the runs form series over time
factors:
  - {{name: cc, levels: [reno, cubic, bbr], from: pattern, applied: "iperf3 -C"}}
  - {{name: socket_buffer, units: byte, ordered: true, from: log, applied: "iperf3 -w"}}
notes: null
"""


#: Reason written under ``explained`` for planned runs the imported pile lacks.
NOT_IN_PILE = "no log of this run among the imported files"
#: campaign.yaml fields the user may give on import (``thruput campaign import --title ...``).
DESCRIPTION_FIELDS = ("title", "description", "between", "capacity_bps", "who", "notes")


def import_campaign(name, files, root=cp.DEFAULT_ROOT, pattern=None, kind=None, **description):
    """Build campaign ``root/name`` from existing log files.

    Parameters
    ----------
    name : str
    files : sequence of path-like
        The logs; each is read with :func:`thruput.read` (so it must be readable) and
        copied to ``runs/`` under its own file name.
    root : path-like, default ``"data/raw"``
    pattern : str, optional
        Regular expression searched in each file name, with named groups among
        ``window``, ``streams``, ``repeat``, ``phase`` and ``run``; used where the log
        does not say.
    kind : {"tcp_sweep", "udp_sweep"}, optional
        Default: ``udp_sweep`` if every log is a UDPmon log, else ``tcp_sweep``.
    **description
        Any of ``title``, ``description``, ``between`` (what lies between the hosts),
        ``capacity_bps``, ``who`` (list), ``notes``: written into ``campaign.yaml``.

    Returns
    -------
    pathlib.Path
        The campaign directory; ``thruput campaign check`` it, then fill in the TODOs.

    Raises
    ------
    ThruputError
        For an unreadable log, a log whose window/streams neither it nor the pattern say,
        two logs with one name, or an existing ``campaign.yaml``.
    """
    unknown = set(description) - set(DESCRIPTION_FIELDS)
    if unknown:
        raise TypeError(f"unknown campaign.yaml fields {sorted(unknown)}; known: {DESCRIPTION_FIELDS}")
    directory = Path(root) / name
    if (directory / cp.CAMPAIGN_FILE).exists():
        raise ThruputError(f"{directory / cp.CAMPAIGN_FILE}: already exists; import into a new campaign")
    regex = re.compile(pattern) if pattern else None
    entries, names = [], set()
    for path in map(Path, files):
        if path.name in names:
            raise ThruputError(f"{path}: two files named {path.name}; rename one first")
        names.add(path.name)
        entries.append(_describe(path, regex))
    if kind is None:
        kind = "udp_sweep" if all(e["role"].startswith("udpmon") for e in entries) else "tcp_sweep"
    _number_repeats(entries)
    plan = _plan(entries, kind)  # before anything is written: it refuses a pile without runs

    (directory / "runs").mkdir(parents=True, exist_ok=True)
    for e in entries:
        shutil.copy2(e["source"], directory / e["path"])
        e["sha256"] = sha256_of(directory / e["path"])      # as imported: later changes are refused
    rows = sorted(entries, key=lambda e: (e["started"] or "", e["run"], e["role"], e["phase"]))
    _write_manifest(directory, rows)
    starts = sorted(e["started"] for e in entries if e["started"])
    text = template(name, kind, plan, start=starts[0] if starts else None)
    (directory / cp.CAMPAIGN_FILE).write_text(
        _fill(text, entries, plan, kind, starts, description), encoding="utf-8")
    return directory


def _fill(text, entries, plan, kind, starts, description):
    """The template ``text`` with everything the logs and the user said filled in."""
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 100
    yaml.representer.add_representer(
        type(None), lambda rep, _: rep.represent_scalar("tag:yaml.org,2002:null", "null"))
    doc = yaml.load(text)
    for key in ("title", "description", "who", "notes"):
        if description.get(key) is not None:
            doc[key] = description[key]
    for key in ("between", "capacity_bps"):
        if description.get(key) is not None:
            doc["path"][key] = description[key]
    doc["dates"]["end"] = starts[-1] if starts else None
    tools = {}
    for e in entries:
        if e["tool"] and e["tool_version"]:
            tools.setdefault(e["tool"], e["tool_version"])
    doc["tools"] = tools
    uname = next((e["system_info"] for e in entries if e["system_info"]), "")
    if uname:
        # copies: host-b is an alias of host-a's map in the template
        source = copy.deepcopy(dict(doc["hosts"]["host-a"]))
        m = UNAME.match(uname)
        source.update(os=m["sysname"] if m else None, kernel=m["release"] if m else None,
                      description=f"as iperf3 reported it (system_info: {uname})")
        doc["hosts"]["host-a"] = source
        doc["hosts"]["host-b"] = copy.deepcopy(dict(doc["hosts"]["host-b"]))
    if kind == "tcp_sweep":
        have = {(e["run"], e["role"], e["phase"] if e["role"] == "ping" else "") for e in entries}
        needs_ping = "ping" in plan
        explained = []
        for run in cp.planned_runs({"plan": plan}):
            lacks = [] if (run, "iperf", "") in have else ["iperf log"]
            if needs_ping and any(e["role"] == "ping" and e["phase"] in cp.PHASES for e in entries):
                lacks += [f"{p} ping" for p in cp.PHASES if (run, "ping", p) not in have]
            if lacks:
                explained.append({"run": run, "reason": f"{NOT_IN_PILE} ({' and '.join(lacks)})"})
        doc["explained"] = explained
        if not any(e["role"] == "ping" and e["phase"] in cp.PHASES for e in entries):
            plan.pop("ping", None)
            doc["plan"].pop("ping", None)
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue()


def _describe(path, regex):
    try:
        ds = read(path)
    except (ThruputError, OSError) as exc:
        raise ThruputError(f"cannot import {path}: {exc}") from None
    role = KIND_ROLES.get(ds.attrs["kind"])
    if role is None:
        raise ThruputError(f"{path}: a {ds.attrs['kind']} log has no place in a campaign")
    given = {}
    if regex is not None:
        m = regex.search(path.name)
        if m is None:
            raise ThruputError(f"{path}: file name does not match --pattern {regex.pattern!r}")
        given = {k: v for k, v in m.groupdict().items() if v is not None}
    entry = {"source": path, "path": f"runs/{path.name}", "role": role, "format": ds.attrs["format"],
             "window": None, "streams": None, "repeat": None, "phase": "", "run": "",
             "started": _started(ds), "tool": ds.attrs.get("tool", ""),
             "tool_version": str(ds.attrs.get("tool_version", "") or ""),
             "system_info": _system_info(ds)}
    if role == "iperf":
        run = ds.isel(run=0)
        entry["window"] = _int_or_none(run["window_requested"])
        entry["streams"] = _int_or_none(run["streams"])
    if entry["window"] is None and "window" in given:
        entry["window"] = parse_size(given["window"])
    for key in ("streams", "repeat"):
        if entry[key] is None and key in given:
            entry[key] = int(given[key])
    entry["phase"] = given.get("phase", "") if role == "ping" else ""
    if role == "ping" and entry["phase"] == "" and entry["window"] is None and "run" not in given:
        entry["phase"] = cp.BASELINE     # tied to no run: the path at rest
        return entry
    if role == "ping" and entry["phase"] not in cp.PHASES:
        raise ThruputError(f"{path}: a ping log does not say whether it ran during a run; "
                           "give --pattern with a (?P<phase>loaded|unloaded) group")
    if role in ("iperf", "ping"):
        if "run" in given and cp.parse_run_id(given["run"]):
            entry["window"], entry["streams"], entry["repeat"] = cp.parse_run_id(given["run"])
        missing = [k for k in ("window", "streams") if entry[k] is None]
        if missing:
            raise ThruputError(f"{path}: the log does not say its {' and '.join(missing)}; give "
                               "--pattern with named groups, e.g. "
                               r"'w(?P<window>\d+[KM]?)-s(?P<streams>\d+)'")
    else:
        entry["run"] = given.get("run", path.stem)
    return entry


#: Variables that give when a log started, Unix time in s: iperf3 -J's start timestamp,
#: ping -D's reply timestamps (the first one is a probe interval after the start).
START_VARIABLES = ("iperf3_start_time", "timestamp")


def _started(ds):
    """When the log says it started, ISO 8601 UTC to the second; "" if it does not."""
    for name in START_VARIABLES:
        if name in ds.variables:
            values = np.asarray(ds[name].values, dtype=float).ravel()
            values = values[np.isfinite(values)]
            if values.size:
                return utc_iso(float(values[0]), decimals=0)
    return ""


def _system_info(ds):
    """The client's ``uname`` as iperf3 printed it (``start.system_info``), or ""."""
    if "iperf3_system_info" not in ds.variables:
        return ""
    values = [str(v).strip() for v in np.ravel(ds["iperf3_system_info"].values)]
    return next((v for v in values if v), "")


def _int_or_none(value):
    value = float(value)
    return None if math.isnan(value) else int(value)


def _number_repeats(entries):
    """Give repeats to runs without one: file-name order within each (window, streams)."""
    for role in ("iperf", "ping"):
        by_cell = {}
        for e in sorted((e for e in entries if e["role"] == role and e["phase"] != cp.BASELINE),
                        key=lambda e: e["source"].name):
            if e["repeat"] is None:
                key = (e["window"], e["streams"], e["phase"])
                e["repeat"] = by_cell.get(key, 0)
                by_cell[key] = e["repeat"] + 1
    baselines = sorted((e for e in entries if e["phase"] == cp.BASELINE),
                       key=lambda e: (e["started"], e["source"].name))
    for k, e in enumerate(baselines):
        e["run"] = f"{cp.BASELINE}-{k}"
    for e in entries:
        if e["role"] in ("iperf", "ping") and e["phase"] != cp.BASELINE:
            e["run"] = cp.run_id(e["window"], e["streams"], e["repeat"])


def _plan(entries, kind):
    if kind == "udp_sweep":
        return {"tool": "udpmon", "files": [e["path"] for e in entries]}
    runs = [e for e in entries if e["role"] == "iperf"]
    if not runs:
        raise ThruputError("no iperf log among the files: a tcp_sweep campaign needs at least one run")
    tool = FORMAT_TOOLS.get(runs[0]["format"], "iperf3") if runs else "iperf3"
    plan = {"tool": tool,
            "windows": sorted({e["window"] for e in runs}),
            "streams": sorted({e["streams"] for e in runs}),
            "repeats": max([e["repeat"] + 1 for e in runs] + [1])}
    if any(e["role"] == "ping" for e in entries):
        plan["ping"] = {}        # the logs do not say the interval and size asked for
    return plan


def _write_manifest(directory, entries):
    runs.write_rows(directory, entries, cp.MANIFEST_COLUMNS)
