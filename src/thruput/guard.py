"""One way in for every file thruput opens: what it is, where it is, how big, how it loads.

Every file a user or an archive hands to thruput (logs, ``campaign.yaml``, ``runs.csv``,
``params.yaml``, ``claims.yaml``, a page's YAML, archive members) is opened here, and
refused with a :class:`~thruput.errors.FileRefused` (a ThruputError naming the file) when

- it is not a regular file: a FIFO, a device (``/dev/zero``), a folder, a socket; the open
  never blocks (``O_NONBLOCK``), so a FIFO with no writer cannot hang a read;
- it lies outside the folder it belongs to once links are resolved (a campaign's files
  inside the campaign, a project's inside the project);
- it is larger than the limit of its kind (:data:`LIMITS`), checked before a byte is read
  (and a file that grows while read is cut at the limit and refused);
- its text is not UTF-8 (where the kind must be): the line of the first bad byte is named.

YAML is loaded with the node tree bounded (:func:`load_yaml`: aliases expanded, nodes,
characters and depth counted on the tree before anything is built from it, so an alias
bomb is refused in microseconds instead of taking gigabytes when rendered), JSON with its
depth bounded (:func:`load_json`), numbers from a file before they size anything
(:func:`bounded_int`). :func:`spreadsheet_safe` neutralises CSV cells a spreadsheet
would run as formulas.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from .errors import FileRefused, ParseError

__all__ = [
    "LIMITS",
    "MAX_CELLS",
    "MAX_REPEATS",
    "FileRefused",
    "bounded_int",
    "check",
    "decode_utf8",
    "inside",
    "load_json",
    "load_yaml",
    "load_yaml_file",
    "open_fd",
    "read_bytes",
    "read_text",
    "spreadsheet_safe",
]

#: The largest file (bytes) of each kind thruput reads; past it the file is refused before
#: it is read. Logs: the streaming reader's limit (a ping log of 13 M replies is 770 MB;
#: larger logs are split); the readers' whole-file limits are tighter
#: (:data:`thruput.reader.WHOLE_BYTES`). Campaign files are written by hand or by thruput:
#: a monitor's ``runs.csv`` of a million rows is some 200 MB (read in bulk by Arrow); a
#: sweep's is checked row by row in Python (1.3 KB a row: a million rows took 1.45 GB), so
#: its limit is some 200,000 rows; a hand-written YAML file is kilobytes.
LIMITS = {
    "log": 4 * 2**30,
    "runs.csv": 256 * 2**20,
    "sweep runs.csv": 32 * 2**20,
    "campaign.yaml": 2**20,
    "params.yaml": 2**20,
    "claims.yaml": 4 * 2**20,
    "page.yaml": 2**20,
    "yaml": 4 * 2**20,
    "json": 256 * 2**20,
    "member": 256 * 2**20,
    "text": 64 * 2**20,
}
#: The kind of the pipeline's parameters file (a key of :data:`LIMITS`), for callers that
#: are given its path (a page never reads one from the working directory).
PARAMS = "params.yaml"
#: Nodes a YAML document may expand to (aliases counted at every use) and characters its
#: scalars may add up to so: a billion-laughs document expands to 10^9 nodes from 1 KB.
YAML_NODES = 200_000
YAML_CHARS = 16 * 2**20
#: Nesting of YAML and JSON (containers inside containers): deeper is no file a person or
#: a tool wrote, and Python's recursion would fail on it.
MAX_DEPTH = 200
#: The largest count a file may ask for where it sizes an array (a plan's ``repeats``, a
#: row's ``repeat``): beyond it a campaign is not one a machine records.
MAX_REPEATS = 100_000
#: The most runs (windows x streams x repeats) a plan may ask for: the cells of a campaign's
#: Dataset are sized by it.
MAX_CELLS = 1_000_000

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _limit(kind, limit):
    return LIMITS.get(kind, LIMITS["text"]) if limit is None else limit


def inside(path, root):
    """Is ``path``, links resolved, inside the folder ``root`` (links resolved)?"""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _refuse(path, message, line=None):
    return FileRefused(message, line=line, path=os.fsdecode(os.fspath(path)))


def open_fd(path, kind="text", *, root=None, limit=None):
    """Open ``path`` for reading without ever blocking; return ``(fd, os.stat_result)``.

    Parameters
    ----------
    path : str or path-like
    kind : str
        A key of :data:`LIMITS` (what the file is), for its size limit and messages.
    root : str or path-like, optional
        The folder the file belongs to: refused if, links resolved, it is outside.
    limit : int, optional
        Bytes; default ``LIMITS[kind]``. None-like 0 is no file at all.

    Raises
    ------
    FileRefused
        Missing, unreadable, a link loop, not a regular file, outside ``root``, or larger
        than the limit.
    """
    if root is not None and not inside(path, root):
        raise _refuse(path, f"refused: the {kind} is outside {os.fsdecode(os.fspath(root))} once links are resolved")
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise _refuse(path, exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            what = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
            raise _refuse(path, f"refused: the {kind} is {what}, not a regular file")
        limit = _limit(kind, limit)
        if st.st_size > limit:
            raise _refuse(path, f"refused: {_size(st.st_size)}, past the {_size(limit)} limit of a "
                                f"{kind} (thruput.guard.LIMITS)")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def check(path, kind="text", *, root=None, limit=None):
    """:func:`open_fd`'s checks, the file closed again: its ``os.stat_result``."""
    fd, st = open_fd(path, kind, root=root, limit=limit)
    os.close(fd)
    return st


def read_bytes(path, kind="text", *, root=None, limit=None):
    """The bytes of ``path`` after :func:`open_fd`'s checks; a file that grows past the
    limit while read is refused (at most the limit and a byte are read)."""
    fd, st = open_fd(path, kind, root=root, limit=limit)
    limit = _limit(kind, limit)
    try:
        parts, got = [], 0
        want = st.st_size + 1 if st.st_size else 1 << 16     # (/proc files say 0)
        while True:
            data = os.read(fd, min(want, limit + 1 - got))
            if not data:
                break
            parts.append(data)
            got += len(data)
            if got > limit:
                raise _refuse(path, f"refused: past the {_size(limit)} limit of a {kind} (it grew while read)")
            want = 1 << 20
    except OSError as exc:
        raise _refuse(path, f"cannot read the {kind}: {exc.strerror}") from None
    finally:
        os.close(fd)
    return b"".join(parts)


def decode_utf8(data, path):
    """``data`` decoded as UTF-8 (a BOM dropped); invalid bytes are a FileRefused naming
    the line and the byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _refuse(path, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); save "
                            "the file as UTF-8", line=line) from None


def read_text(path, kind="text", *, root=None, limit=None):
    """The UTF-8 text of ``path`` after :func:`open_fd`'s checks (:func:`decode_utf8`)."""
    return decode_utf8(read_bytes(path, kind, root=root, limit=limit), path)


def _size(n):
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n:,} bytes"


# --- YAML and JSON, bounded ------------------------------------------------------------


def _yaml_loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def yaml_bounds(node, path="<yaml>", *, nodes=YAML_NODES, chars=YAML_CHARS, depth=MAX_DEPTH):
    """Refuse a YAML node tree that expands (aliases counted at every use) past ``nodes``
    nodes or ``chars`` characters of scalars, or nests deeper than ``depth``. One pass over
    the distinct nodes (an alias is the node it names: the expansion of each is computed
    once), no recursion."""
    import yaml

    if node is None:
        return
    sizes = {}          # id(node) -> (nodes, chars, depth) once expanded
    stack = [(node, False, 1)]
    while stack:
        n, done, level = stack.pop()
        if level > depth:
            raise _refuse(path, f"refused: YAML nested deeper than {depth}", line=n.start_mark.line + 1)
        key = id(n)
        if key in sizes and not done:
            continue
        if isinstance(n, yaml.ScalarNode):
            sizes[key] = (1, len(n.value), 1)
            continue
        children = ([c for pair in n.value for c in pair] if isinstance(n, yaml.MappingNode) else list(n.value))
        if not done:
            sizes[key] = None               # being expanded (a recursive alias meets it again)
            stack.append((n, True, level))
            stack.extend((c, False, level + 1) for c in children if id(c) not in sizes)
            continue
        total_n, total_c, deepest = 1, 0, 0
        for c in children:
            got = sizes.get(id(c))
            if got is None:
                raise _refuse(path, "refused: a YAML alias refers to its own node", line=c.start_mark.line + 1)
            total_n += got[0]
            total_c += got[1]
            deepest = max(deepest, got[2])
        if total_n > nodes or total_c > chars or deepest + 1 > depth:
            raise _refuse(path, f"refused: YAML expands to over {nodes:,} nodes or {chars:,} characters, "
                                f"or nests deeper than {depth} (aliases counted at each use)",
                          line=n.start_mark.line + 1)
        sizes[key] = (total_n, total_c, deepest + 1)


def load_yaml(text, path="<yaml>", loader=None):
    """``(data, root node)`` of the YAML ``text`` (one document), loaded by ``loader`` (a
    safe loader class; default PyYAML's, libyaml's where built) after :func:`yaml_bounds`.

    Raises
    ------
    ParseError
        A YAML syntax error, naming its line; FileRefused for a document past the bounds.
    """
    import yaml

    loader = (loader or _yaml_loader())(text)
    try:
        node = loader.get_single_node()
        yaml_bounds(node, path)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ParseError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}", line=line,
                         path=str(path)) from None
    except RecursionError:
        raise _refuse(path, f"refused: YAML nested deeper than {MAX_DEPTH}") from None
    finally:
        loader.dispose()
    return data, node


def load_yaml_file(path, kind="yaml", *, root=None):
    """The data of the YAML file ``path`` (:func:`read_text` then :func:`load_yaml`): a
    regular file inside ``root`` (default: its own folder, so a link out of it is refused),
    under ``LIMITS[kind]``."""
    root = Path(path).parent if root is None else root
    return load_yaml(read_text(path, kind, root=root), str(path))[0]


def load_json(text, path="<json>", **kwargs):
    """``json.loads(text, **kwargs)``; nesting past Python's recursion limit and bad JSON
    are a ParseError naming the file (and the line)."""
    try:
        return json.loads(text, **kwargs)
    except RecursionError:
        raise _refuse(path, "refused: JSON nested too deep") from None
    except json.JSONDecodeError as exc:
        raise ParseError(f"not valid JSON: {exc.msg}", line=exc.lineno, path=str(path)) from None


# --- numbers and cells -----------------------------------------------------------------


def bounded_int(text, what, *, limit=MAX_REPEATS, path=None, line=None, minimum=0):
    """The integer written ``text`` (ASCII digits only: ``²`` and Arabic-Indic digits are
    refused), at least ``minimum`` and at most ``limit``; else a ParseError naming ``what``,
    the file and line."""
    value = text if isinstance(text, int) and not isinstance(text, bool) else None
    if value is None:
        s = str(text).strip()
        if not (s.isascii() and s.isdigit()) or len(s) > 18:
            raise ParseError(f"{what} {str(text)[:40]!r} is not a non-negative integer (ASCII digits)",
                             line=line, path=path)
        value = int(s)
    if not minimum <= value <= limit:
        raise ParseError(f"{what} {value} is outside {minimum}..{limit:,}", line=line, path=path)
    return value


#: First characters a spreadsheet takes as the start of a formula (OWASP's CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell):
    """``cell`` as a CSV written for spreadsheets should hold it: a text starting with
    ``=``, ``+``, ``-``, ``@``, a tab or a CR gets a leading ``'`` (the cell is shown as
    text, never run); numbers and other text are unchanged."""
    if isinstance(cell, str) and cell.startswith(FORMULA_STARTS):
        try:
            float(cell)
            return cell                     # a negative number stays a number
        except ValueError:
            return "'" + cell
    return cell


def relative(path, root):
    """``path`` relative to ``root`` as text (for messages), or as given."""
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)
