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
reads only the rows after ``manifest_rows`` and appends them with
``to_zarr(append_dim="run")``; a changed row or raw file already in the store is an
error (:class:`StoreError`), never a silent rewrite.

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
import xarray as xr

from ..contract import PROBE_STATUSES
from ..errors import ThruputError
from . import monitor as mon

__all__ = ["StoreError", "write_store", "append_store", "open_store", "normalize_monitor",
           "verify_sources", "verified_path", "load_verified", "save_verified", "ZARR_FORMAT", "TIME_ENCODING", "run_chunk", "is_store"]

ZARR_FORMAT = 2
#: Encoding of datetime64 variables: exact to the nanosecond whatever is appended later.
TIME_ENCODING = {"units": "nanoseconds since 1970-01-01", "calendar": "proleptic_gregorian",
                 "dtype": "int64"}
#: Target size of one chunk of the widest (run, probe) variable, bytes.
CHUNK_BYTES = 4 * 2**20
#: Most runs in one chunk (a chunk of per-run numbers is then 64 KiB of float64).
MAX_RUN_CHUNK = 8192
#: Batches joined per write: the driver gathers this many batches' fragments (in order,
#: while the workers read the next ones), joins and appends them, so its memory holds
#: about ``WAVE_BATCHES`` x ``monitor.BATCH_ROWS`` runs whatever the archive's size.
WAVE_BATCHES = 16


class StoreError(ThruputError):
    """A store does not match its campaign (changed rows or files), or cannot be appended."""


def is_store(path):
    """True if ``path`` is a Zarr store (a directory with ``.zmetadata``)."""
    return (Path(path) / ".zmetadata").is_file()


def run_chunk(n_probe):
    """Runs per chunk for a ``probe`` dimension of ``n_probe``: about :data:`CHUNK_BYTES`."""
    return int(max(1, min(MAX_RUN_CHUNK, CHUNK_BYTES // (8 * max(n_probe, 1)))))


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
    codes = np.zeros(values.shape, dtype=np.int8)
    known = np.zeros(values.shape, dtype=bool)
    for code, name in enumerate(names):
        hit = values == name
        codes[hit] = code
        known |= hit
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
    """Strings as object arrays (Zarr variable-length strings, not fixed-width ``<U``),
    :data:`CODED` ones as codes."""
    out = ds.copy()
    for name, var in ds.variables.items():
        if name in CODED:
            out[name] = _encode_codes(var, CODED[name])
        elif var.dtype.kind in "UT":
            out[name] = var.astype(object)
    return out


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
    ds = _for_zarr(ds)
    ds.drop_vars("probe", errors="ignore").to_zarr(path, mode="a", append_dim="run", consolidated=True)
    return Path(path)


def _refuse_stored_runs(path, runs):
    """StoreError if any of ``runs`` is in the store at ``path`` already."""
    import zarr

    stored = zarr.open_consolidated(str(path), mode="r")["run"][:]
    again = np.intersect1d(np.asarray(stored, dtype=object).astype(str), np.asarray(runs, dtype=object).astype(str))
    if again.size:
        raise StoreError(f"{path}: runs already stored: {', '.join(again[:5])}"
                         f"{' ...' if again.size > 5 else ''}")


def _hash_batch(directory, paths):
    """sha256 of each file (``""`` if missing); a module function so workers can run it."""
    out = []
    for rel in paths:
        p = Path(directory) / rel
        out.append(hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "")
    return out


def verified_path(out):
    """Where the sizes and times of the raw files a store holds are kept when their sha256
    was last checked: ``<store>.verified.npz`` beside it (a cache, not part of the store
    or of any DVC output: deleting it only makes the next check hash every file)."""
    out = Path(out)
    return out.with_name(out.name + ".verified.npz")


def _stat(directory, sources):
    """``(size, mtime_ns)`` of each raw file, ``(-1, -1)`` where there is none."""
    size = np.full(len(sources), -1, dtype=np.int64)
    mtime = np.full(len(sources), -1, dtype=np.int64)
    top = os.fspath(directory).rstrip("/") + "/"
    for i, rel in enumerate(sources):
        try:
            st = os.stat(top + rel)         # (strings: pathlib and os.path.join cost more than the stat)
        except OSError:
            continue
        size[i], mtime[i] = st.st_size, st.st_mtime_ns
    return size, mtime


def load_verified(path, directory):
    """``{source: (size, mtime_ns, sha256)}`` from a :func:`verified_path` file, or ``{}``
    if there is none, it is unreadable or it was written for another raw directory."""
    try:
        with np.load(path, allow_pickle=False) as f:
            if str(f["directory"]) != str(Path(directory).resolve()):
                return {}
            return {src: (int(n), int(t), str(h)) for src, n, t, h in
                    zip(f["source"].tolist(), f["size"].tolist(), f["mtime_ns"].tolist(), f["sha256"].tolist())}
    except (OSError, ValueError, KeyError, EOFError):
        return {}


def save_verified(path, directory, sources, shas, size, mtime):
    """Record that each file of ``sources`` had ``shas`` at ``size``/``mtime`` (atomic)."""
    keep = size >= 0
    tmp = Path(path).with_name(Path(path).name + ".part.npz")
    np.savez(tmp, directory=np.array(str(Path(directory).resolve())),
             source=np.asarray(sources, dtype=str)[keep], size=size[keep], mtime_ns=mtime[keep],
             sha256=np.asarray(shas, dtype=str)[keep])
    os.replace(tmp, path)


def verify_sources(directory, stored, *, verified=None, **where):
    """Raw files of ``stored`` runs whose bytes changed or that are gone, as messages.

    Every file is hashed again (in batches, on the workers if ``where`` names a cluster),
    except, given ``verified`` (what :func:`load_verified` read from a
    :func:`verified_path`), those whose size and modification time (ns) are still the ones
    recorded there when the same sha256 was last found: the way DVC and git decide what to
    hash again. A file altered in place changes
    its modification time and is hashed, and caught even where it still parses; only an
    edit that keeps size and time (``touch -r``) escapes, and ``verified=None`` (``thruput
    campaign check``, ``normalize --verify-all``) hashes every file.

    Returns
    -------
    problems : list of str
    fingerprint : tuple
        ``(sources, sha256s, sizes, mtimes)`` of the files as checked, for
        :func:`save_verified`.
    """
    from ..parallel import map_batches

    source = stored["source"].values.astype(object).astype(str)
    sha = stored["source_sha256"].values.astype(object).astype(str)
    keep = source != ""
    source, sha = source[keep], sha[keep]
    size, mtime = _stat(directory, source)
    known = verified or {}
    todo = [i for i, (rel, n, t, h) in enumerate(zip(source.tolist(), size.tolist(), mtime.tolist(), sha.tolist()))
            if n < 0 or known.get(rel) != (n, t, h)]
    paths = source[todo].tolist()
    chunks = [paths[i:i + 4096] for i in range(0, len(paths), 4096)]
    now = sha.copy()
    now[todo] = [h for part in map_batches(_hash_batch, str(directory), chunks, **where) for h in part]
    problems = []
    for i in todo:
        rel, was, is_ = source[i], sha[i], now[i]
        if is_ == "":
            problems.append(f"{Path(directory) / rel}: in the store but now missing")
        elif is_ != was:
            problems.append(f"{Path(directory) / rel}: changed since it was stored "
                            f"(sha256 was {was[:12]}..., is {is_[:12]}...)")
    return problems, (source, sha, size, mtime)


def in_time_order(rows):
    """``rows`` sorted by start time, ties (and rows without one, last) in manifest order.

    The order :func:`thruput.campaign.monitor.combine` gives the runs, so that batches
    read in this order are appended one after the other: a runs.csv whose rows are not in
    time order (tests of several paths started at once, an imported archive) would
    otherwise have a later batch start before the end of the store and make it be
    rewritten whole, again and again.
    """
    times = np.array([mon._timestamp(r.started) for r in rows], dtype="datetime64[ns]")
    order = np.argsort(times, kind="stable")
    return rows if np.array_equal(order, np.arange(len(rows))) else [rows[i] for i in order]


def _remember(out, directory, known, checked, rows):
    """Update :func:`verified_path` of ``out``: what was recorded before (``known``, from
    :func:`load_verified`; updated in place), the files just verified (``checked``) and the
    raw files of ``rows`` just read (their sha256 checked against runs.csv as they were
    read; their size and time taken now)."""
    changed = False
    if checked is not None:
        for rel, h, n, t in zip(*(a.tolist() for a in checked)):
            if n >= 0 and known.get(rel) != (n, t, h):
                known[rel] = (n, t, h)
                changed = True
    new = [r for r in rows if r.path and r.sha256]
    size, mtime = _stat(directory, [r.path for r in new])
    for r, n, t in zip(new, size.tolist(), mtime.tolist()):
        known[r.path] = (n, t, r.sha256)
        changed = True
    if not changed and verified_path(out).is_file():
        return
    sources = list(known)
    save_verified(verified_path(out), directory, sources, [known[k][2] for k in sources],
                  np.array([known[k][0] for k in sources], dtype=np.int64),
                  np.array([known[k][1] for k in sources], dtype=np.int64))


def _check_prefix(directory, out, stored, text, digest):
    """The rows the store holds must be the first rows of runs.csv (``text``, whose
    :class:`~thruput.campaign.monitor.ManifestDigest` is ``digest``), unchanged."""
    n = int(stored.attrs["manifest_rows"])
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


def normalize_monitor(directory, out, *, workers=None, scheduler=None, client=None,
                      verify=True):
    """Bring the Zarr store ``out`` up to date with monitor campaign ``directory``.

    A new store is written from every row; an existing one gets the rows of runs.csv it
    does not hold yet, read wave by wave (:data:`WAVE_BATCHES` batches each) and appended.

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
        ``appended`` (False for a new store).

    Raises
    ------
    StoreError
        For changed rows or files already stored, or runs stored twice.
    thruput.errors.ThruputError
        For a bad campaign.yaml, runs.csv or raw file, naming file and line.
    """
    from ..parallel import MIN_BATCHES_FOR_CLUSTER, cluster, iter_batches
    from .dataset import load_metadata

    out = Path(out)
    metadata = load_metadata(directory)
    text = mon.read_manifest_text(directory)        # read and hashed once, for all below
    digest = mon.ManifestDigest(text)
    start, base = 0, None
    if is_store(out):
        base = xr.open_zarr(out, consolidated=True, chunks=None)
        if base.attrs.get("campaign") != metadata["name"]:
            raise StoreError(f"{out}: holds campaign {base.attrs.get('campaign')!r}, not {metadata['name']!r}")
        _check_prefix(directory, out, base, text, digest)
        start = int(base.attrs["manifest_rows"])
    rows, _ = mon.read_monitor_manifest(directory, start, text=text)
    known = load_verified(verified_path(out), directory)
    if client is None and len(mon.batches(rows)) < MIN_BATCHES_FOR_CLUSTER:
        workers = scheduler = None          # a cluster would take longer to start
    added = 0
    with cluster(workers, scheduler, client) as c:
        where = {"client": c} if c is not None else {}
        checked = None
        if base is not None and verify:
            problems, checked = verify_sources(
                directory, base, verified=None if verify == "all" else known, **where)
            if problems:
                raise StoreError(f"{out}: {len(problems)} raw files changed since they were "
                                 f"stored: {'; '.join(problems[:5])}. Delete {out} to normalize anew")
        if base is None and not rows:
            write_store(mon.validate_monitor(mon.empty(metadata, text)), out)
        if base is not None and rows:
            _refuse_stored_runs(out, [r.run for r in rows])     # once, for every wave below
        batches = mon.batches(in_time_order(rows))
        fragments = iter_batches(mon.read_batch, str(directory), batches, client=c)
        attrs = dict(base.attrs) if base is not None else None
        for wave in mon.batches(batches, WAVE_BATCHES):
            joined = mon.combine([next(fragments) for _ in wave])
            n = sum(len(b) for b in wave)
            ds = mon.finish(joined, metadata, text, start + added + n, digest.upto(start + added + n))
            del joined
            if attrs is not None:
                ds.attrs.update(mon.merge_ledgers([attrs, ds.attrs]))
            mon.validate_monitor(ds)
            if attrs is None and not is_store(out):
                write_store(ds, out)
            else:
                append_store(ds, out, checked=True)
            attrs = ds.attrs
            added += n
    _remember(out, directory, known, checked, rows)
    total = xr.open_zarr(out, consolidated=True, chunks=None)
    return {"runs_added": added, "runs": int(total.sizes["run"]), "appended": base is not None,
            "files_read": int(total.attrs["files_read"])}
