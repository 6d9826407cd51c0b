"""``thruput campaign``: check a campaign directory, start a new one, import a pile of logs,
accept a raw file changed on purpose."""

from __future__ import annotations

import sys

from .. import campaign as cp
from ..errors import ThruputError

#: A folder holding neither of these is no campaign (``campaign check`` says so and stops).
CAMPAIGN_FILES = ("campaign.yaml", "runs.csv")


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
    new.add_argument("name", help="campaign name: the folder made under --root")
    new.add_argument("--root", default=cp.DEFAULT_ROOT, help="parent directory (default: %(default)s)")
    new.add_argument("--kind", choices=cp.KINDS, default="tcp_sweep",
                     help="what the campaign measures (default: tcp_sweep)")
    new.set_defaults(func=run_new)

    imp = verbs.add_parser(
        "import", help="copy existing logs into a new campaign and write its manifest",
        description="Window and streams come from each log where it says them, else from "
                    "--pattern, a regular expression searched in the file name with named "
                    "groups window (bytes or 64K/1M), streams, repeat, phase, run.")
    imp.add_argument("name", help="campaign name: the folder made under --root")
    imp.add_argument("files", nargs="+", metavar="FILE", help="the logs (any format thruput reads)")
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
                     help="monitor: name the path from the file's path relative to the folder given "
                          "(e.g. 'att/20240528/111437116/ping_111924269.out' for a folder "
                          "starlink-drive: '^(?P<path>[^/]+)/'), a regex searched in it with a "
                          "(?P<path>...) group (and optionally (?P<direction>forward|reverse), "
                          "(?P<test>tcp|udp|ping)); default: the address the log connected to")
    imp.add_argument("--interval", type=float, metavar="S",
                     help="monitor: seconds between test slots (default: the median spacing found)")
    g = imp.add_argument_group("campaign.yaml description (else TODO, to fill in by hand)")
    g.add_argument("--title", help="one line naming the path and what was measured")
    g.add_argument("--description", help="where and how it was measured, honestly")
    g.add_argument("--between", help="what lies between the hosts")
    g.add_argument("--capacity", type=float, metavar="BIT/S", dest="capacity_bps",
                   help="bottleneck capacity, bit/s")
    g.add_argument("--who", action="append", help="who measured (repeatable)")
    g.add_argument("--notes", help="anything a reader must know")
    imp.set_defaults(func=run_import)

    acc = verbs.add_parser(
        "accept", help="record a raw file's changed bytes as intended (new sha256 and the reason)",
        description="runs.csv keeps the sha256 of every raw file as recorded or imported, and "
                    "`check` and `thruput pipeline normalize` refuse a file whose bytes changed. "
                    "If the change is intended, accept it: the new sha256 goes into runs.csv and "
                    "a dated entry with the reason into the `accepted` list of campaign.yaml. "
                    "Without FILE, every listed file whose bytes differ or that keeps no sha256.")
    acc.add_argument("directory", metavar="DIR", help="campaign directory, or a name under --root")
    acc.add_argument("files", nargs="*", metavar="FILE", help="as runs.csv lists it (e.g. runs/x.json)")
    acc.add_argument("--reason", required=True, help="why the bytes changed (kept in campaign.yaml)")
    acc.add_argument("--root", default=cp.DEFAULT_ROOT, help="where names resolve (default: %(default)s)")
    acc.set_defaults(func=run_accept)


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
        if not any((directory / f).is_file() for f in CAMPAIGN_FILES):
            # a source tree or a home folder: say so once, not one warning per file in it
            print(f"thruput: {directory}: not a campaign (no {' or '.join(CAMPAIGN_FILES)} in it; "
                  "`thruput campaign new NAME` or `thruput campaign import` makes one)", file=sys.stderr)
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
    from ..monitor.importer import import_monitor

    try:
        from ..campaign.importer import DESCRIPTION_FIELDS

        given = {k: getattr(args, k) for k in DESCRIPTION_FIELDS if getattr(args, k) is not None}
        if args.kind == "monitor":
            from ..monitor.importer import describe

            directory = import_monitor(args.name, args.files, args.root, args.time_pattern,
                                       args.path_pattern, args.interval)
            describe(directory, **given)
        else:
            directory = import_campaign(args.name, args.files, args.root, args.pattern, args.kind,
                                        **given)
    except (ThruputError, OSError) as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    count = sum(1 for _ in open(directory / cp.MANIFEST_FILE)) - 1
    print(f"{directory}: imported {count} files; fill in the TODOs of campaign.yaml, "
          f"then `thruput campaign check {directory}`")
    return 0


def run_accept(args):
    from ..campaign.integrity import accept_changes

    try:
        directory = cp.resolve(args.directory, args.root)
        accepted = accept_changes(directory, args.files, args.reason)
    except ThruputError as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    for e in accepted:
        print(f"{directory / e['file']}: sha256 {e['was'] or '(none kept)'} -> {e['sha256']}")
    print(f"{directory}: {len(accepted)} changes accepted" + (" and recorded in campaign.yaml" if accepted else ""))
    return 0
