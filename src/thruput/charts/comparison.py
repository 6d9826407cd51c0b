"""Chart of a comparison of two campaigns: per-cell differences, or ratios, with their intervals."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from .style import HEIGHT, WIDTH, streams_color

__all__ = ["difference_intervals", "levels_differ", "RATIO_ORDERS"]

MBIT = 1e6
#: A comparison is drawn as ratios on a log scale when some cell's medians differ by at
#: least this many orders of magnitude (1 Gbit/s against 50 Mbit/s: a factor 20); a
#: difference in Mbit/s of such levels only says "the smaller is small".
RATIO_ORDERS = 1.0


def levels_differ(cells: pd.DataFrame, orders: float = RATIO_ORDERS) -> bool:
    """True when some cell's medians of the two campaigns differ by ``orders`` orders of
    magnitude or more (``cells``: ``median_a``, ``median_b``)."""
    a, b = cells["median_a"].to_numpy(float), cells["median_b"].to_numpy(float)
    ok = (a > 0) & (b > 0)
    return bool(ok.any() and np.max(np.abs(np.log10(b[ok] / a[ok]))) >= orders)


def difference_intervals(cells: pd.DataFrame, a: str, b: str, confidence: float = 0.95,
                         title: str | None = None, scale: str = "auto") -> alt.TopLevelMixin:
    """Per cell, ``b`` against ``a``: the difference of median throughput (b - a, Mbit/s)
    or their ratio (b / a, log scale), with its bootstrap interval.

    Parameters
    ----------
    cells : pandas.DataFrame
        :func:`thruput.stats.compare` as a table: ``window`` (byte), ``streams``,
        ``median_a``, ``median_b``, ``difference``, ``difference_low``,
        ``difference_high`` (bit/s), and for ratios ``ratio``, ``ratio_low``,
        ``ratio_high``.
    a, b : str
        Names of the two campaigns (for the titles).
    confidence : float
        Coverage of the intervals (for the axis title).
    scale : {"auto", "difference", "ratio"}
        ``auto``: ratios where the levels differ by an order of magnitude or more
        (:func:`levels_differ`), else differences.

    Returns
    -------
    altair.LayerChart
        One point per cell on a window axis (log2, KiB), a rule for its interval, one
        colour per streams count, and a reference line (0 for differences, 1 for ratios):
        an interval that crosses it shows no difference at that coverage.
    """
    if scale == "auto":
        scale = "ratio" if "ratio" in cells and levels_differ(cells) else "difference"
    if scale not in ("difference", "ratio"):
        raise ValueError(f"scale must be 'auto', 'difference' or 'ratio', not {scale!r}")
    df = pd.DataFrame({"window_kib": cells["window"].to_numpy(float) / 1024,
                       "streams": cells["streams"].astype(int)})
    if scale == "ratio":
        df["value"], df["low"], df["high"] = (cells[k].to_numpy(float) for k in ("ratio", "ratio_low", "ratio_high"))
        df = df[(df["value"] > 0) & (df["low"] > 0)]
        unit, fmt, ref = "ratio", ".3g", 1.0
        y_title = f"{b} / {a}, median ({confidence:.0%} CI, log scale)"
        y_scale = alt.Scale(type="log")
        default_title = f"Ratio of median throughput, {b} / {a}"
    else:
        df["value"], df["low"], df["high"] = (cells[k].to_numpy(float) / MBIT
                                              for k in ("difference", "difference_low", "difference_high"))
        unit, fmt, ref = "Mbit/s", ".1f", 0.0
        y_title = f"{b} - {a}, median (Mbit/s), {confidence:.0%} CI"
        y_scale = alt.Undefined  # type: ignore[assignment]
        default_title = f"Difference of median throughput, {b} - {a}"
    x = alt.X("window_kib:Q", title="window (KiB)", scale=alt.Scale(type="log", base=2))
    color = streams_color(df["streams"])
    label = f"{b} / {a}" if scale == "ratio" else f"{b} - {a} (Mbit/s)"
    tooltip = [alt.Tooltip("window_kib:Q", title="window (KiB)"), alt.Tooltip("streams:Q"),
               alt.Tooltip("value:Q", title=label, format=fmt),
               alt.Tooltip("low:Q", title=f"{confidence:.0%} CI low ({unit})", format=fmt),
               alt.Tooltip("high:Q", title=f"{confidence:.0%} CI high ({unit})", format=fmt)]
    base = alt.Chart(df)
    layers = [
        alt.Chart(pd.DataFrame({"ref": [ref]})).mark_rule(color="black", strokeDash=[2, 2]).encode(
            y=alt.Y("ref:Q", scale=y_scale)),
        base.mark_rule(strokeWidth=2).encode(x=x, y=alt.Y("low:Q", scale=y_scale), y2="high:Q", color=color),
        base.mark_point(filled=True, size=50).encode(
            x=x, y=alt.Y("value:Q", title=y_title, scale=y_scale), color=color, tooltip=tooltip),
    ]
    return alt.layer(*layers, title=title or default_title).properties(width=WIDTH, height=HEIGHT)
