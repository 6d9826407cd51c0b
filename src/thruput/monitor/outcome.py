"""Why a test failed: the tools' own messages mapped to the outcomes of runs.csv.

The patterns are the messages iperf3 3.x, iperf 2.1 and iputils ping print (checked by
running them against a closed port, a busy server and an address without a route; see
tests/test_monitor_netns.py). The first pattern that matches wins.
"""

from __future__ import annotations

import json
import re

__all__ = ["classify", "iperf3_error", "PATTERNS", "PING_NO_REPLY"]

#: (outcome, regex on the tool's error text), most specific first.
PATTERNS = (
    ("busy", re.compile(r"server is busy", re.I)),
    ("refused", re.compile(r"connection refused", re.I)),
    ("unreachable", re.compile(r"no route to host|network is unreachable|host unreachable"
                               r"|destination (host|net) unreachable", re.I)),
    ("timeout", re.compile(r"timed out|timeout", re.I)),
)
#: ping exit status 1: it ran, but no probe got a reply.
PING_NO_REPLY = 1


def classify(message):
    """Outcome (``refused``, ``busy``, ``unreachable``, ``timeout``, ``error``) of a message."""
    for outcome, pattern in PATTERNS:
        if pattern.search(message or ""):
            return outcome
    return "error"


def iperf3_error(text):
    """The ``error`` iperf3 -J reported in ``text`` ("" if none; a note if not JSON)."""
    try:
        result = json.loads(text)
    except ValueError:
        return "no JSON result" if text.strip() else ""
    return str(result.get("error") or "") if isinstance(result, dict) else "no JSON object"
