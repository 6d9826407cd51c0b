"""``thruput campaign check`` for a monitor campaign: campaign.yaml, runs.csv, every file.

Checked: the campaign's name is its directory's; every path's hosts are described; each
runs.csv row is well formed (its run id agrees with its columns, its path and direction
are in campaign.yaml, its outcome is one of :data:`~thruput.monitor.manifest.OUTCOMES`,
a failed test says why, an ``ok`` test has a file), run ids are unique, every listed file
exists and has the sha256 the row says, every ``ancillary`` file exists; files that are
neither listed nor ancillary are warned about, as for a sweep.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..campaign.layout import escapes
from ..errors import ThruputError
from ..hashing import sha256_file
from ..quantities import ISO_TIME_TEXT, iso_ns
from .manifest import MANIFEST, MONITOR_MANIFEST_COLUMNS, OUTCOMES, read_rows_lenient
from .schedule import DIRECTIONS, RECORDED_TOOLS, TESTS

__all__ = ["check_campaign", "check_monitor"]

#: Manifest role of each test (``ping`` logs are RTT, the others throughput).
ROLES = {"tcp": "iperf", "udp": "iperf", "ping": "ping"}


def _expected_run(row):
    run = f"{int(row.slot):06d}-{row.path_name}-{row.direction}-{row.test}"
    if row.socket_buffer:
        run += f"-b{row.socket_buffer}"
    if row.size:
        run += f"-z{row.size}"
    return run


def _row_problems(row, paths):
    """What is wrong with one row (list of messages)."""
    wrong = []
    if not row.slot.isdigit():
        return [f"slot {row.slot!r} is not a whole number"]
    if row.test not in TESTS:
        return [f"test {row.test!r} is not one of {list(TESTS)}"]
    if row.tool not in RECORDED_TOOLS[row.test]:
        wrong.append(f"tool {row.tool!r} cannot run a {row.test} test")
    if row.role != ROLES[row.test]:
        wrong.append(f"role {row.role!r}: a {row.test} test's log is {ROLES[row.test]!r}")
    if row.run != _expected_run(row):
        wrong.append(f"run id {row.run!r} does not match its columns ({_expected_run(row)!r})")
    if row.path_name not in paths:
        wrong.append(f"path_name {row.path_name!r} is not a paths[].name of campaign.yaml")
    elif row.direction not in paths[row.path_name]:
        wrong.append(f"direction {row.direction!r} is not watched on path {row.path_name!r}")
    if row.direction not in DIRECTIONS:
        wrong.append(f"direction {row.direction!r} is not one of {list(DIRECTIONS)}")
    try:            # (the reader's rule: thruput.quantities.iso_ns; empty is no time either)
        if np.isnat(iso_ns(row.started)):
            raise ValueError
    except ValueError:
        wrong.append(f"started {row.started!r} is not {ISO_TIME_TEXT}")
    for column in ("socket_buffer", "size", "rate"):
        value = getattr(row, column)
        try:
            if value and float(value) < 0:
                raise ValueError
        except ValueError:
            wrong.append(f"{column} {value!r} is not a number >= 0")
    if row.outcome not in OUTCOMES:
        wrong.append(f"outcome {row.outcome!r} is not one of {list(OUTCOMES)}")
    elif row.outcome != "ok" and not row.reason:
        wrong.append(f"outcome {row.outcome} without a reason")
    elif row.outcome == "ok" and not row.path:
        wrong.append("outcome ok but no file")
    if bool(row.path) != bool(row.sha256):
        wrong.append("path and sha256 must both be given or both empty")
    return wrong


def check_campaign(directory, metadata, node, problem, unlisted):
    """The monitor's part of ``thruput campaign check``
    (:data:`thruput.campaign.kinds.CHECKS`): its records (:func:`check_monitor`: the
    manifest's rows, every file and its sha256), then its schedule's gaps
    (:func:`thruput.monitor.gaps.check_gaps`); arguments as :func:`check_monitor`'s."""
    from .gaps import check_gaps

    return (check_monitor(directory, metadata, node, problem, unlisted)
            + check_gaps(directory, metadata, node, problem))


def check_monitor(directory, metadata, node, problem, unlisted):
    """Problems of the monitor campaign in ``directory`` (schema already checked).

    Parameters
    ----------
    directory : pathlib.Path
    metadata : dict
        campaign.yaml, schema-valid.
    node : yaml.Node
        Its YAML node, for line numbers (``thruput.campaign.dataset.node_line``).
    problem : callable
        ``problem(file, line, message, severity="error")`` -> a Problem.
    unlisted : callable
        ``unlisted(directory, rows, also_listed)`` -> Problems of files not listed.
    """
    from ..campaign.dataset import node_line

    directory = Path(directory)
    meta_path = str(directory / "campaign.yaml")
    problems = []
    if metadata["name"] != directory.resolve().name:
        problems.append(problem(meta_path, node_line(node, ["name"]),
                                f"name {metadata['name']!r} is not the directory name "
                                f"{directory.resolve().name!r}"))
    paths = {}
    for i, p in enumerate(metadata["paths"]):
        if p["name"] in paths:
            problems.append(problem(meta_path, node_line(node, ["paths", i, "name"]),
                                    f"path name {p['name']!r} given twice"))
        paths[p["name"]] = set(p.get("directions") or ["forward"])
        for end in ("source", "destination"):
            if p.get(end) is not None and p[end] not in metadata["hosts"]:
                problems.append(problem(meta_path, node_line(node, ["paths", i, end]),
                                        f"paths/{i}/{end} {p[end]!r} is not a key of hosts"))
    ancillary = [a["path"] for a in metadata.get("ancillary") or []]
    for i, rel in enumerate(ancillary):
        if not (directory / rel).is_file():
            problems.append(problem(meta_path, node_line(node, ["ancillary", i, "path"]),
                                    f"ancillary file {rel} is missing"))

    manifest = str(directory / MANIFEST)
    rows, errors = read_rows_lenient(directory)
    if not (directory / MANIFEST).exists() and (metadata.get("dates") or {}).get("start") is None:
        # `thruput monitor new`'s template: nothing recorded yet, nothing wrong either
        errors = []
        problems.append(problem(manifest, None, "not recorded yet (dates/start is null): "
                                f"`thruput monitor {directory}` runs the first slot", "warning"))
    problems += [problem(manifest, line, message) for line, message in errors]
    seen = {}
    for line, row in rows:
        for message in _row_problems(row, paths):
            problems.append(problem(manifest, line, message))
        if row.run in seen:
            problems.append(problem(manifest, line,
                                    f"run {row.run} already on line {seen[row.run]}"))
        seen.setdefault(row.run, line)
        if row.path and (escape := escapes(directory, row.path)) is not None:
            problems.append(problem(manifest, line, escape))
        elif row.path:
            file = directory / row.path
            if not file.is_file():
                problems.append(problem(manifest, line, f"{row.path} is listed but missing"))
            elif sha256_file(file) != row.sha256:
                problems.append(problem(str(file), None, f"sha256 is not the one {MANIFEST} "
                                        f"line {line} says (changed since it was recorded?)"))
    routes, route_problems = _check_routes(directory)
    problems += [problem(file, line, message) for file, line, message in route_problems]
    problems += unlisted(directory, [row for _line, row in rows], ancillary + routes)
    return problems


def _check_routes(directory):
    """The files routes.csv lists (and routes.csv itself), and ``(file, line, message)``
    for each listed file that is missing, outside the campaign or changed."""
    from .routes import ROUTES_MANIFEST, read_route_rows

    manifest = str(directory / ROUTES_MANIFEST)
    try:
        rows = read_route_rows(directory)
    except ThruputError as exc:
        return [ROUTES_MANIFEST], [(manifest, 1, str(exc).split(": ", 1)[-1])]
    listed, problems = [ROUTES_MANIFEST] if rows or (directory / ROUTES_MANIFEST).exists() else [], []
    for line, row in rows:
        if not row["path"]:
            continue
        if (escape := escapes(directory, row["path"])) is not None:
            problems.append((manifest, line, escape))
            continue
        listed.append(row["path"])
        file = directory / row["path"]
        if not file.is_file():
            problems.append((manifest, line, f"{row['path']} is listed but missing"))
        elif sha256_file(file) != row["sha256"]:
            problems.append((str(file), None, f"sha256 is not the one {ROUTES_MANIFEST} line {line} says"))
    return listed, problems


assert "sha256" in MONITOR_MANIFEST_COLUMNS
