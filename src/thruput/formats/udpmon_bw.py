"""UDPmon ``udpmon_bw_mon``: a UDP throughput sweep, one row per inter-packet spacing.

``udpmon_bw_mon`` (R. Hughes-Jones, UDPmon 1.x) sends ``-l`` UDP datagrams of ``-p`` bytes
with a spacing of ``-w``..``-e`` µs (step ``-i``) and prints one ``;``-separated row per
spacing. Three layouts are read:

plain
    A banner (version, command line, CPU speed, socket buffers, destination), a
    ``" <n> bytes"`` line, a header row naming the columns and the data rows
    (``pkt len; num_sent; inter-pkt_time us; send_user_data_rate Mbit; num_recv; ...``).
``-x`` (extended)
    More columns (ACKs, timeouts, send/receive times, statistics of the receiver's
    histogram) followed by labelled blocks: CPU load of each local (``L``, ``L0``...) and
    remote (``R``, ``R0``...) CPU, interface counters (``L if``/``R if``), IP/UDP SNMP
    counters (``L snmp``/``R snmp``) and NIC counters (``L NIC``/``R NIC``).
``-q`` (quiet)
    No banner, no header: each row starts with the Unix time, the local IP address and
    host name, and the destination's name and IP address.

Schema (kind ``udp_sweep``, dimension ``row``)
----------------------------------------------
Shared: ``packet_size`` (byte), ``spacing`` (us), ``packets_sent``, ``packets_received``,
``packets_lost``, ``out_of_order`` (count), ``loss_fraction`` (``(num_sent - num_recv) /
num_sent``, the tool's own definition of ``%lost``, which it prints to two significant
digits and is kept as ``udpmon_lost_percent``; ``num_lost`` counts only gaps in the
sequence numbers, so datagrams lost after the last one received are missing from it),
``send_rate`` and
``recv_rate`` (bit/s; the tool prints Mbit/s = 10**6 bit/s of user data), ``line``.
Every other column is an ``udpmon_*`` extra (see ``COLUMNS``); the ``-x`` blocks are
``udpmon_cpu_*`` on (``row``, ``udpmon_cpu``), ``udpmon_if_*`` on (``row``, ``udpmon_if``),
``udpmon_snmp_*`` on (``row``, ``udpmon_host``) and ``udpmon_nic_*`` on
(``row``, ``udpmon_nic``). Banner facts are ``udpmon_*`` attrs (``udpmon_command``,
``udpmon_flags`` as JSON, ``udpmon_cpu_mhz``, ``udpmon_rcvbuf_default``...).

Example
-------
>>> ds = thruput.read("tests/data/udpmon_bw/x--p1000-w0-40.txt")  # doctest: +SKIP
>>> float(ds.recv_rate[0])                                       # doctest: +SKIP
481300000.0
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import xarray as xr

import json
import re

import numpy as np

from ..contract import Ledger, build, consistency_check, split_lines
from ..errors import ParseError

__all__ = ["NAME", "KIND", "TOOL", "BINARY", "sniff", "parse", "parse_banner"]

NAME = "udpmon_bw"
KIND = "udp_sweep"
TOOL = "udpmon"
BINARY = False

#: UDPmon prints rates in Mbit/s computed as bits per microsecond, i.e. 10**6 bit/s.
MBIT = 1e6

#: First banner line: date, version and the command line (``CPUs`` appears in bw_mon's).
BANNER_RE = re.compile(
    r"^\s*(?P<date>\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4}) :\s+UDPmon Version (?P<version>\S+)"
    r"\s+(?:CPUs\s+)?Command line:\s+(?P<command>.*\S|)\s*$")

#: Further banner lines: regex -> {group: (attr suffix, type)}; their values become attrs.
BANNER_FACTS = (
    (re.compile(r"^Default affinity: (?P<affinity_default>\S+) Set affinity: (?P<affinity_set>\S+)\s*$"),
     {"affinity_default": str, "affinity_set": str}),
    (re.compile(r"^CPU speed = (?P<cpu_mhz>[\d.]+) \+- (?P<cpu_mhz_error>[\d.]+) MHz"),
     {"cpu_mhz": float, "cpu_mhz_error": float}),
    (re.compile(r"^StopWatch_Stop calibrated: (?P<stopwatch_stop_us>[\d.]+) us minimum\s+:\s+"
                r"StopWatch_Delay calibrated: (?P<stopwatch_delay_us>[\d.]+) us minimum\s*$"),
     {"stopwatch_stop_us": float, "stopwatch_delay_us": float}),
    (re.compile(r"^clock ticks for 1 sec = (?P<clock_ticks_per_s>\d+) us\s*$"),
     {"clock_ticks_per_s": int}),
    (re.compile(r"^Defaults: RCVBUF (?P<rcvbuf_default>\d+) SNDBUF (?P<sndbuf_default>\d+) "
                r"IP_TOS (?P<ip_tos_default>\S+)"),
     {"rcvbuf_default": int, "sndbuf_default": int, "ip_tos_default": str}),
    (re.compile(r"^Settings: RCVBUF (?P<rcvbuf>\d+) SNDBUF (?P<sndbuf>\d+) IP_TOS (?P<ip_tos>\S+)"),
     {"rcvbuf": int, "sndbuf": int, "ip_tos": str}),
    (re.compile(r"^\s*The destination IP name: (?P<destination_name>\S+) IP address: "
                r"(?P<destination_ip>\S+)\s*$"),
     {"destination_name": str, "destination_ip": str}),
    (re.compile(r"^\s*The destination UDP port is\s+(?P<destination_port>\d+)\s+(?P<destination_port_hex>[0-9a-fA-F]+)\s*$"),
     {"destination_port": int, "destination_port_hex": str}),
)

#: Banner lines that carry nothing to keep.
BANNER_NOISE_RE = re.compile(r"^\s*Initialising real-time clock\.\s*$")

#: The `` <n> bytes`` line before the header (the packet size, repeated in every row).
SIZE_LINE_RE = re.compile(r"^\s*(\d{1,9}) bytes\s*$")

#: Header columns -> (variable, units, scale to those units, long_name or None for shared).
#: Names are the tool's, stripped; shared contract names where they exist.
COLUMNS = {
    "pkt len": ("packet_size", "byte", 1, None),
    "num_sent": ("packets_sent", "count", 1, None),
    "num_ACKs recv": ("udpmon_acks_received", "count", 1, "ACKs received by the sender (-x)"),
    "num_timeout": ("udpmon_timeouts", "count", 1, "sender timeouts waiting for the receiver (-x)"),
    "Time/frame us": ("udpmon_time_per_frame", "us", 1, "send time per datagram (-x)"),
    "inter-pkt_time us": ("spacing", "us", 1, None),
    "Send time": ("udpmon_send_time", "us", 1, "time to send all datagrams (-x)"),
    "send_user_data_rate Mbit": ("send_rate", "bit/s", MBIT, None),
    "num_recv": ("packets_received", "count", 1, None),
    "num_lost": ("packets_lost", "count", 1, None),
    "num_badorder": ("out_of_order", "count", 1, None),
    "%lost": ("udpmon_lost_percent", "percent", 1, "datagrams lost as printed (rounded)"),
    "num_lost_innet": ("udpmon_lost_innet", "count", 1, "datagrams lost in the network (SNMP counters)"),
    "%lost_innet": ("udpmon_lost_innet_percent", "percent", 1, "datagrams lost in the network, as printed"),
    "Recv time": ("udpmon_recv_time", "us", 1, "receiver's time from first to last datagram (-x)"),
    "time/recv pkt": ("udpmon_time_per_recv_packet", "us", 1, "receive time per datagram (-x)"),
    "recv_user_data_rate Mbit": ("recv_rate", "bit/s", MBIT, None),
    "recv_wire_rate Mbit": ("udpmon_recv_wire_rate", "bit/s", MBIT,
                            "receive rate on the wire incl. UDP/IP/Ethernet overheads"),
    # -x: statistics of the receiver's histogram; the output names neither the histogrammed
    # quantity nor the bin width, so these stay in bin units ("1").
    "num_in_hist": ("udpmon_hist_count", "count", 1, "entries in the receiver's histogram (-x)"),
    "mean": ("udpmon_hist_mean", "1", 1, "mean of the receiver's histogram, bin units (-x)"),
    "sigma": ("udpmon_hist_sigma", "1", 1, "standard deviation of the receiver's histogram, bin units (-x)"),
    "skew": ("udpmon_hist_skew", "1", 1, "skewness of the receiver's histogram (-x)"),
    "kurtosis": ("udpmon_hist_kurtosis", "1", 1, "kurtosis of the receiver's histogram (-x)"),
    "median": ("udpmon_hist_median", "1", 1, "median of the receiver's histogram, bin units (-x)"),
    "iq25": ("udpmon_hist_iq25", "1", 1, "25 % quartile of the receiver's histogram, bin units (-x)"),
    "iq75": ("udpmon_hist_iq75", "1", 1, "75 % quartile of the receiver's histogram, bin units (-x)"),
}

#: Columns of a ``-q`` row after its host prefix (the plain layout; no header is printed).
QUIET_COLUMNS = (
    "pkt len", "num_sent", "inter-pkt_time us", "send_user_data_rate Mbit", "num_recv",
    "num_lost", "num_badorder", "%lost", "num_lost_innet", "%lost_innet",
    "recv_user_data_rate Mbit", "recv_wire_rate Mbit",
)
#: The host prefix of a ``-q`` row: Unix time ; local IP ; local name ; dest name ; dest IP ;
QUIET_ROW_RE = re.compile(
    r"^\s*(?P<time>\d{9,11}) ; (?P<local_ip>[^;\s]+) ; (?P<local_name>[^;\s]+) ; "
    r"(?P<remote_name>[^;\s]+) ; (?P<remote_ip>[^;\s]+) ;(?P<rest>.*)$")

#: A header token that starts the labelled ``-x`` blocks.
BLOCK_HEADER_RE = re.compile(r"^(<[LR] CPU>|[LR]\d* CPU|[LR] (if|snmp|NIC))$")

#: ``-x`` blocks in data rows: label pattern -> (block kind, field names, units).
CPU_LABEL_RE = re.compile(r"^[LR]\d*$")          # L = all local CPUs, L0 = CPU 0, R... remote
CPU_FIELDS = ("user", "lowprio", "kernel", "idle", "iowait", "irq", "softirq")
IF_FIELDS = ("pktsin", "bytesin", "errin", "dropin", "pktsout", "bytesout", "errout", "dropout")
IF_UNITS = {"bytesin": "byte", "bytesout": "byte"}
SNMP_FIELDS = ("InReceives", "InDiscards", "OutRequests", "OutDiscards",
               "UDPInDatagrams", "UDPInErrors", "UDPOutDatagrams")
NIC_FIELDS = ("rx_packets", "tx_packets", "rx_packets_phy", "tx_packets_phy", "rx_pause_ctrl_phy",
              "tx_pause_ctrl_phy", "tx_global_pause_duration", "rx_crc_errors_phy", "rx_out_of_buffer")
SECTION_RE = re.compile(r"^(?P<side>[LR]) (?P<section>if|snmp|NIC)$")
IFNAME_RE = re.compile(r"^(?P<name>[^\s:;]+):$")

_NUMBER_RE = re.compile(r"^[-+]?(\d+(?:\.\d*)?|\.\d+)([eE][-+]?\d+)?$|^-?(nan|inf)$", re.I)


def sniff(head: str) -> bool:
    """True for udpmon_bw_mon output: its banner or header, or ``-q`` rows."""
    if "udpmon_bw_mon" in head and "UDPmon Version" in head:
        return True
    if re.search(r"^\s*pkt len; num_sent;", head, re.M):
        return True
    lines = [l for l in head.split("\n")[:3] if l.strip()]
    return bool(lines) and all(QUIET_ROW_RE.match(l) for l in lines[:-1] or lines)


def parse_banner(lines: list[str], ledger: Ledger) -> tuple[dict[str, Any], int]:
    """Read UDPmon banner lines (shared with :mod:`udpmon_req`); return attrs and the index
    of the first line after the banner.

    Marks every banner line in ``ledger`` (parsed when it carries a value).
    """
    attrs: dict[str, Any] = {}
    i = 0
    if lines and (m := BANNER_RE.match(lines[0])):
        attrs.update(udpmon_date=m["date"], udpmon_command=m["command"],
                     udpmon_flags=json.dumps(_flags(m["command"])))
        attrs["tool_version"] = m["version"]
        ledger.parsed(1)
        i = 1
    while i < len(lines):
        line = lines[i]
        if BANNER_NOISE_RE.match(line):
            ledger.skip(i + 1, "banner")
        elif not line.strip():
            ledger.skip(i + 1, "blank")
        else:
            for regex, fields in BANNER_FACTS:
                if m := regex.match(line):
                    try:   # a damaged "[\d.]+" may be "." or an int 5000 digits long
                        attrs.update({f"udpmon_{k}": conv(m[k]) for k, conv in fields.items()})
                    except ValueError:
                        raise ParseError(f"banner value is not a number: {line[:80]!r}", i + 1) from None
                    ledger.parsed(i + 1)
                    break
            else:
                break
        i += 1
    return attrs, i


def _flags(command):
    """``-d host -p 1000 -w0 -x`` -> {"-d": "host", "-p": "1000", "-w": "0", "-x": ""}."""
    flags = {}
    tokens = command.split()[1:]
    k = 0
    while k < len(tokens):
        tok = tokens[k]
        if re.match(r"^-[A-Za-z]", tok):
            if len(tok) > 2:
                flags[tok[:2]] = tok[2:]
            elif k + 1 < len(tokens) and not re.match(r"^-[A-Za-z]", tokens[k + 1]):
                flags[tok] = tokens[k + 1]
                k += 1
            else:
                flags[tok] = ""
        k += 1
    return flags


def parse(text: str) -> xr.Dataset:
    """Parse udpmon_bw_mon output (plain, ``-x`` or ``-q``) into a ``udp_sweep`` Dataset."""
    if not text.strip():
        raise ParseError("empty input")
    lines = split_lines(text)
    ledger = Ledger(len(lines), lines=lines)
    attrs, i = parse_banner(lines, ledger)
    tool_version = attrs.pop("tool_version", "")
    columns = None
    rows: list[Any] = []          # (line number, [numbers], blocks dict, quiet prefix or None)
    for n in range(i, len(lines)):
        line, lineno = lines[n], n + 1
        is_last = n == len(lines) - 1 and not text.endswith("\n")
        if not line.strip():
            ledger.skip(lineno, "blank")
        elif (m := SIZE_LINE_RE.match(line)) and columns is None:
            attrs["udpmon_size_line"] = int(m[1])
            ledger.skip(lineno, "packet size heading")
        elif re.match(r"^\s*pkt len;", line):
            columns = _header_columns(line, ledger, lineno)
            ledger.skip(lineno, "header")
        elif m := QUIET_ROW_RE.match(line):
            _row(ledger, rows, lineno, is_last, m["rest"], QUIET_COLUMNS, m)
        elif columns is not None and re.match(r"^\s*[-\d.]", line):
            _row(ledger, rows, lineno, is_last, line, columns, None)
        elif is_last and (columns is not None or rows):  # rows: -q rows need no header
            ledger.cut_off(lineno, "row")
    return _process(rows, ledger, attrs, tool_version)


def _header_columns(line, ledger, lineno):
    tokens = [t.strip() for t in line.split(";")]
    columns = []
    for tok in tokens:
        if not tok:
            continue
        if BLOCK_HEADER_RE.match(tok):
            break
        if tok not in COLUMNS:
            ledger.error(lineno, f"unknown udpmon_bw_mon column {tok!r}")
            return None
        columns.append(tok)
    return columns


def _row(ledger, rows, lineno, is_last, text, columns, quiet):
    """Split one data row; a malformed last row of an unterminated file is a truncation."""
    try:
        if columns is None:
            raise ValueError("data row before a valid header")
        tokens = [t.strip() for t in text.split(";")]
        values = tokens[: len(columns)]
        if len(values) < len(columns) or not all(_NUMBER_RE.match(v) for v in values):
            raise ValueError(f"expected {len(columns)} numeric columns")
        blocks = _blocks(tokens[len(columns):], quiet is not None)
        if is_last and rows and set(blocks) != set(rows[0][2]):
            # UDPmon ends every row with a newline: an unterminated last row that lacks
            # blocks the first row had was cut off while printing
            raise ValueError("blocks missing")
        if is_last and not text.rstrip().endswith(";"):
            # ... and every value with ';': without it the last value may be cut short
            raise ValueError("last value cut off")
    except ValueError as exc:
        if is_last:
            ledger.cut_off(lineno, "row")
        else:
            ledger.error(lineno, f"bad udpmon_bw_mon row: {exc}")
        return
    rows.append((lineno, dict(zip(columns, values)), blocks, quiet))
    ledger.parsed(lineno)


def _blocks(tokens, quiet):
    """The labelled ``-x`` blocks of one row -> {("cpu"|"if"|"snmp"|"nic", label): [str]}."""
    blocks = {}
    current = None
    section = side = None
    for tok in tokens:
        if not tok:
            continue
        if quiet:
            raise ValueError(f"unexpected field {tok!r} in a -q row")
        if m := SECTION_RE.match(tok):
            section, side = m["section"].lower(), m["side"]
            current = ("snmp", side) if section == "snmp" else None
            if current:
                blocks[current] = []
        elif section in ("if", "nic") and (m := IFNAME_RE.match(tok)):
            current = (section, f"{side} {m['name']}")
            blocks[current] = []
        elif CPU_LABEL_RE.match(tok):
            section = None
            current = ("cpu", tok)
            blocks[current] = []
        elif _NUMBER_RE.match(tok) and current is not None:
            blocks[current].append(tok)
        else:
            raise ValueError(f"unexpected field {tok!r}")
    sizes = {"cpu": len(CPU_FIELDS), "if": len(IF_FIELDS), "snmp": len(SNMP_FIELDS), "nic": len(NIC_FIELDS)}
    for (kind, label), values in blocks.items():
        if len(values) != sizes[kind]:
            raise ValueError(f"{kind} block {label!r} has {len(values)} values, expected {sizes[kind]}")
    return blocks


def _process(rows, ledger, attrs, tool_version):
    """Every type conversion: strings -> arrays with units; assemble the Dataset."""
    if not rows:
        # nothing measured (e.g. cut off before the first row): an error, not an empty sweep;
        # unrecognised lines are reported first
        ledger.close()
        raise ParseError("no data rows" + (f" ({ledger.truncation})" if ledger.truncation else ""))
    n = len(rows)
    present = [c for c in COLUMNS if any(c in r[1] for r in rows)]
    numbers = {c: np.array([float(r[1].get(c, "nan")) for r in rows], dtype=float) for c in present}
    variables, extras = {}, {}
    for col in present:
        name, units, scale, long_name = COLUMNS[col]
        values = numbers[col] * scale
        if long_name is None:
            variables[name] = (("row",), values)
        else:
            extras[name] = (("row",), values, units, long_name)
    nan = np.full(n, np.nan)
    for name in ("packet_size", "spacing", "packets_sent", "packets_received", "packets_lost",
                 "send_rate", "recv_rate"):
        variables.setdefault(name, (("row",), nan))
    sent, received = variables["packets_sent"][1], variables["packets_received"][1]
    with np.errstate(invalid="ignore", divide="ignore"):
        # UDPmon's %lost is (sent - received) / sent, not num_lost / sent (see module doc)
        variables["loss_fraction"] = (("row",), np.where(sent > 0, (sent - received) / sent, np.nan))
    variables["line"] = (("row",), np.array([r[0] for r in rows], dtype=np.int64))
    coords = {}
    if any(r[3] is not None for r in rows):
        quiet = [r[3] for r in rows]
        extras["udpmon_start_time"] = (("row",), np.array(
            [float(q["time"]) if q else np.nan for q in quiet]), "s", "Unix time the test started (-q)")
        for key, long_name in (("local_ip", "local IP address (-q)"), ("local_name", "local host name (-q)"),
                               ("remote_name", "destination name (-q)"), ("remote_ip", "destination IP address (-q)")):
            extras[f"udpmon_{key}"] = (("row",), np.array([q[key] if q else "" for q in quiet], dtype=object),
                                       "1", long_name)
    _block_extras(rows, extras, coords)
    tool_summary = {"rows": n}
    if "%lost" in numbers:
        tool_summary["lost_percent"] = numbers["%lost"].tolist()
    return build(KIND, variables, fmt=NAME, tool=TOOL, tool_version=tool_version, ledger=ledger,
                 extras=extras, coords=coords, attrs=attrs, tool_summary=tool_summary,
                 consistency=_consistency(numbers, variables["line"][1]))


#: ``%lost`` is printed to two significant digits (``17`` for 16.6 %): 5 % of the value,
#: and at least half a unit of a ``0.xx`` value's last digit.
LOST_PERCENT_RTOL, LOST_PERCENT_ATOL = 0.05, 0.005
#: Rates are printed to 6 significant digits, Send time in whole us, Recv time to 0.1 us.
RATE_RTOL = 0.001
#: Each check: (what, printed column, function of the row's columns giving the same number).
CHECKS = (
    ("%lost vs (num_sent - num_recv) / num_sent", "%lost", LOST_PERCENT_RTOL, LOST_PERCENT_ATOL,
     lambda c: 100 * (c["num_sent"] - c["num_recv"]) / c["num_sent"]),
    ("send_user_data_rate vs num_sent x pkt len x 8 / Send time", "send_user_data_rate Mbit", RATE_RTOL, 0.0,
     lambda c: c["num_sent"] * c["pkt len"] * 8 / c["Send time"]),
    ("recv_user_data_rate vs num_recv x pkt len x 8 / Recv time", "recv_user_data_rate Mbit", RATE_RTOL, 0.0,
     lambda c: c["num_recv"] * c["pkt len"] * 8 / c["Recv time"]),
)


def _consistency(numbers, lines):
    """One check per printed derived column, at its worst row (named by its line): the
    row's own counts and times must give the number the tool printed (see CHECKS)."""
    checks = []
    for what, column, rtol, atol, derive in CHECKS:
        try:
            with np.errstate(invalid="ignore", divide="ignore"):
                data = derive(numbers)
        except KeyError:   # a layout without these columns (no -x: no send/recv times)
            continue
        tool = numbers[column] if column in numbers else None
        if tool is None:
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.abs(tool - data) / (atol + rtol * np.abs(tool))   # of the tolerance
        worst = int(np.argmax(np.where(np.isnan(share), np.inf, share)))  # NaN disagrees
        checks.append(consistency_check(f"{what} (worst row: line {int(lines[worst])})",
                                        tool[worst], data[worst], rtol=rtol, atol=atol,
                                        note="as printed, row by row"))
    checks.extend(_order_checks(numbers, lines))
    return checks


#: Figures of one row that must come in this order (the histogram's quartiles around its
#: median; its entries among the datagrams received): (what, columns, smallest first).
ORDER_CHECKS = (
    ("histogram: iq25 <= median <= iq75", ("iq25", "median", "iq75")),
    ("histogram: num_in_hist <= num_recv", ("num_in_hist", "num_recv")),
)


def _order_checks(numbers, lines):
    """Rows whose figures are out of :data:`ORDER_CHECKS`' order: 0 expected, the first
    such row named (the -x histogram prints no bins to check its mean against)."""
    checks = []
    for what, columns in ORDER_CHECKS:
        if not all(c in numbers for c in columns):
            continue
        values = np.vstack([numbers[c] for c in columns])
        with np.errstate(invalid="ignore"):
            bad = np.any(np.diff(values, axis=0) < 0, axis=0)
        first = f"; first at line {int(lines[np.argmax(bad)])}" if bad.any() else ""
        checks.append(consistency_check(f"{what}: rows out of order", 0, int(bad.sum()), rtol=0.0,
                                        note=f"rows where it fails{first}"))
    return checks


def _block_extras(rows, extras, coords):
    specs = {
        "cpu": ("udpmon_cpu", CPU_FIELDS, {}, "percent", "CPU {f} load (-x; L = local, R = remote; digit = CPU)"),
        "if": ("udpmon_if", IF_FIELDS, IF_UNITS, "count", "interface counter {f} during the test (-x)"),
        "snmp": ("udpmon_host", SNMP_FIELDS, {}, "count", "SNMP counter {f} during the test (-x; L/R host)"),
        "nic": ("udpmon_nic", NIC_FIELDS, {}, "count", "NIC counter {f} during the test (-x)"),
    }
    prefix = {"cpu": "udpmon_cpu_", "if": "udpmon_if_", "snmp": "udpmon_snmp_", "nic": "udpmon_nic_"}
    for kind, (dim, fields, units_of, units, long_name) in specs.items():
        labels = []
        for r in rows:
            for k, label in r[2]:
                if k == kind and label not in labels:
                    labels.append(label)
        if not labels:
            continue
        data = np.full((len(rows), len(labels), len(fields)), np.nan)
        for i, r in enumerate(rows):
            for j, label in enumerate(labels):
                if (kind, label) in r[2]:
                    data[i, j] = [float(v) for v in r[2][(kind, label)]]
        coords[dim] = ((dim,), np.array(labels, dtype=object), "1", f"{kind} block label as printed (-x)")
        for f, field in enumerate(fields):
            extras[prefix[kind] + field] = (("row", dim), data[:, :, f], units_of.get(field, units),
                                            long_name.format(f=field))
