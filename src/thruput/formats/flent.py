"""flent data files (``*.flent.gz``: gzip-compressed JSON, data formats 1 to 4).

A flent file is one test (``rrul``, ``tcp_nup``, ``ping``, ...): every measured series
resampled by flent onto one time grid (``x_values``, spaced ``metadata.STEP_SIZE``
seconds from ``metadata.T0``) in ``results``, the unresampled measurements in
``raw_values`` (format 1: in ``SERIES_META[*].RAW_VALUES``), and per-series metadata
(runner, command, units, ``MEAN_VALUE``) in ``metadata.SERIES_META``. flent was
netperf-wrapper until 2015 (``NETPERF_WRAPPER_VERSION``). :func:`thruput.read`
decompresses the gzip layer.

How the series map onto the ``throughput`` kind (one run; dims ``run``, ``stream``,
``interval``)
---------------------------------------------------------------------------------------
Streams
    Each series is classified by itself (:func:`_classify`), so that files whose
    SERIES_META covers only some series or gives no units (formats 1-2) read like new
    ones: a series in Mbits/s, Kbits/s or bits/s (SERIES_META ``UNITS``, else a name
    ``TCP|UDP upload|download ...``) is a stream if a runner's ``COMMAND`` measured it or
    its name is a flow's; flent's computing runners (``SumRunner``, ``AverageRunner``,
    ``FairnessRunner``, ...) and names ending ``sum``/``avg``/``totals``/``fairness``
    without a command are aggregates. Streams are in ``SERIES_META.IDX`` order, then by
    name. ``flent_stream_name`` keeps each stream's series name, ``flent_stream_host``
    its host (netperf ``-H``, else the test's ``HOST``).
``stream_direction``
    ``"send"`` for uploads (name ``upload``, netperf ``TCP_STREAM``), ``"receive"`` for
    downloads (``download``, ``TCP_MAERTS``), seen from the host that ran flent.
Intervals
    Interval j is grid point j: ``interval_start = x_values[j]``, ``interval_end =
    x_values[j] + STEP_SIZE``. ``interval_throughput`` is the stream's resampled rate
    (Mbits/s as stored, here bit/s); flent keeps no byte counts, so ``interval_bytes`` is
    NaN. ``interval_rtt`` and ``interval_rttvar`` are the stream's ``::tcp_rtt`` and
    ``::tcp_rtt_var`` sub-series (ms, from ``ss``); its ``::tcp_cwnd`` is in segments, so
    it is ``flent_interval_cwnd`` (count) and ``interval_cwnd`` (byte) stays NaN;
    ``::tcp_pacing_rate``, ``::tcp_delivery_rate`` and ``::tcp_bbr_bw`` (Mbits/s) are
    ``flent_interval_pacing_rate``/``_delivery_rate``/``_bbr_bw`` (bit/s).
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

``flent_test`` (and ``attrs``) is the file's own ``NAME``; ``flent_test_shown`` the test
its series show (:func:`_test_shown`: rrul, rrul_be, rtt_fair, tcp_nup, ...). Each latency
series has its host (``flent_ping_host``). Before format 4 flent stored netperf UDP_RR raw
probes as transactions/s and HTTP latency in s: converted to ms as flent does on load.
``consistency`` checks flent's ``TCP upload sum``/``TCP download sum`` ``MEAN_VALUE``
against the sum of the direction's streams' ``MEAN_VALUE``.

``line`` is the source line of each stream's value in ``results`` where the file is laid
out as flent writes it (one value per line), else -1. ``tool_summary`` holds each series'
``MEAN_VALUE``/``MIN_VALUE``/``MAX_VALUE`` and the test name, length and step.

A file cut off mid-way keeps every complete top-level member and every complete series of
``results``; ``x_values`` lost after complete ``results`` are rebuilt from ``STEP_SIZE``
(said so in ``truncation``); without ``results`` nothing is kept and a
:class:`~thruput.errors.ParseError` names the line where the file ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import json
import math
import re
from datetime import datetime

import numpy as np

from ..contract import build, consistency_check
from ..errors import ParseError
from ._json import read_document, salvage
from ._time import from_iso, unix_to_datetime

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "flent"
KIND = "throughput"
TOOL = "flent"
BINARY = False

#: flent writes json.dump(sort_keys=True): "metadata" first, its keys sorted too.
_SNIFF = re.compile(r'\A\s*\{\s*"metadata"\s*:\s*\{')
_SNIFF_KEYS = ("\"BATCH_NAME\"", "\"FLENT_VERSION\"", "\"SERIES_META\"", "\"DATA_FILENAME\"", "\"x_values\"",
               "\"NETPERF_WRAPPER_VERSION\"")  # flent was netperf-wrapper until 2015
#: Units of a throughput series as flent stores them, and its factor to bit/s (iperf's UDP
#: series were stored in bits/s before data format 4).
THROUGHPUT_UNITS = {"Mbits/s": 1e6, "Kbits/s": 1e3, "bits/s": 1.0}
#: Units of a latency series (ping under load).
LATENCY_UNITS = ("ms",)
#: flent's computing runners: their series are aggregates of other series, not flows.
AGGREGATE_RUNNERS = frozenset({"SumRunner", "AverageRunner", "SmoothAverageRunner", "FairnessRunner",
                               "DiffMinRunner"})
#: Series names of flent's aggregates where SERIES_META does not name the runner.
_AGGREGATE_NAME = re.compile(r"(?: sum| avg|totals| fairness)$")
#: A flow's series by its name, where SERIES_META does not give its units (data formats 1-2
#: kept no per-series units): throughput of a TCP/UDP flow, or ping under load.
_FLOW_NAME = re.compile(r"(?:TCP|UDP) (?:upload|download)\b")
_PING_NAME = re.compile(r"Ping\b")
#: Socket statistics of a flow (flent's ss runner, ``<flow>::tcp_<key>``): key -> (variable,
#: factor to its units). rtt and rtt_var in ms, cwnd in segments, rates in Mbits/s.
_SUBSERIES = {"tcp_rtt": ("rtt", 1.0), "tcp_rtt_var": ("rttvar", 1.0), "tcp_cwnd": ("cwnd", 1.0),
              "tcp_pacing_rate": ("pacing_rate", 1e6), "tcp_delivery_rate": ("delivery_rate", 1e6),
              "tcp_bbr_bw": ("bbr_bw", 1e6)}
_SUBSERIES_NAME = re.compile(r"::(tcp_[a-z_]+)$")
#: The host a runner talked to: netperf's and irtt's ``-H host``, else the command's last word.
_HOST_OPTION = re.compile(r"-H\s+(\S+)")
#: Netperf tests by direction, as seen from the host that ran flent.
_SENDING_TESTS = re.compile(r"-t\s+(?:TCP_STREAM|UDP_STREAM|TCP_SENDFILE)\b")
_RECEIVING_TESTS = re.compile(r"-t\s+TCP_MAERTS\b")
#: The test a file's series show, by the labels of its upload and download flows (the
#: file's own NAME may differ: a run of rrul_be saved under another name, a renamed test).
_RRUL_LABELS = frozenset({"BE", "BK", "CS5", "EF"})
_MIN_DATA_VERSION = 1

_NAN = math.nan


def sniff(head: str) -> bool:
    """True if ``head`` (the first 4 KB, decompressed) is a flent data file."""
    return bool(_SNIFF.match(head)) and any(key in head for key in _SNIFF_KEYS)


def parse(text: str) -> xr.Dataset:
    """Parse the (decompressed) text of a flent data file into a throughput Dataset.

    Raises
    ------
    ParseError
        Empty input, text that is not JSON (naming the line), JSON that is not a flent
        data file, or a file cut off before its ``results``.
    """
    doc, end, lost, ledger = read_document(text, _salvage)
    if not isinstance(doc, dict) or not isinstance(doc.get("metadata"), dict):
        raise ParseError("not a flent data file (no \"metadata\" object)", line=1)
    if "results" not in doc:
        raise ParseError("flent data file without \"results\"" + (f": {lost}" if lost else ""),
                         line=ledger.total)
    try:
        return _process(doc, text, ledger, lost)
    except ParseError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        raise ParseError(f"unexpected flent data structure ({type(exc).__name__}: {exc})", line=1) from None


def _salvage(text):
    """The complete members of a cut-off file, and the complete series of its ``results``
    and ``raw_values`` (:func:`thruput.formats._json.salvage`): (doc, end, what was lost)."""
    found = salvage(text, descend={("results",), ("raw_values",)})
    if found is None:
        raise ParseError("not a flent data file (no top-level object)", line=1)
    where = found.where
    at = (f'"{where[0]}" at series {where[1]!r}' if len(where) > 1 else
          f'"{where[0]}"' if where else "the first member")
    return found.doc, found.end, f"the file is cut off in {at}; kept every complete member and series"


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
    subseries = {}   # stream name -> {variable: sub-series name}
    order = sorted(results, key=lambda k: ((series_meta.get(k) or {}).get("IDX", 1 << 30), k))
    for name in order:
        what = _classify(name, series_meta.get(name) or {}, results)
        {"stream": streams, "aggregate": aggregates, "ping": pings, "other": others}.get(what, []).append(name)
    for name in order:  # socket statistics of a stream, else kept as other series
        m = _SUBSERIES_NAME.search(name)
        if m and m.group(1) in _SUBSERIES and name[: m.start()] in streams:
            subseries.setdefault(name[: m.start()], {})[m.group(1)] = name
        elif m and name[: m.start()] in results:
            others.append(name)

    S = len(streams)
    rate = np.full((1, S, n), _NAN)
    sub = {key: np.full((1, S, n), _NAN) for key, _ in _SUBSERIES.values()}
    mean = np.full(S, _NAN)
    sends = np.zeros(S, dtype=bool)
    hosts = []
    line = np.full((1, S, n), -1, dtype=np.int64)
    results_at = text.find('"results"')
    for s, name in enumerate(streams):
        sm = series_meta.get(name) or {}
        factor = THROUGHPUT_UNITS.get(sm.get("UNITS"), 1e6)
        rate[0, s] = grid(name) * factor
        if sm.get("MEAN_VALUE") is not None:
            mean[s] = float(sm["MEAN_VALUE"]) * factor
        for key, sub_name in subseries.get(name, {}).items():
            var, sub_factor = _SUBSERIES[key]
            sub[var][0, s] = grid(sub_name) * sub_factor
        sends[s] = _sends(name, sm.get("COMMAND") or "")
        hosts.append(_host(sm.get("COMMAND"), meta))
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
    raw_values = doc.get("raw_values")
    if not isinstance(raw_values, dict):  # data format 1 kept the raw values in SERIES_META
        raw_values = {k: v.get("RAW_VALUES") for k, v in series_meta.items()
                      if isinstance(v, dict) and isinstance(v.get("RAW_VALUES"), list)}
    t0 = _t0(meta, raw_values, pings)
    # start_time is T0, where the time grid (interval_start 0) begins, so that start_time +
    # interval_start is the UTC time of an interval (metadata.TIME, when flent itself
    # started, is a second or two earlier)
    start = from_iso(meta.get("T0") or meta.get("TIME"))   # old files: no T0 (flent uses TIME then)
    variables["start_time"] = (("run",), np.array([start if not np.isnat(start) else
                                                   unix_to_datetime(t0 if t0 else _NAN)], dtype="datetime64[ns]"))
    version = _int(doc.get("version"), 1)
    raw_rtt, raw_time = _raw_probes(raw_values, pings, t0, version)
    agg_factor = np.array([THROUGHPUT_UNITS.get((series_meta.get(a) or {}).get("UNITS"), 1e6) for a in aggregates])
    test = str(meta.get("NAME") or "")
    shown = _test_shown(streams, sends, hosts, pings)
    extras = {
        "flent_stream_name": (("run", "stream"), np.array(streams, dtype=str)[None, :], "1", "flent series name of the stream"),
        "flent_stream_host": (("run", "stream"), np.array(hosts, dtype=str)[None, :], "1",
                              "host the stream ran to (netperf -H, else the test's HOST)"),
        "flent_interval_cwnd": (("run", "stream", "interval"), sub["cwnd"], "count",
                                "TCP congestion window in segments (ss, ::tcp_cwnd)"),
        "flent_interval_pacing_rate": (("run", "stream", "interval"), sub["pacing_rate"], "bit/s",
                                       "TCP pacing rate (ss, ::tcp_pacing_rate)"),
        "flent_interval_delivery_rate": (("run", "stream", "interval"), sub["delivery_rate"], "bit/s",
                                         "TCP delivery rate (ss, ::tcp_delivery_rate)"),
        "flent_interval_bbr_bw": (("run", "stream", "interval"), sub["bbr_bw"], "bit/s",
                                  "BBR bottleneck bandwidth estimate (ss, ::tcp_bbr_bw)"),
        "flent_throughput_reverse": (("run",), [reverse_total], "bit/s", "sum of the other direction's streams"),
        "flent_test": (("run",), [test], "1", "flent test name as the file states it (metadata NAME)"),
        "flent_test_shown": (("run",), [shown], "1",
                             "the test the file's series show (rrul, rrul_be, rtt_fair, tcp_nup, ...; '' if none known)"),
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
        "flent_ping_host": (("flent_ping_series",),
                            np.array([_host((series_meta.get(p) or {}).get("COMMAND"), meta) for p in pings], dtype=str),
                            "1", "host the latency series measured to (from its command, else the test's HOST)"),
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
    checks = _checks(streams, sends, mean, series_meta, results)
    if lost:
        ledger.truncated(lost.lstrip("; "))
    return build(KIND, variables, fmt=NAME, tool=TOOL,
                 tool_version=str(meta.get("FLENT_VERSION") or meta.get("NETPERF_WRAPPER_VERSION") or ""),
                 ledger=ledger, extras=extras, coords=coords, tool_summary=summary, consistency=checks,
                 attrs={"flent_data_version": version, "flent_t0": str(meta.get("T0") or ""),
                        "flent_test": test, "flent_test_shown": shown})


def _int(value, default):
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):     # (OverflowError: a JSON 1e999 is inf)
        return default


def _classify(name, sm, results):
    """What series ``name`` is: "stream", "aggregate", "ping", "other" or "sub" (a flow's
    socket statistics, taken with the flow). Per series, so that files whose SERIES_META
    covers only some series (or gives no units: data formats 1-2) are read by the names."""
    m = _SUBSERIES_NAME.search(name)
    if m and name[: m.start()] in results:
        return "sub"
    units = sm.get("UNITS")
    runner = sm.get("RUNNER")
    if units is None:
        units = "Mbits/s" if _FLOW_NAME.match(name) else "ms" if _PING_NAME.match(name) else None
    if units in THROUGHPUT_UNITS:
        if runner in AGGREGATE_RUNNERS or ("COMMAND" not in sm and _AGGREGATE_NAME.search(name)):
            return "aggregate"
        # a flow: a runner's command measured it, or it is named as one (VoIP::bitrate, a
        # NullRunner's share of another runner's output, is not)
        return "stream" if ("COMMAND" in sm or _FLOW_NAME.match(name)) else "other"
    if units in LATENCY_UNITS:
        return "ping"
    return "other"


def _host(command, meta):
    """The host a runner's command talked to, else the test's HOST."""
    command = str(command or "")
    m = _HOST_OPTION.search(command)
    if m:
        return m.group(1)
    words = command.replace("(duplicate)", "").split()
    if words and not words[-1].startswith("-") and len(words) > 1:
        return words[-1]
    return str(meta.get("HOST") or "")


def _label(name):
    """A flow's label: 'TCP upload BE2' -> 'BE2', 'TCP upload::7' -> '', 'TCP upload BE1 host' -> 'BE1'."""
    rest = _FLOW_NAME.sub("", name, count=1).strip()
    return rest.split()[0] if rest and not rest.startswith("::") else ""


def _test_shown(streams, sends, hosts, pings):
    """The flent test the series show, from the flows' directions, labels and hosts."""
    up, down = int(sends.sum()), int((~sends).sum())
    labels = {re.sub(r"[0-9]+$", "", _label(s)) for s in streams}
    if not streams:
        return "ping" if pings else ""
    if up and down:
        if labels == _RRUL_LABELS and up == down == 4:
            return "rrul"
        if labels == {"BE"} and up == down == 4 and len(set(hosts)) == 1:
            return "rrul_be"
        if len(set(hosts)) > 1:
            return "rtt_fair"
        return "tcp_bidirectional" if up == down == 1 else ""
    if len(set(hosts)) > 1:
        return "rtt_fair_up" if up else "rtt_fair_down"
    n = up or down
    word = "up" if up else "down"
    return f"tcp_1{word}" if n == 1 else f"tcp_n{word}"


def _checks(streams, sends, mean, series_meta, results):
    """flent's own sums (``TCP upload sum``, ``TCP download sum``: SumRunner MEAN_VALUE)
    against the sum of the streams' MEAN_VALUE."""
    checks = []
    for word, mask in (("upload", sends), ("download", ~sends)):
        sm = series_meta.get(f"TCP {word} sum") or {}
        if sm.get("MEAN_VALUE") is None or not mask.any() or np.isnan(mean[mask]).all():
            continue
        factor = THROUGHPUT_UNITS.get(sm.get("UNITS"), 1e6)
        checks.append(consistency_check(
            f"{word}: flent's 'TCP {word} sum' MEAN_VALUE vs sum of the {word} streams' MEAN_VALUE",
            float(sm["MEAN_VALUE"]) * factor, float(np.nansum(mean[mask])), rtol=1e-6))
    return checks


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
        return datetime.fromisoformat(str(meta.get("T0") or meta.get("TIME")).replace("Z", "+00:00")).timestamp()
    except ValueError:
        times = [r.get("t") for p in pings for r in (raw_values.get(p) or [])[:1] if isinstance(r, dict)]
        times = [t for t in times if isinstance(t, (int, float))]
        return min(times) if times else 0.0


def _raw_probes(raw_values, pings, t0, version):
    """Raw latency probes of each ping series, padded with NaN: (rtt ms, time s since T0).

    Before data format 4, flent stored netperf UDP_RR probes as transactions per second
    (``dur`` in the probe) and HTTP latency in seconds; they are converted to ms here, as
    flent itself does when it loads such a file.
    """
    rows = [[r for r in (raw_values.get(p) or []) if isinstance(r, dict) and "val" in r] for p in pings]
    width = max((len(r) for r in rows), default=0)
    rtt = np.full((len(pings), width), _NAN)
    when = np.full((len(pings), width), _NAN)
    for i, probes in enumerate(rows):
        if probes:
            vals = _floats([p.get("val") for p in probes])
            if version < 4 and "UDP" in pings[i]:
                rr = np.array(["dur" in p for p in probes])
                with np.errstate(divide="ignore"):
                    vals[rr] = 1000.0 / vals[rr]
                vals[np.isinf(vals)] = _NAN
            elif version < 4 and pings[i] == "HTTP latency":
                vals = vals * 1000.0
            rtt[i, : len(probes)] = vals
            when[i, : len(probes)] = _floats([p.get("t") for p in probes]) - t0
    return rtt, when
