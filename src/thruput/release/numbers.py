"""Every number a release publishes, each with what it is, its unit and where it comes from.

Three kinds of numbers: each campaign's statistics (every numeric variable of every group
of ``data/processed/<campaign>.stats.nc``, one item per cell), each comparison's
(``data/report/compare-<name>.nc``) and the reproduction ledger's verdicts
(``data/processed/reproduction.csv``: a claim's status and its derived value). An item's
``id`` is stable across releases, so two releases are diffed by id (:func:`diff`); the
pipeline's numbers are bit-reproducible, so an unchanged input gives an equal value.

A group with more than :data:`MAX_GROUP_VALUES` values (a periodogram, a long rolling
series) is one item whose value is the sha256 of its data: it still shows as changed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..hashing import sha256_bytes, sha256_file
from ..product_groups import COMPARISON_GROUP_FUNCTIONS, GROUP_FUNCTIONS, PRODUCT_FUNCTIONS

__all__ = ["collect", "diff", "headline", "raw_files", "MAX_GROUP_VALUES", "KINDS"]

#: A group with more values than this is published as one digest item, not cell by cell.
MAX_GROUP_VALUES = 5000
#: What an item is about: its ``kind``.
KINDS = ("statistic", "comparison", "verdict")
#: Ledger columns an item of kind ``verdict`` carries: the status, the derived value.
_LEDGER = {"status": "", "derived_value": None}


def _plain(value):
    """A JSON value for a cell: float (None for NaN), int, str or ISO time."""
    if isinstance(value, (np.datetime64, pd.Timestamp)):
        return None if pd.isna(value) else pd.Timestamp(value).isoformat()
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if math.isnan(value) else float(value)
    return str(value)


def _cell_label(cell):
    """``window=65536,streams=2``: a cell's coordinates (whole floats without ``.0``)."""
    return ",".join(f"{k}={int(v) if isinstance(v, float) and v.is_integer() else v}" for k, v in cell.items())


def _group_items(ds, prefix, base):
    """Items of one netCDF group: one per numeric variable and cell."""
    items = []
    for name in ds.data_vars:
        da = ds[name]
        if da.dtype.kind not in "fiubM":
            continue
        unit = str(da.attrs.get("units", ""))
        what = str(da.attrs.get("long_name", name))
        if da.size > MAX_GROUP_VALUES:
            digest = sha256_bytes(np.ascontiguousarray(da.values).tobytes())
            items.append({**base, "id": f"{prefix}/{name}", "what": f"{what} ({da.size} values, sha256)",
                          "variable": name, "cell": {}, "value": digest, "unit": unit})
            continue
        coords = {d: (da[d].values if d in da.coords else np.arange(da.sizes[d])) for d in da.dims}
        values = np.asarray(da.values)
        for index in np.ndindex(values.shape):
            cell = {d: _plain(coords[d][i]) for d, i in zip(da.dims, index)}
            label = _cell_label(cell)
            items.append({**base, "id": f"{prefix}/{name}" + (f"[{label}]" if label else ""), "what": what,
                          "variable": name, "cell": cell, "value": _plain(values[index]), "unit": unit})
    return items


def _product_items(path, kind, owner_key, owner, root):
    """Items and sources of one product file (a campaign's statistics or a comparison)."""
    import xarray as xr

    rel = Path(path).relative_to(root).as_posix() if root else Path(path).name
    items, sources = [], {}
    tree = xr.open_datatree(path)
    try:
        params = tree.attrs.get("params", "{}")
        product = PRODUCT_FUNCTIONS.get(tree.attrs.get("campaign_kind", kind), "")
        functions = COMPARISON_GROUP_FUNCTIONS if kind == "comparison" else GROUP_FUNCTIONS
        for node in tree.subtree:
            ds = node.to_dataset(inherit=False)
            if not ds.data_vars:
                continue
            group = node.path.strip("/")
            source = f"{rel}#{group}"
            sources[source] = {"file": rel, "group": group, "function": functions.get(group, product),
                               "product": product,
                               "params": {k: _plain(v) if not isinstance(v, str) else v
                                          for k, v in ds.attrs.items()},
                               "pipeline_params": json.loads(params) if isinstance(params, str) else {}}
            base = {"kind": kind, owner_key: owner, "group": group, "source": source}
            items += _group_items(ds.load(), f"{kind}:{owner}/{group}", base)
    finally:
        tree.close()
    return items, sources


def raw_files(campaign_dir):
    """Every raw file of a campaign: ``{relative path: sha256}``, sorted (hashed here, not
    taken from runs.csv, so a release states the bytes it ships)."""
    campaign_dir = Path(campaign_dir)
    if not campaign_dir.is_dir():
        return {}
    return {p.relative_to(campaign_dir).as_posix(): sha256_file(p)
            for p in sorted(campaign_dir.rglob("*")) if p.is_file()}


def collect(root, campaigns=(), comparisons=(), ledger=True):
    """Every published number of the project at ``root``.

    Parameters
    ----------
    root : path-like
        The project (``data/processed``, ``data/report``, ``data/raw``).
    campaigns : sequence of str
        Campaigns whose ``data/processed/<c>.stats.nc`` to read (missing ones are skipped).
    comparisons : sequence of str
        Comparison names (``data/report/compare-<name>.nc``).
    ledger : bool
        Include the reproduction ledger's verdicts.

    Returns
    -------
    dict
        ``{"items": [...], "sources": {source: {...}}}``; each item has ``id``, ``kind``,
        ``campaign``, ``comparison`` or ``claim``, ``what``, ``value``, ``unit`` and
        ``source`` (a key of ``sources``: the file and group, the function of
        :mod:`thruput.stats` that computed it with its parameters, and for a campaign its
        raw folder); ``raw_sha256``: campaign -> {raw file: sha256}.
    """
    root = Path(root)
    items, sources, raw = [], {}, {}
    for name in campaigns:
        path = root / "data" / "processed" / f"{name}.stats.nc"
        if not path.exists():
            continue
        new, src = _product_items(path, "statistic", "campaign", name, root)
        raw[name] = raw_files(root / "data" / "raw" / name)
        for s in src.values():
            s["raw"] = f"data/raw/{name}"
        items += new
        sources.update(src)
    for name in comparisons:
        path = root / "data" / "report" / f"compare-{name}.nc"
        if path.exists():
            new, src = _product_items(path, "comparison", "comparison", name, root)
            items += new
            sources.update(src)
    csv = root / "data" / "processed" / "reproduction.csv"
    if ledger and csv.exists():
        items += _ledger_items(csv, sources)
    return {"items": items, "sources": sources, "raw_sha256": raw}


def _ledger_items(csv, sources):
    ledger = pd.read_csv(csv, dtype={"seed": str}, keep_default_na=False)
    source = "data/processed/reproduction.csv"
    sources[source] = {"file": source, "function": "thruput.reproduce.build_ledger",
                       "checks": "src/thruput/studies/seed_<nnn>/claims.yaml"}
    items = []
    for row in ledger.itertuples(index=False):
        base = {"kind": "verdict", "claim": row.claim, "seed": row.seed, "source": source,
                "quote": row.quote, "inputs": row.inputs, "check": row.check, "note": row.note}
        items.append({**base, "id": f"verdict:{row.claim}/status", "what": f"verdict on {row.claim}",
                      "value": row.status, "unit": ""})
        derived = pd.to_numeric(row.derived_value, errors="coerce")
        if not pd.isna(derived):
            items.append({**base, "id": f"verdict:{row.claim}/derived_value",
                          "what": f"value derived for {row.claim} ({row.measures})",
                          "value": float(derived), "unit": row.published_unit})
    return items


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


#: Fields an item of changes.json keeps (besides old and new).
_CHANGE_FIELDS = ("id", "kind", "what", "campaign", "comparison", "claim", "unit", "source")


def _entry(item, sources, **values):
    out = {k: item[k] for k in _CHANGE_FIELDS if k in item}
    out.update(values)
    if item.get("source") in sources:
        out["source"] = {"ref": item["source"], **sources[item["source"]]}
    return out


def diff(old, new):
    """What changed between two :func:`collect` results, number by number.

    Returns
    -------
    dict
        ``{"added": [...], "removed": [...], "changed": [...]}``, each entry an item's
        ``id``, ``kind``, ``what``, ``campaign``/``comparison``/``claim``, ``unit``,
        ``old`` and ``new`` values and ``source`` (where it comes from), sorted by id.
    """
    old = old or {"items": [], "sources": {}}
    a = {i["id"]: i for i in old["items"]}
    b = {i["id"]: i for i in new["items"]}
    added = [_entry(b[k], new["sources"], old=None, new=b[k]["value"]) for k in sorted(set(b) - set(a))]
    removed = [_entry(a[k], old["sources"], old=a[k]["value"], new=None) for k in sorted(set(a) - set(b))]
    changed = [_entry(b[k], new["sources"], old=a[k]["value"], new=b[k]["value"])
               for k in sorted(set(a) & set(b)) if not _same(a[k]["value"], b[k]["value"])]
    return {"added": added, "removed": removed, "changed": changed}


def _scalar(ds, name, **sel):
    if ds is None or name not in ds:
        return None
    da = ds[name]
    if sel:
        da = da.sel(**{k: v for k, v in sel.items() if k in da.dims})
    da = da.squeeze()
    return _plain(da.values[()]) if da.size == 1 else None


def headline(processed, campaigns=None):
    """The headline numbers (DVC metrics: ``data/metrics.json``) of the statistics products in
    ``processed`` (``campaigns``: which, default all).

    Per campaign: a TCP sweep's best cell (median throughput, Mbit/s; its window, byte, and
    streams) and pooled median RTT unloaded and loaded (ms); a UDP sweep's peak receive
    rate (Mbit/s) and latency slope (us/byte) and intercept (us); a monitor's median TCP and
    UDP throughput (Mbit/s) and ping RTT (ms) per path, direction and setting. Then the
    ledger's count of each status. Values are rounded to 6 significant figures (``dvc metrics diff``
    prints them; the statistics products keep every digit).
    """
    import xarray as xr

    processed = Path(processed)
    if campaigns is None:               # every statistics product in the folder
        campaigns = sorted(p.name[:-len(".stats.nc")] for p in processed.glob("*.stats.nc"))
    out = {}
    for name in campaigns:
        path = processed / f"{name}.stats.nc"
        if not path.exists():
            continue
        with xr.open_datatree(path) as tree:
            groups = {n.path.strip("/"): n.to_dataset(inherit=False).load() for n in tree.subtree}
        row = {}
        if "best_cells" in groups:
            best = groups["best_cells"].isel(rank=0)
            row.update(best_median_Mbit_s=_mega(_scalar(best, "median")), best_window_byte=_scalar(best, "window"),
                       best_streams=_scalar(best, "streams"))
        if "rtt_pooled" in groups:
            rtt = groups["rtt_pooled"]
            row.update(rtt_unloaded_median_ms=_round(_scalar(rtt, "median", phase="unloaded")),
                       rtt_loaded_median_ms=_round(_scalar(rtt, "median", phase="loaded")))
        if "udp_peak" in groups:
            row["udp_peak_Mbit_s"] = _mega(_scalar(groups["udp_peak"], "peak_rate"))
        if "latency_fit" in groups:
            fit = groups["latency_fit"]
            row.update(latency_slope_us_per_byte=_round(_scalar(fit, "slope")),
                       latency_intercept_us=_round(_scalar(fit, "intercept")))
        for test, unit in (("tcp", "Mbit_s"), ("udp", "Mbit_s"), ("ping", "ms")):   # a monitor's summaries
            summary = groups.get(f"summary_{test}")
            if summary is not None and "median" in summary:
                row[f"{test}_median_{unit}"] = _per_cell(summary["median"], scale=1e6 if unit == "Mbit_s" else 1)
        if row:
            out[name] = {k: v for k, v in row.items() if v is not None}
    csv = processed / "reproduction.csv"
    if csv.exists():
        counts = pd.read_csv(csv, usecols=["status"])["status"].value_counts()
        out["ledger"] = {s: int(n) for s, n in sorted(counts.items())}
    return out


def _per_cell(da, scale=1.0):
    """``{"path=a-b,direction=forward": value}`` of a small DataArray (NaN cells left out)."""
    out = {}
    values = np.asarray(da.values, dtype=float)
    for index in np.ndindex(values.shape):
        if np.isfinite(values[index]):
            label = _cell_label({d: _plain(da[d].values[i]) for d, i in zip(da.dims, index)})
            out[label or "all"] = _round(float(values[index]) / scale)
    return out or None


def _round(value, sig=6):
    if not isinstance(value, float):
        return value
    return float(f"{value:.{sig}g}")


def _mega(value):
    return _round(value / 1e6) if isinstance(value, float) else value
