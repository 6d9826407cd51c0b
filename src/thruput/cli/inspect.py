"""``thruput inspect``: read logs and report format, kind, summary and line accounting.

Every PATH may be a file or a directory (walked recursively, files in sorted order; hidden
folders, virtual environments, ``node_modules`` and ``__pycache__`` are not entered). In a
directory, a file no format recognises is not a log: it is skipped, and one line on stderr
counts what was skipped (``thruput: skipped N files that are not logs: ...``); a file named
on the command line is always read, and one that is not a log fails. One bad file never
stops the batch: its first error goes to stderr once, naming file and line
(``thruput: PATH:LINE: message``), and the exit status is 1. A truncated log, or one whose
tool summary disagrees with its data (``consistency``), is read and warned about on
stderr (``thruput: warning: PATH: ...``). With ``--lenient``, lines no reader recognises
are counted as skipped ("unrecognised line") instead of failing the file.

Exit status: 0 every log read (files that are not logs skipped), 1 some file failed or a
directory held no log at all, 2 usage error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import formats
from ..contract import lenient as lenient_ledgers
from ..errors import ParseError, ThruputError, UnknownFormatError
from ..reader import read
from ..inspection import line_accounting, summarize

#: What an empty file is called (no reader is asked: there is nothing to sniff).
EMPTY_FILE = "empty file"
#: Exit statuses.
OK, FAILED = 0, 1


def add_parser(sub):
    p = sub.add_parser("inspect", help="read log files (or directories of them) and summarise what they hold",
                       description=__doc__)
    p.add_argument("paths", nargs="+", metavar="PATH", help="log file, or directory to walk recursively")
    p.add_argument("--format", choices=formats.REGISTRY, help="skip sniffing; read as this format")
    p.add_argument("--json", action="store_true", help="print a JSON array, one object per file")
    p.add_argument("--lenient", action="store_true",
                   help="count unrecognised lines as skipped instead of failing the file (messy archives)")
    p.set_defaults(func=run)


#: Folders a directory walk does not enter: tools' and environments' own files, never logs.
SKIPPED_DIRS = {"node_modules", "__pycache__", "site-packages"}


def _skipped_dir(path):
    """Hidden folders, virtual environments (``pyvenv.cfg``, conda's ``conda-meta``), and
    :data:`SKIPPED_DIRS`."""
    return (path.name.startswith(".") or path.name in SKIPPED_DIRS
            or (path / "pyvenv.cfg").is_file() or (path / "conda-meta").is_dir())


def _walk_dir(root):
    found = []
    for path in sorted(root.iterdir(), key=str):
        if path.is_dir() and not path.is_symlink():
            if not _skipped_dir(path):
                found.extend(_walk_dir(path))
        elif path.is_file():
            found.append(path)
    return found


def walk(paths, explicit=False):
    """The files named by ``paths``: files as given, directories walked recursively, all
    files in sorted order of their paths (folders :func:`_skipped_dir` names are not
    entered, nor links to folders). With ``explicit``, pairs ``(path, named)``: whether
    the file was named itself rather than found in a directory."""
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(_walk_dir(path), key=str)
            yield from (((p, False) for p in found) if explicit else found)
        else:
            yield (path, True) if explicit else path   # a missing path is reported by inspect_file


def inspect_file(path, fmt=None, lenient=False):
    """One report dict for ``path``: never raises for bad input, records it in ``errors``.

    Keys: ``path``, ``format``, ``kind``, ``summary``, ``lines``, ``errors`` (list of
    ``{"line", "message"}``), and where there is something to say ``truncation`` and
    ``consistency`` (the checks that failed, from ``attrs["consistency"]``); a failed file
    also has ``message``, its first error as one sentence naming the file.
    """
    report = {"path": str(path), "format": fmt, "kind": None, "summary": None,
              "lines": None, "errors": []}
    try:
        if fmt is None and _is_empty(path):   # (a forced format's reader says "empty input")
            raise ParseError(EMPTY_FILE)
        with lenient_ledgers(lenient):
            ds = read(path, format=fmt)
    except ParseError as exc:
        report["errors"] = [{"line": line, "message": msg} for line, msg in exc.errors]
        report["message"] = str(exc.with_path(str(path)))
        return report
    except UnknownFormatError as exc:
        report["not_a_log"] = True
        report["errors"] = [{"line": None, "message": str(exc)}]
        report["message"] = str(exc) if str(exc).startswith(str(path)) else f"{path}: {exc}"
        return report
    except (ThruputError, OSError) as exc:
        message = str(exc)
        if isinstance(exc, OSError):
            message = exc.strerror or message
        report["errors"] = [{"line": None, "message": message}]
        report["message"] = message if message.startswith(str(path)) else f"{path}: {message}"
        return report
    report.update(format=ds.attrs["format"], kind=ds.attrs["kind"], summary=summarize(ds),
                  lines=line_accounting(ds))
    if ds.attrs.get("truncation"):
        report["truncation"] = ds.attrs["truncation"]
    failed = [c for c in json.loads(ds.attrs.get("consistency", "[]")) if not c["ok"]]
    if failed:
        report["consistency"] = failed
    return report


def _is_empty(path):
    """True for a file of zero bytes (``OSError`` for a missing one comes from read)."""
    path = Path(path)
    return path.is_file() and path.stat().st_size == 0


def run(args):
    reports, skipped = [], []
    for path, named in walk(args.paths, explicit=True):
        report = inspect_file(path, args.format, args.lenient)
        if report.pop("not_a_log", False) and not named:
            skipped.append(path)          # found in a directory: not a log, not a failure
        else:
            reports.append(report)
    if args.json:
        json.dump([{k: v for k, v in r.items() if k != "message"} for r in reports], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_table(reports)
    for r in reports:
        for message in _messages(r):
            print(message, file=sys.stderr)
    if skipped:
        shown = ", ".join(str(p) for p in skipped[:3]) + (", ..." if len(skipped) > 3 else "")
        print(f"thruput: skipped {len(skipped)} file{'s' if len(skipped) != 1 else ''} that "
              f"{'are' if len(skipped) != 1 else 'is'} not a log of any format ({shown}); "
              f"`thruput inspect FILE` says why for one", file=sys.stderr)
        if not reports:
            print(f"thruput: no log found in {', '.join(map(str, args.paths))}", file=sys.stderr)
            return FAILED
    return FAILED if any(r["errors"] for r in reports) else OK


def _messages(report):
    """The stderr lines for one report: its first error, else its warnings."""
    path = report["path"]
    if report["errors"]:
        first = report["errors"][0]
        message = first["message"]
        # a reader's message may already start with the path (ParseError.with_path)
        if message.startswith(f"{path}:"):
            return [f"thruput: {message}"]
        where = f"{path}:{first['line']}" if first["line"] is not None else path
        return [f"thruput: {where}: {message}"]
    out = []
    if report.get("truncation"):
        out.append(f"thruput: warning: {path}: truncated: {report['truncation']}")
    for check in report.get("consistency", []):
        note = f" ({check['note']})" if check.get("note") else ""
        out.append(f"thruput: warning: {path}: the tool's summary disagrees with the data: "
                   f"{check['check']}: tool {_fmt(check['tool'])}, data {_fmt(check['data'])}{note}")
    return out


def _print_table(reports):
    for r in reports:
        if r["errors"]:
            continue   # said once, on stderr
        lines = r["lines"]
        print(f"{r['path']}: {r['format']} ({r['kind']}), {lines['parsed']}/{lines['total']} lines parsed")
        for key, value in r["summary"].items():
            if key == "per_run":
                continue
            print(f"  {key:24s} {_fmt(value)}")
        for reason, count in lines["skipped_reasons"].items():
            print(f"  skipped {count} x {reason}")
        if r.get("truncation"):
            print(f"  truncated: {r['truncation']}")
        for check in r.get("consistency", []):
            print(f"  inconsistent: {check['check']}: tool {_fmt(check['tool'])}, data {_fmt(check['data'])}")


def _fmt(value):
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
    return "-" if value is None else str(value)
