"""The server's own view of an iperf3 run, as ``--get-server-output`` brings it back
(iperf3 3.1+): shared by :mod:`thruput.formats.iperf3_json` (``-J``) and
:mod:`thruput.formats.iperf3_stream` (``--json-stream``), with :data:`STREAM_EVENT`, the
first line of ``--json-stream`` output, which tells the two readers' sniffers apart.

With ``--get-server-output`` the client's JSON holds, after ``end``, the server's report:
``server_output_json`` (the server's whole ``-J`` document, when the server runs with
``-J``) or ``server_output_text`` (its text output, when it does not; read here with
:mod:`thruput.formats.iperf3_text`). From it the run gets the extras

``iperf3_server_output`` (run)
    ``"json"``, ``"text"`` or ``""`` (none brought back).
``iperf3_server_bytes_received``, ``iperf3_server_throughput_received`` (run)
    What the server says it received (its ``end.sum_received``, or its ``receiver``
    summary line); NaN where the server sent (``-R``).
``iperf3_server_bytes_sent`` (run)
    What the server says it sent (``-R``), NaN where it received.

and one consistency check each: the client's ``end.sum_received`` (``end.sum_sent``
under ``-R``) against the server's own number. The client's summary of the far end is
what the server sent it at the end of the test, so with ``server_output_json`` they agree
exactly; the text is printed with 3 significant digits (relative tolerance 0.5 %).
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..contract import consistency_check, refuse_infinite
from ._json import DECODER as _DECODER

__all__ = ["server_view", "views_of", "has_server_output", "attach", "add", "EXTRAS", "STREAM_EVENT"]

#: extras this module adds: name -> (units, long_name)
EXTRAS = {
    "iperf3_server_output": ("1", "server output brought back by --get-server-output: json, text or empty"),
    "iperf3_server_bytes_received": ("byte", "bytes the server reports it received (--get-server-output)"),
    "iperf3_server_throughput_received": ("bit/s", "throughput the server reports it received (--get-server-output)"),
    "iperf3_server_bytes_sent": ("byte", "bytes the server reports it sent (--get-server-output, -R)"),
}
#: relative tolerance of a number printed with 3 significant digits (iperf3's text output)
TEXT_RTOL = 0.005
#: the first line of iperf3 --json-stream output (one JSON event per line), which the -J
#: reader's sniffer must leave to :mod:`thruput.formats.iperf3_stream`
STREAM_EVENT = re.compile(r'\A\s*\{\s*"event"\s*:\s*"(?:start|interval|end|error)"\s*,\s*"data"\s*:')
#: the JSON members that hold the server's output
MEMBERS = ("server_output_json", "server_output_text")

_NAN = float("nan")


def server_view(doc):
    """``(kind, received bytes, received bit/s, sent bytes)`` of the server output in the
    client document ``doc`` (a dict); ``("", nan, nan, nan)`` when there is none."""
    if isinstance(doc.get("server_output_json"), dict):
        server = doc["server_output_json"]
        end = server.get("end") or {}
        # which way the server's data went: its streams' "sender" flag, else -R
        intervals = server.get("intervals") if isinstance(server.get("intervals"), list) else None
        first = intervals[0] if intervals and isinstance(intervals[0], dict) else {}    # (damaged: none)
        streams = first.get("streams") if isinstance(first.get("streams"), list) else ()
        flags = [st.get("sender") for st in streams if isinstance(st, dict) and "sender" in st]
        sends = any(flags) if flags else bool(((server.get("start") or {}).get("test_start") or {}).get("reverse"))
        # the server's summary of the other side holds 0 bytes when it was never exchanged
        if sends:
            sent = end.get("sum_sent") or end.get("sum") or {}
            return ("json", _NAN, _NAN, _num(sent.get("bytes")))
        received = end.get("sum_received") or end.get("sum") or {}
        return ("json", _num(received.get("bytes")), _num(received.get("bits_per_second")), _NAN)
    if isinstance(doc.get("server_output_text"), str):
        from . import iperf3_text
        from ..errors import ParseError
        try:
            ds = iperf3_text.parse(doc["server_output_text"])
        except ParseError:
            return ("text", _NAN, _NAN, _NAN)
        sends = bool((ds.stream_direction.values[0] == "send").any())
        received = float(ds.iperf3_bytes_receiver[0]) if not sends else _NAN
        rate = float(ds.throughput_receiver[0]) if not sends else _NAN
        sent = float(ds.iperf3_bytes_sender[0]) if sends else _NAN
        return ("text", received, rate, sent)
    return ("", _NAN, _NAN, _NAN)


def _num(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else _NAN


def extras_and_checks(views, client_received, client_sent):
    """Extras (run) and consistency checks from one :func:`server_view` per run."""
    kind = np.array([v[0] for v in views], dtype=str)
    values = np.array([v[1:] for v in views], dtype=float).reshape(len(views), 3)
    extras = {}
    for (name, (units, long_name)), column in zip(EXTRAS.items(), (kind, values[:, 0], values[:, 1], values[:, 2])):
        extras[name] = (("run",), column, units, long_name)
    checks = []
    for r, (k, received, _, sent) in enumerate(views):
        if not k:
            continue
        rtol, note = (0.0, "") if k == "json" else (TEXT_RTOL, "server text printed with 3 significant digits")
        if not np.isnan(received):
            checks.append(consistency_check(
                f"run {r}: bytes received: client's end.sum_received vs server_output_{k}",
                received, client_received[r], rtol=rtol, note=note))
        elif not np.isnan(sent):
            checks.append(consistency_check(
                f"run {r}: bytes sent: client's end.sum_sent vs server_output_{k}",
                sent, client_sent[r], rtol=rtol, note=note))
    return extras, checks


def attach(ds, text):
    """Add the server's view to a Dataset read by :mod:`~thruput.formats.iperf3_json`.

    ``text`` is the file's text. Only texts holding ``"server_output_`` are decoded again;
    runs are matched to the documents holding a ``"start"`` in order. Returns ``ds``
    (extras added, ``consistency``/``consistent`` updated), unchanged if no document
    has server output.
    """
    if not has_server_output(text):
        return ds
    return add(ds, views_of(text, ds.sizes["run"]))


def has_server_output(text):
    """True if ``text`` may hold a server's output (a quick test before decoding)."""
    return '"server_output_' in text


def views_of(text, n_runs):
    """:func:`server_view` of each of the ``n_runs`` runs read from ``text``, matched to
    its documents holding a ``"start"`` in order (none for runs past them)."""
    docs = []
    pos = 0
    n = len(text)
    while pos < n:
        while pos < n and text[pos].isspace():
            pos += 1
        if pos >= n:
            break
        try:
            doc, pos = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            break  # a cut-off last document: its server output (written last) is lost
        if isinstance(doc, dict) and "start" in doc:
            docs.append(doc)
    views = [server_view(d) for d in docs]
    return (views + [("", _NAN, _NAN, _NAN)] * n_runs)[:n_runs]


def add(ds, views):
    """Put the extras and checks of ``views`` (one per run) into ``ds``."""
    received = ds["iperf3_bytes_receiver"].values if "iperf3_bytes_receiver" in ds else np.full(ds.sizes["run"], _NAN)
    sent = ds["iperf3_bytes_sender"].values if "iperf3_bytes_sender" in ds else np.full(ds.sizes["run"], _NAN)
    extras, checks = extras_and_checks(views, received, sent)
    ds = ds.assign({name: (dims, values, {"units": units, "long_name": long_name})
                    for name, (dims, values, units, long_name) in extras.items()})
    refuse_infinite(ds)         # (added after the contract's own check: a damaged count)
    if checks:
        merged = json.loads(ds.attrs.get("consistency", "[]")) + checks
        ds.attrs["consistency"] = json.dumps(merged, sort_keys=True)
        ds.attrs["consistent"] = int(all(c["ok"] for c in merged))
    return ds
