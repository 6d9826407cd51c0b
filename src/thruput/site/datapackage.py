"""The site's data page files: each campaign's normalized data (netCDF, CSV; a monitor
campaign's runs as CSV), the reproduction ledger, a Frictionless ``datapackage.json`` and
``CITATION.cff``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import xarray as xr

from .. import guard
from ..campaign.store import STATS_SUFFIX, zip_store  # (STATS_SUFFIX: the name ending of a statistics product)
from ..hashing import sha256_file

__all__ = ["export", "campaign_table", "DESCRIPTOR"]

#: The Frictionless descriptor of the package.
DESCRIPTOR = "datapackage.json"


def _sha256(path):
    return sha256_file(path)


def campaign_table(ds):
    """The run-level table of a campaign Dataset as a DataFrame (numeric variables that share
    the dimensions of its main variable), with units in ``df.attrs['units']``."""
    main = "throughput" if "throughput" in ds else max(ds.data_vars, key=lambda v: ds[v].size)
    dims = ds[main].dims
    names = [v for v in ds.data_vars if ds[v].dims == dims and ds[v].dtype.kind in "fiub"]
    df = ds[names].to_dataframe().reset_index()
    df.attrs["units"] = {c: ds[c].attrs.get("units", "") for c in df.columns if c in ds.variables}
    return df


def _fields(df):
    kinds = {"f": "number", "i": "integer", "u": "integer", "b": "boolean", "M": "datetime"}
    units = df.attrs.get("units", {})
    return [{"name": c, "type": kinds.get(df[c].dtype.kind, "string"),
             **({"unit": units[c]} if units.get(c) else {})} for c in df.columns]


#: Products beside the campaigns in data/processed: name ending -> (resource label, title).
PRODUCTS = {
    STATS_SUFFIX: ("statistics", "statistics product (one netCDF group per table of the campaign's page)"),
    ".health.nc": ("health", "monitor alert state of every slot, breaches, verdicts, SLA (one group per table)"),
    ".rollups.nc": ("rollups", "monitor rollups: 5 min, 1 h, 1 day summaries per path, direction and test"),
}
#: Products kept as Zarr stores (the pipeline appends to them), published as one zip each
#: (a Zarr ZipStore: ``xarray.open_zarr(zarr.storage.ZipStore(path, mode="r"), group=...)``).
STORES = {
    ".health.zarr": ("health", "monitor alert state of every slot, breaches, verdicts, SLA (a zipped Zarr "
                               "store, one group per table)"),
    ".rollups.zarr": ("rollups", "monitor rollups: 5 min, 1 h, 1 day summaries per path, direction and test "
                                 "(a zipped Zarr store, one group per resolution and series)"),
}


def _campaign_of(name):
    """The campaign a file of data/processed belongs to (``veth-1g.stats.nc`` ->
    ``veth-1g``)."""
    for suffix in (*PRODUCTS, *STORES, ".nc", ".zarr"):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def export(processed, out, project_root=".", campaigns=None):
    """Copy and convert the processed data into ``out`` and write ``out/datapackage.json``.

    Parameters
    ----------
    processed : path-like
        ``data/processed``: ``<campaign>.nc`` files, monitor stores ``<campaign>.zarr``
        and ``reproduction.csv``.
    out : path-like
        The site's ``data/`` folder (emptied of what an earlier export left).
    campaigns : collection of str, optional
        The campaigns to publish (params.yaml's ``campaigns`` and ``monitors``); default:
        every one in ``processed``. A campaign taken out of params.yaml leaves its files
        in data/processed, and out of the package.
    """
    processed, out, root = Path(processed), Path(out), Path(project_root)
    if out.is_dir() and (out / DESCRIPTOR).exists():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    resources = []
    keep = (lambda p: True) if campaigns is None else (lambda p: _campaign_of(p.name) in set(campaigns))
    for nc in sorted(p for p in processed.glob("*.nc") if keep(p)):
        product = next(((suffix, *what) for suffix, what in PRODUCTS.items() if nc.name.endswith(suffix)), None)
        if product:
            suffix, label, title = product
            shutil.copy2(nc, out / nc.name)
            resources.append({"name": f"{nc.name[:-len(suffix)]}-{label}", "path": nc.name,
                              "format": "netcdf", "mediatype": "application/x-netcdf",
                              "hash": f"sha256:{_sha256(out / nc.name)}", "bytes": (out / nc.name).stat().st_size,
                              "title": title})
            continue
        with xr.open_dataset(nc) as ds:
            ds.load()
        name = nc.stem
        shutil.copy2(nc, out / nc.name)
        common = {"title": ds.attrs.get("title", name),
                  "sources": _sources(name, _flat_strings(ds, "source") + _flat_strings(ds, "ping_source"))}
        resources.append({"name": f"{name}-netcdf", "path": nc.name, "format": "netcdf",
                          "mediatype": "application/x-netcdf", "hash": f"sha256:{_sha256(out / nc.name)}",
                          "bytes": (out / nc.name).stat().st_size, **common})
        resources.append(_csv_resource(f"{name}-csv", out / f"{name}.csv", campaign_table(ds), **common))
    for store in sorted(p for p in processed.glob("*.zarr") if keep(p)):
        product = next(((suffix, *what) for suffix, what in STORES.items() if store.name.endswith(suffix)), None)
        if product:
            suffix, label, title = product
            zipped = zip_store(store, out / f"{store.name}.zip")
            resources.append({"name": f"{store.name[:-len(suffix)]}-{label}", "path": zipped.name,
                              "format": "zarr", "mediatype": "application/zip",
                              "hash": f"sha256:{_sha256(zipped)}", "bytes": zipped.stat().st_size, "title": title})
        else:
            resources.append(_monitor_runs(store, out))
    ledger = processed / "reproduction.csv"
    if ledger.exists():
        shutil.copy2(ledger, out / ledger.name)
        resources.append({"name": "reproduction", "path": ledger.name, "format": "csv",
                          "mediatype": "text/csv", "hash": f"sha256:{_sha256(out / ledger.name)}",
                          "bytes": ledger.stat().st_size,
                          "title": "Reproduction ledger of the source studies' published numbers"})
    cff = root / "CITATION.cff"
    if cff.exists():
        shutil.copy2(cff, out / cff.name)
    package = {"name": "thruput-data", "title": "thruput: normalized network throughput campaigns",
               "licenses": [{"name": "CC-BY-4.0", "path": "https://creativecommons.org/licenses/by/4.0/"}],
               "resources": resources}
    (out / DESCRIPTOR).write_text(json.dumps(package, indent=1) + "\n")
    return package


def _monitor_runs(store, out):
    """A monitor campaign's runs as a CSV resource, one row per run (its probes stay in
    the Zarr store, ``data/processed/<name>.zarr``, which is too large to copy whole)."""
    from ..campaign.store import open_store

    name = store.name[:-len(".zarr")]
    ds = open_store(store, chunks={})
    ds = ds.drop_dims([d for d in ds.dims if d != "run"]).load()
    table = campaign_table(ds)
    for column in ("outcome", "reason", "source", "source_sha256"):     # what failed, and provenance
        if column in ds:
            table[column] = ds[column].values.astype(str)
    return _csv_resource(f"{name}-runs-csv", out / f"{name}-runs.csv", table,
                         title=ds.attrs.get("title", name),
                         description=f"one row per run; every probe is in the Zarr store "
                                     f"data/processed/{store.name} (thruput.open_campaign('{name}'))",
                         sources=_sources(name, _flat_strings(ds, "source")))


def _csv_resource(name, csv, table, **about):
    """Write ``table`` to ``csv``; its resource ``name`` with its schema and ``about`` it.
    Text cells a spreadsheet would run as a formula (a run id or reason starting with
    ``=``, ``+``, ``-``, ``@``) are written with a leading ``'`` (:func:`thruput.guard.spreadsheet_safe`)."""
    table = table.copy()
    for column in table.columns:
        if table[column].dtype == object or pd.api.types.is_string_dtype(table[column].dtype):
            table[column] = table[column].map(guard.spreadsheet_safe)
    table.to_csv(csv, index=False)
    return {"name": name, "path": csv.name, "format": "csv", "mediatype": "text/csv",
            "hash": f"sha256:{_sha256(csv)}", "bytes": csv.stat().st_size,
            "schema": {"fields": _fields(table)}, **about}


def _sources(name, files):
    """The raw files of campaign ``name`` a resource comes from (the first 2000, sorted)."""
    return [{"title": s, "path": f"data/raw/{name}/{s}"} for s in sorted(set(files))[:2000]]


def _flat_strings(ds, name):
    if name not in ds:
        return []
    return [s for s in ds[name].values.ravel().astype(str) if s and s != "nan"]
