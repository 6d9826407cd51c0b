"""Ingest speed: thruput's ping and iperf3 -J readers against jc and bare parsing.

    python -m benchmarks.ingest [--ping-mb 50] [--iperf3-files 10000] [--repeat 3]
                                [--large-ping-mb 1000] [--out benchmarks/output]

Inputs are generated from recorded fixtures into ``<out>`` (not committed):

``ping-<N>MB.log``
    One iputils ``ping -D -O`` run of about N MB: the reply lines of
    ``tests/data/ping/iputils--timestamps-D.out`` and ``iputils--no-answer-O-netns.out``
    repeated and renumbered (16-bit sequence numbers wrapping as ping's do, timestamps
    advancing by the 0.2 s interval, the recorded RTTs in turn), one ``no answer yet`` line
    per 1000 probes, and a summary whose totals and statistics match the probes.
``iperf3/<i>.json``
    Copies of ``tests/data/iperf3_json/3.12--tcp.json`` with every rate, byte count, RTT
    and window multiplied by a random factor in [0.9, 1.1] (seeded).

Measured side by side, each from the files on disk (reading included), best of
``--repeat`` runs (jc: best of 2, it takes seconds):

ping
    (a) ``thruput.read(path)`` (sniffing, sha256, decoding, parsing, ``validate``) and
    ``thruput.formats.ping.parse(text)`` alone (the vectorised path: its lines matched by
    ``pyarrow.compute``, the replies' numbers cut from their bytes by NumPy and cast by
    Arrow), and ``parse`` once more by the general path alone (what logs with ``(DUP!)``
    lines or mixed reply layouts get);
    (b) ``jc.parsers.ping.parse(text)``;
    (c) a bare scan: ``re.findall(r"time=([\\d.]+) ms", text)`` into a float array.
    The targets are checked for ``thruput.read`` (the whole job, file to Dataset); the
    same ratios for ``parse`` alone are reported beside them.
iperf3
    (a) ``thruput.read_many(paths)`` (iperf3_json.parse_many inside); (b) ``json.loads`` of each
    text (and ``orjson.loads``, which the reader uses).

Peak memory is the high-water mark of the resident set (``VmHWM``) of a fresh Python
process that only reads the 50 MB log with ``thruput.read``; interpreter and imports
included (``resource.getrusage`` would report the parent's size, inherited by ``fork``).

Large log (issue 11, ``--large-ping-mb 1000``, 0 to skip): a ``ping-<N>MB.log`` of the same
kind, read once by ``thruput.read`` in a fresh process (streamed in pieces, see
``thruput.reader.STREAM_BYTES``): wall time, MB/s, peak RSS (``VmHWM``) and the size of
the Dataset it returns; the target is a peak under 1 GB for 1 GB.

Prints a table and writes ``<out>/ingest.json`` (times, MB/s, ratios, the targets of
issue 2 and whether they were met). Speed is measured here only, never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PING_SOURCES = (ROOT / "tests/data/ping/iputils--timestamps-D.out",
                ROOT / "tests/data/ping/iputils--no-answer-O-netns.out")
IPERF3_SOURCE = ROOT / "tests/data/iperf3_json/3.12--tcp.json"
DEFAULT_OUT = ROOT / "benchmarks" / "output"

#: Targets of issue 2 (ratios of times; lower is better except the jc speed-up).
TARGETS = {"ping_speedup_vs_jc_min": 15.0, "ping_vs_bare_scan_max": 2.0,
           "iperf3_vs_json_loads_max": 2.0, "ping_peak_rss_mb_max": 1024.0,
           "large_ping_peak_rss_mb_max": 1024.0}  # issue 11: a 1 GB log under 1 GB

RTT_SCAN = re.compile(r"time=([\d.]+) ms")
REPLY = re.compile(
    r"^\[(\d+\.\d+)\] (\d+) bytes from (\S+): icmp_seq=\d+ ttl=(\d+) time=([\d.]+) ms$", re.M)
#: The iperf3 -J numbers perturbed in the generated copies.
IPERF3_NUMBERS = re.compile(
    r'("(?:bits_per_second|bytes|rtt|rttvar|snd_cwnd|max_snd_cwnd|max_rtt|min_rtt|mean_rtt)"'
    r':\s*)(\d+(?:\.\d+)?(?:e[+-]?\d+)?)')


# ---------------------------------------------------------------------------------------
# Inputs


def make_ping_log(path, megabytes):
    """Write an iputils ``ping -D -O`` log of about ``megabytes`` MB from the recordings."""
    replies = [m.groups() for src in PING_SOURCES for m in REPLY.finditer(src.read_text())]
    size, addr, ttl = replies[0][1], replies[0][2], replies[0][3]
    rtts = [r[4] for r in replies]
    start = float(replies[0][0])
    target = int(megabytes * 1e6)
    lines = [f"PING {addr} ({addr}) 56(84) bytes of data."]
    written, seq, lost, values = len(lines[0]) + 1, 0, 0, []
    while written < target:
        seq += 1
        stamp = start + 0.2 * seq
        if seq % 1000 == 0:  # a probe that was never answered
            line = f"[{stamp:.6f}] no answer yet for icmp_seq={seq % 65536}"
            lost += 1
        else:
            rtt = rtts[seq % len(rtts)]
            values.append(float(rtt))
            line = (f"[{stamp:.6f}] {size} bytes from {addr}: icmp_seq={seq % 65536} "
                    f"ttl={ttl} time={rtt} ms")
        lines.append(line)
        written += len(line) + 1
    v = np.array(values)
    received = seq - lost
    lines += ["", f"--- {addr} ping statistics ---",
              f"{seq} packets transmitted, {received} received, "
              f"{100.0 * lost / seq:.4g}% packet loss, time {int(0.2 * seq * 1000)}ms",
              f"rtt min/avg/max/mdev = {v.min():.3f}/{v.mean():.3f}/{v.max():.3f}/{v.std():.3f} ms"]
    path.write_text("\n".join(lines) + "\n")
    return {"path": str(path), "bytes": path.stat().st_size, "lines": len(lines),
            "probes": seq, "lost": lost}


def make_iperf3_files(folder, count, seed=0):
    """Write ``count`` perturbed copies of the recorded iperf3 -J fixture into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    text = IPERF3_SOURCE.read_text()
    rng = random.Random(seed)

    def perturb(m):
        value = float(m.group(2)) * rng.uniform(0.9, 1.1)
        number = repr(value) if "." in m.group(2) or "e" in m.group(2) else str(int(value))
        return m.group(1) + number

    paths = []
    for i in range(count):
        path = folder / f"{i:05d}.json"
        if not path.exists():
            path.write_text(IPERF3_NUMBERS.sub(perturb, text))
        paths.append(path)
    return paths


# ---------------------------------------------------------------------------------------
# Timing


def best_of(fn, repeat):
    """Best wall time of ``repeat`` calls of ``fn`` (s), and its last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def bare_scan(path):
    text = Path(path).read_text()
    return np.array(RTT_SCAN.findall(text), dtype=float)


def peak_rss_mb(path):
    """Peak RSS (MB) of a fresh interpreter that reads ``path`` with thruput.read, and of
    one that only imports thruput.

    The kernel's high-water mark ``VmHWM`` is read in the child: ``ru_maxrss`` of
    ``getrusage(RUSAGE_SELF)`` would include the parent's memory the child was forked with.
    """
    hwm = ("int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])")
    code = f"import sys, thruput; ds = thruput.read(sys.argv[1]); print({hwm})"
    base = f"import thruput, xarray; print({hwm})"
    peak = subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                          capture_output=True, text=True).stdout
    baseline = subprocess.run([sys.executable, "-c", base], check=True,
                              capture_output=True, text=True).stdout
    return int(peak) / 1024, int(baseline) / 1024  # VmHWM is in kB


def bench_large_ping(out, megabytes):
    """Time and peak RSS of one ``thruput.read`` of a generated ``megabytes`` MB log, in a
    fresh process (the file is generated once and kept in ``out``)."""
    path = out / f"ping-{megabytes:g}MB.log"
    info = make_ping_log(path, megabytes) if not path.exists() else {
        "path": str(path), "bytes": path.stat().st_size}
    hwm = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"
    code = ("import sys, time, json, thruput; t = time.perf_counter(); "
            "ds = thruput.read(sys.argv[1]); t = time.perf_counter() - t; "
            f"print(json.dumps({{'seconds': t, 'peak_kb': {hwm}, 'probes': ds.sizes['probe'], "
            "'output_bytes': ds.nbytes, 'consistent': ds.attrs['consistent']}))")
    got = json.loads(subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                                    capture_output=True, text=True).stdout)
    return {"input": info, "seconds": got["seconds"],
            "mb_per_s": info["bytes"] / 1e6 / got["seconds"],
            "peak_rss_mb": got["peak_kb"] / 1024, "output_mb": got["output_bytes"] / 2**20,
            "probes": got["probes"], "consistent": got["consistent"]}


def bench_ping(out, megabytes, repeat):
    import jc.parsers.ping as jc_ping

    import thruput
    from thruput.formats import ping

    path = out / f"ping-{megabytes:g}MB.log"
    info = make_ping_log(path, megabytes)
    mb = info["bytes"] / 1e6
    text = path.read_text()
    t_read, ds = best_of(lambda: thruput.read(path), repeat)
    t_parse, _ = best_of(lambda: ping.parse(text), repeat)
    fast = ping._replies_fast
    ping._replies_fast = lambda text: None
    try:
        t_general, general = best_of(lambda: ping.parse(text), repeat)
    finally:
        ping._replies_fast = fast
    if not general.identical(ping.parse(text)):
        raise RuntimeError("the fast path and the line-by-line reader gave different Datasets")
    t_jc, doc = best_of(lambda: jc_ping.parse(path.read_text(), quiet=True), min(repeat, 2))
    t_bare, scan = best_of(lambda: bare_scan(path), repeat)
    status = ds["status"].values.astype(str)
    replies = np.isin(status, ("reply", "duplicate"))
    jc_replies = sum(r["type"] == "reply" for r in doc["responses"])
    if not (replies.sum() == len(scan) == jc_replies
            and np.array_equal(ds["rtt"].values[replies], scan)):
        raise RuntimeError("thruput, jc and the bare scan did not find the same replies")
    rss, baseline = peak_rss_mb(path)
    seconds = {"thruput_read": t_read, "thruput_parse": t_parse,
               "thruput_parse_line_by_line": t_general, "jc": t_jc, "bare_scan": t_bare}
    return {
        "input": info,
        "reader": "no C of its own (pyarrow.compute over the lines, NumPy)",
        "seconds": seconds,
        "mb_per_s": {key: mb / t for key, t in seconds.items()},
        "ratios": {"jc_over_thruput_read": t_jc / t_read, "jc_over_thruput_parse": t_jc / t_parse,
                   "jc_over_thruput_parse_line_by_line": t_jc / t_general,
                   "thruput_read_over_bare": t_read / t_bare,
                   "thruput_parse_over_bare": t_parse / t_bare,
                   "thruput_parse_line_by_line_over_bare": t_general / t_bare},
        "peak_rss_mb": rss, "baseline_rss_mb": baseline,
    }


def bench_iperf3(out, count, repeat):
    import orjson

    import thruput

    paths = make_iperf3_files(out / "iperf3", count)

    def read_all():
        return [p.read_bytes() for p in paths]

    def thruput_many():
        # the public batch reader: reads the files, hashes them (provenance), one Dataset
        return thruput.read_many(paths, format="iperf3_json")

    def json_loads():
        return [json.loads(b) for b in read_all()]

    def orjson_loads():
        return [orjson.loads(b) for b in read_all()]

    t_thruput, ds = best_of(thruput_many, repeat)
    t_json, docs = best_of(json_loads, repeat)
    t_orjson, _ = best_of(orjson_loads, repeat)
    t_read, _ = best_of(read_all, repeat)
    if not ds.sizes["run"] == len(docs) == count:
        raise RuntimeError(f"read_many read {ds.sizes['run']} runs from {count} files")
    return {
        "input": {"files": count, "bytes": sum(p.stat().st_size for p in paths),
                  "source": str(IPERF3_SOURCE.relative_to(ROOT))},
        "seconds": {"thruput_read_many": t_thruput, "json_loads": t_json,
                    "orjson_loads": t_orjson, "read_files_only": t_read},
        "files_per_s": {"thruput_read_many": count / t_thruput, "json_loads": count / t_json,
                        "orjson_loads": count / t_orjson},
        "ratios": {"thruput_over_json_loads": t_thruput / t_json,
                   "thruput_over_orjson_loads": t_thruput / t_orjson},
    }


# ---------------------------------------------------------------------------------------
# Report


def verdicts(result):
    p, i = result["ping"], result["iperf3"]
    t = TARGETS
    return {
        "ping_speedup_vs_jc": (p["ratios"]["jc_over_thruput_read"], ">=",
                               t["ping_speedup_vs_jc_min"]),
        "ping_vs_bare_scan": (p["ratios"]["thruput_read_over_bare"], "<=",
                              t["ping_vs_bare_scan_max"]),
        "ping_parse_speedup_vs_jc": (p["ratios"]["jc_over_thruput_parse"], ">=",
                                     t["ping_speedup_vs_jc_min"]),
        "ping_parse_vs_bare_scan": (p["ratios"]["thruput_parse_over_bare"], "<=",
                                    t["ping_vs_bare_scan_max"]),
        "iperf3_vs_json_loads": (i["ratios"]["thruput_over_json_loads"], "<=",
                                 t["iperf3_vs_json_loads_max"]),
        "ping_peak_rss_mb": (p["peak_rss_mb"], "<=", t["ping_peak_rss_mb_max"]),
        **({"large_ping_peak_rss_mb": (result["large_ping"]["peak_rss_mb"], "<=",
                                       t["large_ping_peak_rss_mb_max"])}
           if result.get("large_ping") else {}),
    }


def print_table(result):
    p, i = result["ping"], result["iperf3"]
    mb = p["input"]["bytes"] / 1e6
    print(f"\nping: {mb:.1f} MB, {p['input']['lines']} lines, {p['input']['probes']} probes;"
          f" thruput reader: {p['reader']}")
    print(f"  {'reader':<36}{'seconds':>9}{'MB/s':>8}{'jc / it':>9}{'it / bare':>11}")
    for key, label in (("thruput_read", "thruput.read(path)"),
                       ("thruput_parse", "ping.parse(text)"),
                       ("thruput_parse_line_by_line", "ping.parse(text), line by line"),
                       ("jc", "jc.parsers.ping.parse"),
                       ("bare_scan", "bare regex scan of time=")):
        t = p["seconds"][key]
        print(f"  {label:<36}{t:>9.3f}{p['mb_per_s'][key]:>8.1f}"
              f"{p['seconds']['jc'] / t:>9.2f}{t / p['seconds']['bare_scan']:>11.2f}")
    print(f"  peak RSS of thruput.read: {p['peak_rss_mb']:.0f} MB "
          f"(an interpreter with thruput imported: {p['baseline_rss_mb']:.0f} MB)")
    if result.get("large_ping"):
        g = result["large_ping"]
        print(f"\nlarge ping log: {g['input']['bytes'] / 1e6:.0f} MB, {g['probes']} probes: "
              f"thruput.read {g['seconds']:.1f} s ({g['mb_per_s']:.1f} MB/s), peak RSS "
              f"{g['peak_rss_mb']:.0f} MB for a {g['output_mb']:.0f} MiB Dataset")
    n = i["input"]["files"]
    print(f"\niperf3 -J: {n} files, {i['input']['bytes'] / 1e6:.1f} MB")
    print(f"  {'reader':<32}{'seconds':>10}{'files/s':>10}")
    for key, label in (("thruput_read_many", "thruput.read_many"),
                       ("json_loads", "json.loads each"), ("orjson_loads", "orjson.loads each")):
        print(f"  {label:<32}{i['seconds'][key]:>10.3f}{i['files_per_s'][key]:>10.0f}")
    print(f"  (reading the files alone: {i['seconds']['read_files_only']:.3f} s, in every row)")
    print("\ntargets (issue 2):")
    for name, (value, op, target) in result["verdicts"].items():
        met = value >= target if op == ">=" else value <= target
        print(f"  {name:<26}{value:>10.2f}  target {op} {target:<8g} {'met' if met else 'NOT MET'}")


def run(out=DEFAULT_OUT, ping_mb=50.0, iperf3_files=10000, repeat=3, large_ping_mb=1000.0):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = {
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "processor": platform.processor() or platform.machine()},
        "ping": bench_ping(out, ping_mb, repeat),
        "iperf3": bench_iperf3(out, iperf3_files, repeat),
        "large_ping": bench_large_ping(out, large_ping_mb) if large_ping_mb else None,
    }
    result["verdicts"] = verdicts(result)
    result["targets_met"] = {name: (v >= t if op == ">=" else v <= t)
                             for name, (v, op, t) in result["verdicts"].items()}
    (out / "ingest.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ingest",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--ping-mb", type=float, default=50.0)
    parser.add_argument("--iperf3-files", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--large-ping-mb", type=float, default=1000.0,
                        help="size of the large ping log read once for peak RSS (0: skip)")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args(argv)
    result = run(args.out, args.ping_mb, args.iperf3_files, args.repeat, args.large_ping_mb)
    print_table(result)
    print(f"\nwritten: {Path(args.out) / 'ingest.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
