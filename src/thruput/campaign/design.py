"""The design of a campaign: its factors, their levels, whether its runs form series over time.

Every campaign has one (:func:`design_of`): a TCP sweep is window x streams (x repeat,
and phase for its pings), a UDPmon sweep spacing x packet size, a monitor path x
direction x test x socket buffer x size (x rate) over time, and a campaign of
``kind: design`` declares its own in ``campaign.yaml`` (docs/design.md, "Designs")::

    kind: design
    time: false
    factors:
      - {name: cc, levels: [reno, cubic, bbr], from: pattern, applied: "iperf3 -C"}
      - {name: socket_buffer, units: byte, ordered: true, from: log, applied: "iperf3 -w"}

A design's ``runs.csv`` has the columns :data:`DESIGN_COLUMNS` and then one column per
factor, in declared order (:func:`design_columns`); run ids are the factor values joined
and the repeat (:func:`design_run_id`). :func:`parse_design_manifest` reads it (through
:mod:`.runs`, the one reader of runs.csv) and checks every cell against the design.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ParseError
from . import runs
from .layout import MANIFEST_FILE, ROLE_KINDS, path_problem

__all__ = [
    "DESIGN_COLUMNS",
    "DESIGN_ROLES",
    "FACTOR_NAME",
    "RESERVED_NAMES",
    "Design",
    "DesignRow",
    "Factor",
    "design_columns",
    "design_of",
    "design_of_dataset",
    "design_run_id",
    "factor_name_problem",
    "factor_problems",
    "numeric_cell",
    "parse_design_manifest",
    "read_design_manifest",
    "safe_level",
    "with_levels",
]

#: The fixed columns of a design's runs.csv, in order; one column per factor follows.
DESIGN_COLUMNS = ("run", "role", "path", "sha256", "started", "repeat", "outcome", "reason")
#: Roles of a design's files: the contract kind its reader returns (throughput or rtt), as
#: for every campaign (:data:`~thruput.campaign.layout.ROLE_KINDS`).
DESIGN_ROLES = {role: ROLE_KINDS[role] for role in ("iperf", "ping")}
#: Where a factor's value comes from when a pile is imported.
FACTOR_SOURCES = ("pattern", "log", "fixed")
#: A factor name: an identifier (it becomes a Dataset coordinate and a runs.csv column).
FACTOR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Names a factor may not take: the fixed columns and every name of the design Dataset
#: (:data:`thruput.design.dataset.DESIGN_VARIABLES` lists the variables).
RESERVED_NAMES = frozenset(DESIGN_COLUMNS + (
    "time", "source", "source_sha256", "throughput", "throughput_sender", "retransmits",
    "window_actual", "duration", "loss_fraction", "jitter", "tool", "tool_checks_failed",
    "ping_transmitted", "ping_received", "ping_loss", "rtt_min", "rtt_p10", "rtt_median",
    "rtt_p90", "rtt_max", "rtt_mean", "rtt_mdev", "rtt", "probe", "line", "kind"))
#: Units a numeric factor may have (those of :data:`thruput.contract.UNITS`).
FACTOR_UNITS = ("bit/s", "byte", "byte/s", "s", "ms", "us", "1", "count", "percent", "MHz", "Hz")
#: Characters kept in a run id; every other one becomes "_".
UNSAFE = re.compile(r"[^A-Za-z0-9.+_]")
#: Plain decimal numbers (a numeric factor's cells).
NUMBER = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")


@dataclass(frozen=True)
class Factor:
    """One factor of a design.

    Attributes
    ----------
    name : str
        The runs.csv column and the Dataset coordinate.
    levels : tuple
        The levels in order (numbers for a numeric factor); empty: taken from the runs.
    units : str or None
        Units of a numeric factor (``byte``, ``bit/s``, ``count``...); None: not numeric.
    ordered : bool
        Whether the levels have an order that means something (a window, a size).
    source : str or None
        Where the value came from when imported: ``pattern``, ``log`` or ``fixed``
        (campaign.yaml key ``from``).
    applied : str or None
        How it was applied when recording (``"iperf3 -C"``, ``"ip link set mtu"``).
    scope : str or None
        The role of the runs it concerns (``"ping"`` for a sweep's phase); None: all.
    """

    name: str
    levels: tuple = ()
    units: str | None = None
    ordered: bool = False
    source: str | None = None
    applied: str | None = None
    scope: str | None = None

    @property
    def numeric(self) -> bool:
        """True if the factor's values are numbers (it has units)."""
        return self.units is not None

    def as_dict(self) -> dict[str, Any]:
        """The factor as campaign.yaml writes it (``from`` for :attr:`source`)."""
        out = {"name": self.name, "levels": list(self.levels), "units": self.units,
               "ordered": self.ordered, "from": self.source, "applied": self.applied}
        if self.scope is not None:
            out["scope"] = self.scope
        return out


@dataclass(frozen=True)
class Design:
    """The design of a campaign: factors, whether its runs form series over time, and
    the name of its replicate index (``repeat``; None if runs have none)."""

    factors: tuple[Factor, ...]
    time: bool = False
    replicate: str | None = "repeat"
    kind: str = "design"
    notes: dict = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        """The factor names, in declared order."""
        return tuple(f.name for f in self.factors)

    def factor(self, name: str) -> Factor:
        """The factor called ``name`` (KeyError naming the known ones if none)."""
        for f in self.factors:
            if f.name == name:
                return f
        raise KeyError(f"no factor {name!r}; the design has {', '.join(self.names) or 'none'}")

    def to_json(self) -> str:
        """The factors as JSON (a list of :meth:`Factor.as_dict`), as the Dataset keeps them
        in ``attrs["factors"]``."""
        return json.dumps([f.as_dict() for f in self.factors], sort_keys=True)


def _numbers(values):
    return sorted({v for v in values if v is not None})


def design_of(metadata: Mapping[str, Any]) -> Design:
    """The design of a campaign, from its ``campaign.yaml`` (a dict, schema-checked).

    ``tcp_sweep``: window (byte, ordered) x streams (count, ordered), replicate
    ``repeat``, and ``phase`` (loaded, unloaded) for its pings; ``udp_sweep``: spacing (us,
    ordered) x packet_size (byte, ordered); ``monitor``: path x direction x test x
    socket_buffer (byte, ordered) x size (byte, ordered) x rate (bit/s, ordered, where a
    test sets one), over time; ``design``: the declared ``factors`` and ``time``.
    Levels not declared are empty (:func:`with_levels` fills them from the runs).
    """
    kind = metadata.get("kind")
    if kind == "tcp_sweep":
        plan = metadata.get("plan") or {}
        factors = [Factor("window", tuple(sorted(plan.get("windows") or ())), "byte", True,
                          "log", "socket buffer (iperf -w)"),
                   Factor("streams", tuple(sorted(plan.get("streams") or ())), "count", True,
                          "log", "parallel streams (iperf -P)")]
        if plan.get("ping") is not None:
            factors.append(Factor("phase", ("loaded", "unloaded"), None, False, "pattern",
                                  "ping during the run (loaded) or after it (unloaded)", "ping"))
        return Design(tuple(factors), False, "repeat", kind)
    if kind == "udp_sweep":
        plan = metadata.get("plan") or {}
        return Design((Factor("spacing", tuple(sorted(plan.get("spacings_us") or ())), "us", True,
                              "log", "UDPmon inter-packet spacing"),
                       Factor("packet_size", tuple(sorted(plan.get("packet_sizes") or ())), "byte",
                              True, "log", "UDPmon packet size")), False, None, kind)
    if kind == "monitor":
        return _monitor_design(metadata)
    if kind == "design":
        return Design(tuple(_declared(f) for f in metadata.get("factors") or ()),
                      bool(metadata.get("time", False)), "repeat", kind)
    raise ValueError(f"campaign kind {kind!r} has no design")


def design_of_dataset(ds) -> Design:
    """The design of an opened campaign Dataset: from its ``factors`` and ``design_time``
    attrs (a design, levels as found), else :func:`design_of` its ``metadata`` attr (a
    sweep or a monitor, levels as its campaign.yaml declares them)."""
    attrs = ds.attrs
    if "factors" in attrs:
        factors = tuple(Factor(f["name"], tuple(f.get("levels") or ()), f.get("units"),
                               bool(f.get("ordered")), f.get("from"), f.get("applied"), f.get("scope"))
                        for f in json.loads(attrs["factors"]))
        return Design(factors, bool(int(attrs.get("design_time", 0))), "repeat", "design")
    return design_of(json.loads(attrs["metadata"]))


def _monitor_design(metadata):
    schedule = metadata.get("schedule") or {}
    tests = schedule.get("tests") or []
    paths = tuple(p["name"] for p in metadata.get("paths") or ())
    directions = sorted({d for p in metadata.get("paths") or () for d in p.get("directions") or ["forward"]},
                        key=("forward", "reverse").index)
    buffers = set()
    for t in tests:
        buffers.update(t.get("socket_buffers") or ())
        for step in t.get("socket_buffer_plan") or ():
            buffers.update(step["socket_buffers"])
    sizes = _numbers(s for t in tests for s in t.get("sizes") or ())
    rates = _numbers(t.get("rate_bps") for t in tests)
    factors = [Factor("path", paths, None, False, "log", "the path watched"),
               Factor("direction", tuple(directions), None, False, "log", "iperf3 -R / iperf -r"),
               Factor("test", tuple(dict.fromkeys(t["test"] for t in tests)), None, False, "log"),
               Factor("socket_buffer", tuple(sorted(buffers)), "byte", True, "log", "iperf -w"),
               Factor("size", tuple(sizes), "byte", True, "log", "ping -s")]
    if rates:
        factors.append(Factor("rate", tuple(rates), "bit/s", True, "log", "iperf3 -u -b"))
    return Design(tuple(factors), True, None, "monitor")


def _declared(spec):
    levels = tuple(spec.get("levels") or ())
    units = spec.get("units")
    if units is None and levels and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                        for v in levels):
        units = "1"
    ordered = spec.get("ordered")
    if ordered is None:
        ordered = units is not None
    return Factor(spec["name"], levels, units, bool(ordered), spec.get("from"), spec.get("applied"))


def with_levels(design: Design, observed: Mapping[str, Iterable]) -> Design:
    """``design`` with each factor that declares no levels given those ``observed``
    (``{name: values}``; empty and NaN values left out): numbers sorted, strings sorted
    unless declared. Declared levels stay as declared, observed ones not among them
    appended after them (sorted)."""
    factors = []
    for f in design.factors:
        seen = [v for v in observed.get(f.name, ()) if v not in ("", None)
                and not (isinstance(v, float) and math.isnan(v))]
        if f.numeric:
            seen = [float(v) for v in seen]
            seen = [int(v) if v == int(v) else v for v in seen]
        extra = sorted(set(seen) - set(f.levels), key=lambda v: (isinstance(v, str), v))
        factors.append(replace(f, levels=tuple(f.levels) + tuple(extra)))
    return replace(design, factors=tuple(factors))


def factor_name_problem(name: str) -> str | None:
    """What is wrong with ``name`` as a factor name (None if nothing)."""
    if not isinstance(name, str) or not FACTOR_NAME.match(name):
        return f"factor name {name!r} is not an identifier (letters, digits, _; not a digit first)"
    if name in RESERVED_NAMES:
        return f"factor name {name!r} is taken (a runs.csv column or a variable of the Dataset)"
    return None


def factor_problems(factors):
    """``(keys, message)`` of what the schema cannot say about a design's ``factors``: a
    name taken by a runs.csv column or a Dataset variable, a name given twice, a numeric
    factor (with ``units``) whose levels are not all numbers."""
    problems, seen = [], set()
    for i, spec in enumerate(factors):
        problem = factor_name_problem(spec["name"])
        if problem is not None:
            problems.append((["factors", i, "name"], f"factors/{i}/name: {problem}"))
        elif spec["name"] in seen:
            problems.append((["factors", i, "name"], f"factors/{i}/name: {spec['name']!r} is declared twice"))
        seen.add(spec["name"])
        levels = spec.get("levels") or []
        if spec.get("units") is not None and not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in levels):
            problems.append((["factors", i, "levels"], f"factors/{i}/levels: a factor with units "
                             f"{spec['units']!r} has numbers for levels, not {levels}"))
    return problems


def design_columns(design: Design) -> tuple[str, ...]:
    """The columns of the design's runs.csv: :data:`DESIGN_COLUMNS` then the factors."""
    return DESIGN_COLUMNS + design.names


def safe_level(value: Any) -> str:
    """A level as it stands in a run id: integral numbers without ``.0``, every character
    outside ``A-Za-z0-9.+_`` as ``_``."""
    if isinstance(value, float) and value == int(value):
        value = int(value)
    return UNSAFE.sub("_", str(value)) or "_"


def design_run_id(values: Sequence[Any], repeat: int) -> str:
    """``design_run_id(["bbr", 65536], 0) == "bbr-65536-r0"``: the factor values (in
    declared order, :func:`safe_level`) joined by ``-``, then ``-r<repeat>``."""
    return "-".join([safe_level(v) for v in values] + [f"r{int(repeat)}"])


def numeric_cell(text: str) -> float | None:
    """A numeric factor's cell as a float (None for an empty one); ValueError if not a number."""
    if text == "":
        return None
    if not NUMBER.match(text):
        raise ValueError(text)
    return float(text)


@dataclass(frozen=True)
class DesignRow:
    """One row of a design's runs.csv; ``values`` the factor cells as read (numbers
    float, others str, None where empty), in declared order; ``line`` 1-based."""

    run: str
    role: str
    path: str
    sha256: str
    started: str
    repeat: int
    outcome: str
    reason: str
    values: tuple
    line: int


def parse_design_manifest(directory, design: Design):
    """A design's ``runs.csv`` read as far as it goes, every problem listed.

    Returns
    -------
    rows : list of DesignRow
        The well-formed rows.
    errors : list of (int, str)
        ``(line, message)`` of every malformed row: wrong number of cells, unknown role or
        outcome, a path leaving the campaign, a bad sha256, repeat or start, a factor cell
        outside the declared levels or not a number, a run id listed twice.
    paths : set of str
        The ``path`` cell of every row (malformed ones included).

    Raises
    ------
    ParseError
        If runs.csv is missing, or its header is not :func:`design_columns` (no row can
        then be read).
    """
    from .outcome import OUTCOMES
    from ..quantities import ISO_TIME_TEXT, iso_ns
    path = Path(directory) / MANIFEST_FILE
    if not path.is_file():
        raise ParseError("missing", path=str(path))
    text = path.read_text(encoding="utf-8")
    expected = design_columns(design)
    columns, end = runs.split_header(text)
    if columns != expected:
        raise ParseError(f"header must be {','.join(expected)}, not {None if columns is None else list(columns)}",
                         line=1, path=str(path))
    declared = {f.name: set(f.levels) for f in design.factors if f.levels}
    rows, errors, paths, seen = [], [], set(), {}
    for line, cells in runs.records(text[end:], columns):
        if not cells or all(not c for c in cells):
            continue
        if len(cells) > 2:
            paths.add(cells[2])
        if len(cells) != len(columns):
            errors.append((line, f"expected {len(columns)} cells, found {len(cells)}"))
            continue
        row = dict(zip(columns, cells))
        problems = []
        if row["role"] not in DESIGN_ROLES:
            problems.append(f"role {row['role']!r} is not one of {', '.join(DESIGN_ROLES)}")
        if row["outcome"] not in OUTCOMES:
            problems.append(f"outcome {row['outcome']!r} is not one of {', '.join(OUTCOMES)}")
        if not row["run"]:
            problems.append("empty run id")
        if not row["path"] and row["outcome"] == "ok":
            problems.append("an ok run needs its file (empty path)")
        elif (problem := path_problem(row["path"])) is not None:
            problems.append(problem)
        if row["sha256"] and not re.fullmatch(r"[0-9a-f]{64}", row["sha256"]):
            problems.append(f"sha256 {row['sha256']!r} is not 64 hexadecimal digits")
        if not row["repeat"].isdigit():
            problems.append(f"repeat {row['repeat']!r} is not a non-negative integer")
        if row["started"]:
            try:
                iso_ns(row["started"])
            except ValueError:
                problems.append(f"started {row['started']!r} is not {ISO_TIME_TEXT}")
        elif design.time:
            problems.append("a design over time needs every run's start (started is empty)")
        values = []
        for f in design.factors:
            cell = row[f.name]
            value = cell or None
            if f.numeric:
                try:
                    value = numeric_cell(cell)
                except ValueError:
                    problems.append(f"{f.name} {cell!r} is not a number ({f.units})")
                    value = None
            if value is not None and f.name in declared and value not in declared[f.name]:
                problems.append(f"{f.name} {cell!r} is not one of its levels "
                                f"{', '.join(map(safe_level, f.levels))}")
            values.append(value)
        if row["run"] in seen and not problems:
            problems.append(f"run {row['run']} already listed on line {seen[row['run']]}")
        errors.extend((line, p) for p in problems)
        if not problems:
            seen[row["run"]] = line
            rows.append(DesignRow(row["run"], row["role"], row["path"], row["sha256"], row["started"],
                                  int(row["repeat"]), row["outcome"], row["reason"], tuple(values), line))
    return rows, errors, paths


def read_design_manifest(directory, design: Design) -> list[DesignRow]:
    """:func:`parse_design_manifest`'s rows; ParseError listing every malformed row."""
    rows, errors, _ = parse_design_manifest(directory, design)
    if errors:
        raise ParseError(errors[0][1], line=errors[0][0], path=str(Path(directory) / MANIFEST_FILE),
                         errors=errors)
    return rows
