"""Charts of a window x streams sweep (a campaign's page; the measured side of a study's
pair): median throughput as a heatmap and against window or streams, every run per cell,
per-interval throughput."""

from __future__ import annotations

import altair as alt
import pandas as pd

from .style import HEIGHT, MBIT, WIDTH, streams_color, to_mbit, with_kib

__all__ = ["heatmap", "throughput_vs_window", "cell_boxplots", "interval_series", "throughput_vs_streams",
           "REFERENCE_DOMAIN", "REFERENCE_DASH"]


def heatmap(cells: pd.DataFrame, value: str = "median", title: str = "Median throughput") -> alt.Chart:
    """Median throughput (Mbit/s) over window (KiB) x streams.

    ``cells``: columns ``window`` (byte), ``streams``, ``value`` (bit/s).
    """
    df = with_kib(to_mbit(cells, value))
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
    df = with_kib(to_mbit(cells, "median", "q25", "q75")).assign(line=REFERENCE_DOMAIN[0])
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
        tdf = with_kib(to_mbit(theory, "bound")).assign(line=REFERENCE_DOMAIN[1])
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
    df = with_kib(to_mbit(runs, "throughput"))
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
    df = to_mbit(intervals, "throughput")
    return alt.Chart(df, title=title).mark_line(point=True).encode(
        x=alt.X("time:Q", title="time since start (s)"),
        y=alt.Y("throughput:Q", title="throughput (Mbit/s)", scale=alt.Scale(zero=True)),
        color=alt.Color("run:N", title="run"),
        tooltip=["run:N", alt.Tooltip("time:Q", title="time (s)"),
                 alt.Tooltip("throughput:Q", title="Mbit/s", format=".1f")],
    ).properties(width=WIDTH, height=HEIGHT)


def throughput_vs_streams(cells: pd.DataFrame, theory: pd.DataFrame | None = None,
                          title: str = "Throughput vs parallel streams",
                          width: int = WIDTH) -> alt.TopLevelMixin:
    """Median throughput vs streams count, one line per window, IQR as error bars.

    ``cells``: ``window`` (byte), ``streams``, ``median``, ``q25``, ``q75`` (bit/s).
    ``theory``: optional ``window``, ``streams``, ``bound`` (bit/s): n x window / RTT.
    """
    df = with_kib(to_mbit(cells, "median", "q25", "q75"))
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
        tdf = with_kib(to_mbit(theory, "bound"))
        tdf = tdf[tdf["bound"] <= 1.2 * df["q75"].max()]
        layers.append(alt.Chart(tdf).mark_line(strokeDash=[4, 3], opacity=0.6).encode(
            x=x, y="bound:Q", color=color,
            tooltip=[alt.Tooltip("window_kib:Q", title="window (KiB)"),
                     alt.Tooltip("bound:Q", title="n x window / RTT (Mbit/s)", format=".1f")]))
    return alt.layer(*layers, title=title).properties(width=width, height=HEIGHT)
