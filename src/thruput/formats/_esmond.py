"""perfSONAR esmond archive time series (JSON), shared by ``esmond_throughput`` (kind
``throughput``) and ``esmond_latency`` (kind ``rtt``).

esmond's data endpoints (``/esmond/perfsonar/archive/<metadata-key>/<event-type>/<summary-type>/<window>``)
return a list of points ``[{"ts": <Unix s>, "val": ...}, ...]`` and do not say their event
type, so it is told from the shape of ``val``:

``throughput`` (bit/s)
    a number; each point is a run (``start_time`` = ``ts``).
``histogram-owdelay`` (ms)
    a ``{"<delay ms>": count}`` map; kept as a histogram per point
    (``esmond_hist_count`` over ``esmond_point`` x ``esmond_bin``, bins ``esmond_hist_delay``)
    with weighted statistics per point and over the whole series (nearest-rank
    percentiles, :func:`._pscheduler.weighted_stats`).
``packet-loss-rate``
    a fraction (a number with a decimal point within [0, 1]) or, in some esmond versions,
    ``{"numerator": lost, "denominator": sent}``.
``packet-count-lost`` / ``packet-count-sent``
    an integer; a bare list of integers is taken for throughput, so these need the wrapper
    below (or ``format="esmond_latency"``, which reads bare integers as packets lost).

The optional wrapper names what the bare list cannot::

    {"metadata": {<one object of esmond's metadata listing: source, destination,
                   tool-name, "event-types": [{"event-type", "summaries": [...]}]}>},
     "series": [{"event-type": "...", "summary-type": "base"|"aggregation"|"average",
                 "summary-window": "3600", "data": [points]}, ...]}

(``"data"`` with ``"event-type"`` beside it may stand for a one-element ``"series"``). The
latency series of one wrapper are aligned by ``ts``; checked where they meet: each
histogram's count against ``packet-count-sent - packet-count-lost``, and
``packet-loss-rate`` against ``packet-count-lost / packet-count-sent``; a series' summary
window against the ``summaries`` its metadata lists.

A list cut off mid-way keeps its complete points (``truncation`` says so).
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..contract import Ledger, build, consistency_check, split_lines
from ..errors import ParseError
from ._json import WS as _WS
from ._json import is_cut_off
from ._pscheduler import DECODER, PERCENTILES, weighted_stats

__all__ = ["sniff", "parse"]

TOOL = "esmond"

#: A data endpoint's list of points, or the wrapper.
_SNIFF_LIST = re.compile(r'\A\s*\[\s*\{\s*"(?:ts|val)"\s*:')
_SNIFF_WRAP = re.compile(r'\A\s*\{')
_EVENT_TYPE = re.compile(r'"event-type"\s*:\s*"([a-z-]{1,40})"')
#: The event types each format reads.
EVENTS = {"esmond_throughput": ("throughput",),
          "esmond_latency": ("histogram-owdelay", "packet-loss-rate", "packet-count-lost", "packet-count-sent")}
#: ``val`` in the head of a bare list: a number, an object with a numeric key, a
#: numerator/denominator object. Linear: one optional sign, digits, one fraction, one exponent.
_HEAD_VAL = re.compile(r'"val"\s*:\s*(?:(?P<num>-?[0-9]+(?P<frac>\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)'
                       r'|\{\s*"(?P<key>[^"]{0,40})")')
_NUMBER_KEY = re.compile(r"-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?")
_NAN = np.nan
#: A ``ts`` beyond this (s, year 2261: past it datetime64[ns] holds no time, and NumPy's
#: cast would wrap it round) is a damaged number, not a Unix time in seconds.
MAX_TS = 9.2e9


def _head_event(head):
    """The event type the first ``val`` of a bare list shows, or None."""
    m = _HEAD_VAL.search(head)
    if not m:
        return None
    if m.group("num") is not None:
        return "packet-loss-rate" if m.group("frac") and 0 <= float(m.group("num")) <= 1 else "throughput"
    key = m.group("key")
    if key in ("numerator", "denominator"):
        return "packet-loss-rate"
    return "histogram-owdelay" if _NUMBER_KEY.fullmatch(key) else None


def sniff(head, fmt):
    """True if ``head`` (the first 4 KB) is an esmond time series that format ``fmt`` reads."""
    if _SNIFF_LIST.match(head):
        return _head_event(head) in EVENTS[fmt]
    if _SNIFF_WRAP.match(head) and ('"series"' in head or '"data"' in head) and '"event-type"' in head:
        return any(e in EVENTS[fmt] for e in _EVENT_TYPE.findall(head))
    return False


def parse(text, fmt):
    """Parse an esmond time series (see the module docstring) into a Dataset.

    Raises
    ------
    ParseError
        Empty input, text that is not JSON (naming the line), JSON that is neither a list
        of points nor the wrapper, an event type of the other format, a point or value of
        the wrong shape (naming its line).
    """
    lines = split_lines(text)
    if not lines or not text.strip():
        raise ParseError("empty input", line=1 if lines else None)
    ledger = Ledger(len(lines))
    i = _WS.match(text).end()
    lost = ""
    if text[i:i + 1] == "[":
        points, end, lost = _points(text, i)
        series = [{"event-type": None, "data": points}]
        meta = {}
    else:
        try:
            doc = DECODER.decode(text)
        except json.JSONDecodeError as exc:
            raise ParseError(f"not valid JSON{' (the wrapper is cut off)' if is_cut_off(text, exc) else ''}: "
                             f"{exc.msg}", line=exc.lineno) from None
        end = len(text.rstrip())
        series, meta = _unwrap(doc)
    last = text.count("\n", 0, end) + 1
    ledger.parsed(np.arange(1, min(last, len(lines)) + 1))
    if last < len(lines):
        ledger.skip(np.arange(last + 1, len(lines) + 1), "incomplete JSON (file cut off)" if lost else "blank")
    if lost:
        ledger.truncated(lost)
    for s in series:
        s["event-type"] = s["event-type"] or _event_of(s["data"], fmt)
        if s["event-type"] is None:
            raise ParseError("an esmond point whose val is neither a number, a {delay: count} map nor "
                             "a numerator/denominator", line=s["data"][0]["_line"])
        if s["event-type"] not in EVENTS[fmt]:
            other = [f for f, e in EVENTS.items() if s["event-type"] in e]
            raise ParseError(f"an esmond {s['event-type']} series, not one of {', '.join(EVENTS[fmt])} "
                             f"(read it as {other or 'no format'})", line=1)
    try:
        if fmt == "esmond_throughput":
            return _throughput(series, meta, ledger, fmt)
        return _latency(series, meta, ledger, fmt)
    except ParseError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        raise ParseError(f"unexpected esmond series ({type(exc).__name__}: {exc})", line=1) from None


def _points(text, i):
    """The complete points of the list opened at ``i``, each with its line: (points, end
    offset, what was lost)."""
    points = []
    i += 1
    end = i
    line, counted = 1, 0             # lines counted up to ``counted`` (linear in the file)
    while True:
        i = _WS.match(text, i).end()
        if text[i:i + 1] == "," and points:
            i = _WS.match(text, i + 1).end()
        if text[i:i + 1] == "]":
            rest = _WS.match(text, i + 1).end()
            if rest < len(text):
                raise ParseError("text after the list of points", line=text.count("\n", 0, rest) + 1)
            return points, i + 1, ""
        line += text.count("\n", counted, i)
        counted = i
        try:
            item, i = DECODER.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            if is_cut_off(text, exc) or i >= len(text):
                if not points:
                    raise ParseError("esmond series cut off before any complete point", line=line) from None
                return points, end, f"the file is cut off after {len(points)} complete points"
            raise ParseError(f"not valid JSON: {exc.msg}", line=exc.lineno) from None
        if not isinstance(item, dict) or "ts" not in item or "val" not in item:
            raise ParseError("not an esmond point (an object with \"ts\" and \"val\")", line=line)
        item["_line"] = line
        points.append(item)
        end = i


def _unwrap(doc):
    """(series, metadata) of the wrapper."""
    if not isinstance(doc, dict):
        raise ParseError("not an esmond time series (neither a list of points nor a wrapper)", line=1)
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    raw = doc.get("series")
    if raw is None and "data" in doc:
        raw = [doc]
    if not isinstance(raw, list) or not raw:
        raise ParseError("esmond wrapper without \"series\" (or \"data\")", line=1)
    series = []
    for s in raw:
        if not isinstance(s, dict) or not isinstance(s.get("data"), list):
            raise ParseError("esmond series without a \"data\" list", line=1)
        data = [dict(p, _line=1) for p in s["data"] if isinstance(p, dict) and "ts" in p and "val" in p]
        if len(data) != len(s["data"]):
            raise ParseError("not an esmond point (an object with \"ts\" and \"val\")", line=1)
        series.append({"event-type": s.get("event-type"), "summary-type": str(s.get("summary-type") or "base"),
                       "summary-window": _window(s.get("summary-window", 0)), "data": data})
    return series, meta


def _event_of(points, fmt):
    """A bare list's event type from its first point's ``val``."""
    if not points:
        return EVENTS[fmt][0]
    val = points[0]["val"]
    if isinstance(val, dict):
        if "numerator" in val or "denominator" in val:
            return "packet-loss-rate"
        return "histogram-owdelay" if all(isinstance(k, str) and _NUMBER_KEY.fullmatch(k) for k in val) else None
    if isinstance(val, float) and 0 <= val <= 1:
        return "packet-loss-rate"
    if isinstance(val, (int, float)) and not isinstance(val, bool):
        return "packet-count-lost" if fmt == "esmond_latency" and isinstance(val, int) else "throughput"
    return None


def _num(value):
    if value is None:
        return _NAN
    if isinstance(value, (bool, dict, list)):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def _window(value):
    """A summary window (s) as a float; NaN where it is not a number (checked later)."""
    try:
        return _num(value)
    except (TypeError, ValueError):
        return _NAN


def _at(point, value, what, required=False):
    """``value`` of ``point`` as a float (NaN for null, unless ``required``), or a
    ParseError naming the point's line."""
    try:
        x = _num(value)
    except (TypeError, ValueError):
        x = _NAN
        value = "not a number"
    if np.isnan(x) and (required or value is not None):
        raise ParseError(f"esmond point's {what} is not a number", line=point["_line"]) from None
    if np.isinf(x):
        raise ParseError(f"esmond point's {what} is infinite: a number too large for a float (a damaged log?)",
                         line=point["_line"])
    return x


def _ts(point):
    ts = _at(point, point["ts"], "ts", True)
    if not abs(ts) < MAX_TS:
        raise ParseError("esmond point's ts is not a Unix time (s): too large", line=point["_line"])
    return ts


def _window_checks(series, meta):
    """Each series' summary window against the summaries its metadata lists."""
    listed = {}
    for et in meta.get("event-types") or []:
        if isinstance(et, dict):
            listed[et.get("event-type")] = {(str(s.get("summary-type")), _window(s.get("summary-window")))
                                            for s in et.get("summaries") or [] if isinstance(s, dict)}
    checks = []
    for s in series:
        if s["event-type"] in listed and s.get("summary-type", "base") != "base":
            checks.append(consistency_check(
                f"{s['event-type']}: {s['summary-type']}/{s['summary-window']:g} among the metadata's summaries",
                1.0, float((s["summary-type"], s["summary-window"]) in listed[s["event-type"]]), rtol=0.0))
    return checks


def _attrs(series, meta):
    attrs = {"esmond_" + k.replace("-", "_"): str(meta[k]) for k in
             ("source", "destination", "measurement-agent", "tool-name", "metadata-key") if meta.get(k)}
    attrs["esmond_series"] = json.dumps([{"event-type": s["event-type"], "summary-type": s.get("summary-type", "base"),
                                          "summary-window": s.get("summary-window", 0.0), "points": len(s["data"])}
                                         for s in series])
    return attrs


# --- throughput ------------------------------------------------------------------------

def _throughput(series, meta, ledger, fmt):
    points = [p for s in series for p in s["data"]]
    n = len(points)
    bits = np.array([_at(p, p["val"], "throughput") for p in points], dtype=float)
    ts = np.array([_ts(p) for p in points], dtype=float)
    start = (ts * 1e9).astype("int64").astype("datetime64[ns]")
    window = series[0].get("summary-window", 0.0)
    nan = np.full(n, _NAN)
    variables = {
        "throughput": (("run",), bits),
        "throughput_sender": (("run",), nan.copy()),
        "throughput_receiver": (("run",), nan.copy()),
        "bytes": (("run",), nan.copy()),
        "duration": (("run",), nan.copy()),
        "streams": (("run",), nan.copy()),
        "protocol": (("run",), np.full(n, "", dtype="<U3")),
        "window_requested": (("run",), nan.copy()),
        "window_actual": (("run",), nan.copy()),
        "loss_fraction": (("run",), nan.copy()),
        "run_line": (("run",), np.array([p["_line"] for p in points], dtype=np.int64)),
        "start_time": (("run",), start),
        "stream_throughput": (("run", "stream"), bits[:, None]),
        "interval_start": (("run", "interval"), np.zeros((n, 0))),
        "interval_end": (("run", "interval"), np.zeros((n, 0))),
        "interval_bytes": (("run", "stream", "interval"), np.zeros((n, 1, 0))),
        "interval_throughput": (("run", "stream", "interval"), np.zeros((n, 1, 0))),
        "line": (("run", "stream", "interval"), np.zeros((n, 1, 0), dtype=np.int64)),
    }
    extras = {"esmond_summary_window": ((), float(window), "s",
                                        "esmond summary window of the series (0: base data)")}
    return build("throughput", variables, fmt=fmt, tool=TOOL, ledger=ledger, extras=extras,
                 tool_summary={"points": n}, consistency=_window_checks(series, meta),
                 attrs=_attrs(series, meta))


# --- latency (kind rtt) ----------------------------------------------------------------

def _loss_rate(point):
    val = point["val"]
    if isinstance(val, dict):
        num, den = _at(point, val.get("numerator"), "numerator"), _at(point, val.get("denominator"), "denominator")
        return num / den if den > 0 else _NAN
    return _at(point, val, "packet-loss-rate")


def _latency(series, meta, ledger, fmt):
    times = sorted({_ts(p) for s in series for p in s["data"]})
    index = {t: k for k, t in enumerate(times)}
    n = len(times)
    line = np.full(n, -1, dtype=np.int64)
    col = {e: np.full(n, _NAN) for e in EVENTS[fmt][1:]}
    hists = [None] * n
    for s in series:
        for p in s["data"]:
            k = index[_ts(p)]
            line[k] = p["_line"] if line[k] < 0 else min(line[k], p["_line"])
            if s["event-type"] == "histogram-owdelay":
                if not isinstance(p["val"], dict):
                    raise ParseError("histogram-owdelay point whose val is not a {delay: count} map",
                                     line=p["_line"])
                hists[k] = {_at(p, b, "histogram bin", True): _at(p, c, "histogram count", True) for b, c in p["val"].items()}
                if any(c < 0 for c in hists[k].values()):
                    raise ParseError("histogram-owdelay point with a negative count", line=p["_line"])
            elif s["event-type"] == "packet-loss-rate":
                col["packet-loss-rate"][k] = _loss_rate(p)
            else:
                col[s["event-type"]][k] = _at(p, p["val"], s["event-type"])
    bins = np.array(sorted({b for h in hists if h for b in h}), dtype=float)
    where = {b: j for j, b in enumerate(bins)}
    counts = np.zeros((n, len(bins)))
    for k, h in enumerate(hists):
        for b, c in (h or {}).items():
            counts[k, where[b]] += c
    stats = [weighted_stats(bins, counts[k]) for k in range(n)]
    pooled = weighted_stats(bins, counts.sum(axis=0)) if n else weighted_stats(bins, np.zeros(0))
    has_hist = np.array([h is not None for h in hists], dtype=bool)
    per = {k: np.array([st[k] for st in stats], dtype=float) for k in ("min", "mean", "max", "stddev")}
    pct = np.array([st["percentiles"] for st in stats], dtype=float).reshape(n, len(PERCENTILES))
    received = np.where(has_hist, counts.sum(axis=1), _NAN)
    base = {"seq": np.zeros(0, dtype=np.int64), "rtt": np.zeros(0), "status": np.zeros(0, dtype="<U11"),
            "timestamp": np.zeros(0), "size": np.zeros(0), "ttl": np.zeros(0, dtype=np.int64),
            "line": np.zeros(0, dtype=np.int64)}
    variables = {k: (("probe",), v) for k, v in base.items()}
    P = ("esmond_point",)
    extras = {
        "esmond_time": (P, np.array(times, dtype=float), "s", "time of the point (Unix s)"),
        "esmond_line": (P, line, "1", "line where the point starts"),
        "esmond_hist_delay": (("esmond_bin",), bins, "ms", "one-way delay of the histogram bin"),
        "esmond_hist_count": (("esmond_point", "esmond_bin"), counts, "count", "packets in the bin"),
        "esmond_packets_received": (P, received, "count", "packets in the point's delay histogram"),
        "esmond_packets_sent": (P, col["packet-count-sent"], "count", "packet-count-sent"),
        "esmond_packets_lost": (P, col["packet-count-lost"], "count", "packet-count-lost"),
        "esmond_loss_fraction": (P, col["packet-loss-rate"], "1", "packet-loss-rate (fraction)"),
        "esmond_delay_percentile": (("esmond_point", "esmond_percentile"), pct, "ms",
                                    "nearest-rank percentile of the point's delay histogram"),
        "esmond_series_delay_percentile": (("esmond_percentile",), pooled["percentiles"], "ms",
                                           "nearest-rank percentile of all points' histograms pooled"),
    }
    for k, v in (("min", "minimum"), ("mean", "mean"), ("max", "maximum"), ("stddev", "standard deviation")):
        extras[f"esmond_delay_{k}"] = (P, per[k], "ms", f"{v} one-way delay of the point's histogram (weighted)")
        extras[f"esmond_series_delay_{k}"] = ((), pooled[k], "ms", f"{v} one-way delay of all points (weighted)")
    coords = {"esmond_percentile": (("esmond_percentile",), np.array(PERCENTILES), "percent", "percentile")}
    checks = _window_checks(series, meta)
    sent, lost, rate = col["packet-count-sent"], col["packet-count-lost"], col["packet-loss-rate"]
    both = has_hist & np.isfinite(sent) & np.isfinite(lost)
    if both.any():
        checks.append(consistency_check("received: histogram counts vs packet-count-sent - packet-count-lost",
                                        float(received[both].sum()), float((sent - lost)[both].sum()), rtol=0.0))
    ratio = np.isfinite(rate) & np.isfinite(lost) & (sent > 0)
    if ratio.any():
        checks.append(consistency_check("loss: packet-loss-rate vs packet-count-lost / packet-count-sent",
                                        float(rate[ratio].mean()), float((lost[ratio] / sent[ratio]).mean()),
                                        rtol=1e-6))
    summary = {"points": n, "sent": float(np.nansum(sent)) if np.isfinite(sent).any() else None,
               "lost": float(np.nansum(lost)) if np.isfinite(lost).any() else None}
    if summary["sent"] is not None:   # as thruput inspect shows the rtt kind's counts
        summary.update(transmitted=summary["sent"],
                       received=summary["sent"] - (summary["lost"] or 0.0))
    return build("rtt", variables, fmt=fmt, tool=TOOL, ledger=ledger, extras=extras, coords=coords,
                 tool_summary=summary, consistency=checks, attrs=_attrs(series, meta))
