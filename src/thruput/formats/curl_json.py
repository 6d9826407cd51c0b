"""curl ``-w '%{json}'`` output: one JSON object per transfer, one transfer per line.

curl (7.70 and later) writes with ``--write-out '%{json}'`` every variable it knows about
one transfer as one JSON object on one line; several URLs, or several invocations
appended to one file, give one line each (``-w '%{json}\\n'``). The fields used here, as
curl's manual defines them:

``size_download``, ``size_upload``
    Bytes of the body downloaded or uploaded (headers not counted: ``size_header``).
``time_total``, ``time_namelookup``, ``time_connect``, ``time_appconnect``,
``time_pretransfer``, ``time_starttransfer``, ``time_redirect``
    Seconds since the transfer started until the whole operation ended, the name was
    resolved, TCP connected, TLS connected, the transfer was about to begin, the first
    byte arrived, and the redirects were done.
``speed_download``, ``speed_upload``
    "The average download (upload) speed that curl measured for the complete
    download (upload)", in bytes per second: the size over ``time_total``, truncated to
    an integer.
``exitcode``, ``errormsg``, ``http_code``, ``url_effective``, ``remote_ip``, ``remote_port``,
``curl_version``
    The outcome and the transfer's identity.

How a transfer maps onto the ``throughput`` kind (one run per line, one stream)
-----------------------------------------------------------------------------
``throughput``
    As curl defines its speed: the body bytes times 8 over ``time_total``. A download
    counts as ``throughput_receiver`` (curl receives), an upload (more bytes up than down)
    as ``throughput_sender``; ``stream_direction`` is ``"receive"`` or ``"send"``.
    ``bytes`` and ``duration`` are the size and ``time_total``. A transfer that failed
    (``exitcode`` not 0) keeps its row with NaN throughput and its ``curl_exitcode`` and
    ``curl_errormsg``.
Intervals
    One per run, from 0 to ``time_total``, holding the whole body.
``start_time``
    NaT: curl's JSON does not say when the transfer started.

``tool_summary`` holds, per run, curl's own speed, size and exit code. ``consistency``
checks every successful run's ``speed_download`` (or ``speed_upload``) against the size
over ``time_total`` (within 0.1 %: the times are printed to the microsecond, the speed
is computed from the unrounded times and truncated): a size or a speed altered after the
fact is flagged.

A last line cut off is skipped (``truncation`` says so); a line that is not JSON, or a
file without one complete transfer, raises :class:`~thruput.errors.ParseError` naming
the line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

import json
import re

import numpy as np

from ..contract import Ledger, build, consistency_check, split_lines
from ..errors import ParseError
from ._json import is_cut_off, loads

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse"]

NAME = "curl_json"
KIND = "throughput"
TOOL = "curl"
BINARY = False

#: A ``%{json}`` object starts on its line with '{"' and names curl's own variables.
_SNIFF = re.compile(r'\A\s*\{\s*"[a-z_]+"\s*:')
_SNIFF_KEYS = ('"size_download"', '"time_total"', '"speed_download"', '"url_effective"')

#: curl's times (seconds) kept as extras: field -> long_name.
TIMES = {
    "time_namelookup": "seconds until the name was resolved",
    "time_connect": "seconds until the TCP connection was made",
    "time_appconnect": "seconds until the TLS handshake was done (0 without TLS)",
    "time_pretransfer": "seconds until the transfer was about to begin",
    "time_starttransfer": "seconds until the first byte arrived",
    "time_redirect": "seconds spent in redirects before the final transfer",
}
#: curl's speed is the size over time_total truncated to an integer, the times printed to
#: the microsecond: they agree within this relative tolerance.
SPEED_RTOL = 1e-3

_NAN = np.nan


def sniff(head: str) -> bool:
    """True if ``head`` (the first 4 KB) is curl ``-w '%{json}'`` output."""
    return bool(_SNIFF.match(head)) and all(k in head for k in _SNIFF_KEYS)


def parse(text: str) -> xr.Dataset:
    """Parse curl ``-w '%{json}'`` output (one object per line) into a throughput Dataset.

    Raises
    ------
    ParseError
        Empty input, a line that is not one JSON object of curl's, or no complete transfer.
    """
    lines = split_lines(text)
    if not text.strip():
        raise ParseError("empty input", line=1 if lines else None)
    ledger = Ledger(len(lines), lines=lines)
    records, where = [], []
    last = max((i for i, s in enumerate(lines) if s.strip()), default=-1)
    for i, line in enumerate(lines):
        n = i + 1
        if not line.strip():
            ledger.skip(n, "blank")
            continue
        try:
            doc = loads(line)
        except json.JSONDecodeError as exc:
            if i == last and is_cut_off(line, exc):
                ledger.cut_off(n, "transfer")
                continue
            raise ParseError(f"not valid JSON: {exc.msg}", line=n) from None
        if not isinstance(doc, dict) or "size_download" not in doc or "time_total" not in doc:
            raise ParseError("not a curl -w '%{json}' object (no size_download or time_total)", line=n)
        records.append(doc)
        where.append(n)
        ledger.parsed(n)
    if not records:
        raise ParseError("no complete curl transfer" + (f" ({ledger.truncation})" if ledger.truncation else ""),
                         line=len(lines))
    try:
        return _process(records, np.array(where, dtype=np.int64), ledger)
    except ParseError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, OverflowError) as exc:
        raise ParseError(f"unexpected curl JSON ({type(exc).__name__}: {exc})", line=int(where[0])) from None


def _num(doc, key):
    value = doc.get(key)
    return _NAN if value is None or isinstance(value, (str, bool, dict, list)) else float(value)


def _process(records, where, ledger):
    n = len(records)
    down = np.array([_num(d, "size_download") for d in records])
    up = np.array([_num(d, "size_upload") for d in records])
    total = np.array([_num(d, "time_total") for d in records])
    exitcode = np.array([int(d.get("exitcode") or 0) for d in records])
    upload = up > down
    size = np.where(upload, up, down)
    tool_speed = np.array([_num(d, "speed_upload" if u else "speed_download") for d, u in zip(records, upload)])
    ok = exitcode == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        throughput = np.where(ok & (total > 0), size * 8.0 / total, _NAN)
    zeros = np.zeros(n)
    variables = {
        "throughput": (("run",), throughput),
        "throughput_sender": (("run",), np.where(upload, throughput, _NAN)),
        "throughput_receiver": (("run",), np.where(upload, _NAN, throughput)),
        "bytes": (("run",), size),
        "duration": (("run",), total),
        "streams": (("run",), np.ones(n, dtype=np.int64)),
        "protocol": (("run",), ["TCP"] * n),
        "window_requested": (("run",), np.full(n, _NAN)),
        "window_actual": (("run",), np.full(n, _NAN)),
        "loss_fraction": (("run",), np.full(n, _NAN)),
        "retransmits": (("run",), np.full(n, _NAN)),
        "run_line": (("run",), where),
        "stream_throughput": (("run", "stream"), throughput[:, None]),
        "stream_bytes": (("run", "stream"), size[:, None]),
        "stream_direction": (("run", "stream"), np.where(upload, "send", "receive")[:, None]),
        "interval_start": (("run", "interval"), zeros[:, None]),
        "interval_end": (("run", "interval"), total[:, None]),
        "interval_bytes": (("run", "stream", "interval"), size[:, None, None]),
        "interval_throughput": (("run", "stream", "interval"), throughput[:, None, None]),
        "line": (("run", "stream", "interval"), where[:, None, None]),
    }
    extras = {f"curl_{k}": (("run",), np.array([_num(d, k) for d in records]), "s", f"curl {k}: {v}")
              for k, v in TIMES.items()}
    extras.update({
        "curl_speed": (("run",), tool_speed * 8.0, "bit/s",
                       "curl's own speed_download (speed_upload for an upload), times 8"),
        "curl_size_header": (("run",), np.array([_num(d, "size_header") for d in records]), "byte",
                             "bytes of response headers received"),
        "curl_http_code": (("run",), np.array([int(d.get("http_code") or 0) for d in records]), "1",
                           "HTTP response code (0 when there was none)"),
        "curl_exitcode": (("run",), exitcode, "1", "curl's exit code for the transfer (0 = success)"),
        "curl_errormsg": (("run",), [str(d.get("errormsg") or "") for d in records], "1",
                          "curl's error message (empty on success)"),
        "curl_url": (("run",), [str(d.get("url_effective") or d.get("url") or "") for d in records], "1",
                     "URL fetched (after redirects)"),
        "curl_remote": (("run",), [_endpoint(d.get("remote_ip"), d.get("remote_port")) for d in records], "1",
                        "remote address and port"),
    })
    checks = []
    for i in np.flatnonzero(ok):
        what = "speed_upload" if upload[i] else "speed_download"
        checks.append(consistency_check(
            f"run {i} (line {where[i]}): {what} vs size_{what[6:]} / time_total", tool_speed[i],
            size[i] / total[i] if total[i] > 0 else _NAN, rtol=SPEED_RTOL,
            note="times printed to the microsecond; the speed is truncated to an integer"))
    summary = {"runs": [{"speed": _plain(s), "size": _plain(b), "exitcode": int(e),
                         "http_code": int(d.get("http_code") or 0)}
                        for s, b, e, d in zip(tool_speed, size, exitcode, records)]}
    version = str(records[0].get("curl_version") or "")
    return build(KIND, variables, fmt=NAME, tool=TOOL, tool_version=version.split(" ")[0], ledger=ledger,
                 extras=extras, tool_summary=summary, consistency=checks)


def _plain(value):
    return None if np.isnan(value) else float(value)


def _endpoint(ip, port):
    if not ip:
        return ""
    host = f"[{ip}]" if ":" in str(ip) else str(ip)
    return f"{host}:{port}" if port else host
