"""``thruput record``: run a window x streams x repeats sweep to a far host, the IEPM way,
or any declared design on both ends.

Sweep: for each cell, iperf with ping alongside (loaded), then ping alone for --pause
seconds (unloaded), as in seed 000. Needs an iperf server on the far host (`iperf3 -s`, or
`iperf3 -s -J` so that its OS and kernel are recorded too).

Design (--design FILE or --factor NAME=L1,L2): a seed-001-style study, applications x TCP
stacks x MTU, with thruput starting the servers at the far end (the examples below show one).

Host settings (cc -> sysctl net.ipv4.tcp_congestion_control, mtu -> ip link, qdisc -> tc,
tcp_rmem/tcp_wmem -> sysctl) are applied at both ends before their runs and restored
afterwards, also after a failure or Ctrl-C; `--apply cc='iperf3 -C'` applies one as a
tool option instead. Runs go in a random order from a stored seed. Both kinds resume:
re-running the same command skips the runs already in runs.csv.
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
    p = sub.add_parser("record", help="record a TCP sweep campaign (iperf + ping) or a declared design",
                       description=__doc__)
    p.add_argument("campaign", metavar="CAMPAIGN_DIR", help="e.g. data/raw/my-path")
    p.add_argument("--to", required=True, metavar="HOST", help="far host running the iperf server")
    p.add_argument("--port", type=int, help="iperf server port (default: the tool's)")
    p.add_argument("--windows", default="8K,16K,...,1M", type=_list_of(parse_sizes),
                   help="TCP windows (iperf -w): sizes with K/M (1024-based); '...' continues "
                        "the progression (default 8K,16K,...,1M)")
    p.add_argument("--streams", default="1,2,4,8,16", type=_list_of(parse_counts),
                   help="parallel streams (iperf -P), e.g. 1,2,...,16 (default 1,2,4,8,16)")
    p.add_argument("--repeats", type=int, help="repeats of each cell (default 3; of a design: 1)")
    p.add_argument("--duration", type=float, help="seconds per loaded run (default 10; of a design: 2)")
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
    d = p.add_argument_group(
        "a declared design (kind: design): factors over tool options and host settings at both ends")
    d.add_argument("--design", metavar="DESIGN.yaml",
                   help="factors (name, levels, applied), repeats, duration, size, seed (docs/design.md)")
    d.add_argument("--factor", action="append", metavar="NAME=L1,L2",
                   help="a factor and its levels (repeatable); cc, mtu, application, window, streams, "
                        "mss, reverse, fq_rate, zerocopy, qdisc, tcp_rmem, tcp_wmem are applied as "
                        "their names say unless --apply says otherwise")
    d.add_argument("--apply", action="append", metavar="NAME=HOW",
                   help="how a factor is applied: 'iperf3 -C', 'sysctl net.ipv4.tcp_rmem', 'mtu', "
                        "'tc qdisc' or 'application' (levels iperf3, http, disk)")
    d.add_argument("--far", default="local", metavar="WHERE",
                   help="where the servers run and far-side settings are applied: local (default), "
                        "netns:NAME or ssh:[user@]host")
    d.add_argument("--ssh-option", action="append", default=[], metavar="OPT",
                   help="option passed to ssh (repeatable, e.g. --ssh-option=-p2222 "
                        "--ssh-option=-oUserKnownHostsFile=FILE)")
    d.add_argument("--size", type=_list_of(lambda t: parse_sizes(t)[0]), metavar="BYTES",
                   help="bytes per http or disk transfer, K/M (default 8M)")
    d.add_argument("--capture", action="store_true",
                   help="keep a headers-only capture of each run (tcpdump -s 128) as runs/<run>.pcap")
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
    if args.design or args.factor:
        return run_design(args)
    try:
        plan = Plan(windows=args.windows, streams=args.streams,
                    repeats=3 if args.repeats is None else args.repeats,
                    duration_s=10 if args.duration is None else int(args.duration), pause_s=args.pause, tool=args.tool,
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
    _print_summary(args.campaign, summary)
    return 0 if not summary.failed else 1


def _print_summary(campaign, summary):
    """What a recording did (stdout) and each run that failed (stderr)."""
    print(f"{campaign}: {len(summary.recorded)} runs recorded, {summary.skipped} already "
          f"there, {len(summary.failed)} failed, of {summary.planned} planned")
    for run_id, reason in summary.failed.items():
        print(f"thruput record: {run_id}: {reason}", file=sys.stderr)


def run_design(args):
    """``thruput record DIR --design FILE`` / ``--factor NAME=L1,L2``: a design campaign."""
    from ..record.design_record import load_design_plan, plan_from_factors, record_design
    from ..record.far import End

    overrides = {"repeats": args.repeats, "duration_s": args.duration,
                 "size_bytes": args.size, "seed": args.seed}
    try:
        if args.design:
            plan = load_design_plan(args.design, **overrides)
        else:
            plan = plan_from_factors(args.factor, args.apply or (),
                                     **overrides)
        far = End(args.far, tuple(args.ssh_option), args.netns if args.far.startswith("ssh:") else None)
        near = End(f"netns:{args.netns}") if args.netns else End()
    except (ValueError, OSError) as exc:
        print(f"thruput record: {exc}", file=sys.stderr)
        return 2
    command = recorded_command(sys.argv[1:]) if sys.argv[1:2] == ["record"] else None
    about = {"title": args.title, "description": args.description, "who": args.who, "notes": args.notes}
    try:
        summary = record_design(args.campaign, plan, args.to, near=near, far=far, port=args.port or 5201,
                                about=about, progress=not args.no_progress, command=command,
                                capture=args.capture)
    except RecordError as exc:
        print(f"thruput record: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"thruput record: interrupted (host settings restored); re-run the same command to "
              f"resume ({args.campaign})", file=sys.stderr)
        return 130
    _print_summary(args.campaign, summary)
    for error in summary.restore_errors:
        print(f"thruput record: NOT restored: {error}", file=sys.stderr)
    return 0 if not summary.failed and not summary.restore_errors else 1
