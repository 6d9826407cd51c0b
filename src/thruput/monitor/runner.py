"""Run a monitor campaign: its tests, slot after slot, until told to stop.

Each test runs as a child process (in a network namespace if asked) with the schedule's
``timeout_s``; its standard output is written to ``runs/<YYYY-MM-DD>/<run>.<ext>.part``,
renamed when the test has ended, and only then is its runs.csv row appended (with SIGINT
and SIGTERM held back for that moment). A test that fails is a row like any other, with
its outcome, the tool's own message and whatever the tool wrote; the next test goes on.
A campaign folder that cannot be written (full, read-only) stops the monitor with a
:class:`~thruput.monitor.lock.CampaignNotWritable` error: the test's file, its ``.part``
and any part of its row are removed first, so a restart goes on from a consistent state.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

from ..hashing import sha256_bytes
from ..quantities import utc_iso
from ..record.runner import held_signals
from ..campaign import outcome as oc
from .lock import not_writable
from .manifest import MANIFEST, append_row
from .routes import ROUTES_DIR, ROUTES_MANIFEST, append_route_row

__all__ = ["test_argv", "run_test", "record_test", "TestResult", "RUNS_DIR", "PART",
           "EXTENSIONS", "remove_partial", "utc_iso"]

RUNS_DIR = "runs"
PART = ".part"
#: File extension of each tool's output (the content, not the name, decides how it is read).
EXTENSIONS = {"iperf3": ".json", "iperf2": ".txt", "ping": ".txt", "traceroute": ".txt"}
#: traceroute's wait for each probe's answer (s, -w): a hop that does not answer costs
#: probes x this.
TRACEROUTE_WAIT_S = 1
#: iperf3 --connect-timeout (ms): a far end that does not answer fails in this time.
CONNECT_TIMEOUT_MS = 5000
#: Seconds a tool gets to finish after SIGINT (on timeout) before SIGKILL.
STOP_GRACE_S = 2.0
#: Longest tool message kept in the ``reason`` column.
MAX_REASON = 300


def test_argv(spec):
    """The command line of ``spec`` (a :class:`~thruput.monitor.schedule.TestSpec`).

    iperf3 runs with ``-J`` (and ``-R`` for the reverse direction, ``-u -b`` for UDP);
    iperf 2 with ``-e -i 1`` (``-R``, iperf 2.1+, for reverse); ping as
    ``ping -n -O -D -c COUNT -i INTERVAL -s SIZE -w DEADLINE``; traceroute as
    ``traceroute -n -q PROBES -w 1 -m MAX_HOPS``.
    """
    p = spec.path
    if spec.tool == "traceroute":
        return ["traceroute", "-n", "-q", str(spec.count), "-w", str(TRACEROUTE_WAIT_S), "-m", str(spec.max_hops),
                p.address]
    if spec.tool == "ping":
        deadline = int(spec.count * spec.interval_s + 5)
        return ["ping", "-n", "-O", "-D", "-c", str(spec.count), "-i", f"{spec.interval_s:g}",
                "-s", str(spec.size), "-w", str(deadline), p.address]
    if spec.tool == "iperf3":
        argv = ["iperf3", "-c", p.address, "-J", "-t", f"{spec.duration_s:g}",
                "--connect-timeout", str(CONNECT_TIMEOUT_MS)]
    else:
        argv = ["iperf", "-c", p.address, "-e", "-i", "1", "-t", f"{spec.duration_s:g}"]
    if spec.test == "tcp":
        argv += ["-w", str(spec.socket_buffer)]
    else:
        argv += ["-u", "-b", f"{spec.rate:.0f}"]
    if spec.direction == "reverse":
        argv += ["-R"]
    if p.port:
        argv += ["-p", str(p.port)]
    return argv


@dataclass
class TestResult:
    """How one test ended: ``outcome`` (``ok`` or why not) and ``reason`` (the tool's words)."""

    outcome: str
    reason: str
    stdout: bytes


def _judge(spec, returncode, stdout, stderr, timed_out, timeout_s):
    text = stdout.decode(errors="replace")
    err = " ".join(stderr.decode(errors="replace").split())
    if timed_out:
        return "timeout", f"still running after {timeout_s:g} s: killed"
    if spec.tool == "ping":
        return oc.judge_ping(returncode, text, err)
    if spec.tool == "iperf3":
        error = oc.iperf3_error(text)
        if error:
            return oc.classify(error), f"iperf3: {error}"
    if returncode != 0:
        return oc.classify(err), f"{spec.tool} exited {returncode}: {err}".strip()
    if spec.tool == "iperf2" and ("connect failed" in err or "connect failed" in text):
        return oc.classify(err + text), f"iperf: {err}"
    return "ok", ""


#: Run before a test's command: util-linux's setpriv(1) asks the kernel (prctl(2)
#: PR_SET_PDEATHSIG) for SIGKILL when the monitor dies, even by SIGKILL, then execs the
#: test (same process, so the monitor stays its parent); a killed monitor leaves no test
#: running behind it. Linux only: elsewhere (no setpriv) tests run without it.
DEATH_SIGNAL = ("setpriv", "--pdeathsig", "KILL")
#: After the death signal is asked: end at once (SIGKILL) if the parent is no longer the
#: monitor (``$1``), which died between the fork and the prctl, else exec the test. A
#: shell, not a ``preexec_fn``: Python code between fork and exec can deadlock in a
#: process with threads (it did, in a test's pytest worker).
SAME_PARENT = '[ "$PPID" = "$1" ] || kill -KILL $$; shift; exec "$@"'


def with_death_signal(argv, parent=None):
    """``argv`` run under :data:`DEATH_SIGNAL` where setpriv is installed, else as is;
    with ``parent`` (the monitor's pid) also ended at once if that process is no longer
    its parent by then (:data:`SAME_PARENT`)."""
    if not shutil.which(DEATH_SIGNAL[0]):
        return list(argv)
    if parent is None:
        return [*DEATH_SIGNAL, *argv]
    return [*DEATH_SIGNAL, "sh", "-c", SAME_PARENT, "sh", str(parent), *argv]


def run_test(spec, timeout_s, netns=None):
    """Run one test; return its :class:`TestResult` (never raises for a failing tool)."""
    argv = test_argv(spec)
    if netns:
        argv = ["ip", "netns", "exec", netns, *argv]
    if shutil.which(argv[0]) is None:     # (setpriv would say so only in its stderr)
        return TestResult("error", f"cannot run {argv[0]}: not found", b"")
    argv = with_death_signal(argv, parent=os.getpid())
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        return TestResult("error", f"cannot run {argv[0]}: {exc}", b"")
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)  # iperf3 -J then prints what it has
        try:
            out, err = proc.communicate(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
    finally:
        if proc.poll() is None:  # interrupted (SIGTERM to the monitor): take the child along
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    outcome, reason = _judge(spec, proc.returncode, out, err, timed_out, timeout_s)
    return TestResult(outcome, reason[:MAX_REASON], out)


def remove_partial(campaign_dir):
    """Delete the ``.part`` files an interrupted monitor left; return their paths."""
    removed = []
    for root, _dirs, files in [w for d in (RUNS_DIR, ROUTES_DIR) for w in os.walk(os.path.join(campaign_dir, d))]:
        for name in files:
            if name.endswith(PART):
                os.remove(os.path.join(root, name))
                removed.append(os.path.join(root, name))
    return sorted(removed)


def record_test(campaign_dir, spec, slot, timeout_s, netns=None, clock=time.time):
    """Run ``spec`` as part of slot ``slot``; write its file and runs.csv row; return the row.

    Raises
    ------
    thruput.monitor.lock.CampaignNotWritable
        When the file or the row cannot be written (the disk is full, the folder
        read-only); neither is left half-written.
    """
    started = clock()
    run = spec.run_id(slot)
    route = spec.role == "route"        # a traceroute: routes/ and routes.csv, not a run
    rel = f"{ROUTES_DIR if route else RUNS_DIR}/{utc_iso(started)[:10]}/{run}{EXTENSIONS[spec.tool]}"
    final = os.path.join(campaign_dir, rel)
    part = final + PART
    manifest = os.path.join(campaign_dir, ROUTES_MANIFEST if route else MANIFEST)
    size = os.path.getsize(manifest) if os.path.exists(manifest) else None
    renamed = False
    try:
        result = run_test(spec, timeout_s, netns)
        sha = ""
        writing = part
        try:
            if result.stdout:
                os.makedirs(os.path.dirname(final), exist_ok=True)
                with open(part, "wb") as f:
                    f.write(result.stdout)
                    f.flush()
                    os.fsync(f.fileno())
                sha = sha256_bytes(result.stdout)
            with held_signals():
                if sha:
                    os.replace(part, final)
                    renamed = True
                writing = manifest
                if route:
                    return append_route_row(
                        campaign_dir, run=run, path=rel if sha else "", sha256=sha, slot=slot,
                        started=utc_iso(started), path_name=spec.path.name, tool=spec.tool,
                        outcome=result.outcome, reason=result.reason)
                return append_row(
                    campaign_dir, run=run, role=spec.role, path=rel if sha else "", sha256=sha,
                    slot=slot, started=utc_iso(started), path_name=spec.path.name,
                    direction=spec.direction, test=spec.test, tool=spec.tool,
                    socket_buffer=spec.socket_buffer, size=spec.size, rate=spec.rate,
                    outcome=result.outcome, reason=result.reason)
        except OSError as exc:
            _undo(manifest, size, final if renamed else None)
            raise not_writable(writing, exc, f"the result of test {run}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(part)


def _undo(manifest, size, final):
    """Remove what a failed write left: runs.csv back to ``size`` bytes (removed if it
    was new) and the test's file ``final`` if it was renamed into place."""
    with contextlib.suppress(OSError):
        if size is None:
            os.remove(manifest)
        else:
            os.truncate(manifest, size)
    if final:
        with contextlib.suppress(OSError):
            os.remove(final)
