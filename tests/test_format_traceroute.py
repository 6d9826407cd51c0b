"""traceroute reader: recorded samples (tests/data/traceroute/record.sh, namespaces with
routers), the annotations, names, IPv6, and the real wrapped traceroutes of a drive test."""

from __future__ import annotations

import numpy as np
import pytest

import thruput
from thruput.errors import ParseError
from thruput.formats import traceroute

from .conftest import DATA

HERE = DATA / "traceroute"


def _read(name):
    return thruput.validate(thruput.read(HERE / f"linux-2.1.2--{name}.txt"))


def test_names_and_addresses_per_probe():
    ds = _read("names")
    assert ds.attrs["kind"] == "route" and ds.attrs["route_target_address"] == "10.77.3.2"
    assert ds["hop_ttl"].values.tolist() == list(range(1, 9))
    assert ds["hop_name"].values[0].tolist() == ["r1.tph5.test"] * 3
    # hop 8: "* b.tph5.test (10.77.3.2)  0.058 ms  0.011 ms"
    assert ds["hop_address"].values[7].tolist() == ["", "10.77.3.2", "10.77.3.2"]
    assert np.isnan(ds["hop_rtt"].values[7, 0]) and ds["hop_rtt"].values[7, 1:].tolist() == [0.058, 0.011]
    assert ds.attrs["route_reached"] == 1 and np.isnat(ds["route_time"].values)


@pytest.mark.parametrize("name, mark", [("net-unreachable-N", "!N"), ("host-unreachable-H", "!H"),
                                        ("prohibited-X", "!X")])
def test_unreachable_marks_end_the_route(name, mark):
    ds = _read(name)
    last = ds["hop_annotation"].values[-1].tolist()
    assert mark in last and set(last) <= {mark, ""}
    assert ds.attrs["route_reached"] == 0 and ds.attrs["truncated"] == 0


def test_ipv6_and_four_probes():
    assert _read("ipv6-n")["hop_address"].values[:, 0].tolist() == ["fd77:1::1", "fd77:2::2", "fd77:3::2"]
    assert _read("n-q4").sizes["probe"] == 4


def test_a_route_into_a_blackhole_is_stars_to_the_maximum_and_a_cut_one_is_truncated():
    ds = _read("blackhole-stars")
    assert (ds["hop_address"].values[1:] == "").all() and ds.attrs["truncated"] == 0
    cut = _read("truncated")
    assert cut.attrs["truncation"] == "cut off after hop 2" and cut.sizes["hop"] == 2


def test_a_line_that_is_no_hop_fails_naming_it():
    with pytest.raises(ParseError, match="3: not a traceroute hop line"):
        traceroute.parse("traceroute to a (10.0.0.1), 30 hops max, 60 byte packets\n"
                         " 1  10.0.0.1  1.0 ms\nhello\n")


def test_the_wrapped_traceroutes_of_a_real_pile_are_routes_with_their_time(corpus):
    pile = corpus / "real" / "starlink-drive-as-found"
    if not pile.is_dir():
        pytest.skip("starlink-drive-as-found not present")
    ds = thruput.validate(thruput.read(pile / "starlink/20240527/165749913/traceroute_170239253.out"))
    assert ds["hop_address"].values[:, 0].tolist()[:3] == ["192.168.1.1", "100.64.0.1", "172.16.250.66"]
    # hop 4 was answered from three addresses (load balancing), named the same
    assert ds["hop_address"].values[3].tolist() == ["206.224.64.154", "206.224.64.190", "206.224.64.178"]
    # the wrapper's stamps are US Eastern (UTC-4, shown by its Start time line)
    assert str(ds["route_time"].values) == "2024-05-27T21:02:39.380878000"
