#!/usr/bin/env python3
"""Two network namespaces joined by a veth pair, optionally shaped with ``tc tbf``.

Test tooling for ``thruput record`` (see tools/README.md): it gives a real TCP path between
two "hosts" on one machine, using only addresses inside namespaces it creates.

Command line (needs root and iproute2)::

    tools/netns.py up   NAME [--rate 1gbit] [--burst 256k] [--latency 10ms] [--subnet 10.77.0]
    tools/netns.py down NAME

``up`` creates namespaces ``NAME-a`` and ``NAME-b``, a veth pair ``NAME-va``/``NAME-vb``
(``SUBNET.1/24`` in a, ``SUBNET.2/24`` in b), brings loopback up in both and, with
``--rate``, puts a ``tbf`` root qdisc of that rate on *both* veth ends (so data and ACKs
are shaped alike). It prints the pair as JSON. ``down`` deletes both namespaces (which
deletes the veth pair with them).

From Python (tests)::

    with netns.pair("t1234", rate="1gbit") as p:
        p.run_a(["ping", "-c", "1", p.addr_b])

``netem`` is not available on the machines this project is measured on; for delay use
tools/delayline.py.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
from dataclasses import asdict, dataclass

#: Linux limits interface names to 15 bytes (IFNAMSIZ - 1); veth names are NAME-va/-vb.
IFNAMSIZ = 15

#: tbf defaults: a burst large enough that the timer granularity does not cap the rate at
#: 1 Gbit/s, and a queue of 10 ms of traffic (drop-tail beyond it), like a switch port.
DEFAULT_BURST = "256k"
DEFAULT_LATENCY = "10ms"


@dataclass(frozen=True)
class Pair:
    """Two namespaces joined by a veth pair."""

    name: str
    ns_a: str
    ns_b: str
    dev_a: str
    dev_b: str
    addr_a: str
    addr_b: str
    rate: str | None

    def run_a(self, argv, **kwargs):
        """Run ``argv`` in namespace a (``subprocess.run`` keyword arguments pass through)."""
        return subprocess.run(["ip", "netns", "exec", self.ns_a, *argv], **kwargs)

    def run_b(self, argv, **kwargs):
        """Run ``argv`` in namespace b."""
        return subprocess.run(["ip", "netns", "exec", self.ns_b, *argv], **kwargs)


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def create(name, rate=None, burst=DEFAULT_BURST, latency=DEFAULT_LATENCY, subnet="10.77.0"):
    """Create the pair; on any failure, delete what this call made and re-raise.

    Parameters
    ----------
    name : str
        Prefix of the namespaces (``name-a``, ``name-b``); at most 12 characters so that
        the veth names fit in IFNAMSIZ.
    rate : str, optional
        ``tc`` rate (``"1gbit"``, ``"50mbit"``) for a tbf qdisc on both veth ends.
    burst, latency : str
        tbf bucket size and queue length (as time at ``rate``).
    subnet : str
        First three octets of the /24 used between the namespaces.
    """
    if len(name) + 3 > IFNAMSIZ:
        raise ValueError(f"namespace prefix {name!r} too long (at most {IFNAMSIZ - 3} characters)")
    pair = Pair(name, f"{name}-a", f"{name}-b", f"{name}-va", f"{name}-vb",
                f"{subnet}.1", f"{subnet}.2", rate)
    created = []
    try:
        for ns in (pair.ns_a, pair.ns_b):
            _ip("netns", "add", ns)  # fails if it exists: never take over someone's namespace
            created.append(ns)
        _ip("link", "add", pair.dev_a, "type", "veth", "peer", "name", pair.dev_b)
        created.append(pair.dev_a)
        for ns, dev, addr in ((pair.ns_a, pair.dev_a, pair.addr_a),
                              (pair.ns_b, pair.dev_b, pair.addr_b)):
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            if rate:
                subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root",
                                "tbf", "rate", rate, "burst", burst, "latency", latency],
                               check=True, capture_output=True, text=True)
    except BaseException:
        if pair.dev_a in created:  # still in this namespace if moving it failed
            subprocess.run(["ip", "link", "del", pair.dev_a], capture_output=True)
        for ns in (c for c in created if c != pair.dev_a):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        raise
    return pair


def destroy(name):
    """Delete ``name-a`` and ``name-b`` if they exist (the veth pair goes with them)."""
    for ns in (f"{name}-a", f"{name}-b"):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@contextlib.contextmanager
def pair(name, **kwargs):
    """Context manager: :func:`create` on entry, :func:`destroy` on exit."""
    p = create(name, **kwargs)
    try:
        yield p
    finally:
        destroy(name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    up = sub.add_parser("up", help="create the two namespaces and the veth pair")
    up.add_argument("name")
    up.add_argument("--rate", help="tc tbf rate on both veth ends, e.g. 1gbit")
    up.add_argument("--burst", default=DEFAULT_BURST)
    up.add_argument("--latency", default=DEFAULT_LATENCY)
    up.add_argument("--subnet", default="10.77.0")
    down = sub.add_parser("down", help="delete the two namespaces")
    down.add_argument("name")
    args = parser.parse_args(argv)
    if args.action == "up":
        p = create(args.name, rate=args.rate, burst=args.burst, latency=args.latency,
                   subnet=args.subnet)
        json.dump(asdict(p), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        destroy(args.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
