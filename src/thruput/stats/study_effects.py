"""Which bundled campaign shows each effect the source studies report, computed once.

A study page (:mod:`thruput.report.studies`) sets a published figure beside a new
measurement of the same effect, taken from the bundled campaign that shows it best. The
``study-effects`` stage chooses that campaign for every effect from the campaigns'
statistics products (:mod:`thruput.stats.product`) and writes two files:

``data/report/study-effects.nc`` (:func:`study_effects_product`)
    One group per effect of :data:`EFFECTS`. Its attrs name the campaign shown
    (``campaign``, "" when none shows the effect), how it was chosen (``chosen_by``), the
    automatic pick (``suggested``), its ``title``, ``metadata`` (``campaign.yaml`` as JSON)
    and ``strength``; its subgroups are what the page's panel
    draws, copied from the chosen campaign: the groups ``cells``, ``rtt`` and ``bound`` of
    its statistics product (TCP effects), ``latency_fit`` (``latency``), and ``udp_rows``,
    the spacing sweep's rows of the normalized campaign (``udp``). The study pages read only
    this file, and it holds nothing about the campaigns not chosen: a campaign added without
    changing a choice leaves it byte-identical, and DVC executes no study page again.
``data/report/study-effects-scores.nc`` (:func:`effect_scores`)
    Why: per campaign and effect, whether the effect applies, its strength, the parts of
    the score and which campaign was chosen.

How a campaign is chosen
------------------------
Which campaign illustrates which effect is the author's choice: ``show`` in the
``study-effects`` section of ``params.yaml`` maps an effect to a campaign of
``campaigns:``, and the pages show that one (``chosen_by: author``). The automatic
pick below is only a suggestion, which the pages name beside the author's choice; an effect
``show`` leaves out takes it (``chosen_by: suggestion``).

The suggestion: an effect *applies* to a campaign that measured it: ``window`` a TCP sweep
of at least 3 windows, ``streams`` one of at least 2 streams counts, ``rtt`` one with ping
probes, ``latency`` a UDPmon campaign with a latency scan of 2 points or more, ``udp`` a
UDPmon spacing sweep. A TCP campaign *shows* the effect when its :func:`effect_strength`
reaches ``min_strength`` and its sweep has at least ``min_cells`` (window, streams) cells,
so that a tiny sweep never takes a study's panel; the UDPmon effects are shown by every
campaign they apply to. Of the campaigns that show it, the one with the highest score is
suggested: a shaped path (a known capacity) first, then not loopback, then the strength
rounded to 0.1, then the larger sweep (windows x streams); of equal scores, the campaign
whose name sorts first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

import json

import numpy as np
import xarray as xr

__all__ = ["EFFECTS", "DEFAULTS", "MIN_STRENGTH", "effect_applies", "effect_strength", "effect_scores",
           "study_effects_product", "params_with_defaults"]

#: The effects a study page can show beside a bundled campaign (``page.yaml``: ``side_by_side``).
EFFECTS = ("window", "streams", "rtt", "latency", "udp")
#: The effects measured by TCP sweeps: they need a strength of at least ``min_strength``.
TCP_EFFECTS = ("window", "streams", "rtt")
#: A campaign shows a TCP effect when its strength reaches this ratio (a 50 % change).
MIN_STRENGTH = 1.5
#: Fewest (window, streams) cells of a TCP sweep the automatic pick suggests for an effect.
MIN_CELLS = 12
#: The ``study-effects`` section of params.yaml, key -> default (``show``: effect -> campaign).
DEFAULTS = {"min_strength": MIN_STRENGTH, "min_cells": MIN_CELLS, "show": {}}
#: Groups of the chosen campaign's statistics product that each effect's panel draws.
PANEL_GROUPS = {"window": ("cells", "rtt", "bound"), "streams": ("cells", "rtt", "bound"),
                "rtt": ("cells", "rtt", "bound"), "latency": ("latency_fit",), "udp": ()}
#: Variables of a UDPmon sweep's rows the ``udp`` panel draws (normalized campaign, dim ``row``).
UDP_ROWS = ("spacing", "recv_rate", "loss_fraction", "packet_size")
#: Fewest windows for a plateau, streams counts for a trend, latency points for a line.
MIN_WINDOWS, MIN_STREAMS, MIN_LATENCY_POINTS = 3, 2, 2


def params_with_defaults(params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``params`` (the ``study-effects`` section of params.yaml) over :data:`DEFAULTS`.

    Raises
    ------
    ValueError
        For a key :data:`DEFAULTS` does not know.
    """
    params = dict(params or {})
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown study-effects parameters {unknown}; known: {sorted(DEFAULTS)}")
    show = params.get("show") or {}
    if not isinstance(show, dict):
        raise ValueError(f"study-effects: show must map effects to campaigns, not {show!r}")
    bad = sorted(set(show) - set(EFFECTS))
    if bad:
        raise ValueError(f"study-effects: show names unknown effects {bad}; known: {list(EFFECTS)}")
    params["show"] = {e: str(show[e]) for e in EFFECTS if show.get(e)}
    return {**DEFAULTS, **params}


def _meta(product):
    return json.loads(product.attrs.get("metadata") or "{}")


def _is_tcp(product):
    return product.attrs.get("campaign_kind") == "tcp_sweep" and "cells" in product.children


def effect_applies(product: xr.DataTree, effect: str) -> bool:
    """True when the campaign of ``product`` measured ``effect`` (see the module docstring).

    Parameters
    ----------
    product : xarray.DataTree
        A campaign's statistics product (:func:`thruput.stats.product.campaign_product`).
    effect : str
        One of :data:`EFFECTS`.
    """
    if effect not in EFFECTS:
        raise ValueError(f"unknown effect {effect!r}; known: {list(EFFECTS)}")
    children = product.children
    if effect in TCP_EFFECTS:
        if not _is_tcp(product):
            return False
        sizes = product["cells"].sizes
        return {"window": sizes.get("window", 0) >= MIN_WINDOWS, "streams": sizes.get("streams", 0) >= MIN_STREAMS,
                "rtt": "rtt" in children and "rtt_pooled" in children}[effect]
    if effect == "latency":
        return "latency_fit" in children and int(product["latency_fit"]["n"]) >= MIN_LATENCY_POINTS
    return product.attrs.get("campaign_kind") == "udp_sweep" and "udp_grid" in children


def effect_strength(product: xr.DataTree, effect: str) -> float:
    """How strongly a TCP campaign shows ``effect``: a ratio (1: not at all; 0: cannot be told).

    Parameters
    ----------
    product : xarray.DataTree
        A TCP sweep's statistics product, for which :func:`effect_applies` is true.
    effect : str
        One of :data:`EFFECTS`; the UDPmon effects have strength 1.

    Returns
    -------
    float

    Notes
    -----
    From the product's medians over repeats (group ``cells``) and of ping RTT (``rtt``
    per cell, ``rtt_pooled`` over the campaign):

    - window: best / worst median throughput over the windows, at the fewest streams;
    - streams: median at the most / at the fewest streams, at the smallest window;
    - rtt: highest median loaded RTT of a cell / the campaign's median unloaded RTT.
    """
    if effect in ("window", "streams"):
        med = product["cells"]["median"]
        if effect == "streams":
            line = med.isel(window=0).isel(streams=[0, -1])
            first, last = (float(v) for v in line.values)  # type: ignore[union-attr]
            return last / first if first > 0 and np.isfinite(last / first) else 0.0
        line = med.isel(streams=0)
        lo, hi = float(line.min()), float(line.max())
        return hi / lo if lo > 0 else 0.0
    if effect == "rtt":
        unloaded = float(product["rtt_pooled"]["median"].sel(phase="unloaded"))
        top = float(product["rtt"]["median"].sel(phase="loaded").max(skipna=True))
        return top / unloaded if unloaded > 0 and np.isfinite(top) else 0.0
    return 1.0


def _path(product):
    return _meta(product).get("path", {}) or {}


def _shaped(product):
    """The path has a known capacity (a shaper or a link rate in ``campaign.yaml``)."""
    return _path(product).get("capacity_bps") is not None


def _loopback(product):
    return "loopback" in str(_path(product).get("between", "")).lower()


def _size(product):
    if "cells" not in product.children:
        return 1
    return int(np.prod([product["cells"].sizes.get(d, 1) for d in ("window", "streams")]))


def _score(product, strength):
    return (_shaped(product), not _loopback(product), round(strength, 1), _size(product))


def _assess(products, min_strength, min_cells=MIN_CELLS):
    """Per effect, per campaign in name order: (applies, strength, shows, score)."""
    out = {}
    for effect in EFFECTS:
        rows = {}
        for name in sorted(products):
            product = products[name]
            applies = effect_applies(product, effect)
            strength = effect_strength(product, effect) if applies else float("nan")
            shows = applies and (effect not in TCP_EFFECTS
                                 or (strength >= min_strength and _size(product) >= min_cells))
            rows[name] = (applies, strength, shows, _score(product, strength) if shows else None)
        out[effect] = rows
    return out


def _suggested(rows):
    """The name with the highest score (the first in name order of equal ones), or None."""
    shown = [(name, r[3]) for name, r in rows.items() if r[2]]
    return max(shown, key=lambda item: item[1])[0] if shown else None


def _choices(products, params):
    """Per effect: (campaign shown or None, how it was chosen, suggestion or None), and the
    assessment. Raises ValueError for a ``show`` entry the pages could not draw."""
    assessed = _assess(products, float(params["min_strength"]), int(params["min_cells"]))
    out = {}
    for effect in EFFECTS:
        suggestion = _suggested(assessed[effect])
        name = params["show"].get(effect)
        if name is None:
            out[effect] = (suggestion, "suggestion", suggestion)
            continue
        if name not in products:
            raise ValueError(f"study-effects: show: {effect}: {name!r} is not a campaign of `campaigns:` "
                             f"(known: {', '.join(sorted(products)) or 'none'})")
        if not assessed[effect][name][0]:
            raise ValueError(f"study-effects: show: {effect}: campaign {name!r} did not measure this effect "
                             f"(campaigns that did: {', '.join(n for n, r in assessed[effect].items() if r[0]) or 'none'})")
        out[effect] = (name, "author", suggestion)
    return out, assessed


def effect_scores(products: Mapping[str, xr.DataTree], params: Mapping[str, Any] | None = None) -> xr.Dataset:
    """Every campaign's assessment of every effect: why each campaign was chosen.

    Parameters
    ----------
    products : dict of str to xarray.DataTree
        Campaign name -> its statistics product.
    params : dict, optional
        The ``study-effects`` section of ``params.yaml`` (:data:`DEFAULTS`).

    Returns
    -------
    xarray.Dataset
        On ``campaign`` (in name order) x ``effect``: ``applies``, ``strength`` (NaN where
        the effect does not apply), ``shows``, ``shaped`` (the path has a known capacity),
        ``loopback``, ``size`` (windows x streams, 1 without cells) and ``chosen``.
    """
    params = params_with_defaults(params)
    choices, assessed = _choices(products, params)
    names = sorted(products)
    chosen = {e: c[0] for e, c in choices.items()}
    suggested = {e: c[2] for e, c in choices.items()}

    def grid(value, dtype):
        return np.array([[value(n, e) for e in EFFECTS] for n in names], dtype=dtype).reshape(len(names), len(EFFECTS))

    def column(value, dtype):
        return np.array([value(products[n]) for n in names], dtype=dtype)

    dims = ("campaign", "effect")
    return xr.Dataset({
        "applies": (dims, grid(lambda n, e: assessed[e][n][0], bool),
                    {"long_name": "the campaign measured the effect"}),
        "strength": (dims, grid(lambda n, e: assessed[e][n][1], float),
                     {"units": "1", "long_name": "effect_strength (1 for the UDPmon effects)"}),
        "shows": (dims, grid(lambda n, e: assessed[e][n][2], bool),
                  {"long_name": "applies, with strength >= min_strength for a TCP effect"}),
        "shaped": ("campaign", column(_shaped, bool), {"long_name": "the path has a known capacity"}),
        "loopback": ("campaign", column(_loopback, bool), {"long_name": "the path is loopback"}),
        "size": ("campaign", column(_size, np.int64),
                 {"units": "count", "long_name": "windows x streams of the sweep"}),
        "suggested": (dims, grid(lambda n, e: suggested[e] == n, bool),
                      {"long_name": "the automatic pick for the effect (a suggestion)"}),
        "chosen": (dims, grid(lambda n, e: chosen[e] == n, bool),
                   {"long_name": "the campaign the study pages show for the effect "
                                 "(params.yaml study-effects: show, else the suggestion)"}),
    }, coords={"campaign": np.asarray(names, dtype=str), "effect": np.asarray(EFFECTS, dtype=str)},
        attrs={"min_strength": float(params["min_strength"]), "min_cells": int(params["min_cells"]),
               "params": json.dumps(params, sort_keys=True)})


def study_effects_product(products: Mapping[str, xr.DataTree], campaigns: Mapping[str, xr.Dataset],
                          params: Mapping[str, Any] | None = None) -> xr.DataTree:
    """For every effect, the campaign that shows it best and what its panel draws.

    Parameters
    ----------
    products : dict of str to xarray.DataTree
        Campaign name -> its statistics product (``<c>.stats.nc``).
    campaigns : mapping of str to xarray.Dataset
        Campaign name -> its normalized campaign (``<c>.nc``, may be opened lazily): only
        the rows of the UDPmon sweep chosen for ``udp`` are read.
    params : dict, optional
        The ``study-effects`` section of ``params.yaml`` (:data:`DEFAULTS`).

    Returns
    -------
    xarray.DataTree
        One group per effect (see the module docstring); root attrs ``effects`` (JSON),
        ``min_strength`` and ``params`` (JSON).
    """
    params = params_with_defaults(params)
    choices, assessed = _choices(products, params)
    tree = {"/": xr.Dataset(attrs={"effects": json.dumps(list(EFFECTS)),
                                   "min_strength": float(params["min_strength"]),
                                   "min_cells": int(params["min_cells"]),
                                   "params": json.dumps(params, sort_keys=True)})}
    for effect in EFFECTS:
        name, chosen_by, suggestion = choices[effect]
        if name is None:
            tree[f"/{effect}"] = xr.Dataset(attrs={"campaign": "", "chosen_by": chosen_by, "suggested": ""})
            continue
        product = products[name]
        tree[f"/{effect}"] = xr.Dataset(attrs={
            "campaign": name, "chosen_by": chosen_by, "suggested": suggestion or "",
            "title": product.attrs.get("title", name),
            "metadata": product.attrs.get("metadata", "{}"), "strength": float(assessed[effect][name][1])})
        for group in PANEL_GROUPS[effect]:
            if group in product.children:
                tree[f"/{effect}/{group}"] = product[group].to_dataset()
        if effect == "udp":
            rows = campaigns[name][list(UDP_ROWS)].load()
            rows.attrs = {"source": f"{name}: the rows of its UDPmon spacing sweep"}
            tree[f"/{effect}/udp_rows"] = rows
    return xr.DataTree.from_dict(tree)
