"""The look every chart of the site shares: the Altair theme (legends below the plot), the
page's chart size, the fixed colours of streams counts, units (Mbit/s, KiB) and the 1-2-5
ticks of log axes."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

import altair as alt
import pandas as pd

__all__ = ["STREAMS_DOMAIN", "STREAMS_RANGE", "MBIT", "WIDTH", "HEIGHT", "THEME", "WHOLE_LABELS",
           "streams_color", "to_mbit", "with_kib", "log_ticks", "tick_format"]

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

#: Category axes show their whole label (board and bus names are long).
WHOLE_LABELS = alt.Axis(labelLimit=320)


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


def to_mbit(df: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """A copy of ``df`` with ``columns`` (bit/s, those it has) in Mbit/s."""
    out = df.copy()
    for c in columns:
        if c in out:
            out[c] = out[c] / MBIT
    return out


def with_kib(df: pd.DataFrame, column: str = "window") -> pd.DataFrame:
    """A copy of ``df`` with ``window_kib``: ``column`` (byte) in KiB."""
    out = df.copy()
    out["window_kib"] = out[column] / 1024
    return out


def log_ticks(low, high):
    """1-2-5 tick values covering ``low``..``high`` (positive), for log and symlog axes,
    whose own ticks are too few (symlog) or crowd into each other (log)."""
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
