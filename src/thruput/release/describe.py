"""The metadata files of a release: a Frictionless Data Package v2 (``datapackage.json``),
an RO-Crate 1.1 (``ro-crate-metadata.json``) that also describes the pipeline run, and
``CITATION.cff`` and ``.zenodo.json`` for citing and depositing it.

Each function takes the release folder and what :mod:`thruput.release.build` knows, and
returns the descriptor (a dict) it writes; nothing here reads the project itself.
"""

from __future__ import annotations

import datetime as dt
import json
import mimetypes
from pathlib import Path

from ..hashing import sha256_file

__all__ = ["datapackage", "ro_crate", "citation", "zenodo", "table_schema",
           "DATAPACKAGE_PROFILE", "RO_CRATE_CONTEXT", "RO_CRATE_SPEC", "PROCESS_RUN_CRATE", "LICENSE"]

#: The profile of a Frictionless Data Package v2.
DATAPACKAGE_PROFILE = "https://datapackage.org/profiles/2.0/datapackage.json"
#: The RO-Crate version the metadata file follows, its JSON-LD context and spec.
RO_CRATE_CONTEXT = "https://w3id.org/ro/crate/1.1/context"
RO_CRATE_SPEC = "https://w3id.org/ro/crate/1.1"
#: The Process Run Crate profile (one CreateAction per pipeline stage).
PROCESS_RUN_CRATE = "https://w3id.org/ro/wfrun/process/0.5"
#: The data's licence (the code's is the project's LICENSE, BSD-3-Clause).
LICENSE = {"name": "CC-BY-4.0", "path": "https://creativecommons.org/licenses/by/4.0/",
           "title": "Creative Commons Attribution 4.0"}
#: Media types the standard library does not know.
_MEDIA = {".nc": "application/x-netcdf", ".zip": "application/zip", ".cff": "application/x-yaml", ".yaml": "application/x-yaml",
          ".yml": "application/x-yaml", ".lock": "application/x-yaml", ".md": "text/markdown",
          ".ipynb": "application/x-ipynb+json", ".ping": "text/plain", ".log": "text/plain"}
#: Frictionless field types of pandas dtype kinds.
_KINDS = {"f": "number", "i": "integer", "u": "integer", "b": "boolean", "M": "datetime"}


def media_type(path):
    """The media type of ``path`` by its name (text/plain for a log the registry does not know)."""
    suffix = Path(path).suffix.lower()
    return _MEDIA.get(suffix) or mimetypes.guess_type(Path(path).name)[0] or "application/octet-stream"


def table_schema(df, units=None, descriptions=None):
    """A Table Schema of a DataFrame: each column's type, its unit in the description and
    as the custom property ``unit`` (Table Schema v2 has no unit field of its own)."""
    units = units or {}
    descriptions = descriptions or {}
    fields = []
    for column in df.columns:
        kind = df[column].dtype.kind
        field = {"name": str(column), "type": _KINDS.get(kind, "string")}
        if kind == "b":
            field.update(trueValues=["True"], falseValues=["False"])
        unit = units.get(column)
        text = descriptions.get(column, "")
        if unit:
            field["unit"] = unit
            text = f"{text} [{unit}]".strip()
        if text:
            field["description"] = text
        fields.append(field)
    return {"fields": fields, "missingValues": [""]}


def _resource_name(path):
    """A resource name Data Package v2 allows (lower case, digits, ``-._``)."""
    name = "".join(c if c.isalnum() or c in "-._" else "-" for c in Path(path).as_posix().lower())
    return name.strip("-")


def datapackage(folder, tables, files, meta):
    """The Data Package v2 descriptor of a release.

    Parameters
    ----------
    folder : Path
        The release folder (paths are relative to it).
    tables : list of dict
        ``{"path", "title", "schema", "sources"?, "description"?}`` of each CSV table.
    files : list of dict
        ``{"path", "title"}`` of other data files (netCDF products).
    meta : dict
        ``name``, ``title``, ``version``, ``description``, ``created``, ``contributors``
        (names), ``sources`` (``{"title", "path"?}``).
    """
    resources = []
    for t in tables:
        path = folder / t["path"]
        resources.append({"name": _resource_name(t["path"]), "type": "table", "path": t["path"],
                          "format": "csv", "mediatype": "text/csv", "encoding": "utf-8",
                          "bytes": path.stat().st_size, "hash": f"sha256:{sha256_file(path)}",
                          "title": t["title"], **({"description": t["description"]} if t.get("description") else {}),
                          "schema": t["schema"], **({"sources": t["sources"]} if t.get("sources") else {})})
    for f in files:
        path = folder / f["path"]
        resources.append({"name": _resource_name(f["path"]), "path": f["path"], "format": path.suffix.lstrip("."),
                          "mediatype": media_type(path), "bytes": path.stat().st_size,
                          "hash": f"sha256:{sha256_file(path)}", "title": f["title"]})
    return {"$schema": DATAPACKAGE_PROFILE, "name": meta["name"], "title": meta["title"],
            "version": meta["version"], "description": meta["description"], "created": meta["created"],
            "licenses": [LICENSE],
            "contributors": [{"title": n, "roles": ["creator"]} for n in meta["contributors"]],
            "sources": meta["sources"], "keywords": meta.get("keywords", []), "resources": resources}


def software_id(name, version):
    """The absolute URI of a piece of software: its release on PyPI (python.org for Python)."""
    if name == "python":
        return f"https://www.python.org/downloads/release/python-{version.replace('.', '')}/"
    return f"https://pypi.org/project/{name}/{version}/"


def _software(versions):
    """Contextual entities of the software that ran the pipeline (id -> entity)."""
    out = {}
    for name, version in versions.items():
        ident = software_id(name, version)
        out[ident] = {"@id": ident, "@type": "SoftwareApplication", "name": name, "version": version,
                      "url": ident}
    return out


def _file_entity(folder, rel):
    path = folder / rel
    if path.is_dir():
        return {"@id": rel.rstrip("/") + "/", "@type": "Dataset", "name": rel.rstrip("/")}
    return {"@id": rel, "@type": "File", "name": Path(rel).name, "contentSize": str(path.stat().st_size),
            "encodingFormat": media_type(path), "sha256": sha256_file(path)}


def ro_crate(folder, parts, stages, shipped, versions, meta):
    """The RO-Crate 1.1 metadata of a release: the package and the pipeline run that made it.

    Parameters
    ----------
    folder : Path
        The release folder.
    parts : list of str
        Paths (relative to ``folder``) of the files and folders the root dataset has.
    stages : dict
        ``dvc.lock``'s stages: name -> ``{"cmd", "deps": [paths], "outs": [paths], "end"?}``
        (``end``: when its last output was written, ISO 8601).
    shipped : dict
        Project path -> its path in the release (``data/raw/veth-1g`` -> the same;
        ``params.yaml`` -> ``pipeline/params.yaml``); a path not in it is described by name.
    versions : dict
        Software name -> version (thruput, python, dvc, xarray, ...).
    meta : dict
        As for :func:`datapackage`, plus ``citation`` (the path of CITATION.cff).
    """
    graph = {}
    graph["ro-crate-metadata.json"] = {"@id": "ro-crate-metadata.json", "@type": "CreativeWork",
                                       "conformsTo": {"@id": RO_CRATE_SPEC}, "about": {"@id": "./"}}
    software = _software(versions)
    graph.update(software)
    tool = software_id("thruput", versions["thruput"])
    graph[tool]["softwareRequirements"] = [{"@id": k} for k in software if k != tool]
    graph["#license"] = {"@id": LICENSE["path"], "@type": "CreativeWork", "name": LICENSE["title"],
                         "identifier": LICENSE["name"]}
    for name in meta["contributors"]:
        graph[f"#{_resource_name(name)}"] = {"@id": f"#{_resource_name(name)}", "@type": "Organization", "name": name}
    for p in parts:
        e = _file_entity(folder, p)
        graph[e["@id"]] = e
    agents = [{"@id": f"#{_resource_name(n)}"} for n in meta["contributors"]]
    actions = []
    for name, stage in stages.items():
        action_id = f"#stage-{name}"
        refs = {}
        for key in ("deps", "outs"):
            ids = []
            for path in stage.get(key, []):
                ids.append(_reference(graph, folder, path, shipped, versions["thruput"]))
            refs[key] = ids
        graph[action_id] = {"@id": action_id, "@type": "CreateAction", "name": f"dvc stage {name}",
                            "description": stage["cmd"], "instrument": {"@id": tool}, "agent": agents[0],
                            "object": _one([{"@id": i} for i in refs["deps"]]),
                            "result": _one([{"@id": i} for i in refs["outs"]]),
                            **({"endTime": stage["end"]} if stage.get("end") else {})}
        actions.append({"@id": action_id})
    root = {"@id": "./", "@type": "Dataset", "name": meta["title"], "description": meta["description"],
            "version": meta["version"], "datePublished": meta["created"],
            "license": {"@id": LICENSE["path"]},
            "author": _one(agents), "publisher": agents[0],
            "conformsTo": {"@id": PROCESS_RUN_CRATE},
            "hasPart": [{"@id": k} for k, e in graph.items() if e.get("@type") in ("File", "Dataset")],
            "mentions": actions}
    graph[PROCESS_RUN_CRATE] = {"@id": PROCESS_RUN_CRATE, "@type": "CreativeWork", "name": "Process Run Crate",
                                "version": "0.5"}
    graph["#license"]["@id"] = LICENSE["path"]
    entities = [graph.pop("ro-crate-metadata.json"), root]
    entities += [e for k, e in graph.items()]
    return {"@context": RO_CRATE_CONTEXT, "@graph": _unique(entities)}


def _one(values):
    """A single value as itself (RO-Crate 1.1 prefers it to a one-element list)."""
    return values[0] if len(values) == 1 else values


def _unique(entities):
    seen, out = set(), []
    for e in entities:
        if e["@id"] not in seen:
            seen.add(e["@id"])
            out.append(e)
    return out


def _reference(graph, folder, path, shipped, version):
    """The @id of a stage's input or output: its file or folder in the release when
    shipped, else a contextual entity naming the project path (code at ``version``)."""
    rel = shipped.get(path)
    if rel is not None and (folder / rel).exists():
        e = _file_entity(folder, rel)
        graph.setdefault(e["@id"], e)
        return e["@id"]
    ident = f"#path-{_resource_name(path)}"
    kind = "SoftwareSourceCode" if path.startswith("src/") else "CreativeWork"
    graph.setdefault(ident, {"@id": ident, "@type": kind, "name": path,
                             "description": "a project path the release does not ship",
                             **({"version": version} if kind == "SoftwareSourceCode" else {})})
    return ident


def citation(cff, version, date, studies):
    """``CITATION.cff`` of a release: the project's, as a dataset under the data's licence
    with this version and date; the software it describes and every source study among its
    ``references``."""
    out = dict(cff)
    software = {"type": "software", "title": out.get("title", "thruput"), "version": out.get("version", ""),
                "license": out.get("license", "")} if out.get("type", "software") == "software" else None
    out.update({"type": "dataset", "version": str(version), "date-released": date, "license": LICENSE["name"]})
    refs = list(out.get("references") or [])
    if software:                            # the release is data; the code that made it is cited beside it
        refs.insert(0, {k: v for k, v in software.items() if v} | {"authors": out.get("authors", [])})
    titles = {r.get("title") for r in refs}
    for s in studies:
        if s["title"] not in titles:
            refs.append({"type": "report", "title": s["title"], "authors": [{"name": s["source"] or "unknown"}],
                         "notes": f"source study {s['seed']}: its published numbers are data/published/"
                                  f"seed_{s['seed']}.csv"})
    out["references"] = refs
    return out


def zenodo(meta, studies):
    """The ``.zenodo.json`` of a release (Zenodo's deposit metadata).

    The source studies have no persistent identifier to relate to; they are cited in
    ``references`` (their title and source, as the study pages give them), and
    ``related_identifiers`` hold the ones with a ``url`` declared in their page.yaml.
    """
    related = [{"identifier": s["url"], "relation": "isDerivedFrom", "resource_type": "publication-report",
                "scheme": "url"} for s in studies if s.get("url")]
    return {"title": meta["title"], "upload_type": "dataset", "version": meta["version"],
            "publication_date": meta["created"][:10], "description": meta["description"],
            "creators": [{"name": n} for n in meta["contributors"]], "license": LICENSE["name"].lower(),
            "keywords": meta.get("keywords", []), "related_identifiers": related,
            "references": [f"{s['source']}: {s['title']}" for s in studies]}


def now_iso():
    """The time of the release, UTC, to the second."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def dumps(obj):
    return json.dumps(obj, indent=1, ensure_ascii=False) + "\n"
