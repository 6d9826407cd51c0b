"""The schedule of a monitor campaign: slots that did not run, and explanations of slots
that did.

:func:`check_gaps` is the part of ``thruput campaign check`` of a monitor campaign that
looks at time (its records are :func:`thruput.monitor.check.check_monitor`'s). The gaps
are :func:`thruput.stats.monitor.missing_slots`' (per path, due times interpolated), the
ones the monitor page lists (:func:`thruput.stats.gap_report`). An ``explained`` entry
``{from, to, reason}`` (optionally ``path``) covers the missing slots due in
``[from, to]``. Unexplained gaps are warnings: they are data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ThruputError
from ..stats.monitor import explained_spans, missing_slots, slot_steps, uncovered_slots
from . import reader as mon

__all__ = ["check_gaps", "utc"]


def utc(text):
    """An ISO 8601 time as a UTC pandas Timestamp (no offset: taken as UTC)."""
    ts = pd.Timestamp(text)
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


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
    found = missing_slots([row.slot for row in rows], [mon._timestamp(row.started) for row in rows],
                          [row.path_name for row in rows])
    problems = []
    for k, step in enumerate(slot_steps(found).tolist()):
        path, first, n = str(found["gap_path"].values[k]), int(found["first_slot"].values[k]), int(found["slots"].values[k])
        due_first, step = pd.Timestamp(found["gap_start"].values[k]).tz_localize("UTC"), pd.Timedelta(step, "ns")
        missing = uncovered_slots(n, due_first.value, step.value, explained_spans(explained, path))
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
