"""A campaign of ``kind: design`` as one Dataset on a ``run`` dimension.

:func:`open_design` reads the design's ``runs.csv`` (:func:`~.design.read_design_manifest`)
and every run's log, through the monitor's per-run reading
(:func:`thruput.monitor.reader.read_batch`: the same readers, the same numbers, the same
checks of sha256 and of cut-off logs), and lays them out as docs/design.md, "Designs",
says: one coordinate per factor, ``repeat``, ``time``, the run's ``outcome`` and
``reason``, the tool's whole-run numbers (TCP, UDP) and the RTT summary of each rtt log
(ping, irtt), with each run's file and sha256. :func:`validate_design` checks it;
:func:`thruput.validate` calls it for ``campaign_kind="design"``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ..errors import ContractError
from ..monitor import reader as mon
from ..campaign.outcome import OUTCOMES
from ..quantities import iso_ns
from ..campaign.design import Design, DesignRow, design_of, read_design_manifest, with_levels

__all__ = ["DESIGN_COORDS", "DESIGN_VARIABLES", "design_rows_dataset", "open_design", "validate_design"]

#: Coordinates on ``run`` besides the factors: name -> (units, long_name); "" = datetime64.
DESIGN_COORDS = {
    "run": ("1", "run id (runs.csv run)"),
    "repeat": ("1", "repeat index within the run's cell of factor levels"),
    "time": ("", "run start, UTC (NaT where the log and runs.csv do not say)"),
}
#: Per-run numbers kept from the monitor reader (its units and long names).
MEASURED = mon.THROUGHPUT_FIELDS + mon.RTT_FIELDS + ("tool_checks_failed",)
#: Variables on ``run``: name -> (units, long_name).
DESIGN_VARIABLES = {
    "outcome": ("1", "ok, or how the run failed: " + ", ".join(OUTCOMES[1:])),
    "reason": ("1", "the tool's own message where the run failed"),
    **{name: mon.MONITOR_VARIABLES[name][1:] for name in MEASURED},
    "source": ("1", "raw file, relative to the campaign directory (\"\" = none)"),
    "source_sha256": ("1", "sha256 of the raw file"),
}
#: What the monitor reader's fragment has that a design does not: its coordinates (a
#: design's are its factors) and the ping probes (a design keeps each run's summary).
MONITOR_ONLY = ("slot", "path", "direction", "test", "tool", "socket_buffer", "size", "rate",
                "rtt", "rtt_status", "probe_time", "probe")
#: ``started`` given to the monitor reader for a run runs.csv gives none (its ``time``
#: is then NaT here).
NO_START = "2000-01-01T00:00:00Z"


def open_design(directory, metadata: Mapping[str, Any]) -> xr.Dataset:
    """The Dataset of design campaign ``directory`` (its ``campaign.yaml`` ``metadata``).

    Returns
    -------
    xarray.Dataset
        On ``run`` (runs.csv order; start order for a design over time): a coordinate per factor (numbers with their
        ``units``, int64 where every run has a whole number, else float64 with NaN for
        an empty cell; other factors strings, ``""`` where empty), ``repeat``, ``time``;
        ``outcome``, ``reason``; ``throughput``, ``throughput_sender`` (bit/s),
        ``retransmits``, ``window_actual``, ``loss_fraction``, ``jitter``, ``duration``
        (TCP/UDP logs); ``ping_transmitted``, ``ping_received``, ``ping_loss``,
        ``rtt_min`` ... ``rtt_mdev`` (ms, rtt logs); ``tool_checks_failed``; ``source``,
        ``source_sha256``. NaN where a run's log has no such number. Attrs: ``kind``
        ("campaign"), ``campaign``, ``campaign_kind`` ("design"), ``title``, ``metadata``,
        ``factors`` (JSON list of the factors, levels in order, those not declared as
        found), ``design_time`` (1 if runs form series over time), ``files_read`` and the
        line accounting. Validated by :func:`validate_design`.

    Raises
    ------
    thruput.errors.ThruputError
        For a malformed runs.csv (every row listed), or an ok run whose file is missing,
        changed since it was listed, cut off or of the wrong kind (naming file and line).
    """
    design = design_of(metadata)
    rows = read_design_manifest(directory, design)
    ds = design_rows_dataset(directory, rows, design)
    ds.attrs.update({
        "kind": "campaign", "campaign": metadata["name"], "campaign_kind": "design",
        "title": metadata["title"], "metadata": json.dumps(metadata, sort_keys=True),
    })
    return validate_design(ds)


#: The tool named to the monitor reader for a throughput row: a hint that lets it try
#: reading the ok rows' files as one pile of iperf3 -J logs (its fast path); a pile that is
#: not one is read file by file, each log sniffed, as it would be without the hint.
PILE_TOOL = {"iperf": "iperf3", "ping": ""}


def _monitor_row(row: DesignRow):
    return mon.MonitorRow(row.run, row.role, row.path, row.sha256, -1, row.started or NO_START,
                          "", "", "", PILE_TOOL[row.role], np.nan, np.nan, np.nan, row.outcome,
                          row.reason, row.line)


def design_rows_dataset(directory, rows: list[DesignRow], design: Design) -> xr.Dataset:
    """The runs ``rows`` of a campaign of ``design`` as a Dataset (without campaign attrs):
    :func:`open_design`'s layout."""
    fragments = [mon.read_batch(str(directory), [_monitor_row(r) for r in batch])
                 for batch in mon.batches(rows)] or [mon.read_batch(str(directory), [])]
    ledger = mon.merge_ledgers([f.attrs for f in fragments])
    fragments = [f.drop_vars([n for n in MONITOR_ONLY if n in f.variables]) for f in fragments]
    ds = xr.concat(fragments, dim="run", data_vars="all", coords="all", join="exact",
                   combine_attrs="drop") if len(fragments) > 1 else fragments[0]
    design = with_levels(design, {f.name: [r.values[k] for r in rows] for k, f in enumerate(design.factors)})
    coords = {"repeat": ("run", np.array([r.repeat for r in rows], dtype=np.int64)),
              "time": ("run", np.array([iso_ns(r.started) if r.started else np.datetime64("NaT", "ns")
                                        for r in rows], dtype="datetime64[ns]"))}
    for k, f in enumerate(design.factors):
        coords[f.name] = ("run", _factor_values([r.values[k] for r in rows], f.numeric))
    ds = ds.assign_coords(run=np.array([r.run for r in rows], dtype=str), **coords)
    ds = ds.assign({name: ds[name].astype(str) for name in ("outcome", "reason", "source", "source_sha256")})
    for name, (units, long_name) in DESIGN_COORDS.items():
        ds[name].attrs = {"long_name": long_name} | ({"units": units} if units else {})
    for f in design.factors:
        what = f"factor {f.name}" + (f" ({f.applied})" if f.applied else "")
        ds[f.name].attrs = {"long_name": what, "units": f.units or "1"}
    for name, (units, long_name) in DESIGN_VARIABLES.items():
        ds[name].attrs = {"long_name": long_name, "units": units}
    ds = ds[list(DESIGN_VARIABLES)]
    if design.time:                     # series over time: in start order (ties: runs.csv's)
        order = np.argsort(ds["time"].values, kind="stable")
        if not np.array_equal(order, np.arange(order.size)):
            ds = ds.isel(run=order)
    ds.attrs.update(ledger)
    ds.attrs.update({"factors": design.to_json(), "design_time": int(design.time)})
    return ds


def _factor_values(values, numeric):
    if not numeric:
        return np.array(["" if v is None else str(v) for v in values], dtype=str)
    out = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
    if out.size and np.isfinite(out).all() and (out == np.round(out)).all() and np.abs(out).max() < 2**53:
        return out.astype(np.int64)
    return out


def validate_design(ds: xr.Dataset) -> xr.Dataset:
    """Check a design Dataset against docs/design.md ("Designs"); return it unchanged.

    Every coordinate (the factors named in ``attrs["factors"]`` too) and variable is on
    ``run`` with its units; run ids are unique; outcomes are known; an ok run has a file;
    a design over time (``design_time``) has every run's start, in time order.

    Raises
    ------
    ContractError
        Listing every violation.
    """
    problems = []
    if ds.attrs.get("campaign_kind") != "design":
        problems.append(f"campaign_kind is {ds.attrs.get('campaign_kind')!r}, not 'design'")
    try:
        factors = json.loads(ds.attrs["factors"])
        names = [f["name"] for f in factors]
        units = {f["name"]: f.get("units") or "1" for f in factors}
    except (KeyError, TypeError, ValueError) as exc:
        problems.append(f"bad factors attr: {exc!r}")
        names, units = [], {}
    for name, (unit, _) in {**DESIGN_COORDS, **{n: (units[n], "") for n in names}}.items():
        if name not in ds.coords:
            problems.append(f"missing coordinate {name!r}")
        elif ds[name].dims != ("run",):
            problems.append(f"coordinate {name!r} has dims {ds[name].dims}, expected ('run',)")
        elif unit and ds[name].attrs.get("units") != unit:
            problems.append(f"{name!r} has units {ds[name].attrs.get('units')!r}, expected {unit!r}")
        elif not unit and ds[name].dtype.kind != "M":
            problems.append(f"{name!r} is not datetime64")
    for name, (unit, _) in DESIGN_VARIABLES.items():
        if name not in ds.data_vars:
            problems.append(f"missing variable {name!r}")
        elif ds[name].dims != ("run",):
            problems.append(f"{name!r} has dims {ds[name].dims}, expected ('run',)")
        elif ds[name].attrs.get("units") != unit:
            problems.append(f"{name!r} has units {ds[name].attrs.get('units')!r}, expected {unit!r}")
    if not problems:
        runs = np.asarray(ds["run"].values).astype(str)
        if np.unique(runs).size != runs.size:
            problems.append("run ids are not unique")
        outcome = np.asarray(ds["outcome"].values).astype(str)
        bad = sorted(set(np.unique(outcome).tolist()) - set(OUTCOMES))
        if bad:
            problems.append(f"outcome has values {bad} outside {OUTCOMES}")
        if ((outcome == "ok") & (np.asarray(ds["source"].values).astype(str) == "")).any():
            problems.append("an ok run has no source file")
        time = ds["time"].values
        if int(ds.attrs.get("design_time", 0)) and np.isnat(time).any():
            problems.append("a design over time has runs without a start (time NaT)")
        elif int(ds.attrs.get("design_time", 0)) and (np.diff(time.astype(np.int64)) < 0).any():
            problems.append("a design over time has its runs out of time order")
    if problems:
        raise ContractError(f"design campaign {ds.attrs.get('campaign', '?')}: " + "; ".join(problems))
    return ds



