"""Charts of ping RTT: its distribution loaded and unloaded, and loaded RTT against
throughput per cell of a sweep."""

from __future__ import annotations

import altair as alt
import pandas as pd

from .style import HEIGHT, WIDTH, log_ticks, streams_color, tick_format, to_mbit, with_kib

__all__ = ["rtt_ecdf", "rtt_vs_throughput"]


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


def rtt_vs_throughput(cells: pd.DataFrame, unloaded_ms: float | None = None, factor: float | None = None,
                      title: str = "Loaded ping RTT vs throughput", width: int = WIDTH,
                      log: bool = False) -> alt.TopLevelMixin:
    """Median loaded ping RTT of each cell against its median throughput.

    ``cells``: ``window`` (byte), ``streams``, ``median`` (bit/s), ``rtt_median`` (ms).
    ``unloaded_ms``: the unloaded median RTT, drawn as a rule; with ``factor``, a second rule
    at ``factor`` x unloaded (a published growth factor to compare with). ``log``: RTT on a
    log axis (when loaded RTTs are many times the unloaded one).
    """
    df = with_kib(to_mbit(cells, "median")).dropna(subset=["rtt_median"])
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
