"""Charts of UDPmon scans: receive rate and loss against inter-packet spacing
(``udpmon_bw``), request-response latency against frame size (``udpmon_req``)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from .style import HEIGHT, WIDTH, to_mbit

__all__ = ["udp_vs_spacing", "latency_vs_size"]


def udp_vs_spacing(rows: pd.DataFrame,
                   title: str = "UDP receive rate and loss vs inter-packet spacing") -> alt.VConcatChart:
    """Receive rate (Mbit/s) and loss (%) vs spacing (us), one line per packet size.

    ``rows``: ``spacing`` (us), ``recv_rate`` (bit/s), ``loss_fraction``, ``packet_size`` (byte).
    """
    df = to_mbit(rows, "recv_rate")
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
