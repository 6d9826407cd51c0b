"""Generate the web100 fixtures from the documented formats, and check the committed ones
are exactly what this generator writes.

web100 needs a patched Linux kernel that no longer exists, and the corpus files may not be
copied, so the samples under ``tests/data/web100_*`` are written here from the formats'
descriptions (web100 userland's snaplog layout as documented in m-lab/etl
``web100/pure.go``; M-Lab sidestream ``K:``/``C:`` lines; ``Name: value`` dumps) with
made-up but plausible values of one loopback connection in slow start with one loss.
Re-create them with ``tests/data/web100_snaplog/record.sh`` (or ``python -m
tests.test_format_web100_samples``).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

from .conftest import DATA

VERSION = b"2.5.27 201001301335 net100"
END_OF_HEADER = b"\x00----End-Of-Header---- -1 -1\n"
BEGIN_SNAP = b"----Begin-Snap-Data----\n"
#: web100 type code -> (struct format or encoder name, size)
TYPES = {0: ("<i", 4), 1: ("<i", 4), 2: ("ipv4", 4), 3: ("<I", 4), 4: ("<I", 4), 5: ("<I", 4),
         6: ("<I", 4), 7: ("<Q", 8), 8: ("<H", 2), 9: ("inet", 17), 10: ("inet", 17),
         11: ("str32", 32), 12: ("<B", 1)}

#: The /read group of the samples: current 2.5.27 names, incl. deprecated "_" duplicates.
READ_NEW = [
    ("_CurrentCwnd", 4), ("RemPort", 8), ("RemAddress", 9), ("LocalPort", 8), ("LocalAddress", 9),
    ("Duration", 7), ("_CurrTime", 7), ("StartTimeSec", 1), ("StartTimeUsec", 1),
    ("CurCwnd", 4), ("CurSsthresh", 4), ("SmoothedRTT", 4), ("RTTVar", 4), ("CurMSS", 4),
    ("ThruBytesAcked", 7), ("PktsRetrans", 3), ("CongestionSignals", 3), ("DupAcksIn", 3),
    ("State", 0),
]
#: The same connection as an old (web100 1.x era) kernel named it.
READ_OLD = [
    ("RemotePort", 8), ("RemoteAddress", 10), ("LocalPort", 8), ("LocalAddress", 10),
    ("CurrTime", 7), ("CurrentCwnd", 4), ("CurrentSsthresh", 4), ("SmoothedRTT", 4),
    ("RTTVar", 4), ("CurrentMSS", 4), ("ThruBytesAcked", 7), ("PktsRetrans", 3),
    ("Recoveries", 3), ("SampledRTT", 4), ("State", 0),
]
SPEC = [("RemPort", 8), ("RemAddress", 9), ("LocalPort", 8), ("LocalAddress", 9)]
TUNE = [("LimCwnd", 4), ("X_Sndbuf", 4), ("X_Rcvbuf", 4)]

#: 32-bit wrap of Linux's "infinite" ssthresh (0x7fffffff segments x MSS) as web100 logs it.
SSTHRESH_UNSET = (0x7FFFFFFF * 1448) % 2**32
START = 1795340000          # 2026-11-22, the day these were written


def connection_snapshots(n=8, old=False):
    """Snapshots of one loopback connection: slow start, a loss at snapshot 5, recovery."""
    snaps = []
    cwnd, ssthresh, acked, retrans, signals = 14480, SSTHRESH_UNSET, 0, 0, 0
    for k in range(n):
        if k == 5:                      # one loss: fast retransmit halves the window
            ssthresh, cwnd, retrans, signals = cwnd // 2, cwnd // 2, retrans + 1, signals + 1
        acked += cwnd
        snap = {
            "RemPort": 5201, "RemAddress": "127.0.0.1", "LocalPort": 40000, "LocalAddress": "127.0.0.1",
            "Duration": 2_000_000 + 5_000 * k, "StartTimeSec": START, "StartTimeUsec": 250_000,
            "CurCwnd": cwnd, "CurSsthresh": ssthresh, "SmoothedRTT": 10 + k % 3, "RTTVar": 5,
            "CurMSS": 1448, "ThruBytesAcked": acked, "PktsRetrans": retrans,
            "CongestionSignals": signals, "DupAcksIn": 3 * signals, "State": 5,
            "SampledRTT": 9 + k % 3,
        }
        snap["_CurrTime"] = snap["Duration"]
        snap["_CurrentCwnd"] = cwnd
        if old:
            snap.update(RemotePort=5201, RemoteAddress="::1", RemAddress="::1", LocalAddress="::1",
                        CurrTime=snap["Duration"],
                        CurrentCwnd=cwnd, CurrentSsthresh=ssthresh, CurrentMSS=1448, Recoveries=signals)
        snaps.append(snap)
        if k < 5:
            cwnd *= 2
    return snaps


def _encode(value, typ):
    kind, size = TYPES[typ]
    if kind == "ipv4":
        return bytes(int(x) for x in value.split("."))
    if kind == "inet":
        if ":" in value:
            import ipaddress
            return ipaddress.IPv6Address(value).packed + b"\x02"
        return bytes(int(x) for x in value.split(".")) + bytes(12) + b"\x01"
    if kind == "str32":
        return value.encode().ljust(32, b"\0")
    return struct.pack(kind, value)


def _group(name, variables):
    lines, offset = [f"/{name}".encode()], 0
    for var, typ in variables:
        lines.append(f"{var} {offset} {typ} {TYPES[typ][1]}".encode())
        offset += TYPES[typ][1]
    return lines


def snaplog(read, snapshots, groups=(("spec", SPEC), ("tune", TUNE))):
    """The bytes of a snaplog logging group ``read`` with ``snapshots`` (dicts by name)."""
    parts = [VERSION, b""]
    ordered = [("spec", dict(groups)["spec"]), ("read", read), ("tune", dict(groups)["tune"])]
    for i, (name, variables) in enumerate(ordered):
        parts.extend(_group(name, variables))
        if i < len(ordered) - 1:
            parts.append(b"")
    out = b"\n".join(parts) + b"\n" + END_OF_HEADER
    out += struct.pack("<I", START) + b"read".ljust(32, b"\0")
    out += struct.pack("<H2x4sH2x4s", 5201, bytes([127, 0, 0, 1]), 40000, bytes([127, 0, 0, 1]))
    for snap in snapshots:
        out += BEGIN_SNAP + b"".join(_encode(snap[var], typ) for var, typ in read)
    return out


SIDESTREAM_KEYS = ("cid PollTime LocalAddress LocalPort RemAddress RemPort State SACKEnabled "
                   "PktsOut DataBytesOut ThruBytesAcked CongestionSignals CurCwnd CurSsthresh "
                   "PktsRetrans SmoothedRTT RTTVar CurMSS Duration").split()


def sidestream_rows():
    """Three loopback connections polled when they closed (one line each)."""
    rows = []
    for c, (port, cwnd, ssthresh, retrans, rtt) in enumerate(
            [(40000, 14480, SSTHRESH_UNSET, 0, 1), (40002, 231680, 115840, 2, 3), (40004, 28960, 14480, 1, 2)]):
        rows.append({
            "cid": 100 + c, "PollTime": f"2026-11-22-14:00:{5 * c:02d}Z", "LocalAddress": "127.0.0.1",
            "LocalPort": port, "RemAddress": "127.0.0.1", "RemPort": 5201, "State": 1, "SACKEnabled": 3,
            "PktsOut": 1000 * (c + 1), "DataBytesOut": 1448000 * (c + 1),
            "ThruBytesAcked": 1448000 * (c + 1) - 1448 * retrans, "CongestionSignals": retrans,
            "CurCwnd": cwnd, "CurSsthresh": ssthresh, "PktsRetrans": retrans, "SmoothedRTT": rtt,
            "RTTVar": 1, "CurMSS": 1448, "Duration": 1_000_000 * (c + 1),
        })
    return rows


def sidestream_text(rows):
    lines = ["K: " + " ".join(SIDESTREAM_KEYS)]
    lines += ["C: " + " ".join(str(r[k]) for k in SIDESTREAM_KEYS) for r in rows]
    return "\n".join(lines) + "\n"


DUMP_NAMES = ("LocalAddress LocalPort RemAddress RemPort Duration CurCwnd CurSsthresh SmoothedRTT "
              "RTTVar CurMSS ThruBytesAcked PktsRetrans CongestionSignals DupAcksIn State").split()
DUMP_OLD_NAMES = {"CurCwnd": "CurrentCwnd", "CurSsthresh": "CurrentSsthresh", "CurMSS": "CurrentMSS",
                  "CongestionSignals": "Recoveries", "Duration": "CurrTime"}


def dump_text(snapshots, old=False):
    blocks = []
    for snap in snapshots:
        names = [DUMP_OLD_NAMES.get(n, n) if old else n for n in DUMP_NAMES]
        blocks.append("\n".join(f"{name}: {snap[n]}" for name, n in zip(names, DUMP_NAMES)))
    return "\n\n".join(blocks) + "\n"


NDT_META = """Date/Time: 20261122T14:00:00.000000000Z
c2s_snaplog file: 20261122T14:00:00.000000000Z_localhost:40000.c2s_snaplog.gz
s2c_snaplog file: 20261122T14:00:00.000000000Z_localhost:40002.s2c_snaplog.gz
server hostname: localhost
client IP address: 127.0.0.1
client OS name: Linux
"""


def samples():
    """{relative path: bytes} of every generated web100 sample."""
    new, old = connection_snapshots(), connection_snapshots(old=True)
    log = snaplog(READ_NEW, new)
    length = len(BEGIN_SNAP) + sum(TYPES[t][1] for _, t in READ_NEW)
    side = sidestream_text(sidestream_rows())
    dump = dump_text(new[:3])
    return {
        "web100_snaplog/v2.5.27--loopback-8-snapshots.snaplog": log,
        "web100_snaplog/old-names--ipv6-8-snapshots.snaplog": snaplog(READ_OLD, old),
        "web100_snaplog/truncated--cut-in-snapshot-7.snaplog": log[: len(log) - length - 40],
        "web100_snaplog/bad--header-without-end-marker.snaplog": log[: log.index(b"/tune")],
        "web100_snaplog/notmine--ndt.meta": NDT_META.encode(),
        "web100_snaplog/empty--nothing.snaplog": b"",
        "web100_sidestream/loopback--3-connections.web100": side.encode(),
        "web100_sidestream/truncated--cut-in-row-3.web100": side[: side.rindex("127.0.0.1 5201")].encode(),
        "web100_sidestream/bad--row-with-missing-values.web100":
            (side.split("\n")[0] + "\nC: 1 2 3\n" + "\n".join(side.split("\n")[1:])).encode(),
        "web100_sidestream/notmine--dump.txt": dump.encode(),
        "web100_sidestream/empty--nothing.web100": b"",
        "web100_dump/loopback--3-snapshots.txt": dump.encode(),
        "web100_dump/old-names--3-snapshots.txt": dump_text(old[:3], old=True).encode(),
        "web100_dump/truncated--cut-in-snapshot-3.txt": dump[: dump.rindex("ThruBytesAcked") + 9].encode(),
        "web100_dump/notmine--ndt.meta": NDT_META.encode(),
        "web100_dump/empty--nothing.txt": b"",
    }


def main(root=DATA):
    for rel, data in samples().items():
        path = Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        print(path)


@pytest.mark.parametrize("rel", sorted(samples()))
def test_committed_sample_is_what_the_generator_writes(rel):
    assert (DATA / rel).read_bytes() == samples()[rel]


if __name__ == "__main__":
    main(*sys.argv[1:])
