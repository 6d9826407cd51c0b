"""Charts of a monitor campaign's page: time series with bands, daily profile,
distributions per period, socket-buffer curves.

Every chart takes a tidy DataFrame made by :mod:`thruput.report.monitor` from the
campaign's statistics product; nothing here computes a statistic. Gaps stay gaps: a
line is drawn per ``segment`` (a run of consecutive non-empty bins), so no line
crosses slots that did not run (seed 004 drew its maintenance gap as straight lines).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

import altair as alt
import pandas as pd

__all__ = ["CATEGORY_RANGE", "series_color", "time_series", "daily_profile",
           "period_distributions", "buffer_curves", "udp_loss", "MARKERS"]

#: A categorical palette readable by most colour-blind readers (Okabe & Ito 2008).
CATEGORY_RANGE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
                  "#F0E442", "#000000"]
#: Reference marks and how the legend names them.
MARKERS = {"change": "change point (bar: its 95 % bounds)", "band": "p10-p90 of the bin",
           "median": "median of the bin", "run": "one run"}
#: Statistics of the buffer curves and their dashes (the window limit dotted).
STATISTICS = ["median", "mean", "min", "max", "buffer / RTT"]
STATISTIC_DASHES = [[1, 0], [6, 2], [2, 2], [10, 3], [1, 4]]
WIDTH = 620
HEIGHT = 220
#: Legend and facet-header labels whole: a path name is never cut (Vega-Lite: 0 = no limit).
NO_LIMIT = 0
#: Facet headers of series: the whole label.
SERIES_HEADER = alt.Header(labelLimit=NO_LIMIT)


def _utc(frame, *columns):
    """Naive UTC datetime columns made explicitly UTC, so browsers do not read them as
    local time (Vega parses an ISO time without a zone as local)."""
    frame = frame.copy()
    for c in columns:
        if c in frame:
            frame[c] = pd.to_datetime(frame[c]).dt.tz_localize("UTC")
    return frame


#: Time axes in UTC, whatever the reader's time zone.
UTC_SCALE = alt.Scale(type="utc")
UTC_AXIS = alt.Axis(format="%H:%M", title="time (UTC)")


def series_color(field: str, title: str, domain: Sequence[str] | None = None) -> alt.Color:
    """Colour of a categorical field from :data:`CATEGORY_RANGE`, in ``domain`` order;
    its legend shows every label whole."""
    scale = alt.Scale(range=CATEGORY_RANGE, domain=list(domain)) if domain is not None \
        else alt.Scale(range=CATEGORY_RANGE)
    return alt.Color(f"{field}:N", title=title, scale=scale,
                     legend=alt.Legend(labelLimit=NO_LIMIT))


def time_series(bins: pd.DataFrame, runs: pd.DataFrame | None = None, changes: pd.DataFrame | None = None,
                unit: str = "Mbit/s", series: str = "series", title: str = "",
                y_title: str = "throughput") -> alt.TopLevelMixin:
    """Rolling median with its p10-p90 band, runs as points, change points as rules.

    Parameters
    ----------
    bins : pandas.DataFrame
        ``time``, ``median``, ``p10``, ``p90`` (in ``unit``), ``n``, ``segment`` and
        ``series`` (label): non-empty bins only; ``segment`` changes across a gap.
    runs : pandas.DataFrame, optional
        ``time``, ``value`` (``unit``), ``series``, ``outcome``: every run.
    changes : pandas.DataFrame, optional
        ``time``, ``time_lower``, ``time_upper``, ``shift`` (``unit``), ``series``.
    """
    domain = sorted(bins[series].unique())
    # (the legend's swatch: the median's line, solid, not the runs' faint dots)
    color = series_color(series, "series", domain).legend(
        symbolType="stroke", symbolOpacity=1, symbolStrokeWidth=3, labelLimit=NO_LIMIT)
    bins = _utc(bins, "time")
    runs = _utc(runs, "time") if runs is not None else None
    changes = _utc(changes, "time", "time_lower", "time_upper") if changes is not None else None
    base = alt.Chart(bins)
    x = alt.X("time:T", scale=UTC_SCALE, axis=UTC_AXIS)
    # (the band's opacity an ordinal scale: the default scale of a one-value range gave NaN,
    # which browsers ignore, so the band was drawn opaque over its median line)
    band = base.mark_area(opacity=0.25).encode(
        x=x, y=alt.Y("p10:Q", title=f"{y_title} ({unit})"), y2="p90:Q", color=color,
        detail="segment:N", opacity=alt.Opacity("band:N", title=None, legend=alt.Legend(
            symbolType="square", symbolSize=150, symbolFillColor="#999999", symbolStrokeWidth=0),
            scale=alt.Scale(type="ordinal", range=[0.25])))
    line = base.mark_line(strokeWidth=2).encode(
        x=x, y="median:Q", color=color, detail="segment:N",
        tooltip=[alt.Tooltip("utcyearmonthdatehoursminutes(time):T", title="bin (UTC)"), alt.Tooltip("median:Q", format=".3g", title=f"median ({unit})"),
                 alt.Tooltip("p10:Q", format=".3g"), alt.Tooltip("p90:Q", format=".3g"), "n:Q", f"{series}:N"])
    layers = [band.transform_calculate(band=f"'{MARKERS['band']}'"), line]
    if runs is not None and len(runs):
        layers.insert(0, alt.Chart(runs).mark_circle(size=8, opacity=0.35).encode(
            x=x, y="value:Q", color=color,
            tooltip=[alt.Tooltip("utcyearmonthdatehoursminutesseconds(time):T", title="run (UTC)"), alt.Tooltip("value:Q", format=".3g", title=unit), "outcome:N"]))
    if changes is not None and len(changes):
        marker = alt.StrokeDash("marker:N", title=None, scale=alt.Scale(range=[[6, 3]]),
                                legend=alt.Legend(labelLimit=300))   # (its label whole)
        rules = alt.Chart(changes).transform_calculate(marker=f"'{MARKERS['change']}'")
        layers.append(rules.mark_rect(opacity=0.15, color="#555555").encode(
            x=alt.X("time_lower:T", scale=UTC_SCALE), x2="time_upper:T"))
        layers.append(rules.mark_rule(strokeWidth=1.5).encode(
            x="time:T", color=color, strokeDash=marker,
            tooltip=[alt.Tooltip("utcyearmonthdatehoursminutesseconds(time):T", title="change (UTC)"),
                     alt.Tooltip("utcyearmonthdatehoursminutesseconds(time_lower):T", title="from"),
                     alt.Tooltip("utcyearmonthdatehoursminutesseconds(time_upper):T", title="to"),
                     alt.Tooltip("shift:Q", format=".3g", title=f"shift ({unit})"), f"{series}:N"]))
    return alt.layer(*layers, title=title).properties(width=WIDTH, height=HEIGHT).resolve_scale(
        opacity="independent", strokeDash="independent")


def daily_profile(profile: pd.DataFrame, unit: str = "Mbit/s", series: str = "series", title: str = "",
                  x_title: str = "hour of day (UTC)") -> alt.TopLevelMixin:
    """Median per hour of the (possibly compressed) day with its bootstrap interval, one
    panel per period.

    ``profile``: ``hour``, ``median``, ``low``, ``high`` (``unit``), ``n``, ``series``,
    ``period``.
    """
    domain = sorted(profile[series].unique())
    color = series_color(series, "series", domain)
    base = alt.Chart(profile.dropna(subset=["median"]))
    x = alt.X("hour:O", title=x_title)
    line = base.mark_line(point=True).encode(
        x=x, y=alt.Y("median:Q", title=f"median ({unit})", scale=alt.Scale(zero=False)), color=color,
        tooltip=["hour:O", alt.Tooltip("median:Q", format=".3g"), alt.Tooltip("low:Q", format=".3g"),
                 alt.Tooltip("high:Q", format=".3g"), "n:Q", f"{series}:N"])
    bars = base.mark_errorbar(ticks=True).encode(x=x, y=alt.Y("low:Q", title=f"median ({unit})"),
                                                 y2="high:Q", color=color)
    return alt.layer(bars, line).properties(width=WIDTH // 2, height=HEIGHT).facet(
        column=alt.Column("period:N", title=None, sort=list(pd.unique(profile["period"]))), title=title)


def period_distributions(hist: pd.DataFrame, unit: str = "Mbit/s", title: str = "",
                         quantity: str = "throughput") -> alt.Chart:
    """Frequency distribution of each period, one panel per series (seed 004's histograms).

    ``hist``: ``bin_low``, ``bin_high`` (``unit``), ``fraction`` (1), ``period``, ``series``.
    """
    return alt.Chart(hist).mark_bar(opacity=0.55, binSpacing=0).encode(
        # (a binned axis labels every bin edge: tens of Gbit/s in Mbit/s overlapped)
        x=alt.X("bin_low:Q", title=f"{quantity} ({unit})", bin="binned",
                axis=alt.Axis(labelOverlap="greedy", labelSeparation=6)),
        x2="bin_high:Q",
        y=alt.Y("fraction:Q", title="fraction of the period's runs", stack=None),
        color=series_color("period", "period", sorted(hist["period"].unique())),
        tooltip=["period:N", alt.Tooltip("bin_low:Q", format=".3g"), alt.Tooltip("bin_high:Q", format=".3g"),
                 alt.Tooltip("fraction:Q", format=".2f")],
    ).properties(width=280, height=160).facet(facet=alt.Facet("series:N", title=None, header=SERIES_HEADER), columns=2,
                                               title=title)


def buffer_curves(curves: pd.DataFrame, unit: str = "Mbit/s", title: str = "") -> alt.TopLevelMixin:
    """Throughput against socket buffer per period: median, mean, min, max (seed 004).

    ``curves``: ``buffer_kib``, ``value`` (``unit``), ``statistic`` (median, mean, min,
    max, or "buffer / RTT" for the window limit of the period's median RTT),
    ``period``, ``series``.
    """
    color = series_color("period", "period")
    dash = alt.StrokeDash("statistic:N", title="statistic", legend=alt.Legend(
                              symbolType="stroke", symbolStrokeColor="#333333", symbolStrokeWidth=2),
                          scale=alt.Scale(domain=STATISTICS, range=STATISTIC_DASHES))
    measured = curves.loc[curves["statistic"] != STATISTICS[-1], "value"]
    top = float(measured.max()) * 1.15 if len(measured) else None
    base = alt.Chart().encode(
        x=alt.X("buffer_kib:Q", title="socket buffer requested (KiB)",
                scale=alt.Scale(type="log", base=2)),
        y=alt.Y("value:Q", title=f"throughput ({unit})", scale=alt.Scale(domainMax=top) if top else alt.Undefined),
        color=color,
        tooltip=["period:N", "statistic:N", "buffer_kib:Q", alt.Tooltip("value:Q", format=".3g")])
    # the points a layer of their own: a line mark with point=True draws its legend's
    # symbols as points, and the line styles of the statistic legend came out blank
    lines = base.mark_line(clip=True).encode(strokeDash=dash)
    points = base.mark_point(filled=True, clip=True, size=25).encode(detail="statistic:N")
    return alt.layer(lines, points, data=curves).properties(width=280, height=200).facet(
        facet=alt.Facet("series:N", title=None, header=SERIES_HEADER), columns=2, title=title)


#: The two rates of a UDP series and their dashes: what was offered, what arrived.
UDP_RATES = ["offered (sender)", "received (receiver)"]
UDP_RATE_DASHES = [[6, 3], [1, 0]]


def udp_loss(rates: pd.DataFrame, loss: pd.DataFrame, unit: str = "Mbit/s", series: str = "series",
             title: str = "") -> alt.VConcatChart:
    """UDP: the rate offered against the rate received per time bin (upper panel) and the
    datagrams lost (lower panel), per series.

    ``rates``: ``time``, ``value`` (``unit``), ``rate`` (one of :data:`UDP_RATES`),
    ``series``, ``segment`` (changes across empty bins); ``loss``: ``time``, ``loss``
    (percent), ``n``, ``series``, ``segment``: non-empty bins only.
    """
    domain = sorted(set(rates[series]) | set(loss[series]))
    color = series_color(series, "series", domain)
    x = alt.X("time:T", scale=UTC_SCALE, axis=UTC_AXIS)
    dash = alt.StrokeDash("rate:N", title="rate", scale=alt.Scale(domain=UDP_RATES, range=UDP_RATE_DASHES),
                          legend=alt.Legend(symbolType="stroke", symbolStrokeColor="#333333",
                                            symbolStrokeWidth=2, labelLimit=NO_LIMIT))
    top = alt.Chart(_utc(rates, "time")).mark_line(strokeWidth=2, point=alt.OverlayMarkDef(size=12)).encode(
        x=x, y=alt.Y("value:Q", title=f"median rate ({unit})"), color=color, strokeDash=dash,
        detail="segment:N",
        tooltip=[alt.Tooltip("utcyearmonthdatehoursminutes(time):T", title="bin (UTC)"), "rate:N",
                 alt.Tooltip("value:Q", format=".3g", title=f"median ({unit})"), f"{series}:N"],
    ).properties(width=WIDTH, height=HEIGHT)
    bottom = alt.Chart(_utc(loss, "time")).mark_line(strokeWidth=2, point=alt.OverlayMarkDef(size=12)).encode(
        x=x, y=alt.Y("loss:Q", title="median datagram loss (%)", scale=alt.Scale(domain=[0, 100])),
        color=color, detail="segment:N",
        tooltip=[alt.Tooltip("utcyearmonthdatehoursminutes(time):T", title="bin (UTC)"),
                 alt.Tooltip("loss:Q", format=".3g", title="median loss (%)"), "n:Q", f"{series}:N"],
    ).properties(width=WIDTH, height=HEIGHT // 2)
    return alt.vconcat(top, bottom, title=title).resolve_scale(color="shared")
