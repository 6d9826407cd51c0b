"""The campaign kinds whose code lives above :mod:`thruput.campaign`, reached by name.

:mod:`thruput.campaign` is the bottom layer of campaigns (docs/design.md, "Layers"): it
imports neither :mod:`thruput.record`, :mod:`thruput.monitor` nor :mod:`thruput.design`,
which build on it. Where one of its entry points serves every kind
(:func:`thruput.open_campaign`, ``thruput campaign check``), the kind's own function is
named here as ``"module:function"`` and imported on first use, as
:data:`thruput.contract.CAMPAIGN_CHECKS` names each kind's ``validate``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable

__all__ = ["OPENERS", "CHECKS", "by_name"]

#: kind -> ``open(directory, metadata) -> Dataset`` of its raw files.
OPENERS = {"monitor": "thruput.monitor.reader:open_monitor",
           "design": "thruput.design.dataset:open_design"}
#: kind -> ``check(directory, metadata, node, problem, unlisted) -> [Problem]``: its part of
#: ``thruput campaign check`` after campaign.yaml's schema (:mod:`thruput.campaign.check`).
CHECKS = {"monitor": "thruput.monitor.check:check_campaign"}


def by_name(target: str) -> Callable[..., Any]:
    """The function ``"package.module:function"`` names, its module imported now."""
    module, _, name = target.partition(":")
    return getattr(import_module(module), name)
