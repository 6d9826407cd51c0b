"""A design over time as series: change points and the daily cycle of each cell.

A design with ``time: true`` (a drive test, a campaign repeated for weeks) is watched as a
monitor is: each cell of its factors (an operator and direction, a congestion control
and buffer) is one series in time, and :func:`~thruput.stats.change_points` and the
daily cycle (:func:`~thruput.stats.periodogram`, :func:`~thruput.stats.daily_cycle`)
apply to it with the settings of the monitor (params.yaml's ``monitor`` section,
:func:`~thruput.stats.monitor_tables.monitor_settings`). Nothing here is a second
detector: the functions only cut the design into series and stack the results.

- :func:`series_factors`: the factors a series is a cell of (at most
  :data:`MAX_SERIES` cells; the others pooled);
- :func:`series_cells`: the runs of each cell, the :data:`MAX_SERIES` with most runs;
- :func:`series_changes`: per series, its change points (with the ratio after / before)
  and its daily cycle.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ..formatting import duration, number
from .changes import CHANGE_VARIABLES, change_points
from .compare import compare
from .monitor_tables import _level_removed, monitor_settings
from .periodic import DAY_S, FALSE_ALARM, MIN_CYCLES, MIN_FOR_PERIOD, daily_cycle, false_alarm, periodogram

__all__ = ["series_factors", "series_cells", "series_changes", "change_settings", "MAX_SERIES",
           "SERIES_VARIABLES"]

#: Most series (cells) a design's changes and cycles are given for; beyond, the factors
#: that do not fit are pooled and the cells with most runs are kept.
MAX_SERIES = 48
#: Variables of the ``series/<metric>`` table, with their long names.
SERIES_VARIABLES = {
    "n": "completed runs with a value",
    "span_s": "time from the first run to the last",
    "n_changes": "change points found",
    "change_reason": "why no change is listed, or how many are",
    "period_used": "cycle removed before the change-point search (NaN: none)",
    "cycle_power": "Lomb-Scargle power at one day, levels removed (fraction of variance)",
    "cycle_false_alarm": "probability that noise alone gives that power at one day",
    "cycle_amplitude": "largest minus smallest hourly median of the daily profile, levels removed",
    "cycle_relative_amplitude": "cycle amplitude / the series' median",
    "cycle_reason": "the daily cycle, or why it was not measured",
}


def change_settings(monitor: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The change-point settings of a design: params.yaml's ``monitor`` section read as the
    monitor reads it (:func:`~thruput.stats.monitor_tables.monitor_settings`): ``penalty``,
    ``min_size``, ``n_boot``, ``confidence``, ``seed`` and ``period_s`` (s; ``None`` or
    ``"auto"``: each series' daily cycle where it is significant)."""
    p = monitor_settings(monitor)
    return {k: p[k] for k in ("penalty", "min_size", "n_boot", "confidence", "seed", "period_s")}


def series_factors(factors: Sequence[Mapping[str, Any]], order: Sequence[str],
                   limit: int = MAX_SERIES) -> list[str]:
    """The factors whose cells are a design's series: in the page's ``order``, each one
    whose levels keep the cells at most ``limit``; the first of ``order`` at least (its
    cells with most runs are kept: :func:`series_cells`).

    Parameters
    ----------
    factors : sequence of dict
        :func:`~thruput.stats.design.factors_of`.
    order : sequence of str
        Factor names in the order the page shows them (x, colour, columns, rows, pooled).
    limit : int, default :data:`MAX_SERIES`
    """
    size = {f["name"]: len(f["levels"]) for f in factors}
    by: list[str] = []
    for name in order:
        if size.get(name, 0) > 1 and (not by or int(np.prod([size[b] for b in by])) * size[name] <= limit):
            by.append(name)
    return by


def series_cells(codes: np.ndarray, usable: np.ndarray, limit: int = MAX_SERIES) -> tuple[list[tuple[int, ...]], list[np.ndarray], int]:
    """The runs of each series.

    Parameters
    ----------
    codes : numpy.ndarray
        Per run and factor of the series the index of its level (-1: none), shape
        ``(run, factor)``.
    usable : numpy.ndarray
        Per run: it completed (a failed run belongs to no series).
    limit : int, default :data:`MAX_SERIES`

    Returns
    -------
    (list of tuple of int, list of numpy.ndarray, int)
        The kept cells (level indices, in level order), the run indices of each (in run
        order), and how many cells had runs (more than kept when over ``limit``: those
        with most runs are kept).
    """
    keep = usable & (codes >= 0).all(axis=1)
    idx = np.flatnonzero(keep)
    if codes.shape[1] == 0:
        return ([()], [idx], 1) if idx.size else ([], [], 0)
    cells, inverse, counts = np.unique(codes[idx], axis=0, return_inverse=True, return_counts=True)
    inverse = np.asarray(inverse).ravel()
    chosen = np.sort(np.argsort(-counts, kind="stable")[:limit])
    return ([tuple(int(c) for c in cells[i]) for i in chosen],
            [idx[inverse == i] for i in chosen], int(len(cells)))


def _cycle(values: xr.DataArray, span_s: float, s: Mapping[str, Any]) -> dict[str, Any]:
    """The daily cycle of one series, with its levels between change points removed (as
    the monitor removes them before its periodogram), or why it is not measured."""
    n = int(values.size)
    out = {"cycle_power": np.nan, "cycle_false_alarm": np.nan, "cycle_amplitude": np.nan,
           "cycle_relative_amplitude": np.nan}
    if span_s < MIN_CYCLES * DAY_S:
        return {**out, "cycle_reason": f"spans {duration(span_s, 3)}, less than {MIN_CYCLES} days: "
                                       "no daily cycle measured"}
    if n < MIN_FOR_PERIOD:
        return {**out, "cycle_reason": f"{n} runs: too few for a daily cycle (at least {MIN_FOR_PERIOD})"}
    flat = _level_removed(values, {**s, "period_s": None, "coarse": True})
    power = float(periodogram(flat, periods=[DAY_S / 3600])["power"].values[0])
    fap = float(false_alarm(power, n, 1.0, 1.0))        # one period tried: no search over a grid
    profile = daily_cycle(flat, period=DAY_S, n_boot=int(s["n_boot"]), confidence=float(s["confidence"]),
                          seed=int(s["seed"]))
    amplitude = float(profile["amplitude"])
    median = abs(float(np.median(values.values)))
    significant = fap <= FALSE_ALARM
    reason = (f"daily cycle: {power:.0%} of the variance at one day, false-alarm probability "
              f"{number(fap, 2)} ({'at most' if significant else 'more than'} {FALSE_ALARM:g})")
    return {"cycle_power": power, "cycle_false_alarm": fap, "cycle_amplitude": amplitude,
            "cycle_relative_amplitude": amplitude / median if median > 0 else np.nan, "cycle_reason": reason}


def _ratios(values: xr.DataArray, found: xr.Dataset, s: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Each change's ratio after / before of the medians of its two segments, with the
    bootstrap interval of :func:`~thruput.stats.compare`."""
    order = np.argsort(np.asarray(values["time"].values), kind="stable")
    v = np.asarray(values.values, float)[order]
    index = [int(k) for k in found["index"].values]
    edges = [0, *index, v.size]
    out = {k: np.full(len(index), np.nan) for k in ("ratio", "ratio_low", "ratio_high")}
    for j, k in enumerate(index):
        a = xr.DataArray(v[edges[j]:k], dims="sample")
        b = xr.DataArray(v[k:edges[j + 2]], dims="sample")
        c = compare(a, b, dim="sample", n_boot=int(s["n_boot"]), confidence=float(s["confidence"]),
                    seed=int(s["seed"]))
        for key, column in out.items():
            column[j] = float(c[key])
    return out


def _one_series(values: xr.DataArray, s: Mapping[str, Any]) -> tuple[dict[str, Any], xr.Dataset]:
    t = np.asarray(values["time"].values, "datetime64[ns]")
    n = int(values.size)
    span_s = float((t.max() - t.min()) / np.timedelta64(1, "s")) if n else 0.0
    row: dict[str, Any] = {"n": n, "span_s": span_s, **_cycle(values, span_s, s)}
    given = s["period_s"]
    period: float | None
    if given is not None and given != "auto":
        period = float(given)
    else:          # (the daily cycle, where this series has a significant one)
        period = DAY_S if row["cycle_false_alarm"] <= FALSE_ALARM else None
    found = change_points(values, penalty=float(s["penalty"]), min_size=int(s["min_size"]), period=period,
                          n_boot=int(s["n_boot"]), confidence=float(s["confidence"]), seed=int(s["seed"]))
    found = found.assign({k: ("change", v, {"units": "1", "long_name": f"{k.replace('_', ' ')}: after / before "
                                                                     "(ratio of the segments' medians)"})
                          for k, v in _ratios(values, found, s).items()})
    k = int(found.sizes["change"])
    row["n_changes"] = k
    row["period_used"] = float(found.attrs["period_used"]) if found.attrs["period_used"] != "" else np.nan
    if n < 2 * int(s["min_size"]):
        row["change_reason"] = (f"{n} runs: too few for a change point (segments of at least "
                                f"{int(s['min_size'])} runs)")
    else:
        row["change_reason"] = (f"{k} change{'s' if k != 1 else ''} found" if k else
                                f"no change found in {n} runs over {duration(span_s, 3)}")
    return row, found


def series_changes(ds: xr.Dataset, var: str, by: Sequence[Mapping[str, Any]],
                   cells: Sequence[tuple[int, ...]], runs: Sequence[np.ndarray],
                   settings: Mapping[str, Any]) -> tuple[xr.Dataset, xr.Dataset]:
    """Change points and the daily cycle of ``ds[var]`` in each series of a time design.

    Parameters
    ----------
    ds : xarray.Dataset
        A design campaign with ``time`` on ``run``.
    var : str
        The quantity (throughput bit/s, ``rtt_median`` ms ...).
    by : sequence of dict
        The factors of the series (:func:`~thruput.stats.design.factors_of` entries).
    cells, runs : sequence
        :func:`series_cells`: each series' level indices and runs.
    settings : dict
        :func:`change_settings`.

    Returns
    -------
    (xarray.Dataset, xarray.Dataset)
        ``changes``: on ``change`` (length 0 when none), :func:`~thruput.stats.change_points`'s
        variables and ``ratio``, ``ratio_low``, ``ratio_high`` (after / before, 1), with
        one coordinate per factor of ``by`` (the series' level). ``series``: on ``series``,
        the variables of :data:`SERIES_VARIABLES` and the same coordinates.

    Notes
    -----
    The search is :func:`~thruput.stats.change_points` with the monitor's ``penalty``,
    ``min_size`` and bootstrap. The cycle removed first is ``period_s`` where params.yaml
    gives one, else one day where the series spans two days or more and its
    Lomb-Scargle power at 24 h (its levels between coarse change points removed first, as
    the monitor's periodogram) has a false-alarm probability at most
    :data:`~thruput.stats.periodic.FALSE_ALARM` for that one period (Zechmeister &
    Kürster's eq. 24, no search over a grid); else none. The monitor picks one period per
    campaign; a design's cells (operators, paths) may differ, so each series gets its own.
    The ratio's interval is :func:`~thruput.stats.compare`'s percentile bootstrap of the
    two segments' medians, which treats runs as independent.
    """
    values = np.asarray(ds[var].values, float)
    times = np.asarray(ds["time"].values, "datetime64[ns]")
    units = str(ds[var].attrs.get("units", ""))
    rows, parts = [], []
    for cell, idx in zip(cells, runs):
        idx = idx[np.isfinite(values[idx]) & ~np.isnat(times[idx])]
        if idx.size == 0:
            continue
        series = xr.DataArray(values[idx], dims="run", coords={"time": ("run", times[idx])},
                              attrs=dict(ds[var].attrs))
        row, found = _one_series(series, settings)
        labels = {f["name"]: f["levels"][c] for f, c in zip(by, cell)}
        rows.append((labels, row))
        parts.append(found.assign_coords({name: ("change", np.asarray([level] * found.sizes["change"],
                                                                      dtype=_dtype(f)))
                                           for (name, level), f in zip(labels.items(), by)}))
    coords = {f["name"]: ("series", np.asarray([r[0][f["name"]] for r in rows], dtype=_dtype(f)))
              for f in by}
    series_table = xr.Dataset({
        k: ("series", np.asarray([r[1][k] for r in rows],
                                 dtype=str if k.endswith("reason") else int if k in ("n", "n_changes") else float),
            {"units": _units(k, units), "long_name": long_name})
        for k, long_name in SERIES_VARIABLES.items()}, coords=coords)
    changes = (xr.concat(parts, dim="change", combine_attrs="drop_conflicts") if parts
               else _empty_changes(by, units))
    changes.attrs = {"var": var, "by": json.dumps([f["name"] for f in by])}
    for name in CHANGE_VARIABLES:
        changes[name].attrs.setdefault("long_name", CHANGE_VARIABLES[name])
    return changes, series_table


def _dtype(f: Mapping[str, Any]) -> Any:
    return float if f["numeric"] else str


def _units(key: str, units: str) -> str:
    if key in ("n", "n_changes"):
        return "count"
    if key in ("span_s", "period_used"):
        return "s"
    return units if key == "cycle_amplitude" else "1"


def _empty_changes(by: Sequence[Mapping[str, Any]], units: str) -> xr.Dataset:
    data = {}
    for name, long_name in {**CHANGE_VARIABLES, "ratio": "after / before", "ratio_low": "",
                            "ratio_high": ""}.items():
        if name.startswith("time"):
            data[name] = ("change", np.zeros(0, "datetime64[ns]"), {"long_name": long_name})
        elif name == "index":
            data[name] = ("change", np.zeros(0, int), {"units": "1", "long_name": long_name})
        else:
            data[name] = ("change", np.zeros(0), {"units": "1" if name.startswith("ratio") else units,
                                                  "long_name": long_name or name})
    return xr.Dataset(data, coords={f["name"]: ("change", np.zeros(0, dtype=_dtype(f))) for f in by})
