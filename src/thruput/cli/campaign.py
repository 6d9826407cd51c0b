"""``thruput campaign``: check a campaign directory, start a new one, import a pile of logs."""

from __future__ import annotations

import sys

from .. import campaign as cp
from ..errors import ThruputError


def add_parser(sub):
    p = sub.add_parser("campaign", help="check, create or import a campaign directory",
                       description=__doc__)
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)

    check = verbs.add_parser("check", help="validate campaign.yaml, runs.csv, every raw file and the plan")
    check.add_argument("directories", nargs="+", metavar="DIR",
                       help="campaign directory, or a name under --root")
    check.add_argument("--root", default=cp.DEFAULT_ROOT, help="where names resolve (default: %(default)s)")
    check.add_argument("--strict", action="store_true", help="fail on warnings too")
    check.add_argument("--against", metavar="NC", help="also compare every raw file with the sha256 "
                       "recorded in this normalized campaign (data/processed/<c>.nc)")
    check.set_defaults(func=run_check)

    new = verbs.add_parser("new", help="write a template campaign.yaml, an empty runs.csv and runs/")
    new.add_argument("name")
    new.add_argument("--root", default=cp.DEFAULT_ROOT, help="parent directory (default: %(default)s)")
    new.add_argument("--kind", choices=cp.KINDS, default="tcp_sweep")
    new.set_defaults(func=run_new)

    imp = verbs.add_parser(
        "import", help="copy existing logs into a new campaign and write its manifest",
        description="Window and streams come from each log where it says them, else from "
                    "--pattern, a regular expression searched in the file name with named "
                    "groups window (bytes or 64K/1M), streams, repeat, phase, run.")
    imp.add_argument("name")
    imp.add_argument("files", nargs="+", metavar="FILE")
    imp.add_argument("--pattern", help=r"e.g. 'w(?P<window>\d+[KM]?)-s(?P<streams>\d+)-r(?P<repeat>\d+)'")
    imp.add_argument("--root", default=cp.DEFAULT_ROOT, help="parent directory (default: %(default)s)")
    imp.add_argument("--kind", choices=cp.KINDS + ("monitor",),
                     help="default: from the logs; monitor: FILE may be directories of cron logs, "
                          "one test per log (docs/design.md, Monitor campaigns)")
    imp.add_argument("--time-pattern", metavar="PATTERN",
                     help="monitor: when a log does not say when it ran, find it in its path: "
                          "strftime ('time-%%d-%%m-%%Y_%%H-%%M') or a regex with named groups "
                          "year, month, day, hour, minute, second or epoch")
    imp.add_argument("--path-pattern", metavar="REGEX",
                     help="monitor: name the path from the file's path, a regex with a (?P<path>...) "
                          "group (and optionally (?P<direction>forward|reverse)); default: the "
                          "address the log connected to")
    imp.add_argument("--interval", type=float, metavar="S",
                     help="monitor: seconds between test slots (default: the median spacing found)")
    imp.set_defaults(func=run_import)


def run_check(args):
    from ..campaign.check import check_against, check_campaign

    if args.against and len(args.directories) > 1:
        print("thruput: --against takes one campaign directory", file=sys.stderr)
        return 2
    failed = False
    for name in args.directories:
        try:
            directory = cp.resolve(name, args.root)
        except ThruputError as exc:
            print(f"thruput: {exc}", file=sys.stderr)
            failed = True
            continue
        problems = check_campaign(directory)
        if args.against:
            problems += check_against(directory, args.against)
        errors = [p for p in problems if p.severity == "error"]
        warnings = [p for p in problems if p.severity != "error"]
        for p in problems:
            print(p)
        verdict = "FAILED" if errors or (args.strict and warnings) else "ok"
        print(f"{directory}: {verdict} ({len(errors)} errors, {len(warnings)} warnings)")
        failed |= verdict == "FAILED"
    return 1 if failed else 0


def run_new(args):
    from ..campaign.importer import new_campaign

    try:
        directory = new_campaign(args.name, args.root, args.kind)
    except ThruputError as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    print(f"{directory}: template written; fill in campaign.yaml, then `thruput campaign check {directory}`")
    return 0


def run_import(args):
    from ..campaign.importer import import_campaign
    from ..campaign.monitor_import import import_monitor

    try:
        if args.kind == "monitor":
            directory = import_monitor(args.name, args.files, args.root, args.time_pattern,
                                       args.path_pattern, args.interval)
        else:
            directory = import_campaign(args.name, args.files, args.root, args.pattern, args.kind)
    except (ThruputError, OSError) as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    count = sum(1 for _ in open(directory / cp.MANIFEST_FILE)) - 1
    print(f"{directory}: imported {count} files; fill in the TODOs of campaign.yaml, "
          f"then `thruput campaign check {directory}`")
    return 0
