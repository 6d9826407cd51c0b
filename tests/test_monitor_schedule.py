"""The schedule of a monitor campaign (pure): slots, seeded jitter and order, buffer plans."""

from __future__ import annotations

import pytest

from thruput.monitor.schedule import (Path, Schedule, buffers_at, next_slot, parse_time,
                                      slot_due)

#: The bundled campaign's schedule (data/raw/netns-wan-monitor/campaign.yaml).
BUNDLED = {"interval_s": 60, "jitter_s": 5, "order": "random", "seed": 20261122,
           "timeout_s": 30,
           "tests": [{"test": "tcp", "tool": "iperf3", "duration_s": 5,
                      "socket_buffers": [65536, 1048576]},
                     {"test": "udp", "tool": "iperf3", "duration_s": 5, "rate_bps": 2.0e7},
                     {"test": "ping", "count": 10, "interval_s": 0.2, "sizes": [108, 1480]}]}
AB = [Path.from_dict({"name": "a-b", "source": "a", "destination": "b",
                      "address": "10.201.0.2", "directions": ["forward", "reverse"]})]
T0 = parse_time("2026-11-22T18:03:00Z")


def test_fixed_order_is_the_declared_order():
    sched = Schedule.from_dict({**BUNDLED, "order": "fixed"})
    assert [t.run_id(7) for t in sched.tests(AB, T0, 7)] == [
        "000007-a-b-forward-tcp-b65536", "000007-a-b-forward-tcp-b1048576",
        "000007-a-b-reverse-tcp-b65536", "000007-a-b-reverse-tcp-b1048576",
        "000007-a-b-forward-udp", "000007-a-b-reverse-udp",
        "000007-a-b-forward-ping-z108", "000007-a-b-forward-ping-z1480"]


def test_random_order_is_seeded_per_slot():
    sched = Schedule.from_dict(BUNDLED)
    # the order the bundled recording ran slot 0 in (its runs.csv)
    assert [t.run_id(0) for t in sched.tests(AB, T0, 0)] == [
        "000000-a-b-forward-udp", "000000-a-b-reverse-tcp-b1048576",
        "000000-a-b-forward-ping-z1480", "000000-a-b-forward-ping-z108",
        "000000-a-b-forward-tcp-b65536", "000000-a-b-reverse-tcp-b65536",
        "000000-a-b-forward-tcp-b1048576", "000000-a-b-reverse-udp"]
    again = Schedule.from_dict(BUNDLED)
    for slot in range(20):
        assert again.tests(AB, T0, slot) == sched.tests(AB, T0, slot)
    orders = {tuple(t.run_id(0) for t in sched.tests(AB, T0, slot)) for slot in range(20)}
    assert len(orders) > 15  # a different order in (nearly) every slot
    other = Schedule.from_dict({**BUNDLED, "seed": 1})
    assert [t.run_id(0) for t in other.tests(AB, T0, 0)] != \
           [t.run_id(0) for t in sched.tests(AB, T0, 0)]


def test_jitter_is_seeded_and_bounded():
    sched = Schedule.from_dict(BUNDLED)
    assert sched.jitter(0) == pytest.approx(0.02080519592087493, abs=1e-15)
    assert sched.jitter(1) == pytest.approx(4.846910703588769, abs=1e-15)
    jitters = [sched.jitter(n) for n in range(200)]
    assert all(0 <= j < 5 for j in jitters)
    assert max(jitters) - min(jitters) > 4.5  # it uses the whole range
    assert Schedule.from_dict({**BUNDLED, "jitter_s": 0}).jitter(1) == 0.0
    assert slot_due(sched, T0, 1) == T0 + 60 + sched.jitter(1)


def test_next_slot_skips_slots_whose_time_passed():
    sched = Schedule.from_dict({**BUNDLED, "jitter_s": 0})
    assert next_slot(sched, T0, T0 - 100) == 0          # before the start: slot 0
    assert next_slot(sched, T0, T0) == 0                 # due now
    assert next_slot(sched, T0, T0 + 0.5) == 1           # slot 0 passed: not run late
    assert next_slot(sched, T0, T0 + 3600.5) == 61       # an hour down: 60 slots missed
    assert next_slot(sched, T0, T0 - 100, after=4) == 5  # never repeats a slot
    jittered = Schedule.from_dict(BUNDLED)
    # slot 1 is due at +64.85 s (jitter): at +62 s it is still to come
    assert next_slot(jittered, T0, T0 + 62) == 1
    assert next_slot(jittered, T0, T0 + 65) == 2


def test_socket_buffer_plan_changes_on_its_dates():
    test = {"test": "tcp", "socket_buffer_plan": [
        {"from": "2026-08-01T00:00:00Z", "socket_buffers": [65536, 262144]},
        {"from": "2026-09-01", "socket_buffers": [1048576]}]}
    assert buffers_at(test, parse_time("2026-07-31T23:59:59Z")) == []
    assert buffers_at(test, parse_time("2026-08-01T00:00:00Z")) == [65536, 262144]
    assert buffers_at(test, parse_time("2026-08-31T23:59:59Z")) == [65536, 262144]
    assert buffers_at(test, parse_time("2026-09-01T00:00:00Z")) == [1048576]
    sched = Schedule.from_dict({"interval_s": 300, "tests": [{**test, "duration_s": 10}]})
    ids = lambda when: [t.run_id(3) for t in sched.tests(AB, parse_time(when), 3)]  # noqa: E731
    assert ids("2026-07-15") == []
    assert ids("2026-08-15") == ["000003-a-b-forward-tcp-b65536", "000003-a-b-forward-tcp-b262144",
                                 "000003-a-b-reverse-tcp-b65536", "000003-a-b-reverse-tcp-b262144"]
    assert ids("2026-09-15") == ["000003-a-b-forward-tcp-b1048576",
                                 "000003-a-b-reverse-tcp-b1048576"]


def test_ping_runs_forward_only_and_carries_its_settings():
    sched = Schedule.from_dict({"interval_s": 60, "tests": [
        {"test": "ping", "count": 4, "interval_s": 0.5, "sizes": [108]}]})
    (spec,) = sched.tests(AB, T0, 0)
    assert (spec.direction, spec.size, spec.count, spec.interval_s, spec.role) == \
           ("forward", 108, 4, 0.5, "ping")


@pytest.mark.parametrize("change, message", [
    ({"order": "shuffled"}, "schedule.order 'shuffled' is not one of ['fixed', 'random']"),
    ({"jitter_s": 60}, "schedule.jitter_s must be >= 0 and < interval_s"),
    ({"interval_s": 0}, "schedule.interval_s must be > 0"),
    ({"every": 5}, "schedule: unknown key 'every'"),
    ({"tests": []}, "schedule.tests is empty: nothing to run"),
    ({"tests": [{"test": "tcp", "duration_s": 5}]},
     "schedule.tests[0]: a tcp test needs socket_buffers or socket_buffer_plan"),
    ({"tests": [{"test": "udp"}]}, "schedule.tests[0]: a udp test needs rate_bps"),
    ({"tests": [{"test": "ping", "tool": "iperf3", "sizes": [56]}]},
     "schedule.tests[0]: tool 'iperf3' cannot run a ping test (use one of ['ping'])"),
    ({"tests": [{"test": "dns"}]},
     "schedule.tests[0]: test 'dns' is not one of ['tcp', 'udp', 'ping', 'traceroute']"),
])
def test_bad_schedules_say_what_is_wrong(change, message):
    with pytest.raises(ValueError) as err:
        Schedule.from_dict({**BUNDLED, **change})
    assert str(err.value) == message


def test_bad_direction_is_named():
    with pytest.raises(ValueError, match="path 'x': direction 'both' is not one of"):
        Path.from_dict({"name": "x", "address": "h", "directions": ["both"]})
