"""Run start times as the throughput tools print them, to ``datetime64[ns]`` UTC.

Every reader of a throughput format fills the contract's ``start_time`` (NaT where the log
does not say) through these functions, so that the zone each tool means is stated once.
"""

from __future__ import annotations

import datetime as _dt
import re

import numpy as np

__all__ = ["NAT", "unix_to_datetime", "from_text", "from_iso"]

NAT = np.datetime64("NaT", "ns")

#: Printed time stamps: regex -> (strptime format, zone the tool means).
#: iperf3 ``-V`` prints ``Time: Sun, 25 Jul 2021 13:00:23 UTC`` (``GMT`` in 3.0-3.1);
#: ``--timestamps`` prefixes lines with ``Sun Nov 22 13:53:16 2026`` (local time: its
#: default format is ``%c``, the zone is not printed; assumed UTC, as on servers).
#: iperf 2.1 ``-e`` ends a connection line with ``on 2026-11-22 13:53:16 (UTC)``.
#: iperf 2 CSV (``-y C``) starts each row with ``YYYYMMDDHHMMSS[.mmm]``, the writer's
#: local time with no zone; 2.1.9+ may prefix ``+HHMM:`` (the offset).
_FORMATS = (
    (re.compile(r"^\w{3}, \d\d? \w{3} \d{4} \d\d:\d\d:\d\d (?:UTC|GMT)$"), "%a, %d %b %Y %H:%M:%S"),
    (re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: \(UTC\))?$"), "%Y-%m-%d %H:%M:%S"),
    (re.compile(r"^\d{14}(?:\.\d+)?$"), "%Y%m%d%H%M%S"),
    (re.compile(r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$"), "%a %b %d %H:%M:%S %Y"),
)
_OFFSET = re.compile(r"^(?P<sign>[+-])(?P<hh>\d\d):?(?P<mm>\d\d):(?P<rest>.*)$")
#: Years a stamp may name: outside, it is a placeholder (iperf 2.1.8 prints 1970) or noise.
_YEARS = (1990, 2200)


def unix_to_datetime(seconds):
    """Unix times (s, float array; NaN = unknown) -> ``datetime64[ns]`` (NaT where unknown)."""
    values = np.asarray(seconds, dtype=float)
    out = np.full(values.shape, NAT)
    ok = np.isfinite(values) & (values > 0) & (values < 7.2e9)   # year 2198: no overflow
    out[ok] = (values[ok] * 1e9).astype("int64").astype("datetime64[ns]")
    return out


def from_iso(text):
    """An ISO 8601 UTC time (``2017-02-21T20:55:11.677001Z``, flent's ``T0``) ->
    ``datetime64[ns]``, exact to the digit (no float seconds in between); NaT if unreadable."""
    try:
        when = _dt.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return NAT
    if when.tzinfo is not None:
        when = when.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    if not _YEARS[0] <= when.year <= _YEARS[1]:
        return NAT
    return np.datetime64(when, "ns")


def from_text(stamp):
    """One printed time stamp (see ``_FORMATS``) -> ``datetime64[ns]`` UTC, NaT if unknown.

    A zone-less stamp is taken as UTC; a ``+HHMM:`` offset prefix (iperf 2 CSV) is applied.
    """
    if not stamp:
        return NAT
    stamp = stamp.strip()
    offset = _dt.timedelta(0)
    m = _OFFSET.match(stamp)
    if m:
        sign = 1 if m["sign"] == "+" else -1
        offset = sign * _dt.timedelta(hours=int(m["hh"]), minutes=int(m["mm"]))
        stamp = m["rest"]
    for regex, fmt in _FORMATS:
        if regex.match(stamp):
            head, _, fraction = stamp.partition(".") if "." in stamp and fmt[-2:] == "%S" else (stamp, "", "")
            head = re.sub(r" \((?:UTC)\)$| (?:UTC|GMT)$", "", head)
            fraction = re.sub(r"\D.*$", "", fraction)
            try:
                when = _dt.datetime.strptime(head, fmt)
            except ValueError:
                return NAT
            if not _YEARS[0] <= when.year <= _YEARS[1]:
                return NAT
            when = when - offset + _dt.timedelta(seconds=float(f"0.{fraction}") if fraction else 0.0)
            return np.datetime64(when.replace(tzinfo=None), "ns")
    return NAT

