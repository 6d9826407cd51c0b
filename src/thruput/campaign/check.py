"""Check a campaign directory: schema, manifest, every raw file, the plan.

:func:`check_campaign` never raises for bad input; it returns every :class:`Problem` it
finds, each naming a file and, where it can, a line, so ``thruput campaign check`` can
list them all at once. ``error`` problems make a campaign unusable (the pipeline refuses
it); ``warning`` problems are worth a look (files not in the manifest, explanations for
runs that did run).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import dataset as cp
from .. import guard
from .kinds import CHECKS, by_name
from .layout import escapes, sha256_of
from ..errors import ParseError, ThruputError
from ..hashing import sha256_file

__all__ = ["Problem", "check_campaign", "check_against", "IGNORED_FILES"]

#: Files in a campaign directory that are not raw logs.
IGNORED_FILES = {cp.CAMPAIGN_FILE, cp.MANIFEST_FILE, "README.md", "README", ".gitignore"}
#: Suffix of files that `thruput record` is still writing (or that an interrupted run left).
PARTIAL_SUFFIX = ".part"
#: How many errors of one raw file to list (the rest are counted).
MAX_ERRORS_PER_FILE = 5
#: What `thruput campaign new` and `import` write where a sentence is the user's to write.
PLACEHOLDER = "TODO"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a campaign: ``file`` (a path), ``line`` (1-based or None)."""

    file: str
    line: int | None
    message: str
    severity: str = "error"

    def __str__(self):
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.severity}: {self.message}"


def check_campaign(directory):
    """Every problem of the campaign in ``directory``, errors and warnings, in file order.

    Checks that ``campaign.yaml`` parses and follows the schema (and that its name is the
    directory's, its path names hosts it describes, its kind matches its tool); that
    ``runs.csv`` is well formed with no duplicate rows; that every listed file exists, has
    the bytes whose sha256 the manifest keeps (a file changed since it was recorded or
    imported is an error, even when it still parses), is read by :func:`thruput.read` without error, is the kind its role says, is complete, and
    (for iperf) says the streams and window the manifest says; and that every run the plan
    asks for is present or explained in ``explained``. A monitor campaign is checked by
    :func:`thruput.monitor.check.check_campaign` (its records, then its schedule's gaps),
    named in :data:`thruput.campaign.kinds.CHECKS`.

    Parameters
    ----------
    directory : str or path-like

    Returns
    -------
    list of Problem
        Empty when the campaign is sound.
    """
    directory = Path(directory)
    problems = []
    meta_path = str(directory / cp.CAMPAIGN_FILE)
    metadata = node = None
    if not directory.is_dir():
        return [Problem(str(directory), None, "not a directory")]
    try:
        metadata = cp.load_metadata(directory)
        _, node = cp.load_yaml(directory / cp.CAMPAIGN_FILE)
    except ParseError as exc:
        problems += [Problem(meta_path, line, msg) for line, msg in exc.errors]
    except ThruputError as exc:
        problems.append(Problem(meta_path, None, str(exc).removeprefix(meta_path + ": ")))
    if metadata is not None and metadata["kind"] in CHECKS:     # monitor: its package's check
        return (problems + placeholders(directory)
                + by_name(CHECKS[metadata["kind"]])(directory, metadata, node, Problem, _unlisted))
    if metadata is not None and metadata["kind"] == "design":
        return problems + placeholders(directory) + _check_design(directory, metadata, node, meta_path)
    if metadata is not None:
        problems += _check_metadata(directory, metadata, node, meta_path)

    rows, listed = [], set()
    manifest = str(directory / cp.MANIFEST_FILE)
    try:
        # one malformed row must not hide the others (nor make their files "not listed")
        rows, errors, listed = cp.parse_manifest(directory)
        problems += [Problem(manifest, line, msg) for line, msg in errors]
    except ParseError as exc:
        problems += [Problem(manifest, line, msg) for line, msg in exc.errors]
    except ThruputError as exc:
        problems.append(Problem(manifest, None, str(exc).removeprefix(manifest + ": ")))
    try:
        cp.check_unique(rows, directory)
    except ParseError as exc:
        problems += [Problem(manifest, line, msg) for line, msg in exc.errors]

    checked = []
    for row in rows:
        if metadata is not None and row.role not in cp.CAMPAIGN_ROLES[metadata["kind"]]:
            problems.append(Problem(manifest, row.line, f"role {row.role} in a {metadata['kind']} "
                                    f"campaign ({' or '.join(cp.CAMPAIGN_ROLES[metadata['kind']])} expected)"))
            continue
        problems += _check_file(directory, row, manifest)
        checked.append(row)
    problems += _unhashed(directory, checked, manifest)
    problems += _unlisted(directory, rows, listed)
    if metadata is not None:
        problems += _check_plan(metadata, node, rows, meta_path)
    return problems


def _check_metadata(directory, metadata, node, path):
    problems = []
    if metadata["name"] != directory.resolve().name:
        problems.append(Problem(path, cp.node_line(node, ["name"]),
                                f"name {metadata['name']!r} is not the directory name "
                                f"{directory.resolve().name!r}"))
    for end in ("source", "destination"):
        host = metadata["path"][end]
        if host not in metadata["hosts"]:
            problems.append(Problem(path, cp.node_line(node, ["path", end]),
                                    f"path/{end} {host!r} is not a key of hosts"))
    tool = metadata["plan"]["tool"]
    if (metadata["kind"] == "udp_sweep") != (tool == "udpmon"):
        problems.append(Problem(path, cp.node_line(node, ["plan", "tool"]),
                                f"kind {metadata['kind']} does not go with plan/tool {tool}"))
    return problems + placeholders(directory)


def _check_design(directory, metadata, node, meta_path):
    """The problems of a design campaign: its name, its runs.csv (every cell against the
    declared factors: :func:`~.design.parse_design_manifest`), every listed file there,
    inside the campaign and with the bytes whose sha256 runs.csv keeps; files not listed."""
    from .design import design_of, parse_design_manifest

    problems = []
    if metadata["name"] != directory.resolve().name:
        problems.append(Problem(meta_path, cp.node_line(node, ["name"]),
                                f"name {metadata['name']!r} is not the directory name "
                                f"{directory.resolve().name!r}"))
    manifest = str(directory / cp.MANIFEST_FILE)
    rows, listed = [], set()
    try:
        rows, errors, listed = parse_design_manifest(directory, design_of(metadata))
        problems += [Problem(manifest, line, msg) for line, msg in errors]
    except ParseError as exc:
        problems += [Problem(manifest, line, msg.removeprefix(manifest + ": ")) for line, msg in exc.errors]
    folders = {}
    for row in rows:
        if not row.path:
            continue
        if (problem := escapes(directory, row.path, folders)) is not None:
            problems.append(Problem(manifest, row.line, problem))
            continue
        path = directory / row.path
        if not path.is_file():
            problems.append(Problem(manifest, row.line, f"{row.path} is listed but missing"))
            continue
        if (changed := _changed(directory, row, path)) is not None:
            problems.append(changed)
    problems += _unhashed(directory, [r for r in rows if r.path], manifest)
    # files campaign.yaml lists as ancillary (a far end's server logs) are not test logs
    ancillary = {a.get("path") for a in metadata.get("ancillary") or [] if isinstance(a, dict)}
    return problems + _unlisted(directory, rows, set(listed) | ancillary)


def placeholders(directory):
    """A warning per line of campaign.yaml with a TODO left from the template."""
    path = str(Path(directory) / cp.CAMPAIGN_FILE)
    text = guard.read_text(Path(directory) / cp.CAMPAIGN_FILE, cp.CAMPAIGN_FILE, root=directory)
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        if PLACEHOLDER in line.split("#", 1)[0]:    # not in comments (the template's help)
            problems.append(Problem(path, number, f"{PLACEHOLDER} left from the template: "
                                    f"{line.strip()}", "warning"))
    return problems


def _check_file(directory, row, manifest):
    path = directory / row.path
    where = f"{manifest}:{row.line}"
    if (problem := escapes(directory, row.path)) is not None:
        return [Problem(manifest, row.line, problem)]
    if not path.is_file():
        return [Problem(manifest, row.line, f"{row.path} is listed but missing")]
    # a changed file is an error even when it parses; what else is wrong with it follows
    problems = [p for p in [_changed(directory, row, path)] if p]
    try:
        ds = cp.read_raw(directory, row)
    except ParseError as exc:
        problems += [Problem(str(path), line, msg) for line, msg in exc.errors[:MAX_ERRORS_PER_FILE]]
        if len(exc.errors) > MAX_ERRORS_PER_FILE:
            problems.append(Problem(str(path), None,
                                    f"... and {len(exc.errors) - MAX_ERRORS_PER_FILE} more errors"))
        return problems
    except (ThruputError, OSError) as exc:
        return problems + [Problem(str(path), None, f"{str(exc).removeprefix(str(path) + ': ')} ({where})")]
    if row.role == "iperf":
        run = ds.isel(run=0)
        streams = float(run["streams"])
        if not math.isnan(streams) and int(streams) != row.streams:
            problems.append(Problem(str(path), None, f"the log ran {int(streams)} streams; "
                                    f"{cp.MANIFEST_FILE} line {row.line} says {row.streams}"))
        window = float(run["window_requested"])
        if not math.isnan(window) and int(window) != row.window:
            problems.append(Problem(str(path), None, f"the log requested a {int(window)} byte window; "
                                    f"{cp.MANIFEST_FILE} line {row.line} says {row.window}"))
    return problems


def _changed(directory, row, path):
    """A Problem if the file's bytes are not those whose sha256 the manifest keeps."""
    if not row.sha256:
        return None
    now = sha256_of(path)
    if now == row.sha256:
        return None
    return Problem(str(path), None, f"changed since it was recorded: {cp.MANIFEST_FILE} line {row.line} "
                   f"keeps sha256 {row.sha256}, the file's is {now}; if the change is intended, "
                   f"record it with `thruput campaign accept {directory} {row.path} --reason ...`")


def _unhashed(directory, rows, manifest):
    """One warning for the rows that keep no sha256 (a changed file would go unnoticed)."""
    bare = [r for r in rows if not r.sha256 and (Path(directory) / r.path).is_file()]
    if not bare:
        return []
    return [Problem(manifest, bare[0].line, f"{len(bare)} of {len(rows)} rows keep no sha256, so a change "
                    f"to their files cannot be detected; `thruput campaign accept {directory} --reason ...` "
                    "records the hashes of the files as they are", "warning")]


def _unlisted(directory, rows, also_listed=()):
    listed = {Path(r.path).as_posix() for r in rows} | {Path(p).as_posix() for p in also_listed if p}
    problems = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        rel = path.relative_to(directory).as_posix()
        if rel in listed or rel in IGNORED_FILES or any(part.startswith(".") for part in Path(rel).parts):
            continue
        if rel.endswith(PARTIAL_SUFFIX):
            problems.append(Problem(str(path), None, "incomplete file of an interrupted run "
                                    "(not analysed; re-run the recording to complete it)", "warning"))
        else:
            problems.append(Problem(str(path), None, f"not listed in {cp.MANIFEST_FILE} "
                                    "(not analysed)", "warning"))
    return problems


def _check_plan(metadata, node, rows, path):
    explained = {e["run"]: i for i, e in enumerate(metadata.get("explained") or [])}
    problems = []
    plan = metadata["plan"]
    if plan["tool"] == "udpmon":
        present = {r.path for r in rows}
        for i, f in enumerate(plan.get("files", [])):
            if f not in present and f not in explained:
                problems.append(Problem(path, cp.node_line(node, ["plan", "files", i]),
                                        f"planned file {f} is neither in {cp.MANIFEST_FILE} nor explained"))
        return problems
    needs_ping = plan.get("ping") is not None
    # iperf rows have no phase in docs/design.md; one written with "loaded" still counts
    have = {(r.run, r.role, r.phase if r.role == "ping" else "") for r in rows}
    for run in cp.planned_runs(metadata):
        missing = [] if (run, "iperf", "") in have else ["iperf log"]
        if needs_ping:
            missing += [f"{phase} ping" for phase in cp.PHASES if (run, "ping", phase) not in have]
        if missing and run not in explained:
            problems.append(Problem(path, cp.node_line(node, ["plan"]),
                                    f"planned run {run} lacks its {' and '.join(missing)} "
                                    "and is not explained"))
    ran = {r.run for r in rows}
    for run, i in explained.items():
        if run in ran:
            problems.append(Problem(path, cp.node_line(node, ["explained", i]),
                                    f"run {run} is explained as missing but has files in "
                                    f"{cp.MANIFEST_FILE}", "warning"))
    return problems


def check_against(directory, normalized):
    """Raw files that changed since ``normalized`` (a campaign .nc or Dataset) was made.

    A normalized campaign records the sha256 of every file it read (``source_sha256``,
    ``ping_source_sha256``); a file whose bytes differ now, or that is gone, is an error.
    This catches a log altered in place even when it still parses.

    Parameters
    ----------
    directory : str or path-like
        The campaign directory.
    normalized : str, path-like or xarray.Dataset
        Its normalized form (``data/processed/<campaign>.nc`` or ``.zarr``).

    Returns
    -------
    list of Problem
    """
    import xarray as xr

    ds = normalized
    if not isinstance(normalized, xr.Dataset):
        ds = cp.open_stored(normalized)             # .nc or .zarr
    recorded = {}
    for path_var, sha_var in (("source", "source_sha256"), ("ping_source", "ping_source_sha256")):
        if path_var in ds.variables and sha_var in ds.variables:
            paths = np.ravel(ds[path_var].values).astype(str)
            shas = np.ravel(ds[sha_var].values).astype(str)
            recorded.update((p, h) for p, h in zip(paths, shas) if p)
    problems = []
    for rel, sha in sorted(recorded.items()):
        path = Path(directory) / rel
        if not path.is_file():
            problems.append(Problem(str(path), None, "read when the campaign was normalized, now missing"))
            continue
        now = sha256_file(path)
        if now != sha:
            problems.append(Problem(str(path), None, f"changed since the campaign was normalized "
                                    f"(sha256 was {sha[:12]}..., is {now[:12]}...)"))
    return problems
