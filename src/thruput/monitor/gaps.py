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


def _covers(entry, path, when):
    if "from" not in entry or entry.get("path") not in (None, path):
        return False
    return utc(entry["from"]) <= when <= utc(entry["to"])


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
    by_path = {}
    for row in rows:
        by_path.setdefault(row.path_name, []).append((row.slot, mon._timestamp(row.started)))
    problems = []
    for path, first, last, due_first, due_last in gaps(by_path):
        step = (due_last - due_first) / max(last - first, 1)
        missing = [s for s in range(first, last + 1)
                   if not any(_covers(e, path, due_first + step * (s - first)) for e in explained)]
        if missing:
            problems.append(Problem(meta_path, node_line(node, ["explained"]),
                                    f"path {path}: {len(missing)} slots ({missing[0]}-{missing[-1]}, "
                                    f"due {due_first + step * (missing[0] - first):%Y-%m-%dT%H:%M:%SZ} to "
                                    f"{due_first + step * (missing[-1] - first):%Y-%m-%dT%H:%M:%SZ}) did not "
                                    "run and are not explained (gaps are data: the monitor page and "
                                    "stats.gap_report list them)", "warning"))
    for i, entry in enumerate(explained):
        ran = [r for r in rows if _covers(entry, r.path_name, utc(r.started))]
        if ran:
            problems.append(Problem(meta_path, node_line(node, ["explained", i]),
                                    f"explained as missing ({entry['reason']}) but {len(ran)} tests ran "
                                    f"then (e.g. {ran[0].run})", "warning"))
    return problems
