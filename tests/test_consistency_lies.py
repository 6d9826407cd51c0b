"""Damaged logs that used to read as complete and consistent with wrong numbers (issue 40,
"Lies that pass the consistency checks").

Every damaged log is an edit of a recorded fixture (``tests/data``) made by a helper of
:mod:`tests.damage`: a number a tool prints twice (a total and its parts, a rate and its
bytes and seconds, a count and its lines) is changed on one side only, or a line is lost
or repeated. Each must be caught: ``consistent`` 0 with a failed check whose name says
what disagrees, or ``truncated`` 1 saying what is missing, or (a receiver's report that
never came back) the loss NaN and the run flagged. The undamaged originals stay
consistent and complete.
"""

from __future__ import annotations

import json
import math

import pytest

from thruput.formats import (iperf2, iperf2_csv, iperf3_json, iperf3_stream, iperf3_text, nuttcp, ping,
                             udpmon_bw, udpmon_req, web100_dump)

from . import damage as d

IPERF3_P4 = "3.12--tcp-P4.json"

#: (id, format module, fixture folder, fixture, damage, what must be caught, words of the reason)
#: what: "inconsistent" (a failed check naming the words), "truncated" (the truncation
#: naming them), "loss unknown" (loss NaN, and the run flagged by either), "none arrived"
#: (a possible truth, read as one: throughput 0 and loss 1, never the sender's rate).
DAMAGES = [
    # iperf3 -J
    ("iperf3-json-sum-sent-rate-doubled", iperf3_json, "iperf3_json", "3.12--tcp.json",
     lambda t: d.scale_json(t, ("end", "sum_sent", "bits_per_second"), 2), "inconsistent",
     "end.sum_sent: bit/s vs bytes x 8 / seconds"),
    ("iperf3-json-stream-receiver-bytes-doubled", iperf3_json, "iperf3_json", IPERF3_P4,
     lambda t: d.scale_json(t, ("end", "streams", 0, "receiver", "bytes"), 2), "inconsistent",
     "end.sum_received vs the sum of end.streams[].receiver"),
    ("iperf3-json-sum-packets-1e18", iperf3_json, "iperf3_json", "3.12--udp.json",
     lambda t: d.set_json(t, ("end", "sum", "packets"), 10 ** 18), "inconsistent",
     "packets: end.sum vs"),
    # (a receiver's sums of 0 datagrams in a complete run is no lie: a genuine run whose
    # datagrams were all dropped reads so, tests/data/iperf3_json/3.12--udp-none-arrived.json;
    # what must not happen is the sender's offered rate passing for a throughput)
    ("iperf3-json-udp-receiver-zero-datagrams", iperf3_json, "iperf3_json", "3.12--udp.json",
     lambda t: _no_server_report(t), "none arrived", ""),
    ("iperf3-json-udp-receiver-zero-datagrams-error", iperf3_json, "iperf3_json", "3.12--udp.json",
     lambda t: d.set_json(_no_server_report(t), ("error",), "unable to receive results"),
     "loss unknown", "the receiver's report"),
    ("iperf3-json-bidir-interval-dropped", iperf3_json, "iperf3_json", "3.12--tcp-bidir.json",
     lambda t: d.drop_json(t, ("intervals", 1)), "inconsistent", "end.streams[1].receiver vs the sum of its intervals"),
    ("iperf3-json-stream-interval-bytes-edited", iperf3_json, "iperf3_json", IPERF3_P4,
     lambda t: d.scale_json(t, ("intervals", 0, "streams", 2, "bytes"), 2), "inconsistent",
     "end.streams[2].sender vs the sum of its intervals"),
    ("iperf3-stream-end-event-edited", iperf3_stream, "iperf3_stream", "3.12--tcp.jsonl",
     lambda t: d.edit_event(t, "end", ("sum_sent", "bytes"), 2), "inconsistent",
     "end.sum_sent"),
    ("iperf3-stream-end-rate-edited", iperf3_stream, "iperf3_stream", "3.12--tcp.jsonl",
     lambda t: d.edit_event(t, "end", ("sum_received", "bits_per_second"), 2), "inconsistent",
     "end.sum_received: bit/s vs bytes x 8 / seconds"),
    # iperf3 text
    ("iperf3-text-udp-receiver-zero-datagrams", iperf3_text, "iperf3_text", "3.12--udp.txt",
     lambda t: d.replace(t, 9, "2.41 MBytes  20.2 Mbits/sec  0.358 ms  0/77 (0%)",
                         "0.00 Bytes  0.00 bits/sec  0.000 ms  0/0 (0%)"), "none arrived", ""),
    ("iperf3-text-interval-dropped", iperf3_text, "iperf3_text", "3.12--tcp.txt",
     lambda t: d.drop(t, 5), "inconsistent", "sender line vs the sum of its interval lines"),
    ("iperf3-text-interval-duplicated", iperf3_text, "iperf3_text", "3.12--tcp.txt",
     lambda t: d.duplicate(t, 5), "inconsistent", "sender line vs the sum of its interval lines"),
    ("iperf3-text-bidir-P2-interval-dropped", iperf3_text, "iperf3_text", "3.12--tcp-bidir-P2.txt",
     lambda t: d.drop(t, 17), "inconsistent", "stream [9][RX-C] receiver line vs the sum of its interval lines"),
    ("iperf3-text-bidir-P2-interval-duplicated", iperf3_text, "iperf3_text", "3.12--tcp-bidir-P2.txt",
     lambda t: d.duplicate(t, 10), "inconsistent", "stream [9][RX-C] receiver line vs the sum of its interval lines"),
    # iperf 2 text
    ("iperf2-P4-e-interval-dropped", iperf2, "iperf2", "v2.1.8--tcp-client-P4-e.txt",
     lambda t: d.drop(t, 17), "inconsistent", "stream 1 final vs the sum of its intervals"),
    ("iperf2-P4-e-interval-duplicated", iperf2, "iperf2", "v2.1.8--tcp-client-P4-e.txt",
     lambda t: d.duplicate(t, 13), "inconsistent", "stream 2 final vs the sum of its intervals"),
    ("iperf2-P4-e-sum-interval-dropped", iperf2, "iperf2", "v2.1.8--tcp-client-P4-e.txt",
     lambda t: d.drop(t, 21), "inconsistent", "[SUM] final vs the sum of its intervals"),
    ("iperf2-udp-sent-edited", iperf2, "iperf2", "v2.1.8--udp-client-e.txt",
     lambda t: d.replace(t, 12, "Sent 1788", "Sent 2788"), "inconsistent",
     "Sent datagrams vs bytes"),
    ("iperf2.0-udp-sent-edited", iperf2, "iperf2", "v2.0--udp-client.txt",
     lambda t: d.replace(t, 9, "Sent 893", "Sent 993"), "inconsistent", "Sent datagrams vs bytes"),
    # iperf 2 CSV
    ("iperf2-csv-P3-last-two-rows-cut", iperf2_csv, "iperf2_csv", "v2.1.8--tcp-client-P3.csv",
     lambda t: d.head(t, 4), "truncated", "stream(s) [2]"),
    # nuttcp
    ("nuttcp-total-MB-edited", nuttcp, "nuttcp", "6.1.2--tcp-i-v.out",
     lambda t: d.replace(t, 17, "765.4375 MB", "865.4375 MB"), "inconsistent",
     "MB vs KB/sec x seconds"),
    ("nuttcp-fparse-megabytes-edited", nuttcp, "nuttcp", "6.1.2--udp-fparse-v.out",
     lambda t: d.replace(t, 16, "megabytes=4.7656", "megabytes=5.7656"), "inconsistent",
     "MB vs KB/sec x seconds"),
    # ping
    ("windows-ping-reply-dropped", ping, "ping", "windows--loopback-docs.out",
     lambda t: d.drop(t, 4), "inconsistent", "received"),
    ("windows-ping-reply-duplicated", ping, "ping", "windows--loopback-docs.out",
     lambda t: d.duplicate(t, 4), "inconsistent", "received"),
    ("linux-ping-reply-dropped", ping, "ping", "iputils--loopback-c5.out",
     lambda t: d.drop(t, 6), "inconsistent", "received"),
    ("linux-ping-reply-duplicated", ping, "ping", "iputils--loopback-c5.out",
     lambda t: d.duplicate(t, 3), "inconsistent", "duplicates"),
    ("linux-ping-transmitted-edited", ping, "ping", "iputils--loopback-c5.out",
     lambda t: d.replace(t, 9, "5 packets transmitted", "50 packets transmitted"), "inconsistent",
     "loss"),
    # UDPmon
    ("udpmon-req-hist-mean-edited", udpmon_req, "udpmon_req", "histogram--r64-l5000-H.txt",
     lambda t: d.replace(t, 14, "mean 42.51", "mean 52.51"), "inconsistent", "mean"),
    ("udpmon-req-hist-median-edited", udpmon_req, "udpmon_req", "histogram--r64-l5000-H.txt",
     lambda t: d.replace(t, _last_line(t, " median "), "median 19;", "median 79;"), "inconsistent", "median"),
    ("udpmon-bw-median-edited", udpmon_bw, "udpmon_bw", "x--p1000-w0-40.txt",
     lambda t: d.replace(t, 13, "; 8; 7; 9;L", "; 18; 7; 9;L"), "inconsistent", "median"),
    # web100
    ("web100-dump-block-duplicated", web100_dump, "web100_dump", "loopback--3-snapshots.txt",
     lambda t: _duplicate_block(t, 2), "inconsistent", "Duration: snapshots not after the previous one"),
    ("web100-dump-blocks-swapped", web100_dump, "web100_dump", "loopback--3-snapshots.txt",
     lambda t: _swap_blocks(t, 2), "inconsistent", "HCThruOctetsAcked: snapshots smaller than the previous one"),
]


def _no_server_report(text):
    """An iperf3 -J UDP client log as iperf3 writes it when the server's results never came
    back: the receiver's sums hold 0 datagrams and 0 bytes."""
    for key in ("bytes", "bits_per_second", "packets", "lost_packets", "jitter_ms"):
        text = d.set_json(text, ("end", "sum_received", key), 0)
    return text


def _last_line(text, word):
    """The number (1-based) of the last line of ``text`` holding ``word``."""
    return max(k for k, line in enumerate(text.splitlines(), 1) if word in line)


def _blocks(text):
    return text.split("\n\n")


def _swap_blocks(text, k):
    """A web100 dump whose ``k``-th and ``k+1``-th (1-based) snapshot blocks are swapped."""
    blocks = _blocks(text)
    blocks[k - 1], blocks[k] = blocks[k].rstrip("\n"), blocks[k - 1] + ("\n" if blocks[k].endswith("\n") else "")
    return "\n\n".join(blocks)


def _duplicate_block(text, k):
    """A web100 dump whose ``k``-th (1-based) snapshot block is repeated."""
    blocks = _blocks(text)
    return "\n\n".join(blocks[:k] + [blocks[k - 1]] + blocks[k:])


def _failed(ds):
    return [c for c in json.loads(ds.attrs["consistency"]) if not c["ok"]]


@pytest.mark.parametrize("case", DAMAGES, ids=[c[0] for c in DAMAGES])
def test_damage_is_caught(case):
    _, module, folder, name, damage, what, words = case
    original = d.sample(folder, name)
    damaged = damage(original)
    assert damaged != original
    ds = module.parse(damaged)
    failed = _failed(ds)
    if what == "inconsistent":
        assert ds.attrs["consistent"] == 0, ds.attrs["consistency"]
        assert any(words in c["check"] for c in failed), [c["check"] for c in failed]
    elif what == "truncated":
        assert ds.attrs["truncated"] == 1, ds.attrs["consistency"]
        assert words in ds.attrs["truncation"], ds.attrs["truncation"]
    elif what == "none arrived":
        assert (float(ds["throughput"][0]), float(ds["loss_fraction"][0])) == (0.0, 1.0)
        assert float(ds["packets_lost"][0]) == float(ds["packets"][0]) > 0
        assert ds.attrs["consistent"] == 1 and ds.attrs["truncated"] == 0, ds.attrs["truncation"]
    else:
        assert math.isnan(float(ds["loss_fraction"][0]))
        assert math.isnan(float(ds["throughput"][0]))
        assert ds.attrs["truncated"] == 1 or ds.attrs["consistent"] == 0
        assert words in ds.attrs["truncation"] + json.dumps(failed)


@pytest.mark.parametrize("folder, name", sorted({(c[2], c[3]) for c in DAMAGES}))
def test_the_originals_stay_consistent(folder, name):
    module = next(c[1] for c in DAMAGES if c[2] == folder)
    ds = module.parse(d.sample(folder, name))
    assert ds.attrs["consistent"] == 1, _failed(ds)
    assert ds.attrs["truncated"] == 0, ds.attrs["truncation"]


# --- genuine logs of the shared corpus (skipped where it is absent) --------------------------

DRIVE = "real/starlink-drive"
SNAPLOG = "web100/ndt-20170509T134513Z-s2c.snaplog"
INTERCLOUD = ("real/intercloud/results/host-europe-west2-a_gcp/target-us-west1-a_gcp/baseline/"
              "time-01-08-2021_19-15/baseline_host_target_direct_0.res")
DRIVE_PING = f"{DRIVE}/starlink/20240528/111436693/ping_111740829.out"
DRIVE_NUTTCP = f"{DRIVE}/verizon/20240528/113424924/udp_uplink_113635728.out"


def _duplicate_snapshot(raw, k):
    """A web100 snaplog whose ``k``-th snapshot record (0-based) is written twice."""
    marker = b"----Begin-Snap-Data----\n"
    starts = [i for i in range(len(raw)) if raw.startswith(marker, i)][k:k + 2]
    return raw[:starts[1]] + raw[starts[0]:starts[1]] + raw[starts[1]:]


#: (id, corpus file, damage of its bytes, words of the failed check)
CORPUS_DAMAGES = [
    ("intercloud-iperf3-json-sum-sent-rate-doubled", INTERCLOUD,
     lambda b: d.scale_json(b.decode(), ("end", "sum_sent", "bits_per_second"), 2).encode(),
     "end.sum_sent: bit/s vs bytes x 8 / seconds"),
    ("intercloud-iperf3-json-stream-receiver-bytes-doubled", INTERCLOUD,
     lambda b: d.scale_json(b.decode(), ("end", "streams", 0, "receiver", "bytes"), 2).encode(),
     "end.sum_received vs the sum of end.streams[].receiver"),
    ("drive-ping-reply-duplicated", DRIVE_PING, lambda b: d.duplicate(b.decode(), 4).encode(), "duplicates"),
    ("drive-ping-reply-dropped", DRIVE_PING, lambda b: d.drop(b.decode(), 4).encode(), "received"),
    ("drive-nuttcp-receiver-MB-edited", DRIVE_NUTTCP,
     lambda b: b.replace(b"nuttcp-r: 5.2738 MB", b"nuttcp-r: 6.2738 MB"), "MB vs KB/sec x seconds"),
    ("ndt-snaplog-snapshot-duplicated", SNAPLOG, lambda b: _duplicate_snapshot(b, 100),
     "Duration: snapshots not after the previous one"),
]


@pytest.mark.parametrize("case", CORPUS_DAMAGES, ids=[c[0] for c in CORPUS_DAMAGES])
def test_damage_of_a_genuine_log_is_caught(case, corpus):
    from thruput.reader import read_bytes

    _, rel, damage, words = case
    raw = (corpus / rel).read_bytes()
    assert read_bytes(raw).attrs["consistent"] == 1
    damaged = damage(raw)
    assert damaged != raw
    ds = read_bytes(damaged)
    assert ds.attrs["consistent"] == 0
    assert any(words in c["check"] for c in _failed(ds)), [c["check"] for c in _failed(ds)]


def test_consistency_checks_are_consistency_check_over_arrays():
    """The vectorised records (iperf3 -J's end checks over thousands of runs) are exactly
    the ones :func:`consistency_check` makes, NaN included."""
    from thruput.contract import consistency_check, consistency_checks

    tool = [100.0, 100.0, math.nan, math.nan, 0.0, 1e18]
    data = [100.9, 102.0, 5.0, math.nan, 0.0, 77.0]
    names = [f"c{i}" for i in range(len(tool))]
    assert consistency_checks(names, tool, data, rtol=0.01, atol=0.0, note="n") == [
        consistency_check(n, t, v, rtol=0.01, note="n") for n, t, v in zip(names, tool, data)]
    assert [c["ok"] for c in consistency_checks(names, tool, data, rtol=0.01)] == [True, False, False, True,
                                                                                   True, False]
