"""The sweep plan of a campaign: windows x streams x repeats, in the order they run.

A plan is what ``thruput record`` means to run and what ``campaign.yaml`` stores under
``plan`` (see docs/design.md). Run ids are ``w<window bytes>-s<streams>-r<repeat>``.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field

from ..campaign.layout import run_id
from ..quantities import parse_size

__all__ = ["Cell", "Plan", "parse_size", "parse_sizes", "parse_counts", "run_id"]

#: In a list, "..." continues the geometric (or, failing that, arithmetic) progression of
#: the two values before it up to the value after it: "8K,16K,...,1M", "1,2,...,16".
ELLIPSIS = "..."

ORDERS = ("sequential", "random")
TOOLS = ("iperf3", "iperf2")


def _expand(items, convert, what):
    values = []
    for i, item in enumerate(items):
        if item.strip() != ELLIPSIS:
            values.append(convert(item))
            continue
        if len(values) < 2 or i + 1 >= len(items) or items[i + 1].strip() == ELLIPSIS:
            raise ValueError(f"{what}: '...' needs two values before it and one after it")
        a, b, end = values[-2], values[-1], convert(items[i + 1])
        ratio, step = b / a, b - a
        if step <= 0:
            raise ValueError(f"{what}: '...' needs increasing values before it")
        geometric = ratio == int(ratio) and ratio > 1
        nxt = b * int(ratio) if geometric else b + step
        while nxt < end:
            values.append(nxt)
            nxt = nxt * int(ratio) if geometric else nxt + step
    if not values or len(set(values)) != len(values) or values != sorted(values):
        raise ValueError(f"{what}: need distinct values in increasing order, got {values}")
    return values


def parse_sizes(text):
    """``"8K,16K,...,128K"`` -> [8192, 16384, 32768, 65536, 131072].

    ``...`` repeats the ratio of the two values before it (doubling here) until the value
    after it; when that ratio is not a whole number, the step is repeated instead.
    """
    return _expand(text.split(","), parse_size, "windows")


def parse_counts(text):
    """``"1,2,...,16"`` -> [1, 2, 4, 8, 16]; ``"1,2,4"`` -> [1, 2, 4]."""
    def count(item):
        if not item.strip().isdigit() or int(item) < 1:
            raise ValueError(f"bad count {item!r}; use whole numbers from 1")
        return int(item)
    return _expand(text.split(","), count, "streams")


@dataclass(frozen=True)
class Cell:
    """One run of the plan: a window (bytes), a number of streams and a repeat index."""

    window: int
    streams: int
    repeat: int

    @property
    def run(self):
        return run_id(self.window, self.streams, self.repeat)


@dataclass
class Plan:
    """What ``thruput record`` runs: the ``plan`` section of ``campaign.yaml``.

    Parameters
    ----------
    windows : list of int
        Requested TCP windows (``iperf -w``), bytes.
    streams : list of int
        Numbers of parallel streams (``iperf -P``).
    repeats : int
        Times each (window, streams) cell runs.
    duration_s : int
        Length of each loaded run (``iperf -t``), whole seconds; ping runs alongside it.
    pause_s : int
        Break after each loaded run, whole seconds, during which ping runs alone
        (unloaded); 0 for no unloaded phase.
    tool : {"iperf3", "iperf2"}
    order : {"sequential", "random"}
        ``sequential``: repeat, then window, then streams, each ascending (so the repeats
        of a cell are spread over the campaign); ``random``: that list shuffled with
        ``seed``.
    seed : int, optional
        Seed of the shuffle (``random.Random``); see :meth:`with_seed`.
    ping_interval_s, ping_size_bytes : float, int
        ``ping -i`` and ``ping -s``.
    """

    windows: list
    streams: list
    repeats: int = 3
    duration_s: int = 10
    pause_s: int = 10
    tool: str = "iperf3"
    order: str = "sequential"
    seed: int | None = None
    ping_interval_s: float = 0.2
    ping_size_bytes: int = 56
    _cells: list = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.tool not in TOOLS:
            raise ValueError(f"tool must be one of {TOOLS}, not {self.tool!r}")
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, not {self.order!r}")
        if self.repeats < 1:
            raise ValueError("need at least one repeat")
        # iperf3 -t and ping -w take whole seconds (iperf3 reads "-t 0.5" as 0: forever)
        if self.duration_s != int(self.duration_s) or self.duration_s < 1:
            raise ValueError(f"duration must be a whole number of seconds >= 1, not {self.duration_s}")
        if self.pause_s != int(self.pause_s) or self.pause_s < 0:
            raise ValueError(f"pause must be a whole number of seconds >= 0, not {self.pause_s}")
        self.duration_s, self.pause_s = int(self.duration_s), int(self.pause_s)
        if self.ping_interval_s <= 0:
            raise ValueError("ping interval must be positive")

    def with_seed(self, seed=None):
        """This plan with a shuffle seed: ``seed``, or a fresh one if random and unset."""
        if self.order == "random" and self.seed is None:
            self.seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        return self

    def cells(self):
        """Every run of the plan, in the order it is recorded."""
        cells = [Cell(w, s, r) for r in range(self.repeats) for w in self.windows
                 for s in self.streams]
        if self.order == "random":
            random.Random(self.seed).shuffle(cells)
        return cells

    @property
    def parts(self):
        """The (role, phase) files each run leaves (see :data:`manifest.RUN_PARTS`)."""
        parts = [("iperf", ""), ("ping", "loaded")]
        if self.pause_s > 0:
            parts.append(("ping", "unloaded"))
        return tuple(parts)

    @property
    def cell_seconds(self):
        """Nominal seconds per run: the loaded run plus the unloaded pause."""
        return self.duration_s + self.pause_s

    def to_dict(self):
        """The ``plan`` mapping of campaign.yaml (schema: campaign.schema.json)."""
        d = {"tool": self.tool, "windows": list(self.windows), "streams": list(self.streams),
             "repeats": self.repeats, "duration_s": self.duration_s, "pause_s": self.pause_s,
             "order": self.order}
        if self.order == "random":
            d["seed"] = self.seed
        d["ping"] = {"interval_s": self.ping_interval_s, "size_bytes": self.ping_size_bytes}
        return d

    @classmethod
    def from_dict(cls, d):
        """Inverse of :meth:`to_dict`."""
        ping = d.get("ping") or {}
        return cls(windows=list(d["windows"]), streams=list(d["streams"]),
                   repeats=int(d["repeats"]), duration_s=d.get("duration_s", 10),
                   pause_s=d.get("pause_s", 10), tool=d["tool"],
                   order=d.get("order", "sequential"), seed=d.get("seed"),
                   ping_interval_s=float(ping.get("interval_s", 0.2)),
                   ping_size_bytes=int(ping.get("size_bytes", 56)))

    def differences(self, other):
        """Names of the settings in which ``other`` differs from this plan."""
        a, b = asdict(self), asdict(other)
        return [k for k in a if not k.startswith("_") and a[k] != b[k]]
