"""perfSONAR pScheduler results of throughput tests (iperf3, nuttcp tools): one run, its streams and intervals.

The mapping, the wrappings read and the checks are described in :mod:`._pscheduler`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

from . import _pscheduler

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "pscheduler_throughput"
KIND = "throughput"
TOOL = _pscheduler.TOOL
BINARY = False


def sniff(head: str) -> bool:
    """True if ``head`` (the first 4 KB) is a pScheduler result this format reads."""
    return _pscheduler.sniff(head, NAME)


def parse(text: str) -> xr.Dataset:
    """Parse a pScheduler result (see :mod:`._pscheduler`) into a throughput Dataset."""
    return _pscheduler.parse(text, NAME)
