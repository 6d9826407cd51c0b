"""Normalized campaigns on disk: Zarr stores that grow by appending, and netCDF files.

A monitor campaign (and any campaign too large for one netCDF file) is stored as a Zarr
store, ``data/processed/<name>.zarr``: Zarr format 2 with consolidated metadata (one
read of ``.zmetadata`` opens it), chunked along ``run`` (:func:`run_chunk` runs a chunk)
with the whole ``probe`` dimension in each chunk. Strings are variable-length, so an
appended run may carry a longer reason or path than any before it. Times are stored as
int64 nanoseconds since 1970-01-01 (:data:`TIME_ENCODING`), so appends never round them.

The store records in its attrs how many rows of ``runs.csv`` it holds
(``manifest_rows``) and the sha256 of those rows (``manifest_sha256``), and per run the
raw file and its sha256 (``source``, ``source_sha256``). :func:`normalize_monitor`
writes a new store with the workers, each unit of runs into its own region
(:mod:`thruput.campaign.regions`), and to an existing one reads only the rows after
``manifest_rows`` and appends them with ``to_zarr(append_dim="run")``; a changed row or
raw file already in the store is an error (:class:`StoreError`), never a silent rewrite.

Appends keep the Dataset exactly what a full normalize would give (same values, same
chunks; a test checks): runs that arrive out of time order, or ping runs with more probes
than the store's ``probe`` dimension holds, make the store be rewritten whole (from the
store itself, no raw file read again).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from ..contract import PROBE_STATUSES
from ..errors import ThruputError
from . import chunks
from . import journal
from . import monitor as mon
from .verified import (Loaded, Verified, append_verified, forget_older_name, load_verified,
                       save_verified, verified_path)

try:        # optional (pyproject.toml): the C stat of many files
    from . import _statmany
except ImportError:     # pragma: no cover - no compiler at install time
    _statmany = None

__all__ = ["StoreError", "write_store", "append_store", "open_store", "normalize_monitor",
           "verify_sources", "stat_ahead", "verified_path", "Verified", "load_verified", "save_verified", "ZARR_FORMAT", "TIME_ENCODING", "run_chunk", "compute_chunks", "is_store"]

ZARR_FORMAT = 2
#: Encoding of datetime64 variables: exact to the nanosecond whatever is appended later.
TIME_ENCODING = {"units": "nanoseconds since 1970-01-01", "calendar": "proleptic_gregorian",
                 "dtype": "int64"}
#: Target size of one chunk of the widest (run, probe) variable, bytes.
CHUNK_BYTES = 4 * 2**20
#: Most runs in one chunk (a chunk of per-run numbers is then 8 KiB of float64): the
#: units the workers write a new store in (:data:`thruput.campaign.regions.UNIT_ROWS`)
#: are a multiple of it, so that no two of them share a chunk.
MAX_RUN_CHUNK = 1024
#: Batches joined per wave of an append that rewrites the store (new runs earlier than its
#: last, or wider): the driver gathers this many batches' fragments (in order,
#: while the workers read the next ones), joins and appends them, so its memory holds
#: about ``WAVE_BATCHES`` x ``monitor.BATCH_ROWS`` runs whatever the archive's size.
WAVE_BATCHES = 32


#: Stored chunks per dask chunk when a store is opened to compute on it
#: (:func:`compute_chunks`): fewer, larger tasks than one per stored chunk (a chunk is at
#: most 1024 runs, so that the workers can write it), each reading whole chunks.
COMPUTE_CHUNKS_PER_TASK = 8


class StoreError(ThruputError):
    """A store does not match its campaign (changed rows or files), or cannot be appended."""


def is_store(path):
    """True if ``path`` is a Zarr store (a directory with ``.zmetadata``)."""
    return (Path(path) / ".zmetadata").is_file()


def compute_chunks(path):
    """``chunks=`` for opening the store at ``path`` to compute on it (``thruput
    pipeline stats``): :data:`COMPUTE_CHUNKS_PER_TASK` of its run chunks per dask chunk
    (8192 runs of 100 probes: about 6.5 MB of the widest array)."""
    import zarr

    group = zarr.open_consolidated(str(path), mode="r")
    return {"run": COMPUTE_CHUNKS_PER_TASK * int(group["time"].chunks[0])}


def run_chunk(n_probe):
    """Runs per chunk for a ``probe`` dimension of ``n_probe``: a power of two, at most
    :data:`CHUNK_BYTES` of the widest variable and :data:`MAX_RUN_CHUNK` runs; so it
    divides the units a new store is written in, and an append's waves of
    :data:`WAVE_BATCHES` x 512 runs fill whole chunks."""
    runs = max(1, min(MAX_RUN_CHUNK, CHUNK_BYTES // (8 * max(n_probe, 1))))
    return 1 << (int(runs).bit_length() - 1)


#: Variables of a few known values stored as int8 codes, with the names in the attrs
#: ``flag_values``/``flag_meanings`` (CF; ``none`` for ``""``, the padding past a ping
#: run's last probe) and decoded by :func:`open_store`: ten million probe statuses as
#: variable-length strings would take most of a normalize's writing time.
CODED = {"rtt_status": ("",) + PROBE_STATUSES}
#: ``flag_meanings`` word for the empty string.
_NONE = "none"


def _encode_codes(var, names):
    """``var`` (strings) as int8 codes into ``names``; a value not among them is an error."""
    values = np.asarray(var.values)
    # (a hash lookup: a comparison with each name took 7 of a monitor unit's 25 ms of writing)
    codes = pd.Index(names).get_indexer(values.ravel()).reshape(values.shape)
    known = codes >= 0
    codes = codes.astype(np.int8)
    if not known.all():
        raise StoreError(f"{var.attrs.get('long_name', '?')}: values other than {list(names)}: "
                         f"{sorted(set(values[~known].tolist()))[:5]}")
    attrs = dict(var.attrs, flag_values=list(range(len(names))),
                 flag_meanings=" ".join(n or _NONE for n in names))
    return xr.Variable(var.dims, codes, attrs)


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
    variable-length strings, not fixed-width ``<U``), :data:`CODED` ones as codes."""
    if name in CODED:
        return _encode_codes(var, CODED[name])
    return var.astype(object) if var.dtype.kind in "UT" else var


def _encoding(ds, chunk):
    encoding = {}
    for name, var in ds.variables.items():
        enc = {}
        if "run" in var.dims:
            enc["chunks"] = tuple(chunk if d == "run" else ds.sizes[d] for d in var.dims)
        if var.dtype.kind == "M":
            enc.update(TIME_ENCODING)
        if enc:
            encoding[name] = enc
    return encoding


def write_store(ds, path):
    """Write ``ds`` as a new Zarr store at ``path`` (replacing one that is there).

    Written to ``<path>.part`` and renamed, so a store is never half written by this.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    chunk = run_chunk(ds.sizes.get("probe", 0))
    _for_zarr(ds.drop_encoding()).to_zarr(tmp, mode="w", zarr_format=ZARR_FORMAT, consolidated=True,
                          encoding=_encoding(ds, chunk))
    if path.exists():
        shutil.rmtree(path)
    os.replace(tmp, path)
    return path


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


def append_store(ds, path, *, checked=False):
    """Append the runs of ``ds`` to the store at ``path`` along ``run``.

    ``ds.attrs`` replace the store's (the caller merges them: line totals, manifest rows).
    The store is rewritten whole (from itself) when ``ds`` has more probes than the store
    or runs earlier than its last, so that the result is the Dataset a full normalize
    would give. Only the store's shape and last time are read (not its run ids, unless
    they must be checked), so that an append costs the same however large the store.

    Parameters
    ----------
    checked : bool, default False
        The caller has made sure no run of ``ds`` is stored already
        (:func:`normalize_monitor` does so once for all its waves).

    Raises
    ------
    StoreError
        If a run id of ``ds`` is already in the store.
    """
    import zarr

    if not checked:
        _refuse_stored_runs(path, ds["run"].values)
    group = zarr.open_consolidated(str(path), mode="r")
    _refuse_older(path, group, ds.data_vars)
    n_runs, width = group["rtt"].shape
    last = np.datetime64(int(group["time"][n_runs - 1]), "ns") if n_runs else None
    if ds.sizes["probe"] > width or (last is not None and ds["time"].values[0] < last):
        whole = mon.combine([open_store(path), ds])
        whole = whole.assign_coords(probe=np.arange(whole.sizes["probe"]))
        for name in ds.variables:
            whole[name].attrs = ds[name].attrs
        whole.attrs = ds.attrs
        return write_store(whole, path)
    ds = mon.pad_probes(ds, width)
    # what xarray's to_zarr(append_dim="run") does, in a third of its time: lengthen the
    # run arrays, write the new runs into their rows (every array at once), replace the
    # attrs, consolidate. Cut short before the attrs, the store reads as it was (the
    # consolidated shapes) and the next append writes the same rows again; between the
    # attrs and the consolidation, normalize_monitor refuses it (runs != manifest_rows)
    grow_runs(path, n_runs + ds.sizes["run"])
    write_region(ds, path, n_runs)
    put_attrs(path, ds.attrs)
    return Path(path)


def _refuse_older(path, stored, names):
    """StoreError if any of the variables ``names`` is not among ``stored`` (the names the
    store at ``path`` holds): a store written by an older thruput, whose runs lack it."""
    missing = sorted(name for name in names if name not in stored)
    if missing:
        raise StoreError(f"{path}: has no {', '.join(missing)}: it was written by an older "
                         f"thruput; delete it and normalize again (the raw files are the source)")


def put_attrs(path, attrs):
    """Replace the attrs of the store at ``path`` with ``attrs``, then consolidate its
    metadata (:func:`_consolidate_again`, or zarr): the last step of every write, the one
    that shows it to readers."""
    import zarr

    zarr.open_group(str(path), mode="r+", use_consolidated=False).attrs.put(attrs)
    if not (ZARR_FORMAT == 2 and _consolidate_again(path)):
        zarr.consolidate_metadata(str(path))


def _consolidate_again(path):
    """Consolidate the metadata of the format 2 store at ``path`` again, after an append
    lengthened its run arrays and replaced its attrs, with the bytes zarr's
    ``consolidate_metadata`` writes: the ``.zmetadata`` there with each entry read again
    from its file. 1-2 ms where zarr reads and rebuilds every member's metadata (17-35 ms
    for a monitor store), on the serial tail of every append. False, and nothing
    written, unless ``.zmetadata`` reads back as zarr wrote it, lists the store's
    members, and every file is as consolidated there but for an array's ``shape`` and the
    group's attrs: zarr then does it."""
    import json

    top = Path(path)
    try:
        old = (top / ".zmetadata").read_bytes()
        doc = json.loads(old)
        entries = doc["metadata"]
        if json.dumps(doc, allow_nan=True).encode() != old or any(k.endswith("/.zgroup") for k in entries):
            return False
        with os.scandir(top) as found:
            members = {e.name for e in found if e.is_dir()}
        if members != {k.rsplit("/", 1)[0] for k in entries if "/" in k}:
            return False
        for key, was in entries.items():
            now = json.loads((top / key).read_bytes())
            if key == ".zattrs":
                entries[key] = now
            elif key.endswith("/.zarray"):
                if now.keys() != was.keys() or any(now[k] != was[k] for k in was if k != "shape"):
                    return False
                was["shape"] = now["shape"]
            elif now != was:
                return False
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    tmp = top / ".zmetadata.part"
    tmp.write_bytes(json.dumps(doc, allow_nan=True).encode())
    os.replace(tmp, top / ".zmetadata")
    return True


def _region_values(ds):
    """The values of ``ds``'s run variables as the store holds them: strings as objects,
    :data:`CODED` ones as codes, times as int64 ns (:data:`TIME_ENCODING`)."""
    out = {}
    for name, var in ds.variables.items():      # (as _for_zarr, without a Dataset copy)
        if var.dims[:1] != ("run",):
            continue
        values = _as_stored(name, var).values
        if values.dtype.kind == "M":
            values = values.astype("datetime64[ns]").view(np.int64)
        out[name] = values
    return out


def write_region(ds, path, offset):
    """Write the runs of ``ds`` into rows ``offset`` on of the store at ``path`` (its
    ``probe`` as wide, its run arrays that long: :func:`grow_runs`): the chunks the
    region covers whole straight to their files (:mod:`thruput.campaign.chunks`), any
    other through zarr, every array at once (its asynchronous API: one array at a time
    costs about twice the CPU)."""
    import asyncio

    import zarr.api.asynchronous as zasync
    from zarr.core.sync import sync

    values = _region_values(ds)
    path = os.fspath(path)
    end = offset + ds.sizes["run"]
    # the arrays opened by the last write here, if their metadata files are unchanged
    # (a worker writes unit after unit into one store: opening it is a third of a write)
    signature = _metadata_files(path, values)
    cached = _OPENED.get(path)
    arrays = cached[1] if signature is not None and cached is not None and cached[0] == signature else None

    async def opened():
        group = await zasync.open_group(path, mode="r+", use_consolidated=False)
        return await asyncio.gather(*(group.getitem(name) for name in values))

    if arrays is None:
        arrays = sync(opened())
    for array, (name, value) in zip(arrays, values.items()):
        if array.shape[0] < end or array.shape[1:] != value.shape[1:]:
            raise StoreError(f"{path}: {name} is {array.shape}, cannot hold runs "
                             f"{offset}-{end} of shape {value.shape}")
    # whole chunks straight to their files (chunks.write_rows), the rest through zarr
    rest = [(array, value) for array, (name, value) in zip(arrays, values.items())
            if not chunks.write_rows(array, os.path.join(path, name), value, offset)]
    if rest:
        async def write():
            await asyncio.gather(*(array.setitem(slice(offset, end), value) for array, value in rest))

        sync(write())
    _OPENED.clear()
    if signature is not None:
        _OPENED[path] = (signature, arrays)


#: :func:`write_region`'s arrays of the store it wrote last, by path: ``(the bytes of
#: their metadata files, the arrays)``; used again only while those bytes are the same.
_OPENED = {}


def _metadata_files(path, names):
    """The bytes of the metadata file of each array ``names`` of the store at ``path``
    (shape, chunks, dtype: all that an opened array holds), or None if one is missing."""
    leaf = ".zarray" if ZARR_FORMAT == 2 else "zarr.json"
    try:
        return tuple(Path(path, name, leaf).read_bytes() for name in names)
    except OSError:
        return None


def grow_runs(path, n_runs):
    """Lengthen every run array of the store at ``path`` to ``n_runs`` runs (in place, all
    at once), the consolidated metadata left as it was: readers see the new runs once
    :func:`put_attrs` has consolidated it. Format 2 metadata is rewritten here
    (:func:`_grow_zarray`), anything else by zarr's ``resize``."""
    if ZARR_FORMAT == 2 and _grow_zarray(path, n_runs):
        return
    import asyncio

    import zarr.api.asynchronous as zasync
    from zarr.core.sync import sync

    async def grow():       # (in place: zarr's asynchronous resize returns nothing)
        group = await zasync.open_group(str(path), mode="r+", use_consolidated=False)
        arrays = [a async for _, a in group.arrays()
                  if a.metadata.attributes.get("_ARRAY_DIMENSIONS", [None])[:1] == ["run"]]
        await asyncio.gather(*(a.resize((n_runs,) + a.shape[1:]) for a in arrays))

    sync(grow())


def _grow_zarray(path, n_runs):
    """Lengthen the run arrays of the format 2 store at ``path`` to ``n_runs`` runs by
    rewriting their ``.zarray`` with the bytes zarr's ``resize`` writes (the same JSON,
    its ``json_indent``; each file replaced whole): 8-12 ms for a monitor store's 35
    arrays where zarr's asynchronous resize took 60-80 ms. False, and nothing written, unless
    every file reads back as zarr wrote it and no array would get shorter: zarr then
    does it."""
    import json

    import zarr

    indent = zarr.config.get("json_indent")
    writes = []
    with os.scandir(path) as entries:
        folders = sorted(e.path for e in entries if e.is_dir())
    for folder in folders:
        try:
            meta_bytes = Path(folder, ".zarray").read_bytes()
            attrs = json.loads(Path(folder, ".zattrs").read_bytes())
        except (OSError, ValueError):
            continue                        # not an array (a group, say): zarr skips it too
        if not isinstance(attrs, dict) or not isinstance(attrs.get("_ARRAY_DIMENSIONS", []), list):
            return False
        if attrs.get("_ARRAY_DIMENSIONS", [None])[:1] != ["run"]:
            continue
        try:
            meta = json.loads(meta_bytes)
            shape = meta["shape"]
        except (ValueError, TypeError, KeyError):
            return False
        if (json.dumps(meta, indent=indent, allow_nan=True).encode() != meta_bytes
                or not isinstance(shape, list) or not shape or not isinstance(shape[0], int)
                or shape[0] > n_runs):
            return False
        meta["shape"][0] = n_runs
        writes.append((folder, json.dumps(meta, indent=indent, allow_nan=True).encode()))
    for folder, data in writes:
        tmp = os.path.join(folder, ".zarray.part")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(folder, ".zarray"))
    return True


def _refuse_stored_runs(path, runs, record=None):
    """StoreError if any of ``runs`` is in the store at ``path`` already (``record``: the
    store's :class:`Verified` record, or as :func:`load_verified` read it, if the caller
    has it; else the ids are read from the store)."""
    import zarr

    if isinstance(record, Loaded):      # (the usual case: told from the record's bytes)
        joined = record.joined_runs()
        if joined is not None and not _any_stored(joined, [str(r).encode("utf-8", "surrogatepass") for r in runs]):
            return
    stored = record.run if record is not None else zarr.open_consolidated(str(path), mode="r")["run"][:]
    new = {str(r) for r in runs}
    stored = np.asarray(stored, dtype=object).tolist()
    if new.isdisjoint(stored):          # (the usual case, in C: a tenth of the loop below)
        return
    again = sorted(r for r in map(str, stored) if r in new)
    if again:
        raise StoreError(f"{path}: runs already stored: {', '.join(again[:5])}"
                         f"{' ...' if len(again) > 5 else ''}")


def _any_stored(joined, new):
    """True if any of ``new`` (bytes) is an entry of the NUL-joined ``joined``: in C
    (:mod:`thruput.campaign._statmany`, no object per stored id: 7-11 ms for 2 x 10^5
    stored ids where the split and set took 40-70 ms), else by a split and a set."""
    if _statmany is not None:
        return _statmany.find_any(joined, new) >= 0
    return not set(new).isdisjoint(joined.split(b"\0"))


def _hash_batch(directory, paths):
    """sha256 of each file (``""`` if missing); a module function so workers can run it."""
    out = []
    for rel in paths:
        p = Path(directory) / rel
        out.append(hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "")
    return out


#: Whether this platform can ask for a file to be loaded (:func:`_stat`'s ``load``).
_CAN_LOAD = hasattr(os, "posix_fadvise")


def _stat(directory, sources, load=False):
    """``(size, mtime_ns)`` of each raw file, ``(-1, -1)`` where there is none.

    Files are looked up folder by folder, by name in an open folder (``fstatat``): the
    kernel then walks one path component per file, not the whole path (a third less time
    per file here, where an append's check is one call per stored file). In C
    (:mod:`thruput.campaign._statmany`) where it is built: no Python object per file.

    With ``load``, each file is also asked into the page cache as it is stat-ed
    (``posix_fadvise(..., POSIX_FADV_WILLNEED)`` on a descriptor opened without blocking,
    then ``fstat`` of it; a file that cannot be opened is stat-ed by name): what
    :func:`thruput.campaign.regions.read_unit` runs in a thread while it parses the same
    files. Where there is no ``posix_fadvise`` (macOS, Windows) nothing is loaded."""
    sources = sources if isinstance(sources, list) else list(sources)
    load = bool(load) and _CAN_LOAD
    if _statmany is not None:
        size, mtime = _statmany.stat_many(os.fspath(directory) or ".", sources, load)
        return np.frombuffer(size, dtype=np.int64).copy(), np.frombuffer(mtime, dtype=np.int64).copy()
    return _stat_python(directory, sources, load)


def _stat_python(directory, sources, load=False):
    """:func:`_stat` without the C extension (the reference: the same numbers)."""
    size = np.full(len(sources), -1, dtype=np.int64)
    mtime = np.full(len(sources), -1, dtype=np.int64)
    top = (os.fspath(directory) or ".").rstrip("/") + "/"
    folders = {}
    for i, rel in enumerate(sources):
        if rel:
            head, _, name = rel.rpartition("/")
            folders.setdefault(head, []).append((i, name))
    for head, files in folders.items():
        try:
            fd = os.open(top + head, os.O_RDONLY | os.O_DIRECTORY)
        except (OSError, ValueError):
            continue                        # no folder: no file in it
        try:
            for i, name in files:
                try:
                    st = _loaded_stat(name, fd) if load else os.stat(name, dir_fd=fd)
                except (OSError, ValueError):        # (ValueError: a NUL in the name)
                    continue
                size[i], mtime[i] = st.st_size, st.st_mtime_ns
        finally:
            os.close(fd)
    return size, mtime


def _loaded_stat(name, folder):
    """``os.stat`` of the file ``name`` in the open ``folder``, asked into the page cache
    first (:func:`_stat`'s ``load``); by name if it cannot be opened."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=folder)
    except OSError:
        return os.stat(name, dir_fd=folder)
    try:
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
        except OSError:
            pass                # (a FIFO, say: nothing to load)
        return os.fstat(fd)
    finally:
        os.close(fd)


def _index_of(stored):
    """A :class:`Verified` of the store ``stored`` with nothing checked yet (read from it)."""
    n = stored.sizes.get("run", 0)
    return Verified(str(stored.attrs["manifest_sha256"]), stored["run"].values.astype(object),
                    stored["source"].values.astype(object),
                    stored["time"].values.astype("datetime64[ns]").astype(np.int64),
                    np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64))


def verify_sources(directory, stored, *, verified=None, ahead=None, **where):
    """Raw files of ``stored`` runs whose bytes changed or that are gone, as messages.

    Every file is hashed again (in batches, on the workers if ``where`` names a cluster),
    except, given ``verified`` (the :class:`Verified` record of this store, from
    :func:`load_verified`), those whose size and modification time (ns) are still the ones
    recorded there: the way DVC and git decide what to hash again. A file altered in place
    changes its modification time and is hashed, and caught even where it still parses;
    only an edit that keeps size and time (``touch -r``) escapes, and ``verified=None``
    (``thruput campaign check``, ``normalize --verify-all``) hashes every file. A record
    of another store (another ``manifest_sha256``) is not used. ``ahead``: what
    :func:`stat_ahead` started for the same ``stored`` and ``verified``, if the caller did.

    Returns
    -------
    problems : list of str
    checked : Verified
        The store's record with the sizes and times found now (for :func:`save_verified`).
    """
    from ..parallel import map_batches

    forced = named = None
    if ahead is not None:
        index, found = ahead
        size, mtime = found.result()
        forced, named = getattr(found, "forced", None), getattr(found, "named", None)
    else:
        index = _record_of(stored, verified)
        size, mtime = _stat(directory, index.source.tolist())
    if named is None:                   # (runs with a file)
        named = index.named() if isinstance(index, Loaded) else index.source != ""
    stale = (size < 0) | (size != index.size) | (mtime != index.mtime)
    if forced is not None and forced.size:
        stale[forced] = True            # (the journal saw them change: hashed whatever their stat)
    todo = np.flatnonzero(named & stale)
    problems = []
    if todo.size:
        paths = index.source[todo].tolist()
        sha = stored["source_sha256"].values.astype(object).astype(str)[todo]
        chunks = [paths[i:i + 4096] for i in range(0, len(paths), 4096)]
        now = [h for part in map_batches(_hash_batch, str(directory), chunks, **where) for h in part]
        for rel, was, is_ in zip(paths, sha, now):
            if was == "":
                continue                    # runs.csv recorded no sha256: nothing to hold it to
            if is_ == "":
                problems.append(f"{Path(directory) / rel}: in the store but now missing")
            elif is_ != was:
                problems.append(f"{Path(directory) / rel}: changed since it was stored "
                                f"(sha256 was {was[:12]}..., is {is_[:12]}...)")
    return problems, index._replace(size=size, mtime=mtime)


def _record_of(stored, verified):
    """The :class:`Verified` record :func:`verify_sources` holds the files of the store
    ``stored`` to: ``verified`` if it is this store's, else one read from the store."""
    return verified if verified is not None and verified.matches(stored) else _index_of(stored)


def stat_ahead(directory, stored, verified=None, threads=None, changes=None):
    """Start :func:`verify_sources`' ``stat`` of the raw files of the store ``stored`` (as
    recorded in ``verified``, if it is this store's record) in ``threads`` threads
    (default :data:`STAT_THREADS`), so that it runs while the caller reads runs.csv (the C
    stat lets go of the GIL, and the kernel's stat runs on every core): ``(record, what
    gives (size, mtime) once done)``, for ``verify_sources(..., ahead=)``. A record as
    :func:`load_verified` read it is stat-ed from its file's bytes
    (:meth:`~thruput.campaign.verified.Loaded.joined_sources`): no string is made first.

    ``changes``: what the directory's journal says changed since ``verified`` was written
    (:func:`thruput.campaign.journal.changes_since`); then only the files it names (and
    any the record has no size for) are stat-ed, and hashed whatever their stat, the others
    keep the record's size and time."""
    from concurrent.futures import ThreadPoolExecutor

    record = _record_of(stored, verified)
    joined = record.joined_sources() if isinstance(record, Loaded) else None     # (once, for all below)
    journal_says = changes is not None and record is verified
    n = len(record.time)
    threads = 1 if journal_says else max(1, threads or STAT_THREADS)
    cuts = [n * k // threads for k in range(threads + 1)]
    pool = ThreadPoolExecutor(threads, thread_name_prefix="thruput-stat")
    try:
        if journal_says:
            return record, _Known(pool.submit(_stat_journaled, directory, record, changes, joined))
        return record, _Joined([pool.submit(_stat_runs, directory, record, joined, a, b - a)
                                for a, b in zip(cuts, cuts[1:])])
    finally:
        pool.shutdown(wait=False)


def _stat_journaled(directory, record, changes, joined):
    """:func:`stat_ahead` given the journal's ``changes``: ``((size, mtime), forced,
    named)``, the runs the journal names stat-ed (``forced``), the others as the record
    has them; every run stat-ed, and none forced, if the record's sources are not written as
    the journal names files (:func:`journaled`)."""
    scan = journaled(record, changes, joined)
    if scan is None:
        return _stat_runs(directory, record, joined, 0, len(record.time)), None, None
    hits, named = scan
    at = np.union1d(hits, np.flatnonzero(record.size < 0))
    size, mtime = record.size.copy(), record.mtime.copy()
    if at.size:
        size[at], mtime[at] = _stat(directory, record.source[at].tolist())
    return (size, mtime), at, named


def _stat_runs(directory, record, joined, first, count):
    """:func:`_stat` of the files of runs ``first`` to ``first + count`` of ``record``:
    from its NUL-joined sources ``joined`` (as :meth:`~thruput.campaign.verified.Loaded.
    joined_sources` gives them, or None) in C (:mod:`thruput.campaign._statmany`), with no
    string made, where it can be; else from its strings."""
    if joined is None or _statmany is None:
        return _stat(directory, record.source[first:first + count].tolist())
    return _stat_joined(directory, joined, first, count)


def _stat_joined(directory, joined, first, count):
    """:func:`_stat` of sources ``first`` to ``first + count`` of the NUL-joined ``joined``
    (in C: :mod:`thruput.campaign._statmany`)."""
    size, mtime = _statmany.stat_joined(os.fspath(directory) or ".", joined, first, count)
    return np.frombuffer(size, dtype=np.int64).copy(), np.frombuffer(mtime, dtype=np.int64).copy()


#: Threads that :func:`stat_ahead` cuts the stat of the stored files into: two take half
#: the time of one on this 2-core machine (0.20 vs 0.36-0.44 s for 2 x 10^5 files).
STAT_THREADS = 2


def journaled(record, changes, joined=None):
    """``(positions, named)``: the runs of ``record`` whose files the journal's
    ``changes`` (:class:`~thruput.campaign.journal.Changes`) may have changed, and whether
    every run has a file (as :meth:`~thruput.campaign.verified.Loaded.named`); None if a
    source is not written as the journal names files (:func:`_as_journaled`: then every
    file is stat-ed). From the record's bytes (``joined``: its
    :meth:`~thruput.campaign.verified.Loaded.joined_sources`, if taken already) in one pass
    in C where it can be (:mod:`thruput.campaign._statmany`: 5-10 ms for 2 x 10^5 sources,
    where the checks below take 0.1 s), with no string made per stored run."""
    if joined is None and isinstance(record, Loaded):
        joined = record.joined_sources()
    if joined is not None and _statmany is not None:
        # (the record's sources are ASCII: a name that is not names none of them)
        scan = _statmany.journal_scan(joined, [f.encode() for f in changes.files if f.isascii()],
                                      [f.encode() + b"/" for f in changes.folders if f.isascii()])
        if scan is None:
            return None
        hits, named = scan
        # (one empty source joins as no bytes, as no source does)
        return np.array(hits, dtype=np.intp), named and (len(joined) > 0 or len(record.time) == 0)
    if not _as_journaled(record, joined):
        return None
    return touched(record, changes), record.named() if isinstance(record, Loaded) else record.source != ""


def touched(record, changes):
    """Positions of the runs of ``record`` whose files the journal's ``changes``
    (:class:`~thruput.campaign.journal.Changes`) may have changed, from its strings: what
    :func:`journaled` finds from its bytes in C (the reference, and where C is not built)."""
    files, heads = changes.files, tuple(f + "/" for f in changes.folders)
    return np.flatnonzero([s in files or s.startswith(heads) for s in record.source]).astype(np.intp)


#: Bytes no source written as the watcher names files holds (at its start, anywhere, at
#: its end): an empty part, or a part "." or ".."; an empty source (no file) is allowed.
_NOT_AS_JOURNALED = (b"./", b"../", b"/", b".\0", b"..\0")
_NOT_AS_JOURNALED_IN = (b"//", b"/./", b"/../", b"\0./", b"\0../", b"\0/", b"/\0", b"/.\0", b"/..\0",
                        b"\0.\0", b"\0..\0")
_NOT_AS_JOURNALED_END = (b"/", b"/.", b"/..", b"\0.", b"\0..")


def _as_journaled(record, joined=None):
    """True if every source of ``record`` (``joined``: as :func:`journaled` takes it) is
    written as the journal names files (relative, no ``.``, ``..`` or empty part, ``/``
    between parts), so that a file the journal does not name is one it saw no change to;
    else every file is stat-ed."""
    if joined is None and isinstance(record, Loaded):
        joined = record.joined_sources()
    if joined is None:
        joined = "\0".join(record.source.tolist()).encode("utf-8", "surrogateescape")
    return not (joined.startswith(_NOT_AS_JOURNALED) or any(b in joined for b in _NOT_AS_JOURNALED_IN)
                or joined.endswith(_NOT_AS_JOURNALED_END) or joined in (b".", b".."))


class _Known:
    """What :func:`stat_ahead` with a journal gives (:func:`_stat_journaled`, in a thread):
    ``(size, mtime)``, the runs the journal saw change (``forced``), and whether every run
    has a file (``named``, as :func:`journaled` found it); each waits for the thread."""

    def __init__(self, future):
        self.future = future

    def result(self):
        return self.future.result()[0]

    @property
    def forced(self):
        return self.future.result()[1]

    @property
    def named(self):
        return self.future.result()[2]


class _Joined:
    """The ``(size, mtime)`` of several :func:`_stat` futures, joined in order."""

    def __init__(self, parts):
        self.parts = parts

    def result(self):
        found = [part.result() for part in self.parts]
        return tuple(np.concatenate([f[k] for f in found]) for k in (0, 1))


def _remember(out, directory, before, index, rows, manifest_sha256, stats=None, times=None):
    """Update :func:`verified_path` of ``out``: the stored runs' record (``index``, as
    checked now, or None if not) followed by the runs of ``rows`` just read (in time
    order; their sha256 checked against runs.csv as they were read, their size and time
    taken now, or ``stats``: :func:`_stat` of them as the workers took it right after
    reading), in the store's order; ``times``: their start times, if parsed already;
    ``before``: the record as loaded (not rewritten if nothing changed; only added to,
    :func:`append_verified`, if its stored runs are as they were and the new runs follow
    them)."""
    if times is None:
        times = mon.start_times(r.started for r in rows)
    added = Verified(manifest_sha256, np.array([r.run for r in rows], dtype=object),
                     np.array([r.path for r in rows], dtype=object), times.astype(np.int64),
                     *(stats if stats is not None else _stat(directory, [r.path for r in rows])))
    numbers, order, only_added = [added.time, added.size, added.mtime], None, False
    stored = index is not None and len(index.time) > 0
    if stored:                          # (the strings joined only if written whole)
        numbers = [np.concatenate([index.time, added.time]), np.concatenate([index.size, added.size]),
                   np.concatenate([index.mtime, added.mtime])]
        if not (np.diff(numbers[0]) >= 0).all():        # a store rewritten out of order
            order = np.argsort(numbers[0], kind="stable")
            numbers = [a[order] for a in numbers]
        only_added = (order is None and before is not None and _same_runs(index, before)
                      and np.array_equal(before.size, index.size) and np.array_equal(before.mtime, index.mtime))
    path = verified_path(out)
    if before is not None and before.manifest_sha256 == manifest_sha256 and len(before.time) == len(numbers[0]) \
            and np.array_equal(before.size, numbers[1]) and np.array_equal(before.mtime, numbers[2]):
        forget_older_name(path)         # (the record is as it was: not written)
        return
    if only_added and append_verified(path, before, added, manifest_sha256):
        return
    new = added
    if stored:
        strings = [np.concatenate([index.run, added.run]), np.concatenate([index.source, added.source])]
        new = Verified(manifest_sha256, *(a[order] if order is not None else a for a in strings), *numbers)
    save_verified(path, directory, new)


def _same_runs(index, before):
    """True if the record ``index`` holds the runs of ``before`` (the same strings)."""
    if isinstance(index, Loaded):
        return index.same_runs(before)
    return index is before or (not isinstance(before, Loaded) and index.run is before.run)


class _ReadWhole(Exception):
    """runs.csv's stored rows are not rows of one line each: an append must read it whole
    (raised before anything is written)."""


def _check_prefix(directory, out, stored, text, digest, after=None):
    """The rows the store holds must be the first rows of runs.csv (``text``, whose
    :class:`~thruput.campaign.monitor.ManifestDigest` is ``digest``), unchanged; given
    ``after`` (:func:`~thruput.campaign.monitor.read_manifest_after`: ``text`` is then
    its header and new rows), by the hash of the bytes before the new rows, which
    ``digest`` then goes on from (:class:`_ReadWhole` if those bytes cannot tell)."""
    n = int(stored.attrs["manifest_rows"])
    if after is not None:
        sha = after.prefix.result()
        if sha is None:         # the stored rows are not one a line: ``after`` cannot say
            raise _ReadWhole
        if sha.hexdigest() == stored.attrs["manifest_sha256"]:
            digest.resume(n, after.at, int(stored.attrs["manifest_bytes"]), sha)
            return
        text = mon.read_manifest_text(directory)    # changed: said row by row below
        digest = mon.ManifestDigest(text)
    if digest.upto(n) != stored.attrs["manifest_sha256"]:
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
    if after is not None:       # the rows as stored, but not in the bytes the store says
        raise StoreError(f"{out}: its {n} rows of runs.csv do not end after "
                         f"{stored.attrs['manifest_bytes']} bytes (manifest_bytes), as it "
                         f"records. Delete {out} to normalize anew")


def normalize_monitor(directory, out, *, workers=None, scheduler=None, client=None,
                      verify=True):
    """Bring the Zarr store ``out`` up to date with monitor campaign ``directory``.

    A new store is written from every row; an existing one gets the rows of runs.csv it
    does not hold yet, each unit written into its region by the worker that read it
    (:mod:`thruput.campaign.regions`), or the store is rewritten with them wave by wave
    (:data:`WAVE_BATCHES` batches each) when they start before its last run or hold a
    wider ping run.

    Parameters
    ----------
    directory, out : path-like
    workers, scheduler, client
        Where the batches are read: :func:`thruput.parallel.map_batches`.
    verify : {True, "all", False}
        Check that the raw files the store already holds are unchanged (a file changed in
        place is an error): by default those whose size or modification time differ from
        when they were last found right (:func:`verify_sources`, :func:`verified_path`)
        are hashed again; ``"all"`` hashes every one; False none. The rows themselves are
        always checked against ``manifest_sha256``.

    Returns
    -------
    dict
        ``runs_added`` (this call), ``runs`` and ``files_read`` (in the store now),
        ``appended`` (False for a new store), ``runs_added_disagreeing`` (runs added with
        a failed check of their tool's own totals: ``tool_checks_failed > 0``),
        ``rebuilt`` (why a store was written anew from every row, or ``""``: one written
        by another :data:`monitor.MONITOR_VERSION`), ``metadata_updated`` (the store's
        copy of campaign.yaml replaced by the one there now, with or without new rows).

    Raises
    ------
    StoreError
        For changed rows or files already stored, or runs stored twice.
    thruput.errors.ThruputError
        For a bad campaign.yaml, runs.csv or raw file, naming file and line.
    """
    try:
        return _normalize_monitor(directory, out, workers, scheduler, client, verify)
    except _ReadWhole:      # (found before anything was written: runs.csv is read whole)
        return _normalize_monitor(directory, out, workers, scheduler, client, verify, by_bytes=False)


def _normalize_monitor(directory, out, workers, scheduler, client, verify, by_bytes=True):
    """:func:`normalize_monitor`; ``by_bytes``: an append reads runs.csv after its stored
    bytes (:func:`~thruput.campaign.monitor.read_manifest_after`), not whole."""
    from ..parallel import MIN_BATCHES_FOR_CLUSTER, cluster
    from .dataset import load_metadata
    from .regions import GUESS_UNITS, UNIT_ROWS, Guess, write_new_store

    out = Path(out)
    metadata = load_metadata(directory)
    start, base, rebuilt, ahead = 0, None, "", None
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
    record = verified_path(out)
    # the journal's changes since the record was written, and where this check starts in
    # it (before any file is stat-ed); the record's point forgotten until this is done
    changes, now = journal.changes_since(directory, record) if verify else (None, None)
    journal.forget_since(record)
    known = load_verified(record, directory)
    if base is not None and verify:     # the stored files stat-ed while runs.csv is read below
        ahead = stat_ahead(directory, base, None if verify == "all" else known,
                           changes=changes if verify is True else None)
    after = None
    if base is not None:
        start = int(base.attrs["manifest_rows"])
        if by_bytes and "manifest_bytes" in base.attrs:     # the new rows found by where the stored end
            after = mon.read_manifest_after(directory, int(base.attrs["manifest_bytes"]))
    text = after.text if after is not None else mon.read_manifest_text(directory)
    digest = mon.ManifestDigest(text)           # (read and hashed once, for all below)

    def in_order():     # (the new rows, in store order, and their start times)
        nonlocal times
        # (the stored rows are checked against the store's ``manifest_sha256`` later, while
        # the workers read the new ones; a new row's error is said after a stored row's change)
        try:
            rows, _ = mon.read_monitor_manifest(directory, start, text=text,
                                                at=after.at if after is not None else None)
        except ThruputError:
            if after is not None and after.prefix.result() is None:
                raise _ReadWhole from None  # (the stored rows are not one a line: nor are the lines counted)
            if base is not None:            # (``after`` holds the new rows only)
                whole = mon.read_manifest_text(directory) if after is not None else text
                _check_prefix(directory, out, base, whole,
                              mon.ManifestDigest(whole) if after is not None else digest)
            raise
        rows, times = mon.in_time_order(rows)
        return rows

    times = None
    # a new store on workers: they read its first units while runs.csv is read here
    first = (mon.first_rows(text, GUESS_UNITS * UNIT_ROWS, UNIT_ROWS)
             if base is None and (workers or scheduler or client is not None) else None)
    rows = in_order() if first is None else Guess(first, in_order)
    index = known if base is not None and known is not None and known.matches(base) else None
    if base is not None and index is None and not verify:
        index = _index_of(base)     # read now: an append may rewrite the store whole below
    n_new = first.lines if first is not None else len(rows)
    pieces = len(mon.batches(rows)) if base is not None else -(-n_new // UNIT_ROWS)
    if client is None and pieces < MIN_BATCHES_FOR_CLUSTER:
        workers = scheduler = None          # a cluster would take longer to start
    with cluster(workers, scheduler, client) as c:
        stats, lines = None, _line_index(text, start, after) if c is not None and n_new else None
        if base is None and n_new:          # a new store: the workers write it (regions)
            attrs, disagreeing, stats, rows = write_new_store(out, directory, metadata, digest,
                                                              rows, c, lines)
        else:
            attrs, disagreeing, index, stats = _append(out, directory, metadata, text, digest,
                                                       base, start, rows, verify, known, index, c,
                                                       ahead, after, lines)
    _remember(out, directory, known, index, rows, str(attrs["manifest_sha256"]), stats, times)
    if now is not None and record.exists():
        try:
            journal.save_since(record, now)
        except OSError:
            pass                # (the next check stats every file)
    stored = int(base.sizes.get("run", 0)) if base is not None else 0
    metadata_updated = base is not None and base.attrs.get("metadata") != attrs.get("metadata")
    return {"runs_added": len(rows), "runs": stored + len(rows), "appended": base is not None,
            "files_read": int(attrs["files_read"]), "runs_added_disagreeing": disagreeing,
            "rebuilt": rebuilt, "metadata_updated": metadata_updated}


def _line_index(text, start, after):
    """Where the rows of runs.csv ``text`` after its first ``start`` are in the file
    (:class:`~thruput.campaign.manifest_lines.LineIndex`; ``after``: if ``text`` holds
    the header and those rows only), to send to the workers; None if they cannot be
    sent so."""
    from .manifest_lines import LineIndex

    if after is not None:
        return LineIndex.of(text, after.at, start + 2, int(after.size))
    at = text.find("\n") + 1
    return LineIndex.of(text, at, 2, at) if at else None


def _append(out, directory, metadata, text, digest, base, start, rows, verify, known, index, c,
            ahead=None, after=None, lines=None):
    """Append ``rows`` to the store ``base`` (or write the store of a campaign with no
    rows), read on the client ``c`` or here, once the stored rows of runs.csv
    (:func:`_check_prefix`; ``after``: :func:`thruput.campaign.monitor.read_manifest_after`,
    if runs.csv was read that way) and files (:func:`verify_sources`; ``ahead``: its
    :func:`stat_ahead`, if started) are found unchanged. Returns the attrs, the runs
    added with a failed check, the stored runs' :class:`Verified` record as checked
    (``index`` if not checked), and the size and modification time of the new runs'
    files as the workers found them (or None).

    Rows that follow the store's last run go unit by unit, each written into its region by
    the worker that read it (:func:`thruput.campaign.regions.append_units`); rows that
    start earlier, or a ping run wider than the store, make the store be written anew
    from itself and the new runs, wave by wave through this process (:func:`append_store`).
    """
    from ..parallel import iter_batches
    from .regions import append_units

    where = {"client": c} if c is not None else {}
    checked = False

    def check():
        """Nothing is written before the stored files are found unchanged."""
        nonlocal index, checked
        if checked:
            return
        if base is not None:
            _check_prefix(directory, out, base, text, digest, after)
        if base is not None and rows:       # once, for every unit or wave (while `ahead` runs)
            record = ahead[0] if ahead is not None else index
            _refuse_stored_runs(out, [r.run for r in rows], record)
        if base is not None and verify:
            problems, index = verify_sources(
                directory, base, verified=None if verify == "all" else known, ahead=ahead, **where)
            if problems:
                raise StoreError(f"{out}: {len(problems)} raw files changed since they were "
                                 f"stored: {'; '.join(problems[:5])}. Delete {out} to normalize anew")
        checked = True

    if rows and start and _follows(base, rows, index):
        _refuse_older(out, base.variables, mon.MONITOR_VARIABLES)
        chunk = max(int(v.encoding["chunks"][0]) for v in base.variables.values() if v.dims[:1] == ("run",))
        # (on a cluster the first units are read while the stored files are checked here)
        done = append_units(out, directory, metadata, digest, base.attrs, start, base.sizes["probe"],
                            chunk, rows, c, check, lines)
        if done is not None:
            attrs, disagreeing, stats = done
            return attrs, disagreeing, index, stats
    # on a cluster the first batches are read while the stored files are checked here;
    # nothing is written before that check has passed
    # (a wave ahead: the workers go on reading while this process joins and writes)
    fragments = iter_batches(mon.read_batch, str(directory), mon.batches(rows), client=c,
                             ahead=WAVE_BATCHES)
    try:
        check()
        attrs, disagreeing = _write_waves(out, metadata, text, digest, base, start, rows,
                                          fragments)
    finally:
        fragments.close()
    return attrs, disagreeing, index, None


def _follows(base, rows, index=None):
    """True if the first of ``rows`` (in time order) starts no earlier than the last run
    of the store ``base``: its time from ``index``, the store's :class:`Verified` record
    (the same rows of runs.csv: the same times), or else read from the store's last chunk
    only (25-30 ms with an append's workers busy)."""
    if index is not None and len(index.time) == base.sizes.get("run", 0) > 0:
        last = np.datetime64(int(index.time[-1]), "ns")
    else:
        last = base["time"].isel(run=-1).values
    first = mon.start_times([rows[0].started])[0]
    return not first < last


def _refresh_campaign_attrs(out, base, metadata, manifest):
    """The attrs of the store ``out`` (``base``) with those that come from campaign.yaml
    (``metadata``: its name, title and the whole of it, which the statistics read: events,
    periods) as they are now, and those of runs.csv (``manifest``:
    :meth:`~thruput.campaign.monitor.ManifestDigest.attrs`; a store written before
    ``manifest_bytes`` gets it), written if any differs. Returns the attrs."""
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
        ds = mon.finish(joined, metadata, text, n, digest)
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
