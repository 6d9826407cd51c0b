"""The one contract every format reader follows.

A reader turns one log file into an :class:`xarray.Dataset` of one *kind*. Every kind has
a fixed set of shared variable names, dimensions and units (``KINDS`` and ``VARIABLES``
below); anything a format knows beyond them is an *extra*, named with the format's prefix
(``iperf2_netpwr``, ``web100_DupAcksIn``) so it never collides with a shared name.

Every variable and coordinate carries ``units`` and ``long_name``. Units are UDUNITS
strings from ``UNITS``; ``"1"`` marks dimensionless numbers and labels.

Every Dataset carries in ``attrs``:

``kind``, ``format``, ``tool``, ``tool_version``
    What was read and what wrote it (``tool_version`` is ``""`` when the log doesn't say).
``source_path``, ``source_sha256``
    The file as read (set by :func:`thruput.read`; ``""`` when parsing bare text).
``lines_total``, ``lines_parsed``, ``lines_skipped``, ``skipped_reasons``, ``ledger_unit``
    The line accounting: every line is parsed or skipped with a reason; ``skipped_reasons``
    is a JSON object ``{reason: count}``. ``ledger_unit`` is ``"line"`` for text and
    ``"record"`` for binary formats (header lines and fixed-size snapshots).
``truncated``, ``truncation``
    ``1`` and a sentence when the log was cut off: what was complete is kept.
``tool_summary``
    JSON object with the totals the tool printed itself (``{}`` when none), so that tests
    and users can check the parsed numbers against them.
``consistency``
    JSON list of checks of what the tool printed against what the data says, one object
    each: ``{"check", "tool", "data", "ok", "note"}`` (see :func:`consistency_check`);
    ``consistent`` is ``1`` when every check passed (or there was none to make), else ``0``.
    A disagreement is kept and reported (``thruput inspect`` warns), never hidden.

Provenance down to the line: every record-bearing dimension has an integer ``line``
variable (1-based source line, or record number for binary formats; ``-1`` for padding).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
import re

import numpy as np
import pandas as pd
import xarray as xr

from .errors import ContractError, ParseError

__all__ = ["KINDS", "VARIABLES", "UNITS", "Ledger", "build", "validate", "split_lines", "count_lines",
           "newline_offsets", "consistency_check", "consistency_checks", "agreeing", "lenient"]

CONTRACT_VERSION = "1"

#: Units allowed on variables (UDUNITS spelling).
UNITS = frozenset(
    {"bit/s", "byte", "byte/s", "s", "ms", "us", "us/byte", "1", "count", "percent", "MHz", "Hz"}
)

#: Units marker of datetime64 variables (UTC): they carry ``long_name`` and no ``units``
#: attribute, because netCDF and Zarr encoders write their own CF time units.
TIME = "datetime64"

#: Shared variables: name -> (units, long_name). Kinds pick from these.
VARIABLES = {
    # coordinates / indices
    "run": ("1", "run index within the file"),
    "stream": ("1", "stream index within the run"),
    "interval": ("1", "reporting interval index"),
    "probe": ("1", "probe index in order of appearance"),
    "row": ("1", "row index in order of appearance"),
    "point": ("1", "scan point index"),
    "snapshot": ("1", "snapshot index in order of appearance"),
    "line": ("1", "1-based source line (record number for binary formats; -1 = none)"),
    # provenance of Datasets read from many files (thruput.read_many)
    "file": ("1", "index of the source file"),
    "file_path": ("1", "path of the source file"),
    "file_sha256": ("1", "sha256 of the source file as stored"),
    "record_file": ("1", "index of the source file of each record"),
    # throughput runs
    "throughput": ("bit/s", "whole-run throughput summed over streams (receiver side where reported)"),
    "throughput_sender": ("bit/s", "whole-run throughput summed over streams, sender side"),
    "throughput_receiver": ("bit/s", "whole-run throughput summed over streams, receiver side"),
    "bytes": ("byte", "bytes transferred in the whole run, summed over streams"),
    "duration": ("s", "run duration"),
    "streams": ("count", "number of parallel streams"),
    "protocol": ("1", "transport protocol (TCP or UDP)"),
    "window_requested": ("byte", "TCP window / socket buffer size requested (NaN if not printed)"),
    "window_actual": ("byte", "TCP window / socket buffer size granted by the OS (NaN if not printed)"),
    "loss_fraction": ("1", "fraction of packets lost (NaN where not applicable)"),
    "retransmits": ("count", "TCP retransmissions in the run (NaN if not reported)"),
    "jitter": ("ms", "UDP jitter reported by the receiver"),
    "packets": ("count", "UDP datagrams sent"),
    "packets_lost": ("count", "UDP datagrams lost"),
    "out_of_order": ("count", "UDP datagrams received out of order"),
    "run_line": ("1", "1-based source line where the run starts"),
    "start_time": (TIME, "when the run started, UTC (NaT where the log does not say)"),
    "stream_throughput": ("bit/s", "whole-run throughput of one stream"),
    "stream_bytes": ("byte", "bytes transferred by one stream in the whole run"),
    "stream_direction": ("1", "direction of the stream relative to the client (send or receive)"),
    "interval_start": ("s", "interval start since the run began"),
    "interval_end": ("s", "interval end since the run began"),
    "interval_bytes": ("byte", "bytes transferred in the interval"),
    "interval_throughput": ("bit/s", "throughput in the interval"),
    "interval_retransmits": ("count", "TCP retransmissions in the interval"),
    "interval_cwnd": ("byte", "TCP congestion window at the end of the interval"),
    "interval_rtt": ("ms", "TCP smoothed round-trip time at the end of the interval"),
    "interval_rttvar": ("ms", "TCP round-trip time variance at the end of the interval"),
    # RTT probes
    "seq": ("1", "ICMP sequence number (-1 if not printed)"),
    "rtt": ("ms", "round-trip time (NaN when no reply)"),
    "status": ("1", "probe outcome: reply, duplicate, lost, unreachable or error"),
    "timestamp": ("s", "Unix time of the reply as printed (ping -D), NaN if not printed"),
    "size": ("byte", "bytes in the reply or response"),
    "ttl": ("1", "IP time-to-live of the reply (-1 if not printed)"),
    # UDP sweep (udpmon_bw_mon)
    "packet_size": ("byte", "UDP payload length"),
    "spacing": ("us", "requested inter-packet spacing"),
    "packets_sent": ("count", "UDP datagrams sent"),
    "packets_received": ("count", "UDP datagrams received"),
    "send_rate": ("bit/s", "user-data send rate"),
    "recv_rate": ("bit/s", "user-data receive rate"),
    # latency scan (udpmon_req)
    "request_size": ("byte", "request length"),
    "latency_avg": ("us", "mean request-response time"),
    "latency_min": ("us", "minimum request-response time"),
    "latency_max": ("us", "maximum request-response time"),
    "count": ("count", "request-response exchanges"),
    # TCP instrumentation (web100, tcp_info)
    "time": ("s", "time since the first snapshot"),
    "cwnd": ("byte", "TCP congestion window"),
    "ssthresh": ("byte", "TCP slow-start threshold"),
    "srtt": ("ms", "TCP smoothed round-trip time"),
    "rttvar": ("ms", "TCP round-trip time variance"),
    "mss": ("byte", "TCP maximum segment size"),
    "bytes_acked": ("byte", "bytes acknowledged since the connection started"),
    "retransmits_total": ("count", "segments retransmitted since the connection started"),
    "congestion_signals": ("count", "congestion signals since the connection started"),
    "connection": ("1", "connection identifier (local and remote address and port)"),
    # routes (traceroute, mtr, scamper)
    "hop": ("1", "hop index in order of the probes' TTL"),
    "hop_ttl": ("1", "TTL (hop limit) of the hop's probes: 1 = the first router"),
    "hop_address": ("1", "address that answered the probe (\"\" = no answer)"),
    "hop_name": ("1", "name printed for the answering address (\"\" = none printed)"),
    "hop_rtt": ("ms", "round-trip time of the probe (NaN = no answer)"),
    "hop_annotation": ("1", "what the answer said beyond time exceeded, as traceroute marks it "
                            "(!N, !H, !X, !P, !S, !F, !U, !W, !<code>; \"\" = none)"),
    "route_time": (TIME, "when the route was traced, UTC (NaT where the output does not say)"),
}

#: Kinds of measurement: name -> (required variables with their dimensions).
KINDS: dict[str, dict[str, tuple[str, ...]]] = {
    "throughput": {
        "throughput": ("run",),
        "throughput_sender": ("run",),
        "throughput_receiver": ("run",),
        "bytes": ("run",),
        "duration": ("run",),
        "streams": ("run",),
        "protocol": ("run",),
        "window_requested": ("run",),
        "window_actual": ("run",),
        "loss_fraction": ("run",),
        "run_line": ("run",),
        "start_time": ("run",),
        "stream_throughput": ("run", "stream"),
        "interval_start": ("run", "interval"),
        "interval_end": ("run", "interval"),
        "interval_bytes": ("run", "stream", "interval"),
        "interval_throughput": ("run", "stream", "interval"),
        "line": ("run", "stream", "interval"),
    },
    "rtt": {
        "seq": ("probe",),
        "rtt": ("probe",),
        "status": ("probe",),
        "timestamp": ("probe",),
        "size": ("probe",),
        "ttl": ("probe",),
        "line": ("probe",),
    },
    "udp_sweep": {
        "packet_size": ("row",),
        "spacing": ("row",),
        "packets_sent": ("row",),
        "packets_received": ("row",),
        "packets_lost": ("row",),
        "loss_fraction": ("row",),
        "send_rate": ("row",),
        "recv_rate": ("row",),
        "line": ("row",),
    },
    "latency_scan": {
        "size": ("point",),
        "request_size": ("point",),
        "latency_avg": ("point",),
        "latency_min": ("point",),
        "latency_max": ("point",),
        "count": ("point",),
        "line": ("point",),
    },
    "route": {
        "hop_ttl": ("hop",),
        "hop_address": ("hop", "probe"),
        "hop_name": ("hop", "probe"),
        "hop_rtt": ("hop", "probe"),
        "hop_annotation": ("hop", "probe"),
        "route_time": (),
        "line": ("hop",),
    },
    "tcp_instrumentation": {
        "time": ("snapshot",),
        "cwnd": ("snapshot",),
        "srtt": ("snapshot",),
        "retransmits_total": ("snapshot",),
        "line": ("snapshot",),
    },
}

#: Probe outcomes allowed in ``status`` of an ``rtt`` Dataset.
PROBE_STATUSES = ("reply", "duplicate", "lost", "unreachable", "error")

REQUIRED_ATTRS = (
    "kind", "format", "tool", "tool_version", "source_path", "source_sha256",
    "lines_total", "lines_parsed", "lines_skipped", "skipped_reasons", "ledger_unit",
    "truncated", "truncation", "tool_summary", "consistency", "consistent", "contract_version",
)


def split_lines(text):
    """Split ``text`` into lines the way the ledger counts them (no line terminators)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def count_lines(text):
    """``len(split_lines(text))`` without the list."""
    return text.count("\n") + (not text.endswith("\n") and bool(text))


def newline_offsets(text, piece=2**22):
    """The offsets (characters, int64) of every ``"\n"`` in ``text``, found ``piece``
    characters at a time (an encoding of the whole text costs 4 bytes a character)."""
    found = [np.flatnonzero(np.frombuffer(text[at: at + piece].encode("utf-32-le"), dtype=np.uint32) == 10) + at
             for at in range(0, len(text), piece)]
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


#: Whether ledgers made in this context skip unrecognised lines instead of failing
#: (set with :func:`lenient`; ``thruput.read(path, lenient=True)`` uses it).
_LENIENT = contextvars.ContextVar("thruput_lenient", default=False)

#: The skip reason of an unrecognised line in lenient mode.
UNRECOGNISED = "unrecognised {unit}"


@contextlib.contextmanager
def lenient(on=True):
    """Within this context, every :class:`Ledger` is lenient (see there).

    For messy archives (a shell prompt, a note, a stray message inside a log): the
    unrecognised lines are counted as skipped with the reason ``"unrecognised line"``
    instead of failing the file. Errors the reader found itself still fail it.
    ``on=None`` keeps the enclosing setting (so a ``lenient=None`` argument can be passed
    straight through).
    """
    if on is None:
        yield
        return
    token = _LENIENT.set(bool(on))
    try:
        yield
    finally:
        _LENIENT.reset(token)


#: Lines counted at a time by :meth:`Ledger.close` (its temporary is 8 bytes a line).
BINCOUNT_BLOCK = 1 << 20


class Ledger:
    """Accounts for every line of one input: parsed, or skipped with a reason.

    Lines are numbered from 1. Mark them one at a time or in bulk (any iterable or NumPy
    array of line numbers). :meth:`close` turns every line left unmarked, and every
    :meth:`error`, into one :class:`~thruput.errors.ParseError`: nothing is dropped silently.

    Parameters
    ----------
    total : int
        Number of lines (records) in the input.
    unit : {"line", "record"}
        What is counted.
    lines : list of str, optional
        The text lines, used to quote unrecognised content in error messages.
    lenient : bool, optional
        If true, :meth:`close` counts unmarked lines as skipped (reason
        ``"unrecognised line"``) instead of raising for them; :meth:`error` still raises.
        Default: the :func:`lenient` context (off).
    """

    PARSED = 1

    def __init__(self, total, unit="line", lines=None, lenient=None):
        self.total = int(total)
        self.unit = unit
        self._lines = lines
        self.lenient = _LENIENT.get() if lenient is None else bool(lenient)
        self._state = np.zeros(self.total + 1, dtype=np.int16)  # 0 = unmarked; index 0 unused
        self._reasons = ["<unmarked>", "<parsed>"]
        self._errors = []
        self.truncation = ""

    def parsed(self, line):
        """Mark ``line`` (int or array of ints) as parsed."""
        self._state[line] = self.PARSED

    def skip(self, line, reason):
        """Mark ``line`` (int or array of ints) as skipped, for ``reason`` (short phrase)."""
        try:
            code = self._reasons.index(reason)
        except ValueError:
            self._reasons.append(reason)
            code = len(self._reasons) - 1
        self._state[line] = code

    def error(self, line, message):
        """Record an error at ``line``; raised all together by :meth:`close`.

        The line counts as accounted for, so it is not reported a second time as
        unrecognised.
        """
        if line is not None:
            self.skip(line, "error")
        self._errors.append((int(line) if line is not None else None, message))

    @property
    def failing(self):
        """True when the input is already refused: a strict ledger with an error recorded
        (:meth:`close` will raise). A streaming reader stops reading there."""
        return bool(self._errors) and not self.lenient

    def truncated(self, message):
        """Say that the input was cut off and what was lost (kept in ``attrs``).

        Several calls add up (``"; "``-joined); a message that already starts with what
        was said before replaces it, so a reader may also pass the whole sentence.
        """
        if self.truncation and not message.startswith(self.truncation):
            message = f"{self.truncation}; {message}"
        self.truncation = message

    def cut_off(self, line, what="line", detail=""):
        """The last ``what`` (line, row, snapshot), at ``line``, is incomplete: skip it
        as ``"truncated <what>"`` and say so in ``truncation``."""
        self.skip(line, f"truncated {what}")
        self.truncated(f"last {what} (line {line}) cut off{detail}")

    def unmarked(self):
        """Line numbers not yet accounted for."""
        return np.flatnonzero(self._state[1:] == 0) + 1

    def close(self):
        """Raise :class:`ParseError` for errors and unaccounted lines; else return attrs."""
        errors = list(self._errors)
        if self.lenient:
            self.skip(self.unmarked(), UNRECOGNISED.format(unit=self.unit))
        for n in self.unmarked()[:50]:
            quoted = ""
            if self._lines is not None and n - 1 < len(self._lines):
                quoted = f": {self._lines[n - 1][:80]!r}"
            errors.append((int(n), f"unrecognised {self.unit}{quoted}"))
        if errors:
            errors.sort(key=lambda e: (e[0] is None, e[0] or 0))
            line, message = errors[0]
            raise ParseError(message, line=line, errors=errors)
        counts = np.zeros(len(self._reasons), dtype=np.int64)
        for start in range(1, self.total + 1, BINCOUNT_BLOCK):  # (bincount casts to int64)
            counts += np.bincount(self._state[start:start + BINCOUNT_BLOCK], minlength=len(counts))
        skipped = {r: int(c) for r, c in zip(self._reasons[2:], counts[2:]) if c}
        return {
            "lines_total": self.total,
            "lines_parsed": int(counts[1]) if len(counts) > 1 else 0,
            "lines_skipped": int(sum(skipped.values())),
            "skipped_reasons": json.dumps(skipped, sort_keys=True),
            "ledger_unit": self.unit,
            "truncated": int(bool(self.truncation)),
            "truncation": self.truncation,
        }


def build(kind, variables, *, fmt, tool, tool_version="", ledger, extras=None,
          coords=None, attrs=None, tool_summary=None, consistency=None):
    """Assemble a contract Dataset.

    Parameters
    ----------
    kind : str
        One of ``KINDS``.
    variables : dict
        Shared variables: ``name -> (dims, values)``; units and long_name come from
        ``VARIABLES``.
    fmt, tool, tool_version : str
        Registry name of the format, the tool and its version as the log states it.
    ledger : Ledger or dict
        Closed here: raises if any line is unaccounted for; or what its
        :meth:`Ledger.close` gave already.
    extras : dict, optional
        Format-specific variables: ``name -> (dims, values, units, long_name)``; names
        must carry the format's prefix.
    coords : dict, optional
        Extra coordinates ``name -> (dims, values, units, long_name)``.
    attrs : dict, optional
        Further attrs (strings or numbers only, so that netCDF can store them).
    tool_summary : dict, optional
        What the tool printed as its own totals.
    consistency : list of dict, optional
        Checks of the tool's totals against the data, from :func:`consistency_check`.

    Throughput runs whose reader does not set ``start_time`` get NaT (the log did not say).
    """
    ledger_attrs = ledger if isinstance(ledger, dict) else ledger.close()
    if kind == "throughput" and "start_time" not in variables and "throughput" in variables:
        n_runs = len(np.atleast_1d(variables["throughput"][1]))
        variables = {**variables, "start_time": (("run",), np.full(n_runs, np.datetime64("NaT", "ns")))}
    data_vars = {}
    for name, (dims, values) in variables.items():
        units, long_name = VARIABLES[name]
        attrs_ = {"long_name": long_name} if units == TIME else {"units": units, "long_name": long_name}
        data_vars[name] = _variable(dims, values, attrs_)
    for name, (dims, values, units, long_name) in (extras or {}).items():
        data_vars[name] = _variable(dims, values, {"units": units, "long_name": long_name})
    ds = xr.Dataset(data_vars)
    index_dims = {d for v in ds.variables.values() for d in v.dims}
    for dim in sorted(index_dims):
        if dim in VARIABLES and dim not in ds.coords:
            units, long_name = VARIABLES[dim]
            # (an index over the array itself: xarray would otherwise copy it into one)
            ds = ds.assign_coords({dim: xr.Variable(dim, pd.Index(np.arange(ds.sizes[dim]), copy=False),
                                                    {"units": units, "long_name": long_name})})
    for name, (dims, values, units, long_name) in (coords or {}).items():
        ds = ds.assign_coords({name: xr.Variable(dims, values, {"units": units, "long_name": long_name})})
    ds.attrs.update({
        "kind": kind, "format": fmt, "tool": tool, "tool_version": tool_version or "",
        "source_path": "", "source_sha256": "", "contract_version": CONTRACT_VERSION,
        "tool_summary": json.dumps(tool_summary or {}, sort_keys=True),
        "consistency": json.dumps(list(consistency or []), sort_keys=True),
        "consistent": int(all(c["ok"] for c in consistency or [])),
    })
    ds.attrs.update(ledger_attrs)
    ds.attrs.update(attrs or {})
    refuse_infinite(ds)
    return ds


#: Block length of :func:`_all_str` (bounds its temporary list).
STR_CHECK_BLOCK = 1 << 20


def _variable(dims, values, attrs):
    """``xr.Variable(dims, values, attrs)``, an object array of ``str`` kept as it is.

    xarray passes an object array through ``pandas.Series`` (to turn datetime objects into
    ``datetime64``), and pandas 3 infers strings there: the array comes back holding a new
    ``str`` of some 55 bytes for every element, where references to a few shared strings
    (a ping log's ``status``) take 8 bytes (0.4 GB more for a 300 MB log). Such an array
    needs none of that conversion, and its values are the same.
    """
    if isinstance(values, np.ndarray) and values.dtype == object and _all_str(values):
        return xr.Variable(dims, values, attrs, fastpath=True)
    return xr.Variable(dims, values, attrs)


def _all_str(values):
    """True if every element of the object array ``values`` is a ``str``."""
    return all(type(v) is str for v in _distinct(values))


def _distinct(values):
    """The distinct elements of the object array ``values`` (hashed a block of
    :data:`STR_CHECK_BLOCK` at a time: the temporary list stays bounded on huge logs)."""
    flat = values.ravel()
    return set().union(*(set(flat[i:i + STR_CHECK_BLOCK].tolist()) for i in range(0, flat.size, STR_CHECK_BLOCK)))


def refuse_infinite(ds):
    """A :class:`~thruput.errors.ParseError` for the first infinite value of ``ds``: a
    number in the log too large for a float64 (hundreds of digits: a damaged file) would
    otherwise be read as ``inf``, silently. It names the value's line where the Dataset
    has one (a ``line`` or ``*_line`` variable along the value's first dimensions)."""
    for name, var in ds.variables.items():
        if var.dtype.kind != "f" or not var.size:
            continue
        values = var.values
        # (the largest and smallest values first: no temporary as large as the array)
        if not (np.isinf(np.fmax.reduce(values, axis=None)) or np.isinf(np.fmin.reduce(values, axis=None))):
            continue
        bad = np.isinf(values)
        if not bad.any():
            continue
        index = np.unravel_index(int(np.argmax(bad)), bad.shape)
        where = ", ".join(f"{d} {i}" for d, i in zip(var.dims, index))
        raise ParseError(f"{name}{f' ({where})' if where else ''} is infinite: a number too large "
                         f"for a float (a damaged log?)", line=_line_of(ds, var.dims, index))


def _line_of(ds, dims, index):
    """The line of the value at ``index`` along ``dims``, from the ``line`` or ``*_line``
    variable of ``ds`` that shares the most of those dimensions (first ones first), if any."""
    lines = [v for n, v in ds.variables.items()
             if (n == "line" or n.endswith("_line")) and v.dims and v.dims == dims[:len(v.dims)]
             and v.dtype.kind in "iuf"]
    for var in sorted(lines, key=lambda v: -len(v.dims)):
        value = var.values[tuple(index[:len(var.dims)])]
        if np.isfinite(value) and value > 0:
            return int(value)
    return None


#: A consistency check named by the run it is about (``"run N: ..."``), as the parsers of
#: logs holding several runs name them: group 1 the run's index, group 2 the rest.
RUN_CHECK = re.compile(r"^run ([0-9]+):(.*)$", re.S)


def failed_checks_per_run(checks, n_runs):
    """Failed checks (``attrs["consistency"]`` records) of each of ``n_runs`` runs, by the
    run each names (:data:`RUN_CHECK`); float counts, 0.0 where every check passed or none
    applied."""
    out = np.zeros(n_runs)
    for check in checks:
        m = None if check["ok"] else RUN_CHECK.match(check["check"])
        if m and int(m.group(1)) < n_runs:
            out[int(m.group(1))] += 1
    return out


def consistency_check(check, tool, data, *, rtol=0.01, atol=0.0, note="", at_most=False):
    """One check of a number the tool printed against the same number from the data.

    Parameters
    ----------
    check : str
        What is compared, e.g. ``"bytes received: end.sum_received vs sum of intervals"``.
    tool, data : float
        The tool's own value and the value derived from the parsed records.
    rtol, atol : float
        Agreement means ``abs(tool - data) <= atol + rtol * abs(tool)`` (both NaN agrees;
        one NaN does not).
    note : str
        Why a difference within or beyond the tolerance is expected, if it is.
    at_most : bool
        ``tool`` is a bound, not the same number: agreement means
        ``data <= tool + atol + rtol * abs(tool)``, any amount below it being possible (the
        bytes a receiver counted against those its sender wrote: the rest was lost or still
        buffered when the test ended).

    Returns
    -------
    dict
        ``{"check", "tool", "data", "ok", "note"}``, JSON-serialisable (NaN becomes None).
    """
    t = float(tool) if tool is not None else math.nan
    d = float(data) if data is not None else math.nan
    t_nan, d_nan = math.isnan(t), math.isnan(d)
    gap = d - t if at_most else abs(t - d)
    ok = (t_nan and d_nan) if t_nan or d_nan else gap <= atol + rtol * abs(t)
    return {"check": check, "tool": None if t_nan else t, "data": None if d_nan else d,
            "ok": bool(ok), "note": note}


def agreeing(tool, data, *, rtol=0.01, atol=0.0, at_most=False):
    """Whether each ``tool`` value agrees with its ``data`` value, by
    :func:`consistency_check`'s rule (arrays, or scalars broadcast against them; ``at_most``
    one flag or one per value)."""
    tool, data, rtol, atol, at_most = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (tool, data, rtol, atol)), np.asarray(at_most, dtype=bool))
    t_nan, d_nan = np.isnan(tool), np.isnan(data)
    with np.errstate(invalid="ignore"):
        gap = np.where(at_most, data - tool, np.abs(tool - data))
        return np.where(t_nan | d_nan, t_nan & d_nan, gap <= atol + rtol * np.abs(tool))


def consistency_checks(checks, tool, data, *, rtol=0.01, atol=0.0, note="", at_most=False):
    """Many :func:`consistency_check` records at once, from arrays (the same rule, the same
    records): ``checks`` a sequence of names; ``tool``, ``data``, ``rtol``, ``atol``,
    ``at_most`` arrays of its length (or scalars); ``note`` a string or a sequence of them.
    For readers that check thousands of runs (an iperf3 archive) without a Python call per
    number."""
    n = len(checks)
    tool, data = (np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in (tool, data))
    t_nan, d_nan = np.isnan(tool), np.isnan(data)
    ok = agreeing(tool, data, rtol=rtol, atol=atol, at_most=at_most)
    notes = [note] * n if isinstance(note, str) else list(note)
    return [{"check": c, "tool": None if tn else t, "data": None if dn else d, "ok": o, "note": nt}
            for c, t, d, o, nt, tn, dn in zip(checks, tool.tolist(), data.tolist(), ok.tolist(), notes,
                                               t_nan.tolist(), d_nan.tolist())]


#: Checks of campaign Datasets by ``campaign_kind``: ``"module:function"`` of the module
#: that builds them, imported when such a Dataset is first validated (the contract imports
#: no campaign code, and needs no import to have happened before).
CAMPAIGN_CHECKS = {"monitor": "thruput.monitor.reader:validate_monitor",
                   "design": "thruput.design.dataset:validate_design"}


def campaign_check(campaign_kind):
    """The function that validates campaign Datasets of ``campaign_kind`` (None if none)."""
    from importlib import import_module

    target = CAMPAIGN_CHECKS.get(campaign_kind)
    if target is None:
        return None
    module, _, name = target.partition(":")
    return getattr(import_module(module), name)


def validate(ds: xr.Dataset) -> xr.Dataset:
    """Check that ``ds`` follows the contract of its kind; return it unchanged.

    A campaign Dataset of a kind in :data:`CAMPAIGN_CHECKS` (``kind="campaign"``,
    ``campaign_kind="monitor"``) is checked by the function registered there
    (:func:`thruput.monitor.reader.validate_monitor`,
    :func:`thruput.design.dataset.validate_design`, found by :func:`campaign_check`).

    Raises
    ------
    ContractError
        Listing every violation: missing attrs, unknown kind, missing shared variables or
        wrong dimensions, wrong units, variables without ``units``/``long_name``,
        unprefixed extras, inconsistent line accounting.
    """
    if ds.attrs.get("kind") == "campaign" and ds.attrs.get("campaign_kind") in CAMPAIGN_CHECKS:
        return campaign_check(ds.attrs["campaign_kind"])(ds)    # a campaign, not one file
    problems = []
    missing = [a for a in REQUIRED_ATTRS if a not in ds.attrs]
    if missing:
        problems.append(f"missing attrs {missing}")
    kind = ds.attrs.get("kind")
    if kind not in KINDS:
        problems.append(f"unknown kind {kind!r}; known: {sorted(KINDS)}")
        raise ContractError("; ".join(problems))
    for required, dims in KINDS[str(kind)].items():
        if required not in ds.variables:
            problems.append(f"missing variable {required!r}")
        elif ds[required].dims != dims:
            problems.append(f"{required!r} has dims {ds[required].dims}, expected {dims}")
    # extras carry the tool's name or the format's first word: iperf2_netpwr, web100_X
    prefixes = tuple({str(ds.attrs.get(a, "")).split("_")[0] + "_"
                      for a in ("format", "tool") if ds.attrs.get(a)})
    for name, var in ds.variables.items():
        if var.dtype.kind == "M":  # datetime64, UTC: the encoder writes CF time units
            if "long_name" not in var.attrs:
                problems.append(f"{name!r} lacks long_name")
            elif name in VARIABLES and VARIABLES[name][0] != TIME:
                problems.append(f"{name!r} is a time, contract says units {VARIABLES[name][0]!r}")
            continue
        units = var.attrs.get("units")
        if units is None or "long_name" not in var.attrs:
            problems.append(f"{name!r} lacks units or long_name")
            continue
        if units not in UNITS:
            problems.append(f"{name!r} has units {units!r}, not one of {sorted(UNITS)}")
        if name in VARIABLES:
            if units != VARIABLES[name][0] or units == TIME:
                problems.append(f"{name!r} has units {units!r}, contract says {VARIABLES[name][0]!r}")
        elif not (prefixes and str(name).startswith(prefixes)):
            problems.append(f"extra variable {name!r} lacks a format prefix {prefixes}")
    if kind == "rtt" and "status" in ds:
        status = ds["status"].values
        if status.dtype == object:  # references to a few str objects: hash them, no copy
            bad = _distinct(status) - set(PROBE_STATUSES)
        else:
            status = status.astype(str, copy=False)
            # (isin against five names is five comparisons; a np.unique of all would sort)
            bad = set(np.unique(status[~np.isin(status, PROBE_STATUSES)]))
        if bad:
            problems.append(f"status has values {sorted(bad)} outside {PROBE_STATUSES}")
    try:
        total, parsed, skipped = (int(ds.attrs[k]) for k in ("lines_total", "lines_parsed", "lines_skipped"))
        reasons = json.loads(ds.attrs["skipped_reasons"])
        if parsed + skipped != total:
            problems.append(f"lines parsed {parsed} + skipped {skipped} != total {total}")
        if sum(reasons.values()) != skipped:
            problems.append("skipped_reasons do not add up to lines_skipped")
        json.loads(ds.attrs["tool_summary"])
        json.loads(ds.attrs["consistency"])
    except (KeyError, ValueError, TypeError) as exc:
        problems.append(f"bad line accounting attrs: {exc}")
    if problems:
        raise ContractError(f"{ds.attrs.get('source_path') or kind}: " + "; ".join(problems))
    return ds
