"""``thruput monitor`` on a full disk or a read-only folder (issue 40): a clear error, no
traceback, nothing half-written (no empty lock file, no ``.part``, no partial runs.csv row),
and a restart that goes on once there is room. Real ping to loopback on a small tmpfs that
the test mounts (root only)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from thruput.monitor.campaign import monitor
from thruput.monitor.lock import LOCK_FILE, CampaignNotWritable
from thruput.monitor.manifest import MANIFEST, read_rows
from thruput.monitor.new import new_campaign
from thruput.monitor.runner import record_test
from thruput.monitor.schedule import Path, TestSpec

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")

#: Small enough to fill in a moment, large enough for a few slots of ping logs.
TMPFS_SIZE = "512k"


def _mount(where, options):
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                          capture_output=True, text=True)
    if proc.returncode:
        pytest.skip(f"cannot mount a tmpfs: {proc.stderr.strip()}")


@pytest.fixture
def disk(tmp_path):
    where = tmp_path / "disk"
    where.mkdir()
    _mount(where, f"size={TMPFS_SIZE}")
    yield where
    subprocess.run(["umount", str(where)], check=True)


def _campaign(disk):
    directory = disk / "mon"
    new_campaign(str(directory), to="127.0.0.1", source="here", destination="lo",
                 directions=("forward",), interval_s=1.0, ping_sizes=[56], ping_count=2,
                 ping_interval_s=0.2, timeout_s=10.0)
    return directory


def _fill(disk):
    """Fill ``disk`` to the last byte; return the filler file."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    return filler


def _cli(directory, *args):
    return subprocess.run([sys.executable, "-m", "thruput.cli", "monitor", str(directory), *args],
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def _left(directory):
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


def test_a_read_only_folder_is_a_clear_error_and_a_restart_works(disk):
    directory = _campaign(disk)
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    try:
        with pytest.raises(CampaignNotWritable, match="Read-only file system"):
            monitor(str(directory), duration_s=2)
        proc = _cli(directory, "--duration", "2s")
        assert proc.returncode == 1
        assert "Traceback" not in proc.stderr
        assert f"{directory / LOCK_FILE}: cannot write the monitor's lock file: Read-only file " \
               "system" in proc.stderr
        assert _left(directory) == ["campaign.yaml"]
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
    assert monitor(str(directory), duration_s=1.5) >= 1
    rows = read_rows(str(directory))
    assert rows and all(r.outcome == "ok" for r in rows)
    assert not (directory / LOCK_FILE).exists()   # removed when the monitor ended


def test_a_full_disk_leaves_no_empty_lock_file_and_a_restart_goes_on(disk):
    directory = _campaign(disk)
    assert monitor(str(directory), duration_s=1.5) >= 1
    before = (directory / MANIFEST).read_bytes()
    slots = {int(r.slot) for r in read_rows(str(directory))}
    filler = _fill(disk)
    proc = _cli(directory, "--duration", "3s")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "No space left on device" in proc.stderr and "run `thruput monitor` again" in proc.stderr
    assert not (directory / LOCK_FILE).exists()
    assert (directory / MANIFEST).read_bytes() == before
    assert not [p for p in _left(directory) if p.endswith(".part")]
    filler.unlink()
    assert monitor(str(directory), duration_s=1.5) >= 1
    after = read_rows(str(directory))
    assert min(int(r.slot) for r in after if int(r.slot) not in slots) > max(slots)


def test_a_test_whose_log_cannot_be_written_leaves_nothing_behind(disk):
    directory = _campaign(disk)
    spec = TestSpec(Path("here-lo", "127.0.0.1", "here", "lo"), "forward", "ping", "ping",
                    size=56, count=2, interval_s=0.2)
    record_test(str(directory), spec, 0, 10.0)
    before = (directory / MANIFEST).read_bytes()
    files = _left(directory)
    filler = _fill(disk)
    with pytest.raises(CampaignNotWritable, match="No space left on device") as err:
        record_test(str(directory), spec, 1, 10.0)
    assert "the result of test 000001-here-lo-forward-ping-z56" in str(err.value)
    assert _left(directory) == files                  # no .part, no log without its row
    assert (directory / MANIFEST).read_bytes() == before
    filler.unlink()
    row = record_test(str(directory), spec, 1, 10.0)
    assert row.outcome == "ok" and (directory / row.path).is_file()
