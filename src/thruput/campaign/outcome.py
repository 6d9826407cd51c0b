"""Why a test failed: the tools' own messages mapped to the outcomes of runs.csv.

The patterns are the messages iperf3 3.x, iperf 2.1 and iputils ping print (checked by
running them against a closed port, a busy server and an address without a route; see
tests/test_monitor_netns.py). The first pattern that matches wins.
"""

from __future__ import annotations

import json
import re

__all__ = ["OUTCOMES", "classify", "iperf3_error", "judge_ping", "cut_outcome", "CUT_KEPT", "PATTERNS", "PING_SHORT",
           "PING_SUMMARY"]

#: ``ok`` and the ways a test fails: the ``outcome`` column of runs.csv (docs/design.md).
OUTCOMES = ("ok", "timeout", "refused", "busy", "unreachable", "error")
#: (outcome, regex on the tool's error text), most specific first.
PATTERNS = (
    ("busy", re.compile(r"server is busy", re.I)),
    ("refused", re.compile(r"connection refused", re.I)),
    ("unreachable", re.compile(r"no route to host|network is unreachable|host unreachable"
                               r"|destination (host|net) unreachable", re.I)),
    ("timeout", re.compile(r"timed out|timeout", re.I)),
)
#: The reason of an imported test whose log was cut off but kept what it measured (its
#: outcome is ``ok``: the statistics count what it measured; the reason says what is
#: missing). A recorded test never has it, so a recorded log cut afterwards is still refused.
CUT_KEPT = "log cut off, what it measured is kept: "

#: iputils ping exit status 1: fewer replies than ``-c`` asked for by the ``-w`` deadline,
#: i.e. some probes were lost, or all of them.
PING_SHORT = 1
#: iputils ping's summary line: "10 packets transmitted, 9 received, ...".
PING_SUMMARY = re.compile(r"^(\d+) packets transmitted, (\d+) received", re.M)


def classify(message):
    """Outcome (``refused``, ``busy``, ``unreachable``, ``timeout``, ``error``) of a message."""
    for outcome, pattern in PATTERNS:
        if pattern.search(message or ""):
            return outcome
    return "error"


def judge_ping(returncode, stdout, stderr):
    """``(outcome, reason)`` of one ping run from its exit status and output.

    Lost probes are data, not a failure: a run with at least one reply is ``ok`` (its
    file has the losses). With no reply at all it is ``unreachable`` (or what the
    message says, e.g. ``Network is unreachable``), and any other exit status an error.
    """
    summary = PING_SUMMARY.search(stdout)
    received = int(summary.group(2)) if summary else 0
    if returncode == 0 or (returncode == PING_SHORT and received > 0):
        return "ok", ""
    notes = [ln for ln in stdout.splitlines() if "nreachable" in ln or "packet loss" in ln]
    message = " ".join((stderr + " " + " ".join(notes[-2:])).split())
    outcome = classify(message)
    if returncode == PING_SHORT and outcome == "error":
        outcome = "unreachable"
    return outcome, message or (f"ping exited {returncode}" if returncode != PING_SHORT
                                else "no reply")


def iperf3_error(text):
    """The ``error`` iperf3 -J reported in ``text`` ("" if none; a note if not JSON)."""
    try:
        result = json.loads(text)
    except ValueError:
        return "no JSON result" if text.strip() else ""
    return str(result.get("error") or "") if isinstance(result, dict) else "no JSON object"


def cut_outcome(ds):
    """``(outcome, reason)`` of an imported log a reader read as cut off (``truncated``):
    ``ok`` with :data:`CUT_KEPT` where it kept a measurement (a throughput, or a probe that
    was answered), else ``error`` ("log cut off: ...")."""
    import numpy as np

    truncation = ds.attrs.get("truncation", "")
    if ds.attrs.get("kind") == "throughput" and "throughput" in ds:
        kept = bool(np.isfinite(np.asarray(ds["throughput"].values, dtype=float)).any())
    elif ds.attrs.get("kind") == "rtt" and "rtt" in ds:
        kept = bool(np.isfinite(np.asarray(ds["rtt"].values, dtype=float)).any())
    else:
        kept = False
    return ("ok", CUT_KEPT + truncation) if kept else ("error", f"log cut off: {truncation}")
