"""Which function of :mod:`thruput.stats` made each group of a statistics product.

The products are described in :mod:`thruput.stats.product`; these names are what a page
(:mod:`thruput.report.provenance`) and a release (:mod:`thruput.release.numbers`) cite
beside a number, so they live outside :mod:`thruput.stats`, which pages never import.
"""

from __future__ import annotations

__all__ = ["GROUP_FUNCTIONS", "COMPARISON_GROUP_FUNCTIONS", "PRODUCT_FUNCTIONS"]

#: The function of :mod:`thruput.stats` each group of a product comes from (the module
#: docstring says the same in words); a release cites it beside every published number.
#: Groups of a monitor's product come from :func:`thruput.stats.monitor_product`.
GROUP_FUNCTIONS = {
    "cells": "thruput.stats.describe", "plateau": "thruput.stats.plateau",
    "best_cells": "thruput.stats.best_cells", "smallest_product": "thruput.stats.smallest_product",
    "rtt": "thruput.stats.rtt_load", "rtt_pooled": "thruput.stats.rtt_load", "rtt_ecdf": "thruput.stats.ecdf",
    "bound": "thruput.stats.window_limited_throughput", "udp_grid": "thruput.stats.udp_grid",
    "udp_onset": "thruput.stats.udp_onset", "udp_peak": "thruput.stats.udp_onset",
    "latency_fit": "thruput.stats.latency_fit",
}
#: The same for a comparison's product (:func:`thruput.stats.comparison_product`).
COMPARISON_GROUP_FUNCTIONS = {"cells": "thruput.stats.compare", "metadata": "thruput.stats.metadata_diff"}
#: The function that makes a whole product, by ``campaign_kind`` (or ``comparison``).
PRODUCT_FUNCTIONS = {"tcp_sweep": "thruput.stats.campaign_product", "udp_sweep": "thruput.stats.campaign_product",
                     "monitor": "thruput.stats.monitor_product", "comparison": "thruput.stats.comparison_product"}
