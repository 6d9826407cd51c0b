"""iperf3 --json-stream reader (fixtures converted from real -J runs, see
tests/data/iperf3_stream/README.md) and --get-server-output (server_output_json and
server_output_text) in both the stream and the -J reader: every stream sample reads exactly
as the -J document it came from, a stream cut mid-run keeps its complete intervals, and
the server's own numbers are kept and cross-checked against the client's summary."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import thruput
from thruput.contract import validate
from thruput.errors import ParseError
from thruput.formats import iperf3_json, iperf3_stream

from .conftest import DATA, load_tool

HERE = DATA / "iperf3_stream"
JSON = DATA / "iperf3_json"

#: stream samples whose -J original is also a fixture (the rest were converted from -J
#: documents recorded by record.sh only for this folder)
SAME_AS_JSON = {"server-output-text": "get-server-output-text",
                "server-output-json": "get-server-output-json",
                "server-output-json-udp-R": "get-server-output-json-udp-R"}


def _stream(name):
    return thruput.read(HERE / f"3.12--{name}.jsonl")


@pytest.mark.parametrize("name", sorted(SAME_AS_JSON))
def test_stream_reads_as_its_json_document(name):
    stream, doc = _stream(name), thruput.read(JSON / f"3.12--{SAME_AS_JSON[name]}.json")
    assert stream.attrs["format"] == "iperf3_stream"
    for var in doc.data_vars:
        if var == "line":
            continue
        np.testing.assert_array_equal(stream[var].values, doc[var].values, err_msg=var)
    assert stream.attrs["consistent"] == doc.attrs["consistent"] == 1
    validate(stream)


def test_converter_is_what_the_fixtures_hold():
    convert = load_tool("iperf3_json_stream").convert
    text = (JSON / "3.12--get-server-output-json.json").read_text()
    assert convert(text) == (HERE / "3.12--server-output-json.jsonl").read_text()
    events = [json.loads(line)["event"] for line in convert(text).splitlines()]
    assert events == ["start", "interval", "interval", "server_output_json", "end"]


def test_values_and_lines_from_the_events():
    ds = _stream("tcp")
    lines = (HERE / "3.12--tcp.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    end = events[-1]["data"]
    assert float(ds.throughput[0]) == end["sum_received"]["bits_per_second"]
    assert float(ds.throughput_sender[0]) == end["sum_sent"]["bits_per_second"]
    assert float(ds.retransmits[0]) == end["sum_sent"]["retransmits"]
    intervals = [e["data"] for e in events if e["event"] == "interval"]
    assert ds.interval_bytes[0, 0].values.tolist() == [i["streams"][0]["bytes"] for i in intervals]
    # every interval value names the line of its event
    assert ds.line[0, 0].values.tolist() == [n for n, e in enumerate(events, start=1) if e["event"] == "interval"]
    assert float(ds.iperf3_start_time[0]) == events[0]["data"]["timestamp"]["timesecs"]


def test_cut_mid_run_keeps_complete_intervals():
    full, cut = _stream("tcp"), _stream("truncated")
    n = cut.sizes["interval"]
    assert 0 < n < full.sizes["interval"]
    assert cut.attrs["truncated"] == 1
    assert "the end event is lost" in cut.attrs["truncation"]
    np.testing.assert_array_equal(cut.interval_bytes.values, full.interval_bytes.values[..., :n])
    assert math.isnan(float(cut.throughput[0]))  # no interval stands in for the end sums
    assert json.loads(cut.attrs["skipped_reasons"]) == {"truncated line": 1}


def test_several_runs_and_interrupts():
    ds = _stream("two-runs")
    assert ds.sizes["run"] == 2 and ds.protocol.values.tolist() == ["TCP", "UDP"]
    assert ds.run_line.values.tolist()[0] == 1
    checks = json.loads(ds.attrs["consistency"])
    assert [c["check"] for c in checks if "interval events" in c["check"]] == [
        "run 0: bytes sent: end.sum_sent vs sum of interval events",
        "run 1: bytes sent: end.sum_sent vs sum of interval events"]
    assert ds.attrs["consistent"] == 1    # and the -J reader's checks of each end event
    interrupted = _stream("tcp-interrupted")
    assert "interrupt" in str(interrupted.iperf3_error.values[0])
    assert interrupted.attrs["truncated"] == 1


def test_server_output_json_and_text():
    doc = json.loads((JSON / "3.12--get-server-output-json.json").read_text())
    ds = thruput.read(JSON / "3.12--get-server-output-json.json")
    server = doc["server_output_json"]["end"]["sum_received"]
    assert ds.iperf3_server_output.values.tolist() == ["json"]
    assert float(ds.iperf3_server_bytes_received[0]) == server["bytes"]
    assert float(ds.iperf3_server_throughput_received[0]) == server["bits_per_second"]
    check = json.loads(ds.attrs["consistency"])[-1]
    assert check["check"].endswith("client's end.sum_received vs server_output_json")
    assert check["ok"] and check["tool"] == check["data"] == doc["end"]["sum_received"]["bytes"]
    # -R UDP: the server sent; its received summary (0 bytes, never exchanged) is not used
    rev = thruput.read(JSON / "3.12--get-server-output-json-udp-R.json")
    rdoc = json.loads((JSON / "3.12--get-server-output-json-udp-R.json").read_text())
    assert math.isnan(float(rev.iperf3_server_bytes_received[0]))
    assert float(rev.iperf3_server_bytes_sent[0]) == rdoc["server_output_json"]["end"]["sum_sent"]["bytes"]
    assert json.loads(rev.attrs["consistency"])[-1]["check"].endswith("end.sum_sent vs server_output_json")
    # the server's text: its receiver line, 3 significant digits
    text = thruput.read(JSON / "3.12--get-server-output-text.json")
    tdoc = json.loads((JSON / "3.12--get-server-output-text.json").read_text())
    receiver = [line.split() for line in tdoc["server_output_text"].splitlines() if line.endswith("receiver")][0]
    assert float(text.iperf3_server_bytes_received[0]) == float(receiver[4]) * {"MBytes": 2**20, "GBytes": 2**30}[receiver[5]]
    check = json.loads(text.attrs["consistency"])[-1]
    assert check["ok"] and "3 significant digits" in check["note"]


def test_server_output_disagreeing_is_reported():
    text = (JSON / "3.12--get-server-output-json.json").read_text()
    doc = json.loads(text)
    doc["server_output_json"]["end"]["sum_received"]["bytes"] *= 10
    ds = iperf3_json.parse(json.dumps(doc, indent=1))
    assert ds.attrs["consistent"] == 0
    assert json.loads(ds.attrs["consistency"])[-1]["ok"] is False


def test_errors_and_sniffing():
    with pytest.raises(ParseError, match="empty input"):
        iperf3_stream.parse("")
    good = (HERE / "3.12--udp.jsonl").read_text()
    with pytest.raises(ParseError, match="unknown iperf3 --json-stream event 'bogus'"):
        iperf3_stream.parse(good + '{"event":"bogus","data":1}\n')
    with pytest.raises(ParseError, match="not a JSON event") as err:
        iperf3_stream.parse(good.replace("\n", "\nnot json\n", 1))
    assert err.value.line == 2
    with pytest.raises(ParseError, match="before any 'start'"):
        iperf3_stream.parse('{"event":"interval","data":{}}\n')
    with pytest.raises(ParseError, match="iperf3 reported an error: unable to connect"):
        iperf3_stream.parse('{"event":"error","data":"unable to connect to server"}\n{"event":"end","data":{}}\n')
    head = good[:4096]
    assert iperf3_stream.sniff(head) and not iperf3_json.sniff(head)
    doc_head = (JSON / "3.12--tcp.json").read_text()[:4096]
    assert iperf3_json.sniff(doc_head) and not iperf3_stream.sniff(doc_head)
