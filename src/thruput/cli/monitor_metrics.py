"""``thruput monitor metrics DIR [--serve HOST:PORT] [--textfile PATH]``: the monitor's
state in the Prometheus text exposition format (:mod:`thruput.monitor.metrics`)."""

from __future__ import annotations

import sys
from pathlib import Path

#: Where ``--serve`` listens when HOST is left out: loopback only.
DEFAULT_HOST = "127.0.0.1"
#: Files whose size and time say that a campaign changed (raw: its manifest and
#: campaign.yaml; a store: its consolidated metadata).
CHANGES = ("runs.csv", "campaign.yaml", ".zmetadata")


def _address(text):
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or int(port) > 65535:
        raise ValueError(f"--serve {text!r}: give HOST:PORT or :PORT (e.g. 127.0.0.1:9469)")
    return host, int(port)


def _exposition(directory):
    from ..monitor.alerts import evaluate
    from ..monitor.metrics import exposition
    from .pipeline_health import HEALTH_SECTION, monitor_only, open_monitor, project_params

    from ..monitor.design_alerts import design_exposition, evaluate_design, is_time_design

    ds = open_monitor(directory)
    monitor_only(ds, directory, "thruput monitor metrics")
    # the rules' settings of the pipeline and of `thruput monitor report` (params.yaml health)
    health = project_params(None, directory).get(HEALTH_SECTION)
    if is_time_design(ds):              # a design over time: one label per series factor
        ds = ds.load()
        return design_exposition(ds, evaluate_design(ds, health))
    return exposition(ds, evaluate(ds, health))


def _signature(directory):
    out = []
    for name in CHANGES:
        path = Path(directory) / name
        if path.is_file():
            st = path.stat()
            out.append((name, st.st_size, st.st_mtime_ns))
    return tuple(out)


def run_metrics(args, directory):
    """Print, serve or write the exposition: exit 0, or 2 for an input error."""
    from ..errors import ThruputError
    from ..monitor.metrics import serve, write_textfile

    try:
        if args.serve:
            host, port = _address(args.serve)
            key = _signature(directory)
            first = _exposition(directory)          # refuse a bad campaign before listening
            serve(host, port, lambda: _exposition(directory), signature=lambda: _signature(directory),
                  ready=lambda p: print(f"thruput monitor metrics: serving http://{host}:{p}/metrics",
                                        file=sys.stderr, flush=True),
                  initial=first if key == _signature(directory) else None)
            return 0
        text = _exposition(directory)
        if args.textfile:
            write_textfile(text, args.textfile)
        else:
            sys.stdout.write(text)
        return 0
    except (ThruputError, ValueError, OSError) as exc:
        print(f"thruput monitor metrics: {exc}", file=sys.stderr)
        return 2
