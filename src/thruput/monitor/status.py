"""``thruput monitor status``: what ran, what failed, which slots are missing, what is next.

Read from runs.csv and the schedule in campaign.yaml only (nothing is run), so it can be
asked while the monitor runs. Whether a monitor is running is learnt from the campaign's
lock (:mod:`.lock`), without taking it.
"""

from __future__ import annotations

import collections
import fcntl
import math
import os
import time

from .campaign import load_config
from .lock import LOCK_FILE, holder
from .manifest import read_rows
from .runner import utc_iso
from .schedule import next_slot, slot_due

__all__ = ["status", "format_status", "RECENT_FAILURES", "running_pid"]

#: How many of the latest failed tests the status lists.
RECENT_FAILURES = 10


def running_pid(campaign_dir):
    """PID of the monitor holding the campaign's lock, or None if none is running."""
    path = os.path.join(campaign_dir, LOCK_FILE)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return holder(campaign_dir) or -1
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _ranges(numbers):
    """[1, 2, 3, 7] -> [(1, 3), (7, 7)]."""
    out = []
    for n in sorted(numbers):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return [tuple(r) for r in out]


def status(campaign_dir, now=None):
    """The state of the monitor campaign in ``campaign_dir`` as a JSON-ready dict.

    Keys: ``campaign``, ``start``, ``interval_s``, ``running_pid`` (None if no monitor
    runs), ``tests`` (rows in runs.csv), ``outcomes`` ({outcome: count}), ``by_test``
    ({"tcp forward": {"ok": n, ...}}), ``slots_run``, ``last_slot``, ``last_test``
    (its start), ``slots_missing`` (slots due up to the last one run, or up to now while
    a monitor runs, that have no row: ``[[first, last, from, to], ...]`` with their
    nominal times), ``recent_failures`` (the last :data:`RECENT_FAILURES` failed tests:
    run, started, outcome, reason) and ``next_slot`` / ``next_due`` (None when no monitor
    runs).
    """
    now = time.time() if now is None else now
    interval_s, start, sched = _schedule(campaign_dir)
    rows = read_rows(campaign_dir)
    pid = running_pid(campaign_dir) if sched is not None else None
    outcomes = collections.Counter(r.outcome for r in rows)
    by_test = collections.defaultdict(collections.Counter)
    for r in rows:
        by_test[f"{r.path_name} {r.direction} {r.test}"][r.outcome] += 1
    slots = {int(r.slot) for r in rows}
    last = max(slots, default=-1)
    report = {"campaign": os.path.basename(os.path.abspath(campaign_dir)),
              "start": utc_iso(start) if start is not None else None,
              "interval_s": interval_s, "running_pid": pid, "tests": len(rows),
              "outcomes": dict(sorted(outcomes.items())),
              "by_test": {k: dict(sorted(v.items())) for k, v in sorted(by_test.items())},
              "slots_run": len(slots), "last_slot": last if slots else None,
              "last_test": max((r.started for r in rows), default=None),
              "slots_missing": [], "recent_failures": [], "next_slot": None, "next_due": None}
    if start is not None and interval_s:
        # while running, slots due before now are missing; else only gaps between runs
        upto = math.floor((now - start) / interval_s) if pid else last
        if pid and upto >= 0 and slot_due(sched, start, upto) > now:
            upto -= 1
        missing = sorted(set(range(0 if pid else min(slots, default=0), upto + 1)) - slots)
        report["slots_missing"] = [
            [a, b, utc_iso(start + a * interval_s), utc_iso(start + b * interval_s)]
            for a, b in _ranges(missing)]
        if pid:
            n = next_slot(sched, start, now, after=last)
            report["next_slot"], report["next_due"] = n, utc_iso(slot_due(sched, start, n))
    failed = [r for r in rows if r.outcome != "ok"]
    report["recent_failures"] = [{"run": r.run, "started": r.started, "outcome": r.outcome,
                                  "reason": r.reason} for r in failed[-RECENT_FAILURES:]]
    return report


def _schedule(campaign_dir):
    """``(interval_s, start, Schedule or None)`` of the campaign: an imported archive's
    schedule says only its inferred interval (order, seed and the tests' settings are
    unknown, so it cannot run), which is all the status needs."""
    from .campaign import _read
    from ..quantities import parse_time

    try:
        config = load_config(campaign_dir)
        return config.schedule.interval_s, config.start, config.schedule
    except ValueError:
        data, _node = _read(campaign_dir)
        if not isinstance(data, dict):
            raise
        interval = (data.get("schedule") or {}).get("interval_s")
        start = (data.get("dates") or {}).get("start")
        return (float(interval) if interval else None,
                parse_time(start) if start is not None else None, None)


def format_status(report):
    """``status()`` as plain text, one fact a line."""
    every = f"one slot every {report['interval_s']:g} s" if report["interval_s"] else "interval unknown"
    lines = [f"campaign {report['campaign']}: slot 0 at {report['start'] or '(not started)'}, {every}"]
    pid = report["running_pid"]
    lines.append(f"monitor running (PID {pid}); next slot {report['next_slot']} at "
                 f"{report['next_due']}" if pid else "no monitor running")
    outcomes = ", ".join(f"{n} {k}" for k, n in report["outcomes"].items()) or "none"
    lines.append(f"{report['tests']} tests in {report['slots_run']} slots ({outcomes}); "
                 f"last test {report['last_test'] or '-'}")
    for name, counts in report["by_test"].items():
        lines.append(f"  {name}: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    missing = report["slots_missing"]
    total = sum(b - a + 1 for a, b, _f, _t in missing)
    lines.append(f"{total} slots missing" + (":" if missing else ""))
    for a, b, t_from, t_to in missing:
        lines.append(f"  slot {a} ({t_from})" if a == b else
                     f"  slots {a}-{b} ({t_from} .. {t_to})")
    if report["recent_failures"]:
        lines.append("latest failures:")
        for f in report["recent_failures"]:
            lines.append(f"  {f['started']} {f['run']} {f['outcome']}: {f['reason']}")
    return "\n".join(lines)

