"""Alert rules of a design over time: the monitor's rules on each cell of its factors.

A design with ``time: true`` (a drive test, a study repeated for weeks) is watched as a
monitor is (docs/statistics-designs.md, "A design over time is a monitor's series"). Its
``campaign.yaml`` may list rules as a monitor's does, a rule naming a metric and picking
series by factor levels (``where``; none: every series):

.. code-block:: yaml

    time: {interval: 10m}        # optional: the slots' width (default: the product's bins)
    alerts:
    - {metric: throughput, where: {operator: att, direction: uplink}, below: 3.0e7, for: 3}
    - {metric: rtt, above: 80}
    baseline:
    - {metric: throughput, below: 0.3, window: 1d, for: 2}

A series is a cell of the design's series factors
(:func:`~thruput.stats.design.design_series_runs`, as the statistics product's
``series/<metric>``); its slots are time bins from the first run on, of the declared
``interval``, else of the width of the product's ``series_bins/<metric>`` (the finest of
the rules' metrics). A slot's value is the median of the series' completed runs in it;
the states, breaches, verdict, SLA and report are the monitor's own functions
(:mod:`thruput.monitor.alerts`), on a ``series`` dimension whose coordinates are the
factor levels.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import ThruputError
from ..formatting import value as fmt_value
from ..quantities import parse_duration
from ..stats.design import (level_codes, factor_named, level_key, level_text, design_layout, design_series_runs, factors_of,
                            time_bin_width)
from .alerts import (DEFAULT_PARAMS, EXIT, NO_DATA, STATES, breach_table, campaign_metadata, slot_states, rule_limits, add_rule,
                     verdict_table, sla)

__all__ = ["DESIGN_RULE_METRICS", "design_rules_of", "evaluate_design", "design_changes", "design_tables", "design_perfdata",
           "design_exposition", "is_time_design"]

#: Rule metric of a design -> (the design Dataset's variable, its units).
DESIGN_RULE_METRICS = {
    "throughput": ("throughput", "bit/s"),
    "rtt": ("rtt_median", "ms"),
    "loss": ("loss_fraction", "1"),
    "jitter": ("jitter", "ms"),
}
#: Rule metric -> (Prometheus metric after ``thruput_monitor_``, scale to its unit, Nagios
#: unit, scale from the variable's unit, minimum, maximum).
_EXPORTS = {
    "throughput": ("throughput_bytes_per_second", 1 / 8, "", 1.0, "0", ""),
    "rtt": ("rtt_seconds", 1e-3, "s", 1e-3, "0", ""),
    "loss": ("loss_ratio", 1.0, "%", 100.0, "0", "100"),
    "jitter": ("jitter_seconds", 1e-3, "s", 1e-3, "0", ""),
}


#: Dimensions and coordinates of the alert tables, which a factor cannot be named.
_DIMENSIONS = ("rule", "series", "slot", "time", "period", "breach")


def is_time_design(ds: xr.Dataset) -> bool:
    """Whether ``ds`` is a design campaign over time (``time: true``)."""
    return ds.attrs.get("campaign_kind") == "design" and bool(int(ds.attrs.get("design_time", 0) or 0))


def _where_text(where):
    return ", ".join(f"{k}={'|'.join(map(level_text, v))}" for k, v in where.items())


def _describe(rule):
    side = "below" if "below" in rule else "above"
    what = rule["metric"]
    if rule["kind"] == "baseline":
        what += f" {100 * rule[side]:g} % {side} the median of the last {rule['window']}"
    else:
        what += f" {side} {fmt_value(rule[side], rule['units'])}"
    where = _where_text(rule["where"])
    return f"{what} for {rule['for']} slots" + (f" ({where})" if where else "")


def design_rules_of(metadata: Mapping[str, Any], factors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A design's rules (``alerts:`` then ``baseline:``) as dicts with every key: ``id``
    (their text), ``kind``, ``metric``, ``variable``, ``units``, ``where`` (factor -> list
    of levels), ``below`` or ``above``, ``for``, ``window`` (baseline rules).

    Raises
    ------
    ThruputError
        A metric not in :data:`DESIGN_RULE_METRICS`, a ``where`` naming no factor or no
        level of one, a monitor's key (``test``, ``path``).
    """
    known = {f["name"]: f for f in factors}
    out = []
    for kind, key in (("threshold", "alerts"), ("baseline", "baseline")):
        for given in metadata.get(key) or []:
            given = dict(given)
            monitor_keys = [k for k in ("test", "path", "direction", "socket_buffer", "size") if k in given]
            if monitor_keys:
                raise ThruputError(f"campaign.yaml {key}: {', '.join(monitor_keys)} is a monitor's rule key; "
                                   "a design's rule picks its series by factor levels: where: {factor: level}")
            rule = {"kind": kind, "for": 1, "where": {}, **given}
            if rule.get("metric") not in DESIGN_RULE_METRICS:
                raise ThruputError(f"campaign.yaml {key}: no metric {rule.get('metric')!r} for a design; known: "
                                   + ", ".join(DESIGN_RULE_METRICS))
            where = {}
            for name, levels in (rule["where"] or {}).items():
                if name not in known:
                    raise ThruputError(f"campaign.yaml {key}: where {name!r}: no such factor; the factors: "
                                       + ", ".join(known))
                levels = levels if isinstance(levels, list) else [levels]
                have = {level_key(v): v for v in known[name]["levels"]}
                missing = [v for v in levels if level_key(v) not in have]
                if missing:
                    raise ThruputError(f"campaign.yaml {key}: where {name}: no level {missing[0]!r}; its levels: "
                                       + ", ".join(level_text(v) for v in known[name]["levels"]))
                where[name] = [have[level_key(v)] for v in levels]
            rule["where"] = where
            rule["variable"], rule["units"] = DESIGN_RULE_METRICS[rule["metric"]]
            add_rule(rule, out, _describe)
    return out


def _interval(metadata):
    """The declared slot width (s) of ``time: {interval: ...}``, or None."""
    time = metadata.get("time")
    if isinstance(time, Mapping) and time.get("interval") is not None:
        return float(parse_duration(str(time["interval"])))
    return None


class _Series:
    """Per metric: the series (factor levels), their completed runs and all their runs."""

    def __init__(self, ds, var, factors, layout):
        by, cells, runs, _, self.bins = design_series_runs(ds, var, factors, layout)
        self.by = by
        codes = level_codes(ds, [factor_named(ds, b) for b in by]) if by else np.zeros((ds.sizes["run"], 0), np.int64)
        levels = {f["name"]: f["levels"] for f in factors}
        self.labels, self.runs, self.every = [], [], []
        for cell, idx in zip(cells, runs):
            named = {b: levels[b][c] for b, c in zip(by, cell)}
            self.labels.append(named)
            self.runs.append(idx)
            self.every.append(np.flatnonzero((codes == np.asarray(cell, np.int64)).all(axis=1)))


def _name(named):
    return " ".join(f"{k}={level_text(v)}" for k, v in named.items()) or "all runs"


def design_changes(ds: xr.Dataset, metrics: list[str], monitor: Mapping[str, Any] | None = None) -> dict[str, xr.Dataset]:
    """Change points of every series of the rule metrics ``metrics``, as the statistics
    product finds them (its ``changes/<variable>``: the same series, function and
    params.yaml ``monitor`` settings, :func:`~thruput.stats.design_series.series_changes`)."""
    from ..stats.design_series import change_settings, series_changes

    settings = change_settings(monitor)
    out = {}
    for m in metrics:
        var = DESIGN_RULE_METRICS[m][0]
        if var not in ds.variables:
            continue
        by, cells, runs, _, _ = design_series_runs(ds, var)
        out[m] = series_changes(ds, var, [factor_named(ds, b) for b in by], cells, runs, settings)[0]
    return out


def changes_in(changes, named, start, end, width):
    """Times (ISO) of the change points of a series that fall in its breach (from one slot
    before its start to its end, or on when open)."""
    if changes is None or changes.sizes.get("change", 0) == 0:
        return ""
    t = np.asarray(changes["time"].values, "datetime64[ns]")
    hi = end if end == end else np.datetime64("2262-01-01")
    hit = (t >= start - np.timedelta64(int(width * 1e9), "ns")) & (t <= hi)
    for k, level in named.items():
        hit &= np.asarray([level_key(v) == level_key(level) for v in changes[k].values.tolist()], bool)
    return " ".join(sorted({str(np.datetime_as_string(x, "s")) + "Z" for x in t[hit]}))


def evaluate_design(ds: xr.Dataset, params: Mapping[str, Any] | None = None,
                    changes: Mapping[str, xr.Dataset] | None = None) -> dict[str, xr.Dataset]:
    """The alert tables of a design over time, as :func:`thruput.monitor.alerts.evaluate`
    gives a monitor's, with dimension ``series`` (one coordinate per factor: its level,
    ``""`` where the series pools it) in place of ``path`` and ``direction``.

    Parameters
    ----------
    ds : xarray.Dataset
        A design campaign with ``time: true``.
    params : dict, optional
        Over :data:`~thruput.monitor.alerts.DEFAULT_PARAMS` (params.yaml ``health``).
    changes : dict of str to xarray.Dataset, optional
        Rule metric -> change points of its series (:func:`design_changes`); those of a
        breach's series that fall in it are listed with it (none without).

    Returns
    -------
    dict of str to xarray.Dataset
        ``alert_state`` (``(rule, series, slot)``), ``breaches`` (``series`` and ``metric``
        in place of ``path``, ``direction``, ``test``), ``verdict`` (``series``),
        ``sla_<freq>``; attrs as the monitor's, ``interval_s`` the slot width; and
        ``last_values`` (attrs only: per series and metric the last slot's value, for
        :func:`design_perfdata` and :func:`design_exposition`).

    Raises
    ------
    ThruputError
        A design without time, a bad rule, a rule whose ``where`` names a factor its
        metric's series pool.
    """
    if not is_time_design(ds):
        raise ThruputError(f"campaign {ds.attrs.get('campaign', '')!r} is not a design over time (time: true): "
                           "no time, no slots, no alert")
    p = {**DEFAULT_PARAMS, **(params or {})}
    meta = campaign_metadata(ds)
    factors = factors_of(ds)
    taken = [f["name"] for f in factors if f["name"] in _DIMENSIONS]
    if taken:
        raise ThruputError(f"factor {taken[0]!r}: a name the alert tables use themselves "
                           f"({', '.join(_DIMENSIONS)}); rename the factor in campaign.yaml")
    layout = design_layout(factors)
    rules = design_rules_of(meta, factors)
    present = [m for m, (var, _) in DESIGN_RULE_METRICS.items()
               if var in ds.variables and np.isfinite(np.asarray(ds[var].values, float)).any()]
    for rule in rules:
        if rule["metric"] not in present:
            raise ThruputError(f"campaign.yaml rule {rule['id']!r}: the design has no {rule['metric']} values "
                               f"({rule['variable']}); it has: {', '.join(present) or 'none'}")
    series = {m: _Series(ds, DESIGN_RULE_METRICS[m][0], factors, layout) for m in present}
    times_run = np.asarray(ds["time"].values, "datetime64[ns]")
    width = _interval(meta)
    start, _, _ = time_bin_width(times_run)
    if width is None:
        watched = sorted({r["metric"] for r in rules}) or present
        width = float(min([time_bin_width(times_run, series[m].bins)[1] for m in watched] or [1]))
    step = np.timedelta64(int(round(width * 1e9)), "ns")
    finite = ~np.isnat(times_run)
    pos = np.where(finite, (times_run - start) // step, -1).astype(np.int64)
    n_slots = int(pos.max()) + 1 if finite.any() else 0
    slots = np.arange(n_slots)
    times = start + slots * step
    # the series: every cell of every metric, in the order first met
    names, levels = [], {}
    for m in present:
        for named in series[m].labels:
            if _name(named) not in names:
                names.append(_name(named))
                levels[_name(named)] = named
    by = [f["name"] for f in factors if any(f["name"] in n for n in levels.values())]
    shape = (len(rules), len(names), n_slots)
    state = np.full(shape, NO_DATA, np.int8)
    value = np.full(shape, np.nan, np.float32)
    threshold = np.full(shape, np.nan, np.float32)
    ran = np.zeros(shape, bool)
    applies = np.zeros(shape[:2], bool)
    with_data = np.zeros(shape[1:], bool)
    slot_values = {}
    for m in present:
        data = np.asarray(ds[DESIGN_RULE_METRICS[m][0]].values, float)
        s = series[m]
        for named, idx, every in zip(s.labels, s.runs, s.every):
            i = names.index(_name(named))
            idx = idx[pos[idx] >= 0]
            median = pd.Series(data[idx]).groupby(pos[idx]).median()
            v = np.full(n_slots, np.nan)
            v[median.index.to_numpy()] = median.to_numpy()
            did = np.zeros(n_slots, bool)
            did[pos[every][pos[every] >= 0]] = True
            slot_values[(m, i)] = (v, did)
            with_data[i, pos[idx]] = True
    rows = []
    for r, rule in enumerate(rules):
        s = series[rule["metric"]]
        pooled = [k for k in rule["where"] if k not in s.by]
        if pooled:
            raise ThruputError(f"campaign.yaml rule {rule['id']!r}: the {rule['metric']} series pool factor "
                               f"{pooled[0]!r} (series by {', '.join(s.by) or 'nothing'}): no series to pick")
        for named in s.labels:
            if any(level_key(named[k]) not in {level_key(x) for x in want} for k, want in rule["where"].items()):
                continue
            i = names.index(_name(named))
            v, did = slot_values[(rule["metric"], i)]
            thr = rule_limits(rule, v, times, p)
            st, found = slot_states(rule, v, thr)
            state[r, i], value[r, i], threshold[r, i], ran[r, i] = st, v, thr, did
            applies[r, i] = True
            for first, last, after, opened in found:
                inside = v[first:last + 1]
                worst = np.nanmin(inside) if "below" in rule else np.nanmax(inside)
                rows.append({"rule": rule["id"], "series": names[i], "metric": rule["metric"],
                             "start": times[first], "opened": times[np.flatnonzero(np.isfinite(v))[opened]],
                             "last": times[last], "end": times[after] if after >= 0 else np.datetime64("NaT"),
                             "open": after < 0, "worst": float(worst), "slots": int(last - first + 1),
                             "threshold": float(np.nanmedian(thr[first:last + 1])),
                             "changes": changes_in((changes or {}).get(rule["metric"]), named, times[first],
                                                    times[after] if after >= 0 else np.datetime64("NaT"), width)})
    attrs = {"params": json.dumps(p), "rules": json.dumps(rules, default=str),
             "campaign": str(ds.attrs.get("campaign", meta.get("name", ""))),
             "interval_s": width, "metadata": json.dumps(meta, sort_keys=True, default=str),
             "series_factors": json.dumps(by), "campaign_kind": "design"}
    coords = {"rule": [r["id"] for r in rules], "series": names,
              **{b: ("series", np.asarray([level_text(levels[n].get(b, "")) for n in names], str)) for b in by},
              "slot": slots, "time": ("slot", times, {"long_name": "start of the slot (UTC)"})}
    dims = ("rule", "series", "slot")
    alert = xr.Dataset({
        "state": (dims, state, {"units": "1", "long_name": "alert state", "flag_values": list(STATES),
                                "flag_meanings": " ".join(x.replace(" ", "_") for x in STATES.values())}),
        "value": (dims, value, {"long_name": "median of the slot's completed runs of the series"}),
        "threshold": (dims, threshold, {"long_name": "the rule's limit (a baseline rule's moves with its window)"}),
        "ran": (dims, ran, {"long_name": "the series had a run (any outcome)"}),
        "applies": (("rule", "series"), applies, {"long_name": "the rule applies to the series"}),
    }, coords=coords)
    out = {"alert_state": alert, "breaches": breach_table(rows, keys=("series", "metric")),
           "verdict": verdict_table(alert, rules, rows, with_data)}
    for freq in p["sla"]:
        out[f"sla_{freq}"] = sla(alert, freq, rules)
    for name, table in out.items():
        table.attrs.update({**attrs, "table": name})
    out["last_values"] = _last_values(slot_values, names, levels, times, present)
    return out


def design_tables(ds: xr.Dataset, health: Mapping[str, Any] | None = None,
                  monitor: Mapping[str, Any] | None = None) -> dict[str, xr.Dataset]:
    """What ``thruput monitor report`` shows of a design over time: :func:`evaluate_design`
    with the change points of the rules' metrics (:func:`design_changes`; ``health`` and
    ``monitor`` are params.yaml's sections)."""
    if not is_time_design(ds):
        return evaluate_design(ds, health)          # (its one-line refusal)
    watched = sorted({r["metric"] for r in design_rules_of(campaign_metadata(ds), factors_of(ds))})
    return evaluate_design(ds, health, changes=design_changes(ds, watched, monitor))


def _last_values(slot_values, names, levels, times, present):
    """Per series and metric the last slot with a value (JSON in attrs ``rows``)."""
    rows = []
    for i, name in enumerate(names):
        for m in present:
            if (m, i) not in slot_values:
                continue
            v, _ = slot_values[(m, i)]
            have = np.flatnonzero(np.isfinite(v))
            if have.size:
                rows.append({"series": name, "levels": levels[name], "metric": m, "index": i,
                             "value": float(v[have[-1]]), "time": times[have[-1]]})
    return xr.Dataset(attrs={"rows": json.dumps(rows, default=str)})


def _rows(tables):
    return json.loads(tables["last_values"].attrs["rows"])


def _warn(tables, row):
    """The Nagios range of the first rule on this series and metric, at its last threshold."""
    alert = tables["alert_state"]
    rules = json.loads(alert.attrs["rules"])
    for r, rule in enumerate(rules):
        if rule["metric"] != row["metric"] or not bool(alert["applies"].values[r, row["index"]]):
            continue
        thr = alert["threshold"].values[r, row["index"]]
        have = np.flatnonzero(np.isfinite(thr))
        if have.size:
            limit = float(thr[have[-1]]) * _EXPORTS[row["metric"]][3]
            return f"{limit:g}:" if "below" in rule else f"{limit:g}"
    return ""


def design_perfdata(tables: Mapping[str, xr.Dataset]) -> str:
    """Nagios performance data of a design's series: per series and metric the last slot
    with a value (``'<levels> <metric>'=value[UOM];warn;;min;max``), ``warn`` as the
    monitor's (:func:`thruput.monitor.metrics.perfdata`)."""
    out = []
    for row in _rows(tables):
        _, _, unit, factor, low, high = _EXPORTS[row["metric"]]
        label = " ".join([*(level_text(v) for v in row["levels"].values()), row["metric"]])
        label = label.replace("'", "''").replace("=", "_")
        fields = f"{row['value'] * factor:.6g}{unit};{_warn(tables, row)};;{low};{high}".rstrip(";")
        out.append(f"'{label}'={fields}")
    return " ".join(out)


#: Labels the exposition sets itself: a factor of that name gets ``factor_`` before it.
_OWN_LABELS = ("campaign", "outcome", "stat")


def _label_name(name):
    """A factor name as a Prometheus label name: ``[a-zA-Z_][a-zA-Z0-9_]*``, not ``__``-led,
    none of :data:`_OWN_LABELS`."""
    out = re.sub(r"[^a-zA-Z0-9_]", "_", str(name))
    out = "_" + out if not out or out[0].isdigit() else out
    return "factor" + out if out.startswith("__") else "factor_" + out if out in _OWN_LABELS else out


def design_exposition(ds: xr.Dataset, tables: Mapping[str, xr.Dataset]) -> str:
    """The Prometheus text exposition of a design's state: the monitor's families
    (``thruput_monitor_state``, ``..._breaches_open``, ``..._breaches_total``, the last
    slot's values and their ``slot_timestamp_seconds``, the series' last run time
    ``last_run_timestamp_seconds`` and ``runs_total`` by outcome),
    labelled ``campaign`` and one label per series factor (its name sanitised)."""
    from .metrics import FAMILIES, render

    campaign = str(ds.attrs.get("campaign", ""))
    verdict = tables["verdict"]
    by = json.loads(verdict.attrs["series_factors"])
    names = {b: _label_name(b) for b in by}
    if len(set(names.values()) | {"campaign"}) != len(names) + 1:
        raise ThruputError(f"factors {', '.join(by)}: two give the same Prometheus label name")
    br = tables["breaches"]
    b_series = np.asarray(br["series"].values, str) if br.sizes.get("breach", 0) else np.zeros(0, str)
    b_open = np.asarray(br["open"].values, bool) if b_series.size else np.zeros(0, bool)
    samples = {n: [] for n in FAMILIES}

    def base(i):
        return {"campaign": campaign, **{names[b]: str(verdict[b].values[i]) for b in by}}

    for i, name in enumerate(verdict["series"].values.tolist()):
        samples["state"].append((base(i), EXIT[str(verdict["state"].values[i])]))
        mine = b_series == name
        samples["breaches_open"].append((base(i), int((mine & b_open).sum())))
        samples["breaches_total"].append((base(i), int(mine.sum())))
    last = {}
    for row in _rows(tables):
        metric, scale = _EXPORTS[row["metric"]][:2]
        labels = base(row["index"])
        samples[metric].append(({**labels, **({"stat": "median"} if row["metric"] == "rtt" else {})},
                                row["value"] * scale))
        t = float(np.datetime64(row["time"], "ns").astype(np.int64)) / 1e9
        last[row["index"]] = max(last.get(row["index"], t), t)
    for i, t in sorted(last.items()):                 # one slot time per series
        samples["slot_timestamp_seconds"].append((base(i), t))
    outcome = (np.asarray(ds["outcome"].values, str) if "outcome" in ds.variables
               else np.full(ds.sizes["run"], "ok"))
    if by:
        codes = level_codes(ds, [factor_named(ds, b) for b in by])
        frame = pd.DataFrame({b: [level_text(v) if c >= 0 else "" for v, c in
                                  zip(np.asarray(ds[b].values).tolist(), codes[:, j])] for j, b in enumerate(by)})
    else:
        frame = pd.DataFrame(index=range(ds.sizes["run"]))
    frame["outcome"] = outcome
    frame["time"] = np.asarray(ds["time"].values, "datetime64[ns]")
    for key, part in frame.groupby(by or (lambda _: 0), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        labels = {"campaign": campaign, **({names[b]: k for b, k in zip(by, key)} if by else {})}
        if part["time"].notna().any():
            samples["last_run_timestamp_seconds"].append((labels, part["time"].max().value / 1e9))
        for out, count in part["outcome"].value_counts().sort_index().items():
            samples["runs_total"].append(({**labels, "outcome": out}, int(count)))
    return render(samples)
