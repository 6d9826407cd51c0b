"""Make perfSONAR 5 archive documents (OpenSearch ``pscheduler_*``) from the real bodies
pScheduler's ``http`` archiver posted, by following perfsonar/logstash's pipeline.

No real stored document is public (``../shared/corpus/perfsonar5/SOURCES.md``), so the
fixtures under ``tests/data/pscheduler_archive_*`` are *constructed*: each is the real
body of ``../shared/corpus/perfsonar5/pscheduler-http-archiver/`` put through these steps,
as perfsonar/logstash's pipeline does them (read from its repository; file names there):

02-pscheduler_common.conf
    drop the body's ``schedule``; ``task.schedule`` -> ``schedule``; ``run.added`` /
    ``start-time`` / ``end-time`` -> ``pscheduler.added`` / ``start_time`` / ``end_time``;
    ``participants`` -> ``pscheduler.participants``; ``tool.name`` -> ``pscheduler.tool``;
    ``task.detail.duration`` -> ``pscheduler.duration``; the task and run hrefs ->
    ``pscheduler.task_href`` / ``run_href`` and their last path element ->
    ``task_id`` / ``run_id``; drop ``run``, ``task``, ``tool``. ``test_checksum``: the
    pipeline's checksum script was not available to read; here the MD5 of the test object
    as canonical JSON (sorted keys) stands in for it.
03-normalize_endpoints (ruby/pscheduler_normalize_endpoints.rb)
    ``meta.source`` / ``destination`` from ``test.spec.source`` / ``dest`` (the observer,
    the task href's host, where the spec has no source), ``meta.observer``, each ``ip``
    and ``hostname`` (a name given: itself; an address: its reverse name), and
    ``ip_version``. Since 5.1 a hostname that does not resolve falls back to the ip;
    before, it stays null (``--before-5.1``). Name lookups cannot run here: they come from
    :data:`RESOLVED`, each taken from the bodies themselves or public DNS as noted there.
04 / ruby/pscheduler_iso8601_duration.rb
    the spec's and the rtt result's ISO 8601 durations -> seconds (a number).
06-result_throughput.conf (5.2)
    ``result.summary.summary.throughput-bits`` (the sender's) -> ``result.throughput``;
    ``sent``, ``lost``, ``jitter``, ``rtt``, ``retransmits`` likewise; ``result.mss`` /
    ``mtu``; ``result.intervals`` -> ``result.intervals.json`` and, with ``parallel`` > 1,
    ``result.summary.streams`` -> ``result.streams.json``, as JSON text (``--json-objects``:
    kept as the objects themselves); everything else of the result is dropped, the
    receiver's rate included.
06-result_rtt.conf
    ``result.{sent, received, lost, loss, duplicates, reorders}`` -> ``result.packets.*``
    (``duplicated``, ``reordered``), ``roundtrips`` -> ``packets.json`` (JSON text),
    ``min``/``max``/``mean``/``stddev`` -> ``result.rtt.*`` (seconds).
06-result_latency.conf
    packet counters -> ``result.packets.*`` and ``loss = lost / sent``; ``max-clock-error``
    -> ``result.max_clock_error``; ``histogram-latency`` / ``histogram-ttl`` ->
    ``result.latency`` / ``result.ttl`` by the pipeline's histogram script (not available
    to read): here ``histogram`` (the keys as pScheduler wrote them, in units of
    ``test.spec.bucket-width``) and ``min``, ``max``, ``mean``, ``median``, ``stddev``,
    ``variance``, ``p25``, ``p75``, ``p95`` in those units (median and percentiles:
    nearest rank).
99-outputs.conf
    the index: ``pscheduler_<type>-YYYY.MM.dd`` (daily, before 5.0.5: ``--before-5.0.5``)
    or the data stream ``pscheduler_<type>``, whose backing index is
    ``.ds-pscheduler_<type>-YYYY.MM.dd-000001``.
Logstash itself adds ``@timestamp`` (when it received the body: here the run's end time),
``@version`` and the ``http`` input's ``host``.

Usage: ``python tools/pscheduler_archive_from_corpus.py CORPUS_DIR OUT_DIR`` writes every
fixture (see ``tests/data/pscheduler_archive_*/README.md``).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import math
import re
from pathlib import Path

#: Name lookups the pipeline would make (it runs where the testpoint resolves them):
#: address -> reverse name (None: no PTR record), name -> address.
RESOLVED = {
    # the testpoint: the throughput and latency bodies' source and requester
    "lima-perfsonar-vm": "192.168.1.104",
    # the address the round trips of the body show answering for the name
    "8091.info": "104.21.24.217",
    # public DNS: 1.1.1.1's PTR record
    "1.1.1.1": "one.one.one.one",
    # a home LAN and a documentation address (RFC 5737): no reverse name
    "192.168.1.101": None, "192.168.1.104": None, "192.0.2.1": None, "104.21.24.217": None,
}
IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
DURATION = re.compile(r"P(?:(?P<d>[0-9.]+)D)?(?:T(?:(?P<h>[0-9.]+)H)?(?:(?P<m>[0-9.]+)M)?(?:(?P<s>[0-9.]+)S)?)?")
SECONDS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
HISTOGRAM_PERCENTILES = (25, 75, 95)


def seconds(text):
    m = DURATION.fullmatch(text)
    return sum(float(v) * SECONDS[k] for k, v in m.groupdict().items() if v)


def _endpoint(name, before_51):
    """``{ip, hostname}`` as pscheduler_normalize_endpoints.rb sets them."""
    if IPV4.fullmatch(name):
        ip, host = name, RESOLVED[name]
    else:
        ip, host = RESOLVED[name], name
    if host is None and not before_51:
        host = ip
    return {"ip": ip, "hostname": host}


def histogram_stats(hist):
    """The histogram and its statistics in the histogram's own units."""
    keys = sorted(hist, key=float)
    values = [float(k) for k in keys]
    counts = [hist[k] for k in keys]
    total = sum(counts)
    mean = sum(v * c for v, c in zip(values, counts)) / total
    variance = sum(c * (v - mean) ** 2 for v, c in zip(values, counts)) / total

    def rank(p):
        need, seen = p / 100 * total, 0
        for v, c in zip(values, counts):
            seen += c
            if seen >= need - 1e-9 * total:
                return v
        return values[-1]
    out = {"histogram": hist, "min": values[0], "max": values[-1], "mean": mean, "median": rank(50),
           "stddev": math.sqrt(variance), "variance": variance}
    out.update({f"p{p}": rank(p) for p in HISTOGRAM_PERCENTILES})
    return out


def to_document(body, *, before_51=False, json_objects=False, bucket_width=None):
    """The ``_source`` document Logstash stores for one archiver ``body``."""
    body = copy.deepcopy(body)
    task, run, tool = body.pop("task"), body.pop("run"), body.pop("tool")
    body.pop("schedule")
    doc = {"@timestamp": run["end-time"].replace("+00:00", ".000Z"), "@version": "1", "host": "127.0.0.1"}
    doc.update({k: v for k, v in body.items() if k not in ("result", "participants")})
    if "schedule" in task:
        doc["schedule"] = task["schedule"]
    ps = {"added": run["added"], "start_time": run["start-time"], "end_time": run["end-time"],
          "participants": body["participants"], "tool": tool["name"], "duration": task["detail"]["duration"],
          "task_href": task["href"], "run_href": run["href"],
          "task_id": task["href"].rsplit("/tasks/", 1)[1], "run_id": run["href"].rsplit("/runs/", 1)[1],
          "test_checksum": hashlib.md5(json.dumps(body["test"], sort_keys=True).encode()).hexdigest()}
    doc["pscheduler"] = ps
    test = doc["test"]
    if bucket_width is not None:
        test["spec"]["bucket-width"] = bucket_width
    spec = test["spec"]
    observer_name = task["href"].split("/")[2]
    observer = _endpoint(observer_name, before_51)
    source = spec.get("source", observer_name)
    doc["meta"] = {"source": _endpoint(source, before_51), "destination": _endpoint(spec["dest"], before_51),
                   "observer": observer, "ip_version": 4}
    for key in ("duration", "omit", "interval", "timeout", "deadline"):
        if isinstance(spec.get(key), str):
            spec[key] = seconds(spec[key])
    result = body["result"]
    encode = (lambda v: {"json": v}) if json_objects else (lambda v: {"json": json.dumps(v)})
    kind = test["type"]
    if kind == "throughput":
        total = result["summary"]["summary"]
        out = {"succeeded": result["succeeded"]}
        for src, dst in (("throughput-bits", "throughput"), ("sent", "packets_sent"), ("lost", "packets_lost"),
                         ("jitter", "jitter"), ("rtt", "rtt"), ("retransmits", "retransmits")):
            if src in total:
                out[dst] = total[src]
        for key in ("mss", "mtu"):
            if key in result:
                out[key] = result[key]
        out["intervals"] = encode(result["intervals"])
        if spec.get("parallel", 1) > 1:
            out["streams"] = encode(result["summary"]["streams"])
    elif kind == "rtt":
        out = {"succeeded": result["succeeded"], "packets": {}, "rtt": {}}
        for src, dst in (("duplicates", "duplicated"), ("lost", "lost"), ("loss", "loss"),
                         ("received", "received"), ("reorders", "reordered"), ("sent", "sent")):
            if src in result:
                out["packets"][dst] = result[src]
        out["packets"]["json"] = json.dumps(result["roundtrips"])
        for key in ("min", "max", "mean", "stddev"):
            if key in result:
                out["rtt"][key] = seconds(result[key])
    else:                                                   # latency
        out = {"succeeded": result["succeeded"], "max_clock_error": result["max-clock-error"], "packets": {}}
        for key in ("duplicated", "lost", "received", "reordered", "sent"):
            out["packets"][key] = result[f"packets-{key}"]
        out["packets"]["loss"] = out["packets"]["lost"] / out["packets"]["sent"]
        hist = result["histogram-latency"]
        if bucket_width is not None:                         # the same delays in other units
            scale = 0.001 / bucket_width
            hist = {f"{float(k) * scale:.1f}": v for k, v in hist.items()}
        out["latency"] = histogram_stats(hist)
        out["ttl"] = histogram_stats(result["histogram-ttl"])
    doc["result"] = out
    return doc


def index_of(doc, before_505=False):
    day = doc["pscheduler"]["start_time"][:10].replace("-", ".")
    kind = doc["test"]["type"]
    return f"pscheduler_{kind}-{day}" if before_505 else f".ds-pscheduler_{kind}-{day}-000001"


def hit(doc, before_505=False):
    return {"_index": index_of(doc, before_505), "_id": doc["id"], "_score": 1.0, "_source": doc}


def search_response(docs):
    return {"took": 3, "timed_out": False, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": len(docs), "relation": "eq"}, "max_score": 1.0,
                     "hits": [hit(d) for d in docs]}}


def ndjson(objects):
    return "".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objects)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path, help="../shared/corpus/perfsonar5")
    ap.add_argument("out", type=Path, help="tests/data")
    args = ap.parse_args(argv)
    bodies = args.corpus / "pscheduler-http-archiver"

    def body(stem):
        return json.loads(next(bodies.glob(stem + "*.json")).read_text())
    thr = body("throughput-192.168.1.104-to-192.168.1.101")
    rtts = [body(s) for s in ("rtt-1.1.1.1", "rtt-8091.info", "rtt-FAILED-192.0.2.1", "rtt-twping-192.168.1.101")]
    twamp = body("latency-twamp-192.168.1.101")
    t, lat = args.out / "pscheduler_archive_throughput", args.out / "pscheduler_archive_latency"
    t.mkdir(parents=True, exist_ok=True)
    lat.mkdir(parents=True, exist_ok=True)
    pretty = {"indent": 2}
    doc52 = to_document(thr)
    (t / "constructed--5.2-iperf3-document.json").write_text(json.dumps(doc52, **pretty) + "\n")
    (t / "constructed--5.2-iperf3-search.json").write_text(json.dumps(search_response([doc52]), **pretty) + "\n")
    old = to_document(thr, before_51=True, json_objects=True)
    (t / "constructed--5.0-iperf3-elasticdump.ndjson").write_text(ndjson([hit(old, before_505=True)]))
    both = ndjson([hit(doc52), hit(old, before_505=True)])
    cut = both.index('"interval', len(both.split("\n")[0]) + 1)
    (t / "constructed--5.2-iperf3-elasticdump-cut-in-second-document.ndjson").write_text(both[:cut])
    docs = [to_document(b) for b in rtts]
    (lat / "constructed--5.2-rtt-search.json").write_text(json.dumps(search_response(docs), **pretty) + "\n")
    (lat / "constructed--5.0-rtt-scroll.ndjson").write_text(ndjson([to_document(b, before_51=True) for b in rtts]))
    lines = ndjson(docs).splitlines(keepends=True)
    (lat / "constructed--5.2-rtt-scroll-cut-in-fourth-document.ndjson").write_text(
        "".join(lines[:3]) + lines[3][:len(lines[3]) // 2])
    (lat / "constructed--5.2-latency-twamp-document.json").write_text(json.dumps(to_document(twamp), **pretty) + "\n")
    (lat / "constructed--5.2-latency-twamp-bucket-0.0001-document.json").write_text(
        json.dumps(to_document(twamp, bucket_width=0.0001), **pretty) + "\n")


if __name__ == "__main__":
    main()
