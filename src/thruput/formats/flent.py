"""flent data files (``*.flent.gz``: gzip-compressed JSON, data format version 3 and later).

A flent file is one test (``rrul``, ``tcp_nup``, ``ping``, ...): every measured series
resampled by flent onto one time grid (``x_values``, spaced ``metadata.STEP_SIZE``
seconds from ``metadata.T0``) in ``results``, the unresampled measurements in
``raw_values``, and per-series metadata (runner, command, units, ``MEAN_VALUE``) in
``metadata.SERIES_META``. :func:`thruput.read` decompresses the gzip layer.

How the series map onto the ``throughput`` kind (one run; dims ``run``, ``stream``,
``interval``)
---------------------------------------------------------------------------------------
Streams
    Every series in ``Mbits/s`` that a command produced (its ``SERIES_META`` has a
    ``COMMAND``: netperf's ``TCP upload BE``, ``TCP upload::7``, iperf's ``UDP upload``)
    is one stream, in ``SERIES_META.IDX`` order; series without a command (``TCP upload
    sum``/``avg``, ``TCP totals``) are flent's own aggregates. Files without
    ``SERIES_META`` fall back to the names: ``... sum``, ``... avg`` and ``... totals`` are
    aggregates. ``flent_stream_name`` keeps each stream's series name.
``stream_direction``
    ``"send"`` for uploads (name ``upload``, netperf ``TCP_STREAM``), ``"receive"`` for
    downloads (``download``, ``TCP_MAERTS``), seen from the host that ran flent.
Intervals
    Interval j is grid point j: ``interval_start = x_values[j]``, ``interval_end =
    x_values[j] + STEP_SIZE``. ``interval_throughput`` is the stream's resampled rate
    (Mbits/s as stored, here bit/s); flent keeps no byte counts, so ``interval_bytes`` is
    NaN. ``interval_rtt`` and ``interval_rttvar`` are the stream's ``::tcp_rtt`` and
    ``::tcp_rtt_var`` sub-series (ms, from ``ss``); its ``::tcp_cwnd`` is in segments, so
    it is ``flent_interval_cwnd`` (count) and ``interval_cwnd`` (byte) stays NaN.
Run totals
    The *forward* direction is upload where the test has upload streams, else download.
    ``stream_throughput`` is each stream's ``MEAN_VALUE`` (the runner's own whole-test
    figure, netperf's final result); ``throughput`` is their sum over the forward streams,
    which is what flent stores as ``MEAN_VALUE`` of ``TCP upload sum`` (kept in
    ``tool_summary`` to check). Uploads count as ``throughput_sender`` (netperf measures
    TCP_STREAM at the sender), downloads as ``throughput_receiver``. The other direction's
    sum is ``flent_throughput_reverse``. ``duration`` is ``metadata.LENGTH``; ``bytes``,
    windows and ``loss_fraction`` are NaN (not recorded).
Everything else, as ``flent_*`` extras on the same grid
    ``flent_ping`` (run, flent_ping_series, interval): every series in ms (ping under
    load: ``Ping (ms) ICMP``, netperf UDP_RR, irtt; flent's ``avg``), with the raw probes
    as ``flent_ping_raw_rtt`` / ``flent_ping_raw_time`` (run, flent_ping_series,
    flent_probe; time in s since ``T0``; lost probes are simply absent, as flent stores
    them); ``flent_aggregate`` (bit/s) for flent's sums and averages in Mbits/s; and
    ``flent_series`` (unitless, flent's unit string in ``flent_series_units``) for all
    other series (CPU, qdisc statistics, ...).

``line`` is the source line of each stream's value in ``results`` where the file is laid
out as flent writes it (one value per line), else -1. ``tool_summary`` holds each series'
``MEAN_VALUE``/``MIN_VALUE``/``MAX_VALUE`` and the test name, length and step.

A file cut off mid-way keeps every complete top-level member and every complete series of
``results``; ``x_values`` lost after complete ``results`` are rebuilt from ``STEP_SIZE``
(said so in ``truncation``); without ``results`` nothing is kept and a
:class:`~thruput.errors.ParseError` names the line where the file ends.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime

import numpy as np

from ..contract import Ledger, build, split_lines
from ..errors import ParseError
from ._json import DECODER as _DECODER
from ._json import is_cut_off, loads
from ._time import from_iso, unix_to_datetime

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "flent"
KIND = "throughput"
TOOL = "flent"
BINARY = False

#: flent writes json.dump(sort_keys=True): "metadata" first, its keys sorted too.
_SNIFF = re.compile(r'\A\s*\{\s*"metadata"\s*:\s*\{')
_SNIFF_KEYS = ("\"BATCH_NAME\"", "\"FLENT_VERSION\"", "\"SERIES_META\"", "\"DATA_FILENAME\"", "\"x_values\"")
#: Units of a throughput series as flent stores them, and its factor to bit/s.
THROUGHPUT_UNITS = {"Mbits/s": 1e6}
#: Units of a latency series (ping under load).
LATENCY_UNITS = ("ms",)
#: Series names of flent's aggregates in files without SERIES_META.
_AGGREGATE_NAME = re.compile(r"(?: sum| avg|totals)$")
#: Sub-series of a stream from ss (tcp_info): suffix -> what it is.
_SUBSERIES = {"::tcp_rtt": "rtt", "::tcp_rtt_var": "rttvar", "::tcp_cwnd": "cwnd"}
#: Netperf tests by direction, as seen from the host that ran flent.
_SENDING_TESTS = re.compile(r"-t\s+(?:TCP_STREAM|UDP_STREAM|TCP_SENDFILE)\b")
_RECEIVING_TESTS = re.compile(r"-t\s+TCP_MAERTS\b")
_MIN_DATA_VERSION = 1

_NAN = math.nan
_WS = re.compile(r"[ \t\n\r]*")


def sniff(head):
    """True if ``head`` (the first 4 KB, decompressed) is a flent data file."""
    return bool(_SNIFF.match(head)) and any(key in head for key in _SNIFF_KEYS)


def parse(text):
    """Parse the (decompressed) text of a flent data file into a throughput Dataset.

    Raises
    ------
    ParseError
        Empty input, text that is not JSON (naming the line), JSON that is not a flent
        data file, or a file cut off before its ``results``.
    """
    lines = split_lines(text)
    if not lines or not text.strip():
        raise ParseError("empty input", line=1 if lines else None)
    ledger = Ledger(len(lines))
    lost = ""
    try:
        doc = loads(text)
        end = len(text.rstrip())
    except json.JSONDecodeError as exc:
        if not is_cut_off(text, exc):
            raise ParseError(f"not valid JSON: {exc.msg}", line=exc.lineno) from None
        doc, end, lost = _salvage(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("metadata"), dict):
        raise ParseError("not a flent data file (no \"metadata\" object)", line=1)
    if "results" not in doc:
        raise ParseError("flent data file without \"results\"" + (f": {lost}" if lost else ""),
                         line=len(lines))
    last = text.count("\n", 0, end) + 1
    ledger.parsed(slice(1, last + 1))
    if last < len(lines):
        rest = text[end:]
        ledger.skip(slice(last + 1, len(lines) + 1),
                    "incomplete JSON (file cut off)" if rest.strip() else "blank")
    try:
        return _process(doc, text, ledger, lost)
    except ParseError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        raise ParseError(f"unexpected flent data structure ({type(exc).__name__}: {exc})", line=1) from None


def _salvage(text):
    """Decode a cut-off file member by member (one level deeper in results/raw_values)."""
    doc = {}
    end = 0
    where = "the first member"
    i = _WS.match(text, 0).end()
    if text[i:i + 1] != "{":
        raise ParseError("not a flent data file (no top-level object)", line=1)
    i += 1
    try:
        while True:
            i = _WS.match(text, i).end()
            if text[i:i + 1] == ",":
                i = _WS.match(text, i + 1).end()
            key, i = _DECODER.raw_decode(text, i)
            where = f'"{key}"'
            i = _WS.match(text, _WS.match(text, i).end() + 1).end()  # past ':'
            if key in ("results", "raw_values") and text[i:i + 1] == "{":
                members = doc[key] = {}
                i += 1
                while True:
                    i = _WS.match(text, i).end()
                    if text[i:i + 1] == ",":
                        i = _WS.match(text, i + 1).end()
                    if text[i:i + 1] == "}":
                        i += 1
                        break
                    name, i = _DECODER.raw_decode(text, i)
                    where = f'"{key}" at series {name!r}'
                    i = _WS.match(text, _WS.match(text, i).end() + 1).end()
                    members[name], i = _DECODER.raw_decode(text, i)
                    end = i
                where = f'after "{key}"'
                continue
            doc[key], i = _DECODER.raw_decode(text, i)
            end = i
    except (json.JSONDecodeError, IndexError, TypeError):  # TypeError: a non-string key
        pass
    return doc, end, f"the file is cut off in {where}; kept every complete member and series"


def _floats(values):
    """A flent series (numbers and nulls) as float64, null -> NaN: the one conversion."""
    try:
        return np.array(values, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ParseError(f"non-numeric value in a flent series ({exc})") from None


def _process(doc, text, ledger, lost):
    meta = doc["metadata"]
    results = doc["results"]
    if not isinstance(results, dict):
        raise ParseError("flent \"results\" is not an object", line=1)
    if lost and not results:
        raise ParseError(f"flent data file without a complete series: {lost}", line=1)
    series_meta = meta.get("SERIES_META") or {}
    step = float(meta.get("STEP_SIZE") or _NAN)
    n_points = max((len(v) for v in results.values() if isinstance(v, list)), default=0)
    if isinstance(doc.get("x_values"), list):
        x = _floats(doc["x_values"])
    elif not math.isnan(step):
        x = np.arange(n_points) * step
        lost += "; x_values lost, rebuilt from STEP_SIZE"
    else:
        raise ParseError("flent data file without x_values or STEP_SIZE", line=1)
    n = len(x)

    def grid(name):
        values = _floats(results[name])
        out = np.full(n, _NAN)
        out[: min(n, len(values))] = values[:n]
        return out

    streams, aggregates, pings, others = [], [], [], []
    for name in sorted(results, key=lambda k: ((series_meta.get(k) or {}).get("IDX", 1 << 30), k)):
        sm = series_meta.get(name) or {}
        units = sm.get("UNITS")
        if any(name.endswith(suffix) for suffix in _SUBSERIES) and name.rsplit("::", 1)[0] in results:
            continue  # a stream's tcp_info sub-series: taken with the stream below (or as "other")
        if units in THROUGHPUT_UNITS or (not series_meta and name.startswith(("TCP ", "UDP "))):
            aggregate = ("COMMAND" not in sm) if series_meta else bool(_AGGREGATE_NAME.search(name))
            (aggregates if aggregate else streams).append(name)
        elif units in LATENCY_UNITS or (not series_meta and name.startswith("Ping")):
            pings.append(name)
        else:
            others.append(name)
    # sub-series whose parent is not a stream are kept as other series
    for name in results:
        for suffix in _SUBSERIES:
            if name.endswith(suffix) and name.rsplit("::", 1)[0] in results \
                    and name.rsplit("::", 1)[0] not in streams:
                others.append(name)

    S = len(streams)
    rate = np.full((1, S, n), _NAN)
    sub = {k: np.full((1, S, n), _NAN) for k in ("rtt", "rttvar", "cwnd")}
    mean = np.full(S, _NAN)
    sends = np.zeros(S, dtype=bool)
    line = np.full((1, S, n), -1, dtype=np.int64)
    results_at = text.find('"results"')
    for s, name in enumerate(streams):
        sm = series_meta.get(name) or {}
        factor = THROUGHPUT_UNITS.get(sm.get("UNITS"), 1e6)
        rate[0, s] = grid(name) * factor
        if sm.get("MEAN_VALUE") is not None:
            mean[s] = float(sm["MEAN_VALUE"]) * factor
        for suffix, key in _SUBSERIES.items():
            if name + suffix in results:
                sub[key][0, s] = grid(name + suffix)
        sends[s] = _sends(name, sm.get("COMMAND") or "")
        line[0, s] = _value_lines(text, results_at, name, len(results[name]), n)
    forward = sends if sends.any() else ~sends
    with np.errstate(invalid="ignore"):
        total = np.nansum(mean[forward]) if forward.any() and not np.isnan(mean[forward]).all() else _NAN
        reverse_total = (np.nansum(mean[~forward]) if (~forward).any() and not np.isnan(mean[~forward]).all()
                         else _NAN)
    upload = bool(sends.any())
    protocol = ("UDP" if all(s.startswith("UDP") for s in streams) else "TCP") if streams else ""

    variables = {
        "throughput": (("run",), [total]),
        "throughput_sender": (("run",), [total if upload else _NAN]),
        "throughput_receiver": (("run",), [_NAN if upload else total]),
        "bytes": (("run",), [_NAN]),
        "duration": (("run",), [float(meta.get("LENGTH") or _NAN)]),
        "streams": (("run",), [int(forward.sum())]),
        "protocol": (("run",), [protocol]),
        "window_requested": (("run",), [_NAN]),
        "window_actual": (("run",), [_NAN]),
        "loss_fraction": (("run",), [_NAN]),
        "run_line": (("run",), [1]),
        "stream_throughput": (("run", "stream"), mean[None, :]),
        "stream_direction": (("run", "stream"), np.where(sends, "send", "receive")[None, :].astype("<U7")),
        "interval_start": (("run", "interval"), x[None, :]),
        "interval_end": (("run", "interval"), (x + step)[None, :]),
        "interval_bytes": (("run", "stream", "interval"), np.full((1, S, n), _NAN)),
        "interval_throughput": (("run", "stream", "interval"), rate),
        "interval_rtt": (("run", "stream", "interval"), sub["rtt"]),
        "interval_rttvar": (("run", "stream", "interval"), sub["rttvar"]),
        "interval_cwnd": (("run", "stream", "interval"), np.full((1, S, n), _NAN)),
        "line": (("run", "stream", "interval"), line),
    }
    raw_values = doc.get("raw_values") or {}
    t0 = _t0(meta, raw_values, pings)
    # start_time is T0, where the time grid (interval_start 0) begins, so that start_time +
    # interval_start is the UTC time of an interval (metadata.TIME, when flent itself
    # started, is a second or two earlier)
    start = from_iso(meta.get("T0"))
    variables["start_time"] = (("run",), np.array([start if not np.isnat(start) else
                                                   unix_to_datetime(t0 if t0 else _NAN)], dtype="datetime64[ns]"))
    raw_rtt, raw_time = _raw_probes(raw_values, pings, t0)
    agg_factor = np.array([THROUGHPUT_UNITS.get((series_meta.get(a) or {}).get("UNITS"), 1e6) for a in aggregates])
    extras = {
        "flent_stream_name": (("run", "stream"), np.array(streams, dtype=str)[None, :], "1", "flent series name of the stream"),
        "flent_interval_cwnd": (("run", "stream", "interval"), sub["cwnd"], "count",
                                "TCP congestion window in segments (ss, ::tcp_cwnd)"),
        "flent_throughput_reverse": (("run",), [reverse_total], "bit/s", "sum of the other direction's streams"),
        "flent_test": (("run",), [str(meta.get("NAME") or "")], "1", "flent test name"),
        "flent_title": (("run",), [str(meta.get("TITLE") or "")], "1", "flent test title (-t)"),
        "flent_host": (("run",), [str(meta.get("HOST") or "")], "1", "remote host of the test"),
        "flent_step": (("run",), [step], "s", "spacing of flent's time grid (STEP_SIZE)"),
        "flent_ping": (("run", "flent_ping_series", "interval"),
                       np.array([grid(p) for p in pings]).reshape(len(pings), n)[None], "ms",
                       "latency series resampled on the grid (ping under load)"),
        "flent_ping_raw_rtt": (("run", "flent_ping_series", "flent_probe"), raw_rtt[None], "ms",
                               "latency probes as measured (NaN = padding)"),
        "flent_ping_raw_time": (("run", "flent_ping_series", "flent_probe"), raw_time[None], "s",
                                "time of each probe since T0"),
        "flent_aggregate": (("run", "flent_aggregate_series", "interval"),
                            (np.array([grid(a) for a in aggregates]).reshape(len(aggregates), n)
                             * agg_factor.reshape(-1, 1))[None], "bit/s", "flent's own sums and averages of streams"),
        "flent_series": (("run", "flent_other_series", "interval"),
                         np.array([grid(o) for o in others]).reshape(len(others), n)[None], "1",
                         "other series as stored (units in flent_series_units)"),
    }
    coords = {
        "flent_ping_series": (("flent_ping_series",), np.array(pings, dtype=str), "1", "latency series name"),
        "flent_aggregate_series": (("flent_aggregate_series",), np.array(aggregates, dtype=str), "1",
                                   "aggregate series name"),
        "flent_other_series": (("flent_other_series",), np.array(others, dtype=str), "1", "series name"),
        "flent_series_units": (("flent_other_series",),
                               np.array([str((series_meta.get(o) or {}).get("UNITS") or "") for o in others], dtype=str),
                               "1", "flent's units of the series"),
    }
    summary = {"test": meta.get("NAME"), "length": meta.get("LENGTH"), "step_size": meta.get("STEP_SIZE"),
               "series": {k: {f: v[f] for f in ("MEAN_VALUE", "MIN_VALUE", "MAX_VALUE") if v.get(f) is not None}
                          for k, v in series_meta.items() if isinstance(v, dict) and v.get("MEAN_VALUE") is not None}}
    if lost:
        ledger.truncated(lost.lstrip("; "))
    return build(KIND, variables, fmt=NAME, tool=TOOL, tool_version=str(meta.get("FLENT_VERSION") or ""),
                 ledger=ledger, extras=extras, coords=coords, tool_summary=summary,
                 attrs={"flent_data_version": int(doc.get("version") or 0), "flent_t0": str(meta.get("T0") or "")})


def _sends(name, command):
    """Does the host that ran flent send on this stream?"""
    if _RECEIVING_TESTS.search(command) or "download" in name.lower():
        return False
    return bool(_SENDING_TESTS.search(command)) or "upload" in name.lower() or not command


def _value_lines(text, results_at, name, count, n):
    """Source line of each value of series ``name`` in ``results`` (one value per line), else -1."""
    out = np.full(n, -1, dtype=np.int64)
    if results_at < 0:
        return out
    key = json.dumps(name) + ": ["
    at = text.find(key, results_at)
    if at < 0:
        return out
    first = text.count("\n", 0, at) + 2
    close = text.find("]", at + len(key))
    if close < 0 or text.count("\n", at, close) != count + 1:
        return out  # not laid out one value per line
    k = min(n, count)
    out[:k] = first + np.arange(k)
    return out


def _t0(meta, raw_values, pings):
    """Unix time of ``metadata.T0`` (ISO 8601, UTC), where flent's grid starts.

    Files without a readable T0 fall back to the earliest raw probe.
    """
    try:
        return datetime.fromisoformat(str(meta.get("T0")).replace("Z", "+00:00")).timestamp()
    except ValueError:
        times = [r.get("t") for p in pings for r in (raw_values.get(p) or [])[:1] if isinstance(r, dict)]
        times = [t for t in times if isinstance(t, (int, float))]
        return min(times) if times else 0.0


def _raw_probes(raw_values, pings, t0):
    """Raw latency probes of each ping series, padded with NaN: (rtt ms, time s since T0)."""
    rows = [[r for r in (raw_values.get(p) or []) if isinstance(r, dict) and "val" in r] for p in pings]
    width = max((len(r) for r in rows), default=0)
    rtt = np.full((len(pings), width), _NAN)
    when = np.full((len(pings), width), _NAN)
    for i, probes in enumerate(rows):
        if probes:
            rtt[i, : len(probes)] = _floats([p.get("val") for p in probes])
            when[i, : len(probes)] = _floats([p.get("t") for p in probes]) - t0
    return rtt, when
