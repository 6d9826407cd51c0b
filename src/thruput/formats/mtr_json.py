"""mtr's report in JSON (kind ``route``): ``mtr --json`` (``-j``), mtr 0.9x.

::

    {"report": {"mtr": {"src": "vm", "dst": "10.77.3.2", "tos": 0, "tests": 3,
                        "psize": "64", "bitpattern": "0x00"},
                "hubs": [{"count": 1, "host": "10.77.1.1", "Loss%": 0.0, "Snt": 3,
                          "Last": 0.082, "Avg": 0.167, "Best": 0.062, "Wrst": 0.359,
                          "StDev": 0.165}, ...]}}

One hub per hop (``count`` its TTL; a string in mtr 0.92), ``host`` the address with
``-n``, the name without it (``name (address)`` with ``-b``), ``???`` where no probe was
answered; statistics of the ``Snt`` probes sent to it in ms and percent. mtr reports no
single probe but the last (``Last``).

Mapped onto the ``route`` kind: one ``hop`` per hub, one ``probe`` a hop holding the last
probe (``hop_rtt`` = ``Last``; NaN and no address where ``host`` is ``???``). The
statistics are extras on ``hop``: ``mtr_loss`` (percent), ``mtr_sent``, ``mtr_avg``,
``mtr_best``, ``mtr_worst``, ``mtr_stdev`` (ms; NaN where every probe was lost: mtr
prints 0.0). ``route_time`` is NaT (mtr's JSON has no time). Attrs: ``route_target`` and
``route_target_address`` (``dst``), ``route_reached`` (the last hub's address is the
target), ``mtr_source``, ``mtr_tests``, ``mtr_packet_bytes``.

A document cut off keeps its complete hubs and says so in ``truncation``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import ipaddress
import re

import numpy as np

from ..contract import build
from ..errors import ParseError
from ._json import read_document, salvage

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "mtr_json"
KIND = "route"
TOOL = "mtr"
BINARY = False

_SNIFF = re.compile(r'^\s*\{\s*"report"\s*:\s*\{\s*"mtr"\s*:\s*\{')
#: The first key of a hub.
HUB_KEY = re.compile(r'"count"\s*:')
#: What mtr prints for a hop that answered no probe.
NO_HOST = "???"
#: ``name (address)`` of ``mtr -b``.
NAME_ADDRESS = re.compile(r"^(\S+) \(([^()\s]+)\)$")
#: hub key -> (extra, units, long_name).
STATISTICS = {"Loss%": ("mtr_loss", "percent", "probes of the hop that got no answer"),
              "Snt": ("mtr_sent", "count", "probes sent to the hop"),
              "Avg": ("mtr_avg", "ms", "mean round-trip time of the hop's answered probes"),
              "Best": ("mtr_best", "ms", "shortest round-trip time of the hop's answered probes"),
              "Wrst": ("mtr_worst", "ms", "longest round-trip time of the hop's answered probes"),
              "StDev": ("mtr_stdev", "ms", "standard deviation of the hop's round-trip times")}
_NAN = float("nan")


def _number(value, what, integer=False):
    """A number of the report (mtr 0.92 prints some as strings), else a ParseError."""
    try:
        out = float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        out = None
    if out is None or out != out or abs(out) > 1e15 or (integer and out != int(out)):
        raise ParseError(f"{what} {value!r} is not a{'n integer' if integer else ' number'}", line=1)
    return int(out) if integer else out


def sniff(head: str) -> bool:
    """True if ``head`` opens an mtr JSON report."""
    return bool(_SNIFF.match(head))


def _salvaged(text):
    found = salvage(text, descend={("report",), ("report", "hubs")})
    if found is None:
        raise ParseError("not an mtr JSON report (no top-level object)", line=1)
    return found.doc, found.end, "the file is cut off: kept every complete hop"


def _is_address(text):
    try:
        ipaddress.ip_address(text.split("%")[0])
        return True
    except ValueError:
        return False


def parse(text: str) -> xr.Dataset:
    """Parse an mtr ``--json`` report into a ``route`` Dataset.

    Raises
    ------
    ParseError
        Empty input, bad JSON, or no ``report.mtr``.
    """
    document = read_document(text, _salvaged)
    report = document.doc.get("report") if isinstance(document.doc, dict) else None
    if not isinstance(report, dict) or not isinstance(report.get("mtr"), dict):
        raise ParseError("not an mtr JSON report (no report.mtr)", line=1)
    if document.lost:
        document.ledger.truncated(document.lost)
    head, hubs = report["mtr"], [h for h in report.get("hubs") or [] if isinstance(h, dict)]
    n = len(hubs)
    address, name = np.full((n, 1), "", dtype=object), np.full((n, 1), "", dtype=object)
    rtt = np.full((n, 1), _NAN)
    stats = {key: np.full(n, _NAN) for key in STATISTICS}
    for i, hub in enumerate(hubs):
        host = str(hub.get("host", NO_HOST))
        answered = host != NO_HOST
        m = NAME_ADDRESS.match(host)
        if m:
            name[i, 0], address[i, 0] = m.group(1), m.group(2)
        elif answered and _is_address(host):
            address[i, 0] = host
        elif answered:
            name[i, 0] = host
        if answered and hub.get("Last") is not None:
            rtt[i, 0] = _number(hub["Last"], f"hub {i + 1} Last")
        for key in STATISTICS:
            value = hub.get(key)
            if value is not None and (answered or key in ("Loss%", "Snt")):
                stats[key][i] = _number(value, f"hub {i + 1} {key}")
    target = str(head.get("dst", ""))
    reached = bool(n) and target in (address[-1, 0], name[-1, 0])
    # each hub's line: where its "count" key is (the report is printed one key a line)
    at = [text.count("\n", 0, m.start()) + 1 for m in HUB_KEY.finditer(text)][:n]
    lines = at if len(at) == n else [1] * n
    return build(
        KIND,
        {"hop_ttl": (("hop",), np.array([_number(h.get("count", i + 1), f"hub {i + 1} count", integer=True)
                                         for i, h in enumerate(hubs)], dtype=np.int64)),
         "hop_address": (("hop", "probe"), address),
         "hop_name": (("hop", "probe"), name),
         "hop_rtt": (("hop", "probe"), rtt),
         "hop_annotation": (("hop", "probe"), np.full((n, 1), "", dtype=object)),
         "route_time": ((), np.datetime64("NaT", "ns")),
         "line": (("hop",), np.array(lines, dtype=np.int64))},
        extras={extra: (("hop",), stats[key], units, long_name)
                for key, (extra, units, long_name) in STATISTICS.items()},
        fmt=NAME, tool=TOOL, ledger=document.ledger,
        attrs={"route_target": target, "route_target_address": target if _is_address(target) else "",
               "route_reached": int(reached), "mtr_source": str(head.get("src", "")),
               "mtr_tests": _number(head.get("tests") or 0, "tests", integer=True),
               "mtr_packet_bytes": _number(head.get("psize") or 0, "psize", integer=True)},
        tool_summary={"tests": head.get("tests")},
    )
