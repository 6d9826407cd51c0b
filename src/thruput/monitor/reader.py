"""Monitor campaigns: the same tests on the same paths again and again, as one Dataset.

A monitor campaign directory (``kind: monitor``, docs/design.md "Monitor campaigns")
holds ``campaign.yaml``, ``runs.csv`` with one row per test started
(:data:`MONITOR_MANIFEST_COLUMNS`, failed tests included) and the raw logs under
``runs/<YYYY-MM-DD>/``. :func:`open_monitor` turns it into one Dataset with a ``run``
dimension in time order:

- TCP and UDP runs keep the tool's whole-run numbers (``throughput``, ``retransmits``...);
- a ping run is summarised from its probes (``ping_transmitted`` ... ``rtt_mdev``) and
  keeps every probe on ``(run, probe)`` (``rtt``, ``rtt_status``, ``probe_time``);
- a test that failed keeps its ``outcome`` and ``reason`` and NaN numbers (a ping that
  timed out keeps the probes it printed).

The runs are read in batches of :data:`BATCH_ROWS` manifest rows, each batch into one
Dataset fragment (:func:`read_batch`), and the fragments are joined by :func:`combine`.
The batches are the same whether they run one after the other here or on the workers of
a ``dask.distributed`` cluster (:mod:`thruput.parallel`), so both give the same Dataset,
bit for bit. :func:`thruput.monitor.normalize.normalize_monitor` writes them to a Zarr
store, and appends new batches to one. runs.csv is read by pandas (pyarrow's CSV reader)
column by column, or row by row where a row has something to say by its line.
"""

from __future__ import annotations

import json
import os
from itertools import repeat
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from ..contract import failed_checks_per_run
from ..errors import ContractError, ParseError, ThruputError
from ..hashing import sha256_bytes, sha256_file, sha256_hasher
# the columns and outcomes are the recorder's (thruput monitor writes them): one definition
from .manifest import MONITOR_MANIFEST_COLUMNS, OUTCOMES
from ..campaign.outcome import CUT_KEPT
from ..formats.ping import paused_gc
from ..reader import LEDGER_TOTALS, read
from ..quantities import ISO_TIME_TEXT, iso_ns as _timestamp, iso_ns_many
from ..campaign.layout import LedgerTotals as _LedgerTotals
# ``rtt_status`` is kept as int8 codes into STATUS_CODES from the batch to the store;
# :func:`finish` gives the strings to an in-memory Dataset
from ..campaign.store import NO_STATUS, STATUS_CODES, status_flags  # noqa: F401
from ..campaign.runs import OTHER_BREAKS, bulk_table, read_text, records as manifest_records, split_header
from ..campaign.layout import ROLE_KINDS, escapes, path_problem

__all__ = ["MONITOR_MANIFEST_COLUMNS", "OUTCOMES", "MonitorRow", "read_monitor_manifest",
           "open_monitor", "read_batch", "combine", "finish", "validate_monitor",
           "MONITOR_COORDS", "MONITOR_VARIABLES", "BATCH_ROWS", "manifest_digest"]

DIRECTIONS = ("forward", "reverse")
#: test -> (role, tools whose logs it may hold: nuttcp's in an imported archive).
TESTS = {"tcp": ("iperf", ("iperf3", "iperf2", "nuttcp", "ndt7", "pscheduler")),
         "udp": ("iperf", ("iperf3", "iperf2", "nuttcp", "pscheduler")), "ping": ("ping", ("ping", "pscheduler"))}
#: Tools whose logs have one reader whatever the variant: no sniffing per file (the
#: reader still refuses a log that is not its format). iperf logs are sniffed (-J or text).
TOOL_FORMATS = {"ping": "ping"}
#: Manifest rows per batch: the unit of work mapped over workers. Fixed (not a function
#: of the number of workers) so that every way of running gives the same fragments. Each
#: batch has fixed costs (its task on the cluster, its Arrow passes, its Dataset): 2048
#: rows read a 10^4-run archive a third faster than 512 did, on 2 workers.
BATCH_ROWS = 2048
#: Probe statuses that are a probe sent (all but repeated replies to one).
SENT_STATUSES = ("reply", "lost", "unreachable", "error")

#: Coordinates on ``run``: name -> (units, long_name); "" = datetime64 (no units attr).
MONITOR_COORDS = {
    "run": ("1", "test id (runs.csv run)"),
    "time": ("", "test start, UTC"),
    "slot": ("1", "schedule slot (-1 where unknown)"),
    "path": ("1", "network path watched (campaign.yaml paths[].name)"),
    "direction": ("1", "forward (source -> destination) or reverse"),
    "test": ("1", "tcp, udp or ping"),
    "tool": ("1", "tool that ran the test"),
    "socket_buffer": ("byte", "socket buffer requested (TCP; NaN where n/a)"),
    "size": ("byte", "ping ICMP payload requested (NaN where n/a)"),
    "rate": ("bit/s", "UDP rate requested (NaN where n/a)"),
    "probe": ("1", "ping probe index within the run"),
}
#: Variables: name -> (dims, units, long_name); "" units = datetime64.
MONITOR_VARIABLES = {
    "outcome": (("run",), "1", "ok, or how the test failed: " + ", ".join(OUTCOMES[1:])),
    "reason": (("run",), "1", "the tool's own message where the test failed"),
    "throughput": (("run",), "bit/s", "whole-run throughput (receiver side where known)"),
    "throughput_sender": (("run",), "bit/s", "whole-run throughput, sender side"),
    "retransmits": (("run",), "count", "TCP retransmissions (NaN if not reported)"),
    "window_actual": (("run",), "byte", "socket buffer the OS granted"),
    "loss_fraction": (("run",), "1", "UDP datagrams lost, fraction"),
    "jitter": (("run",), "ms", "UDP jitter reported by the receiver"),
    "duration": (("run",), "s", "run duration as the tool reported it"),
    "ping_transmitted": (("run",), "count", "ping probes sent (the tool's count where printed)"),
    "ping_received": (("run",), "count", "ping probes answered (first replies)"),
    "ping_loss": (("run",), "1", "1 - received / transmitted"),
    "rtt_min": (("run",), "ms", "smallest RTT of the replies"),
    "rtt_p10": (("run",), "ms", "10th percentile of the replies' RTT (linear interpolation)"),
    "rtt_median": (("run",), "ms", "median RTT of the replies"),
    "rtt_p90": (("run",), "ms", "90th percentile of the replies' RTT (linear interpolation)"),
    "rtt_max": (("run",), "ms", "largest RTT of the replies"),
    "rtt_mean": (("run",), "ms", "mean RTT of the replies"),
    "rtt_mdev": (("run",), "ms", "population standard deviation of the replies' RTT (ping's mdev)"),
    "rtt": (("run", "probe"), "ms", "ping round-trip time (NaN = lost or padding)"),
    "rtt_status": (("run", "probe"), "1", "ping probe outcome (\"\" = padding)"),
    "probe_time": (("run", "probe"), "", "time of the reply as printed (ping -D), UTC; NaT if not"),
    "tool_checks_failed": (("run",), "count", "checks of the tool's own totals against its data "
                           "that failed (docs/consistency.md); NaN: no log read"),
    "source": (("run",), "1", "raw file, relative to the campaign directory (\"\" = none)"),
    "source_sha256": (("run",), "1", "sha256 of the raw file"),
}
#: Per-run numbers taken from a throughput Dataset's run 0.
THROUGHPUT_FIELDS = ("throughput", "throughput_sender", "retransmits", "window_actual",
                     "loss_fraction", "jitter", "duration")
RTT_FIELDS = ("ping_transmitted", "ping_received", "ping_loss", "rtt_min", "rtt_p10",
              "rtt_median", "rtt_p90", "rtt_max", "rtt_mean", "rtt_mdev")
#: Version of the monitor Dataset and of how its runs are read and stored, in its attrs
#: (``monitor_version``): raised whenever a variable is added, a stored value would change
#: or the store's layout does, so that ``normalize`` rebuilds a store written before
#: instead of appending to it (or leaving it as it was). 2: ``tool_checks_failed``. 3: in
#: a pile of iperf3 logs, the ``--get-server-output`` check is counted there and an ok
#: test's cut-off log is refused, as when each log is read alone. 4: per-run variables
#: chunked a wave at a time (``store.MAX_RUN_CHUNK``). 5: readers' values changed (a UDP
#: run whose receiver got nothing: throughput 0 and loss 1, not the sender's rate; a cut
#: nuttcp run: its intervals' throughput; iperf3 received below sent no longer a failed
#: check; a ping result with counts but no probes, ``ping -q`` or a perfSONAR latency
#: histogram, has the tool's ``ping_received``).
MONITOR_VERSION = 5
#: The per-run numbers a batch fills in (NaN where a run has none).
RUN_NUMBERS = THROUGHPUT_FIELDS + RTT_FIELDS + ("tool_checks_failed",)
STRING_NAMES = ("run", "path", "direction", "test", "tool", "outcome", "reason", "source",
                "source_sha256")
NAT = np.datetime64("NaT", "ns")
#: The line accounting attrs that add up over files.
LEDGER_KEYS = LEDGER_TOTALS
#: Padding of the (run, probe) variables past a run's last probe: (value, dtype).
PROBE_PADDING = {"rtt": (np.nan, float), "rtt_status": (0, np.int8), "probe_time": (NAT, "datetime64[ns]")}


class MonitorError(ThruputError):
    """A monitor campaign is not usable as it stands (the message names file and line)."""


class MonitorRow(NamedTuple):
    """One row of a monitor campaign's ``runs.csv``, typed; ``line`` is 1-based.

    A named tuple: a normalize makes one per row (hundreds of thousands) and sends them
    to the workers by the thousand, which a tuple makes cheapest.
    """

    run: str
    role: str
    path: str
    sha256: str
    slot: int
    started: str
    path_name: str
    direction: str
    test: str
    tool: str
    socket_buffer: float
    size: float
    rate: float
    outcome: str
    reason: str
    line: int


def manifest_digest(text, rows):
    """sha256 of the header and the first ``rows`` data lines of a runs.csv ``text``.

    What a store records of the manifest rows it holds, so that an append can tell the
    rows it has seen were not changed since.
    """
    return ManifestDigest(text).upto(rows)


class ManifestDigest:
    """:func:`manifest_digest` of one runs.csv ``text`` for growing row counts: ``upto``
    for ``rows`` that never decrease hashes only the lines since the last call."""

    def __init__(self, text):
        self._text, self._sha, self._lines, self._pos, self._bytes = text, sha256_hasher(), 0, 0, 0
        self._ends = None

    def upto(self, rows):
        """sha256 of the header and the first ``rows`` data lines (as ``str.splitlines``
        cuts them)."""
        if rows + 1 < self._lines:
            raise ValueError("ManifestDigest.upto: rows must not decrease")
        if self._ends is None:
            self._ends = np.cumsum([len(line) for line in self._text.splitlines(keepends=True)])
        want = min(rows + 1, len(self._ends))
        pos = int(self._ends[want - 1]) if want else 0
        chunk = self._text[self._pos:pos].encode("utf-8")
        self._sha.update(chunk)
        self._pos, self._lines, self._bytes = pos, want, self._bytes + len(chunk)
        return self._sha.hexdigest()

    def attrs(self, rows):
        """What a store records of the header and first ``rows`` data rows of runs.csv:
        ``manifest_rows``, ``manifest_sha256`` (:meth:`upto`) and ``manifest_bytes``."""
        sha = self.upto(rows)
        return {"manifest_rows": int(rows), "manifest_sha256": sha, "manifest_bytes": self._bytes}


def read_manifest_text(directory):
    """The text of a monitor campaign's ``runs.csv`` (MonitorError if there is none)."""
    path = Path(directory) / "runs.csv"
    if not path.is_file():
        raise MonitorError(f"{path}: missing")
    return read_text(directory)


def read_monitor_manifest(directory, start=0, text=None, *, times=False):
    """The rows of a monitor campaign's ``runs.csv`` from data row ``start`` on.

    Parameters
    ----------
    directory : path-like
        The campaign directory.
    start : int, default 0
        Number of data rows to pass over (those a store already holds; they are not
        checked here, the store's ``manifest_sha256`` holds them).
    text : str, optional
        runs.csv's text, if the caller has read it already (read here otherwise).
    times : bool, default False
        Also return the rows' start times (:func:`start_times`; parsed once, for
        :func:`in_time_order`).

    Returns
    -------
    rows : list of MonitorRow
    text : str
        The whole of runs.csv (for :func:`manifest_digest`).
    started : numpy.ndarray of datetime64[ns]
        Only with ``times``.

    Raises
    ------
    ParseError
        Listing every malformed row with its line: wrong header or number of cells, an
        unknown role, test, tool, direction or outcome, a role that does not go with the
        test, a number that is not one, a start that is not ISO 8601, a duplicate run id,
        a path outside the campaign folder.
    """
    path = Path(directory) / "runs.csv"
    if text is None:
        text = read_manifest_text(directory)
    header, header_end = split_header(text)
    if header != MONITOR_MANIFEST_COLUMNS:
        raise ParseError(f"header must be {','.join(MONITOR_MANIFEST_COLUMNS)}, not "
                         f"{None if header is None else list(header)}", line=1, path=str(path))
    body = text[header_end:]
    rest = _after_rows(body, start)
    if rest is not None:        # (only the rows from ``start`` on are read)
        found = _split_rows(rest, start + 2) if rest else ([], start_times([]))
    else:
        found = _split_rows(body, 2)
        found = found if found is None else (found[0][start:], found[1][start:])
    if found is None:       # (something to say by its line: read row by row)
        rows = rows_one_by_one(body, 0, start, path)
        found = rows, start_times(r.started for r in rows) if times else None
    return (found[0], text, found[1]) if times else (found[0], text)


def _after_rows(body, start):
    """The text of ``body`` (data lines of runs.csv) after its first ``start`` rows, where its
    lines are its rows up to there (no quote that could hold a line break, no line break but
    "\n"); None otherwise, or for ``start`` 0."""
    if not start or any(c in body for c in OTHER_BREAKS):
        return None
    passed = body.split("\n", start)
    if len(passed) <= start:
        return ""
    cut = len(body) - len(passed[-1])
    return passed[-1] if body.find('"', 0, cut) < 0 else None


def rows_one_by_one(records, first, start=None, path=None):
    """The rows of csv ``records`` (lists of cells, or a text of lines), the first
    being data row ``first`` (line ``first + 2``), those before data row ``start``
    passed over: :func:`read_monitor_manifest`'s reading row by row, which names every
    problem's line (``path``: runs.csv, for those).

    Raises
    ------
    ParseError
        As :func:`read_monitor_manifest`.
    """
    if isinstance(records, str):
        records = [cells for _line, cells in manifest_records(records, MONITOR_MANIFEST_COLUMNS)]
    start = first if start is None else start
    rows, errors, seen = [], [], {}
    with paused_gc():      # (the rows are tuples of strings and numbers: no cycles)
        for index, cells in enumerate(records, first):
            line = index + 2
            if index < start:
                continue
            cells = list(map(str.strip, cells))
            if not any(cells):
                errors.append((line, "empty row (a monitor manifest has none: rows are counted)"))
                continue
            if len(cells) != len(MONITOR_MANIFEST_COLUMNS):
                errors.append((line, f"expected {len(MONITOR_MANIFEST_COLUMNS)} cells, found {len(cells)}"))
                continue
            row, problems = _row(cells, line)
            if row is not None and row.run in seen:
                problems.append(f"run {row.run} already listed on line {seen[row.run]}")
            if problems:
                errors.extend((line, p) for p in problems)
            else:
                seen[row.run] = line
                rows.append(row)
    if errors:
        raise ParseError(errors[0][1], line=errors[0][0], path=None if path is None else str(path),
                         errors=errors)
    return rows


def in_time_order(rows, times=None):
    """``rows`` sorted by start time, ties (and rows without one, last) in manifest order,
    and their start times (datetime64[ns]) in that order (``times``: those of ``rows``, if
    the caller has them: :func:`read_monitor_manifest`).

    The order :func:`combine` gives the runs (a store's order), so that batches
    read in this order are appended one after the other: a runs.csv whose rows are not in
    time order (tests of several paths started at once, an imported archive) would
    otherwise have a later batch start before the end of the store and make it be
    rewritten whole, again and again.
    """
    times = start_times(r.started for r in rows) if times is None else times
    order = np.argsort(times, kind="stable")
    if np.array_equal(order, np.arange(len(rows))):
        return rows, times
    return [rows[i] for i in order], times[order]


#: (test, role, tool) of a valid row, from :data:`TESTS`.
_TEST_ROLE_TOOL = {(test, role, tool) for test, (role, tools) in TESTS.items() for tool in tools}

def start_times(started):
    """The start times ``started`` (ISO 8601 texts, as in runs.csv) as a datetime64[ns]
    array, naive UTC: :func:`~thruput.campaign.dataset._timestamp` of each, the usual
    ``...Z`` ones parsed by NumPy at once (a tenth of a second per 10^5 rows less).

    Raises
    ------
    ValueError
        For a text that is not a time.
    """
    return iso_ns_many(started)


def _split_rows(body, first_line=2):
    """The rows of ``body`` (data lines of runs.csv, the first on line ``first_line``) read by
    :func:`thruput.campaign.runs.bulk_table` and checked column by column (Arrow's kernels),
    when every line is one valid row, with their start times (:func:`start_times`); None for
    anything else: then :func:`rows_one_by_one` reads the rows, and names the line of each
    problem."""
    table = bulk_table(body, MONITOR_MANIFEST_COLUMNS)
    if table is None:
        return None
    lines = table.num_rows
    if not lines:
        return [], start_times([])
    column = dict(zip(MONITOR_MANIFEST_COLUMNS, table.columns))
    columns = [column[name].to_pylist() for name in MONITOR_MANIFEST_COLUMNS]
    times = _valid_columns(column, lines, columns[5])
    if times is None:
        return None
    slots = _slots(column["slot"], columns[4])
    if slots is None:
        return None
    columns[4] = slots
    for k, name in ((10, "socket_buffer"), (11, "size"), (12, "rate")):
        values = _numbers(column[name])
        if values is None:
            return None
        columns[k] = values
    # (tuple.__new__ at C speed: MonitorRow(...) runs its Python __new__ per row; no
    # collection of cycles among rows that cannot form any: it took a third of the time)
    with paused_gc():
        rows = list(map(tuple.__new__, repeat(MonitorRow), zip(*columns, range(first_line, first_line + lines))))
    return rows, times


def _slots(cells, texts):
    """A runs.csv slot column (Arrow strings ``cells``, ``texts`` the same as str) as ints
    (-1 for an empty cell), or None if a cell is not a whole number of at most 18 ASCII
    digits (``²`` and Arabic-Indic digits are no slot): then the rows are read one by one,
    each naming its problem."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pc.all(pc.match_substring_regex(cells, r"^[0-9]{0,18}$")).as_py():
        present = pc.if_else(pc.equal(cells, ""), pa.scalar(None, pa.string()), cells)
        return [-1 if v is None else v for v in pc.cast(present, pa.int64()).to_pylist()]
    return None


#: A number cell Arrow's cast reads as Python's ``float`` does (both correctly rounded),
#: or an empty one; any other (``inf``, ``1_000``, ...) is read by ``float`` itself.
_PLAIN_NUMBER = r"^([+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)?$"


def _numbers(cells):
    """A runs.csv number column (Arrow strings) as a list of floats (NaN for an empty
    cell), or None if a cell is not a number."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pc.all(pc.match_substring_regex(cells, _PLAIN_NUMBER)).as_py():
        present = pc.if_else(pc.equal(cells, ""), pa.scalar(None, pa.string()), cells)
        try:
            values = pc.cast(present, pa.float64()).to_pylist()
        except pa.ArrowInvalid:         # (beyond float64, say: float says inf)
            pass
        else:   # (np.nan itself for an empty cell, as float's path gives it)
            return [np.nan if v is None else v for v in values]
    try:
        return [float(v) if v else np.nan for v in cells.to_pylist()]
    except ValueError:
        return None


def _valid_columns(column, n, started):
    """The start times (:func:`start_times`) of ``started`` (str) if the columns (Arrow
    strings, stripped) of ``n`` rows hold only what :func:`_row` takes, and no run id twice
    (slot and numbers aside); else None."""
    import pyarrow.compute as pc

    def values(name):
        return set(pc.unique(column[name]).to_pylist())

    def any_(mask):
        return bool(pc.any(mask).as_py())

    # (runs.csv holds no NUL, bulk_table refuses it: the joined cells are unambiguous)
    combos = pc.unique(pc.binary_join_element_wise(column["test"], column["role"], column["tool"], "\0"))
    if (not {tuple(c.split("\0")) for c in combos.to_pylist()} <= _TEST_ROLE_TOOL
            or not values("direction") <= set(DIRECTIONS) or not values("outcome") <= set(OUTCOMES)
            or any_(pc.equal(column["run"], "")) or any_(pc.equal(column["path_name"], ""))
            or pc.count_distinct(column["run"]).as_py() != n
            or any_(pc.and_(pc.equal(column["outcome"], "ok"), pc.equal(column["path"], "")))):
        return None
    # a path that may name a file outside the folder (absolute, a drive, ".."): each one asked
    doubtful = column["path"].filter(pc.match_substring_regex(column["path"], r"^[/\\]|^.:|\.\."))
    if any(map(path_problem, set(doubtful.to_pylist()))):
        return None
    try:
        times = start_times(started)
    except ValueError:
        return None
    return None if np.isnat(times).any() else times


def _number(value, key, problems):
    if value == "":
        return np.nan
    try:
        return float(value)
    except ValueError:
        problems.append(f"{key} {value!r} is not a number")
        return np.nan


def _row(cells, line):
    """The :class:`MonitorRow` of one row's stripped ``cells`` (in
    :data:`MONITOR_MANIFEST_COLUMNS` order), or None and what is wrong with it."""
    (run, role, path, sha256, slot, started, path_name, direction, test, tool,
     socket_buffer, size, rate, outcome, reason) = cells
    problems = []
    if test not in TESTS:
        problems.append(f"test {test!r} is not one of {', '.join(TESTS)}")
    else:
        want, tools = TESTS[test]
        if role != want:
            problems.append(f"role {role!r} does not go with test {test} ({want} expected)")
        if tool not in tools:
            problems.append(f"tool {tool!r} does not run test {test} ({', '.join(tools)})")
    if direction not in DIRECTIONS:
        problems.append(f"direction {direction!r} is not forward or reverse")
    if outcome not in OUTCOMES:
        problems.append(f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
    elif outcome == "ok" and not path:
        problems.append("an ok test needs its raw file (path is empty)")
    if (problem := path_problem(path)) is not None:
        problems.append(problem)
    if not run or not path_name:
        problems.append("empty run or path_name")
    if slot and not (slot.isascii() and slot.isdecimal() and len(slot) <= 18):   # (not "²", "١٢")
        problems.append(f"slot {slot!r} is not a non-negative integer")
    try:
        if np.isnat(_timestamp(started)):
            problems.append("started is empty (every test has a start time)")
    except ValueError:
        problems.append(f"started {started!r} is not {ISO_TIME_TEXT}")
    numbers = [_number(v, k, problems) for v, k in ((socket_buffer, "socket_buffer"),
                                                    (size, "size"), (rate, "rate"))]
    if problems:
        return None, problems
    return MonitorRow(run, role, path, sha256, int(slot) if slot else -1, started, path_name,
                      direction, test, tool, *numbers, outcome, reason, line), problems


# -- one batch of rows -> one Dataset fragment ------------------------------------------

def read_batch(directory, rows):
    """Read the raw files of ``rows`` into one fragment of the monitor Dataset.

    A pure function of the files (no clock, no randomness), so that it gives the same
    fragment in this process or on a worker. The fragment is in manifest order, its
    ``probe`` dimension as long as its longest ping run.

    Raises
    ------
    ThruputError
        For an ``ok`` test whose file is missing, unreadable, cut off, of the wrong kind,
        holds more than one run, whose sha256 is not the one runs.csv recorded, or that a
        symbolic link puts outside the campaign folder; each naming the file and the
        runs.csv line.
    """
    directory = Path(directory)
    folders = {}
    for row in rows:            # (absolute paths and ".." are refused as runs.csv is read)
        if row.path and (problem := escapes(directory, row.path, folders)) is not None:
            raise MonitorError(f"{directory / 'runs.csv'}:{row.line}: {problem}")
    n = len(rows)
    numbers = {name: np.full(n, np.nan) for name in RUN_NUMBERS}
    sources = np.array([r.path for r in rows], dtype=object)
    shas = np.array([r.sha256 for r in rows], dtype=object)
    probes = {}
    ledger = _LedgerTotals()
    iperf = [i for i, r in enumerate(rows) if r.role == "iperf" and r.path]
    for where, values, failed in _read_throughput(directory, rows, iperf, ledger):
        for name in THROUGHPUT_FIELDS:
            if name in values:
                numbers[name][where] = values[name]
        numbers["tool_checks_failed"][where] = failed
    pings = [i for i, r in enumerate(rows) if r.role == "ping" and r.path]
    plain, many, loaded = _read_plain_pings(directory, rows, pings)
    for i in pings:
        if i in plain:
            _check_sha(directory, rows[i], plain[i])
            continue
        found = _read_ping(directory, rows[i], ledger, loaded[i])
        if found is None:
            continue
        values, tool_summary, numbers["tool_checks_failed"][i] = found
        summary, probe = _ping_summary(values, tool_summary)
        for name, value in summary.items():
            numbers[name][i] = value
        probes[i] = probe
    at = np.fromiter(plain, dtype=np.int64, count=len(plain))
    if at.size:
        ledger.add(many.ledger, files=at.size)
        numbers["tool_checks_failed"][at] = 0.0        # (a plain log agrees: ping_many)
        for name, values in _ping_summaries(many).items():
            numbers[name][at] = values
    lengths = np.diff(many.offsets)
    n_probe = max([len(p[0]) for p in probes.values()] + [int(lengths.max(initial=0))])
    rtt = np.full((n, n_probe), np.nan)
    status = np.zeros((n, n_probe), dtype=np.int8)
    when = np.full((n, n_probe), NAT)
    for i, (values, states, times) in probes.items():
        rtt[i, : len(values)] = values
        status[i, : len(values)] = status_codes(states)
        when[i, : len(values)] = times
    if at.size:                         # the plain logs' probes, row by row, in one go
        row = np.repeat(at, lengths)
        column = np.arange(row.size) - np.repeat(many.offsets[:-1], lengths)
        rtt[row, column] = many.rtt
        status[row, column] = many.status + 1      # (ping.STATUS_NAMES[k] is code k + 1)
        when[row, column] = _probe_times(many.timestamp)
    coords = {
        "run": ("run", np.array([r.run for r in rows], dtype=object)),
        "time": ("run", start_times(r.started for r in rows)),
        "slot": ("run", np.array([r.slot for r in rows], dtype=np.int64)),
        "path": ("run", np.array([r.path_name for r in rows], dtype=object)),
        "direction": ("run", np.array([r.direction for r in rows], dtype=object)),
        "test": ("run", np.array([r.test for r in rows], dtype=object)),
        "tool": ("run", np.array([r.tool for r in rows], dtype=object)),
        "socket_buffer": ("run", np.array([r.socket_buffer for r in rows], dtype=float)),
        "size": ("run", np.array([r.size for r in rows], dtype=float)),
        "rate": ("run", np.array([r.rate for r in rows], dtype=float)),
    }
    data = {name: ("run", values) for name, values in numbers.items()}
    data.update({
        "outcome": ("run", np.array([r.outcome for r in rows], dtype=object)),
        "reason": ("run", np.array([r.reason for r in rows], dtype=object)),
        "rtt": (("run", "probe"), rtt),
        "rtt_status": (("run", "probe"), status),
        "probe_time": (("run", "probe"), when),
        "source": ("run", sources),
        "source_sha256": ("run", shas),
    })
    ds = xr.Dataset(data, coords=coords)
    ds.attrs.update(ledger.attrs())
    return ds


def _where(directory, row):
    return f"{Path(directory) / row.path} (runs.csv line {row.line})"


def _read_throughput(directory, rows, indices, ledger):
    """``(row indices, {variable: values}, failed checks of each)`` for the iperf rows
    with a file: the values of :data:`THROUGHPUT_FIELDS` the files have, and how many of
    each run's checks of its tool's own totals failed.

    A pile of iperf3 -J files is read at once (:func:`_iperf3_pile`: 80x faster than one
    by one); a pile holding a failed test's log (which the reader refuses) or a cut-off
    one (an error for a test whose outcome is ok) is read file by file, so that the error
    names the file as it does for a file read alone.
    """
    ok = [i for i in indices if rows[i].outcome == "ok"]
    tools = {rows[i].tool for i in ok}
    if len(ok) > 1 and tools == {"iperf3"}:
        try:
            totals, shas = _iperf3_pile(directory, rows, ok)
        except (ThruputError, OSError):
            totals = None               # read them one by one: the error names the file
        if totals is not None and len(totals.file) == len(ok) and not int(totals.ledger["truncated"]):
            for k, i in enumerate(ok):
                _check_sha(directory, rows[i], shas[k])
            ledger.add(totals.ledger, files=len(ok))
            yield np.asarray(ok), totals.variables, failed_checks_per_run(totals.checks, len(ok))
            taken = set(ok)
            indices = [i for i in indices if i not in taken]
    for i in indices:
        ds = _read_one(directory, rows[i], ledger)
        if ds is None:
            continue
        if ds.sizes.get("run", 0) != 1:
            if rows[i].outcome == "ok":
                raise MonitorError(f"{_where(directory, rows[i])}: holds {ds.sizes.get('run', 0)} "
                                   "runs; a monitor test is one")
            continue
        values = {name: ds.variables[name].values for name in THROUGHPUT_FIELDS if name in ds.variables}
        yield np.asarray([i]), values, _failed_checks(ds, 1)


def _iperf3_pile(directory, rows, ok):
    """``(iperf3_json.totals_many of the files of rows[ok], their sha256)``, the files read
    as :func:`thruput.read_many` reads a pile (gzip undone, the format sniffed from the
    first) but no Dataset made: only the runs' numbers are kept here (the Dataset was a
    third of a pile's parse), nor records of the checks that pass (only failures are
    counted). ``(None, None)`` if the first is not an iperf3 -J log."""
    from ..formats import iperf3_json
    from ..reader import decode, read_pile

    top = os.path.join(directory, "")           # (strings: a Path per file costs more)
    paths = [top + rows[i].path for i in ok]
    shas, datas, name = read_pile(paths)
    if name != iperf3_json.NAME:
        return None, None
    return iperf3_json.totals_many([decode(data) for data in datas], names=paths, failed_only=True), shas


def _read_one(directory, row, ledger):
    """The Dataset of ``row``'s file, or None for a failed test whose log does not read."""
    path = Path(directory) / row.path
    if not path.is_file():
        if row.outcome == "ok":
            raise MonitorError(f"{_where(directory, row)}: listed but missing")
        return None
    try:
        ds = read(path, format=TOOL_FORMATS.get(row.tool))
    except ThruputError as exc:
        if row.outcome == "ok":
            raise MonitorError(f"{_where(directory, row)}: {exc}") from None
        # a failed test: its log is kept as it was, its numbers are NaN
        _check_sha(directory, row, sha256_file(path))     # (in blocks: a refused log may be huge)
        return None
    _check_sha(directory, row, ds.attrs["source_sha256"])
    kind = ROLE_KINDS[row.role]
    if ds.attrs["kind"] != kind:
        raise MonitorError(f"{_where(directory, row)}: read as {ds.attrs['format']} "
                           f"({ds.attrs['kind']}), but its role {row.role} needs {kind}")
    if int(ds.attrs.get("truncated", 0)) and row.outcome == "ok" and not row.reason.startswith(CUT_KEPT):
        raise MonitorError(f"{_where(directory, row)}: cut off ({ds.attrs['truncation']}) "
                           "but its outcome is ok")
    ledger.add(ds)
    return ds


#: :func:`_read_ping`'s default: the log is read there.
_UNREAD = object()


def _read_ping(directory, row, ledger, plain=_UNREAD):
    """``(probe arrays, ping's own summary, failed consistency checks)`` of ``row``'s ping
    log, or None as :func:`_read_one`.

    A plain log (:func:`_plain_text`) is scanned without building a Dataset
    (:func:`thruput.formats.ping.scan`): in a monitor archive of thousands of small logs
    that Dataset costs three times the parse. Any other log, and every error, takes
    :func:`_read_one`'s way, so the numbers and messages are those of :func:`thruput.read`.
    ``plain``: what :func:`_plain_text` gave for this row, if the caller has it already.
    """
    from ..formats import ping

    if plain is _UNREAD:
        plain = _plain_text(directory, row)
    run = None
    if plain is not None:
        try:
            run = ping.scan(plain[1])
        except Exception:  # noqa: BLE001 - read again below, for thruput.read's error (a ReaderBug for a bug)
            pass
    if run is None:
        ds = _read_one(directory, row, ledger)
        if ds is None:
            return None
        return ({name: ds.variables[name].values for name in ("status", "rtt", "timestamp", "seq")},
                json.loads(ds.attrs["tool_summary"]), _failed_checks(ds, 1)[0])
    _check_sha(directory, row, sha256_bytes(plain[0]))
    if run.ledger["truncated"] and row.outcome == "ok" and not row.reason.startswith(CUT_KEPT):
        raise MonitorError(f"{_where(directory, row)}: cut off ({run.ledger['truncation']}) "
                           "but its outcome is ok")
    ledger.add(run.ledger)
    return ({name: values for name, (_, values) in run.probes.items()}, run.tool_summary,
            _count_failed(run.consistency))


def _plain_text(directory, row):
    """``(bytes, text)`` of ``row``'s ping log if it can be scanned as it is: neither gzip,
    nor wrapped in a timestamping prefix, nor large enough to be streamed; else None."""
    from ..formats import HEAD_BYTES, _prefix
    from ..reader import GZIP_MAGIC, STREAM_BYTES, decode, file_bytes

    try:
        raw = file_bytes(os.path.join(directory, row.path), STREAM_BYTES)
    except (OSError, ThruputError):     # (not a regular file: read() says why)
        return None
    if raw is None or raw[:2] == GZIP_MAGIC:
        return None
    text = decode(raw)
    return (raw, text) if _prefix.detect(text[:HEAD_BYTES]) is None else None


def disagreeing(ds):
    """How many runs of ``ds`` have a failed check of their tool's own totals against
    their data (``tool_checks_failed > 0``)."""
    return int((np.asarray(ds["tool_checks_failed"].values) > 0).sum())


def _count_failed(checks):
    """How many of the consistency records ``checks`` failed (a float: a monitor number)."""
    return float(sum(not c["ok"] for c in checks))


def _failed_checks(ds, n_runs):
    """Failed checks of the tool's own totals against the data (``attrs["consistency"]``)
    for each of the ``n_runs`` runs of ``ds``: all of them for a single run, by the run
    each names for an iperf3 pile (:func:`thruput.contract.failed_checks_per_run`)."""
    checks = json.loads(ds.attrs.get("consistency", "[]"))
    if n_runs == 1:
        return np.array([_count_failed(checks)])
    return failed_checks_per_run(checks, n_runs)


def _read_plain_pings(directory, rows, indices):
    """The plain ping logs of ``rows[indices]`` (:func:`_plain_text`) read at once
    (:func:`thruput.formats._ping_many.scan_many`): ``({row index: sha256 of its file},
    Many, {row index: what _plain_text gave})``, the first dict in the order of
    ``Many.taken``. The logs it did not take (gzip, timestamp-prefixed, large, damaged,
    ...) are left to :func:`_read_ping`, with the text already read."""
    from ..formats import _ping_many as ping_many

    loaded = {i: _plain_text(directory, rows[i]) for i in indices}
    where = [i for i in indices if loaded[i] is not None]
    many = ping_many.scan_many([loaded[i][1] for i in where])
    taken = {where[k]: sha256_bytes(loaded[where[k]][0]) for k in many.taken.tolist()}
    return taken, many, loaded


#: The RTT percentiles of a ping run (``rtt_p10``, ``rtt_median``, ``rtt_p90``): NumPy's
#: default method, linear interpolation.
PERCENTILES = (10, 50, 90)


def _ping_summaries(many):
    """:func:`_ping_summary` of every log of ``many``
    (:class:`thruput.formats._ping_many.Many`), as arrays, bit for bit: logs of equal reply
    count are summarised together, row by row (NumPy reduces and interpolates each row of
    a C-ordered matrix as it does a 1-D array)."""
    sent = np.array([s["transmitted"] for s in many.tool_summary], dtype=float)
    received = many.replies.astype(float)
    loss = np.where(sent != 0, 1.0 - received / np.where(sent != 0, sent, 1.0), np.nan)
    out = {"ping_transmitted": sent, "ping_received": received, "ping_loss": loss}
    stats = ("rtt_min", "rtt_p10", "rtt_median", "rtt_p90", "rtt_max", "rtt_mean", "rtt_mdev")
    out.update({name: np.full(len(sent), np.nan) for name in stats})
    for k in np.unique(many.replies[many.replies > 0]):
        logs = np.flatnonzero(many.replies == k)
        matrix = many.rtt[many.offsets[logs][:, None] + np.arange(k)]   # C order: row = log
        values = (matrix.min(axis=1), *np.percentile(matrix, PERCENTILES, axis=1),
                  matrix.max(axis=1), matrix.mean(axis=1), matrix.std(axis=1))
        for name, value in zip(stats, values):
            out[name][logs] = value
    return out


def _probe_times(stamps):
    """``ping -D`` Unix times (s) to datetime64[ns], NaT where absent: microseconds, as
    ping prints them (no float rounding below that)."""
    times = np.full(stamps.shape, NAT)
    good = np.isfinite(stamps)
    times[good] = (np.round(stamps[good] * 1e6).astype(np.int64) * 1000).astype("datetime64[ns]")
    return times


def _check_sha(directory, row, sha):
    if row.sha256 and sha != row.sha256:
        raise MonitorError(f"{_where(directory, row)}: sha256 is {sha[:12]}..., runs.csv "
                           f"recorded {row.sha256[:12]}...: the file changed after it was listed")


def _ping_summary(probes, tool_summary):
    """Per-run summary of one ping run and its probes ``(rtt, status, time)``.

    ``probes``: the run's ``status``, ``rtt``, ``timestamp`` and ``seq`` arrays (probe);
    ``tool_summary``: what ping printed as its totals.

    ``ping_transmitted`` is the tool's own count where it printed one; a run cut off has
    none: then :func:`_sent` counts from the sequence numbers. ``ping_received`` counts
    the replies, or is the tool's count for a result without probes (perfSONAR's latency
    test keeps a histogram of delays, not the packets). The RTT statistics are
    those of the first replies (``status == "reply"``), as
    :func:`thruput.summary.summarize` does.
    """
    status = probes["status"].astype(str)
    rtt = probes["rtt"].astype(float)
    replies = rtt[(status == "reply") & np.isfinite(rtt)]
    told = tool_summary.get("transmitted")
    sent = float(told) if told is not None else _sent(probes["seq"], status)
    received = float((status == "reply").sum())
    if not status.size and tool_summary.get("received") is not None:
        received = float(tool_summary["received"])   # counts without probes: a latency histogram
    out = {"ping_transmitted": sent, "ping_received": received,
           "ping_loss": 1.0 - received / sent if sent else np.nan}
    if replies.size:
        p10, median, p90 = np.percentile(replies, PERCENTILES)
        out.update(rtt_min=replies.min(), rtt_p10=p10, rtt_median=median, rtt_p90=p90,
                   rtt_max=replies.max(), rtt_mean=replies.mean(), rtt_mdev=replies.std())
    return out, (rtt, status, _probe_times(probes["timestamp"].astype(float)))


def _sent(seq, status):
    """Probes sent by a ping run without a summary: the span of its sequence numbers
    (first to last printed, so a probe lost without a word in between counts), or the
    probes the log shows where it prints no sequence numbers (Windows)."""
    shown = float(np.isin(status, SENT_STATUSES).sum())
    seq = seq[(seq >= 0) & np.isin(status, SENT_STATUSES)]
    return max(shown, float(seq.max() - seq.min() + 1)) if seq.size else shown


def merge_ledgers(attrs_list):
    """The line accounting of several fragments (or a store and a fragment), added up."""
    out = {"files_read": 0, **dict.fromkeys(LEDGER_KEYS, 0)}
    reasons = {}
    for attrs in attrs_list:
        for key in out:
            out[key] += int(attrs.get(key, 0))
        for reason, count in json.loads(attrs.get("skipped_reasons", "{}")).items():
            reasons[reason] = reasons.get(reason, 0) + int(count)
    out["skipped_reasons"] = json.dumps(reasons, sort_keys=True)
    return out


# -- fragments -> the Dataset ------------------------------------------------------------

def combine(fragments, n_probe=None):
    """Join fragments along ``run``, padding ``probe`` to ``n_probe`` (default: the longest).

    Returns the runs in time order (ties in manifest order), with the line accounting of
    all fragments in attrs.
    """
    fragments = [f for f in fragments if f.sizes.get("run", 0)]
    if not fragments:
        return None
    width = max([f.sizes["probe"] for f in fragments] + [n_probe or 0])
    padded = [pad_probes(f, width) for f in fragments]
    ds = xr.concat(padded, dim="run", data_vars="all", coords="all", join="exact",
                   combine_attrs="drop")
    order = np.argsort(ds["time"].values, kind="stable")
    if not np.array_equal(order, np.arange(order.size)):
        ds = ds.isel(run=order)
    ds.attrs.update(merge_ledgers([f.attrs for f in fragments]))
    return ds


def status_codes(states):
    """Probe status strings to their int8 codes (:data:`STATUS_CODES`)."""
    codes = pd.Index(STATUS_CODES).get_indexer(np.asarray(states, dtype=object))
    if (codes < 0).any():
        raise ContractError(f"probe statuses outside {STATUS_CODES}: "
                            f"{sorted(set(np.asarray(states)[codes < 0].tolist()))[:5]}")
    return codes.astype(np.int8)


def pad_probes(ds, width):
    """``ds`` with its ``probe`` dimension padded to ``width`` (NaN, code 0 or ``""``, NaT)."""
    extra = width - ds.sizes["probe"]
    if extra <= 0:
        return ds
    wide = {}
    for name, (fill, dtype) in PROBE_PADDING.items():
        var = ds[name].variable
        if var.dtype.kind in "OUT":         # (status strings: a store opened whole)
            fill, dtype = "", object
        values = np.full((var.shape[0], extra), fill, dtype=dtype)
        # (a store with no probes yet may give back an empty array of another dtype)
        old = var.values.astype(dtype) if var.size == 0 else var.values
        wide[name] = xr.Variable(var.dims, np.concatenate([old, values], axis=1), var.attrs)
    return ds.drop_vars(list(PROBE_PADDING) + ["probe"], errors="ignore").assign(wide)


def finish(ds, metadata, text, n_rows, digest=None, *, fixed_width=True):
    """Give a combined Dataset its coordinates, attributes and campaign attrs.

    ``text``/``n_rows``: runs.csv and how many of its rows ``ds`` holds (recorded for
    appends: :meth:`ManifestDigest.attrs`); ``digest``: the :class:`ManifestDigest` of
    ``text`` if the caller has one, or a string standing for ``manifest_sha256`` (a unit
    of a store whose attrs are written at the end).
    ``fixed_width``: strings as NumPy ``<U`` (as :func:`thruput.open_campaign` gives
    them), ``rtt_status`` too; False keeps them Python objects and ``rtt_status`` its int8
    codes with their CF flag attrs (what a Zarr store writes).
    """
    kind, dtype = ("U", str) if fixed_width else ("O", object)
    strings = {name: var if (var := ds.variables[name]).dtype.kind == kind else var.astype(dtype)
               for name in STRING_NAMES}       # (xarray's astype: 0.5 ms a variable even if so)
    ds = ds.assign_coords(probe=np.arange(ds.sizes["probe"]),
                          **{n: v for n, v in strings.items() if n in ds.coords})
    ds = ds.assign({n: v for n, v in strings.items() if n not in ds.coords})
    for name, (units, long_name) in MONITOR_COORDS.items():
        ds.variables[name].attrs = {"long_name": long_name} | ({"units": units} if units else {})
    for name, (_, units, long_name) in MONITOR_VARIABLES.items():
        ds.variables[name].attrs = {"long_name": long_name} | ({"units": units} if units else {})
    status = ds.variables["rtt_status"]
    if status.dtype.kind in "iu":
        if fixed_width:
            names = np.array(STATUS_CODES, dtype=str)
            ds["rtt_status"] = xr.Variable(status.dims, names[status.values], status.attrs)
        else:
            status.attrs.update(status_flags())
    ds.attrs.update(campaign_attrs(metadata))
    if isinstance(digest, str):         # (a unit's: the store's attrs are written at the end)
        ds.attrs.update(manifest_rows=int(n_rows), manifest_sha256=digest)
    else:
        ds.attrs.update((digest if digest is not None else ManifestDigest(text)).attrs(n_rows))
    return ds


def campaign_attrs(metadata):
    """The campaign attrs of a monitor Dataset (docs/design.md)."""
    return {"kind": "campaign", "campaign": metadata["name"], "campaign_kind": "monitor",
            "title": metadata["title"], "metadata": json.dumps(metadata, sort_keys=True),
            "monitor_version": MONITOR_VERSION}


def empty(metadata, text):
    """The monitor Dataset of a campaign that has no runs yet."""
    ds = read_batch(".", [])
    return finish(ds, metadata, text, 0)


def batches(rows, size=None):
    """``rows`` cut into consecutive batches of ``size`` (default :data:`BATCH_ROWS`)."""
    size = size or BATCH_ROWS
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def open_monitor(directory, metadata, *, start=0, workers=None, scheduler=None, client=None):
    """The monitor Dataset of campaign ``directory`` (rows from ``start`` on).

    Parameters
    ----------
    directory : path-like
    metadata : dict
        Its campaign.yaml (schema-checked).
    start : int, default 0
        Data rows of runs.csv to pass over (those already stored).
    workers, scheduler, client
        Read the batches on a ``dask.distributed`` cluster: see
        :func:`thruput.parallel.map_batches`. Default: here, one after the other.

    Returns
    -------
    xarray.Dataset
        Validated by :func:`validate_monitor`. ``None`` if ``start`` leaves no rows.
    """
    from ..parallel import map_batches

    rows, text = read_monitor_manifest(directory, start)
    if not rows:
        return None if start else validate_monitor(empty(metadata, text))
    fragments = map_batches(read_batch, str(directory), batches(rows),
                            workers=workers, scheduler=scheduler, client=client)
    ds = finish(combine(fragments), metadata, text, start + len(rows))
    return validate_monitor(ds)


# -- validate ----------------------------------------------------------------------------

def validate_monitor(ds):
    """Check a monitor Dataset against docs/design.md; return it unchanged.

    Checks every coordinate and variable is there with its dimensions and units, runs are
    unique and in time order, every run has a start, outcomes are known and an ``ok``
    test has a raw file. Works on lazy (dask) Datasets, loading only per-run strings and times.

    Raises
    ------
    ContractError
        Listing every violation.
    """
    problems = []
    if ds.attrs.get("campaign_kind") != "monitor":
        problems.append(f"campaign_kind is {ds.attrs.get('campaign_kind')!r}, not 'monitor'")
    for name, (units, _) in MONITOR_COORDS.items():
        if name not in ds.coords:
            problems.append(f"missing coordinate {name!r}")
        elif name not in ("run", "probe") and ds[name].dims != ("run",):
            problems.append(f"coordinate {name!r} has dims {ds[name].dims}, expected ('run',)")
        elif units and ds[name].attrs.get("units") != units:
            problems.append(f"{name!r} has units {ds[name].attrs.get('units')!r}, expected {units!r}")
    for name, (dims, units, _) in MONITOR_VARIABLES.items():
        if name not in ds.data_vars:
            problems.append(f"missing variable {name!r}")
        elif ds[name].dims != dims:
            problems.append(f"{name!r} has dims {ds[name].dims}, expected {dims}")
        elif units and ds[name].attrs.get("units") != units:
            problems.append(f"{name!r} has units {ds[name].attrs.get('units')!r}, expected {units!r}")
        elif not units and ds[name].dtype.kind != "M":
            problems.append(f"{name!r} is not datetime64")
    if not problems:
        runs = ds["run"].values.astype(object)
        if len(set(runs.tolist())) != runs.size:
            problems.append("run ids are not unique")
        time = ds["time"].values
        if np.isnat(time).any():
            problems.append("time has NaT (every test has a start)")
        elif time.size and (np.diff(time.astype(np.int64)) < 0).any():
            problems.append("runs are not in time order")
        outcome = np.asarray(ds["outcome"].values).astype(object).astype(str)
        bad = sorted(set(np.unique(outcome).tolist()) - set(OUTCOMES))
        if bad:
            problems.append(f"outcome has values {bad} outside {OUTCOMES}")
        no_file = (outcome == "ok") & (np.asarray(ds["source"].values).astype(object).astype(str) == "")
        if no_file.any():
            problems.append(f"{int(no_file.sum())} ok runs have no source file")
    if problems:
        raise ContractError(f"monitor campaign {ds.attrs.get('campaign', '?')}: " + "; ".join(problems))
    return ds


