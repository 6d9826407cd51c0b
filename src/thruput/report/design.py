"""The page of a design campaign (``campaign_kind: design``), from its statistics product.

``notebooks/campaign.ipynb`` calls :func:`thruput.report.title`,
:func:`~thruput.report.statistics` and :func:`~thruput.report.campaign_charts`, which come
here for a design: what was varied (:func:`design_factors`), each factor's levels
(:func:`design_levels`), small multiples over the factors (:func:`design_small_multiples`),
the levels compared (:func:`design_comparisons`), plateaus (:func:`design_plateaus`),
failures (:func:`design_failures`) and, for a design over time, its series
(:func:`design_time`) and each cell's change points and daily cycle (:func:`design_changes`). Every number is read from the product that
:func:`thruput.stats.design.design_product` wrote; nothing is computed here but units and
text. A section the design cannot have says why in one line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from IPython.display import HTML, Markdown, display

from ..charts import design as charts_design
from ..formatting import duration

__all__ = ["design_title", "design_factors", "design_levels", "design_small_multiples",
           "design_comparisons", "design_comparison", "design_plateaus", "design_failures", "design_time",
           "design_changes",
           "design_statistics", "design_charts", "number_text", "level_label", "METRICS"]

#: How a page shows each metric: name, unit shown, factor from the stored unit.
METRICS = {"throughput": ("throughput", "Mbit/s", 1e-6), "rtt_median": ("median ping RTT", "ms", 1.0),
           "loss_fraction": ("UDP loss", "%", 100.0), "jitter": ("UDP jitter", "ms", 1.0)}
#: Most levels of a factor a table lists by name (the count says how many more).
LISTED_LEVELS = 12
#: Most levels drawn along x (those with the most runs; the page says so).
MAX_X_LEVELS = 40
#: Most rows of a comparison table (the chart shows every cell).
MAX_TABLE_ROWS = 60
#: Most series drawn with their change points (those with changes first; the table lists all).
MAX_SERIES_PANELS = 12
#: Medians spanning more than this factor are drawn on a log axis.
LOG_SPAN = 100.0
#: What each role of a factor means on the page.
ROLES = {"x": "x axis", "color": "colour", "column": "columns", "row": "rows",
         "pooled": "pooled (too many levels to draw)", "fixed": "fixed (one level)"}
DASH = "–"


def number_text(value: Any, digits: int = 3) -> str:
    """A number as a page shows it: ``digits`` significant digits, never in e-notation,
    "–" when unknown."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return DASH
    if not np.isfinite(x):
        return DASH
    if x == 0:
        return "0"
    if abs(x) >= 10 ** (digits - 1):
        return f"{x:.0f}"
    if abs(x) >= 1:
        return f"{x:.{digits}g}"
    return np.format_float_positional(x, precision=digits, unique=True, fractional=False, trim="-")


def level_label(value: Any, units: str = "") -> str:
    """A factor's level as text: text as it is, sizes in KiB/MiB, other numbers with their
    unit (none for ``1`` or ``count``)."""
    if isinstance(value, (bytes, np.bytes_)):
        value = value.decode()
    if isinstance(value, str):
        return value
    x = float(value)
    if not np.isfinite(x):
        return DASH
    if units in ("byte", "bytes", "B"):
        for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
            if x >= size and x % (size / 4) == 0:
                return f"{number_text(x / size, 4)} {unit}"
        return f"{number_text(x, 6)} B"
    text = number_text(x, 6)
    return text if units in ("", "1", "count") else f"{text} {units}"


def _group(product: xr.DataTree, path: str) -> xr.Dataset | None:
    try:
        node = product[path]
    except KeyError:
        return None
    return node.to_dataset(inherit=False) if isinstance(node, xr.DataTree) else None


def _children(product: xr.DataTree, path: str) -> list[str]:
    try:
        return list(product[path].children)
    except KeyError:
        return []


def _design(product: xr.DataTree) -> xr.Dataset:
    design = _group(product, "design")
    if design is None:
        raise ValueError(f"{product.attrs.get('campaign', 'the product')}: not a design product (no group design)")
    return design


def _factors(product: xr.DataTree) -> dict[str, dict[str, Any]]:
    d = _design(product)
    out = {}
    for i in range(d.sizes.get("factor", 0)):
        row = d.isel(factor=i)
        out[str(row["name"].item())] = {
            "levels": json.loads(str(row["levels"].item())), "units": str(row["units"].item()),
            "ordered": bool(row["ordered"].item()), "numeric": bool(row["numeric"].item()),
            "applied": str(row["applied"].item()), "role": str(row["role"].item())}
    return out


def _metrics(product: xr.DataTree) -> list[str]:
    return [m for m in json.loads(_design(product).attrs.get("metrics", "[]")) if m in METRICS]


def _layout(product: xr.DataTree) -> dict[str, Any]:
    return json.loads(_design(product).attrs["layout"])


def _level(value: Any, factor: dict[str, Any]) -> Any:
    """A level as stored (text in the design table, a number in a coordinate) as the value
    it is: a number for a numeric factor."""
    if factor["numeric"] and isinstance(value, (str, np.str_)):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _labels(factors: dict[str, dict[str, Any]], name: str) -> list[str]:
    f = factors[name]
    return [level_label(_level(v, f), f["units"]) for v in f["levels"]]


def _label_column(values: Sequence[Any], factor: dict[str, Any]) -> list[str]:
    return [level_label(_level(v, factor), factor["units"]) for v in values]


def _confidence(ds: xr.Dataset) -> float:
    return float(ds.attrs.get("confidence", json.loads(ds.attrs.get("params", "{}")).get("confidence", 0.95)))


def _meta(product: xr.DataTree) -> dict[str, Any]:
    raw = product.attrs.get("metadata") or "{}"
    return json.loads(raw) if isinstance(raw, str) else dict(raw)


def design_title(product: xr.DataTree) -> Markdown:
    """The heading: title, description, path and dates where the campaign gives them, and
    how many runs over how many factors."""
    meta = _meta(product)
    d = _design(product)
    factors = _factors(product)
    path = meta.get("path") or {}
    dates = meta.get("dates") or {}
    lines = [f"# {meta.get('title') or product.attrs.get('title') or product.attrs.get('campaign', 'Design')}",
             str(meta.get("description") or "").strip()]
    if path.get("source") or path.get("destination"):
        lines.append(f"**Path:** {path.get('source') or '?'} → {path.get('destination') or '?'}"
                     + (f" ({path['between']})" if path.get("between") else ""))
    if dates.get("start"):
        lines.append(f"**Dates:** {dates['start']} – {dates.get('end') or 'not ended'}")
    varied = [n for n, f in factors.items() if len(f["levels"]) > 1]
    n_cells = int(np.prod([len(factors[n]["levels"]) for n in varied], dtype=int)) if varied else 1
    failed = int(d.attrs.get("n_failed", 0))
    lines.append(f"**Design:** {int(d.attrs.get('n_runs', 0))} runs over {n_cells} cells of "
                 f"{len(varied)} varied factor{'s' if len(varied) != 1 else ''}"
                 + (f" ({', '.join(varied)})" if varied else "")
                 + (f"; {failed} failed" if failed else "; all completed" if int(d.attrs.get("n_runs", 0)) else "")
                 + ("; over time" if d.attrs.get("time") else "") + ".")
    if meta.get("notes"):
        lines.append(f"*{str(meta['notes']).strip()}*")
    return Markdown("\n\n".join(line for line in lines if line))


def design_factors(product: xr.DataTree) -> HTML | Markdown:
    """What was varied: one row per factor with its levels, units, whether ordered, how it
    was applied and where the page draws it."""
    factors = _factors(product)
    if not factors:
        return Markdown("## What was varied\n\nThe campaign declares no factor: every run is one cell.")
    display(Markdown("## What was varied"))
    rows = []
    for name, f in factors.items():
        labels = _labels(factors, name)
        listed = ", ".join(labels[:LISTED_LEVELS]) + (f", … ({len(labels)} levels)" if len(labels) > LISTED_LEVELS else "")
        rows.append({"factor": name, "levels": listed, "units": f["units"] if f["units"] not in ("", "1") else DASH,
                     "ordered": "yes" if f["ordered"] else "no", "how applied": f["applied"] or DASH,
                     "on this page": ROLES.get(f["role"], DASH)})
    return HTML(pd.DataFrame(rows).to_html(index=False))


def design_levels(product: xr.DataTree) -> HTML | Markdown:
    """Each factor's levels, pooled over the other factors: runs, failures and each
    metric's median and p10-p90."""
    factors = _factors(product)
    metrics = _metrics(product)
    if not metrics:
        return Markdown("## Per level\n\nNo run reported a throughput, RTT, loss or jitter: there is nothing to summarise.")
    if not factors:
        return Markdown("## Per level\n\nThe campaign declares no factor: there are no levels to summarise.")
    display(Markdown("## Per level\n\nEach factor's levels, pooled over the other factors "
                     "(runs that completed; a failed run counts in *failed* only)."))
    rows, cut = [], []
    for name, f in factors.items():
        first = _group(product, f"levels/{metrics[0]}/{name}")
        labels = _label_column(first[name].values, f)
        listed = range(len(labels))
        if len(labels) > LISTED_LEVELS:       # (the levels with the most runs, in their order)
            runs = sum(_group(product, f"levels/{m}/{name}")["n"].values for m in metrics)
            listed = sorted(np.argsort(-runs, kind="stable")[:LISTED_LEVELS])
            cut.append(f"{name}: the {LISTED_LEVELS} levels with the most runs of {len(labels)} are listed.")
        for i in listed:
            label = labels[i]
            row = {"factor": name, "level": label, "failed": int(first["n_failed"].values[i])}
            for m in metrics:
                s = _group(product, f"levels/{m}/{name}")
                what, unit, k = METRICS[m]
                row[f"{what}: runs"] = int(s["n"].values[i])
                row[f"{what}: median ({unit})"] = number_text(s["median"].values[i] * k)
                row[f"{what}: p10 – p90 ({unit})"] = _range(s["p10"].values[i] * k, s["p90"].values[i] * k)
            rows.append(row)
    if cut:
        display(HTML(pd.DataFrame(rows).to_html(index=False)))
        return Markdown(" ".join(cut))
    return HTML(pd.DataFrame(rows).to_html(index=False))


def _range(low: float, high: float) -> str:
    if not (np.isfinite(low) and np.isfinite(high)):
        return DASH
    return f"{number_text(low)} – {number_text(high)}"


def _cells_frame(summary: xr.Dataset, factors: dict[str, dict[str, Any]], roles: dict[str, str | None],
                 k: float) -> pd.DataFrame:
    """A summary's cells with runs as rows: role columns (levels as text) and the numbers in
    the shown unit."""
    numbers = summary[["median", "p10", "p90", "n"]]
    df = (numbers.to_dataframe() if numbers["n"].dims else numbers.expand_dims("_all").to_dataframe()).reset_index()
    df = df[df["n"] > 0].copy()
    for key in ("median", "p10", "p90"):
        df[key] = df[key] * k
    out = pd.DataFrame({"median": df["median"], "p10": df["p10"], "p90": df["p90"], "n": df["n"].astype(int)})
    for role, name in roles.items():
        if name:
            out[role] = _label_column(df[name].values, factors[name])
    return out.reset_index(drop=True)


def _roles_of(layout: dict[str, Any], summary: xr.Dataset) -> dict[str, str | None]:
    """The layout's x, colour, column and row among the factors of ``summary`` (a factor
    that does not apply to a metric, as a ping's direction, is not among them): when x is
    not, the next role's factor takes its place."""
    names = [layout.get(r) if layout.get(r) in summary.dims else None for r in ("x", "color", "column", "row")]
    if names[0] is None:
        moved = next((i for i, n in enumerate(names) if n), None)
        if moved is not None:
            names[0], names[moved] = names[moved], None
    return dict(zip(("x", "color", "column", "row"), names))


def design_small_multiples(product: xr.DataTree) -> Any:
    """Each metric's median (and p10-p90) per cell: x by one factor, colour by another,
    columns and rows by two more (the product's layout); pooled factors are named."""
    factors = _factors(product)
    metrics = _metrics(product)
    layout = _layout(product)
    if not metrics:
        return Markdown("## Across the factors\n\nNo run reported a throughput, RTT, loss or jitter: there is nothing to draw.")
    if not layout.get("x"):
        return Markdown("## Across the factors\n\nNo factor has more than one level: there is nothing to draw across "
                        "(the per-level table gives the numbers).")
    result: Any = None
    for m in metrics:
        what, unit, k = METRICS[m]
        summary = _group(product, f"shown/{m}")
        roles = _roles_of(layout, summary)
        frame = _cells_frame(summary, factors, roles, k)
        heading = f"## {what[0].upper()}{what[1:]} across the factors"
        if not roles["x"] and not frame.empty:
            result = Markdown(f"{heading}\n\nNo factor drawn varies among the runs that report a {what} "
                              f"(median {number_text(frame['median'].iloc[0])} {unit} over {int(frame['n'].iloc[0])} runs).")
            if m != metrics[-1]:
                display(result)
            continue
        if frame.empty:
            result = Markdown(f"{heading}\n\nNo run reported a {what}: there is nothing to draw.")
            if m != metrics[-1]:          # (the last is returned, and shown once)
                display(result)
            continue
        notes = [f"Median per cell (point) and its p10-p90 range (bar), over the runs of the cell; "
                 f"x: {roles['x']}" + "".join(f", {ROLES[r]}: {roles[r]}" for r in ("color", "column", "row") if roles[r]) + "."]
        if layout.get("pooled"):
            notes.append(f"Pooled (each cell holds the runs of all their levels): {', '.join(layout['pooled'])}.")
        orders = {r: _labels(factors, n) for r, n in roles.items() if n}
        if roles["color"]:                       # (a legend lists the levels drawn)
            orders["color"] = [c for c in orders["color"] if c in set(frame["color"])]
        xs = orders["x"]
        if len(xs) > MAX_X_LEVELS:
            counts = frame.groupby("x")["n"].sum().sort_values(ascending=False, kind="stable")
            keep = set(counts.index[:MAX_X_LEVELS])
            frame = frame[frame["x"].isin(keep)]
            orders["x"] = [x for x in xs if x in keep]
            notes.append(f"The {len(keep)} {roles['x']} levels with the most runs of {len(xs)} are drawn.")
        positive = frame["median"][frame["median"] > 0]
        log = bool(len(positive) == len(frame) and positive.max() / positive.min() > LOG_SPAN)
        display(Markdown(heading + "\n\n" + " ".join(notes)))
        result = charts_design.small_multiples(frame, roles["x"], unit, what, color=roles["color"],
                                               column=roles["column"], row=roles["row"], orders=orders, log=log)
        if m != metrics[-1]:
            display(result)
    return result


def design_comparisons(product: xr.DataTree) -> Any:
    """Each compared factor's levels over its reference level: ratios of medians with
    bootstrap intervals per cell of up to two other factors (chart and table)."""
    factors = _factors(product)
    metrics = _metrics(product)
    compared = _children(product, "compare")
    # (the first metric's comparisons, then those of a metric other runs measure: a ping's RTT)
    entries = [(f"compare/{n}", n) for n in compared] + [
        (f"compare_{m}/{n}", n) for m in METRICS if f"compare_{m}" in product.children
        for n in _children(product, f"compare_{m}")]
    heading = "## Levels compared"
    if not metrics:
        return Markdown(f"{heading}\n\nNo run reported a throughput, RTT, loss or jitter: there is nothing to compare.")
    if not compared:
        return Markdown(f"{heading}\n\nNo factor has between 2 and 8 levels: the per-level table is the comparison.")
    display(Markdown(f"{heading}\n\nFor each factor, the median of each level over that of its reference "
                     "(the first level declared that has runs), per cell of other factors; the interval "
                     "is a percentile bootstrap of the ratio, and an interval that crosses 1 shows no difference at that "
                     "coverage. No correction for the many cells is applied."))
    result: Any = None
    for i_entry, (path, name) in enumerate(entries):
        last = i_entry == len(entries) - 1
        c = _group(product, path)
        what, unit, k = METRICS.get(c.attrs.get("var", "throughput"), METRICS["throughput"])
        by = json.loads(c.attrs.get("by", "[]"))
        pooled = json.loads(c.attrs.get("pooled", "[]"))
        reference = level_label(_level(c.attrs["reference"], factors[name]), factors[name]["units"])
        confidence = _confidence(c)
        df = c[["ratio", "ratio_low", "ratio_high", "median_a", "median_b", "n_a", "n_b"]].to_dataframe().reset_index()
        df["level"] = _label_column(df[name].values, factors[name])
        for i, b in enumerate(by):
            df[["x", "column"][i]] = _label_column(df[b].values, factors[b])
        main = path.startswith("compare/")
        intro = (f"### {name}: {'each level' if main else what + ' of each level'} over {reference}"
                 + (f", per {' and '.join(by)}" if by else ""))
        nested = {n: outer for n, outer in json.loads(c.attrs.get("nested", "{}")).items() if n in pooled}
        rest = [n for n in pooled if n not in nested]
        note = " ".join([f"Pooled over {', '.join(rest)}." if rest else "",
                         *[f"Pooled over {n}: each of its levels has runs of one {outer} only."
                           for n, outer in nested.items()]]).strip()
        shown = df[(df["ratio"] > 0) & (df["ratio_low"] > 0) & np.isfinite(df["ratio_high"])]
        if shown.empty:
            result = Markdown(f"{intro}\n\nNo cell has completed runs of both {reference} and another level.")
            if not last:          # (the last is returned, and shown once)
                display(result)
            continue
        display(Markdown(intro + ("\n\n" + note if note else "")))
        orders = {"level": [lv for lv in _labels(factors, name) if lv != reference],
                  "colours": _labels(factors, name)}
        if by:
            orders["x"] = _labels(factors, by[0])
        if len(by) > 1:
            orders["column"] = _labels(factors, by[1])
        display(charts_design.level_ratios(shown, name, reference, confidence, x=by[0] if by else None,
                                           column=by[1] if len(by) > 1 else None, orders=orders, quantity=what))
        table = pd.DataFrame({"level": df["level"], **{b: df[["x", "column"][i]] for i, b in enumerate(by)},
                              f"runs ({reference} / level)": [f"{int(a)} / {int(b)}" for a, b in zip(df["n_a"], df["n_b"])],
                              f"median {reference} ({unit})": [number_text(v * k) for v in df["median_a"]],
                              f"median of level ({unit})": [number_text(v * k) for v in df["median_b"]],
                              "ratio": [number_text(v) for v in df["ratio"]],
                              f"{confidence:.0%} CI": [_range(a, b) for a, b in zip(df["ratio_low"], df["ratio_high"])]})
        both = ((df["n_a"] > 0) & (df["n_b"] > 0)).to_numpy()
        if not both.all():
            display(Markdown(f"{int((~both).sum())} of {len(table)} cells without runs of both {reference} "
                             "and the level are left out."))
            table = table[both]
        if len(table) > MAX_TABLE_ROWS:
            display(Markdown(f"The first {MAX_TABLE_ROWS} of {len(table)} rows (the chart shows every cell)."))
            table = table.head(MAX_TABLE_ROWS)
        result = HTML(table.to_html(index=False))
        if not last:
            display(result)
    return result


def design_comparison(product: xr.DataTree) -> Any:
    """Two designs compared (a ``compare@<name>`` product of two design campaigns): the
    median of ``b`` over that of ``a`` per cell of the factors both have, with its bootstrap
    interval (chart and table)."""
    a, b = str(product.attrs["a"]), str(product.attrs["b"])
    c = _group(product, "cells")
    by = json.loads(product.attrs.get("by", "[]"))
    what, unit, k = METRICS.get(str(product.attrs.get("var")), METRICS["throughput"])
    confidence = _confidence(c)
    heading = f"## {a} → {b}"
    numbers = c[["ratio", "ratio_low", "ratio_high", "median_a", "median_b", "n_a", "n_b"]]
    df = (numbers.to_dataframe() if by else numbers.expand_dims("_all").to_dataframe()).reset_index()
    labels = {f: [level_label(v, str(c[f].attrs.get("units", ""))) for v in df[f].values] for f in by}
    both = ((df["n_a"] > 0) & (df["n_b"] > 0)).to_numpy()
    if not both.any():
        return Markdown(f"{heading}\n\nNo cell of {', '.join(by) or 'the campaigns'} has completed runs with a "
                        f"{what} in both campaigns: nothing to compare.")
    display(Markdown(f"{heading}\n\nThe median {what} of {b} over that of {a}"
                     + (f", per {' and '.join(by)} (the levels both campaigns have; each pooled over its other "
                        "factors)" if by else " (each pooled over all its runs)")
                     + "; the interval is a percentile bootstrap of the ratio, and an interval that crosses 1 shows "
                       "no difference at that coverage. No correction for the many cells is applied."))
    frame = pd.DataFrame({"level": b, "ratio": df["ratio"], "ratio_low": df["ratio_low"],
                          "ratio_high": df["ratio_high"]})
    orders: dict[str, list[str]] = {"level": [b]}
    x = column = None
    if by:
        x = by[0] if len(by) <= 2 else " / ".join(by)
        frame["x"] = labels[by[0]] if len(by) <= 2 else [" / ".join(t) for t in zip(*(labels[f] for f in by))]
        if len(by) <= 2:
            orders["x"] = [level_label(v, str(c[by[0]].attrs.get("units", ""))) for v in c[by[0]].values]
    if len(by) == 2:
        column = by[1]
        frame["column"] = labels[by[1]]
        orders["column"] = [level_label(v, str(c[by[1]].attrs.get("units", ""))) for v in c[by[1]].values]
    shown = frame[both & (frame["ratio"] > 0).to_numpy() & (frame["ratio_low"] > 0).to_numpy()
                  & np.isfinite(frame["ratio_high"]).to_numpy()]
    if len(shown):
        display(charts_design.level_ratios(shown, "campaign", a, confidence, x=x, column=column, orders=orders,
                                           quantity=what))
    table = pd.DataFrame({**{f: labels[f] for f in by},
                          f"runs ({a} / {b})": [f"{int(p)} / {int(q)}" for p, q in zip(df["n_a"], df["n_b"])],
                          f"median {a} ({unit})": [number_text(v * k) for v in df["median_a"]],
                          f"median {b} ({unit})": [number_text(v * k) for v in df["median_b"]],
                          "ratio": [number_text(v) for v in df["ratio"]],
                          f"{confidence:.0%} CI": [_range(p, q) for p, q in zip(df["ratio_low"], df["ratio_high"])]})
    if not both.all():
        display(Markdown(f"{int((~both).sum())} of {len(table)} cells without runs in both campaigns are left out."))
    table = table[both]
    if len(table) > MAX_TABLE_ROWS:
        display(Markdown(f"The first {MAX_TABLE_ROWS} of {len(table)} rows (the chart shows every cell)."))
        table = table.head(MAX_TABLE_ROWS)
    return HTML(table.to_html(index=False))


def design_plateaus(product: xr.DataTree) -> Any:
    """The throughput plateau along each ordered numeric factor, per cell of up to two others."""
    factors = _factors(product)
    along = _children(product, "plateau")
    heading = "## Plateau"
    if not along:
        numeric = [n for n, f in factors.items() if f["ordered"] and f["numeric"] and len(f["levels"]) > 1]
        why = ("no run reported a throughput" if numeric else
               "no factor is ordered and numeric with two levels or more")
        return Markdown(f"{heading}\n\nNo plateau to find: {why}.")
    result: Any = None
    for name in along:
        p = _group(product, f"plateau/{name}")
        f = factors[name]
        by = json.loads(p.attrs.get("by", "[]"))
        pooled = json.loads(p.attrs.get("pooled", "[]"))
        confidence = _confidence(p)
        df = (p.to_dataframe() if p["level"].dims else p.expand_dims("_all").to_dataframe()).reset_index()
        df = df[df["n_points"] > 0]
        intro = (f"{heading} along {name}\n\nThe highest median throughput over the levels of {name} and the "
                 f"smallest level within {float(p.attrs.get('tolerance', 0.1)):.0%} of it, "
                 + (f"per {' and '.join(by)}" if by else "over all runs")
                 + (f"; pooled over {', '.join(pooled)}" if pooled else "") + ".")
        if df.empty:
            result = Markdown(f"{heading} along {name}\n\nNo level of {name} has a completed run: no plateau.")
            if name != along[-1]:          # (the last is returned, and shown once)
                display(result)
            continue
        display(Markdown(intro))
        onset = [level_label(v, f["units"]) + (" (at the edge of the levels)" if c != "no" else "")
                 for v, c in zip(df["onset"], df["censored"])]
        table = pd.DataFrame({**{b: _label_column(df[b].values, factors[b]) for b in by},
                              "plateau (Mbit/s)": [number_text(v / 1e6) for v in df["level"]],
                              f"{confidence:.0%} CI (Mbit/s)": [_range(a / 1e6, b / 1e6) for a, b in zip(df["level_low"], df["level_high"])],
                              f"onset {name}": onset,
                              f"onset {confidence:.0%} CI": [f"{level_label(a, f['units'])} – {level_label(b, f['units'])}"
                                                             for a, b in zip(df["onset_low"], df["onset_high"])],
                              "limited by": [str(v).replace("window", f"{name} (still rising)") for v in df["limited_by"]]})
        result = HTML(table.head(MAX_TABLE_ROWS).to_html(index=False))
        if name != along[-1]:
            display(result)
    return result


def design_failures(product: xr.DataTree) -> Any:
    """Runs that did not complete, grouped by reason, with an example run each."""
    f = _group(product, "failures")
    n_runs = int(_design(product).attrs.get("n_runs", 0))
    heading = "## Runs that failed"
    if f is None or f.sizes.get("failure", 0) == 0:
        return Markdown(f"{heading}\n\nAll {n_runs} runs completed." if n_runs else f"{heading}\n\nThe campaign has no run.")
    display(Markdown(f"{heading}\n\n{int(f.attrs['n_failed'])} of {n_runs} runs did not complete, by the reason "
                     "their tool gave."))
    return HTML(pd.DataFrame({"reason": f["reason"].values, "outcome": f["outcome"].values,
                              "runs": f["n"].values.astype(int), "example run": f["example"].values}).to_html(index=False))


def design_time(product: xr.DataTree) -> Any:
    """For a design over time: each metric's median and p10-p90 per time bin, one series per
    level of the colour factor and one row of charts per level of the column factor (a
    drive's directions); no before/after periods."""
    d = _design(product)
    heading = "## Over time"
    if not d.attrs.get("time"):
        return Markdown(f"{heading}\n\nNot a design over time: its runs are compared by factor, not by period.")
    factors = _factors(product)
    result: Any = None
    names = [m for m in _metrics(product) if _group(product, f"time/{m}") is not None]
    if not names:
        return Markdown(f"{heading}\n\nNo run reported a throughput, RTT, loss or jitter: no series to draw.")
    for m in names:
        what, unit, k = METRICS[m]
        s = _group(product, f"time/{m}")
        by = json.loads(s.attrs.get("by", "[]"))
        df = s[["median", "p10", "p90", "n"]].to_dataframe().reset_index()
        df["series"] = _label_column(df[by[0]].values, factors[by[0]]) if by else "all runs"
        df["row"] = _label_column(df[by[1]].values, factors[by[1]]) if len(by) > 1 else ""
        frames = []
        for (series, row), part in df.groupby(["series", "row"], sort=False):
            part = part.sort_values("time")
            has = part["n"].to_numpy() > 0
            part = part.assign(segment=[f"{series} {row} {i}" for i in np.cumsum(~has)])[has]
            frames.append(part)
        bins = pd.concat(frames) if frames else df.iloc[:0]
        for key in ("median", "p10", "p90"):
            bins[key] = bins[key] * k
        if bins.empty:
            result = Markdown(f"{heading}: {what}\n\nNo run reported a {what}: no series to draw.")
            if m != names[-1]:          # (the last is returned, and shown once)
                display(result)
            continue
        display(Markdown(f"{heading}: {what}\n\nMedian and p10-p90 per {_duration_text(s.attrs['bin_s'])} bin"
                         + (f", one line per {by[0]}" if by else "") + (f", one row per {by[1]}" if len(by) > 1 else "")
                         + "; a gap in the line is a bin without runs."))
        result = charts_design.level_series(bins[["time", "median", "p10", "p90", "n", "segment", "series", "row"]],
                                            unit, what, series=by[0] if by else None,
                                            order=_labels(factors, by[0]) if by else ["all runs"],
                                            row=by[1] if len(by) > 1 else None,
                                            row_order=_labels(factors, by[1]) if len(by) > 1 else None)
        if m != names[-1]:
            display(result)
    return result


def _series_labels(frame: pd.DataFrame, by: Sequence[str], factors: dict[str, dict[str, Any]]) -> list[str]:
    """Each row's series as text: ``"cc bbr, socket_buffer 64 KiB"`` ("all runs" without factors)."""
    if not by:
        return ["all runs"] * len(frame)
    parts = [[f"{b} {v}" for v in _label_column(frame[b].values, factors[b])] for b in by]
    return [", ".join(p) for p in zip(*parts)]


def _time_text(t: Any) -> str:
    return str(np.datetime64(t, "s")).replace("T", " ")


def _series_frames(product: xr.DataTree, m: str, factors: dict[str, dict[str, Any]], k: float):
    """The bins, change points and segment levels of metric ``m``'s series, in display units."""
    series = _group(product, f"series/{m}")
    changes = _group(product, f"changes/{m}")
    s = _group(product, f"series_bins/{m}")
    by = json.loads(series.attrs.get("by", "[]"))
    table = series.to_dataframe().reset_index() if series.sizes.get("series") else pd.DataFrame(
        columns=[*by, *series.data_vars])
    table["series"] = _series_labels(table, by, factors)
    ch = changes.to_dataframe().reset_index() if changes.sizes.get("change") else pd.DataFrame(
        columns=[*by, *changes.data_vars])
    ch["series"] = _series_labels(ch, by, factors)
    bins = s[["median", "p10", "p90", "n"]].to_dataframe().reset_index()
    bins["series"] = _series_labels(bins, by, factors)
    bins = bins[bins["series"].isin(set(table["series"]))]
    frames = []
    for label, part in bins.groupby("series", sort=False):
        part = part.sort_values("time")
        has = part["n"].to_numpy() > 0
        frames.append(part.assign(segment=[f"{label} {i}" for i in np.cumsum(~has)])[has])
    bins = pd.concat(frames) if frames else bins.assign(segment=[])
    for key in ("median", "p10", "p90"):
        bins[key] = bins[key] * k
    for key in ("before", "after", "shift", "shift_lower", "shift_upper"):
        ch[key] = ch[key].astype(float) * k
    levels = []
    step = np.timedelta64(int(s.attrs.get("bin_s", 1)), "s")
    for label, part in ch.sort_values("time").groupby("series", sort=False):
        own = bins[bins["series"] == label]
        if own.empty:
            continue
        edges = [own["time"].min(), *part["time"], own["time"].max() + step]
        values = [part["before"].iloc[0], *part["after"]]
        levels += [{"series": label, "time": a, "end": b, "level": v} for a, b, v in zip(edges[:-1], edges[1:], values)]
    return table, ch, bins, pd.DataFrame(levels, columns=["series", "time", "end", "level"]), by, series.attrs


def design_changes(product: xr.DataTree) -> Any:
    """For a design over time: each series' (cell's) change points, found as the monitor
    finds them, marked on its series, with a table of the changes (before -> after, shift
    and ratio with their intervals) and each series' daily cycle; nothing for a design
    without time (it has no period)."""
    d = _design(product)
    if not d.attrs.get("time"):
        return None
    factors = _factors(product)
    names = [m for m in _metrics(product) if _group(product, f"series/{m}") is not None]
    if not names:
        return Markdown("## Changes over time\n\nNo run reported a throughput, RTT, loss or jitter: no series to search.")
    result: Any = None
    for m in names:
        what, unit, k = METRICS[m]
        table, ch, bins, levels, by, attrs = _series_frames(product, m, factors, k)
        settings = json.loads(attrs.get("change_params", "{}"))
        confidence = float(settings.get("confidence", 0.95))
        heading = f"## Changes over time: {what}"
        for part in _change_section(heading, what, unit, k, confidence, table, ch, bins, levels, by, attrs, settings):
            if result is not None:
                display(result)
            result = part
    return result


def _change_section(heading, what, unit, k, confidence, table, ch, bins, levels, by, attrs, settings):
    """The items of one metric's changes section, in order."""
    if table.empty:
        yield Markdown(f"{heading}\n\nNo run reported a {what}: no series to search.")
        return
    n_series, n_cells = int(attrs.get("n_series", len(table))), int(attrs.get("n_cells", len(table)))
    pooled = json.loads(attrs.get("pooled", "[]"))
    cells = (f"each cell of {', '.join(by)}" if by else "all runs as one series") + (
        f" ({n_series} of {n_cells} cells, those with most runs)" if n_series < n_cells else "")
    rule = (f"segments of at least {int(settings.get('min_size', 5))} runs, a change costs "
            f"{number_text(settings.get('penalty', 3))} x log(n)")
    enough = table["n"].astype(int) >= 2 * int(settings.get("min_size", 5))
    if not enough.any():
        yield Markdown(f"{heading}\n\nNo series has the {2 * int(settings.get('min_size', 5))} runs a change point "
                       f"needs (the most: {int(table['n'].max())}): no change to find.")
        return
    if ch.empty:
        yield Markdown(f"{heading}\n\nNo change found in {int(enough.sum())} series ({cells}; {rule}"
                       + (f"; pooled over {', '.join(pooled)}" if pooled else "") + ").")
    else:
        yield Markdown(f"{heading}\n\nThe level of {cells} over time; a change point is where it shifts "
                       f"(PELT with the monitor's settings: {rule}; a shift whose {confidence:.0%} interval "
                       "holds 0 is dropped)." + (f" Pooled over {', '.join(pooled)}." if pooled else ""))
        order = list(dict.fromkeys([*ch["series"], *table["series"]]))[:MAX_SERIES_PANELS]
        if len(table) > MAX_SERIES_PANELS:
            yield Markdown(f"The {len(order)} of {len(table)} series drawn are those with changes first.")
        yield charts_design.series_changes(bins[bins["series"].isin(order)], ch[ch["series"].isin(order)],
                                           levels[levels["series"].isin(order)], unit, what, order=order)
        rows = pd.DataFrame({
            "series": ch["series"], "change (UTC)": [_time_text(t) for t in ch["time"]],
            f"{confidence:.0%} bounds (UTC)": [f"{_time_text(a)} – {_time_text(b)}" for a, b in zip(ch["time_lower"], ch["time_upper"])],
            f"before → after ({unit})": [f"{number_text(a)} → {number_text(b)}" for a, b in zip(ch["before"], ch["after"])],
            f"shift ({unit}, {confidence:.0%} CI)": [f"{_signed(v)} ({_signed(a)} … {_signed(b)})"
                                                    for v, a, b in zip(ch["shift"], ch["shift_lower"], ch["shift_upper"])],
            f"after / before ({confidence:.0%} CI)": [f"{number_text(v)} ({_range(a, b)})"
                                                     for v, a, b in zip(ch["ratio"], ch["ratio_low"], ch["ratio_high"])]})
        yield HTML(rows.head(MAX_TABLE_ROWS).to_html(index=False))
    measured = table[np.isfinite(table["cycle_power"].astype(float))]
    if measured.empty:
        yield Markdown(f"### Daily cycle: {what}\n\n{_no_cycle(table, attrs)}")
        return
    yield Markdown(f"### Daily cycle: {what}\n\nThe share of each series' variance a 24 h sinusoid explains "
                   "(levels between change points removed), its false-alarm probability, and the daily "
                   "profile's range; a cycle where that probability is at most 0.01 is removed before the search.")
    yield HTML(pd.DataFrame({
        "series": measured["series"], "runs": measured["n"].astype(int),
        "power at 24 h": [f"{v:.0%}" for v in measured["cycle_power"]],
        "false-alarm probability": [number_text(v, 2) for v in measured["cycle_false_alarm"]],
        f"amplitude ({unit})": [number_text(v * k) for v in measured["cycle_amplitude"].astype(float)],
        "relative amplitude": [f"{v:.0%}" if np.isfinite(v) else DASH for v in measured["cycle_relative_amplitude"]],
    }).head(MAX_TABLE_ROWS).to_html(index=False))


def _signed(value: float) -> str:
    text = number_text(value)
    return f"+{text}" if text != DASH and float(value) > 0 else text


def _no_cycle(table: pd.DataFrame, attrs: Mapping[str, Any]) -> str:
    """Why no series has a daily cycle measured, in one line."""
    span, runs = float(attrs.get("cycle_min_span_s", 172800)), int(attrs.get("cycle_min_runs", 10))
    longest = float(table["span_s"].astype(float).max())
    if longest < span:
        return (f"No daily cycle measured: the longest series spans {duration(longest)}, "
                f"less than {duration(span)}.")
    return (f"No daily cycle measured: no series that spans {duration(span)} has the {runs} runs "
            "a periodogram needs.")


def _duration_text(seconds: float) -> str:
    s = float(seconds)
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if s >= 2 * size:
            return f"{number_text(s / size)} {unit}"
    return f"{number_text(s)} s"


def design_statistics(product: xr.DataTree) -> Any:
    """The statistics section of a design page: what was varied, then each level."""
    display(design_factors(product))
    return design_levels(product)


def design_charts(product: xr.DataTree) -> Any:
    """Every chart section of a design page, displayed in order (a design over time ends
    with its changes)."""
    for part in (design_small_multiples, design_comparisons, design_plateaus, design_failures):
        display(part(product))
    if not _design(product).attrs.get("time"):
        return design_time(product)
    display(design_time(product))
    return design_changes(product)
