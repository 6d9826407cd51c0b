"""Statistics on contract and campaign Datasets: pure functions on labelled arrays.

One module per family, every public function re-exported here; ``ds.thruput`` / ``da.thruput``
(:mod:`thruput.stats.accessor`, registered by ``import thruput``) only forward here.

==============  =============================================================
module          what
==============  =============================================================
summaries       describe, bootstrap_ci, ecdf, frequency
plateau         plateau, best_cells, top_fraction, smallest_product
bounds          window_bound (median beside n x window / RTT and capacity)
load            rtt_load, rtt_growth, trend_vs_throughput
udp             udp_grid, udp_onset, offered_rate
latency         latency_line (the line, as a dict), latency_fit (fit and points, a Dataset)
tcp             tcp_series, tcp_summary, congestion_vs_throughput
compare         compare, hodges_lehmann, metadata_diff
periodic        periodogram, daily_cycle
changes         change_points (level shifts with bootstrap bounds)
monitor         rolling_summary, buffer_curves, udp_tcp_ratio, compare_periods,
                direction_asymmetry, gap_report, udp_loss_offered (monitor campaigns)
grouped         grouped_summary: per-group summaries, exact or by sketch on dask
design          design_summary, design_plateau, level_comparison, compare_designs,
                design_product: any design campaign, along any of its factors
monitor_tables  monitor_product: every table of a monitor campaign's page
study_effects   study_effects_product: the campaign each study page shows beside a
                published effect (effect_applies, effect_strength, effect_scores)
theory          bdp, gige_goodput, window_limited_throughput, mathis_throughput, ...
jitter          ipdv, jitter_rfc3550, loss_bursts, jain_fairness
routes          hop_sequence, route_changes (when a path's route changes)
defaults        DEFAULTS: the one set of defaults (params.yaml's stats section)
==============  =============================================================

Every tunable (percentiles, tolerance, bootstrap size, seed) is a plain keyword whose
default is in :data:`DEFAULTS` (module ``defaults``), the values ``params.yaml`` documents;
the pipeline passes the file's values explicitly. :mod:`thruput.stats.product` computes
the whole statistics product of a campaign for the ``stats`` stage.
"""

from __future__ import annotations

from .bounds import window_bound
from .changes import change_points
from .routes import hop_sequence, route_changes
from .compare import compare, flatten_metadata, hodges_lehmann, metadata_diff
from .defaults import DEFAULTS
from .jitter import (ipdv, jain_fairness, jitter_rfc3550, loss_bursts, lost_indicator,
                     reply_delays)
from .design import (compare_designs, design_plateau, design_product, design_summary,
                     level_comparison)
from .grouped import grouped_summary
from .latency import fit_latency, latency_fit, latency_line  # noqa: F401 (fit_latency: old name)
from .load import rtt_growth, rtt_load, trend_vs_throughput
from .monitor import (buffer_curves, compare_periods, direction_asymmetry, gap_report,
                      rolling_summary, udp_loss_offered, udp_tcp_ratio)
from .periodic import daily_cycle, periodogram, time_series
from .monitor_tables import monitor_product, series_change_points
from .study_effects import effect_applies, effect_scores, effect_strength, study_effects_product
from .plateau import best_cells, plateau, smallest_product, top_fraction
from .summaries import DEFAULT_PERCENTILES, bootstrap_ci, describe, ecdf, frequency
from .tcp import (congestion_vs_throughput, counter_increments, counter_total, tcp_series,
                  tcp_summary)
from .theory import (bdp, bdp_packets, bus_rate, expected_latency_slope, gige_goodput, mathis_loss_rate,
                     mathis_throughput, reno_recovery_time, window_limited_throughput)
from .udp import offered_rate, udp_grid, udp_onset

__all__ = [
    # the defaults of every tunable (params.yaml documents the same values)
    "DEFAULTS",
    # summaries
    "describe", "bootstrap_ci", "ecdf", "frequency", "DEFAULT_PERCENTILES",
    # plateaus and best cells
    "plateau", "best_cells", "top_fraction", "smallest_product", "window_bound",
    # RTT, loss and load
    "rtt_load", "rtt_growth", "trend_vs_throughput",
    # UDPmon
    "udp_grid", "udp_onset", "offered_rate", "latency_line", "latency_fit",
    # web100 / tcp_info
    "tcp_series", "tcp_summary", "congestion_vs_throughput", "counter_increments",
    "counter_total",
    # campaigns compared
    "compare", "hodges_lehmann", "metadata_diff", "flatten_metadata",
    # long campaigns
    "periodogram", "daily_cycle", "time_series",
    # delay variation, loss bursts, fairness
    "ipdv", "jitter_rfc3550", "loss_bursts", "jain_fairness", "reply_delays", "lost_indicator",
    # monitor campaigns
    "change_points", "rolling_summary", "buffer_curves", "udp_tcp_ratio", "compare_periods",
    "direction_asymmetry", "gap_report", "udp_loss_offered", "grouped_summary", "monitor_product",
    "series_change_points", "hop_sequence", "route_changes",
    # design campaigns, along any factor
    "design_summary", "design_plateau", "level_comparison", "compare_designs", "design_product",
    # the campaigns the study pages show beside the published effects
    "study_effects_product", "effect_applies", "effect_strength", "effect_scores",
    # theory
    "bdp", "bdp_packets", "gige_goodput", "window_limited_throughput", "mathis_throughput",
    "mathis_loss_rate", "reno_recovery_time", "bus_rate", "expected_latency_slope",
]
