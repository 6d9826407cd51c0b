"""The alert tables of a monitor campaign kept in a Zarr store and brought up to date after
an append: a new day costs in proportion to the day and what its rules need from before,
not to the year.

:func:`write_alerts` evaluates the whole campaign (:func:`thruput.monitor.alerts.evaluate`)
and writes each table as a group of the store (:func:`thruput.campaign.store.write_table`):
``alert_state`` growing along ``slot``, ``sla_<freq>`` along ``period``, ``breaches`` and
``verdict`` whole, and ``slots`` (runs per slot; per path and direction whether an ok run
of any test was in it), which the update reads. :func:`append_alerts` recomputes from the
campaign's runs only the slots from the last stored one on, and those a baseline rule's
window needs before it; carries each series' states over from the last slot that met its
rule (a run of bad slots that reaches ``for`` across the join turns its pending slots into
a breach); keeps the breaches that ended before, the verdict's last data and the SLA
periods before the first changed slot; and writes the changed slots and periods in place
(:func:`thruput.campaign.store.append_table`). :func:`open_alerts` reads the tables back,
as :func:`~thruput.monitor.alerts.evaluate` returns them.

The store is built whole again, rather than risk a wrong table, when its rules, params or
campaign metadata differ; when the campaign's runs up to the stored ones are not those it
was built from, or a new run lands in a slot before the last stored one; when a new path
or direction appears, or a rule applies to a series it did not; and when it was written
with another :data:`LAYOUT`. A slot without runs keeps its stored time: it lies between
two slots with runs, and its time is interpolated between theirs
(:func:`~thruput.monitor.alerts.slot_grid`), which later runs do not move. Values of a breach's ``worst`` and ``threshold`` taken from stored
slots are the stored float32 ones (the full evaluation uses float64: equal to float32's
precision).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from .alerts import (
    BREACH,
    DEFAULT_PARAMS,
    NO_DATA,
    OK,
    PENDING,
    breach_table,
    changes_in,
    evaluate_runs,
    campaign_metadata,
    RunLabels,
    slot_times,
    series_slot_values,
    slot_states,
    rule_limits,
    verdict_table,
    rules_of,
    sla,
)

__all__ = ["STORE_TABLE", "append_alerts", "open_alerts", "write_alerts"]

#: ``attrs["table"]`` of an alerts store; ``UPDATING`` while an update writes into it.
STORE_TABLE, UPDATING = "alerts", "alerts (update interrupted)"
#: ``attrs["layout"]`` of the stores this module writes and updates (2: slots without runs
#: placed by interpolation).
LAYOUT = 2
#: Slots read back at a time while looking for where a series' run of bad slots began.
SCAN_SLOTS = 4096


def _dim(name):
    return {"alert_state": "slot", "slots": "slot", "breaches": "breach"}.get(
        name, "period" if name.startswith("sla_") else None)


def _slot_table(runs, alert):
    """The ``slots`` group: runs per slot, and per path and direction whether the slot
    had an ok run of any test (the verdict of a series no rule applies to); ``runs`` is
    the :class:`~thruput.monitor.alerts._Runs` of the campaign on its slot grid."""
    slots = runs.slots
    paths, directions = list(alert["path"].values), list(alert["direction"].values)
    pi = np.array([paths.index(p) for p in runs.paths.tolist()], np.int64)
    di = np.array([directions.index(d) for d in runs.directions.tolist()], np.int64)
    with_data = np.zeros((len(paths), len(directions), slots.size), bool)
    with_data[pi[runs.path_code[runs.ok]], di[runs.dir_code[runs.ok]], runs.pos[runs.ok]] = True
    return xr.Dataset({"runs": ("slot", np.bincount(runs.pos, minlength=slots.size).astype(np.int64)),
                       "with_data": (("path", "direction", "slot"), with_data)},
                      coords={"slot": slots, "path": paths, "direction": directions})


#: The per-run coordinates :func:`~thruput.monitor.alerts.evaluate` selects by.
LABELS = ("time", "slot", "path", "direction", "test", "outcome", "socket_buffer", "size")


def _columns(ds, rules):
    """Only what the rules read of ``ds`` (its labels and watched variables), loaded: a
    lazily opened store is read once, column by column, not again at each access."""
    names = {*LABELS, *(r["variable"] for r in rules)}
    keep = [n for n in ds.variables if n in names and ds[n].dims == ("run",)]
    sub = ds[[n for n in keep if n in ds.data_vars]]
    sub = sub.drop_vars([n for n in sub.coords if n not in keep and n != "run"])
    return sub.assign_coords({n: ds[n] for n in keep if n in ds.coords and n not in sub.coords}).load()


def _run_time(ds, i):
    return int(np.asarray(ds["time"].isel(run=i).values, "datetime64[ns]").astype(np.int64))


def write_alerts(ds: xr.Dataset, path: str | os.PathLike[str], params: dict | None = None,
                 changes: xr.Dataset | None = None) -> dict[str, Any]:
    """Evaluate the whole campaign ``ds`` (:func:`~thruput.monitor.alerts.evaluate`, with
    ``params`` and ``changes``) and write its tables as a new Zarr store at ``path``
    (written beside it and renamed). Returns the store's attrs."""
    p = {**DEFAULT_PARAMS, **(params or {})}
    from ..campaign.store import finish_tables, write_table

    tables, runs = evaluate_runs(ds, p, changes)     # (each column read once, a window at a time)
    alert = tables["alert_state"]
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    for name, table in {**tables, "slots": _slot_table(runs, alert)}.items():
        write_table(table, tmp, name, dim=_dim(name))
    meta = campaign_metadata(ds)
    held = ds.sizes["run"]
    attrs = {"table": STORE_TABLE, "layout": LAYOUT, "params": json.dumps(p, sort_keys=True),
             "metadata": json.dumps(meta, sort_keys=True), "runs": int(held),
             "last_run_ns": _run_time(ds, held - 1) if held else 0, "tables": list(tables)}
    finish_tables(tmp, attrs)
    if path.exists():
        shutil.rmtree(path)
    os.replace(tmp, path)
    return attrs


def open_alerts(path: str | os.PathLike[str]) -> dict[str, xr.Dataset]:
    """The tables of an alerts store, loaded, as :func:`~thruput.monitor.alerts.evaluate`
    returns them (strings as ``<U``)."""
    from ..campaign.store import open_table, table_attrs

    out = {}
    for name in table_attrs(path)["tables"]:
        with open_table(path, name) as table:
            table = table.load()
        out[name] = table.assign({k: v.astype(object).astype(str) for k, v in table.data_vars.items()
                                  if v.dtype.kind in "TO"}).assign_coords(
            {k: v.astype(object).astype(str) for k, v in table.coords.items() if v.dtype.kind in "TO"})
    return out


def _why_not(attrs, ds, p):
    """Why the store (its ``attrs``) cannot be updated from ``ds`` with params ``p``, or ``""``."""
    if attrs.get("table") != STORE_TABLE:
        return "no alerts store" if attrs.get("table") != UPDATING else "an update was interrupted"
    if attrs.get("layout") != LAYOUT:
        return "written with another layout"
    if attrs["params"] != json.dumps(p, sort_keys=True):
        return "other params"
    if attrs["metadata"] != json.dumps(campaign_metadata(ds), sort_keys=True):
        return "the campaign's metadata (rules, schedule) changed"
    held = int(attrs["runs"])
    if not held:
        return "built from no run"
    if ds.sizes["run"] < held or _run_time(ds, held - 1) != int(attrs["last_run_ns"]):
        return "the campaign's runs up to the stored ones are not those it was built from"
    return ""


def _period_of(times, freq):
    """The SLA period (its start) of each time, as :func:`~thruput.monitor.alerts.sla` bins them."""
    t = pd.DatetimeIndex(times)
    return (t.floor(freq) if not freq.upper().endswith("W") else t.to_period("W").start_time).to_numpy()


class _Stored:
    """Stored arrays of ``alert_state`` (and ``slots``' ``with_data``) from slot position
    ``lo`` to ``end``, read further back on demand."""

    def __init__(self, root, end):
        self.root, self.end, self.lo, self.arrays = root, end, end, {}

    def read_to(self, lo, names=("state",)):
        self.lo = max(0, min(lo, self.lo))
        for name in set(names) | set(self.arrays):
            have = self.arrays.get(name)
            held = self.end - (have.shape[-1] if have is not None else 0)
            if held > self.lo:
                group = "slots" if name == "with_data" else "alert_state"
                more = np.asarray(self.root[f"{group}/{name}"][..., self.lo:held])
                self.arrays[name] = more if have is None else np.concatenate([more, have], axis=-1)
        return self


def _carry_start(st, lo, L):
    """Per series (stored states ``st`` of slot positions ``lo`` to ``L``): the position
    its states are computed again from: after the last slot that met its rule when the
    last one with data before ``L`` did not (a run of bad slots at the join), else ``L``;
    -1 when that lies before ``lo`` (read further back)."""
    idx = np.arange(st.shape[-1])
    last_data = np.where(st != NO_DATA, idx, -1).max(-1, initial=-1)
    last_ok = np.where(st == OK, idx, -1).max(-1, initial=-1)
    bad = last_data > last_ok
    out = np.full(st.shape[:-1], L, np.int64)
    out[bad & (last_ok >= 0)] = lo + last_ok[bad & (last_ok >= 0)] + 1
    if lo == 0:
        out[bad & (last_ok < 0)] = 0
    else:
        out[(bad & (last_ok < 0)) | (last_data < 0)] = -1
    return out


def append_alerts(ds: xr.Dataset, path: str | os.PathLike[str], params: dict | None = None,
                  changes: xr.Dataset | None = None) -> dict[str, Any]:
    """Bring the alerts store ``path`` (:func:`write_alerts`) up to date with ``ds``, the
    campaign after an append, computing only the new slots and what their rules need from
    before (module docstring); built whole (:func:`write_alerts`) where it cannot be.

    Parameters
    ----------
    ds : xarray.Dataset
        The monitor campaign now, ordered by slot as it was appended (best lazily opened:
        only its runs from the first recomputed slot on are read).
    path : path-like
        The store.
    params, changes
        As :func:`~thruput.monitor.alerts.evaluate` takes them; ``changes`` (the change
        points of the whole campaign) are matched with every breach again.

    Returns
    -------
    dict
        The store's attrs, plus ``"rebuilt"``: why it was built whole, or ``""``.
    """
    from ..campaign.store import table_attrs

    p = {**DEFAULT_PARAMS, **(params or {})}
    attrs = table_attrs(path)
    why = _why_not(attrs, ds, p)
    if not why:
        try:
            return _append(ds, Path(path), p, changes, attrs)
        except _Rebuild as exc:
            why = str(exc)
    return {**write_alerts(ds, path, p, changes), "rebuilt": why}


class _Rebuild(Exception):
    """The store cannot be updated in place (the message says why)."""


def _append(ds, path, p, changes, attrs):
    import zarr

    from ..campaign.store import append_table, finish_tables, table_coords, write_table

    meta = campaign_metadata(ds)
    rules = rules_of(meta)
    interval = float((meta.get("schedule") or {}).get("interval_s") or 0)
    got = table_coords(path, ["alert_state"], ["slot", "time"])
    slots, times = got["alert_state"]["slot"].astype(np.int64), got["alert_state"]["time"]
    root = zarr.open_consolidated(str(path), mode="r")
    runs_per = np.asarray(root["slots/runs"][:], np.int64)
    paths = [str(x) for x in root["alert_state/path"][:]]
    directions = [str(x) for x in root["alert_state/direction"][:]]
    applies = np.asarray(root["alert_state/applies"][:], bool)
    n_old = slots.size
    L = n_old - 1
    # the first slot whose runs are read again: the last stored one, or the start of the
    # widest baseline window before it
    window = max([int(r["window_s"]) for r in rules if r["kind"] == "baseline"], default=0)
    A = min(L, int(np.searchsorted(times, times[L] - np.timedelta64(window, "s"), side="left"))) if window else L
    cut = int(runs_per[:A].sum())
    tail = _columns(ds.isel(run=slice(cut, None)), rules)
    tslot = np.asarray(tail["slot"].values, np.int64)
    if tslot.size and tslot.min() < slots[A]:
        raise _Rebuild("a run lands in a slot before the last stored one (or the runs are not in slot order)")
    new_slots = np.arange(slots[A], max(slots[L], int(tslot.max()) if tslot.size else slots[L]) + 1)
    counts = np.bincount(tslot - slots[A], minlength=new_slots.size)
    if (counts[:L - A] != runs_per[A:L]).any() or counts[L - A] < runs_per[L]:
        raise _Rebuild("the runs of the stored slots are not those they were built from")
    # times: the first run's, else interpolated between the slots with runs either side
    # (the one before may be before A: the last stored slot with runs there)
    ttime = np.asarray(tail["time"].values, "datetime64[ns]")
    first = pd.Series(ttime).groupby(tslot).min()
    before = np.flatnonzero(runs_per[:A] > 0)[-1:]
    fresh_times = slot_times(np.concatenate([slots[before], first.index.to_numpy()]),
                              np.concatenate([times[before], first.to_numpy()]), new_slots)
    if (fresh_times[:L - A] != times[A:L]).any():
        raise _Rebuild("the stored slots' times moved")
    all_times = np.concatenate([times[:A], fresh_times])
    if (np.diff(all_times.astype(np.int64)) <= 0).any():
        raise _Rebuild("slot times are not increasing")
    n_all = all_times.size
    # the new slots' values, what ran, thresholds (exact: their windows are all read)
    truns = RunLabels(tail, new_slots)
    if set(truns.paths.tolist()) - set(paths) or set(truns.directions.tolist()) - set(directions):
        raise _Rebuild("a new path or direction")
    shape = (len(rules), len(paths), len(directions), new_slots.size)
    fv, fthr = np.full(shape, np.nan), np.full(shape, np.nan)
    fran = np.zeros(shape, bool)
    for r, rule in enumerate(rules):
        found = series_slot_values(tail, truns, rule) if tslot.size else {}
        for (pa, di), (v, did) in found.items():
            i, j = paths.index(pa), directions.index(di)
            if not applies[r, i, j]:
                raise _Rebuild(f"rule {rule['id']!r} applies to a new series ({pa} {di})")
            fv[r, i, j], fran[r, i, j] = v, did
        for i, j in zip(*np.nonzero(applies[r])):
            fthr[r, i, j] = rule_limits(rule, fv[r, i, j], fresh_times, p)
    fwith = np.zeros(shape[1:], bool)
    pi = np.array([paths.index(x) for x in truns.paths.tolist()], np.int64)
    di = np.array([directions.index(x) for x in truns.directions.tolist()], np.int64)
    fwith[pi[truns.path_code[truns.ok]], di[truns.dir_code[truns.ok]], truns.pos[truns.ok]] = True
    # where each series' states are computed again from (its run of bad slots at the join)
    recent = max([int(r["for"]) for r in rules], default=1)
    stored = _Stored(root, n_old).read_to(min(A, n_all - recent))
    while True:
        start = _carry_start(stored.arrays["state"][..., :L - stored.lo], stored.lo, L)
        start[~applies] = L
        if (start >= 0).all():
            break
        stored.read_to(stored.lo - SCAN_SLOTS)
    lo = min(int(start.min()), L, n_all - recent, A)
    for freq in p["sla"]:
        per = _period_of(all_times, freq)
        lo = min(lo, int(np.searchsorted(per, per[min(int(start.min()), L)], side="left")))
    stored.read_to(lo, ("state", "value", "threshold", "ran", "with_data"))
    lo = stored.lo
    a = A - lo                       # position of A in the arrays from lo
    n_sub = n_all - lo
    st = np.full(shape[:3] + (n_sub,), NO_DATA, np.int8)
    st[..., :n_old - lo] = stored.arrays["state"]
    val = np.concatenate([stored.arrays["value"][..., :a].astype(float), fv], -1)
    thr = np.concatenate([stored.arrays["threshold"][..., :L - lo].astype(float), fthr[..., L - A:]], -1)
    ran = np.concatenate([stored.arrays["ran"][..., :a], fran], -1)
    with_data = np.concatenate([stored.arrays["with_data"][..., :a], fwith], -1)
    sub_times = all_times[lo:]
    # states again from each series' start, and its breaches there
    from ..campaign.store import open_table

    with open_table(path, "breaches") as br:
        old = br.load()
    keep, rows = np.ones(old.sizes["breach"], bool), []
    old_key = {k: old[k].values.astype(object).astype(str) for k in ("rule", "path", "direction")}
    ids = [r["id"] for r in rules]
    for r, rule in enumerate(rules):
        side = "below" if "below" in rule else "above"
        for i, j in zip(*np.nonzero(applies[r])):
            s = int(start[r, i, j]) - lo
            flags = np.where(st[r, i, j] == NO_DATA, np.nan, np.isin(st[r, i, j], (PENDING, BREACH)).astype(float))
            v, t = val[r, i, j], thr[r, i, j]
            tail_bad = (v < t) if side == "below" else (v > t)
            flags[L - lo:] = np.where(np.isfinite(v[L - lo:]), tail_bad[L - lo:], np.nan)
            state, found = slot_states({"above": 0.5, "for": rule["for"]}, flags[s:], np.full(n_sub - s, 0.5))
            st[r, i, j, s:] = state
            mine = (old_key["rule"] == rule["id"]) & (old_key["path"] == paths[i]) & (old_key["direction"] == directions[j])
            keep &= ~(mine & (old["start"].values >= sub_times[s]))
            data = np.flatnonzero(np.isfinite(flags[s:])) + s
            for f0, f1, after, opened in found:
                f0, f1, after = f0 + s, f1 + s, (after + s if after >= 0 else -1)
                inside = v[f0:f1 + 1]
                rows.append({"rule": rule["id"], "path": paths[i], "direction": directions[j], "test": rule["test"],
                             "start": sub_times[f0], "opened": sub_times[data[opened]], "last": sub_times[f1],
                             "end": sub_times[after] if after >= 0 else np.datetime64("NaT"), "open": after < 0,
                             "worst": float(np.nanmin(inside) if side == "below" else np.nanmax(inside)),
                             "slots": int(f1 - f0 + 1), "threshold": float(np.nanmedian(t[f0:f1 + 1])),
                             "socket_buffer": rule["socket_buffer"], "size": rule["size"]})
    for k in np.flatnonzero(keep):
        rule = rules[ids.index(str(old["rule"].values[k]))]
        rows.append({**{c: old[c].values[k] for c in ("rule", "path", "direction", "test", "start", "opened",
                                                       "last", "end", "open", "worst", "slots", "threshold")},
                     "socket_buffer": rule["socket_buffer"], "size": rule["size"]})
    for row in rows:
        for c in ("rule", "path", "direction", "test"):
            row[c] = str(row[c])
        row["open"], row["slots"] = bool(row["open"]), int(row["slots"])
        row["changes"] = changes_in(changes, row, interval)
    rows.sort(key=lambda row: (ids.index(row["rule"]), row["path"], row["direction"], row["start"]))
    # the first slot whose stored state changed: everything from it on is written
    changed = np.flatnonzero((st[..., :n_old - lo] != stored.arrays["state"]).any(axis=(0, 1, 2)))
    w = min(int(changed[0]) if changed.size else L - lo, L - lo)
    coords = {"rule": ids, "path": paths, "direction": directions, "slot": np.arange(slots[0] + lo, slots[0] + n_all),
              "time": ("slot", sub_times)}
    dims = ("rule", "path", "direction", "slot")
    alert = xr.Dataset({"state": (dims, st), "value": (dims, val.astype(np.float32)),
                        "threshold": (dims, thr.astype(np.float32)), "ran": (dims, ran),
                        "applies": (dims[:3], applies)}, coords=coords)
    if (alert["slot"].values[:n_old - lo] != slots[lo:]).any():
        raise _Rebuild("the slot numbers moved")
    breach_attrs = dict(root["breaches"].attrs)
    done = dict(attrs)
    done.update(table=UPDATING)
    finish_tables(path, done)
    append_table(alert.isel(slot=slice(w, None)), path, "alert_state", lo + w, dim="slot")
    counts_all = np.concatenate([runs_per[lo:A], counts])
    slots_table = xr.Dataset({"runs": ("slot", counts_all.astype(np.int64)),
                              "with_data": (("path", "direction", "slot"), with_data)},
                             coords={"slot": coords["slot"], "path": paths, "direction": directions})
    append_table(slots_table.isel(slot=slice(w, None)), path, "slots", lo + w, dim="slot")
    for freq in p["sla"]:
        per = _period_of(sub_times, freq)
        ws = int(np.searchsorted(per, per[w], side="left"))
        table = sla(alert.isel(slot=slice(ws, None)), freq, rules)
        held = np.asarray(table_coords(path, [f"sla_{freq}"], ["period"])[f"sla_{freq}"]["period"])
        append_table(table, path, f"sla_{freq}", int(np.searchsorted(held, per[ws])), dim="period")
    # the verdict from the last slots (those of every rule's `for`, and from the last stored
    # one on); a series without data in them keeps its stored last data
    vs = max(0, min(n_sub - recent, L - lo))
    verdict = verdict_table(alert.isel(slot=slice(vs, None)), rules, rows, with_data[..., vs:])
    with open_table(path, "verdict") as before:
        last_before = before["last_data"].load().values
    gone = np.isnat(verdict["last_data"].values)
    last = np.where(gone, last_before, verdict["last_data"].values)
    since = np.where(gone & (verdict["state"].values == "no data"), last_before, verdict["since"].values)
    verdict["last_data"].values[...] = last
    verdict["since"].values[...] = since
    breaches = breach_table(rows)
    append_table(verdict, path, "verdict", 0, dim="path")       # (the same labels: in place)
    write_table(breaches.assign_attrs(breach_attrs), path, "breaches", dim="breach")
    done.update(table=STORE_TABLE, runs=int(ds.sizes["run"]), last_run_ns=_run_time(ds, ds.sizes["run"] - 1))
    finish_tables(path, done)
    return {**done, "rebuilt": ""}
