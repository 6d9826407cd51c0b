"""thruput: network throughput logs (iperf, ping, UDPmon, web100) as reproducible data.

The public surface is small: :func:`read` a log, :func:`open_campaign` a campaign,
:mod:`thruput.stats` for the statistics.
"""

from __future__ import annotations

from importlib import import_module

from .contract import validate
from .errors import ParseError, ThruputError
from .reader import read, read_many

__all__ = ["read", "read_many", "open_campaign", "stats", "validate", "ParseError", "ThruputError"]
__version__ = "0.1.0"


def __getattr__(name):
    # stats and campaigns pull in SciPy and YAML; import them on first use only
    if name == "stats":
        return import_module(".stats", __name__)
    if name == "open_campaign":
        return import_module(".campaign", __name__).open_campaign
    raise AttributeError(f"module 'thruput' has no attribute {name!r}")
