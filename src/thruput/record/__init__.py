"""Record TCP sweep campaigns the IEPM way (seed 000), as ``thruput record`` does.

For every (window, streams, repeat) of a :class:`Plan`: an iperf run with ping alongside
(loaded), then ping alone (unloaded), written into a campaign directory in the layout of
docs/design.md (``campaign.yaml``, ``runs.csv``, ``runs/``), resumable and safe to
interrupt. The hosts are described in campaign.yaml: this one from /proc and /sys, the far
one from what iperf3 reports.

>>> from thruput.record import Plan, Target, record            # doctest: +SKIP
>>> record("data/raw/lo", Plan([65536], [1, 2], repeats=1, duration_s=1, pause_s=1),
...        Target("127.0.0.1"))
"""

from .plan import Cell, Plan, parse_counts, parse_size, parse_sizes, run_id
from .runner import Target, run_cell
from .sweep import RecordError, RecordSummary, probe_server, record

__all__ = ["Plan", "Cell", "Target", "record", "run_cell", "probe_server", "RecordError",
           "RecordSummary", "parse_size", "parse_sizes", "parse_counts", "run_id"]
