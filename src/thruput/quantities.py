"""The one parser of the sizes, durations and times a user or runs.csv writes.

``parse_size("64K")``
    Bytes (1024-based suffixes K, M, G; ``KiB``/``KB`` alike): window sizes, ``--sizes``.
``parse_duration("95m")``
    Seconds (units s, m/min, h, d; none: seconds): ``--duration``, schedules.
``parse_time("2026-11-22T20:25:00Z")``
    Seconds since the Unix epoch (ISO 8601, a datetime, a date or a number; no zone: UTC).
``iso_ns("2026-11-22T20:25:00.123Z")``
    Naive UTC ``datetime64[ns]`` (``NaT`` for ``""``): runs.csv's ``started``;
    :func:`iso_ns_many` for a column of them at once.
``as_utc("2026-11-22T21:25:00+01:00")``
    Naive UTC ``datetime64[ns]`` of any time pandas reads (a zone converted, none: UTC):
    the periods and events a user writes in params.yaml and campaign.yaml.
``utc_iso(seconds)``
    The other way: ISO 8601 UTC text, to the millisecond (runs.csv) or the second
    (``decimals=0``: campaign.yaml's dates).
"""

from __future__ import annotations

import datetime as dt
import re
import time

import numpy as np

__all__ = ["SIZE_SUFFIXES", "DURATION_UNITS", "ISO_UTC", "ISO_8601", "NS_YEARS", "ISO_TIME_TEXT", "parse_size",
           "parse_duration", "parse_time", "iso_ns", "iso_ns_many", "local_ns", "as_utc", "utc_iso"]

#: Size suffixes (case-insensitive), 1024-based.
SIZE_SUFFIXES = {"": 1, "b": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgb]?)(?:i?b)?\s*$", re.IGNORECASE)
#: Duration units, seconds.
DURATION_UNITS = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([a-z]*)\s*$")
#: ISO 8601 in UTC or without an offset, as the recorder writes it: parsed by NumPy
#: (1 us; pandas takes 16 us, and a monitor archive has a row per test).
ISO_UTC = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z?", re.ASCII)
#: The ISO 8601 (RFC 3339) times :func:`iso_ns` takes: a date, then optionally a time
#: (``T`` or a space, minutes, seconds, up to 9 decimals) and a zone (``Z`` or an offset).
#: Nothing else: pandas, which parses the ones with an offset, would also take ``now`` and
#: ``today`` (the clock: a normalize that is never the same twice) and ``1/2/2026``
#: (January or February?).
ISO_8601 = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?)?"
                      r"(?:Z|[+-]\d{2}(?::?\d{2})?)?", re.ASCII)


def parse_size(text):
    """``"64K"`` -> 65536 bytes; a positive whole number of bytes, else ValueError."""
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"bad size {text!r}; use bytes or a number with K, M or G (1024-based)")
    value = float(m[1]) * SIZE_SUFFIXES[m[2].lower()]
    if value != int(value) or value <= 0:
        raise ValueError(f"bad size {text!r}: not a positive whole number of bytes")
    return int(value)


def parse_duration(text):
    """``"95m"`` -> 5700.0 (s); units s, m, min, h, d, w (none, or a number: seconds);
    else ValueError."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    m = _DURATION.match(str(text).strip().lower())
    if not m or m.group(2) not in DURATION_UNITS:
        raise ValueError(f"bad duration {text!r}: use e.g. 90s, 95m, 2h, 7d, 2w")
    return float(m.group(1)) * DURATION_UNITS[m.group(2)]


def utc_iso(seconds=None, decimals=3):
    """Unix seconds (default: now) as ISO 8601 UTC with ``decimals`` (0 to 6, cut, not
    rounded) of the second: ``2026-11-22T18:00:00.123Z``, as runs.csv's ``started`` is
    written; ``decimals=0``: ``2026-11-22T18:00:00Z``, as campaign.yaml's dates are."""
    seconds = time.time() if seconds is None else seconds
    text = dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")
    return (text[:20 + decimals] if decimals else text[:19]) + "Z"


def parse_time(value):
    """Seconds since the Unix epoch from an ISO 8601 string, a datetime, a date or a
    number (None stays None). A time without a zone is taken as UTC."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return value.timestamp()


def iso_ns(text):
    """ISO 8601 (:data:`ISO_8601`, any offset) -> naive UTC datetime64[ns]; NaT for "";
    ValueError else (also for a time datetime64[ns] cannot hold: :data:`NS_YEARS`)."""
    if not text:
        return np.datetime64("NaT", "ns")
    if ISO_UTC.fullmatch(text):
        return local_ns([text.rstrip("Z")])[0]
    if not ISO_8601.fullmatch(text):
        raise ValueError(f"not an ISO 8601 time: {text!r}")
    import pandas as pd

    ts = pd.Timestamp(text)
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    return ts.as_unit("ns").to_datetime64()      # (OutOfBoundsDatetime, a ValueError, beyond)


def as_utc(x):
    """``x`` (ISO string, with or without a zone, or datetime64) as naive UTC datetime64[ns]."""
    import pandas as pd

    stamp = pd.Timestamp(x)
    return np.datetime64(stamp.tz_convert("UTC").tz_localize(None) if stamp.tzinfo else stamp, "ns")


def iso_ns_many(texts):
    """:func:`iso_ns` of each of ``texts`` as one datetime64[ns] array (the usual ``...Z``
    ones parsed by NumPy at once)."""
    texts = list(texts)
    if all(map(ISO_UTC.fullmatch, texts)):
        return local_ns([t[:-1] if t.endswith("Z") else t for t in texts])
    return np.array([iso_ns(t) for t in texts], dtype="datetime64[ns]")


#: Years every instant of which datetime64[ns] holds (it spans 1677-09-21 to 2262-04-11).
#: NumPy parses a time beyond them into one wrapped round (year 9999 becomes 1815) without
#: a word: such a time is refused instead.
NS_YEARS = (1678, 2261)
#: What a message calls the times :func:`iso_ns` takes (``started ... is not ...``).
ISO_TIME_TEXT = f"an ISO 8601 time of the years {NS_YEARS[0]}-{NS_YEARS[1]}"


def local_ns(texts):
    """Zone-less ISO 8601 texts (``2026-01-01T00:00:00.5``, or a space for the ``T``) as
    datetime64[ns], parsed by NumPy at once. ValueError for a text NumPy does not take
    (month 13), or whose year is outside :data:`NS_YEARS`."""
    texts = list(texts)
    if not texts:
        return np.empty(0, dtype="datetime64[ns]")
    # (first in microseconds, which hold +-290,000 years: nothing wraps there)
    coarse = np.array(texts, dtype="datetime64[us]")
    far = (coarse < _NS_FIRST) | (coarse >= _NS_END)
    if far.any():
        raise ValueError(f"{texts[int(np.flatnonzero(far)[0])]!r} is outside the years "
                         f"{NS_YEARS[0]}-{NS_YEARS[1]} a time is held in (datetime64[ns])")
    if max(map(len, texts)) <= _US_CHARS:       # (no text holds more than microseconds)
        return coarse.astype("datetime64[ns]")
    return np.array(texts, dtype="datetime64[ns]")


#: Characters of the longest zone-less ISO 8601 text with at most 6 decimals
#: (``2026-01-01T00:00:00.000000``): one that long or shorter is exact in microseconds.
_US_CHARS = 26
_NS_FIRST = np.datetime64(f"{NS_YEARS[0]}-01-01", "us")
_NS_END = np.datetime64(f"{NS_YEARS[1] + 1}-01-01", "us")
