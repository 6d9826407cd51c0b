"""``thruput inspect``: read logs and report format, kind, summary and line accounting."""

from __future__ import annotations

import json
import sys

from .. import formats
from ..errors import ParseError, ThruputError
from ..reader import read
from ..inspection import line_accounting, summarize


def add_parser(sub):
    p = sub.add_parser("inspect", help="read log files and summarise what they hold",
                       description=__doc__)
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--format", choices=formats.REGISTRY, help="skip sniffing; read as this format")
    p.add_argument("--json", action="store_true", help="print a JSON array, one object per file")
    p.set_defaults(func=run)


def inspect_file(path, fmt=None):
    """One report dict for ``path``: never raises for bad input, records it in ``errors``."""
    report = {"path": str(path), "format": fmt, "kind": None, "summary": None,
              "lines": None, "errors": []}
    try:
        ds = read(path, format=fmt)
    except ParseError as exc:
        report["errors"] = [{"line": line, "message": msg} for line, msg in exc.errors]
        report["message"] = str(exc)
        return report
    except (ThruputError, OSError) as exc:
        report["errors"] = [{"line": None, "message": str(exc)}]
        report["message"] = f"{path}: {exc}" if str(path) not in str(exc) else str(exc)
        return report
    report.update(format=ds.attrs["format"], kind=ds.attrs["kind"], summary=summarize(ds),
                  lines=line_accounting(ds))
    if ds.attrs.get("truncation"):
        report["truncation"] = ds.attrs["truncation"]
    return report


def run(args):
    reports = [inspect_file(p, args.format) for p in args.paths]
    if args.json:
        for r in reports:
            r.pop("message", None)
        json.dump(reports, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_table(reports)
    failed = [r for r in reports if r["errors"]]
    for r in failed:
        first = r["errors"][0]
        where = f"{r['path']}:{first['line']}" if first["line"] is not None else r["path"]
        msg = first["message"]
        print(f"thruput: {where}: {msg}" if r["path"] not in msg else f"thruput: {msg}", file=sys.stderr)
    return 1 if failed else 0


def _print_table(reports):
    for r in reports:
        if r["errors"]:
            first = r["errors"][0]
            where = f" line {first['line']}" if first["line"] is not None else ""
            print(f"{r['path']}: FAILED{where}: {first['message']}")
            continue
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


def _fmt(value):
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
    return "-" if value is None else str(value)
