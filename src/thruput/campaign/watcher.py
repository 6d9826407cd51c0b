"""Keep the change journal of a raw directory (:mod:`thruput.campaign.journal`) with inotify.

``thruput monitor watch DIR`` runs :func:`watch`: it holds an exclusive ``flock`` on
``DIR/.thruput-journal``, watches DIR and every folder under it (following symbolic links
to folders, as the readers do), writes the header once all are watched, then one line
per change as the kernel reports it, and the ``k`` line of each reader's cookie. When it
can no longer vouch for the journal (the kernel's queue overflowed, a folder moved or
DIR went away, the journal grew past :data:`MAX_JOURNAL`) it writes an ``x`` line and
starts anew with a new token: the next append stats every file once. Linux only (inotify,
through the C library).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import os
import secrets
import select
import struct
from pathlib import Path

from ..errors import ThruputError
from .journal import COOKIE_PREFIX, JOURNAL, escape, header

__all__ = ["watch", "Watcher", "WatchError", "MAX_JOURNAL", "NETWORK_FILE_SYSTEMS"]

#: Bytes of journal after which the watcher starts it anew (one full check follows).
MAX_JOURNAL = 64 << 20

# inotify(7)
IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_UNMOUNT, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
IN_ONLYDIR, IN_ISDIR = 0x01000000, 0x40000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
        | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
_EVENT = struct.Struct("iIII")

#: statfs(2) ``f_type`` of file systems whose files other machines change unseen by inotify.
NETWORK_FILE_SYSTEMS = {0x6969: "NFS", 0x517B: "SMB", 0xFF534D42: "CIFS", 0xFE534D42: "SMB2",
                        0x00C36400: "Ceph", 0x0BD00BD0: "Lustre", 0x47504653: "GPFS",
                        0x5346414F: "AFS", 0x01021997: "9P", 0x65735546: "FUSE",
                        0x19830326: "BeeGFS", 0xAAD7AAEA: "PanFS"}


class WatchError(ThruputError):
    """The directory cannot be watched (not Linux, a network file system, another watcher)."""


def _libc():
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    for name in ("inotify_init1", "inotify_add_watch", "statfs"):
        if not hasattr(libc, name):
            raise WatchError(f"this system has no {name} (inotify is Linux only)")
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    return libc


def _linked_file(rel):
    return WatchError(f"{rel} is a symbolic link to a file: writes to its target reach no "
                      "watch here, so the journal could not name it (appends stat every file "
                      "without a watcher)")


def file_system(path, libc=None):
    """statfs(2)'s ``f_type`` of the file system holding ``path`` (its first field)."""
    libc = libc or _libc()
    buf = ctypes.create_string_buffer(256)
    if libc.statfs(os.fsencode(path), buf) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), str(path))
    return ctypes.c_ulong.from_buffer(buf).value & 0xFFFFFFFF


class Watcher:
    """The journal of ``directory``, kept while :meth:`run` runs (or :meth:`step` is called)."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self.libc = _libc()
        kind = file_system(self.directory, self.libc)
        if kind in NETWORK_FILE_SYSTEMS:
            raise WatchError(f"{self.directory}: on {NETWORK_FILE_SYSTEMS[kind]}, whose files other "
                             "machines change unseen by inotify: appends stat every file there")
        self.journal = os.open(self.directory / JOURNAL, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(self.journal, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.journal)
            raise WatchError(f"{self.directory}: another watcher keeps its journal") from None
        self.fd, self.paths, self.token, self.written = -1, {}, None, 0
        try:
            self.start()
        except BaseException:
            self.close()
            raise

    def start(self):
        """Watch every folder anew and begin a new journal (new token)."""
        if self.fd >= 0:
            os.close(self.fd)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            e = ctypes.get_errno()
            raise WatchError(f"inotify_init1: {os.strerror(e)}")
        self.paths, self.written = {}, 0
        self._add_tree("")
        self.token = secrets.token_hex(8)
        os.ftruncate(self.journal, 0)
        self._write([header(self.token).rstrip("\n")])

    def _add(self, rel):
        """Watch the folder ``rel``; False if it is gone (or is not a folder)."""
        path = self.directory / rel if rel else self.directory
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(path), MASK)
        if wd < 0:
            e = ctypes.get_errno()
            if e in (errno.ENOENT, errno.ENOTDIR):
                return False
            hint = " (raise fs.inotify.max_user_watches)" if e == errno.ENOSPC else ""
            raise WatchError(f"{path}: cannot be watched: {os.strerror(e)}{hint}")
        if self.paths.get(wd, rel) != rel:      # (a link to a folder watched already)
            raise WatchError(f"{self.directory}: {self.paths[wd] or '.'} and {rel} are the same folder; "
                             "a journal naming its files by one path would miss them by the other")
        self.paths[wd] = rel
        return True

    def _add_tree(self, rel):
        """Watch ``rel`` and every folder under it (through links; a folder reached by two
        paths is refused: see :meth:`_add`)."""
        todo = [rel]
        while todo:
            here = todo.pop()
            if not self._add(here):     # (refused if watched already by another path)
                continue
            path = self.directory / here if here else self.directory
            try:
                with os.scandir(path) as entries:
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=True):
                            todo.append(f"{here}/{entry.name}" if here else entry.name)
                        elif entry.is_symlink():
                            raise _linked_file(f"{here}/{entry.name}" if here else entry.name)
            except OSError:
                continue

    def _write(self, lines):
        data = "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")
        os.write(self.journal, data)
        self.written += len(data)

    def step(self, timeout=None):
        """Read what the kernel has queued (waiting up to ``timeout`` s) and journal it."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return
        try:
            buf = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return
        lines, restart = [], None
        at = 0
        while at + _EVENT.size <= len(buf):
            wd, mask, _, size = _EVENT.unpack_from(buf, at)
            name = buf[at + _EVENT.size:at + _EVENT.size + size].split(b"\0", 1)[0]
            at += _EVENT.size + size
            folder = self.paths.get(wd)
            text = os.fsdecode(name)
            if folder == "" and text.startswith(COOKIE_PREFIX):
                if mask & IN_CREATE:        # (after an 'x' too: its reader learns at once)
                    lines.append(f"k {text}")
                continue
            if restart is not None:
                continue                    # (nothing after the 'x' counts: watched anew below)
            restart = self._lost(mask, folder, text)
            if restart is not None:
                lines.append(f"x {restart}")     # (in its place: before any later cookie)
                continue
            if folder is None or mask & (IN_IGNORED | IN_DELETE_SELF):
                if mask & IN_IGNORED:
                    self.paths.pop(wd, None)
                continue
            rel = f"{folder}/{text}" if folder else text
            if folder == "" and (text == JOURNAL or text.startswith(JOURNAL + ".")):
                continue
            if mask & IN_ISDIR:
                lines.append(f"d {escape(rel)}")
                if mask & (IN_CREATE | IN_MOVED_TO):
                    self._add_tree(rel)         # (then anything in it is under this 'd')
                continue
            if mask & (IN_CREATE | IN_MOVED_TO) and os.path.islink(self.directory / rel):
                raise _linked_file(rel)
            line = f"c {escape(rel)}"
            if not lines or lines[-1] != line:      # (a file written: several events, one line)
                lines.append(line)
        if lines:
            self._write(lines)
        if restart is None and self.written > MAX_JOURNAL:
            restart = "the journal is full"
            self._write([f"x {restart}"])
        if restart is not None:
            self.start()

    @staticmethod
    def _lost(mask, folder, name):
        """Why the event ``mask`` on ``name`` in the watched ``folder`` (None: not watched)
        ends what the journal can vouch for, or None if it does not."""
        if mask & IN_Q_OVERFLOW:
            return "the kernel's event queue overflowed"
        if folder == "" and mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT):
            return "the directory itself moved or went away"
        if folder is not None and mask & (IN_MOVE_SELF | IN_UNMOUNT):
            return f"{folder} moved or was unmounted"
        if folder is not None and mask & IN_ISDIR and mask & IN_MOVED_FROM:
            return f"{f'{folder}/' if folder else ''}{os.fsdecode(name)} moved"
        return None

    def run(self, stop=lambda: False):
        """Keep the journal until ``stop()`` is true (checked every second)."""
        while not stop():
            self.step(1.0)

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.journal >= 0:
            self._write(["x the watcher stopped"])
            os.close(self.journal)          # (lets go of the lock)
            self.journal = -1


def watch(directory, stop=lambda: False, ready=None):
    """Keep the journal of ``directory`` until ``stop()`` is true; ``ready()`` is called
    once every folder is watched."""
    w = Watcher(directory)
    try:
        if ready is not None:
            ready()
        w.run(stop)
    finally:
        w.close()
