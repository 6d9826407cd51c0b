"""Normalized campaigns on disk: Zarr stores that grow by appending, and netCDF files;
and the products written from them (statistics, health, rollups: netCDF files, or Zarr
stores of tables that grow along ``time``, :func:`write_table` and :func:`append_table`).

A monitor campaign (and any campaign too large for one netCDF file) is stored as a Zarr
store, ``data/processed/<name>.zarr``, written by xarray: Zarr format 2 with consolidated
metadata (one read of ``.zmetadata`` opens it), chunked along ``run`` (:func:`run_chunk`
runs a chunk) with the whole ``probe`` dimension in each chunk. Strings are
variable-length, so an appended run may carry a longer reason or path than any before it.
Times are stored as int64 nanoseconds since 1970-01-01 (:data:`TIME_ENCODING`), so appends
never round them.

The store records in its attrs how many rows of ``runs.csv`` it holds
(``manifest_rows``) and the sha256 of those rows (``manifest_sha256``), and per run the
raw file and its sha256 (``source``, ``source_sha256``); a monitor campaign's store is
written and appended by :func:`thruput.monitor.normalize.normalize_monitor`.

Beside the store, ``<name>.zarr.files.csv`` (:func:`record_path`) remembers each stored
raw file's ``path,size,mtime_ns,sha256`` as last found right: an append ``os.stat``s every
stored file (:func:`stat_files`) and hashes only those whose size or modification time changed,
the way git and DVC decide what to hash again. The file is plain CSV and may be deleted
at any time (every file is then hashed once).

"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from ..contract import PROBE_STATUSES
from ..errors import ThruputError
from ..hashing import sha256_file

__all__ = ["StoreError", "write_store", "open_store",
           "write_netcdf", "open_product", "write_product", "product_tables", "NETCDF_ENGINE", "STATS_SUFFIX",
           "verify_sources", "record_path", "load_record", "save_record", "stat_files",
           "ZARR_FORMAT", "TIME_ENCODING", "run_chunk", "compute_chunks", "is_store",
           "create_part", "decode_codes", "resize_runs", "write_region", "put_attrs", "refuse_older",
           "refuse_stored_runs", "stat_each", "STATUS_CODES", "NO_STATUS", "status_flags",
           "write_table", "append_table", "finish_tables", "table_attrs", "table_coords", "open_table",
           "ROLLUP_FREQS", "open_rollup", "label_codes", "LABEL_WINDOW", "run_values", "zip_store", "ZIP_DATE"]

ZARR_FORMAT = 2
#: Engine of the netCDF files the pipeline writes: netCDF-C writes no timestamps, so the
#: same campaign gives the same bytes (DVC compares outputs by hash).
NETCDF_ENGINE = "netcdf4"
#: File name ending of a campaign's statistics product beside its ``<campaign>.nc``.
STATS_SUFFIX = ".stats.nc"
#: CF attrs of the int64 nanoseconds a datetime64 variable is stored as: exact to the
#: nanosecond whatever is appended later.
TIME_ENCODING = {"units": "nanoseconds since 1970-01-01", "calendar": "proleptic_gregorian"}
#: Target size of one chunk of a (run, probe) variable, bytes.
CHUNK_BYTES = 8 * 2**20
#: Runs in one chunk of a per-run variable, and the most in one of a (run, probe) one: a
#: wave's runs (8192 float64 are 64 KiB): Zarr's cost is more per chunk written than per
#: byte.
MAX_RUN_CHUNK = 8192


class StoreError(ThruputError):
    """A store does not match its campaign (changed rows or files), or cannot be appended."""


def is_store(path):
    """True if ``path`` is a Zarr store (a directory with ``.zmetadata``)."""
    return (Path(path) / ".zmetadata").is_file()


def compute_chunks(path):
    """``chunks=`` for opening the store at ``path`` to compute on it (``thruput
    pipeline stats``): one stored chunk of its per-run variables per dask chunk (8192
    runs; of 100 probes, about 6.5 MB of the widest array)."""
    import zarr

    group = zarr.open_consolidated(str(path), mode="r")
    return {"run": int(group["time"].chunks[0])}


def run_chunk(n_probe):
    """Runs per chunk of a (run, probe) variable of ``n_probe`` probes: a power of two, at
    most :data:`CHUNK_BYTES` and :data:`MAX_RUN_CHUNK` runs; so the waves of
    :data:`~thruput.monitor.normalize.WAVE_BATCHES` x :data:`~thruput.monitor.reader.BATCH_ROWS` runs fill whole chunks. Per-run variables take
    :data:`MAX_RUN_CHUNK`."""
    runs = max(1, min(MAX_RUN_CHUNK, CHUNK_BYTES // (8 * max(n_probe, 1))))
    return 1 << (int(runs).bit_length() - 1)


#: ``rtt_status`` is kept as int8 codes into these names from a monitor batch to the store
#: (CF ``flag_values``/``flag_meanings``, ``none`` for ``""``: the padding past a run's
#: last probe). Code ``k + 1`` is :data:`thruput.formats.ping.STATUS_NAMES` ``[k]``.
STATUS_CODES = ("",) + PROBE_STATUSES
#: ``flag_meanings`` word for the empty string.
NO_STATUS = "none"


def status_flags(names=STATUS_CODES):
    """The CF attrs that name the codes of ``names``: ``flag_values``, ``flag_meanings``."""
    return {"flag_values": list(range(len(names))),
            "flag_meanings": " ".join(n or NO_STATUS for n in names)}


#: Variables of a few known values stored as int8 codes, with the names in the attrs
#: ``flag_values``/``flag_meanings`` (CF; ``none`` for ``""``, the padding past a ping
#: run's last probe) and decoded by :func:`open_store`: ten million probe statuses as
#: variable-length strings would take most of a normalize's writing time. A monitor
#: batch gives them as codes already (:func:`thruput.monitor.reader.status_codes`).
CODED = {"rtt_status": STATUS_CODES}
_NONE = NO_STATUS


def _encode_codes(var, names):
    """``var`` (strings) as int8 codes into ``names``; a value not among them is an error."""
    values = np.asarray(var.values)
    # (pandas' factorize hashes every value once and only its few distinct values are
    # looked up among the names: 0.07 s for 8192 runs x 100 probes of object strings,
    # where get_indexer over every value took 0.3 s and a comparison with each name 0.15 s)
    found, distinct = pd.factorize(values.ravel())
    lookup = np.append(pd.Index(names).get_indexer(distinct), -1)     # (-1: None or NaN)
    codes = lookup[found].reshape(values.shape)
    known = codes >= 0
    codes = codes.astype(np.int8)
    if not known.all():
        raise StoreError(f"{var.attrs.get('long_name', '?')}: values other than {list(names)}: "
                         f"{sorted(set(values[~known].tolist()))[:5]}")
    return xr.Variable(var.dims, codes, var.attrs | status_flags(names))


def decode_codes(ds):
    """The :data:`CODED` variables of ``ds`` back to strings: lazily (object arrays) if
    they are dask arrays, else as ``<U`` strings."""
    for name in CODED:
        if name not in ds or "flag_meanings" not in ds[name].attrs:
            continue
        var = ds[name].variable
        names = np.array(["" if w == _NONE else w for w in var.attrs["flag_meanings"].split()], dtype=object)
        attrs = {k: v for k, v in var.attrs.items() if k not in ("flag_values", "flag_meanings")}
        data = var.data
        decoded = (data.map_blocks(names.__getitem__, dtype=object) if hasattr(data, "map_blocks")
                   else names[np.asarray(data)].astype(str))
        ds[name] = xr.Variable(var.dims, decoded, attrs)
    return ds


def _for_zarr(ds):
    """``ds`` as a store holds it (:func:`_as_stored`)."""
    out = ds.copy()
    for name, var in ds.variables.items():
        stored = _as_stored(name, var)
        if stored is not var:
            out[name] = stored
    return out


def _as_stored(name, var):
    """The variable ``name`` (``var``) as a store holds it: strings as object arrays (Zarr
    variable-length strings, not fixed-width ``<U``), :data:`CODED` ones as codes, times
    as int64 nanoseconds since 1970 (:data:`TIME_ENCODING`; NaT is int64's least value,
    as xarray encodes it, and read back as NaT)."""
    if name in CODED:
        return var if var.dtype.kind in "iu" else _encode_codes(var, CODED[name])
    if var.dtype.kind == "M":
        ns = np.asarray(var.values).astype("datetime64[ns]").view(np.int64)
        return xr.Variable(var.dims, ns, var.attrs | TIME_ENCODING)
    return var.astype(object) if var.dtype.kind in "UT" else var


def _encoding(ds, chunk):
    encoding = {}
    for name, var in ds.variables.items():
        enc = {}
        if "run" in var.dims:
            runs = chunk if "probe" in var.dims else MAX_RUN_CHUNK
            enc["chunks"] = tuple(runs if d == "run" else ds.sizes[d] for d in var.dims)
        if enc:
            encoding[name] = enc
    return encoding


def write_store(ds, path):
    """Write ``ds`` as a new Zarr store at ``path`` (replacing one that is there).

    Written to ``<path>.part`` and renamed, so a store is never half written by this.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = create_part(ds, path)
    if path.exists():
        shutil.rmtree(path)
    os.replace(tmp, path)
    return path


def create_part(ds, path):
    """Write ``ds`` as a new store at ``<path>.part`` (replacing one there); returns it."""
    tmp = path.with_name(path.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    chunk = run_chunk(ds.sizes.get("probe", 0))
    _for_zarr(ds.drop_encoding()).to_zarr(tmp, mode="w", zarr_format=ZARR_FORMAT, consolidated=True,
                                          encoding=_encoding(ds, chunk))
    return tmp


#: Runs read at a time by :func:`label_codes` (32 stored chunks).
LABEL_WINDOW = 1 << 18


def label_codes(ds: xr.Dataset, name: str, runs: int = LABEL_WINDOW) -> tuple[np.ndarray, np.ndarray]:
    """A per-run label column of ``ds`` as ``(labels, codes)``: its distinct values sorted
    (NaN and None left out) and each run's int32 position among them (-1 for a missing
    label), read ``runs`` runs at a time (:func:`run_values`: straight from the store of a
    lazily opened one).

    A dask campaign's column is never held whole as Python strings: five million labels
    are 4 bytes a run as codes, against some 60 as ``str`` objects.
    """
    found: dict[Any, int] = {}                 # label -> first-seen code
    parts = []
    n = ds.sizes["run"]
    for a in range(0, max(n, 1), runs):
        codes, uniques = _factorized(run_values(ds, name, a, a + runs, strings=False).ravel())
        lookup = np.array([found.setdefault(u, len(found)) for u in uniques.tolist()] + [-1], np.int32)
        parts.append(lookup[codes])             # (factorize's -1: the appended -1)
    seen = list(found)
    kind = "f" if seen and all(isinstance(v, float) for v in seen) else "O"
    labels = np.asarray(seen, dtype=float if kind == "f" else object)
    order = np.argsort(labels, kind="stable") if labels.size else np.zeros(0, np.int64)
    rank = np.append(np.empty(labels.size, np.int32), np.int32(-1))
    rank[order] = np.arange(labels.size)
    codes = rank[np.concatenate(parts) if parts else np.zeros(0, np.int32)]
    return labels[order], codes


def _factorized(values):
    """``pandas.factorize`` of ``values`` (uniques as Python objects for strings); NumPy's
    variable-length strings are dictionary-encoded by Arrow (a fifth of the time)."""
    if values.dtype.kind == "T":
        import pyarrow as pa

        try:
            encoded = pa.array(values).dictionary_encode()
        except (TypeError, pa.ArrowException):    # (an Arrow that does not take StringDType)
            values = values.astype(object)
        else:
            return (encoded.indices.to_numpy(zero_copy_only=False),
                    np.asarray(encoded.dictionary.to_pylist(), dtype=object))
    codes, uniques = pd.factorize(values)
    return codes, (uniques.astype(object) if values.dtype.kind in "TU" else uniques)


def run_values(ds: xr.Dataset, name: str, start: int = 0, stop: int | None = None,
               strings: bool = True) -> np.ndarray:
    """The values of the per-run variable ``name`` of ``ds`` for runs ``[start, stop)``.

    Where ``ds`` was opened lazily from a Zarr store (:func:`open_store` with ``chunks``)
    and ``name`` is as stored (read, not computed on: :func:`_stored_column`), the runs
    are read with Zarr from the store at once (a third of the time of xarray and dask's
    chunk by chunk); else through xarray. Strings as objects, or with ``strings=False``
    as they come (NumPy's ``StringDType`` from a store).
    """
    n = ds.sizes["run"]
    stop = n if stop is None else min(stop, n)
    stored = _stored_column(ds, name)
    if stored is None:
        var = ds[name]
        values = np.asarray((var.isel(run=slice(start, stop)) if (start, stop) != (0, n) else var).values)
    else:
        array, first, view = stored
        values = array[first + start:first + stop]
        values = values.view(view) if view else values
    return values.astype(object) if strings and values.dtype.kind == "T" else values


#: Attributes of a stored array that xarray decodes nothing by (or only times, checked).
_PLAIN_ATTRS = {"_ARRAY_DIMENSIONS", "units", "long_name", "standard_name", "description", "comment",
                "coordinates", "calendar"}
#: Layers of a lazily opened variable's dask graph that read it from its store unchanged
#: (xarray's own names: the opened array, its chunks, dtype casts, slices along ``run``).
_READ_LAYERS = ("original-open_dataset-{}-", "open_dataset-{}-", "astype-", "getitem-")
#: The last Dataset whose runs were found in their store: (a weak reference to its run
#: index, source, the store's arrays opened so far, first run).
_FOUND: list[tuple[Any, str, dict, int | None]] = []


def _stored_column(ds, name):
    """``(zarr array, the store's position of the first run of ds, dtype to view as or
    None)`` where the per-run variable ``name`` of ``ds`` is read unchanged from the Zarr
    store ``ds`` was opened from (``ds.encoding["source"]``): its dask graph only reads,
    casts strings and slices, its dtype is the stored one (strings: any string dtype),
    the stored array's attrs ask xarray to decode nothing but a time of
    :data:`TIME_ENCODING` and its fill is NaN or none, and the runs of ``ds`` are the
    store's ``[first, first + n)`` (:func:`_first_stored_run`). Else None."""
    var = ds.variables.get(name)
    if var is None or var.dims != ("run",) or not type(var.data).__module__.startswith("dask"):
        return None
    prefixes = tuple(p.format(name) for p in _READ_LAYERS)
    if not all(layer.startswith(prefixes) for layer in var.data.dask.layers):
        return None
    found = _first_stored_run(ds)
    if found is None:
        return None
    arrays, first = found
    if name not in arrays:
        group = arrays["__group__"]
        arrays[name] = group[name] if name in group else None
    array = arrays[name]
    if array is None:
        return None
    attrs = dict(array.attrs)
    stored, fill = array.dtype, array.metadata.fill_value
    if set(attrs) - _PLAIN_ATTRS or array.ndim != 1 or array.shape[0] < first + ds.sizes["run"]:
        return None
    if "calendar" in attrs or var.dtype.kind == "M":
        time = all(attrs.get(k) == v for k, v in TIME_ENCODING.items())
        ok = time and var.dtype == np.dtype("datetime64[ns]") and stored == np.dtype(np.int64)
        return (array, first, "datetime64[ns]") if ok else None
    if var.dtype.kind in "OUT" and getattr(stored, "kind", "O") in "OT" and fill is None:
        return array, first, None
    if var.dtype.kind == "f" and stored == var.dtype and fill is not None and np.isnan(fill):
        return array, first, None
    return None


def _first_stored_run(ds):
    """``(arrays, first)`` where the runs of ``ds`` are those of the Zarr store it was
    opened from, ``[first, first + n)`` in order, else None: the store's run ids read
    :data:`LABEL_WINDOW` at a time, those of ``ds`` unique, the same in that range and
    none of them outside it. ``arrays``: the store's arrays opened so far by name (the
    group as ``"__group__"``). Remembered for the last Dataset's run index."""
    import weakref

    import zarr

    source, index = ds.encoding.get("source"), ds.indexes.get("run")
    if not isinstance(source, str) or index is None or not len(index) or not is_store(source):
        return None
    if _FOUND and _FOUND[0][0]() is index and _FOUND[0][1] == source:
        return None if _FOUND[0][3] is None else _FOUND[0][2:]
    group = zarr.open_consolidated(source, mode="r")
    first = _runs_at(group["run"], index) if "run" in group and index.is_unique else None
    _FOUND[:] = [(weakref.ref(index), source, {"__group__": group}, first)]
    return None if first is None else (_FOUND[0][2], first)


def _runs_at(stored, index):
    """Where the ids ``index`` (unique) are ``stored`` (a Zarr array of run ids), in order
    and nowhere else, or None."""
    n, total, first = len(index), stored.shape[0], None

    def ids(a, b):
        values = stored[a:b]
        return values.astype(object) if values.dtype.kind == "T" else values

    for a in range(0, total, LABEL_WINDOW):
        window = ids(a, a + LABEL_WINDOW)
        if first is None:
            at = np.flatnonzero(window == index[0])
            if at.size:
                first = a + int(at[0])
                if first + n > total:
                    return None
        # (every window: the ids in [first, first + n) are those of index, the others none of them)
        lo, hi = (first, first + n) if first is not None else (total, total)
        inside = slice(max(lo - a, 0), max(min(hi - a, window.size), 0))
        mine = np.asarray(index[a + inside.start - lo:a + inside.stop - lo], dtype=window.dtype) \
            if inside.stop > inside.start else window[:0]
        if not np.array_equal(window[inside], mine):
            return None
        outside = np.concatenate([window[:inside.start], window[inside.stop:]]) if inside.stop > inside.start else window
        if outside.size and index.isin(outside).any():     # (a hash of the window's, not of index)
            return None
    return first


def open_store(path, chunks=None):
    """Open a Zarr store: lazily (dask) with ``chunks`` (``{}`` = the store's), else loaded.

    Strings come back as NumPy's variable-length ``StringDType``; loaded Datasets get
    ``<U`` strings as :func:`thruput.open_campaign` builds them.
    """
    ds = xr.open_zarr(path, consolidated=True, chunks=chunks if chunks is not None else None)
    if chunks is None:
        ds = ds.load()
    ds = decode_codes(ds)
    if chunks is None:
        ds = ds.assign({n: v.astype(object).astype(str) for n, v in ds.data_vars.items() if v.dtype.kind == "T"})
    else:  # lazy: object strings per chunk (NumPy's StringDType does not cast to "<U" in place)
        ds = ds.assign({n: v.astype(object) for n, v in ds.data_vars.items() if v.dtype.kind == "T"})
    # coordinates are small and in memory either way: "<U" strings, as open_campaign builds them
    ds = ds.assign_coords({n: v.astype(object).astype(str) for n, v in ds.coords.items() if v.dtype.kind == "T"})
    return ds


# -- netCDF files and statistics products -------------------------------------------------

def write_netcdf(ds, out, encoding=None):
    """Write ``ds`` (a Dataset or DataTree) to ``out`` atomically (a temporary file
    renamed), reproducibly; ``encoding`` as :meth:`xarray.Dataset.to_netcdf` takes it."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    ds.to_netcdf(tmp, engine=NETCDF_ENGINE, **({} if encoding is None else {"encoding": encoding}))
    os.replace(tmp, out)


def open_product(path):
    """A statistics product (``.stats.nc``, catalogue, comparison, study effects) as an
    in-memory DataTree: every variable read, the file closed."""
    import xarray as xr

    with xr.open_datatree(path, engine=NETCDF_ENGINE) as tree:
        tree.load()
        # DataTree.load (xarray 2026.9) skips a variable named like a group of the tree
        # (``bound/rtt`` beside the group ``rtt``): it stayed lazy on the closed file, and
        # reading it later reopened the file, which can crash HDF5 once the file was replaced.
        for node in tree.subtree:
            for variable in node.variables.values():
                variable.load()
        return tree


def write_product(tree, out, encoding=None):
    """Write a DataTree (or Dataset, or a dict of tables: one group each) to ``out``
    atomically, reproducibly (:func:`write_netcdf`). Every statistics product, rollup and
    health file of the pipeline is written here."""
    if isinstance(tree, dict):
        tree = xr.DataTree.from_dict({f"/{name}": table for name, table in tree.items()})
    write_netcdf(tree, out, encoding)
    return Path(out)


def product_tables(path):
    """The tables of a product written from a dict (:func:`write_product`), e.g. the
    rollups: ``{"<group path>": Dataset}``, loaded (the groups that hold variables)."""
    return {node.path.lstrip("/"): node.to_dataset() for node in open_product(path).subtree if node.data_vars}


# -- tables that grow along time (the rollups) ---------------------------------------------

#: Bins in one chunk of a table of :func:`write_table` along its growing dimension.
TABLE_CHUNK = 4096


#: Blosc settings of a table's numbers: LZ4 at level 1 without byte shuffle (a third
#: faster than Zarr's default, level 5 shuffled, and smaller on mostly-NaN float64 bins,
#: whose NaNs' bytes shuffling scatters).
TABLE_BLOSC = {"cname": "lz4", "clevel": 1, "shuffle": 0}


def _table_encoding(table, dim):
    """Chunks along ``dim`` (:data:`TABLE_CHUNK`; whole along the others), numbers
    compressed by :data:`TABLE_BLOSC` and times as int64 nanoseconds
    (:data:`TIME_ENCODING`: appends never round them)."""
    import numcodecs

    encoding = {}
    for name, var in table.variables.items():
        enc = {"chunks": tuple(TABLE_CHUNK if d == dim else max(n, 1) for d, n in zip(var.dims, var.shape))}
        if var.dtype.kind == "M":
            enc.update(TIME_ENCODING, dtype="int64")
        if var.dtype.kind in "biufM":
            enc["compressors"] = (numcodecs.Blosc(**TABLE_BLOSC),)
        encoding[name] = enc
    return encoding


def write_table(table, path, group, dim="time"):
    """Write ``table`` as the group ``group`` of the Zarr store ``path`` (made if there is
    none; a group there already is replaced), chunked along ``dim``. The store's
    consolidated metadata is written by :func:`finish_tables`."""
    table = _for_zarr(table.drop_encoding())
    table.to_zarr(path, group=group, mode="w", zarr_format=ZARR_FORMAT, consolidated=False,
                  encoding=_table_encoding(table, dim))


def append_table(table, path, group, start, dim="time"):
    """Write ``table`` into the group ``group`` of the Zarr store ``path`` from position
    ``start`` of ``dim`` on: the stored ``[start, end)`` is overwritten in place and the
    arrays are lengthened for the rest (Zarr's ``resize`` and slice writes: only the
    chunks from ``start`` on are written). The other dimensions' labels must be the
    stored ones; the variables without ``dim`` and the group's attrs are left as stored."""
    import zarr

    stored = zarr.open_group(str(path), path=group, mode="r+", use_consolidated=False, zarr_format=ZARR_FORMAT)
    end = int(stored[dim].shape[0])
    if start > end:
        raise StoreError(f"{path}/{group}: cannot write from {dim} {start}: it holds {end}")
    stop = start + table.sizes[dim]
    table = _for_zarr(table.drop_encoding())
    for name, var in table.variables.items():
        if dim not in var.dims:
            continue
        array, axis = stored[name], var.dims.index(dim)
        if array.shape[axis] != stop:
            array.resize(tuple(stop if i == axis else n for i, n in enumerate(array.shape)))
        where = tuple(slice(start, stop) if i == axis else slice(None) for i in range(var.ndim))
        array[where] = np.asarray(var.values)


def finish_tables(path, attrs):
    """The last step of a write of :func:`write_table` / :func:`append_table`: the store's
    own attrs (what its tables were built from), then its consolidated metadata."""
    import zarr

    zarr.open_group(str(path), mode="a", zarr_format=ZARR_FORMAT).attrs.put(attrs)
    zarr.consolidate_metadata(str(path))


def table_attrs(path):
    """The attrs :func:`finish_tables` gave the Zarr store ``path`` (``{}`` if there is none)."""
    import zarr

    if not is_store(path):
        return {}
    return dict(zarr.open_consolidated(str(path), mode="r").attrs)


def table_coords(path, groups, names):
    """The coordinates ``names`` of each group ``groups`` of the Zarr store ``path``
    (:func:`write_table`), read from one open of its consolidated metadata: ``{group:
    {name: ndarray}}`` (times as datetime64[ns], strings as objects)."""
    import zarr

    root = zarr.open_consolidated(str(path), mode="r")
    out = {}
    for group in groups:
        arrays = {}
        for name in names:
            array = root[f"{group}/{name}"]
            values = array[:]
            if array.attrs.get("units") == TIME_ENCODING["units"]:
                values = np.asarray(values, np.int64).view("datetime64[ns]")
            elif values.dtype.kind in "TUO":
                values = np.asarray(values, dtype=object)
            arrays[name] = values
        out[group] = arrays
    return out


def open_table(path, group):
    """The group ``group`` of a product (a Zarr store of :func:`write_table`, or a netCDF
    file of :func:`write_product`), lazily: close it after use (``with``)."""
    if is_store(path):
        return xr.open_zarr(path, group=group, consolidated=True, chunks=None)
    return xr.open_dataset(path, group=group, engine=NETCDF_ENGINE)


#: The time every member of a zipped store is dated (the earliest a zip can hold).
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def zip_store(store: str | os.PathLike[str], zipped: str | os.PathLike[str]) -> Path:
    """The Zarr store directory ``store`` as the zip ``zipped`` (a Zarr ZipStore:
    ``xarray.open_zarr(zarr.storage.ZipStore(zipped, mode="r"))``): its files at their
    paths in the store, sorted, stored (the chunks are compressed already) and dated
    :data:`ZIP_DATE`, so the same store gives the same bytes. The data package and a
    release publish stores so."""
    import zipfile

    from .. import guard

    store, zipped = Path(store), Path(zipped)
    zipped.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        for path in sorted(p for p in store.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(store).as_posix(), ZIP_DATE)
            info.external_attr = 0o644 << 16
            z.writestr(info, guard.read_bytes(path, "member", root=store))     # (a chunk: a few MB at most)
    return zipped


# -- appends -------------------------------------------------------------------------------

def resize_runs(path, ds, end):
    """Lengthen the run arrays of the store at ``path`` (those of ``ds`` that start with
    ``run``) to ``end`` runs: metadata only, no chunk is written."""
    import zarr

    # (the arrays as the consolidated metadata has them: what readers see until the end)
    writable = zarr.open_group(str(path), mode="r+", use_consolidated=True, zarr_format=ZARR_FORMAT)
    for name, var in ds.variables.items():     # (each resized once: the group hands out
        if var.dims[:1] == ("run",):            # the consolidated shape)
            array = writable[name]
            array.resize((end, *array.shape[1:]))


def write_region(ds, path, start, consolidated=False):
    """Write the runs of ``ds`` into rows ``start`` on of the store at ``path``, whose run
    arrays are long enough already (:func:`resize_runs`): ``to_zarr(region=...)``. Two
    writers may write at once only into distinct chunks (regions starting and ending at
    multiples of every run chunk, or at the end). ``consolidated``: the store's
    consolidated metadata has the arrays' lengths (one file read opens it, not two for
    each array)."""
    import zarr

    end = start + ds.sizes["run"]
    rows = _for_zarr(ds.drop_vars([n for n, v in ds.variables.items() if v.dims[:1] != ("run",)]))
    rows.attrs = {}
    # (xarray's region writes leave out the index, ``run``: written here)
    index = zarr.open_array(str(path), path="run", mode="r+", zarr_format=ZARR_FORMAT)
    index[start:end] = rows["run"].values.astype(object)
    rows.drop_indexes("run").drop_vars("run").drop_encoding().to_zarr(
        path, region={"run": slice(start, end)}, consolidated=consolidated, zarr_format=ZARR_FORMAT)


def refuse_older(path, stored, names):
    """StoreError if any of the variables ``names`` is not among ``stored`` (the names the
    store at ``path`` holds): a store written by an older thruput, whose runs lack it."""
    missing = sorted(name for name in names if name not in stored)
    if missing:
        raise StoreError(f"{path}: has no {', '.join(missing)}: it was written by an older "
                         f"thruput; delete it and normalize again (the raw files are the source)")


def put_attrs(path, attrs):
    """Replace the attrs of the store at ``path`` with ``attrs``, then consolidate its
    metadata: the last step of every write, the one that shows it to readers."""
    import zarr

    zarr.open_group(str(path), mode="r+", use_consolidated=False).attrs.put(attrs)
    zarr.consolidate_metadata(str(path))


def refuse_stored_runs(path, stored, runs):
    """StoreError if any of ``runs`` is among ``stored`` (the run ids of the store at ``path``)."""
    again = sorted(set(map(str, runs)).intersection(map(str, np.asarray(stored, dtype=object).tolist())))
    if again:
        raise StoreError(f"{path}: runs already stored: {', '.join(again[:5])}"
                         f"{' ...' if len(again) > 5 else ''}")


# -- the record of checked raw files -------------------------------------------------------

#: Columns of :func:`record_path`.
RECORD_COLUMNS = ("path", "size", "mtime_ns", "sha256")
#: Threads that ``os.stat`` the raw files where each stat waits on a file server (the
#: kernel's stat lets go of the GIL). Where stat is served from memory, one thread: the
#: hand-offs of the GIL between several cost more than the calls (a 1 % append at 2 x 10^5
#: stored files: 3.4-3.7 s in one thread, 4.3-5.1 s in four, the workers busy).
STAT_THREADS = 4
#: The files stat-ed first, in one thread, to time a stat; a mean above :data:`SLOW_STAT`
#: (s) is a wait, and the rest go to :data:`STAT_THREADS` threads.
STAT_PROBE = 512
SLOW_STAT = 20e-6


def record_path(out):
    """The record of the raw files of the store at ``out``: ``<store>.files.csv`` beside
    it (columns :data:`RECORD_COLUMNS`; a path relative to the campaign folder, its size
    in bytes and modification time in ns when last found to have the sha256)."""
    out = Path(out)
    return out.with_name(out.name + ".files.csv")


def load_record(out):
    """:func:`record_path` of ``out`` as a DataFrame indexed by path (empty if there is
    none or it cannot be read: every file is then hashed)."""
    empty = pd.DataFrame({"size": pd.Series(dtype="int64"), "mtime_ns": pd.Series(dtype="int64"),
                          "sha256": pd.Series(dtype=object)}, index=pd.Index([], name="path", dtype=object))
    try:
        frame = pd.read_csv(record_path(out), engine="pyarrow",
                            dtype={"path": str, "size": "int64", "mtime_ns": "int64", "sha256": str})
    except (OSError, ValueError, pd.errors.ParserError):
        return empty
    if tuple(frame.columns) != RECORD_COLUMNS:
        return empty
    return frame.drop_duplicates("path", keep="last").set_index("path")


def save_record(out, frame):
    """Write ``frame`` (indexed by path, columns size, mtime_ns, sha256) as the record of
    the store at ``out``, whole, through a temporary file."""
    path = record_path(out)
    tmp = path.with_name(path.name + ".part")

    import pyarrow as pa
    import pyarrow.csv as pa_csv

    frame = frame[frame["size"] >= 0].reset_index()[list(RECORD_COLUMNS)]    # (in store order)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    header = (",".join(RECORD_COLUMNS) + "\n").encode()
    with open(tmp, "wb") as f:          # (pyarrow's writer: a tenth of the csv module's time)
        f.write(header)
        try:
            pa_csv.write_csv(table, f, pa_csv.WriteOptions(include_header=False, quoting_style="none"))
        except pa.ArrowInvalid:         # a path with a comma, quote or line break: strings quoted
            f.seek(len(header))
            f.truncate()
            pa_csv.write_csv(table, f, pa_csv.WriteOptions(include_header=False))
    os.replace(tmp, path)


def stat_files(directory, sources, threads=None):
    """``(size, mtime_ns)`` arrays of each file ``sources`` (relative to ``directory``),
    ``-1`` where there is none; ``os.stat`` in one thread, or in :data:`STAT_THREADS` where
    the first :data:`STAT_PROBE` took longer than :data:`SLOW_STAT` each (``threads``: so
    many, whatever the time)."""
    import time

    sources = list(sources)
    if threads is None:
        t0 = time.perf_counter()
        found = stat_each(directory, sources[:STAT_PROBE])
        slow = time.perf_counter() - t0 > SLOW_STAT * len(found)
        sources, threads = sources[STAT_PROBE:], STAT_THREADS if slow else 1
    else:
        found = []
    n = max(1, threads)
    if n == 1:
        found += stat_each(directory, sources)
    else:
        cuts = [len(sources) * k // n for k in range(n + 1)]
        with ThreadPoolExecutor(n, thread_name_prefix="thruput-stat") as pool:
            found += [x for got in pool.map(stat_each, [directory] * n,
                                            [sources[a:b] for a, b in zip(cuts, cuts[1:])]) for x in got]
    numbers = np.array(found, dtype=np.int64).reshape(-1, 2)
    return numbers[:, 0], numbers[:, 1]


def stat_each(directory, names):
    """``[(size, mtime_ns)]`` of each file ``names`` (relative to ``directory``), one after
    the other; ``(-1, -1)`` for none. Each name is looked up from the folder's descriptor
    (``dir_fd``) where the system has it: no path is joined per file."""
    top = os.fspath(directory)
    fd = None
    if os.stat in os.supports_dir_fd:
        try:
            fd = os.open(top, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            pass
    out = []
    try:
        for rel in names:
            try:
                st = (os.stat(rel, dir_fd=fd) if fd is not None else os.stat(os.path.join(top, rel))) \
                    if rel else None
            except (OSError, ValueError):
                st = None
            out.append((st.st_size, st.st_mtime_ns) if st is not None else (-1, -1))
    finally:
        if fd is not None:
            os.close(fd)
    return out


def _hash_batch(directory, paths):
    """sha256 of each file (``""`` if missing); a module function so workers can run it."""
    return [sha256_file(Path(directory) / rel, missing="") for rel in paths]


def verify_sources(directory, stored, *, record=None, **where):
    """Raw files of ``stored`` runs whose bytes changed or that are gone, as messages.

    Every file is hashed again (in batches, on the workers if ``where`` names a cluster),
    except, given ``record`` (:func:`load_record`), those whose size, modification time
    (ns) and sha256 are still the ones recorded there. A file altered in place changes its
    modification time and is hashed, and caught even where it still parses; only an edit
    that keeps size and time (``touch -r``) escapes, and ``record=None`` (``thruput
    campaign check``, ``normalize --verify-all``) hashes every file.

    Returns
    -------
    problems : list of str
    checked : pandas.DataFrame
        The stored files found right, as :func:`save_record` writes them.
    """
    from ..parallel import map_batches

    sources = np.asarray(stored["source"].values, dtype=object).astype(str)
    shas = np.asarray(stored["source_sha256"].values, dtype=object).astype(str)
    size, mtime = stat_files(directory, sources.tolist())
    stale = sources != ""
    if record is not None and len(record):
        known = record.reindex(sources)
        same = ((known["size"].to_numpy() == size) & (known["mtime_ns"].to_numpy() == mtime)
                & (known["sha256"].to_numpy() == shas))
        stale &= ~same
    todo = np.flatnonzero(stale)
    problems, bad = [], np.zeros(len(sources), dtype=bool)
    if todo.size:
        paths = sources[todo].tolist()
        parts = [paths[i:i + 4096] for i in range(0, len(paths), 4096)]
        now = [h for part in map_batches(_hash_batch, str(directory), parts, **where) for h in part]
        for i, rel, was, is_ in zip(todo, paths, shas[todo], now):
            if was == "":
                bad[i] = True               # runs.csv recorded no sha256: nothing to hold it to
            elif is_ == "":
                bad[i] = True
                problems.append(f"{Path(directory) / rel}: in the store but now missing")
            elif is_ != was:
                bad[i] = True
                problems.append(f"{Path(directory) / rel}: changed since it was stored "
                                f"(sha256 was {was[:12]}..., is {is_[:12]}...)")
    good = (sources != "") & ~bad & (size >= 0)
    checked = pd.DataFrame({"size": size[good], "mtime_ns": mtime[good], "sha256": shas[good]},
                           index=pd.Index(sources[good], name="path"))
    return problems, checked


# -- the rollups product (stats.rollups writes it; pages read it) --------------------------

#: Resolutions of the rollups product, finest first (pandas offsets; params.yaml
#: ``rollups: freqs``).
ROLLUP_FREQS = ("5min", "1h", "1D")


def open_rollup(path: str | os.PathLike[str], freq: str, kind: str, start: Any = None,
                end: Any = None) -> xr.Dataset:
    """One rollup (``<freq>/<kind>``) of a rollups product: a Zarr store of
    :func:`thruput.stats.rollups.write_rollups` or a netCDF file of
    :func:`write_product`, the bins of ``[start, end)`` only, loaded (a window is small).
    Labels come back as objects from either form."""
    with open_table(path, f"{freq}/{kind}") as ds:
        if start is not None or end is not None:
            ds = ds.sel(time=slice(start, end))
        if end is not None:                     # [start, end): the bin at end is left out
            ds = ds.isel(time=np.flatnonzero(ds["time"].values < np.datetime64(pd.Timestamp(end), "ns")))
        ds = ds.load()
    # (a Zarr store's strings come back as NumPy's StringDType: objects, as from netCDF)
    return ds.assign_coords({d: ds[d].values.astype(object) for d in ("path", "direction") if ds[d].dtype.kind == "T"})
