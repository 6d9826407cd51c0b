"""traceroute output of Linux (Dmitry Butskoy's traceroute 2.x) and the BSDs (kind ``route``).

What traceroute prints, numeric (``-n``) or with names::

    traceroute to 10.77.3.2 (10.77.3.2), 30 hops max, 60 byte packets
     1  r1.tph5.test (10.77.1.1)  0.034 ms  0.007 ms  0.006 ms
     2  * 10.77.2.2  0.015 ms *
     3  10.77.1.1  0.045 ms !N  0.007 ms !N  0.007 ms !N
     4  a (10.0.0.1)  1.2 ms b (10.0.0.5)  1.4 ms  1.3 ms

One line per hop (its TTL first), then each probe's answer in order: ``*`` (none within
the wait), or a round-trip time ``R ms`` from the address named last on the line; an
address (``name (address)``, or the bare address with ``-n``) is printed before the first
probe it answered and again whenever the next probe is answered from another one (load
balancing). An answer that is not "time exceeded" is marked after its time: ``!H`` host,
``!N`` network, ``!P`` protocol unreachable, ``!S`` source route failed, ``!F-<mtu>``
fragmentation needed, ``!X`` communication administratively prohibited, ``!V`` host
precedence violation, ``!C`` precedence cutoff, ``!U``/``!W`` (IPv6: address
unreachable, no route), ``!<code>`` any other ICMP unreachable code (traceroute(8)).
IPv6 addresses are printed the same way.

Mapped onto the ``route`` kind: one ``hop`` per hop line, ``probe`` the probes of each
(padded with ``""``/NaN when hops printed fewer); ``hop_address``, ``hop_name`` (``""``
with ``-n``), ``hop_rtt`` (ms) and ``hop_annotation`` per probe; ``route_time`` NaT
(traceroute prints no time; a timestamping wrapper's prefix sets it, see
:mod:`._prefix`). Attrs: ``route_target`` and ``route_target_address`` (the header's),
``route_reached`` (1 when a probe of the last hop was answered from the target address),
``traceroute_max_hops`` and ``traceroute_packet_bytes``.

A file that ends before the route did (no answer from the target, no unreachable mark on
its last hop, fewer hops than the maximum) is cut off: its hops are kept and
``truncation`` says after which hop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import re

import numpy as np

from ..contract import Ledger, build, split_lines
from ..errors import ParseError

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "traceroute"
KIND = "route"
TOOL = "traceroute"
BINARY = False

#: ``traceroute to HOST (ADDRESS), N hops max, M byte packets`` (traceroute6 on the BSDs;
#: FreeBSD adds ``, K probes`` ... nothing we need).
HEADER = re.compile(r"^traceroute6? to (\S+) \(([^()\s]+)\),? (\d+) hops max,? (\d+) byte packets.*$")
#: A hop line: its TTL, then the probes.
HOP = re.compile(r"^\s{0,3}(\d{1,3})  ?(\S.*)$")
#: The tokens of a hop line, in the order they may appear.
TOKEN = re.compile(
    r"\s*(?:(?P<star>\*)"
    r"|(?P<rtt>\d+(?:\.\d+)?) ms"
    r"|(?P<ann>!(?:[HNPSXVCUWT]|F-?\d*|<?\d+>?)?)(?=\s|$)"
    r"|(?P<name>[^\s()*!]+) \((?P<addr>[^\s()]+)\)"
    r"|(?P<bare>[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:%\w+)?))"
    r"(?=\s|$)")
_NAN = float("nan")


def sniff(head: str) -> bool:
    """True if the first non-blank line of ``head`` is traceroute's header."""
    for line in head.split("\n")[:5]:
        if line.strip():
            return bool(HEADER.match(line.rstrip("\r")))
    return False


def _probes(rest):
    """The probes of a hop line's ``rest``: ``[(address, name, rtt ms, annotation)]``;
    None if a token is no part of traceroute's output."""
    probes, address, name, pos = [], "", "", 0
    rest = rest.rstrip()
    while pos < len(rest):
        m = TOKEN.match(rest, pos)
        if m is None or m.end() == pos:
            return None
        pos = m.end()
        if m["star"]:
            probes.append(["", "", _NAN, ""])
        elif m["rtt"]:
            if not address:
                return None          # a time before any address
            probes.append([address, name, float(m["rtt"]), ""])
        elif m["ann"]:
            if not probes or probes[-1][3] or not probes[-1][0]:
                return None
            probes[-1][3] = m["ann"]
        else:
            address, name = (m["addr"], m["name"]) if m["addr"] else (m["bare"], "")
    return probes


def parse(text: str) -> xr.Dataset:
    """Parse traceroute output into a ``route`` Dataset.

    Raises
    ------
    ParseError
        Empty input, no header, or a line that is no part of traceroute's output.
    """
    lines = split_lines(text)
    if not lines or not text.strip():
        raise ParseError("empty input", line=1 if lines else None)
    ledger = Ledger(len(lines), lines=lines)
    header, hops = None, []  # type: ignore[var-annotated]
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        if not line.strip():
            ledger.skip(n, "blank")
            continue
        if header is None:
            m = HEADER.match(line)
            if m is None:
                raise ParseError(f"not traceroute output: the first line is {line[:80]!r}", line=n)
            header = m
            ledger.parsed(n)
            continue
        m = HOP.match(line)
        probes = _probes(m.group(2)) if m else None
        if probes is None:
            ledger.error(n, f"not a traceroute hop line: {line[:120]!r}")
            continue
        ttl = int(m.group(1))  # type: ignore[union-attr]
        if hops and ttl != hops[-1][0] + 1:
            ledger.error(n, f"hop {ttl} follows hop {hops[-1][0]}")
            continue
        hops.append((ttl, probes, n))
        ledger.parsed(n)
    if header is None:
        raise ParseError("no traceroute header line", line=1)
    target, target_address, max_hops = header.group(1), header.group(2), int(header.group(3))
    last = hops[-1][1] if hops else []
    reached = any(p[0] == target_address for p in last)
    ended = reached or any(p[3] for p in last) or (hops and hops[-1][0] >= max_hops)
    if not ended:
        ledger.truncated(f"cut off after hop {hops[-1][0]}" if hops else "cut off before the first hop")
    width = max((len(p) for _, p, _ in hops), default=0)

    def table(i, fill, dtype):
        out = np.full((len(hops), width), fill, dtype=dtype)
        for h, (_, probes, _) in enumerate(hops):
            for k, probe in enumerate(probes):
                out[h, k] = probe[i]
        return out

    return build(
        KIND,
        {"hop_ttl": (("hop",), np.array([t for t, _, _ in hops], dtype=np.int64)),
         "hop_address": (("hop", "probe"), table(0, "", object)),
         "hop_name": (("hop", "probe"), table(1, "", object)),
         "hop_rtt": (("hop", "probe"), table(2, _NAN, float)),
         "hop_annotation": (("hop", "probe"), table(3, "", object)),
         "route_time": ((), np.datetime64("NaT", "ns")),
         "line": (("hop",), np.array([n for _, _, n in hops], dtype=np.int64))},
        fmt=NAME, tool=TOOL, ledger=ledger,
        attrs={"route_target": target, "route_target_address": target_address,
               "route_reached": int(reached), "traceroute_max_hops": max_hops,
               "traceroute_packet_bytes": int(header.group(4))},
        tool_summary={"max_hops": max_hops, "packet_bytes": int(header.group(4))},
    )
