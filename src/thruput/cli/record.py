"""``thruput record``: run a window x streams x repeats sweep to a far host, the IEPM way.

For each cell: iperf with ping alongside (loaded), then ping alone for --pause seconds
(unloaded), as in seed 000. Resumable: re-running the same command skips the runs already
in runs.csv. Needs an iperf server on the far host (`iperf3 -s`, or `iperf3 -s -J` so that
its OS and kernel are recorded too).
"""

from __future__ import annotations

import argparse
import shlex
import sys

from ..record import Plan, RecordError, Target, parse_counts, parse_sizes, record
from ..record.plan import ORDERS, TOOLS


def _list_of(parse):
    """An argparse type that reports parse's own ValueError message."""
    def convert(text):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return convert


def add_parser(sub):
    p = sub.add_parser("record", help="record a TCP sweep campaign (iperf + ping)",
                       description=__doc__)
    p.add_argument("campaign", metavar="CAMPAIGN_DIR", help="e.g. data/raw/my-path")
    p.add_argument("--to", required=True, metavar="HOST", help="far host running the iperf server")
    p.add_argument("--port", type=int, help="iperf server port (default: the tool's)")
    p.add_argument("--windows", default="8K,16K,...,1M", type=_list_of(parse_sizes),
                   help="TCP windows (iperf -w): sizes with K/M (1024-based); '...' continues "
                        "the progression (default 8K,16K,...,1M)")
    p.add_argument("--streams", default="1,2,4,8,16", type=_list_of(parse_counts),
                   help="parallel streams (iperf -P), e.g. 1,2,...,16 (default 1,2,4,8,16)")
    p.add_argument("--repeats", type=int, default=3, help="repeats of each cell (default 3)")
    p.add_argument("--duration", type=int, default=10, help="seconds per loaded run (default 10)")
    p.add_argument("--pause", type=int, default=10,
                   help="seconds of unloaded ping after each run (default 10; 0: none)")
    p.add_argument("--tool", choices=TOOLS, default="iperf3",
                   help="iperf3 (JSON logs, default) or iperf2 (iperf 2 text logs)")
    p.add_argument("--order", choices=ORDERS, default="sequential",
                   help="sequential (repeat, window, streams) or random (shuffled)")
    p.add_argument("--seed", type=int, help="seed of --order random (default: new, stored)")
    p.add_argument("--ping-interval", type=float, default=0.2, help="ping -i, s (default 0.2)")
    p.add_argument("--ping-size", type=int, default=56, help="ping -s, bytes (default 56)")
    p.add_argument("--netns", help="run client and ping in this network namespace")
    p.add_argument("--retries", type=int, default=2, help="retries of a failed iperf run")
    p.add_argument("--source-name", help="this host's key in campaign.yaml")
    p.add_argument("--destination-name", help="the far host's key in campaign.yaml")
    g = p.add_argument_group("campaign.yaml description (kept on resume unless given)")
    g.add_argument("--title", help="one line naming the path and what is measured")
    g.add_argument("--description", help="where and how it was measured, honestly")
    g.add_argument("--who", action="append", help="repeatable")
    g.add_argument("--between", help="what lies between the hosts")
    g.add_argument("--capacity", type=float, metavar="BIT/S", help="bottleneck capacity, bit/s")
    g.add_argument("--rtt-ms", type=float, help="nominal round-trip time, ms")
    g.add_argument("--notes", help="anything a reader must know (load, caveats)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


#: Options whose values go into campaign.yaml themselves, left out of the recorded command.
DESCRIPTIVE = ("--title", "--description", "--who", "--between", "--notes")


def recorded_command(argv):
    """The command line for campaign.yaml notes, without the descriptive options' values."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in DESCRIPTIVE:
            skip = True
        elif not arg.startswith(tuple(f"{o}=" for o in DESCRIPTIVE)):
            kept.append(arg)
    return "thruput " + " ".join(shlex.quote(a) for a in kept)


def run(args):
    try:
        plan = Plan(windows=args.windows, streams=args.streams, repeats=args.repeats,
                    duration_s=args.duration, pause_s=args.pause, tool=args.tool,
                    order=args.order, seed=args.seed, ping_interval_s=args.ping_interval,
                    ping_size_bytes=args.ping_size)
    except ValueError as exc:
        print(f"thruput record: {exc}", file=sys.stderr)
        return 2
    about = {"title": args.title, "description": args.description, "who": args.who,
             "between": args.between, "capacity_bps": args.capacity, "rtt_ms": args.rtt_ms,
             "notes": args.notes}
    # the command as typed (when this runs from the command line, not from main(argv))
    command = recorded_command(sys.argv[1:]) if sys.argv[1:2] == ["record"] else None
    try:
        summary = record(args.campaign, plan, Target(args.to, args.port, args.netns),
                         source_name=args.source_name, destination_name=args.destination_name,
                         about=about, progress=not args.no_progress, retries=args.retries,
                         command=command)
    except RecordError as exc:
        print(f"thruput record: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"thruput record: interrupted; re-run the same command to resume "
              f"({args.campaign})", file=sys.stderr)
        return 130
    print(f"{args.campaign}: {len(summary.recorded)} runs recorded, {summary.skipped} already "
          f"there, {len(summary.failed)} failed, of {summary.planned} planned")
    for run_id, reason in summary.failed.items():
        print(f"thruput record: {run_id}: {reason}", file=sys.stderr)
    return 0 if not summary.failed else 1
