"""Everything a monitor campaign's page shows, computed once: :func:`monitor_product`.

The pipeline stores the result as ``data/processed/<campaign>.stats.nc`` (one group per
table); the page (notebooks/monitor.ipynb, :mod:`thruput.report.monitor`) reads only
that, so every number on it comes from here, with the parameters in each table's
``attrs["params"]`` (JSON).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

import json

import numpy as np
import pandas as pd
import xarray as xr

from ..campaign.store import label_codes
from ..formatting import duration, number

from .defaults import CONFIDENCE, N_BOOT, SEED
from .changes import AUTO_SEGMENTS, MIN_SIZE, PENALTY, change_points
from .grouped import grouped_summary
from .monitor import (ROLLING_PERCENTILES, buffer_curves, compare_periods, direction_asymmetry,
                      as_utc, gap_report, period_labels, rolling_summary, udp_loss_offered, udp_tcp_ratio)
from ._portable import geomspace
from .rollups import throughput_delay
from .periodic import FALSE_ALARM, MIN_FOR_PERIOD, daily_cycle, false_alarm, periodogram

__all__ = ["monitor_product", "monitor_tree", "product_changes", "monitor_params", "monitor_settings", "series_change_points", "SERIES", "DEFAULT_PARAMS", "TABLES"]

#: The series of a monitor campaign: per test, the variable watched and what splits runs
#: into series (docs/design.md names).
SERIES = {
    "tcp": ("throughput", ("path", "direction", "socket_buffer")),
    "udp": ("throughput", ("path", "direction")),
    "ping": ("rtt_median", ("path", "direction", "size")),
}
#: The socket buffer or ping size of a series whose runs did not set it (the tool's
#: default; an imported nuttcp log, say): a value, so that the series is one group.
UNSET = 0.0
#: Names a monitor Dataset must have (docs/design.md, "The monitor Dataset").
REQUIRED = ("time", "slot", "path", "direction", "test", "socket_buffer", "size", "outcome")
#: Fewest values of a series for a periodogram (a sinusoid and an offset need three).
MIN_PERIODOGRAM = 3
#: Parameters of the product; ``None`` = derived from ``campaign.yaml`` (see
#: :func:`monitor_params`). The pipeline passes ``params.yaml``'s ``monitor`` section.
DEFAULT_PARAMS = {
    "freq": None,            # rolling bin: 5 x schedule.interval_s, else "1h"
    "period_s": None,        # the cycle: schedule.day_s, else "auto" (the data's, if significant)
    "periods": None,         # {name: [start, end]}: before / after the first event, else halves
    "percentiles": list(ROLLING_PERCENTILES),
    "penalty": PENALTY, "min_size": MIN_SIZE,
    "n_boot": N_BOOT, "confidence": CONFIDENCE, "seed": SEED,   # thruput.stats.DEFAULTS
    "bins": 20,              # of the distributions per period
    "max_points": 20000,     # runs drawn as points; above this the page shows bins only
}
#: The tables of the product and what each holds.
TABLES = {
    "campaign": "campaign.yaml and run counts (attrs only)",
    "summary_tcp": "per series: n, mean, std, min, max, median, IQR, p10, p90",
    "summary_udp": "per series: as summary_tcp",
    "summary_ping": "per series: as summary_tcp, of each run's median RTT",
    "rolling_tcp": "per series and time bin", "rolling_udp": "per series and time bin",
    "rolling_ping": "per series and time bin",
    "changes": "change points of every series",
    "cycle": "daily profile of every series in each compared period (amplitude included)",
    "periodogram": "Lomb-Scargle periodogram of every series, its change-point levels removed",
    "compare_tcp": "period b vs period a", "compare_udp": "period b vs period a",
    "compare_ping": "period b vs period a",
    "asymmetry_tcp": "reverse vs forward", "asymmetry_udp": "reverse vs forward",
    "asymmetry_ping": "reverse vs forward",
    "buffer_curves": "TCP throughput vs socket buffer per period, and the window limit",
    "udp_tcp": "UDP / TCP median throughput per socket buffer",
    "udp_loss": "UDP loss, offered (sender) and received rates per series, whole and per time bin",
    "sender_receiver": "TCP sender / receiver throughput per series (iperf's own consistency)",
    "throughput_delay": "TCP throughput vs the slot's ping RTT per series and period: medians, 1-sigma ellipse",
    "gaps": "missed slots and failed tests",
    "runs": "every run's value, for the time series' points",
}


def _metadata(ds):
    raw = ds.attrs.get("metadata", "{}")
    return json.loads(raw) if isinstance(raw, str) else dict(raw)


def monitor_settings(params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``params`` (params.yaml's ``monitor`` section) over :data:`DEFAULT_PARAMS`, its
    ``bootstrap`` read as ``n_boot``; nothing derived from a campaign yet (``None`` stays).

    Raises
    ------
    ValueError
        For a key :data:`DEFAULT_PARAMS` does not know.
    """
    params = dict(params or {})
    if "bootstrap" in params:  # params.yaml's name (as in its stats section)
        params["n_boot"] = params.pop("bootstrap")
    unknown = set(params) - set(DEFAULT_PARAMS)
    if unknown:
        raise ValueError(f"unknown monitor parameters {sorted(unknown)}; known: {sorted(DEFAULT_PARAMS)}")
    return {**DEFAULT_PARAMS, **params}


def monitor_params(ds: xr.Dataset, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The product's parameters: ``params`` over :data:`DEFAULT_PARAMS`, ``None``
    values derived from the campaign's ``campaign.yaml`` (schedule, events)."""
    p = monitor_settings(params)
    meta = _metadata(ds)
    schedule = meta.get("schedule", {}) or {}
    interval = float(schedule.get("interval_s") or 3600)
    p["interval_s"] = interval
    if p["freq"] is None:
        p["freq"] = f"{int(5 * interval)}s" if schedule.get("interval_s") else "1h"
    if p["period_s"] is None and schedule.get("day_s"):
        p["period_s"] = float(schedule["day_s"])
        p["period_reason"] = f"schedule.day_s of campaign.yaml: {p['period_s']:g} s"
    elif p["period_s"] is None or p["period_s"] == "auto":
        p["period_s"] = "auto"      # resolved by monitor_product from the periodograms
    else:
        p["period_s"] = float(p["period_s"])
        p["period_reason"] = f"params.yaml monitor.period_s: {p['period_s']:g} s"
    if p["periods"] is None:
        times = np.asarray(ds["time"].values, "datetime64[ns]")
        t0, t1 = times.min(), times.max() + np.timedelta64(1, "s")
        events = sorted(str(e["time"]) for e in meta.get("events", []) or [] if e.get("time"))
        cut = as_utc(events[0]) if events else t0 + (t1 - t0) // 2
        p["periods"] = {"before": [str(t0), str(cut)], "after": [str(cut), str(t1)]}
    return p


def _loaded(ds, names):
    """``ds`` with the variables ``names`` in memory: read once from a lazily opened
    store, not at every use (the caller's ``ds`` is left as it is)."""
    ds = ds.copy(deep=False)
    for name in names:
        ds.variables[name].load()
    return ds


def _select(ds, test):
    """The ``ok`` runs of one test kind, lazily (index arrays on NumPy coordinates)."""
    keep = (np.asarray(ds["test"].values) == test) & (np.asarray(ds["outcome"].values) == "ok")
    return ds.isel(run=np.flatnonzero(keep))


def _unset_filled(ds, labels=None):
    """``ds`` with the socket buffer of TCP runs and the size of ping runs that did not
    set them :data:`UNSET` (they key series: a NaN key would make no group); ``labels``
    (:class:`_Labels`) reads ``test`` as codes, not strings."""
    for name, test in (("socket_buffer", "tcp"), ("size", "ping")):
        values = np.asarray(ds[name].values, dtype=float)
        is_test = np.asarray(ds["test"].values) == test if labels is None else labels.of(test, "test")
        missing = np.isnan(values) & is_test
        if missing.any():
            ds = ds.assign_coords({name: (ds[name].dims, np.where(missing, UNSET, values),
                                          ds[name].attrs)})
    return ds


def _series_keys(sub, by):
    frame = pd.DataFrame({b: np.asarray(sub[b].values) for b in by})
    return frame.groupby(list(by), sort=True).indices


class _Labels:
    """The per-run label columns of a campaign as codes (:func:`thruput.campaign.store.label_codes`),
    each read once when first asked for: ``(labels, codes)``."""

    def __init__(self, ds):
        self.ds, self.read = ds, {}

    def __call__(self, name):
        if name not in self.read:
            self.read[name] = label_codes(self.ds, name)
        return self.read[name]

    def of(self, label, name):
        """Which runs have ``label`` in column ``name``."""
        labels, codes = self(name)
        at = [i for i, x in enumerate(labels.tolist()) if x == label]
        return codes == (at[0] if at else -2)


def _series(ds, labels=None):
    """Per test with ``ok`` runs: its quantity (lazily, if ``ds`` is; with its ``time``
    coordinate alone, the one the statistics read) and the runs of each of its series: ``[(test, by,
    values, {key: indices})]``, found once for every table. The labels are read as codes
    (:class:`_Labels` of ``ds`` unless given), never whole as strings: the keys and their
    order are those of a groupby of the labels (sorted; a run without one in none)."""
    codes = _Labels(ds) if labels is None else labels
    ok = codes.of("ok", "outcome")
    found = []
    for test, (var, by) in SERIES.items():
        idx = np.flatnonzero(ok & codes.of(test, "test"))
        if not idx.size:
            continue
        quantity = ds[var]
        values = quantity.drop_vars([c for c in quantity.coords if c != "time"]).isel(run=idx)
        keys = pd.DataFrame({b: codes(b)[1][idx] for b in by})
        have = np.flatnonzero((keys != -1).all(axis=1))
        groups = keys.iloc[have].groupby(list(by), sort=True).indices
        names = [codes(b)[0].tolist() for b in by]
        found.append((test, by, values, {
            tuple(n[c] for n, c in zip(names, key if isinstance(key, tuple) else (key,))): have[at]
            for key, at in groups.items()}))
    return found


def _per_series(series, func):
    """``func(values, test, key_dict)`` for every series of every test (:func:`_series`),
    stacked on ``series`` with coordinates path, direction, test, socket_buffer, size."""
    parts = []
    for test, by, values, keys in series:
        for key, idx in keys.items():
            key = dict(zip(by, key if isinstance(key, tuple) else (key,)))
            out = func(values.isel(run=idx), test, key)
            if out is None:
                continue
            labels = {"path": key["path"], "direction": key["direction"], "test": test,
                      "socket_buffer": float(key.get("socket_buffer", np.nan)),
                      "size": float(key.get("size", np.nan))}
            parts.append((labels, out))
    return parts


def _stack(parts, dim):
    """Concatenate per-series Datasets on ``dim`` (``series`` or ``change``)."""
    if not parts:
        return xr.Dataset()
    pieces = []
    for labels, out in parts:
        if dim == "series":
            out = out.expand_dims(series=1)
        n = out.sizes[dim]
        pieces.append(out.assign_coords({k: (dim, np.full(n, v)) for k, v in labels.items()}))
    return xr.concat(pieces, dim=dim, combine_attrs="override")


def _summaries(ds, p):
    out = {}
    for test, (var, by) in SERIES.items():
        sub = _select(ds, test)
        if sub.sizes["run"] == 0:
            continue
        keys = {b: sub[b].values for b in by}
        out[f"summary_{test}"] = grouped_summary(sub[var], keys, p["percentiles"])
        if len(by) > 2:
            roll = [rolling_summary(sub[var].isel(run=idx), freq=p["freq"], by=by[:2],
                                    percentiles=p["percentiles"]).expand_dims({by[2]: [k]})
                    for k, idx in _series_keys(sub, by[2:]).items()]
            out[f"rolling_{test}"] = xr.concat(roll, dim=by[2], combine_attrs="override", join="outer")
        else:
            out[f"rolling_{test}"] = rolling_summary(sub[var], freq=p["freq"], by=by,
                                                     percentiles=p["percentiles"])
        a, b = p["periods"].values()
        boot = dict(n_boot=p["n_boot"], confidence=p["confidence"], seed=p["seed"])
        out[f"compare_{test}"] = compare_periods(sub[var], a, b, by=by, bins=p["bins"], **boot)
        if set(np.unique(sub["direction"].values)) >= {"forward", "reverse"}:
            rest = tuple(x for x in by if x != "direction")
            out[f"asymmetry_{test}"] = direction_asymmetry(sub[var], by=rest, **boot)
    return out


def _runs(ds, p):
    rows = []
    for test, (var, by) in SERIES.items():
        sub = ds.isel(run=np.flatnonzero(np.asarray(ds["test"].values) == test))
        if sub.sizes["run"] == 0:
            continue
        rows.append(xr.Dataset({
            "value": ("run", np.asarray(sub[var].values, float), dict(sub[var].attrs)),
            "outcome": ("run", np.asarray(sub["outcome"].values).astype(str), {"units": "1"}),
        }, coords={c: ("run", np.asarray(sub[c].values), dict(sub[c].attrs))
                   for c in ("time", "slot", "path", "direction", "test", "socket_buffer", "size")}))
    return xr.concat(rows, dim="run").drop_vars("run", errors="ignore") if rows else xr.Dataset()


def _sender_receiver(ds):
    sub = _select(ds, "tcp")
    ratio = sub["throughput_sender"] / sub["throughput"]
    ratio.attrs = {"units": "1", "long_name": "sender / receiver throughput"}
    return grouped_summary(ratio, {b: sub[b].values for b in SERIES["tcp"][1]}, (10, 50, 90))


def monitor_product(ds: xr.Dataset, params: Mapping[str, Any] | None = None) -> dict[str, xr.Dataset]:
    """The complete statistics product of one monitor campaign.

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign (docs/design.md, "The monitor Dataset"), NumPy or dask.
    params : dict, optional
        Over :data:`DEFAULT_PARAMS` (the pipeline's ``params.yaml`` ``monitor``
        section); ``None`` entries are derived by :func:`monitor_params`.

    Returns
    -------
    dict of str to xarray.Dataset
        One Dataset per table of :data:`TABLES` (those that apply: no ``udp_tcp``
        without UDP runs ...), each with ``attrs["params"]`` (JSON of the parameters
        used) and ``attrs["table"]`` (its name).

    Raises
    ------
    ValueError
        When ``ds`` lacks a name of the monitor Dataset (:data:`REQUIRED`), naming them.

    Notes
    -----
    Change points are searched with the cycle removed (``period=period_s``), in every
    series: TCP throughput per socket buffer, UDP throughput, ping median RTT per size.
    On dask input every table is computed per group or from mergeable summaries
    (:mod:`thruput.stats.grouped`), never by loading the whole campaign: ``test``,
    ``outcome`` and ``time`` (one value a run, which every table selects by) are read
    whole, once; the ``runs`` table (points of the time series) copies every run's value,
    and only up to ``max_points`` runs.
    """
    missing = [name for name in REQUIRED if name not in ds.variables]
    if missing or "run" not in ds.dims:
        raise ValueError(f"{ds.attrs.get('campaign', 'dataset')}: not a monitor campaign "
                         f"(docs/design.md): missing {missing or ['dimension run']}")
    ds = _unset_filled(_loaded(ds, ("test", "outcome", "time")))
    p = monitor_params(ds, params)
    meta = _metadata(ds)
    boot = dict(n_boot=p["n_boot"], confidence=p["confidence"], seed=p["seed"])
    out = {"campaign": xr.Dataset(attrs={
        "metadata": json.dumps(meta), "campaign": str(ds.attrs.get("campaign", meta.get("name", ""))),
        "runs": int(ds.sizes["run"]), "start": str(np.asarray(ds["time"].values).min()),
        "end": str(np.asarray(ds["time"].values).max())})}
    out.update(_summaries(ds, p))
    series = _series(ds)
    out["periodogram"], out["changes"] = _periods_and_changes(ds, series, p)
    if p["period_s"] is not None:
        out["cycle"] = _stack(_per_series(series, lambda v, t, k: _cycle_per_period(v, p, boot)),
                              "series")
    del series
    tcp = _select(ds, "tcp")
    if tcp.sizes["run"]:
        out["buffer_curves"] = _with_window_limit(
            buffer_curves(tcp["throughput"], p["periods"], percentiles=p["percentiles"]),
            _select(ds, "ping"), p["periods"])
        out["sender_receiver"] = _sender_receiver(ds)
        out["throughput_delay"] = throughput_delay(ds, p["periods"])
        if (np.asarray(ds["test"].values) == "udp").any():
            ok = ds.isel(run=np.flatnonzero(np.asarray(ds["outcome"].values) == "ok"))
            out["udp_tcp"] = udp_tcp_ratio(ok)
    if (np.asarray(ds["test"].values) == "udp").any() and "loss_fraction" in ds:
        out["udp_loss"] = udp_loss_offered(ds, freq=p["freq"])
    out["gaps"] = gap_report(ds, p["interval_s"], meta.get("explained", []) or [])
    if ds.sizes["run"] <= p["max_points"]:
        out["runs"] = _runs(ds, p)
    for name, table in out.items():
        table.attrs.update({"table": name, "params": json.dumps(p, default=str)})
    return out


def _significance(found):
    """A periodogram with the false-alarm probability of its highest peak (``false_alarm``;
    NaN under :data:`~thruput.stats.periodic.MIN_FOR_PERIOD` values, too few to tell)."""
    hours = float(found["period"].max()) * 2       # the grid's longest period is half the span
    n = int(found["n"])
    fap = false_alarm(float(found["dominant_power"]), n, hours, float(found["period"].min())) \
        if n >= MIN_FOR_PERIOD else np.nan
    found["false_alarm"] = xr.DataArray(
        float(fap),
        attrs={"units": "1", "long_name": "probability that noise alone gives the highest peak"})
    return found


def _auto_period(periodograms):
    """``(period in s or None, why)``: the dominant period of the series whose periodogram
    peak is the least likely to be noise, if its false-alarm probability is at most
    :data:`~thruput.stats.periodic.FALSE_ALARM`."""
    if not periodograms.sizes.get("series"):
        return None, "period 'auto': no series has enough runs for a periodogram"
    fap = periodograms["false_alarm"].values
    if not np.isfinite(fap).any():
        return None, (f"period 'auto' (no schedule.day_s): every series has fewer than "
                      f"{MIN_FOR_PERIOD} runs, too few to find a period: no cycle removed")
    best = int(np.nanargmin(fap))
    s = periodograms.isel(series=best)
    period = float(s["dominant_period"]) * 3600
    label = f"{s['test'].item()} {s['direction'].item()} on {s['path'].item()}"
    if np.isfinite(fap[best]) and fap[best] <= FALSE_ALARM:
        return period, (f"period 'auto' (no schedule.day_s): the periodogram of {label} peaks at "
                        f"{duration(period, 4)} ({float(s['dominant_power']):.0%} of the variance), with "
                        f"false-alarm probability {number(fap[best], 2)} (at most {FALSE_ALARM:g})")
    return None, (f"period 'auto' (no schedule.day_s): no significant period; the most "
                  f"significant peak, {duration(period, 4)} in {label}, has false-alarm probability "
                  f"{number(fap[best], 2)} (more than {FALSE_ALARM:g}): no cycle removed, no daily profile")


def _periods_and_changes(ds, series, p):
    """The ``periodogram`` and ``changes`` tables of :func:`monitor_product`; ``p`` (its
    parameters) gets the period used (``period_s``, ``period_reason``) where it was "auto"."""
    grid = _period_grid(ds, p)
    # with period "auto", coarse levels (as change_points(period="auto")): finer ones
    # would cut the cycle being looked for into levels
    levels = {**p, "period_s": None, "coarse": True} if p["period_s"] == "auto" else p
    periods = _stack(_per_series(series, lambda v, t, k: _significance(periodogram(
        _level_removed(v, levels), periods=grid)) if int(v.count()) >= MIN_PERIODOGRAM else None),
        "series")
    if p["period_s"] == "auto":
        p["period_s"], p["period_reason"] = _auto_period(periods)
    changes = _stack(_per_series(series, lambda v, t, k: change_points(
        v, penalty=p["penalty"], min_size=p["min_size"], period=p["period_s"], n_boot=p["n_boot"],
        confidence=p["confidence"], seed=p["seed"])), "change")
    return periods, changes


def product_changes(ds: xr.Dataset, params: Mapping[str, Any] | None = None) -> xr.Dataset:
    """The ``changes`` table of :func:`monitor_product` alone: the same function with the
    same parameters (``params``: params.yaml's ``monitor`` section), so that ``thruput
    monitor report`` and the health stage find the change points the page shows."""
    ds = _loaded(ds, ("time",))
    labels = _Labels(ds)
    ds = labels.ds = _unset_filled(ds, labels)      # (only test read yet: the keys from the filled ds)
    p = monitor_params(ds, params)
    return _periods_and_changes(ds, _series(ds, labels), p)[1]


def monitor_tree(ds: xr.Dataset, params: Mapping[str, Any] | None = None) -> xr.DataTree:
    """:func:`monitor_product` as the DataTree the pipeline writes (one group per table;
    the root names the campaign and the parameters used)."""
    tables = monitor_product(ds, params)
    root = xr.Dataset(attrs={"campaign": ds.attrs.get("campaign", ""), "campaign_kind": "monitor",
                             "title": ds.attrs.get("title", ds.attrs.get("campaign", "")),
                             "metadata": ds.attrs.get("metadata", "{}"),
                             "params": json.dumps(params or {}, sort_keys=True)})
    return xr.DataTree.from_dict({"/": root, **{f"/{name}": table for name, table in tables.items()}})


def series_change_points(ds: xr.Dataset, penalty: float = PENALTY, min_size: int = MIN_SIZE,
                         period: float | str | None = None, n_boot: int = N_BOOT,
                         confidence: float = CONFIDENCE, seed: int = SEED) -> xr.Dataset:
    """:func:`~thruput.stats.change_points` of every series of a monitor campaign.

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign (docs/design.md, "The monitor Dataset").
    penalty, min_size, period, n_boot, confidence, seed
        As :func:`~thruput.stats.change_points` (``period="auto"`` finds each series' own).

    Returns
    -------
    xarray.Dataset
        The changes of every series (:data:`SERIES`: TCP throughput per socket buffer,
        UDP throughput, ping median RTT per size) on ``change``, with coordinates
        ``path``, ``direction``, ``test``, ``socket_buffer``, ``size``; the table
        ``changes`` of :func:`monitor_product`.
    """
    ds = _unset_filled(_loaded(ds, ("test", "outcome", "time")))
    return _stack(_per_series(_series(ds), lambda v, t, k: change_points(
        v, penalty=penalty, min_size=min_size, period=period, n_boot=n_boot,
        confidence=confidence, seed=seed)), "change")


def _level_removed(values, p):
    """``values`` minus the median of its segment between change points, so that a level
    shift does not pass for a long period in the periodogram."""
    min_size = p["min_size"]
    if p.get("coarse"):
        min_size = max(min_size, int(values.count()) // AUTO_SEGMENTS)
    found = change_points(values, penalty=p["penalty"], min_size=min_size,
                          period=p["period_s"], n_boot=10, seed=p["seed"])
    order = np.argsort(np.asarray(values["time"].values), kind="stable")
    v = np.asarray(values.values, float)[order]
    edges = [0, *found["index"].values.tolist(), v.size]
    finite = np.flatnonzero(np.isfinite(v))
    level = np.full(v.size, np.nan)
    for lo, hi in zip(edges[:-1], edges[1:]):
        rows = finite[lo:hi]
        level[rows] = np.median(v[rows])
    out = values.isel({values.dims[0]: order}).copy(data=v - level)
    out.attrs = {**values.attrs, "long_name": f"{values.attrs.get('long_name', 'value')} minus its level"}
    return out


def _cycle_per_period(values, p, boot):
    """The daily profile in each compared period: a profile pooled over a level change
    mixes two levels, and seed 004's O1 asks about a cycle seen in September only."""
    t = np.asarray(values["time"].values, "datetime64[ns]")
    rows = []
    for name, (start, end) in p["periods"].items():
        inside = (t >= as_utc(start)) & (t < as_utc(end))
        sub = values.isel({values.dims[0]: np.flatnonzero(inside)})
        rows.append(daily_cycle(sub, period=p["period_s"], **boot).expand_dims(period=[name]))
    return xr.concat(rows, dim="period")


def _with_window_limit(curves, ping, periods):
    """Add ``window_limit`` = 8 x socket_buffer / RTT, RTT the period's median ping RTT
    (smallest ping size), per path and direction: the line a window-limited run follows."""
    if ping.sizes["run"] == 0:
        return curves
    small = ping.isel(run=np.flatnonzero(ping["size"].values == np.nanmin(ping["size"].values)))
    keys = {"path": small["path"].values, "direction": small["direction"].values,
            "period": period_labels(small["time"].values, periods)}
    rtt = grouped_summary(small["rtt_median"], keys)["median"].reindex(
        path=curves["path"].values, direction=curves["direction"].values, period=curves["period"].values)
    limit = 8 * curves["socket_buffer"] / (rtt / 1e3)
    curves["window_limit"] = limit.transpose(*curves["median"].dims)
    curves["window_limit"].attrs = {"units": "bit/s", "long_name":
                                    "8 x socket buffer / median ping RTT of the period"}
    return curves


def _period_grid(ds, p):
    """Periods (h) shared by every series' periodogram: 2 slots to half the campaign (so
    a period is seen at least twice)."""
    times = np.asarray(ds["time"].values, "datetime64[ns]")
    span_h = (times.max() - times.min()) / np.timedelta64(1, "h")
    return geomspace(2 * p["interval_s"] / 3600, max(span_h / 2, 4 * p["interval_s"] / 3600), 400)
