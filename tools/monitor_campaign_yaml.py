#!/usr/bin/env python3
"""Write campaign.yaml of the bundled monitor campaign (used by tools/record-monitor.sh).

Every number here is also a setting of record-monitor.sh; keep the two in step. The
description says what the campaign is: one virtual machine, namespaces, emulated delay,
synthetic cross traffic, other work on the machine.
"""

from __future__ import annotations

import argparse
import os
import sys

from thruput.monitor.campaign import MonitorConfig, write_yaml
from thruput.record import hostinfo

SCHEDULE = {
    "interval_s": 60, "jitter_s": 5, "order": "random", "seed": 20261122, "timeout_s": 30,
    "tests": [
        {"test": "tcp", "tool": "iperf3", "duration_s": 5, "socket_buffers": [65536, 1048576]},
        {"test": "udp", "tool": "iperf3", "duration_s": 5, "rate_bps": 2.0e7},
        {"test": "ping", "count": 10, "interval_s": 0.2, "sizes": [108, 1480]},
    ],
}
BETWEEN = ("tools/delayline.py (a userspace TUN delay line, one Python process): drop-tail "
           "bottleneck 50 Mbit/s with a 256 KiB queue and 20 ms one-way delay (RTT 40 ms), "
           "changed to 30 Mbit/s and 40 ms one way (RTT 80 ms) half-way (see events); "
           "shared with synthetic UDP cross traffic both ways (tools/crosstraffic.py)")
#: The emulated path's own records, written by tools/record-monitor.sh beside the tests.
ANCILLARY = [
    {"path": "ancillary/delayline.jsonl", "what": "tools/delayline.py stdout: the path as "
     "built (JSON), then one line per change with its Unix time"},
    {"path": "ancillary/delayline-counts.json", "what": "packets forwarded and dropped at "
     "the bottleneck queue, per direction, over the whole recording"},
    {"path": "ancillary/crosstraffic-sent-a-to-b.csv", "what": "cross traffic sent a -> b "
     "per 10 s: time (Unix s), target_bps, bps, packets"},
    {"path": "ancillary/crosstraffic-sent-b-to-a.csv", "what": "cross traffic sent b -> a "
     "per 10 s"},
    {"path": "ancillary/crosstraffic-received-a.csv", "what": "cross traffic received in a "
     "per 10 s (target_bps empty)"},
    {"path": "ancillary/crosstraffic-received-b.csv", "what": "cross traffic received in b "
     "per 10 s"},
    {"path": "ancillary/iperf3-server.err", "what": "stderr of iperf3 -s -J in the far "
     "namespace"},
]
DESCRIPTION = (
    "A monitor campaign recorded with `thruput monitor` on ONE 2-core virtual machine: the "
    "two 'hosts' are Linux network namespaces (tpmon-a, tpmon-b) joined by a userspace delay "
    "line (tools/delayline.py) that emulates a WAN path of 50 Mbit/s and 40 ms RTT. Every 60 s "
    "(plus up to 5 s of seeded random jitter) a slot runs, in seeded random order: iperf3 TCP "
    "for 5 s at socket buffers 64 KiB and 1 MiB, iperf3 UDP for 5 s at 20 Mbit/s, each both "
    "ways (reverse = iperf3 -R), and 10 pings at 0.2 s intervals with 108 and 1480 bytes of "
    "payload. The path carries synthetic cross traffic both ways: paced UDP whose rate "
    "follows a compressed 'day' (raised cosine 2 -> 16 -> 2 Mbit/s, period 600 s, minimum at "
    "the campaign start). Half-way the path was changed on purpose to 30 Mbit/s and 80 ms "
    "RTT (events). The delay, capacity, cycle and change are emulated, not a real network.")
NOTES = (
    "Measured on one virtual machine shared with seven other engineers' work (tests, "
    "builds, other namespaces), so CPU contention is part of what was measured: the delay "
    "line, the cross-traffic senders and iperf3 share 2 cores; a test starved of CPU may "
    "show lower throughput or extra RTT that the path itself did not cause. ping -s 1480 "
    "makes 1508-byte IP packets, which the 1500-byte MTU of the TUN devices splits into two "
    "fragments. The host's default congestion control (hosts.*.tcp) was used. ancillary/ "
    "holds the path's own records: delayline.jsonl (path parameters, and the time the "
    "change was applied), delayline-counts.json (packets forwarded and dropped at the "
    "queue), crosstraffic-sent-*.csv and crosstraffic-received-*.csv (cross traffic per "
    "10 s: the target rate, what was sent, what arrived), iperf3-server.err (listed under "
    "ancillary). Slots that did "
    "not run (the monitor still busy with the previous slot) are gaps; runs.csv lists every "
    "test that started, failed ones with their reason.")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("directory")
    p.add_argument("--start", required=True)
    p.add_argument("--change", required=True)
    p.add_argument("--netns-a", required=True)
    p.add_argument("--netns-b", required=True)
    p.add_argument("--address", required=True, help="of the far end (in netns-b)")
    p.add_argument("--address-a", required=True, help="of the near end (in netns-a)")
    args = p.parse_args(argv)
    a, b = args.netns_a, args.netns_b
    data = {
        "name": os.path.basename(os.path.abspath(args.directory)),
        "title": "Monitor of an emulated WAN path (namespaces, delay line, cyclic cross "
                 "traffic, planned change half-way)",
        "description": DESCRIPTION,
        "kind": "monitor",
        "dates": {"start": args.start, "end": None},
        "who": ["thruput developers (recorded by tools/record-monitor.sh)"],
        "paths": [{"name": "a-b", "source": a, "destination": b, "address": args.address,
                   "directions": ["forward", "reverse"], "between": BETWEEN,
                   "capacity_bps": 5.0e7}],
        "hosts": {a: hostinfo.local_host(args.address, a),
                  b: hostinfo.local_host(args.address_a, b)},
        "tools": {},
        "schedule": SCHEDULE,
        "events": [{"time": args.change, "what": "capacity 50 -> 30 Mbit/s, RTT 40 -> 80 ms "
                    "(tools/delayline.py set: rate 30mbit, delay 40ms one way)",
                    "planned": True}],
        "ancillary": ANCILLARY,
        "explained": [],
        "notes": NOTES,
    }
    MonitorConfig(data)
    os.makedirs(args.directory, exist_ok=True)
    write_yaml(args.directory, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
