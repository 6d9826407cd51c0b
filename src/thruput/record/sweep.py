"""``record()``: a whole sweep into a campaign directory, resumable, with a progress bar."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

from tqdm import tqdm

from . import hostinfo, metadata
from .manifest import MANIFEST, append_rows, complete_runs, read_rows
from .plan import Plan
from .runner import CONNECT_TIMEOUT_MS, PART, RUNS_DIR, run_cell
from ..errors import ThruputError
from ..quantities import utc_iso
from ..campaign.outcome import classify

__all__ = ["record", "RecordError", "RecordSummary", "probe_server"]

#: Seconds of the iperf3 probe run made before the sweep (checks the server, and asks it
#: for its system_info with --get-server-output).
PROBE_S = 1
#: Further probes, after 1, 2 ... s, while the iperf3 server says it is busy: still ending
#: a test, such as the one a Ctrl-C cut short a moment before the same command is run
#: again to resume (as run_cell's attempts do).
PROBE_BUSY_RETRIES = 4


class RecordError(ThruputError):
    """Recording cannot start or go on (no server, a plan that differs from the one on disk)."""


@dataclass
class RecordSummary:
    """What one ``record()`` call did."""

    campaign_dir: str
    planned: int
    skipped: int  # already complete before this call
    recorded: list = field(default_factory=list)  # run ids
    failed: dict = field(default_factory=dict)  # run id -> reason

    @property
    def complete(self):
        return self.skipped + len(self.recorded) == self.planned


def _which(tool):
    binary = {"iperf3": "iperf3", "iperf2": "iperf"}[tool]
    for name in (binary, "ping"):
        if shutil.which(name) is None:
            raise RecordError(f"{name} is not installed (needed by thruput record)")


def probe_server(plan, target):
    """Check that the iperf server answers; return (far host mapping, server version).
    An iperf3 server busy with another test is asked again (:data:`PROBE_BUSY_RETRIES`).

    Raises
    ------
    RecordError
        Naming the host, port and iperf's own error, and how to start a server.
    """
    port = target.port or (5201 if plan.tool == "iperf3" else 5001)
    hint = (f"; is an iperf server running on {target.host} port {port}? "
            f"Start one there with `{'iperf3 -s' if plan.tool == 'iperf3' else 'iperf -s'}`")
    if plan.tool == "iperf3":
        argv = ["iperf3", "-c", target.host, "-J", "-t", str(PROBE_S), "--get-server-output",
                "--connect-timeout", str(CONNECT_TIMEOUT_MS)]
    else:
        argv = ["iperf", "-c", target.host, "-t", str(PROBE_S)]
    if target.port:
        argv += ["-p", str(target.port)]
    for attempt in range(PROBE_BUSY_RETRIES + 1):
        if attempt:
            time.sleep(attempt)
        try:
            out = subprocess.run(target.argv(argv), capture_output=True, text=True,
                                 timeout=PROBE_S + 30)
        except subprocess.TimeoutExpired:
            raise RecordError(f"{plan.tool} probe to {target.host} timed out{hint}") from None
        if plan.tool != "iperf3" or classify(out.stdout + out.stderr) != "busy":
            break
    if plan.tool == "iperf2":
        if out.returncode != 0 or "connect failed" in out.stdout + out.stderr:
            raise RecordError(f"iperf probe to {target.host} failed: "
                              f"{(out.stderr or out.stdout).strip()[:200]}{hint}")
        return hostinfo.far_host_unknown("iperf 2"), None
    try:
        result = json.loads(out.stdout)
    except ValueError:
        raise RecordError(f"iperf3 probe to {target.host} failed: "
                          f"{(out.stderr or out.stdout).strip()[:200]}{hint}") from None
    if result.get("error"):
        raise RecordError(f"iperf3 probe to {target.host} failed: {result['error']}{hint}")
    return hostinfo.far_host_from_iperf3(result), hostinfo.server_version(result)


def _check_plan(existing, plan, campaign_dir, have_rows):
    """Adopt the stored seed; refuse a plan that differs from the stored one once runs exist."""
    stored = existing.get("plan") or {}
    if not stored.get("windows"):
        return plan.with_seed()
    try:
        old = Plan.from_dict(stored)
    except (KeyError, TypeError, ValueError):
        return plan.with_seed()
    if plan.order == "random" and old.order == "random" and plan.seed is None:
        plan.with_seed(old.seed)
    plan.with_seed()
    diff = old.differences(plan)
    if diff and have_rows:
        raise RecordError(
            f"{os.path.join(campaign_dir, metadata.CAMPAIGN_YAML)}: the plan on disk differs "
            f"from this one in {', '.join(diff)}, and runs are recorded; record into a new "
            f"campaign directory, or give the same settings to resume")
    return plan


def _drop_incomplete(campaign_dir, rows, done):
    """Delete stale .part files; drop rows of runs that are only partly recorded."""
    runs_dir = os.path.join(campaign_dir, RUNS_DIR)
    if os.path.isdir(runs_dir):
        for name in os.listdir(runs_dir):
            if name.endswith(PART):
                os.remove(os.path.join(runs_dir, name))
    keep = [r for r in rows if r.run in done]
    if len(keep) != len(rows):
        path = os.path.join(campaign_dir, MANIFEST)
        tmp = path + PART
        os.replace(path, tmp)
        try:
            append_rows(campaign_dir, keep)
        except BaseException:
            os.replace(tmp, path)
            raise
        os.remove(tmp)
    return keep


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """Let SIGTERM stop a recording the way Ctrl-C does (clean-up included)."""
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def record(campaign_dir, plan, target, *, source_name=None, destination_name=None,
           about=None, progress=True, retries=2, command=None):
    """Record a TCP sweep into ``campaign_dir`` (created if needed); resume if it exists.

    For each cell of ``plan`` not yet complete in ``runs.csv``: iperf with ping alongside,
    then ping alone (see :mod:`thruput.record.runner`). Before the sweep, a 1 s iperf probe
    checks the server and learns what it reports of the far host; this host is described
    from /proc and /sys (in ``target.netns`` for network settings). ``campaign.yaml`` is
    written before the first run and again at the end (``dates.end`` stays null if the
    sweep is interrupted); runs that failed after ``retries`` are listed under
    ``explained`` with iperf's reason.

    Parameters
    ----------
    campaign_dir : path-like
        ``data/raw/<campaign>``; its name is the campaign name.
    plan : Plan
    target : Target
    source_name, destination_name : str, optional
        Keys of the two hosts in campaign.yaml (default: the keys campaign.yaml already
        has under ``path``, e.g. from ``thruput campaign new``; else this host's name, with
        the netns if any, and ``target.host``).
    about : dict, optional
        ``title``, ``description``, ``who``, ``between``, ``capacity_bps``, ``rtt_ms``,
        ``notes`` for campaign.yaml.
    progress : bool
        Show a tqdm progress bar with ETA on stderr.
    command : str, optional
        The command line, recorded in ``notes``.

    Returns
    -------
    RecordSummary

    Raises
    ------
    RecordError
        Before any run: missing tools, no server, or a plan that contradicts the one of
        already-recorded runs.
    KeyboardInterrupt
        On SIGINT/SIGTERM, after the run under way was cleaned up.
    """
    campaign_dir = os.fspath(campaign_dir)
    name = os.path.basename(os.path.abspath(campaign_dir))
    _which(plan.tool)
    created = _missing_dirs(campaign_dir)
    os.makedirs(campaign_dir, exist_ok=True)
    try:
        return _record(campaign_dir, name, plan, target, source_name, destination_name, about,
                       progress, retries, command)
    except BaseException:
        _remove_if_empty(created)       # a record that failed before its first file: no trace
        raise


def _missing_dirs(path):
    """The folders ``os.makedirs(path)`` would create, deepest first."""
    missing, path = [], os.path.abspath(path)
    while not os.path.exists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return missing


def _remove_if_empty(dirs):
    """Remove the folders of ``dirs`` (deepest first) that are still empty."""
    for path in dirs:
        try:
            os.rmdir(path)
        except OSError:                 # not empty (something was recorded), or gone
            return


def _record(campaign_dir, name, plan, target, source_name, destination_name, about, progress,
            retries, command):
    existing = metadata.load(campaign_dir)
    try:
        rows = read_rows(campaign_dir)
    except ValueError as exc:
        raise RecordError(str(exc)) from None
    plan = _check_plan(existing, plan, campaign_dir, bool(rows))
    done = complete_runs(rows, plan.parts)
    rows = _drop_incomplete(campaign_dir, rows, done)
    cells = plan.cells()
    todo = [c for c in cells if c.run not in done]
    summary = RecordSummary(campaign_dir, len(cells), len(cells) - len(todo))

    if not rows:  # nothing recorded yet: a template's dates are not this campaign's
        existing = {**existing, "dates": {}}
    # host keys: as given, else as campaign.yaml already names them (a template's), else
    # this host's name (with the netns) and the far host's name or address
    old_path = existing.get("path") or {}
    source = (source_name or old_path.get("source")
              or socket.gethostname() + (f"-{target.netns}" if target.netns else ""))
    destination = destination_name or old_path.get("destination") or target.host
    if destination == source:
        destination += "-far"
    about = dict(about or {})
    if command:
        note = f"Recorded with: {command}"
        old_notes = about.get("notes") if about.get("notes") is not None else existing.get("notes")
        if not old_notes or note not in old_notes:
            about["notes"] = f"{old_notes.rstrip()}\n{note}" if old_notes else note
    explained = {e["run"]: e["reason"] for e in existing.get("explained") or []
                 if e.get("run") in {c.run for c in todo}}

    def write_yaml(end):
        data = metadata.merge(
            existing, name=name, plan=plan, source=source, destination=destination,
            hosts=hosts, tools=tools, start=start, end=end,
            explained=[{"run": r, "reason": why} for r, why in explained.items()],
            about=about)
        metadata.write(campaign_dir, data)

    start = utc_iso(decimals=0)
    tools = {**(existing.get("tools") or {}), **hostinfo.tool_versions(plan.tool)}
    hosts = {source: hostinfo.local_host(target.host, target.netns)}
    if not todo:
        hosts[destination] = hostinfo.far_host_unknown(plan.tool)
        if existing:
            hosts[destination] = (existing.get("hosts") or {}).get(destination, hosts[destination])
        write_yaml((existing.get("dates") or {}).get("end") or utc_iso(decimals=0))
        return summary
    far, server_version = probe_server(plan, target)
    hosts[destination] = far
    if server_version:
        tools[f"{plan.tool}_server"] = server_version
    write_yaml(None)

    bar = tqdm(total=len(cells), initial=summary.skipped, unit="run", desc=name,
               disable=not progress, file=sys.stderr, dynamic_ncols=True)
    finished = False
    try:
        with _sigterm_as_interrupt():
            for cell in todo:
                bar.set_postfix_str(cell.run, refresh=True)
                result = run_cell(campaign_dir, plan, target, cell, retries=retries)
                if result.error:
                    summary.failed[cell.run] = result.error
                    explained[cell.run] = result.error
                else:
                    summary.recorded.append(cell.run)
                    explained.pop(cell.run, None)
                    if result.throughput_bps is not None:
                        bar.set_postfix_str(f"{cell.run} {result.throughput_bps / 1e6:.1f} Mbit/s")
                bar.update(1)
        finished = True
    finally:
        bar.close()
        write_yaml(utc_iso(decimals=0) if finished else None)
    return summary
