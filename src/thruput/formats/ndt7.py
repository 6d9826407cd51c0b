"""M-Lab ndt7 results (JSON): one download or upload test as the ndt-server archives it.

One JSON object per test (M-Lab's ``ndt7`` archive, ``ndt/ndt7/<date>/*.json`` inside its
daily ``.tgz``): the connection (``ServerIP``/``ServerPort``, ``ClientIP``/``ClientPort``),
the server's version (``Version``, ``GitShortCommit``), ``StartTime``/``EndTime``, and a
``Download`` or ``Upload`` object with the test's ``UUID``, its own ``StartTime``/``EndTime``,
``ServerMeasurements`` (the server's kernel ``TCPInfo`` and ``BBRInfo`` snapshots, about
every 250 ms) and ``ClientMeasurements`` (the client's ``AppInfo``, often null).

Units are the Linux kernel's, as ndt7 passes them on (ndt-server spec ``ndt7-protocol.md``
and its data format; ooni's ndt7 types say the same): times and RTTs in microseconds
(``ElapsedTime``, ``RTT``, ``RTTVar``, ``MinRTT``, BBR ``MinRTT``), rates in bytes per
second (``PacingRate``, ``DeliveryRate``, BBR ``BW``/``MaxBandwidth``), ``SndCwnd`` in
segments of ``SndMSS`` bytes, BBR gains in 1/256 units (256 = 1.0), counters in bytes or
segments since the connection started.

How a test maps onto the ``throughput`` kind (one run, one stream)
-----------------------------------------------------------------
``throughput``
    As ndt7 defines it: the server's *last* measurement, ``BytesAcked`` (download: the
    server sends) or ``BytesReceived`` (upload: the server receives), times 8, over its
    ``ElapsedTime``. ``bytes`` and ``duration`` are those two numbers. A download counts as
    ``throughput_sender`` (measured at the sending server), an upload as
    ``throughput_receiver``. ``stream_direction`` is seen from the client: ``"receive"``
    for a download, ``"send"`` for an upload.
Intervals
    One per server measurement: ``interval_end`` is its ``ElapsedTime``, ``interval_start``
    the previous one's (0 for the first); ``interval_bytes`` the growth of the counter above
    and ``interval_throughput`` that over the interval. ``interval_rtt``/``interval_rttvar``
    (ms), ``interval_cwnd`` (``SndCwnd`` x ``SndMSS``, bytes) and ``interval_retransmits``
    (growth of ``TotalRetrans``) come from the snapshot's TCPInfo; ``ndt7_*`` extras carry
    ``MinRTT``, ``PacingRate``, ``DeliveryRate``, the raw counters, and BBR's bandwidth,
    min RTT and gains (NaN where a snapshot has no BBRInfo).
``start_time``
    The test's ``StartTime`` (nanoseconds, UTC); its ``EndTime`` is ``attrs["ndt7_end_time"]``.

``tool_summary`` holds the test's identity and ndt7's throughput in Mbit/s
(``MeanThroughputMbps``, M-Lab's name for it). ``consistency`` checks the BBRInfo clock
against the TCPInfo clock of each snapshot and, where the client reported ``AppInfo``, the
client's application bytes against the server's TCP bytes (within 10 %: TLS and WebSocket
framing are counted by TCP only).

A file cut off mid-way keeps every complete measurement (``truncation`` says where it
ends); a file without one complete server measurement raises
:class:`~thruput.errors.ParseError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import itertools
import re

import numpy as np

from ..contract import build, consistency_check, count_lines, newline_offsets
from ..errors import ParseError
from ..quantities import iso_ns
from ._json import read_document, salvage

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "ndt7"
KIND = "throughput"
TOOL = "ndt7"
BINARY = False

#: An ndt7 result starts with the server's identity (GitShortCommit, Version) and holds a
#: Download or Upload with ServerMeasurements.
_SNIFF = re.compile(r'\A\s*\{\s*"(?:GitShortCommit|Version|ServerIP)"\s*:')
_SNIFF_KEYS = ('"ServerMeasurements"', '"ClientMeasurements"')
_TESTS = ("Download", "Upload")

#: Kernel units -> contract units, as (multiply, divide): a division by 1e3 or 1e6 is exact
#: to the last digit where a multiplication by 1e-3 is not.
US_TO_MS = (1.0, 1e3)
US_TO_S = (1.0, 1e6)
BYTES_PER_S_TO_BIT_PER_S = (8.0, 1.0)
ONE = (1.0, 1.0)
#: BBR's pacing and cwnd gains are fixed point with 8 fractional bits (BBR_UNIT = 256).
BBR_UNIT = (1.0, 256.0)

#: TCPInfo field -> (extra name, factor, units, long_name): the snapshot series kept as they are.
TCPINFO_SERIES = {
    "MinRTT": ("ndt7_min_rtt", US_TO_MS, "ms", "minimum RTT seen by the kernel (TCPInfo.MinRTT)"),
    "PacingRate": ("ndt7_pacing_rate", BYTES_PER_S_TO_BIT_PER_S, "bit/s", "TCP pacing rate (TCPInfo.PacingRate)"),
    "DeliveryRate": ("ndt7_delivery_rate", BYTES_PER_S_TO_BIT_PER_S, "bit/s",
                     "TCP delivery rate of the last ACKed segment (TCPInfo.DeliveryRate)"),
    "SndCwnd": ("ndt7_snd_cwnd", ONE, "count", "congestion window in segments (TCPInfo.SndCwnd)"),
    "BytesAcked": ("ndt7_bytes_acked", ONE, "byte", "bytes acknowledged by the peer (TCPInfo.BytesAcked)"),
    "BytesReceived": ("ndt7_bytes_received", ONE, "byte", "bytes received from the peer (TCPInfo.BytesReceived)"),
    "BytesRetrans": ("ndt7_bytes_retrans", ONE, "byte", "bytes retransmitted (TCPInfo.BytesRetrans)"),
    "TotalRetrans": ("ndt7_total_retrans", ONE, "count", "segments retransmitted (TCPInfo.TotalRetrans)"),
}
#: BBRInfo field (both spellings: ndt-server <= 0.14 wrote MaxBandwidth) -> extra.
BBR_SERIES = {
    "BW": ("ndt7_bbr_bw", BYTES_PER_S_TO_BIT_PER_S, "bit/s", "BBR bottleneck bandwidth estimate (BBRInfo.BW)"),
    "MaxBandwidth": ("ndt7_bbr_bw", BYTES_PER_S_TO_BIT_PER_S, "bit/s",
                     "BBR bottleneck bandwidth estimate (BBRInfo.BW)"),
    "MinRTT": ("ndt7_bbr_min_rtt", US_TO_MS, "ms", "BBR min RTT estimate (BBRInfo.MinRTT)"),
    "PacingGain": ("ndt7_bbr_pacing_gain", BBR_UNIT, "1", "BBR pacing gain (BBRInfo.PacingGain / 256)"),
    "CwndGain": ("ndt7_bbr_cwnd_gain", BBR_UNIT, "1", "BBR cwnd gain (BBRInfo.CwndGain / 256)"),
}
#: The byte counter of the server that ndt7's throughput is made of, per test.
COUNTER = {"Download": "BytesAcked", "Upload": "BytesReceived"}

_NAN = np.nan
_ITEM_START = re.compile(r"(?:\[|\}[ \t\n\r]*,)[ \t\n\r]*\{")


def sniff(head: str) -> bool:
    """True if ``head`` (the first 4 KB) is an ndt7 result."""
    return bool(_SNIFF.match(head)) and any(k in head for k in _SNIFF_KEYS) \
        and any(f'"{t}"' in head for t in _TESTS)


def parse(text: str) -> xr.Dataset:
    """Parse the text of one ndt7 result into a throughput Dataset.

    Raises
    ------
    ParseError
        Empty input, text that is not JSON (naming the line), JSON that is not an ndt7
        result, or a result without one complete server measurement.
    """
    doc, end, lost, ledger = read_document(text, _salvage)
    if not isinstance(doc, dict):
        raise ParseError("not an ndt7 result (no top-level object)", line=1)
    which = [t for t in _TESTS if isinstance(doc.get(t), dict)]
    if len(which) != 1:
        raise ParseError("not an ndt7 result (neither one Download nor one Upload object)", line=1)
    try:
        return _process(doc, which[0], text, ledger, lost)
    except ParseError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        raise ParseError(f"unexpected ndt7 structure ({type(exc).__name__}: {exc})", line=1) from None


def _salvage(text):
    """The complete members of a cut-off result, and inside its test object every complete
    member and server measurement (:func:`thruput.formats._json.salvage`): (doc, end, what was lost)."""
    found = salvage(text, descend={*((t,) for t in _TESTS), *((t, "ServerMeasurements") for t in _TESTS)})
    if found is None:
        raise ParseError("not an ndt7 result (no top-level object)", line=1)
    return found.doc, found.end, (f"the file is cut off at line {text.count(chr(10), 0, len(text.rstrip())) + 1}; "
                                  "kept every complete measurement")


def _positions(text, count):
    """Source line of each of the ``count`` server measurements (1 where not found)."""
    at = text.find('"ServerMeasurements"')
    out = np.ones(count, dtype=np.int64)
    if at < 0 or not count:
        return out
    # each measurement starts with '{' right after '[' or '},'
    starts = np.fromiter((m.end() for m in itertools.islice(_ITEM_START.finditer(text, at), count)),
                         dtype=np.int64)
    out[: len(starts)] = np.searchsorted(newline_offsets(text), starts) + 1
    return out


def _series(snaps, section, field, scale=ONE):
    """One field of every snapshot's TCPInfo or BBRInfo as float64 (NaN where missing), in
    the contract's units (``scale``: multiply, divide)."""
    values = [(s.get(section) or {}).get(field) if isinstance(s, dict) else None for s in snaps]
    return np.array([_NAN if v is None else v for v in values], dtype=float) * scale[0] / scale[1]


def _when(text):
    """An ndt7 time (RFC 3339 with nanoseconds, ``Z`` or an offset) -> naive UTC
    datetime64[ns] (:func:`thruput.quantities.iso_ns`); NaT if unreadable."""
    try:
        return iso_ns(str(text)) if text else np.datetime64("NaT", "ns")
    except (ValueError, OverflowError):
        return np.datetime64("NaT", "ns")


def _process(doc, which, text, ledger, lost):
    test = doc[which]
    snaps = [s for s in (test.get("ServerMeasurements") or []) if isinstance(s, dict) and s.get("TCPInfo")]
    if not snaps:
        raise ParseError(f"ndt7 {which.lower()} without a complete server measurement"
                         + (f" ({lost})" if lost else ""), line=count_lines(text))
    n = len(snaps)
    elapsed = _series(snaps, "TCPInfo", "ElapsedTime", US_TO_S)
    counter = _series(snaps, "TCPInfo", COUNTER[which])
    start = np.concatenate([[0.0], elapsed[:-1]])
    grown = np.diff(counter, prepend=0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(elapsed > start, grown * 8.0 / (elapsed - start), _NAN)
    total_bytes, duration = counter[-1], elapsed[-1]
    throughput = total_bytes * 8.0 / duration if duration > 0 else _NAN
    download = which == "Download"
    retrans = _series(snaps, "TCPInfo", "TotalRetrans")
    cwnd = _series(snaps, "TCPInfo", "SndCwnd") * _series(snaps, "TCPInfo", "SndMSS")
    line = _positions(text, n)

    variables = {
        "throughput": (("run",), [throughput]),
        "throughput_sender": (("run",), [throughput if download else _NAN]),
        "throughput_receiver": (("run",), [_NAN if download else throughput]),
        "bytes": (("run",), [total_bytes]),
        "duration": (("run",), [duration]),
        "streams": (("run",), [1]),
        "protocol": (("run",), ["TCP"]),
        "window_requested": (("run",), [_NAN]),
        "window_actual": (("run",), [_NAN]),
        "loss_fraction": (("run",), [_NAN]),
        # the server's retransmissions are of the test's data only when the server sends
        "retransmits": (("run",), [retrans[-1] if download else _NAN]),
        "run_line": (("run",), [1]),
        "start_time": (("run",), np.array([_when(test.get("StartTime") or doc.get("StartTime"))],
                                          dtype="datetime64[ns]")),
        "stream_throughput": (("run", "stream"), [[throughput]]),
        "stream_bytes": (("run", "stream"), [[total_bytes]]),
        "stream_direction": (("run", "stream"), [["receive" if download else "send"]]),
        "interval_start": (("run", "interval"), start[None]),
        "interval_end": (("run", "interval"), elapsed[None]),
        "interval_bytes": (("run", "stream", "interval"), grown[None, None]),
        "interval_throughput": (("run", "stream", "interval"), rate[None, None]),
        "interval_retransmits": (("run", "stream", "interval"), np.diff(retrans, prepend=0.0)[None, None]),
        "interval_cwnd": (("run", "stream", "interval"), cwnd[None, None]),
        "interval_rtt": (("run", "stream", "interval"), _series(snaps, "TCPInfo", "RTT", US_TO_MS)[None, None]),
        "interval_rttvar": (("run", "stream", "interval"),
                            _series(snaps, "TCPInfo", "RTTVar", US_TO_MS)[None, None]),
        "line": (("run", "stream", "interval"), line[None, None]),
    }
    extras = {
        "ndt7_server": (("run",), [_endpoint(doc.get("ServerIP"), doc.get("ServerPort"))], "1",
                        "server address and port"),
        "ndt7_client": (("run",), [_endpoint(doc.get("ClientIP"), doc.get("ClientPort"))], "1",
                        "client address and port"),
        "ndt7_test": (("run",), [which.lower()], "1", "ndt7 subtest (download or upload)"),
        "ndt7_loss_rate": (("run",), [_ratio(_series(snaps, "TCPInfo", "BytesRetrans")[-1],
                                             _series(snaps, "TCPInfo", "BytesSent")[-1]) if download else _NAN],
                           "1", "bytes retransmitted over bytes sent by the server (download only)"),
    }
    for field, (name, factor, units, long_name) in TCPINFO_SERIES.items():
        extras[name] = (("run", "stream", "interval"), _series(snaps, "TCPInfo", field, factor)[None, None],
                        units, long_name)
    for field, (name, factor, units, long_name) in BBR_SERIES.items():
        values = _series(snaps, "BBRInfo", field, factor)
        if name in extras:   # the other spelling of the same field
            values = np.where(np.isnan(values), extras[name][1][0, 0], values)
        extras[name] = (("run", "stream", "interval"), values[None, None], units, long_name)

    checks = []
    bbr_clock = _series(snaps, "BBRInfo", "ElapsedTime", US_TO_S)
    has_bbr = ~np.isnan(bbr_clock)
    if has_bbr.any():
        worst = int(np.argmax(np.abs(np.where(has_bbr, bbr_clock - elapsed, 0.0))))
        checks.append(consistency_check(
            "clock: BBRInfo.ElapsedTime vs TCPInfo.ElapsedTime of the same snapshot (the farthest apart)",
            elapsed[worst], bbr_clock[worst], rtol=0.0, atol=1e-6))
    app = [c.get("AppInfo") for c in (test.get("ClientMeasurements") or []) if isinstance(c, dict)]
    app = [a for a in app if isinstance(a, dict) and a.get("NumBytes") is not None]
    if app:
        checks.append(consistency_check(
            "bytes: the client's last AppInfo.NumBytes vs the server's TCP bytes", float(app[-1]["NumBytes"]),
            total_bytes, rtol=0.1, note="AppInfo counts WebSocket payload; TCP counts TLS and framing too"))
    summary = {"UUID": test.get("UUID"), "test": which.lower(), "Version": doc.get("Version"),
               "GitShortCommit": doc.get("GitShortCommit"), "StartTime": test.get("StartTime"),
               "EndTime": test.get("EndTime"), "server_measurements": n,
               "client_measurements": len(test.get("ClientMeasurements") or []),
               "MeanThroughputMbps": None if np.isnan(throughput) else throughput / 1e6}
    if lost:
        ledger.truncated(lost)
    return build(KIND, variables, fmt=NAME, tool=TOOL, tool_version=str(doc.get("Version") or ""),
                 ledger=ledger, extras=extras, tool_summary=summary, consistency=checks,
                 attrs={"ndt7_uuid": str(test.get("UUID") or ""),
                        "ndt7_end_time": str(test.get("EndTime") or doc.get("EndTime") or ""),
                        "ndt7_git_commit": str(doc.get("GitShortCommit") or "")})


def _endpoint(ip, port):
    if not ip:
        return ""
    host = f"[{ip}]" if ":" in str(ip) else str(ip)
    return f"{host}:{port}" if port is not None else host


def _ratio(a, b):
    return a / b if b and not np.isnan(b) else _NAN
