"""thruput.reader.file_bytes: a file's bytes in one read where the file allows it, and
the same bytes as ``open(path, "rb").read()`` whatever the file is."""

from __future__ import annotations

import os
import pytest

from thruput.errors import FileRefused
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


def test_a_fifo_a_device_a_folder_or_a_missing_file_is_refused_naming_it(tmp_path):
    """Never blocking on a FIFO nobody writes, never reading /dev/zero to the end."""
    os.mkfifo(tmp_path / "fifo")
    for path, what in ((tmp_path / "fifo", "a FIFO"), ("/dev/zero", "a character device"),
                       (tmp_path, "a folder"), (tmp_path / "nothing-here", "No such file")):
        with pytest.raises(FileRefused, match=what) as caught:
            file_bytes(str(path))
        assert caught.value.path == str(path)
