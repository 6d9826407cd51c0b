"""fio ``--output-format=json``: the disk alone, one job per object of ``jobs``.

fio (Flexible I/O tester) writes one JSON document per invocation: ``"fio version"``,
``timestamp`` (Unix seconds when the report was written), ``global options`` and
``jobs``, each with its ``jobname``, ``job options`` (``rw``, ``bs``, ``direct``,
``ioengine``, ``filename``, ``size``) and one object per I/O direction (``read``,
``write``, ``trim``) holding, as fio's HOWTO defines them:

``io_bytes`` (``io_kbytes``)
    Bytes (KiB) of I/O done in that direction.
``runtime``
    Milliseconds the job spent on that direction.
``bw_bytes``, ``bw``
    Bandwidth in bytes per second and KiB per second: ``io_bytes * 1000 / runtime``
    in integer arithmetic.
``iops``, ``clat_ns`` / ``lat_ns`` (``mean``, ``min``, ``max``, ``N``)
    Operations per second and completion / total latency in nanoseconds.

How a job maps onto the ``throughput`` kind
-------------------------------------------
One run per job and direction that moved data (``io_bytes > 0``), in the document's
order, read before write before trim. ``throughput`` is ``io_bytes`` times 8 over
``runtime``; a read counts as ``throughput_receiver`` (into memory,
``stream_direction`` ``"receive"``), a write as ``throughput_sender`` (``"send"``);
``protocol`` is ``"disk"``; ``fio_job`` and ``fio_direction`` name the run. One stream,
one interval (0 to ``runtime``). ``start_time`` is NaT (fio says when it wrote the
report, ``attrs["fio_timestamp"]``, not when a job started); a job whose ``error`` is not
0 keeps its rows with NaN throughput.

``tool_summary`` holds fio's ``bw_bytes`` and ``io_bytes`` per run; ``consistency``
checks ``bw_bytes`` against ``io_bytes * 1000 / runtime`` (to 1 byte/s: fio divides
integers) and ``bw`` against ``bw_bytes / 1024``: a total altered after the fact is
flagged.

Lines before the document (fio's warnings when stderr went to the same file) are skipped
with a reason; a document cut off keeps its complete jobs (``truncation`` says where it
ends); no complete job with data raises :class:`~thruput.errors.ParseError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import re

import numpy as np

from ..contract import build, consistency_check
from ..errors import ParseError
from ._json import read_document, salvage

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "fio_json"
KIND = "throughput"
TOOL = "fio"
BINARY = False

_SNIFF = re.compile(r'^\{\s*"fio version"\s*:', re.M)
#: The I/O directions of a job, in the order their runs are listed.
DIRECTIONS = ("read", "write", "trim")
STREAM_DIRECTION = {"read": "receive", "write": "send", "trim": "send"}
#: fio's latencies (ns) kept as extras, as milliseconds: field -> long_name.
LATENCIES = {"clat_ns": "mean completion latency", "lat_ns": "mean total latency (submission + completion)"}
#: Where the document starts: a line holding only '{'.
_START = re.compile(r"^\{[ \t]*$", re.M)

_NAN = np.nan


def sniff(head: str) -> bool:
    """True if ``head`` (the first 4 KB) is fio's JSON report."""
    return bool(_SNIFF.search(head)) or ('"fio version"' in head and '"jobs"' in head
                                         and head.lstrip().startswith("{"))


def parse(text: str) -> xr.Dataset:
    """Parse fio's JSON report into a throughput Dataset (one run per job and direction).

    Raises
    ------
    ParseError
        Empty input, text that is not JSON (naming the line), JSON that is not fio's, or no
        complete job that moved data.
    """
    start = _START.search(text)
    before = text[: start.start()].count("\n") if start and start.start() else 0
    if before:   # keep the line numbers: blank out fio's messages before the document
        text = re.sub(r"[^\n]", " ", text[: start.start()]) + text[start.start():]  # type: ignore[union-attr]
    doc, end, lost, ledger = read_document(text, _salvage)
    if before:
        ledger.skip(np.arange(1, before + 1), "fio message before the JSON report")
    if not isinstance(doc, dict) or "jobs" not in doc:
        raise ParseError("not a fio JSON report (no jobs)", line=before + 1)
    try:
        return _process(doc, text, ledger, lost)
    except ParseError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, OverflowError) as exc:
        raise ParseError(f"unexpected fio JSON ({type(exc).__name__}: {exc})", line=before + 1) from None


def _salvage(text):
    found = salvage(text, _START.search(text).start() if _START.search(text) else 0, descend={("jobs",)})
    if found is None:
        raise ParseError("not a fio JSON report (no top-level object)", line=1)
    return found.doc, found.end, (f"the file is cut off at line {text.count(chr(10), 0, len(text.rstrip())) + 1}; "
                                  "kept every complete job")


def _line_of_jobs(text, count):
    """Source line of each job's ``"jobname"`` (1 where not found)."""
    lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r'"jobname"\s*:', text)]
    return (lines + [1] * count)[:count]


def _process(doc, text, ledger, lost):
    jobs = [j for j in doc.get("jobs") or [] if isinstance(j, dict) and "jobname" in j]
    job_lines = _line_of_jobs(text, len(jobs))
    rows = []
    for job, line in zip(jobs, job_lines):
        for direction in DIRECTIONS:
            io = job.get(direction)
            if isinstance(io, dict) and float(io.get("io_bytes") or 0) > 0:
                rows.append((job, direction, io, line))
    if not rows:
        raise ParseError("fio report without a complete job that moved data" + (f" ({lost})" if lost else ""),
                         line=len(text.splitlines()) or 1)
    n = len(rows)
    size = np.array([float(io["io_bytes"]) for _, _, io, _ in rows])
    runtime = np.array([float(io.get("runtime") or 0) / 1e3 for _, _, io, _ in rows])
    failed = np.array([int(job.get("error") or 0) != 0 for job, _, _, _ in rows])
    with np.errstate(invalid="ignore", divide="ignore"):
        throughput = np.where(~failed & (runtime > 0), size * 8.0 / runtime, _NAN)
    read = np.array([d == "read" for _, d, _, _ in rows])
    where = np.array([line for *_, line in rows], dtype=np.int64)
    options = [job.get("job options") or {} for job, *_ in rows]
    glob = doc.get("global options") or {}

    def option(key):
        return [str(o.get(key, glob.get(key, ""))) for o in options]

    variables = {
        "throughput": (("run",), throughput),
        "throughput_sender": (("run",), np.where(read, _NAN, throughput)),
        "throughput_receiver": (("run",), np.where(read, throughput, _NAN)),
        "bytes": (("run",), size),
        "duration": (("run",), runtime),
        "streams": (("run",), np.ones(n, dtype=np.int64)),
        "protocol": (("run",), ["disk"] * n),
        "window_requested": (("run",), np.full(n, _NAN)),
        "window_actual": (("run",), np.full(n, _NAN)),
        "loss_fraction": (("run",), np.full(n, _NAN)),
        "run_line": (("run",), where),
        "stream_throughput": (("run", "stream"), throughput[:, None]),
        "stream_bytes": (("run", "stream"), size[:, None]),
        "stream_direction": (("run", "stream"), np.array([[STREAM_DIRECTION[d]] for _, d, _, _ in rows])),
        "interval_start": (("run", "interval"), np.zeros((n, 1))),
        "interval_end": (("run", "interval"), runtime[:, None]),
        "interval_bytes": (("run", "stream", "interval"), size[:, None, None]),
        "interval_throughput": (("run", "stream", "interval"), throughput[:, None, None]),
        "line": (("run", "stream", "interval"), where[:, None, None]),
    }
    extras = {
        "fio_job": (("run",), [str(job.get("jobname")) for job, *_ in rows], "1", "fio job name"),
        "fio_direction": (("run",), [d for _, d, _, _ in rows], "1", "I/O direction (read, write or trim)"),
        "fio_rw": (("run",), option("rw"), "1", "the job's rw option (read, write, randread, ...)"),
        "fio_bs": (("run",), option("bs"), "1", "the job's block size option"),
        "fio_direct": (("run",), option("direct"), "1", "the job's direct option (1 = O_DIRECT)"),
        "fio_ioengine": (("run",), option("ioengine"), "1", "the job's I/O engine"),
        "fio_iops": (("run",), np.array([float(io.get("iops") or 0) for _, _, io, _ in rows]), "Hz",
                     "I/O operations per second"),
        "fio_error": (("run",), np.array([int(job.get("error") or 0) for job, *_ in rows]), "1",
                      "the job's error number (0 = none)"),
    }
    for key, long_name in LATENCIES.items():
        extras[f"fio_{key[:-3]}_mean"] = (
            ("run",), np.array([float((io.get(key) or {}).get("mean", _NAN)) / 1e6 for _, _, io, _ in rows]),
            "ms", long_name)
    checks = []
    for i, (job, direction, io, line) in enumerate(rows):
        ms = float(io.get("runtime") or 0)
        name = f"job {job.get('jobname')} {direction} (line {line})"
        checks.append(consistency_check(f"{name}: bw_bytes vs io_bytes * 1000 / runtime", io.get("bw_bytes"),
                                        size[i] * 1000.0 / ms if ms > 0 else _NAN, rtol=0.0, atol=1.0,
                                        note="fio divides integers"))
        if "bw" in io:
            checks.append(consistency_check(f"{name}: bw (KiB/s) vs bw_bytes / 1024", io.get("bw"),
                                            float(io.get("bw_bytes") or 0) / 1024.0, rtol=0.0, atol=1.0))
    summary = {"runs": [{"job": str(job.get("jobname")), "direction": d, "bw_bytes": io.get("bw_bytes"),
                         "io_bytes": io.get("io_bytes"), "runtime_ms": io.get("runtime")}
                        for job, d, io, _ in rows]}
    if lost:
        ledger.truncated(lost)
    version = str(doc.get("fio version") or "")
    return build(KIND, variables, fmt=NAME, tool=TOOL, tool_version=version.removeprefix("fio-"),
                 ledger=ledger, extras=extras, tool_summary=summary, consistency=checks,
                 attrs={"fio_timestamp": int(doc.get("timestamp") or 0), "fio_time": str(doc.get("time") or "")})
