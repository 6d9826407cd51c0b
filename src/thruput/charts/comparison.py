"""Chart of a comparison of two campaigns: per-cell differences with their intervals."""

from __future__ import annotations

import altair as alt
import pandas as pd

from . import HEIGHT, WIDTH, streams_color

__all__ = ["difference_intervals"]

MBIT = 1e6


def difference_intervals(cells, a, b, confidence=0.95, title=None):
    """Difference of median throughput (b - a, Mbit/s) per cell with its bootstrap interval.

    Parameters
    ----------
    cells : pandas.DataFrame
        :func:`thruput.stats.compare` as a table: ``window`` (byte), ``streams``,
        ``difference``, ``difference_low``, ``difference_high`` (bit/s).
    a, b : str
        Names of the two campaigns (for the titles).
    confidence : float
        Coverage of the intervals (for the axis title).

    Returns
    -------
    altair.LayerChart
        One point per cell on a window axis (log2, KiB), a rule for its interval, one
        colour per streams count, and a zero line: an interval that crosses it shows no
        difference at that coverage.
    """
    df = pd.DataFrame({
        "window_kib": cells["window"].to_numpy(float) / 1024, "streams": cells["streams"].astype(int),
        "difference": cells["difference"].to_numpy(float) / MBIT,
        "low": cells["difference_low"].to_numpy(float) / MBIT,
        "high": cells["difference_high"].to_numpy(float) / MBIT,
    })
    x = alt.X("window_kib:Q", title="window (KiB)", scale=alt.Scale(type="log", base=2))
    color = streams_color(df["streams"])
    tooltip = [alt.Tooltip("window_kib:Q", title="window (KiB)"), alt.Tooltip("streams:Q"),
               alt.Tooltip("difference:Q", title=f"{b} - {a} (Mbit/s)", format=".1f"),
               alt.Tooltip("low:Q", title=f"{confidence:.0%} CI low (Mbit/s)", format=".1f"),
               alt.Tooltip("high:Q", title=f"{confidence:.0%} CI high (Mbit/s)", format=".1f")]
    base = alt.Chart(df)
    layers = [
        alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(color="black", strokeDash=[2, 2]).encode(y="zero:Q"),
        base.mark_rule(strokeWidth=2).encode(x=x, y=alt.Y("low:Q"), y2="high:Q", color=color),
        base.mark_point(filled=True, size=50).encode(
            x=x, y=alt.Y("difference:Q", title=f"{b} - {a}, median (Mbit/s), {confidence:.0%} CI"),
            color=color, tooltip=tooltip),
    ]
    return alt.layer(*layers, title=title or f"Difference of median throughput, {b} - {a}").properties(
        width=WIDTH, height=HEIGHT)
