"""Chunks written straight to their files are the files zarr writes."""

from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr

from thruput.campaign import chunks

CASES = {      # dtype, fill value, values with an all-fill chunk among them
    "float": ("<f8", np.nan, np.r_[1.5, -0.0, np.nan, 2.0, np.full(4, np.nan), 7.0, 8.0]),
    "float zero fill": ("<f8", 0.0, np.r_[1.0, 2.0, 3.0, 4.0, -0.0, 0.0, -0.0, 0.0, 9.0, 0.0]),
    "int": ("<i8", None, np.r_[3, 1, 4, 1, 0, 0, 0, 0, 5, 9]),
    "int8 codes": ("|i1", None, np.array([[1, 0, 2], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0],
                                          [0, 0, 0], [0, 0, 0], [0, 0, 0], [3, 3, 3], [1, 2, 3]],
                                         dtype=np.int8)),
    "strings": (str, None, np.array(["a", "", "ü-€", "d", "", "", "", "", "long" * 20, ""], dtype=object)),
}


def _array(path, dtype, fill, shape):
    """A Zarr format 2 array of 4-row chunks, compressed as a monitor store's are."""
    return zarr.create_array(str(path), shape=shape, chunks=(4, *shape[1:]), dtype=dtype,
                             fill_value=fill, zarr_format=2,
                             compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1))


def _files(path):
    return {p.name: p.read_bytes() for p in Path(path).iterdir() if not p.name.startswith(".")}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("offset, n", [(0, 10), (4, 4), (4, 6), (0, 8)])
def test_whole_chunks_are_zarrs_bytes(tmp_path, case, offset, n):
    _write_both(tmp_path, case, offset, n, (4, 8, CASES[case][2][:4]))  # (then its fill only)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("offset, n, before", [
    (2, 4, None), (0, 6, None), (5, 5, None),           # chunks covered in part, no file there
    (2, 4, (0, 8)), (6, 4, (4, 10)), (8, 2, (8, 10)),   # ... merged with what their files hold
    (9, 1, (0, 10))])
def test_chunks_covered_in_part_are_merged_as_zarr_merges_them(tmp_path, case, offset, n, before):
    """A region that begins or ends inside a chunk (an append's first, the array's last)
    gives the bytes zarr writes: what the chunk's file held, or the fill value, under it."""
    if before is not None:
        before = (*before, CASES[case][2][::-1][before[0]:before[1]])
    _write_both(tmp_path, case, offset, n, before)


def _write_both(tmp_path, case, offset, n, before):
    """Rows ``offset`` to ``offset + n`` of the case's values written by zarr and by
    :func:`chunks.write_rows` into two arrays holding ``before`` (start, stop, values) or
    nothing: the same files, the same values."""
    dtype, fill, values = CASES[case]
    by_zarr = _array(tmp_path / "zarr", dtype, fill, values.shape)
    direct = _array(tmp_path / "direct", dtype, fill, values.shape)
    if before is not None:
        for array in (by_zarr, direct):
            array[before[0]:before[1]] = before[2]
    part = values[offset:offset + n]
    by_zarr[offset:offset + n] = part
    assert chunks.write_rows(direct._async_array, str(tmp_path / "direct"), part, offset)
    assert _files(tmp_path / "direct") == _files(tmp_path / "zarr")
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "direct"), mode="r")[:],
                                  by_zarr[:])


def test_a_chunk_merged_to_its_fill_value_alone_loses_its_file(tmp_path):
    by_zarr = _array(tmp_path / "zarr", "<f8", np.nan, (10,))
    direct = _array(tmp_path / "direct", "<f8", np.nan, (10,))
    for array in (by_zarr, direct):
        array[4:6] = [1.0, 2.0]
    by_zarr[4:6] = np.nan
    assert chunks.write_rows(direct._async_array, str(tmp_path / "direct"), np.full(2, np.nan), 4)
    assert _files(tmp_path / "direct") == _files(tmp_path / "zarr") == {}


def test_a_chunk_file_that_does_not_decode_is_left_to_zarr(tmp_path):
    direct = _array(tmp_path / "direct", "<f8", np.nan, (10,))
    direct[0:4] = [1.0, 2.0, 3.0, 4.0]
    (tmp_path / "direct" / "1").write_bytes(b"not a chunk")
    before = _files(tmp_path / "direct")
    assert not chunks.write_rows(direct._async_array, str(tmp_path / "direct"), np.ones(4), 2)
    assert _files(tmp_path / "direct") == before


def test_a_chunk_holding_stored_rows_is_replaced_whole_the_others_written_in_place(tmp_path, monkeypatch):
    """An append's first chunk holds rows already stored: it is written to a file beside
    it and renamed over it, never rewritten in place (cut short, the stored rows would be
    lost); a chunk of new rows alone is written in place. No file of the write is left."""
    direct = _array(tmp_path / "direct", "<f8", np.nan, (12,))
    direct[0:6] = np.arange(6.0)                        # chunk 0 whole, chunk 1 in part
    folder = tmp_path / "direct"
    (folder / "2").write_bytes(b"")                     # (a chunk's file there already)
    inode = {name: (folder / name).stat().st_ino for name in ("0", "1", "2")}
    written = []
    real = chunks._replace
    monkeypatch.setattr(chunks, "_replace", lambda path, data: written.append(Path(path).name) or real(path, data))
    assert chunks.write_rows(direct._async_array, str(folder), np.arange(6.0, 12.0), 6)
    assert written == ["1"]
    assert (folder / "1").stat().st_ino != inode["1"] and (folder / "2").stat().st_ino == inode["2"]
    assert (folder / "0").stat().st_ino == inode["0"]
    assert sorted(p.name for p in folder.iterdir()) == [".zarray", ".zattrs", "0", "1", "2"]
    np.testing.assert_array_equal(zarr.open_array(str(folder), mode="r")[:], np.arange(12.0))
