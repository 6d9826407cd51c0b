"""Charts of a design campaign's page: small multiples of a summary over the design's
factors, and each level's ratio to a reference level with its interval.

Every chart takes a tidy DataFrame made by :mod:`thruput.report.design` from the
campaign's statistics product, its levels already as text in declared order; nothing here
computes a statistic. A chart draws at most one factor as colour (up to eight levels, the
palette of :data:`thruput.charts.monitor.CATEGORY_RANGE`) and two as facets: the
product's layout (:func:`thruput.stats.design.design_layout`) chose which.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from .style import WIDTH
from .monitor import CATEGORY_RANGE, NO_LIMIT, UTC_SCALE, _utc

__all__ = ["small_multiples", "level_ratios", "level_series", "series_changes", "FACET_HEIGHT",
           "SERIES_COLUMNS"]

#: Height of one panel of small multiples (px).
FACET_HEIGHT = 200
#: Panels per row of the series with their change points.
SERIES_COLUMNS = 3
#: Colour of change points and of the levels between them.
CHANGE_COLOR = "#D55E00"
#: Axis labels of levels: slanted, whole.
LEVEL_AXIS = alt.Axis(labelAngle=-40, labelLimit=160)


def _width(columns: int) -> int:
    return max(120, int(WIDTH / max(columns, 1)) - 30)


def _color(field: str | None, domain: Sequence[str] | None):
    if field is None:
        return alt.value(CATEGORY_RANGE[0])
    return alt.Color("color:N", title=field, scale=alt.Scale(domain=list(domain or []), range=CATEGORY_RANGE),
                     legend=alt.Legend(labelLimit=NO_LIMIT, symbolOpacity=1))


def _facet(chart, data, column: str | None, row: str | None, column_order, row_order):
    facets = {}
    if column:
        facets["column"] = alt.Column("column:N", title=column, sort=list(column_order),
                                      header=alt.Header(labelLimit=NO_LIMIT))
    if row:
        facets["row"] = alt.Row("row:N", title=row, sort=list(row_order), header=alt.Header(labelLimit=NO_LIMIT))
    if not facets:
        return chart
    return chart.properties(data=data).facet(**facets)


def small_multiples(frame: pd.DataFrame, x: str, unit: str, quantity: str, *, color: str | None = None,
                    column: str | None = None, row: str | None = None, orders: dict | None = None,
                    log: bool = False, title: str = "") -> alt.TopLevelMixin:
    """Median per cell with its p10-p90 range, x by one factor, colour by another,
    columns and rows by up to two more.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per cell with runs: ``x`` (level as text), ``median``, ``p10``, ``p90``
        (in ``unit``), ``n`` (runs), and ``color``, ``column``, ``row`` (levels as text)
        where those factors are given.
    x, color, column, row : str
        The factors' names (axis, legend and header titles).
    unit, quantity : str
        The y axis: ``"<quantity> (<unit>)"``.
    orders : dict, optional
        ``"x"``, ``"color"``, ``"column"``, ``"row"`` -> levels as text in declared order.
    log : bool
        A logarithmic y axis (values spanning orders of magnitude).
    """
    orders = orders or {}
    columns = frame["column"].nunique() if column else 1
    scale = alt.Scale(type="log") if log else alt.Scale(zero=False)
    xenc = alt.X("x:N", title=x, sort=list(orders.get("x", [])), axis=LEVEL_AXIS)
    offset = {"xOffset": alt.XOffset("color:N", sort=list(orders.get("color", [])))} if color else {}
    tooltip = [alt.Tooltip("x:N", title=x), alt.Tooltip("median:Q", title=f"median ({unit})", format=".4~g"),
               alt.Tooltip("p10:Q", title=f"p10 ({unit})", format=".4~g"),
               alt.Tooltip("p90:Q", title=f"p90 ({unit})", format=".4~g"), alt.Tooltip("n:Q", title="runs")]
    tooltip += [alt.Tooltip(f"{k}:N", title=name) for k, name in (("color", color), ("column", column), ("row", row)) if name]
    enc_color = _color(color, orders.get("color"))
    base = alt.Chart() if (column or row) else alt.Chart(frame)
    rule = base.mark_rule(strokeWidth=2, opacity=0.6).encode(
        x=xenc, y=alt.Y("p10:Q", scale=scale, title=f"{quantity} ({unit})"), y2="p90:Q", color=enc_color, **offset)
    point = base.mark_point(filled=True, size=55).encode(
        x=xenc, y=alt.Y("median:Q", scale=scale), color=enc_color, tooltip=tooltip, **offset)
    layer = alt.layer(rule, point).properties(width=_width(columns), height=FACET_HEIGHT)
    chart = _facet(layer, frame, column, row, orders.get("column", []), orders.get("row", []))
    return chart.properties(title=title) if title else chart


def level_ratios(frame: pd.DataFrame, factor: str, reference: str, confidence: float, *,
                 x: str | None = None, column: str | None = None, orders: dict | None = None,
                 quantity: str = "throughput", title: str = "") -> alt.TopLevelMixin:
    """Each level of ``factor`` over ``reference``: the ratio of medians with its
    bootstrap interval, per cell of up to two other factors, on a log axis with a rule at 1.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per level and cell: ``level`` (text), ``ratio``, ``ratio_low``,
        ``ratio_high`` (1, positive), ``x`` and ``column`` (levels of the other factors
        as text, where given).
    factor, reference : str
        The factor compared and its reference level (the titles).
    orders : dict, optional
        Orders of ``level``, ``x`` and ``column``; ``colours``: the levels in the order the
        page's other charts colour them (the reference's included), for the same colours.
    confidence : float
        Coverage of the intervals (the axis title).
    """
    orders = orders or {}
    columns = frame["column"].nunique() if column else 1
    y_title = f"{quantity}, {factor} over {reference}: ratio of medians ({confidence:.0%} CI, log)"
    y = alt.Y("ratio:Q", scale=alt.Scale(type="log"), title=y_title)
    # (``orders["colours"]``: every level, the reference's included, so that a level has the
    # colour the page's other charts give it; the legend names the levels drawn)
    levels = list(orders.get("level", []))
    color = alt.Color("level:N", title=factor, scale=alt.Scale(domain=list(orders.get("colours", levels)), range=CATEGORY_RANGE),
                      legend=alt.Legend(labelLimit=NO_LIMIT, symbolOpacity=1, values=levels))
    xenc = alt.X("x:N", title=x, sort=list(orders.get("x", [])), axis=LEVEL_AXIS) if x else \
        alt.X("level:N", title=factor, sort=list(orders.get("level", [])), axis=LEVEL_AXIS)
    offset = {"xOffset": alt.XOffset("level:N", sort=list(orders.get("level", [])))} if x else {}
    tooltip = [alt.Tooltip("level:N", title=factor), alt.Tooltip("ratio:Q", format=".3~g"),
               alt.Tooltip("ratio_low:Q", title=f"{confidence:.0%} CI low", format=".3~g"),
               alt.Tooltip("ratio_high:Q", title=f"{confidence:.0%} CI high", format=".3~g")]
    tooltip += [alt.Tooltip(f"{k}:N", title=name) for k, name in (("x", x), ("column", column)) if name]
    base = alt.Chart() if column else alt.Chart(frame)
    rule = base.mark_rule(strokeWidth=2).encode(
        x=xenc, y=alt.Y("ratio_low:Q", scale=alt.Scale(type="log"), title=y_title), y2="ratio_high:Q",
        color=color, **offset)
    point = base.mark_point(filled=True, size=60).encode(x=xenc, y=y, color=color, tooltip=tooltip, **offset)
    reference_rule = base.mark_rule(color="black", strokeDash=[2, 2]).encode(y=alt.datum(1.0))
    layers = [reference_rule, rule, point]
    layer = alt.layer(*layers).properties(width=_width(columns), height=FACET_HEIGHT)
    chart = _facet(layer, frame, column, None, orders.get("column", []), [])
    return chart.properties(title=title) if title else chart


def level_series(bins: pd.DataFrame, unit: str, quantity: str, *, series: str | None = None,
                 order: Sequence[str] | None = None, row: str | None = None,
                 row_order: Sequence[str] | None = None, title: str = "") -> alt.TopLevelMixin:
    """Median per time bin with its p10-p90 band, one line per level of ``series`` and one
    chart per level of ``row``; a line breaks where a bin has no runs.

    Parameters
    ----------
    bins : pandas.DataFrame
        Non-empty bins: ``time`` (bin start, UTC), ``median``, ``p10``, ``p90`` (``unit``),
        ``n`` (runs), ``series`` (a level as text) and ``segment`` (changes across an empty
        bin).
    series : str, optional
        The factor whose levels are the lines (the legend's title).
    order : sequence of str, optional
        The levels in declared order (their colours).
    row, row_order : str and sequence of str, optional
        The factor whose levels (``bins["row"]``, text) are the rows, and their order.
    """
    bins = _utc(bins, "time")
    color = alt.Color("series:N", title=series or "runs", scale=alt.Scale(domain=list(order or bins["series"].unique()),
                                                                         range=CATEGORY_RANGE),
                      legend=alt.Legend(labelLimit=NO_LIMIT, symbolType="stroke", symbolStrokeWidth=3,
                                        symbolOpacity=1))
    # (24-hour labels: Vega's default writes 15:14 as "03:14"; dates when the span is longer)
    span = bins["time"].max() - bins["time"].min() if len(bins) else pd.Timedelta(0)
    x = alt.X("time:T", scale=UTC_SCALE, axis=alt.Axis(
        title="time (UTC)", format="%H:%M" if span < pd.Timedelta(days=1) else "%Y-%m-%d %H:%M"))
    base = alt.Chart() if row else alt.Chart(bins)
    band = base.mark_area(opacity=0.2).encode(x=x, y=alt.Y("p10:Q", title=f"{quantity} ({unit})"), y2="p90:Q",
                                              color=color, detail="segment:N")
    line = base.mark_line(strokeWidth=2, point=alt.OverlayMarkDef(size=12)).encode(
        x=x, y="median:Q", color=color, detail="segment:N",
        tooltip=[alt.Tooltip("utcyearmonthdatehoursminutes(time):T", title="bin (UTC)"),
                 alt.Tooltip("median:Q", format=".4~g", title=f"median ({unit})"),
                 alt.Tooltip("p10:Q", format=".4~g", title=f"p10 ({unit})"),
                 alt.Tooltip("p90:Q", format=".4~g", title=f"p90 ({unit})"),
                 alt.Tooltip("n:Q", title="runs"), alt.Tooltip("series:N", title=series or "runs")])
    chart = alt.layer(band, line).properties(width=WIDTH, height=FACET_HEIGHT + (0 if row else 60))
    chart = _facet(chart, bins, None, row, [], list(row_order or bins["row"].unique())) if row else chart
    return chart.properties(title=title) if title else chart


def series_changes(bins: pd.DataFrame, changes: pd.DataFrame, levels: pd.DataFrame, unit: str, quantity: str,
                   *, order: Sequence[str], title: str = "") -> alt.TopLevelMixin:
    """One panel per series: its median per time bin with the p10-p90 band, each change
    point as a rule over the shaded interval of its time, and the level (median) of each
    segment between change points.

    Parameters
    ----------
    bins : pandas.DataFrame
        Non-empty bins: ``time``, ``median``, ``p10``, ``p90`` (``unit``), ``n``,
        ``series`` (label) and ``segment`` (changes across an empty bin).
    changes : pandas.DataFrame
        ``time``, ``time_lower``, ``time_upper``, ``before``, ``after`` (``unit``),
        ``ratio`` (1), ``series``.
    levels : pandas.DataFrame
        ``time``, ``end``, ``level`` (``unit``), ``series``: a series' segments.
    order : sequence of str
        The series drawn, in panel order.
    """
    frames = [_utc(bins.assign(layer="bin"), "time"),
              _utc(levels.assign(layer="level"), "time", "end"),
              _utc(changes[["time", "time_lower", "time_upper", "before", "after", "ratio", "series"]]
                   .assign(layer="change"), "time", "time_lower", "time_upper")]
    data = pd.concat([f for f in frames if len(f)], ignore_index=True)
    x = alt.X("time:T", scale=UTC_SCALE, axis=alt.Axis(title="time (UTC)"))
    y_title = f"{quantity} ({unit})"
    base = alt.Chart()
    band = base.transform_filter(alt.datum.layer == "bin").mark_area(opacity=0.2, color=CATEGORY_RANGE[0]).encode(
        x=x, y=alt.Y("p10:Q", title=y_title, scale=alt.Scale(zero=False)), y2="p90:Q", detail="segment:N")
    line = base.transform_filter(alt.datum.layer == "bin").mark_line(
        strokeWidth=1.5, color=CATEGORY_RANGE[0], point=alt.OverlayMarkDef(size=10)).encode(
        x=x, y=alt.Y("median:Q", title=y_title), detail="segment:N",
        tooltip=[alt.Tooltip("utcyearmonthdatehoursminutes(time):T", title="bin (UTC)"),
                 alt.Tooltip("median:Q", format=".4~g", title=f"median ({unit})"), alt.Tooltip("n:Q", title="runs")])
    level = base.transform_filter(alt.datum.layer == "level").mark_rule(
        strokeWidth=2.5, color=CHANGE_COLOR, opacity=0.8).encode(
        x=x, x2="end:T", y=alt.Y("level:Q", title=y_title),
        tooltip=[alt.Tooltip("level:Q", format=".4~g", title=f"segment median ({unit})")])
    interval = base.transform_filter(alt.datum.layer == "change").mark_rect(opacity=0.15, color="#555555").encode(
        x=alt.X("time_lower:T", scale=UTC_SCALE), x2="time_upper:T")
    rule = base.transform_filter(alt.datum.layer == "change").mark_rule(
        strokeWidth=1.5, strokeDash=[6, 3], color=CHANGE_COLOR).encode(
        x=x, tooltip=[alt.Tooltip("utcyearmonthdatehoursminutesseconds(time):T", title="change (UTC)"),
                      alt.Tooltip("before:Q", format=".4~g", title=f"before ({unit})"),
                      alt.Tooltip("after:Q", format=".4~g", title=f"after ({unit})"),
                      alt.Tooltip("ratio:Q", format=".3~g", title="after / before")])
    layer = alt.layer(band, line, level, interval, rule).properties(width=_width(SERIES_COLUMNS), height=FACET_HEIGHT)
    chart = layer.properties(data=data).facet(
        facet=alt.Facet("series:N", title=None, sort=list(order), header=alt.Header(labelLimit=NO_LIMIT)),
        columns=min(SERIES_COLUMNS, max(len(order), 1))).resolve_scale(y="independent")
    return chart.properties(title=title) if title else chart
