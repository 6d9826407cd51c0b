"""ndt7 reader: throughput as ndt7 defines it and the server's TCPInfo/BBRInfo snapshots,
checked against the genuine M-Lab results of the corpus (read here, never copied) and a
public example cut off mid-way (tests/data/ndt7, see its README)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import thruput
from thruput.contract import validate
from thruput.errors import ParseError
from thruput.formats import iperf3_json, ndt7

from .conftest import DATA

HERE = DATA / "ndt7"
DOWN_2022 = "ndt7-download-20221130T230746.606388371Z.ndt-rczlq_1666977535_unsafe_000000000016912D.json"
DOWN_2020 = "ndt7-download-20200318T000657.568382877Z.ndt-knwp4_1583603744_000000000000590E.json"
UP_2020 = "ndt7-upload-20200318T001352.496224022Z.ndt-knwp4_1583603744_0000000000005CF2.json"


@pytest.fixture(scope="module")
def files(corpus):
    folder = corpus / "real" / "ndt7"
    if not folder.exists():
        pytest.skip("no ndt7 corpus")
    return {name: (validate(thruput.read(folder / name)), json.loads((folder / name).read_text()))
            for name in (DOWN_2022, DOWN_2020, UP_2020)}


def _last(doc):
    test = doc.get("Download") or doc.get("Upload")
    return test["ServerMeasurements"][-1]["TCPInfo"]


def test_download_throughput_is_bytes_acked_over_elapsed_time(files):
    ds, doc = files[DOWN_2022]
    last = _last(doc)
    assert last["BytesAcked"] == 95049504 and last["ElapsedTime"] == 9919546
    assert float(ds.throughput[0]) == 95049504 * 8 / 9.919546 == float(ds.throughput_sender[0])
    assert float(ds.throughput[0]) / 1e6 == pytest.approx(76.6563340701278, rel=1e-12)
    assert np.isnan(float(ds.throughput_receiver[0]))
    assert float(ds.bytes[0]) == 95049504 and float(ds.duration[0]) == 9.919546
    assert ds.stream_direction.values.tolist() == [["receive"]]
    assert str(ds.start_time.values[0]) == "2022-11-30T23:07:35.945636468"
    assert ds.attrs["ndt7_end_time"] == "2022-11-30T23:07:46.257389195Z"
    assert ds.ndt7_server.values.tolist() == ["[2001:4c08:2003:3f::203]:443"]
    assert ds.ndt7_client.values.tolist() == ["[2a01:cb08:1a7:dd00:a0ec:8867:9871:afb]:63384"]
    assert ds.attrs["tool_version"] == "v0.20.17" and ds.attrs["ndt7_uuid"] == doc["Download"]["UUID"]
    assert json.loads(ds.attrs["tool_summary"])["MeanThroughputMbps"] == pytest.approx(76.6563340701278)
    assert float(ds.retransmits[0]) == last["TotalRetrans"] == 1455


def test_upload_throughput_is_bytes_received(files):
    ds, doc = files[UP_2020]
    last = _last(doc)
    assert float(ds.throughput[0]) == last["BytesReceived"] * 8 / (last["ElapsedTime"] / 1e6)
    assert float(ds.throughput_receiver[0]) == float(ds.throughput[0]) and np.isnan(float(ds.throughput_sender[0]))
    assert float(ds.bytes[0]) == 3356080 and ds.stream_direction.values.tolist() == [["send"]]
    assert np.isnan(float(ds.retransmits[0]))
    assert ds.attrs["tool_version"] == "v0.14.2"


def test_snapshots_are_a_time_series_with_units(files):
    ds, doc = files[DOWN_2022]
    snaps = doc["Download"]["ServerMeasurements"]
    assert ds.sizes["interval"] == len(snaps) == 29
    tcp = [s["TCPInfo"] for s in snaps]
    np.testing.assert_array_equal(ds.interval_end[0].values, [t["ElapsedTime"] / 1e6 for t in tcp])
    assert ds.interval_start[0, 0] == 0 and ds.interval_start[0, 1] == tcp[0]["ElapsedTime"] / 1e6
    np.testing.assert_array_equal(ds.interval_rtt[0, 0].values, [t["RTT"] / 1e3 for t in tcp])
    np.testing.assert_array_equal(ds.ndt7_min_rtt[0, 0].values, [t["MinRTT"] / 1e3 for t in tcp])
    np.testing.assert_array_equal(ds.interval_cwnd[0, 0].values, [t["SndCwnd"] * t["SndMSS"] for t in tcp])
    np.testing.assert_array_equal(ds.ndt7_pacing_rate[0, 0].values, [t["PacingRate"] * 8 for t in tcp])
    np.testing.assert_array_equal(ds.ndt7_bbr_bw[0, 0].values, [s["BBRInfo"]["BW"] * 8 for s in snaps])
    assert ds.ndt7_bbr_pacing_gain[0, 0, -1] == 1.0 and ds.ndt7_bbr_cwnd_gain[0, 0, -1] == 2.0  # 256, 512
    assert float(ds.interval_bytes[0, 0].sum()) == 95049504      # the counter's growth adds up
    assert float(ds.interval_retransmits[0, 0].sum()) == 1455
    units = {v: ds[v].attrs["units"] for v in ("interval_rtt", "ndt7_bbr_bw", "interval_cwnd", "ndt7_snd_cwnd")}
    assert units == {"interval_rtt": "ms", "ndt7_bbr_bw": "bit/s", "interval_cwnd": "byte", "ndt7_snd_cwnd": "count"}
    assert ds.attrs["consistent"] == 1


def test_old_server_bbr_field_names(files):
    """ndt-server v0.14 wrote BBRInfo.MaxBandwidth (no BW, no gains)."""
    ds, doc = files[DOWN_2020]
    snaps = doc["Download"]["ServerMeasurements"]
    np.testing.assert_array_equal(ds.ndt7_bbr_bw[0, 0].values, [s["BBRInfo"]["MaxBandwidth"] * 8 for s in snaps])
    assert np.isnan(ds.ndt7_bbr_pacing_gain.values).all()
    assert float(ds.throughput[0]) == 48396999 * 8 / 10.000921


def test_public_example_cut_off_keeps_complete_measurements():
    ds = validate(thruput.read(HERE / "v0.14.2--download-cut-in-third-measurement.json"))
    assert ds.attrs["truncated"] == 1 and ds.sizes["interval"] == 2
    assert float(ds.bytes[0]) == 54133 and float(ds.duration[0]) == 0.666242
    assert float(ds.throughput[0]) == 54133 * 8 / 0.666242
    assert ds.interval_bytes[0, 0].values.tolist() == [6277, 54133 - 6277]


def test_client_app_info_is_checked_against_server_bytes(files):
    _, doc = files[DOWN_2022]
    doc = json.loads(json.dumps(doc))
    doc["Download"]["ClientMeasurements"] = [{"AppInfo": {"NumBytes": 94000000, "ElapsedTime": 9900000}}]
    ds = ndt7.parse(json.dumps(doc))
    check = [c for c in json.loads(ds.attrs["consistency"]) if c["check"].startswith("bytes")][0]
    assert check["ok"] and check["tool"] == 94000000 and check["data"] == 95049504
    doc["Download"]["ClientMeasurements"] = [{"AppInfo": {"NumBytes": 1000, "ElapsedTime": 9900000}}]
    assert ndt7.parse(json.dumps(doc)).attrs["consistent"] == 0


@pytest.mark.parametrize("text, line", [
    ("", None),
    ('{"Version": "v0.1", "Download": {"ServerMeasurements": []}}', 1),
    ('{"Version": "v0.1", "Download": {}, "Upload": {}}', 1),
    ('{"Version": "v0.1",\n "Download": oops}', 2),
    ("[1]", 1),
])
def test_bad_input_raises_parse_error(text, line):
    with pytest.raises(ParseError) as info:
        ndt7.parse(text)
    assert info.value.line == line


def test_sniff(files):
    text = (HERE / "v0.14.2--download-cut-in-third-measurement.json").read_text()
    assert ndt7.sniff(text[:4096]) and not iperf3_json.sniff(text[:4096])
    assert not ndt7.sniff((HERE / "not-ndt7--iperf3-3.12-udp-R.json").read_text()[:4096])
    assert not ndt7.sniff("")
