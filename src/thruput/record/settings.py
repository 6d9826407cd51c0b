"""Host settings a design applies at both ends, each restored afterwards.

A setting is named by a factor's ``applied`` text:

``sysctl NAME``
    ``sysctl -w NAME=LEVEL`` (``net.ipv4.tcp_congestion_control``, ``net.ipv4.tcp_rmem``);
``mtu``
    ``ip link set dev DEV mtu LEVEL`` on the interface the route to the other end leaves by;
``tc qdisc``
    ``tc qdisc replace dev DEV root LEVEL`` (``fq``, ``fq maxrate 50mbit``); restored by
    deleting it, so only where the interface had its default root qdisc.

:class:`Settings` remembers the value each (end, setting) had before it first changed it
and puts every one back in :meth:`Settings.restore` (called from a ``finally``: also
after a failure or Ctrl-C).
"""

from __future__ import annotations

import json
import shlex

from .far import End, address_towards

__all__ = ["HOST_SETTINGS", "is_host_setting", "Settings"]

#: The kinds of host setting (first word of ``applied``).
HOST_SETTINGS = ("sysctl", "mtu", "tc")


def is_host_setting(applied: str | None) -> bool:
    """True if a factor ``applied`` this way is set on the hosts, not on the tool."""
    return bool(applied) and applied.split()[0] in HOST_SETTINGS


class Settings:
    """Host settings applied at several ends, each remembered to be restored.

    Parameters
    ----------
    ends : dict
        ``{label: (End, address of the other end)}``: where a setting is applied, and the
        address whose route names the interface (for ``mtu`` and ``tc qdisc``).
    """

    def __init__(self, ends):
        self.ends = ends
        self.current = {}     # applied text -> level set now
        self.original = {}    # (label, applied) -> (End, how to restore: argv list)
        self.log = []         # what was done, in order: (label, command)

    def set(self, applied: str, level) -> None:
        """Apply ``applied`` = ``level`` at every end (nothing if it is set already)."""
        if self.current.get(applied) == str(level):
            return
        for label, (end, other) in self.ends.items():
            self._set_one(label, end, other, applied, str(level))
        self.current[applied] = str(level)

    def _set_one(self, label, end: End, other, applied, level):
        words = applied.split()
        key = (label, applied)
        if words[0] == "sysctl":
            name = words[1]
            if key not in self.original:
                old = end.run(["sysctl", "-n", name]).stdout.strip()
                self.original[key] = (end, [["sysctl", "-q", "-w", f"{name}={old}"]])
            argv = ["sysctl", "-q", "-w", f"{name}={level}"]
        else:
            dev, _ = address_towards(end, other)
            if dev is None:
                raise RuntimeError(f"{end}: no route towards {other} to apply {applied}")
            if words[0] == "mtu":
                if key not in self.original:
                    old = end.run(["cat", f"/sys/class/net/{dev}/mtu"]).stdout.strip()
                    self.original[key] = (end, [["ip", "link", "set", "dev", dev, "mtu", old]])
                argv = ["ip", "link", "set", "dev", dev, "mtu", level]
            else:                       # tc qdisc
                if key not in self.original:
                    shown = json.loads(end.run(["tc", "-j", "qdisc", "show", "dev", dev, "root"]).stdout or "[]")
                    if shown and shown[0].get("handle") not in ("0:", None) and shown[0].get("kind") != "noqueue":
                        raise RuntimeError(f"{end}: {dev} has root qdisc {shown[0].get('kind')} "
                                           f"{shown[0].get('handle')}, which thruput could not put back")
                    self.original[key] = (end, [["tc", "qdisc", "del", "dev", dev, "root"]])
                argv = ["tc", "qdisc", "replace", "dev", dev, "root", *shlex.split(level)]
        end.run(argv)
        self.log.append((label, shlex.join(argv)))

    def restore(self) -> list[str]:
        """Put every setting back as it was, most recent first; the errors, as text (a
        failure to restore one does not stop the others)."""
        errors = []
        for (label, applied), (end, commands) in reversed(list(self.original.items())):
            for argv in commands:
                out = end.run(argv, check=False)
                if out.returncode != 0 and not (argv[:2] == ["tc", "qdisc"] and "No such file" in out.stderr):
                    errors.append(f"{label}: {shlex.join(argv)}: {out.stderr.strip()[:200]}")
                self.log.append((label, "restore: " + shlex.join(argv)))
        self.original.clear()
        self.current.clear()
        return errors
