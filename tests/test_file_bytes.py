"""thruput.reader.file_bytes: a file's bytes in one read where the file allows it, and
the same bytes as ``open(path, "rb").read()`` whatever the file is."""

from __future__ import annotations

import os
import threading

import pytest

from thruput.reader import file_bytes


@pytest.mark.parametrize("data", [b"", b"x", b"ping\n" * 1000, bytes(range(256)) * 5000])
def test_a_regular_file_reads_whole(tmp_path, data):
    path = tmp_path / "f"
    path.write_bytes(data)
    assert file_bytes(str(path)) == data == file_bytes(path)
    assert file_bytes(str(path), limit=len(data)) == data
    if data:
        assert file_bytes(str(path), limit=len(data) - 1) is None      # larger than the limit


def test_a_file_whose_size_says_nothing_reads_to_its_end():
    """/proc files are regular with a size of 0: read on until the end."""
    with open("/proc/self/mounts", "rb") as f:
        expected = f.read()
    assert expected and file_bytes("/proc/self/mounts")[:20] == expected[:20]


def test_a_fifo_reads_to_its_end(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    data = b"64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.05 ms\n" * 50000

    def write():
        with open(path, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert file_bytes(str(path)) == data
    finally:
        writer.join()


def test_a_folder_or_a_missing_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(IsADirectoryError, match=str(tmp_path)):
        file_bytes(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        file_bytes(str(tmp_path / "nothing-here"))
