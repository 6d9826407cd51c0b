"""Make pScheduler result JSON from runs recorded here, as pScheduler's tools would report them.

pScheduler does not run here (perfSONAR ships it for EL and Debian from its own
repositories, not from Debian's), so the fixtures under ``tests/data/pscheduler_*`` that
are not public examples are *constructed*, labelled as such, by these documented mappings:

``throughput IPERF3_JSON OUT [--wrap] [--reverse]``
    pScheduler's iperf3 tool (``pscheduler-tool-iperf3/iperf3/iperf3_parser.py``): each
    interval's streams and ``sum`` with iperf3's keys renamed (``socket`` -> ``stream-id``,
    ``bytes`` -> ``throughput-bytes``, ``bits_per_second`` -> ``throughput-bits``,
    ``snd_cwnd`` -> ``tcp-window-size``, ``rtt``/``mean_rtt`` -> ``rtt``, ``packets`` ->
    ``sent``, ``lost_packets`` -> ``lost``, ``jitter_ms`` -> ``jitter``, ``retransmits``,
    ``omitted``, ``start``, ``end``); the summary is ``end.sum_sent`` (else ``end.sum``),
    the streams' summaries ``end.streams[].sender`` (else ``.udp``). ``--wrap`` writes the
    object an archiver receives (task with test type and spec, run with start time).
``latency IRTT_JSON OUT``
    pScheduler's latency result (``pscheduler-test-latency/latency/validate.py``) from the
    upstream one-way delays irtt recorded: ``raw-packets`` with RFC 1305 timestamps (client
    send, server receive), ``histogram-latency`` keyed by delay / bucket-width (0.001 s)
    rounded to two decimals, ``histogram-ttl`` (255: loopback), packet counters.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
from pathlib import Path

#: iperf3 key -> pScheduler key (pScheduler's iperf3 tool, rename_json).
RENAME = {"socket": "stream-id", "start": "start", "end": "end", "bytes": "throughput-bytes",
          "bits_per_second": "throughput-bits", "omitted": "omitted", "jitter_ms": "jitter",
          "packets": "sent", "lost_packets": "lost", "retransmits": "retransmits",
          "snd_cwnd": "tcp-window-size", "rtt": "rtt", "mean_rtt": "rtt"}
NTP_TO_UNIX = 2208988800
BUCKET_WIDTH = 0.001


def _load(path):
    raw = Path(path).read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def _rename(obj):
    return {RENAME[k]: v for k, v in obj.items() if k in RENAME}


def throughput(doc, source, wrap=False, reverse=False):
    end = doc["end"]
    result = {
        "succeeded": True,
        "diag": f"constructed by tools/pscheduler_from_recordings.py from {source} (iperf3 -J, recorded here)",
        "intervals": [{"streams": [_rename(s) for s in iv["streams"]], "summary": _rename(iv["sum"])}
                      for iv in doc["intervals"]],
        "summary": {"streams": [_rename(s.get("udp") or s["sender"]) for s in end["streams"]],
                    "summary": _rename(end.get("sum_sent") or end["sum"])},
    }
    if not wrap:
        return result
    test = doc["start"]["test_start"]
    spec = {"schema": 1, "source": doc["start"]["connected"][0]["local_host"],
            "dest": doc["start"]["connecting_to"]["host"], "duration": f"PT{test['duration']}S",
            "parallel": test["num_streams"], "udp": test["protocol"] == "UDP", "reverse": reverse}
    when = doc["start"]["timestamp"]["timesecs"]
    import datetime as dt
    start = dt.datetime.fromtimestamp(when, dt.timezone.utc).isoformat()
    return {"task": {"test": {"type": "throughput", "spec": spec}, "tool": "iperf3"},
            "run": {"start-time": start}, "result": result}


def latency(doc):
    trips = doc["round_trips"]
    raw, hist = [], collections.Counter()
    received = 0
    for t in trips:
        send = t["timestamps"]["client"]["send"]["wall"]
        recv = (t["timestamps"].get("server") or {}).get("receive", {}).get("wall")
        packet = {"seq-num": t["seqno"], "src-ts": _ntp(send), "src-clock-sync": True,
                  "dst-ts": _ntp(recv) if recv else 0, "dst-clock-sync": True, "ip-ttl": 255}
        raw.append(packet)
        if recv:
            received += 1
            delay_s = (recv - send) / 1e9
            hist[f"{round(delay_s / BUCKET_WIDTH, 2):.2f}"] += 1
    sent = len(trips)
    return {"schema": 1, "succeeded": True, "packets-sent": sent, "packets-received": received,
            "packets-lost": sent - received, "packets-duplicated": 0, "packets-reordered": 0,
            "max-clock-error": 0.0, "histogram-latency": dict(sorted(hist.items(), key=lambda kv: float(kv[0]))),
            "histogram-ttl": {"255": received}, "raw-packets": raw}


def _ntp(wall_ns):
    """Unix ns -> RFC 1305 64-bit timestamp (seconds since 1900 << 32 | fraction)."""
    seconds, ns = divmod(int(wall_ns), 10**9)
    return ((seconds + NTP_TO_UNIX) << 32) + (ns << 32) // 10**9


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("test", choices=("throughput", "latency"))
    p.add_argument("source")
    p.add_argument("out")
    p.add_argument("--wrap", action="store_true")
    p.add_argument("--reverse", action="store_true")
    a = p.parse_args(argv)
    doc = _load(a.source)
    out = throughput(doc, a.source, a.wrap, a.reverse) if a.test == "throughput" else latency(doc)
    Path(a.out).write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
