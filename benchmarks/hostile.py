"""Hostile input: peak memory per format on a large log, and the time of 1 MB of junk.

``python -m benchmarks hostile [--mb 1024] [--formats ...] [--out DIR]``

Large logs
    For every format, a log of about ``--mb`` MB made by repeating a recorded sample of
    ``tests/data/<format>`` (written under ``$TMPDIR``, deleted after), read with
    ``thruput.read(path, format=...)`` in a fresh process: its peak resident set
    (``VmHWM``), seconds, and the outcome (``read``, or the ThruputError that refused it,
    e.g. a file past the format's whole-read limit, ``thruput.reader.WHOLE_BYTES``). Also
    a gzip bomb (``--bomb-mb`` of zeros, gzip-compressed) read as ping.
Hostile megabytes
    ``tests.hostile``'s 1 MB inputs (digits, dots, blanks, alone and spliced into
    samples) per format: the slowest input and the total, in seconds.

Results go to ``benchmarks/output/hostile.json`` (not committed).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "output"

PEAK = """
import json, sys, time
import thruput
from thruput.errors import ThruputError
def hwm_mb():
    with open("/proc/self/status") as status:
        return next(int(s.split()[1]) for s in status if s.startswith("VmHWM")) / 1024
t = time.perf_counter()
try:
    ds = thruput.read(sys.argv[1], format=sys.argv[2])
    outcome = "read"
except ThruputError as exc:
    outcome = "refused: " + str(exc)[:300]
print(json.dumps({"peak_mb": hwm_mb(), "seconds": time.perf_counter() - t, "outcome": outcome}))
"""
BASE = """
import json, thruput, thruput.formats, xarray
with open("/proc/self/status") as status:
    print(json.dumps({"peak_mb": next(int(s.split()[1]) for s in status if s.startswith("VmHWM")) / 1024}))
"""


def _env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}


def make_large(name, path, megabytes):
    """Write about ``megabytes`` MB of format ``name`` to ``path`` by repeating a sample."""
    sys.path.insert(0, str(ROOT))
    from tests.hostile import samples

    found = samples(name, limit=10)
    _, data = max(found, key=lambda s: len(s[1]))
    if not data.endswith(b"\n") and name != "web100_snaplog":
        data += b"\n"
    target = int(megabytes * 2**20)
    with open(path, "wb") as f:
        if name == "web100_snaplog":       # one header, snapshots repeated
            f.write(data)
            while f.tell() < target:
                f.write(data[-4096:])
        else:
            block = data * max(1, (4 * 2**20) // len(data))
            while f.tell() < target:
                f.write(block)
    return path.stat().st_size


def peak(path, name):
    done = subprocess.run([sys.executable, "-c", PEAK, str(path), name], capture_output=True,
                          text=True, env=_env(), cwd=ROOT)
    if done.returncode:
        return {"outcome": f"crash: {done.stderr[-500:]}", "peak_mb": None, "seconds": None}
    return json.loads(done.stdout)


def bench_large(names, megabytes, tmp):
    out = {}
    for name in names:
        path = Path(tmp) / f"{name}.log"
        size = make_large(name, path, megabytes)
        out[name] = {"bytes": size, **peak(path, name)}
        path.unlink()
        print(f"  {name:18s} {size / 2**20:7.0f} MB  peak {out[name]['peak_mb'] or 0:7.0f} MB  "
              f"{out[name]['seconds'] or 0:7.1f} s  {out[name]['outcome'][:90]}", flush=True)
    return out


def bench_bomb(megabytes, tmp):
    path = Path(tmp) / "bomb.gz"
    zeros = b"0" * 2**20
    with gzip.open(path, "wb", compresslevel=9) as f:
        for _ in range(int(megabytes)):
            f.write(zeros)
    result = {"compressed_bytes": path.stat().st_size, "expanded_bytes": int(megabytes) * 2**20,
              **peak(path, "ping")}
    path.unlink()
    print(f"  gzip bomb {result['compressed_bytes'] / 2**20:.1f} MB -> {megabytes:g} MB: peak "
          f"{result['peak_mb']:.0f} MB, {result['seconds']:.2f} s, {result['outcome'][:120]}", flush=True)
    return result


def bench_hostile(names):
    done = subprocess.run([sys.executable, "-m", "tests.hostile", *names], capture_output=True,
                          text=True, env=_env(), cwd=ROOT)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    out = {}
    for name in names:
        mine = [r for r in rows if r["format"] == name]
        slowest = max(mine, key=lambda r: r["seconds"])
        out[name] = {"inputs": len(mine), "max_seconds": slowest["seconds"], "slowest": slowest["label"],
                     "total_seconds": round(sum(r["seconds"] for r in mine), 3),
                     "crashes": sum(r["outcome"].startswith("crash") for r in mine),
                     "refused": sum(r["outcome"] == "refused" for r in mine)}
        print(f"  {name:18s} {len(mine):3d} inputs of 1 MB: slowest {slowest['seconds']:6.2f} s "
              f"({slowest['label']}), total {out[name]['total_seconds']:6.2f} s, "
              f"crashes {out[name]['crashes']}", flush=True)
    return out


def main(argv=None):
    from thruput.formats import REGISTRY

    parser = argparse.ArgumentParser(prog="python -m benchmarks.hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=1024.0, help="size of each large log (MB)")
    parser.add_argument("--bomb-mb", type=float, default=5632.0, help="expanded size of the gzip bomb (MB)")
    parser.add_argument("--formats", nargs="*", default=list(REGISTRY))
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--skip-hostile", action="store_true")
    parser.add_argument("--skip-bomb", action="store_true")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args(argv)
    base = json.loads(subprocess.run([sys.executable, "-c", BASE], capture_output=True, text=True,
                                     env=_env(), check=True).stdout)
    print(f"interpreter with thruput imported: {base['peak_mb']:.0f} MB")
    result = {"machine": platform.platform(), "base_peak_mb": base["peak_mb"]}
    if not args.skip_hostile:
        print("1 MB hostile inputs (tests/hostile.py):")
        result["hostile"] = bench_hostile(args.formats)
    if not args.skip_large:
        with tempfile.TemporaryDirectory(prefix="thruput-hostile-") as tmp:
            print(f"large logs (~{args.mb:g} MB each, thruput.read in a fresh process):")
            result["large"] = bench_large(args.formats, args.mb, tmp)
            if not args.skip_bomb:
                result["bomb"] = bench_bomb(args.bomb_mb, tmp)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "hostile.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"written: {out / 'hostile.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
