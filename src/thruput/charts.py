"""Altair charts of the site, one function per chart, over tidy pandas DataFrames.

Charts only present: every number they show was computed by :mod:`thruput.stats` (through
:mod:`thruput.report`). Throughput is shown in Mbit/s, windows in KiB, times in ms or us,
and every axis title says its unit. Streams counts have the same colour on every page.

Inside ``thruput site build`` (``THRUPUT_SITE_BUILD=1``) charts render through an offline
renderer: a ``<div>`` and a call of the site's own ``vegaEmbed`` (no CDN); in JupyterLab
the usual Altair renderer is kept.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os

import altair as alt
import pandas as pd

__all__ = [
    "STREAMS_DOMAIN", "streams_color", "heatmap", "throughput_vs_window", "cell_boxplots",
    "interval_series", "rtt_ecdf", "latency_vs_size", "udp_vs_spacing", "tcp_trace",
    "range_bars", "enable_offline_renderer",
]

#: Streams counts with a fixed colour everywhere (seed 000 sweeps 1-40 streams).
STREAMS_DOMAIN = [1, 2, 4, 5, 8, 10, 12, 15, 16, 20, 25, 30, 32, 40]
STREAMS_RANGE = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#eeca3b",
                 "#ff9da6", "#9d755d", "#bab0ac", "#1f77b4", "#8c564b", "#17becf", "#7f7f7f"]
MBIT = 1e6
WIDTH = 560
HEIGHT = 320


def streams_color(field="streams", title="streams"):
    """The shared colour encoding of a streams count."""
    return alt.Color(f"{field}:O", title=title,
                     scale=alt.Scale(domain=STREAMS_DOMAIN, range=STREAMS_RANGE))


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


def heatmap(cells, value="median", title="Median throughput"):
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


def throughput_vs_window(cells, theory=None, capacity_bps=None, title="Throughput vs window"):
    """Median throughput vs window on a log axis, one line per streams count, IQR bands.

    ``cells``: ``window`` (byte), ``streams``, ``median``, ``q25``, ``q75`` (bit/s).
    ``theory``: optional ``window``, ``streams``, ``bound`` (bit/s): the n x window / RTT line.
    ``capacity_bps``: optional horizontal rule at the path capacity.
    """
    df = _kib(_mbit(cells, "median", "q25", "q75"))
    x = alt.X("window_kib:Q", title="window (KiB)", scale=alt.Scale(type="log", base=2))
    y = alt.Y("median:Q", title="throughput (Mbit/s)", scale=alt.Scale(zero=True))
    tooltip = [alt.Tooltip("window_kib:Q", title="window (KiB)"), alt.Tooltip("streams:Q"),
               alt.Tooltip("median:Q", title="median (Mbit/s)", format=".1f"),
               alt.Tooltip("q25:Q", title="25th pct (Mbit/s)", format=".1f"),
               alt.Tooltip("q75:Q", title="75th pct (Mbit/s)", format=".1f")]
    base = alt.Chart(df)
    layers = [
        base.mark_area(opacity=0.18).encode(x=x, y=alt.Y("q25:Q", title="throughput (Mbit/s)"),
                                            y2="q75:Q", color=streams_color()),
        base.mark_line(point=True).encode(x=x, y=y, color=streams_color(), tooltip=tooltip),
    ]
    if theory is not None and len(theory):
        tdf = _kib(_mbit(theory, "bound"))
        if capacity_bps:
            tdf = tdf[tdf["bound"] <= 1.5 * capacity_bps / MBIT]
        layers.append(alt.Chart(tdf).mark_line(strokeDash=[4, 3], opacity=0.7).encode(
            x=x, y=alt.Y("bound:Q"), color=streams_color(),
            tooltip=[alt.Tooltip("bound:Q", title="n x window / RTT (Mbit/s)", format=".1f")]))
    if capacity_bps:
        layers.append(alt.Chart(pd.DataFrame({"capacity": [capacity_bps / MBIT]})).mark_rule(
            color="black", strokeDash=[2, 2]).encode(
            y="capacity:Q", tooltip=[alt.Tooltip("capacity:Q", title="capacity (Mbit/s)")]))
    return alt.layer(*layers, title=title).properties(width=WIDTH, height=HEIGHT)


def cell_boxplots(runs, title="Throughput per cell (all repeats)"):
    """Box plots of run throughput per window, one panel per streams count.

    ``runs``: ``window`` (byte), ``streams``, ``throughput`` (bit/s).
    """
    df = _kib(_mbit(runs, "throughput"))
    return alt.Chart(df, title=title).mark_boxplot(extent="min-max").encode(
        x=alt.X("window_kib:O", title="window (KiB)"),
        y=alt.Y("throughput:Q", title="throughput (Mbit/s)", scale=alt.Scale(zero=True)),
        color=streams_color(),
        column=alt.Column("streams:O", title="streams"),
    ).properties(width=110, height=200)


def interval_series(intervals, title="Per-interval throughput"):
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


def rtt_ecdf(ecdf, title="Ping RTT, loaded vs unloaded"):
    """ECDF of ping RTT per phase.

    ``ecdf``: ``rtt`` (ms), ``fraction`` (0-1), ``phase`` (loaded/unloaded).
    """
    return alt.Chart(ecdf, title=title).mark_line(interpolate="step-after").encode(
        x=alt.X("rtt:Q", title="RTT (ms)", scale=alt.Scale(type="symlog")),
        y=alt.Y("fraction:Q", title="fraction of probes <= RTT", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("phase:N", title="phase",
                        scale=alt.Scale(domain=["unloaded", "loaded"], range=["#4c78a8", "#e45756"])),
        tooltip=[alt.Tooltip("rtt:Q", title="RTT (ms)", format=".3f"), "phase:N",
                 alt.Tooltip("fraction:Q", format=".2f")],
    ).properties(width=WIDTH, height=HEIGHT)


def latency_vs_size(points, fit=None, expected_slope=None, title="Latency vs frame size"):
    """UDPmon request-response latency vs response size with fitted and expected slopes.

    ``points``: ``size`` (byte), ``latency`` (us). ``fit``: dict with ``slope`` (us/byte) and
    ``intercept`` (us). ``expected_slope``: us/byte, drawn through the fitted intercept.
    """
    x = alt.X("size:Q", title="response size (bytes)", scale=alt.Scale(zero=True))
    layers = [alt.Chart(points).mark_point(filled=True).encode(
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


def udp_vs_spacing(rows, title="UDP receive rate and loss vs inter-packet spacing"):
    """Receive rate (Mbit/s) and loss (%) vs spacing (us), one line per packet size.

    ``rows``: ``spacing`` (us), ``recv_rate`` (bit/s), ``loss_fraction``, ``packet_size`` (byte).
    """
    df = _mbit(rows, "recv_rate")
    df["loss_percent"] = df["loss_fraction"] * 100
    color = alt.Color("packet_size:O", title="packet (bytes)")
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


def tcp_trace(snapshots, title="TCP congestion window and smoothed RTT"):
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


def range_bars(df, category, value, low=None, high=None, unit="", color=None, title=""):
    """A bar per category with an optional low-high range (e.g. median with IQR).

    Column names are given; ``unit`` goes into the axis title.
    """
    enc_color = alt.Color(f"{color}:N") if color else alt.value("#4c78a8")
    tooltip = [f"{category}:N", alt.Tooltip(f"{value}:Q", title=f"{value} ({unit})")]
    bars = alt.Chart(df).mark_bar().encode(
        x=alt.X(f"{category}:N", title=None, sort=None),
        y=alt.Y(f"{value}:Q", title=f"{value} ({unit})", scale=alt.Scale(zero=True)),
        color=enc_color, xOffset=f"{color}:N" if color else alt.value(0), tooltip=tooltip)
    layers = [bars]
    if low and high:
        layers.append(alt.Chart(df.dropna(subset=[low, high])).mark_errorbar(ticks=True).encode(
            x=alt.X(f"{category}:N", sort=None), y=alt.Y(f"{low}:Q", title=f"{value} ({unit})"), y2=f"{high}:Q",
            tooltip=[alt.Tooltip(f"{low}:Q"), alt.Tooltip(f"{high}:Q")]))
    return alt.layer(*layers, title=title).properties(width=WIDTH, height=HEIGHT)


# --------------------------------------------------------------------------- rendering

_counter = itertools.count()


def _offline_renderer(spec, **metadata):
    """Altair renderer that embeds the spec for the site's own ``vegaEmbed`` (no CDN)."""
    text = json.dumps(spec, sort_keys=True)
    ident = "vis-" + hashlib.sha1(text.encode()).hexdigest()[:10] + f"-{next(_counter)}"
    html = (f'<div id="{ident}" class="thruput-chart"></div>\n'
            f'<script type="text/javascript">vegaEmbed("#{ident}", {text}, '
            '{"actions": false, "renderer": "svg"}).catch(function (e) { console.error(e); });</script>')
    return {"text/html": html, "text/plain": f"<chart {ident}>"}


alt.renderers.register("thruput-offline", _offline_renderer)


def enable_offline_renderer(force=False):
    """Use the offline renderer when building the site (or when ``force``)."""
    if force or os.environ.get("THRUPUT_SITE_BUILD") == "1":
        alt.renderers.enable("thruput-offline")
        alt.data_transformers.disable_max_rows()
