"""Write ``campaign.yaml`` for a recorded sweep (layout: docs/design.md, schema:
``thruput/schemas/campaign.schema.json``).

What the recorder measures (hosts, tools, plan, dates, runs it could not make) is
overwritten on each recording; what people write (title, description, who, between,
notes) is kept unless given again.
"""

from __future__ import annotations

import datetime as dt
import os

import yaml

__all__ = ["CAMPAIGN_YAML", "load", "write", "merge", "default_description"]

CAMPAIGN_YAML = "campaign.yaml"
#: Top-level key order of a written campaign.yaml (as in docs/design.md).
KEY_ORDER = ("name", "title", "description", "kind", "dates", "who", "path", "hosts",
             "tools", "plan", "explained", "notes")


class _Dumper(yaml.SafeDumper):
    """Block mappings, but lists of plain values on one line (``windows: [4096, 8192]``)."""


def _represent_list(dumper, data):
    flow = all(isinstance(x, (int, float, str, bool, type(None))) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _represent_list)


def load(campaign_dir):
    """The campaign.yaml of ``campaign_dir`` as a dict ({} if there is none)."""
    path = os.path.join(campaign_dir, CAMPAIGN_YAML)
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        data = yaml.safe_load(f) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}:1: not a mapping")
    for key, value in (data.get("dates") or {}).items():  # YAML reads bare times as datetime
        if isinstance(value, dt.datetime):
            data["dates"][key] = value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return data


def write(campaign_dir, data):
    """Write ``data`` to campaign.yaml atomically (temporary file, then rename)."""
    ordered = {k: data[k] for k in KEY_ORDER if k in data}
    ordered.update({k: v for k, v in data.items() if k not in ordered})
    path = os.path.join(campaign_dir, CAMPAIGN_YAML)
    tmp = path + ".part"
    with open(tmp, "w") as f:
        f.write("# Written by `thruput record`; title, description, who, path.between and\n"
                "# notes are yours to edit (kept on re-recording unless given again).\n")
        yaml.dump(ordered, f, Dumper=_Dumper, sort_keys=False, width=88, allow_unicode=True)
    os.replace(tmp, path)


def default_description(plan, source, destination):
    """An honest default description built from the plan."""
    windows = f"{plan.windows[0]}..{plan.windows[-1]} bytes ({len(plan.windows)} sizes)"
    text = (f"TCP sweep recorded with `thruput record` from {source} to {destination} "
            f"using {plan.tool}: windows {windows} x streams "
            f"{','.join(map(str, plan.streams))} x {plan.repeats} repeats, "
            f"{plan.duration_s} s runs with ping every {plan.ping_interval_s:g} s alongside "
            f"(loaded)")
    if plan.pause_s:
        text += f", each followed by {plan.pause_s} s of ping alone (unloaded)"
    return text + f", in {plan.order} order."


def merge(existing, *, name, plan, source, destination, hosts, tools, start, end,
          explained, about):
    """The campaign.yaml mapping: ``existing`` updated with what was just measured.

    Parameters
    ----------
    about : dict
        What the user said on the command line: ``title``, ``description``, ``who``,
        ``between``, ``capacity_bps``, ``rtt_ms``, ``notes`` (None = keep or default).
    """
    data = dict(existing)
    data["name"] = name
    data["kind"] = "tcp_sweep"
    for key in ("title", "description", "who", "notes"):
        if about.get(key) is not None:
            data[key] = about[key]
    data.setdefault("title", f"TCP sweep {source} -> {destination} ({plan.tool})")
    data.setdefault("description", default_description(plan, source, destination))
    data.setdefault("who", [])
    path = dict(data.get("path") or {})
    path.update(source=source, destination=destination)
    for key in ("between", "capacity_bps", "rtt_ms"):
        if about.get(key) is not None:
            path[key] = about[key]
        path.setdefault(key, None)
    data["path"] = path
    # hosts: what was measured wins; what it could not know (None) keeps what the user
    # wrote by hand (a switch port, the far host's CPU); hosts off the path are dropped
    old_hosts = data.get("hosts") or {}
    data["hosts"] = {key: _merge_host(old_hosts.get(key) or {}, hosts[key])
                     for key in dict.fromkeys((source, destination))}
    data["tools"] = tools
    data["plan"] = plan.to_dict()
    dates = dict(data.get("dates") or {})
    dates["start"] = dates.get("start") or start
    dates["end"] = end
    data["dates"] = dates
    data["explained"] = explained
    data.setdefault("notes", None)
    return data


def _merge_host(old, new):
    merged = dict(old)
    for key, value in new.items():
        if isinstance(value, dict):
            merged[key] = _merge_host(old.get(key) or {}, value)
        elif value is not None or key not in merged:
            merged[key] = value
    return merged
