"""A new monitor campaign.yaml from a few command-line choices (``thruput monitor new``)."""

from __future__ import annotations

import os

from .campaign import CAMPAIGN_YAML, MonitorConfig, write_yaml
from .schedule import TEST_DEFAULTS

__all__ = ["new_campaign", "PLACEHOLDER"]

#: What is left for the user to write (``thruput campaign check`` warns about it).
PLACEHOLDER = "TODO"


def new_campaign(campaign_dir, *, to, path_name=None, source="source", destination=None,
                 directions=("forward", "reverse"), interval_s=300.0, jitter_s=0.0,
                 order="fixed", seed=0, timeout_s=60.0, tcp_buffers=(), tcp_duration_s=None,
                 udp_rate_bps=None, udp_duration_s=None, ping_sizes=(), ping_count=None,
                 ping_interval_s=None, tool="iperf3", port=None, day_s=None, between=None,
                 capacity_bps=None, title=None, description=None, notes=None, who=(),
                 events=()):
    """Write ``campaign_dir/campaign.yaml`` for a monitor of one path; return its mapping.

    Each test is asked for by its own settings: TCP by ``tcp_buffers`` (socket buffers,
    bytes; each ``tcp_duration_s`` long, 10 s by default), UDP by ``udp_rate_bps`` (each
    ``udp_duration_s``, 10 s), ping by any of ``ping_sizes`` (ICMP payloads, bytes; 56,
    ping's own, by default), ``ping_count`` (probes, 10) and ``ping_interval_s`` (0.2 s).
    ``day_s``, when given, is ``schedule.day_s``: the length of the cycle the statistics
    fold on (86400 for a real day); without it the statistics find the period in the data
    (``period="auto"``).

    Raises
    ------
    FileExistsError
        If the campaign already has a campaign.yaml (never overwritten).
    ValueError
        If the choices make no valid schedule, ask for no test, or set a test's length
        without what asks for that test (the message says which).
    """
    path = os.path.join(campaign_dir, CAMPAIGN_YAML)
    if os.path.exists(path):
        raise FileExistsError(f"{path}: exists; edit it, or pick a new directory")
    name = os.path.basename(os.path.abspath(campaign_dir))
    destination = destination or to
    if tcp_duration_s is not None and not tcp_buffers:
        raise ValueError("a TCP test's duration without its socket buffers: give the "
                         "buffers too (--tcp-buffers, e.g. 256K,1M)")
    if udp_duration_s is not None and not udp_rate_bps:
        raise ValueError("a UDP test's duration without its rate: give the rate too "
                         "(--udp-rate, bit/s)")
    tests = []
    if tcp_buffers:
        tests.append({"test": "tcp", "tool": tool, "duration_s": _or(tcp_duration_s, "duration_s"),
                      "socket_buffers": [int(b) for b in tcp_buffers]})
    if udp_rate_bps:
        tests.append({"test": "udp", "tool": tool, "duration_s": _or(udp_duration_s, "duration_s"),
                      "rate_bps": float(udp_rate_bps)})
    if ping_sizes or ping_count is not None or ping_interval_s is not None:
        tests.append({"test": "ping", "count": int(_or(ping_count, "count")),
                      "interval_s": float(_or(ping_interval_s, "interval_s")),
                      "sizes": [int(s) for s in ping_sizes or TEST_DEFAULTS["sizes"]]})
    if not tests:
        raise ValueError("no test asked for: give socket buffers for TCP (--tcp-buffers), "
                         "a rate for UDP (--udp-rate), or ping sizes, a count or an interval "
                         "for ping (--ping-sizes, --ping-count, --ping-interval)")
    p = {"name": path_name or f"{source}-{destination}", "source": source,
         "destination": destination, "address": to, "directions": list(directions),
         "between": between, "capacity_bps": capacity_bps}
    if port:
        p["port"] = port
    data = {"name": name, "title": title or f"Monitor {source} -> {destination}",
            "description": description or PLACEHOLDER, "kind": "monitor",
            "dates": {"start": None, "end": None}, "who": list(who), "paths": [p],
            "hosts": {source: {"description": "this host: thruput monitor describes it"},
                      destination: {"description": f"{PLACEHOLDER}: the far host (its CPU, "
                                                   "OS, NIC; thruput cannot measure it)"}},
            "tools": {},
            "schedule": {"interval_s": interval_s, "jitter_s": jitter_s, "order": order,
                         "seed": seed, "timeout_s": timeout_s, "tests": tests},
            "events": list(events), "explained": [], "notes": notes}
    if day_s:
        data["schedule"]["day_s"] = float(day_s)
    MonitorConfig(data, path)  # raises ValueError for a schedule that cannot run
    os.makedirs(campaign_dir, exist_ok=True)
    write_yaml(campaign_dir, data)
    return data


def _or(value, key):
    """``value``, or the schedule's default for ``key`` (:data:`~.schedule.TEST_DEFAULTS`)."""
    return TEST_DEFAULTS[key] if value is None else value
