"""Describe the hosts of a campaign: this one from /proc and /sys, the far one from iperf3.

The fields are the ``hosts.<name>`` mapping of ``campaign.yaml`` (see
``thruput/schemas/campaign.schema.json``): what the source studies tabulated for each host
(CPU model, count and MHz, memory, OS, NIC) and the TCP settings that bound the window.
``None`` means "not known here"; nothing is guessed.

With ``netns``, the network settings (TCP sysctls, the interface towards the far host and
its queueing discipline) are read inside that network namespace, since Linux keeps them
per namespace; CPU, memory, OS and kernel belong to the machine.
"""

from __future__ import annotations

import json
import os
import platform
import re
import socket
import subprocess
from pathlib import Path

from ..campaign.metadata import UNAME

__all__ = ["local_host", "far_host_from_iperf3", "far_host_unknown", "server_version",
           "tool_versions", "read_sysctl", "interface_towards", "describe_interface",
           "TCP_SYSCTLS"]

#: campaign.yaml ``tcp`` key -> sysctl name. rmem/wmem are the socket buffer defaults and
#: the ceiling for SO_RCVBUF/SO_SNDBUF (which ``iperf -w`` sets; Linux doubles the request
#: and caps it at *_max); tcp_rmem/tcp_wmem are the autotuning (min, default, max).
TCP_SYSCTLS = {
    "rmem_default": "net.core.rmem_default",
    "rmem_max": "net.core.rmem_max",
    "wmem_default": "net.core.wmem_default",
    "wmem_max": "net.core.wmem_max",
    "tcp_rmem": "net.ipv4.tcp_rmem",
    "tcp_wmem": "net.ipv4.tcp_wmem",
    "congestion_control": "net.ipv4.tcp_congestion_control",
    "window_scaling": "net.ipv4.tcp_window_scaling",
    "sack": "net.ipv4.tcp_sack",
}

#: Interface kinds (``ip -d link``: linkinfo.info_kind) whose "speed" in sysfs is a nominal
#: number and not a link rate (veth says 10000 Mb/s, tun 10 Mb/s): reported as unknown.
VIRTUAL_KINDS = frozenset({"veth", "tun", "tap", "bridge", "dummy", "macvlan", "ipvlan", "vxlan"})


#: How each tool prints its version: (argv, regex with a ``v`` group, label prefix).
VERSION_PROBES = {
    "iperf3": (["iperf3", "--version"], r"^iperf (?P<v>3\S*)", ""),
    "iperf2": (["iperf", "--version"], r"^iperf version (?P<v>\S+)", ""),
    "ping": (["ping", "-V"], r"iputils[- ]?(?:s)?(?P<v>\d+)", "iputils "),
    "traceroute": (["traceroute", "--version"], r"version (?P<v>[0-9.]+)", ""),
}


def _netns_argv(argv, netns):
    if hasattr(netns, "argv"):   # a thruput.record.far.End: this host, a namespace or ssh
        return netns.argv(argv)
    return ["ip", "netns", "exec", netns, *argv] if netns else list(argv)


def _run(argv, netns=None):
    """stdout+stderr of ``argv`` (in ``netns``), or None if it cannot run or fails."""
    try:
        out = subprocess.run(_netns_argv(argv, netns), capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout + out.stderr) if out.returncode == 0 else None


def read_sysctl(name, netns=None):
    """Value of sysctl ``name`` (``net.ipv4.tcp_rmem``) as text, or None if unreadable."""
    path = "/proc/sys/" + name.replace(".", "/")
    if netns:
        text = _run(["cat", path], netns)
    else:
        try:
            text = Path(path).read_text()
        except OSError:
            text = None
    return text.strip() if text is not None else None


def _tcp_settings(netns=None):
    tcp = {}
    for key, name in TCP_SYSCTLS.items():
        raw = read_sysctl(name, netns)
        if raw is None:
            tcp[key] = None
        elif key in ("tcp_rmem", "tcp_wmem"):
            tcp[key] = [int(x) for x in raw.split()]
        elif key in ("window_scaling", "sack"):
            tcp[key] = raw != "0"
        elif key == "congestion_control":
            tcp[key] = raw
        else:
            tcp[key] = int(raw)
    return tcp


def _cpuinfo():
    model = mhz = None
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None, None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model is None:
            model = value.strip()
        elif key == "cpu MHz" and mhz is None:
            mhz = float(value)
    return model, mhz


def _memory_bytes():
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024  # /proc/meminfo "kB" are KiB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _os_name():
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system() or None


def interface_towards(target, netns=None):
    """Name of the interface the route to ``target`` (name or address) leaves by, or None."""
    try:
        address = socket.getaddrinfo(target, None)[0][4][0]
    except (OSError, IndexError):
        return None
    text = _run(["ip", "-j", "route", "get", address], netns)
    try:
        return json.loads(text)[0]["dev"]
    except (TypeError, ValueError, LookupError):
        return None


def describe_interface(dev, netns=None):
    """``(nic, link_speed_bps)`` for interface ``dev``.

    ``nic`` names the interface, its kind or driver and a non-default root qdisc (which is
    where ``tc tbf`` shaping shows), e.g. ``"h-va (veth); qdisc tbf rate 1Gbit burst
    256Kb lat 10ms"``. The speed is sysfs ``speed`` (Mb/s) for physical interfaces only.
    """
    if dev is None:
        return None, None
    kind = None
    text = _run(["ip", "-j", "-d", "link", "show", "dev", dev], netns)
    try:
        kind = json.loads(text)[0].get("linkinfo", {}).get("info_kind")
    except (TypeError, ValueError, LookupError):
        pass
    if dev == "lo":
        kind = "loopback"
    sys_dev = f"/sys/class/net/{dev}"
    driver = _run(["readlink", f"{sys_dev}/device/driver"], netns)
    if kind is None and driver:
        kind = os.path.basename(driver.strip())
    nic = f"{dev} ({kind})" if kind else dev
    qdisc = _run(["tc", "qdisc", "show", "dev", dev, "root"], netns)
    if qdisc:
        first = " ".join(qdisc.split("\n")[0].split())
        m = re.match(r"qdisc (\S+) \S+ root (?:refcnt \d+ )?(.*)", first)
        if m and m.group(1) not in ("noqueue", "pfifo_fast", "fq_codel", "mq", "fq"):
            nic += f"; qdisc {m.group(1)} {m.group(2)}".rstrip()
    speed = None
    if kind not in VIRTUAL_KINDS and kind != "loopback" and driver:
        raw = _run(["cat", f"{sys_dev}/speed"], netns)
        try:
            mbps = int(raw.strip())
            speed = mbps * 1e6 if mbps > 0 else None  # -1: unknown (link down, virtual)
        except (AttributeError, ValueError):
            pass
    return nic, speed


def local_host(target=None, netns=None):
    """Describe this host as a ``hosts.<name>`` mapping of campaign.yaml.

    Parameters
    ----------
    target : str, optional
        The far host: the interface towards it is described (``nic``, ``link_speed_bps``).
    netns : str, optional
        Network namespace the measurement runs in (network settings are read there).
    """
    model, mhz = _cpuinfo()
    nic, speed = describe_interface(interface_towards(target, netns) if target else None, netns)
    where = f"network namespace {netns} on host {socket.gethostname()}" if netns \
        else f"host {socket.gethostname()}"
    return {
        "description": f"{where} (described by thruput record from /proc, /sys and ip)",
        "cpu_model": model,
        "cpu_count": os.cpu_count(),
        "cpu_mhz": mhz,
        "memory_bytes": _memory_bytes(),
        "os": _os_name(),
        "kernel": platform.release() or None,
        "nic": nic,
        "link_speed_bps": speed,
        "tcp": _tcp_settings(netns),
    }


def far_host_from_iperf3(result):
    """Describe the far host from an iperf3 ``-J --get-server-output`` result (a dict).

    The server's ``uname`` (``start.system_info``) is there only when the server itself
    runs with ``-J``; its congestion control (``end.receiver_tcp_congestion``) always is.
    Everything iperf3 does not report stays None.
    """
    server = result.get("server_output_json") or {}
    info = (server.get("start") or {}).get("system_info")
    m = UNAME.match(info or "")
    congestion = (result.get("end") or {}).get("receiver_tcp_congestion")
    if m:
        description = f"far end as iperf3 reported it (server system_info: {info.strip()})"
    else:
        description = ("far end: iperf3 server did not report its system (run it as "
                       "'iperf3 -s -J' for OS and kernel)")
    host = {"description": description, "cpu_model": None, "cpu_count": None,
            "cpu_mhz": None, "memory_bytes": None,
            "os": m.group("sysname") if m else None,
            "kernel": m.group("release") if m else None,
            "nic": None, "link_speed_bps": None,
            "tcp": {key: None for key in TCP_SYSCTLS}}
    host["tcp"]["congestion_control"] = congestion
    return host


def far_host_unknown(tool):
    """Describe a far host the tool reports nothing about (iperf 2)."""
    return {"description": f"far end: not reported by {tool}", "cpu_model": None,
            "cpu_count": None, "cpu_mhz": None, "memory_bytes": None, "os": None,
            "kernel": None, "nic": None, "link_speed_bps": None,
            "tcp": {key: None for key in TCP_SYSCTLS}}


def server_version(result):
    """iperf3 version of the server (``"3.12"``) from a ``--get-server-output`` result."""
    version = ((result.get("server_output_json") or {}).get("start") or {}).get("version")
    m = re.match(r"iperf (\S+)", version or "")
    return m.group(1) if m else None


def tool_versions(tool):
    """``{tool: version, "ping": "iputils ..."}`` as the installed tools print them."""
    versions = {}
    for name in (tool, "ping"):
        argv, pattern, prefix = VERSION_PROBES[name]
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
            text = out.stdout + out.stderr
        except (OSError, subprocess.SubprocessError):
            text = ""
        m = re.search(pattern, text, re.MULTILINE)
        versions[name] = prefix + m.group("v") if m else None
    return versions
