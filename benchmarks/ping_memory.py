"""Peak memory of ``thruput.read`` and ``thruput inspect --json`` on one large plain ping log.

``python -m benchmarks.ping_memory [--mb 700] [--out DIR]``: writes a ping log of about
``--mb`` MB (the header and reply lines of a recorded iputils log, ``tests/data/ping/
iputils--loopback-c5.out``, its replies repeated with ``icmp_seq`` counting on and wrapping
at 65536 as iputils' does, and its statistics), then reads it in a fresh process each way
and prints the peak resident set (``ru_maxrss``, MB of 2^20 bytes) and the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "data" / "ping" / "iputils--loopback-c5.out"
REPLY = re.compile(r"icmp_seq=(\d+)")

CHILD = {
    "read": "import thruput; ds = thruput.read(PATH); print(ds.sizes['probe'], file=sys.stderr)",
    "inspect": "from thruput.cli import main; sys.stdout = open(os.devnull, 'w'); "
               "code = main(['inspect', '--json', PATH]); assert code == 0, code",
}


def make_log(path, megabytes):
    """Write the log; its number of replies."""
    lines = SAMPLE.read_text().splitlines(keepends=True)
    header = lines[0]
    replies = [line for line in lines if REPLY.search(line) and "bytes from" in line]
    target = int(megabytes * 2**20)
    n = 0
    with open(path, "w") as f:
        f.write(header)
        while f.tell() < target:
            block = []
            for _ in range(65536):
                seq = n % 65536 + 1 if n % 65536 + 1 < 65536 else 0
                block.append(REPLY.sub(f"icmp_seq={seq}", replies[n % len(replies)], count=1))
                n += 1
            f.write("".join(block))
        f.write(f"\n--- 127.0.0.1 ping statistics ---\n{n} packets transmitted, {n} received, "
                f"0% packet loss, time {n * 1000}ms\n")
    return n


def measure(path, what):
    """``{"peak_mb", "seconds"}`` of ``what`` (read or inspect) on ``path`` in a fresh process."""
    code = (f"import os, sys, time, resource; PATH = {str(path)!r}; t = time.perf_counter(); "
            + CHILD[what] + "; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "
            "time.perf_counter() - t, file=sys.stderr)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    peak, seconds = map(float, done.stderr.split()[-2:])
    return {"peak_mb": round(peak), "seconds": round(seconds, 1)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=700.0)
    parser.add_argument("--out", help="folder for the log (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="thruput-ping-memory-", dir=args.out) as tmp:
        path = Path(tmp) / "ping.out"
        replies = make_log(path, args.mb)
        size = path.stat().st_size
        result = {"bytes": size, "replies": replies}
        for what in CHILD:
            result[what] = measure(path, what)
            print(f"{what}: {size / 2**20:.0f} MiB, {replies:,} replies: peak {result[what]['peak_mb']} MB, "
                  f"{result[what]['seconds']} s", flush=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
