"""Charts of a source study's published figures (the study pages, :mod:`thruput.report.studies`):
printed values as dots and ranges, theory curves with the figures on them, bars per
category, slopes, and a published chart beside a new measurement. Everything they show
was transcribed into ``data/published/`` or derived by :mod:`thruput.reproduce`."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from .ledger import STATUS_DOMAIN, STATUS_RANGE, status_values
from .style import HEIGHT, WHOLE_LABELS, WIDTH, log_ticks, tick_format

__all__ = ["range_dots", "theory_points", "grouped_ranges", "category_bars", "slope_dots", "side_by_side",
           "PAIR_WIDTH"]

#: Width of one chart of a side-by-side pair (two fit the page with their legends below).
PAIR_WIDTH = 400


def _scale(kind, zero=True):
    if kind == "log":
        return alt.Scale(type="log", nice=False, padding=10)
    if kind == "symlog":
        return alt.Scale(type="symlog")
    return alt.Scale(zero=zero)


def _axis(kind, values, title=None):
    """An axis whose labels never collide: 1-2-5 ticks on log and symlog scales (Vega's own
    crowd into "300400"), and overlapping labels dropped on any scale."""
    kwargs = {"labelOverlap": "greedy", "labelSeparation": 6}
    if title is not None:
        kwargs["title"] = title
    if kind in ("log", "symlog"):
        vals = pd.to_numeric(pd.Series(np.ravel(values)), errors="coerce")
        vals = vals[vals > 0]
        if len(vals):
            kwargs.update(values=log_ticks(vals.min(), vals.max()), format=tick_format(vals.min()))
    return alt.Axis(**kwargs)


def range_dots(points: pd.DataFrame, ranges: pd.DataFrame | None = None, unit: str = "", title: str = "",
               scale: str = "linear", range_label: str = "range", zero: bool = True) -> alt.TopLevelMixin:
    """Order statistics per category as dots, with an optional range bar behind them.

    ``points``: ``category``, ``statistic`` (legend: "mean", "median", ...), ``value`` (in
    ``unit``), ``status`` (ledger status of the printed value), ``quote``.
    ``ranges``: ``category``, ``low``, ``high`` (in ``unit``), ``what`` (what the bar is).
    Values whose status is ``erratum`` or ``differs`` get a ring in the status colour.
    ``zero``: start a linear axis at zero (False for values far from it, such as RTTs of
    one path whose spread is the point).
    """
    spread = [points["value"]] + ([ranges["low"], ranges["high"]] if ranges is not None and len(ranges) else [])
    axis = _axis(scale, np.concatenate([np.asarray(v, float) for v in spread]))
    x = alt.X("value:Q", title=f"{unit}", scale=_scale(scale, zero), axis=axis)
    y = alt.Y("category:N", title=None, sort=list(dict.fromkeys(points["category"])), axis=WHOLE_LABELS)
    layers = []
    if ranges is not None and len(ranges):
        layers.append(alt.Chart(ranges).mark_bar(height=10, opacity=0.3, color="#4c78a8").encode(
            x=alt.X("low:Q", title=unit, scale=_scale(scale, zero), axis=axis), x2="high:Q", y=y,
            tooltip=[alt.Tooltip("category:N"), alt.Tooltip("what:N", title=range_label),
                     alt.Tooltip("low:Q", title=f"from ({unit})", format=".4~g"),
                     alt.Tooltip("high:Q", title=f"to ({unit})", format=".4~g")]))
    tooltip = [alt.Tooltip("category:N"), alt.Tooltip("statistic:N"),
               alt.Tooltip("value:Q", title=f"value ({unit})", format=".4~g"),
               alt.Tooltip("status:N", title="ledger status"), alt.Tooltip("quote:N", title="printed")]
    layers.append(alt.Chart(points).mark_point(filled=True, size=70).encode(
        x=x, y=y, shape=alt.Shape("statistic:N", title="statistic"),
        color=alt.Color("statistic:N", title="statistic", scale=alt.Scale(scheme="dark2")),
        tooltip=tooltip))
    flagged = points[points["status"].isin(["erratum", "differs"])]
    if len(flagged):
        layers.append(alt.Chart(flagged).mark_point(size=300, strokeWidth=2, filled=False).encode(
            x=x, y=y, stroke=alt.Stroke("status:N", title="flagged",
                                        scale=alt.Scale(domain=STATUS_DOMAIN[:2], range=STATUS_RANGE[:2]),
                                        legend=alt.Legend(values=status_values(flagged["status"]))),
            tooltip=tooltip))
    height = max(60, 34 * points["category"].nunique())
    return alt.layer(*layers, title=title).properties(width=WIDTH, height=height)


def theory_points(curves: pd.DataFrame, points: pd.DataFrame | None = None, x_title: str = "",
                  y_title: str = "", x_scale: str = "linear", y_scale: str = "linear",
                  vrules: pd.DataFrame | None = None, hrules: pd.DataFrame | None = None, title: str = "",
                  width: int = WIDTH) -> alt.TopLevelMixin:
    """Theory curves as lines, published figures as dots on them.

    ``curves``: ``x``, ``y``, ``label`` (legend text of the curve).
    ``points``: ``x``, ``y``, ``what`` (short label), ``status``, ``quote``.
    ``vrules`` / ``hrules``: ``x`` resp. ``y`` and ``label``: published settings or
    statements drawn as dashed rules with their label.
    """
    xs, ys = _scale(x_scale), _scale(y_scale)
    frames = [f for f in (curves, points) if f is not None and len(f)]
    xv, yv = [f["x"] for f in frames] or [[]], [f["y"] for f in frames] or [[]]
    x = alt.X("x:Q", title=x_title, scale=xs, axis=_axis(x_scale, np.concatenate([np.asarray(v, float) for v in xv])))
    y = alt.Y("y:Q", title=y_title, scale=ys, axis=_axis(y_scale, np.concatenate([np.asarray(v, float) for v in yv])))
    layers = []
    if curves is not None and len(curves):
        layers.append(alt.Chart(curves).mark_line(strokeWidth=2).encode(
            x=x, y=y, color=alt.Color("label:N", title="theory", scale=alt.Scale(scheme="tableau10"),
                                      legend=alt.Legend(orient="bottom", direction="vertical", columns=1,
                                                        labelLimit=420)),
            tooltip=[alt.Tooltip("label:N", title="curve"), alt.Tooltip("x:Q", title=x_title, format=".4~g"),
                     alt.Tooltip("y:Q", title=y_title, format=".4~g")]))
    for rules, axis in ((vrules, "x"), (hrules, "y")):
        if rules is None or not len(rules):
            continue
        enc = {axis: alt.X("x:Q", scale=xs) if axis == "x" else alt.Y("y:Q", scale=ys)}
        base = alt.Chart(rules)
        layers.append(base.mark_rule(strokeDash=[5, 4], color="#555").encode(
            **enc, tooltip=[alt.Tooltip("label:N", title="published"),
                            alt.Tooltip(f"{axis}:Q", title=x_title if axis == "x" else y_title, format=".4~g")]))
        if axis == "x":   # rotated, reading upwards, hanging from the top inside the plot
            text = base.mark_text(align="right", baseline="bottom", angle=270, dx=-4, dy=-2, fontSize=10, color="#333")
            layers.append(text.encode(x=enc["x"], y=alt.value(0), text="label:N"))
        else:
            text = base.mark_text(align="left", baseline="bottom", dx=3, dy=-3, fontSize=10, color="#333")
            layers.append(text.encode(y=enc["y"], x=alt.value(0), text="label:N"))
    if points is not None and len(points):
        layers.append(alt.Chart(points).mark_point(filled=True, size=90, stroke="black", strokeWidth=0.7).encode(
            x=x, y=y, fill=alt.Fill("status:N", title="published figure", scale=alt.Scale(
                domain=STATUS_DOMAIN, range=STATUS_RANGE), legend=alt.Legend(values=status_values(points["status"]))),
            shape=alt.value("diamond"),
            tooltip=[alt.Tooltip("what:N", title="published"), alt.Tooltip("x:Q", title=x_title, format=".4~g"),
                     alt.Tooltip("y:Q", title=y_title, format=".4~g"), alt.Tooltip("status:N", title="ledger status"),
                     alt.Tooltip("quote:N", title="printed")]))
    return alt.layer(*layers, title=title).properties(width=width, height=HEIGHT).resolve_scale(color="independent")


def grouped_ranges(cells: pd.DataFrame, unit: str = "Mbit/s", title: str = "") -> alt.TopLevelMixin:
    """Bars per application and TCP stack, one panel per network; printed ranges as rules.

    ``cells``: ``app``, ``stack``, ``network``, ``low``, ``high``, ``mid`` (in ``unit``).
    """
    stacks = list(dict.fromkeys(cells["stack"]))
    color = alt.Color("stack:N", title="TCP stack", scale=alt.Scale(domain=stacks, range=["#4c78a8", "#f58518", "#54a24b"]))
    x = alt.X("app:N", title=None, sort=list(dict.fromkeys(cells["app"])))
    tooltip = [alt.Tooltip("network:N"), alt.Tooltip("app:N", title="application"), alt.Tooltip("stack:N"),
               alt.Tooltip("low:Q", title=f"low ({unit})"), alt.Tooltip("high:Q", title=f"high ({unit})")]
    bars = alt.Chart().mark_bar().encode(
        x=x, xOffset=alt.XOffset("stack:N", sort=stacks),
        y=alt.Y("mid:Q", title=f"average transfer rate ({unit})", scale=alt.Scale(zero=True)),
        color=color, tooltip=tooltip)
    rules = alt.Chart().transform_filter("datum.low != datum.high").mark_rule(strokeWidth=2, color="black").encode(
        x=x, xOffset=alt.XOffset("stack:N", sort=stacks), y="low:Q", y2="high:Q", tooltip=tooltip)
    return alt.layer(bars, rules, data=cells).properties(width=200, height=HEIGHT).facet(
        column=alt.Column("network:N", title=None, sort=list(dict.fromkeys(cells["network"]))), title=title)


def category_bars(bars: pd.DataFrame, unit: str = "", title: str = "", color_title: str = "kind",
                  hrules: pd.DataFrame | None = None, scale: str = "linear") -> alt.TopLevelMixin:
    """Horizontal bars of one printed value per category, coloured by kind.

    ``bars``: ``category``, ``value`` (in ``unit``), ``kind``, ``status``, ``quote``;
    optional ``detail`` shown in the tooltip. ``hrules``: ``value``, ``label`` drawn as
    dashed rules (a capacity, a goal). ``scale``: "linear" (from zero) or "log".
    """
    tooltip = [alt.Tooltip("category:N"), alt.Tooltip("value:Q", title=f"value ({unit})", format=".4~g"),
               alt.Tooltip("status:N", title="ledger status"), alt.Tooltip("quote:N", title="printed")]
    if "detail" in bars:
        tooltip.append(alt.Tooltip("detail:N", title="also"))
    y = alt.Y("category:N", title=None, sort=None, axis=WHOLE_LABELS)
    x = {"x": alt.X("value:Q", title=unit, scale=_scale(scale), axis=_axis(scale, bars["value"]))}
    if scale == "log":   # a bar from zero has no end on a log axis: start it a decade below the smallest
        bars = bars.assign(base=10 ** np.floor(np.log10(bars["value"].min())))
        x["x2"] = "base:Q"  # type: ignore[assignment]
    layers = [alt.Chart(bars).mark_bar().encode(
        y=y, **x, color=alt.Color("kind:N", title=color_title), tooltip=tooltip)]
    if hrules is not None and len(hrules):
        layers.append(alt.Chart(hrules).mark_rule(strokeDash=[5, 4], color="#333").encode(
            x="value:Q", tooltip=[alt.Tooltip("label:N", title="reference"),
                                  alt.Tooltip("value:Q", title=unit, format=".4~g")]))
        layers.append(alt.Chart(hrules).mark_text(angle=270, align="right", baseline="bottom", dx=-4, dy=-2,
                                                  fontSize=10).encode(x="value:Q", y=alt.value(0), text="label:N"))
    return alt.layer(*layers, title=title).properties(width=WIDTH, height=max(80, 26 * len(bars)))


def slope_dots(slopes: pd.DataFrame,
               title: str = "UDPmon latency slope per board: measured and expected") -> alt.TopLevelMixin:
    """Measured vs expected latency slopes (us/byte), one row per board and PCI bus.

    ``slopes``: ``board`` (label), ``kind`` ("measured", "expected (printed)",
    "expected (PCI + GigE + PCI)"), ``slope`` (us/byte), ``status``.
    """
    kinds = list(dict.fromkeys(slopes["kind"]))
    y = alt.Y("board:N", title=None, sort=list(dict.fromkeys(slopes["board"])), axis=WHOLE_LABELS)
    x = alt.X("slope:Q", title="latency slope (us/byte)", scale=alt.Scale(zero=True))
    rules = alt.Chart(slopes).mark_rule(color="#bbb").encode(y=y, x="min(slope):Q", x2="max(slope):Q")
    dots = alt.Chart(slopes).mark_point(filled=True, size=110).encode(
        y=y, x=x, color=alt.Color("kind:N", title=None, legend=alt.Legend(labelLimit=320),
                                  scale=alt.Scale(domain=kinds, range=["#e45756", "#4c78a8", "#72b7b2"])),
        shape=alt.Shape("kind:N", title=None, scale=alt.Scale(domain=kinds, range=["circle", "diamond", "triangle-up"])),
        tooltip=[alt.Tooltip("board:N"), alt.Tooltip("kind:N"), alt.Tooltip("slope:Q", title="us/byte", format=".5f"),
                 alt.Tooltip("status:N", title="ledger status")])
    return alt.layer(rules, dots, title=title).properties(width=WIDTH, height=40 * slopes["board"].nunique())


def side_by_side(published: alt.TopLevelMixin, measured: alt.TopLevelMixin, published_title: str,
                 measured_title: str) -> alt.HConcatChart:
    """Two charts next to each other: a study's published figure and a new measurement.

    The titles say which is which; scales are independent (different hardware, different
    numbers): the point is the shape of the effect, not the values.
    """
    left = published.properties(width=PAIR_WIDTH, title=alt.TitleParams(
        published_title, subtitle="published figures and theory", color="#243447"))
    right = measured.properties(width=PAIR_WIDTH, title=alt.TitleParams(
        measured_title, subtitle="NEW measurement, different hardware: not the original data", subtitleColor="#b35900",
        color="#b35900"))
    return alt.hconcat(left, right, spacing=40).resolve_scale(  # type: ignore[arg-type]
        color="independent", fill="independent", shape="independent", size="independent", stroke="independent",
        strokeDash="independent", x="independent", y="independent").configure_legend(
        orient="bottom", direction="vertical", columns=2, labelLimit=300)
