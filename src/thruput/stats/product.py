"""The statistics product of a campaign: every table any page shows, computed once.

The pipeline's ``stats@<campaign>`` stage calls :func:`campaign_product` and writes the
``xarray.DataTree`` it returns to ``data/processed/<campaign>.stats.nc``; the site's pages
only read it (:mod:`thruput.report` never calls :mod:`thruput.stats`). The catalogue and
the comparisons the user lists in ``params.yaml`` are products too
(:func:`catalogue_product`, :func:`comparison_product`).

Every group is a Dataset with ``units`` on its variables; the parameters used are in the
attrs of the root (``params``, JSON) and of each group that depends on them.

Groups of a ``tcp_sweep`` product
---------------------------------
``cells``
    :func:`~thruput.stats.describe` of throughput over repeats, per window x streams.
``plateau``
    :func:`~thruput.stats.plateau` along window, per streams count.
``best_cells``, ``smallest_product``
    :func:`~thruput.stats.best_cells`, :func:`~thruput.stats.smallest_product`.
``rtt``, ``rtt_pooled``, ``rtt_ecdf``, ``bound`` (only with ping probes)
    :func:`~thruput.stats.rtt_load` per cell and pooled over the campaign, the ECDF of
    the RTTs that got a reply per phase, and the window bound n x window / RTT with the
    unloaded median RTT (:func:`~thruput.stats.window_limited_throughput`).

Groups of a ``design`` product
------------------------------
:func:`thruput.stats.design.design_product`: the factors and the page's layout
(``design``), summaries per cell and per level (``cells/<metric>``, ``shown/<metric>``,
``levels/<metric>/<factor>``), level comparisons (``compare/<factor>``), plateaus along
ordered numeric factors (``plateau/<factor>``), ``failures`` and, for a design over time,
``time/<metric>`` and each series' change points and daily cycle (``changes/<metric>``,
``series/<metric>``, ``series_bins/<metric>``).

Groups of a ``udp_sweep`` product
---------------------------------
``udp_grid``, ``udp_onset``
    :func:`~thruput.stats.udp_grid` and :func:`~thruput.stats.udp_onset`.
``latency_fit``
    :func:`~thruput.stats.latency_fit` of the campaign's main latency scan (the one
    with the most points; histogram runs add single points that are not a scan).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

import json

import numpy as np
import xarray as xr

from ..product_groups import COMPARISON_GROUP_FUNCTIONS, GROUP_FUNCTIONS, PRODUCT_FUNCTIONS
from .compare import compare, metadata_diff
from .defaults import DEFAULTS
from .design import DESIGN_METRICS, compare_designs, design_product
from .latency import latency_fit
from .load import rtt_load
from .plateau import best_cells, plateau, smallest_product
from .summaries import describe, ecdf
from .theory import window_limited_throughput
from .udp import udp_grid, udp_onset

__all__ = ["PRODUCTS", "campaign_product", "catalogue_product", "comparison_product",
           "tcp_sweep_product", "udp_sweep_product", "params_with_defaults",
           "COMPARISON_IGNORED", "GROUP_FUNCTIONS",
           "COMPARISON_GROUP_FUNCTIONS", "PRODUCT_FUNCTIONS"]

#: ``campaign.yaml`` keys a comparison's metadata diff leaves out: they name and date a
#: campaign and so always differ; the set-up is what a reader compares.
COMPARISON_IGNORED = ("name", "title", "description", "dates", "explained")
#: Dimensions pooled into one RTT sample per phase for the campaign-wide RTT.
CAMPAIGN_POOL = ("window", "streams", "repeat", "probe")


def params_with_defaults(params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``params`` (the ``stats`` section of params.yaml) over :data:`~thruput.stats.DEFAULTS`.

    Raises
    ------
    ValueError
        For a key :data:`~thruput.stats.DEFAULTS` does not know (a typo would otherwise
        be ignored silently).
    """
    params = dict(params or {})
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown stats parameters {unknown}; known: {sorted(DEFAULTS)}")
    return {**DEFAULTS, **params}


def _boot(params):
    return {"n_boot": int(params["bootstrap"]), "seed": int(params["seed"]),
            "confidence": float(params["confidence"])}


def _used(ds, **params):
    """``ds`` with the parameters that made it in its attrs (lists as JSON text)."""
    return ds.assign_attrs({k: json.dumps(v) if isinstance(v, (list, tuple)) else v
                            for k, v in params.items()})


def _has_ping(ds):
    return "rtt" in ds and ds.sizes.get("probe", 0) > 0


def tcp_sweep_product(ds: xr.Dataset, params: Mapping[str, Any]) -> dict[str, xr.Dataset]:
    """The groups of a TCP sweep's product (see the module docstring).

    Parameters
    ----------
    ds : xarray.Dataset
        A normalized ``tcp_sweep`` campaign (:func:`thruput.open_campaign`).
    params : dict
        Complete ``stats`` parameters (:func:`params_with_defaults`).

    Returns
    -------
    dict of str to xarray.Dataset
    """
    tput = ds["throughput"]
    boot = _boot(params)
    tol = float(params["plateau_tolerance"])
    groups = {
        "cells": _used(describe(tput, "repeat", percentiles=params["percentiles"]),
                       percentiles=params["percentiles"]),
        "plateau": _used(plateau(tput, dim="window", tolerance=tol, **boot), tolerance=tol, **boot),
        "best_cells": _used(best_cells(tput, n=int(params["best_cells"])), n=int(params["best_cells"])),
        "smallest_product": _used(smallest_product(tput, tolerance=tol), tolerance=tol),
    }
    if _has_ping(ds):                     # a sweep imported without ping logs has no probes
        status = ds.get("rtt_status")
        groups["rtt"] = _used(rtt_load(ds["rtt"], status, **boot), **boot)
        pooled = rtt_load(ds["rtt"], status, pool=CAMPAIGN_POOL, **boot)
        groups["rtt_pooled"] = _used(pooled, pool=list(CAMPAIGN_POOL), **boot)
        replies = ds["rtt"] if status is None else ds["rtt"].where(status == "reply")
        groups["rtt_ecdf"] = ecdf(replies, [d for d in replies.dims if d != "phase"])
        groups["bound"] = _window_bound_grid(groups["cells"], pooled)
    return groups


def _window_bound_grid(cells, pooled):
    """n x window / RTT on the cells' grid with the unloaded median RTT (bit/s)."""
    rtt_ms = float(pooled["median"].sel(phase="unloaded"))
    window, streams = xr.broadcast(cells["window"], cells["streams"])
    bound = xr.DataArray(
        window_limited_throughput(window.values.astype(float), rtt_ms / 1000, streams.values.astype(float))
        if np.isfinite(rtt_ms) else np.full(window.shape, np.nan),
        dims=window.dims, coords={"window": cells["window"], "streams": cells["streams"]},
        attrs={"units": "bit/s", "long_name": "window bound n x window / RTT"})
    return xr.Dataset({"bound": bound, "rtt": xr.DataArray(rtt_ms, attrs={
        "units": "ms", "long_name": "unloaded median ping RTT used for the bound"})})


def udp_sweep_product(ds: xr.Dataset, params: Mapping[str, Any]) -> dict[str, xr.Dataset]:
    """The groups of a UDPmon campaign's product (see the module docstring).

    Parameters
    ----------
    ds : xarray.Dataset
        A normalized ``udp_sweep`` campaign.
    params : dict
        Complete ``stats`` parameters (:func:`params_with_defaults`).

    Returns
    -------
    dict of str to xarray.Dataset
    """
    groups = {}
    if "row" in ds.dims:
        grid = udp_grid(ds)
        threshold = float(params["udp_loss_threshold"])
        groups["udp_grid"] = grid
        groups["udp_onset"] = _used(udp_onset(grid, threshold=threshold), threshold=threshold)
        groups["udp_peak"] = xr.Dataset({"peak_rate": xr.DataArray(
            float(ds["recv_rate"].max()), attrs={"units": "bit/s", "long_name": "highest receive rate of any row"})})
    if "point" in ds.dims:
        main = _main_scan(ds)
        scan = ds[["scan_size", "scan_latency_avg"]].where(ds["scan_file"] == main, drop=True)
        groups["latency_fit"] = latency_fit(scan, size="scan_size", latency="scan_latency_avg").assign_attrs(
            scan_file=str(main))
    return groups


def _main_scan(ds):
    """The latency scan with the most points (histogram runs add single points)."""
    files, counts = np.unique(ds["scan_file"].values, return_counts=True)
    return files[np.argmax(counts)]


def design_sweep_product(ds, params, monitor=None):
    """The groups of a design campaign's product: :func:`thruput.stats.design.design_product`
    (nested groups such as ``compare/cc``; see its docstring); ``monitor`` (params.yaml's
    section) sets a time design's change points."""
    return design_product(ds, params, monitor)


#: Campaign kind (``attrs["campaign_kind"]``) -> function ``(ds, params) -> {group: Dataset}``.
PRODUCTS = {"tcp_sweep": tcp_sweep_product, "udp_sweep": udp_sweep_product, "design": design_sweep_product}


def campaign_product(ds: xr.Dataset, params: Mapping[str, Any] | None = None,
                     monitor: Mapping[str, Any] | None = None) -> xr.DataTree:
    """The complete statistics product of one normalized campaign.

    Parameters
    ----------
    ds : xarray.Dataset
        A normalized campaign; ``attrs["campaign_kind"]`` chooses the entry of
        :data:`PRODUCTS`.
    params : dict, optional
        The ``stats`` section of ``params.yaml``; missing keys take
        :data:`~thruput.stats.DEFAULTS`.
    monitor : dict, optional
        The ``monitor`` section of ``params.yaml``: the change-point settings of a design
        over time (the monitor's own; other kinds ignore it).

    Returns
    -------
    xarray.DataTree
        One group per table; the root's attrs hold ``campaign``, ``campaign_kind``,
        ``title``, ``metadata`` (the campaign's ``campaign.yaml`` as JSON) and ``params``
        (JSON of the complete parameters used).

    Raises
    ------
    ValueError
        For a campaign kind without a product, or an unknown parameter.
    """
    params = params_with_defaults(params)
    kind = ds.attrs.get("campaign_kind")
    if kind not in PRODUCTS:
        raise ValueError(f"campaign {ds.attrs.get('campaign')!r}: no statistics product for kind "
                         f"{kind!r}; known: {sorted(PRODUCTS)}")
    groups = design_sweep_product(ds, params, monitor) if kind == "design" else PRODUCTS[kind](ds, params)
    root = xr.Dataset(attrs={"campaign": ds.attrs.get("campaign", ""), "campaign_kind": kind,
                             "title": ds.attrs.get("title", ds.attrs.get("campaign", "")),
                             "metadata": _metadata_text(ds), "params": json.dumps(params, sort_keys=True)})
    return xr.DataTree.from_dict({"/": root, **{f"/{k}": v for k, v in groups.items()}})


def _metadata_text(ds):
    raw = ds.attrs.get("metadata", "{}")
    return raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True, default=str)


def catalogue_product(products: Mapping[str, xr.DataTree]) -> xr.Dataset:
    """The catalogue: one row per campaign with its headline numbers.

    Parameters
    ----------
    products : dict of str to xarray.DataTree
        Campaign name (as the pipeline lists it, which names its page) -> its product
        (:func:`campaign_product`), in the catalogue's order.

    Returns
    -------
    xarray.Dataset
        On ``campaign``: ``kind``, ``source``, ``destination`` (empty where
        campaign.yaml does not say; a monitor's first path's), ``paths`` (a monitor's
        path names, comma-separated; empty for a sweep), ``start`` (text, as in
        ``campaign.yaml``; a monitor's first run's day if it gives none), ``end`` (text:
        the day of a monitor's last run, empty for a sweep),
        ``best_median`` (bit/s: the best cell's median over repeats for a TCP sweep, the
        highest receive rate for a UDPmon campaign, the highest median TCP throughput of
        a path, direction and socket buffer over a whole monitor campaign),
        ``plateau_onset`` (byte, with one stream; NaN without single-stream runs) with
        ``plateau_onset_low``/``_high`` (its bootstrap interval), and
        ``rtt_unloaded``/``rtt_loaded`` (ms, median over the whole campaign).
    """
    names = list(products)
    rows = [_catalogue_row(p) for p in products.values()]
    columns = {k: [r.get(k, np.nan) for r in rows] for k in _CATALOGUE_UNITS}
    data = {k: xr.DataArray(np.asarray(v, dtype=object if _CATALOGUE_UNITS[k] is None else float),
                            dims="campaign", attrs={"units": _CATALOGUE_UNITS[k]} if _CATALOGUE_UNITS[k] else {})
            for k, v in columns.items()}
    for k in ("kind", "source", "destination", "paths", "start", "end"):
        data[k] = data[k].astype(str)
    return xr.Dataset(data, coords={"campaign": np.asarray(names, dtype=str)})


#: Catalogue columns and their units (None: text).
_CATALOGUE_UNITS = {"kind": None, "source": None, "destination": None, "paths": None, "start": None, "end": None,
                    "best_median": "bit/s", "plateau_onset": "byte", "plateau_onset_low": "byte",
                    "plateau_onset_high": "byte", "rtt_unloaded": "ms", "rtt_loaded": "ms"}


def _catalogue_row(product):
    meta = json.loads(product.attrs.get("metadata") or "{}")
    path = meta.get("path") or (meta.get("paths") or [{}])[0]   # a monitor: its first path
    start = (meta.get("dates", {}) or {}).get("start")
    row = {"kind": product.attrs["campaign_kind"],
           "source": str(path.get("source") or ""), "destination": str(path.get("destination") or ""),
           "paths": ", ".join(str(p.get("name")) for p in meta.get("paths") or []),
           "start": "" if start is None else str(start)[:10], "end": ""}
    if "summary_tcp" in product:          # a monitor campaign
        medians = product["summary_tcp"]["median"].values
        row["best_median"] = float(np.nanmax(medians)) if np.isfinite(medians).any() else np.nan
        first, last = (str(product["campaign"].attrs.get(k, ""))[:10] for k in ("start", "end"))
        row.update(start=row["start"] or first, end=last)       # (campaign.yaml's start first)
    if product.attrs["campaign_kind"] == "design":   # (its cells are per metric: cells/throughput)
        if "cells" in product.children and "throughput" in product["cells"].children:
            medians = product["cells/throughput"]["median"].values
            row["best_median"] = float(np.nanmax(medians)) if np.isfinite(medians).any() else np.nan
        return row
    if "cells" in product:
        row["best_median"] = float(product["cells"]["median"].max())
        p = product["plateau"].to_dataset()
        if 1 in p["streams"]:
            one = p.sel(streams=1)
            row.update(plateau_onset=float(one["onset"]), plateau_onset_low=float(one["onset_low"]),
                       plateau_onset_high=float(one["onset_high"]))
    if "rtt_pooled" in product:
        med = product["rtt_pooled"]["median"]
        row.update(rtt_unloaded=float(med.sel(phase="unloaded")), rtt_loaded=float(med.sel(phase="loaded")))
    if "udp_peak" in product:
        row["best_median"] = float(product["udp_peak"]["peak_rate"])
    return row


def comparison_product(a: xr.Dataset, b: xr.Dataset, params: Mapping[str, Any] | None = None,
                       name: str | None = None, by: Sequence[str] | None = None,
                       var: str | None = None) -> xr.DataTree:
    """Two TCP sweeps compared cell by cell, or two designs per cell of the factors both
    have, and their set-ups.

    Parameters
    ----------
    a, b : xarray.Dataset
        Normalized ``tcp_sweep`` campaigns, or two ``design`` campaigns; differences are
        ``b - a``, ratios ``b / a``.
    params : dict, optional
        The ``stats`` section of ``params.yaml`` (bootstrap size, confidence, seed).
    name : str, optional
        The comparison's name in ``params.yaml``.
    by : sequence of str, optional
        Designs only: the factors to compare per cell of (default every factor both
        declare; :func:`~thruput.stats.design.compare_designs`).
    var : str, optional
        Designs only: the quantity compared (default the first of
        :data:`~thruput.stats.design.DESIGN_METRICS` both campaigns measured).

    Returns
    -------
    xarray.DataTree
        ``cells``: :func:`~thruput.stats.compare` of the throughputs, on the cells both
        measured (designs: :func:`~thruput.stats.design.compare_designs` of ``var``, on the
        levels of ``by`` both have); ``metadata``: :func:`~thruput.stats.metadata_diff` of
        the two ``campaign.yaml`` (without :data:`COMPARISON_IGNORED`), one ``entry`` per
        differing key with ``key``, ``a``, ``b`` (values as text, empty where absent) and
        ``change``. Root attrs: ``name``, ``a``, ``b``, ``repeats_a``, ``repeats_b``
        (sweeps) or ``kind`` ("design"), ``by`` (JSON) and ``var`` (designs), and ``params``.
    """
    params = params_with_defaults(params)
    names = [x.attrs.get("campaign", "") for x in (a, b)]
    kinds = [ds.attrs.get("campaign_kind") for ds in (a, b)]
    boot = _boot(params)
    if "design" in kinds:
        other = [(label, k) for label, k in zip(names, kinds) if k != "design"]
        if other:
            raise ValueError(f"comparison {name!r}: {other[0][0]} is a {other[0][1]} campaign; a design is "
                             "compared only with a design")
        var = _shared_metric(a, b, name, var)
        cells = compare_designs(a, b, var, by, **boot)
        extra = {"kind": "design", "by": cells.attrs["by"], "var": var}
    else:
        if by is not None or var is not None:
            raise ValueError(f"comparison {name!r}: `by` and `var` are for designs; TCP sweeps are compared "
                             "per (window, streams) cell")
        for ds, label in zip((a, b), names):
            if ds.attrs.get("campaign_kind") != "tcp_sweep":
                raise ValueError(f"comparison {name!r}: {label} is a {ds.attrs.get('campaign_kind')} "
                                 "campaign; only TCP sweeps are compared cell by cell")
        cells = _used(compare(a["throughput"], b["throughput"], **boot), **boot)
        extra = {"repeats_a": int(a.sizes.get("repeat", 0)), "repeats_b": int(b.sizes.get("repeat", 0))}
    rows = metadata_diff(a, b, ignore=COMPARISON_IGNORED)
    entry = {k: xr.DataArray(np.asarray([_text(r[k]) for r in rows], dtype=str), dims="entry")
             for k in ("key", "a", "b", "change")}
    meta = xr.Dataset(entry, attrs={"ignored": json.dumps(list(COMPARISON_IGNORED))})
    root = xr.Dataset(attrs={"name": name or f"{names[0]}-vs-{names[1]}", "a": names[0], "b": names[1],
                             **extra,
                             "params": json.dumps(params, sort_keys=True)})
    return xr.DataTree.from_dict({"/": root, "/cells": cells, "/metadata": meta})


def _shared_metric(a: xr.Dataset, b: xr.Dataset, name: str | None, var: str | None = None) -> str:
    """``var``, or the first of :data:`~thruput.stats.design.DESIGN_METRICS` both designs
    measured; an error when they did not both measure it."""
    def measured(ds):
        return {m for m in DESIGN_METRICS if m in ds.variables and np.isfinite(np.asarray(ds[m].values, float)).any()}
    shared = [m for m in DESIGN_METRICS if m in measured(a) & measured(b)]
    if var is not None:
        if var not in shared:
            raise ValueError(f"comparison {name!r}: var {var!r} is not measured by both {a.attrs.get('campaign')} "
                             f"and {b.attrs.get('campaign')} (both measured: {', '.join(shared) or 'nothing'})")
        return var
    if not shared:
        raise ValueError(f"comparison {name!r}: {a.attrs.get('campaign')} and {b.attrs.get('campaign')} measured "
                         f"no quantity in common (of {', '.join(DESIGN_METRICS)})")
    return shared[0]


def _text(value):
    """A metadata value as the comparison table shows it ("" for a missing one)."""
    return "" if value is None else str(value)
