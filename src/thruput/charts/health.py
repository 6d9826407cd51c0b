"""Charts of a monitor campaign's health page: the MaDDash grid, the alert state of every
slot, SmokePing-style latency, and throughput against delay (Pantheon's view).

Every chart takes a tidy DataFrame made by :mod:`thruput.report.health` from the
pipeline's health and rollup products; nothing here computes a statistic.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from .monitor import CATEGORY_RANGE, UTC_AXIS, UTC_SCALE, _utc

__all__ = ["grid", "state_strip", "smokeping", "throughput_delay", "STATE_COLORS", "LOSS_COLORS"]

#: Colours of the states (MaDDash: green ok, red critical, grey unknown; amber pending).
STATE_COLORS = {"ok": "#009E73", "pending": "#E69F00", "breach": "#D55E00", "no data": "#BBBBBB"}
#: SmokePing's loss colours: the median's colour by the bin's loss fraction (upper edges).
LOSS_COLORS = {"0": "#00B000", "< 5 %": "#0072B2", "5-20 %": "#7A3DBF", "20-50 %": "#CC79A7",
               ">= 50 %": "#D00000"}
WIDTH = 620


def _state_scale(states=tuple(STATE_COLORS)):
    return alt.Scale(domain=list(states), range=[STATE_COLORS[s] for s in states])


def grid(cells: pd.DataFrame, title: str = "") -> alt.Chart:
    """MaDDash's grid: rows sources, columns destinations, one cell per path and
    direction, coloured by its state now and linking to ``href``.

    ``cells``: ``source``, ``destination``, ``state``, ``since``, ``path``,
    ``direction``, ``breaches``, ``href``.
    """
    n_cols = max(1, cells["destination"].nunique())
    size = max(18, min(60, 600 // n_cols))
    base = alt.Chart(cells, title=title).encode(
        x=alt.X("destination:N", title="destination", axis=alt.Axis(orient="top", labelAngle=-45)),
        y=alt.Y("source:N", title="source"))
    rect = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("state:N", scale=_state_scale(("ok", "breach", "no data")), title="state now"),
        href="href:N",
        tooltip=["path:N", "direction:N", "state:N", "since:N", "breaches:N"])
    return rect.properties(width=size * n_cols, height=size * max(1, cells["source"].nunique()))


def state_strip(states: pd.DataFrame, title: str = "") -> alt.Chart:
    """The state of every slot, one row per rule and series: when each breach began and
    ended. ``states``: ``time``, ``end``, ``row``, ``state``, ``value``, ``threshold``
    (a rectangle may span several slots of one state: ``slots``, ``value`` their median)."""
    states = _utc(states, "time", "end")
    return alt.Chart(states, title=title).mark_rect().encode(
        x=alt.X("time:T", scale=UTC_SCALE, axis=UTC_AXIS), x2="end:T",
        y=alt.Y("row:N", title=None, axis=alt.Axis(labelLimit=420)),
        color=alt.Color("state:N", scale=_state_scale(), title="slot state"),
        tooltip=[alt.Tooltip("time:T", format="%Y-%m-%d %H:%M", title="from (UTC)"),
                 alt.Tooltip("end:T", format="%Y-%m-%d %H:%M", title="to (UTC)"), "state:N",
                 *([alt.Tooltip("slots:Q")] if "slots" in states else []),
                 alt.Tooltip("value:Q", format=".4g", title="value (median)"),
                 alt.Tooltip("threshold:Q", format=".4g")],
    ).properties(width=WIDTH, height=alt.Step(16))


def smokeping(bins: pd.DataFrame, unit: str = "ms", y_title: str = "RTT", title: str = "",
              events: pd.DataFrame | None = None) -> alt.TopLevelMixin:
    """SmokePing's view of one series: per time bin, the p10-p90 and p25-p75 bands (the
    "smoke"), the median as a line, its points coloured by the bin's loss.

    ``bins``: ``time``, ``end``, ``median``, ``p10``, ``p25``, ``p75``, ``p90``, ``loss``
    (fraction), ``loss_class`` (a key of :data:`LOSS_COLORS`), ``n``, ``segment``.
    """
    bins = _utc(bins, "time", "end")
    y = alt.Y("median:Q", title=f"{y_title} ({unit})", scale=alt.Scale(zero=False))
    base = alt.Chart(bins).encode(x=alt.X("time:T", scale=UTC_SCALE, axis=UTC_AXIS))
    outer = base.mark_rect(color="#888888", opacity=0.25).encode(
        x2="end:T", y=alt.Y("p10:Q", title=f"{y_title} ({unit})"), y2="p90:Q")
    inner = base.mark_rect(color="#555555", opacity=0.35).encode(x2="end:T", y="p25:Q", y2="p75:Q")
    line = base.mark_line(color="#333333", strokeWidth=1).encode(y=y, detail="segment:N")
    points = base.mark_point(filled=True, size=28).encode(
        y=y, color=alt.Color("loss_class:N", title="loss in the bin",
                             scale=alt.Scale(domain=list(LOSS_COLORS), range=list(LOSS_COLORS.values()))),
        tooltip=[alt.Tooltip("time:T", format="%Y-%m-%d %H:%M", title="bin (UTC)"),
                 alt.Tooltip("median:Q", format=".4g"), alt.Tooltip("p10:Q", format=".4g"),
                 alt.Tooltip("p90:Q", format=".4g"), alt.Tooltip("loss:Q", format=".2%"), "n:Q"])
    layers = [outer, inner, line, points]
    if events is not None and len(events):
        ev = _utc(events, "time")
        layers.append(alt.Chart(ev).mark_rule(color="#D55E00", strokeDash=[4, 3]).encode(
            x="time:T", tooltip=["what:N"]))
    return alt.layer(*layers, title=title).properties(width=WIDTH, height=180)


def throughput_delay(points: pd.DataFrame, ellipses: pd.DataFrame, title: str = "") -> alt.TopLevelMixin:
    """Pantheon's view: per series and period, the median (throughput, delay) and the
    ellipse of the spread (1 sigma of the slot values). Delay grows to the left.

    ``points``: ``rtt``, ``throughput``, ``series``, ``period``; ``ellipses``: ``rtt``,
    ``throughput``, ``series``, ``period``, ``order``.
    """
    color = alt.Color("period:N", scale=alt.Scale(range=CATEGORY_RANGE), title="period")
    x = alt.X("rtt:Q", title="median RTT (ms)", scale=alt.Scale(reverse=True, zero=False))
    y = alt.Y("throughput:Q", title="throughput (Mbit/s)", scale=alt.Scale(zero=False))
    ell = alt.Chart(ellipses).mark_line(strokeWidth=1.5).encode(
        x=x, y=y, color=color, order="order:Q", detail="key:N")
    dots = alt.Chart(points).mark_point(size=90, filled=True).encode(
        x=x, y=y, color=color, shape=alt.Shape("series:N", title="series"),
        tooltip=["series:N", "period:N", alt.Tooltip("rtt:Q", format=".3g"),
                 alt.Tooltip("throughput:Q", format=".3g"), "n:Q"])
    return alt.layer(ell, dots, title=title).properties(width=420, height=300)
