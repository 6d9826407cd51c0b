"""What the site's notebooks show: tables and charts built from :mod:`thruput.stats`.

Notebooks stay one line per cell (``report.cell_table(ds)``, ``report.study_charts(...)``).
Nothing here parses logs or computes an estimator itself; it arranges what the statistics
return into tables with units in their headers, and picks the charts.
"""

from .campaigns import *  # noqa: F401,F403
from .campaigns import __all__ as _campaigns
from .monitor import *  # noqa: F401,F403
from .monitor import __all__ as _monitor
from .studies import *  # noqa: F401,F403
from .studies import __all__ as _studies
from .provenance import *  # noqa: F401,F403
from .provenance import __all__ as _provenance
from . import design  # noqa: F401  (a design campaign's page: report.design.<name>)
from . import health  # noqa: F401  (the monitor health page: report.health.<name>)

__all__ = [*_campaigns, *_studies, *_monitor, *_provenance, "design", "health"]
