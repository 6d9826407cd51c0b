"""The schedule of a monitor campaign: slots that did not run, and explanations of slots
that did.

:func:`check_gaps` is the part of ``thruput campaign check`` of a monitor campaign that
looks at time (its records are :func:`thruput.monitor.check.check_monitor`'s). The slots
missing on a path are those between its first and last slot with no test at all; when
each was due is interpolated between the slots either side (:func:`gaps`). An
``explained`` entry ``{from, to, reason}`` (optionally ``path``) covers the missing slots
due in ``[from, to]``. Unexplained gaps are warnings: they are data, shown by the monitor
page and :func:`thruput.stats.gap_report`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ThruputError
from . import reader as mon

__all__ = ["check_gaps", "gaps", "utc"]


def utc(text):
    """An ISO 8601 time as a UTC pandas Timestamp (no offset: taken as UTC)."""
    ts = pd.Timestamp(text)
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def gaps(tests_by_path):
    """Runs of consecutive missing slots per path, with when they were due.

    Parameters
    ----------
    tests_by_path : dict of str -> iterable of (int, datetime64)
        ``(slot, start)`` of every test of each path (negative slots ignored).

    Returns
    -------
    list of (path, first, last, due_first, due_last)
        Missing slots ``first..last`` (inclusive), in path then slot order, and when the
        first and last were due: interpolated between the slots either side (the first
        test of each), so that a schedule that drifted, or one inferred from an archive,
        still places them right.
    """
    out = []
    for path in sorted(tests_by_path):
        starts = {}
        for slot, when in tests_by_path[path]:
            if slot >= 0:
                starts[slot] = min(starts.get(slot, when), when)
        slots = np.array(sorted(starts))
        if slots.size < 2:
            continue
        times = np.array([starts[s] for s in slots], dtype="datetime64[ns]").astype(np.int64)
        for i in np.flatnonzero(np.diff(slots) > 1):
            step = (times[i + 1] - times[i]) / (slots[i + 1] - slots[i])
            first, last = int(slots[i] + 1), int(slots[i + 1] - 1)
            due = [pd.Timestamp(int(times[i] + step * (s - slots[i])), tz="UTC") for s in (first, last)]
            out.append((path, first, last, *due))
    return out


def check_gaps(directory, metadata, node, Problem):
    """Warnings (``Problem``: :class:`thruput.campaign.check.Problem`) for slots of a
    monitor campaign that did not run and that ``explained`` does not cover (when each was
    due is interpolated between the slots either side), and for explained ranges in which
    tests ran."""
    from ..campaign.layout import CAMPAIGN_FILE
    from ..campaign.metadata import node_line

    try:
        rows, _ = mon.read_monitor_manifest(directory)
    except ThruputError:      # the manifest's own problems are reported by the records check
        return []
    return _check_gaps(metadata, node, rows, str(Path(directory) / CAMPAIGN_FILE), Problem, node_line)


def _check_gaps(metadata, node, rows, meta_path, Problem, node_line):
    explained = [e for e in metadata.get("explained") or [] if "from" in e]
    spans = [(e.get("path"), utc(e["from"]).value, utc(e["to"]).value) for e in explained]
    by_path = {}
    for row in rows:
        by_path.setdefault(row.path_name, []).append((row.slot, mon._timestamp(row.started)))
    problems = []
    for path, first, last, due_first, due_last in gaps(by_path):
        step = (due_last - due_first) / max(last - first, 1)
        missing = _uncovered(last - first + 1, due_first.value, step.value,
                             [(lo, hi) for p, lo, hi in spans if p in (None, path)])
        if missing[0]:
            count, at, end = missing[0], first + missing[1], first + missing[2]
            problems.append(Problem(meta_path, node_line(node, ["explained"]),
                                    f"path {path}: {count} slots ({at}-{end}, "
                                    f"due {due_first + step * (at - first):%Y-%m-%dT%H:%M:%SZ} to "
                                    f"{due_first + step * (end - first):%Y-%m-%dT%H:%M:%SZ}) did not "
                                    "run and are not explained (gaps are data: the monitor page and "
                                    "stats.gap_report list them)", "warning"))
    ran_by_path = _runs_in_time(rows) if explained else {}
    for i, (entry, (path, lo, hi)) in enumerate(zip(explained, spans)):
        times, order = ran_by_path.get(path, (np.array([], np.int64), np.array([], np.int64)))
        inside = order[np.searchsorted(times, lo, "left"):np.searchsorted(times, hi, "right")]
        if inside.size:
            problems.append(Problem(meta_path, node_line(node, ["explained", i]),
                                    f"explained as missing ({entry['reason']}) but {inside.size} tests ran "
                                    f"then (e.g. {rows[int(inside.min())].run})", "warning"))
    return problems


def _uncovered(n, start, step, spans):
    """``(count, first, last)`` of the slots ``0..n-1`` (due at ``start + step * k``, ns)
    that no span ``(from, to)`` (ns, inclusive) covers; count 0 when all are. Each span
    covers one run of slots, found by division: no walk over the slots (a gap of 10^9
    missing slots costs what a gap of one does); the runs are sorted and merged."""
    runs = []
    for lo, hi in spans:
        if step == 0:
            a, b = (0, n - 1) if lo <= start <= hi else (1, 0)
        elif step > 0:      # lo <= start + step * k <= hi, k whole
            a, b = -((start - lo) // step), (hi - start) // step
        else:
            a, b = -((start - hi) // step), (lo - start) // step
        a, b = max(a, 0), min(b, n - 1)
        if a <= b:
            runs.append((a, b))
    merged = []
    for a, b in sorted(runs):
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    covered = sum(b - a + 1 for a, b in merged)
    if covered == n:
        return 0, None, None
    first = 0 if not merged or merged[0][0] > 0 else merged[0][1] + 1
    last = n - 1 if not merged or merged[-1][1] < n - 1 else merged[-1][0] - 1
    return n - covered, first, last


def _runs_in_time(rows):
    """For each path (and None: all paths), ``(start times, ns, sorted; the rows' indices
    in that order)``: the tests an explained range covers are one slice, found by bisection."""
    times = np.array([utc(r.started).value for r in rows], dtype=np.int64)
    names = np.array([r.path_name for r in rows], dtype=object)
    out = {}
    for key in [None, *sorted(set(names.tolist()))]:
        index = np.arange(len(rows)) if key is None else np.flatnonzero(names == key)
        order = index[np.argsort(times[index], kind="stable")]
        out[key] = (times[order], order)
    return out
