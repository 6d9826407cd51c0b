"""One monitor per campaign: an exclusive ``fcntl`` lock on ``<campaign>/.monitor.lock``.

The lock belongs to the open file, so the kernel releases it when the process ends in any
way (SIGKILL included); a stale lock file is harmless. The file holds the PID of the
holder, so a second copy can say who is running.
"""

from __future__ import annotations

import fcntl
import os

from ..errors import ThruputError

__all__ = ["LOCK_FILE", "CampaignLocked", "CampaignLock", "holder"]

LOCK_FILE = ".monitor.lock"


class CampaignLocked(ThruputError):
    """Another process holds the campaign's monitor lock."""


def holder(campaign_dir):
    """PID written in the lock file (None if there is none or it is unreadable)."""
    try:
        with open(os.path.join(campaign_dir, LOCK_FILE)) as f:
            return int(f.read().strip() or 0) or None
    except (OSError, ValueError):
        return None


class CampaignLock:
    """Context manager: hold the monitor lock of ``campaign_dir`` or raise CampaignLocked."""

    def __init__(self, campaign_dir):
        self.path = os.path.join(campaign_dir, LOCK_FILE)
        self.fd = None

    def __enter__(self):
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            pid = holder(os.path.dirname(self.path))
            who = f"process {pid}" if pid else "another process"
            raise CampaignLocked(f"{self.path}: {who} is already monitoring this campaign "
                                 "(one monitor per campaign; stop it first)") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        os.fsync(fd)
        self.fd = fd
        return self

    def __exit__(self, *exc):
        os.ftruncate(self.fd, 0)
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None
        return False
