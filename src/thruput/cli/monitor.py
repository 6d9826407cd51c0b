"""``thruput monitor``: watch a path on a schedule (a campaign of kind ``monitor``).

  thruput monitor new DIR --to ADDRESS [...]   write DIR/campaign.yaml (edit it after)
  thruput monitor DIR [--duration D] [--until T] [--netns NS]
                                                run the schedule (safe to kill and restart)
  thruput monitor status DIR [--json]           what ran, what failed, the next slot
  thruput monitor report DIR [--since T] [--json]
                                                per path and direction (a time design: per
                                                cell of its factors): ok, breach or no
                                                data now, every breach (campaign.yaml
                                                alerts: and baseline:), the SLA per day/week;
                                                its first line carries Nagios performance data
  thruput monitor metrics DIR [--serve HOST:PORT] [--textfile PATH]
                                                the same state for Prometheus (text exposition):
                                                printed, served at /metrics, or written atomically
                                                for node_exporter's textfile collector

Exit status of `report` (Nagios plugin convention, for cron, systemd or a Nagios check):
0 every path and direction ok; 1 a breach is open; 2 usage or input error (no such
campaign, a bad rule); 3 no breach open, but a path and direction has no data in its
last slots. The other actions: 0 done, 1 failed, 2 usage.

See docs/monitoring.md.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import ThruputError
from ..record.plan import parse_sizes

ACTIONS = ("new", "status", "report", "metrics")


def parse_duration(text):
    """``"95m"`` -> 5700.0 (s): :func:`thruput.quantities.parse_duration`."""
    from ..quantities import parse_duration as parse
    try:
        return parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_until(text):
    """ISO 8601 time (UTC if no zone) -> Unix seconds."""
    from ..quantities import parse_time
    try:
        return parse_time(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad time {text!r}: use ISO 8601, e.g. "
                                         "2026-11-22T20:25:00Z") from None


def _sizes(text):
    try:
        return parse_sizes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(sub):
    p = sub.add_parser("monitor", help="watch a path on a schedule (monitor campaign)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("words", nargs="+", metavar="[new|status|report|metrics] DIR",
                   help="DIR: run its schedule; status DIR: what ran and what is next; new DIR: a template; "
                        "report DIR: alert states and breaches; metrics DIR: the state for Prometheus")
    r = p.add_argument_group("running (thruput monitor DIR)")
    r.add_argument("--duration", type=parse_duration,
                   help="stop starting tests after this long (90m, 2h)")
    r.add_argument("--until", type=parse_until, help="stop starting tests at this UTC time")
    r.add_argument("--netns", help="run every test in this network namespace")
    r.add_argument("--quiet", action="store_true", help="no line per test on stderr")
    s = p.add_argument_group("status")
    s.add_argument("--json", action="store_true", help="status (or report) as JSON")
    a = p.add_argument_group("report (thruput monitor report DIR; DIR: raw campaign or its .zarr store)")
    a.add_argument("--params", metavar="params.yaml",
                   help="the pipeline's parameters (its health and monitor sections); default: the "
                        "params.yaml of the project DIR is in, if any")
    a.add_argument("--since", type=parse_until, metavar="T",
                   help="list breaches open or ending after T, and SLA periods after it (ISO 8601, UTC)")
    m = p.add_argument_group("metrics (thruput monitor metrics DIR)")
    m.add_argument("--serve", metavar="HOST:PORT", help="serve at http://HOST:PORT/metrics (HOST default 127.0.0.1)")
    m.add_argument("--textfile", metavar="PATH", help="write to PATH atomically (node_exporter's textfile collector)")
    n = p.add_argument_group("new (thruput monitor new DIR --to ADDRESS)")
    n.add_argument("--to", metavar="ADDRESS", help="what the tests connect to")
    n.add_argument("--port", type=int, help="iperf server port")
    n.add_argument("--path-name", help="label of the path (default SOURCE-DESTINATION)")
    n.add_argument("--source", default="source", help="this host's key in hosts")
    n.add_argument("--destination", help="the far host's key in hosts (default: ADDRESS)")
    n.add_argument("--directions", default="forward,reverse",
                   help="forward, reverse or both (default forward,reverse)")
    n.add_argument("--interval", type=parse_duration, default=300.0, help="between slots (5m)")
    n.add_argument("--jitter", type=parse_duration, default=0.0, help="random slot delay, max")
    n.add_argument("--order", choices=("fixed", "random"), default="fixed",
                   help="order of the tests in a slot: as listed, or drawn with --seed (default: fixed)")
    n.add_argument("--seed", type=int, default=0, help="seed of the jitter and of a random order (default: 0)")
    n.add_argument("--timeout", type=parse_duration, default=60.0, help="per test (60s)")
    n.add_argument("--tool", choices=("iperf3", "iperf2"), default="iperf3",
                   help="throughput tool of the tcp and udp tests (default: iperf3)")
    n.add_argument("--tcp-buffers", type=_sizes, default=[], help="socket buffers, e.g. 64K,1M")
    n.add_argument("--tcp-duration", type=parse_duration,
                   help="length of each TCP test, e.g. 10s (default: 10 s; needs --tcp-buffers)")
    n.add_argument("--udp-rate", type=float, metavar="BIT/S", help="UDP test rate, bit/s")
    n.add_argument("--udp-duration", type=parse_duration,
                   help="length of each UDP test (default: 10 s; needs --udp-rate)")
    n.add_argument("--ping-sizes", type=_sizes, default=[],
                   help="ping -s sizes, e.g. 108,1480 (default: 56 where --ping-count or "
                        "--ping-interval asks for ping)")
    n.add_argument("--ping-count", type=int, help="probes per ping test (default: 10)")
    n.add_argument("--ping-interval", type=float, help="ping -i, s (default: 0.2)")
    n.add_argument("--day", type=parse_duration, metavar="DURATION",
                   help="schedule.day_s: the cycle the statistics fold on, e.g. 24h (default: "
                        "none; the period is found in the data where significant)")
    n.add_argument("--between", help="what lies between the hosts")
    n.add_argument("--capacity", type=float, metavar="BIT/S", help="the path's bottleneck capacity, bit/s")
    n.add_argument("--title", help="one line naming the path and what is watched")
    n.add_argument("--description", help="where and how it is measured, honestly")
    n.add_argument("--notes", help="anything a reader must know")
    n.add_argument("--who", action="append", default=[], help="who measures (repeatable)")
    p.set_defaults(func=run)
    return p


def run(args):
    words = args.words
    action = words[0] if words[0] in ACTIONS and len(words) == 2 else None
    if (action is None and len(words) != 1) or (action and len(words) != 2):
        print("usage: thruput monitor [new|status|report|metrics] DIR", file=sys.stderr)
        return 2
    directory = words[-1]
    if action == "report":
        return _report(args, directory)
    if action == "metrics":
        from .monitor_metrics import run_metrics
        return run_metrics(args, directory)
    try:
        if action == "new":
            return _new(args, directory)
        if action == "status":
            from ..monitor.status import format_status, status
            report = status(directory)
            print(json.dumps(report, indent=1) if args.json else format_status(report))
            return 0
        from ..monitor.campaign import monitor
        say = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
        monitor(directory, duration_s=args.duration, until=args.until, netns=args.netns,
                progress=say)
        return 0
    except (ThruputError, ValueError, FileExistsError) as exc:
        print(f"thruput monitor: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:    # campaign.yaml or a folder that cannot be written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"thruput monitor: {where}cannot write: {exc.strerror or exc}; make room (or "
              "make the folder writable) and run it again", file=sys.stderr)
        return 1


def _report(args, directory):
    """``thruput monitor report``: exit 0 ok, 1 breach open, 2 input error, 3 no data."""
    from ..monitor.alerts import EXIT, evaluate, format_report, report_json, series_changes
    from ..monitor.design_alerts import design_perfdata, design_tables, is_time_design
    from ..monitor.metrics import perfdata, with_perfdata
    from .pipeline_health import HEALTH_SECTION, monitor_only, open_monitor, project_params

    since = None
    if args.since is not None:
        import datetime as dt
        since = dt.datetime.fromtimestamp(args.since, dt.timezone.utc).isoformat()
    try:
        ds = open_monitor(directory)
        monitor_only(ds, directory, "thruput monitor report")
        # the pipeline's parameters (params.yaml of the project, or --params): the same
        # rules' settings and the same change points as the health stage and the page
        params = project_params(args.params, directory)
        if is_time_design(ds):          # a design over time: its cells are the series
            tables = design_tables(ds.load(), params.get(HEALTH_SECTION), params.get("monitor"))
            data = design_perfdata(tables)
        else:
            tables = evaluate(ds, params.get(HEALTH_SECTION), changes=series_changes(ds, params.get("monitor")))
            data = None
        report = report_json(tables, since=since)
        text = json.dumps(report, indent=1) if args.json else \
            with_perfdata(format_report(report), perfdata(ds, tables) if data is None else data)
    except (ThruputError, ValueError, OSError) as exc:
        print(f"thruput monitor report: {exc}", file=sys.stderr)
        return EXIT["error"]
    except Exception as exc:    # noqa: BLE001  a crash must not read as 1, "breach open"
        import traceback
        traceback.print_exc()
        print(f"thruput monitor report: internal error: {exc!r}", file=sys.stderr)
        return EXIT["error"]
    print(text)
    return report["exit_status"]


def _new(args, directory):
    from ..monitor.new import new_campaign
    if not args.to:
        print("thruput monitor new: --to ADDRESS is required", file=sys.stderr)
        return 2
    new_campaign(directory, to=args.to, port=args.port, path_name=args.path_name,
                 source=args.source, destination=args.destination,
                 directions=args.directions.split(","), interval_s=args.interval,
                 jitter_s=args.jitter, order=args.order, seed=args.seed,
                 timeout_s=args.timeout, tool=args.tool, tcp_buffers=args.tcp_buffers,
                 tcp_duration_s=args.tcp_duration, udp_rate_bps=args.udp_rate,
                 udp_duration_s=args.udp_duration, ping_sizes=args.ping_sizes,
                 ping_count=args.ping_count, ping_interval_s=args.ping_interval,
                 day_s=args.day, between=args.between, capacity_bps=args.capacity, title=args.title,
                 description=args.description, notes=args.notes, who=args.who)
    print(f"wrote {directory}/campaign.yaml; edit it, then: thruput monitor {directory}",
          file=sys.stderr)
    return 0
