"""thruput: network throughput logs as reproducible, labelled data.

Start here
----------
thruput.read(path)
    One log (iperf 2/3, nuttcp, ping, irtt, UDPmon, web100, ss) -> an xarray.Dataset with
    units and provenance; the format is sniffed from the content. ``read_many`` for piles.
thruput.open_campaign(name)
    A campaign of ``data/raw/<name>/`` (a sweep, or a path monitored for weeks) as one
    Dataset; found from any folder inside the project.
thruput.stats
    Pure statistics on those Datasets: summaries with bootstrap CIs, plateaus, RTT under
    load, change points, daily cycles, comparisons, theory. Also ``ds.thruput.<name>``.
thruput.charts
    The site's Altair charts; they draw offline, in JupyterLab too.

Each has its own ``help()``; ``thruput --help`` lists the command line.
"""

from __future__ import annotations

import sys
from importlib import import_module

from . import accessors as _accessors  # noqa: F401  (ds.thruput, da.thruput)
from .contract import validate
from .errors import ParseError, ThruputError
from .reader import read, read_many

__all__ = ["read", "read_many", "open_campaign", "stats", "charts", "validate", "ParseError", "ThruputError"]
__version__ = "0.1.0"


def _in_kernel():
    shell = sys.modules.get("IPython") and getattr(sys.modules["IPython"], "get_ipython", lambda: None)()
    return shell is not None and getattr(shell, "kernel", None) is not None


if _in_kernel():  # JupyterLab, the notebook: Altair must not fetch Vega from a CDN
    import_module(".charts", __name__).enable_offline_renderer()


def __getattr__(name):
    # stats and campaigns pull in SciPy and YAML; import them on first use only
    if name in ("stats", "charts"):
        return import_module(f".{name}", __name__)
    if name == "open_campaign":
        return import_module(".campaign", __name__).open_campaign
    raise AttributeError(f"module 'thruput' has no attribute {name!r}")
