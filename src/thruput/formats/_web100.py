"""What the three web100 readers share: the old-to-new variable names, units, the shared
contract names, and assembling the ``tcp_instrumentation`` Dataset.

Variable names and units follow the Web100 TCP Kernel Instrument Set, ``tcp-kis.txt``
(Mathis, Semke, Reddy, Heffner, PSC 2010; RFC 4898 backport), whose ``RenameFrom:`` lines
map the names older web100 kernels wrote (``PktsRetrans``, ``CurrentCwnd``...) to the
current ones (``SegsRetrans``, ``CurCwnd``...). The readers rename every variable to its
current name before anything else, so that old and new logs give the same variables.
"""

from __future__ import annotations

import re

import numpy as np

from ..contract import build, consistency_check
from ..errors import ParseError

__all__ = ["RENAMES", "SHARED", "NUMBER_RE", "canonical", "units_of", "assemble", "elapsed",
           "connection_label"]

#: A value the text formats print as a number (counters, gauges; not addresses or names).
NUMBER_RE = re.compile(r"^-?\d+(\.\d*)?$")

#: Old web100 name -> current name, from the ``RenameFrom:`` lines of tcp-kis.txt.
#: Some current names have several old ones (``Recoveries`` and ``CongestionSignals`` both
#: became ``CongSignals``); when a log holds both, the first one gets the current name
#: and the other keeps its old name (see :func:`canonical`). ``PreCongCountRTT`` ->
#: ``CongSignals`` is as tcp-kis.txt states it (the count of RTT samples taken before
#: congestion equals the count of congestion signals); web100 2.5 logs it as the
#: deprecated ``_PreCongCountRTT``, which is not read.
RENAMES = {
    "RemoteAddress": "RemAddress",
    "RemotePort": "RemPort",
    "SACKEnabled": "SACK",
    "TimestampsEnabled": "TimeStamps",
    "ECNEnabled": "ECN",
    "SndWinScale": "SndWindScale",
    "RcvWinScale": "RcvWindScale",
    "PktsOut": "SegsOut",
    "DataPktsOut": "DataSegsOut",
    "DataBytesOut": "HCDataOctetsOut",
    "PktsRetrans": "SegsRetrans",
    "BytesRetrans": "OctetsRetrans",
    "PktsIn": "SegsIn",
    "DataPktsIn": "DataSegsIn",
    "DataBytesIn": "HCDataOctetsIn",
    "CurrTime": "Duration",
    "StartTimeSec": "StartTimeStamp",
    "StartTime": "StartTimeStamp",
    "CurrentMSS": "CurMSS",
    "SampledRTT": "SampleRTT",
    "CurrentRTO": "CurRTO",
    "snd_una": "SndUna",
    "snd_nxt": "SndNxt",
    "snd_max": "SndMax",
    "ThruBytesAcked": "HCThruOctetsAcked",
    "rcv_nxt": "RcvNxt",
    "ThruBytesReceived": "HCThruOctetsReceived",
    "SndLimTransSender": "SndLimTransSnd",
    "SndLimTimeSender": "SndLimTimeSnd",
    "NagleEnabled": "Nagle",
    "CongestionSignals": "CongSignals",
    "Recoveries": "CongSignals",
    "PreCongCountRTT": "CongSignals",
    "CongestionOverCount": "CongOverCount",
    "CurrentCwnd": "CurCwnd",
    "MaxCwnd": "MaxSsCwnd",
    "CurrentSsthresh": "CurSsthresh",
    "CurrTimeoutCount": "CurTimeoutCount",
    "SumCwndAtCong": "PreCongSumCwnd",
    "AckAfterFR": "SpuriousFrDetected",
    "SndISS": "SndInitial",
    "RecvISS": "RecInitial",
    "CurRetranQueue": "CurRetxQueue",
    "MaxRetranQueue": "MaxRetxQueue",
    "Sndbuf": "X_Sndbuf",
    "CurrentRwinSent": "CurRwinSent",
    "X_RcvRTT": "RcvRTT",
    "ECERcvd": "CERcvd",
    "Rcvbuf": "X_Rcvbuf",
    "CurrentRwinRcvd": "CurRwinRcvd",
}

#: Units by current name: tcp-kis.txt's ``Units:`` (octets -> byte, milliseconds -> ms,
#: microseconds -> us), and ``count`` for counters without units. Names not listed are
#: dimensionless (flags, states, scales, sequence numbers: ``"1"``).
UNITS_BY_NAME = {
    "count": (
        "AbruptTimeouts", "CERcvd", "CongAvoid", "CongOverCount", "CongSignals", "CountRTT",
        "DSACKDups", "DataSegsIn", "DataSegsOut", "DupAckEpisodes", "DupAcksIn", "DupAcksOut",
        "ECESent", "ECNNonceRcvd", "ECNsignals", "FastRetran", "NonRecovDA",
        "NonRecovDAEpisodes", "OtherReductions", "QuenchRcvd", "RcvNxt", "SACKBlocksRcvd",
        "SACKsRcvd", "SegsIn", "SegsOut", "SegsRetrans", "SendStall", "SlowStart",
        "SndLimTransCwnd", "SndLimTransRwin", "SndLimTransSnd", "SndMax", "SndUna",
        "SoftErrors", "SpuriousFrDetected", "SpuriousRtoDetected", "SubsequentTimeouts",
        "Timeouts", "X_OtherReductionsCM", "X_OtherReductionsCV", "ZeroRwinRcvd",
        "ZeroRwinSent",
    ),
    "byte": (
        "CurAppRQueue", "CurAppWQueue", "CurCwnd", "CurMSS", "CurReasmQueue", "CurRetxQueue",
        "CurRwinRcvd", "CurRwinSent", "CurSsthresh", "DataOctetsIn", "DataOctetsOut",
        "HCDataOctetsIn", "HCDataOctetsOut", "HCThruOctetsAcked", "HCThruOctetsReceived",
        "LimCwnd", "LimMSS", "LimRwin", "LimSsthresh", "MaxAppRQueue", "MaxAppWQueue",
        "MaxCaCwnd", "MaxMSS", "MaxPipeSize", "MaxRetxQueue", "MaxRwinRcvd", "MaxRwinSent",
        "MaxSsCwnd", "MaxSsthresh", "MinMSS", "MinRwinRcvd", "MinRwinSent", "MinSsthresh",
        "OctetsRetrans", "PipeSize", "PostCongSumRTT", "PreCongSumCwnd", "SndLimBytesCwnd",
        "SndLimBytesRwin", "SndLimBytesSender", "SumOctetsReordered", "ThruOctetsAcked",
        "ThruOctetsReceived", "X_Rcvbuf",
    ),
    "ms": (
        "CurRTO", "HCSumRTT", "MaxRTO", "MaxRTT", "MinRTO", "MinRTT", "PostCongCountRTT",
        "PreCongSumRTT", "RTTVar", "SampleRTT", "SmoothedRTT", "SndLimTimeCwnd",
        "SndLimTimeRwin", "SndLimTimeSnd", "SumRTT",
    ),
    "us": (
        "Duration", "ElapsedMicroSecs",
    ),
    "s": (
        "ElapsedSecs",
    ),
}

#: Corrections to tcp-kis.txt's units, each a quirk of that document:
UNIT_FIXES = {
    # sequence numbers are typed ZeroBasedCounter32 but are not counts of anything
    "SndUna": "1", "SndNxt": "1", "SndMax": "1", "RcvNxt": "1", "SndInitial": "1", "RecInitial": "1",
    # the units of these two are swapped in tcp-kis.txt (a sum of RTTs and a count of them)
    "PostCongSumRTT": "ms", "PostCongCountRTT": "count",
    # X_Sndbuf has no Units line while its twin X_Rcvbuf says octets
    "X_Sndbuf": "byte",
    # the connection's start time: Unix seconds and the microseconds within that second
    "StartTimeStamp": "s", "StartTimeUsec": "us",
}

_UNITS = {name: unit for unit, names in UNITS_BY_NAME.items() for name in names}
_UNITS.update(UNIT_FIXES)

#: Current web100 name -> shared contract variable (its units are the contract's).
SHARED = {
    "CurCwnd": "cwnd",                  # bytes
    "CurSsthresh": "ssthresh",          # bytes
    "SmoothedRTT": "srtt",              # ms
    "RTTVar": "rttvar",                 # ms
    "CurMSS": "mss",                    # bytes
    "HCThruOctetsAcked": "bytes_acked",  # bytes
    "SegsRetrans": "retransmits_total",  # segments
    "CongSignals": "congestion_signals",
}

#: Linux starts ssthresh "infinite" (0x7fffffff segments); web100 multiplies by the MSS in
#: 32 bits, so the value wraps to a meaningless number >= 2**31 (e.g. 4294966680). Such
#: values become NaN in ``ssthresh`` (the raw value stays in ``web100_CurSsthresh``).
SSTHRESH_UNSET_MIN = 2**31

#: Shared variables the tcp_instrumentation kind requires, NaN when a log lacks them.
REQUIRED_SHARED = ("cwnd", "srtt", "retransmits_total")


def canonical(names):
    """Current names for ``names`` (old or new), in order; duplicates keep the old name."""
    out, seen = [], set()
    for name in names:
        new = RENAMES.get(name, name)
        if new in seen or new in names and new != name:
            new = name      # both old and current present: keep each under its own name
        seen.add(new)
        out.append(new)
    return out


def units_of(name):
    """UDUNITS units of the web100 variable ``name`` (current name)."""
    return _UNITS.get(name, "1")


def assemble(fmt, columns, *, time, line, ledger, connection=None, attrs=None,
             tool_summary=None, tool_version="", extra_long_names=None, extra_units=None):
    """Build the ``tcp_instrumentation`` Dataset from web100 columns.

    Parameters
    ----------
    fmt : str
        Registry name of the reader.
    columns : dict
        Current web100 name -> 1-D array over snapshots (numbers or strings).
    time : array of float
        Seconds since the first snapshot.
    line : array of int
        Source line (record) of each snapshot.
    connection : array of str, optional
        Connection of each snapshot (``local:port->remote:port``).
    extra_long_names, extra_units : dict, optional
        Long names and units for extras that are not web100 variables (e.g. ``cid``).
    """
    n = len(line)
    variables = {"time": (("snapshot",), np.asarray(time, dtype=float)),
                 "line": (("snapshot",), np.asarray(line, dtype=np.int64))}
    extras = {}
    for name, values in columns.items():
        values = np.asarray(values)
        if name in SHARED:
            shared = SHARED[name]
            data = _numeric(name, values, line)
            if shared == "ssthresh":
                if (data >= SSTHRESH_UNSET_MIN).any():
                    extras["web100_CurSsthresh"] = (("snapshot",), data.copy(), "byte",
                                                    "web100 CurSsthresh as logged (unset values wrap)")
                data[data >= SSTHRESH_UNSET_MIN] = np.nan
            variables[shared] = (("snapshot",), data)
            continue
        long_name = (extra_long_names or {}).get(name, f"web100 {name}")
        if values.dtype.kind in "OUS":
            extras[f"web100_{name}"] = (("snapshot",), values.astype(object), "1", long_name)
        else:
            units = (extra_units or {}).get(name) or units_of(name)
            extras[f"web100_{name}"] = (("snapshot",), values, units, long_name)
    for shared in REQUIRED_SHARED:
        variables.setdefault(shared, (("snapshot",), np.full(n, np.nan)))
    if connection is not None:
        variables["connection"] = (("snapshot",), np.asarray(connection, dtype=object))
    return build("tcp_instrumentation", variables, fmt=fmt, tool="web100", tool_version=tool_version,
                 ledger=ledger, extras=extras, attrs=attrs, tool_summary=tool_summary,
                 consistency=snapshot_checks(columns, connection, line))


#: Counters web100 keeps from the connection's start: never smaller in a later snapshot of
#: the same connection (``Duration`` in microseconds, the others in bytes, segments or events).
#: Current names (:func:`canonical`; ``ThruBytesAcked`` is ``HCThruOctetsAcked``).
CUMULATIVE = ("Duration", "HCThruOctetsAcked", "HCThruOctetsReceived", "SegsOut", "SegsIn", "HCDataOctetsOut",
              "HCDataOctetsIn", "SegsRetrans", "OctetsRetrans", "CongSignals", "DupAcksIn", "Timeouts",
              "FastRetran")
#: A 32-bit counter that wraps goes back by almost 2**32: a wrap, not a snapshot out of order.
WRAP = 2.0 ** 31


def snapshot_checks(columns, connection, line):
    """Each connection's snapshots in the order web100 took them: its ``Duration`` grows
    strictly from one snapshot to the next (a snapshot repeated or out of order does not),
    and its cumulative counters never shrink. web100 prints no snapshot count or sequence
    number, so a snapshot lost from a dump is not detectable (a longer poll looks the same)."""
    n = len(line)
    if n < 2:
        return []
    owner = np.asarray(connection, dtype=object) if connection is not None else np.zeros(n, dtype=object)
    same = owner[1:] == owner[:-1]       # consecutive snapshots of one connection
    checks = []
    for name in CUMULATIVE:
        if name not in columns or np.asarray(columns[name]).dtype.kind not in "fiu":
            continue
        values = np.asarray(columns[name], dtype=float)
        step = np.diff(values)
        with np.errstate(invalid="ignore"):
            bad = same & ((step <= 0) if name == "Duration" else ((step < 0) & (step > -WRAP)))
        first = f"; first at line {int(line[1 + int(np.argmax(bad))])}" if bad.any() else ""
        what = "not after the previous one (repeated or out of order)" if name == "Duration" else "smaller than the previous one"
        checks.append(consistency_check(f"{name}: snapshots {what}", 0, int(bad.sum()), rtol=0.0,
                                        note=f"per connection, in the order logged{first}"))
    return checks


def elapsed(columns, line, name="Duration"):
    """Seconds since the first snapshot from ``Duration`` (µs since the connection started);
    NaN when the log has no such variable."""
    if name not in columns or not len(line):
        return np.full(len(line), np.nan)
    micros = _numeric(name, np.asarray(columns[name]), line)
    return (micros - micros[0]) / 1e6


def _numeric(name, values, line):
    """``values`` as floats, or a ParseError naming the first snapshot (line) that isn't
    one, or is too large for a float (``inf``: hundreds of digits, a damaged log)."""
    try:
        numbers = values.astype(float)
    except (TypeError, ValueError):
        for value, where in zip(values, line):
            try:
                float(value)
            except (TypeError, ValueError):
                raise ParseError(f"web100 {name} is not a number: {str(value)[:40]!r} "
                                 f"(snapshot starting at this line)", line=int(where)) from None
        raise
    infinite = np.isinf(numbers)
    if infinite.any():
        k = int(np.argmax(infinite))
        raise ParseError(f"web100 {name} is too large for a float: {str(values[k])[:40]!r} "
                         f"(snapshot starting at this line)", line=int(line[k]))
    return numbers


def connection_label(local, local_port, remote, remote_port):
    """``local:port->remote:port``, IPv6 addresses in brackets; ports read as numbers
    (``5201.0`` -> ``5201``) where they are, else as printed (a damaged ``1e400`` too)."""
    def host(addr, port):
        addr = str(addr)
        port = _port(port)
        return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"
    return f"{host(local, local_port)}->{host(remote, remote_port)}"


def _port(value):
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):   # OverflowError: inf from 400 digits
        return value
