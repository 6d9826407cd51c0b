#!/usr/bin/env python3
"""Cross traffic that follows a compressed "day": a paced UDP flow whose rate cycles.

Test tooling (see tools/README.md), used to give a monitor campaign recorded on one machine
something to find: a background flow sharing the bottleneck with the tests, whose rate
follows a raised cosine between ``--low`` and ``--high`` with period ``--period`` (a "day"
of a few minutes). It starts at ``--low`` ("night") at time ``--t0`` (default: now), so
the rate at time t is::

    low + (high - low) * (1 - cos(2 pi (t - t0) / period)) / 2

Command line::

    tools/crosstraffic.py sink --port 9000 [--log FILE]            # far end: count, discard
    tools/crosstraffic.py send --to 10.78.0.2 --port 9000 --low 0 --high 16mbit \\
        --period 600 [--t0 UNIX_S] [--size 1200] [--log FILE] [--duration S]

Both log one CSV line every ``--log-every`` seconds (default 10): ``time`` (Unix s, end of
the interval), ``target_bps`` (the rate asked for at that time, send only), ``bps`` (sent
or received over the interval), ``packets``. They stop on SIGINT/SIGTERM.
Pacing: the sender keeps a byte budget (the integral of the rate since the start) and
sends whole packets while it is ahead of what was sent; it wakes every ``TICK_S``.
UDP has no congestion control, so the flow takes its share of the bottleneck whatever the
tests do, like aggregate traffic of many users would.
"""

from __future__ import annotations

import argparse
import math
import signal
import socket
import sys
import time

#: Wake-up period of the sender (s): short enough to keep bursts small at tens of Mbit/s.
TICK_S = 0.005
#: UDP payload bytes per packet (fits a 1500-byte MTU with IP and UDP headers).
PACKET_BYTES = 1200
RATE_UNITS = {"": 1, "bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
CSV_HEADER = "time,target_bps,bps,packets"


def parse_rate(text):
    """``"16mbit"`` -> 1.6e7 (bit/s); a bare number is bit/s."""
    text = str(text).strip().lower()
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(number):]
    if unit not in RATE_UNITS:
        raise argparse.ArgumentTypeError(f"bad rate {text!r}: use bit, kbit, mbit or gbit")
    return float(number) * RATE_UNITS[unit]


def rate_at(t, t0, low, high, period):
    """Rate (bit/s) the flow should have at time ``t`` (s)."""
    return low + (high - low) * (1 - math.cos(2 * math.pi * (t - t0) / period)) / 2


def budget(t, t0, low, high, period):
    """Bytes the flow should have sent from ``t0`` to ``t``: the integral of rate_at / 8."""
    x = t - t0
    cycle = x - period / (2 * math.pi) * math.sin(2 * math.pi * x / period)
    return (low * x + (high - low) * cycle / 2) / 8


class _Log:
    def __init__(self, path, every):
        self.f = open(path, "a") if path else None
        if self.f and self.f.tell() == 0:
            print(CSV_HEADER, file=self.f, flush=True)
        self.every = every
        self.last = time.time()
        self.bytes = self.packets = 0

    def add(self, nbytes, target=None):
        self.bytes += nbytes
        self.packets += 1 if nbytes else 0
        now = time.time()
        if now - self.last >= self.every:
            if self.f:
                target_text = "" if target is None else f"{target:.0f}"
                print(f"{now:.3f},{target_text},{8 * self.bytes / (now - self.last):.0f},"
                      f"{self.packets}", file=self.f, flush=True)
            self.last, self.bytes, self.packets = now, 0, 0


def _stopper():
    stopping = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.append(True))
    return stopping


def send(args):
    stopping = _stopper()
    t0 = args.t0 if args.t0 is not None else time.time()
    start = time.time()
    sent_bytes = budget(start, t0, args.low, args.high, args.period)  # owe nothing before now
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = bytes(args.size)
    log = _Log(args.log, args.log_every)
    while not stopping and (args.duration is None or time.time() - start < args.duration):
        now = time.time()
        owed = budget(now, t0, args.low, args.high, args.period)
        while sent_bytes + args.size <= owed:
            try:
                sock.sendto(payload, (args.to, args.port))
            except OSError:  # e.g. no route for a moment: the bytes are simply not sent
                pass
            sent_bytes += args.size
            log.add(args.size, rate_at(now, t0, args.low, args.high, args.period))
        log.add(0, rate_at(now, t0, args.low, args.high, args.period))
        time.sleep(TICK_S)
    return 0


def sink(args):
    stopping = _stopper()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("", args.port))
    sock.settimeout(0.5)
    log = _Log(args.log, args.log_every)
    while not stopping:
        try:
            data = sock.recv(65536)
        except (socket.timeout, InterruptedError):
            log.add(0)
            continue
        log.add(len(data))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    p_send = sub.add_parser("send", help="send the cycling flow")
    p_send.add_argument("--to", required=True)
    p_send.add_argument("--port", type=int, default=9000)
    p_send.add_argument("--low", type=parse_rate, default=0.0, help="night rate (bit/s)")
    p_send.add_argument("--high", type=parse_rate, required=True, help="midday rate")
    p_send.add_argument("--period", type=float, default=600.0, help="the 'day', s (600)")
    p_send.add_argument("--t0", type=float, help="Unix time of a 'midnight' (default now)")
    p_send.add_argument("--size", type=int, default=PACKET_BYTES, help="UDP payload bytes")
    p_send.add_argument("--duration", type=float, help="stop after this many s")
    p_sink = sub.add_parser("sink", help="receive and discard, counting")
    p_sink.add_argument("--port", type=int, default=9000)
    for p in (p_send, p_sink):
        p.add_argument("--log", help="CSV log file (appended)")
        p.add_argument("--log-every", type=float, default=10.0, help="s between log lines")
    args = parser.parse_args(argv)
    return send(args) if args.action == "send" else sink(args)


if __name__ == "__main__":
    sys.exit(main())
