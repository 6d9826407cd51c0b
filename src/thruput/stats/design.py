"""Statistics of a designed campaign along any of its factors (``campaign_kind: design``).

A design campaign (docs/design.md, "Designs") holds its runs on one ``run`` dimension with
one coordinate per declared factor (``cc``, ``socket_buffer``, ``operator``...), and its
factors in ``attrs["factors"]`` (JSON: ``name``, ``levels``, ``units``, ``ordered``).
Every function here takes factor names, never assumes one particular shape:

- :func:`design_summary`: median, IQR, percentiles, mean, ``n`` and ``n_failed`` per cell
  of any subset of factors, every declared combination present (empty ones ``n = 0``);
- :func:`design_plateau`: :func:`~thruput.stats.plateau` along an ordered numeric factor
  per cell of others;
- :func:`level_comparison`: each level of a factor over its reference level (ratio of
  medians with a bootstrap interval, :func:`~thruput.stats.compare`) per cell of others;
- :func:`compare_designs`: the same between two campaigns whose factors overlap;
- :func:`design_time_bins`: a time design's runs summarised per time bin and level;
- :func:`design_layout`: which factors a page draws on x, colour and facets, and which
  it pools;
- :func:`design_product`: every table of a design page, computed once by the pipeline.

References
----------
.. [1] B. Efron, R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall,
   1993, ch. 16 (two-sample problems).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from ._util import percentile_name, units_of
from .compare import compare
from .defaults import CONFIDENCE, DEFAULTS, N_BOOT, PLATEAU_TOLERANCE, SEED
from .design_series import MAX_SERIES, change_settings, series_cells, series_changes, series_factors
from .grouped import grouped_summary
from .periodic import DAY_S, MIN_CYCLES, MIN_FOR_PERIOD
from .plateau import plateau

__all__ = ["factors_of", "design_grid", "design_summary", "design_plateau", "level_comparison",
           "compare_designs", "design_time_bins", "design_series_runs", "time_bin_width", "design_layout",
           "design_product",
           "DESIGN_METRICS", "MAX_COLOR_LEVELS", "MAX_FACET_LEVELS", "MAX_COMPARED_LEVELS",
           "MAX_CELL_FACTORS", "TIME_BINS", "level_key", "factor_named", "level_codes", "level_text"]

#: Variables a design page summarises, in the order it shows them, when the campaign has
#: any finite value of them: whole-run throughput (bit/s), the median ping RTT of a run
#: (ms), the UDP loss fraction (1) and jitter (ms).
DESIGN_METRICS = ("throughput", "rtt_median", "loss_fraction", "jitter")
#: Most levels a factor drawn as colour may have (a legend longer than this is not read).
MAX_COLOR_LEVELS = 8
#: Most levels of a factor drawn as a row or column of small multiples.
MAX_FACET_LEVELS = 6
#: Most levels of a factor compared level by level (beyond, the per-level table stands).
MAX_COMPARED_LEVELS = 8
#: Most other factors a comparison or a plateau is given per cell of (the rest are pooled).
MAX_CELL_FACTORS = 2
#: About how many time bins a time design's series is summarised into.
TIME_BINS = 60
#: The outcome of a run that completed (``outcome`` coordinate or variable).
OK = "ok"
#: Percentiles of a design summary besides the median and IQR (percent).
DESIGN_PERCENTILES = (10, 90)


def _flag(value: Any) -> bool:
    """A boolean attribute as netCDF keeps it (bool, 0/1 or text)."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value) if value is not None else False


def _numeric(levels: Sequence[Any]) -> bool:
    return len(levels) > 0 and all(isinstance(v, (int, float, np.integer, np.floating))
                                   and not isinstance(v, bool) for v in levels)


def factors_of(ds: xr.Dataset) -> list[dict[str, Any]]:
    """The factors of a design campaign, as declared, with their levels.

    Parameters
    ----------
    ds : xarray.Dataset
        A design campaign: ``attrs["factors"]`` (JSON list, or a list of dicts) names
        each factor, and ``ds[name]`` is its coordinate along ``run``.

    Returns
    -------
    list of dict
        Per factor with a coordinate on ``run``, in declared order: ``name``, ``levels``
        (declared ones first, then any level the runs have that was not declared, sorted),
        ``units`` (text, "" for none), ``ordered`` (bool), ``numeric`` (bool: every level
        a number) and ``applied`` (how it was applied, text, "" when not said).
    """
    raw = ds.attrs.get("factors", "[]")
    declared = json.loads(raw) if isinstance(raw, str) else list(raw or [])
    out = []
    for f in declared:
        name = str(f["name"])
        if name not in ds.coords and name not in ds.variables:
            continue
        values = np.asarray(ds[name].values)
        levels = list(f.get("levels") or [])
        numeric_data = values.dtype.kind in "fiub"
        if numeric_data:                   # (levels written as text in a YAML file: "65536")
            levels = [_number(v) for v in levels]
        # (an empty cell is "not applicable", no level: a ping's direction)
        present = pd.unique(values[~pd.isna(values) & (values.astype(str) != "")]) if values.size else []
        known = {level_key(v) for v in levels}
        extra = sorted((v.item() if hasattr(v, "item") else v for v in present if level_key(v) not in known),
                       key=lambda v: (str(type(v)), v))
        levels = levels + extra
        numeric = _numeric(levels)
        if numeric:
            levels = [int(v) if float(v).is_integer() and values.dtype.kind in "iu" else v for v in levels]
        out.append({"name": name, "levels": levels, "units": str(f.get("units") or ""),
                    "ordered": _flag(f.get("ordered", False)), "numeric": numeric,
                    "applied": str(f.get("applied") or f.get("how") or "")})
    return out


def _number(value: Any) -> Any:
    """``value`` as a number when it is one written as text, else unchanged."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def level_key(value: Any) -> Any:
    """A level as a hashable key that matches equal numbers of other types (1 == 1.0)."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value)
    return str(value)


def factor_named(ds: xr.Dataset, name: str) -> dict[str, Any]:
    """The factor ``name`` of the design ``ds`` (:func:`factors_of`); a ValueError naming
    the known ones if it has none of that name."""
    for f in factors_of(ds):
        if f["name"] == name:
            return f
    known = [f["name"] for f in factors_of(ds)]
    raise ValueError(f"campaign {ds.attrs.get('campaign', '')!r} has no factor {name!r}; its factors: {known}")


def _ok(ds: xr.Dataset) -> np.ndarray:
    """True per run that completed (every run when the campaign has no ``outcome``)."""
    if "outcome" not in ds.variables:
        return np.ones(ds.sizes["run"], dtype=bool)
    return np.asarray(ds["outcome"].values).astype(str) == OK


def level_codes(ds: xr.Dataset, factors: Sequence[dict[str, Any]]) -> np.ndarray:
    """Per run and factor the index of its level (-1: no level), shape (run, factor)."""
    codes = np.full((ds.sizes["run"], len(factors)), -1, dtype=np.int64)
    for j, f in enumerate(factors):
        values = np.asarray(ds[f["name"]].values)
        if f["numeric"]:
            with np.errstate(invalid="ignore"):
                keys = pd.to_numeric(pd.Series(values.ravel()), errors="coerce").to_numpy(float)
            codes[:, j] = pd.Index(np.asarray(f["levels"], dtype=float)).get_indexer(keys)
        else:
            keys = np.where(pd.isna(values), "\0", values.astype(str))   # (no level is a NUL)
            codes[:, j] = pd.Index([str(v) for v in f["levels"]]).get_indexer(keys)
    return codes


def _coords(factors: Sequence[dict[str, Any]]) -> dict[str, xr.DataArray]:
    return {f["name"]: xr.DataArray(np.asarray(f["levels"], dtype=float if f["numeric"] else str),
                                    dims=f["name"], attrs={"units": f["units"] or "1",
                                                           "ordered": int(f["ordered"])})
            for f in factors}


def design_grid(ds: xr.Dataset, var: str = "throughput", by: Sequence[str] | None = None,
                sample_dim: str = "sample") -> xr.DataArray:
    """``ds[var]`` of the completed runs as a grid: one dimension per factor of ``by``
    (declared levels) and one of the runs of each cell.

    Parameters
    ----------
    ds : xarray.Dataset
        A design campaign (:func:`factors_of`).
    var : str, default "throughput"
        A variable on ``run``.
    by : sequence of str, optional
        Factor names (default: every factor); runs are pooled over the others.
    sample_dim : str, default "sample"
        Name of the runs-of-a-cell dimension (padded with NaN).

    Returns
    -------
    xarray.DataArray
        Dims ``(*by, sample_dim)``, units of ``ds[var]``; only runs whose ``outcome`` is
        ``ok`` and whose value is finite, in run order within a cell.
    """
    factors = [factor_named(ds, b) for b in by] if by is not None else factors_of(ds)
    values = np.asarray(ds[var].values, dtype=float)
    codes = level_codes(ds, factors)
    keep = _ok(ds) & np.isfinite(values) & (codes >= 0).all(axis=1)
    shape = tuple(len(f["levels"]) for f in factors)
    flat = np.ravel_multi_index(codes[keep].T, shape) if factors else np.zeros(int(keep.sum()), dtype=np.int64)
    order = np.argsort(flat, kind="stable")
    flat_sorted = flat[order]
    first = np.searchsorted(flat_sorted, flat_sorted, side="left")
    rank = np.arange(flat_sorted.size) - first
    width = int(rank.max()) + 1 if rank.size else 0
    ncell = int(np.prod(shape, dtype=int))
    grid = np.full((ncell, width), np.nan)
    grid[flat_sorted, rank] = values[keep][order]
    da = xr.DataArray(grid.reshape(*shape, width), dims=[f["name"] for f in factors] + [sample_dim],
                      coords=_coords(factors), name=var, attrs=dict(ds[var].attrs))
    da.attrs.setdefault("units", units_of(ds[var]))
    return da


def design_summary(ds: xr.Dataset, var: str = "throughput", by: Sequence[str] | None = None,
                   percentiles: Sequence[float] = DESIGN_PERCENTILES) -> xr.Dataset:
    """Summary of ``ds[var]`` per cell of the factors ``by``, pooled over the others.

    Parameters
    ----------
    ds : xarray.Dataset
        A design campaign (:func:`factors_of`).
    var : str, default "throughput"
        A variable on ``run`` (throughput bit/s, ``rtt_median`` ms ...).
    by : sequence of str, optional
        Factor names; default every factor; ``[]`` pools the whole campaign.
    percentiles : sequence of float, default (10, 90)
        Reported as ``p<q>`` besides the median and IQR (percent).

    Returns
    -------
    xarray.Dataset
        One dimension per factor of ``by``, every combination of its declared levels:
        ``n`` (completed runs with a value, count), ``n_failed`` (runs whose outcome is not
        ``ok``, count), ``mean``, ``std``, ``min``, ``max``, ``median``, ``iqr`` and
        ``p<q>`` (units of ``ds[var]``); a cell without runs has ``n = 0`` and NaN.

    Notes
    -----
    Percentiles are NumPy's ``linear`` (Hyndman & Fan 7), by
    :func:`~thruput.stats.grouped_summary`. A failed run's value (a cut run keeps what
    it measured) is left out of the statistics and counted in ``n_failed``; a run
    without a level of a factor of ``by`` belongs to no cell.
    """
    factors = [factor_named(ds, b) for b in by] if by is not None else factors_of(ds)
    names = [f["name"] for f in factors]
    values = ds[var].where(xr.DataArray(_ok(ds), dims="run"))
    codes = level_codes(ds, factors)
    shape = tuple(len(f["levels"]) for f in factors)
    ncell = int(np.prod(shape, dtype=int))
    cell = (np.ravel_multi_index(np.where(codes >= 0, codes, 0).T, shape) if factors
            else np.zeros(ds.sizes["run"], dtype=np.int64)).astype(float)
    cell[(codes < 0).any(axis=1)] = np.nan
    qs = sorted(set(float(q) for q in percentiles))
    if ds.sizes["run"] and np.isfinite(cell).any():
        s = grouped_summary(values.drop_vars([c for c in values.coords if c != "run"]), {"_cell": cell},
                            percentiles=qs)
        s = s.reindex(_cell=np.arange(ncell, dtype=float))
        s["n"] = s["n"].fillna(0).astype(int)
        flat = {k: s[k].values for k in s.data_vars}
        attrs = {k: s[k].attrs for k in s.data_vars}
    else:
        keys = ["n", "mean", "std", "min", "max", "median", "iqr", *[percentile_name(q) for q in qs]]
        flat = {k: np.zeros(ncell, dtype=int) if k == "n" else np.full(ncell, np.nan) for k in keys}
        attrs = {k: {"units": "count" if k == "n" else units_of(ds[var])} for k in keys}
    failed = np.bincount(cell[~_ok(ds) & np.isfinite(cell)].astype(np.int64), minlength=ncell)[:ncell]
    flat["n_failed"] = failed
    attrs["n_failed"] = {"units": "count", "long_name": "runs that did not complete (outcome not ok)"}
    data = {k: xr.DataArray(np.asarray(v).reshape(shape), dims=names, attrs=attrs[k]) for k, v in flat.items()}
    return xr.Dataset(data, coords=_coords(factors), attrs={
        "var": var, "by": json.dumps(names), "quantile_method": "linear (Hyndman & Fan 7)"})


def design_plateau(ds: xr.Dataset, along: str, var: str = "throughput", by: Sequence[str] | None = None,
                   tolerance: float = PLATEAU_TOLERANCE, confidence: float = CONFIDENCE,
                   n_boot: int = N_BOOT, seed: int = SEED) -> xr.Dataset:
    """:func:`~thruput.stats.plateau` of ``ds[var]`` along the ordered numeric factor
    ``along``, per cell of the factors ``by``.

    Parameters
    ----------
    ds : xarray.Dataset
        A design campaign.
    along : str
        An ordered factor whose levels are numbers (a window, socket buffer or streams
        count).
    var : str, default "throughput"
        The quantity whose plateau is sought (bit/s).
    by : sequence of str, optional
        Factors to give the plateau per level of (default every other factor); runs are
        pooled over factors in neither.
    tolerance, confidence, n_boot, seed
        As :func:`~thruput.stats.plateau`.

    Returns
    -------
    xarray.Dataset
        :func:`~thruput.stats.plateau`'s variables on the dimensions ``by``; attrs
        ``along``, ``by`` (JSON) and ``pooled`` (JSON: the factors pooled).

    Raises
    ------
    ValueError
        When ``along`` is not ordered or has a level that is not a number.
    """
    f = factor_named(ds, along)
    if not (f["ordered"] and f["numeric"]):
        raise ValueError(f"factor {along!r} is not ordered and numeric: no plateau along it")
    others = [g["name"] for g in factors_of(ds) if g["name"] != along]
    by = others if by is None else [b for b in by if b != along]
    grid = design_grid(ds, var, [along, *by], sample_dim="sample")
    out = plateau(grid, dim=along, repeat_dim="sample", tolerance=tolerance, confidence=confidence,
                  n_boot=n_boot, seed=seed)
    return out.assign_attrs(along=along, by=json.dumps(list(by)),
                            pooled=json.dumps([o for o in others if o not in by]), var=var)


def level_comparison(ds: xr.Dataset, factor: str, var: str = "throughput",
                     by: Sequence[str] | None = None, reference: Any = None,
                     confidence: float = CONFIDENCE, n_boot: int = N_BOOT, seed: int = SEED) -> xr.Dataset:
    """Each level of ``factor`` against its reference level, per cell of the factors ``by``
    ("bbr over cubic at each window").

    Parameters
    ----------
    ds : xarray.Dataset
        A design campaign.
    factor : str
        The factor whose levels are compared.
    var : str, default "throughput"
        The quantity compared (its units carry over).
    by : sequence of str, optional
        Factors to compare per level of (default every other factor); runs are pooled
        over factors in neither.
    reference : optional
        The level the others are divided by; default the first declared level.
    confidence, n_boot, seed
        The bootstrap (coverage, resamples, seed); every level is compared with the same
        seed, so each cell's resamples depend only on the seed and the cell.

    Returns
    -------
    xarray.Dataset
        On ``factor`` (its levels but the reference) and ``by``:
        :func:`~thruput.stats.compare` of the reference (``a``) with the level (``b``):
        ``ratio`` (``median_b / median_a``, 1) with ``ratio_low`` and ``ratio_high``,
        ``median_a``, ``median_b``, ``difference`` with its interval, ``n_a``, ``n_b``,
        ``hodges_lehmann``, ``p_value`` .... Attrs ``factor``, ``reference`` (as text),
        ``by`` and ``pooled`` (JSON).

    Notes
    -----
    The ratio's interval is a two-sample percentile bootstrap of the ratio of medians
    [1]_: a cell with one run per level has nothing to resample, and its interval
    collapses on the ratio. No correction for the many cells is applied.
    """
    f = factor_named(ds, factor)
    if len(f["levels"]) < 2:
        raise ValueError(f"factor {factor!r} has {len(f['levels'])} level: nothing to compare")
    if reference is None:
        reference = f["levels"][0]
    if level_key(reference) not in {level_key(v) for v in f["levels"]}:
        raise ValueError(f"factor {factor!r} has no level {reference!r}; its levels: {f['levels']}")
    others = [g["name"] for g in factors_of(ds) if g["name"] != factor]
    by = others if by is None else [b for b in by if b != factor]
    grid = design_grid(ds, var, [factor, *by])
    ref_index = [level_key(v) for v in f["levels"]].index(level_key(reference))
    a = grid.isel({factor: ref_index}, drop=True)
    parts = []
    for i in range(len(f["levels"])):
        if i != ref_index:
            b = grid.isel({factor: i}, drop=True)
            parts.append(compare(a, b, dim="sample", n_boot=n_boot, confidence=confidence, seed=seed))
    out = xr.concat(parts, dim=factor, combine_attrs="override")
    out = out.assign_coords({factor: grid[factor].drop_isel({factor: ref_index})})
    return out.transpose(factor, *by).assign_attrs(
        factor=factor, reference=level_text(reference), var=var, by=json.dumps(list(by)),
        pooled=json.dumps([o for o in others if o not in by]))


def level_text(value: Any) -> str:
    """A level as text: a whole float without its ``.0`` (``65536.0`` -> ``65536``)."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def compare_designs(a: xr.Dataset, b: xr.Dataset, var: str = "throughput", by: Sequence[str] | None = None,
                    confidence: float = CONFIDENCE, n_boot: int = N_BOOT, seed: int = SEED) -> xr.Dataset:
    """Campaign ``b`` over campaign ``a`` per cell of factors both declare.

    Parameters
    ----------
    a, b : xarray.Dataset
        Two design campaigns (the reference first).
    var : str, default "throughput"
        The quantity compared.
    by : sequence of str, optional
        Factors both have (default: every factor of ``a`` that ``b`` declares too); each
        campaign's runs are pooled over its other factors.
    confidence, n_boot, seed
        The bootstrap, as :func:`level_comparison`.

    Returns
    -------
    xarray.Dataset
        :func:`~thruput.stats.compare` (``ratio`` = ``median_b / median_a`` with its
        interval ...) on the levels of ``by`` both campaigns have. Attrs ``a``, ``b``
        (campaign names) and ``by`` (JSON).

    Raises
    ------
    ValueError
        When a factor of ``by`` is not a factor of both, or two share none.
    """
    names_b = {f["name"] for f in factors_of(b)}
    if by is None:
        by = [f["name"] for f in factors_of(a) if f["name"] in names_b]
    missing = [n for n in by if n not in names_b or n not in {f["name"] for f in factors_of(a)}]
    if missing:
        raise ValueError(f"factors {missing} are not factors of both campaigns")
    ga, gb = design_grid(a, var, by), design_grid(b, var, by)
    out = compare(ga, gb, dim="sample", n_boot=n_boot, confidence=confidence, seed=seed)
    return out.assign_attrs(a=str(a.attrs.get("campaign", "a")), b=str(b.attrs.get("campaign", "b")),
                            by=json.dumps(list(by)), var=var)


def design_time_bins(ds: xr.Dataset, var: str = "throughput", by: Sequence[str] = (),
                     bins: int = TIME_BINS, percentiles: Sequence[float] = DESIGN_PERCENTILES) -> xr.Dataset:
    """A time design's ``ds[var]`` summarised per time bin and cell of ``by``.

    Parameters
    ----------
    ds : xarray.Dataset
        A design campaign with a ``time`` coordinate on ``run`` (datetime64, UTC).
    var : str, default "throughput"
        The quantity summarised.
    by : sequence of str, default ()
        Factors to give a series per level of.
    bins : int, default 60
        About how many bins the campaign's span is cut into (whole seconds each).
    percentiles : sequence of float, default (10, 90)

    Returns
    -------
    xarray.Dataset
        :func:`design_summary`'s variables on ``time`` (each bin's start, every bin from
        the first run's to the last's) and ``by``; attrs ``bin_s`` (the bin width, s).
    """
    times = np.asarray(ds["time"].values).astype("datetime64[ns]")
    finite = ~np.isnat(times)
    start, bin_s, nbins = time_bin_width(times, bins)
    index = np.where(finite, (times - start) // np.timedelta64(bin_s, "s"), -1).astype(np.int64)
    edges = start + np.arange(nbins) * np.timedelta64(bin_s, "s")
    binned = {"name": "_bin", "levels": list(range(nbins)), "units": "1", "ordered": True}
    labelled = ds.assign_coords(_bin=("run", np.where(index >= 0, index, np.nan)))
    labelled.attrs = {**ds.attrs, "factors": json.dumps([*json.loads(_factors_text(ds)), binned])}
    s = design_summary(labelled, var, ["_bin", *by], percentiles)
    s = s.rename({"_bin": "time"}).assign_coords(time=edges)
    return s.assign_attrs(bin_s=bin_s, by=json.dumps(list(by)))


def _factors_text(ds: xr.Dataset) -> str:
    raw = ds.attrs.get("factors", "[]")
    return raw if isinstance(raw, str) else json.dumps(list(raw))


def design_layout(factors: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Which factors a design page draws where: x, colour, facet column and row, and which
    it pools or holds fixed.

    Parameters
    ----------
    factors : sequence of dict
        :func:`factors_of`.

    Returns
    -------
    dict
        ``x``, ``color``, ``column``, ``row`` (a factor name or None), ``pooled`` (names,
        the factors no axis shows: summaries pool their runs) and ``fixed`` (factors of
        one level).

    Notes
    -----
    x: the ordered numeric factor with the most levels, else the factor with the most
    levels. Colour: of the rest, the unordered factor with the most levels up to
    :data:`MAX_COLOR_LEVELS`, else such an ordered one. Column, then row: the factors with
    the most levels up to :data:`MAX_FACET_LEVELS`. A factor beyond those limits is pooled:
    a page never draws a legend of 57 entries.
    """
    varied = [f for f in factors if len(f["levels"]) > 1]
    fixed = [f["name"] for f in factors if len(f["levels"]) <= 1]
    layout: dict[str, Any] = {"x": None, "color": None, "column": None, "row": None}
    rest = list(varied)

    def take(candidates):
        if not candidates:
            return None
        best = max(candidates, key=lambda f: len(f["levels"]))     # (the first of equals)
        rest.remove(best)
        return best["name"]

    layout["x"] = take([f for f in rest if f["ordered"] and f["numeric"]]) or take(rest)
    small = [f for f in rest if len(f["levels"]) <= MAX_COLOR_LEVELS]
    layout["color"] = take([f for f in small if not f["ordered"]]) or take(small)
    layout["column"] = take([f for f in rest if len(f["levels"]) <= MAX_FACET_LEVELS])
    layout["row"] = take([f for f in rest if len(f["levels"]) <= MAX_FACET_LEVELS])
    layout["pooled"] = [f["name"] for f in rest]
    layout["fixed"] = fixed
    return layout


def _priority(layout: Mapping[str, Any]) -> list[str]:
    """Factor names in the order a page shows them (x, colour, column, row, pooled)."""
    return [layout[k] for k in ("x", "color", "column", "row") if layout[k]] + list(layout["pooled"])


def _cells_of(layout: Mapping[str, Any], factors: Sequence[Mapping[str, Any]], skip: str,
              among: Sequence[str] | None = None) -> list[str]:
    """The factors a comparison or plateau along ``skip`` is given per cell of: the first
    other factor the page shows (of ``among``, default all), and the next if it has at most
    :data:`MAX_FACET_LEVELS` levels (a chart's columns); runs are pooled over the rest."""
    size = {f["name"]: len(f["levels"]) for f in factors}
    names = [n for n in _priority(layout) if n != skip and (among is None or n in among)]
    out = names[:1]
    out += [n for n in names[1:] if size[n] <= MAX_FACET_LEVELS][:MAX_CELL_FACTORS - 1]
    return out


def _first_measured(ds: xr.Dataset, factor: Mapping[str, Any], var: str) -> Any:
    """The first declared level of ``factor`` with a completed run that has a ``var`` (a
    ``test`` factor's ``ping`` has no throughput to divide by); the first level if none has."""
    n = design_summary(ds, var, [factor["name"]], percentiles=())["n"].values
    measured = np.flatnonzero(n > 0)
    return factor["levels"][int(measured[0]) if measured.size else 0]


def _applicable(ds: xr.Dataset, factors: Sequence[dict[str, Any]], var: str) -> list[dict[str, Any]]:
    """The factors that apply to ``var``: those of which some completed run with a finite
    ``var`` has a level (a ping's ``direction`` is empty: no RTT is given per direction).
    Every factor when no completed run has a ``var``."""
    has = _ok(ds) & np.isfinite(np.asarray(ds[var].values, dtype=float))
    if not has.any():
        return list(factors)
    codes = level_codes(ds, factors)
    return [f for j, f in enumerate(factors) if (codes[has, j] >= 0).any()]


def _nested_in(ds: xr.Dataset, outer: str, inner: str, var: str) -> bool:
    """Whether factor ``inner`` is nested in ``outer``: each of its levels has completed runs
    (with a ``var``) of one level of ``outer`` only, while two levels of ``outer`` have runs
    (a client network measured at one server site)."""
    n = design_summary(ds, var, [outer, inner], percentiles=())["n"].values > 0
    return bool(n.any(axis=1).sum() >= 2 and (n.sum(axis=0) <= 1).all())


def _compared(ds: xr.Dataset, f: Mapping[str, Any], var: str, layout: Mapping[str, Any],
              factors: Sequence[dict[str, Any]], applies: Sequence[str], boot: Mapping[str, Any]) -> xr.Dataset:
    """:func:`level_comparison` of ``f`` on ``var`` as a page gives it: over its first level
    with a value, per cell of the factors :func:`_cells_of` picks among those that apply to
    ``var``, pooling a factor nested in ``f`` (no cell of it holds two levels of ``f``) or
    in another such factor (its cells would be those of the coarser one, mostly empty).
    Attrs ``nested`` (JSON: each pooled nested factor -> the factor it is nested in) and
    ``pooled`` (the factors that apply and are not compared per cell of)."""
    others = [n for n in applies if n != f["name"]]
    nested = {n: f["name"] for n in others if _nested_in(ds, f["name"], n, var)}
    size = {g["name"]: len(g["levels"]) for g in factors}
    for n in others:
        outer = [o for o in others if o != n and o not in nested and size[o] < size[n] and _nested_in(ds, o, n, var)]
        if n not in nested and outer:
            nested[n] = outer[0]
    by = _cells_of(layout, factors, f["name"], [n for n in others if n not in nested])
    out = level_comparison(ds, f["name"], var, by=by, reference=_first_measured(ds, f, var), **boot)
    return out.assign_attrs(nested=json.dumps(nested), pooled=json.dumps(
        [n for n in json.loads(out.attrs["pooled"]) if n in applies]))


def _own_runs_metrics(ds: xr.Dataset, metrics: Sequence[str]) -> list[str]:
    """The metrics after the first that completed runs without a value of the first give
    (a ping's RTT beside iperf3's throughput): their levels are compared too."""
    ok = _ok(ds)
    first = np.isfinite(np.asarray(ds[metrics[0]].values, dtype=float))
    return [m for m in metrics[1:] if (ok & ~first & np.isfinite(np.asarray(ds[m].values, dtype=float))).any()]


def _metrics(ds: xr.Dataset) -> list[str]:
    return [m for m in DESIGN_METRICS if m in ds.variables and "run" in ds[m].dims
            and np.isfinite(np.asarray(ds[m].values, dtype=float)).any()]


def _failures(ds: xr.Dataset) -> xr.Dataset:
    """Runs that did not complete, grouped by reason: count, outcomes, an example run."""
    failed = ~_ok(ds)
    reasons = (np.asarray(ds["reason"].values).astype(str) if "reason" in ds.variables
               else np.full(ds.sizes["run"], ""))[failed]
    outcomes = np.asarray(ds["outcome"].values).astype(str)[failed] if "outcome" in ds.variables else reasons
    runs = np.asarray(ds["run"].values).astype(str)[failed]
    frame = pd.DataFrame({"reason": [r.strip() or "no reason given" for r in reasons],
                          "outcome": outcomes, "run": runs})
    rows = (frame.groupby("reason", sort=False)
            .agg(n=("run", "size"), outcome=("outcome", lambda s: ", ".join(sorted(set(s)))),
                 example=("run", "first")).reset_index().sort_values(["n", "reason"], ascending=[False, True]))
    return xr.Dataset({
        "reason": ("failure", rows["reason"].to_numpy(dtype=str), {"units": "1", "long_name": "why the runs failed"}),
        "outcome": ("failure", rows["outcome"].to_numpy(dtype=str), {"units": "1", "long_name": "their outcomes"}),
        "n": ("failure", rows["n"].to_numpy(dtype=int), {"units": "count", "long_name": "runs"}),
        "example": ("failure", rows["example"].to_numpy(dtype=str), {"units": "1", "long_name": "the first such run"}),
    }, attrs={"n_runs": int(ds.sizes["run"]), "n_failed": int(failed.sum())})


def _design_table(ds: xr.Dataset, factors: Sequence[dict[str, Any]], layout: Mapping[str, Any],
                  metrics: Sequence[str]) -> xr.Dataset:
    role = {}
    for key in ("x", "color", "column", "row"):
        if layout[key]:
            role[layout[key]] = key
    role.update({n: "pooled" for n in layout["pooled"]})
    role.update({n: "fixed" for n in layout["fixed"]})
    col = {"name": [f["name"] for f in factors], "units": [f["units"] for f in factors],
           "applied": [f["applied"] for f in factors], "role": [role.get(f["name"], "") for f in factors],
           "levels": [json.dumps([level_text(v) for v in f["levels"]]) for f in factors]}
    data = {k: ("factor", np.asarray(v, dtype=str)) for k, v in col.items()}
    data["ordered"] = ("factor", np.asarray([int(f["ordered"]) for f in factors], dtype=int))
    data["numeric"] = ("factor", np.asarray([int(f["numeric"]) for f in factors], dtype=int))
    data["n_levels"] = ("factor", np.asarray([len(f["levels"]) for f in factors], dtype=int))
    ok = _ok(ds)
    return xr.Dataset(data, attrs={
        "time": int(_flag(ds.attrs.get("design_time", False)) and "time" in ds.variables),
        "metrics": json.dumps(list(metrics)), "layout": json.dumps(dict(layout)),
        "n_runs": int(ds.sizes["run"]), "n_ok": int(ok.sum()), "n_failed": int((~ok).sum())})


def design_series_runs(ds: xr.Dataset, var: str, factors: Sequence[dict[str, Any]] | None = None,
                       layout: Mapping[str, Any] | None = None) -> tuple[list[str], list[tuple[int, ...]],
                                                                          list[np.ndarray], int, int]:
    """The series of a time design for ``var``, as its statistics product cuts them.

    Returns
    -------
    (list of str, list of tuple of int, list of numpy.ndarray, int, int)
        The factors of the series (:func:`~thruput.stats.design_series.series_factors`
        that apply to ``var``'s runs), each series' level indices and completed runs with
        a value (:func:`~thruput.stats.design_series.series_cells`), how many cells had
        runs, and how many time bins ``series_bins/<var>`` cuts the span into (about two
        runs of a series each: finer ones would be mostly empty).
    """
    factors = factors_of(ds) if factors is None else factors
    layout = design_layout(factors) if layout is None else layout
    shown = series_factors(factors, _priority(layout))
    codes = level_codes(ds, [factor_named(ds, b) for b in shown])
    usable = _ok(ds) & np.isfinite(np.asarray(ds[var].values, dtype=float))
    # (a factor that does not apply to the metric's runs, a ping's direction, splits nothing)
    keep = [j for j in range(len(shown)) if (codes[usable, j] >= 0).any()]
    cells, runs, n_cells = series_cells(codes[:, keep], usable)
    bins = int(np.clip(np.median([len(r) for r in runs]) // 2, 2, TIME_BINS)) if runs else TIME_BINS
    return [shown[j] for j in keep], cells, runs, n_cells, bins


def time_bin_width(times: np.ndarray, bins: int = TIME_BINS) -> tuple[np.datetime64, int, int]:
    """The bins :func:`design_time_bins` cuts runs started at ``times`` into: the first
    bin's start (the first run's), the width (whole s) and how many bins."""
    times = np.asarray(times).astype("datetime64[ns]")
    finite = ~np.isnat(times)
    start = times[finite].min() if finite.any() else np.datetime64(0, "ns")
    end = times[finite].max() if finite.any() else start
    span_s = (end - start) / np.timedelta64(1, "s")
    bin_s = max(1, int(np.ceil(span_s / bins))) if span_s > 0 else 1
    nbins = int((end - start) // np.timedelta64(bin_s, "s")) + 1 if finite.any() else 0
    return start, bin_s, nbins


def _over_time(ds: xr.Dataset, factors: Sequence[dict[str, Any]], layout: Mapping[str, Any],
               metrics: Sequence[str], monitor: Mapping[str, Any] | None,
               percentiles: Sequence[float]) -> dict[str, xr.Dataset]:
    """The groups of a time design's series (:mod:`thruput.stats.design_series`): per
    metric, each series' change points, its daily cycle and its time bins."""
    settings = change_settings(monitor)
    shown = series_factors(factors, _priority(layout))
    varied = [f["name"] for f in factors if len(f["levels"]) > 1]
    groups = {}
    for m in metrics:
        by, cells, runs, n_cells, bins = design_series_runs(ds, m, factors, layout)
        attrs = {"by": json.dumps(by), "pooled": json.dumps([n for n in varied if n not in shown]),
                 "n_cells": n_cells, "n_series": len(cells), "max_series": MAX_SERIES,
                 "change_params": json.dumps(settings, sort_keys=True),
                 "cycle_min_span_s": MIN_CYCLES * DAY_S, "cycle_min_runs": MIN_FOR_PERIOD}
        changes, series = series_changes(ds, m, [factor_named(ds, b) for b in by], cells, runs, settings)
        groups[f"changes/{m}"] = changes.assign_attrs(attrs)
        groups[f"series/{m}"] = series.assign_attrs(attrs)
        groups[f"series_bins/{m}"] = design_time_bins(ds, m, by, bins=bins, percentiles=percentiles).assign_attrs(attrs)
    return groups


def design_product(ds: xr.Dataset, params: Mapping[str, Any] | None = None,
                   monitor: Mapping[str, Any] | None = None) -> dict[str, xr.Dataset]:
    """Every table a design campaign's page shows, computed once (the ``stats`` stage).

    Parameters
    ----------
    ds : xarray.Dataset
        A design campaign (``campaign_kind: design``).
    params : dict, optional
        The ``stats`` section of params.yaml (complete, or missing keys take
        :data:`~thruput.stats.DEFAULTS`): ``percentiles``, ``plateau_tolerance``,
        ``confidence``, ``bootstrap``, ``seed``.
    monitor : dict, optional
        The ``monitor`` section of params.yaml: the change points of a time design use
        its ``penalty``, ``min_size``, ``bootstrap``, ``confidence``, ``seed`` and
        ``period_s``, as the monitor's do (:func:`~thruput.stats.design_series.change_settings`).

    Returns
    -------
    dict of str to xarray.Dataset
        Group name -> table (see docs/statistics.md, "Designs"):

        ``design``
            One row per factor (``name``, ``levels`` as JSON, ``units``, ``ordered``,
            ``numeric``, ``applied``, ``role`` on the page); attrs ``layout``, ``metrics``,
            ``time`` and the run counts.
        ``cells/<metric>``
            :func:`design_summary` over every factor.
        ``shown/<metric>``
            :func:`design_summary` over the factors the page draws (:func:`design_layout`).
        ``levels/<metric>/<factor>``
            :func:`design_summary` per level of one factor, pooled over the others.
        ``compare/<factor>``
            :func:`level_comparison` of the first metric for each factor of 2 to
            :data:`MAX_COMPARED_LEVELS` levels over its first declared level that has a
            value of the metric, per cell of up to
            :data:`MAX_CELL_FACTORS` others (:func:`design_layout`'s first, and the next
            if it has at most :data:`MAX_FACET_LEVELS` levels), pooled over the rest.
        ``plateau/<factor>``
            :func:`design_plateau` of throughput along each ordered numeric factor of at
            least two levels.
        ``failures``
            Runs that did not complete, by reason.
        ``time/<metric>``
            :func:`design_time_bins` per level of the colour factor and of the column
            factor, those that apply to the metric (time designs only).
        ``changes/<metric>``, ``series/<metric>``, ``series_bins/<metric>``
            Time designs only: each series' (a cell of up to
            :data:`~thruput.stats.design_series.MAX_SERIES` cells of the factors the page
            shows first, :func:`~thruput.stats.design_series.series_factors`) change points
            with the ratio after / before, its daily cycle and the reason where either is
            missing (:func:`~thruput.stats.design_series.series_changes`), and its
            :func:`design_time_bins` (about two runs of a series a bin); attrs ``by``,
            ``pooled``, ``n_cells``, ``n_series``, ``change_params``.
    """
    p = {**DEFAULTS, **dict(params or {})}
    boot = {"n_boot": int(p["bootstrap"]), "seed": int(p["seed"]), "confidence": float(p["confidence"])}
    factors = factors_of(ds)
    layout = design_layout(factors)
    metrics = _metrics(ds)
    groups: dict[str, xr.Dataset] = {"design": _design_table(ds, factors, layout, metrics),
                                     "failures": _failures(ds)}
    shown = [n for n in _priority(layout) if n not in layout["pooled"]]
    percentiles = sorted(set(DESIGN_PERCENTILES))
    applies = {m: [f["name"] for f in _applicable(ds, factors, m)] for m in metrics}
    for m in metrics:
        groups[f"cells/{m}"] = design_summary(ds, m, applies[m], percentiles)
        groups[f"shown/{m}"] = design_summary(ds, m, [n for n in shown if n in applies[m]], percentiles)
        for f in factors:
            groups[f"levels/{m}/{f['name']}"] = design_summary(ds, m, [f["name"]], percentiles)
    main = metrics[0] if metrics else None
    if main is not None:
        for f in factors:
            if 2 <= len(f["levels"]) <= MAX_COMPARED_LEVELS:
                groups[f"compare/{f['name']}"] = _compared(ds, f, main, layout, factors, applies[main], boot)
        for m in _own_runs_metrics(ds, metrics):
            for f in factors:
                measured = design_summary(ds, m, [f["name"]], percentiles=())["n"].values > 0
                if 2 <= len(f["levels"]) <= MAX_COMPARED_LEVELS and measured.sum() >= 2:
                    groups[f"compare_{m}/{f['name']}"] = _compared(ds, f, m, layout, factors, applies[m], boot)
    if "throughput" in metrics:
        tol = float(p["plateau_tolerance"])
        for f in factors:
            if f["ordered"] and f["numeric"] and len(f["levels"]) >= 2:
                by = _cells_of(layout, factors, f["name"], applies["throughput"])
                groups[f"plateau/{f['name']}"] = design_plateau(ds, f["name"], by=by, tolerance=tol, **boot)
    if groups["design"].attrs["time"]:
        for m in metrics:      # (a line per colour level, a row per column level: a drive's directions)
            by = [n for n in (layout["color"], layout["column"]) if n and n in applies[m]]
            groups[f"time/{m}"] = design_time_bins(ds, m, by, percentiles=percentiles)
        groups.update(_over_time(ds, factors, layout, metrics, monitor, percentiles))
    for g in groups.values():
        g.attrs.update({"params": json.dumps({k: p[k] for k in ("confidence", "bootstrap", "seed",
                                                                  "plateau_tolerance")}, sort_keys=True)})
    return groups
