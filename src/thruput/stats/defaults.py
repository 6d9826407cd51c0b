"""The one set of defaults of every tunable statistic.

``params.yaml`` (section ``stats``) documents the same values; ``thruput pipeline stats``
starts from :data:`DEFAULTS` and overrides only what the parameters file sets, and the
library's keywords (``bootstrap_ci(n_boot=...)``, ``plateau(seed=...)``...) default to
them, so a notebook, the command line and the pipeline agree unless told otherwise.
"""

from __future__ import annotations

__all__ = ["DEFAULTS", "PERCENTILES", "PLATEAU_TOLERANCE", "CONFIDENCE", "N_BOOT", "SEED",
           "BEST_CELLS", "UDP_LOSS_THRESHOLD"]

#: Percentiles (percent) reported besides the median and IQR.
PERCENTILES = (10, 25, 75, 90)
#: A median within this fraction of the plateau level is on the plateau.
PLATEAU_TOLERANCE = 0.1
#: Coverage of every bootstrap interval.
CONFIDENCE = 0.95
#: Bootstrap resamples per interval.
N_BOOT = 1000
#: Seed of every bootstrap (the date the pipeline's parameters were fixed, 2026-11-22).
SEED = 20261122
#: How many best (window, streams) cells to list.
BEST_CELLS = 5
#: Loss fraction above which a UDP spacing counts as lossy.
UDP_LOSS_THRESHOLD = 0.0

#: The ``stats`` section of params.yaml, key -> default (same names as the file).
DEFAULTS = {
    "percentiles": list(PERCENTILES),
    "plateau_tolerance": PLATEAU_TOLERANCE,
    "confidence": CONFIDENCE,
    "bootstrap": N_BOOT,
    "seed": SEED,
    "best_cells": BEST_CELLS,
    "udp_loss_threshold": UDP_LOSS_THRESHOLD,
}
