"""Hostile input: peak memory per format on a large log, and the time of 1 MB of junk.

``python -m benchmarks.hostile [--mb 1024 | --at-limit] [--formats ...] [--out DIR]``

Large logs
    For every format, a log of about ``--mb`` MB made by repeating a recorded sample of
    ``tests/data/<format>`` (written under ``$TMPDIR``, deleted after), read with
    ``thruput.read(path, format=...)`` in a fresh process: its peak resident set
    (``VmHWM``), seconds, and the outcome (``read``, or the ThruputError that refused it,
    e.g. a file past the format's whole-read limit, ``thruput.reader.WHOLE_BYTES``). Also
    a gzip bomb (``--bomb-mb`` of zeros, gzip-compressed) read as ping.
Logs at the limit (``--at-limit``)
    For every format, a valid log just under its whole-read limit
    (``thruput.reader.whole_limit``), grown from one recorded sample as :data:`AT_LIMIT`
    says (one header, its interval rows or JSON array elements repeated with their times
    moved on, one summary), so that the reader reads all of it: the peak and seconds of
    the largest log the format accepts. Ping, which streams, has no limit.
Hostile megabytes
    ``tests.hostile``'s 1 MB inputs (digits, dots, blanks, alone and spliced into
    samples) per format: the slowest input and the total, in seconds.

Results go to ``benchmarks/output/hostile.json`` (not committed).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import platform
import re
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


#: How ``--at-limit`` grows each format's log from one sample of ``tests/data/<format>``:
#: ``("rows", sample, row, summary, shift)`` repeats the first run of lines matching ``row``
#: (less its last ``summary`` lines, the run's total) between the head and the tail;
#: ``("json", sample, keys, shift)`` repeats the elements of the arrays named ``keys``
#: (every such array, in step; ``None``: the document is an array) and works on a truncated
#: document; ``("repeat", sample, shift)`` repeats the whole sample (a file of many runs,
#: connections or snapshots); ``("snaplog", sample)`` repeats a snaplog's snapshots.
#: ``shift``: a pattern whose groups are times or sequence numbers, moved on by their span in
#: the repeated part at each repetition (``None``: repeated as is).
_INTERVAL = r"(\d+\.\d+)\s*-\s*(\d+\.\d+)\s+sec"
_JSON_TIME = r'"(?:start|end)":\s*([0-9.]+)'
AT_LIMIT = {
    "iperf3_stream": ("rows", "3.12--tcp.jsonl", r'\{"event":"interval"', 0, _JSON_TIME),
    "iperf3_json": ("json", "3.12--tcp-R.json", ["intervals"], _JSON_TIME),
    "flent": ("json", "2.1.1--ping-loopback.flent.gz",
              ["x_values", "Ping (ms) ICMP", "Ping (ms) UDP"], None),     # results and raw_values
    "ndt7": ("json", "v0.14.2--download-cut-in-third-measurement.json", ["ServerMeasurements"], None),
    "pscheduler_throughput": ("json", "constructed--iperf3-3.12-tcp-P4.json", ["intervals"], _JSON_TIME),
    "pscheduler_latency": ("json", "constructed--irtt-0.9.0-netns-loss-latency.json", ["raw-packets"], None),
    "esmond_throughput": ("json", "constructed--throughput-base.json", [None], r'"ts":\s*(\d+)'),
    "esmond_latency": ("json", "constructed--powstream-base-wrapped.json", ["data"], r'"ts":\s*(\d+)'),
    "irtt": ("json", "0.9.0--netns-loss.json", ["round_trips"], r'"seqno":\s*(\d+)'),
    "iperf2_csv": ("repeat", "v2.1.8--tcp-client-P3.csv", None),
    "owamp": ("repeat", "public--owping-2019-a99-offset-clocks.txt", None),
    "web100_snaplog": ("snaplog", "v2.5.27--loopback-8-snapshots.snaplog"),
    "web100_sidestream": ("rows", "loopback--3-connections.web100", r"C: ", 0, None),
    "web100_dump": ("repeat", "loopback--3-snapshots.txt", r"^Duration: (\d+)"),
    "tcp_info": ("repeat", "tbf-netns--iperf3-3s-retrans.txt", r"# time: (\d+\.\d+)"),
    "udpmon_req": ("rows", "scan--r64-i64-e1472.txt", r"\s*\d+;", 0, None),
    "udpmon_bw": ("rows", "x--p1000-w0-40.txt", r"\s*\d+;", 0, None),
    "nuttcp": ("rows", "6.1.2--tcp-i-v.out", r"\s+[\d.]+ MB /", 0, None),
    "iperf3_text": ("rows", "3.12--tcp-R.txt", r"\[\s*\d+\]\s+\d", 0, _INTERVAL),
    "iperf2": ("rows", "v2.1.8--tcp-client-e.txt", r"\[\s*\d+\] \d", 1, _INTERVAL),
}


def _shifter(pattern, body):
    """A function of ``(text, k)`` moving every number in a group of ``pattern`` on by ``k``
    times their span in ``body`` (plus one for whole numbers: sequence numbers)."""
    if pattern is None:
        return lambda text, k: text
    regex = re.compile(pattern, re.M)
    found = [g for m in regex.finditer(body) for g in m.groups() if g]
    span = (max(map(float, found)) - min(map(float, found))) or 1.0
    decimals = max(len(g.split(".")[1]) if "." in g else 0 for g in found)
    span += 0 if decimals else 1

    def one(m, k):
        out, at = [], m.start()
        for g in range(1, len(m.groups()) + 1):
            if m.group(g):
                old = m.group(g)
                places = len(old.split(".")[1]) if "." in old else decimals   # JSON's 0 among 0.5s
                out += [m.string[at: m.start(g)], f"{float(old) + k * span:.{places}f}"]
                at = m.end(g)
        return "".join(out) + m.string[at: m.end()]
    return lambda text, k: regex.sub(lambda m: one(m, k), text) if k else text


def _array_spans(text, keys):
    """``(start, end)`` of the elements of every JSON array named in ``keys`` (``None``:
    the top-level array), in order; ``end`` is that of the last complete element."""
    decoder = json.JSONDecoder()
    spans = []
    for key in keys:
        where = [re.match(r"\s*\[", text)] if key is None else re.finditer(
            re.escape(json.dumps(key)) + r"\s*:\s*\[", text)
        for m in where:
            start = end = m.end()
            i = start
            while True:
                i = len(text) - len(text[i:].lstrip())
                try:
                    _, i = decoder.raw_decode(text, i)
                except ValueError:
                    break
                end = i
                i = len(text) - len(text[i:].lstrip())
                if not text.startswith(",", i):
                    break
                i += 1
            spans.append((start, end))
    return sorted(spans)


def make_at_limit(name, path, limit):
    """Write a valid log of format ``name`` of at most ``limit`` bytes to ``path``, grown
    from a sample as :data:`AT_LIMIT` says; return its size."""
    kind, sample, *spec = AT_LIMIT[name]
    raw = (ROOT / "tests" / "data" / name / sample).read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("latin-1")
    if kind == "snaplog":                      # one header, its snapshots repeated
        first = text.index("----Begin-Snap-Data----")
        pieces = [text[:first], text[first:], ""]
        shift = _shifter(None, "")
    elif kind == "repeat":
        pieces = ["", text if text.endswith("\n") else text + "\n", ""]
        shift = _shifter(spec[0], text)
    elif kind == "rows":
        row, summary, pattern = spec
        lines = text.splitlines(keepends=True)
        first = next(i for i, line in enumerate(lines) if re.match(row, line))
        end = next((i for i in range(first, len(lines)) if not re.match(row, lines[i])), len(lines)) - summary
        pieces = ["".join(lines[:first]), "".join(lines[first:end]), "".join(lines[end:])]
        shift = _shifter(pattern, pieces[1])
    else:                                      # json: the arrays' elements repeated in step
        keys, pattern = spec
        spans = _array_spans(text, keys)
        pieces, at = [], 0
        for start, end in spans:
            pieces += [text[at:start], text[start:end]]
            at = end
        pieces.append(text[at:])
        shift = _shifter(pattern, "".join(pieces[1::2]))
    heads, bodies = pieces[0::2], pieces[1::2]
    room = limit - sum(len(p) for p in heads)
    copies = itertools.count()
    if len(bodies) > 1:      # in step: as many copies of each, counted at the size of the last (longest)
        copies = range(room // sum(len(shift(b, room // len(b))) + 1 for b in bodies))
    sep = "," if kind == "json" else ""
    with open(path, "w", encoding="latin-1", newline="") as f:
        for head, body in zip(heads, bodies):
            f.write(head)
            for k in copies:
                piece = (sep if k else "") + shift(body, k)
                if len(piece) > room:
                    break
                f.write(piece)
                room -= len(piece)
        f.write(pieces[-1])
    size = path.stat().st_size
    if size > limit:
        raise RuntimeError(f"{name}: the log made at the limit is {size} bytes, past {limit}")
    return size


def peak(path, name):
    done = subprocess.run([sys.executable, "-c", PEAK, str(path), name], capture_output=True,
                          text=True, env=_env(), cwd=ROOT)
    if done.returncode:
        return {"outcome": f"crash: {done.stderr[-500:]}", "peak_mb": None, "seconds": None}
    return json.loads(done.stdout)


def bench_large(names, megabytes, tmp, at_limit=False):
    from thruput.reader import whole_limit

    out = {}
    for name in names:
        path = Path(tmp) / f"{name}.log"
        if at_limit:
            out[name] = {"limit": whole_limit(name)}
            if name not in AT_LIMIT:
                print(f"  {name:18s} no log at the limit (streamed)", flush=True)
                continue
            size = make_at_limit(name, path, whole_limit(name))
            out[name] = {"limit": whole_limit(name), "bytes": size, **peak(path, name)}
        else:
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
    parser.add_argument("--at-limit", action="store_true",
                        help="large logs: a valid log at each format's whole-read limit, not --mb")
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
            if args.at_limit:
                print("valid logs at each format's whole-read limit (thruput.read in a fresh process):")
                result["at_limit"] = bench_large(args.formats, None, tmp, at_limit=True)
            else:
                print(f"large logs (~{args.mb:g} MB each, thruput.read in a fresh process):")
                result["large"] = bench_large(args.formats, args.mb, tmp)
            if not args.skip_bomb:
                result["bomb"] = bench_bomb(args.bomb_mb, tmp)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = "hostile-at-limit.json" if args.at_limit else "hostile.json"
    (out / name).write_text(json.dumps(result, indent=1) + "\n")
    print(f"written: {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
