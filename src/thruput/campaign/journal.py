"""The change journal of a raw directory: which files changed since an append last checked.

An append checks that every stored raw file is unchanged (:func:`~thruput.campaign.store.
verify_sources`): one ``stat`` per stored file, the way ``git status`` and DVC do, which
is O(archive) (0.4 core-s at 2 x 10^5 files here, a third of a 1 % append). Where a
watcher (``thruput monitor watch DIR``, :mod:`thruput.campaign.watcher`) has kept the
directory's journal since the last check, the append stats and hashes only the files the
journal names: git's fsmonitor, for a campaign.

The journal, ``DIR/.thruput-journal``, is lines of text: a header ``thruput journal 1
TOKEN`` written once the watcher watches every folder (``TOKEN`` is new each time it
starts watching anew), then ``c PATH`` (this file changed: written, its attributes set,
created, removed or renamed), ``d PATH`` (everything under this folder), ``k NAME`` (the
cookie ``NAME`` was seen: every change made before it was created is above) and ``x
REASON`` (from here on nothing is known: the kernel's queue overflowed, a folder moved).
PATHs are relative to DIR, with ``\\``, newline and carriage return escaped.

The watcher holds an exclusive ``flock`` on the journal while it runs, so a reader knows
at once whether one is running. A reader (:func:`changes_since`) creates and removes a
cookie file in DIR, waits for its ``k`` line, and takes the lines between where the last
check stopped (its ``.since`` file beside the store's record: the token and byte offset)
and the cookie. Anything it cannot vouch for (no watcher, another token, an ``x`` line,
no answer within :data:`COOKIE_TIMEOUT_S`, a network file system) gives None: every
file is stat-ed, as without a journal.

Limits (as for git's fsmonitor): inotify sees changes made through this kernel only, so
not those made by other clients of NFS or Lustre (the watcher refuses such file systems),
nor writes through a memory map of a file that is never closed, nor writes to a stored
file through a hard link to it outside DIR.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import time
from pathlib import Path
from typing import NamedTuple

__all__ = ["JOURNAL", "COOKIE_PREFIX", "MAGIC", "COOKIE_TIMEOUT_S", "Since", "Changes",
           "changes_since", "since_path", "save_since", "forget_since", "header", "escape", "unescape"]

JOURNAL = ".thruput-journal"
COOKIE_PREFIX = ".thruput-cookie-"
MAGIC = "thruput journal 1"
#: Seconds a reader waits for the watcher to write its cookie's line (it takes ms).
COOKIE_TIMEOUT_S = 2.0
#: Longest journal tail a reader takes (bytes); a longer one is not read (every file stat-ed).
MAX_TAIL = 256 << 20


class Since(NamedTuple):
    """Where a check stopped reading the journal: its ``token`` and byte ``offset``."""
    token: str
    offset: int


class Changes(NamedTuple):
    """What the journal says changed between two checks."""
    files: frozenset        # paths relative to the directory
    folders: tuple          # folders (relative) everything under which changed
    now: Since              # where this check stopped: for the next

    def touches(self, source):
        """True if the stored file ``source`` (relative) may have changed."""
        return source in self.files or any(source.startswith(f + "/") for f in self.folders)


def escape(rel):
    """``rel`` as one journal line's path (``\\``, newline and CR escaped)."""
    return rel.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def unescape(text):
    """The path that :func:`escape` wrote as ``text``."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append({"n": "\n", "r": "\r"}.get(text[i + 1], text[i + 1]))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def since_path(record):
    """Where the check that wrote the store's record ``record`` stopped in the journal."""
    record = Path(record)
    return record.with_name(record.name + ".since")


def save_since(record, now):
    """Remember ``now`` (a :class:`Since`) for the record at ``record`` as it is now on
    disk (its inode, size and modification time, so a record written later by a check
    that did not read the journal disowns it)."""
    st = os.stat(record)
    path = since_path(record)
    part = path.with_name(path.name + ".part")
    part.write_text(f"{now.token} {now.offset} {st.st_ino} {st.st_size} {st.st_mtime_ns}\n")
    os.replace(part, path)


def forget_since(record):
    """Remove the ``.since`` of ``record`` (a check is under way: until it is done, the
    record's sizes and times are not known to follow any point of the journal)."""
    try:
        os.unlink(since_path(record))
    except FileNotFoundError:
        pass


def _load_since(record):
    """The :class:`Since` saved for ``record``, or None if there is none or the record has
    been written since."""
    try:
        token, offset, ino, size, mtime = since_path(record).read_text().split()
        st = os.stat(record)
    except (OSError, ValueError):
        return None
    if (st.st_ino, st.st_size, st.st_mtime_ns) != (int(ino), int(size), int(mtime)):
        return None
    return Since(token, int(offset))


def changes_since(directory, record):
    """What changed in the raw ``directory`` since the check that wrote the store's record
    ``record`` (:class:`Changes`; its ``now``: where this check starts), or ``(None,
    now)`` if the journal cannot say (``now``: a :class:`Since` to save once this check
    is done, or None if there is no watcher)."""
    try:
        return _changes_since(directory, record)
    except OSError:             # (the journal unreadable, say: every file is stat-ed)
        return None, None


def _changes_since(directory, record):
    try:
        fd = os.open(Path(directory) / JOURNAL, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None, None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pass                            # a watcher holds it: running
        else:
            return None, None               # no watcher: the journal is from one that stopped
        before = _load_since(record)
        for _ in range(2):      # (again once if the watcher started anew meanwhile)
            token = _token(fd)
            found = _read(fd, directory, before, token)
            if found is not _ANEW or not _new_token(fd, token):
                return (None, None) if found is _ANEW else found
        return None, None
    finally:
        os.close(fd)


_ANEW = object()


def _new_token(fd, old):
    """Wait for the journal open as ``fd`` to have a header other than ``old`` (it is
    written once the watcher watches every folder again); False if it has none in
    :data:`COOKIE_TIMEOUT_S`."""
    deadline = time.monotonic() + COOKIE_TIMEOUT_S
    while _token(fd) in (None, old):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def _read(fd, directory, before, token):
    """:func:`changes_since` of the journal open as ``fd``, whose header held ``token``;
    ``_ANEW`` if the watcher started it anew while it was read."""
    if token is None:
        return _ANEW
    cookie = _make_cookie(directory)
    if cookie is None:
        return None, None
    start = before.offset if before is not None and before.token == token else len(header(token))
    tail = _wait_for(fd, start, cookie)
    if tail is None:
        return _ANEW if _token(fd) != token else (None, None)
    lines, end = tail
    if _token(fd) != token or any(line.startswith("x ") for line in lines):
        return _ANEW
    now = Since(token, start + end)
    if before is None or before.token != token:
        return None, now
    files, folders = set(), []
    for line in lines:
        kind, _, rel = line.partition(" ")
        if kind == "c":
            files.add(unescape(rel))
        elif kind == "d":
            folders.append(unescape(rel).rstrip("/"))
    if "" in folders:
        return None, now
    return Changes(frozenset(files), tuple(folders), now), now


def header(token):
    """The journal's first line (with its newline) for the watcher's ``token``."""
    return f"{MAGIC} {token}\n"


def _token(fd):
    """The token of the journal open as ``fd``, or None if it has no header (yet)."""
    head = os.pread(fd, 128, 0).split(b"\n", 1)[0].decode("ascii", "replace")
    if not head.startswith(MAGIC + " "):
        return None
    token = head[len(MAGIC) + 1:]
    return token if token.isalnum() else None


def _make_cookie(directory):
    """Create and remove a cookie file in ``directory``: its name, or None if it cannot."""
    name = f"{COOKIE_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
    try:
        os.close(os.open(Path(directory) / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        os.unlink(Path(directory) / name)
    except OSError:
        return None
    return name


def _wait_for(fd, start, cookie):
    """The lines of the journal open as ``fd`` from byte ``start`` to the line of
    ``cookie`` and how many bytes they and it take, once the watcher has written it; None
    if it does not within :data:`COOKIE_TIMEOUT_S` or the tail is longer than
    :data:`MAX_TAIL`."""
    mark = f"k {cookie}\n".encode()
    deadline = time.monotonic() + COOKIE_TIMEOUT_S
    data, pause = b"", 0.0005
    while True:
        size = os.fstat(fd).st_size
        if size - start > MAX_TAIL or size < start:
            return None
        if size > start + len(data):
            data += os.pread(fd, size - start - len(data), start + len(data))
            at = data.find(mark)
            if at >= 0 and (at == 0 or data[at - 1:at] == b"\n"):
                end = at + len(mark)
                text = data[:at].decode("utf-8", "surrogateescape")
                return text.splitlines(), end
        if time.monotonic() > deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
