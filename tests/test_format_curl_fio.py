"""curl -w '%{json}' and fio --output-format=json readers on their recorded fixtures
(tests/data/curl_json/record.sh, tests/data/fio_json/record.sh): each run's throughput is
the tool's own speed, and a damaged copy is flagged or cut where it is cut."""

from __future__ import annotations

import json

import numpy as np
import pytest

import thruput
from thruput.contract import validate
from thruput.errors import ParseError
from thruput.formats import curl_json

from .conftest import DATA

CURL = DATA / "curl_json"
FIO = DATA / "fio_json"


@pytest.mark.parametrize("name", ["7.88.1--loopback-20M.json", "7.88.1--loopback-three.json"])
def test_curl_throughput_is_curls_speed(name):
    ds = thruput.read(CURL / name)
    validate(ds)
    docs = [json.loads(line) for line in (CURL / name).read_text().splitlines() if line.strip()]
    assert ds.sizes["run"] == len(docs)
    for i, doc in enumerate(docs):
        assert ds.bytes.values[i] == doc["size_download"]
        assert ds.duration.values[i] == doc["time_total"]
        # curl's speed is size / time_total, truncated to an integer (bytes/s)
        assert ds.throughput.values[i] / 8 == pytest.approx(doc["speed_download"], rel=1e-3)
        assert ds.throughput_receiver.values[i] == ds.throughput.values[i]
    assert ds.attrs["consistent"] == 1
    assert ds.attrs["tool"] == "curl" and ds.attrs["tool_version"].startswith("libcurl/")


def test_curl_failed_transfer_kept_without_throughput():
    ds = thruput.read(CURL / "7.88.1--refused.json")
    assert np.isnan(ds.throughput.values[0])
    assert ds.curl_exitcode.values[0] == 7
    assert "connect" in str(ds.curl_errormsg.values[0]).lower()


def test_curl_damaged_copies():
    doubled = thruput.read(CURL / "7.88.1--doubled-size.json")
    assert doubled.attrs["consistent"] == 0
    cut = thruput.read(CURL / "7.88.1--truncated.json")
    assert cut.attrs["truncated"] == 1 and cut.sizes["run"] == 2
    with pytest.raises(ParseError, match="not valid JSON") as exc:
        curl_json.parse('{"size_download": 1, "time_total": 1, "speed_download": 1, "url_effective": ""}\n{x\n'
                        '{"a": 1}\n')
    assert exc.value.line == 2


def test_fio_throughput_is_fios_bandwidth():
    ds = thruput.read(FIO / "3.33--read-write.json")
    validate(ds)
    doc = json.loads((FIO / "3.33--read-write.json").read_text())
    want = [(j["jobname"], d, j[d]) for j in doc["jobs"] for d in ("read", "write") if j[d]["io_bytes"] > 0]
    assert list(ds.fio_job.values) == [w[0] for w in want]
    assert list(ds.fio_direction.values) == [w[1] for w in want]
    for i, (_, direction, io) in enumerate(want):
        assert ds.bytes.values[i] == io["io_bytes"]
        assert ds.duration.values[i] == io["runtime"] / 1e3
        assert ds.throughput.values[i] / 8 == pytest.approx(io["bw_bytes"], abs=1.0)
    assert set(ds.fio_direct.values) == {"1"}
    assert ds.attrs["consistent"] == 1


def test_fio_mixed_job_gives_a_read_and_a_write_run():
    ds = thruput.read(FIO / "3.33--rw-mixed.json")
    assert list(ds.fio_direction.values) == ["read", "write"]
    assert list(ds.stream_direction.values[:, 0]) == ["receive", "send"]


def test_fio_damaged_copies():
    assert thruput.read(FIO / "3.33--doubled-io-bytes.json").attrs["consistent"] == 0
    cut = thruput.read(FIO / "3.33--truncated.json")
    assert cut.attrs["truncated"] == 1 and list(cut.fio_job.values) == ["seqwrite"]
