"""Chunks of a Zarr format 2 array written straight to their files, as zarr would.

zarr-python 3 writes a chunk through its asynchronous pipeline, which hands every filter
and compressor call to a thread: about 1 ms a chunk, most of the time a monitor unit
(35 arrays, one chunk each) takes to be written. :func:`write_rows` does what zarr does
for the chunks of a region along the first dimension:

- the values are cast to the array's dtype;
- a chunk the region covers only in part (an append's first, the array's last) is what
  its file holds (decoded by the compressor, then the filters in reverse) or else the
  fill value (zarr's default for the dtype when the metadata says ``null``), with the
  region's rows written over it;
- a chunk whose values all equal the fill value is not written and its file is deleted
  (zarr's ``write_empty_chunks=False``, decided by zarr's own comparison);
- any other chunk is encoded by the array's filters, then its compressor (numcodecs), and
  written to its file (in place, see :func:`_put`; a chunk that holds stored rows too,
  renamed over its file as zarr does, see :func:`_replace`).

It leaves anything else to zarr: format 3, Fortran order, an array chunked along more
than its first dimension, a chunk file it cannot decode to a whole chunk. The store's
bytes are zarr's: a test compares the files, and every monitor-store test writes through
here.
"""

from __future__ import annotations

import os

__all__ = ["write_rows"]


def write_rows(array, folder, value, offset):
    """Write ``value`` into rows ``offset`` on of ``array`` (a ``zarr.AsyncArray`` whose
    chunk files are in the local directory ``folder``); False, with nothing written, where
    zarr must do it (see the module)."""
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.metadata.v2 import ArrayV2Metadata

    meta = array.metadata
    if not isinstance(meta, ArrayV2Metadata) or meta.order != "C" or value.ndim != len(meta.shape):
        return False
    rows, end = meta.chunks[0], offset + value.shape[0]
    if (tuple(meta.chunks[1:]) != tuple(meta.shape[1:]) or value.shape[1:] != tuple(meta.shape[1:])
            or end > meta.shape[0] or offset >= end):
        return False
    native = meta.dtype.to_native_dtype()
    fill = meta.fill_value if meta.fill_value is not None else meta.dtype.default_scalar()
    prototype = default_buffer_prototype()
    value = value.astype(native, order="C", copy=False)
    blocks = []         # (every chunk made before any is written: a False writes nothing)
    for index in range(offset // rows, -(-end // rows)):
        first, path = index * rows, _chunk_file(folder, meta, index)
        if offset <= first and first + rows <= end:
            blocks.append((path, value[first - offset:first + rows - offset], False))
            continue
        block = _stored(meta, path, rows, native)      # (covered in part: merged as zarr does)
        held = block is not None                        # (rows stored before: replaced whole)
        if block is None:
            block = prototype.nd_buffer.create(shape=(rows, *meta.shape[1:]), dtype=native,
                                               order="C", fill_value=fill).as_numpy_array()
        elif block is False:
            return False
        lo, hi = max(offset, first), min(end, first + rows)
        block[lo - first:hi - first] = value[lo - offset:hi - offset]
        blocks.append((path, block, held))
    for path, block, held in blocks:
        if prototype.nd_buffer.from_numpy_array(block).all_equal(fill):
            try:
                os.remove(path)
            except FileNotFoundError:
                pass
            continue
        (_replace if held else _put)(path, _encoded(meta, block))
    return True


def _stored(meta, path, rows, native):
    """The chunk whose file is ``path`` as zarr decodes it (a writable array of ``rows``
    rows), None if there is no file, False if it does not decode to a whole chunk."""
    import numpy as np
    from numcodecs.compat import ensure_ndarray_like

    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    try:
        if meta.compressor is not None:
            data = meta.compressor.decode(data)
        for codec in reversed(meta.filters or ()):
            data = codec.decode(data)
        block = ensure_ndarray_like(data)
        if block.dtype != object:       # (bytes: the values; strings come decoded to objects)
            block = block.view(native)
        return np.array(block.reshape(-1).reshape((rows, *meta.shape[1:])), dtype=native)
    except (ValueError, TypeError, RuntimeError):
        return False


def _chunk_file(folder, meta, index):
    """The file of run chunk ``index`` (the only chunk along every other dimension)."""
    key = meta.dimension_separator.join([str(index)] + ["0"] * (len(meta.shape) - 1))
    return os.path.join(folder, key)


def _encoded(meta, block):
    """``block`` as the array's filters and compressor store it (bytes)."""
    from numcodecs.compat import ensure_bytes

    data = block
    for codec in meta.filters or ():
        data = codec.encode(data)
    if meta.compressor is not None:
        data = meta.compressor.encode(data)
    return ensure_bytes(data)


def _put(path, data):
    """Write ``data`` to ``path``, in place: zarr writes a temporary file and renames it,
    which on ext4 costs four times as much (renaming over a file flushes it). Only a chunk
    that holds no stored row is written so, and no reader can see it half-written: it lies
    past the rows the store's consolidated metadata shows until the attrs are written
    last, and a write cut short is written again, whole, by the next normalize. A chunk
    that holds stored rows too (an append's first) is replaced whole (:func:`_replace`)."""
    try:
        f = open(path, "wb")
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        f = open(path, "wb")
    with f:
        f.write(data)


def _replace(path, data):
    """Write ``data`` to a file beside ``path``, then rename it over ``path``, as zarr
    does: a chunk holding rows already stored (an append's first, merged) is never seen
    half-written, even by an append cut short in the middle of writing it."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.part")        # (no chunk's name)
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
