"""mtr --json and scamper JSON traceroutes (recorded in namespaces: tests/data/mtr_json and
scamper_json record.sh) read as routes, with exact values."""

from __future__ import annotations

import json

import numpy as np
import pytest

import thruput
from thruput.errors import ParseError

from .conftest import DATA


def test_mtr_statistics_per_hop_and_the_last_probe():
    path = DATA / "mtr_json" / "0.95--n.json"
    ds = thruput.validate(thruput.read(path))
    hubs = json.loads(path.read_text())["report"]["hubs"]
    assert ds["hop_address"].values[:, 0].tolist() == [h["host"] for h in hubs]
    assert ds["hop_rtt"].values[:, 0].tolist() == [h["Last"] for h in hubs]
    assert ds["mtr_avg"].values.tolist() == [h["Avg"] for h in hubs]
    assert ds.attrs["route_reached"] == 1 and ds["line"].values.tolist() == [13, 24, 35]


def test_mtr_a_hop_that_answered_nothing_has_no_address_and_no_times():
    ds = thruput.read(DATA / "mtr_json" / "0.95--blackhole.json")
    assert ds["hop_address"].values[1, 0] == "" and np.isnan(ds["hop_rtt"].values[1, 0])
    assert ds["mtr_loss"].values[1] == 100.0 and np.isnan(ds["mtr_avg"].values[1])


def test_mtr_names_without_addresses():
    ds = thruput.read(DATA / "mtr_json" / "0.95--names.json")
    assert ds["hop_name"].values[:, 0].tolist() == ["r1.tph5.test", "r2.tph5.test", "b.tph5.test"]
    assert (ds["hop_address"].values == "").all()


def test_scamper_trace_time_marks_and_ttls():
    ds = thruput.validate(thruput.read(DATA / "scamper_json" / "20211212--host-unreachable.json"))
    assert ds["hop_annotation"].values.tolist() == [["!H"]]
    assert ds.attrs["scamper_stop_reason"] == "UNREACH" and ds.attrs["route_reached"] == 0
    udp = thruput.read(DATA / "scamper_json" / "20211212--udp-paris.json")
    trace = json.loads((DATA / "scamper_json" / "20211212--udp-paris.json").read_text().splitlines()[1])
    assert udp["route_time"].values == np.datetime64(trace["start"]["sec"] * 10**6 + trace["start"]["usec"], "us")
    assert udp["hop_annotation"].values.ravel().tolist() == ["", "", ""]    # port unreachable: the target
    assert udp["hop_rtt"].values[:, 0].tolist() == [h["rtt"] for h in trace["hops"]]


def test_scamper_a_ttl_without_answer_and_one_route_a_file():
    ds = thruput.read(DATA / "scamper_json" / "20211212--blackhole.json")
    assert ds["hop_ttl"].values.tolist() == [1, 2, 3, 4, 5]
    assert (ds["hop_address"].values[1:] == "").all()
    with pytest.raises(ParseError, match="a second trace"):
        thruput.read(DATA / "scamper_json" / "20211212--two-traces.json")
