"""``thruput release VERSION``: the folder a study deposits, and what changed since the last.

:func:`make_release` writes ``release/<name>-<VERSION>/`` from a project whose pipeline is
up to date and whose raw data git or DVC hold as committed:

- ``site/``: the built site (``_site``), when the pipeline builds one;
- ``data/raw/<campaign>/``: every campaign's raw logs, or past ``raw_limit`` bytes
  ``data/raw/<campaign>.remote.json``: the DVC remote and every file's sha256;
- ``data/processed/``, ``data/report/``: the processed data and statistics products;
  ``data/published/``: the source studies' numbers; ``data/metrics.json``: the headline;
- ``tables/``: each campaign's run table as CSV; ``numbers.csv`` and ``numbers.json``:
  every published number with its unit and source (:mod:`thruput.release.numbers`);
- ``pipeline/``: ``dvc.yaml``, ``dvc.lock``, ``params.yaml``;
- ``datapackage.json`` (Data Package v2), ``ro-crate-metadata.json`` (RO-Crate 1.1,
  the pipeline run as one CreateAction per stage), ``CITATION.cff``, ``.zenodo.json``;
- ``changes.json`` and ``CHANGES.md``: every number added, removed or changed since the
  previous release; ``SHA256SUMS`` of every file.

The folder is written as ``.<name>-<VERSION>.part`` and renamed when complete; an existing
version is never overwritten.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from ..campaign.store import is_store, zip_store
from ..errors import ThruputError
from ..hashing import sha256_file
from . import describe, numbers

__all__ = ["make_release", "diff_releases", "ReleaseError", "resolve", "changes_markdown", "VERSION_RE",
           "RELEASE_DIR", "DEFAULT_NAME"]

#: Where releases go, under the project root.
RELEASE_DIR = "release"
#: The release's name prefix when none is given.
DEFAULT_NAME = "thruput"
#: A version: semantic versioning's MAJOR.MINOR.PATCH with an optional pre-release tag.
VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")
#: Files of the project the release carries under pipeline/.
PIPELINE_FILES = ("dvc.yaml", "dvc.lock", "params.yaml")
#: Items CHANGES.md lists one by one per section (changes.json has them all).
CHANGES_SHOWN = 200


class ReleaseError(ThruputError):
    """A release cannot be made (stale pipeline, uncommitted raw data, existing version)."""


def _run(args, cwd):
    try:
        return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise ReleaseError(f"cannot run {args[0]}: {exc}") from exc


def _git(root, *args):
    proc = _run(["git", *args], root)
    if proc.returncode != 0:
        raise ReleaseError(f"git {' '.join(args)} failed in {root}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def _dvc(root, *args):
    return _run([sys.executable, "-m", "dvc", *args], root)


def check_pipeline(root):
    """Refuse a stale pipeline: ``dvc status`` must report nothing to do."""
    proc = _dvc(root, "status", "--json")
    if proc.returncode != 0:
        raise ReleaseError(f"dvc status failed in {root}: {proc.stderr.strip() or proc.stdout.strip()}")
    text = proc.stdout.strip()
    status = json.loads(text[text.index("{"):]) if "{" in text else {}
    if status:
        stale = ", ".join(sorted(status)[:10]) + (" ..." if len(status) > 10 else "")
        raise ReleaseError(f"the pipeline is not up to date (dvc status: {stale}); run `make repro` "
                           "(dvc repro), commit, then release")


def _check_dvcignore(root):
    """A release carries dvc.yaml and dvc.lock (pipeline/): DVC must ignore release/, or it
    would take them for stages of the project."""
    ignore = root / ".dvcignore"
    lines = ignore.read_text(encoding="utf-8").split("\n") if ignore.exists() else []
    if not any(line.strip().strip("/") == RELEASE_DIR for line in lines):
        raise ReleaseError(f"add a line /{RELEASE_DIR}/ to {ignore}: a release copies dvc.yaml, which DVC "
                           "would otherwise read as stages of this project")


def check_raw_committed(root, campaign):
    """Refuse raw data that git or DVC does not hold as committed.

    A campaign kept in git must have every file tracked and unchanged; one kept by DVC
    must have its ``data/raw/<campaign>.dvc`` committed in git (``dvc status`` has already
    checked that the files match it).
    """
    rel = f"data/raw/{campaign}"
    if not (root / rel).is_dir():
        raise ReleaseError(f"{rel}: no such campaign folder")
    dirty = _git(root, "status", "--porcelain", "--untracked-files=all", "--", rel, f"{rel}.dvc").strip()
    if dirty:
        lines = dirty.splitlines()
        raise ReleaseError(f"{rel}: raw data not committed ({len(lines)} path(s), e.g. {lines[0].strip()}); "
                           "commit it to git or `dvc add` it and commit the .dvc file")
    if (root / f"{rel}.dvc").exists():
        if not _git(root, "ls-files", "--", f"{rel}.dvc").strip():
            raise ReleaseError(f"{rel}.dvc is not in git")
        return "dvc"
    if not _git(root, "ls-files", "--", rel).strip():
        raise ReleaseError(f"{rel}: neither in git nor tracked by DVC")
    return "git"


def _params(root):
    path = root / "params.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}


def _versions():
    """Versions of the software that ran the pipeline and made the release."""
    import platform
    from importlib import metadata

    from .. import __version__

    out = {"thruput": __version__, "python": platform.python_version()}
    for dist in ("dvc", "xarray", "numpy", "pandas", "scipy", "netCDF4"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def _dir_size(path):
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def _remote_reference(root, campaign, how):
    """What replaces a large campaign's raw logs: the DVC remote, the .dvc file and every
    file's sha256 (so the files fetched later can be checked one by one)."""
    rel = f"data/raw/{campaign}"
    remote = _dvc(root, "remote", "list").stdout.split()
    dvc_file = root / f"{rel}.dvc"
    return {"campaign": campaign, "path": rel, "kept_by": how,
            "dvc_remote": {"name": remote[0], "url": remote[1]} if len(remote) >= 2 else None,
            "dvc_file": yaml.safe_load(dvc_file.read_text(encoding="utf-8")) if dvc_file.exists() else None,
            "git_commit": _git(root, "rev-parse", "HEAD").strip(),
            "fetch": f"git checkout <commit> && dvc pull {rel}.dvc" if how == "dvc" else f"git checkout <commit> -- {rel}",
            "files": [{"path": p, "sha256": h, "bytes": (root / rel / p).stat().st_size}
                      for p, h in numbers.raw_files(root / rel).items()]}


def _studies(root):
    """The source studies the ledger checks: seed, title, source, url (if declared)."""
    from .. import studies as registry

    out = []
    for seed in registry.SEEDS:
        info = registry.page(seed)
        out.append({"seed": seed, "title": info["title"], "source": info.get("source", ""),
                    "url": info.get("url", "")})
    return out


def _stages(root):
    """``dvc.lock``'s stages: name -> cmd, deps, outs (paths as the project names them)."""
    lock = root / "dvc.lock"
    if not lock.exists():
        return {}
    data = yaml.safe_load(lock.read_text(encoding="utf-8")) or {}
    out = {}
    for name, stage in (data.get("stages") or {}).items():
        deps = [d["path"] for d in stage.get("deps", [])]
        deps += list((stage.get("params") or {}).keys())
        outs = [o["path"] for o in stage.get("outs", [])]
        times = [(root / o).stat().st_mtime for o in outs if (root / o).exists()]
        end = (dt.datetime.fromtimestamp(max(times), dt.timezone.utc).replace(microsecond=0).isoformat()
               if times else None)
        out[name] = {"cmd": stage.get("cmd", ""), "deps": deps, "outs": outs, "end": end}
    return out


def _write_tables(root, folder, campaigns):
    """Each campaign's run table (``tables/<c>.csv``) and its table description."""
    import xarray as xr

    from ..site.datapackage import campaign_table

    tables = []
    (folder / "tables").mkdir(exist_ok=True)
    for name in campaigns:
        nc = root / "data" / "processed" / f"{name}.nc"
        if not nc.exists():
            continue
        with xr.open_dataset(nc) as ds:
            ds.load()
        df = campaign_table(ds)
        units = df.attrs.get("units", {})
        described = {c: str(ds[c].attrs.get("long_name", "")) for c in df.columns if c in ds.variables}
        path = f"tables/{name}.csv"
        df.to_csv(folder / path, index=False, lineterminator="\n")
        sources = [{"title": f"raw logs of {name}", "path": f"data/raw/{name}"}]
        tables.append({"path": path, "title": ds.attrs.get("title", name), "sources": sources,
                       "schema": describe.table_schema(df, units, described)})
    return tables


def _csv_table(folder, rel, title, description="", units=None, texts=None):
    import pandas as pd

    df = pd.read_csv(folder / rel, dtype=str, keep_default_na=False)
    converted = df.copy()
    for c in df.columns:                  # a column of numbers only is numeric
        if c in (texts or ()):
            continue
        values = pd.to_numeric(df[c].replace("", None), errors="coerce")
        if values.notna().sum() == (df[c] != "").sum() and (df[c] != "").any():
            converted[c] = values
    return {"path": rel, "title": title, "description": description,
            "schema": describe.table_schema(converted, units or {})}


#: Columns of numbers.csv.
NUMBER_COLUMNS = ("id", "kind", "campaign", "comparison", "claim", "what", "value", "text", "unit", "source",
                  "function")


def _number_text(value):
    """A number as Table Schema reads it (``INF``, ``-INF``; empty for none)."""
    if value == "":
        return ""
    x = float(value)
    if x in (float("inf"), float("-inf")):
        return "INF" if x > 0 else "-INF"
    return repr(x)


def _write_numbers(folder, collected):
    (folder / "numbers.json").write_text(json.dumps(collected, ensure_ascii=False, separators=(",", ":")) + "\n",
                                         encoding="utf-8")
    with open(folder / "numbers.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(NUMBER_COLUMNS)
        for i in collected["items"]:
            v = i["value"]
            number = v if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
            text = "" if number != "" or v is None else str(v)
            fn = collected["sources"].get(i["source"], {}).get("function", "")
            w.writerow([i["id"], i["kind"], i.get("campaign", ""), i.get("comparison", ""), i.get("claim", ""),
                        i["what"], _number_text(number), text, i["unit"], i["source"], fn])


def _previous(root, name, version, previous):
    """The release to diff against: ``previous`` (a version or folder), else the highest
    version below ``version`` under release/ (None for the first)."""
    base = root / RELEASE_DIR
    if previous:
        return resolve(root, previous, name)
    def key(v):
        return tuple(int(x) for x in v.split("-")[0].split("."))
    candidates = []
    for p in base.glob(f"{name}-*"):
        v = p.name[len(name) + 1:]
        if p.is_dir() and VERSION_RE.match(v) and key(v) < key(version) and (p / "numbers.json").exists():
            candidates.append((key(v), p))
    return max(candidates)[1] if candidates else None


def resolve(root, what, name=DEFAULT_NAME):
    """A release folder from a version (``1.0.0``) or a path."""
    path = Path(what)
    if path.is_dir():
        return path
    path = Path(root) / RELEASE_DIR / f"{name}-{what}"
    if not path.is_dir():
        raise ReleaseError(f"no release {what!r} (looked for {path})")
    return path


def _load_numbers(folder):
    if folder is None:
        return None
    path = Path(folder) / "numbers.json"
    if not path.exists():
        raise ReleaseError(f"{folder}: no numbers.json (not a thruput release)")
    return json.loads(path.read_text(encoding="utf-8"))


def diff_releases(a, b):
    """``changes.json`` between two release folders (a the older)."""
    return numbers.diff(_load_numbers(a), _load_numbers(b))


def _fmt(value, unit):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}" + (f" {unit}" if unit and unit != "1" else "")
    return str(value)


def changes_markdown(changes, version, previous):
    """CHANGES.md: the counts by kind and campaign, then the numbers one by one."""
    from collections import Counter

    lines = [f"# Changes in {version}", ""]
    lines.append(f"Since {previous}." if previous else "The first release: every number is new.")
    lines.append("")
    for section in ("added", "removed", "changed"):
        items = changes[section]
        lines.append(f"## {section.capitalize()}: {len(items)} numbers")
        lines.append("")
        by = Counter(f"{i['kind']} " + (i.get("campaign") or i.get("comparison") or f"study {i.get('claim', '')[:3]}")
                     for i in items)
        for what, n in sorted(by.items()):
            lines.append(f"- {what}: {n}")
        if items:
            lines += ["", "| number | old | new | source |", "| --- | --- | --- | --- |"]
            for i in items[:CHANGES_SHOWN]:
                src = i.get("source", {})
                where = src.get("function", "") if isinstance(src, dict) else str(src)
                lines.append(f"| `{i['id']}` | {_fmt(i['old'], i.get('unit'))} | {_fmt(i['new'], i.get('unit'))} "
                             f"| {where} |")
            if len(items) > CHANGES_SHOWN:
                lines.append(f"\n... and {len(items) - CHANGES_SHOWN} more in changes.json.")
        lines.append("")
    return "\n".join(lines)


def _copy(src, dst):
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst, symlinks=False)
    else:
        shutil.copy2(src, dst)


def _sha256sums(folder):
    lines = []
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name != "SHA256SUMS":
            lines.append(f"{sha256_file(p)}  {p.relative_to(folder).as_posix()}")
    (folder / "SHA256SUMS").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def make_release(root, version, name=DEFAULT_NAME, raw_limit=None, previous=None, check=True):
    """Write ``release/<name>-<version>/`` (see the module docstring) and return its path.

    Parameters
    ----------
    root : path-like
        The project (a git repository with the DVC pipeline, built).
    version : str
        ``MAJOR.MINOR.PATCH`` (optionally ``-tag``).
    name : str
        The release's name prefix.
    raw_limit : int, optional
        Bytes: a campaign whose raw logs are larger is shipped as a DVC remote reference.
    previous : str, optional
        The release (version or folder) to list changes against; default the highest
        earlier version under ``release/``.
    check : bool
        Refuse a stale pipeline or uncommitted raw data (only tests turn it off).

    Raises
    ------
    ReleaseError
        The version exists or is malformed, the pipeline is stale, raw data uncommitted.
    """
    root = Path(root).resolve()
    version = str(version)
    if not VERSION_RE.match(version):
        raise ReleaseError(f"bad version {version!r}: use MAJOR.MINOR.PATCH, e.g. 1.0.0")
    target = root / RELEASE_DIR / f"{name}-{version}"
    if target.exists():
        raise ReleaseError(f"{target.relative_to(root)} exists: a published version is never overwritten; "
                           "release a new version")
    _check_dvcignore(root)
    params = _params(root)
    campaigns = list(params.get("campaigns") or [])
    monitors = list(params.get("monitors") or [])
    comparisons = list((params.get("comparisons") or {}).keys())
    kept = {}
    if check:
        check_pipeline(root)
        for c in campaigns + monitors:
            kept[c] = check_raw_committed(root, c)
    prev = _previous(root, name, version, previous)

    part = root / RELEASE_DIR / f".{name}-{version}.part"
    if part.exists():
        shutil.rmtree(part)
    part.mkdir(parents=True)
    try:
        _assemble(root, part, version, name, campaigns, monitors, comparisons, kept, raw_limit, prev)
        part.rename(target)
    except BaseException:
        shutil.rmtree(part, ignore_errors=True)
        raise
    return target


def _assemble(root, folder, version, name, campaigns, monitors, comparisons, kept, raw_limit, prev):
    created = describe.now_iso()
    shipped = {}
    parts = []
    # the site
    if (root / "_site").is_dir():
        _copy(root / "_site", folder / "site")
        shipped["_site"] = "site"
        parts.append("site")
    # raw data, or a reference to it
    for c in campaigns + monitors:
        rel = f"data/raw/{c}"
        src = root / rel
        if not src.is_dir():
            continue
        if raw_limit is not None and _dir_size(src) > raw_limit:
            ref = folder / f"{rel}.remote.json"
            ref.parent.mkdir(parents=True, exist_ok=True)
            ref.write_text(describe.dumps(_remote_reference(root, c, kept.get(c, "git"))), encoding="utf-8")
            parts.append(f"{rel}.remote.json")
        else:
            _copy(src, folder / rel)
            shipped[rel] = rel
            parts.append(rel)
    # processed data, statistics, reports, published numbers, metrics
    files = []
    for sub in ("data/processed", "data/report"):
        for p in sorted((root / sub).glob("*")) if (root / sub).is_dir() else []:
            if p.is_dir() and p.suffix == ".zarr" and is_store(p):     # (a monitor's store, rollups, alerts)
                rel = f"{sub}/{p.name}.zip"
                zip_store(p, folder / rel)
                shipped[rel] = rel
                parts.append(rel)
                files.append({"path": rel, "title": f"{p.stem}: a Zarr store, zipped (open with "
                                                    "zarr.storage.ZipStore)"})
            elif p.is_file() and p.suffix in (".nc", ".csv", ".json"):
                rel = f"{sub}/{p.name}"
                _copy(p, folder / rel)
                shipped[rel] = rel
                parts.append(rel)
                if p.suffix == ".nc":
                    files.append({"path": rel, "title": f"{p.stem}: netCDF (groups of a statistics product, "
                                                        "or a normalized campaign)"})
    shipped["data/processed"] = "data/processed"
    for extra in ("data/published", "data/metrics.json"):
        if (root / extra).exists():
            _copy(root / extra, folder / extra)
            shipped[extra] = extra
            parts.append(extra)
    (folder / "pipeline").mkdir()
    for f in PIPELINE_FILES:
        if (root / f).exists():
            _copy(root / f, folder / "pipeline" / f)
            shipped[f] = f"pipeline/{f}"
    parts.append("pipeline")
    # every published number, and what changed
    collected = numbers.collect(root, campaigns + monitors, comparisons)
    _write_numbers(folder, collected)
    changes = numbers.diff(_load_numbers(prev), collected)
    (folder / "changes.json").write_text(json.dumps(changes, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    prev_version = prev.name[len(name) + 1:] if prev else None
    (folder / "CHANGES.md").write_text(changes_markdown(changes, version, prev_version), encoding="utf-8")
    parts += ["numbers.json", "numbers.csv", "changes.json", "CHANGES.md"]
    # tables and metadata
    tables = _write_tables(root, folder, campaigns)
    parts.append("tables")
    tables.append(_csv_table(folder, "numbers.csv", "Every published number",
                             "each campaign statistic, comparison and ledger verdict, with its unit and source",
                             texts=("id", "kind", "campaign", "comparison", "claim", "what", "text", "unit",
                                    "source", "function")))
    if (folder / "data/processed/reproduction.csv").exists():
        tables.append(_csv_table(folder, "data/processed/reproduction.csv",
                                 "Reproduction ledger of the source studies' published numbers",
                                 texts=("seed", "claim", "note", "quote", "check", "inputs", "judgement")))
    for seed_csv in sorted((folder / "data/published").glob("seed_*.csv")):
        tables.append(_csv_table(folder, f"data/published/{seed_csv.name}",
                                 f"Published numbers of source study {seed_csv.stem[5:]}",
                                 texts=("id", "seed", "quote", "window", "date", "streams")))
    studies = _studies(root)
    cff = yaml.safe_load((root / "CITATION.cff").read_text(encoding="utf-8")) if (root / "CITATION.cff").exists() else {}
    authors = [a.get("name") or " ".join(filter(None, (a.get("given-names"), a.get("family-names"))))
               for a in cff.get("authors", [])] or ["The thruput developers"]
    meta = {"name": f"{name}-data", "title": cff.get("title", f"{name}: network throughput campaigns"),
            "version": version, "created": created,
            "description": (f"Release {version}: the raw logs, normalized data, statistics and report site of "
                            f"{len(campaigns) + len(monitors)} campaign(s), and the reproduction ledger of "
                            f"{len(studies)} source studies; every number with its unit and source (numbers.csv)."),
            "contributors": authors, "keywords": cff.get("keywords", []),
            "sources": [{"title": f"{s['source']}: {s['title']}" if s["source"] else s["title"],
                         **({"path": s["url"]} if s.get("url") else {})} for s in studies]}
    out_cff = describe.citation(cff or {"cff-version": "1.2.0", "title": meta["title"],
                                        "message": "If you use this data package, please cite it as below.",
                                        "authors": [{"name": n} for n in authors]},
                                version, created[:10], studies)
    (folder / "CITATION.cff").write_text(yaml.safe_dump(out_cff, sort_keys=False, allow_unicode=True),
                                         encoding="utf-8")
    parts.append("CITATION.cff")
    (folder / ".zenodo.json").write_text(describe.dumps(describe.zenodo(meta, studies)), encoding="utf-8")
    parts.append(".zenodo.json")
    package = describe.datapackage(folder, tables, files, meta)
    (folder / "datapackage.json").write_text(describe.dumps(package), encoding="utf-8")
    parts.append("datapackage.json")
    crate = describe.ro_crate(folder, parts, _stages(root), shipped, _versions(), meta)
    (folder / "ro-crate-metadata.json").write_text(describe.dumps(crate), encoding="utf-8")
    _sha256sums(folder)
