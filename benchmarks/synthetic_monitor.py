"""Write a SYNTHETIC monitor campaign archive: N paths x T slots of iperf3 -J runs and pings.

    python -m benchmarks.synthetic_monitor --paths 10 --slots 1000 --probes 100 \\
        --out benchmarks/output/synthetic

Every slot (every :data:`INTERVAL_S` s) runs, on every path, one iperf3 TCP test and one
``ping -D`` of ``--probes`` probes, as ``thruput monitor`` would record them
(docs/design.md "Monitor campaigns": campaign.yaml, runs.csv with sha256, raw files
under ``runs/<YYYY-MM-DD>/``). The logs are NOT measurements: they are the recorded
fixtures ``tests/data/iperf3_json/3.12--tcp.json`` and the reply lines of
``tests/data/ping/iputils--timestamps-D.out`` with their numbers varied (seeded):
throughput and RTT follow a per-path level, a daily cycle and noise, 1 % of the probes
are lost (missing sequence numbers, as a real ping log shows them), and the summaries
agree with the probes. The directory, campaign name, title and description all say
"synthetic".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
IPERF3_SOURCE = ROOT / "tests/data/iperf3_json/3.12--tcp.json"
PING_SOURCE = ROOT / "tests/data/ping/iputils--timestamps-D.out"
#: Seconds between slots (IEPM-BW ran every 90 minutes; PingER every 30; here 10).
INTERVAL_S = 600
START = np.datetime64("2026-01-01T00:00:00", "s")
#: Numbers of the iperf3 fixture scaled per run (rates, byte counts, RTTs, windows).
IPERF3_NUMBERS = re.compile(
    r'("(?:bits_per_second|bytes|rtt|rttvar|snd_cwnd|max_snd_cwnd|max_rtt|min_rtt|mean_rtt)"'
    r':\s*)(\d+(?:\.\d+)?(?:e[+-]?\d+)?)')
TIMESECS = re.compile(r'("timesecs":\s*)\d+')
TIME_TEXT = re.compile(r'("time":\s*)"[^"]*"')
LOSS_EVERY = 100                 # one probe in 100 lost (its icmp_seq never printed)
COLUMNS = ("run", "role", "path", "sha256", "slot", "started", "path_name", "direction", "test",
           "tool", "socket_buffer", "size", "rate", "outcome", "reason")


def name_of(paths, slots, probes):
    return f"synthetic-monitor-{paths}p-{slots}s-{probes}probes"


def _iperf3(template, factor, when):
    def scale(m):
        value = float(m.group(2)) * float(factor)
        return m.group(1) + (repr(value) if "." in m.group(2) or "e" in m.group(2) else str(int(value)))

    text = IPERF3_NUMBERS.sub(scale, template)
    text = TIMESECS.sub(lambda m: m.group(1) + str(int(when)), text)
    stamp = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(when))     # as iperf3 prints it
    return TIME_TEXT.sub(lambda m: m.group(1) + f'"{stamp}"', text, count=1)


def _ping(addr, when, rtts, size=56):
    """An iputils ping -D log: replies every 0.2 s, every LOSS_EVERY-th probe missing."""
    n = rtts.size
    seqs = np.arange(1, n + 1)
    kept = seqs % LOSS_EVERY != 0
    stamps = when + 0.2 * (seqs - 1) + rtts / 1000
    lines = [f"PING {addr} ({addr}) {size}({size + 28}) bytes of data."]
    lines += [f"[{t:.6f}] {size + 8} bytes from {addr}: icmp_seq={s} ttl=64 time={r:.3f} ms"
              for t, s, r in zip(stamps[kept], seqs[kept], rtts[kept])]
    got = np.round(rtts[kept], 3)
    received = int(kept.sum())
    lines += ["", f"--- {addr} ping statistics ---",
              f"{n} packets transmitted, {received} received, {100 * (n - received) / n:.4g}% packet loss, "
              f"time {int(0.2 * (n - 1) * 1000)}ms",
              f"rtt min/avg/max/mdev = {got.min():.3f}/{got.mean():.3f}/{got.max():.3f}/{got.std():.3f} ms"]
    return "\n".join(lines) + "\n"


#: A planned change (``write_archive(change_slot=...)``): from that slot on, the changed
#: paths' throughput is multiplied by CHANGE_FACTOR and CHANGE_RTT_MS ms are added to RTT.
CHANGE_FACTOR = 0.3
CHANGE_RTT_MS = 100.0
#: The alert rules a campaign with a planned change gets (campaign.yaml alerts/baseline).
CHANGE_RULES = {"baseline": [
    {"test": "tcp", "direction": "any", "metric": "throughput", "below": 0.4, "window": "1d", "for": 3},
    {"test": "ping", "direction": "any", "metric": "rtt", "above": 0.4, "window": "1d", "for": 3}]}


def write_archive(out, paths=10, slots=1000, probes=100, seed=0, change_slot=None, changed=()):
    """Write the synthetic campaign under ``out`` (skipped if it is there already).

    With ``change_slot``, the paths numbered in ``changed`` change at that slot
    (:data:`CHANGE_FACTOR`, :data:`CHANGE_RTT_MS`; an ``events`` entry says so), every
    path gets a source and a destination (``src<p // 4>``, ``dst<p % 4>``: a grid of
    sources and destinations) and the campaign the rules :data:`CHANGE_RULES`.

    Returns
    -------
    pathlib.Path
        The campaign directory.
    """
    directory = Path(out) / (name_of(paths, slots, probes)
                             + (f"-change{change_slot}" if change_slot is not None else ""))
    if (directory / "campaign.yaml").is_file():
        return directory
    rng = np.random.default_rng(seed)
    template = IPERF3_SOURCE.read_text()
    base_rtt = 5 + 150 * rng.random(paths)                   # ms, per path
    level = 0.5 + rng.random(paths)                          # throughput factor, per path
    rows = []
    for slot in range(slots):
        when = START + np.timedelta64(slot * INTERVAL_S, "s")
        day = str(when.astype("datetime64[D]"))
        hour = (slot * INTERVAL_S / 3600) % 24
        cycle = 1 + 0.3 * np.sin(2 * np.pi * hour / 24)       # busier afternoons
        folder = directory / "runs" / day
        folder.mkdir(parents=True, exist_ok=True)
        epoch = float(when.astype(np.int64))
        for p in range(paths):
            name = f"p{p:03d}"
            addr = f"192.0.2.{p % 250 + 1}"                   # TEST-NET-1: documentation only
            run = f"{slot:06d}-{name}-forward-tcp-b262144"
            after = change_slot is not None and slot >= change_slot and p in changed
            text = _iperf3(template, level[p] / cycle * rng.uniform(0.9, 1.1)
                           * (CHANGE_FACTOR if after else 1.0), epoch)
            rows.append(_write(directory, folder / f"{run}.json", text, run, "iperf", slot, epoch,
                               name, "tcp", "iperf3", "262144", ""))
            run = f"{slot:06d}-{name}-forward-ping-z56"
            rtts = base_rtt[p] * cycle + rng.gamma(2.0, 0.5, probes) + (CHANGE_RTT_MS if after else 0.0)
            text = _ping(addr, epoch + 30, rtts)
            rows.append(_write(directory, folder / f"{run}.txt", text, run, "ping", slot, epoch + 30,
                               name, "ping", "ping", "", "56"))
    with open(directory / "runs.csv", "w") as f:
        f.write(",".join(COLUMNS) + "\n")
        f.writelines(",".join(r) + "\n" for r in rows)
    end = START + np.timedelta64(slots * INTERVAL_S, "s")
    meta = {
        "name": directory.name,
        "title": f"SYNTHETIC monitor archive: {paths} paths x {slots} slots (benchmark input)",
        "description": ("SYNTHETIC, not a measurement: written by benchmarks/synthetic_monitor.py "
                        "from recorded fixtures with their numbers varied, for benchmarks/scale.py."),
        "kind": "monitor",
        "dates": {"start": f"{START}Z", "end": f"{end}Z"},
        "who": ["benchmarks/synthetic_monitor.py"],
        "paths": [{"name": f"p{p:03d}", "address": f"192.0.2.{p % 250 + 1}", "directions": ["forward"]}
                  for p in range(paths)],
        "hosts": {"synthetic": {"description": "SYNTHETIC: no host ran these tests"}},
        "schedule": {"interval_s": INTERVAL_S, "jitter_s": 0, "order": "fixed", "seed": seed,
                     "timeout_s": 60,
                     "tests": [{"test": "tcp", "tool": "iperf3", "duration_s": 10, "socket_buffers": [262144]},
                               {"test": "ping", "count": probes, "interval_s": 0.2, "sizes": [56]}]},
        "notes": "SYNTHETIC benchmark input; every number is generated.",
    }
    if change_slot is not None:
        for p, entry in enumerate(meta["paths"]):
            entry.update(source=f"src{p // 4}", destination=f"dst{p % 4}")
        when = START + np.timedelta64(change_slot * INTERVAL_S - 60, "s")
        meta["events"] = [{"time": f"{when}Z", "planned": True,
                           "what": f"SYNTHETIC planned change of paths {sorted(changed)}: throughput x "
                                   f"{CHANGE_FACTOR}, RTT + {CHANGE_RTT_MS} ms"}]
        meta.update(CHANGE_RULES)
    (directory / "campaign.yaml").write_text(json.dumps(meta, indent=1) + "\n")   # JSON is YAML
    return directory


def _write(directory, path, text, run, role, slot, epoch, name, test, tool, buffer, size):
    data = text.encode()
    path.write_bytes(data)
    started = np.datetime_as_string(np.datetime64(int(epoch * 1e6), "us")) + "Z"
    return (run, role, path.relative_to(directory).as_posix(), hashlib.sha256(data).hexdigest(),
            str(slot), started, name, "forward", test, tool, buffer, size, "", "ok", "")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.synthetic_monitor",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--paths", type=int, default=10)
    parser.add_argument("--slots", type=int, default=1000)
    parser.add_argument("--probes", type=int, default=100, help="ping probes per run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(ROOT / "benchmarks/output/synthetic"))
    args = parser.parse_args(argv)
    directory = write_archive(args.out, args.paths, args.slots, args.probes, args.seed)
    print(f"{directory}: SYNTHETIC archive, {args.paths * args.slots} iperf3 runs, "
          f"{args.paths * args.slots * args.probes} ping probes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
