"""perfSONAR pScheduler results (JSON), shared by the ``pscheduler_throughput`` (throughput
tests) and ``pscheduler_latency`` (latency and rtt tests) formats.

What pScheduler writes for a run (``pscheduler result --format json``, the REST API's
``result-merged``, or the object an archiver receives) is read in any of these wrappings:
the bare result object; ``{"result": {...}}`` (with an optional ``"spec"``); a run
(``{"result-merged": {...}}``); or an archiver's input (``{"task": {"test": {"type",
"spec"}}, "run": {"start-time"}, "result": {...}}``), such as the body perfSONAR 5's
``http`` archiver posts (``id``, ``schedule``, ``test``, ``tool``, ``run``, ``task``,
``participants``, ``result``, ``reference``). The test type is the task's where
given, else the result's shape: ``intervals`` + ``summary`` (throughput), ``histogram-latency``
or ``packets-sent`` (latency), ``roundtrips`` (rtt).

The schemas are pScheduler's own (``pscheduler-test-*/*/validate.py`` and
``result-jsonschema.json``; the iperf3 tool's ``iperf3_parser.py`` for how iperf3's
``-J`` keys are renamed): see ``docs/formats.md`` for what was verified against what.

throughput (format ``pscheduler_throughput``, kind ``throughput``: one run)
    ``intervals[i].streams[j]`` is interval i of stream j (streams ordered by
    ``stream-id``): ``throughput-bits`` (bit/s), ``throughput-bytes`` (the interval's bytes:
    iperf3's ``bytes``, despite the schema's "bytes/second"), ``retransmits``,
    ``tcp-window-size`` (iperf3's ``snd_cwnd``, bytes), ``rtt`` (iperf3's, us -> ms),
    ``omitted``; UDP ``sent``, ``lost`` (packets) and ``jitter`` (ms).
    ``summary.summary`` is the tool's own total (iperf3's ``end.sum_sent`` for TCP: the
    sender's, so ``throughput_sender``), ``summary.streams`` each stream's; ``duration``
    is its ``end - start``. Where the tool adds ``receiver-throughput-bits`` (perfSONAR 5's
    iperf3 tool does) that is ``throughput_receiver`` and ``throughput``. Checked: the streams' bytes against the total, the
    non-omitted intervals' bytes against it (1 %), and their retransmits exactly.
latency (format ``pscheduler_latency``, kind ``rtt``)
    Probes are ``raw-packets`` where the test asked for them (``output-raw``): ``seq``,
    ``ttl``, ``timestamp`` (sender clock, Unix s) and the one-way delay
    ``pscheduler_owd`` (ms, receiver minus sender NTP timestamp; NaN when lost); ``rtt``
    is NaN (one-way). ``histogram-latency`` is kept as a histogram:
    ``pscheduler_hist_delay`` (bin, ms: the key times ``bucket-width`` -- 1 ms unless the
    spec says otherwise) and ``pscheduler_hist_count``, with weighted statistics computed
    from it (``pscheduler_delay_min``/``_mean``/``_max``/``_stddev`` and
    ``pscheduler_delay_percentile`` at 25/50/75/95: the nearest-rank percentile, the
    smallest bin whose cumulative count reaches p % of all). ``histogram-ttl`` likewise.
    Packets sent, received, lost, duplicated and reordered, and ``max-clock-error`` (ms),
    are run extras. Checked: sent - received = lost; the histogram's count = received;
    raw packets against sent.
rtt (format ``pscheduler_latency``, kind ``rtt``)
    ``roundtrips`` are the probes: ``seq``, ``rtt`` (ISO 8601 duration -> ms), ``ttl``,
    ``size`` (``length``), status ``reply``, ``unreachable`` (an ICMP ``error``) or ``lost``
    (an empty round trip). Checked: ``sent``/``received``/``lost``/``loss`` and
    ``min``/``mean``/``max`` against the probes; not when nothing came back
    (``received: 0``), for which pScheduler's ping tool writes no round trip at all
    (``roundtrips: []``, its counts from ping's own summary).

A result cut off mid-way keeps the complete elements of its interval, packet or round-trip
list (``truncation`` says so; the summary is then lost); anything else raises
:class:`~thruput.errors.ParseError` naming the line. ``succeeded: false`` results raise
one with pScheduler's ``error``.
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..contract import build, consistency_check
from ..errors import ParseError
from ._json import read_document, salvage
from ._time import from_iso

__all__ = ["sniff", "parse", "weighted_stats"]

TOOL = "pscheduler"

_SNIFF = re.compile(r'\A\s*\{')
#: Keys only pScheduler results have (hyphenated, unlike iperf3's, flent's or irtt's), by
#: the format that reads them: enough alone.
STRONG_KEYS = {"pscheduler_throughput": ('"throughput-bits"', '"throughput-bytes"'),
               "pscheduler_latency": ('"histogram-latency"', '"packets-sent"', '"packets-duplicated"')}
#: Keys that need ``"succeeded"`` beside them: the rtt test's, and the test type of a run
#: wrapped by the API or an archiver.
WEAK_KEYS = {"pscheduler_throughput": ('"type": "throughput"', '"type":"throughput"'),
             "pscheduler_latency": ('"roundtrips"', '"type": "latency"', '"type": "rtt"',
                                    '"type":"latency"', '"type":"rtt"')}
#: The body pScheduler's ``http`` archiver posts (schema 3: ``id``, ``schedule``, ``test``,
#: ``tool``, ``run``, ...), written compactly: its first members (the run id, the
#: schedule, the test) fill the head, and the result may lie past it behind kilobytes of
#: ``limit-diags`` and iperf3's ``diags``; the test's type is then the first ``"type"``.
_ARCHIVER_BODY = re.compile(r'\A\s*\{\s*"id"\s*:\s*"[^"]{0,100}"\s*,\s*"schedule"\s*:')
_FIRST_TYPE = re.compile(r'"type"\s*:\s*"([a-z-]{1,40})"')
#: What perfSONAR's Logstash pipeline stores (``pscheduler_archive_*``) has a
#: ``pscheduler`` object of run metadata, which no result pScheduler writes has.
STORED = re.compile(r'"pscheduler"\s*:\s*\{\s*"')
#: A throughput result written with sorted keys starts with the tool's raw output
#: (``diag``), which may fill the head: no other format starts so.
_DIAG_FIRST = re.compile(r'\A\s*\{\s*"diag"\s*:')
#: The test types each format reads.
TESTS = {"pscheduler_throughput": ("throughput",), "pscheduler_latency": ("latency", "rtt")}
#: The result list of each test type, salvaged element by element from a cut-off file.
LISTS = {"throughput": "intervals", "latency": "raw-packets", "rtt": "roundtrips"}
#: pScheduler's default histogram bin (s) of the latency test: keys are delays / bucket-width.
DEFAULT_BUCKET_WIDTH = 0.001
#: Percentiles computed from a latency histogram (pScheduler's result-format prints these).
PERCENTILES = (25.0, 50.0, 75.0, 95.0)
#: iperf3's rtt, which pScheduler passes on, is in microseconds.
US_PER_MS = 1e3
#: NTP (RFC 1305) 64-bit timestamps: seconds since 1900 in the high 32 bits.
NTP_FRACTION = 2.0 ** 32
NTP_TO_UNIX = 2208988800
#: ISO 8601 durations as pScheduler writes them (``PT0.000012S``).
_DURATION = re.compile(r"P(?:(?P<d>[0-9.]+)D)?(?:T(?:(?P<h>[0-9.]+)H)?(?:(?P<m>[0-9.]+)M)?(?:(?P<s>[0-9.]+)S)?)?")
_DURATION_S = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}

#: Integers exact: raw packets' NTP timestamps have 20 digits, and their difference (the
#: one-way delay) needs all of them; an integer of more than :data:`EXACT_DIGITS` digits
#: (no timestamp has them: a damaged file) is a float, ``inf`` past about 308 digits, which
#: the contract refuses naming the line (Python refuses to convert over 4,300 digits).
EXACT_DIGITS = 40
DECODER = json.JSONDecoder(parse_int=lambda t: int(t) if len(t.lstrip("-")) <= EXACT_DIGITS else float(t))

_NAN = np.nan


def sniff(head, fmt):
    """True if ``head`` (the first 4 KB) is a pScheduler result that format ``fmt`` reads."""
    if not _SNIFF.match(head) or STORED.search(head):
        return False
    if fmt == "pscheduler_throughput" and _DIAG_FIRST.match(head):
        return True
    if _ARCHIVER_BODY.match(head):
        m = _FIRST_TYPE.search(head)
        return bool(m) and m.group(1) in TESTS[fmt]
    return any(k in head for k in STRONG_KEYS[fmt]) or \
        ('"succeeded"' in head and any(k in head for k in WEAK_KEYS[fmt]))


def parse(text, fmt):
    """Parse the text of a pScheduler result into a throughput or rtt Dataset.

    Raises
    ------
    ParseError
        Empty input, text that is not JSON (naming the line), JSON that is not a
        pScheduler result of a known test, a failed run, or a file cut off before any
        complete element.
    """
    doc, end, lost, ledger = read_document(text, _salvage, DECODER)
    if not isinstance(doc, dict):
        raise ParseError("not a pScheduler result (no top-level object)", line=1)
    result, spec, test, start = _unwrap(doc)
    if test not in TESTS[fmt]:
        raise ParseError(f"a pScheduler {test or 'unknown'} result, not one of {', '.join(TESTS[fmt])} "
                         f"(read it as {[f for f, t in TESTS.items() if test in t] or 'no format'})", line=1)
    if result.get("succeeded") is False:
        raise ParseError(f"pScheduler run failed: {result.get('error') or 'no error given'}", line=1)
    if lost:
        ledger.truncated(lost)
    try:
        if test == "throughput":
            ds = _throughput(result, spec, start, ledger, bool(lost), fmt)
        elif test == "latency":
            ds = _latency(result, spec, ledger, bool(lost), fmt)
        else:
            ds = _rtt(result, ledger, bool(lost), fmt)
        return _ends(ds, spec, start)
    except ParseError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        raise ParseError(f"unexpected pScheduler {test} result ({type(exc).__name__}: {exc})", line=1) from None


def _ends(ds, spec, start):
    """The test's ends as its spec names them (``attrs["pscheduler_source"]``, ``_dest``:
    "" where not given, e.g. an rtt test run from the host itself) and, for a latency or
    rtt run wrapped with its run, when it started (``pscheduler_start_time``, Unix s)."""
    for key in ("source", "dest"):
        value = spec.get(key)
        ds.attrs[f"pscheduler_{key}"] = value if isinstance(value, str) else ""
    if ds.attrs["kind"] == "rtt" and start:
        when = from_iso(start).astype("datetime64[ns]").astype(np.int64) / 1e9
        ds["pscheduler_start_time"] = ((), when, {"units": "s", "long_name": "run start-time (Unix s)"})
    return ds


def _unwrap(doc):
    """(result, spec, test type, start time) of any of the wrappings."""
    task = doc.get("task") if isinstance(doc.get("task"), dict) else {}
    test = task.get("test") if isinstance(task.get("test"), dict) else \
        doc.get("test") if isinstance(doc.get("test"), dict) else {}
    spec = doc.get("spec") or test.get("spec") or {}
    result = doc.get("result-merged") or doc.get("result") or doc
    if not isinstance(result, dict):
        raise ParseError("not a pScheduler result (its result is not an object)", line=1)
    run = doc.get("run") if isinstance(doc.get("run"), dict) else doc
    kind = test.get("type")
    if kind not in LISTS:
        kind = ("throughput" if "intervals" in result or "summary" in result else
                "latency" if "histogram-latency" in result or "packets-sent" in result else
                "rtt" if "roundtrips" in result else kind)
    return result, spec if isinstance(spec, dict) else {}, kind, run.get("start-time")


#: Where a cut-off result's list may be: the top level or inside ``result``/``result-merged``.
_DESCEND = frozenset({("result",), ("result-merged",),
                      *((name,) for name in LISTS.values()),
                      *((r, name) for r in ("result", "result-merged") for name in LISTS.values())})


def _salvage(text):
    """Every complete member of a cut-off result, and the complete elements of its list
    (intervals, raw-packets or roundtrips; :func:`thruput.formats._json.salvage`): (doc, end
    offset, what was lost)."""
    found = salvage(text, descend=_DESCEND, decoder=DECODER)
    if found is None:
        raise ParseError("not a pScheduler result (no top-level object)", line=1)
    doc = found.doc
    holder = next((doc[r] for r in ("result", "result-merged") if isinstance(doc.get(r), dict)), doc)
    name = next((v for v in LISTS.values() if isinstance(holder.get(v), list)), None)
    if name is None or not holder[name]:
        raise ParseError("pScheduler result cut off before any complete interval, packet or round trip",
                         line=text.count("\n") + 1)
    kind = next(k for k, v in LISTS.items() if v == name)
    doc.setdefault("task", {"test": {"type": kind}})
    at = " ".join(f'"{k}"' if isinstance(k, str) else f"element {k + 1}" for k in found.where)
    return doc, found.end, (f"the file is cut off in {at or 'the first member'}; kept every complete "
                            f"member ({len(holder[name])} complete in \"{name}\")")


def _num(value):
    return _NAN if value is None else float(value)


def _field(rows, key):
    return np.array([_num(r.get(key)) if isinstance(r, dict) else _NAN for r in rows], dtype=float)


# --- throughput --------------------------------------------------------------------------

def _throughput(result, spec, start, ledger, cut, fmt):
    intervals = [iv for iv in (result.get("intervals") or []) if isinstance(iv, dict)]
    summary = (result.get("summary") or {}) if isinstance(result.get("summary"), dict) else {}
    total = summary.get("summary") if isinstance(summary.get("summary"), dict) else {}
    ends = [s for s in (summary.get("streams") or []) if isinstance(s, dict)]
    ids = []
    for row in ends + [s for iv in intervals for s in (iv.get("streams") or []) if isinstance(s, dict)]:
        if row.get("stream-id") not in ids:
            ids.append(row.get("stream-id"))
    S, n = len(ids), len(intervals)
    per = {k: np.full((1, S, n), _NAN) for k in ("bits", "bytes", "retr", "cwnd", "rtt", "sent", "lost", "jitter")}
    omitted = np.zeros((1, n), dtype=bool)
    keys = {"bits": "throughput-bits", "bytes": "throughput-bytes", "retr": "retransmits", "cwnd": "tcp-window-size",
            "rtt": "rtt", "sent": "sent", "lost": "lost", "jitter": "jitter"}
    for i, iv in enumerate(intervals):
        for row in iv.get("streams") or []:
            if not isinstance(row, dict):
                continue
            s = ids.index(row.get("stream-id"))
            for k, key in keys.items():
                per[k][0, s, i] = _num(row.get(key))
        omitted[0, i] = bool((iv.get("summary") or {}).get("omitted"))
    per["rtt"] /= US_PER_MS
    starts = _field([iv.get("summary") or {} for iv in intervals], "start")
    finish = _field([iv.get("summary") or {} for iv in intervals], "end")
    stream_bits = np.array([_NAN] * S)
    stream_bytes = np.array([_NAN] * S)
    for row in ends:
        s = ids.index(row.get("stream-id"))
        stream_bits[s], stream_bytes[s] = _num(row.get("throughput-bits")), _num(row.get("throughput-bytes"))
    udp = bool(spec.get("udp")) or bool(np.isfinite(per["lost"]).any()) \
        or total.get("lost") is not None
    sent, lost = _num(total.get("sent")), _num(total.get("lost"))
    reverse = bool(spec.get("reverse"))
    throughput = _num(total.get("throughput-bits"))
    # pScheduler's iperf3 tool adds the receiver's rate beside the sender's (summary.summary)
    receiver = _num(total.get("receiver-throughput-bits"))
    variables = {
        "throughput": (("run",), [throughput if np.isnan(receiver) else receiver]),
        "throughput_sender": (("run",), [_NAN if udp else throughput]),
        "throughput_receiver": (("run",), [receiver]),
        "bytes": (("run",), [_num(total.get("throughput-bytes"))]),
        "duration": (("run",), [_num(total.get("end")) - _num(total.get("start"))
                                if total.get("end") is not None else _NAN]),
        "streams": (("run",), [S]),
        "protocol": (("run",), ["UDP" if udp else "TCP"]),
        "window_requested": (("run",), [_num(spec.get("window-size"))]),
        "window_actual": (("run",), [_NAN]),
        "loss_fraction": (("run",), [lost / sent if udp and sent > 0 else _NAN]),
        "retransmits": (("run",), [_NAN if udp else _num(total.get("retransmits"))]),
        "jitter": (("run",), [_num(total.get("jitter"))]),
        "packets": (("run",), [sent]),
        "packets_lost": (("run",), [lost]),
        "run_line": (("run",), [1]),
        "start_time": (("run",), np.array([from_iso(start) if start else np.datetime64("NaT", "ns")],
                                          dtype="datetime64[ns]")),
        "stream_throughput": (("run", "stream"), stream_bits[None]),
        "stream_bytes": (("run", "stream"), stream_bytes[None]),
        "stream_direction": (("run", "stream"), np.array([["receive" if reverse else "send"] * S], dtype="<U7")
                             .reshape(1, S)),
        "interval_start": (("run", "interval"), starts[None]),
        "interval_end": (("run", "interval"), finish[None]),
        "interval_bytes": (("run", "stream", "interval"), per["bytes"]),
        "interval_throughput": (("run", "stream", "interval"), per["bits"]),
        "interval_retransmits": (("run", "stream", "interval"), per["retr"]),
        "interval_cwnd": (("run", "stream", "interval"), per["cwnd"]),
        "interval_rtt": (("run", "stream", "interval"), per["rtt"]),
        "line": (("run", "stream", "interval"), np.ones((1, S, n), dtype=np.int64)),
    }
    extras = {
        "pscheduler_stream_id": (("run", "stream"), np.array([[str(i) for i in ids]], dtype=str).reshape(1, S),
                                 "1", "stream-id (iperf3's socket)"),
        "pscheduler_interval_omitted": (("run", "interval"), omitted, "1",
                                        "interval in the omitted warm-up (-O)"),
        "pscheduler_interval_sent": (("run", "stream", "interval"), per["sent"], "count", "UDP packets sent"),
        "pscheduler_interval_lost": (("run", "stream", "interval"), per["lost"], "count", "UDP packets lost"),
        "pscheduler_interval_jitter": (("run", "stream", "interval"), per["jitter"], "ms", "UDP jitter"),
        "pscheduler_test": (("run",), ["throughput"], "1", "pScheduler test type"),
    }
    checks = []
    if not cut and total.get("throughput-bytes") is not None:
        tool = float(total["throughput-bytes"])
        if ends:
            checks.append(consistency_check("bytes: summary vs sum of the streams' summaries", tool,
                                            float(np.nansum(stream_bytes)), rtol=1e-9))
        if n:
            keep = ~omitted[0]
            checks.append(consistency_check("bytes: summary vs sum of the non-omitted intervals", tool,
                                            float(np.nansum(per["bytes"][0][:, keep])), rtol=0.01,
                                            note="iperf3 sums its intervals to the end summary"))
            if not udp and total.get("retransmits") is not None and np.isfinite(per["retr"]).any():
                checks.append(consistency_check("retransmits: summary vs sum of the non-omitted intervals",
                                                float(total["retransmits"]),
                                                float(np.nansum(per["retr"][0][:, keep])), rtol=0.0))
    return build("throughput", variables, fmt=fmt, tool=TOOL, ledger=ledger, extras=extras,
                 tool_summary={"summary": total, "streams": ends, "test": "throughput"}, consistency=checks,
                 attrs={"pscheduler_test": "throughput"})


# --- latency and rtt (kind rtt) ----------------------------------------------------------

def _histogram(hist, scale):
    """A pScheduler histogram ({key: count}) as sorted (values * scale, counts)."""
    if not isinstance(hist, dict) or not hist:
        return np.zeros(0), np.zeros(0)
    values = np.array([float(k) for k in hist], dtype=float) * scale
    counts = np.array([float(v) for v in hist.values()], dtype=float)
    order = np.argsort(values, kind="stable")
    return values[order], counts[order]


def weighted_stats(values, counts, percentiles=PERCENTILES):
    """Statistics of a histogram (bin values, counts): min, mean, max, standard deviation
    and nearest-rank percentiles (the smallest bin whose cumulative count reaches p % of
    the total). All NaN for an empty histogram, or a damaged one (a bin or count that is
    no finite number, a negative count)."""
    total = counts.sum() if len(counts) else 0.0
    # (a bin or count that is no finite number, or counts past float64: a damaged file)
    if not total > 0 or not np.isfinite(total) or not np.isfinite(values).all() or (counts < 0).any():
        return {"min": _NAN, "mean": _NAN, "max": _NAN, "stddev": _NAN,
                "percentiles": np.full(len(percentiles), _NAN)}
    seen = values[counts > 0]
    with np.errstate(over="ignore", invalid="ignore"):     # (huge bins: inf, then NaN)
        mean = float((values * counts).sum() / total)
        var = float((counts * (values - mean) ** 2).sum() / total)
        cumulative = np.cumsum(counts)
        ranks = np.searchsorted(cumulative, np.asarray(percentiles) / 100.0 * total - 1e-9 * total)
    return {"min": float(seen.min()), "mean": mean, "max": float(seen.max()), "stddev": var ** 0.5,
            "percentiles": values[np.minimum(ranks, len(values) - 1)]}


#: The largest whole number a float64 holds exactly: a ``seq``/``ttl`` beyond is damage.
_WHOLE_MAX = 2.0 ** 53


def _whole(values):
    """A numeric field (float64, NaN where missing) as int64: -1 where missing, not a whole
    number, or beyond :data:`_WHOLE_MAX` (a damaged file: never a cast of garbage)."""
    ok = np.isfinite(values) & (np.abs(values) <= _WHOLE_MAX)
    ok[ok] &= values[ok] == np.floor(values[ok])
    return np.where(ok, values, -1.0).astype(np.int64)


def _rtt_base(n):
    return {"seq": np.full(n, -1, dtype=np.int64), "rtt": np.full(n, _NAN), "status": np.full(n, "lost", dtype="<U11"),
            "timestamp": np.full(n, _NAN), "size": np.full(n, _NAN), "ttl": np.full(n, -1, dtype=np.int64),
            "line": np.ones(n, dtype=np.int64)}


def _latency(result, spec, ledger, cut, fmt):
    bucket = float(spec.get("bucket-width") or DEFAULT_BUCKET_WIDTH)
    raw = [p for p in (result.get("raw-packets") or []) if isinstance(p, dict)]
    n = len(raw)
    base = _rtt_base(n)
    src, dst = _field(raw, "src-ts"), _field(raw, "dst-ts")
    arrived = np.isfinite(dst) & (dst > 0) & np.isfinite(src)
    # the difference of the exact integers, then to float: a float64 of a 64-bit NTP
    # timestamp keeps only about 0.5 us
    owd = np.array([(int(p["dst-ts"]) - int(p["src-ts"])) / NTP_FRACTION * 1e3 if ok else _NAN
                    for p, ok in zip(raw, arrived)], dtype=float)
    base["seq"][:] = _whole(_field(raw, "seq-num"))
    base["status"][arrived] = "reply"
    base["timestamp"][:] = src / NTP_FRACTION - NTP_TO_UNIX
    base["ttl"][:] = _whole(_field(raw, "ip-ttl"))
    delay, count = _histogram(result.get("histogram-latency"), bucket * 1e3)   # key * width s -> ms
    ttl_value, ttl_count = _histogram(result.get("histogram-ttl"), 1.0)
    st = weighted_stats(delay, count)
    counters = {k: _num(result.get(k)) for k in ("packets-sent", "packets-received", "packets-lost",
                                                 "packets-duplicated", "packets-reordered")}
    variables = {k: (("probe",), v) for k, v in base.items()}
    extras = {
        "pscheduler_owd": (("probe",), owd, "ms", "one-way delay (receiver minus sender timestamp)"),
        "pscheduler_hist_delay": (("pscheduler_bin",), delay, "ms", "one-way delay of the histogram bin"),
        "pscheduler_hist_count": (("pscheduler_bin",), count, "count", "packets in the bin"),
        "pscheduler_ttl_value": (("pscheduler_ttl_bin",), ttl_value, "1", "IP TTL at the receiver"),
        "pscheduler_ttl_count": (("pscheduler_ttl_bin",), ttl_count, "count", "packets with that TTL"),
        "pscheduler_delay_percentile": (("pscheduler_percentile",), st["percentiles"], "ms",
                                        "nearest-rank percentile of the delay histogram"),
        "pscheduler_max_clock_error": ((), _num(result.get("max-clock-error")), "ms",
                                       "maximum clock error estimate of the hosts"),
    }
    for k, v in (("min", "minimum"), ("mean", "mean"), ("max", "maximum"), ("stddev", "standard deviation")):
        extras[f"pscheduler_delay_{k}"] = ((), st[k], "ms", f"{v} one-way delay, from the histogram (weighted)")
    for k, v in counters.items():
        extras["pscheduler_" + k.replace("-", "_")] = ((), v, "count", f"{k.replace('-', ' ')} (pScheduler)")
    coords = {"pscheduler_percentile": (("pscheduler_percentile",), np.array(PERCENTILES), "percent",
                                        "percentile")}
    checks = []
    if not cut:
        sent, received = counters["packets-sent"], counters["packets-received"]
        if not np.isnan(counters["packets-lost"]):
            checks.append(consistency_check("lost: packets-lost vs packets-sent - packets-received",
                                            counters["packets-lost"], sent - received, rtol=0.0))
        if len(count):
            checks.append(consistency_check("received: packets-received vs the delay histogram's count",
                                            received, float(count.sum()), rtol=0.0))
        if n:
            checks.append(consistency_check("sent: packets-sent vs raw packets", sent, float(n), rtol=0.0))
    summary = {k: result.get(k) for k in (*counters, "max-clock-error") if k in result}
    summary["bucket-width"] = bucket
    if "packets-sent" in result:   # as thruput inspect shows the rtt kind's counts
        summary.update(transmitted=result["packets-sent"], received=result.get("packets-received"))
    return build("rtt", variables, fmt=fmt, tool=TOOL, ledger=ledger, extras=extras, coords=coords,
                 tool_summary=summary, consistency=checks, attrs={"pscheduler_test": "latency"})


def _duration_ms(text):
    """An ISO 8601 duration (``PT0.000012S``) in ms; NaN if missing or unreadable."""
    m = _DURATION.fullmatch(str(text)) if text is not None else None
    if not m or not any(m.groupdict().values()):
        return _NAN
    try:
        return sum(float(v) * _DURATION_S[k] for k, v in m.groupdict().items() if v) * 1e3
    except ValueError:
        return _NAN


def _rtt(result, ledger, cut, fmt):
    trips = [t if isinstance(t, dict) else {} for t in (result.get("roundtrips") or [])]
    n = len(trips)
    base = _rtt_base(n)
    base["rtt"][:] = [_duration_ms(t.get("rtt")) for t in trips]
    base["seq"][:] = _whole(_field(trips, "seq"))
    base["size"][:] = _field(trips, "length")
    base["ttl"][:] = _whole(_field(trips, "ttl"))
    reply = ~np.isnan(base["rtt"])
    error = np.array([bool(t.get("error")) for t in trips], dtype=bool)
    base["status"][reply] = "reply"
    base["status"][error & ~reply] = "unreachable"
    variables = {k: (("probe",), v) for k, v in base.items()}
    extras = {
        "pscheduler_ip": (("probe",), np.array([str(t.get("ip") or "") for t in trips], dtype=str), "1",
                          "address that answered"),
        "pscheduler_error": (("probe",), np.array([str(t.get("error") or "") for t in trips], dtype=str), "1",
                             "ICMP error of the probe"),
    }
    summary = {k: result.get(k) for k in ("sent", "received", "lost", "reorders", "duplicates", "loss",
                                          "min", "max", "mean", "stddev") if k in result}
    if "sent" in result:   # as thruput inspect shows the rtt kind's counts and ping's statistics
        summary["transmitted"] = result["sent"]
    summary.update({f"rtt_{k if k != 'mean' else 'avg'}": _duration_ms(result[k])
                    for k in ("min", "max", "mean", "stddev") if result.get(k) is not None})
    checks = []
    if not cut and not (n == 0 and result.get("received") == 0):
        got = base["rtt"][reply]
        pairs = (("sent", "sent: vs round trips", float(n), 0.0),
                 ("received", "received: vs replies", float(reply.sum()), 0.0),
                 ("lost", "lost: vs round trips without a reply", float(n - reply.sum()), 0.0),
                 ("loss", "loss: vs lost round trips / round trips", (n - reply.sum()) / n if n else _NAN, 1e-6))
        for key, what, data, rtol in pairs:
            if result.get(key) is not None:
                checks.append(consistency_check(what, float(result[key]), data, rtol=rtol))
        for key, fn in (("min", np.min), ("mean", np.mean), ("max", np.max)):
            if result.get(key) is not None and got.size:
                checks.append(consistency_check(f"{key}: vs the replies' rtt (ms)", _duration_ms(result[key]),
                                                float(fn(got)), rtol=0.01, atol=0.001))
    return build("rtt", variables, fmt=fmt, tool=TOOL, ledger=ledger, extras=extras,
                 tool_summary=summary, consistency=checks, attrs={"pscheduler_test": "rtt"})
