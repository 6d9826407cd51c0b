"""web100 readers (binary snaplog, sidestream text, ``Name: value`` dumps): hand-checked
values on the generated samples, old/new name mapping, and exact values of the genuine
corpus files (M-Lab NDT snaplog and sidestream; skipped when the corpus is absent)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import thruput
from thruput.errors import ParseError
from thruput.formats import _web100, web100_dump, web100_sidestream, web100_snaplog

from .conftest import DATA
from .test_format_web100_samples import SSTHRESH_UNSET

SNAPLOG = DATA / "web100_snaplog"
SIDESTREAM = DATA / "web100_sidestream"
DUMP = DATA / "web100_dump"
SLOW_START = [14480, 28960, 57920, 115840, 231680, 231680, 231680, 231680]


def test_snaplog_by_hand():
    ds = thruput.read(SNAPLOG / "v2.5.27--loopback-8-snapshots.snaplog")
    assert ds.attrs["ledger_unit"] == "record" and ds.attrs["tool_version"] == "2.5.27"
    assert ds.cwnd.values.tolist() == SLOW_START
    assert ds.cwnd.attrs["units"] == "byte" and ds.srtt.attrs["units"] == "ms"
    # the loss at snapshot 5: ssthresh set to half the window, one retransmission, one signal
    assert np.isnan(ds.ssthresh.values[:5]).all() and ds.ssthresh.values[5] == 463360 / 2
    assert ds.web100_CurSsthresh.values[0] == SSTHRESH_UNSET      # raw value kept
    assert ds.retransmits_total.values.tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
    assert ds.congestion_signals.values.tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
    assert ds.time.values.tolist() == pytest.approx([0.005 * k for k in range(8)])
    assert ds.web100_Duration.attrs["units"] == "us" and ds.web100_Duration.values[0] == 2_000_000
    assert ds.web100_StartTimeStamp.values[0] == 1795340000       # StartTimeSec, renamed
    assert set(ds.connection.values) == {"127.0.0.1:40000->127.0.0.1:5201"}
    assert ds.attrs["web100_log_connection"] == "127.0.0.1:40000->127.0.0.1:5201"
    assert json.loads(ds.attrs["web100_deprecated"]) == ["_CurrentCwnd", "_CurrTime"]
    # header: version, blank, /spec + 4, blank, /read + 19, blank, /tune + 3, end marker = 34
    # lines; then the log record (35) and the 8 snapshots (records 36..43)
    assert ds.attrs["lines_total"] == 34 + 1 + 8 and ds.line.values.tolist() == list(range(36, 44))
    assert json.loads(ds.attrs["skipped_reasons"]) == {
        "blank": 3, "group name": 3, "variable of a group not logged": 7, "end-of-header marker": 1}


def test_old_names_give_the_same_variables():
    new = thruput.read(SNAPLOG / "v2.5.27--loopback-8-snapshots.snaplog")
    old = thruput.read(SNAPLOG / "old-names--ipv6-8-snapshots.snaplog")
    for name in ("time", "cwnd", "ssthresh", "srtt", "rttvar", "mss", "bytes_acked",
                 "retransmits_total", "congestion_signals"):
        np.testing.assert_array_equal(old[name].values, new[name].values)
    assert "web100_SampleRTT" in old and "web100_SampledRTT" not in old   # SampledRTT renamed
    assert set(old.connection.values) == {"[::1]:40000->[::1]:5201"}     # INET_ADDRESS_IPV6


def test_rename_map_from_tcp_kis():
    assert _web100.canonical(["PktsRetrans", "CurrentCwnd", "ThruBytesAcked", "CurrTime"]) == \
        ["SegsRetrans", "CurCwnd", "HCThruOctetsAcked", "Duration"]
    # old and current name in one log: each keeps its own name, nothing is overwritten
    assert _web100.canonical(["CurrTime", "Duration"]) == ["CurrTime", "Duration"]
    assert _web100.units_of("SmoothedRTT") == "ms" and _web100.units_of("SegsOut") == "count"
    assert _web100.units_of("SndUna") == "1"          # a sequence number, not a count


def test_truncated_snaplog_keeps_complete_snapshots():
    ds = thruput.read(SNAPLOG / "truncated--cut-in-snapshot-7.snaplog")
    assert ds.sizes["snapshot"] == 6 and ds.cwnd.values.tolist() == SLOW_START[:6]
    assert ds.attrs["truncation"] == "last snapshot cut off: 94 of 134 bytes"


def test_corrupt_snapshot_is_an_error_naming_its_record():
    data = bytearray((SNAPLOG / "v2.5.27--loopback-8-snapshots.snaplog").read_bytes())
    third = data.index(b"----Begin-Snap-Data----") + 2 * 134
    data[third:third + 4] = b"XXXX"
    with pytest.raises(ParseError) as err:
        web100_snaplog.parse(bytes(data))
    assert err.value.line == 38 and "Begin-Snap-Data" in err.value.message


def test_sidestream_by_hand():
    ds = thruput.read(SIDESTREAM / "loopback--3-connections.web100")
    assert ds.connection.values.tolist() == [
        "127.0.0.1:40000->127.0.0.1:5201", "127.0.0.1:40002->127.0.0.1:5201",
        "127.0.0.1:40004->127.0.0.1:5201"]
    assert ds.time.values.tolist() == [0, 5, 10]                  # PollTime 14:00:00, :05, :10
    assert ds.web100_PollTime.values[0] == 1795356000             # 2026-11-22T14:00:00Z
    assert ds.web100_cid.values.tolist() == [100, 101, 102]
    assert ds.retransmits_total.values.tolist() == [0, 2, 1]     # PktsRetrans
    assert ds.web100_SegsOut.values.tolist() == [1000, 2000, 3000]  # PktsOut, renamed


def test_sidestream_bad_row_names_line():
    with pytest.raises(ParseError) as err:
        thruput.read(SIDESTREAM / "bad--row-with-missing-values.web100")
    assert err.value.line == 2 and "3 values" in err.value.message


def test_dump_by_hand():
    ds = thruput.read(DUMP / "loopback--3-snapshots.txt")
    assert ds.cwnd.values.tolist() == SLOW_START[:3] and ds.line.values.tolist() == [1, 17, 33]
    old = thruput.read(DUMP / "old-names--3-snapshots.txt")
    for name in ("cwnd", "mss", "congestion_signals", "time"):
        np.testing.assert_array_equal(old[name].values, ds[name].values)
    cut = thruput.read(DUMP / "truncated--cut-in-snapshot-3.txt")
    assert cut.sizes["snapshot"] == 2 and cut.attrs["truncated"] == 1


@pytest.mark.parametrize("module", [web100_snaplog, web100_sidestream, web100_dump])
def test_empty_input(module):
    with pytest.raises(ParseError, match="empty input"):
        module.parse(b"" if module.BINARY else "\n")


def test_dump_sniffer_ignores_other_key_value_text():
    assert not web100_dump.sniff((DUMP / "notmine--ndt.meta").read_text())
    assert web100_dump.sniff((DUMP / "loopback--3-snapshots.txt").read_text())


def test_corpus_snaplog(corpus):
    """M-Lab NDT s2c snaplog (m-lab/etl testdata): values checked against the raw bytes."""
    ds = thruput.read(corpus / "web100" / "ndt-20170509T134513Z-s2c.snaplog")
    assert ds.sizes["snapshot"] == 2032
    # 168 header lines (incl. the end-of-header marker's) + log record + 2032 snapshots
    assert ds.attrs["lines_total"] == 168 + 1 + 2032 and ds.attrs["lines_parsed"] == 142 + 2 + 2032
    assert ds.cwnd.values[[0, -1]].tolist() == [4344, 2896]
    assert ds.srtt.values[[0, -1]].tolist() == [215, 143]
    assert ds.rttvar.values[[0, -1]].tolist() == [123, 55]
    assert ds.retransmits_total.values[-1] == 32 and ds.congestion_signals.values[-1] == 2
    assert ds.mss.values[0] == 1448 and ds.ssthresh.values[0] == 2896
    assert ds.web100_Duration.values[[0, -1]].tolist() == [347176, 10869556]
    assert ds.time.values[-1] == pytest.approx((10869556 - 347176) / 1e6)
    assert set(ds.connection.values) == {"213.208.152.37:40105->45.56.98.222:44160"}
    assert ds.attrs["web100_log_time"] == 1494337528                # 2017-05-09T13:45:28Z
    assert ds.attrs["web100_log_connection"] == "213.208.152.37:40105->45.56.98.222:44160"


def test_corpus_sidestream(corpus):
    ds = thruput.read(corpus / "web100" / "sidestream-20170203T000000Z.web100")
    assert ds.sizes["snapshot"] == 6 and ds.sizes == {"snapshot": 6}
    assert ds.web100_cid.values[:3].tolist() == [21605, 21595, 21601]
    assert ds.connection.values[0] == "213.248.112.75:41131->5.228.253.100:52290"
    assert ds.cwnd.values.tolist() == [5840, 5440, 4080, 219000, 2840, 4344]
    assert np.isnan(ds.ssthresh.values[0])                          # 4294966680: never set
    assert ds.retransmits_total.values.tolist() == [0, 0, 0, 31, 15, 0]
    assert ds.time.values[:3].tolist() == [0, 5, 5]
    assert ds.attrs["lines_total"] == 7 and json.loads(ds.attrs["skipped_reasons"]) == {"header": 1}


def test_corpus_others_are_not_web100(corpus):
    from thruput import formats
    meta = (corpus / "web100" / "ndt-20170509T134513Z.meta").read_text()
    kis = (corpus / "web100" / "tcp-kis.txt").read_text()[:4096]
    for head in (meta, kis):
        assert not any(formats._claims(formats.get(n), head) for n in
                       ("web100_snaplog", "web100_sidestream", "web100_dump"))
