"""ping reader: hand-checked values of the tricky cases, and agreement of the parsed probes
with ping's own summary for every sample here and every corpus file (and with jc's parse of
the corpus files, a peer's answer, where the differences are listed and explained)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import thruput
from thruput.contract import validate
from thruput.errors import ParseError
from thruput.formats import ping
from thruput.reader import decode

from .conftest import DATA

SAMPLES = sorted(p for p in (DATA / "ping").glob("*.out")
                 if not p.name.startswith(("empty--", "not-a-run--")) and "two-runs" not in p.name)


def _status(ds):
    return ds["status"].values.astype(str)


def assert_agrees_with_tool(ds, text, edited=False):
    """The parsed probes reproduce every total ping printed itself.

    transmitted = distinct sequence numbers probed (Windows: every probe line);
    received = first replies (Windows also counts "Reply from ...: Destination host
    unreachable." as received); duplicates, errors; loss percent; min/avg/max over replies
    and duplicates (all the tools include duplicates), within the rounding of the printed
    per-probe values.
    """
    printed = json.loads(ds.attrs["tool_summary"])
    status = _status(ds)
    seq = ds["seq"].values
    windows = ds.attrs["ping_variant"] == "windows"
    if windows:
        lines = decode(text.encode()).split("\n")
        reply_from_errors = sum(
            1 for s, n in zip(status, ds["line"].values)
            if s in ("unreachable", "error") and lines[n - 1].startswith("Reply from"))
        sent = len(status)
        received = int((status == "reply").sum()) + reply_from_errors
    else:
        probed = np.isin(status, ("reply", "lost", "unreachable", "error")) & (seq >= 0)
        sent = len(np.unique(seq[probed]))
        received = int((status == "reply").sum())
    if "transmitted" not in printed:
        assert ds.attrs["truncated"] == 1
        return
    assert sent == printed["transmitted"]
    assert received == printed["received"]
    if edited:  # see JC_DIFFERENCES: a repeat without (DUP!) the summary doesn't count
        status = np.where(status == "duplicate", "edited", status)
    assert (status == "duplicate").sum() == printed.get("duplicates", 0)
    if "errors" in printed:
        assert np.isin(status, ("unreachable", "error")).sum() == printed["errors"]
    loss = 100.0 * (sent - received) / sent
    assert abs(loss - printed["loss_percent"]) < 1.0  # printed as %g, %.1f or integer
    rtt = ds["rtt"].values[np.isin(status, ("reply", "duplicate"))]
    rtt = rtt[~np.isnan(rtt)]
    if "rtt_min" in printed:
        # per-probe values are printed to 3 significant digits (iputils; older releases
        # truncate instead of rounding) or 3 decimals, the tool's statistics come from the
        # unprinted digits: one unit of the last printed digit. Windows prints whole ms.
        tol = (lambda v: 1.0) if windows else _last_digit
        for key, value, scale in (("rtt_min", rtt.min(), printed["rtt_min"]),
                                  ("rtt_max", rtt.max(), printed["rtt_max"]),
                                  ("rtt_avg", rtt.mean(), printed["rtt_max"])):
            assert abs(value - printed[key]) <= tol(scale), (key, value, printed[key])
        deviation = printed.get("rtt_mdev", printed.get("rtt_stddev"))
        if deviation is not None and ds.attrs["ping_variant"] in ("iputils", "bsd") and not edited:
            # mdev (iputils) and stddev (BSD) are population standard deviations
            assert abs(rtt.std() - deviation) <= 0.01 + 0.02 * deviation, (rtt.std(), deviation)


def _last_digit(value):
    """One unit in the last digit of an RTT printed to 3 significant digits (whole ms from
    100 ms on), plus 0.001 for the 3 decimals of the summary line."""
    return 0.0011 + (min(1.0, 10.0 ** (math.floor(math.log10(abs(value))) - 2)) if value else 0.0)


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.name for p in SAMPLES])
def test_samples_agree_with_tool_summary(sample):
    ds = thruput.read(sample)
    assert_agrees_with_tool(ds, sample.read_text())


def _corpus_files(corpus):
    files = sorted((corpus / "ping").glob("*/*.out"))
    assert len(files) == 69
    return files


def test_corpus_agrees_with_tool_summary(corpus):
    for path in _corpus_files(corpus):
        ds = thruput.read(path)
        validate(ds)
        edited = f"{path.parent.name}/{path.name}" in HAND_EDITED
        assert_agrees_with_tool(ds, path.read_text(), edited=edited)


#: Corpus files edited by hand upstream (jc's fixtures), so that the summary no longer
#: matches the probe lines: the repeated icmp_seq=2 reply is in neither count nor
#: statistics; three equal 1.00 ms replies with "mdev 1.000" (it would be 0).
HAND_EDITED = {"ubuntu-22.04/ping6-ip-source-ip.out", "ubuntu-22.04/ping-ip-source-ip.out",
               "ubuntu-22.04/ping-hostname-source-ip.out"}

#: Where thruput and jc read a corpus file differently, and why (checked by hand).
JC_DIFFERENCES = {
    # jc drops Linux "From ... icmp_seq=N Destination Host Unreachable" lines; they are
    # the three probes, and ping counted them as "+3 errors"
    "ubuntu-22.04/ping-dest-unreachable.out": {"icmp_error": (3, 0)},
    # a hand-edited jc fixture repeats icmp_seq=2 without (DUP!); ping's own count says 2
    # received, so the repeat is a duplicate (the summary's missing "+1 duplicates" is the
    # editing's trace, allowed for below)
    "ubuntu-22.04/ping6-ip-source-ip.out": {"reply": (2, 3), "duplicate": (1, 0)},
}


def _counts_thruput(ds):
    status, line = _status(ds), ds["line"].values
    return {"reply": int(((status == "reply") & (line > 0)).sum()),
            "duplicate": int((status == "duplicate").sum()),
            "lost": int(((status == "lost") & (line > 0)).sum()),
            "icmp_error": int(np.isin(status, ("unreachable", "error")).sum())}


def _counts_jc(doc):
    counts = dict.fromkeys(("reply", "duplicate", "lost", "icmp_error"), 0)
    for r in doc.get("responses", []):
        if r["type"] == "reply":
            counts["duplicate" if r.get("duplicate") else "reply"] += 1
        elif r["type"] == "timeout":
            counts["lost"] += 1
        else:
            counts["icmp_error"] += 1
    return counts


def test_corpus_agrees_with_jc(corpus):
    """Same totals and the same RTT series as jc; printed events differ only as listed."""
    for path in _corpus_files(corpus):
        name = f"{path.parent.name}/{path.name}"
        ds = thruput.read(path)
        doc = json.loads(path.with_suffix(".json").read_text())
        printed = json.loads(ds.attrs["tool_summary"])
        assert printed["transmitted"] == doc["packets_transmitted"], name
        assert printed["received"] == doc["packets_received"], name
        assert printed["loss_percent"] == doc["packet_loss_percent"], name
        assert printed.get("duplicates", 0) == doc["duplicates"], name
        for ours, theirs in (("rtt_min", "round_trip_ms_min"), ("rtt_avg", "round_trip_ms_avg"),
                             ("rtt_max", "round_trip_ms_max")):
            assert printed.get(ours) == doc.get(theirs), (name, ours)
        ours, theirs = _counts_thruput(ds), _counts_jc(doc)
        for key, (want_ours, want_theirs) in JC_DIFFERENCES.get(name, {}).items():
            assert (ours[key], theirs[key]) == (want_ours, want_theirs), name
            ours[key] = theirs[key]
        assert ours == theirs, name
        status = _status(ds)
        rtt = ds["rtt"].values[np.isin(status, ("reply", "duplicate"))]
        jc_rtt = [r["time_ms"] for r in doc.get("responses", []) if r["type"] == "reply"]
        np.testing.assert_array_equal(rtt, np.array(jc_rtt, dtype=float), err_msg=name)


# ---------------------------------------------------------------------------------------
# Hand-checked values


def test_iputils_duplicates_keep_their_rtt(corpus):
    ds = thruput.read(corpus / "ping" / "centos-7.7" / "ping-ip-dup.out")
    status = _status(ds)
    assert status.tolist()[:3] == ["reply", "duplicate", "duplicate"]
    assert (status == "reply").sum() == 2 and (status == "duplicate").sum() == 19
    assert ds["seq"].values[status == "reply"].tolist() == [1, 2]
    assert ds["rtt"].values[status == "reply"].tolist() == [0.586, 0.861]
    assert ds["ttl"].values[:3].tolist() == [64, 64, 128]
    assert ds["line"].values[:2].tolist() == [3, 4]
    # ping's max (1276.448 ms) is a duplicate's: its statistics include duplicates
    assert ds["rtt"].values.max() == 1276.0


def test_macos_repeats_without_dup_marker_are_duplicates(corpus):
    ds = thruput.read(corpus / "ping" / "osx-10.14.6" / "ping-ip-dup.out")
    status = _status(ds)
    assert (status == "reply").sum() == 2 and (status == "duplicate").sum() == 13
    assert ds["line"].values[status == "reply"].tolist() == [2, 12]


def test_no_answer_lines_and_unprinted_probes_are_lost(corpus):
    ds = thruput.read(corpus / "ping" / "pi" / "ping-ip-O-D.out")
    assert _status(ds).tolist() == ["lost"] * 5
    assert ds["seq"].values.tolist() == [1, 2, 3, 4, 5]
    assert ds["line"].values.tolist() == [2, 3, 4, 5, -1]  # seq 5: counted, never printed
    assert ds["timestamp"].values[0] == 1596585008.591169
    assert math.isnan(ds["timestamp"].values[4])


def test_recorded_silent_peer():
    ds = thruput.read(DATA / "ping" / "iputils--no-answer-O-netns.out")
    assert _status(ds).tolist() == ["reply"] * 5 + ["lost"] * 3
    assert ds["seq"].values.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert ds["line"].values.tolist() == [2, 3, 4, 5, 6, 7, 8, -1]
    assert ds["rtt"].values[:5].tolist() == [0.279, 0.038, 0.038, 0.035, 0.038]


def test_bsd_icmp_errors_and_timeouts(corpus):
    ds = thruput.read(corpus / "ping" / "osx-10.14.6" / "ping-ip-unknown-errors.out")
    status = _status(ds)
    assert status.tolist()[:4] == ["lost", "lost", "unreachable", "unreachable"]
    assert (status == "error").sum() == 1  # "Weird error message"
    assert ds["line"].values[status == "error"].tolist() == [12]
    assert ds["seq"].values[status == "lost"].tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    assert ds["line"].values[-1] == -1
    reasons = json.loads(ds.attrs["skipped_reasons"])
    assert reasons["icmp error packet dump"] == 12


def test_recorded_unreachable_in_namespace():
    ds = thruput.read(DATA / "ping" / "iputils--unreachable-netns.out")
    printed = json.loads(ds.attrs["tool_summary"])
    status = _status(ds)
    assert (status == "unreachable").sum() == printed["errors"]
    assert ds["line"].values[0] == 2 and ds["seq"].values[0] == 1
    assert "pipe" in printed


def test_small_payload_has_no_rtt():
    ds = thruput.read(DATA / "ping" / "iputils--size-s8-no-time.out")
    assert _status(ds).tolist() == ["reply"] * 3
    assert np.isnan(ds["rtt"].values).all()
    assert ds["size"].values.tolist() == [16, 16, 16]


def test_windows_values():
    ds = thruput.read(DATA / "ping" / "windows--timeouts-unreachable-docs.out")
    assert _status(ds).tolist() == ["reply", "lost", "unreachable", "reply", "lost", "reply"]
    assert ds["rtt"].values[_status(ds) == "reply"].tolist() == [3.0, 12.0, 5.0]
    assert ds["seq"].values.tolist() == [-1] * 6
    assert ds["line"].values.tolist() == [3, 4, 5, 6, 7, 8]
    assert ds["ttl"].values[0] == 64 and ds["size"].values[0] == 32
    loopback = thruput.read(DATA / "ping" / "windows--loopback-docs.out")
    assert loopback["rtt"].values.tolist() == [0.0, 0.0, 1.0, 0.0]  # time<1ms is Windows' 0


def test_solaris_values():
    ds = thruput.read(DATA / "ping" / "solaris--ping-s-docs.out")
    assert ds.attrs["ping_variant"] == "solaris"
    assert ds["seq"].values.tolist() == [0, 1, 3, 4, 2]
    assert _status(ds).tolist() == ["reply"] * 4 + ["lost"]
    assert json.loads(ds.attrs["tool_summary"])["rtt_stddev"] == 0.454


@pytest.mark.parametrize("name, variant", [
    ("iputils--ping6-loopback.out", "iputils"), ("busybox--ping6-loopback.out", "busybox"),
    ("solaris--ping-s-docs.out", "solaris"), ("windows--loopback-docs.out", "windows"),
    ("iputils--O-D-p-s.out", "iputils"),
])
def test_variant(name, variant):
    assert thruput.read(DATA / "ping" / name).attrs["ping_variant"] == variant


def _run(lines, transmitted, received, dups=0):
    """A synthetic iputils log around ``lines`` (unit tests of the status rules)."""
    extra = f" +{dups} duplicates," if dups else ""
    return ("PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.\n" + "".join(l + "\n" for l in lines)
            + f"\n--- 127.0.0.1 ping statistics ---\n{transmitted} packets transmitted, "
              f"{received} received,{extra} 0% packet loss, time 1ms\n")


def test_sequence_numbers_wrap_without_false_duplicates():
    # the last printed probes of a run of 65537 probes (1..65535, then 0 and 1 again);
    # the repeated 0 is a duplicate, the earlier probes were never printed: lost
    seqs = [65535, 0, 1, 0]
    lines = [f"64 bytes from 127.0.0.1: icmp_seq={s} ttl=64 time=0.0{i + 1} ms"
             for i, s in enumerate(seqs)]
    ds = ping.parse(_run(lines, 65537, 3, dups=1))
    status = _status(ds)
    assert status[:4].tolist() == ["reply", "reply", "reply", "duplicate"]
    assert (status == "lost").sum() == 65534 and (ds["line"].values == -1).sum() == 65534
    assert ds["seq"].values[4:6].tolist() == [1, 2]


def test_no_answer_then_late_reply_is_not_lost():
    lines = ["64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.05 ms",
             "no answer yet for icmp_seq=2",
             "64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 time=1500 ms",
             "64 bytes from 127.0.0.1: icmp_seq=3 ttl=64 time=0.05 ms"]
    ds = ping.parse(_run(lines, 3, 3))
    assert _status(ds).tolist() == ["reply"] * 3
    assert json.loads(ds.attrs["skipped_reasons"])["no answer yet, answered later"] == 1


def test_second_run_is_an_error_naming_its_line():
    with pytest.raises(ParseError) as err:
        thruput.read(DATA / "ping" / "iputils--two-runs.out")
    assert err.value.line == 11 and "second ping run" in err.value.message


def test_unrecognised_line_is_an_error_naming_it():
    text = _run(["64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.05 ms",
                 "64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 tim"], 2, 2)
    with pytest.raises(ParseError) as err:
        ping.parse(text)
    assert err.value.line == 3 and "tim" in err.value.message


def test_truncated_keeps_complete_probes():
    ds = thruput.read(DATA / "ping" / "iputils--truncated-D.out")
    assert ds.attrs["truncated"] == 1
    assert "last line (line 6) cut off" in ds.attrs["truncation"]
    assert "no summary" in ds.attrs["truncation"]
    assert ds["seq"].values.tolist() == [1, 2, 3, 4]


def test_sniff():
    assert ping.sniff("PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.\n")
    assert ping.sniff("\r\nPinging 127.0.0.1 with 32 bytes of data:\n".replace("\r\n", "\n"))
    assert ping.sniff("PING6(56=40+8+8 bytes) ::1 --> ::1\n")
    assert not ping.sniff("ping: SO_BINDTODEVICE x: No such device\n")
    assert not ping.sniff("")


def test_empty_input():
    with pytest.raises(ParseError, match="empty input"):
        ping.parse("\n\n")


def test_fast_path_reads_like_the_general_path(corpus, monkeypatch):
    """The bulk reader (one split + NumPy) and the line-by-line regex give the same Dataset."""
    paths = SAMPLES + _corpus_files(corpus)
    fast = {p: thruput.read(p) for p in paths}
    used = {p for p in paths if ping._replies_fast(decode(p.read_bytes())) is not None}
    assert {p.name for p in used} >= {"iputils--timestamps-D.out", "busybox--loopback.out",
                                      "solaris--ping-s-docs.out", "ping6-ip-dup.out"}
    flagged = {p for p in paths if "(DUP!)" in p.read_text()}
    assert flagged and not flagged & used  # (DUP!) lines take the general path
    monkeypatch.setattr(ping, "_replies_fast", lambda text: None)
    for p in paths:
        general = thruput.read(p)
        assert general.identical(fast[p]), p


@settings(max_examples=80, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.floats(0, 1), st.floats(0, 1), st.binary(max_size=60))
def test_fast_and_general_paths_agree_on_damaged_logs(sample, cut, at, junk):
    """Cut and spliced logs: both paths give the same Dataset or fail at the same line."""
    raw = sample.read_bytes()
    raw = raw[: max(1, int(len(raw) * cut))] if cut < 0.5 else raw
    k = int(len(raw) * at)
    text = decode(raw[:k] + junk + raw[k:])

    def outcome():
        try:
            return ping.parse(text)
        except ParseError as exc:
            return exc.line

    original = ping._replies_fast
    try:
        fast = outcome()
        ping._replies_fast = lambda text: None
        general = outcome()
    finally:
        ping._replies_fast = original
    if isinstance(fast, int) or fast is None:
        assert fast == general
    else:
        assert fast.identical(general)
