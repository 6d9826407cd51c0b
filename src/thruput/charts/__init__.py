"""Altair charts of the site, one function per chart, over tidy pandas DataFrames.

Charts only present: every number they show was computed by :mod:`thruput.stats` (through
:mod:`thruput.report`). Throughput is shown in Mbit/s, windows in KiB, times in ms or us,
and every axis title says its unit. Streams counts have the same colour on every page.

One module per kind of chart, each name also here (``thruput.charts.heatmap``):

- :mod:`~thruput.charts.style`: the theme, sizes, streams colours, units, log-axis ticks;
- :mod:`~thruput.charts.sweep`: a window x streams sweep (heatmap, throughput vs window
  or streams, every run per cell, per-interval throughput);
- :mod:`~thruput.charts.latency`: ping RTT (ECDF, loaded RTT vs throughput);
- :mod:`~thruput.charts.udpmon`: UDPmon scans (rate and loss vs spacing, latency vs size);
- :mod:`~thruput.charts.tcp`: TCP instrumentation (cwnd and RTT over time);
- :mod:`~thruput.charts.ledger`: the reproduction ledger's statuses and differences;
- :mod:`~thruput.charts.published`: a source study's published figures beside theory and
  a new measurement;
- :mod:`~thruput.charts.comparison`, :mod:`~thruput.charts.design`,
  :mod:`~thruput.charts.monitor`, :mod:`~thruput.charts.health`: the comparison, design,
  monitor and health pages (used as modules: ``charts.monitor.time_series``).

Charts never load anything from the network: inside ``thruput site build`` they render as a
``<div>`` and a call of the site's own ``vegaEmbed``; in a Jupyter kernel (JupyterLab, the
notebook) through Altair's widget renderer with Vega bundled from vl-convert. Both are
switched on by :func:`enable_offline_renderer` (see :mod:`thruput.charts.rendering`),
which ``import thruput`` calls inside a kernel.
"""

from __future__ import annotations

from .latency import rtt_ecdf, rtt_vs_throughput
from .ledger import STATUS_DOMAIN, relative_differences, status_color, status_counts, status_values
from .published import category_bars, grouped_ranges, range_dots, side_by_side, slope_dots, theory_points
from .rendering import enable_offline_renderer
from .style import STREAMS_DOMAIN, streams_color
from .sweep import cell_boxplots, heatmap, interval_series, throughput_vs_streams, throughput_vs_window
from .tcp import tcp_trace
from .udpmon import latency_vs_size, udp_vs_spacing

# constants and helpers importable from here too (thruput.charts.PAIR_WIDTH), not in __all__
from .ledger import STATUS_RANGE  # noqa: F401
from .published import PAIR_WIDTH  # noqa: F401
from .style import HEIGHT, MBIT, STREAMS_RANGE, THEME, WIDTH, log_ticks, tick_format  # noqa: F401
from .sweep import REFERENCE_DASH, REFERENCE_DOMAIN  # noqa: F401

__all__ = [
    "STREAMS_DOMAIN", "streams_color", "heatmap", "throughput_vs_window", "cell_boxplots",
    "interval_series", "rtt_ecdf", "latency_vs_size", "udp_vs_spacing", "tcp_trace",
    "enable_offline_renderer",
    "STATUS_DOMAIN", "status_color", "status_values", "status_counts", "range_dots", "theory_points",
    "grouped_ranges", "category_bars", "slope_dots", "throughput_vs_streams",
    "rtt_vs_throughput", "side_by_side", "relative_differences",
]

