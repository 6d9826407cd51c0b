"""Chart of TCP instrumentation snapshots (web100, tcp_info): congestion window and
smoothed RTT against time."""

from __future__ import annotations

import altair as alt
import pandas as pd

from .style import WIDTH

__all__ = ["tcp_trace"]


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
