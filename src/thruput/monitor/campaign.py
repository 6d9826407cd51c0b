"""A monitor campaign on disk: its campaign.yaml (paths, schedule, events) and its loop.

:func:`monitor` is what ``thruput monitor DIR`` runs: take the lock, drop the ``.part``
files an interrupted run left, describe this host and the tools in campaign.yaml, then
run slot after slot on the schedule (``dates.start`` is slot 0) until ``--duration`` or
``--until``, or SIGINT/SIGTERM. A restarted monitor goes on with the next slot that is
still in the future: slots whose time passed while it was down are gaps, never run late.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
import time

import yaml

from ..record import hostinfo
from ..errors import ParseError
from ..record.metadata import _Dumper
from .lock import CampaignLock, not_writable
from .manifest import read_rows
from .runner import record_test, remove_partial, utc_iso
from .schedule import Path, Schedule, next_slot, parse_time, slot_due

__all__ = ["MonitorConfig", "load_config", "monitor", "write_yaml", "CAMPAIGN_YAML",
           "KEY_ORDER"]

CAMPAIGN_YAML = "campaign.yaml"
#: Top-level key order of a monitor campaign.yaml (docs/design.md).
KEY_ORDER = ("name", "title", "description", "kind", "dates", "who", "paths", "hosts",
             "tools", "schedule", "events", "explained", "notes")
#: Longest single sleep while waiting for a slot (s): signals are handled in between.
SLEEP_STEP_S = 1.0


class MonitorConfig:
    """The parts of a monitor campaign.yaml the loop needs: ``paths``, ``schedule``, start."""

    def __init__(self, data, path="campaign.yaml"):
        if data.get("kind") != "monitor":
            raise ValueError(f"{path}: kind is {data.get('kind')!r}, not 'monitor'")
        try:
            self.paths = [Path.from_dict(p) for p in data.get("paths") or []]
            self.schedule = Schedule.from_dict(data.get("schedule") or {})
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from None
        if not self.paths:
            raise ValueError(f"{path}: paths is empty: nothing to watch")
        reverse = [p.name for p in self.paths if "reverse" in p.directions]
        if reverse and any(t["test"] == "udp" and t["tool"] == "iperf2"
                           for t in self.schedule.entries):
            raise ValueError(f"{path}: path {reverse[0]!r} runs reverse, and iperf 2.1 "
                             "-u -R measured nothing (0 bytes) where it was tried: use "
                             "iperf3 for reverse UDP tests")
        self.start = parse_time((data.get("dates") or {}).get("start"))
        self.data = data


def _read(campaign_dir):
    """``(data, node)`` of campaign.yaml, times kept as the strings written."""
    from ..campaign.metadata import load_yaml

    path = os.path.join(campaign_dir, CAMPAIGN_YAML)
    if not os.path.exists(path):
        raise ValueError(f"{path}: no campaign.yaml (make one with `thruput monitor new`)")
    return load_yaml(path)


def load_config(campaign_dir):
    """Read and check ``campaign_dir/campaign.yaml`` (ValueError names the file)."""
    data, _node = _read(campaign_dir)
    if not isinstance(data, dict):
        raise ValueError(f"{os.path.join(campaign_dir, CAMPAIGN_YAML)}:1: not a mapping")
    return MonitorConfig(data, os.path.join(campaign_dir, CAMPAIGN_YAML))


def validate(campaign_dir, data):
    """Check ``data`` (campaign.yaml as the monitor will write it) against the schema.

    Raises
    ------
    thruput.errors.ParseError
        Naming campaign.yaml, the line of the first problem, and every problem.
    """
    from ..campaign.metadata import node_line, schema_validator

    _data, node = _read(campaign_dir)
    errors = sorted(schema_validator().iter_errors(data), key=lambda e: list(e.path))
    if errors:
        listed = [(node_line(node, list(e.path)),
                   f"{'/'.join(map(str, e.path)) or '(top level)'}: {e.message}") for e in errors]
        raise ParseError(listed[0][1], line=listed[0][0],
                         path=os.path.join(campaign_dir, CAMPAIGN_YAML), errors=listed)


def write_yaml(campaign_dir, data):
    """Write campaign.yaml atomically, keys in :data:`KEY_ORDER`."""
    ordered = {k: data[k] for k in KEY_ORDER if k in data}
    ordered.update({k: v for k, v in data.items() if k not in ordered})
    path = os.path.join(campaign_dir, CAMPAIGN_YAML)
    try:
        with open(path + ".part", "w") as f:
            f.write("# A thruput monitor campaign (docs/monitoring.md). `thruput monitor` keeps\n"
                    "# dates, hosts.<source> and tools up to date; the rest is yours to edit.\n")
            yaml.dump(ordered, f, Dumper=_Dumper, sort_keys=False, width=88, allow_unicode=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(path + ".part", path)
    except OSError as exc:            # full or read-only: campaign.yaml stays as it was
        with contextlib.suppress(OSError):
            os.remove(path + ".part")
        raise not_writable(path, exc, "campaign.yaml") from None


class _Stop(Exception):
    """SIGINT or SIGTERM arrived: finish cleanly."""


def _raise_stop(signum, frame):
    raise _Stop(signal.Signals(signum).name)


def _describe(config, campaign_dir, netns):
    """campaign.yaml with this host (the sources) and the tool versions filled in."""
    data = dict(config.data)
    hosts = dict(data.get("hosts") or {})
    tools = {s["tool"] for s in config.schedule.entries}
    versions = {}
    for tool in sorted(tools - {"ping"}) or ["iperf3"]:
        versions.update(hostinfo.tool_versions(tool))
    data["tools"] = {**(data.get("tools") or {}), **versions}
    for p in config.paths:
        if p.source:
            hosts[p.source] = hostinfo.local_host(p.address, netns)
        if p.destination and p.destination not in hosts:
            hosts[p.destination] = hostinfo.far_host_unknown(", ".join(sorted(tools)))
    data["hosts"] = hosts
    return data


def _set_end(campaign_dir, t):
    """Set ``dates.end`` in campaign.yaml as it is on disk now (edits made while the
    monitor runs, an event or an explanation, are kept)."""
    data, _node = _read(campaign_dir)
    data["dates"] = {**(data.get("dates") or {}), "end": utc_iso(t)[:19] + "Z"}
    write_yaml(campaign_dir, data)


def monitor(campaign_dir, duration_s=None, until=None, netns=None, progress=None,
            clock=time.time):
    """Run the campaign in ``campaign_dir`` until ``duration_s`` passed or ``until``.

    Parameters
    ----------
    campaign_dir : str
    duration_s : float, optional
        Stop starting tests this many seconds from now.
    until : float, optional
        Stop starting tests at this time (Unix s). With neither, run until SIGINT/SIGTERM.
    netns : str, optional
        Run every test in this network namespace (``ip netns exec``).
    progress : callable, optional
        Called with a message (str) at each event: start, each test's row, stop.

    Returns
    -------
    int
        Number of tests recorded by this call.
    """
    say = progress or (lambda _msg: None)
    path = os.path.join(campaign_dir, CAMPAIGN_YAML)
    data, _node = _read(campaign_dir)
    if not isinstance(data, dict) or data.get("kind") != "monitor":
        kind = data.get("kind") if isinstance(data, dict) else None
        raise ValueError(f"{path}: kind is {kind!r}, not 'monitor'")
    dates = dict(data.get("dates") or {})
    new = dates.get("start") is None  # a new campaign: slot 0 is due when the loop starts
    if new:
        dates["start"] = utc_iso(math.ceil(clock()))[:19] + "Z"  # for the schema, for now
    data["dates"] = dates
    validate(campaign_dir, data)  # the schema, naming lines
    config = MonitorConfig(data, path)  # what the schema cannot say
    end = math.inf
    if duration_s is not None:
        end = clock() + duration_s
    if until is not None:
        end = min(end, until)
    done = 0
    with CampaignLock(campaign_dir):
        # signals can only be caught in the main thread (a test may run us in another)
        old = ({s: signal.signal(s, _raise_stop) for s in (signal.SIGINT, signal.SIGTERM)}
               if threading.current_thread() is threading.main_thread() else {})
        try:
            for part in remove_partial(campaign_dir):
                say(f"removed {part} (left by an interrupted run)")
            data = _describe(config, campaign_dir, netns)
            if new:  # describing this host may take seconds: slot 0 is due from now
                config.start = math.ceil(clock())
                data["dates"]["start"] = utc_iso(config.start)[:19] + "Z"
            validate(campaign_dir, data)
            write_yaml(campaign_dir, data)
            sched = config.schedule
            last = max((int(r.slot) for r in read_rows(campaign_dir)), default=-1)
            # a new campaign's slot 0 runs even if writing campaign.yaml took it past its
            # time (start is rounded up to the second: on a busy machine it was skipped)
            slot = last + 1 if new else next_slot(sched, config.start, clock(), after=last)
            say(f"monitoring {campaign_dir}: next slot {slot} at "
                f"{utc_iso(slot_due(sched, config.start, slot))}, stop at "
                f"{'SIGINT/SIGTERM' if end == math.inf else utc_iso(end)}")
            while True:
                due = slot_due(sched, config.start, slot)
                if due >= end:
                    break
                while clock() < due:
                    time.sleep(min(SLEEP_STEP_S, due - clock()))
                for spec in sched.tests(config.paths, due, slot):
                    if clock() >= end:
                        break
                    row = record_test(campaign_dir, spec, slot, sched.timeout_s, netns, clock)
                    done += 1
                    say(f"{row.started} {row.run} {row.outcome} {row.reason}".rstrip())
                _set_end(campaign_dir, clock())
                slot = next_slot(sched, config.start, clock(), after=slot)
        except _Stop as stop:
            say(f"stopped by {stop}")
            if done:
                _set_end(campaign_dir, clock())
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)
    return done
