"""Longitudinal monitoring: ``thruput monitor`` runs a campaign's tests on a schedule.

Modules: :mod:`.schedule` (pure: slots, jitter, order, buffer plans), :mod:`.runner`
(one test: run, classify, write), :mod:`.campaign` (campaign.yaml and the loop),
:mod:`.lock`, :mod:`.manifest` (runs.csv), :mod:`.status`, :mod:`.new`;
:mod:`.reader` (the raw files of a campaign into one Dataset), :mod:`.importer` (an archive
of logs into a campaign), :mod:`.check` and :mod:`.gaps` (``thruput campaign check``).
Layout of a monitor campaign: docs/design.md, "Monitor campaigns".
"""

from .campaign import load_config, monitor
from .lock import CampaignLock, CampaignLocked
from .manifest import MONITOR_MANIFEST_COLUMNS, read_rows
from .schedule import Schedule, TestSpec

__all__ = ["monitor", "load_config", "CampaignLock", "CampaignLocked",
           "MONITOR_MANIFEST_COLUMNS", "read_rows", "Schedule", "TestSpec"]
