"""Campaigns: a directory of raw logs plus its description, as one labelled Dataset.

A campaign directory (``data/raw/<name>/``, see ``docs/design.md``) holds

``campaign.yaml``
    What was meant to run and on what (validated by ``schemas/campaign.schema.json``).
``runs.csv``
    The manifest: one row per complete raw file (``MANIFEST_COLUMNS``).
the raw logs
    Under any sub-folder; each is read with :func:`thruput.read`.

:func:`open_campaign` turns it into one :class:`xarray.Dataset`: for a TCP sweep, runs
indexed by requested ``window``, ``streams`` and ``repeat``, with the ping RTTs taken during
each run (``phase="loaded"``) and right after it (``phase="unloaded"``) on the same cell;
for a UDPmon campaign, the concatenated ``udp_sweep`` rows and ``latency_scan`` points.
Every run keeps its provenance (path relative to the campaign and sha256).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

from .. import guard
from ..errors import ParseError
from ..quantities import ISO_TIME_TEXT, ISO_UTC as _ISO_UTC, iso_ns as _timestamp  # noqa: F401
from ..reader import read
from .layout import LedgerTotals as _LedgerTotals
from .metadata import (CampaignError, _Loader, _schema_message, load_metadata,  # noqa: F401
                       load_yaml, node_line, schema, schema_validator)
from . import runs
from .kinds import OPENERS, by_name
from .layout import ROLE_KINDS, escapes, path_problem
from .layout import (CAMPAIGN_FILE, LEGACY_MANIFEST_COLUMNS, MANIFEST_COLUMNS, MANIFEST_FILE,
                     parse_run_id, run_id)

__all__ = [
    "open_campaign", "resolve", "load_metadata", "read_manifest", "parse_manifest", "planned_runs",
    "run_id", "parse_run_id", "schema", "read_raw", "check_unique", "ManifestRow", "CampaignError",
    "CAMPAIGN_FILE", "MANIFEST_FILE", "MANIFEST_COLUMNS", "DEFAULT_ROOT", "DEFAULT_PROCESSED",
    "find_stored", "open_stored",
]

#: Where campaign names resolve (relative to the working directory).
DEFAULT_ROOT = "data/raw"
#: Where campaign names resolve to normalized campaigns (relative to the working directory).
DEFAULT_PROCESSED = "data/processed"
#: Suffixes of normalized campaigns, in the order names are looked up.
STORED_SUFFIXES = (".zarr", ".nc")
PHASES = ("loaded", "unloaded")
#: Phase of a campaign-wide ping (the path at rest, not tied to a run): its row leaves
#: window, streams and repeat empty and has a run id starting with "baseline".
BASELINE = "baseline"
#: Roles of the files of each kind of campaign.
CAMPAIGN_ROLES = {"tcp_sweep": ("iperf", "ping"), "udp_sweep": ("udpmon_bw", "udpmon_req")}
TCP_ROLES = CAMPAIGN_ROLES["tcp_sweep"]
KINDS = ("tcp_sweep", "udp_sweep")
#: A sha256 as runs.csv keeps it (lower-case hexadecimal).
SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class ManifestRow:
    """One row of ``runs.csv``; ``line`` is its 1-based line in the file."""

    run: str
    role: str
    path: str
    window: int | None
    streams: int | None
    repeat: int | None
    phase: str
    started: str
    line: int
    sha256: str = ""          # of the file when recorded or imported; "" if not kept


def resolve(name_or_path: str | os.PathLike[str], root: str | os.PathLike[str] = DEFAULT_ROOT) -> Path:
    """The campaign directory: a path as given if it is a directory, else ``root/name``.

    A relative ``root`` (the default ``data/raw``) is looked up from the working directory
    and then from the project root (the folder holding ``dvc.yaml``, found by walking up),
    so that a notebook running in ``notebooks/`` finds ``open_campaign("veth-1g")``.

    Raises
    ------
    CampaignError
        If none exists, naming every place looked at.
    """
    from ..project import ProjectNotFoundError, find_root

    path = Path(name_or_path)
    if path.is_dir():
        return path
    looked, note = [str(path)], ""
    if len(path.parts) == 1:  # a bare name: under root
        roots = [Path(root)]
        if not Path(root).is_absolute():
            try:
                roots.append(find_root() / root)
            except ProjectNotFoundError:
                note = f"; no project either: no {Path.cwd()}/dvc.yaml nor one in a folder above"
        for base in roots:
            candidate = base / path
            if candidate.is_dir():
                return candidate
            looked.append(str(candidate))
    raise CampaignError(f"{name_or_path}: no such campaign directory (looked at "
                        + ", ".join(dict.fromkeys(looked)) + ")" + note)


def read_manifest(directory: str | os.PathLike[str]) -> list[ManifestRow]:
    """Read ``runs.csv`` of ``directory`` into a list of :class:`ManifestRow`.

    Raises
    ------
    ParseError
        Listing every malformed row with its line: wrong header, unknown role or phase,
        non-integer window/streams/repeat, a run id that disagrees with its columns.
    """
    path = Path(directory) / MANIFEST_FILE
    rows, errors, _ = parse_manifest(directory)
    if errors:
        raise ParseError(errors[0][1], line=errors[0][0], path=str(path), errors=errors)
    return rows


def parse_manifest(directory: str | os.PathLike[str]) -> tuple[list[ManifestRow], list[tuple[int, str]],
                   set[str]]:
    """``runs.csv`` of ``directory`` read as far as it goes, for listing every problem.

    Returns
    -------
    rows : list of ManifestRow
        The well-formed rows.
    errors : list of (int, str)
        ``(line, message)`` of every malformed row.
    paths : set of str
        The ``path`` cell of every row, malformed ones included (those files are listed,
        if wrongly, so they are not "not listed").

    Raises
    ------
    CampaignError
        If ``runs.csv`` is missing.
    ParseError
        If its header is not :data:`MANIFEST_COLUMNS` (then no row can be read); the
        columns before sha256 was kept (:data:`LEGACY_MANIFEST_COLUMNS`) are read too,
        every row's ``sha256`` then empty.
    """
    path = Path(directory) / MANIFEST_FILE
    if not path.is_file():
        raise CampaignError(f"{path}: missing")
    text = runs.read_text(directory, "sweep runs.csv")     # (checked row by row: a tighter limit)
    rows, errors, paths = [], [], set()
    columns, end = runs.split_header(text)
    if columns not in (MANIFEST_COLUMNS, LEGACY_MANIFEST_COLUMNS):
        header = None if columns is None else list(columns)
        raise ParseError(f"header must be {','.join(MANIFEST_COLUMNS)}, not {header}",
                         line=1, path=str(path))
    at = columns.index("path")
    for line, cells in runs.records(text[end:], columns):
        if not cells or all(not c for c in cells):
            continue
        if len(cells) > at:
            paths.add(cells[at])
        if len(cells) != len(columns):
            errors.append((line, f"expected {len(columns)} cells, found {len(cells)}"))
            continue
        row, problems = _manifest_row(dict(zip(columns, cells)), line)
        errors.extend((line, p) for p in problems)
        if not problems:
            rows.append(row)
    return rows, errors, paths


def _manifest_row(cells, line):
    problems = []
    numbers = {}
    for key in ("window", "streams", "repeat"):
        value = cells[key]
        if value == "":
            numbers[key] = None
        elif value.isascii() and value.isdigit() and len(value) <= 18:    # (not "²" nor "١٢")
            numbers[key] = int(value)
            if key == "repeat" and numbers[key] > guard.MAX_REPEATS:
                problems.append(f"repeat {value} is past {guard.MAX_REPEATS:,} (thruput.guard.MAX_REPEATS)")
        else:
            problems.append(f"{key} {value!r} is not a non-negative integer")
    if cells["role"] not in ROLE_KINDS:
        problems.append(f"role {cells['role']!r} is not one of {', '.join(ROLE_KINDS)}")
    if not cells["path"]:
        problems.append("empty path")
    elif (problem := path_problem(cells["path"])) is not None:
        problems.append(problem)
    if cells["phase"] not in ("",) + PHASES + (BASELINE,):
        problems.append(f"phase {cells['phase']!r} is not one of {', '.join(PHASES + (BASELINE,))} or empty")
    if cells["role"] == "ping" and cells["phase"] == "":
        problems.append("a ping row needs a phase (loaded, unloaded or baseline)")
    if cells["phase"] == BASELINE:
        if cells["role"] != "ping":
            problems.append("only ping rows can be a campaign-wide baseline")
        if any(v is not None for v in numbers.values()):
            problems.append("a baseline ping belongs to no run: leave window, streams and repeat empty")
        if not cells["run"].startswith(BASELINE):
            problems.append(f"a baseline ping's run id starts with {BASELINE!r}")
    elif cells["role"] in ("iperf", "ping"):
        ids = parse_run_id(cells["run"])
        if None in numbers.values() and not problems:
            problems.append("iperf and ping rows need window, streams and repeat")
        elif ids is not None and not problems and ids != tuple(numbers[k] for k in ("window", "streams", "repeat")):
            problems.append(f"run id {cells['run']} disagrees with window/streams/repeat "
                            f"{numbers['window']}/{numbers['streams']}/{numbers['repeat']}")
    sha = cells.get("sha256", "")
    if sha and not SHA256.match(sha):
        problems.append(f"sha256 {sha!r} is not 64 hexadecimal digits")
    if cells["started"]:
        try:
            _timestamp(cells["started"])
        except ValueError:
            problems.append(f"started {cells['started']!r} is not {ISO_TIME_TEXT}")
    if problems:
        return None, problems
    return ManifestRow(cells["run"], cells["role"], cells["path"], numbers["window"],
                       numbers["streams"], numbers["repeat"], cells["phase"], cells["started"],
                       line, cells.get("sha256", "")), []


def planned_runs(metadata: Mapping[str, Any]) -> list[str]:
    """Run ids the plan of a TCP sweep asks for, in plan order (window, streams, repeat)."""
    plan = metadata.get("plan", {})
    if plan.get("tool") not in ("iperf3", "iperf2"):
        return []
    return [run_id(w, s, r) for w in plan.get("windows", []) for s in plan.get("streams", [])
            for r in range(int(plan.get("repeats", 1)))]


def read_raw(directory: str | os.PathLike[str], row: ManifestRow) -> xr.Dataset:
    """Read the raw file of manifest ``row`` and check it is the kind its role says.

    Raises
    ------
    ThruputError
        A :class:`ParseError` naming file and line, or :class:`CampaignError` for a file
        of the wrong kind, a truncated file, or a file that is missing.
    """
    path = Path(directory) / row.path
    if (problem := escapes(directory, row.path)) is not None:
        raise CampaignError(f"{Path(directory) / MANIFEST_FILE}:{row.line}: {problem}")
    if not path.is_file():
        raise CampaignError(f"{path}: listed in {MANIFEST_FILE} line {row.line} but missing")
    ds = read(path)
    expected = ROLE_KINDS[row.role]
    if ds.attrs["kind"] != expected:
        raise CampaignError(f"{path}: read as {ds.attrs['format']} ({ds.attrs['kind']}), "
                            f"but {MANIFEST_FILE} line {row.line} says {row.role} ({expected})")
    if int(ds.attrs.get("truncated", 0)):
        raise CampaignError(f"{path}: truncated ({ds.attrs.get('truncation')}); "
                            "a campaign analyses complete files only")
    if row.role == "iperf" and ds.sizes.get("run", 0) != 1:
        raise CampaignError(f"{path}: holds {ds.sizes.get('run', 0)} runs; a campaign run is one")
    return ds


def open_campaign(name_or_path: str | os.PathLike[str], root: str | os.PathLike[str] = DEFAULT_ROOT,
                  chunks: dict[str, Any] | None = None,
                  processed: str | os.PathLike[str] = DEFAULT_PROCESSED) -> xr.Dataset:
    """Open a campaign as one labelled :class:`xarray.Dataset`: stored, or built from raw.

    Parameters
    ----------
    name_or_path : str or path-like
        A normalized campaign (a ``.zarr`` store or ``.nc`` file), a campaign directory,
        or a campaign name: then ``processed/<name>.zarr``, else ``processed/<name>.nc``,
        else the directory ``root/<name>`` is read.
    root : str or path-like, default ``"data/raw"``
        Where names resolve to campaign directories.
    chunks : dict, optional
        Open lazily, as dask arrays with these chunks (``{}``: the store's own chunks,
        ``{"run": 10000}``...). Default: in memory. A campaign built from raw is
        built in memory and then chunked.
    processed : str or path-like, default ``"data/processed"``
        Where names resolve to normalized campaigns.

    Returns
    -------
    xarray.Dataset
        For ``kind: monitor``: one ``run`` dimension in time order, see docs/design.md and
        :mod:`thruput.monitor.reader`. For ``kind: design``: one ``run`` dimension with a
        coordinate per factor (:func:`thruput.design.dataset.open_design`). For ``kind: tcp_sweep``: ``throughput``, ``throughput_sender`` (bit/s),
        ``window_actual`` (byte), ``retransmits`` (count), ``start_time`` on
        (window, streams, repeat); ``interval_throughput`` (bit/s, summed over streams),
        ``interval_cwnd`` (byte, summed over streams) and ``interval_rtt`` (ms, the
        streams' mean smoothed RTT; both NaN where the log has no TCP info) on
        (..., interval); ``rtt`` (ms) and ``rtt_status`` on (..., phase, probe); provenance
        ``source``/``source_sha256`` and ``ping_source``/``ping_source_sha256``. Cells the
        plan asked for but that did not run are NaN (and ``""`` for strings). For
        ``kind: udp_sweep``: the ``udp_sweep`` rows on ``row`` with a ``file`` coordinate and
        the ``latency_scan`` points as ``scan_*`` variables on ``point`` (``scan_file``),
        and ``source_sha256``/``source_role`` on ``source`` (one per file). Attrs:
        ``kind`` (``"campaign"``), ``campaign``, ``campaign_kind``, ``title``, ``metadata``
        (campaign.yaml as JSON), ``capacity_bps`` (when known), ``interval_s`` (median
        reporting interval of a TCP sweep, s), ``files_read`` and the line accounting
        (``lines_total``, ``lines_parsed``, ``lines_skipped``, ``skipped_reasons``) summed
        over every file read.

    Raises
    ------
    thruput.errors.ThruputError
        For a bad ``campaign.yaml`` or ``runs.csv``, a missing, unreadable, truncated or
        wrong-kind raw file, each naming the file and, where known, the line. Nothing is
        analysed from a campaign with such a problem.

    Examples
    --------
    >>> ds = open_campaign("veth-1g")                            # doctest: +SKIP
    >>> ds.throughput.sel(streams=4)                             # window x repeat
    """
    stored = find_stored(name_or_path, processed)
    if stored is not None:
        return open_stored(stored, chunks)
    directory = resolve(name_or_path, root)
    metadata = load_metadata(directory)
    if metadata["kind"] in OPENERS:      # monitor, design: their packages build on this one
        ds = by_name(OPENERS[metadata["kind"]])(directory, metadata)
    else:
        ds = _open_sweep(directory, metadata)
    return ds if chunks is None else ds.chunk(chunks)



def find_stored(name_or_path: str | os.PathLike[str],
                processed: str | os.PathLike[str] = DEFAULT_PROCESSED) -> Path | None:
    """The normalized campaign ``name_or_path`` names (a path, or ``processed/<name>.zarr``
    or ``.nc``), or ``None``."""
    path = Path(name_or_path)
    if path.suffix in STORED_SUFFIXES and path.exists():
        return path
    if path.is_dir() or len(path.parts) != 1:
        return None
    for suffix in STORED_SUFFIXES:
        candidate = Path(processed) / f"{name_or_path}{suffix}"
        if candidate.exists():
            return candidate
    return None


def open_stored(path: str | os.PathLike[str], chunks: Any = None) -> xr.Dataset:
    """Open a normalized campaign, Zarr or netCDF, lazily with ``chunks`` else loaded."""
    import xarray as xr

    if Path(path).suffix == ".zarr":
        from .store import open_store

        return open_store(path, chunks)
    if chunks is not None:
        return xr.open_dataset(path, engine="netcdf4", chunks=chunks)
    with xr.open_dataset(path, engine="netcdf4") as ds:
        return ds.load()


def _open_sweep(directory, metadata):
    rows = read_manifest(directory)
    check_unique(rows, directory)
    if metadata["kind"] == "tcp_sweep":
        ds = _tcp_sweep(directory, metadata, rows)
    else:
        ds = _udp_sweep(directory, rows)
    capacity = (metadata.get("path") or {}).get("capacity_bps")
    ds.attrs.update({
        "kind": "campaign",
        "campaign": metadata["name"],
        "campaign_kind": metadata["kind"],
        "title": metadata["title"],
        "metadata": json.dumps(metadata, sort_keys=True),
    })
    if capacity is not None:
        ds.attrs["capacity_bps"] = float(capacity)
    return ds


def check_unique(rows: Sequence[ManifestRow], directory: str | os.PathLike[str]) -> None:
    """Raise :class:`ParseError` listing manifest rows that repeat an earlier one."""
    seen: dict[Any, Any] = {}
    errors = []
    for row in rows:
        key = (row.run, row.role, row.phase) if row.role in ("iperf", "ping") else (row.path,)
        if key in seen:
            errors.append((row.line, f"{' '.join(filter(None, key))} already listed on line {seen[key]}"))
        seen.setdefault(key, row.line)
    if errors:
        raise ParseError(errors[0][1], line=errors[0][0], path=str(Path(directory) / MANIFEST_FILE),
                         errors=errors)


# -- TCP sweeps -------------------------------------------------------------------------

#: Coordinates of a TCP sweep: name -> (units, long_name).
TCP_COORDS = {
    "window": ("byte", "requested TCP window (socket buffer size)"),
    "streams": ("count", "number of parallel TCP streams"),
    "repeat": ("1", "repeat index of the (window, streams) cell"),
    "phase": ("1", "ping phase: during the run (loaded) or after it (unloaded)"),
    "interval": ("1", "reporting interval index"),
    "probe": ("1", "ping probe index within the phase"),
}

#: Variables of a TCP sweep: name -> (units, long_name).
TCP_VARIABLES = {
    "throughput": ("bit/s", "whole-run throughput summed over streams (receiver side where known)"),
    "throughput_sender": ("bit/s", "whole-run throughput summed over streams, sender side"),
    "window_actual": ("byte", "TCP window (socket buffer) the OS granted"),
    "retransmits": ("count", "TCP retransmissions in the run (NaN if not reported)"),
    "start_time": ("", "when the run started (UTC)"),
    "interval_throughput": ("bit/s", "throughput in the interval, summed over streams"),
    "interval_cwnd": ("byte", "TCP congestion windows at the end of the interval, summed over streams"),
    "interval_rtt": ("ms", "TCP smoothed RTT at the end of the interval, mean over streams"),
    "rtt": ("ms", "ping round-trip time (NaN = lost or padding)"),
    "rtt_status": ("1", "ping probe outcome (\"\" = padding)"),
    "source": ("1", "iperf log, relative to the campaign directory"),
    "source_sha256": ("1", "sha256 of the iperf log"),
    "ping_source": ("1", "ping log, relative to the campaign directory"),
    "ping_source_sha256": ("1", "sha256 of the ping log"),
}


def _tcp_sweep(directory, metadata, rows):
    plan = metadata["plan"]
    baseline = [r for r in rows if r.phase == BASELINE]
    rows = [r for r in rows if r.phase != BASELINE]
    cells = [r for r in rows if r.role in TCP_ROLES]
    for row in rows:
        if row.role not in TCP_ROLES:
            raise CampaignError(f"{Path(directory) / MANIFEST_FILE}:{row.line}: role {row.role} "
                                "in a tcp_sweep campaign (iperf or ping expected)")
    windows = sorted(set(plan.get("windows", [])) | {r.window for r in cells})
    streams = sorted(set(plan.get("streams", [])) | {r.streams for r in cells})
    n_repeat = max([int(plan.get("repeats", 0))] + [r.repeat + 1 for r in cells])
    shape = (len(windows), len(streams), n_repeat)
    if shape[0] * shape[1] * shape[2] > guard.MAX_CELLS:    # (the arrays below are of this shape)
        raise CampaignError(f"{Path(directory) / MANIFEST_FILE}: {len(windows)} windows x {len(streams)} streams "
                            f"x {n_repeat} repeats is past {guard.MAX_CELLS:,} runs (thruput.guard.MAX_CELLS)")
    iw = {w: i for i, w in enumerate(windows)}
    js = {s: i for i, s in enumerate(streams)}

    iperf, ping = {}, {}
    ledger = _LedgerTotals()
    for row in cells:
        ds = read_raw(directory, row)
        ledger.add(ds)
        index = (iw[row.window], js[row.streams], row.repeat)
        if row.role == "iperf":
            iperf[index] = (row, ds.isel(run=0))
        else:
            ping[index + (PHASES.index(row.phase),)] = (row, ds)

    n_interval = max([d.sizes.get("interval", 0) for _, d in iperf.values()] + [0])
    n_probe = max([d.sizes.get("probe", 0) for _, d in ping.values()] + [0])
    out = {name: np.full(shape, np.nan) for name in
           ("throughput", "throughput_sender", "window_actual", "retransmits")}
    start = np.full(shape, np.datetime64("NaT", "ns"))
    interval = np.full(shape + (n_interval,), np.nan)
    # the sender's TCP state per interval (iperf3 -J, iperf 2 -e): cwnd and srtt traces
    cwnd = np.full(shape + (n_interval,), np.nan)
    srtt = np.full(shape + (n_interval,), np.nan)
    source = np.full(shape, "", dtype=object)
    source_sha = np.full(shape, "", dtype=object)
    rtt = np.full(shape + (len(PHASES), n_probe), np.nan)
    status = np.full(shape + (len(PHASES), n_probe), "", dtype=object)
    ping_source = np.full(shape + (len(PHASES),), "", dtype=object)
    ping_sha = np.full(shape + (len(PHASES),), "", dtype=object)

    for index, (row, run) in iperf.items():
        out["throughput"][index] = run["throughput"].item()
        out["throughput_sender"][index] = run["throughput_sender"].item()
        out["window_actual"][index] = run["window_actual"].item()
        if "retransmits" in run:
            out["retransmits"][index] = run["retransmits"].item()
        per_interval = _interval_rate(run)
        interval[index][: per_interval.size] = per_interval
        if "interval_cwnd" in run:
            values = run["interval_cwnd"].sum("stream", min_count=1).values
            cwnd[index][: values.size] = values
        if "interval_rtt" in run:
            values = run["interval_rtt"].mean("stream", skipna=True).values
            srtt[index][: values.size] = values
        start[index] = _timestamp(row.started)
        source[index] = row.path
        source_sha[index] = run.attrs["source_sha256"]
    for index, (row, probes) in ping.items():
        n = probes.sizes["probe"]
        rtt[index][:n] = probes["rtt"].values
        status[index][:n] = probes["status"].values.astype(str)
        ping_source[index] = row.path
        ping_sha[index] = probes.attrs["source_sha256"]
        if not row.started:
            continue
        if row.phase == "loaded" and np.isnat(start[index[:3]]):
            start[index[:3]] = _timestamp(row.started)

    dims3 = ("window", "streams", "repeat")
    data = {name: (dims3, values) for name, values in out.items()}
    data.update({
        "start_time": (dims3, start),
        "interval_throughput": (dims3 + ("interval",), interval),
        "interval_cwnd": (dims3 + ("interval",), cwnd),
        "interval_rtt": (dims3 + ("interval",), srtt),
        "rtt": (dims3 + ("phase", "probe"), rtt),
        "rtt_status": (dims3 + ("phase", "probe"), status.astype(str)),
        "source": (dims3, source.astype(str)),
        "source_sha256": (dims3, source_sha.astype(str)),
        "ping_source": (dims3 + ("phase",), ping_source.astype(str)),
        "ping_source_sha256": (dims3 + ("phase",), ping_sha.astype(str)),
    })
    coords = {"window": np.asarray(windows, dtype=np.int64),
              "streams": np.asarray(streams, dtype=np.int64),
              "repeat": np.arange(n_repeat), "phase": np.asarray(PHASES),
              "interval": np.arange(n_interval), "probe": np.arange(n_probe)}
    ds = xr.Dataset({name: xr.Variable(dims, values) for name, (dims, values) in data.items()},
                    coords=coords)
    for name, (units, long_name) in {**TCP_COORDS, **TCP_VARIABLES}.items():
        ds[name].attrs.update({"long_name": long_name} | ({"units": units} if units else {}))
    ds = ds.merge(_baseline_pings(directory, baseline, ledger))
    ds.attrs.update(ledger.attrs())
    ds.attrs["interval_s"] = _interval_length([run for _, run in iperf.values()])
    return ds


#: Variables of campaign-wide baseline pings: name -> (units, long_name).
BASELINE_VARIABLES = {
    "baseline_rtt": ("ms", "campaign-wide baseline ping round-trip time (NaN = lost or padding)"),
    "baseline_rtt_status": ("1", "baseline ping probe outcome (\"\" = padding)"),
    "baseline_start_time": ("", "when the baseline ping started (UTC)"),
    "baseline_source": ("1", "baseline ping log, relative to the campaign directory"),
    "baseline_source_sha256": ("1", "sha256 of the baseline ping log"),
}


def _baseline_pings(directory, rows, ledger):
    """Campaign-wide pings (``phase`` baseline) on (baseline, baseline_probe); empty
    variables when there are none, so every TCP sweep has the same shape of Dataset."""
    parts = []
    for row in sorted(rows, key=lambda r: (r.started, r.run)):
        ds = read_raw(directory, row)
        ledger.add(ds)
        parts.append((row, ds))
    n_probe = max([ds.sizes.get("probe", 0) for _, ds in parts] + [0])
    rtt = np.full((len(parts), n_probe), np.nan)
    status = np.full((len(parts), n_probe), "", dtype=object)
    for i, (_, ds) in enumerate(parts):
        rtt[i, : ds.sizes["probe"]] = ds["rtt"].values
        status[i, : ds.sizes["probe"]] = ds["status"].values.astype(str)
    out = xr.Dataset({
        "baseline_rtt": (("baseline", "baseline_probe"), rtt),
        "baseline_rtt_status": (("baseline", "baseline_probe"), status.astype(str)),
        "baseline_start_time": (("baseline",), np.array([_timestamp(r.started) for r, _ in parts],
                                                        dtype="datetime64[ns]")),
        "baseline_source": (("baseline",), np.array([r.path for r, _ in parts], dtype=str)),
        "baseline_source_sha256": (("baseline",), np.array([d.attrs["source_sha256"] for _, d in parts],
                                                           dtype=str)),
    }, coords={"baseline": np.array([r.run for r, _ in parts], dtype=str),
               "baseline_probe": np.arange(n_probe)})
    out["baseline"].attrs.update(units="1", long_name="run id of a campaign-wide baseline ping")
    out["baseline_probe"].attrs.update(units="1", long_name="probe index within a baseline ping")
    for name, (units, long_name) in BASELINE_VARIABLES.items():
        out[name].attrs.update({"long_name": long_name} | ({"units": units} if units else {}))
    return out


def _interval_rate(run):
    """Per-interval throughput of one run summed over streams, bit/s.

    Bytes summed over streams over the interval's length, as iperf3's own [SUM] lines do
    (the streams' intervals differ by microseconds, so summing their rates is not quite
    it); where a log gives no bytes, the streams' rates are summed.
    """
    length = (run["interval_end"] - run["interval_start"]).where(lambda x: x > 0)
    rate = run["interval_bytes"].sum("stream", min_count=1) * 8 / length
    summed = run["interval_throughput"].sum("stream", min_count=1)
    return rate.fillna(summed).values


def _interval_length(runs):
    """Median reporting interval of the runs, s (rounded to 1 ms; NaN if none)."""
    lengths = [(run["interval_end"] - run["interval_start"]).values for run in runs
               if "interval_end" in run]
    lengths = np.concatenate([np.ravel(x) for x in lengths]) if lengths else np.array([])
    lengths = lengths[np.isfinite(lengths)]
    return round(float(np.median(lengths)), 3) if lengths.size else float("nan")


# -- UDPmon campaigns -------------------------------------------------------------------

def _udp_sweep(directory, rows):
    ledger = _LedgerTotals()
    sweeps, scans, files, shas, roles = [], [], [], [], []
    for row in rows:
        if row.role not in ("udpmon_bw", "udpmon_req"):
            raise CampaignError(f"{Path(directory) / MANIFEST_FILE}:{row.line}: role {row.role} "
                                "in a udp_sweep campaign (udpmon_bw or udpmon_req expected)")
        ds = read_raw(directory, row)
        ledger.add(ds)
        files.append(row.path)
        shas.append(ds.attrs["source_sha256"])
        roles.append(row.role)
        if row.role == "udpmon_bw":
            sweeps.append(_tagged(ds, "row", "file", row.path))
        else:
            scans.append(_tagged(ds, "point", "scan_file", row.path))
    parts = []
    if sweeps:
        parts.append(_concat(sweeps, "row", prefix=""))
    if scans:
        parts.append(_concat(scans, "point", prefix="scan_"))
    ds = xr.merge(parts, combine_attrs="drop") if parts else xr.Dataset()
    ds = ds.assign_coords(source=xr.Variable("source", np.asarray(files, dtype=str),
                                             {"units": "1", "long_name": "raw file, relative to the campaign directory"}))
    ds["source_sha256"] = xr.Variable("source", np.asarray(shas, dtype=str),
                                      {"units": "1", "long_name": "sha256 of the raw file"})
    ds["source_role"] = xr.Variable("source", np.asarray(roles, dtype=str),
                                    {"units": "1", "long_name": "role of the raw file (runs.csv)"})
    ds.attrs.update(ledger.attrs())
    return ds


def _tagged(ds, dim, name, path):
    """Drop per-file attrs and index; tag every record with the file it came from."""
    ds = ds.drop_vars([dim], errors="ignore")
    ds.attrs = {}
    return ds.assign_coords({name: xr.Variable(dim, np.full(ds.sizes[dim], path, dtype=object),
                                               {"units": "1", "long_name": "raw file of the record"})})


def _concat(parts, dim, prefix):
    """Concatenate per-file Datasets along ``dim``; variables a file lacks are padding.

    UDPmon's quiet (-q) sweeps print fewer columns than its -x sweeps and only histogram
    scans have histogram bins, so files of one campaign differ in their extras: a file
    without a variable gets NaN (numbers), ``""`` (strings) or -1 (integers) there.
    """
    parts = list(xr.align(*parts, join="outer", exclude=[dim]))
    first = {}
    for part in parts:
        for name, var in part.variables.items():
            first.setdefault(name, (part, var, name in part.coords))
    filled = []
    for part in parts:
        data, coords = {}, {}
        for name, (source, var, is_coord) in first.items():
            if name in part.variables:
                continue
            if dim not in var.dims:
                coords[name] = var
                continue
            shape = tuple(part.sizes[dim] if d == dim else source.sizes[d] for d in var.dims)
            (coords if is_coord else data)[name] = xr.Variable(var.dims, _padding(var.dtype, shape), var.attrs)
        filled.append(part.assign_coords(coords).assign(data))
    ds = xr.concat(filled, dim=dim, data_vars="all", coords="minimal", compat="override",
                   join="outer", combine_attrs="drop")
    for name in list(ds.variables):
        if ds[name].dtype == object:
            ds[name] = ds[name].astype(str)
    if prefix:
        ds = ds.rename({n: prefix + n for n in ds.data_vars if not n.startswith(prefix)})
    return ds.assign_coords({dim: xr.Variable(dim, np.arange(ds.sizes[dim]),
                                              {"units": "1", "long_name": f"{dim} index over all files"})})


def _padding(dtype, shape):
    if dtype.kind in "OUS":
        return np.full(shape, "", dtype=object)
    if dtype.kind in "iu":
        return np.full(shape, -1, dtype=dtype)
    if dtype.kind == "b":
        return np.zeros(shape, dtype=bool)
    return np.full(shape, np.nan)
