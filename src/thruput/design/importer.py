"""``thruput campaign import --kind design``: a pile of logs as a campaign of declared factors.

Each file of the pile (directories walked, ``.tgz`` archives opened, as a monitor import
does) is read with :func:`thruput.read`. A throughput or rtt log becomes one run; a file
no format claims (a CSV export, a traceroute, a README) is skipped, counted with its
reason; a log a reader refuses (an iperf3 error document, a log cut off) is kept as a
failed run (``outcome`` error, the reader's message as ``reason``).

A run's factors come from three places:

``--pattern``
    A regular expression searched in the file's path relative to the folder given; every
    named group is a factor (``repeat`` is the replicate index).
``--factor NAME=VALUE``
    One value for the whole pile.
``--factor-from-log NAME,...``
    What the log itself says (:data:`LOG_FACTORS`): ``cc`` (iperf3's congestion
    control), ``mss``, ``direction`` (iperf3 ``-R``, nuttcp ``-r``/``-t``),
    ``socket_buffer`` (the requested ``-w``), ``protocol`` (tcp, udp, icmp), ``size``
    (ping's payload), ``client_network`` and ``server`` (ndt7's client network and server).

A factor's units and order are given by ``--factor-spec NAME:UNITS[:ordered|unordered]``,
else inferred (a factor whose every value is a number is numeric and ordered). Runs with
no repeat from the pattern are numbered in start order within their cell of levels.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import AmbiguousFormatError, ThruputError, UnknownFormatError
from ..campaign.outcome import cut_outcome
from ..quantities import parse_size
from ..reader import read
from ..campaign import runs
from ..campaign.design import (
    DESIGN_ROLES,
    Design,
    Factor,
    design_columns,
    design_run_id,
    factor_name_problem,
)
from ..campaign.layout import CAMPAIGN_FILE, sha256_of

__all__ = [
    "LOG_FACTORS",
    "SWEEP_GROUPS",
    "import_design",
    "parse_factor_spec",
    "pattern_makes_design",
]

#: Groups of a ``--pattern`` that a TCP sweep import knows; any other makes a design.
SWEEP_GROUPS = frozenset({"window", "streams", "repeat", "phase", "run"})
#: Groups of a pattern that are not factors: the replicate index, and a sweep's run id.
NOT_FACTORS = ("repeat", "run")
#: Factors read from a log: name -> (units or None, how it was applied, what it reads).
LOG_FACTORS = {
    "cc": (None, "iperf3 -C (end.sender_tcp_congestion)"),
    "mss": ("byte", "iperf3 -M (start.tcp_mss_default where not set)"),
    "direction": (None, "iperf3 -R / iperf -r / nuttcp -r (forward: client sends)"),
    "socket_buffer": ("byte", "iperf -w (socket buffer requested)"),
    "protocol": (None, "iperf -u (udp) or tcp; icmp for ping"),
    "size": ("byte", "ping -s (ICMP payload)"),
    "client_network": (None, "the client's network (ndt7: its address's /24, or /48 for IPv6)"),
    "server": (None, "the server's address (ndt7)"),
}
#: Prefix lengths of a client's network, by IP version.
CLIENT_PREFIX = {4: 24, 6: 48}
#: Units a factor may be given (``--factor-spec``).
SPEC_UNITS = ("bit/s", "byte", "byte/s", "s", "ms", "us", "1", "count", "percent", "MHz", "Hz")
#: Roles of a log's contract kind.
KIND_ROLES = {kind: role for role, kind in DESIGN_ROLES.items()}
#: How runs.csv and campaign.yaml write a time (UTC).
SECOND = "%Y-%m-%dT%H:%M:%S.%fZ"


def pattern_makes_design(pattern: str | None) -> bool:
    """True if ``pattern`` has a named group a TCP sweep import does not know
    (:data:`SWEEP_GROUPS`): then the pile is a design."""
    return bool(pattern) and bool(set(re.compile(pattern).groupindex) - SWEEP_GROUPS)


def parse_factor_spec(text: str) -> tuple[str, str | None, bool | None]:
    """``"socket_buffer:byte:ordered"`` -> ``("socket_buffer", "byte", True)``; units may be
    ``-`` or empty (not numeric), the order ``ordered`` or ``unordered`` (default: ordered
    when numeric). ValueError for anything else."""
    parts = text.split(":")
    if len(parts) > 3 or not parts[0]:
        raise ValueError(f"factor spec {text!r}: use NAME:UNITS[:ordered|unordered]")
    units = parts[1] if len(parts) > 1 and parts[1] not in ("", "-") else None
    if units is not None and units not in SPEC_UNITS:
        raise ValueError(f"factor spec {text!r}: units {units!r} not one of {', '.join(SPEC_UNITS)}")
    order = parts[2] if len(parts) > 2 else None
    if order not in (None, "ordered", "unordered"):
        raise ValueError(f"factor spec {text!r}: {order!r} is neither ordered nor unordered")
    return parts[0], units, None if order is None else order == "ordered"


def import_design(name: str, sources: Sequence, root="data/raw", pattern: str | None = None,
                  factors: Mapping[str, str] | None = None, from_log: Iterable[str] = (),
                  specs: Iterable[str] = (), time: bool = False, time_pattern: str | None = None,
                  skipped: list | None = None, **description: Any) -> Path:
    """Build design campaign ``root/name`` from a pile of logs.

    Parameters
    ----------
    name : str
    sources : sequence of path-like
        Directories (walked), files and ``.tgz`` archives. Each log is copied to
        ``runs/<its path inside the folder given>``.
    root : path-like, default ``"data/raw"``
    pattern : str, optional
        Regex searched in each log's path relative to its folder; every named group is a
        factor (``repeat``: the replicate index).
    factors : dict, optional
        ``{name: value}`` for the whole pile (``--factor``).
    from_log : iterable of str
        Names of :data:`LOG_FACTORS` to read from each log.
    specs : iterable of str
        ``NAME:UNITS[:ordered|unordered]`` (:func:`parse_factor_spec`).
    time : bool, default False
        The runs form series over time (campaign.yaml ``time: true``): every run needs its
        start (from the log, else ``time_pattern`` in its path).
    time_pattern : str, optional
        As ``--time-pattern`` of a monitor import: where a log does not say when it ran.
    skipped : list, optional
        Gets ``(file, reason)`` of every file skipped as not a log.
    **description
        ``title``, ``description``, ``who``, ``notes``: written into campaign.yaml.

    Returns
    -------
    pathlib.Path
        The campaign directory; ``thruput campaign check`` it, then fill in its TODOs.

    Raises
    ------
    ThruputError
        For a bad factor name or spec, a log the pattern does not match, a factor value
        that is not a number where its units say it is one, two runs with one id, no log
        in the pile, or an existing campaign.yaml.
    """
    from ..monitor.importer import _files

    directory = Path(root) / name
    if (directory / CAMPAIGN_FILE).exists():
        raise ThruputError(f"{directory / CAMPAIGN_FILE}: already exists; import into a new campaign")
    regex = re.compile(pattern) if pattern else None
    fixed = dict(factors or {})
    from_log = [n.strip() for n in from_log if n.strip()]
    unknown = [n for n in from_log if n not in LOG_FACTORS]
    if unknown:
        raise ThruputError(f"--factor-from-log {', '.join(unknown)}: not read from logs; "
                           f"known: {', '.join(LOG_FACTORS)}")
    spec = {}
    for text in specs:
        try:
            fname, units, ordered = parse_factor_spec(text)
        except ValueError as exc:
            raise ThruputError(str(exc)) from None
        spec[fname] = (units, ordered)
    names = ([g for g in (regex.groupindex if regex else ()) if g not in NOT_FACTORS]
             + [n for n in fixed] + from_log)
    names = list(dict.fromkeys(names))
    for fname in names:
        if (problem := factor_name_problem(fname)) is not None:
            raise ThruputError(problem)
    skipped = [] if skipped is None else skipped
    with tempfile.TemporaryDirectory(prefix="thruput-import-") as staging:
        entries, seen = [], {}
        for top, path in _files(sources, staging):
            e = _describe(top, path, regex, fixed, from_log, time_pattern)
            if e is None or "skip" in e:
                skipped.append((str(path), e["skip"] if e else "not a log"))
                continue
            if e["rel"] in seen:
                raise ThruputError(f"{path}: {e['rel']} is also {seen[e['rel']]}; import them separately")
            seen[e["rel"]] = path
            entries.append(e)
        if not entries:
            raise ThruputError("no log to import" + (f" ({len(skipped)} files skipped, e.g. "
                                                     f"{skipped[0][0]}: {skipped[0][1]})" if skipped else ""))
        design = _design(names, entries, spec, fixed, from_log, regex, time)
        _number_runs(entries, design)
        if time:
            undated = [e for e in entries if e["time"] is None]
            if undated:
                raise ThruputError(f"{undated[0]['source']}: the log does not say when it ran and a "
                                   "design over time needs every start; give --time-pattern")
        return _write(directory, name, entries, design, skipped, description)


def _describe(top, path, regex, fixed, from_log, time_pattern):
    """One file -> its run's cells, or ``{"skip": reason}`` for a file that is no log."""
    from ..monitor.importer import (
        WRAPPER_ONLY,
        _content_time,
        _guess_failed,
        _ndt7_hosts,
        _settings,
        _wrapper_start,
        time_from_pattern,
    )

    rel = path.relative_to(top).as_posix()
    raw = path.read_bytes()
    ds, outcome, reason = None, "ok", ""
    try:
        ds = read(path)
    except (UnknownFormatError, AmbiguousFormatError) as exc:
        when, only = _wrapper_start(raw)
        if not only:
            return {"skip": "not a log: " + str(exc).removeprefix(str(path) + ":").strip()[:200]}
        outcome, reason = "error", WRAPPER_ONLY
    except ThruputError as exc:
        outcome, reason = "error", str(exc).removeprefix(str(path) + ":").strip()
    if ds is not None and ds.attrs["kind"] not in KIND_ROLES:
        return {"skip": f"a {ds.attrs['kind']} log ({ds.attrs['format']}) is not a run of a design"}
    if ds is not None and int(ds.attrs.get("truncated", 0)):
        outcome, reason = cut_outcome(ds)
    if ds is not None and ds.attrs["kind"] == "throughput" and ds.sizes.get("run", 0) != 1:
        return {"skip": f"holds {ds.sizes.get('run', 0)} runs; a design's run is one log of one run"}
    when = _content_time(ds) if ds is not None else _wrapper_start(raw)[0]
    if when is None and ds is not None:
        when = _wrapper_time(ds)
    if when is None and time_pattern:
        when = time_from_pattern(time_pattern, rel)
    if ds is not None:
        role = KIND_ROLES[ds.attrs["kind"]]
    else:
        role = _guess_failed(raw, rel)[0]
    values = dict(fixed)
    if regex is not None:
        m = regex.search(rel)
        if m is None:
            raise ThruputError(f"{path}: --pattern {regex.pattern!r} does not match {rel!r}, the "
                               f"file's path relative to {top}")
        values.update({k: v for k, v in m.groupdict().items() if v is not None})
    said = _from_log(ds, role, from_log, _settings, _ndt7_hosts) if ds is not None else {}
    for fname, value in said.items():
        given = values.get(fname)
        if given is not None and value is not None and not _same(given, value):
            raise ThruputError(f"{path}: the log says {fname} {value}, --pattern or --factor "
                               f"says {given}")
        if value is not None:
            values[fname] = value
    return {"source": path, "rel": rel, "role": role, "time": when, "outcome": outcome,
            "reason": reason, "values": values, "sha256": "",
            "tool": (ds.attrs.get("tool") or "") if ds is not None else "",
            "tool_version": str(ds.attrs.get("tool_version") or "") if ds is not None else ""}


def _wrapper_time(ds):
    """The ``Start time:`` of the wrapper around a log (``attrs["line_prefix_wrapper"]``),
    as datetime64[ns] UTC, or None: a log with no reply of its own (100 % loss) still
    says when it ran there."""
    try:
        start = json.loads(ds.attrs.get("line_prefix_wrapper") or "{}").get("Start time")
    except ValueError:
        return None
    return None if not start else np.datetime64(pd.Timestamp(start).tz_convert("UTC").tz_localize(None), "ns")


def _same(a, b):
    try:
        return float(_number(a)) == float(_number(b))
    except (TypeError, ValueError):
        return str(a) == str(b)


def _from_log(ds, role, names, settings, _ndt7_hosts):
    """The :data:`LOG_FACTORS` ``names`` as ``ds`` states them (None where it does not)."""
    out = {}
    test, numbers = settings(ds, role)
    run = ds.isel(run=0) if "run" in ds.dims else None
    for fname in names:
        value = None
        if fname == "cc" and run is not None:
            for var in ("iperf3_sender_congestion", "iperf3_receiver_congestion"):
                if var in run and str(run[var].values) not in ("", "nan", "None"):
                    value = str(run[var].values)
                    break
        elif fname == "mss" and run is not None and "iperf3_mss" in run:
            mss = float(run["iperf3_mss"].values)
            value = int(mss) if np.isfinite(mss) and mss > 0 else None
        elif fname == "direction" and role == "iperf":
            value = numbers.get("direction") or "forward"
        elif fname == "socket_buffer":
            value = numbers.get("socket_buffer")
        elif fname == "protocol":
            value = "icmp" if ds.attrs.get("format") == "ping" else (test if role == "iperf" else None)
        elif fname == "size":
            value = numbers.get("size")
        elif fname in ("client_network", "server") and ds.attrs.get("format") == "ndt7":
            client, server = _ndt7_hosts(ds)
            value = server or None if fname == "server" else _network(client)
        out[fname] = value
    return out


def _network(address):
    """The network of ``address`` (:data:`CLIENT_PREFIX`), e.g. ``"86.188.171.0/24"``; None
    for an empty or unparsable one."""
    import ipaddress

    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    return str(ipaddress.ip_network(f"{ip}/{CLIENT_PREFIX[ip.version]}", strict=False))


def _number(value):
    """A factor value as a number: plain numbers, and sizes with K/M/G (1024-based)."""
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        return float(parse_size(text))


def _design(names, entries, spec, fixed, from_log, regex, time):
    """The :class:`Design` of the pile: each factor's units (given, of a log factor, or
    ``"1"`` when every value is a number), order and levels (those found)."""
    factors = []
    for fname in names:
        found = [e["values"].get(fname) for e in entries]
        found = [v for v in found if v not in (None, "")]
        units, ordered = spec.get(fname, (None, None))
        if fname not in spec and fname in LOG_FACTORS:        # (a log's name, from a pattern too)
            units = LOG_FACTORS[fname][0]
        if fname not in spec and units is None and found and all(_is_number(v) for v in found):
            units = "1"
        if units is not None:
            for e in entries:
                v = e["values"].get(fname)
                if v not in (None, ""):
                    try:
                        number = _number(v)
                    except ValueError:
                        raise ThruputError(f"{e['source']}: {fname} {v!r} is not a number "
                                           f"({units})") from None
                    e["values"][fname] = int(number) if number == int(number) else number
            levels = sorted({e["values"][fname] for e in entries if e["values"].get(fname) not in (None, "")})
        else:
            for e in entries:
                if e["values"].get(fname) is not None:
                    e["values"][fname] = str(e["values"][fname])
            levels = sorted({str(v) for v in found})
        source = "fixed" if fname in fixed else "log" if fname in from_log else "pattern"
        applied = LOG_FACTORS[fname][1] if source == "log" else None
        factors.append(Factor(fname, tuple(levels), units,
                              bool(units is not None if ordered is None else ordered), source, applied))
    return Design(tuple(factors), bool(time), "repeat", "design")


def _is_number(value):
    try:
        float(str(value))
        return True
    except ValueError:
        return False


def _number_runs(entries, design):
    """Repeats (from the pattern, else numbered in start and path order within each cell
    of levels) and run ids (:func:`design_run_id`), unique."""
    entries.sort(key=lambda e: (e["time"] is None, 0 if e["time"] is None else
                                int(np.datetime64(e["time"], "ns").astype(np.int64)), e["rel"]))
    counts, ids = {}, {}
    for e in entries:
        cell = tuple(e["values"].get(n) for n in design.names)
        given = e["values"].pop("repeat", None)
        e["values"].pop("run", None)
        if given is not None:
            if not str(given).isdigit():
                raise ThruputError(f"{e['source']}: repeat {given!r} is not a non-negative integer")
            e["repeat"] = int(given)
        else:
            e["repeat"] = counts.get(cell, 0)
        counts[cell] = max(counts.get(cell, 0), e["repeat"] + 1)
        e["run"] = design_run_id(["" if v is None else v for v in cell], e["repeat"])
        if e["run"] in ids:
            raise ThruputError(f"{e['source']}: run {e['run']} is also {ids[e['run']]} (same levels "
                               "and repeat); give the pattern a (?P<repeat>...) group or a factor "
                               "that tells them apart")
        ids[e["run"]] = e["source"]


def _iso(when):
    return "" if when is None else pd.Timestamp(when).strftime(SECOND)


def _write(directory, name, entries, design, skipped, description):
    (directory / "runs").mkdir(parents=True, exist_ok=True)
    for e in entries:
        target = directory / "runs" / e["rel"]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(e["source"], target)
        e["sha256"] = sha256_of(target)
    rows = []
    for e in entries:
        cells = {"run": e["run"], "role": e["role"], "path": f"runs/{e['rel']}", "sha256": e["sha256"],
                 "started": _iso(e["time"]), "repeat": e["repeat"], "outcome": e["outcome"],
                 "reason": e["reason"]}
        cells.update({n: "" if e["values"].get(n) is None else e["values"][n] for n in design.names})
        rows.append(cells)
    runs.write_rows(directory, rows, design_columns(design))
    (directory / CAMPAIGN_FILE).write_text(_yaml(name, entries, design, skipped, description),
                                           encoding="utf-8")
    return directory


def _yaml(name, entries, design, skipped, description):
    from ruamel.yaml import YAML

    times = sorted(e["time"] for e in entries if e["time"] is not None)
    tools = {}
    for e in entries:
        if e["tool"] and e["tool_version"]:
            tools.setdefault(e["tool"], e["tool_version"])
    reasons = {}
    for _, reason in skipped:
        reasons[reason.split(":")[0]] = reasons.get(reason.split(":")[0], 0) + 1
    notes = description.get("notes")
    if skipped:
        said = "; ".join(f"{count} {why}" for why, count in sorted(reasons.items()))
        notes = ((notes + "\n") if notes else "") + (f"Imported {len(entries)} logs; skipped "
                                                     f"{len(skipped)} files ({said}).")
    doc = {
        "name": name,
        "title": description.get("title") or "TODO: one line",
        "description": description.get("description") or "TODO: where and how it was measured, honestly.",
        "kind": "design",
        "dates": {"start": _iso(times[0]) if times else _iso(np.datetime64("now", "s")),
                  "end": _iso(times[-1]) if times else None},
        "who": list(description.get("who") or ["TODO"]),
        "hosts": {"host-a": {"description": "TODO: the hosts that ran the tests"}},
        "tools": tools,
        "time": design.time,
        "factors": [{k: v for k, v in f.as_dict().items() if v is not None} for f in design.factors],
        "notes": notes,
    }
    yaml = YAML()
    yaml.width = 100
    yaml.default_flow_style = None
    out = io.StringIO()
    out.write("# A design: runs with declared factors (docs/design.md, Designs).\n")
    yaml.dump(doc, out)
    return out.getvalue()
