"""ping logs cut short, inconsistent or absurd (issue 10): every reproducer, read by the C
scanner and by both pure-Python readers with identical results.

The damaged logs are edits of recorded fixtures (``tests/data/ping``) and of a real wrapped
log of the shared corpus; each edit is spelled out in its test.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import thruput
from thruput.errors import ParseError
from thruput.formats import ping
from thruput.reader import read_bytes
from thruput.inspection import summarize

from .conftest import DATA
from .test_format_ping_scan import assert_same_outcome

LOOPBACK = (DATA / "ping" / "iputils--loopback-c5.out").read_text()
SUMMARY_AT = LOOPBACK.index("\n--- ")  # the blank line before the statistics


def read(text):
    """Read ``text`` as a ping log, after checking that every reader agrees on it."""
    assert_same_outcome(text)
    return ping.parse(text)


def checks(ds):
    return {c["check"].split(":")[0]: c for c in json.loads(ds.attrs["consistency"])}


def test_complete_log_is_consistent():
    ds = read(LOOPBACK)
    assert ds.attrs["consistent"] == 1
    assert set(checks(ds)) == {"received", "duplicates", "transmitted", "rtt_min", "rtt_max", "loss"}
    assert checks(ds)["rtt_min"]["tool"] == 0.016 and checks(ds)["rtt_min"]["data"] == 0.016


def test_cut_after_statistics_header_is_truncated_not_lossless():
    """A log ending after ``--- ... statistics ---``: no totals, so truncated; the probes
    the data proves lost (gaps in icmp_seq) are lost, and the loss is not 0 %."""
    lines = LOOPBACK.split("\n")
    del lines[3]  # icmp_seq=3 never answered (ping without -O prints nothing)
    text = "\n".join(lines)
    text = text[: text.index("statistics ---") + len("statistics ---")] + "\n"
    ds = read(text)
    assert ds.attrs["truncated"] == 1
    assert "summary was cut off after its statistics header" in ds.attrs["truncation"]
    assert ds["status"].values.tolist() == ["reply", "reply", "reply", "reply", "lost"]
    assert ds["seq"].values.tolist() == [1, 2, 4, 5, 3]
    assert summarize(ds)["loss_fraction"] == pytest.approx(0.2)
    assert ds.attrs["tool_summary"] == "{}"


def test_cut_after_statistics_header_real_drive_log(corpus):
    """The real 12 %-loss drive log, cut after its statistics header: the 18 probes lost
    between printed replies stay lost."""
    path = corpus / "real/starlink-drive/starlink/20240528/111436693/ping_111740829.out"
    raw = path.read_bytes()
    full = thruput.read(path)
    cut = read_bytes(raw[: raw.index(b"statistics ---") + len(b"statistics ---") + 1])
    assert cut.attrs["truncated"] == 1
    lost_full = full["seq"].values[full["status"].values == "lost"]
    lost_cut = cut["seq"].values[cut["status"].values == "lost"]
    last_printed = full["seq"].values[full["status"].values == "reply"].max()
    assert sorted(lost_cut) == sorted(lost_full[lost_full < last_printed])
    assert len(lost_cut) == 18
    assert summarize(cut)["loss_fraction"] == pytest.approx(18 / last_printed)


@pytest.mark.parametrize("cut, kept", [
    ("icmp_seq=5", 4),          # "icmp_seq=5" could be icmp_seq=50
    ("ttl=6", 4),               # "ttl=6" from "ttl=64"
    ("time=0.02", 4),           # a shorter time
    ("time=0.029 ms", 4),       # complete-looking, but no newline and no summary follow
])
def test_cut_last_line_is_not_data(cut, kept):
    last = LOOPBACK.index("64 bytes from 127.0.0.1: icmp_seq=5")
    text = LOOPBACK[: LOOPBACK.index(cut, last) + len(cut)]
    ds = read(text)
    assert ds.sizes["probe"] == kept
    assert ds["seq"].values.tolist() == [1, 2, 3, 4]
    assert json.loads(ds.attrs["skipped_reasons"])["truncated line"] == 1
    assert ds.attrs["truncation"].startswith("last line (line 6) cut off")


def test_stripped_final_newline_with_summary_is_fine():
    ds = read(LOOPBACK.rstrip("\n"))
    assert ds.attrs["truncated"] == 0
    assert ds.identical(read(LOOPBACK))


def test_summary_with_fewer_transmitted_than_replies_is_inconsistent():
    """``3 packets transmitted`` above 5 replies: read, and recorded as a disagreement."""
    text = LOOPBACK.replace("5 packets transmitted, 5 received", "3 packets transmitted, 5 received")
    ds = read(text)
    assert ds.attrs["consistent"] == 0
    record = checks(ds)["transmitted"]
    assert (record["tool"], record["data"], record["ok"]) == (3, 5, False)
    assert checks(ds)["received"]["ok"]


def test_two_replies_merged_on_one_line():
    """The newline between replies 2 and 3 lost: the line is reported, not half-read."""
    text = LOOPBACK.replace("time=0.024 ms\n", "time=0.024 ms", 1)
    ds = read(text)
    assert json.loads(ds.attrs["skipped_reasons"])[
        "two replies on one line (a lost newline): not read"] == 1
    assert ds.attrs["consistent"] == 0
    assert checks(ds)["lines holding two replies (a lost newline)"]["data"] == 1
    record = checks(ds)["received"]
    assert (record["tool"], record["data"], record["ok"]) == (5, 3, False)
    # the unread replies count as lost, as ping's transmitted says they were sent
    assert sorted(ds["seq"].values[ds["status"].values == "lost"].tolist()) == [2, 3]


def test_absurd_transmitted_count_is_no_allocation():
    """``1000000000000 packets transmitted`` (a 931 GiB array before): no probes are made
    up, the disagreement is recorded."""
    text = LOOPBACK.replace("5 packets transmitted", "1000000000000 packets transmitted")
    ds = read(text)
    assert ds.sizes["probe"] == 5
    record = checks(ds)["transmitted"]
    assert record["ok"] is False and record["tool"] == 1e12 and record["data"] == 5
    assert "none were added" in record["note"]
    assert ds.attrs["consistent"] == 0


def test_modest_unprinted_losses_are_still_materialised():
    """Below the bound, ping's count still adds the probes it never printed."""
    text = LOOPBACK.replace("5 packets transmitted, 5 received", "8 packets transmitted, 5 received")
    ds = read(text)
    assert ds["seq"].values.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert ds["line"].values.tolist()[5:] == [-1, -1, -1]


@pytest.mark.parametrize("edit, line", [
    (("icmp_seq=3 ", "icmp_seq=99999999999999999999 "), 4),   # OverflowError before
    (("icmp_seq=3 ", "icmp_seq=65536 "), 4),                  # beyond 16 bits
    (("ttl=64 time=0.030", "ttl=256 time=0.030"), 4),          # beyond 8 bits
    (("64 bytes from 127.0.0.1: icmp_seq=3", "1" * 400 + " bytes from 127.0.0.1: icmp_seq=3"), 4),
    (("5 packets transmitted", "1" * 5000 + " packets transmitted"), 9),  # int() limit
])
def test_absurd_numbers_are_errors_naming_the_line(edit, line):
    text = LOOPBACK.replace(*edit, 1)
    assert_same_outcome(text)
    with pytest.raises(ParseError) as info:
        ping.parse(text)
    assert info.value.line == line
    assert "not ping output" in info.value.message


def test_absurd_sequence_number_in_a_no_answer_line():
    text = LOOPBACK.replace("64 bytes from 127.0.0.1: icmp_seq=3 ttl=64 time=0.030 ms",
                            "no answer yet for icmp_seq=99999999999999999999")
    assert_same_outcome(text)
    with pytest.raises(ParseError, match="seq 99999999999999999999 is beyond") as info:
        ping.parse(text)
    assert info.value.line == 4


# ---------------------------------------------------------------------------------------
# ping's own numbers in the summary


def test_summary_reports_pings_own_statistics(corpus):
    """ping prints rounded times (integers from 100 ms) but summarises exact ones: the
    figures shown are ping's own; the probes' are kept beside them, labelled."""
    path = corpus / "real/starlink-drive/starlink/20240528/114055495/ping_114520157.out"
    ds = thruput.read(path)
    s = summarize(ds)
    assert s["rtt_source"] == "ping summary"
    assert s["rtt_ms"]["min"] == 34.743 and s["rtt_ms"]["avg"] == 152.067
    assert s["rtt_ms"]["max"] == 3020.334 and s["rtt_ms"]["mdev"] == 505.955
    probes = s["rtt_ms_probes"]
    assert probes["max"] == 3020.0  # as printed: "time=3020 ms"
    assert probes["min"] == pytest.approx(34.7)
    rtt = ds["rtt"].values[np.isin(ds["status"].values.astype(str), ("reply", "duplicate"))]
    assert probes["avg"] == pytest.approx(rtt.mean())
    assert s["rtt_ms"]["median"] == probes["median"]  # ping prints no median


def test_summary_counts_duplicates_like_ping(corpus):
    """iputils includes duplicates in its min/avg/max: the probe statistics do too."""
    path = corpus / "real/starlink-drive/att/20240528/111437116/ping_111924269.out"
    ds = thruput.read(path)
    s = summarize(ds)
    assert s["duplicates"] == 3
    timed = ds["rtt"].values[np.isin(ds["status"].values.astype(str), ("reply", "duplicate"))]
    assert s["rtt_ms_probes"]["avg"] == pytest.approx(timed.mean())
    assert s["rtt_ms_probes"]["count"] == timed.size == 148 + 3
    # ping's avg is over exact times, ours over the printed ones (integer ms from 100 ms):
    # 95.809 vs ping's 95.937, where leaving the duplicates out would give 93.778
    assert s["rtt_ms_probes"]["avg"] == pytest.approx(95.80860927152318)
    assert s["rtt_ms"]["avg"] == 95.937
    only_replies = ds["rtt"].values[ds["status"].values == "reply"]
    assert abs(only_replies.mean() - 95.937) > 10 * abs(s["rtt_ms_probes"]["avg"] - 95.937)


def test_summary_without_pings_statistics_uses_the_probes():
    ds = read(LOOPBACK[:SUMMARY_AT + 1])
    s = summarize(ds)
    assert s["rtt_source"] == "probes"
    assert s["rtt_ms"]["min"] == 0.016 and s["rtt_ms"]["max"] == 0.030
