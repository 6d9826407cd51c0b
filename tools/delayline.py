#!/usr/bin/env python3
"""A userspace delay line over two TUN devices: a path with tens of ms of round-trip time.

Test tooling (see tools/README.md). ``netem`` is not available on the machines thruput is
measured on, so this gives a long path instead: two namespaces, each with a TUN device,
and this process in between as the "wire". Every IP packet read from one TUN device is
queued at a bottleneck of ``--rate`` with a drop-tail buffer of ``--queue`` bytes, held
for ``--delay`` (one way) and written into the other TUN device. Both directions are
modelled alike, so the round-trip time is twice ``--delay`` plus the queueing delay.

Command line (needs root, iproute2 and /dev/net/tun)::

    tools/delayline.py up NAME [--delay 20ms] [--rate 50mbit] [--queue 256k] [--subnet 10.78.0]
                              [--loss 0.01] [--seed 1]
    tools/delayline.py set NAME [--delay 40ms] [--rate 30mbit]
    tools/delayline.py down NAME

``up`` creates namespaces ``NAME-a`` (address ``SUBNET.1``) and ``NAME-b`` (``SUBNET.2``)
joined by point-to-point TUN devices ``NAME-ta``/``NAME-tb``, prints one JSON line
describing the path once it carries packets, and forwards until SIGINT or SIGTERM; then it
prints its packet counts (forwarded, dropped at the queue) as one JSON line on stderr and
deletes both namespaces. ``set`` changes the delay and/or rate of a running path (both
directions; packets already in flight keep their times): it writes the new values to
``/run/thruput-delayline/NAME.set`` and sends SIGHUP to the forwarder, which applies them
and prints one JSON line with the time of the change. ``down`` deletes the namespaces
(the forwarder then stops).

From Python (tests)::

    with delayline.path("d1234", delay="20ms", rate="50mbit") as p:
        subprocess.run(["ip", "netns", "exec", p["ns_a"], "ping", "-c", "1", p["addr_b"]])

``--loss`` drops each packet, either way, with that probability before the queue (random,
independent, from a generator seeded by ``--seed``: netem's ``loss random``); the drops
are counted apart (``lost``).

Model and its limits: the bottleneck serialises packets at ``rate`` (so a packet of L
bytes occupies it for 8L/rate seconds); a packet that would find more than ``queue`` bytes
waiting is dropped (drop-tail). Timers are epoll's, so a packet may leave up to about
1 ms late; the forwarder is one Python process and carries some tens of Mbit/s with a
1500-byte MTU, not Gbit/s.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import fcntl
import json
import os
import random
import re
import select
import signal
import struct
import subprocess
import sys
import time

#: linux/if_tun.h: the ioctl that attaches a file descriptor to a named TUN device, and
#: its flags: IFF_TUN (IP packets, no Ethernet header), IFF_NO_PI (no 4-byte packet info).
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
#: IFNAMSIZ - 1: the longest interface name Linux accepts.
MAX_IFNAME = 15
#: Largest IP packet a TUN device hands us.
MAX_PACKET = 65536
#: Packets read from one device before timers are looked at again.
READ_BATCH = 64

#: tc-style suffixes: rates in bit/s (decimal, as tc), sizes in bytes (binary, as tc).
RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2}
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
_QUANTITY = re.compile(r"^\s*([0-9.]+)\s*([a-z]*)\s*$")


def _parse(text, units, what):
    m = _QUANTITY.match(str(text).lower())
    if not m or m.group(2) not in units:
        raise ValueError(f"bad {what} {text!r}; use a number with one of {sorted(units)}")
    return float(m.group(1)) * units[m.group(2)]


def parse_rate(text):
    """``"50mbit"`` -> 5e7 (bit/s)."""
    return _parse(text, RATE_UNITS, "rate")


def parse_size(text):
    """``"256k"`` -> 262144 (bytes)."""
    return int(_parse(text, SIZE_UNITS, "size"))


def parse_time(text):
    """``"20ms"`` -> 0.02 (s)."""
    return _parse(text, TIME_UNITS, "time")


class Link:
    """One direction of the path: a rate-limited drop-tail bottleneck, then a fixed delay.

    Parameters
    ----------
    out_fd : int
        TUN device the packets are written to.
    delay_s : float
        One-way propagation delay (s).
    rate_bps : float
        Bottleneck rate (bit/s).
    queue_bytes : int
        Bytes that may wait for the bottleneck; a packet that would exceed it is dropped.
    loss : float
        Probability that a packet is dropped at random before the queue.
    rng : random.Random, optional
        The generator of those drops.
    """

    def __init__(self, out_fd, delay_s, rate_bps, queue_bytes, loss=0.0, rng=None):
        self.out_fd = out_fd
        self.delay_s = delay_s
        self.rate_Bps = rate_bps / 8.0
        self.queue_bytes = queue_bytes
        self.busy_until = 0.0  # when the bottleneck has sent everything admitted so far
        self.in_flight = collections.deque()  # (due time, packet), due times non-decreasing
        self.forwarded = 0
        self.dropped = 0
        self.loss = loss
        self.rng = rng or random.Random(0)
        self.lost = 0

    def admit(self, packet, now):
        if self.loss and self.rng.random() < self.loss:
            self.lost += 1
            return
        waiting = max(0.0, self.busy_until - now) * self.rate_Bps
        if waiting + len(packet) > self.queue_bytes:
            self.dropped += 1
            return
        self.busy_until = max(now, self.busy_until) + len(packet) / self.rate_Bps
        due = self.busy_until + self.delay_s
        if self.in_flight and due < self.in_flight[-1][0]:  # the delay was shortened:
            due = self.in_flight[-1][0]  # a wire does not reorder, so wait behind the rest
        self.in_flight.append((due, packet))

    def reconfigure(self, delay_s=None, rate_bps=None):
        """Change the one-way delay (s) and/or the rate (bit/s) from now on."""
        if delay_s is not None:
            self.delay_s = delay_s
        if rate_bps is not None:
            self.rate_Bps = rate_bps / 8.0

    def deliver(self, now):
        """Write every packet that is due; return seconds until the next one (or None)."""
        q = self.in_flight
        while q and q[0][0] <= now:
            os.write(self.out_fd, q.popleft()[1])
            self.forwarded += 1
        return q[0][0] - now if q else None


def open_tun(name):
    """Create a TUN device ``name`` (IP packets, no packet info) and return its fd."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def forward(fd_a, fd_b, delay_s, rate_bps, queue_bytes, stop, changes=lambda: None, loss=0.0,
            seed=0):
    """Run the delay line until ``stop()`` is true or a device goes away.

    ``changes()`` is called once per loop; when it returns a dict with ``delay_s`` and/or
    ``rate_bps``, both directions are reconfigured (see :meth:`Link.reconfigure`).

    Returns
    -------
    dict
        Packet counts per direction: ``{"a_to_b": {"forwarded", "dropped"}, "b_to_a": ...}``.
    """
    rng = random.Random(seed)
    links = {fd_a: Link(fd_b, delay_s, rate_bps, queue_bytes, loss, rng),
             fd_b: Link(fd_a, delay_s, rate_bps, queue_bytes, loss, rng)}
    poller = select.epoll()
    for fd in links:
        poller.register(fd, select.EPOLLIN)
    try:
        while not stop():
            change = changes()
            if change:
                for link in links.values():
                    link.reconfigure(change.get("delay_s"), change.get("rate_bps"))
            now = time.monotonic()
            waits = [w for w in (link.deliver(now) for link in links.values()) if w is not None]
            timeout = min(waits) if waits else 0.5
            for fd, _event in poller.poll(max(timeout, 0.0)):
                link = links[fd]
                for _ in range(READ_BATCH):
                    try:
                        packet = os.read(fd, MAX_PACKET)
                    except BlockingIOError:
                        break
                    link.admit(packet, time.monotonic())
    except OSError:  # a device vanished (its namespace was deleted): the path is gone
        pass
    finally:
        poller.close()
    a, b = links[fd_a], links[fd_b]
    return {"a_to_b": {"forwarded": a.forwarded, "dropped": a.dropped, "lost": a.lost},
            "b_to_a": {"forwarded": b.forwarded, "dropped": b.dropped, "lost": b.lost}}


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def names(name, subnet="10.78.0"):
    """The namespaces, devices and addresses :func:`up` uses for ``name``."""
    if len(name) + 3 > MAX_IFNAME:
        raise ValueError(f"name {name!r} too long (at most {MAX_IFNAME - 3} characters)")
    return {"ns_a": f"{name}-a", "ns_b": f"{name}-b", "dev_a": f"{name}-ta",
            "dev_b": f"{name}-tb", "addr_a": f"{subnet}.1", "addr_b": f"{subnet}.2"}


#: Where ``up`` writes its PID and ``set`` the new values, per path name.
CONTROL_DIR = "/run/thruput-delayline"


def _control(name, suffix):
    return os.path.join(CONTROL_DIR, f"{name}.{suffix}")


def set_path(name, delay=None, rate=None):
    """Change the delay and/or rate of the running path ``name`` (the command ``set``)."""
    change = {}
    if delay is not None:
        change["delay_s"] = parse_time(delay)
    if rate is not None:
        change["rate_bps"] = parse_rate(rate)
    try:
        with open(_control(name, "pid")) as f:
            pid = int(f.read())
    except (OSError, ValueError):
        raise SystemExit(f"delayline {name}: not running (no {_control(name, 'pid')})")
    tmp = _control(name, "set.part")
    with open(tmp, "w") as f:
        json.dump(change, f)
    os.replace(tmp, _control(name, "set"))
    os.kill(pid, signal.SIGHUP)
    return change


def _read_change(name):
    try:
        with open(_control(name, "set")) as f:
            change = json.load(f)
        os.remove(_control(name, "set"))
    except (OSError, ValueError):
        return None
    return change


def down(name):
    """Delete both namespaces of ``name`` (ignoring ones that do not exist)."""
    for ns in (f"{name}-a", f"{name}-b"):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def up(name, delay="20ms", rate="50mbit", queue="256k", subnet="10.78.0", loss=0.0, seed=0):
    """Build the path and forward packets until SIGINT/SIGTERM (the command ``up``)."""
    n = names(name, subnet)
    delay_s, rate_bps, queue_bytes = parse_time(delay), parse_rate(rate), parse_size(queue)
    stopping, hangups = [], []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.append(True))
    signal.signal(signal.SIGHUP, lambda *_: hangups.append(True))

    def changes():
        if not hangups:
            return None
        hangups.clear()
        change = _read_change(name)
        if change:
            print(json.dumps({"time": time.time(), "change": change}), flush=True)
        return change

    fds, created = [], []
    try:
        for ns in (n["ns_a"], n["ns_b"]):
            _ip("netns", "add", ns)  # fails if it exists: never take over someone's namespace
            created.append(ns)
        # A TUN device keeps its file descriptor when moved to another namespace, so both
        # are opened here and then moved; no setns() needed.
        for ns, dev, addr, peer in ((n["ns_a"], n["dev_a"], n["addr_a"], n["addr_b"]),
                                    (n["ns_b"], n["dev_b"], n["addr_b"], n["addr_a"])):
            fds.append(open_tun(dev))
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "addr", "add", addr, "peer", peer, "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        info = dict(n, delay_s=delay_s, rtt_s=2 * delay_s, rate_bps=rate_bps,
                    queue_bytes=queue_bytes, loss=loss, seed=seed, pid=os.getpid())
        os.makedirs(CONTROL_DIR, exist_ok=True)
        with open(_control(name, "pid"), "w") as f:
            f.write(f"{os.getpid()}\n")
        print(json.dumps(info), flush=True)
        counts = forward(fds[0], fds[1], delay_s, rate_bps, queue_bytes, lambda: bool(stopping),
                         changes, loss, seed)
        print(json.dumps(counts), file=sys.stderr, flush=True)
    finally:
        for fd in fds:
            os.close(fd)
        for suffix in ("pid", "set"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(_control(name, suffix))
        for ns in created:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return 0


@contextlib.contextmanager
def path(name, delay="20ms", rate="50mbit", queue="256k", subnet="10.78.0", timeout=10.0,
         loss=0.0, seed=0):
    """Context manager: run ``up`` in a child process; yield its description dict.

    On exit the child is stopped with SIGTERM (it deletes the namespaces) and the packet
    counts it printed are added to the dict as ``counts``.
    """
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "up", name,
                             "--delay", delay, "--rate", rate, "--queue", queue,
                             "--subnet", subnet, "--loss", str(loss), "--seed", str(seed)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    info = {}
    try:
        line = proc.stdout.readline()
        if not line:
            proc.wait(timeout)
            raise RuntimeError(f"delayline {name} failed: {proc.stderr.read().strip()}")
        info.update(json.loads(line))
        yield info
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            _out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            _out, err = proc.communicate()
        if info:  # it was up, so the namespaces are its own
            down(name)
        last = (err or "").strip().splitlines()[-1:]
        with contextlib.suppress(ValueError, IndexError):
            info["counts"] = json.loads(last[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    p_up = sub.add_parser("up", help="build the path and forward until SIGINT/SIGTERM")
    p_up.add_argument("name")
    p_up.add_argument("--delay", default="20ms", help="one-way delay (default 20ms)")
    p_up.add_argument("--rate", default="50mbit", help="bottleneck rate (default 50mbit)")
    p_up.add_argument("--queue", default="256k", help="drop-tail queue (default 256k bytes)")
    p_up.add_argument("--subnet", default="10.78.0")
    p_up.add_argument("--loss", type=float, default=0.0,
                      help="random loss, a fraction of the packets each way (default 0)")
    p_up.add_argument("--seed", type=int, default=0, help="of the random loss (default 0)")
    p_set = sub.add_parser("set", help="change delay and/or rate of a running path")
    p_set.add_argument("name")
    p_set.add_argument("--delay", help="new one-way delay")
    p_set.add_argument("--rate", help="new bottleneck rate")
    p_down = sub.add_parser("down", help="delete the namespaces")
    p_down.add_argument("name")
    args = parser.parse_args(argv)
    if args.action == "up":
        return up(args.name, args.delay, args.rate, args.queue, args.subnet, args.loss, args.seed)
    if args.action == "set":
        print(json.dumps(set_path(args.name, args.delay, args.rate)))
        return 0
    down(args.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
