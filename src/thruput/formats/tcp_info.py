"""Linux ``tcp_info`` snapshots as printed by ``ss -ti`` (iproute2), polled repeatedly.

``ss -tin`` prints, per TCP socket, a socket line (state, queues, local and peer address)
and an indented line of the kernel's ``struct tcp_info`` (the modern successor of web100)::

    # time: 1795355773.886576
    State Recv-Q Send-Q Local Address:Port  Peer Address:Port Process
    ESTAB 0      112944    10.188.0.1:45868   10.188.0.2:38578
    	 cubic wscale:10,10 rto:208 rtt:4.84/0.008 mss:1448 ... cwnd:9 ssthresh:9 ...

With ``-O`` (``--oneline``) both are on one line. ``ss`` prints no time, so thruput's
recorder (``tests/data/tcp_info/record.sh``) writes ``# time: <Unix seconds>`` before every
poll; every socket printed after such a line is one snapshot at that time (NaN when a file
has no time lines). Rates may be raw (``-n``: ``20857040bps``) or scaled (``20.9Mbps``).

``ss`` prints most counters only when they are non-zero (``bytes_retrans``, ``retrans``,
``lost``, ``unacked``...: ``ZERO_WHEN_ABSENT``), so an absent counter is 0, while an absent
gauge (``ssthresh`` before the first loss, "infinite") is NaN.

Schema (kind ``tcp_instrumentation``, dimension ``snapshot``: one socket in one poll)
-----------------------------------------------------------------------------------
``time`` (s since the first poll), ``connection`` (``local->peer`` as printed), ``cwnd``
and ``ssthresh`` (segments x ``mss`` -> bytes; the segment counts stay as
``tcp_info_cwnd_segments``, ``tcp_info_ssthresh_segments``), ``srtt``/``rttvar`` (ms,
from ``rtt:srtt/rttvar``), ``mss``, ``bytes_acked``, ``retransmits_total`` (the total of
``retrans:current/total``). Every other field is ``tcp_info_<field>`` (see ``FIELDS``;
rates in bit/s, times in ms), the congestion control module's name ``tcp_info_cc``, its
parenthesised state ``tcp_info_<cc>_<key>`` (``tcp_info_bbr_bw``), flags (``ts``, ``sack``,
``app_limited``...) as 0/1, and tokens ss may add that this reader does not know are kept
verbatim in ``tcp_info_other``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import math
import re

import numpy as np

from ..contract import Ledger, build, split_lines
from ..errors import ParseError

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "tcp_info"
KIND = "tcp_instrumentation"
TOOL = "ss"
BINARY = False

TIME_RE = re.compile(r"^# time: (?P<time>\d+(?:\.\d+)?)\s*$")
HEADER_RE = re.compile(r"^(?:Netid\s+)?State\s+Recv-Q\s+Send-Q\s+Local Address:Port\s+Peer Address:Port")
STATES = ("ESTAB", "SYN-SENT", "SYN-RECV", "FIN-WAIT-1", "FIN-WAIT-2", "TIME-WAIT", "CLOSE",
          "CLOSE-WAIT", "LAST-ACK", "LISTEN", "CLOSING", "UNCONN", "UNKNOWN")
SOCKET_RE = re.compile(r"^(?:tcp\s+)?(?P<state>" + "|".join(STATES) + r")\s+(?P<recv_q>\d+)\s+"
                       r"(?P<send_q>\d+)\s+(?P<local>\S+)\s+(?P<peer>\S+)(?:\s+(?P<rest>.*\S|))?\s*$")
INFO_RE = re.compile(r"^\s+\S")
SNIFF_INFO_RE = re.compile(r"\brtt:\d+(?:\.\d+)?/\d")

#: ss field -> (units, long_name). Values are numbers, optionally with the unit suffix
#: ss prints (``ms``, ``bps``); shared names are handled in ``SHARED``.
FIELDS = {
    "rto": ("ms", "retransmission timeout"),
    "ato": ("ms", "delayed-ACK timeout"),
    "backoff": ("count", "RTO backoffs"),
    "pmtu": ("byte", "path MTU"),
    "rcvmss": ("byte", "MSS estimated for the receive direction"),
    "advmss": ("byte", "MSS advertised to the peer"),
    "bytes_sent": ("byte", "bytes sent incl. retransmissions"),
    "bytes_retrans": ("byte", "bytes retransmitted"),
    "bytes_received": ("byte", "bytes received"),
    "segs_out": ("count", "segments sent"),
    "segs_in": ("count", "segments received"),
    "data_segs_out": ("count", "data segments sent"),
    "data_segs_in": ("count", "data segments received"),
    "send": ("bit/s", "sending rate estimate cwnd x mss / srtt"),
    "lastsnd": ("ms", "time since the last send"),
    "lastrcv": ("ms", "time since the last receive"),
    "lastack": ("ms", "time since the last ACK received"),
    "pacing_rate": ("bit/s", "pacing rate"),
    "pacing_rate_max": ("bit/s", "maximum pacing rate"),
    "delivery_rate": ("bit/s", "delivery rate of the most recent sample"),
    "delivered": ("count", "segments delivered"),
    "delivered_ce": ("count", "segments delivered with ECN CE marks"),
    "busy": ("ms", "time busy sending"),
    "rwnd_limited": ("ms", "time limited by the receive window"),
    "rwnd_limited_percent": ("percent", "share of busy time limited by the receive window"),
    "sndbuf_limited": ("ms", "time limited by the send buffer"),
    "sndbuf_limited_percent": ("percent", "share of busy time limited by the send buffer"),
    "unacked": ("count", "segments sent and not yet acknowledged"),
    "retrans": ("count", "segments retransmitted and not yet acknowledged"),
    "lost": ("count", "segments considered lost"),
    "sacked": ("count", "segments selectively acknowledged"),
    "fackets": ("count", "FACKed segments"),
    "dsack_dups": ("count", "duplicate segments reported by D-SACK"),
    "reordering": ("count", "reordering degree in segments"),
    "reord_seen": ("count", "reordering events seen"),
    "rcv_rtt": ("ms", "receiver-side RTT estimate"),
    "rcv_space": ("byte", "receive-buffer auto-tuning space"),
    "rcv_ssthresh": ("byte", "receive window clamp of slow start"),
    "notsent": ("byte", "bytes queued and not yet sent"),
    "minrtt": ("ms", "minimum RTT seen"),
    "snd_wnd": ("byte", "peer's advertised receive window"),
    "rcv_wnd": ("byte", "receive window advertised to the peer"),
    "snd_wscale": ("1", "send window scale"),
    "rcv_wscale": ("1", "receive window scale"),
    "cwnd_segments": ("count", "congestion window in segments as printed"),
    "ssthresh_segments": ("count", "slow-start threshold in segments as printed"),
    "recv_q": ("byte", "receive queue (socket line)"),
    "send_q": ("byte", "send queue (socket line)"),
}
#: Counters ss prints only when non-zero: absent means 0.
ZERO_WHEN_ABSENT = frozenset({
    "backoff", "bytes_sent", "bytes_retrans", "bytes_received", "bytes_acked", "segs_out",
    "segs_in", "data_segs_out", "data_segs_in", "lastsnd", "lastrcv", "lastack", "delivered",
    "delivered_ce", "busy", "rwnd_limited", "sndbuf_limited", "unacked", "retrans",
    "retrans_total", "lost", "sacked", "fackets", "dsack_dups", "reord_seen", "notsent",
})
#: Flags ss prints as bare words.
FLAGS = ("ts", "sack", "ecn", "ecnseen", "fastopen", "app_limited", "cwr")
#: Fields followed by their value as the next token (``send 20857040bps``).
SPACED = ("send", "pacing_rate", "delivery_rate")
#: Rate suffixes of ss without -n (decimal prefixes).
RATE_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
RATE_RE = re.compile(r"^(?P<value>\d+(?:\.\d+)?)(?P<prefix>[KMGT]?)bps$")
MS_RE = re.compile(r"^(?P<value>\d+(?:\.\d+)?)(?:ms)?(?:\((?P<percent>\d+(?:\.\d+)?)%\))?$")
KV_RE = re.compile(r"^(?P<key>[a-z_][a-z0-9_]*):(?P<value>\S+)$")


def sniff(head: str) -> bool:
    """True for ``ss -ti`` output: its header or socket lines, and a ``rtt:a/b`` field."""
    if not SNIFF_INFO_RE.search(head):
        return False
    return any(HEADER_RE.match(l) or SOCKET_RE.match(l) for l in head.split("\n")[:40])


def parse(text: str) -> xr.Dataset:
    """Parse polled ``ss -ti`` output into a ``tcp_instrumentation`` Dataset."""
    if not text.strip():
        raise ParseError("empty input")
    lines = split_lines(text)
    ledger = Ledger(len(lines), lines=lines)
    snapshots = []          # (socket line, poll time, socket match, info tokens)
    poll_time = None
    pending = None          # socket line waiting for its info line
    unterminated = not text.endswith("\n")

    def flush_pending():
        nonlocal pending
        if pending is not None:
            ledger.skip(pending[0], "socket without tcp_info")
            pending = None

    for i, line in enumerate(lines):
        lineno = i + 1
        last = unterminated and i == len(lines) - 1
        if last and line.strip() and not TIME_RE.match(line):
            # ss ends every line with a newline: an unterminated last line was cut off,
            # and with it the snapshot it belongs to
            ledger.skip(lineno, "truncated snapshot")
            if pending is not None:
                ledger.skip(pending[0], "truncated snapshot")
                pending = None
            ledger.truncated(f"last snapshot (line {lineno}) cut off")
            continue
        if pending is not None and INFO_RE.match(line):
            snapshots.append((pending[0], poll_time, pending[1], line.split()))
            ledger.parsed([pending[0], lineno])
            pending = None
            continue
        flush_pending()
        if m := TIME_RE.match(line):
            poll_time = float(m["time"])
            if not math.isfinite(poll_time):    # (hundreds of digits: inf, then NaN times)
                raise ParseError(f"# time: {m['time'][:20]}... is not a finite number of seconds",
                                 line=lineno)
            ledger.parsed(lineno)
        elif not line.strip():
            ledger.skip(lineno, "blank")
        elif HEADER_RE.match(line):
            ledger.skip(lineno, "header")
        elif m := SOCKET_RE.match(line):
            if m["rest"] and ":" in m["rest"]:          # ss -O: info on the socket line
                snapshots.append((lineno, poll_time, m, m["rest"].split()))
                ledger.parsed(lineno)
            else:
                pending = (lineno, m)
    flush_pending()
    return _process(snapshots, ledger)


def _fields(tokens, lineno):
    """Info tokens -> {field: raw string}; raises ParseError naming the line."""
    out, other = {}, []
    k = 0
    while k < len(tokens):
        tok = tokens[k]
        if tok in SPACED and k + 1 < len(tokens):
            value = tokens[k + 1]
            if tok == "pacing_rate" and "/" in value:       # pacing_rate X/Ymax
                value, out["pacing_rate_max"] = value.split("/", 1)
            out[tok] = value
            k += 2
            continue
        if m := KV_RE.match(tok):
            key, value = m["key"], m["value"]
            if value.startswith("("):                        # bbr:(bw:..,mrtt:..)
                for item in value.strip("()").split(","):
                    sub = item.split(":", 1)
                    if len(sub) == 2 and (RATE_RE.match(sub[1]) or MS_RE.match(sub[1])):
                        out[f"{key}_{sub[0]}"] = sub[1]
                    else:
                        other.append(f"{key}:{item}")
            elif key == "rtt":
                out["srtt"], _, out["rttvar"] = value.partition("/")
            elif key == "retrans":
                out["retrans"], _, out["retrans_total"] = value.partition("/")
            elif key == "wscale":
                out["snd_wscale"], _, out["rcv_wscale"] = value.partition(",")
            elif key in ("cwnd", "ssthresh"):
                out[f"{key}_segments"] = value
            elif key in FIELDS or key == "mss" or RATE_RE.match(value) or MS_RE.match(value):
                out[key] = value
            else:                                            # -e's sk:ffff.., cgroup:/...
                other.append(tok)
        elif tok in FLAGS:
            out[tok] = "1"
        elif "cc" not in out and re.match(r"^[a-z][a-z0-9_]*$", tok):
            out["cc"] = tok                                  # congestion control comes first
        else:
            other.append(tok)
        k += 1
    if other:
        out["other"] = " ".join(other)
    return out


def _number(field, raw, lineno):
    """One ss value -> float in the units of ``FIELDS`` (bps -> bit/s, ms -> ms)."""
    if m := RATE_RE.match(raw):
        return float(m["value"]) * RATE_SCALE[m["prefix"]], None
    if m := MS_RE.match(raw):
        return float(m["value"]), (float(m["percent"]) if m["percent"] else None)
    raise ParseError(f"ss field {field}: value {raw!r} is not a number", line=lineno)


def _process(snapshots, ledger):
    """Every type conversion: raw ss values -> numbers with units; assemble the Dataset."""
    n = len(snapshots)
    parsed = [_fields(tokens, line) for line, _, _, tokens in snapshots]
    for (line, _, m, _), fields in zip(snapshots, parsed):
        fields["recv_q"], fields["send_q"] = m["recv_q"], m["send_q"]
    keys = []
    for fields in parsed:
        keys.extend(k for k in fields if k not in keys)
    numbers, strings = {}, {}
    for key in keys:
        if key in ("cc", "other"):
            strings[key] = np.array([f.get(key, "") for f in parsed], dtype=object)
            continue
        if key in FLAGS:
            numbers[key] = np.array([1.0 if key in f else 0.0 for f in parsed])
            continue
        default = 0.0 if key in ZERO_WHEN_ABSENT else np.nan
        values = np.full(n, default)
        for j, (fields, snap) in enumerate(zip(parsed, snapshots)):
            if key in fields:
                values[j], percent = _number(key, fields[key], snap[0])
                if percent is not None:
                    numbers.setdefault(f"{key}_percent", np.full(n, np.nan))[j] = percent
        numbers[key] = values
    mss = numbers.get("mss", np.full(n, np.nan))
    times = np.array([t if t is not None else np.nan for _, t, _, _ in snapshots], dtype=float)
    variables = {
        "time": (("snapshot",), times - times[0] if n else times),
        "line": (("snapshot",), np.array([s[0] for s in snapshots], dtype=np.int64)),
        "connection": (("snapshot",), np.array([f"{s[2]['local']}->{s[2]['peer']}" for s in snapshots],
                                               dtype=object)),
        "cwnd": (("snapshot",), numbers.get("cwnd_segments", np.full(n, np.nan)) * mss),
        "ssthresh": (("snapshot",), numbers.get("ssthresh_segments", np.full(n, np.nan)) * mss),
        "srtt": (("snapshot",), numbers.pop("srtt", np.full(n, np.nan))),
        "rttvar": (("snapshot",), numbers.pop("rttvar", np.full(n, np.nan))),
        "mss": (("snapshot",), numbers.pop("mss", np.full(n, np.nan))),
        "bytes_acked": (("snapshot",), numbers.pop("bytes_acked", np.zeros(n))),
        "retransmits_total": (("snapshot",), numbers.pop("retrans_total", np.zeros(n))),
    }
    extras = {
        "tcp_info_timestamp": (("snapshot",), times, "s", "Unix time of the poll (# time: line)"),
        "tcp_info_state": (("snapshot",), np.array([s[2]["state"] for s in snapshots], dtype=object),
                           "1", "TCP state as printed by ss"),
    }
    for key, values in numbers.items():
        units, long_name = FIELDS.get(key, (None, None))
        if units is None:
            # fields of the congestion control's state (bbr_bw, bbr_mrtt...) or unknown
            units = "bit/s" if key.endswith("_bw") else "ms" if key.endswith("rtt") else "1"
            long_name = f"ss field {key} as printed"
        extras[f"tcp_info_{key}"] = (("snapshot",), values, units, long_name)
    for key, values in strings.items():
        long_name = "congestion control algorithm" if key == "cc" else "ss tokens this reader does not know"
        extras[f"tcp_info_{key}"] = (("snapshot",), values, "1", long_name)
    return build(KIND, variables, fmt=NAME, tool=TOOL, ledger=ledger, extras=extras,
                 tool_summary={})
