"""Altair charts of the site, one function per chart, over tidy pandas DataFrames.

Charts only present: every number they show was computed by :mod:`thruput.stats` (through
:mod:`thruput.report`). Throughput is shown in Mbit/s, windows in KiB, times in ms or us,
and every axis title says its unit. Streams counts have the same colour on every page.

Charts never load anything from the network: inside ``thruput site build`` they render as a
``<div>`` and a call of the site's own ``vegaEmbed``; in a Jupyter kernel (JupyterLab, the
notebook) through Altair's widget renderer with Vega bundled from vl-convert. Both are
switched on by :func:`enable_offline_renderer` (see :mod:`thruput.charts.rendering`),
which ``import thruput`` calls inside a kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


import altair as alt
import pandas as pd

__all__ = [
    "STREAMS_DOMAIN", "streams_color", "heatmap", "throughput_vs_window", "cell_boxplots",
    "interval_series", "rtt_ecdf", "latency_vs_size", "udp_vs_spacing", "tcp_trace",
    "enable_offline_renderer",
]

#: Streams counts with a fixed colour everywhere (seed 000 sweeps 1-40 streams).
STREAMS_DOMAIN = [1, 2, 4, 5, 8, 10, 12, 15, 16, 20, 25, 30, 32, 40]
STREAMS_RANGE = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#eeca3b",
                 "#ff9da6", "#9d755d", "#bab0ac", "#1f77b4", "#8c564b", "#17becf", "#7f7f7f"]
MBIT = 1e6
#: Width of one chart (px): the page's width less its axes; legends go below the plot.
WIDTH = 800
HEIGHT = 320
#: The Altair theme of thruput's charts (and plain Altair's, once thruput.charts is imported):
#: legends below the plot, their labels whole, so that a chart uses the page's width
#: instead of leaving half of it to a legend on its right.
THEME = "thruput"


@alt.theme.register(THEME, enable=True)
def _theme():
    return alt.theme.ThemeConfig(config={
        "legend": {"orient": "bottom", "labelLimit": 400, "titleLimit": 400, "columnPadding": 16},
        "view": {"continuousWidth": WIDTH, "continuousHeight": HEIGHT}})


def streams_color(present: Iterable[Any] | None = None, field: str = "streams", title: str = "streams",
                  legend: bool = True) -> alt.Color:
    """The shared colour encoding of a streams count.

    ``present``: the streams counts a chart shows (e.g. ``df["streams"]``); the legend then
    lists only those, each still in its fixed colour. ``legend=False`` for layers (bands)
    whose pale fill must not stand for the colour in the legend.
    """
    domain, colours = STREAMS_DOMAIN, STREAMS_RANGE
    if present is not None:
        domain = sorted({int(v) for v in present if v == v})
        colours = [STREAMS_RANGE[STREAMS_DOMAIN.index(v)] if v in STREAMS_DOMAIN
                   else STREAMS_RANGE[hash(v) % len(STREAMS_RANGE)] for v in domain]
    return alt.Color(f"{field}:O", title=title, scale=alt.Scale(domain=domain, range=colours),
                     legend=alt.Legend(symbolOpacity=1, symbolStrokeWidth=3) if legend else None)


def _mbit(df, *columns):
    out = df.copy()
    for c in columns:
        if c in out:
            out[c] = out[c] / MBIT
    return out


def _kib(df, column="window"):
    out = df.copy()
    out["window_kib"] = out[column] / 1024
    return out


def heatmap(cells: pd.DataFrame, value: str = "median", title: str = "Median throughput") -> alt.Chart:
    """Median throughput (Mbit/s) over window (KiB) x streams.

    ``cells``: columns ``window`` (byte), ``streams``, ``value`` (bit/s).
    """
    df = _kib(_mbit(cells, value))
    return alt.Chart(df, title=title).mark_rect().encode(
        x=alt.X("window_kib:O", title="window (KiB)", sort="ascending"),
        y=alt.Y("streams:O", title="parallel streams", sort="descending"),
        color=alt.Color(f"{value}:Q", title="Mbit/s", scale=alt.Scale(scheme="viridis", zero=True)),
        tooltip=[alt.Tooltip("window_kib:Q", title="window (KiB)"),
                 alt.Tooltip("streams:Q", title="streams"),
                 alt.Tooltip(f"{value}:Q", title="median (Mbit/s)", format=".1f")],
    ).properties(width=WIDTH, height=HEIGHT)


#: Line styles of measured data and reference lines, shown in a legend of their own.
REFERENCE_DOMAIN = ["measured median", "n × window / RTT", "path capacity"]
REFERENCE_DASH = [[1, 0], [5, 3], [2, 2]]


def _reference_dash():
    return alt.StrokeDash("line:N", title="line", scale=alt.Scale(domain=REFERENCE_DOMAIN,
                                                                   range=REFERENCE_DASH),
                          legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2,
                                            symbolStrokeColor="#333", symbolSize=400))


def throughput_vs_window(cells: pd.DataFrame, theory: pd.DataFrame | None = None,
                         capacity_bps: float | None = None,
                         title: str = "Throughput vs window") -> alt.TopLevelMixin:
    """Median throughput vs window on a log axis, one line per streams count, IQR bands.

    ``cells``: ``window`` (byte), ``streams``, ``median``, ``q25``, ``q75`` (bit/s).
    ``theory``: optional ``window``, ``streams``, ``bound`` (bit/s): the n x window / RTT line.
    ``capacity_bps``: optional horizontal rule at the path capacity.

    Reference lines have their own legend entry (line style); the y axis ends a little
    above the highest measurement or the capacity, and the window bound is clipped there.
    """
    df = _kib(_mbit(cells, "median", "q25", "q75")).assign(line=REFERENCE_DOMAIN[0])
    top = max(float(df[["median", "q75"]].max().max()), (capacity_bps or 0) / MBIT) * 1.1
    x = alt.X("window_kib:Q", title="window (KiB)", scale=alt.Scale(type="log", base=2))
    y = alt.Y("median:Q", title="throughput (Mbit/s)", scale=alt.Scale(domain=[0, top], nice=False))
    tooltip = [alt.Tooltip("window_kib:Q", title="window (KiB)"), alt.Tooltip("streams:Q"),
               alt.Tooltip("median:Q", title="median (Mbit/s)", format=".1f"),
               alt.Tooltip("q25:Q", title="25th pct (Mbit/s)", format=".1f"),
               alt.Tooltip("q75:Q", title="75th pct (Mbit/s)", format=".1f")]
    base = alt.Chart(df)
    layers = [
        base.mark_area(opacity=0.18, clip=True).encode(
            x=x, y=alt.Y("q25:Q", title="throughput (Mbit/s)", scale=alt.Scale(domain=[0, top], nice=False)),
            y2="q75:Q", color=streams_color(df["streams"])),
        base.mark_line().encode(x=x, y=y, color=streams_color(df["streams"]),
                                strokeDash=_reference_dash(), tooltip=tooltip),
        # points apart from the line: a filled overlay would blank the line-style legend
        base.mark_point(filled=True, size=30).encode(x=x, y=y, color=streams_color(df["streams"]),
                                                     tooltip=tooltip),
    ]
    if theory is not None and len(theory):
        tdf = _kib(_mbit(theory, "bound")).assign(line=REFERENCE_DOMAIN[1])
        tdf = tdf[tdf["bound"] <= top * 1.5]  # beyond the axis: clipped anyway
        layers.append(alt.Chart(tdf).mark_line(opacity=0.7, clip=True).encode(
            x=x, y=alt.Y("bound:Q", scale=alt.Scale(domain=[0, top], nice=False)),
            color=streams_color(df["streams"]), strokeDash=_reference_dash(),
            tooltip=[alt.Tooltip("bound:Q", title="n x window / RTT (Mbit/s)", format=".1f")]))
    if capacity_bps:
        layers.append(alt.Chart(pd.DataFrame({"capacity": [capacity_bps / MBIT],
                                              "line": [REFERENCE_DOMAIN[2]]})).mark_rule(color="black").encode(
            y="capacity:Q", strokeDash=_reference_dash(),
            tooltip=[alt.Tooltip("capacity:Q", title="capacity (Mbit/s)")]))
    return alt.layer(*layers, title=title).properties(width=WIDTH, height=HEIGHT)


def cell_boxplots(runs: pd.DataFrame, title: str = "Throughput per cell (all repeats)") -> alt.TopLevelMixin:
    """Box plots of run throughput per window, one panel per streams count, with every run
    drawn as a point, so a cell whose repeats agree closely still shows (as a dot, not an
    invisible box).

    ``runs``: ``window`` (byte), ``streams``, ``throughput`` (bit/s).
    """
    df = _kib(_mbit(runs, "throughput"))
    x = alt.X("window_kib:O", title="window (KiB)")
    y = alt.Y("throughput:Q", title="throughput (Mbit/s)", scale=alt.Scale(zero=True))
    boxes = alt.Chart().mark_boxplot(extent="min-max", size=12, opacity=0.5, median={"color": "black"}).encode(
        x=x, y=y, color=streams_color(df["streams"]))
    points = alt.Chart().mark_point(filled=True, size=22, opacity=0.9).encode(
        x=x, y=y, color=streams_color(df["streams"]),
        tooltip=[alt.Tooltip("window_kib:Q", title="window (KiB)"), alt.Tooltip("streams:Q"),
                 alt.Tooltip("throughput:Q", title="Mbit/s", format=".1f")])
    return alt.layer(boxes, points, data=df).properties(width=110, height=200).facet(
        column=alt.Column("streams:O", title="streams"), title=title)


def interval_series(intervals: pd.DataFrame, title: str = "Per-interval throughput") -> alt.Chart:
    """Throughput of each reporting interval of a few runs.

    ``intervals``: ``time`` (s since run start), ``throughput`` (bit/s), ``run`` (label).
    """
    df = _mbit(intervals, "throughput")
    return alt.Chart(df, title=title).mark_line(point=True).encode(
        x=alt.X("time:Q", title="time since start (s)"),
        y=alt.Y("throughput:Q", title="throughput (Mbit/s)", scale=alt.Scale(zero=True)),
        color=alt.Color("run:N", title="run"),
        tooltip=["run:N", alt.Tooltip("time:Q", title="time (s)"),
                 alt.Tooltip("throughput:Q", title="Mbit/s", format=".1f")],
    ).properties(width=WIDTH, height=HEIGHT)


def log_ticks(low, high):
    """1-2-5 tick values covering ``low``..``high`` (positive), for log and symlog axes,
    whose own ticks are too few (symlog) or crowd into each other (log)."""
    import math

    low, high = max(float(low), 1e-9), max(float(high), 1e-9)
    ticks = []
    for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        ticks += [m * 10.0 ** exponent for m in (1, 2, 5)]
    inside = [t for t in ticks if low / 2 <= t <= high * 2]
    return [float(f"{t:.6g}") for t in inside] or [low, high]


def tick_format(low):
    """d3 format of :func:`log_ticks` labels: "5e-9" where values go below 0.001 (loss
    rates), else plain numbers with thousands separators ("1,024")."""
    return "~e" if 0 < float(low) < 1e-3 else ",~r"


def rtt_ecdf(ecdf: pd.DataFrame, title: str = "Ping RTT, loaded vs unloaded") -> alt.Chart:
    """ECDF of ping RTT per phase, on a symmetric-log RTT axis labelled 1-2-5.

    ``ecdf``: ``rtt`` (ms), ``fraction`` (0-1), ``phase`` (loaded/unloaded).
    """
    rtt = ecdf["rtt"][ecdf["rtt"] > 0]
    ticks = log_ticks(rtt.min(), rtt.max()) if len(rtt) else None
    return alt.Chart(ecdf, title=title).mark_line(interpolate="step-after").encode(
        x=alt.X("rtt:Q", title="RTT (ms, symmetric-log scale)", scale=alt.Scale(type="symlog"),
                axis=alt.Axis(values=ticks, labelOverlap="greedy",  # type: ignore[arg-type]
                              format=tick_format(rtt.min()) if len(rtt) else ",~r")),
        y=alt.Y("fraction:Q", title="fraction of probes <= RTT", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("phase:N", title="phase",
                        scale=alt.Scale(domain=["unloaded", "loaded"], range=["#4c78a8", "#e45756"])),
        tooltip=[alt.Tooltip("rtt:Q", title="RTT (ms)", format=".3f"), "phase:N",
                 alt.Tooltip("fraction:Q", format=".2f")],
    ).properties(width=WIDTH, height=HEIGHT)


def latency_vs_size(points: pd.DataFrame, fit: pd.DataFrame | None = None,
                    expected_slope: float | None = None,
                    title: str = "Latency vs frame size") -> alt.TopLevelMixin:
    """UDPmon request-response latency vs response size with fitted and expected slopes.

    ``points``: ``size`` (byte), ``latency`` (us). ``fit``: dict with ``slope`` (us/byte) and
    ``intercept`` (us). ``expected_slope``: us/byte, drawn through the fitted intercept.
    """
    x = alt.X("size:Q", title="response size (bytes)", scale=alt.Scale(zero=True))
    layers = [alt.Chart(points).mark_point(filled=True, color="#4c78a8").encode(
        x=x, y=alt.Y("latency:Q", title="latency (us)", scale=alt.Scale(zero=True)),
        tooltip=[alt.Tooltip("size:Q", title="size (bytes)"),
                 alt.Tooltip("latency:Q", title="latency (us)", format=".2f")])]
    lines = []
    lo, hi = float(points["size"].min()), float(points["size"].max())
    if fit:
        lines += [{"size": s, "latency": fit["intercept"] + fit["slope"] * s,
                   "line": f"fit {fit['slope']:.4f} us/byte"} for s in (lo, hi)]
    if fit and expected_slope is not None:
        lines += [{"size": s, "latency": fit["intercept"] + expected_slope * s,
                   "line": f"expected {expected_slope:.4f} us/byte"} for s in (lo, hi)]
    if lines:
        layers.append(alt.Chart(pd.DataFrame(lines)).mark_line().encode(
            x=x, y="latency:Q", color=alt.Color("line:N", title=None), strokeDash="line:N"))
    return alt.layer(*layers, title=title).properties(width=WIDTH, height=HEIGHT)


def udp_vs_spacing(rows: pd.DataFrame,
                   title: str = "UDP receive rate and loss vs inter-packet spacing") -> alt.VConcatChart:
    """Receive rate (Mbit/s) and loss (%) vs spacing (us), one line per packet size.

    ``rows``: ``spacing`` (us), ``recv_rate`` (bit/s), ``loss_fraction``, ``packet_size`` (byte).
    """
    df = _mbit(rows, "recv_rate")
    df["loss_percent"] = df["loss_fraction"] * 100
    # categorical, not a sequential ramp: four shades of one blue cannot be told apart
    color = alt.Color("packet_size:N", title="packet (bytes)", sort="ascending",
                      scale=alt.Scale(scheme="tableau10"))
    x = alt.X("spacing:Q", title="inter-packet spacing (us)", scale=alt.Scale(zero=True))
    rate = alt.Chart(df).mark_line(point=True).encode(
        x=x, y=alt.Y("recv_rate:Q", title="receive rate (Mbit/s)", scale=alt.Scale(zero=True)),
        color=color, tooltip=[alt.Tooltip("spacing:Q", title="spacing (us)"),
                              alt.Tooltip("recv_rate:Q", title="Mbit/s", format=".1f"), "packet_size:O"])
    loss = alt.Chart(df).mark_line(point=True).encode(
        x=x, y=alt.Y("loss_percent:Q", title="loss (%)", scale=alt.Scale(zero=True)),
        color=color, tooltip=[alt.Tooltip("spacing:Q", title="spacing (us)"),
                              alt.Tooltip("loss_percent:Q", title="loss (%)", format=".1f"), "packet_size:O"])
    return alt.vconcat(rate.properties(width=WIDTH, height=220),
                       loss.properties(width=WIDTH, height=160), title=title)


def tcp_trace(snapshots: pd.DataFrame,
              title: str = "TCP congestion window and smoothed RTT") -> alt.VConcatChart:
    """cwnd (KiB) and smoothed RTT (ms) against time for TCP instrumentation snapshots.

    ``snapshots``: ``time`` (s), ``cwnd`` (byte), ``srtt`` (ms), optional ``run`` label.
    """
    df = snapshots.copy()
    df["cwnd_kib"] = df["cwnd"] / 1024
    if "run" not in df:
        df["run"] = "run"
    x = alt.X("time:Q", title="time (s)")
    cwnd = alt.Chart(df).mark_line().encode(
        x=x, y=alt.Y("cwnd_kib:Q", title="cwnd (KiB)", scale=alt.Scale(zero=True)), color="run:N",
        tooltip=[alt.Tooltip("time:Q", title="time (s)"), alt.Tooltip("cwnd_kib:Q", title="cwnd (KiB)")])
    srtt = alt.Chart(df).mark_line().encode(
        x=x, y=alt.Y("srtt:Q", title="smoothed RTT (ms)", scale=alt.Scale(zero=True)), color="run:N",
        tooltip=[alt.Tooltip("time:Q", title="time (s)"), alt.Tooltip("srtt:Q", title="srtt (ms)")])
    return alt.vconcat(cwnd.properties(width=WIDTH, height=200),
                       srtt.properties(width=WIDTH, height=160), title=title)


# --------------------------------------------------------------------------- rendering
# Where charts are drawn (the site, a Jupyter kernel) lives in .rendering; re-exported here.
from .rendering import enable_offline_renderer  # noqa: E402,F401


# =========================================================================== studies
# Charts of the study pages and of the reproduction summary (thruput.report.studies).
# Everything they show was transcribed into data/published/ or derived by
# thruput.reproduce; the status colours are the same on every page.

import numpy as np  # noqa: E402  (this section's own import: the top of the file is shared)
from ..reproduce_statuses import STATUSES as _LEDGER_STATUSES  # noqa: E402  (statuses alone, no studies)

__all__ += ["STATUS_DOMAIN", "status_color", "status_values", "status_counts", "range_dots", "theory_points",
            "grouped_ranges", "category_bars", "slope_dots", "throughput_vs_streams",
            "rtt_vs_throughput", "side_by_side"]

#: Ledger statuses, most serious first (thruput.reproduce.STATUSES), with fixed colours.
STATUS_DOMAIN = list(_LEDGER_STATUSES)
_STATUS_COLOURS = {"erratum": "#d62728", "differs": "#ff7f0e", "reproduced": "#2ca02c", "measured-vs-model": "#9467bd",
                   "consistent": "#4c78a8", "bound": "#9ecae9", "input": "#c7c7c7", "not-reproducible": "#a0a0a0"}
STATUS_RANGE = [_STATUS_COLOURS[s] for s in STATUS_DOMAIN]
#: Width of one chart of a side-by-side pair (two fit the page with their legends below).
PAIR_WIDTH = 400
#: Category axes show their whole label (board and bus names are long).
_LABELS = alt.Axis(labelLimit=320)


def status_values(present: Iterable[Any], domain: Sequence[str] = STATUS_DOMAIN) -> list[str]:
    """The statuses of ``domain`` that occur in ``present``, in the domain's order: what a
    legend lists (the colours stay fixed by the whole domain)."""
    seen = set(present)
    return [s for s in domain if s in seen]


def status_color(field: str = "status", legend: bool = True,
                 present: Iterable[Any] | None = None) -> alt.Color:
    """The shared colour encoding of a ledger status; with ``present`` (the statuses the
    chart shows) the legend lists only those, each in its fixed colour."""
    values = status_values(present) if present is not None else alt.Undefined
    return alt.Color(f"{field}:N", title="ledger status", legend=alt.Legend(values=values) if legend else None,
                     scale=alt.Scale(domain=STATUS_DOMAIN, range=STATUS_RANGE))


def status_counts(counts: pd.DataFrame, title: str = "Published figures by reproduction status") -> alt.Chart:
    """Stacked horizontal bars: how many ledger rows of each study have each status.

    ``counts``: ``study`` (label), ``status``, ``n`` (count of figures).
    """
    order = {s: i for i, s in enumerate(STATUS_DOMAIN)}
    df = counts.assign(order=counts["status"].map(order))
    return alt.Chart(df, title=title).mark_bar().encode(
        y=alt.Y("study:N", title=None, sort=None, axis=_LABELS),
        x=alt.X("n:Q", title="published figures (count)", stack="zero"),
        color=status_color(present=df["status"]), order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("study:N"), alt.Tooltip("status:N"), alt.Tooltip("n:Q", title="figures")],
    ).properties(width=WIDTH, height=28 * df["study"].nunique())


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
    y = alt.Y("category:N", title=None, sort=list(dict.fromkeys(points["category"])), axis=_LABELS)
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
    y = alt.Y("category:N", title=None, sort=None, axis=_LABELS)
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
    y = alt.Y("board:N", title=None, sort=list(dict.fromkeys(slopes["board"])), axis=_LABELS)
    x = alt.X("slope:Q", title="latency slope (us/byte)", scale=alt.Scale(zero=True))
    rules = alt.Chart(slopes).mark_rule(color="#bbb").encode(y=y, x="min(slope):Q", x2="max(slope):Q")
    dots = alt.Chart(slopes).mark_point(filled=True, size=110).encode(
        y=y, x=x, color=alt.Color("kind:N", title=None, legend=alt.Legend(labelLimit=320),
                                  scale=alt.Scale(domain=kinds, range=["#e45756", "#4c78a8", "#72b7b2"])),
        shape=alt.Shape("kind:N", title=None, scale=alt.Scale(domain=kinds, range=["circle", "diamond", "triangle-up"])),
        tooltip=[alt.Tooltip("board:N"), alt.Tooltip("kind:N"), alt.Tooltip("slope:Q", title="us/byte", format=".5f"),
                 alt.Tooltip("status:N", title="ledger status")])
    return alt.layer(rules, dots, title=title).properties(width=WIDTH, height=40 * slopes["board"].nunique())


def throughput_vs_streams(cells: pd.DataFrame, theory: pd.DataFrame | None = None,
                          title: str = "Throughput vs parallel streams",
                          width: int = WIDTH) -> alt.TopLevelMixin:
    """Median throughput vs streams count, one line per window, IQR as error bars.

    ``cells``: ``window`` (byte), ``streams``, ``median``, ``q25``, ``q75`` (bit/s).
    ``theory``: optional ``window``, ``streams``, ``bound`` (bit/s): n x window / RTT.
    """
    df = _kib(_mbit(cells, "median", "q25", "q75"))
    color = alt.Color("window_kib:O", title="window (KiB)", scale=alt.Scale(scheme="viridis"))
    x = alt.X("streams:Q", title="parallel streams", scale=alt.Scale(type="log", base=2),
              axis=alt.Axis(values=sorted(int(n) for n in df["streams"].unique())))
    tooltip = [alt.Tooltip("window_kib:Q", title="window (KiB)"), alt.Tooltip("streams:Q"),
               alt.Tooltip("median:Q", title="median (Mbit/s)", format=".1f"),
               alt.Tooltip("q25:Q", title="25th pct (Mbit/s)", format=".1f"),
               alt.Tooltip("q75:Q", title="75th pct (Mbit/s)", format=".1f")]
    layers = [alt.Chart(df).mark_errorbar().encode(x=x, y=alt.Y("q25:Q", title="throughput (Mbit/s)"), y2="q75:Q",
                                                   color=color),
              alt.Chart(df).mark_line(point=True).encode(
                  x=x, y=alt.Y("median:Q", title="throughput (Mbit/s)", scale=alt.Scale(zero=True)),
                  color=color, tooltip=tooltip)]
    if theory is not None and len(theory):
        tdf = _kib(_mbit(theory, "bound"))
        tdf = tdf[tdf["bound"] <= 1.2 * df["q75"].max()]
        layers.append(alt.Chart(tdf).mark_line(strokeDash=[4, 3], opacity=0.6).encode(
            x=x, y="bound:Q", color=color,
            tooltip=[alt.Tooltip("window_kib:Q", title="window (KiB)"),
                     alt.Tooltip("bound:Q", title="n x window / RTT (Mbit/s)", format=".1f")]))
    return alt.layer(*layers, title=title).properties(width=width, height=HEIGHT)


def rtt_vs_throughput(cells: pd.DataFrame, unloaded_ms: float | None = None, factor: float | None = None,
                      title: str = "Loaded ping RTT vs throughput", width: int = WIDTH,
                      log: bool = False) -> alt.TopLevelMixin:
    """Median loaded ping RTT of each cell against its median throughput.

    ``cells``: ``window`` (byte), ``streams``, ``median`` (bit/s), ``rtt_median`` (ms).
    ``unloaded_ms``: the unloaded median RTT, drawn as a rule; with ``factor``, a second rule
    at ``factor`` x unloaded (a published growth factor to compare with). ``log``: RTT on a
    log axis (when loaded RTTs are many times the unloaded one).
    """
    df = _kib(_mbit(cells, "median")).dropna(subset=["rtt_median"])
    layers = [alt.Chart(df).mark_point(filled=True, size=60).encode(
        x=alt.X("median:Q", title="median throughput (Mbit/s)", scale=alt.Scale(zero=True)),
        y=alt.Y("rtt_median:Q", title="median loaded ping RTT (ms)",
                scale=alt.Scale(type="log") if log else alt.Scale(zero=True)),
        color=streams_color(df["streams"]),
        size=alt.Size("window_kib:Q", title="window (KiB)", scale=alt.Scale(type="log", range=[25, 320])),
        tooltip=[alt.Tooltip("window_kib:Q", title="window (KiB)"), alt.Tooltip("streams:Q"),
                 alt.Tooltip("median:Q", title="median throughput (Mbit/s)", format=".1f"),
                 alt.Tooltip("rtt_median:Q", title="median loaded RTT (ms)", format=".3f")])]
    refs = []
    if unloaded_ms:
        refs.append({"rtt": unloaded_ms, "label": f"unloaded median {unloaded_ms:.3f} ms"})
        if factor:
            refs.append({"rtt": factor * unloaded_ms, "label": f"{factor:g} x unloaded (published growth)"})
    if refs:
        rdf = pd.DataFrame(refs)
        layers.append(alt.Chart(rdf).mark_rule(strokeDash=[5, 4], color="#333").encode(
            y="rtt:Q", tooltip=[alt.Tooltip("label:N"), alt.Tooltip("rtt:Q", title="RTT (ms)", format=".3f")]))
        layers.append(alt.Chart(rdf).mark_text(align="left", baseline="bottom", dx=3, dy=-2, fontSize=10).encode(
            y="rtt:Q", x=alt.value(0), text="label:N"))
    return alt.layer(*layers, title=title).properties(width=width, height=HEIGHT)


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


def relative_differences(diffs: pd.DataFrame,
                         title: str = "How far each differing figure is from its derivation") -> alt.TopLevelMixin:
    """Published value vs derived value, in percent, one row per ``differs`` figure.

    ``diffs``: ``claim``, ``study``, ``percent`` ((published - derived) / derived x 100),
    ``published``, ``derived`` (in the published unit), ``unit``, ``quote``.
    A symmetric-log axis keeps 0.2 % and 97 % readable on one chart.
    """
    y = alt.Y("claim:N", title=None, sort=None, axis=_LABELS)
    tooltip = [alt.Tooltip("claim:N"), alt.Tooltip("quote:N", title="printed"),
               alt.Tooltip("published:Q", title="published", format=".6~g"),
               alt.Tooltip("derived:Q", title="derived", format=".6~g"), alt.Tooltip("unit:N"),
               alt.Tooltip("percent:Q", title="published vs derived (%)", format="+.1f")]
    symlog = alt.Scale(type="symlog")
    x = alt.X("percent:Q", title="published vs derived (%, symmetric log)", scale=symlog,
              axis=alt.Axis(values=[-100, -50, -20, -10, -5, -1, 0, 1, 5, 10, 20, 50, 100]))
    rules = alt.Chart(diffs.assign(zero=0.0)).mark_rule(color="#ccc").encode(
        y=y, x=alt.X("zero:Q", title="published vs derived (%, symmetric log)", scale=symlog), x2="percent:Q")
    dots = alt.Chart(diffs).mark_point(filled=True, size=90).encode(
        y=y, x=x, color=alt.Color("study:N", title="study", scale=alt.Scale(scheme="tableau10")), tooltip=tooltip)
    zero = alt.Chart(pd.DataFrame({"zero": [0]})).mark_rule(color="#333").encode(x="zero:Q")
    return alt.layer(rules, zero, dots, title=title).properties(width=WIDTH, height=22 * len(diffs))


__all__ += ["relative_differences"]
