"""Statistics on contract Datasets: pure functions from DataArray to DataArray/Dataset.

One module per family; every public function is re-exported here.
"""

from __future__ import annotations

from .latency import fit_latency

__all__ = ["fit_latency"]
