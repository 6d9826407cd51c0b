"""Generated piles: recorded logs mixed with what real measurement scripts leave beside them.

:func:`build` writes one pile under a folder, from a seed: recorded test logs (the
wrapped drive-test pile of tests/data/wrapped/monitor-pile, iperf3 -J runs of the bundled
monitor campaign data/raw/netns-wan-monitor, and recorded tool outputs of tests/data put
through the starlink scripts' timestamping wrapper, in a random time zone), and beside
them traceroute outputs (tests/data/traceroute), per-run CSV exports, READMEs, a small
PNG, empty files, logs with only the wrapper's lines, 100 %-loss pings, iperf3's refusal
by a busy or absent server and logs cut off, in a random folder layout. It returns what
the import must make of every file (:class:`Expected`), so a test checks the importer
against it.
"""

from __future__ import annotations

import json
import random
import struct
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from thruput.monitor import pile

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
WRAPPED_PILE = DATA / "wrapped" / "monitor-pile"
MONITOR_RUNS = HERE.parent / "data" / "raw" / "netns-wan-monitor" / "runs"
#: Recorded tool outputs without a time of their own, wrapped by the generator:
#: (sample, test word for the file name).
BARE = [("iperf3_text/3.12--tcp.txt", "tcp_uplink"), ("iperf3_text/3.12--tcp-R.txt", "tcp_downlink"),
        ("iperf3_text/3.12--udp.txt", "udp_uplink"), ("ping/iputils--loopback-c5.out", "ping"),
        ("nuttcp/6.1.2--tcp-i.out", "tcp_uplink")]
#: Failed tests: a 100 %-loss ping and iperf3's refusals (recorded), wrapped.
FAILED = [("ping/iputils--unreachable-netns.out", "ping"), ("iperf3_text/3.12--refused.txt", "tcp_uplink")]
ROUTES = sorted((DATA / "traceroute").glob("linux-*--*.txt"))
#: Zones the wrapper's stamps may be written in (hours east of UTC).
OFFSETS_H = (-5, -4, 0, 1, 5.5, 9)


@dataclass
class Expected:
    """What the import must make of a pile's files (paths relative to the pile)."""

    #: test log -> (earliest, latest) time its run may be dated at (datetime64[ms], UTC)
    tests: dict = field(default_factory=dict)
    #: files kept as ancillary data
    ancillary: set = field(default_factory=set)
    #: skip reason -> count
    skipped: Counter = field(default_factory=Counter)


def _png():
    """A 1 x 1 PNG."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b""))


def wrap(text, start_ms, offset_h, step_ms=40, end=True, prefix=True):
    """``text`` as the starlink scripts' wrapper writes it: ``Start time:`` (epoch ms),
    every line prefixed ``[local time] `` (unless not ``prefix``: a script that only echoes
    the Start and End lines), ``End time:``; returns (text, end ms)."""
    out, t = [f"Start time: {start_ms}"], start_ms + 50
    for line in text.splitlines():
        local = np.datetime64(int(t + offset_h * 3_600_000), "ms")
        stamp = str(local).replace("T", " ") + "000"
        out.append(f"[{stamp}] {line}" if prefix else line)
        t += step_ms
    if end:
        out.append(f"End time: {t + 20}")
    return "\n".join(out) + "\n", t + 20


def _window(start_ms, end_ms):
    return np.datetime64(start_ms, "ms"), np.datetime64(end_ms, "ms")


def build(root, seed, size=30):
    """Write a pile of about ``size`` files under ``root`` from ``seed``; its :class:`Expected`."""
    rng = random.Random(seed)
    root = Path(root)
    want = Expected()
    operators = [f"op{i}" for i in range(rng.randint(1, 3))]
    layout = rng.choice(["operator/date/run", "operator/run", "operator_run", "date/operator/run"])
    clock = [int(np.datetime64("2024-05-27T14:00:00", "ms").astype(np.int64)) + rng.randrange(10**9)]
    offset_h = rng.choice(OFFSETS_H)
    used = set()

    def folder(op):
        clock[0] += rng.randint(60_000, 900_000)
        run = str(clock[0] % 10**9)
        day = str(np.datetime64(clock[0], "ms"))[:10].replace("-", "")
        return {"operator/date/run": f"{op}/{day}/{run}", "operator/run": f"{op}/{run}",
                "operator_run": f"{op}_{run}", "date/operator/run": f"{day}/{op}/{run}"}[layout]

    def put(rel, data):
        while rel in used:
            stem, dot, ext = rel.rpartition(".")
            rel = f"{stem}_{rng.randrange(10**6)}.{ext}"
        used.add(rel)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
        return rel

    def wrapped_test(sample, word, op, cut=False):
        text = (DATA / sample).read_text()
        if cut:
            text = "\n".join(text.splitlines()[: max(2, len(text.splitlines()) // 2)]) + "\n"
        start = clock[0] + rng.randint(0, 60_000)
        body, end = wrap(text, start, offset_h, end=not cut, prefix=rng.random() < 0.7)
        rel = put(f"{folder(op)}/{word}_{start % 10**9}.out", body)
        want.tests[rel] = _window(start, end)

    makers = {
        "wrapped pile log": 4, "iperf3 json": 3, "wrapped bare": 4, "failed": 2, "cut": 1,
        "wrapper only test": 1, "traceroute": 3, "csv": 4, "readme": 1, "png": 1, "empty": 1,
        "wrapper only other": 1, "nslookup": 1,
    }
    pile_logs = sorted(p for p in WRAPPED_PILE.rglob("*") if p.is_file())
    json_runs = sorted(MONITOR_RUNS.rglob("*.json")) if MONITOR_RUNS.is_dir() else []
    kinds = [k for k, w in makers.items() for _ in range(w)]
    for _ in range(size):
        kind = rng.choice(kinds)
        op = rng.choice(operators)
        if kind == "wrapped pile log":
            src = rng.choice(pile_logs)
            text = src.read_text()
            stamps = [int(x) for x in __import__("re").findall(r"(?m)^(?:Start|End) time: (\d+)$", text)]
            rel = put(f"{folder(op)}/{src.name}", text)
            want.tests[rel] = _window(min(stamps), max(stamps)) if stamps else None
        elif kind == "iperf3 json" and json_runs:
            src = rng.choice(json_runs)
            doc = json.loads(src.read_text())
            if "error" in doc or not doc.get("start", {}).get("timestamp"):
                continue
            at = int(doc["start"]["timestamp"]["timesecs"]) * 1000
            rel = put(f"{folder(op)}/{src.name}", src.read_bytes())
            want.tests[rel] = _window(at, at + 1000)
        elif kind == "wrapped bare":
            wrapped_test(*rng.choice(BARE), op)
        elif kind == "failed":
            wrapped_test(*rng.choice(FAILED), op)
        elif kind == "cut":
            wrapped_test(*rng.choice(BARE[:3]), op, cut=True)
        elif kind == "wrapper only test":
            start = clock[0]
            rel = put(f"{folder(op)}/{rng.choice(['tcp_downlink', 'udp_uplink', 'ping'])}_{start % 10**9}.out",
                      f"Start time: {start}\nEnd time: {start + 30_000}\n")
            want.tests[rel] = _window(start, start)
        elif kind == "wrapper only other":
            start = clock[0]
            put(f"{folder(op)}/session_{start % 10**9}.log", f"Start time: {start}\nEnd time: {start + 5}\n")
            want.skipped[pile.WRAPPER_ONLY_NO_TEST] += 1
        elif kind == "traceroute":
            src = rng.choice(ROUTES)
            body = wrap(src.read_text(), clock[0], offset_h)[0] if rng.random() < 0.5 else src.read_text()
            want.ancillary.add(put(f"{folder(op)}/traceroute_{clock[0] % 10**9}.out", body))
        elif kind == "nslookup":
            body = "Server:\t\t8.8.8.8\nAddress:\t8.8.8.8#53\n\nNon-authoritative answer:\nName:\texample.org\n" \
                   "Address: 93.184.215.14\n"
            want.ancillary.add(put(f"{folder(op)}/nslookup_{clock[0] % 10**9}.out",
                                   wrap(body, clock[0], offset_h)[0]))
        elif kind == "csv":
            rows = "".join(f"2024-05-27T16:58:{s:02d}.25,{rng.uniform(1, 200):.1f},0,0,0\n" for s in range(rng.randint(0, 40)))
            put(rng.choice([f"{folder(op)}/udp_downlink_{clock[0] % 10**9}.csv", f"csv/{op}_tcp_uplink.csv"]),
                "time,throughput_mbps,pkt_drop,pkt_total,loss\n" + rows)
            want.skipped[pile.CSV_EXPORT] += 1
        elif kind == "readme":
            put(rng.choice(["README.md", "README", f"{op}/NOTES.txt"]),
                "# Drive test\n\nLogs of each operator, one folder per run.\n")
            want.skipped[pile.README] += 1
        elif kind == "png":
            put(rng.choice([f"{op}/map.png", "plots/throughput.png"]), _png())
            want.skipped[pile.IMAGE] += 1
        elif kind == "empty":
            put(f"{folder(op)}/{rng.choice(['tcp_uplink', 'ping', 'notes'])}_{clock[0] % 10**9}.out", b"")
            want.skipped[pile.EMPTY] += 1
    if not want.tests:                 # a pile always holds one test at least
        wrapped_test(*BARE[0], operators[0])
    return want
