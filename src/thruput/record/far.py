"""Where a recording's commands run: this host, a network namespace, or a host over ssh.

An :class:`End` wraps a command so that it runs there (``ip netns exec NAME ...``, ``ssh
[options] user@host 'quoted command'``), starts a server there in the background (its pid
and log kept in a temporary folder at that end) and stops it by that pid, and describes
the host it is (:func:`describe`). Only the processes an End started are stopped.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field

from . import hostinfo

__all__ = ["End", "Server", "describe", "address_towards"]

#: Seconds a server may take to listen before starting it counts as failed.
LISTEN_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class End:
    """One end of the path: ``local`` (this host), ``netns:NAME`` or ``ssh:[user@]host``.

    ``ssh_options`` are passed to ssh before the host (``-p 2222``, ``-i key``,
    ``-o UserKnownHostsFile=...``); ssh always runs with ``BatchMode=yes``, from the
    network namespace ``via`` if given (where this end's clients run).
    """

    spec: str = "local"
    ssh_options: tuple = field(default=())
    via: str | None = None

    def __post_init__(self):
        if not (self.spec == "local" or re.fullmatch(r"netns:[\w.+-]+", self.spec)
                or re.fullmatch(r"ssh:([\w.+-]+@)?[\w.:+-]+", self.spec)):
            raise ValueError(f"far end {self.spec!r}: expected local, netns:NAME or ssh:[user@]host")

    @property
    def netns(self) -> str | None:
        return self.spec[6:] if self.spec.startswith("netns:") else None

    @property
    def ssh(self) -> str | None:
        return self.spec[4:] if self.spec.startswith("ssh:") else None

    def argv(self, argv) -> list:
        """``argv`` wrapped to run at this end."""
        if self.netns:
            return ["ip", "netns", "exec", self.netns, *argv]
        if self.ssh:
            ssh = ["ssh", "-o", "BatchMode=yes", *self.ssh_options, self.ssh, shlex.join(argv)]
            return ["ip", "netns", "exec", self.via, *ssh] if self.via else ssh
        return list(argv)

    def run(self, argv, *, check=True, timeout=60) -> subprocess.CompletedProcess:
        """Run ``argv`` here and wait; ``check``: raise RuntimeError naming the command and
        its error when it fails."""
        out = subprocess.run(self.argv(argv), capture_output=True, text=True, timeout=timeout,
                             stdin=subprocess.DEVNULL)
        if check and out.returncode != 0:
            raise RuntimeError(f"{self.spec}: {shlex.join(argv)} failed ({out.returncode}): "
                               f"{(out.stderr or out.stdout).strip()[:300]}")
        return out

    def mkdtemp(self) -> str:
        """A new temporary folder at this end (removed by :meth:`rmtree`)."""
        return self.run(["mktemp", "-d", "/tmp/thruput-far.XXXXXX"]).stdout.strip()

    def rmtree(self, path: str) -> None:
        if path.startswith("/tmp/thruput-"):
            self.run(["rm", "-rf", path], check=False)

    def __str__(self):
        return self.spec


class Server:
    """A server process started at an :class:`End` in the background.

    Its pid and output go to files in ``workdir`` at that end; :meth:`stop` kills that pid
    only (TERM, then KILL), :meth:`log` reads what it wrote.
    """

    def __init__(self, end: End, argv, workdir: str, name: str):
        self.end, self.name = end, name
        self.pidfile, self.logfile = f"{workdir}/{name}.pid", f"{workdir}/{name}.log"
        script = f'echo $$ > {shlex.quote(self.pidfile)}; exec "$@" > {shlex.quote(self.logfile)} 2>&1'
        self.proc = subprocess.Popen(end.argv(["sh", "-c", script, "server", *argv]),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.pid = None

    def wait_listening(self, port: int, timeout=LISTEN_TIMEOUT_S) -> None:
        """Wait until a TCP socket listens on ``port`` at the end (RuntimeError if not)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.end.run(["ss", "-Hltn", f"sport = :{port}"], check=False, timeout=10)
            if out.returncode == 0 and out.stdout.strip():
                self._read_pid()
                return
            if self.proc.poll() is not None and not self.end.ssh:
                break
            time.sleep(0.1)
        raise RuntimeError(f"{self.end}: {self.name} does not listen on port {port}: {self.log()[:300]}")

    def _read_pid(self):
        if self.pid is None:
            out = self.end.run(["cat", self.pidfile], check=False, timeout=10)
            if out.returncode == 0 and out.stdout.strip().isdigit():
                self.pid = int(out.stdout.strip())

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the server to end by itself (``iperf3 -s -1``)."""
        try:
            self.proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def stop(self) -> None:
        """End the server: TERM its pid, KILL if it is still there after 2 s."""
        if self.proc.poll() is None:
            self._read_pid()
            if self.pid:
                self.end.run(["kill", str(self.pid)], check=False, timeout=10)
            if not self.wait(2.0):
                if self.pid:
                    self.end.run(["kill", "-9", str(self.pid)], check=False, timeout=10)
                if self.end.ssh or not self.pid:
                    self.proc.kill()
                self.proc.wait(timeout=10)

    def log(self) -> str:
        out = self.end.run(["cat", self.logfile], check=False, timeout=30)
        return out.stdout if out.returncode == 0 else ""


def address_towards(end: End, target: str) -> tuple[str | None, str | None]:
    """``(interface, source address)`` the route from ``end`` to ``target`` leaves by."""
    out = end.run(["ip", "-j", "route", "get", target], check=False, timeout=10)
    try:
        route = json.loads(out.stdout)[0]
        return route.get("dev"), route.get("prefsrc")
    except (ValueError, LookupError, TypeError):
        return None, None


def describe(end: End, target: str) -> dict:
    """The ``hosts.<name>`` mapping of campaign.yaml for the host at ``end``: OS, kernel,
    CPU and memory, the interface towards ``target`` (name, kind, qdisc, MTU) and its TCP
    settings, read at that end (:mod:`thruput.record.hostinfo`'s fields)."""
    if end.spec == "local" or end.netns:
        host = hostinfo.local_host(None, end.netns)
    else:
        host = hostinfo.far_host_unknown("ssh")

        def text(argv):
            out = end.run(argv, check=False, timeout=30)
            return out.stdout.strip() if out.returncode == 0 else None
        os_release = text(["cat", "/etc/os-release"]) or ""
        m = re.search(r'^PRETTY_NAME="?([^"\n]*)', os_release, re.M)
        mem = re.search(r"^MemTotal:\s+(\d+)", text(["cat", "/proc/meminfo"]) or "", re.M)
        cpu = re.search(r"^model name\s*:\s*(.*)$", text(["cat", "/proc/cpuinfo"]) or "", re.M)
        nproc = text(["nproc"])
        host.update({"os": m.group(1) if m else None, "kernel": text(["uname", "-r"]),
                     "memory_bytes": int(mem.group(1)) * 1024 if mem else None,
                     "cpu_model": cpu.group(1).strip() if cpu else None,
                     "cpu_count": int(nproc) if nproc and nproc.isdigit() else None,
                     "tcp": hostinfo._tcp_settings(end)})
        host["description"] = f"host {text(['hostname']) or end.ssh} reached over ssh ({end.ssh})"
    dev, _ = address_towards(end, target)
    nic, speed = hostinfo.describe_interface(dev, end)
    mtu = end.run(["cat", f"/sys/class/net/{dev}/mtu"], check=False, timeout=10).stdout.strip() if dev else ""
    host.update({"nic": f"{nic}; mtu {mtu}" if nic and mtu.isdigit() else nic, "link_speed_bps": speed})
    if end.netns:
        host["description"] = f"network namespace {end.netns} (described by thruput record from /proc, /sys and ip)"
    return host
