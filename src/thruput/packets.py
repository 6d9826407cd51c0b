"""Headers-only packet captures (pcap, as ``tcpdump -s 128 -w`` writes them) as per-flow
TCP series: delivered bytes and throughput over time, retransmissions, RTT samples from
ACKs and the receiver's window (what tcptrace reports).

:func:`read_pcap` reads a classic pcap file (microsecond or nanosecond timestamps, either
byte order; link types Ethernet, raw IP, Linux cooked v1/v2) and returns the TCP flows it
holds, each direction apart (:class:`Flow`). A file is refused cleanly
(:class:`~thruput.errors.ParseError` naming the file and the record) when its header is not
pcap's or a record claims more bytes than its snap length; a file cut off inside its last
record keeps the complete records (``truncated``). Memory is bounded by ``max_records``.

How the numbers are made, for the data direction of a flow (the one with payload):

``bytes``
    The highest sequence number seen (``seq + payload length``) minus the first one: the
    bytes the sender put on the wire once, retransmissions not counted twice.
``retransmits``
    Segments with payload that start below the highest sequence number already sent.
``rtt``
    For each segment sent once (Karn), the time from it to the first ACK of the reverse
    direction that covers it (only meaningful where the capture is at the sender).
``bytes_acked``, ``throughput_acked``
    The highest ACK of the reverse direction minus the first data byte (what the receiver
    got), over the time from the first data segment to that ACK.
``window``
    The receiver's advertised window in bytes (the ACKs' window field shifted by the
    window scale of its SYN).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from .errors import ParseError

__all__ = ["Flow", "read_pcap", "flow_series", "MAX_RECORDS"]

#: pcap magic numbers -> (byte order, timestamp divisor to seconds).
MAGIC = {b"\xd4\xc3\xb2\xa1": ("<", 1e6), b"\xa1\xb2\xc3\xd4": (">", 1e6),
         b"\x4d\x3c\xb2\xa1": ("<", 1e9), b"\xa1\xb2\x3c\x4d": (">", 1e9)}
#: Link types (LINKTYPE_*) -> bytes before the IP header (None: read from the frame).
LINK_ETHERNET, LINK_RAW, LINK_RAW_OLD, LINK_SLL, LINK_SLL2 = 1, 101, 12, 113, 276
LINK_HEADER = {LINK_ETHERNET: 14, LINK_RAW: 0, LINK_RAW_OLD: 0, LINK_SLL: 16, LINK_SLL2: 20}
#: Records read at most (a capture is data like any log: bounded).
MAX_RECORDS = 20_000_000
TCP = 6


@dataclass
class Flow:
    """One direction of one TCP connection: (src, sport) -> (dst, dport)."""

    src: str
    sport: int
    dst: str
    dport: int
    time: list = field(default_factory=list)      # s since the capture's first packet
    seq: list = field(default_factory=list)
    length: list = field(default_factory=list)    # payload bytes
    ack: list = field(default_factory=list)
    window: list = field(default_factory=list)    # raw window field
    flags: list = field(default_factory=list)
    wscale: int = 0

    @property
    def key(self):
        return (self.src, self.sport, self.dst, self.dport)

    @property
    def payload_bytes(self) -> int:
        return int(np.sum(self.length)) if self.length else 0


def read_pcap(path, max_records=MAX_RECORDS):
    """The TCP flows of a pcap file: ``(flows, info)`` with ``flows`` a dict keyed by
    ``(src, sport, dst, dport)`` and ``info`` the capture's ``start`` (Unix s), ``records``,
    ``link_type``, ``snaplen``, ``truncated`` and the count of non-TCP ``skipped`` records.

    Raises
    ------
    ParseError
        Not a pcap file, an unknown link type, a record longer than the snap length, or
        more than ``max_records`` records.
    """
    data = open(path, "rb").read()
    if len(data) < 24 or data[:4] not in MAGIC:
        raise ParseError("not a pcap file (no pcap magic number)", line=1, path=str(path))
    order, divisor = MAGIC[data[:4]]
    snaplen, link = struct.unpack(order + "II", data[16:24])
    link &= 0x0FFFFFFF
    if link not in LINK_HEADER:
        raise ParseError(f"pcap link type {link} not read (Ethernet, raw IP, Linux cooked only)",
                         line=1, path=str(path))
    record = struct.Struct(order + "IIII")
    flows, start, n, pos, skipped, truncated = {}, None, 0, 24, 0, False
    while pos < len(data):
        if pos + 16 > len(data):
            truncated = True
            break
        sec, frac, incl, orig = record.unpack_from(data, pos)
        n += 1
        if n > max_records:
            raise ParseError(f"more than {max_records} records", line=n, path=str(path))
        if incl > max(snaplen, 262144) or incl > orig:
            raise ParseError(f"record {n} claims {incl} captured bytes (snap length {snaplen}, "
                             f"original {orig}): a damaged capture", line=n, path=str(path))
        frame = data[pos + 16:pos + 16 + incl]
        pos += 16 + incl
        if len(frame) < incl:
            truncated = True
            n -= 1
            break
        when = sec + frac / divisor
        start = when if start is None else start
        if not _tcp(frame, link, when - start, flows):
            skipped += 1
    return flows, {"start": start, "records": n, "link_type": link, "snaplen": snaplen,
                   "truncated": truncated, "skipped": skipped}


def _tcp(frame, link, when, flows):
    """Add one frame's TCP header to its flow; False if it is not IPv4/IPv6 TCP."""
    off = LINK_HEADER[link]
    if link == LINK_ETHERNET:
        if len(frame) < 14:
            return False
        ethertype = int.from_bytes(frame[12:14], "big")
        while ethertype == 0x8100 and len(frame) >= off + 4:   # VLAN tags
            ethertype = int.from_bytes(frame[off + 2:off + 4], "big")
            off += 4
        if ethertype not in (0x0800, 0x86DD):
            return False
    if len(frame) < off + 20:
        return False
    version = frame[off] >> 4
    if version == 4:
        ihl = (frame[off] & 0x0F) * 4
        if frame[off + 9] != TCP:
            return False
        total = int.from_bytes(frame[off + 2:off + 4], "big")
        src, dst = _ip4(frame[off + 12:off + 16]), _ip4(frame[off + 16:off + 20])
        tcp, ip_payload = off + ihl, total - ihl
    elif version == 6:
        if len(frame) < off + 40 or frame[off + 6] != TCP:   # (extension headers: not followed)
            return False
        ip_payload = int.from_bytes(frame[off + 4:off + 6], "big")
        src, dst = _ip6(frame[off + 8:off + 24]), _ip6(frame[off + 24:off + 40])
        tcp = off + 40
    else:
        return False
    if len(frame) < tcp + 20:
        return False
    sport, dport, seq, ack, doff_flags, window = struct.unpack_from("!HHIIHH", frame, tcp)
    doff = (doff_flags >> 12) * 4
    flags = doff_flags & 0x1FF
    key = (src, sport, dst, dport)
    flow = flows.get(key)
    if flow is None:
        flow = flows[key] = Flow(src, sport, dst, dport)
    if flags & 0x02:       # SYN: the window scale option
        flow.wscale = _wscale(frame[tcp + 20:tcp + doff])
    flow.time.append(when)
    flow.seq.append(seq)
    flow.length.append(max(ip_payload - doff, 0))
    flow.ack.append(ack)
    flow.window.append(window)
    flow.flags.append(flags)
    return True


def _ip4(raw):
    return ".".join(str(b) for b in raw)


def _ip6(raw):
    import ipaddress
    return str(ipaddress.IPv6Address(bytes(raw)))


def _wscale(options):
    i = 0
    while i < len(options):
        kind = options[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(options):
            break
        size = options[i + 1]
        if kind == 3 and size == 3 and i + 2 < len(options):
            return min(options[i + 2], 14)
        i += max(size, 2)
    return 0


def _unwrap(seq):
    """32-bit sequence numbers made monotonic across wraps (int64)."""
    s = np.asarray(seq, dtype=np.int64)
    step = np.diff(s, prepend=s[:1])
    step = np.where(step < -2**31, step + 2**32, np.where(step > 2**31, step - 2**32, step))
    return s[0] + np.cumsum(step) if len(s) else s


def flow_series(flows, key, bin_s=0.1):
    """The data direction ``key`` of a TCP connection as an xarray Dataset.

    Variables: ``bytes`` (scalar: highest sequence sent minus the first data byte),
    ``retransmits`` (scalar, segments), ``duration`` (s, first to last data segment),
    ``throughput`` (``bytes * 8 / duration``, bit/s); over ``time`` bins of ``bin_s``:
    ``interval_throughput`` (bit/s, new bytes sent in the bin), ``interval_retransmits``;
    over ``sample``: ``rtt`` (ms, Karn), ``rtt_time`` (s); over ``ack``: ``window``
    (byte, the receiver's) and ``ack_time`` (s).
    """
    flow = flows[key]
    reverse = flows.get((flow.dst, flow.dport, flow.src, flow.sport))
    t = np.asarray(flow.time)
    length = np.asarray(flow.length, dtype=np.int64)
    seq = _unwrap(flow.seq)
    data = length > 0
    if not data.any():
        raise ValueError(f"flow {key} carries no payload")
    t, seq, length = t[data], seq[data], length[data]
    end = seq + length
    high_before = np.maximum.accumulate(np.concatenate([[seq[0]], end[:-1]]))
    retrans = seq < high_before
    first = seq[0]
    total = int(end.max() - first)
    duration = float(t[-1] - t[0])
    edges = np.arange(t[0], t[-1] + bin_s, bin_s)
    new = np.maximum(np.maximum.accumulate(end) - np.concatenate([[first], np.maximum.accumulate(end)[:-1]]), 0)
    idx = np.clip(((t - t[0]) / bin_s).astype(int), 0, len(edges) - 1)
    per_bin = np.bincount(idx, weights=new, minlength=len(edges))
    rex_bin = np.bincount(idx, weights=retrans.astype(float), minlength=len(edges))
    rtt, rtt_t, win, ack_t = np.array([]), np.array([]), np.array([]), np.array([])
    acked, last_ack = np.nan, np.nan
    if reverse is not None and reverse.time:
        rflags = np.asarray(reverse.flags)
        has_ack = ((rflags & 0x10) != 0) & ((rflags & 0x04) == 0)   # ACK set, not a reset
    if reverse is not None and has_ack.any():
        at = np.asarray(reverse.time)[has_ack]
        raw_ack = np.asarray(reverse.ack, dtype=np.int64)[has_ack]
        # the ACKs on the unwrapped scale of this flow's sequence numbers
        acks = _unwrap(raw_ack) + (seq[0] - int(np.asarray(flow.seq, dtype=np.int64)[data][0]))
        # (a FIN takes one sequence number: an ACK of it covers no data)
        covered = np.minimum(np.maximum.accumulate(acks), end.max())
        once = ~retrans & ~np.isin(end, end[retrans])
        j = np.searchsorted(covered, end[once], side="left")
        k = np.searchsorted(at, t[once], side="right")
        j = np.maximum(j, k)
        ok = j < len(at)
        rtt = (at[j[ok]] - t[once][ok]) * 1e3
        rtt_t = t[once][ok]
        syn = (rflags[has_ack] & 0x02) != 0   # a SYN's window is never scaled
        win = np.asarray(reverse.window, dtype=float)[has_ack] * np.where(syn, 1.0, 2.0 ** reverse.wscale)
        acked = int(covered.max() - first)
        last_ack = float(at[np.searchsorted(covered, covered.max())])
        ack_t = at
    return xr.Dataset(
        {"bytes": ((), total, {"units": "byte", "long_name": "bytes sent once (highest sequence - first)"}),
         "retransmits": ((), int(retrans.sum()), {"units": "count", "long_name": "segments sent again"}),
         "duration": ((), duration, {"units": "s", "long_name": "first to last data segment"}),
         "throughput": ((), total * 8.0 / duration if duration > 0 else np.nan,
                        {"units": "bit/s", "long_name": "bytes * 8 / duration"}),
         "bytes_acked": ((), acked, {"units": "byte", "long_name": "bytes the receiver acknowledged (highest ACK - first)"}),
         "throughput_acked": ((), acked * 8.0 / (last_ack - t[0]) if last_ack > t[0] else np.nan,
                              {"units": "bit/s", "long_name": "bytes_acked * 8 / (first data segment to last new ACK)"}),
         "interval_throughput": (("time",), per_bin * 8.0 / bin_s, {"units": "bit/s",
                                                                   "long_name": "new bytes sent in the bin"}),
         "interval_retransmits": (("time",), rex_bin, {"units": "count", "long_name": "retransmissions in the bin"}),
         "rtt": (("sample",), rtt, {"units": "ms", "long_name": "segment to first covering ACK (Karn)"}),
         "rtt_time": (("sample",), rtt_t, {"units": "s", "long_name": "time of the sampled segment"}),
         "window": (("ack",), win, {"units": "byte", "long_name": "receiver's advertised window"}),
         "ack_time": (("ack",), ack_t, {"units": "s", "long_name": "time of the ACK"})},
        coords={"time": ("time", edges, {"units": "s", "long_name": "bin start since the capture began"})},
        attrs={"flow": f"{flow.src}:{flow.sport} -> {flow.dst}:{flow.dport}", "bin_s": bin_s})
