"""perfSONAR 5 archive documents (OpenSearch ``pscheduler_*``) of throughput tests: one document,
an OpenSearch ``_search`` response, or an NDJSON dump.

The mapping, the wrappings read and the checks are described in :mod:`._pscheduler_archive`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

from . import _pscheduler_archive

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "pscheduler_archive_throughput"
KIND = "throughput"
TOOL = _pscheduler_archive.TOOL
BINARY = False


def sniff(head: str) -> bool:
    """True if ``head`` (the first 4 KB) is an archive document this format reads."""
    return _pscheduler_archive.sniff(head, NAME)


def parse(text: str) -> xr.Dataset:
    """Parse perfSONAR archive documents (see :mod:`._pscheduler_archive`) into a throughput Dataset."""
    return _pscheduler_archive.parse(text, NAME)
