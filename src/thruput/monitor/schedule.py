"""The schedule of a monitor campaign: which tests run in which slot, when, in what order.

Pure functions of the campaign's ``paths`` and ``schedule`` (docs/design.md, "Monitor
campaigns"): nothing here runs a tool or reads the clock. Slot ``n`` is due at
``start + n * interval_s`` plus a jitter drawn uniformly from ``[0, jitter_s)``; the
jitter and the order of the tests within the slot come from a random generator seeded
with ``(seed, n)``, so a restarted monitor draws exactly what the first one would have.

Examples
--------
>>> sched = Schedule.from_dict({"interval_s": 60, "jitter_s": 0, "order": "fixed",
...     "tests": [{"test": "ping", "count": 5, "interval_s": 0.2, "sizes": [108]}]})
>>> paths = [Path.from_dict({"name": "a-b", "source": "a", "destination": "b",
...                          "address": "10.0.0.2"})]
>>> [t.run_id(3) for t in sched.tests(paths, when=0.0, slot=3)]
['000003-a-b-forward-ping-z108']
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..quantities import parse_time

__all__ = ["Schedule", "TestSpec", "Path", "slot_due", "next_slot", "buffers_at",
           "parse_time", "DIRECTIONS", "TESTS", "ROUTE_TESTS", "TOOLS", "RECORDED_TOOLS", "ORDERS"]

#: forward = source -> destination; reverse = destination -> source (iperf3 -R).
DIRECTIONS = ("forward", "reverse")
TESTS = ("tcp", "udp", "ping")
#: Tests that trace the path instead of measuring it: their files are routes, listed in
#: routes.csv (:mod:`thruput.monitor.routes`), not runs of the monitor Dataset.
ROUTE_TESTS = ("traceroute",)
#: Tools each test may use; the first is the default.
TOOLS = {"tcp": ("iperf3", "iperf2"), "udp": ("iperf3", "iperf2"), "ping": ("ping",),
         "traceroute": ("traceroute",)}
#: Tools whose logs a monitor campaign may hold: those it runs, and those an imported
#: archive was recorded with (``thruput campaign import --kind monitor``), which
#: ``thruput monitor`` cannot run.
RECORDED_TOOLS = {"tcp": (*TOOLS["tcp"], "nuttcp", "ndt7", "pscheduler"), "udp": (*TOOLS["udp"], "nuttcp", "pscheduler"),
                  "ping": (*TOOLS["ping"], "pscheduler")}
ORDERS = ("fixed", "random")
#: Defaults of the ``schedule`` mapping (seconds).
DEFAULTS = {"interval_s": 300.0, "jitter_s": 0.0, "order": "fixed", "seed": 0,
            "timeout_s": 60.0}
#: Keys of ``schedule`` that the statistics read and the schedule does not (the schema
#: checks them): ``day_s``, the cycle the daily profile folds on.
ANALYSIS_KEYS = frozenset({"day_s"})
#: Defaults of one entry of ``schedule.tests``.
TEST_DEFAULTS = {"duration_s": 10.0, "count": 10, "interval_s": 0.2, "sizes": [56]}
#: ping only measures the round trip, so it is run from the source alone.
ROUND_TRIP_TESTS = frozenset({"ping", "traceroute"})
#: Defaults of a traceroute entry: probes a hop (traceroute -q) and the most hops (-m).
ROUTE_DEFAULTS = {"probes": 3, "max_hops": 30}


@dataclass(frozen=True)
class Path:
    """One watched path (``paths[]`` of campaign.yaml)."""

    name: str
    address: str
    source: str = ""
    destination: str = ""
    directions: tuple = ("forward",)
    port: int | None = None

    @classmethod
    def from_dict(cls, d):
        directions = tuple(d.get("directions") or ("forward",))
        bad = [x for x in directions if x not in DIRECTIONS]
        if bad:
            raise ValueError(f"path {d.get('name')!r}: direction {bad[0]!r} is not one of "
                             f"{list(DIRECTIONS)}")
        return cls(name=str(d["name"]), address=str(d["address"]),
                   source=str(d.get("source") or ""), destination=str(d.get("destination") or ""),
                   directions=directions, port=d.get("port"))


@dataclass(frozen=True)
class TestSpec:
    """One test of one slot: what to run, on which path, in which direction.

    ``socket_buffer`` (bytes, TCP), ``size`` (ping payload bytes) and ``rate`` (bit/s,
    UDP) are None where they do not apply.
    """

    __test__ = False  # not a pytest test class, whatever its name

    path: Path
    direction: str
    test: str
    tool: str
    duration_s: float | None = None
    socket_buffer: int | None = None
    size: int | None = None
    rate: float | None = None
    count: int | None = None
    interval_s: float | None = None
    max_hops: int | None = None

    def run_id(self, slot):
        """``<slot:06d>-<path>-<direction>-<test>[-b<socket_buffer>][-z<size>]``."""
        run = f"{slot:06d}-{self.path.name}-{self.direction}-{self.test}"
        if self.socket_buffer is not None:
            run += f"-b{self.socket_buffer}"
        if self.size is not None:
            run += f"-z{self.size}"
        return run

    @property
    def role(self):
        """Manifest role: ``ping`` (an RTT log), ``iperf`` (a throughput log) or
        ``route`` (a traceroute, listed in routes.csv)."""
        return "route" if self.test in ROUTE_TESTS else "ping" if self.test == "ping" else "iperf"


def buffers_at(test, when):
    """Socket buffers (bytes) a TCP test entry asks for at ``when`` (Unix seconds).

    ``socket_buffers`` is a fixed list; ``socket_buffer_plan`` is a list of
    ``{from, socket_buffers}``: the last entry whose ``from`` is not after ``when``
    applies, and before the first one the test does not run (empty list).
    """
    plan = test.get("socket_buffer_plan")
    if not plan:
        return [int(b) for b in test.get("socket_buffers") or []]
    current = []
    for entry in sorted(plan, key=lambda e: parse_time(e["from"])):
        if parse_time(entry["from"]) <= when:
            current = [int(b) for b in entry["socket_buffers"]]
    return current


@dataclass(frozen=True)
class Schedule:
    """The ``schedule`` mapping of a monitor campaign.yaml, with defaults filled in."""

    interval_s: float
    jitter_s: float
    order: str
    seed: int
    timeout_s: float
    entries: tuple = field(default_factory=tuple)  # the ``tests`` list, defaults filled in

    @classmethod
    def from_dict(cls, d):
        """Build from the mapping; ``ValueError`` names what is wrong."""
        values = {**DEFAULTS, **{k: v for k, v in d.items() if k != "tests" and k not in ANALYSIS_KEYS}}
        unknown = set(values) - set(DEFAULTS)
        if unknown:
            raise ValueError(f"schedule: unknown key {sorted(unknown)[0]!r}")
        if values["order"] not in ORDERS:
            raise ValueError(f"schedule.order {values['order']!r} is not one of {list(ORDERS)}")
        if not values["interval_s"] > 0:
            raise ValueError("schedule.interval_s must be > 0")
        if not 0 <= values["jitter_s"] < values["interval_s"]:
            raise ValueError("schedule.jitter_s must be >= 0 and < interval_s")
        tests = []
        for i, t in enumerate(d.get("tests") or []):
            test = t.get("test")
            if test not in TESTS + ROUTE_TESTS:
                raise ValueError(f"schedule.tests[{i}]: test {test!r} is not one of "
                                 f"{list(TESTS + ROUTE_TESTS)}")
            tool = t.get("tool", TOOLS[test][0])
            if tool not in TOOLS[test]:
                raise ValueError(f"schedule.tests[{i}]: tool {tool!r} cannot run a {test} test "
                                 f"(use one of {list(TOOLS[test])})")
            if test == "tcp" and not (t.get("socket_buffers") or t.get("socket_buffer_plan")):
                raise ValueError(f"schedule.tests[{i}]: a tcp test needs socket_buffers or "
                                 "socket_buffer_plan")
            if test == "udp" and not t.get("rate_bps"):
                raise ValueError(f"schedule.tests[{i}]: a udp test needs rate_bps")
            defaults = ROUTE_DEFAULTS if test in ROUTE_TESTS else TEST_DEFAULTS
            tests.append({**defaults, **t, "tool": tool})
        if not tests:
            raise ValueError("schedule.tests is empty: nothing to run")
        return cls(float(values["interval_s"]), float(values["jitter_s"]), values["order"],
                   int(values["seed"]), float(values["timeout_s"]), tuple(tests))

    def _rng(self, slot):
        return np.random.default_rng([self.seed, slot])

    def jitter(self, slot):
        """Seconds slot ``slot`` starts after its nominal time (the same on every run)."""
        return float(self._rng(slot).uniform(0.0, self.jitter_s)) if self.jitter_s else 0.0

    def tests(self, paths, when, slot):
        """The tests of slot ``slot`` due at ``when`` (Unix s), in the order they run."""
        specs = []
        for path in paths:
            for t in self.entries:
                directions = ("forward",) if t["test"] in ROUND_TRIP_TESTS else path.directions
                for direction in directions:
                    specs += _expand(t, path, direction, when)
        if self.order == "random":
            rng = self._rng(slot)
            rng.uniform()  # the jitter's draw: the order comes second, whatever jitter_s is
            specs = [specs[i] for i in rng.permutation(len(specs))]
        return specs



def _expand(t, path, direction, when):
    common = dict(path=path, direction=direction, test=t["test"], tool=t["tool"])
    if t["test"] == "tcp":
        return [TestSpec(**common, duration_s=float(t["duration_s"]), socket_buffer=b)
                for b in buffers_at(t, when)]
    if t["test"] == "udp":
        return [TestSpec(**common, duration_s=float(t["duration_s"]), rate=float(t["rate_bps"]))]
    if t["test"] in ROUTE_TESTS:
        return [TestSpec(**common, count=int(t["probes"]), max_hops=int(t["max_hops"]))]
    return [TestSpec(**common, size=int(s), count=int(t["count"]),
                     interval_s=float(t["interval_s"])) for s in t["sizes"]]


def slot_due(schedule, start, slot):
    """When slot ``slot`` starts (Unix s): nominal time plus its jitter."""
    return start + slot * schedule.interval_s + schedule.jitter(slot)


def next_slot(schedule, start, now, after=-1):
    """The first slot after ``after`` that is not yet due at ``now`` (Unix s).

    Slots whose time has passed are not run late: they are gaps in the record.
    """
    # slot n is due in [start + n*interval, start + n*interval + jitter): the one whose
    # nominal time last passed may still be to come, the one before it is not
    first_future = max(0, math.floor((now - start) / schedule.interval_s))
    while slot_due(schedule, start, first_future) < now:
        first_future += 1
    return max(first_future, after + 1)
