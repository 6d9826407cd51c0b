"""One monitor per campaign: an exclusive ``fcntl`` lock on ``<campaign>/.monitor.lock``.

The lock belongs to the open file, so the kernel releases it when the process ends in any
way (SIGKILL included); a lock file left by a killed monitor is harmless. The file holds
the PID of the holder, so a second copy can say who is running, and it is removed when the
monitor ends. A folder the monitor cannot write to (read-only, full) is a
:class:`CampaignNotWritable` error naming the file and the system's reason, with no lock
file left behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os

from ..errors import ThruputError

__all__ = ["LOCK_FILE", "CampaignLocked", "CampaignNotWritable", "CampaignLock", "holder",
           "not_writable"]

LOCK_FILE = ".monitor.lock"
#: Times to retry taking the lock when the file was removed by its holder in between.
LOCK_ATTEMPTS = 5


class CampaignLocked(ThruputError):
    """Another process holds the campaign's monitor lock."""


class CampaignNotWritable(ThruputError):
    """The campaign folder cannot be written (read-only, full, no permission)."""


def not_writable(path, exc, what):
    """A :class:`CampaignNotWritable` for ``exc`` (an OSError) met writing ``what`` at ``path``."""
    reason = exc.strerror or str(exc)
    return CampaignNotWritable(
        f"{path}: cannot write {what}: {reason} (errno {exc.errno}). Nothing half-written is "
        "left; make room (or make the folder writable) and run `thruput monitor` again: it "
        "goes on with the next slot.")


def holder(campaign_dir):
    """PID written in the lock file (None if there is none or it is unreadable)."""
    try:
        with open(os.path.join(campaign_dir, LOCK_FILE)) as f:
            return int(f.read().strip() or 0) or None
    except (OSError, ValueError):
        return None


class CampaignLock:
    """Context manager: hold the monitor lock of ``campaign_dir`` or raise
    :class:`CampaignLocked` (someone else holds it) or :class:`CampaignNotWritable`."""

    def __init__(self, campaign_dir):
        self.path = os.path.join(campaign_dir, LOCK_FILE)
        self.fd = None

    def _open(self):
        """The lock file's descriptor, locked; None if its holder removed it meanwhile."""
        existed = os.path.exists(self.path)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise not_writable(self.path, exc, "the monitor's lock file") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            pid = holder(os.path.dirname(self.path))
            who = f"process {pid}" if pid else "another process"
            raise CampaignLocked(f"{self.path}: {who} is already monitoring this campaign "
                                 "(one monitor per campaign; stop it first)") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            same = False
        if not same:                      # its holder ended and removed it: take a new one
            os.close(fd)
            return None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            os.fsync(fd)
        except OSError as exc:
            if not existed:               # no empty lock file left behind
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
            os.close(fd)
            raise not_writable(self.path, exc, "the monitor's lock file") from None
        return fd

    def __enter__(self):
        for _ in range(LOCK_ATTEMPTS):
            fd = self._open()
            if fd is not None:
                self.fd = fd
                return self
        raise CampaignLocked(f"{self.path}: the lock file keeps being replaced; is another "
                             "monitor starting and stopping?")

    def __exit__(self, *exc):
        # removed while still held, so a monitor that opens it next finds it gone and
        # takes a new one (see _open); a monitor killed here leaves a harmless stale file
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None
        return False
