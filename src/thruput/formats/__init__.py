"""Format readers: one module per log format, tried in the order of ``REGISTRY``.

Every module here exposes the same small interface:

``NAME`` (its registry name), ``KIND`` (one of :data:`thruput.contract.KINDS`),
``TOOL``, ``BINARY`` (``True`` if :func:`parse` takes bytes),
``sniff(head: str) -> bool`` (cheap, looks at content only, never raises) and
``parse(text) -> xarray.Dataset`` (raises :class:`thruput.errors.ParseError`).

Adding a format is one module, one line in ``REGISTRY`` and its sample files under
``tests/data/<format>/``.

Text written through a timestamping wrapper (``[2024-05-27 15:17:01.317910] PING ...``,
moreutils ``ts``) is recognised by :func:`sniff_wrapped` for every text format: the
sniffers see the head with the prefix stripped (:mod:`._prefix`).
"""

from __future__ import annotations

import importlib

from ..errors import AmbiguousFormatError, UnknownFormatError

#: Registered formats, most specific first: the order sniffers run and candidates are listed.
REGISTRY = (
    "iperf3_stream",    # iperf3 --json-stream (one JSON event per line)
    "iperf3_json",      # iperf3 -J
    "flent",            # flent data files (JSON, usually gzip)
    "ndt7",             # M-Lab ndt7 results (JSON)
    "pscheduler_archive_throughput",  # perfSONAR 5 archive (OpenSearch) throughput documents (JSON, NDJSON)
    "pscheduler_archive_latency",     # perfSONAR 5 archive (OpenSearch) latency and rtt documents
    "curl_json",        # curl -w '%{json}' (one JSON object per transfer and line)
    "fio_json",         # fio --output-format=json
    "pscheduler_throughput",  # perfSONAR pScheduler throughput results (JSON)
    "pscheduler_latency",     # perfSONAR pScheduler latency (owamp/twamp) and rtt results (JSON)
    "esmond_throughput",  # perfSONAR esmond archive throughput time series (JSON)
    "esmond_latency",     # perfSONAR esmond histogram-owdelay / packet loss time series (JSON)
    "mtr_json",         # mtr --json reports (routes)
    "scamper_json",     # scamper -O json / sc_warts2json traceroutes (routes)
    "irtt",             # irtt client -o JSON (usually gzip)
    "iperf2_csv",       # iperf 2 -y C
    "owamp",            # owamp owping/twping statistics text
    "traceroute",       # traceroute of Linux and the BSDs (routes)
    "web100_snaplog",   # web100 binary snaplog
    "web100_sidestream",  # web100 sidestream text (K:/C: lines)
    "web100_dump",      # web100 "Name: value" dumps
    "tcp_info",         # ss -ti snapshots
    "udpmon_req",       # UDPmon udpmon_req latency scan
    "udpmon_bw",        # UDPmon udpmon_bw_mon
    "nuttcp",           # nuttcp brief, -v and -fparse output
    "iperf3_text",      # iperf3 human-readable output
    "iperf2",           # iperf 1.x/2.x human-readable output
    "ping",             # ping of Linux iputils, BusyBox, BSD/macOS, Solaris, Windows
)

#: How many bytes of a file the sniffers see.
HEAD_BYTES = 4096


def get(name):
    """Return the reader module registered as ``name``."""
    if name not in REGISTRY:
        raise UnknownFormatError(f"unknown format {name!r}; known formats: {', '.join(REGISTRY)}")
    return importlib.import_module(f"{__name__}.{name}")


def sniff(head: str, path: str = "<text>") -> str:
    """Return the one format whose sniffer claims ``head`` (str).

    Raises
    ------
    UnknownFormatError
        When no format claims it (the message lists the known formats).
    AmbiguousFormatError
        When several do (the message lists them; pass ``format=`` to choose).
    """
    candidates = [name for name in REGISTRY if _claims(get(name), head)]
    if not candidates:
        raise UnknownFormatError(
            f"{path}: not a known log format; known formats: {', '.join(REGISTRY)}")
    if len(candidates) > 1:
        raise AmbiguousFormatError(
            f"{path}: claimed by several formats: {', '.join(candidates)}; pass format= to choose")
    return candidates[0]


def sniff_wrapped(head, path="<text>", format=None):
    """The format of ``head`` and the line-prefix style it is wrapped in (or None).

    Where a wrapper's prefix is found (:func:`._prefix.detect`: on the first line and on
    most others), the sniffers see the head with it stripped; where it is not, or no
    format claims the stripped head, they see the head as it is.

    Raises
    ------
    UnknownFormatError, AmbiguousFormatError
        As :func:`sniff`; the message names the prefix style when one was found.
    """
    from . import _prefix

    style = _prefix.detect(head)
    stripped = _prefix.strip(head, style).text if style else None
    if format is not None:
        module = get(format)
        if style and not module.BINARY and _claims(module, stripped):
            return format, style
        return format, None
    if style:
        try:
            return sniff(stripped, path), style
        except UnknownFormatError:
            pass
    try:
        return sniff(head, path), None
    except UnknownFormatError:
        if style is None:
            raise
    where = ("between a wrapper's Start time/End time lines" if style == "wrapper-lines" else
             f"lines prefixed by a {style!r} wrapper")
    raise UnknownFormatError(
        f"{path}: not a known log format ({where}); known formats: {', '.join(REGISTRY)}")


def _claims(module, head):
    try:
        return bool(module.sniff(head))
    except Exception:  # a sniffer must never raise; a broken one claims nothing
        return False
