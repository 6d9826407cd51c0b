"""Alert rules of a monitor campaign and the state of every slot: what is wrong, where,
since when.

A campaign's ``campaign.yaml`` lists its rules (schemas/campaign.schema.json):

.. code-block:: yaml

    alerts:                      # a fixed threshold, crossed for `for` consecutive slots
    - {test: tcp, direction: any, metric: throughput, below: 3.0e7, for: 3}
    - {test: ping, direction: any, metric: rtt, above: 60, for: 3, size: 108}
    baseline:                    # relative to the median of the slots before, over `window`
    - {test: tcp, direction: any, metric: throughput, below: 0.2, window: 7d, for: 3}

Each rule is evaluated per path and direction on one value per slot: the median of the
``ok`` runs of its test in the slot (those of its ``socket_buffer`` / ``size`` if it names
one). A slot is ``ok`` (the value meets the rule), ``pending`` (it does not, fewer than
``for`` slots in a row so far), ``breach`` (it does not, in a run of at least ``for``
such slots: the whole run is the breach, so its start is the first bad slot) or ``no
data`` (no ok run of the test: failed, not run). Slots without data neither end nor
extend a run. A breach ends at the first slot that meets the rule again; one that reaches
the last slot with data is *open*.

:func:`evaluate` gives every table (``alert_state`` per rule, path, direction and slot;
``breaches``; ``verdict`` per path and direction; ``sla`` per period); the pipeline's
``health-monitor`` stage stores them (``data/processed/<c>.health.zarr``,
:mod:`thruput.monitor.alerts_store`) and ``thruput
monitor report`` computes the same with the same function from a raw campaign.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import xarray as xr

from ..campaign.store import LABEL_WINDOW, label_codes
from ..formatting import value
from ..quantities import as_utc, parse_duration
from ..stats.grouped import group_median

__all__ = ["rules_of", "evaluate", "slot_grid", "STATES", "METRICS", "DEFAULT_PARAMS",
           "VERDICTS", "report_json", "format_report", "series_changes", "health_tables",
           "open_health", "exit_status", "EXIT",
           # the engine that the alerts store (alerts_store) and a design's alerts (design_alerts) share
           "campaign_metadata", "RunLabels", "slot_times", "series_slot_values", "rule_limits", "slot_states",
           "evaluate_runs", "changes_in", "breach_table", "verdict_table"]

#: State codes of ``alert_state`` (int8) and their names.
STATES = {-1: "no data", 0: "ok", 1: "pending", 2: "breach"}
NO_DATA, OK, PENDING, BREACH = -1, 0, 1, 2
#: The verdict of a path and direction, worst first: an open breach of any rule, no data
#: in the last slots of every rule (of any test, where no rule applies), else ok.
VERDICTS = ("breach", "no data", "ok")
#: (test, metric) -> the variable of the monitor Dataset a rule watches, and its units.
METRICS = {
    ("tcp", "throughput"): ("throughput", "bit/s"),
    ("tcp", "retransmits"): ("retransmits", "1"),
    ("udp", "throughput"): ("throughput", "bit/s"),
    ("udp", "loss"): ("loss_fraction", "1"),
    ("udp", "jitter"): ("jitter", "ms"),
    ("ping", "rtt"): ("rtt_median", "ms"),
    ("ping", "loss"): ("ping_loss", "1"),
}
#: Parameters of :func:`evaluate` (params.yaml ``health`` section).
DEFAULT_PARAMS = {
    "sla": ["1D", "1W"],     # SLA periods: pandas offsets; 1W = calendar weeks from Monday
    "min_baseline": 3,       # fewest slots with data in a baseline window
}


def campaign_metadata(ds):
    """The campaign.yaml a Dataset carries (``attrs["metadata"]``, JSON) as a dict."""
    raw = ds.attrs.get("metadata", "{}")
    return json.loads(raw) if isinstance(raw, str) else dict(raw or {})


def _describe(rule):
    side = "below" if "below" in rule else "above"
    what = f"{rule['test']} {rule['metric']}"
    for key in ("socket_buffer", "size"):
        if rule.get(key) is not None:
            what += f" {key}={int(rule[key])}"
    if rule["kind"] == "baseline":
        pct = 100 * rule[side]
        what += f" {pct:g} % {side} the median of the last {rule['window']}"
    else:
        what += f" {side} {value(rule[side], rule['units'])}"
    where = ", ".join(x for x in (rule["path"], None if rule["direction"] == "any" else rule["direction"]) if x)
    return f"{what} for {rule['for']} slots" + (f" ({where})" if where else "")


def rules_of(metadata):
    """The campaign's rules (``alerts:`` then ``baseline:``) as dicts with every key:
    ``id`` (their text), ``kind`` (threshold or baseline), ``test``, ``metric``,
    ``variable``, ``units``, ``direction``, ``path``, ``socket_buffer``, ``size``,
    ``below`` or ``above``, ``for``, ``window`` (s, baseline rules).

    Raises
    ------
    ValueError
        For a (test, metric) pair not in :data:`METRICS` (the schema checks the rest).
    """
    out = []
    for kind, key in (("threshold", "alerts"), ("baseline", "baseline")):
        for given in metadata.get(key) or []:
            rule = {"kind": kind, "direction": "any", "path": None, "socket_buffer": None,
                    "size": None, "for": 1, **given}
            pair = (rule["test"], rule["metric"])
            if pair not in METRICS:
                raise ValueError(f"campaign.yaml {key}: no metric {rule['metric']!r} for test "
                                 f"{rule['test']!r}; known: " + ", ".join(f"{t} {m}" for t, m in METRICS))
            rule["variable"], rule["units"] = METRICS[pair]
            add_rule(rule, out, _describe)
    return out


def add_rule(rule, out, describe):
    """Append a checked rule to ``out`` with what every rule has: its limit as a number,
    a baseline rule's window in seconds, and its ``id`` (``describe(rule)``, numbered when
    the same rule is there already)."""
    for side in ("below", "above"):
        if side in rule:
            rule[side] = float(rule[side])    # YAML 1.1 reads 3.0e7 as text
    if rule["kind"] == "baseline":
        rule["window_s"] = parse_duration(rule.get("window", "7d"))
        rule["window"] = str(rule.get("window", "7d"))
    rule["id"] = describe(rule)
    if any(r["id"] == rule["id"] for r in out):          # the same rule twice
        rule["id"] += f" #{sum(r['id'].startswith(rule['id']) for r in out) + 1}"
    out.append(rule)


def slot_grid(ds):
    """Every slot due from the campaign's first to its last, and when each began:
    ``(slots, times)``. A slot with runs began at its first run; one without, between
    the slots with runs either side, is placed as ``thruput campaign check`` places a
    missing slot (:func:`thruput.stats.monitor.missing_slots`): interpolated between
    their times, so that a jittered or drifting schedule still places it right, and no
    later run moves it."""
    return _grid(np.asarray(ds["slot"].values, np.int64), np.asarray(ds["time"].values, "datetime64[ns]"))


def _grid(slot, time):
    """:func:`slot_grid` of the runs' ``slot`` and ``time`` columns."""
    if slot.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, "datetime64[ns]")
    first = pd.Series(time).groupby(slot).min()
    slots = np.arange(slot.min(), slot.max() + 1)
    return slots, slot_times(first.index.to_numpy(), first.to_numpy(), slots)


def slot_times(have, first, slots):
    """When each of ``slots`` began, from the slots with runs ``have`` (sorted) and their
    first runs' times ``first``: those times, and between two of them, slot ``k``
    between ``i`` and ``j``, ``t_i + (k - i) (t_j - t_i) / (j - i)`` (to the nearest ns).
    Every slot must lie between the first and the last of ``have``."""
    t = np.asarray(first, "datetime64[ns]").astype(np.int64)
    have = np.asarray(have, np.int64)
    j = np.minimum(np.searchsorted(have, slots, side="left"), have.size - 1)   # the slot with runs at or after
    i = np.maximum(j - 1, 0)
    exact = have[j] == slots
    span = np.where(exact, 1, have[j] - have[i])
    share = np.where(exact, 0.0, (slots - have[i]) / span)
    times = np.where(exact, t[j], t[i] + np.rint((t[j] - t[i]) * share).astype(np.int64))
    return times.astype("datetime64[ns]")


class RunLabels:
    """The per-run columns every rule selects by, read once a window at a time
    (:func:`thruput.campaign.store.label_codes`), never whole as Python strings: path,
    direction and test as int32 codes into their sorted labels, whether each run is
    ``ok``, its position in the slot grid (``slots``; the campaign's own grid,
    :func:`slot_grid`, when not given); and the float columns the rules read, each read
    once when first asked for (:meth:`column`)."""

    def __init__(self, ds, slots=None):
        self.ds = ds
        slot = _read(ds, "slot", np.int64)
        self.times = None
        if slots is None:
            slots, self.times = _grid(slot, _read(ds, "time", "datetime64[ns]"))
        self.slots = slots
        self.pos = np.searchsorted(slots, slot).astype(np.int32)
        del slot
        paths, self.path_code = label_codes(ds, "path")
        directions, self.dir_code = label_codes(ds, "direction")
        self.paths, self.directions = np.asarray(paths, str), np.asarray(directions, str)
        self.tests, self.test_code = label_codes(ds, "test")
        outcomes, code = label_codes(ds, "outcome")
        self.ok = code == _code(outcomes, "ok")
        self.n_slots = slots.size
        self._columns = {}

    def column(self, name):
        """The float64 column ``name`` of every run, read once."""
        if name not in self._columns:
            self._columns[name] = _read(self.ds, name, float)
        return self._columns[name]

    def setting(self, name, value):
        """Which runs have ``value`` in the float column ``name`` (``socket_buffer``, ``size``)."""
        return _read(self.ds, name, bool, lambda x: np.asarray(x, float) == float(value))

    def is_test(self, test):
        """Which runs are of ``test``."""
        return self.test_code == _code(self.tests, test)


def _read(ds, name, dtype, func=np.asarray, runs=LABEL_WINDOW):
    """``func`` of the column ``name`` of ``ds``, as ``dtype``, read ``runs`` runs at a time
    into one array (a dask column is never held twice, as its chunks and their concatenation)."""
    n = ds.sizes["run"]
    out = np.empty(n, dtype)
    for a in range(0, n, runs):
        out[a:a + runs] = func(ds[name].isel(run=slice(a, a + runs)).values)
    return out


def _code(labels, label):
    """The code of ``label`` among the sorted ``labels`` of :func:`~thruput.campaign.store.label_codes`,
    -2 (no run's) when absent."""
    at = [i for i, x in enumerate(labels.tolist()) if x == label]
    return at[0] if at else -2


def series_slot_values(ds, runs, rule):
    """Per (path, direction): the rule's value in every slot (NaN without an ok run) and
    whether the test ran at all in it (any outcome)."""
    keep = runs.is_test(rule["test"])
    for key in ("socket_buffer", "size"):
        if rule[key] is not None:
            keep &= runs.setting(key, rule[key])
    if rule["path"] is not None:
        keep &= runs.path_code == _code(runs.paths, rule["path"])
    if rule["direction"] != "any":
        keep &= runs.dir_code == _code(runs.directions, rule["direction"])
    idx = np.flatnonzero(keep)
    n_dir = runs.directions.size
    series = runs.path_code[idx] * n_dir + runs.dir_code[idx]
    key = series.astype(np.int64) * runs.n_slots + runs.pos[idx]
    values = np.where(runs.ok[idx], runs.column(rule["variable"])[idx], np.nan)
    at, median = group_median(key, values)
    dense = np.full(runs.paths.size * n_dir * runs.n_slots, np.nan)
    dense[at] = median
    ran = np.zeros(dense.size, bool)
    ran[key] = True
    dense = dense.reshape(-1, runs.n_slots)
    ran = ran.reshape(-1, runs.n_slots)
    return {(str(runs.paths[c // n_dir]), str(runs.directions[c % n_dir])): (dense[c], ran[c])
            for c in np.unique(series)}


def rule_limits(rule, value, times, params):
    """A rule's limit in every slot: its number (a threshold rule), or the median of the
    slots' ``value`` over the rule's window before each slot times its factor (a baseline
    rule; NaN until the window holds ``params["min_baseline"]`` slots with data)."""
    side = "below" if "below" in rule else "above"
    if rule["kind"] == "threshold":
        return np.full(value.size, float(rule[side]))
    series = pd.Series(value, index=pd.DatetimeIndex(times))
    median = series.rolling(f"{int(rule['window_s'])}s", closed="left",
                            min_periods=int(params["min_baseline"])).median().to_numpy()
    factor = 1 - rule[side] if side == "below" else 1 + rule[side]
    return median * factor


def slot_states(rule, value, threshold):
    """State of every slot and the breaches as ``(first, last, next_ok)`` slot indices
    (``next_ok`` -1 when open)."""
    state = np.full(value.size, NO_DATA, np.int8)
    data = np.flatnonzero(np.isfinite(value))
    v, t = value[data], threshold[data]
    bad = (v < t) if "below" in rule else (v > t)       # NaN threshold (no baseline yet): ok
    state[data] = np.where(bad, PENDING, OK)
    edges = np.diff(np.concatenate(([0], bad.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)   # [start, end)
    breaches = []
    for a, b in zip(starts, ends):
        if b - a >= rule["for"]:
            state[data[a:b]] = BREACH
            breaches.append((data[a], data[b - 1], data[b] if b < data.size else -1, a + rule["for"] - 1))
    return state, breaches


def evaluate(ds, params=None, changes=None):
    """The alert tables of a monitor campaign.

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign (docs/design.md, "The monitor Dataset"), NumPy or dask; only
        its per-run coordinates and the variables the rules watch are read.
    params : dict, optional
        Over :data:`DEFAULT_PARAMS` (params.yaml ``health``).
    changes : xarray.Dataset, optional
        Change points (the ``changes`` table of the monitor statistics product, dimension
        ``change`` with ``time``, ``path``, ``direction``, ``test``); those of a breach's
        path, direction and test that fall in it are listed with it.

    Returns
    -------
    dict of str to xarray.Dataset
        ``alert_state`` (``state`` int8 of :data:`STATES`, ``value``, ``threshold`` on
        ``(rule, path, direction, slot)``), ``breaches`` (dimension ``breach``),
        ``verdict`` (``(path, direction)``: ``state``, ``since``, ``last_data``),
        ``sla_<freq>`` per SLA period (:func:`sla`), ``rules`` (attrs only). Every table
        has ``attrs["params"]`` and ``attrs["rules"]`` (JSON).
    """
    return evaluate_runs(ds, params, changes)[0]


def evaluate_runs(ds, params, changes):
    """:func:`evaluate`'s tables, and the :class:`RunLabels` of ``ds`` they were computed from."""
    p = {**DEFAULT_PARAMS, **(params or {})}
    meta = campaign_metadata(ds)
    rules = rules_of(meta)
    runs = RunLabels(ds)
    slots, times = runs.slots, runs.times
    paths = runs.paths.tolist()
    directions = [d for d in ("forward", "reverse") if d in runs.directions] + \
        [d for d in runs.directions.tolist() if d not in ("forward", "reverse")]
    shape = (len(rules), len(paths), len(directions), slots.size)
    state = np.full(shape, NO_DATA, np.int8)
    value = np.full(shape, np.nan, np.float32)
    threshold = np.full(shape, np.nan, np.float32)
    ran = np.zeros(shape, bool)
    applies = np.zeros(shape[:3], bool)
    rows = []
    for r, rule in enumerate(rules):
        for (path, direction), (v, did) in series_slot_values(ds, runs, rule).items():
            i, j = paths.index(path), directions.index(direction)
            thr = rule_limits(rule, v, times, p)
            st, found = slot_states(rule, v, thr)
            state[r, i, j], value[r, i, j], threshold[r, i, j], ran[r, i, j] = st, v, thr, did
            applies[r, i, j] = True
            for first, last, after, opened in found:
                inside = v[first:last + 1]
                worst = np.nanmin(inside) if "below" in rule else np.nanmax(inside)
                rows.append({"rule": rule["id"], "path": path, "direction": direction, "test": rule["test"],
                             "start": times[first], "opened": times[np.flatnonzero(np.isfinite(v))[opened]],
                             "last": times[last], "end": times[after] if after >= 0 else np.datetime64("NaT"),
                             "open": after < 0, "worst": float(worst), "slots": int(last - first + 1),
                             "threshold": float(np.nanmedian(thr[first:last + 1])),
                             "socket_buffer": rule["socket_buffer"], "size": rule["size"]})
    interval = float((meta.get("schedule") or {}).get("interval_s") or 0)
    for row in rows:
        row["changes"] = changes_in(changes, row, interval)
    attrs = {"params": json.dumps(p), "rules": json.dumps(rules, default=str),
             "campaign": str(ds.attrs.get("campaign", meta.get("name", ""))),
             "interval_s": interval, "metadata": json.dumps(meta, sort_keys=True)}
    coords = {"rule": [r["id"] for r in rules], "path": paths, "direction": directions,
              "slot": slots, "time": ("slot", times, {"long_name": "start of the slot (UTC)"})}
    alert = xr.Dataset({
        "state": (("rule", "path", "direction", "slot"), state,
                  {"units": "1", "long_name": "alert state", "flag_values": list(STATES),
                   "flag_meanings": " ".join(s.replace(" ", "_") for s in STATES.values())}),
        "value": (("rule", "path", "direction", "slot"), value,
                  {"long_name": "median of the slot's ok runs"}),
        "threshold": (("rule", "path", "direction", "slot"), threshold,
                      {"long_name": "the rule's limit (a baseline rule's moves with its window)"}),
        "ran": (("rule", "path", "direction", "slot"), ran, {"long_name": "the test ran (any outcome)"}),
        "applies": (("rule", "path", "direction"), applies, {"long_name": "the rule applies to the series"}),
    }, coords=coords)
    dir_index = np.array([directions.index(d) for d in runs.directions.tolist()], np.int64)
    with_data = np.zeros(shape[1:], bool)      # (path, direction, slot): an ok run of any test
    with_data[runs.path_code[runs.ok], dir_index[runs.dir_code[runs.ok]], runs.pos[runs.ok]] = True
    out = {"alert_state": alert, "breaches": breach_table(rows),
           "verdict": verdict_table(alert, rules, rows, with_data)}
    for freq in p["sla"]:
        out[f"sla_{freq}"] = sla(alert, freq, rules)
    for name, table in out.items():
        table.attrs.update({**attrs, "table": name})
    return out, runs


def series_changes(ds, params=None):
    """Change points of every series of a monitor campaign, exactly as the statistics
    product finds them (:func:`thruput.stats.monitor_tables.product_changes`: the same
    function and parameters, ``params`` being params.yaml's ``monitor`` section)."""
    from ..stats.monitor_tables import product_changes

    return product_changes(ds, params)


def health_tables(ds, health=None, monitor=None, changes=None):
    """Everything the pipeline's health stage writes and ``thruput monitor report`` reads:
    the alert tables of :func:`evaluate` and the throughput-vs-delay table
    (:func:`thruput.stats.rollups.throughput_delay`, per compared period).

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign.
    health, monitor : dict, optional
        params.yaml's ``health`` and ``monitor`` sections.
    changes : xarray.Dataset, optional
        The statistics product's change points; computed by :func:`series_changes` (the
        same function and parameters) when not given.
    """
    from ..stats.monitor_tables import monitor_params
    from ..stats.rollups import throughput_delay

    if changes is None:
        changes = series_changes(ds, monitor)
    tables = evaluate(ds, health, changes=changes)
    tables["throughput_delay"] = throughput_delay(ds, monitor_params(ds, monitor)["periods"])
    return tables


def changes_in(changes, row, interval):
    """Times (ISO) of the change points of the breach's series that fall in it (from one
    slot before its start to its end, or on when open)."""
    if changes is None or "change" not in changes.dims or changes.sizes["change"] == 0:
        return ""
    t = np.asarray(changes["time"].values, "datetime64[ns]")
    lo = row["start"] - np.timedelta64(int(interval * 1e9), "ns")
    hi = row["end"] if row["end"] == row["end"] else np.datetime64("2262-01-01")
    hit = ((np.asarray(changes["path"].values) == row["path"])
           & (np.asarray(changes["direction"].values) == row["direction"])
           & (np.asarray(changes["test"].values) == row["test"]) & (t >= lo) & (t <= hi))
    for key in ("socket_buffer", "size"):           # the rule's own series only
        if row[key] is not None and key in changes.variables:
            hit &= np.asarray(changes[key].values, float) == float(row[key])
    return " ".join(sorted({str(np.datetime_as_string(x, "s")) + "Z" for x in t[hit]}))


def breach_table(rows, keys=("path", "direction", "test")):
    """The ``breaches`` table of breach rows: ``rule``, the series' ``keys`` (text), then
    when it began, ended and how bad it was."""
    n = len(rows)
    col = lambda k, dt=None: np.array([r[k] for r in rows], dtype=dt)  # noqa: E731
    return xr.Dataset({
        "rule": ("breach", col("rule", str) if n else np.zeros(0, str)),
        **{k: ("breach", col(k, str) if n else np.zeros(0, str)) for k in keys},
        "start": ("breach", col("start", "datetime64[ns]"), {"long_name": "first slot out of the rule"}),
        "opened": ("breach", col("opened", "datetime64[ns]"), {"long_name": "slot that made it a breach (for)"}),
        "last": ("breach", col("last", "datetime64[ns]"), {"long_name": "last slot out of the rule"}),
        "end": ("breach", col("end", "datetime64[ns]"), {"long_name": "first slot back in the rule (NaT: open)"}),
        "open": ("breach", col("open", bool)),
        "worst": ("breach", col("worst", float), {"long_name": "worst slot value"}),
        "threshold": ("breach", col("threshold", float)),
        "slots": ("breach", col("slots", int), {"long_name": "slots from start to last"}),
        "changes": ("breach", col("changes", str) if n else np.zeros(0, str),
                    {"long_name": "change points of the series in the breach (ISO, space-separated)"}),
    })


def verdict_table(alert, rules, rows, with_data):
    """Per series (path and direction; a design's cell): an open breach of any rule, else
    no data in the last slots of every rule that applies (its ``for`` slots), else ok. A
    series no rule applies to (no rules at all, or a reverse direction beside a ping rule)
    is ok while its last slot has an ok run of any test (``with_data``: series x slot),
    else no data. The series are the dimensions of ``alert["applies"]`` after ``rule``."""
    keys = alert["applies"].dims[1:]
    labels = [alert[k].values for k in keys]
    shape = tuple(x.size for x in labels)
    state = np.full(shape, "ok", dtype=object)
    since = np.full(shape, np.datetime64("NaT"), "datetime64[ns]")
    last = np.full(shape, np.datetime64("NaT"), "datetime64[ns]")
    st = alert["state"].values
    applies = alert["applies"].values
    times = alert["time"].values
    for at in np.ndindex(shape):
        use = applies[(slice(None), *at)]
        if use.any():
            has = (st[(use, *at)] != NO_DATA).any(axis=0)
            recent = max(int(r["for"]) for r, u in zip(rules, use) if u)
        else:
            has, recent = with_data[at], 1
        if has.any():
            last[at] = times[np.flatnonzero(has)[-1]]
        if not has[-recent:].any():
            state[at] = "no data"
            since[at] = last[at]
    for row in rows:
        if row["open"]:
            at = tuple(list(x).index(row[k]) for k, x in zip(keys, labels))
            if state[at] != "breach" or row["start"] < since[at]:
                since[at] = row["start"]
            state[at] = "breach"
    coords = {k: x for k, x in zip(keys, labels)}
    coords.update({name: c for name, c in alert["applies"].coords.items() if name not in keys and name != "rule"})
    return xr.Dataset({
        "state": (keys, state.astype(str), {"long_name": "state now: " + ", ".join(VERDICTS)}),
        "since": (keys, since, {"long_name": "start of the open breach, or last data"}),
        "last_data": (keys, last, {"long_name": "last slot with data"}),
    }, coords=coords)


def _longest_run(flags):
    """Length of the longest run of True in each row of a 2-D boolean array."""
    best = np.zeros(flags.shape[0], int)
    cur = np.zeros(flags.shape[0], int)
    for col in flags.T:
        cur = np.where(col, cur + 1, 0)
        best = np.maximum(best, cur)
    return best


def sla(alert, freq, rules=None):
    """Per rule, series (path and direction; a design's cell) and period of ``freq`` (``"1D"``, ``"7D"``): slots due,
    run and with data, the fraction of slots with data that met the rule, the longest
    breach (slots, counted from its first to its last bad slot within the period) and
    availability (slots with the test run / slots due)."""
    times = pd.DatetimeIndex(alert["time"].values)
    period = times.floor(freq) if not freq.upper().endswith("W") else times.to_period("W").start_time
    labels = np.unique(period.to_numpy())
    st = alert["state"].values
    ran = alert["ran"].values
    shape = st.shape[:-1] + (labels.size,)
    due, run, data, met, longest = (np.zeros(shape, int) for _ in range(5))
    for k, label in enumerate(labels):
        cols = np.flatnonzero(period.to_numpy() == label)
        s = st[..., cols]
        due[..., k] = cols.size
        run[..., k] = ran[..., cols].sum(-1)
        data[..., k] = (s != NO_DATA).sum(-1)
        met[..., k] = (s == OK).sum(-1) + (s == PENDING).sum(-1)
        flat = s.reshape(-1, cols.size)
        # a breach spans the slots without data inside it: carry the state over them
        carried = pd.DataFrame(np.where(flat == NO_DATA, np.nan, flat)).ffill(axis=1).to_numpy()
        longest[..., k] = _longest_run(carried == BREACH).reshape(s.shape[:-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(data > 0, met / np.maximum(data, 1), np.nan)
        avail = run / np.maximum(due, 1)
    dims = alert["state"].dims[:-1] + ("period",)
    out = xr.Dataset({
        "due": (dims, due, {"long_name": "slots due"}),
        "ran": (dims, run, {"long_name": "slots the test ran in (any outcome)"}),
        "with_data": (dims, data, {"long_name": "slots with an ok run"}),
        "met": (dims, met, {"long_name": "slots that met the rule"}),
        "fraction_met": (dims, frac, {"units": "1", "long_name": "slots that met the rule / slots with data"}),
        "longest_breach": (dims, longest, {"units": "slots", "long_name": "longest breach in the period"}),
        "availability": (dims, avail, {"units": "1", "long_name": "slots run / slots due"}),
    }, coords={**{d: alert[d].values for d in dims[:-1]}, "period": labels,
               **{n: c for n, c in alert["applies"].coords.items() if n not in dims}})
    out["applies"] = alert["applies"]
    out.attrs["freq"] = freq
    return out


def _overlaps(period, freq, since):
    """True if the SLA period starting at ``period`` ends after ``since``."""
    length = pd.Timedelta(7, "D") if freq.upper().endswith("W") else pd.Timedelta(pd.tseries.frequencies.to_offset(freq))
    return pd.Timestamp(period) + length > pd.Timestamp(since)


def _iso(t):
    """ISO text (UTC, seconds, ``Z``) of a time, None for NaT."""
    t = pd.Timestamp(t)
    return None if pd.isna(t) else t.strftime("%Y-%m-%dT%H:%M:%SZ")


def report_json(tables, since=None):
    """The report as plain data (``thruput monitor report --json``): campaign, rules,
    per path and direction the state now, its breaches (those ending after ``since``, or
    open; all without it) and its SLA per period (those ending after ``since``; without
    it the last day and week: the whole history is in the health product)."""
    alert = tables["alert_state"]
    verdict = tables["verdict"]
    keys = list(verdict["state"].dims)                # path, direction; a design's series
    since = None if since is None else as_utc(since)
    rules = json.loads(alert.attrs["rules"])
    breaches = {}
    br = tables["breaches"]
    if br.sizes.get("breach", 0):
        frame = pd.DataFrame({k: br[k].values for k in br.data_vars})
        if since is not None:
            frame = frame[frame["open"] | (frame["end"] >= since)]
        for key, part in frame.groupby(keys, sort=False):
            breaches[key] = [{
                "rule": r.rule, "start": _iso(r.start), "opened": _iso(r.opened), "last": _iso(r.last),
                "end": _iso(r.end), "open": bool(r.open), "worst": float(r.worst),
                "threshold": float(r.threshold), "slots": int(r.slots), "changes": str(r.changes).split()}
                for r in part.itertuples(index=False)]
    sla_rows = {}
    for name, table in tables.items():
        if not name.startswith("sla_"):
            continue
        freq = table.attrs["freq"]
        frame = table.drop_vars("applies").to_dataframe().reset_index()
        applies = table["applies"].to_dataframe().reset_index()
        frame = frame.merge(applies[applies["applies"]][["rule", *keys]])
        if since is not None:
            frame = frame[[_overlaps(p, freq, since) for p in frame["period"]]]
        elif len(frame):                  # without since: the current (last) period only
            frame = frame[frame["period"] == frame["period"].max()]
        for key, part in frame.groupby(keys, sort=False):
            sla_rows.setdefault(key, {})[freq] = [{
                "rule": r.rule, "period": _iso(r.period), "due": int(r.due), "ran": int(r.ran),
                "with_data": int(r.with_data), "met": int(r.met),
                "fraction_met": None if np.isnan(r.fraction_met) else float(r.fraction_met),
                "longest_breach_slots": int(r.longest_breach), "availability": float(r.availability)}
                for r in part.itertuples(index=False)]
    freqs = [t.attrs["freq"] for n, t in tables.items() if n.startswith("sla_")]
    series = []
    state, since_, last = (verdict[k].values for k in ("state", "since", "last_data"))
    labels = [verdict[k].values.tolist() for k in keys]
    extra = [n for n, c in verdict.coords.items() if n not in keys]     # a design's factor levels
    for at in np.ndindex(state.shape):
        key = tuple(x[i] for x, i in zip(labels, at))
        sla_of = sla_rows.get(key, {})
        named = {k: x[i] for k, x, i in zip(keys, labels, at)}
        named.update({n: verdict[n].values[at].item() for n in extra})
        series.append({**named, "state": str(state[at]),
                       "since": _iso(since_[at]), "last_data": _iso(last[at]),
                       "breaches": breaches.get(key, []),
                       "sla": {f: sla_of.get(f, []) for f in freqs}})
    states = [s["state"] for s in series]
    return {"campaign": alert.attrs.get("campaign", ""), "interval_s": alert.attrs.get("interval_s"),
            "first_slot": _iso(alert["time"].values[0]) if alert.sizes["slot"] else None,
            "last_slot": _iso(alert["time"].values[-1]) if alert.sizes["slot"] else None,
            "since": _iso(since) if since is not None else None,
            "rules": [r["id"] for r in rules], "units": {r["id"]: r["units"] for r in rules},
            "state": next((s for s in VERDICTS if s in states), "no data"),
            "exit_status": exit_status(states), "series": series}


#: Exit status of ``thruput monitor report`` (Nagios plugin convention: 0 OK, 1 WARNING,
#: 2 CRITICAL/usage, 3 UNKNOWN).
EXIT = {"ok": 0, "breach": 1, "error": 2, "no data": 3}


def exit_status(states):
    """1 if any path and direction is in breach, else 3 if any has no data, else 0
    (2 is the usage / input error of the command)."""
    if "breach" in states:
        return EXIT["breach"]
    if "no data" in states or not states:
        return EXIT["no data"]
    return EXIT["ok"]


def open_health(path):
    """The alert tables (one group each, written by ``thruput pipeline health``), in memory: ``{name: Dataset}``."""
    tree = xr.open_datatree(path)
    try:
        return {node.name: node.to_dataset().load() for node in tree.subtree if node.name and node.name != "/"}
    finally:
        tree.close()


def _value(x, units):
    return "-" if x is None else value(x, units, 4)


def format_report(report):
    """The report as text: one line per path and direction (its state, said once), one
    per breach below it, and one per rule and SLA period (every rule that applies, met
    or not)."""
    lines = [f"{report['campaign']}: {report['state'].upper()} "
             f"(slots {report['first_slot']} to {report['last_slot']}; {len(report['rules'])} rules"
             + (f"; since {report['since']}" if report["since"] else "") + ")"]
    if not report["rules"]:
        lines.append("  no alerts: or baseline: rules in campaign.yaml: every slot is ok")
    for s in report["series"]:
        if s["state"] == "no data":
            state = f"no data since {s['last_data']}" if s["last_data"] else "no data at all"
        else:
            state = s["state"] + (f" since {s['since']}" if s["since"] and s["since"] != s["last_data"] else "")
            state += f" (last data {s['last_data']})" if s["last_data"] else " (no data at all)"
        name = s["series"] if "series" in s else f"{s['path']} {s['direction']}"
        lines.append(f"{name}: {state}")
        for b in s["breaches"]:
            unit = report.get("units", {}).get(b["rule"], "")
            end = "OPEN" if b["open"] else f"ended {b['end']}"
            changes = f"; change points {', '.join(b['changes'])}" if b["changes"] else ""
            lines.append(f"  {end:<28} {b['rule']}: from {b['start']} ({b['slots']} slots), "
                         f"worst {_value(b['worst'], unit)} (limit {_value(b['threshold'], unit)}){changes}")
        for freq, rows in s["sla"].items():
            for row in rows:
                met = ("no slot with data" if row["fraction_met"] is None else
                       f"{100 * row['fraction_met']:.1f} % of {row['with_data']} slots met")
                lines.append(f"  SLA {freq} {row['period'][:10]} {row['rule']}: {met}, "
                             f"longest breach {row['longest_breach_slots']} slots, "
                             f"availability {100 * row['availability']:.1f} %")
    return "\n".join(lines)
