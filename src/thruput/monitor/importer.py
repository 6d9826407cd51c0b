"""``thruput campaign import --kind monitor``: a monitor campaign from an archive of cron logs.

Users who watched a path with cron jobs have directories of timestamped logs. Each log
becomes one test (a row of runs.csv, docs/design.md "Monitor campaigns"):

time
    From the content: ``start_time`` of a throughput run (iperf3 ``start.timestamp``, or
    a line-timestamp prefix where the reader sets it), else the first probe's
    ``timestamp`` of a ping log (``ping -D``); else from ``--time-pattern`` searched in
    the file's path inside the archive: a ``strftime`` pattern (``time-%d-%m-%Y_%H-%M``)
    or a regular expression with named groups ``year``, ``month``, ``day``, ``hour``,
    ``minute``, ``second`` or ``epoch`` (Unix time, s).
path
    ``--path-pattern`` (a regular expression with a ``path`` group, optionally
    ``direction`` and ``test``) searched in the file's path relative to the folder given
    (``att/20240528/111437116/ping_111924269.out``, not the absolute path), else the
    content: iperf3 JSON ``start.connecting_to.host``, the address a text log connected
    to (:data:`CONNECTED_TO`), ping's destination. Characters a path name cannot hold
    (anything but letters, digits, ``.`` and ``_``) become ``_``.
test
    ``tcp``/``udp`` from the throughput run's protocol, ``ping`` for RTT logs; socket
    buffer, ping payload and UDP rate as the log states them.
direction
    From the content: ``reverse`` when this host received (the contract's
    ``stream_direction`` ``receive``: nuttcp ``-r``, iperf3 ``-R``, "Reverse mode"),
    ``forward`` when it sent; a ``direction`` group of ``--path-pattern`` overrides it.

Archives: a ``.tgz``/``.tar.gz`` among the sources (M-Lab's daily archives of ndt7
results, ``.json.gz`` members) is read member by member: each regular member is a log at
``<archive name without .tgz>/<member path>``. Members are extracted to a private staging
folder, never by their names alone: an absolute name, a ``..`` component, a link or a
device is refused naming the archive and member, and decompression stops past
:data:`ARCHIVE_MEMBER_BYTES` a member, :data:`ARCHIVE_BYTES` an archive or
:data:`ARCHIVE_MEMBERS` members (a tar bomb). An ndt7 result's time is its ``StartTime``,
its path ``<client>_<server>`` (the addresses, without ports), its test ``tcp`` and its
direction ``reverse`` for a download (the client, this host, received).

pScheduler results wrapped with their task (the bodies perfSONAR 5's http archiver posts):
time ``run.start-time``, path ``<spec source>_<spec dest>`` (the dest alone where the spec
names no source).

perfSONAR 5 archives (OpenSearch documents, ``pscheduler_archive_*``): a dump of several
documents (NDJSON, a ``_search`` response) is one test per document, each kept as
``<dump>.d/<n>.json`` (the dump's line as it was, a response's hit); a document's time is
``pscheduler.start_time`` (not ``@timestamp``, when Logstash received it), its path
``<source>_<destination>`` (``meta``'s hostnames, else addresses), its test ``tcp``/``udp``
for a throughput document and ``ping`` for rtt and latency ones.

The schedule's interval is ``--interval`` or else the median spacing of the tests of
each series (same path, direction, test and settings); on each path, a test is
``round(spacing / interval)`` slots after the one before it. Slots between a path's first and last test in which it ran nothing are the gaps:
they are listed in campaign.yaml ``explained`` with the reason ``"no log in the
archive"`` (so ``thruput campaign check`` passes, and the gaps are on record). A log
that does not read, or was cut off, is kept as a failed test (``outcome: error``, the
reader's message as ``reason``) when its time and path are known, else the import stops
with an error naming it. A log that holds nothing but its timestamping wrapper's
``Start time:``/``End time:`` lines (the tool printed nothing) is such a failed test, at
its ``Start time``; its test and direction come from ``--path-pattern`` groups, else from
words of its path (:data:`PATH_TESTS`, :data:`PATH_DIRECTIONS`), its path (without
``--path-pattern``) from the other logs of its folder. A series never has two
tests in one slot: a second one goes to the next slot.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath
from typing import NamedTuple

import numpy as np
import pandas as pd

from .. import guard
from ..errors import ThruputError
from ..hashing import sha256_bytes
from ..formats._prefix import WRAPPER_LINES
from ..formats._pscheduler_archive import split as archive_split
from ..reader import read
from . import pile, reader as mon
from ..campaign.outcome import cut_outcome
from ..campaign.dataset import CAMPAIGN_FILE, DEFAULT_ROOT, MANIFEST_FILE
from ..stats.monitor import missing_slots

__all__ = ["import_monitor", "import_pile", "PileImport", "GAP_REASON", "FORMAT_TOOLS", "time_from_pattern"]

#: The reason written in ``explained`` for slots with no log.
GAP_REASON = "no log in the archive"
#: Reader variables of Unix time (s) that say when a log ran, after ``start_time``: the
#: iperf3 JSON reader's ``start.timestamp.timesecs``, ping -D's reply times.
UNIX_TIME_VARIABLES = ("iperf3_start_time", "pscheduler_start_time", "timestamp")
#: The destination in the header of a Unix ping (``PING host (address) 56(84) bytes...``),
#: where the reader's ``ping_target`` attr is empty; after a wrapper's line prefix too.
PING_DESTINATION = re.compile(r"^(?:\[[^\]]*\] |\S+ )?PING (?P<host>[^\s(]+)", re.M)
#: Where a text log says what it connected to: nuttcp ``connect to 35.245.244.238 with``,
#: iperf3 ``Connecting to host 35.245.244.238, port 5203``, iperf 2 ``Client connecting
#: to 10.0.0.2, TCP port 5001``.
CONNECTED_TO = re.compile(r"\b[Cc]onnect(?:ing)? to (?:host )?(?P<host>[A-Za-z0-9][A-Za-z0-9.:_-]*?)[,\s]")
#: Reader format -> the tool column of runs.csv.
FORMAT_TOOLS = {"iperf3_json": "iperf3", "iperf3_text": "iperf3", "iperf2": "iperf2",
                "iperf2_csv": "iperf2", "ping": "ping", "nuttcp": "nuttcp", "ndt7": "ndt7"}
#: Archives read member by member (M-Lab's daily archives).
ARCHIVE_SUFFIXES = (".tgz", ".tar.gz")
#: A perfSONAR archive dump (NDJSON, a ``_search`` response) of several documents is one
#: test per document: ``<dump>.d/000001.json`` ... (:func:`thruput.formats._pscheduler_archive.split`).
ARCHIVE_DOCUMENTS = ".d"
#: Formats whose documents name both ends of the path (perfSONAR's archive: ``meta``).
PATH_ENDS = ("pscheduler_archive_throughput", "pscheduler_archive_latency")
#: Bounds of an archive's decompression: one member (an ndt7 result is some 100 KB), the
#: whole archive (M-Lab's daily archives of one server are a few hundred MB) and the
#: number of members; past them the import stops (a tar or gzip bomb).
ARCHIVE_MEMBER_BYTES = 256 * 2**20
ARCHIVE_BYTES = 4 * 2**30
ARCHIVE_MEMBERS = 1_000_000
#: The largest file an import reads (the largest log thruput.read reads whole).
IMPORT_BYTES = 128 * 2**20
#: The largest log whose JSON is decoded to find the host it connected to (iperf3 -J's
#: whole-read limit, thruput.reader.WHOLE_BYTES_BY_FORMAT).
JSON_ADDRESS_BYTES = 96 * 2**20
#: An ndt7 endpoint as the reader writes it (``ip:port``, ``[v6]:port``) -> its address.
NDT7_ENDPOINT = re.compile(r"\[?(?P<ip>[^\[\]]*?)\]?(?::[0-9]+)?")
#: The contract's ``stream_direction`` (relative to the client, this host) -> direction.
STREAM_DIRECTIONS = {"send": "forward", "receive": "reverse"}
#: A failed log's test from words of its path (when neither the log nor --path-pattern
#: says): the first that matches, in this order.
PATH_TESTS = (("ping", re.compile(r"ping|rtt", re.I)), ("udp", re.compile(r"udp", re.I)),
              ("tcp", re.compile(r"tcp|nuttcp|iperf", re.I)))
#: A failed log's direction from words of its path (this host's view).
PATH_DIRECTIONS = (("reverse", re.compile(r"down(?:link|load)?|reverse|recv|receive", re.I)),
                   ("forward", re.compile(r"up(?:link|load)?|forward|send", re.I)))
#: Role and tool of each test, for a log no reader accepts.
FAILED_TEST_ROLES = {"tcp": ("iperf", "iperf3"), "udp": ("iperf", "iperf3"), "ping": ("ping", "ping")}
#: What a log with nothing but its wrapper's lines is.
WRAPPER_ONLY = ("the log holds only its wrapper's Start time/End time lines: the test printed "
                "nothing")
#: Contract kind -> role.
KIND_ROLES = {"throughput": "iperf", "rtt": "ping"}
#: Contract kinds kept beside the tests as ancillary data (listed in campaign.yaml).
ANCILLARY_KINDS = ("route",)
#: Where ancillary files are copied in the campaign (under their path in the archive).
ANCILLARY_DIR = "ancillary"
#: strftime directives -> the regular expression of what they print.
STRFTIME = {"%Y": r"\d{4}", "%m": r"\d{2}", "%d": r"\d{2}", "%H": r"\d{2}", "%M": r"\d{2}",
            "%S": r"\d{2}", "%y": r"\d{2}", "%j": r"\d{3}", "%b": r"[A-Za-z]{3}", "%%": "%"}
SECOND = "%Y-%m-%dT%H:%M:%SZ"
#: Characters a path name may hold (campaign.schema.json paths[].name).
NAME_BAD = re.compile(r"[^A-Za-z0-9._]")


def time_from_pattern(pattern, text):
    """The UTC time ``pattern`` finds in ``text`` (numpy datetime64[ns]), or None.

    ``pattern``: strftime directives (``%Y%m%d-%H%M``) or a regex with named groups
    (``year``... ``second``, or ``epoch``).
    """
    if "%" in pattern and "(?P<" not in pattern:
        regex = "".join(STRFTIME.get(tok, re.escape(tok))
                        for tok in re.findall(r"%.|[^%]+", pattern))
        m = re.search(regex, text)
        if m is None:
            return None
        when = dt.datetime.strptime(m.group(0), pattern)
        return np.datetime64(when.replace(tzinfo=None), "ns")
    m = re.search(pattern, text)
    if m is None:
        return None
    parts = {k: v for k, v in m.groupdict().items() if v is not None}
    if "epoch" in parts:
        return np.datetime64(int(round(float(parts["epoch"]) * 1e6)), "us").astype("datetime64[ns]")
    fields = [int(parts.get(k, d)) for k, d in (("year", 1970), ("month", 1), ("day", 1),
                                                ("hour", 0), ("minute", 0), ("second", 0))]
    return np.datetime64(dt.datetime(*fields), "ns")


def _archive_documents(path, root):
    """The documents of a perfSONAR archive dump (:func:`archive_split`), or None: read
    through the guard; a file it refuses is refused again, with its reason, where it is
    described."""
    try:
        raw = guard.read_bytes(path, "log", root=root, limit=IMPORT_BYTES)
    except ThruputError:
        return None
    return archive_split(raw)


def _files(sources, staging=None):
    """(archive root, file) pairs: directories walked (sorted), files as given; the
    members of ``.tgz`` archives extracted under ``staging`` (:func:`_extract`)."""
    out = []
    for source in map(Path, sources):
        if source.is_dir():
            found = [(source, p) for p in sorted(source.rglob("*")) if p.is_file()]
        elif source.is_file():
            found = [(source.parent, source)]
        else:
            raise ThruputError(f"{source}: no such file or directory")
        for root, path in found:
            if staging is not None and path.name.endswith(ARCHIVE_SUFFIXES):
                rel = path.relative_to(root).as_posix()
                stem = next(rel[:-len(x)] for x in ARCHIVE_SUFFIXES if rel.endswith(x))
                out += [(Path(staging), p) for p in _extract(path, Path(staging) / stem)]
            elif staging is not None and (documents := _archive_documents(path, root)):
                into = Path(staging) / (path.relative_to(root).as_posix() + ARCHIVE_DOCUMENTS)
                into.mkdir(parents=True)
                for n, document in enumerate(documents, 1):
                    (into / f"{n:06d}.json").write_bytes(document)
                    out.append((Path(staging), into / f"{n:06d}.json"))
            else:
                out.append((root, path))
    return out


def _extract(archive, into):
    """Extract the regular members of tar archive ``archive`` under ``into``, safely: the
    extracted paths, sorted. Raises ThruputError for a member whose name leaves ``into``
    (absolute, ``..``), a link or device, or past the bounds (:data:`ARCHIVE_BYTES` ...)."""
    written, seen, total = [], set(), 0
    try:
        with tarfile.open(archive, mode="r:*") as tar:
            for count, member in enumerate(tar, 1):
                if count > ARCHIVE_MEMBERS:
                    raise ThruputError(f"{archive}: more than {ARCHIVE_MEMBERS} members (a tar bomb?)")
                if member.isdir():
                    continue
                name = PurePosixPath(member.name)
                if not member.isfile():
                    raise ThruputError(f"{archive}: member {member.name!r} is a link or device, not a file")
                if name.is_absolute() or ".." in name.parts or not name.parts or "\\" in member.name:
                    raise ThruputError(f"{archive}: member {member.name!r} names a path outside the archive")
                target = into.joinpath(*[part for part in name.parts if part != "."])
                if target in seen:          # (a set: 20,000 members are not 20,000 list scans)
                    raise ThruputError(f"{archive}: member {member.name!r} is in the archive twice")
                target.parent.mkdir(parents=True, exist_ok=True)
                size = 0
                with tar.extractfile(member) as src, open(target, "wb") as dst:
                    while block := src.read(2**20):
                        size += len(block)
                        total += len(block)
                        if size > ARCHIVE_MEMBER_BYTES or total > ARCHIVE_BYTES:
                            raise ThruputError(f"{archive}: member {member.name!r} decompresses past "
                                               f"{ARCHIVE_MEMBER_BYTES if size > ARCHIVE_MEMBER_BYTES else ARCHIVE_BYTES}"
                                               " bytes (a tar or gzip bomb?)")
                        dst.write(block)
                written.append(target)
                seen.add(target)
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ThruputError(f"{archive}: not a readable tar archive ({type(exc).__name__}: {exc})") from None
    return sorted(written)


def _content_time(ds):
    if "route_time" in ds.variables and not np.isnat(ds["route_time"].values):
        return ds["route_time"].values.astype("datetime64[ns]")
    if "start_time" in ds.variables:
        values = ds["start_time"].values.ravel()
        values = values[~np.isnat(values)]
        if values.size:
            return values[0].astype("datetime64[ns]")
    for name in UNIX_TIME_VARIABLES:
        if name not in ds.variables:
            continue
        values = ds[name].values.astype(float).ravel()
        values = values[np.isfinite(values)]
        if values.size:
            return np.datetime64(int(round(values[0] * 1e6)), "us").astype("datetime64[ns]")
    return None


def _ndt7_hosts(ds):
    """(client, server) addresses of an ndt7 result, without ports."""
    return tuple(NDT7_ENDPOINT.fullmatch(str(ds[v].values[0]))["ip"] for v in ("ndt7_client", "ndt7_server"))


def _archive_ends(ds):
    """(source, destination) of a perfSONAR archive document: hostnames, else addresses."""
    def end(side):
        for field in ("hostname", "ip"):
            name = f"pscheduler_{side}_{field}"
            if name in ds.variables and str(ds[name].values.ravel()[0]):
                return str(ds[name].values.ravel()[0])
        return ""
    return end("source"), end("destination")


def _content_address(ds, raw):
    if ds is not None and ds.attrs.get("format") in PATH_ENDS:
        return _archive_ends(ds)[1] or None
    if ds is not None and ds.attrs.get("pscheduler_dest"):      # a pScheduler result with its spec
        return ds.attrs["pscheduler_dest"]
    if ds is not None and ds.attrs.get("format") == "ndt7":
        return _ndt7_hosts(ds)[1] or None
    if ds is not None and ds.attrs.get("format") == "ping":
        if ds.attrs.get("ping_target"):
            return ds.attrs["ping_target"]
        m = PING_DESTINATION.search(raw[:4096].decode("utf-8", errors="replace"))
        return m["host"] if m else None
    try:        # (a JSON log a reader refused for its size is not decoded here either)
        doc = json.loads(raw) if len(raw) <= JSON_ADDRESS_BYTES else None
        return doc["start"]["connecting_to"]["host"]
    except (ValueError, KeyError, TypeError, RecursionError):
        pass
    m = CONNECTED_TO.search(raw[:8192].decode("utf-8", errors="replace"))
    return m["host"] if m else None


def _wrapper_start(raw):
    """``(time of the wrapper's Start time line or None, True if the log holds nothing
    but wrapper lines)``."""
    lines = [line.strip() for line in raw[:65536].decode("utf-8", errors="replace").splitlines()]
    lines = [line for line in lines if line]
    when = None
    for line in lines:
        m = WRAPPER_LINES["Start time"].match(line)
        if m:
            when = np.datetime64(int(m.group(1)), "ms").astype("datetime64[ns]")
            break
    only = bool(lines) and all(any(p.match(line) for p in WRAPPER_LINES.values()) for line in lines)
    return when, only


def _describe(root, path, time_pattern, path_regex, tz=None):
    """One archive file -> ``("test", cells of its runs.csv row without run and slot)``,
    ``("ancillary", {rel, source, what, time})`` for a known non-test format, or
    ``("skip", reason)`` for a file that is not a test log (:mod:`.pile`)."""
    rel = path.relative_to(root).as_posix()
    # a regular file inside the imported folder, no larger than a log read whole (a monitor
    # test's log is kilobytes; a 10 GB sparse file is refused before a byte is read)
    raw = guard.read_bytes(path, "log", root=root, limit=IMPORT_BYTES)
    reason = pile.not_a_log(raw)
    if reason:
        return "skip", reason
    ds, outcome, reason = None, "ok", ""
    try:
        ds = read(path, tz=tz)
        if int(ds.attrs.get("truncated", 0)):
            outcome, reason = cut_outcome(ds)
    except ThruputError as exc:
        outcome, reason = "error", str(exc).removeprefix(str(path) + ":").strip()
    wrapper_time, wrapper_only = _wrapper_start(raw)
    given = {}
    if path_regex is not None:
        m = path_regex.search(rel)
        given = {k: v for k, v in m.groupdict().items() if v is not None} if m else None
    if ds is None:
        named = bool((given or {}).get("test") or _word(PATH_TESTS, rel))
        what, detail = pile.what_is(raw, path.name, wrapper_only, named)
        if what == "skip":
            return "skip", detail
        if what == "ancillary":
            return "ancillary", {"rel": rel, "source": path, "what": detail, "label": detail.split(" (")[0],
                                 "time": wrapper_time, "path_name": NAME_BAD.sub("_", (given or {}).get("path", ""))}
    elif ds.attrs["kind"] in ANCILLARY_KINDS:
        when = _content_time(ds)
        name = (given or {}).get("path") or ds.attrs.get("route_target_address") or None
        return "ancillary", {"rel": rel, "source": path, "what": _ancillary_what(ds), "label": ds.attrs["kind"],
                             "time": when if when is not None else wrapper_time,
                             "path_name": NAME_BAD.sub("_", name) if name else None}
    elif ds.attrs["kind"] not in KIND_ROLES:
        return "skip", f"a {ds.attrs['kind']} log (no place in a monitor campaign)"
    if wrapper_only:
        reason = WRAPPER_ONLY
    # the log's own time first: its content, else its wrapper's Start time (a ping whose
    # every probe was lost prints no time of its own), else its path
    when = _content_time(ds) if ds is not None else None
    if when is None:
        when = wrapper_time
    if when is None and time_pattern:
        when = time_from_pattern(time_pattern, rel)
        if when is not None:
            when = _to_utc(when, _zone_of(ds, tz))
    if when is None:
        raise ThruputError(f"{path}: the log does not say when it ran; give --time-pattern "
                           "(strftime like 'time-%d-%m-%Y_%H-%M', or a regex with named groups)")
    if given is None:
        raise ThruputError(f"{path}: --path-pattern {path_regex.pattern!r} does not match "
                           f"{rel!r}, the file's path relative to {root} (the pattern is "
                           "searched in that relative path)")
    address = _content_address(ds, raw)
    name = given.get("path") or address
    if ds is not None and ds.attrs.get("format") == "ndt7":
        name = given.get("path") or "_".join(h for h in _ndt7_hosts(ds) if h) or None
    if ds is not None and ds.attrs.get("format") in PATH_ENDS:
        name = given.get("path") or "_".join(h for h in _archive_ends(ds) if h) or None
    elif ds is not None and ds.attrs.get("pscheduler_dest"):
        name = given.get("path") or "_".join(h for h in (ds.attrs["pscheduler_source"], ds.attrs["pscheduler_dest"])
                                             if h)
    if not name and ds is not None:
        raise ThruputError(f"{path}: the log does not say what it measured to; give --path-pattern "
                           f"with a (?P<path>...) group (searched in {rel!r})")
    direction = None
    if ds is None:
        role, test, tool = _guess_failed(raw, rel, given.get("test"))
        direction = _word(PATH_DIRECTIONS, rel)
        numbers = {"guessed": True}
    else:
        role = KIND_ROLES[ds.attrs["kind"]]
        tool = FORMAT_TOOLS.get(ds.attrs["format"], ds.attrs["tool"])
        test, numbers = _settings(ds, role)
        direction = numbers.pop("direction", None)
    direction = given.get("direction") or direction or "forward"
    return "test", {"source": path, "rel": rel, "role": role, "sha256": sha256_bytes(raw),
                    "time": when, "path_name": NAME_BAD.sub("_", name) if name else None, "address": address,
                    "direction": direction, "test": test, "tool": tool, "outcome": outcome,
                    "reason": reason, "guessed": numbers.get("guessed", False),
                    **{k: numbers.get(k) for k in ("socket_buffer", "size", "rate")}}


def _zone_of(ds, tz):
    """The zone of a time found in a log's path: ``tz`` when given, else the offset the
    log's own wrapper showed (``UTC-04:00``), else UTC (said in the import's notes)."""
    if tz:
        return tz
    found = ds.attrs.get("line_prefix_tz", "") if ds is not None else ""
    return found if found and found not in ("UTC", "utc", "Z") else "UTC"


def _to_utc(naive, zone):
    """A naive local time (datetime64[ns]) in ``zone`` (IANA or ``UTC+hh:mm``) -> UTC."""
    if zone in ("UTC", "utc", "Z"):
        return naive
    from ..formats._prefix import _to_utc as prefix_to_utc

    out = prefix_to_utc(np.array([naive], dtype="datetime64[ns]"), zone)[0]
    return None if np.isnat(out) else out


def _ancillary_what(ds):
    """What an ancillary file read by a reader is, in words (a route: its target)."""
    target = ds.attrs.get("route_target", "")
    return f"route{f' to {target}' if target else ''} ({ds.attrs['tool']})"


def _word(table, rel):
    """The first name of ``table`` (``((name, regex), ...)``) whose regex finds a word of
    ``rel``'s file name (else of its folders), or None."""
    for text in (rel.rsplit("/", 1)[-1], rel):
        for name, regex in table:
            if regex.search(text):
                return name
    return None


def _guess_failed(raw, rel, test=None):
    """Role, test and tool of a log the readers refuse (an iperf3 error document, a log
    with only its wrapper's lines ...): the content where it says, else ``test`` (from
    --path-pattern), else words of its path."""
    head = raw[:4096].decode("utf-8", errors="replace")
    if test is None:
        if head.lstrip().startswith("{"):
            test = "tcp"
        elif head.startswith("PING") or "icmp_seq" in head:
            test = "ping"
        else:
            test = _word(PATH_TESTS, rel) or "tcp"
    role, tool = FAILED_TEST_ROLES[test]
    return role, test, tool


def _failed_paths(entries):
    """A log no reader accepts and that names no path (nothing but its wrapper's lines)
    is on the path of the other logs of its folder (the most common); else an error."""
    by_folder = {}
    for e in entries:
        if e["path_name"]:
            by_folder.setdefault(e["rel"].rpartition("/")[0], []).append(e["path_name"])
    for e in entries:
        if not e["path_name"]:
            names = by_folder.get(e["rel"].rpartition("/")[0])
            if not names:
                raise ThruputError(f"{e['source']}: the log does not say what it measured to, nor "
                                   "do other logs of its folder; give --path-pattern with a "
                                   f"(?P<path>...) group (searched in {e['rel']!r})")
            e["path_name"] = max(set(names), key=names.count)


def _failed_tools(entries):
    """A log no reader accepts runs the tool its series' other logs ran (the most common),
    not the guess of :data:`FAILED_TEST_ROLES`."""
    used = {}
    for e in entries:
        if not e.get("guessed"):
            used.setdefault((e["path_name"], e["test"]), []).append(e["tool"])
            used.setdefault(e["test"], []).append(e["tool"])
    for e in entries:
        if e.get("guessed"):
            tools = used.get((e["path_name"], e["test"])) or used.get(e["test"])
            if tools:
                e["tool"] = max(set(tools), key=tools.count)


def _settings(ds, role):
    """``(test, {socket_buffer, size, rate, reverse})`` as the log states them."""
    if role == "ping":
        size = ds.attrs.get("ping_payload_bytes")
        return "ping", {"size": int(size) if size not in (None, "") else None}
    run = ds.isel(run=0)
    test = "udp" if str(run["protocol"].values).upper() == "UDP" else "tcp"
    out = {}
    if "stream_direction" in run:
        sent = {str(x) for x in np.asarray(run["stream_direction"].values).ravel()} - {"", "nan"}
        if len(sent) == 1:
            out["direction"] = STREAM_DIRECTIONS.get(sent.pop())
    if out.get("direction") is None and "iperf3_reverse" in run:
        out["direction"] = "reverse" if int(run["iperf3_reverse"].values) else "forward"
    window = float(run["window_requested"].values)
    if test == "tcp" and np.isfinite(window) and window > 0:
        out["socket_buffer"] = int(window)
    if test == "udp" and "iperf3_target_bitrate" in run:
        rate = float(run["iperf3_target_bitrate"].values)
        out["rate"] = int(rate) if np.isfinite(rate) and rate > 0 else None
    return test, out


def _series(e):
    return (e["path_name"], e["direction"], e["test"], e["socket_buffer"], e["size"], e["rate"])


def _interval(entries):
    """Median spacing (s) of the tests of each series, the median over series; None if
    no series ran twice."""
    by_series = {}
    for e in entries:
        by_series.setdefault(_series(e), []).append(e["time"])
    spacings = []
    for times in by_series.values():
        times = np.sort(np.array(times, dtype="datetime64[ns]")).astype(np.int64)
        if times.size > 1:
            spacings.append(float(np.median(np.diff(times))) / 1e9)
    spacings = [s for s in spacings if s > 0]
    return round(float(np.median(spacings)), 3) if spacings else None


def _iso(when):
    return pd.Timestamp(when).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def import_monitor(name, sources, root=DEFAULT_ROOT, time_pattern=None, path_pattern=None,
                   interval=None, tz=None, **description):
    """Build monitor campaign ``root/name`` from an archive of logs.

    Parameters
    ----------
    name : str
    sources : sequence of path-like
        Directories (walked) and files. Each log is copied to ``runs/`` under its path
        inside its directory, each ancillary file (a route, DNS lookups) to ``ancillary/``.
    root : path-like, default ``"data/raw"``
    time_pattern, path_pattern : str, optional
        Where the logs do not say when they ran or to where (module docstring).
    interval : float, optional
        Seconds between test slots; default: the median spacing found.
    tz : str, optional
        IANA zone (``America/New_York``) of local times: a wrapper's zone-less line
        stamps, and times ``time_pattern`` finds. Default: the offset a log's own wrapper
        shows, else UTC (said in campaign.yaml ``notes``).
    **description
        campaign.yaml fields the user gives (``thruput campaign import --title ...``):
        ``title``, ``description``, ``who``, ``notes`` (added to the import's own notes),
        and ``between``, ``capacity_bps`` of every path.

    Returns
    -------
    pathlib.Path
        The campaign directory; fill in its TODOs, then ``thruput campaign check`` it.
        :func:`import_pile` also says what was skipped.

    Raises
    ------
    ThruputError
        For a log whose time or path neither it nor the patterns give, two files at one
        path, no test log at all, or an existing campaign.
    """
    return import_pile(name, sources, root, time_pattern, path_pattern, interval, tz, **description).directory


class PileImport(NamedTuple):
    """What :func:`import_pile` did."""

    #: The campaign directory.
    directory: Path
    #: Test logs imported (rows of runs.csv), failed ones included.
    runs: int
    #: Files kept as ancillary data: what each is -> count.
    ancillary: dict
    #: Files skipped as not test logs: reason -> count.
    skipped: dict

    def summary(self):
        """One line: ``imported N runs; kept A ancillary files: ...; skipped M files: ...``."""
        def counts(table):
            return ", ".join(f"{n} {what}" for what, n in sorted(table.items(), key=lambda kv: (-kv[1], kv[0])))
        parts = [f"imported {self.runs} run{'s' if self.runs != 1 else ''}"]
        if self.ancillary:
            n = sum(self.ancillary.values())
            parts.append(f"kept {n} ancillary file{'s' if n != 1 else ''}: {counts(self.ancillary)}")
        n = sum(self.skipped.values())
        if n:
            parts.append(f"skipped {n} file{'s' if n != 1 else ''} that are not test logs: {counts(self.skipped)}")
        return "; ".join(parts)


def import_pile(name, sources, root=DEFAULT_ROOT, time_pattern=None, path_pattern=None,
                interval=None, tz=None, **description):
    """:func:`import_monitor`, returning a :class:`PileImport` (what was kept and skipped)."""
    directory = Path(root) / name
    if (directory / CAMPAIGN_FILE).exists():
        raise ThruputError(f"{directory / CAMPAIGN_FILE}: already exists; import into a new campaign")
    path_regex = re.compile(path_pattern) if path_pattern else None
    with tempfile.TemporaryDirectory(prefix="thruput-import-") as staging:
        entries, extra, skipped, seen = [], [], {}, {}
        for archive, path in _files(sources, staging):
            what, e = _describe(archive, path, time_pattern, path_regex, tz)
            if what == "skip":
                skipped[e] = skipped.get(e, 0) + 1
                continue
            if e["rel"] in seen:
                raise ThruputError(f"{path}: {e['rel']} is also {seen[e['rel']]}; import them separately")
            seen[e["rel"]] = path
            (entries if what == "test" else extra).append(e)
        if not entries:
            found = f" (skipped: {', '.join(f'{n} {r}' for r, n in skipped.items())})" if skipped else ""
            raise ThruputError(f"no test logs to import{found}")
        notes = _zone_note(entries, time_pattern, tz)
        _write_campaign(directory, name, entries, interval, sources, extra, skipped, notes, description)
    kinds = {}
    for e in extra:
        kinds[e["label"]] = kinds.get(e["label"], 0) + 1
    return PileImport(directory, len(entries), kinds, skipped)


def _zone_note(entries, time_pattern, tz):
    """A sentence for campaign.yaml notes on how times from paths were read, or ""."""
    if not time_pattern:
        return ""
    return (f"Times --time-pattern found in paths were read in {tz}." if tz else
            "Times --time-pattern found in paths were read in the zone their log's wrapper "
            "showed, else as UTC (no --tz given).")


def _write_campaign(directory, name, entries, interval, sources, extra=(), skipped=None, notes="",
                    description=None):
    entries.sort(key=lambda e: (e["time"], e["rel"]))
    _failed_paths(entries)
    _failed_tools(entries)
    interval = float(interval) if interval else _interval(entries)
    _number_slots(entries, interval)
    for e in entries:               # (unique: one test of a series per slot, _number_slots)
        run = f"{e['slot']:06d}-{e['path_name']}-{e['direction']}-{e['test']}"
        e["run"] = run + (f"-b{e['socket_buffer']}" if e["socket_buffer"] else "") \
            + (f"-z{e['size']}" if e["size"] else "")
    missing = missing_slots([e["slot"] for e in entries], [e["time"] for e in entries],
                            [e["path_name"] for e in entries])
    (directory / "runs").mkdir(parents=True, exist_ok=True)
    for e in entries:
        target = directory / "runs" / e["rel"]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(e["source"], target)
    for e in extra:
        target = directory / ANCILLARY_DIR / e["rel"]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(e["source"], target)
    _write_manifest(directory, entries)
    explained = [{"from": pd.Timestamp(first).floor("s").strftime(SECOND),
                  "to": pd.Timestamp(last).ceil("s").strftime(SECOND), "path": str(p), "reason": GAP_REASON}
                 for p, first, last in zip(*(missing[v].values for v in ("gap_path", "gap_start", "gap_last")))]
    (directory / CAMPAIGN_FILE).write_text(
        _yaml(name, entries, interval, explained, sources, extra, skipped or {}, notes, description or {}),
        encoding="utf-8")
    return directory


def _number_slots(entries, interval):
    """Slot numbers per path: each test ``round(spacing / interval)`` slots after the one
    before it on its path (0: the same slot), so a clock that drifts against the inferred
    interval makes no gaps, and a spacing of 1.5 intervals or more makes one."""
    last, taken = {}, {}
    for e in entries:                           # in time order
        before = last.get(e["path_name"])
        if before is None or not interval:
            e["slot"] = 0 if before is None else before["slot"]
        else:
            spacing = (e["time"] - before["time"]).astype(np.int64) / 1e9
            e["slot"] = before["slot"] + int(round(spacing / interval))
        # a series runs once a slot (the run id names series and slot): a second test
        # of it goes to the slot after the series' last
        key = _series(e)[:5]                    # what the run id names (not the rate)
        e["slot"] = max(e["slot"], taken.get(key, -1) + 1)
        taken[key] = e["slot"]
        last[e["path_name"]] = e


def _write_manifest(directory, entries):
    with open(directory / MANIFEST_FILE, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(mon.MONITOR_MANIFEST_COLUMNS)
        for e in entries:
            cells = {**e, "path": f"runs/{e['rel']}", "started": _iso(e["time"])}
            writer.writerow(["" if cells[k] is None else cells[k] for k in mon.MONITOR_MANIFEST_COLUMNS])


def _yaml(name, entries, interval, explained, sources, extra=(), skipped=None, notes="", description=None):
    import yaml

    first, last = entries[0]["time"], entries[-1]["time"]
    paths = {}
    for e in entries:
        p = paths.setdefault(e["path_name"], {"name": e["path_name"], "source": None, "destination": None,
                                              "address": e["address"], "directions": []})
        if e["direction"] not in p["directions"]:
            p["directions"].append(e["direction"])
    tests = sorted({(e["test"], e["tool"]) for e in entries})
    meta = {
        "name": name,
        "title": "TODO: one line",
        "description": f"TODO: where and how it was measured. Imported by `thruput campaign import "
                       f"--kind monitor` from {', '.join(str(s) for s in sources)}: {len(entries)} logs.",
        "kind": "monitor",
        "dates": {"start": pd.Timestamp(first).floor("s").strftime(SECOND),
                  "end": pd.Timestamp(last).ceil("s").strftime(SECOND)},
        "who": ["TODO"],
        "paths": list(paths.values()),
        "hosts": {"unknown": {"description": "TODO: the hosts of the archive"}},
        "tools": {},
        "schedule": {"interval_s": interval, "jitter_s": None, "order": None, "seed": None,
                     "timeout_s": None, "tests": [{"test": t, "tool": tool} for t, tool in tests]},
        "explained": explained,
        **({"ancillary": [_ancillary(e, paths) for e in sorted(extra, key=lambda e: e["rel"])]}
           if extra else {}),
        "notes": " ".join(filter(None, [("The schedule was inferred from the logs (interval: median spacing of each "
                  "series' tests; on each path a test is round(spacing / interval) slots after "
                  "the one before it)." if interval else
                  "No series ran twice: the interval is unknown, so no gaps are listed."),
            notes, _skipped_note(skipped)])),
    }
    given = {k: v for k, v in (description or {}).items() if v is not None}
    for key in ("title", "description", "who"):
        if key in given:
            meta[key] = list(given[key]) if key == "who" else given[key]
    if given.get("notes"):
        meta["notes"] = f"{given['notes']} {meta['notes']}"
    for p in meta["paths"]:
        p.update({k: given[k] for k in ("between", "capacity_bps") if k in given})
    return yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)


def _ancillary(e, paths):
    """An ancillary file's entry of campaign.yaml: its path, what it is, the path it was
    traced on (when that is a path of the campaign) and its time where it says one."""
    out = {"path": f"{ANCILLARY_DIR}/{e['rel']}", "what": e["what"]}
    if e.get("path_name") in paths:
        out["path_name"] = e["path_name"]
    if e.get("time") is not None:
        out["time"] = pd.Timestamp(e["time"]).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return out


def _skipped_note(skipped):
    if not skipped:
        return ""
    n = sum(skipped.values())
    return (f"Skipped at import, not test logs: {n} file{'s' if n != 1 else ''} ("
            + ", ".join(f"{c} {r}" for r, c in sorted(skipped.items())) + ").")
