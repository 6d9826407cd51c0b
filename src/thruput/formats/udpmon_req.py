"""UDPmon ``udpmon_req``: request-response latency over the response size.

``udpmon_req`` (UDPmon 1.x) sends ``-l`` requests of ``-r`` bytes and times the response,
stepping the response length from ``-i`` to ``-e``. After the banner shared with
``udpmon_bw_mon`` (see :func:`thruput.formats.udpmon_bw.parse_banner`) it prints one header
row and one ``;``-separated row per response length::

    response len bytes; Req len;  loop_count;  num_bad; time/frame (tod); ave time us; ...
     64;  64;  1000;   0;  19.463;   19.408;   16.14;  925.151; 0

With ``-H`` a histogram of the request-response times follows the row it belongs to: a
``Hist <id> <title>`` line, a ``counts N mean M underflows U overflows O`` line, one
``<bin> ; <count>`` line per bin (bin value in µs, width ``-b``, from ``-m``) and three
lines of statistics (counts/underflows/overflows; mean/sigma/skew/kurtosis;
median/quartiles).

Schema (kind ``latency_scan``, dimension ``point``)
---------------------------------------------------
Shared: ``size`` (response length, byte), ``request_size`` (byte), ``count`` (exchanges),
``latency_avg``, ``latency_min``, ``latency_max`` (us), ``line``. Extras:
``udpmon_num_bad``, ``udpmon_timeouts`` (count), ``udpmon_time_per_frame`` (us, from the
time of day). With ``-H``: ``udpmon_hist_counts`` on (``point``, ``udpmon_hist_bin``)
(NaN where a point has no histogram), the coordinate ``udpmon_hist_bin`` (us) and the
printed statistics ``udpmon_hist_entries``, ``_underflows``, ``_overflows``, ``_mean``,
``_sigma``, ``_skew``, ``_kurtosis``, ``_median``, ``_q25``, ``_q75`` on ``point``;
``tool_summary["histograms"]`` keeps the printed statistics of each histogram.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import re

import numpy as np

from ..contract import Ledger, build, consistency_check, split_lines
from ..errors import ParseError
from .udpmon_bw import parse_banner

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "udpmon_req"
KIND = "latency_scan"
TOOL = "udpmon"
BINARY = False

#: Header columns -> (variable, units, long_name or None for a shared name).
COLUMNS = {
    "response len bytes": ("size", "byte", None),
    "Req len": ("request_size", "byte", None),
    "loop_count": ("count", "count", None),
    "num_bad": ("udpmon_num_bad", "count", "responses with bad content"),
    "time/frame (tod)": ("udpmon_time_per_frame", "us", "elapsed time of day per exchange"),
    "ave time us": ("latency_avg", "us", None),
    "min time": ("latency_min", "us", None),
    "max time": ("latency_max", "us", None),
    "num timeouts": ("udpmon_timeouts", "count", "requests that timed out"),
}
HEADER_RE = re.compile(r"^\s*response len bytes;")
ROW_RE = re.compile(r"^\s*\d+;")
#: The last row cut off before its first ``;`` (only the start of the response length).
ROW_PREFIX_RE = re.compile(r"^\s*\d*$")
_NUMBER_RE = re.compile(r"^[-+]?(\d+(?:\.\d*)?|\.\d+)([eE][-+]?\d+)?$")

#: A number as C's printf ``%g``/``%f`` writes it (``nan``/``inf`` for an empty histogram).
_HIST_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)"
#: -H histogram: title, opening summary, bins, and the three closing statistics lines.
HIST_TITLE_RE = re.compile(r"^Hist\s+(?P<id>\d+)\s+(?P<title>.*\S|)\s*$")
HIST_OPEN_RE = re.compile(rf"^\s*counts (?P<entries>\d+) mean (?P<mean>{_HIST_NUM}) underflows "
                          r"(?P<underflows>\d+) overflows (?P<overflows>\d+)\s*$")
HIST_BIN_RE = re.compile(r"^\s*(?P<bin>-?\d+(?:\.\d*)?) ; (?P<count>\d+)\s*$")
HIST_CLOSE_RES = (
    re.compile(r"^\s*counts (?P<entries>\d+); underflows (?P<underflows>\d+); overflows (?P<overflows>\d+);\s*$"),
    re.compile(rf"^\s*mean (?P<mean>{_HIST_NUM}) sigma (?P<sigma>{_HIST_NUM}); coeff_skew (?P<skew>{_HIST_NUM}); "
               rf"coeff_kurtosis (?P<kurtosis>{_HIST_NUM});\s*$"),
    re.compile(rf"^\s*median (?P<median>{_HIST_NUM}); 25-quartile (?P<q25>{_HIST_NUM}); "
               rf"75-quartile (?P<q75>{_HIST_NUM});\s*$"),
)
#: Printed histogram statistics -> (extra variable, units, long_name).
HIST_STATS = {
    "entries": ("udpmon_hist_entries", "count", "histogram entries within range (-H)"),
    "underflows": ("udpmon_hist_underflows", "count", "exchanges below the histogram range (-H)"),
    "overflows": ("udpmon_hist_overflows", "count", "exchanges above the histogram range (-H)"),
    "mean": ("udpmon_hist_mean", "us", "mean request-response time of the histogram (-H)"),
    "sigma": ("udpmon_hist_sigma", "us", "standard deviation of the histogram (-H)"),
    "skew": ("udpmon_hist_skew", "1", "coefficient of skewness of the histogram (-H)"),
    "kurtosis": ("udpmon_hist_kurtosis", "1", "coefficient of kurtosis of the histogram (-H)"),
    "median": ("udpmon_hist_median", "us", "median of the histogram (-H)"),
    "q25": ("udpmon_hist_q25", "us", "25 % quartile of the histogram (-H)"),
    "q75": ("udpmon_hist_q75", "us", "75 % quartile of the histogram (-H)"),
}


def sniff(head: str) -> bool:
    """True for udpmon_req output: its banner or its header row."""
    if "udpmon_req" in head and "UDPmon Version" in head:
        return True
    return bool(re.search(r"^\s*response len bytes; Req len;", head, re.M))


def parse(text: str) -> xr.Dataset:
    """Parse udpmon_req output (with or without ``-H``) into a ``latency_scan`` Dataset."""
    if not text.strip():
        raise ParseError("empty input")
    lines = split_lines(text)
    ledger = Ledger(len(lines), lines=lines)
    attrs, i = parse_banner(lines, ledger)
    tool_version = attrs.pop("tool_version", "")
    columns = None
    points = []        # (line, {column: str}, histogram dict or None)
    n = i
    while n < len(lines):
        line, lineno = lines[n], n + 1
        if not line.strip():
            ledger.skip(lineno, "blank")
        elif HEADER_RE.match(line):
            columns = [t.strip() for t in line.split(";") if t.strip()]
            unknown = [c for c in columns if c not in COLUMNS]
            if unknown:
                ledger.error(lineno, f"unknown udpmon_req columns {unknown}")
                columns = None
            ledger.skip(lineno, "header")
        elif columns is not None and (ROW_RE.match(line) or (n == len(lines) - 1 and ROW_PREFIX_RE.match(line))):
            values = [t.strip() for t in line.split(";")]
            values = values[: len(columns)] if len(values) >= len(columns) else values
            if len(values) == len(columns) and all(_NUMBER_RE.match(v) for v in values) \
                    and not "".join(line.split(";")[len(columns):]).strip():
                points.append([lineno, dict(zip(columns, values)), None])
                ledger.parsed(lineno)
            elif n == len(lines) - 1 and not text.endswith("\n"):
                ledger.cut_off(lineno, "row")
            else:
                ledger.error(lineno, f"bad udpmon_req row: expected {len(columns)} numeric columns")
        elif (m := HIST_TITLE_RE.match(line)) and points:
            n = _histogram(lines, n, m, points[-1], ledger, cut=not text.endswith("\n"))
        n += 1
    return _process(points, ledger, attrs, tool_version)


def _histogram(lines, n, title, point, ledger, cut=False):
    """Read one -H histogram starting at index ``n``; return the index of its last line.

    ``cut``: the text's last line has no line end (cut off mid-line).
    """
    start = n
    hist = {"title": title["title"], "bins": [], "counts": []}
    ledger.parsed(n + 1)
    n += 1
    if n < len(lines) and (m := HIST_OPEN_RE.match(lines[n])):
        hist.update(m.groupdict())
        hist["open"] = m.groupdict()    # printed again by the closing lines: checked
        ledger.parsed(n + 1)
        n += 1
    while n < len(lines) and (m := HIST_BIN_RE.match(lines[n])):
        hist["bins"].append(m["bin"])
        hist["counts"].append(m["count"])
        ledger.parsed(n + 1)
        n += 1
    for regex in HIST_CLOSE_RES:
        m = regex.match(lines[n]) if n < len(lines) else None
        if m is None:
            break
        hist.update(m.groupdict())
        ledger.parsed(n + 1)
        n += 1
    else:
        point[2] = hist
        return n - 1
    if n >= len(lines) or (n == len(lines) - 1 and (cut or not lines[n].strip())):
        # cut off before its closing statistics (a line cut mid-way goes with it): the
        # histogram is incomplete, drop it
        end = n + 1 if n < len(lines) and lines[n].strip() else n
        ledger.skip(np.arange(start + 1, end + 1), "truncated histogram")
        ledger.truncated(f"histogram starting at line {start + 1} cut off")
        return end - 1
    ledger.error(n + 1, "bad udpmon_req histogram line")
    return n - 1


def _process(points, ledger, attrs, tool_version):
    """Every type conversion: strings -> arrays with units; assemble the Dataset."""
    if not points:
        # nothing measured (e.g. cut off before the first row): an error, not an empty sweep;
        # unrecognised lines are reported first
        ledger.close()
        raise ParseError("no data rows" + (f" ({ledger.truncation})" if ledger.truncation else ""))
    n = len(points)
    variables, extras, coords = {}, {}, {}
    for col, (name, units, long_name) in COLUMNS.items():
        values = np.array([float(p[1].get(col, "nan")) for p in points], dtype=float)
        if long_name is None:
            variables[name] = (("point",), values)
        elif any(col in p[1] for p in points):
            extras[name] = (("point",), values, units, long_name)
    variables["line"] = (("point",), np.array([p[0] for p in points], dtype=np.int64))
    tool_summary = {"points": n}
    checks = []
    hists = [p[2] for p in points]
    if any(hists):
        bins = sorted({float(b) for h in hists if h for b in h["bins"]})
        index = {b: k for k, b in enumerate(bins)}
        counts = np.full((n, len(bins)), np.nan)
        for i, h in enumerate(hists):
            if h:
                counts[i] = 0.0
                for b, c in zip(h["bins"], h["counts"]):
                    counts[i, index[float(b)]] = float(c)
        coords["udpmon_hist_bin"] = (("udpmon_hist_bin",), np.array(bins), "us",
                                     "histogram bin of the request-response time, as printed (-H)")
        extras["udpmon_hist_counts"] = (("point", "udpmon_hist_bin"), counts, "count",
                                        "exchanges per request-response time bin (-H)")
        for key, (name, units, long_name) in HIST_STATS.items():
            extras[name] = (("point",), np.array([float(h[key]) if h and key in h else np.nan for h in hists]),
                            units, long_name)
        attrs["udpmon_hist_title"] = next(h["title"] for h in hists if h)
        tool_summary["histograms"] = [
            {k: float(h[k]) for k in HIST_STATS if k in h} if h else None for h in hists]
        checks = _consistency(hists, counts, variables["count"][1], variables["line"][1])
    return build(KIND, variables, fmt=NAME, tool=TOOL, tool_version=tool_version, ledger=ledger,
                 extras=extras, coords=coords, attrs=attrs, tool_summary=tool_summary, consistency=checks)


#: The histogram's mean and sigma are printed with 4 significant digits (``42.51``,
#: ``31.24``): half a unit of the last is at most 5e-4 of the value. UDPmon computes them
#: from the bins' labels (42.5076 from the recorded sample's bins, printed 42.51).
HIST_STAT_RTOL = 5e-4


def _consistency(hists, counts, loop_count, lines):
    """Per -H histogram: its bins add up to its printed entries, and entries, underflows
    and overflows to the row's loop_count (counts are integers: exact); the figures of its
    opening line equal those printed again at its end; its mean and sigma are the bins'
    (:data:`HIST_STAT_RTOL`), its median and quartiles the bins where the cumulative count
    crosses a half and a quarter (one bin apart at most: which side of the crossing)."""
    checks = []
    for i, h in enumerate(hists):
        if not h or "entries" not in h:
            continue
        where = f"point at line {int(lines[i])}: histogram "
        checks.append(consistency_check(where + "entries vs the sum of its bins", float(h["entries"]),
                                        float(np.nansum(counts[i])), rtol=0.0))
        if "underflows" in h and "overflows" in h:
            checks.append(consistency_check(
                where + "entries + underflows + overflows vs loop_count", float(loop_count[i]),
                float(h["entries"]) + float(h["underflows"]) + float(h["overflows"]), rtol=0.0))
        for key, value in h.get("open", {}).items():
            if key in h:
                checks.append(consistency_check(where + f"{key}: opening line vs closing lines",
                                                float(value), float(h[key]), rtol=0.0))
        checks.extend(_bin_checks(where, h))
    return checks


def _bin_checks(where, h):
    """The printed mean, sigma, median and quartiles of histogram ``h`` against its bins."""
    labels = np.array([float(b) for b in h["bins"]])
    weights = np.array([float(c) for c in h["counts"]])
    total = weights.sum()
    if not total > 0 or len(labels) < 2:
        return []
    width = float(np.min(np.diff(labels))) if len(labels) > 1 else 1.0
    # (a bin label beyond float64, in a damaged file, makes the mean NaN or inf: its
    # check then fails and says so, with no warning from NumPy)
    with np.errstate(invalid="ignore", over="ignore"):
        mean = float((labels * weights).sum() / total)
        sigma = float(np.sqrt((((labels - mean) ** 2) * weights).sum() / total))
    cumulative = np.cumsum(weights)
    checks = []
    for key, data in (("mean", mean), ("sigma", sigma)):
        if key in h:
            checks.append(consistency_check(where + f"{key} vs its bins", float(h[key]), data,
                                            rtol=HIST_STAT_RTOL, note="4 significant digits printed"))
    for key, share in (("median", 0.5), ("q25", 0.25), ("q75", 0.75)):
        if key in h:
            crossing = float(labels[min(int(np.searchsorted(cumulative, share * total)), len(labels) - 1)])
            checks.append(consistency_check(where + f"{key} vs the bin where its bins' count crosses {share:g}",
                                            float(h[key]), crossing, rtol=0.0, atol=width,
                                            note="one bin either side of the crossing"))
    return checks
