"""Many small ping logs at once (:mod:`thruput.formats._ping_many`) against
:func:`thruput.formats.ping.scan`, its reference.

Every log the batch takes must give ping.scan's probes, summary and line accounting, bit
for bit; it may take only logs that ping.scan reads cleanly (no error, not cut off, every
consistency check passed). Checked on every sample here and corpus log, alone and batched
together, on generated monitor-style logs with each kind of deviation, and on damaged
samples. The monitor campaign reader (:func:`thruput.monitor.reader.read_batch`) gives
the same fragment with and without the batch.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thruput.errors import ThruputError
from thruput.formats import _ping_many as ping_many, ping
from thruput.reader import decode

from .conftest import DATA

SAMPLES = sorted((DATA / "ping").glob("*.out"))


def _clean(text):
    """ping.scan of ``text`` if it reads with nothing to report, else None."""
    try:
        run = ping.scan(text)
    except ThruputError:
        return None
    if run.ledger["truncated"] or not all(c["ok"] for c in run.consistency):
        return None
    return run


def assert_batch_is_scan(texts):
    """scan_many(texts) agrees with ping.scan on each log it takes; returns the taken."""
    many = ping_many.scan_many(texts)
    totals, reasons = dict.fromkeys(("lines_total", "lines_parsed", "lines_skipped"), 0), {}
    for j, k in enumerate(many.taken.tolist()):
        run = _clean(texts[k])
        assert run is not None, f"log {k} taken, but ping.scan reports on it"
        part = slice(many.offsets[j], many.offsets[j + 1])
        for name in ("rtt", "timestamp", "seq"):
            expected, got = run.probes[name][1], getattr(many, name)[part]
            assert got.dtype == expected.dtype and np.array_equal(got, expected, equal_nan=True), \
                (k, name)
        assert list(ping.STATUS_NAMES[many.status[part]]) == list(run.probes["status"][1])
        assert many.replies[j] == int((run.probes["status"][1] == "reply").sum())
        assert many.tool_summary[j] == run.tool_summary
        for key in totals:
            totals[key] += run.ledger[key]
        for reason, count in json.loads(run.ledger["skipped_reasons"]).items():
            reasons[reason] = reasons.get(reason, 0) + count
    assert many.ledger == {**totals, "skipped_reasons": json.dumps(reasons, sort_keys=True)}
    return many.taken.tolist()


def _log(seqs, transmitted=None, received=None, rtt=lambda s: 10.0 + (s % 7) / 10, extra=(),
         tail="\n", stats=True, timestamps=True):
    """A monitor-style iputils ``ping -D`` log of replies to ``seqs``."""
    lines = ["PING 192.0.2.1 (192.0.2.1) 56(84) bytes of data."]
    for s in seqs:
        stamp = f"[{1767225600 + s * 0.2:.6f}] " if timestamps else ""
        lines.append(f"{stamp}64 bytes from 192.0.2.1: icmp_seq={s % 65536} ttl=64 time={rtt(s):.3f} ms")
    lines += list(extra)
    n = len(seqs) if transmitted is None else transmitted
    got = len(seqs) if received is None else received
    if stats:
        lines += ["", "--- 192.0.2.1 ping statistics ---",
                  f"{n} packets transmitted, {got} received, {100 * (n - got) / max(n, 1):.3g}% "
                  f"packet loss, time {max(n - 1, 0) * 200}ms"]
        values = [rtt(s) for s in seqs]
        if values:
            lines.append(f"rtt min/avg/max/mdev = {min(values):.3f}/{np.mean(values):.3f}/"
                         f"{max(values):.3f}/{np.std(values):.3f} ms")
    return "\n".join(lines) + tail


#: (log, whether the batch takes it)
GENERATED = {
    "plain": (_log(range(1, 101)), True),
    "lost inside, first and last": (_log([2, 3, 5, 9, 10], transmitted=11), True),
    "no replies at all": (_log([], transmitted=5, received=0), True),
    "no -D timestamps": (_log(range(1, 6), timestamps=False), True),
    "one reply": (_log([1]), True),
    "stripped final newline": (_log(range(1, 6), tail=""), False),
    "no summary (cut)": (_log(range(1, 6), stats=False), False),
    "received disagrees": (_log(range(1, 6), received=4), False),
    "duplicate sequence number": (_log([1, 2, 2, 3], transmitted=3, received=3), False),
    "sequence numbers out of order": (_log([1, 3, 2]), False),
    "a wrap": (_log(range(65530, 65540), transmitted=65540), False),
    "beyond transmitted": (_log(range(1, 6), transmitted=3, received=5), False),
    "absurd transmitted": (_log(range(1, 6), transmitted=10**12, received=5), False),
    "no answer yet": (_log(range(1, 4), transmitted=4,
                           extra=["[1767225601.000000] no answer yet for icmp_seq=4"]), False),
    "icmp error": (_log(range(1, 4), transmitted=4,
                        extra=["From 192.0.2.9 icmp_seq=4 Destination Host Unreachable"]), False),
    "unrecognised line": (_log(range(1, 4), extra=["something else"]), False),
    "second header": (_log(range(1, 4), extra=["PING 192.0.2.1 (192.0.2.1) 56(84) bytes of data."]),
                      False),
}


@pytest.mark.parametrize("name", GENERATED)
def test_generated_log(name):
    text, taken = GENERATED[name]
    assert assert_batch_is_scan([text]) == ([0] if taken else [])


def test_generated_logs_batched_together():
    texts = [text for text, _ in GENERATED.values()]
    expected = [k for k, (_, taken) in enumerate(GENERATED.values()) if taken]
    assert assert_batch_is_scan(texts) == expected
    assert assert_batch_is_scan(texts[::-1]) == [len(texts) - 1 - k for k in expected[::-1]]


def test_one_pass_over_a_batch_of_like_logs():
    """Logs whose replies have the same fields (a monitor's, every one ``ping -D``) are read
    by one pass of the fast path over their joined text, plain or not, and agree with
    ping.scan log by log."""
    names = [n for n in GENERATED if n not in ("no -D timestamps", "no answer yet", "icmp error")]
    texts = [GENERATED[n][0] for n in names] * 3
    assert ping_many._scan_batch(texts) is not None
    expected = [k for k, n in enumerate(names * 3) if GENERATED[n][1]]
    assert assert_batch_is_scan(texts) == expected


def test_rtt_beyond_pings_rounding_is_left_to_scan():
    text = _log(range(1, 6)).replace("rtt min/avg/max/mdev = 10.100", "rtt min/avg/max/mdev = 9.500")
    assert _clean(text) is None and assert_batch_is_scan([text]) == []


def test_every_sample_and_corpus_log(corpus):
    paths = SAMPLES + sorted((corpus / "ping").glob("*/*.out"))
    texts = [decode(p.read_bytes()) for p in paths]
    alone = [k for k, text in enumerate(texts) if assert_batch_is_scan([text])]
    assert assert_batch_is_scan(texts) == alone
    # the batch takes most clean logs (the others: losses, errors, DUP!, Windows...)
    assert len(alone) >= 20, [paths[k].name for k in alone]


def test_empty_batch():
    assert ping_many.scan_many([]).taken.size == 0


@settings(max_examples=80, deadline=4000, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.floats(0, 1), st.floats(0, 1),
       st.binary(max_size=40), st.integers(0, 3))
def test_damaged_logs_in_a_batch(sample, cut, at, junk, where):
    """Cut logs and junk spliced anywhere, among plain logs."""
    raw = sample.read_bytes()
    raw = raw[: max(1, int(len(raw) * cut))] if cut < 0.5 else raw
    k = int(len(raw) * at)
    texts = [GENERATED["plain"][0]] * 3
    texts.insert(where, decode(raw[:k] + junk + raw[k:]))
    assert_batch_is_scan(texts)


def test_monitor_batch_reads_as_one_by_one(tmp_path, monkeypatch):
    """read_batch of a monitor archive (plain, lossy and damaged ping logs) gives the same
    fragment with the batch as with every log read by ping.scan."""
    from benchmarks import synthetic_monitor
    from thruput.monitor import reader as monitor

    directory = synthetic_monitor.write_archive(tmp_path / "archive", paths=2, slots=6, probes=20)
    rows = monitor.read_monitor_manifest(directory)[0]
    pings = [r for r in rows if r.role == "ping"]
    for row, text in zip(pings, (GENERATED["lost inside, first and last"][0],
                                 GENERATED["no replies at all"][0], GENERATED["a wrap"][0],
                                 GENERATED["duplicate sequence number"][0])):
        (directory / row.path).write_text(text)
    rows = [r._replace(sha256="") for r in rows]     # (logs rewritten above)
    batched = monitor.read_batch(directory, rows)
    real = ping_many.scan_many
    monkeypatch.setattr(ping_many, "scan_many", lambda texts: real([]))
    alone = monitor.read_batch(directory, rows)
    xr.testing.assert_identical(batched, alone)
    for name in batched.variables:
        assert batched[name].dtype == alone[name].dtype, name
    assert batched.attrs == alone.attrs
