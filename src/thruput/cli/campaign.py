"""``thruput campaign``: check a campaign directory, start a new one, import a pile of logs,
accept a raw file changed on purpose."""

from __future__ import annotations

import re
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
    new.add_argument("--kind", choices=cp.KINDS + ("design",), default="tcp_sweep",
                     help="what the campaign measures (default: tcp_sweep; design: runs with "
                          "declared factors, docs/design.md)")
    new.set_defaults(func=run_new)

    imp = verbs.add_parser(
        "import", help="copy existing logs into a new campaign and write its manifest",
        description="A TCP sweep: window and streams come from each log where it says them, else "
                    "from --pattern, a regular expression searched in the file name with named "
                    "groups window (bytes or 64K/1M), streams, repeat, phase, run. "
                    "A design (--kind design, and the default when --pattern has other groups "
                    "or --factor/--factor-from-log is given): runs with declared factors; every "
                    "named group of --pattern (searched in the file's path relative to the folder "
                    "given) is a factor, repeat the replicate; files that are not logs are "
                    "skipped and counted (docs/design.md, Designs). Example: "
                    r"--pattern 'cc-(?P<cc>\w+)_buf-(?P<socket_buffer>\d+)_r(?P<repeat>\d+)' "
                    "--factor-spec socket_buffer:byte:ordered.")
    imp.add_argument("name", help="campaign name: the folder made under --root")
    imp.add_argument("files", nargs="+", metavar="FILE", help="the logs (any format thruput reads)")
    imp.add_argument("--pattern", help=r"e.g. 'w(?P<window>\d+[KM]?)-s(?P<streams>\d+)-r(?P<repeat>\d+)' "
                     "(one that starts with '-' is written --pattern='-...')")
    imp.add_argument("--root", default=cp.DEFAULT_ROOT, help="parent directory (default: %(default)s)")
    imp.add_argument("--kind", choices=cp.KINDS + ("monitor", "design"),
                     help="default: design if --pattern has groups besides window/streams/repeat/"
                          "phase/run or factors are given, else from the logs; monitor: FILE may be "
                          "directories of cron logs, one test per log (docs/design.md, Monitor "
                          "campaigns); design: FILE may be directories and .tgz archives")
    imp.add_argument("--factor", action="append", default=[], metavar="NAME=VALUE",
                     help="design: a factor with one value for the whole pile (repeatable)")
    imp.add_argument("--factor-from-log", metavar="NAMES", default="",
                     help="design: factors read from each log, comma-separated: cc (iperf3's "
                          "congestion control), mss, direction (iperf3 -R, nuttcp -r/-t), "
                          "socket_buffer (-w), protocol (tcp, udp, icmp), size (ping -s), client_network, "
                          "server (ndt7)")
    imp.add_argument("--factor-spec", action="append", default=[], metavar="NAME:UNITS[:ordered]",
                     help="design: a factor's units and order, e.g. socket_buffer:byte:ordered, "
                          "operator:-:unordered (default: numeric and ordered if every value is a "
                          "number, the units of a factor read from the log)")
    imp.add_argument("--over-time", action="store_true",
                     help="design: its runs form series over time (time: true; every run needs a "
                          "start, from its log or --time-pattern)")
    imp.add_argument("--time-pattern", metavar="PATTERN",
                     help="monitor, design: when a log does not say when it ran, find it in its path: "
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
    imp.add_argument("--tz", metavar="ZONE",
                     help="monitor: IANA zone (America/New_York) of local times in the logs' line "
                          "stamps and in their paths (default: the offset a log's own wrapper "
                          "Start time shows, else UTC)")
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
    from ..monitor.importer import import_pile

    try:
        from ..campaign.importer import DESCRIPTION_FIELDS

        given = {k: getattr(args, k) for k in DESCRIPTION_FIELDS if getattr(args, k) is not None}
        if args.kind == "monitor":
            done = import_pile(args.name, args.files, args.root, args.time_pattern,
                               args.path_pattern, args.interval, args.tz, **given)
            print(f"{done.directory}: {done.summary()}; fill in the TODOs of campaign.yaml, "
                  f"then `thruput campaign check {done.directory}`")
            return 0
        elif _is_design(args):
            return _import_design(args)
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


def _is_design(args):
    from ..design.importer import pattern_makes_design

    if args.kind is not None:
        return args.kind == "design"
    try:
        grouped = pattern_makes_design(args.pattern)
    except re.error as exc:
        raise ThruputError(f"--pattern {args.pattern!r}: {exc}") from None
    return grouped or bool(args.factor) or bool(args.factor_from_log)


def _import_design(args):
    from ..design.importer import import_design

    fixed = {}
    for text in args.factor:
        name, sep, value = text.partition("=")
        if not sep or not name:
            print(f"thruput: --factor {text!r}: use NAME=VALUE", file=sys.stderr)
            return 2
        fixed[name.strip()] = value.strip()
    skipped = []
    given = {k: getattr(args, k) for k in ("title", "description", "who", "notes") if getattr(args, k) is not None}
    try:
        directory = import_design(args.name, args.files, args.root, args.pattern, fixed,
                                  args.factor_from_log.split(","), args.factor_spec, args.over_time,
                                  args.time_pattern, skipped, **given)
    except (ThruputError, OSError, re.error) as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    count = sum(1 for _ in open(directory / cp.MANIFEST_FILE)) - 1
    reasons = {}
    for _, reason in skipped:
        reasons[reason.split(":")[0]] = reasons.get(reason.split(":")[0], 0) + 1
    print(f"{directory}: imported {count} runs as a design"
          + (f"; skipped {len(skipped)} files (" + "; ".join(f"{n} {why}" for why, n in sorted(reasons.items())) + ")"
             if skipped else "")
          + f"; fill in the TODOs of campaign.yaml, then `thruput campaign check {directory}`")
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
