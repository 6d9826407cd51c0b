"""Line prefixes written by timestamping wrappers, for every text format.

Monitoring scripts often log a tool's output through a wrapper that puts the time in
front of every line and adds lines of its own::

    Start time: 1716911120169
    [2024-05-28 11:45:20.247175] PING 35.245.244.238 (35.245.244.238) 38(66) bytes of data.
    [2024-05-28 11:45:20.247627] 46 bytes from 35.245.244.238: icmp_seq=1 ttl=58 time=43.9 ms
    ...
    End time: 1716911150232

:func:`detect` finds the one prefix style (:data:`STYLES`) that most non-blank lines of a
file's head carry; :func:`strip` removes it from every line that has it and returns the
text the format readers know, the time of every line (``datetime64[ns]``, UTC; NaT where
a line has no prefix) and the lines the wrapper added (:data:`WRAPPER_LINES`). Those are
handed on as blank lines, so that every line number (``line``, ``run_line``, errors,
truncation messages) stays the original file's; :func:`account` then books them in the
ledger as ``wrapper line: <name>`` instead of ``blank``, and :func:`apply_times` keeps the
times as data.

Time zone
    Stamps without a zone (all of :data:`STYLES` but the epoch ones) are taken as UTC
    unless ``tz`` (an IANA name such as ``"America/New_York"``) says where they were
    written, or a wrapper ``Start time:`` line (epoch ms: UTC) shows their offset (see
    :func:`strip`); local times that do not exist or are ambiguous (DST changes) become
    NaT. ``attrs["line_prefix_tz"]`` says which zone was used.
Year
    moreutils ``ts``' default form (``Nov 22 15:17:01``) has no year. It is taken from a
    wrapper ``Start time:``/``End time:`` line when the file has one, else from ``year=``;
    without either the times are NaT and ``attrs["line_prefix_note"]`` says why. A stamp
    whose month is earlier than the previous one's starts the next year.

References
    moreutils ``ts(1)`` (formats ``%b %d %H:%M:%S``, ``%Y-%m-%dT%H:%M:%.S``, ``%.s``);
    the wrapper of NUWiNS/starlink-measurement (``[%Y-%m-%d %H:%M:%S.%f]`` and epoch-ms
    ``Start time``/``End time`` lines).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import ParseError
from ..quantities import local_ns

__all__ = ["STYLES", "WRAPPER_LINES", "detect", "strip", "account", "shift_error", "apply_times",
           "Stripped"]

#: Prefix styles: name -> regex of the prefix at a line start (group ``t`` = the stamp;
#: the blank after it is optional because wrappers that strip trailing blanks leave
#: ``[stamp]`` alone on a blank line). Order matters only for ties in :func:`detect`.
STYLES = {
    # [2024-05-27 15:17:01.317910] (python logging-style wrappers, NUWiNS starlink)
    "bracket-datetime": r"\[(?P<t>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d{1,9})?)\](?: |$)",
    # [1716837421.223] (ts "[%.s]"); iputils ping -D prints the same, so a ping -D log is
    # only stripped when its header line carries the stamp too (see detect)
    "bracket-epoch": r"\[(?P<t>\d{9,10}(?:\.\d{1,9})?)\](?: |$)",
    # 2024-05-27T15:17:01.317910 (ts "%Y-%m-%dT%H:%M:%.S"; ts -i and -s are not supported)
    "iso-datetime": r"(?P<t>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d{1,9})?)(?: |$)",
    # Nov 22 15:17:01 (ts's default "%b %d %H:%M:%S", also with "%.S")
    "syslog": r"(?P<t>(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d "
              r"\d\d:\d\d:\d\d(?:\.\d{1,9})?)(?: |$)",
    # 1716837421.223 (ts "%.s")
    "epoch": r"(?P<t>\d{9,10}\.\d{1,9})(?: |$)",
    # no prefix at all, only the wrapper's Start time/End time lines around the tool's own
    # output (a script that echoes them and runs the tool plainly): a prefix that never
    # matches, so that the wrapper lines alone are taken out (found by detect, below)
    "wrapper-lines": r"(?P<t>(?!))",
}
_STYLE_RE = {name: re.compile("^" + pattern, re.ASCII) for name, pattern in STYLES.items()}
#: One match per line: its stamp ("" if the line has no prefix).
_STAMP_RE = {name: re.compile(r"(?m)^(?:" + pattern + r")?[^\n]*$", re.ASCII)
             for name, pattern in STYLES.items()}
#: The prefix at a line start (removed by one ``sub``: no object per line).
_PREFIX_RE = {name: re.compile(r"(?m)^(?:" + pattern + r")", re.ASCII) for name, pattern in STYLES.items()}

#: Lines a wrapper adds around the tool's output: name -> regex (group 1: epoch ms).
WRAPPER_LINES = {
    "Start time": re.compile(r"^Start time: (\d{10,16})$", re.ASCII),
    "End time": re.compile(r"^End time: (\d{10,16})$", re.ASCII),
}
_WRAPPER_ANY = re.compile(r"(?m)^(Start time|End time): (\d{10,16})$", re.ASCII)
#: The first Unix time in ms that datetime64[ns] cannot hold (2262-04-11).
_MAX_MS = (2**63 - 1) // 1_000_000

#: The share of non-blank head lines (wrapper lines left out) that must carry the prefix.
MIN_SHARE = 0.8
#: Fewest prefixed lines in the head for a style to count as found.
MIN_LINES = 2

_MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
_EPOCH_STYLES = ("bracket-epoch", "epoch")
_NAT = np.datetime64("NaT", "ns")


@dataclass
class Stripped:
    """The result of :func:`strip`."""

    style: str
    #: The text with prefixes removed and wrapper lines blanked (same line count).
    text: str
    #: Time of each line (datetime64[ns] UTC), NaT where the line has no prefix.
    times: np.ndarray
    #: Wrapper lines: (1-based line, name, time as datetime64[ns] UTC).
    wrapper: list = field(default_factory=list)
    #: Why times are missing, if they are (a year-less style without a year).
    note: str = ""
    tz: str = "UTC"
    #: Wrapper lines at the top, left out of ``text`` (line numbers of the text + offset
    #: = line numbers of the file).
    offset: int = 0


def _lines_of_head(head):
    lines = head.split("\n")
    if len(lines) > 1 and not head.endswith("\n"):
        lines.pop()  # the last line of a head may be cut
    return [ln for ln in lines if ln.strip() and not _is_wrapper(ln)]


def _is_wrapper(line):
    return any(p.match(line) for p in WRAPPER_LINES.values())


def _first_line(head):
    """The first line of :func:`_lines_of_head`, or None: found without splitting the
    whole head (a plain log is decided by it alone)."""
    pos = 0
    while True:
        end = head.find("\n", pos)
        if end < 0:                     # the last line, if it is not the only one, may be cut
            line = head if pos == 0 else ""
            return line if line.strip() and not _is_wrapper(line) else None
        line = head[pos:end]
        if line.strip() and not _is_wrapper(line):
            return line
        pos = end + 1


def detect(head):
    """The name of the prefix style of ``head`` (the first few KB of a text), or None.

    A style is found when the first non-blank line (wrapper lines left out) carries it,
    and so do at least :data:`MIN_SHARE` of those lines and at least :data:`MIN_LINES`.
    The first line decides between a wrapper and a tool's own stamps: iputils ``ping -D``
    prints ``[1594978465.914536]`` before its replies, but not before its header. A head
    whose lines carry no prefix but that holds a wrapper's ``Start time:``/``End time:``
    lines is ``"wrapper-lines"`` (those lines are taken out, no line has a time).
    Never raises.
    """
    try:
        first = _first_line(head)
        candidates = {n: p for n, p in _STYLE_RE.items() if first is not None and p.match(first)}
        if not candidates:          # the usual case, a plain log: decided by its first line
            return "wrapper-lines" if _WRAPPER_ANY.search(head) else None
        lines = _lines_of_head(head)
        if not lines:
            return None
        best, best_count = None, 0
        for name, pattern in candidates.items():
            if not pattern.match(lines[0]):
                continue
            count = sum(1 for ln in lines if pattern.match(ln))
            if count > best_count:
                best, best_count = name, count
        if best_count >= max(MIN_LINES, MIN_SHARE * len(lines)) or (
                best_count == len(lines) == 1):
            return best
        return None
    except Exception:  # detection, like sniffing, never raises
        return None


def strip(text, style, *, tz=None, year=None):
    """Remove the ``style`` prefix from every line of ``text`` that has it.

    Parameters
    ----------
    text : str
        The whole file (LF line ends).
    style : str
        A key of :data:`STYLES`.
    tz : str, optional
        IANA zone of zone-less stamps. By default UTC, unless a wrapper ``Start time:``
        line (epoch ms, a true UTC time) shows that the stamps are local: then the whole
        hours or quarter hours between it and the first stamp are the offset, said in
        ``Stripped.tz`` (the starlink-drive logs were stamped in US Eastern time).
    year : int, optional
        Year of year-less stamps (``syslog`` style) when no wrapper line tells it.

    Returns
    -------
    Stripped
        Wrapper lines at the top of the file are left out of ``text`` (``offset`` says how
        many: sniffers and readers look at the first line); later ones become blank lines.
    """
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    stamps = _STAMP_RE[style].findall(text)
    del stamps[n_lines:]  # the pattern also matches the empty string after a final "\n"
    body = _PREFIX_RE[style].sub("", text)   # (every line in its place, prefixes cut)
    wrapper, spans, line, pos = [], [], 0, 0
    for match in _WRAPPER_ANY.finditer(body):
        line += body.count("\n", pos, match.start())
        pos = match.start()
        if stamps[line] == "":  # a wrapper line carries no prefix
            ms = int(match.group(2))        # (beyond datetime64[ns], year 2262: unknown)
            when = np.datetime64(ms, "ms").astype("datetime64[ns]") if ms < _MAX_MS else _NAT
            wrapper.append((line + 1, match.group(1), when))
            spans.append(match.span())
    offset = 0
    while offset < len(wrapper) and wrapper[offset][0] == offset + 1:
        offset += 1
    out = Stripped(style=style, text=_blanked(body, spans, offset, n_lines),
                   times=np.full(n_lines, _NAT), wrapper=wrapper, offset=offset)
    if year is None and wrapper:
        year = int(str(wrapper[0][2])[:4])
    out.times, out.note = _times(stamps, style, "UTC", year)
    if tz is None:
        tz = _offset_from_wrapper(out.times, wrapper, style) or "UTC"
    if tz not in _UTC_NAMES:
        out.times, out.note = _times(stamps, style, tz, year)
    out.tz = tz
    return out


def _blanked(body, spans, offset, n_lines):
    """``body`` with its wrapper lines (``spans``, each a whole line) made blank, the first
    ``offset`` of them (the top lines) left out."""
    if offset == n_lines:   # nothing but wrapper lines
        return "\n" if body.endswith("\n") else ""
    start = spans[offset - 1][1] + 1 if offset else 0
    parts = []
    for left, right in spans[offset:]:
        parts.append(body[start:left])
        start = right
    if not parts:
        return body[start:] if start else body
    parts.append(body[start:])
    return "".join(parts)


#: Names of UTC for ``tz``.
_UTC_NAMES = ("UTC", "utc", "Z")
#: How long after a wrapper's ``Start time`` its first prefixed line may come (s).
START_TO_FIRST_LINE_MAX_S = 600


def _offset_from_wrapper(times, wrapper, style):
    """The fixed UTC offset (``"UTC-04:00"``) of zone-less stamps, from a Start time line.

    None when the stamps carry their zone (epoch), there is no Start time line, or the
    first stamp is not within :data:`START_TO_FIRST_LINE_MAX_S` after it once shifted by
    a multiple of 15 minutes.
    """
    starts = [t for _, name, t in wrapper if name == "Start time"]
    stamped = times[~np.isnat(times)]
    if style in _EPOCH_STYLES or not starts or not stamped.size:
        return None
    gap = (stamped[0] - starts[0]) / np.timedelta64(1, "s")  # local - UTC + delay
    quarter = 900 * round(gap / 900)
    if not 0 <= gap - quarter <= START_TO_FIRST_LINE_MAX_S or quarter == 0:
        return None
    sign = "+" if quarter > 0 else "-"
    hours, minutes = divmod(abs(int(quarter)) // 60, 60)
    return f"UTC{sign}{hours:02d}:{minutes:02d}"


def _times(stamps, style, tz, year):
    """The stamps as datetime64[ns] UTC (NaT where empty), and a note if all are unknown."""
    stamps = np.asarray(stamps, dtype=object)
    present = stamps != ""
    times = np.full(len(stamps), _NAT)
    if not present.any():
        return times, ""
    values = stamps[present]
    if style in _EPOCH_STYLES:
        try:   # (9999999999.9 s is past datetime64[ns]'s year 2262)
            times[present] = [_epoch_ns(v) for v in values]
        except OverflowError:
            raise _bad_stamp(values, np.flatnonzero(present), _epoch_ns) from None
        return times, ""
    if style == "syslog":
        if year is None:
            return times, ("year-less stamps (ts default form) and no year known: times are NaT "
                           "(pass year=)")
        values = _syslog_iso(values, year)
    try:
        local = local_ns([v.replace("T", " ") for v in values])
    except ValueError:  # a stamp of the right shape that is no time (month 13, second 84,
        # a year datetime64[ns] cannot hold)
        raise _bad_stamp(values, np.flatnonzero(present), _iso_ns) from None
    times[present] = _to_utc(local, tz)
    return times, ""


def _iso_ns(value):
    return local_ns([value.replace("T", " ")])[0]


def _bad_stamp(values, lines, convert):
    """The ParseError naming the first of ``values`` (at 0-based ``lines``) that
    ``convert`` does not take."""
    for value, line in zip(values, lines):
        try:
            convert(value)
        except (ValueError, OverflowError):
            return ParseError(f"wrapper time stamp {value!r} is not a valid time", line=int(line) + 1)
    return ParseError("a wrapper time stamp is not a valid time")


def _epoch_ns(value):
    """Unix seconds as text -> datetime64[ns], exactly (no float rounding)."""
    whole, _, frac = value.partition(".")
    return np.datetime64(int(whole) * 1_000_000_000 + int((frac + "000000000")[:9]), "ns")


def _syslog_iso(values, year):
    """``Nov 22 15:17:01`` stamps with years (a month earlier than before: next year)."""
    out, last = [], 0
    for v in values:
        month = _MONTHS[v[:3]]
        if month < last:
            year += 1
        last = month
        day = int(v[4:6])   # (" 7" or "07"; a bad day is caught by _times)
        out.append(f"{year:04d}-{month:02d}-{day:02d} {v[7:]}")
    return out


def _to_utc(local, tz):
    if tz in (None, *_UTC_NAMES):
        return local
    fixed = re.fullmatch(r"UTC([+-])(\d\d):(\d\d)", tz)
    if fixed:  # a fixed offset found by _offset_from_wrapper
        minutes = int(fixed.group(2)) * 60 + int(fixed.group(3))
        return local - (1 if fixed.group(1) == "+" else -1) * np.timedelta64(minutes, "m")
    import pandas as pd

    index = pd.DatetimeIndex(local).tz_localize(tz, ambiguous="NaT", nonexistent="NaT")
    return index.tz_convert("UTC").tz_localize(None).to_numpy("datetime64[ns]")


# ---------------------------------------------------------------------------------------
# Back to the original file: accounting and times as data


#: Line numbers inside messages (truncation), shifted by :func:`account`.
_LINE_IN_MESSAGE = re.compile(r"(\bline )(\d+)")


def account(ds, stripped):
    """Line numbers and accounting of the file: shift by the wrapper lines left out at the
    top, and book every wrapper line as a ``wrapper line: <name>`` skip (later ones were
    read as blank lines)."""
    k = stripped.offset
    reasons = json.loads(ds.attrs["skipped_reasons"])
    for i, (_, name, _) in enumerate(stripped.wrapper):
        if i >= k:  # handed on as a blank line
            if reasons.get("blank", 0) <= 0:
                continue
            reasons["blank"] -= 1
            if not reasons["blank"]:
                del reasons["blank"]
        key = f"wrapper line: {name}"
        reasons[key] = reasons.get(key, 0) + 1
    ds.attrs["skipped_reasons"] = json.dumps(reasons, sort_keys=True)
    if not k:
        return ds
    ds.attrs["lines_total"] = int(ds.attrs["lines_total"]) + k
    ds.attrs["lines_skipped"] = int(ds.attrs["lines_skipped"]) + k
    ds.attrs["truncation"] = _LINE_IN_MESSAGE.sub(
        lambda m: m.group(1) + str(int(m.group(2)) + k), ds.attrs["truncation"])
    for name in list(ds.variables):
        if name == "line" or name.endswith("_line"):
            values = ds[name].values
            if values.dtype.kind == "i":
                ds[name].values = np.where(values >= 1, values + k, values)
    return ds


def shift_error(exc, stripped):
    """A :class:`~thruput.errors.ParseError` of the stripped text, with the file's lines."""
    k = stripped.offset
    if not k:
        return exc

    def shift(line):
        return line + k if isinstance(line, int) and line >= 1 else line

    return type(exc)(exc.message, shift(exc.line), exc.path,
                     [(shift(line), message) for line, message in exc.errors])


def _iso(t):
    return "" if np.isnat(t) else str(np.datetime_as_string(t, unit="us")) + "Z"


def apply_times(ds, stripped):
    """Keep the prefix times as data and say in ``attrs`` which wrapper was found.

    ``rtt``: probes whose ``timestamp`` is NaN (ping printed none) get the time of their
    line's prefix, in Unix seconds; where ping printed one too (``-D``), it is kept and
    the prefix time goes into ``<tool>_prefix_time``. ``throughput``: runs whose
    ``start_time`` is NaT get the time of their ``run_line``'s prefix. ``route``: a
    ``route_time`` of NaT becomes the time of the first stamped line (the header). Attrs:
    ``line_prefix`` (the style), ``line_prefix_tz``, ``line_prefix_wrapper`` (JSON
    ``{name: ISO time}`` of the wrapper lines) and ``line_prefix_note``.
    """
    times = stripped.times
    kind = ds.attrs["kind"]

    def at(lines):
        lines = np.asarray(lines, dtype=np.int64)
        ok = (lines >= 1) & (lines <= len(times))
        out = np.full(lines.shape, _NAT)
        out[ok] = times[lines[ok] - 1]
        return out

    if kind == "rtt" and "timestamp" in ds and "line" in ds:
        prefix = at(ds["line"].values)
        unix = np.where(np.isnat(prefix), np.nan,
                        prefix.astype("datetime64[ns]").astype(np.int64) / 1e9)
        old = ds["timestamp"].values
        both = ~np.isnan(old) & ~np.isnan(unix)
        ds["timestamp"].values = np.where(np.isnan(old), unix, old)
        if both.any():
            name = f"{ds.attrs['tool']}_prefix_time"
            ds[name] = ("probe", unix, {"units": "s",
                                        "long_name": "time of the line's wrapper prefix (Unix time)"})
    elif kind == "throughput" and "start_time" in ds and "run_line" in ds:
        old = ds["start_time"].values
        ds["start_time"].values = np.where(np.isnat(old), at(ds["run_line"].values), old)
    elif kind == "route" and "route_time" in ds and np.isnat(ds["route_time"].values):
        stamped = times[~np.isnat(times)]       # (the first stamped line: the header)
        if stamped.size:
            ds["route_time"].values = stamped[0]
    ds.attrs["line_prefix"] = stripped.style
    ds.attrs["line_prefix_tz"] = stripped.tz
    ds.attrs["line_prefix_wrapper"] = json.dumps({name: _iso(t) for _, name, t in stripped.wrapper})
    ds.attrs["line_prefix_note"] = stripped.note
    return ds
