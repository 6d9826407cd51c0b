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
raw file and its sha256 (``source``, ``source_sha256``). :func:`normalize_monitor` reads
the rows it does not hold yet in batches (here, or on the workers of a dask cluster:
:func:`thruput.parallel.iter_batches`) and writes them wave by wave
(:data:`WAVE_BATCHES` batches each): the first wave of a new store with ``to_zarr``, the
others into the run rows they add (the arrays resized, then ``to_zarr(region=...)``). A
new store on a cluster is written by the workers instead, each unit of a wave's rows
into its own region (:func:`write_unit`). A changed row or raw file already in the store
is an error (:class:`StoreError`), never a silent rewrite.

Beside the store, ``<name>.zarr.files.csv`` (:func:`record_path`) remembers each stored
raw file's ``path,size,mtime_ns,sha256`` as last found right: an append ``os.stat``s every
stored file (:func:`stat_files`) and hashes only those whose size or modification time changed,
the way git and DVC decide what to hash again. The file is plain CSV and may be deleted
at any time (every file is then hashed once).

Appends keep the Dataset exactly what a full normalize would give (same values, same
chunks, same files; a test checks): runs that arrive out of time order, or ping runs with
more probes than the store's ``probe`` dimension holds, make the store be rewritten whole
(from the store itself, no raw file read again).
"""

from __future__ import annotations

import itertools
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import ThruputError
from ..hashing import sha256_file
from ..monitor import reader as mon

__all__ = ["StoreError", "write_store", "append_store", "open_store", "normalize_monitor",
           "write_netcdf", "open_product", "write_product", "product_tables", "NETCDF_ENGINE", "STATS_SUFFIX",
           "verify_sources", "record_path", "load_record", "save_record", "stat_files",
           "ZARR_FORMAT", "TIME_ENCODING", "run_chunk", "compute_chunks", "is_store",
           "write_table", "append_table", "finish_tables", "table_attrs", "table_coords", "open_table"]

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
#: Batches joined per wave: this process gathers this many batches' fragments (in
#: order, while the workers read the next ones), joins them and writes or appends them,
#: so its memory holds about ``WAVE_BATCHES`` x ``monitor.BATCH_ROWS`` runs whatever the
#: archive's size. A multiple of :data:`MAX_RUN_CHUNK` runs, so waves fill whole chunks
#: (and a unit of a new store written by the workers is a chunk of its own).
WAVE_BATCHES = 4


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
    :data:`WAVE_BATCHES` x :data:`~thruput.monitor.reader.BATCH_ROWS` runs fill whole chunks. Per-run variables take
    :data:`MAX_RUN_CHUNK`."""
    runs = max(1, min(MAX_RUN_CHUNK, CHUNK_BYTES // (8 * max(n_probe, 1))))
    return 1 << (int(runs).bit_length() - 1)


#: Variables of a few known values stored as int8 codes, with the names in the attrs
#: ``flag_values``/``flag_meanings`` (CF; ``none`` for ``""``, the padding past a ping
#: run's last probe) and decoded by :func:`open_store`: ten million probe statuses as
#: variable-length strings would take most of a normalize's writing time. A monitor
#: batch gives them as codes already (:data:`thruput.monitor.reader.STATUS_CODES`).
CODED = {"rtt_status": mon.STATUS_CODES}
#: ``flag_meanings`` word for the empty string.
_NONE = mon.NO_STATUS


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
    return xr.Variable(var.dims, codes, var.attrs | mon.status_flags(names))


def _decode_codes(ds):
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
    tmp = _create(ds, path)
    if path.exists():
        shutil.rmtree(path)
    os.replace(tmp, path)
    return path


def _create(ds, path):
    """Write ``ds`` as a new store at ``<path>.part`` (replacing one there); returns it."""
    tmp = path.with_name(path.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    chunk = run_chunk(ds.sizes.get("probe", 0))
    _for_zarr(ds.drop_encoding()).to_zarr(tmp, mode="w", zarr_format=ZARR_FORMAT, consolidated=True,
                                          encoding=_encoding(ds, chunk))
    return tmp


def open_store(path, chunks=None):
    """Open a Zarr store: lazily (dask) with ``chunks`` (``{}`` = the store's), else loaded.

    Strings come back as NumPy's variable-length ``StringDType``; loaded Datasets get
    ``<U`` strings as :func:`thruput.open_campaign` builds them.
    """
    ds = xr.open_zarr(path, consolidated=True, chunks=chunks if chunks is not None else None)
    if chunks is None:
        ds = ds.load()
    ds = _decode_codes(ds)
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


def _table_encoding(table, dim):
    """Chunks along ``dim`` (:data:`TABLE_CHUNK`; whole along the others) and times as int64
    nanoseconds (:data:`TIME_ENCODING`: appends never round them)."""
    encoding = {}
    for name, var in table.variables.items():
        enc = {"chunks": tuple(TABLE_CHUNK if d == dim else max(n, 1) for d, n in zip(var.dims, var.shape))}
        if var.dtype.kind == "M":
            enc.update(TIME_ENCODING, dtype="int64")
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


# -- appends -------------------------------------------------------------------------------

def append_store(ds, path, *, checked=False):
    """Append the runs of ``ds`` to the store at ``path`` along ``run``.

    ``ds.attrs`` replace the store's (the caller merges them: line totals, manifest rows).
    The store is rewritten whole (from itself) when ``ds`` has more probes than the store
    or runs earlier than its last, so that the result is the Dataset a full normalize
    would give. Otherwise the run arrays are resized to hold the new runs and ``ds`` is
    written into those rows (``to_zarr(region=...)``); the attrs and consolidated
    metadata come last, so an append cut short before them leaves the store as readers
    saw it, and the next one writes the same rows again.

    Parameters
    ----------
    checked : bool, default False
        The caller has made sure no run of ``ds`` is stored already.

    Raises
    ------
    StoreError
        If a run id of ``ds`` is already in the store.
    """
    import zarr

    group = zarr.open_consolidated(str(path), mode="r")
    if not checked:
        _refuse_stored_runs(path, group["run"][:], ds["run"].values)
    _refuse_older(path, group, ds.data_vars)
    n_runs, width = group["rtt"].shape
    last = np.datetime64(int(group["time"][n_runs - 1]), "ns") if n_runs else None
    if ds.sizes["probe"] > width or (last is not None and ds["time"].values[0] < last):
        whole = mon.combine([open_store(path), _decode_codes(ds.copy())])
        whole = whole.assign_coords(probe=np.arange(whole.sizes["probe"]))
        for name in ds.variables:
            whole[name].attrs = ds[name].attrs
        whole.attrs = ds.attrs
        return write_store(whole, path)
    ds = mon.pad_probes(ds, width)
    resize_runs(path, ds, n_runs + ds.sizes["run"])
    write_region(ds, path, n_runs)
    put_attrs(path, ds.attrs)
    return Path(path)


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


def _refuse_older(path, stored, names):
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


def _refuse_stored_runs(path, stored, runs):
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
        found = _stat_each(directory, sources[:STAT_PROBE])
        slow = time.perf_counter() - t0 > SLOW_STAT * len(found)
        sources, threads = sources[STAT_PROBE:], STAT_THREADS if slow else 1
    else:
        found = []
    n = max(1, threads)
    if n == 1:
        found += _stat_each(directory, sources)
    else:
        cuts = [len(sources) * k // n for k in range(n + 1)]
        with ThreadPoolExecutor(n, thread_name_prefix="thruput-stat") as pool:
            found += [x for got in pool.map(_stat_each, [directory] * n,
                                            [sources[a:b] for a, b in zip(cuts, cuts[1:])]) for x in got]
    numbers = np.array(found, dtype=np.int64).reshape(-1, 2)
    return numbers[:, 0], numbers[:, 1]


def _stat_each(directory, names):
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


def read_stat_batch(directory, rows):
    """``(fragment, stats)`` of one batch: :func:`~thruput.monitor.reader.read_batch` of
    ``rows`` (:class:`~thruput.monitor.reader.MonitorRow` or plain tuples of its fields),
    and each row's file's ``(size, mtime_ns)`` (an int64 array, ``-1`` for none) taken
    just before the batch is read, by the worker that reads it."""
    rows = list(map(tuple.__new__, itertools.repeat(mon.MonitorRow), rows))
    stats = np.array(_stat_each(directory, [r.path for r in rows]), dtype=np.int64).reshape(-1, 2)
    return mon.read_batch(directory, rows), stats


def _plain_rows(batch):
    """A batch's rows as plain tuples: pickled at C speed (a named tuple's pickling runs
    Python for each row), rebuilt by :func:`read_stat_batch`."""
    return list(map(tuple, batch))


def _fragments(pairs, stats):
    """The fragments of :func:`read_stat_batch`'s ``pairs``, their stats appended to ``stats``."""
    for fragment, stat in pairs:
        stats.append(stat)
        yield fragment


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


# -- normalize ------------------------------------------------------------------------------

def _check_prefix(directory, out, stored, text, digest):
    """The rows the store holds must be the first rows of runs.csv (``text``, whose
    :class:`~thruput.monitor.reader.ManifestDigest` is ``digest``), unchanged."""
    n = int(stored.attrs["manifest_rows"])
    if digest.upto(n) == stored.attrs["manifest_sha256"]:
        return
    rows, _ = mon.read_monitor_manifest(directory, text=text)   # only now: to say which rows
    runs = stored["run"].values.astype(object).astype(str)
    shas = dict(zip(runs, stored["source_sha256"].values.astype(object).astype(str)))
    listed = {r.run: r for r in rows}
    problems = [f"runs.csv line {listed[r].line}: {r}: sha256 {listed[r].sha256[:12]}..., "
                f"stored {shas[r][:12]}..." for r in runs if r in listed and listed[r].sha256 != shas[r]]
    problems += [f"run {r} is stored but no longer in runs.csv" for r in runs if r not in listed]
    raise StoreError(f"{out}: the first {n} rows of {Path(directory) / 'runs.csv'} changed "
                     "since they were stored (rows are only ever appended); "
                     + ("; ".join(problems[:5]) or "rows were edited or reordered")
                     + f". Delete {out} to normalize anew")


def normalize_monitor(directory, out, *, workers=None, scheduler=None, client=None,
                      verify=True):
    """Bring the Zarr store ``out`` up to date with monitor campaign ``directory``.

    A new store is written from every row; an existing one gets the rows of runs.csv it
    does not hold yet, appended wave by wave (:data:`WAVE_BATCHES` batches each), or the
    store is rewritten with them when they start before its last run or hold a wider ping
    run.

    Parameters
    ----------
    directory, out : path-like
    workers, scheduler, client
        Where the batches are read: :func:`thruput.parallel.cluster`.
    verify : {True, "all", False}
        Check that the raw files the store already holds are unchanged (a file changed in
        place is an error): by default those whose size or modification time differ from
        :func:`record_path`'s are hashed again; ``"all"`` hashes every one; False none.
        The rows themselves are always checked against ``manifest_sha256``.

    Returns
    -------
    dict
        ``runs_added`` (this call), ``runs`` and ``files_read`` (in the store now),
        ``appended`` (False for a new store), ``runs_added_disagreeing`` (runs added with
        a failed check of their tool's own totals: ``tool_checks_failed > 0``),
        ``rebuilt`` (why a store was written anew from every row, or ``""``: one written
        by another :data:`monitor.MONITOR_VERSION`), ``metadata_updated`` (the top-level
        keys of campaign.yaml that changed since the store's copy, replaced by the one
        there now, with or without new rows; ``[]`` if none).

    Raises
    ------
    StoreError
        For changed rows or files already stored, or runs stored twice.
    thruput.errors.ThruputError
        For a bad campaign.yaml, runs.csv or raw file, naming file and line.
    """
    from ..parallel import MIN_BATCHES_FOR_CLUSTER, cluster, iter_batches
    from .metadata import load_metadata

    out = Path(out)
    metadata = load_metadata(directory)
    start, base, rebuilt = 0, None, ""
    if is_store(out):      # (no index of the run ids: only some arrays are read, lazily)
        base = xr.open_zarr(out, consolidated=True, chunks=None, create_default_indexes=False)
        if base.attrs.get("campaign") != metadata["name"]:
            raise StoreError(f"{out}: holds campaign {base.attrs.get('campaign')!r}, not {metadata['name']!r}")
        if base.sizes.get("run", 0) != int(base.attrs.get("manifest_rows", -1)):
            raise StoreError(f"{out}: holds {base.sizes.get('run', 0)} runs but records "
                             f"{base.attrs.get('manifest_rows')} rows of runs.csv: an append was "
                             f"cut short after its attrs were written. Delete {out} to normalize anew")
        version = base.attrs.get("monitor_version", 1)
        if version != mon.MONITOR_VERSION:      # read by another reader: read all anew
            rebuilt = (f"the store was written by monitor reader version {version}, this is "
                       f"version {mon.MONITOR_VERSION}: every run read again")
            base = None
    record = load_record(out)
    text = mon.read_manifest_text(directory)
    digest = mon.ManifestDigest(text)
    if base is not None:
        start = int(base.attrs["manifest_rows"])
    try:
        rows, _, times = mon.read_monitor_manifest(directory, start, text=text, times=True)
    except ThruputError:
        if base is not None:                # a stored row's change is said first
            _check_prefix(directory, out, base, text, digest)
        raise
    rows, times = mon.in_time_order(rows, times)
    checked = record.iloc[:0]
    if base is not None:
        _check_prefix(directory, out, base, text, digest)
        if rows:
            _refuse_stored_runs(out, base["run"].values, [r.run for r in rows])
    sources = [r.path for r in rows]
    pieces = mon.batches(rows)
    if client is None and len(pieces) < MIN_BATCHES_FOR_CLUSTER:
        workers = scheduler = None          # a cluster would take longer to start
    stats = []                              # (each batch's files' size and time, in order)
    with cluster(workers, scheduler, client) as c:
        where = {"client": c} if c is not None else {}
        found = None
        if c is not None and base is None and rows and _in_units():
            try:
                found = _write_units(c, directory, out, metadata, text, rows, pieces, stats)
            except _Wider:                      # (read again below, written by this process)
                stats.clear()
        # (two waves ahead: the workers go on reading while this process writes a wave)
        read = None if found is not None else iter_batches(
            read_stat_batch, str(directory), map(_plain_rows, pieces), client=c, ahead=2 * WAVE_BATCHES)
        try:
            if found is not None:
                attrs, disagreeing = found
            elif base is not None and verify:   # (while the workers read the first batches)
                problems, checked = verify_sources(directory, base,
                                                   record=None if verify == "all" else record, **where)
                if problems:
                    raise StoreError(f"{out}: {len(problems)} raw files changed since they were "
                                     f"stored: {'; '.join(problems[:5])}. Delete {out} to normalize anew")
            elif base is not None:
                checked = record
            if found is None:
                attrs, disagreeing = _write_waves(out, metadata, text, digest, base, start, rows,
                                                  _fragments(read, stats))
        finally:
            close = getattr(read, "close", None)
            if close is not None:
                close()
    found = np.concatenate(stats) if stats else np.empty((0, 2), dtype=np.int64)
    size, mtime = found[:, 0], found[:, 1]
    new = pd.DataFrame({"size": size, "mtime_ns": mtime, "sha256": [r.sha256 for r in rows]},
                       index=pd.Index(sources, name="path", dtype=object))
    new = new[new.index != ""]
    save_record(out, pd.concat([checked, new]) if len(checked) else new)
    stored = int(base.sizes.get("run", 0)) if base is not None else 0
    metadata_updated = _changed_keys(base.attrs.get("metadata"), attrs.get("metadata")) if base is not None else []
    return {"runs_added": len(rows), "runs": stored + len(rows), "appended": base is not None,
            "files_read": int(attrs["files_read"]), "runs_added_disagreeing": disagreeing,
            "rebuilt": rebuilt, "metadata_updated": metadata_updated}


def _changed_keys(old, new):
    """The top-level keys whose values differ between two campaign.yaml copies (JSON texts,
    as a store's attrs hold them), sorted."""
    import json

    if old == new:
        return []
    old, new = (json.loads(text) if text else {} for text in (old, new))
    return sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))


def _refresh_campaign_attrs(out, base, metadata, manifest):
    """The attrs of the store ``out`` (``base``) with those that come from campaign.yaml
    (``metadata``: its name, title and the whole of it, which the statistics read: events,
    periods) as they are now, and those of runs.csv (``manifest``:
    :meth:`~thruput.monitor.reader.ManifestDigest.attrs`), written if any differs.
    Returns the attrs."""
    attrs, fresh = dict(base.attrs), mon.campaign_attrs(metadata) | manifest
    if all(attrs.get(k) == v for k, v in fresh.items()):
        return attrs
    attrs.update(fresh)
    put_attrs(out, attrs)
    return attrs


def _write_waves(out, metadata, text, digest, base, start, rows, fragments):
    """Join the ``fragments`` of ``rows`` wave by wave and write or append them to the
    store ``out`` (``base``: the store as it was, holding ``start`` rows, or None).
    Returns the store's attrs after the last write, and how many of the runs written have
    a failed check of their tool's own totals."""
    if base is None and not rows:
        ds = mon.validate_monitor(mon.empty(metadata, text))
        write_store(ds, out)
        return ds.attrs, 0
    if not rows:        # no run to add, but campaign.yaml may have changed (its events, say)
        return _refresh_campaign_attrs(out, base, metadata, digest.attrs(start)), 0
    attrs, added, disagreeing = (dict(base.attrs) if base is not None else None), 0, 0
    for wave in mon.batches(mon.batches(rows), WAVE_BATCHES):
        joined = mon.combine([next(fragments) for _ in wave])
        n = start + added + sum(len(b) for b in wave)
        # (strings kept Python objects, as the store writes them: no round trip through
        # ``<U`` of ten million probe statuses a 10^5-run campaign)
        ds = mon.finish(joined, metadata, text, n, digest, fixed_width=False)
        del joined
        if attrs is not None:
            ds.attrs.update(mon.merge_ledgers([attrs, ds.attrs]))
        mon.validate_monitor(ds)
        if attrs is None:                   # a new store (or one rebuilt: replaced)
            write_store(ds, out)
        else:
            append_store(ds, out, checked=True)
        attrs = ds.attrs
        added = n - start
        disagreeing += mon.disagreeing(ds)
    return attrs, disagreeing


# -- a new store written by the workers ------------------------------------------------------

class _Wider(Exception):
    """A unit holds a ping run longer than the store's ``probe`` dimension."""


def _in_units():
    """Whether a unit (:data:`WAVE_BATCHES` batches) fills whole chunks of every run
    array, so that workers can write units at once (:func:`_write_units`)."""
    unit = WAVE_BATCHES * mon.BATCH_ROWS
    return unit % MAX_RUN_CHUNK == 0 and MAX_RUN_CHUNK & (MAX_RUN_CHUNK - 1) == 0


def _write_units(client, directory, out, metadata, text, rows, pieces, stats):
    """Write a new store ``out`` on the cluster of ``client``: each unit of
    :data:`WAVE_BATCHES` batches of ``rows`` (``pieces``, in order) is read and written
    into its own region (chunks of its own: :func:`_in_units`) by the workers
    (:func:`write_unit`), so no run passes through this process.

    The store is made at ``<out>.part`` from the first batch, its ``probe`` dimension that
    batch's longest ping run (the first unit's, if it has none) and its run arrays as long
    as every row; the attrs come last (the units' line accounting added up, the
    campaign's, runs.csv's), then the rename. Returns ``(attrs, runs with a failed check of their tool's totals)``;
    each unit's files' ``(size, mtime_ns)`` (:func:`read_stat_batch`) are appended to ``stats``.

    Raises
    ------
    _Wider
        A later unit holds a longer ping run (nothing is left: the caller writes the store
        itself); any reader's error as it raised it (nothing is left either).
    """
    from collections import deque

    import zarr

    from ..parallel import submit

    pieces = iter(pieces)
    units = iter(lambda: list(itertools.islice(pieces, WAVE_BATCHES)), [])
    size = WAVE_BATCHES * mon.BATCH_ROWS
    ahead = max(2, 2 * len(client.scheduler_info().get("workers", {})))
    reads, writes, outcomes = deque(), deque(), []
    part = None

    def read_next():
        for unit in units:
            reads.append([submit(client, read_stat_batch, str(directory), _plain_rows(b)) for b in unit])
            return

    try:
        for _ in range(ahead):
            read_next()
        first, _ = reads[0][0].result()
        width = int(first.sizes.get("probe", 0))
        if not width:                           # (no ping run in it: the first unit's longest)
            width = max(client.gather([submit(client, _probe_width, f, priority=1) for f in reads[0]]))
        # (a digest of its own: the caller's goes on from row 0 if a unit turns out wider)
        head = mon.finish(mon.combine([first], n_probe=width), metadata, text, len(rows),
                          mon.ManifestDigest(text), fixed_width=False)
        del first
        part = _create(mon.validate_monitor(head), Path(out))
        resize_runs(part, head, len(rows))
        zarr.consolidate_metadata(str(part))    # (the lengths the workers' writes open)
        start = 0
        while reads or writes:
            while reads:                        # (each unit written once the store is there)
                writes.append((submit(client, write_unit, str(part), start, width, metadata,
                                      *reads[0], priority=1), reads.popleft()))
                start += size
            done = writes[0][0].result()
            _let_go([writes.popleft()])
            if done["wider"]:
                raise _Wider(done["wider"])
            outcomes.append(done)
            stats.append(done["stats"])
            read_next()
        attrs = dict(head.attrs)               # (in the order a single writer gives them)
        attrs.update(mon.merge_ledgers([o["attrs"] for o in outcomes]))
        put_attrs(part, attrs)
        if Path(out).exists():
            shutil.rmtree(out)
        os.replace(part, out)
        return attrs, sum(o["disagreeing"] for o in outcomes)
    except BaseException:
        _let_go(list(writes) + [(None, unit) for unit in reads], cancel=True)
        reads.clear()
        writes.clear()
        if part is not None:
            shutil.rmtree(part, ignore_errors=True)
        raise


def _let_go(sent, cancel=False):
    """Let go of (and ``cancel``) the futures of ``sent``, ``(write, its reads)`` pairs (the
    write or None): a future kept by a traceback would keep its batch on the cluster."""
    for write, unit in sent:
        for future in ([write] if write is not None else []) + list(unit):
            if cancel:
                future.cancel()
            future.release()


def _probe_width(read):
    """The ``probe`` dimension of a batch's fragment (``read``: :func:`read_stat_batch`'s
    pair; a task beside it on its worker)."""
    return int(read[0].sizes.get("probe", 0))


def write_unit(path, start, width, metadata, *reads):
    """Join the batch fragments of one unit (``reads``: :func:`read_stat_batch`'s pairs)
    and write them into rows ``start`` on of the store at ``path`` (:func:`write_region`),
    ``width`` probes wide: a worker's task of :func:`_write_units`. Returns ``{"attrs":
    the unit's line accounting, "disagreeing": its runs with a failed check of their
    tool's totals, "stats": its files' (size, mtime_ns), "wider": its longest ping run if
    longer than width (nothing written), else 0}``."""
    joined = mon.combine([fragment for fragment, _ in reads], n_probe=width)
    if joined.sizes["probe"] > width:
        return {"wider": int(joined.sizes["probe"])}
    ledger = dict(joined.attrs)
    ds = mon.validate_monitor(mon.finish(joined, metadata, "", 0, "", fixed_width=False))
    write_region(ds, path, start, consolidated=True)
    return {"attrs": ledger, "disagreeing": mon.disagreeing(ds), "wider": 0,
            "stats": np.concatenate([stat for _, stat in reads])}
