"""perfSONAR esmond archive time series of throughput (bit/s per test run).

The event types, the wrapper read and the checks are described in :mod:`._esmond`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

from . import _esmond

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "esmond_throughput"
KIND = "throughput"
TOOL = _esmond.TOOL
BINARY = False


def sniff(head: str) -> bool:
    """True if ``head`` (the first 4 KB) is an esmond time series this format reads."""
    return _esmond.sniff(head, NAME)


def parse(text: str) -> xr.Dataset:
    """Parse an esmond time series (see :mod:`._esmond`) into a throughput Dataset."""
    return _esmond.parse(text, NAME)
