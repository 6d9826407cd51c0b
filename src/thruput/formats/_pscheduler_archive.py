"""perfSONAR 5 archive documents (OpenSearch ``pscheduler_*``), shared by
``pscheduler_archive_throughput`` (kind ``throughput``) and ``pscheduler_archive_latency``
(kind ``rtt``).

Since perfSONAR 5.0 pScheduler's ``http`` archiver posts each run to Logstash, whose
pipeline (perfsonar/logstash ``pipeline/02``-``06``, ``ruby/``) stores one document per run
in OpenSearch: daily indices ``pscheduler_<test type>-YYYY.MM.dd`` before 5.0.5, data
streams ``pscheduler_<test type>`` (backing indices ``.ds-pscheduler_<type>-...``) after,
all under the alias ``pscheduler``. A document holds:

``pscheduler``
    ``start_time``, ``end_time`` (ISO 8601), ``tool``, ``task_id``, ``run_id``,
    ``test_checksum``, ``participants``, ``duration``.
``meta``
    ``source``, ``destination``, ``observer``: ``ip`` and ``hostname`` (the pipeline falls
    back to the ip where the hostname does not resolve since 5.1; before, it may be
    null), ``ip_version``, ``geo``.
``test``
    ``type`` and ``spec`` (ISO 8601 durations of the spec in seconds).
``result``, by test type
    throughput: ``throughput`` (bit/s: the *sender's* ``throughput-bits`` of the tool's
    summary; the receiver's rate is dropped), ``retransmits``, ``packets_sent``,
    ``packets_lost``, ``jitter`` (ms), ``intervals.json`` (pScheduler's interval list,
    as JSON text) and, for several streams, ``streams.json``.
    rtt: ``packets.{sent, received, lost, loss, duplicated, reordered}``, ``rtt.{min,
    mean, max, stddev}`` (**seconds**, from ISO 8601 durations) and ``packets.json`` (the
    round trips, as JSON text, their ``rtt`` still ISO 8601).
    latency: ``packets.*`` as rtt, ``max_clock_error`` (ms), and ``latency`` / ``ttl``:
    the histogram (``histogram``, keys in units of ``test.spec.bucket-width``, default
    0.001 s, so not always ms) with its statistics (``min``, ``max``, ``mean``,
    ``median``, ``stddev``, ``variance``, ``p<q>``) in the same units.

Three wrappings are read: one ``_source`` document; an OpenSearch ``_search`` response
(``hits.hits[]._source``, with ``_index`` and ``_id``); and NDJSON dumps, one document per
line, either hits (elasticdump: ``{"_index", "_id", "_source"}``) or bare ``_source``
objects (a scroll). One file is read by one format, by its documents' test type: a
throughput document is one run of the throughput contract (runs in file order); rtt and
latency documents give the rtt contract: the round trips of every document are the probes
(``pscheduler_probe_doc`` says whose), and each document's counts and statistics are
``pscheduler_*`` variables over ``pscheduler_doc``.

Units: rtt statistics s -> ms; latency statistics and histogram keys x ``bucket-width``
(s) -> ms. Time of a document: ``pscheduler.start_time`` (``@timestamp`` is when
Logstash received it). Checked per document: packets sent against the round trips (not
when nothing came back: pScheduler writes none then), received against the replies, the
rtt statistics against the replies' (1 %), a latency histogram's count against packets
received and its stored median against the histogram's.

A dump cut off mid-line keeps its complete documents (``truncation`` says so); one
document (or ``_search`` response) cut off is refused, naming its last line; a line
that is not a document of the format raises :class:`~thruput.errors.ParseError` naming it.
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..contract import Ledger, build, consistency_check, count_lines
from ..errors import ParseError
from ._json import is_cut_off
from ._pscheduler import (
    DECODER,
    PERCENTILES,
    STORED,
    _duration_ms,
    _histogram,
    _rtt_base,
    _whole,
    weighted_stats,
)
from ._time import from_iso

__all__ = ["sniff", "parse", "documents", "TESTS"]

TOOL = "pscheduler"
#: The test types each format reads.
TESTS = {"pscheduler_archive_throughput": ("throughput",),
         "pscheduler_archive_latency": ("latency", "latencybg", "rtt")}
#: A document (or hit, or ``_search`` response) names its pScheduler object near its
#: start: Logstash's fields are few, and only ``result`` may be long.
_PSCHEDULER = STORED
_OBJECT = re.compile(r'\A\s*\{')
#: Where the head tells the test type: an index name, or the test object.
_INDEX = re.compile(r'"_index"\s*:\s*"(?:\.ds-)?pscheduler_([a-z]+)')
_TEST_TYPE = re.compile(r'"test"\s*:\s*\{\s*(?:"spec"\s*:\s*\{[^{}]*\}\s*,\s*)?"type"\s*:\s*"([a-z]+)"')
#: Failing both, the result's own fields (a document with sorted keys puts ``result``
#: before ``test``).
_RESULT_HINTS = (("throughput", re.compile(r'"(?:intervals|streams)"\s*:\s*\{\s*"json"|"retransmits"\s*:')),
                 ("latency", re.compile(r'"max_clock_error"\s*:|"latency"\s*:\s*\{')),
                 ("rtt", re.compile(r'"rtt"\s*:\s*\{\s*"(?:min|max|mean|stddev)"')))
#: pScheduler's default latency histogram bin (s).
DEFAULT_BUCKET_WIDTH = 0.001
MS_PER_S = 1e3
_NAN = np.nan
#: String fields of a document kept per run / per document: variable suffix -> path.
STRINGS = {"source_ip": ("meta", "source", "ip"), "source_hostname": ("meta", "source", "hostname"),
           "destination_ip": ("meta", "destination", "ip"),
           "destination_hostname": ("meta", "destination", "hostname"),
           "observer_ip": ("meta", "observer", "ip"), "observer_hostname": ("meta", "observer", "hostname"),
           "tool": ("pscheduler", "tool"), "test_type": ("test", "type"),
           "task_id": ("pscheduler", "task_id"), "run_id": ("pscheduler", "run_id"),
           "test_checksum": ("pscheduler", "test_checksum"), "timestamp": ("@timestamp",),
           "index": ("_index",), "id": ("_id",)}


def _head_test(head):
    for pattern in (_INDEX, _TEST_TYPE):
        m = pattern.search(head)
        if m:
            return m.group(1)
    return next((test for test, pattern in _RESULT_HINTS if pattern.search(head)), None)


def sniff(head, fmt):
    """True if ``head`` (the first 4 KB) is an archive document (or dump, or ``_search``
    response) of a test type format ``fmt`` reads."""
    if not _OBJECT.match(head) or not _PSCHEDULER.search(head):
        return False
    return _head_test(head) in TESTS[fmt]


# --- the documents of a file ------------------------------------------------------------

def documents(text):
    """``(documents, ledger, lost)``: every archive document of ``text`` as ``(source,
    index, id, line)`` (``_source`` object, ``_index`` and ``_id`` where a hit gives them,
    its first line); ``lost`` says what a cut-off dump lost ("" if nothing).

    Raises
    ------
    ParseError
        Empty input, JSON that is no archive document, a bad line of a dump.
    """
    n = count_lines(text)
    if not n or not text.strip():
        raise ParseError("empty input", line=1 if n else None)
    try:
        doc = DECODER.decode(text)
    except json.JSONDecodeError as exc:
        doc = None
        if exc.msg != "Extra data" and not _first_line_whole(text):       # one document, not a dump
            if is_cut_off(text, exc):
                raise ParseError("archive document cut off before its end (one document is read whole or "
                                 "not at all)", line=exc.lineno) from None
            raise ParseError(f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    if doc is not None:
        ledger = Ledger(n)
        ledger.parsed(np.arange(1, n + 1))
        return _whole_document(doc), ledger, ""
    return _ndjson(text, n)


def _first_line_whole(text):
    """Is the first line a JSON value of its own (a dump's first document)?"""
    try:
        DECODER.decode(text.split("\n", 1)[0])
    except json.JSONDecodeError:
        return False
    return True


def _whole_document(doc):
    if not isinstance(doc, dict):
        raise ParseError("not a perfSONAR archive document (no top-level object)", line=1)
    hits = doc.get("hits")
    if isinstance(hits, dict) and isinstance(hits.get("hits"), list):      # a _search response
        out = [_hit(h, 1) for h in hits["hits"]]
        if not out:
            raise ParseError("an OpenSearch response without hits", line=1)
        return out
    return [_hit(doc, 1)]


def _hit(obj, line):
    """``(source, index, id, line)`` of a hit or bare ``_source`` object."""
    if not isinstance(obj, dict):
        raise ParseError("not a perfSONAR archive document (not an object)", line=line)
    source = obj.get("_source", obj)
    if not isinstance(source, dict) or not isinstance(source.get("pscheduler"), dict) \
            or not isinstance(source.get("test"), dict):
        raise ParseError("not a perfSONAR archive document (no pscheduler and test objects)", line=line)
    return source, obj.get("_index"), obj.get("_id"), line


def _ndjson(text, n):
    ledger = Ledger(n)
    out, lost = [], ""
    lines = text.split("\n")
    for i, line in enumerate(lines, 1):
        if i > n:
            break
        if not line.strip():
            ledger.skip(i, "blank")
            continue
        try:
            obj = DECODER.decode(line)
        except json.JSONDecodeError as exc:
            if i == n and is_cut_off(line, exc):
                ledger.cut_off(i, "document")
                lost = ledger.truncation
                continue
            raise ParseError(f"not valid JSON: {exc.msg}", line=i) from None
        out.append(_hit(obj, i))
        ledger.parsed(i)
    if not out:
        raise ParseError("no complete archive document", line=1)
    return out, ledger, lost


def _get(doc, path):
    for key in path:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def _num(value):
    try:
        return _NAN if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return _NAN


def _json_field(value, line, what):
    """A field Logstash kept as JSON text (``{"json": "..."}``), or as the object itself."""
    if isinstance(value, dict) and "json" in value:
        value = value["json"]
    if isinstance(value, str):
        try:
            return DECODER.decode(value)
        except json.JSONDecodeError as exc:
            raise ParseError(f"{what}: not valid JSON text ({exc.msg})", line=line) from None
    return value


def _seconds(value):
    """A spec duration: seconds (the pipeline converted it) or an ISO 8601 duration."""
    if isinstance(value, str):
        return _duration_ms(value) / MS_PER_S
    return _num(value)


def _strings(docs):
    return {k: np.array([str(_get({**d[0], "_index": d[1], "_id": d[2]}, path) or "") for d in docs], dtype=str)
            for k, path in STRINGS.items()}


def _start(doc):
    when = _get(doc, ("pscheduler", "start_time"))
    return from_iso(when) if isinstance(when, str) and when else np.datetime64("NaT", "ns")


def parse(text, fmt):
    """Parse archive documents into a throughput or rtt Dataset (module docstring)."""
    docs, ledger, lost = documents(text)
    for source, _, _, line in docs:
        test = _get(source, ("test", "type"))
        if test not in TESTS[fmt]:
            raise ParseError(f"a pScheduler {test or 'unknown'} document, not one of {', '.join(TESTS[fmt])} "
                             f"(read it as {[f for f, t in TESTS.items() if test in t] or 'no format'})",
                             line=line)
        if _get(source, ("result", "succeeded")) is False:
            raise ParseError(f"pScheduler run failed: {_get(source, ('result', 'error')) or 'no error given'}",
                             line=line)
    if lost:
        ledger.truncated(lost)
    try:
        if fmt == "pscheduler_archive_throughput":
            return _throughput(docs, ledger, fmt)
        return _latency(docs, ledger, fmt)
    except ParseError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        raise ParseError(f"unexpected archive document ({type(exc).__name__}: {exc})", line=1) from None


# --- throughput -------------------------------------------------------------------------

def _intervals(source, line):
    """``(stream ids, [(start, end, {stream id: row})])`` of a document's intervals."""
    rows = _json_field(_get(source, ("result", "intervals")), line, "result.intervals") or []
    out, ids = [], []
    for iv in rows if isinstance(rows, list) else []:
        if not isinstance(iv, dict):
            continue
        summary = iv.get("summary") if isinstance(iv.get("summary"), dict) else {}
        streams = {}
        for row in iv.get("streams") or []:
            if isinstance(row, dict):
                streams[row.get("stream-id")] = row
                if row.get("stream-id") not in ids:
                    ids.append(row.get("stream-id"))
        out.append((_num(summary.get("start")), _num(summary.get("end")), streams))
    return ids, out


def _throughput(docs, ledger, fmt):
    R = len(docs)
    parsed = [_intervals(source, line) for source, _, _, line in docs]
    ends = [[s for s in (_json_field(_get(source, ("result", "streams")), line, "result.streams") or [])
             if isinstance(s, dict)] for source, _, _, line in docs]
    S = max([1] + [len(ids) for ids, _ in parsed] + [len(e) for e in ends])
    N = max([0] + [len(rows) for _, rows in parsed])
    keys = {"bits": "throughput-bits", "bytes": "throughput-bytes", "retr": "retransmits",
            "cwnd": "tcp-window-size", "rtt": "rtt"}
    per = {k: np.full((R, S, N), _NAN) for k in keys}
    starts, finish = np.full((R, N), _NAN), np.full((R, N), _NAN)
    line = np.zeros((R, S, N), dtype=np.int64)
    stream_bits = np.full((R, S), _NAN)
    run = {k: np.full(R, _NAN) for k in ("throughput", "retransmits", "jitter", "sent", "lost", "window",
                                         "duration", "streams", "mss", "mtu", "rtt")}
    udp = np.zeros(R, dtype=bool)
    reverse = np.zeros(R, dtype=bool)
    for r, ((source, _, _, at), (ids, rows)) in enumerate(zip(docs, parsed)):
        result, spec = source.get("result") or {}, _get(source, ("test", "spec")) or {}
        line[r] = at
        for i, (start, end, streams) in enumerate(rows):
            starts[r, i], finish[r, i] = start, end
            for sid, row in streams.items():
                s = ids.index(sid)
                for k, key in keys.items():
                    per[k][r, s, i] = _num(row.get(key))
        for s, row in enumerate(ends[r]):
            stream_bits[r, s] = _num(row.get("throughput-bits"))
        for k, key in (("throughput", "throughput"), ("retransmits", "retransmits"), ("jitter", "jitter"),
                       ("sent", "packets_sent"), ("lost", "packets_lost"), ("mss", "mss"), ("mtu", "mtu"),
                       ("rtt", "rtt")):
            run[k][r] = _num(result.get(key))
        udp[r] = bool(spec.get("udp"))
        reverse[r] = bool(spec.get("reverse"))
        run["window"][r] = _num(spec.get("window-size"))
        run["streams"][r] = len(ids) or len(ends[r]) or _num(spec.get("parallel") or 1)
        run["duration"][r] = np.nanmax(finish[r]) - np.nanmin(starts[r]) if rows else _NAN
    per["rtt"] /= 1e3                                   # iperf3's rtt (us) -> ms
    tcp = ~udp
    variables = {
        "throughput": (("run",), run["throughput"]),
        "throughput_sender": (("run",), np.where(tcp, run["throughput"], _NAN)),
        "throughput_receiver": (("run",), np.full(R, _NAN)),
        "bytes": (("run",), np.full(R, _NAN)),
        "duration": (("run",), run["duration"]),
        "streams": (("run",), run["streams"]),
        "protocol": (("run",), np.where(udp, "UDP", "TCP")),
        "window_requested": (("run",), run["window"]),
        "window_actual": (("run",), np.full(R, _NAN)),
        "loss_fraction": (("run",), np.where(udp & (run["sent"] > 0), run["lost"] / np.where(run["sent"] > 0,
                                                                                         run["sent"], 1), _NAN)),
        "retransmits": (("run",), np.where(tcp, run["retransmits"], _NAN)),
        "jitter": (("run",), run["jitter"]),
        "packets": (("run",), run["sent"]),
        "packets_lost": (("run",), run["lost"]),
        "run_line": (("run",), np.array([d[3] for d in docs], dtype=np.int64)),
        "start_time": (("run",), np.array([_start(d[0]) for d in docs], dtype="datetime64[ns]")),
        "stream_throughput": (("run", "stream"), stream_bits),
        "stream_direction": (("run", "stream"), np.repeat(np.where(reverse, "receive", "send")[:, None], S, axis=1)),
        "interval_start": (("run", "interval"), starts),
        "interval_end": (("run", "interval"), finish),
        "interval_bytes": (("run", "stream", "interval"), per["bytes"]),
        "interval_throughput": (("run", "stream", "interval"), per["bits"]),
        "interval_retransmits": (("run", "stream", "interval"), per["retr"]),
        "interval_cwnd": (("run", "stream", "interval"), per["cwnd"]),
        "interval_rtt": (("run", "stream", "interval"), per["rtt"]),
        "line": (("run", "stream", "interval"), line),
    }
    extras = {f"pscheduler_{k}": (("run",), v, "1", f"{'.'.join(STRINGS[k])} of the archive document")
              for k, v in _strings([d for d in docs]).items()}
    extras["pscheduler_mss"] = (("run",), run["mss"], "byte", "TCP maximum segment size (result.mss)")
    checks = []
    for r, (ids, rows) in enumerate(parsed):
        if rows and np.isfinite(run["retransmits"][r]) and np.isfinite(per["retr"][r]).any():
            checks.append(consistency_check(f"retransmits of document {r + 1}: result vs sum of the intervals",
                                            run["retransmits"][r], float(np.nansum(per["retr"][r])), rtol=0.0))
    summary = {"documents": R, "test": "throughput", "throughput": "the sender's (result.throughput)"}
    return build("throughput", variables, fmt=fmt, tool=TOOL, ledger=ledger, extras=extras,
                 tool_summary=summary, consistency=checks, attrs={"pscheduler_test": "throughput"})


# --- rtt and latency (kind rtt) ---------------------------------------------------------

#: Statistics of a stored histogram, in the histogram's units.
HIST_STATS = ("min", "mean", "max", "stddev", "median")


def _latency(docs, ledger, fmt):
    D = len(docs)
    probes, owner = [], []
    stats = {k: np.full(D, _NAN) for k in ("sent", "received", "lost", "loss", "duplicated", "reordered",
                                          "rtt_min", "rtt_mean", "rtt_max", "rtt_stddev", "max_clock_error",
                                          "delay_min", "delay_mean", "delay_max", "delay_stddev",
                                          "stored_median", "start_time", "bucket_width")}
    pct = np.full((D, len(PERCENTILES)), _NAN)
    checks = []
    for d, (source, _, _, line) in enumerate(docs):
        result = source.get("result") or {}
        packets = result.get("packets") if isinstance(result.get("packets"), dict) else {}
        for k in ("sent", "received", "lost", "loss", "duplicated", "reordered"):
            stats[k][d] = _num(packets.get(k))
        start = _start(source)
        stats["start_time"][d] = start.astype("datetime64[ns]").astype(np.int64) / 1e9 if not np.isnat(start) else _NAN
        trips = _json_field(packets.get("json"), line, "result.packets.json") or []
        trips = [t if isinstance(t, dict) else {} for t in trips] if isinstance(trips, list) else []
        probes.extend((t, line) for t in trips)
        owner.extend([d] * len(trips))
        rtt = result.get("rtt") if isinstance(result.get("rtt"), dict) else {}
        for k in ("min", "mean", "max", "stddev"):
            stats[f"rtt_{k}"][d] = _num(rtt.get(k)) * MS_PER_S                   # s -> ms
        stats["max_clock_error"][d] = _num(result.get("max_clock_error"))
        latency = result.get("latency") if isinstance(result.get("latency"), dict) else {}
        width = _num(_get(source, ("test", "spec", "bucket-width")))
        width = width if np.isfinite(width) and width > 0 else DEFAULT_BUCKET_WIDTH
        stats["bucket_width"][d] = width
        scale = width * MS_PER_S                               # histogram units -> ms
        values, counts = _histogram(latency.get("histogram"), scale)
        if len(counts):
            st = weighted_stats(values, counts)
            for k in ("min", "mean", "max", "stddev"):
                stats[f"delay_{k}"][d] = st[k]
            pct[d] = st["percentiles"]
            if np.isfinite(stats["received"][d]):
                checks.append(consistency_check(f"received of document {d + 1}: packets.received vs the "
                                                "histogram's count", stats["received"][d], float(counts.sum()),
                                                rtol=0.0))
        else:
            for k in ("min", "mean", "max", "stddev"):
                stats[f"delay_{k}"][d] = _num(latency.get(k)) * scale
            for j, q in enumerate(PERCENTILES):
                pct[d, j] = _num(latency.get("median" if q == 50 else f"p{q:g}")) * scale
        stats["stored_median"][d] = _num(latency.get("median")) * scale
        if len(counts) and np.isfinite(stats["stored_median"][d]):
            checks.append(consistency_check(f"median of document {d + 1}: latency.median vs the histogram's "
                                            "(ms)", stats["stored_median"][d], float(pct[d, PERCENTILES.index(50.0)]),
                                            rtol=0.0, atol=scale / 2 + 1e-12,
                                            note="a median between two bins may be their midpoint"))
    n = len(probes)
    base = _rtt_base(n)
    trips = [t for t, _ in probes]
    base["rtt"][:] = [_duration_ms(t.get("rtt")) for t in trips]
    base["seq"][:] = _whole(np.array([_num(t.get("seq")) for t in trips], dtype=float))
    base["size"][:] = [_num(t.get("length")) for t in trips]
    base["ttl"][:] = _whole(np.array([_num(t.get("ttl")) for t in trips], dtype=float))
    base["line"][:] = [at for _, at in probes]
    reply = ~np.isnan(base["rtt"])
    error = np.array([bool(t.get("error")) for t in trips], dtype=bool)
    base["status"][reply] = "reply"
    base["status"][error & ~reply] = "unreachable"
    owner = np.array(owner, dtype=np.int64)
    for d in range(D):
        mine = owner == d
        if str(_get(docs[d][0], ("test", "type"))) != "rtt" or not (mine.any() or stats["received"][d]):
            continue
        got = base["rtt"][mine & reply]
        for key, what, data in (("sent", "packets.sent vs round trips", float(mine.sum())),
                                ("received", "packets.received vs replies", float((mine & reply).sum()))):
            if np.isfinite(stats[key][d]):
                checks.append(consistency_check(f"{what} of document {d + 1}", stats[key][d], data, rtol=0.0))
        for key, fn in (("min", np.min), ("mean", np.mean), ("max", np.max)):
            if np.isfinite(stats[f"rtt_{key}"][d]) and got.size:
                checks.append(consistency_check(f"rtt.{key} of document {d + 1} vs the replies' (ms)",
                                                stats[f"rtt_{key}"][d], float(fn(got)), rtol=0.01, atol=0.001))
    variables = {k: (("probe",), v) for k, v in base.items()}
    P = ("pscheduler_doc",)
    units = {"sent": "count", "received": "count", "lost": "count", "loss": "1", "duplicated": "count",
             "reordered": "count", "max_clock_error": "ms", "start_time": "s", "bucket_width": "s"}
    extras = {"pscheduler_probe_doc": (("probe",), owner, "1", "document (pscheduler_doc) of the round trip")}
    for k, v in stats.items():
        if k == "stored_median":
            continue
        what = (f"packets.{k}" if units.get(k) in ("count", "1") else
                f"{k.replace('_', ' ')} (rtt: result.rtt, s -> ms)" if k.startswith("rtt_") else
                f"one-way delay {k[6:]} of the latency histogram (weighted)" if k.startswith("delay_") else
                "pscheduler.start_time (Unix s)" if k == "start_time" else
                "test.spec.bucket-width (histogram unit)" if k == "bucket_width" else "max_clock_error")
        extras[f"pscheduler_{k}"] = (P, v, units.get(k, "ms"), what)
    extras["pscheduler_delay_percentile"] = (P + ("pscheduler_percentile",), pct, "ms",
                                            "nearest-rank percentile of the latency histogram (ms)")
    for k, v in _strings(docs).items():
        extras[f"pscheduler_{k}"] = (P, v, "1", f"{'.'.join(STRINGS[k])} of the archive document")
    coords = {"pscheduler_percentile": (("pscheduler_percentile",), np.array(PERCENTILES), "percent", "percentile")}
    summary = {"documents": D, "test": "/".join(sorted({str(_get(s, ("test", "type"))) for s, *_ in docs}))}
    if np.isfinite(stats["sent"]).any():          # as thruput inspect and the monitor read an rtt run
        summary.update(transmitted=float(np.nansum(stats["sent"])), received=float(np.nansum(stats["received"])))
    if D == 1:
        for k, name in (("min", "rtt_min"), ("mean", "rtt_avg"), ("max", "rtt_max"), ("stddev", "rtt_stddev")):
            if np.isfinite(stats[f"rtt_{k}"][0]):
                summary[name] = float(stats[f"rtt_{k}"][0])
    return build("rtt", variables, fmt=fmt, tool=TOOL, ledger=ledger, extras=extras, coords=coords,
                 tool_summary=summary, consistency=checks, attrs={"pscheduler_test": summary["test"]})


def split(raw):
    """The documents of an archive file of several (a dump, a ``_search`` response), each
    as JSON bytes readable on its own: a dump's lines as they are, a response's hits
    re-serialised; None for a file of one document, or no archive file (never raises).

    ``thruput campaign import --kind monitor`` keeps one document per test this way."""
    head = raw[:4096].decode("utf-8", errors="replace")
    if not _OBJECT.match(head) or not _PSCHEDULER.search(head):
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        docs, _, lost = documents(text)
    except ParseError:
        return None
    if len(docs) < 2 and not lost:
        return None
    try:
        whole = DECODER.decode(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("hits"), dict):
        return [json.dumps(h, separators=(",", ":")).encode() + b"\n" for h in whole["hits"]["hits"]]
    lines = raw.split(b"\n")
    # every line of a dump, the cut-off last one too (the import keeps it as a failed test)
    return [lines[i] + b"\n" for i in range(len(lines)) if lines[i].strip()]
