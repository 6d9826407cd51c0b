"""Run one cell of a sweep the IEPM way (seed 000): iperf with ping alongside, then ping alone.

For each (window, streams, repeat):

1. *loaded*: ``ping`` starts, then ``iperf3 -J`` (or ``iperf``) runs for ``duration_s``
   with that window and number of streams; when iperf ends, ping gets SIGINT (so it
   prints its statistics);
2. *unloaded*: ``ping`` alone for ``pause_s`` seconds: the break between loads, in which
   the path is measured without our traffic.

Every file is written as ``<name>.part`` and renamed only when the run (all its files) is
complete; the manifest rows are appended after the renames, with SIGINT/SIGTERM held back
for that moment. An interrupted run deletes its ``.part`` files.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

from ..campaign.layout import sha256_of
from ..quantities import utc_iso
from .manifest import Row, append_rows

__all__ = ["Target", "CellResult", "run_cell", "iperf_argv", "ping_argv", "RUNS_DIR"]

#: Sub-folder of the campaign directory that holds the raw logs.
RUNS_DIR = "runs"
#: File name suffix of each (role, phase) of a run; the content, not the name, decides how
#: it is read later.
SUFFIXES = {("iperf", "", "iperf3"): ".iperf3.json", ("iperf", "", "iperf2"): ".iperf2.txt",
            ("ping", "loaded", None): ".loaded.ping", ("ping", "unloaded", None): ".unloaded.ping"}
PART = ".part"
#: Seconds iperf may take beyond its -t before it is killed (connection set-up, server
#: report); the loaded ping also gets this as its -w safety deadline, so that it ends by
#: itself even if this process dies.
SLACK_S = 30
#: Seconds to wait for ping to print its statistics after SIGINT.
PING_STOP_S = 5
#: iperf3 --connect-timeout, ms.
CONNECT_TIMEOUT_MS = 5000


@dataclass(frozen=True)
class Target:
    """Where to measure to: the far host running the iperf server.

    Parameters
    ----------
    host : str
        Name or address of the far host.
    port : int, optional
        iperf server port (iperf3 default 5201, iperf 2 default 5001).
    netns : str, optional
        Run the client and ping inside this network namespace (``ip netns exec``).
    """

    host: str
    port: int | None = None
    netns: str | None = None

    def argv(self, argv):
        return ["ip", "netns", "exec", self.netns, *argv] if self.netns else list(argv)


@dataclass
class CellResult:
    """What one cell left: manifest rows on success, else ``error`` (why it failed)."""

    run: str
    rows: list
    error: str | None = None
    throughput_bps: float | None = None  # for the progress display only


def iperf_argv(plan, target, cell, extra=()):
    """Command line of the iperf client for ``cell`` (without the netns prefix)."""
    if plan.tool == "iperf3":
        argv = ["iperf3", "-c", target.host, "-J", "-t", str(plan.duration_s),
                "-w", str(cell.window), "-P", str(cell.streams),
                "--connect-timeout", str(CONNECT_TIMEOUT_MS)]
    else:
        # -e: enhanced reports (2.0.9+), -i 1: one report a second like iperf3
        argv = ["iperf", "-c", target.host, "-e", "-i", "1", "-t", str(plan.duration_s),
                "-w", str(cell.window), "-P", str(cell.streams)]
    if target.port:
        argv += ["-p", str(target.port)]
    return argv + list(extra)


def ping_argv(plan, target, deadline_s):
    """``ping -n -O -D -i INTERVAL -s SIZE -w DEADLINE HOST``.

    -n: numeric (no DNS lookups during the run); -O: report each probe that gets no
    reply (so losses are lines, not gaps); -D: Unix timestamps, to line probes up with
    the iperf run.
    """
    return ["ping", "-n", "-O", "-D", "-i", f"{plan.ping_interval_s:g}",
            "-s", str(plan.ping_size_bytes), "-w", str(int(deadline_s)), target.host]


@contextlib.contextmanager
def held_signals():
    """Hold SIGINT/SIGTERM back while the block runs (main thread only), then deliver."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    old = {sig: signal.signal(sig, lambda s, _f: caught.append(s))
           for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        for sig in caught[:1]:
            os.kill(os.getpid(), sig)


def _stop(proc, sig=signal.SIGINT, wait_s=PING_STOP_S):
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _iperf_error(plan, returncode, out_path, stderr):
    """Why an iperf run failed (None if it did not): iperf3's own "error", else stderr."""
    if plan.tool == "iperf3":
        try:
            with open(out_path) as f:
                result = json.load(f)
        except (OSError, ValueError):
            result = None
        if isinstance(result, dict) and result.get("error"):
            return f"iperf3: {result['error']}"
        if result is None:
            return f"iperf3 exited {returncode} without JSON: {stderr.strip()[:200]}"
    if returncode != 0:
        return f"{plan.tool} exited {returncode}: {stderr.strip()[:200]}"
    if plan.tool == "iperf2" and "connect failed" in stderr:
        return f"iperf: {stderr.strip()[:200]}"
    return None


def _throughput(plan, path):
    if plan.tool != "iperf3":
        return None
    try:
        with open(path) as f:
            return float(json.load(f)["end"]["sum_received"]["bits_per_second"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _loaded(plan, target, cell, iperf_part, ping_part):
    """Run iperf with ping alongside; return (error or None, started)."""
    started = utc_iso()
    with open(ping_part, "wb") as ping_out, open(iperf_part, "wb") as iperf_out:
        pinger = subprocess.Popen(
            target.argv(ping_argv(plan, target, plan.duration_s + SLACK_S)),
            stdout=ping_out, stderr=subprocess.PIPE)
        try:
            client = subprocess.Popen(target.argv(iperf_argv(plan, target, cell)),
                                      stdout=iperf_out, stderr=subprocess.PIPE)
            try:
                _out, err = client.communicate(timeout=plan.duration_s + SLACK_S)
            except subprocess.TimeoutExpired:
                client.kill()
                client.communicate()
                return f"{plan.tool} did not finish within {plan.duration_s + SLACK_S} s", started
            finally:
                if client.poll() is None:
                    client.kill()
                    client.wait()
        finally:
            _stop(pinger)
            ping_err = pinger.stderr.read().decode(errors="replace")
            pinger.stderr.close()
    error = _iperf_error(plan, client.returncode, iperf_part, err.decode(errors="replace"))
    if error is None and pinger.returncode not in (0, 1, -signal.SIGINT):
        error = f"ping alongside the run failed ({pinger.returncode}): {ping_err.strip()[:200]}"
    return error, started


def _unloaded(plan, target, ping_part):
    started = utc_iso()
    with open(ping_part, "wb") as out:
        proc = subprocess.run(target.argv(ping_argv(plan, target, plan.pause_s)),
                              stdout=out, stderr=subprocess.PIPE)
    # ping: 0 = some replies, 1 = none (still a measurement: everything lost), 2 = error
    if proc.returncode not in (0, 1):
        return f"unloaded ping failed ({proc.returncode}): " \
               f"{proc.stderr.decode(errors='replace').strip()[:200]}", started
    return None, started


def run_cell(campaign_dir, plan, target, cell, retries=2, retry_wait_s=1.0):
    """Record one cell into ``campaign_dir``; append its rows to runs.csv when complete.

    Parameters
    ----------
    campaign_dir : path-like
    plan : thruput.record.plan.Plan
    target : Target
    cell : thruput.record.plan.Cell
    retries : int
        Further attempts when iperf fails (a busy server, a refused connection), each
        after ``retry_wait_s`` times the attempt number.

    Returns
    -------
    CellResult
        With the rows written, or ``error`` (the last attempt's reason) and no rows.
    """
    run = cell.run
    runs_dir = os.path.join(campaign_dir, RUNS_DIR)
    os.makedirs(runs_dir, exist_ok=True)
    names = {part: os.path.join(RUNS_DIR, run + SUFFIXES[(*part, plan.tool if part[0] == "iperf" else None)])
             for part in plan.parts}
    parts = {part: os.path.join(campaign_dir, rel) + PART for part, rel in names.items()}
    try:
        for attempt in range(retries + 1):
            if attempt:
                time.sleep(retry_wait_s * attempt)
            error, started_loaded = _loaded(plan, target, cell, parts[("iperf", "")],
                                            parts[("ping", "loaded")])
            if error is None:
                break
        else:
            return CellResult(run, [], error)
        started = {("iperf", ""): started_loaded, ("ping", "loaded"): started_loaded}
        if ("ping", "unloaded") in parts:
            error, started[("ping", "unloaded")] = _unloaded(plan, target,
                                                             parts[("ping", "unloaded")])
            if error:
                return CellResult(run, [], error)
        rows = [Row(run, role, names[(role, phase)].replace(os.sep, "/"), sha256_of(parts[(role, phase)]),
                    cell.window, cell.streams, cell.repeat, phase, started[(role, phase)])
                for role, phase in plan.parts]
        throughput = _throughput(plan, parts[("iperf", "")])
        with held_signals():
            for part, rel in names.items():
                os.replace(parts[part], os.path.join(campaign_dir, rel))
            append_rows(campaign_dir, rows)
        return CellResult(run, rows, None, throughput)
    finally:
        for path in parts.values():
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
