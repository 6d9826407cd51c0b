"""The reproduction ledger: every published figure re-derived or cross-checked.

:func:`build_ledger` takes the rows of :func:`thruput.published.load` and returns one
ledger row per published figure, with a ``status``:

``reproduced``
    Re-derived from other published inputs within the printed precision (unit
    conversions, bandwidth-delay products, window bounds, the Reno/Mathis table, UDPmon's
    expected slopes from bus widths and clocks, calendar weekdays, ...).
``consistent``
    Not derivable, but agrees with every related published number (order statistics,
    physical bounds such as Ethernet goodput or ``streams x window / RTT``, the same
    figure printed twice).
``differs``
    Derivable, and off by more than rounding; ``note`` says by how much and the likeliest
    reason.
``erratum``
    Contradicts the document itself: a unit, an order statistic, a date, a value that
    cannot be.
``not-reproducible``
    A measurement or setting nothing else published constrains; it needs the raw data,
    which are gone.

Each check yields :class:`Finding` objects for the claims it touches; a claim with
several findings keeps the most serious status (the order of :data:`STATUSES`, erratum
first) and all their notes. Every check is spelled out below, seed by seed, with the
formulas of :mod:`thruput.stats.theory`.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pandas as pd

from . import units
from .published import config_frame
from .stats import theory
from .stats.theory import (ETH_WIRE_OVERHEAD, GIGE_BPS, IP_UDP_HEADER, TCP_IP_TS_HEADER,  # noqa: F401
                           gige_goodput)

__all__ = ["STATUSES", "LEDGER_COLUMNS", "Finding", "build_ledger", "summary", "theory_curves",
           "seed_000_hosts", "seed_001_apps", "seed_001_reno", "seed_001_latency",
           "seed_004_ping", "gige_goodput"]

#: statuses, most serious first: a claim with several findings keeps the first
STATUSES = ("erratum", "differs", "reproduced", "consistent", "not-reproducible")
LEDGER_COLUMNS = ["seed", "claim", "published_value", "published_unit", "derived_value",
                  "status", "note", "quote", "measures", "check"]

# --- physical constants the checks use (exact, from the standards) ------------------
#: Ethernet and IP framing (ETH_WIRE_OVERHEAD, TCP_IP_TS_HEADER, IP_UDP_HEADER, GIGE_BPS) and
#: gige_goodput are physics: thruput.stats.theory.
#: SONET line rates, bit/s (ANSI T1.105); OC-48c payload (SPE less path overhead)
SONET_BPS = {"OC3": 155.52e6, "OC12": 622.08e6, "OC48": 2488.32e6, "OC48_payload": 2396.16e6}
T3_BPS = 44.736e6
#: PCI 66 is clocked at 66.67 MHz (PCI 2.1); seed 001's 0.00188 us/byte uses it
PCI66_HZ = 200e6 / 3
#: Linux initial receive window: 4 segments (seed 002's SYN/ACK Win=5840 = 4 x 1460)
LINUX_INITIAL_RWND_SEGMENTS = 4
#: relative tolerance of "about", "~", "around" in running text
ABOUT = 0.05
_DEFAULT_NOTE = {
    "measurement": "a measurement no other published number constrains; needs the raw data, which are gone",
    "setting": "a stated setting or fact no other published number constrains",
}
#: measures that are settings/facts rather than measurements
_SETTINGS = {"cpus", "cpu_clock", "memory", "os_release", "kernel", "buffer", "window", "mss",
             "mtu", "bus_clock", "fsb_clock", "memory_clock", "pci_slots", "pci_buses",
             "disk_size", "disk_cache", "rotation", "stripe_size", "disks", "readahead",
             "mmrbc", "cpu_cache", "aimd_a", "aimd_b", "coalescence_delay", "duration",
             "packet_size", "spacing", "streams", "port", "interfaces", "hosts", "threads",
             "percentile", "bus_width", "document_date", "measurement_date", "config_date",
             "upgrade_date", "event_date", "gap_start", "gap_end", "sampling_interval",
             "points", "regions", "window_x_streams", "wscale"}


@dataclass(frozen=True)
class Finding:
    """What one check concluded about one claim.

    ``derived`` is in the claim's published unit (None if nothing was derived).
    """

    claim: str
    status: str
    derived: float | None = None
    note: str = ""
    check: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")


def _half_unit(value):
    """Half a unit in the last printed digit of ``value`` (53.3 -> 0.05, 5.4e-5 -> 5e-7)."""
    exp = Decimal(repr(float(value))).normalize().as_tuple().exponent
    return 0.5 * 10.0 ** exp if exp < 0 else 0.5 * 10.0 ** max(exp, 0)


def _round_sig(x, sig):
    if x == 0:
        return 0.0
    return round(x, sig - 1 - int(math.floor(math.log10(abs(x)))))


def _rel(a, b):
    return abs(a - b) / abs(b) if b else math.inf


class _MissingClaim(KeyError):
    """A seed's checks need a row the published frame does not have (a partial seed)."""


class _Ctx:
    """The published rows by id, and the findings collected so far."""

    def __init__(self, published):
        self.df = published.set_index("id", drop=False)
        self.findings = []
        #: seed -> the first missing claim that stopped its checks
        self.skipped = {}

    def _need(self, claim):
        if claim not in self.df.index:
            raise _MissingClaim(claim)

    def v(self, claim):
        """Published value (in its printed unit)."""
        self._need(claim)
        return float(self.df.at[claim, "value"])

    def si(self, claim):
        self._need(claim)
        return float(self.df.at[claim, "value_si"])

    def unit(self, claim):
        self._need(claim)
        return self.df.at[claim, "unit"]

    def date(self, claim):
        self._need(claim)
        return self.df.at[claim, "date"]

    def to_unit(self, claim, value_si):
        """``value_si`` (base unit) expressed in ``claim``'s published unit."""
        unit = self.unit(claim)
        return float(units.convert(value_si, units.BASE[units.dimension(unit)], unit))

    def add(self, claim, status, derived=None, note="", check=""):
        self._need(claim)
        self.findings.append(Finding(claim, status, None if derived is None else float(derived), note, check))

    def rounding(self, claim, derived, check, what, sig=None, tol=None, note=""):
        """``reproduced`` if ``derived`` rounds to the printed value, else ``differs``."""
        pub = self.v(claim)
        if sig is not None:
            ok = math.isclose(_round_sig(derived, sig), pub, rel_tol=1e-9)
            prec = f"{sig} significant figures"
        else:
            tol = _half_unit(pub) if tol is None else tol
            ok = abs(derived - pub) <= tol * (1 + 1e-9)
            prec = f"+-{tol:g}"
        sep = "; " if note else ""
        if ok:
            self.add(claim, "reproduced", derived, f"{what} = {derived:.6g} (within {prec}){sep}{note}", check)
        else:
            self.add(claim, "differs", derived,
                     f"{what} = {derived:.6g}, published {pub:g}: off by {derived - pub:+.3g} "
                     f"({100 * (derived - pub) / pub:+.2g}%){sep}{note}", check)

    def bound(self, claim, limit_si, what, check, note=""):
        """``consistent`` if the claim's value is at most ``limit_si``, else ``differs``."""
        value, limit = self.si(claim), limit_si
        shown = self.to_unit(claim, limit)
        sep = "; " if note else ""
        if value <= limit * (1 + 1e-9):
            self.add(claim, "consistent", shown, f"below {what} = {shown:.4g} {self.unit(claim)}{sep}{note}", check)
        else:
            self.add(claim, "differs", shown,
                     f"exceeds {what} = {shown:.4g} {self.unit(claim)} by {100 * (value / limit - 1):.0f}%{sep}{note}", check)


# --- generic checks --------------------------------------------------------------------
#: pairs (lower, upper) of statistics of one sample that must be ordered
_ORDER = [("min", "median"), ("min", "mean"), ("median", "max"), ("mean", "max"), ("min", "max"),
          ("range_low", "range_high")]
#: statistics that summarise many observations; when an order check fails they, not the
#: extreme single observations, are the likelier misprint
_CENTRAL = {"median", "mean", "iqr"}


def _check_order_statistics(ctx):
    """min <= median/mean <= max, low <= high, IQR <= max - min within every group."""
    df = ctx.df[(ctx.df["group"] != "") & ctx.df["value"].notna()]
    keys = [df["group"], df["measures"], df["config"]]
    for _, g in df.groupby(keys, sort=False):
        stats = {}
        for claim, stat in zip(g["id"], g["statistic"]):
            stats.setdefault(stat, claim)
        if len(stats) < 2:
            continue
        bad = set()
        checked = set()
        for lo, hi in _ORDER:
            if lo in stats and hi in stats:
                a, b = stats[lo], stats[hi]
                checked.update((a, b))
                if ctx.si(a) > ctx.si(b):
                    culprits = [c for c, s in ((a, lo), (b, hi)) if s in _CENTRAL] or [a, b]
                    for c in culprits:
                        bad.add(c)
                        other = b if c == a else a
                        ctx.add(c, "erratum", None,
                                f"order statistics contradict: {lo} {ctx.v(a):g} > {hi} {ctx.v(b):g} "
                                f"({ctx.unit(a)}; {other} is the other)", "order")
        if "iqr" in stats and "max" in stats:
            spread = ctx.si(stats["max"]) - (ctx.si(stats["min"]) if "min" in stats else 0.0)
            checked.add(stats["iqr"])
            if ctx.si(stats["iqr"]) > spread:
                bad.add(stats["iqr"])
                ctx.add(stats["iqr"], "erratum", None, "IQR larger than max - min", "order")
        for c in checked - bad:
            ctx.add(c, "consistent", None, "agrees with the other order statistics of its sample", "order")


def _check_dates(ctx):
    """Start before end, within each group."""
    df = ctx.df[ctx.df["unit"] == "datetime"]
    for _, g in df[df["group"] != ""].groupby("group"):
        by = dict(zip(g["measures"], g["id"]))
        if "start_time" in by and "end_time" in by:
            s, e = (pd.Timestamp(ctx.date(by[k])) for k in ("start_time", "end_time"))
            minutes = (e - s).total_seconds() / 60
            if minutes < 0:
                ctx.add(by["start_time"], "erratum", None,
                        f"starts {ctx.date(by['start_time'])}, after its end {ctx.date(by['end_time'])}", "dates")
            else:
                for k in ("start_time", "end_time"):
                    ctx.add(by[k], "consistent", None, f"start before end ({minutes:.0f} min)", "dates")


def _weekday(ctx, claim):
    """Check a ``weekday=`` in ``config`` against the calendar."""
    ctx._need(claim)
    cfg = dict(p.split("=", 1) for p in ctx.df.at[claim, "config"].split(";") if p)
    day = _dt.date.fromisoformat(ctx.date(claim)[:10]).strftime("%A")
    if day == cfg["weekday"]:
        ctx.add(claim, "reproduced", None, f"{ctx.date(claim)[:10]} was a {day}", "calendar")
    else:
        ctx.add(claim, "erratum", None, f"{ctx.date(claim)[:10]} was a {day}, not a {cfg['weekday']}", "calendar")


# --- seed 000 -------------------------------------------------------------------------
_HOSTS_000 = ["kangadata01", "kangadata02", "kangadata02-r2", "kangadata02-r3", "tersk07",
              "tersk07-r2", "kangadata03", "kangadata03-r2"]


def _checks_000(ctx):
    c = ctx.add
    mb = lambda claim: ctx.si(claim) / 8e6  # noqa: E731  bit/s -> MByte/s
    # text: Mbit/s vs MByte/s pairs
    c("000-iperf-avg-mbit", "differs", ctx.v("000-table-avg-mbit-kangadata02"),
      "the table gives 426 Mbit/s for the same run (14:28-15:21 1/29/01), and the text's own "
      "53.3 MByte/s is 426.4 Mbit/s; 425 is 1 Mbit/s (0.2%) off", "same figure twice")
    ctx.rounding("000-iperf-avg-mbyte", mb("000-table-avg-mbit-kangadata02"), "convert",
                 "426 Mbit/s (table, same run) / 8",
                 note="from the text's 425 Mbit/s it would be 53.1 (53.125)")
    c("000-iperf-8k-1s-kbit", "erratum", 64.8e3,
      "printed kbit/s, meant Mbit/s: 64.8 kbit/s is 0.0081 MByte/s, the same sentence says 8.14 "
      "MByte/s (65.1 Mbit/s), and BaBar saw ~10 MByte/s", "units")
    ctx.rounding("000-iperf-8k-1s-mbyte", 64.8 / 8, "convert",
                 "64.8 Mbit/s (reading the printed kbit/s as Mbit/s) / 8",
                 note="8.14 MByte/s is 65.1 Mbit/s; one of the two digits strings is slightly off")
    ctx.rounding("000-iperf-32k-1s-mbyte", mb("000-iperf-32k-1s-mbit"), "convert", "170 Mbit/s / 8")
    ctx.rounding("000-iperf-64k-1s-mbyte", mb("000-iperf-64k-1s-mbit"), "convert", "220 Mbit/s / 8")
    c("000-iperf-32k-1s-mbit", "consistent", None, "converted in the same sentence", "convert")
    c("000-iperf-64k-1s-mbit", "consistent", None, "converted in the same sentence", "convert")
    # window bounds with the LAN RTT of the same switch (datamove8, min 0.203 ms)
    lan_rtt = ctx.si("000-dm8-rtt-min")
    for claim, w in (("000-iperf-8k-1s-mbyte", 8192), ("000-iperf-32k-1s-mbit", 32768),
                     ("000-iperf-64k-1s-mbit", 65536)):
        limit = theory.window_limited_throughput(w, lan_rtt)
        ctx.bound(claim, limit, f"1 x {w // 1024} KiB / 0.203 ms (min RTT on the same switch, datamove8)",
                  "window bound")
    c("000-intro-babar-rate", "consistent", 8.14,
      "1 stream with the 8 KiB default window measured 8.14 MByte/s, below 10", "cross-check")
    c("000-cfg-interface", "consistent", None, "no throughput in the document exceeds it (max 807 Mbit/s)", "bound")
    c("000-cfg-os-kangadata02", "erratum", 5.7,
      "the table gives Solaris 5.7 for Kangadata02 in all three columns and 5.6 for Kangadata01", "cross-check")
    for h in ("kangadata02", "kangadata02-r2", "kangadata02-r3"):
        c(f"000-table-os-{h}", "consistent", None,
          "the three Kangadata02 columns agree; the Configuration text says 5.6 (see 000-cfg-os-kangadata02)", "cross-check")
    for claim in ("000-cfg-default-window", "000-rec-window-from"):
        c(claim, "consistent", None, "the Solaris default window is 8 kBytes in every section", "same figure")
    c("000-dm8-default-window", "consistent", None, "the Solaris default window is 8 kBytes in every section", "same figure")
    for claim in ("000-iperf-window-min", "000-iperf-window-max", "000-iperf-streams-min", "000-iperf-streams-max"):
        c(claim, "consistent", None, "the sweep's quoted runs (1 stream, 8/32/64 KiB) lie inside it", "cross-check")
    c("000-iperf-max", "consistent", ctx.v("000-table-max-kangadata02"),
      "the table's max for this run is 585 Mbit/s ('just under 600')", "cross-check")
    for claim in ("000-load-start", "000-load-end"):
        other = claim.replace("000-load-", "000-table-") + "-kangadata02"
        same = ctx.date(claim) == ctx.date(other)
        c(claim, "consistent" if same else "differs", None,
          "same as the table's Kangadata02 column" if same else f"table says {ctx.date(other)}", "same figure")
    c("000-load-spike", "reproduced", ctx.v("000-load-halving") / ctx.v("000-load-duty"),
      "~500 Mbit/s while iperf runs x 10 s on / 20 s = 250 Mbit/s average", "duty cycle")
    c("000-load-halving", "consistent", ctx.v("000-table-max-kangadata02"),
      "between the run's mean 426 and max 585 Mbit/s", "cross-check")
    c("000-load-duty", "reproduced", 2, "(10 s + 10 s) / 10 s", "duty cycle")
    c("000-iperf-duration", "consistent", None, "the same 10 s on / 10 s off cycle", "duty cycle")
    c("000-iperf-break", "consistent", None, "the same 10 s on / 10 s off cycle", "duty cycle")
    # per-host table
    for h in _HOSTS_000:
        a_bit, a_byte = f"000-table-avg-mbit-{h}", f"000-table-avg-mbyte-{h}"
        derived = mb(a_bit)
        note = "a tie (x.5) printed rounded down" if derived % 1 == 0.5 else ""
        ctx.rounding(a_byte, derived, "convert", f"{ctx.v(a_bit):g} Mbit/s / 8", note=note)
        c(a_bit, "consistent", None, "the MByte/s row below agrees", "convert")
        for stat in ("median", "max", "iqr"):
            ctx.bound(f"000-table-{stat}-{h}", GIGE_BPS, "the 1000 Mbit/s interfaces", "bound")
        ctx.bound(f"000-table-max-{h}", gige_goodput(), "TCP goodput of GigE at 1500-byte MTU", "bound")
        lost, sent = f"000-table-loss-{h}", f"000-table-pings-{h}"
        ok = ctx.v(lost) <= ctx.v(sent)
        c(lost, "consistent" if ok else "erratum", None,
          f"{ctx.v(lost):g} of {ctx.v(sent):g} pings = {100 * ctx.v(lost) / ctx.v(sent):.2g}% loss", "bound")
        c(sent, "consistent", None, "1360 loaded pings in every column", "same figure")
        c(f"000-table-rtt-min-{h}", "consistent", None,
          "0 ms is below the 1 ms resolution of Solaris ping" if ctx.v(f"000-table-rtt-min-{h}") == 0
          else "sub-ms value although Solaris ping reports whole ms (NIKHEF ping?)", "resolution")
        for k in ("cpus", "clock", "memory"):
            c(f"000-table-{k}-{h}", "not-reproducible", None, _DEFAULT_NOTE["setting"], "default")
    c("000-table-median-kangadata03-r2", "erratum", 345e6,
      "printed 345 bit/s; 345 Mbit/s fits its mean 335 and max 502 Mbit/s", "units")
    c("000-table-avg-mbit-tersk07", "consistent", None,
      "printed 'MBits/s'; the 59 MBytes/s below confirms bits", "units")
    c("000-table-start-tersk07-r2", "erratum", None,
      "printed 2/1/31; 2/1/01 (2001-02-01T07:53) makes it end 53 min later at 8:46 2/1/01 "
      "like every other column's 53-56 min", "dates")
    durations = [(pd.Timestamp(ctx.date(f"000-table-end-{h}")) - pd.Timestamp(ctx.date(f"000-table-start-{h}")))
                 .total_seconds() / 60 for h in _HOSTS_000 if h != "tersk07-r2"]
    for h in _HOSTS_000:
        if h != "tersk07-r2":
            c(f"000-table-end-{h}", "consistent", None,
              f"runs last {min(durations):.0f}-{max(durations):.0f} min in every column", "dates")
    # datamove8 -> datamove7
    bdp8 = theory.bdp(GIGE_BPS, ctx.si("000-dm8-rtt-avg"))
    ctx.rounding("000-dm8-bdp", bdp8 / 1024, "bdp", "1 Gbit/s x 0.434 ms (avg RTT) in KiB", tol=ABOUT * 32,
                 note="32 kB is the datamove38 section's figure (avg RTT 0.252 ms), copied into this section; "
                      f"with the min RTT 0.203 ms it is {theory.bdp(GIGE_BPS, 0.203e-3) / 1024:.1f} KiB")
    bdp38 = theory.bdp(GIGE_BPS, ctx.si("000-dm38-rtt-avg"))
    ctx.rounding("000-dm38-bdp", bdp38 / 1024, "bdp", "1 Gbit/s x 0.252 ms (avg RTT) in KiB", tol=ABOUT * 32,
                 note="'about'; 31.5 kB decimal")
    for claim, w, rtt_claim in (("000-dm8-8k", 8192, "000-dm8-rtt-min"), ("000-dm8-32k", 32768, "000-dm8-rtt-min"),
                                ("000-dm38-8k", 8192, "000-dm38-rtt-min"), ("000-dm38-32k", 32768, "000-dm38-rtt-min")):
        avg_claim = rtt_claim.replace("min", "avg")
        avg_bound = theory.window_limited_throughput(w, ctx.si(avg_claim)) / 1e6
        ctx.bound(claim, theory.window_limited_throughput(w, ctx.si(rtt_claim)),
                  f"{w // 1024} KiB / min ping RTT {ctx.v(rtt_claim):g} ms", "window bound",
                  note=f"with the avg RTT {ctx.v(avg_claim):g} ms the bound is {avg_bound:.0f} Mbit/s")
    ctx.bound("000-dm8-512k-15", GIGE_BPS, "the 1 Gbit/s interface", "bound")
    ctx.bound("000-dm38-512k-4", GIGE_BPS, "the 1 Gbit/s interface", "bound")
    c("000-dm8-reported", "consistent", 176, "iperf with the 8 KiB default window gave ~176 Mbit/s", "cross-check")
    c("000-dm-mhz-gain", "reproduced", 100 * (ctx.v("000-dm38-clock") / ctx.v("000-dm8-clock") - 1),
      "450 MHz / 400 MHz - 1 = 12.5% > 10%", "ratio")
    for claim in ("000-dm8-lo-rtt-min", "000-dm8-lo-rtt-avg", "000-dm8-lo-rtt-max"):
        c(claim, "consistent", None,
          "the loopback figures are identical in the datamove38 section (copied or re-measured)", "same figure")
    c("000-dm38-cpus", "not-reproducible", None,
      "stated fact; the heading says datamove28/29, the text datamove38/39", "default")
    c("000-page-created", "consistent", None,
      "the day of the first measurements (1/29/01); later sections (to 3/15/01) were added after", "dates")
    c("000-table-end-tersk07-r2", "consistent", None,
      "53 min after the start once the start's year is read as 2001 (see 000-table-start-tersk07-r2)", "dates")
    c("000-dm8-interface", "consistent", None, "no datamove throughput exceeds it (max 'over 700 Mbit/s')", "bound")
    for claim in ("000-dm8-1m", "000-dm38-4m"):
        c(claim, "consistent", None,
          "far above the ~32 kB bandwidth-delay product, so a larger window cannot help one stream", "bdp")
    c("000-dm38-max-buf", "consistent", None,
      "4194304 bytes = 4 MiB, the largest window the text tried ('4MBytes')", "same figure")
    c("000-dm38-cwnd-max", "consistent", None, "the same ndd settings as pharlap in seed 002", "cross-document")
    c("000-rec-window-to", "consistent", None, "the 64 KiB single-stream run gave 220 Mbit/s", "cross-check")
    c("000-rec-factor", "consistent", ctx.v("000-load-halving") / ctx.v("000-iperf-64k-1s-mbit"),
      f"~500 Mbit/s max / 220 Mbit/s = {500 / 220:.2f}; with the run's max 585 it is {585 / 220:.2f}", "ratio")


# --- seed 001 -------------------------------------------------------------------------
def _checks_001(ctx):
    c = ctx.add
    c("001-p4dp8-fsb-high", "erratum", 533,
      "Xeon front-side buses run at 400 or 533 MHz, and the document gives 533 MHz for the SLAC Dell "
      "Xeons; 522 is probably a misprint of 533", "cross-check")
    c("001-p4dp8-udma", "reproduced", 100, "UDMA/100 is 100 MByte/s by name", "standard")
    ddr = theory.bus_rate(128, 2 * 200e6)  # DDR: 2 transfers per clock, two 64-bit channels
    c("001-h8daf-mem-bw", "erratum", ddr * 8 / 1e9,
      f"200 MHz DDR on a 128-bit (dual-channel) bus is {ddr / 1e9:.1f} GByte/s = {ddr * 8 / 1e9:.1f} Gbit/s; "
      "the printed 6.4 is GByte/s, not Gbit", "units")
    # UDPmon expected slopes
    for tag, width, clock in (("32", 32, 33e6), ("64", 64, PCI66_HZ)):
        pci = theory.expected_latency_slope([(width, clock)])
        for leg in ("send", "recv"):
            ctx.rounding(f"001-370dle-{tag}-pci-{leg}", pci, "expected slope",
                         f"1 / ({width} bit x {clock / 1e6:.2f} MHz) in us/byte",
                         note="PCI 66 runs at 66.67 MHz; 66.0 MHz would give 0.00189" if tag == "64"
                         else "33.0 MHz; the true PCI clock 33.33 MHz would give 0.00750")
        gige = theory.expected_latency_slope([GIGE_BPS / 8])
        ctx.rounding(f"001-370dle-{tag}-gige", gige, "expected slope", "1 / 125 MByte/s in us/byte")
        total = theory.expected_latency_slope([(width, clock), GIGE_BPS / 8, (width, clock)])
        ctx.rounding(f"001-370dle-{tag}-expect", total, "expected slope", "PCI + GigE + PCI (no memory copies)")
        measured = f"001-370dle-{tag}-slope"
        extra = ctx.v(measured) - total
        c(measured, "differs", total,
          f"measured slope exceeds the data-path sum by {extra:.4f} us/byte ({100 * extra / total:.0f}%): "
          f"one more copy at {1 / extra:.0f} MByte/s would explain it (the slide asks 'Possible extra data moves?')",
          "expected slope")
        c(f"001-370dle-{tag}-intercept", "not-reproducible", None, _DEFAULT_NOTE["measurement"], "default")
    total66 = theory.expected_latency_slope([(64, PCI66_HZ), GIGE_BPS / 8, (64, PCI66_HZ)])
    ctx.rounding("001-p4dp6-expect", total66, "expected slope", "PCI 64 bit 66.67 MHz + GigE + PCI")
    c("001-p4dp6-slope", "differs", total66,
      f"{ctx.v('001-p4dp6-slope'):g} us/byte is below the {total66:.4f} us/byte the PCI and GigE transfers "
      "alone need; the fit runs across the steps in the latency (the slide: 'Some steps')", "expected slope")
    c("001-p4dp6-slope-flat", "differs", total66,
      f"{100 * (ctx.v('001-p4dp6-slope-flat') / total66 - 1):.0f}% above the data-path sum; "
      "an extra copy or CSR access per packet", "expected slope")
    # UDP throughput vs wire limits
    udp_max = gige_goodput(protocol="udp")
    for claim in ("001-370dle-32-max", "001-370dle-64-max", "001-370dle-pro1000-max", "001-p4dp6-max",
                  "001-ibm-max", "001-switch-limit"):
        ctx.bound(claim, udp_max, "UDP payload rate of GigE at 1472-byte datagrams", "bound")
    ctx.bound("001-p4dp8-max", GIGE_BPS, "the GigE line rate", "bound",
              note=f"above the {udp_max / 1e6:.0f} Mbit/s UDP payload limit, so it must count frame bytes")
    for claim in ("001-370dle-32-spacing", "001-370dle-64-spacing", "001-370dle-pro1000-spacing-free", "001-ibm-spacing-free"):
        maxc = {"001-370dle-32-spacing": "001-370dle-32-max", "001-370dle-64-spacing": "001-370dle-64-max",
                "001-370dle-pro1000-spacing-free": "001-370dle-pro1000-max", "001-ibm-spacing-free": "001-ibm-max"}[claim]
        t = 1472 * 8 / ctx.si(maxc) * 1e6
        c(claim, "not-reproducible", None,
          f"packet size not stated; at 1472 bytes the max throughput {ctx.v(maxc):g} Mbit/s means one packet "
          f"every {t:.1f} us", "spacing")
    # wire time of a 1400-byte UDP payload on GigE
    wire_us = (1400 + IP_UDP_HEADER + ETH_WIRE_OVERHEAD) * 8 / GIGE_BPS * 1e6
    c("001-370dle-pci-wait10", "reproduced", wire_us,
      f"a 1400-byte datagram occupies GigE for {wire_us:.2f} us > 10 us, so frames go back-to-back", "wire time")
    c("001-370dle-pci-fiber20", "reproduced", 20,
      f"20 us > {wire_us:.2f} us wire time, so the 20 us spacing survives onto the fibre", "wire time")
    c("001-370dle-pci-wait20", "consistent", None, "the fibre shows the same 20 us spacing", "wire time")
    occ = (ctx.v("001-p4dp6-pci-send") + ctx.v("001-p4dp6-pci-recv")) / ctx.v("001-p4dp6-pci-wait") * 100
    ctx.rounding("001-p4dp6-pci-occ", occ, "occupancy", "(5.14 us send + 3 us receive) / 12 us", tol=ABOUT * 68)
    occ_ibm = ctx.v("001-ibm-pci-send") / ctx.v("001-ibm-pci-spacing") * 100
    c("001-ibm-pci-occ", "consistent", occ_ibm,
      f"9.3 us on the send bus per 11 us = {occ_ibm:.1f}% ('~82%')", "occupancy")
    pci64_33 = 1400 / theory.bus_rate(64, 33e6) * 1e6
    c("001-ibm-pci-send", "consistent", pci64_33,
      f"more than the {pci64_33:.2f} us the 1400 data bytes need on 64-bit 33 MHz PCI (setup, descriptors)", "bound")
    c("001-370dle-pro1000-occ-66", "consistent", None,
      "lower than the 82% at 33 MHz; 'data transfers half as long' at twice the clock", "cross-check")
    # interrupt coalescence (TCP)
    tcp_max = gige_goodput()
    for rx in (0, 20, 80):
        for end in ("low", "high"):
            ctx.bound(f"001-coal-rx{rx}-{end}", tcp_max, "TCP goodput of GigE (1500 MTU, timestamps)", "bound",
                      note="no TCP stream can carry 980 Mbit/s of data over GigE; the +-50 Mbit/s jitter of "
                           "uncoalesced interrupts is in the reported rate" if (rx, end) == (0, "high") else "")
    for rx in (20, 80):
        half = (ctx.v(f"001-coal-rx{rx}-high") - ctx.v(f"001-coal-rx{rx}-low")) / 2
        ctx.rounding(f"001-coal-rx{rx}-pm", half, "range", "half the printed range")
    half0 = (ctx.v("001-coal-rx0-high") - ctx.v("001-coal-rx0-low")) / 2
    c("001-coal-rx0-pm", "differs", half0,
      f"half the printed range 820-980 is {half0:g} Mbit/s, not 50 (for Rx 20 and Rx 80 the +- is "
      "exactly half the range); 50 may be a standard deviation", "range")
    data_phase = 1400 / theory.bus_rate(64, PCI66_HZ) * 1e6
    for claim in ("001-p4dp6-pci-send", "001-p4dp6-pci-recv", "001-370dle-pci-sendrecv"):
        c(claim, "consistent", data_phase,
          f"at least the {data_phase:.2f} us that 1400 data bytes need on 64-bit 66 MHz PCI", "bound")
    c("001-ibm-pci-recv", "consistent", pci64_33,
      f"at least the {pci64_33:.2f} us that 1400 data bytes need on 64-bit 33 MHz PCI", "bound")
    c("001-10ge-user", "consistent", 16144 - IP_UDP_HEADER,
      "below the 16116-byte UDP payload a 16144-byte MTU allows", "bound")
    c("001-sc04-memory", "erratum", 1024,
      "1 MByte of memory cannot run a 2.6 kernel and RAID0 benchmarks of 2 GByte files; 1 GByte is meant", "units")
    for claim in ("001-gridftp-write", "001-gridftp-alt-high"):
        c(claim, "consistent", None, "the 800 Mbit/s peaks equal the RAID0 write rate", "cross-check")
    c("001-raid0-write", "consistent", None, "the RAID0 write rate of the GridFTP slide (800 Mbit/s)", "same figure")
    c("001-raid0-read", "consistent", None, "8% above the 960 Mbit/s RAID0 read of the GridFTP slide", "cross-check")
    c("001-gridftp-read", "consistent", None, "8% below the 1040 Mbit/s RAID0 read of the RAID slide", "cross-check")
    c("001-seek-published", "consistent", None, "below the measured mean 14.1 ms by about half a revolution", "cross-check")
    c("001-p4dp8-fsb-low", "consistent", None, "the 400 MHz FSB of the DataTAG and OpenLab PCs", "same figure")
    c("001-h8daf-mem-clock", "consistent", None, "used for 001-h8daf-mem-bw", "input")
    c("001-mbng-core", "consistent", None, "above the 1 GEth access links, so the hosts set the limit", "bound")
    c("001-summary-pcix", "consistent", None, "the 133 MHz PCI-X of the other boards", "same figure")
    for claim in ("001-farm-rtt", "001-farm-first-rtts", "001-farm-later-rtts"):
        c(claim, "consistent", None, "their products are the quoted 380 and 260 ms", "input")
    for claim in ("001-sc04-disk-buffer", "001-sc04-disks", "001-sc04-bbftp-file"):
        c(claim, "consistent", None, "an input of a derivation on this slide", "input")
    # TCP stacks and recovery
    for claim in ("001-reno-a", "001-reno-aimd-a", "001-reno-b", "001-reno-aimd-b"):
        c(claim, "consistent", None, "Reno's a = 1, b = 1/2 stated twice alike (RFC 5681)", "same figure")
    for claim in ("001-scalable-a", "001-scalable-b"):
        c(claim, "consistent", None, "Scalable TCP's published constants (Kelly 2003: a = 0.01, b = 0.125)", "reference")
    rec = theory.reno_recovery_time(GIGE_BPS, ctx.si("001-hp-mbng-rtt"), 1500)
    ctx.rounding("001-hp-mbng-recover", rec, "reno_recovery_time", "1 Gbit/s x (6.2 ms)^2 / (2 x 1500 bytes)")
    c("001-hp-mbng-rtt", "consistent", None, "the MB-NG slide says rtt 6 ms", "same figure")
    c("001-mbng-rtt", "consistent", None, "6.2 ms measured on the MB-NG slide", "same figure")
    mathis = theory.mathis_throughput(1500, ctx.si("001-hp-mbng-rtt"), ctx.v("001-hp-mbng-drop")) / 1e6
    c("001-hp-mbng-drop", "consistent", None,
      f"an input; Reno could hold only {mathis:.0f} Mbit/s at this loss and RTT (Mathis, C = sqrt(3/2))", "mathis")
    rec_dt = theory.reno_recovery_time(GIGE_BPS, ctx.si("001-hp-datatag-rtt"), 1500)
    need_c = ctx.si("001-hp-datatag-recover") * 2 * 1500 * 8 / ctx.si("001-hp-datatag-rtt") ** 2
    c("001-hp-datatag-recover", "differs", rec_dt / 60,
      f"C x RTT^2 / (2 MSS) at 1 Gbit/s, 128 ms, 1500 bytes = {rec_dt / 60:.1f} min, not ~20; "
      f"20 min needs C = {need_c / 1e9:.2f} Gbit/s (a rough 'would take' estimate)", "reno_recovery_time")
    mathis_dt = theory.mathis_throughput(1500, ctx.si("001-hp-datatag-rtt"), ctx.v("001-hp-datatag-drop")) / 1e6
    c("001-hp-datatag-drop", "consistent", None,
      f"an input; Reno could hold only {mathis_dt:.0f} Mbit/s at 1e-6 loss and 128 ms (Mathis)", "mathis")
    c("001-hp-datatag-rtt", "consistent", None, "the DataTAG slide says rtt 120 ms", "same figure")
    c("001-datatag-rtt", "consistent", None, "128 ms on the DataTAG demonstration slide", "same figure")
    # Reno table
    rtt = ctx.si("001-reno-rtt")
    for k in ("10mbps", "100mbps", "1gbps", "10gbps"):
        cap = ctx.si(f"001-reno-{k}-rate")
        w = theory.bdp_packets(cap, rtt, 1500)
        ctx.rounding(f"001-reno-{k}-window", w, "bdp_packets", f"{cap:g} bit/s x 0.2 s / 1500 bytes", sig=2)
        # the table rounds W to 2 significant figures, then takes W/2 round trips: (W/2) x RTT
        t = theory.reno_recovery_time(cap, rtt, 1500)
        t_table = _round_sig(w, 2) / 2 * rtt
        claim = f"001-reno-{k}-recovery"
        ctx.rounding(claim, ctx.to_unit(claim, t_table), "reno_recovery_time",
                     f"(W/2) x RTT with W rounded to {_round_sig(w, 2):g} pkts = {t_table:.0f} s",
                     tol=0.5, note=f"unrounded C x RTT^2 / (2 MSS) = {t:.1f} s "
                                   f"({_round_sig(t, 2):g} s to 2 significant figures); printed as h/min/s")
        ctx.rounding(f"001-reno-{k}-loss", theory.mathis_loss_rate(cap, 1500, rtt), "mathis_loss_rate",
                     "(8 MSS C / (RTT x throughput))^2, C = sqrt(3/2)", sig=2)
        c(f"001-reno-{k}-rate", "consistent", None, "an input of the table", "input")
    c("001-reno-rtt", "consistent", None, "the table's input ('for rtt of ~200 ms')", "input")
    c("001-reno-uk", "consistent", None, "MB-NG (UK) rtt 6-6.2 ms elsewhere in the document", "cross-check")
    c("001-reno-europe", "consistent", None, "Manchester-CERN rtt 20 ms elsewhere in the document", "cross-check")
    # disks
    drives = ctx.v("001-ata-drives-low") / (ctx.v("001-ata-fail-low") / 100)
    drives_hi = ctx.v("001-ata-drives-high") / (ctx.v("001-ata-fail-high") / 100)
    for claim in ("001-ata-fail-low", "001-ata-fail-high", "001-ata-drives-low", "001-ata-drives-high"):
        c(claim, "consistent", None,
          f"2% -> 30 and 3% -> 45 drives both imply {drives:.0f} = {drives_hi:.0f} drives", "ratio")
    per_week = (ctx.v("001-ata-drives-low") / 52, ctx.v("001-ata-drives-high") / 52)
    c("001-ata-week", "consistent", per_week[1],
      f"30-45 per year is {per_week[0]:.2f}-{per_week[1]:.2f} per week", "ratio")
    afr = 8766 / ctx.v("001-ata-mtbf") * 100
    c("001-ata-mtbf", "consistent", None,
      f"8766 h/yr / 400000 h = {afr:.2f}% annual failure rate, inside the quoted 2-3%", "ratio")
    ctx.rounding("001-drive-slower", 100 * (1 - 5400 / 7200), "ratio", "1 - 5400 rpm / 7200 rpm",
                 note="sequential rate scales with rotation speed at equal density")
    ctx.rounding("001-transfer-effect", 100 * (1 - ctx.v("001-transfer-inner") / ctx.v("001-transfer-outer")),
                 "ratio", "1 - 35 / 58")
    c("001-seek-mean", "consistent", None,
      "mean - published = 5.1 ms, about half a revolution (5.6 ms at 5400 rpm, 4.2 ms at 7200)", "cross-check")
    raid = 6 * ctx.si("001-sc04-disk-buffer")
    for claim in ("001-sc04-read", "001-sc04-write"):
        ctx.bound(claim, raid, "six disks x 75 MByte/s", "bound")
    c("001-nd-write", "consistent", None, "the same RAID0 system wrote 1725 Mbit/s on the SC2004 slide (0.6%)", "cross-check")
    for mtu in ("1500", "9000"):
        ctx.rounding(f"001-nd-drop-{mtu}", 100 * (1 - ctx.v(f"001-nd-write-{mtu}") / ctx.v("001-nd-write")),
                     "ratio", f"1 - {ctx.v(f'001-nd-write-{mtu}'):g} / 1735", tol=0.5)
        c(f"001-nd-write-{mtu}", "consistent", None, "its drop is computed on the slide", "ratio")
    c("001-gridftp-rate", "consistent", None, "between the alternating 600/800 Mbit/s and zero", "bound")
    # applications over the wide area
    http_bound = theory.window_limited_throughput(2**20, ctx.si("001-hp-mbng-rtt"))
    ctx.bound("001-http-rate", http_bound, "1 MiB / 6.2 ms (MB-NG rtt)", "window bound")
    bdp = theory.bdp(GIGE_BPS, ctx.si("001-sc04-bbftp-rtt"))
    ctx.rounding("001-sc04-bbftp-socket", bdp / 1e6, "bdp", "1 Gbit/s x 177 ms in MB")
    sock_bound = theory.window_limited_throughput(ctx.si("001-sc04-bbftp-socket"), ctx.si("001-sc04-bbftp-rtt"))
    for claim in ("001-sc04-bbftp-std", "001-sc04-bbftp-scal", "001-sc04-bbcp-std", "001-sc04-bbcp-scal"):
        ctx.bound(claim, sock_bound, "22 MB / 177 ms", "window bound")
    size = ctx.si("001-sc04-bbftp-file") * 8
    overhead = size / ctx.si("001-sc04-bbcp-scal") - size / ctx.si("001-sc04-bbftp-scal")
    ctx.rounding("001-sc04-bbcp-overhead", overhead, "transfer time", "2e9 bytes at 701 Mbit/s minus at 875 Mbit/s",
                 note="with 2 GiB it would be 4.9 s")
    c("001-sc04-bbftp-rtt", "consistent", None, "UKLight London-Chicago-London rtt 180 ms on another slide", "cross-check")
    c("001-uklight-rtt", "consistent", None, "177 ms on the bbftp slide", "cross-check")
    ctx.rounding("001-farm-first-ms", ctx.v("001-farm-first-rtts") * ctx.v("001-farm-rtt"), "round trips",
                 "19 x 20 ms")
    ctx.rounding("001-farm-later-ms", ctx.v("001-farm-later-rtts") * ctx.v("001-farm-rtt"), "round trips",
                 "13 x 20 ms")
    per_event = ctx.si("001-farm-resp") * 8 / (ctx.si("001-farm-later-ms")) / 1e6
    c("001-farm-achievable", "not-reproducible", None,
      f"1 MByte per 260 ms is {per_event:.0f} Mbit/s; 120 Mbit/s is the path's, not derived here", "default")
    rate = 1 / ctx.si("001-sfi-time")
    c("001-sfi-rate", "differs", rate,
      f"1 / 115 ms = {rate:.1f} events/s, not ~4; ~4 ev/s fits ~250 ms per event (request round trips "
      "and the receive-buffer stalls on the trace)", "ratio")
    ctx.rounding("001-sfi-mss", 1500 - TCP_IP_TS_HEADER, "mss", "1500 - 20 IP - 20 TCP - 12 timestamps")
    # applications x stacks table
    apps = ctx.df[ctx.df["group"] == "001-apps"].index
    for claim in apps:
        ctx.bound(claim, tcp_max, "TCP goodput of GigE (1500 MTU, timestamps)", "bound")
    for claim, other in (("001-web100-babar", "001-apps-iperf-standard-babar-superjanet4"),
                         ("001-web100-line", "001-apps-iperf-highspeed-supermicro-mb-ng"),
                         ("001-sc04-bbftp-std", "001-apps-bbftp-standard-sc2004-uklight"),
                         ("001-sc04-bbftp-scal", "001-apps-bbftp-scalable-sc2004-uklight")):
        same = ctx.v(claim) == ctx.v(other)
        for x in (claim, other):
            c(x, "consistent" if same else "differs", None,
              f"{'same as' if same else 'differs from'} {other if x == claim else claim}", "same figure")
    ctx.rounding("001-web100-line", tcp_max / 1e6, "goodput", "TCP goodput of GigE (1448 / 1538 x 1000 Mbit/s)",
                 tol=2, note="line speed for TCP payload")
    for claim in ("001-bbcp-raid5-mean", "001-tyan-mem-mem", "001-sc04-disk-tcp-disk"):
        ctx.bound(claim, GIGE_BPS, "the GigE line rate", "bound")
    pcix = theory.bus_rate(64, 133e6) * 8
    for claim in ("001-10ge-datatag-rate", "001-10ge-openlab-rate", "001-10ge-slac-rate", "001-10ge-pcix-measured",
                  "001-10ge-pcix-4096", "001-10ge-pcix-expected"):
        ctx.bound(claim, pcix, "64-bit 133 MHz PCI-X (8.5 Gbit/s)", "bound")
    c("001-10ge-pcix-4096", "consistent", None, "same as 'Measured 5.7 Gbit/s'", "same figure")
    c("001-10ge-openlab-rate", "consistent", None, "same as the 5.7 Gbit/s of the PCI-X tuning slide", "same figure")
    c("001-sc04-pcix", "consistent", None, "the 133 MHz PCI-X bus of the other boards", "same figure")


# --- seed 002 -------------------------------------------------------------------------
def _checks_002(ctx):
    c = ctx.add
    c("002-t3-capacity", "consistent", T3_BPS / 1e6,
      f"a T3 runs at {T3_BPS / 1e6:.3f} Mbit/s; 43 is a little below it (framing), and the "
      "30 Mbit/s effective rate is below both", "standard")
    c("002-upgrade-factor", "consistent", ctx.v("002-bottleneck") / ctx.v("002-t3-effective"),
      "53 / 30 Mbit/s = 1.8 for the capacities; 'over 2' for throughputs needs the T3 runs below 26.5 Mbit/s, "
      "plausible below the 30 Mbit/s effective capacity", "ratio")
    c("002-sep2001-caption", "erratum", None, "the caption says Sep 28 2001, the text September 26, 2001", "dates")
    c("002-sep2001-date", "consistent", None, "the caption says Sep 28 (see 002-sep2001-caption)", "dates")
    c("002-pharlap-clock", "differs", 336,
      "seed 003 (Nov 2000) gives pharlap 6 processors at 336 MHz; 226 is probably a misprint", "cross-document")
    rtt = ctx.si("002-snoop-synack-time")
    w64 = theory.window_limited_throughput(65536, rtt, streams=8)
    c("002-sep2001-max", "differs", w64 / 1e6,
      f"8 streams x 64 KiB / 50.1 ms (the handshake RTT of Nov 2001) = {w64 / 1e6:.1f} Mbit/s < 118; "
      "118 Mbit/s needs RTT <= 35.5 ms or windows above 64 KiB (Linux grants twice the requested buffer; "
      "wscale 1 allows 128 KiB)", "window bound")
    ctx.bound("002-sep2001-max", SONET_BPS["OC3"], "the OC3 line rate", "bound")
    for claim in ("002-sep2001-streams", "002-sep2001-window"):
        c(claim, "consistent", None, "the conditions of the 118 Mbit/s maxima", "cross-check")
    ctx.rounding("002-oc12", SONET_BPS["OC12"] / 1e6, "standard", "OC-12 line rate 622.08 Mbit/s")
    c("002-oc3", "reproduced", SONET_BPS["OC3"] / 1e6, "OC-3 line rate (not printed)", "standard")
    for a, b in (("002-upgrade-date", "002-nov6-date"), ("002-nov6-date", "002-nov7-date"), ("002-nov7-date", "002-nov8-date")):
        ok = ctx.date(a) < ctx.date(b)
        c(b, "consistent" if ok else "erratum", None, f"after {a} ({ctx.date(a)})" if ok else f"not after {a}", "dates")
    c("002-upgrade-date", "consistent", None, "before the Nov 6 repeat; the wiggum iperf server ran since Nov06 (ps)", "dates")
    c("002-nov6-64mb", "erratum", 64 / 1024,  # 64 KiB, in the printed MiB
      "64 MBytes: the sweep never went above 8 MBytes and the explanation is the 64 KByte receiver "
      "window, so 64 KBytes is meant", "units")
    c("002-wscale-text", "erratum", ctx.v("002-snoop-synack-wscale"),
      "the snoop trace shows wscale 1 in wiggum's SYN/ACK, as the next paragraph says", "trace")
    ctx.rounding("002-wscale-text-max", 65535 / 1024, "window", "wscale 0: 65535 bytes in KiB", tol=0.01)
    ctx.rounding("002-wscale-trace-max", 65535 * 2 ** ctx.v("002-snoop-synack-wscale") / 1024, "window",
                 "65535 x 2^wscale(1) bytes in KiB", tol=0.01)
    c("002-wscale-trace-text", "reproduced", ctx.v("002-snoop-synack-wscale"), "the SYN/ACK's wscale 1", "trace")
    c("002-anl-max-rwin", "consistent", None,
      "wscale 0 would cap the window at 64 KiB; the trace shows wscale 1 (128 KiB)", "trace")
    ctx.rounding("002-snoop-synack-win", LINUX_INITIAL_RWND_SEGMENTS * ctx.v("002-snoop-synack-mss"), "window",
                 "Linux initial window 4 x MSS 1460")
    for claim in ("002-snoop-syn-mss", "002-snoop-synack-mss"):
        ctx.rounding(claim, 1500 - 40, "mss", "Ethernet MTU 1500 - 20 IP - 20 TCP")
    rate = ctx.si("002-iperf-transfer") * 8 / ctx.si("002-iperf-interval") / 1e6
    lo = 1.55 * 2**20 * 8 / 1.15 / 1e6
    hi = 1.65 * 2**20 * 8 / 1.05 / 1e6
    ok = lo <= ctx.v("002-iperf-rate") <= hi
    c("002-iperf-rate", "reproduced" if ok else "differs", rate,
      f"1.6 MiB / 1.1 s = {rate:.1f} Mbit/s; with the printed rounding of both ({lo:.1f}-{hi:.1f} Mbit/s) "
      "11.8 fits", "convert")
    ctx.bound("002-iperf-rate", theory.window_limited_throughput(131070, rtt), "128 KiB / 50.1 ms", "window bound")
    for claim in ("002-iperf-w", "002-iperf-wsize", "002-server-window"):
        c(claim, "consistent", None, "512 KByte on the command line, in iperf's banner and on the server (ps)", "same figure")
    c("002-iperf-t", "consistent", None, "-t 1 ran 0.0-1.1 s", "cross-check")
    c("002-iperf-interval", "consistent", None, "-t 1 ran 0.0-1.1 s", "cross-check")
    c("002-iperf-transfer", "consistent", None, "with 11.8 Mbit/s over 1.1 s", "convert")
    for claim in ("002-aug02-maxwin",):
        c(claim, "consistent", None, "ANL's wmem_max/rmem_max 8388608 = 8 MiB", "same figure")
    for claim in ("002-anl-wmem_max", "002-anl-rmem_max"):
        c(claim, "consistent", None, "the 8 MByte maximum window of the August 2002 runs", "same figure")
    bound8 = theory.window_limited_throughput(8 * 2**20, rtt)
    c("002-aug02-double", "consistent", None,
      f"one 8 MiB stream could carry {bound8 / 1e6:.0f} Mbit/s at 50 ms, above the OC12; a single stream "
      "is loss-limited, not window-limited, so more streams can help", "window bound")
    ctx.bound("002-aug02-srtt-onset", SONET_BPS["OC12"], "the OC12 line rate", "bound")
    ok = ctx.date("002-sep7-date") < ctx.date("002-oct27-date")
    c("002-oct27-date", "consistent" if ok else "erratum", None, "after September 7, 2000, with the upgrade between",
      "dates")
    c("002-sep7-date", "consistent", None, "before the October 27 repeat", "dates")
    ctx.bound("002-bottleneck", SONET_BPS["OC3"], "the OC3 line rate after the upgrade", "bound")
    ctx.bound("002-t3-effective", T3_BPS, "the T3 line rate", "bound")
    c("002-pharlap-cpus", "consistent", None, "seed 003 also gives pharlap 6 processors", "cross-document")
    for claim in ("002-pharlap-tcp_max_buf", "002-pharlap-tcp_cwnd_max"):
        c(claim, "consistent", None, "the same ndd values as datamove38/39 in seed 000", "cross-document")
    for kind in ("rmem", "wmem"):
        lo, mid, hi = (ctx.v(f"002-anl-tcp_{kind}-{k}") for k in ("min", "default", "max"))
        cap = ctx.v(f"002-anl-{kind}_max")
        ok = lo <= mid <= hi <= cap
        for k in ("min", "default", "max"):
            c(f"002-anl-tcp_{kind}-{k}", "consistent" if ok else "erratum", None,
              f"min {lo:g} <= default {mid:g} <= max {hi:g} <= net.core.{kind}_max {cap:g}", "order")
    c("002-anl-tcp_rmem-default", "consistent", None, "87380 is Linux's default, as on CERN's host in seed 004", "cross-document")
    for claim in ("002-anl-rmem_default", "002-anl-wmem_default"):
        c(claim, "consistent", None, "equal to tcp_wmem's default 65536", "cross-check")
    c("002-nov8-similar", "consistent", None, "the 64 KByte receiver limit named for Nov 6", "cross-check")
    c("002-snoop-syn-win", "consistent", None, "below 65535 as a SYN's window must be (unscaled)", "bound")
    c("002-snoop-syn-wscale", "consistent", None,
      "wscale 4 lets pharlap advertise up to 1 MiB, above its 512 KiB request", "trace")
    c("002-snoop-synack-wscale", "consistent", None, "as the text's second paragraph says (1)", "trace")
    c("002-iperf-port", "consistent", None, "the server listens on -p 5008 (ps) and snoop shows D=5008", "same figure")
    for claim in ("002-iperf-local-port", "002-snoop-syn-sport"):
        same = ctx.v("002-iperf-local-port") == ctx.v("002-snoop-syn-sport")
        c(claim, "consistent" if same else "erratum", None,
          "iperf's local port is the SYN's source port (35544)" if same else "iperf and snoop ports differ", "trace")
    c("002-snoop-synack-ack", "reproduced", ctx.v("002-snoop-syn-seq") + 1,
      "the SYN/ACK acknowledges the SYN's sequence number + 1 (a SYN consumes one)", "trace")
    c("002-snoop-syn-seq", "consistent", None, "acknowledged + 1 by the SYN/ACK", "trace")
    c("002-aug02-product", "consistent", None, "with 8 MB windows it allows at most 4 streams", "cross-check")
    c("002-created", "consistent", None, "created before the first measurement (Sept 7, 2000) it reports", "dates")
    c("002-updated", "consistent", None, "the date of the last measurement reported (August 2 '02)", "dates")
    c("002-aug02-date", "consistent", None, "the page's last update", "dates")


# --- seed 003 -------------------------------------------------------------------------
def _checks_003(ctx):
    c = ctx.add
    for claim in ("003-nton-live", "003-nton-date", "003-ping-start"):
        _weekday(ctx, claim)
    ctx.rounding("003-oc48", SONET_BPS["OC48_payload"] / 1e9, "standard",
                 "OC-48c payload 2.396 Gbit/s (line rate 2.488)")
    c("003-pharlap-clock", "consistent", None, "seed 002 prints 226 MHz for the same host (see 002-pharlap-clock)",
      "cross-document")
    win = ctx.si("003-nton-window") * ctx.v("003-nton-streams")
    rtt = ctx.si("003-ping-min")
    b25 = theory.window_limited_throughput(win, rtt)
    need = win * 8 / ctx.si("003-nton-peak")
    c("003-nton-peak", "differs", b25 / 1e6,
      f"25 x 128 KiB / 48.6 ms (min ping RTT) = {b25 / 1e6:.0f} Mbit/s < 990; it fits if each of the two "
      f"host pairs ran 25 streams ({2 * b25 / 1e6:.0f} Mbit/s) or if the NTON RTT was <= {need * 1e3:.1f} ms "
      "(the pings may have taken another path)", "window bound")
    ctx.bound("003-nton-peak", 2 * GIGE_BPS, "two GigE hosts", "bound")
    c("003-peak-again", "consistent", None, "same as the 990 Mbit/s peak", "same figure")
    c("003-ppdg-goal", "reproduced", ctx.si("003-nton-peak") / 8e6,
      f"990 Mbit/s = {ctx.si('003-nton-peak') / 8e6:.1f} MByte/s > 100", "convert")
    ctx.rounding("003-udp-total", (ctx.si("003-udp-poweredge") + ctx.si("003-udp-other")) / 1e9, "sum",
                 "1 Gbit/s + 250 Mbit/s")
    ctx.bound("003-udp-poweredge", GIGE_BPS, "its GigE interface", "bound")
    ctx.bound("003-udp-received", ctx.si("003-udp-raw"), "the 1 Gbit/s sent through one interface", "bound",
              note="both PCs were mapped to one GigE interface, so at most 1 Gbit/s could leave")
    c("003-udp-raw", "consistent", None, "one GigE interface carried both PCs' 1.25 Gbit/s", "cross-check")
    for claim in ("003-nton-window", "003-nton-streams", "003-nton-hosts"):
        c(claim, "consistent", None, "conditions of the 990 Mbit/s peak", "cross-check")
    end = pd.Timestamp(ctx.date("003-ping-start")) + pd.Timedelta(seconds=ctx.v("003-ping-count") * ctx.v("003-ping-interval"))
    c("003-ping-count", "consistent", None,
      f"370 pings at 1 s from 13:56 end at {end:%H:%M}, 'just before the show closed'", "dates")
    c("003-ping-loss", "consistent", None, "0 of 370", "bound")
    for claim in ("003-floor-caltech", "003-floor-both"):
        ctx.bound(claim, GIGE_BPS, "the PowerEdge's GigE interface", "bound")
    c("003-pharlap-cpus", "consistent", None, "seed 002 also gives pharlap 6 cpus", "cross-document")
    c("003-udp-other", "consistent", None, "with the PowerEdge's 1 Gbit/s it adds up to the 1.25 Gbit/s", "sum")
    c("003-created", "consistent", None, "the day of the last measurements (Thursday 11/9/00)", "dates")
    c("003-updated", "consistent", None, "a week after the show", "dates")
    c("003-i2-in", "consistent", None, "below the PowerEdge's 800 Mbit/s on the show floor", "cross-check")


# --- seed 004 -------------------------------------------------------------------------
#: Linux values the socket-buffer table reports in kbytes (bytes / 1024)
_LINUX_BUFFERS = {65535: "64 KiB - 1 (net.core defaults)", 8388607: "8 MiB - 1",
                  87380: "tcp_rmem default", 4096: "tcp_rmem/tcp_wmem min", 65530: None}


def _checks_004(ctx):
    c = ctx.add
    for claim in ("004-page-date",):
        _weekday(ctx, claim)
    c("004-gap-end", "consistent", None, "after the gap's start (29 August)", "dates")
    c("004-gap-start", "consistent", None, "the gap 29 Aug - 2 Sep 2002 lies inside the two weeks shown", "dates")
    c("004-udp-bad-day", "consistent", None, "3 September is after the gap, in the September data", "dates")
    c("004-doc-date", "consistent", None, "the data run late August - early September 2002", "dates")
    for host in ("cern", "ral"):
        mhz = ctx.v(f"004-{host}-speed")
        ctx.rounding(f"004-{host}-bogomips", 2 * mhz, "bogomips", f"2 x {mhz:g} MHz (Linux calibrates 2 loops per clock)",
                     tol=0.01 * 2 * mhz, note="BogoMIPS are measured, so 1% is allowed")
    c("004-cern-cpu-name", "consistent", ctx.v("004-cern-speed"), "measured 1495.5 MHz", "cross-check")
    c("004-cern-speed", "consistent", None, "the CPU name says 1500MHz", "cross-check")
    c("004-ral-600", "consistent", ctx.v("004-ral-speed"), "measured 604.252 MHz", "cross-check")
    c("004-ral-speed", "consistent", None, "'it's only 600Mhz'", "cross-check")
    # socket buffer table (kbytes = bytes / 1024)
    for claim in ctx.df.index[ctx.df["group"] == "004-buffers"]:
        value = ctx.v(claim)
        b = round(value * 1024)
        if claim.startswith("004-ral"):
            c(claim, "consistent", None, f"= {b} bytes; the CERN host shows the same settings less one byte", "cross-check")
            continue
        what = _LINUX_BUFFERS.get(b)
        if what:
            ctx.rounding(claim, b / 1024, "kbytes", f"{b} bytes / 1024 ({what})", tol=0.0005)
        elif b == 65530:
            c(claim, "not-reproducible", b / 1024, "= 65530 bytes; not a default value", "kbytes")
    c("004-cern-2.4-6-rmem_max", "erratum", 8388607 / 1024,
      "8181.999 kbytes is no power-of-two limit; every other maximum is 8191.999 (8 MiB - 1)", "cross-check")
    c("004-cern-2.2-3-rmem_max", "erratum", None,
      "header 'rmem_max' printed twice; this column is wmem_max (the 2.4 part has wmem_max = 8191.999 too)", "header")
    c("004-ral-2.2-3-rmem_max", "erratum", None, "header 'rmem_max' printed twice; this column is wmem_max", "header")
    c("004-units-edit", "erratum", None, "the author's own correction: graphs labelled kbit/s are in Mbit/s", "units")
    c("004-min-25", "erratum", 25 / 8,  # 25 Mbit/s, in the printed MByte/s
      "printed '25mBytes'; 25 MByte/s = 200 Mbit/s would exceed the median (< 100 Mbit/s), so 25 Mbit/s "
      "(the graphs are in Mbit/s, per the author's edit)", "units")
    rtt = ctx.si("004-ping-august-108-min")
    w = theory.window_limited_throughput(1024 * 1024, rtt)
    c("004-plateau-1024", "consistent", w / 1e6,
      f"1 MiB / 17.7 ms (min RTT) = {w / 1e6:.0f} Mbit/s, near the >480 Mbit/s UDP rate: beyond it the "
      "window no longer limits", "window bound")
    w100 = 100e6 * rtt / 8 / 1024
    c("004-median-100", "not-reproducible", None,
      f"100 Mbit/s needs only a {w100:.0f} KiB window at 17.7 ms, so a median below 100 at every buffer size "
      "means TCP was not window-limited (loss or host)", "window bound")
    c("004-max-2mb", "consistent", None, "the iperf server's 2 MB window limit (TCP2's answer)", "cross-check")
    c("004-server-max-2mb", "consistent", None, "the 2 MB threshold of the max curve", "cross-check")
    c("004-peak-2mb", "consistent", None, "the 2 MB server window limit", "cross-check")
    c("004-cern-os", "consistent", None, "the CERN host shows 2.4 kernel parameters in the buffer table", "cross-check")
    c("004-ral-os", "consistent", None, "the RAL host shows only 2.2 kernel parameters in the buffer table", "cross-check")
    ctx.bound("004-udp-480", gige_goodput(protocol="udp"), "UDP payload rate of GigE", "bound")
    # ping table
    for m, size in (("august", 108), ("august", 1480), ("september", 108)):
        c(f"004-ping-{m}-{size}-size", "consistent", None, "the two packet sizes of every month", "cross-check")
    c("004-ping-august-108-n", "consistent", None, "241 singletons at both sizes in August", "same figure")
    c("004-ping-august-1480-n", "consistent", None, "241 singletons at both sizes in August", "same figure")
    c("004-ping-september-108-n", "consistent", None, "about half of August's 241", "ratio")
    d_min = ctx.v("004-ping-august-108-min") - ctx.v("004-ping-september-108-min")
    ctx.rounding("004-ping-diff-small", d_min, "difference", "August min - September min at 108 bytes",
                 tol=ABOUT * 2 * 0.2 + 0.05,
                 note=f"medians differ by {ctx.v('004-ping-august-108-median') - ctx.v('004-ping-september-108-median'):.3f} ms; "
                      f"at 1480 bytes the min differs by {ctx.v('004-ping-august-1480-min') - ctx.v('004-ping-september-1480-min'):.3f} ms "
                      "(less pronounced, as stated)")
    half = [ctx.v(f"004-ping-september-{s}-n") / ctx.v(f"004-ping-august-{s}-n") for s in (108, 1480)]
    c("004-ping-half", "consistent", None, f"September/August samples = {half[0]:.2f} and {half[1]:.2f}", "ratio")
    c("004-ping-september-1480-median", "erratum", None,
      "17.615 ms is below this row's min 18.524 ms and equals the September 108-byte median: copied from the row above",
      "order")
    c("004-ping-september-1480-n", "consistent", None, "about half of August's 241", "ratio")
    for m in ("august", "september"):
        slope = (ctx.v(f"004-ping-{m}-1480-min") - ctx.v(f"004-ping-{m}-108-min")) / (1480 - 108) * 1e3
        c(f"004-ping-{m}-1480-size", "consistent", None,
          f"min RTT grows {slope:.3f} us per byte from 108 to 1480 bytes", "cross-check")


_SEED_CHECKS = {"000": _checks_000, "001": _checks_001, "002": _checks_002, "003": _checks_003, "004": _checks_004}


def findings(published):
    """Every :class:`Finding` of every check on ``published`` (rows of :func:`thruput.published.load`)."""
    ctx = _Ctx(published)
    _check_order_statistics(ctx)
    _check_dates(ctx)
    for seed in sorted(set(published["seed"])):
        _run_seed_checks(ctx, seed)
    return ctx.findings


def _run_seed_checks(ctx, seed):
    """Run one seed's checks; if a row they need is missing, drop that seed's findings.

    The seed checks are written against the complete transcription; on a subset (one
    table, a few rows) they cannot run, and half-run checks would mislabel rows, so
    the subset keeps only the generic checks and the seed is listed in ``ctx.skipped``.
    """
    check = _SEED_CHECKS.get(seed)
    if check is None:
        return
    before = len(ctx.findings)
    try:
        check(ctx)
    except _MissingClaim as exc:
        del ctx.findings[before:]
        ctx.skipped[seed] = exc.args[0]


def build_ledger(published):
    """One ledger row per published figure.

    Parameters
    ----------
    published : pandas.DataFrame
        Rows of :func:`thruput.published.load` (any subset of seeds).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`LEDGER_COLUMNS`: ``seed``, ``claim`` (the published ``id``),
        ``published_value`` and ``published_unit`` (as printed; for date rows the date
        string and ``datetime``), ``derived_value`` (in ``published_unit``: the
        re-derived value, or for a bound check the bound itself, e.g. the 941.5 Mbit/s
        TCP goodput of GigE; NaN if nothing was derived), ``status`` (one of :data:`STATUSES`), ``note`` (how it was derived
        or why it disagrees; notes of several checks joined by " | "), ``quote``,
        ``measures`` and ``check`` (names of the checks that decided the status).

    Notes
    -----
    A claim no check touches is ``not-reproducible``: a measurement or a setting that
    needs the lost raw data. The seed-specific checks need the seed's complete
    transcription; given a subset of a seed, only the generic checks (order statistics,
    start before end) run and the default notes say so. A claim several checks touch keeps the most serious status
    in the order of :data:`STATUSES`; its ``derived_value`` comes from the first finding
    of that status that derived one.
    """
    ctx = _Ctx(published)
    _check_order_statistics(ctx)
    _check_dates(ctx)
    for seed in sorted(set(published["seed"])):
        _run_seed_checks(ctx, seed)
    by_claim = {}
    for f in ctx.findings:
        by_claim.setdefault(f.claim, []).append(f)
    rank = {s: i for i, s in enumerate(STATUSES)}
    rows = []
    for r in published.itertuples(index=False):
        fs = sorted(by_claim.get(r.id, []), key=lambda f: rank[f.status])
        if not fs:
            kind = "setting" if r.measures in _SETTINGS or r.statistic in ("input", "nominal") else "measurement"
            note = _DEFAULT_NOTE[kind]
            if r.seed in ctx.skipped:
                note += (f" (seed {r.seed}'s own checks did not run: its rows are incomplete, "
                         f"{ctx.skipped[r.seed]} is missing)")
            fs = [Finding(r.id, "not-reproducible", None, note, "default")]
        status = fs[0].status
        derived = next((f.derived for f in fs if f.status == status and f.derived is not None),
                       next((f.derived for f in fs if f.derived is not None), None))
        notes = list(dict.fromkeys(f.note for f in fs if f.note))
        checks = list(dict.fromkeys(f.check for f in fs if f.check))
        pub_value = r.date if r.unit == "datetime" else r.value
        rows.append({"seed": r.seed, "claim": r.id, "published_value": pub_value, "published_unit": r.unit,
                     "derived_value": np.nan if derived is None else derived, "status": status,
                     "note": " | ".join(notes), "quote": r.quote, "measures": r.measures,
                     "check": ",".join(checks)})
    return pd.DataFrame(rows, columns=LEDGER_COLUMNS)


def summary(ledger):
    """Counts of ledger rows by status, overall and per seed.

    Returns
    -------
    pandas.DataFrame
        Index ``seed`` (plus ``all``), one column per status in :data:`STATUSES` order
        (zeros included) and ``total``.
    """
    table = pd.crosstab(ledger["seed"], ledger["status"]).reindex(columns=list(STATUSES), fill_value=0)
    table.loc["all"] = table.sum()
    table["total"] = table.sum(axis=1)
    table.columns.name = None
    return table


# --- tidy per-seed tables for the site ----------------------------------------------
def _corrected(published, ledger):
    """value_si with errata replaced by their derived value where the ledger has one."""
    si = published.set_index("id")["value_si"].copy()
    if ledger is None:
        return si, set()
    led = ledger.set_index("claim")
    fixed = set()
    for claim in led.index[(led["status"] == "erratum") & led["derived_value"].notna()]:
        if claim in si.index and published.set_index("id").at[claim, "unit"] != "datetime":
            unit = published.set_index("id").at[claim, "unit"]
            si[claim] = units.to_base(led.at[claim, "derived_value"], unit)
            fixed.add(claim)
    return si, fixed


def seed_000_hosts(published, ledger=None):
    """Seed 000's per-host table, one row per column of the table.

    Parameters
    ----------
    published : pandas.DataFrame
        Rows of :func:`thruput.published.load`.
    ledger : pandas.DataFrame, optional
        If given, values marked ``erratum`` with a derived value are replaced by it (the
        345 bit/s median becomes 345 Mbit/s) and listed in ``corrected``.

    Returns
    -------
    pandas.DataFrame
        ``column`` (table heading), ``host``, ``repeat``, ``mean_mbps``, ``median_mbps``,
        ``max_mbps``, ``iqr_mbps`` (Mbit/s), ``rtt_min_ms``, ``rtt_mean_ms``,
        ``rtt_max_ms``, ``loss``, ``pings``, ``start``, ``end`` (as printed, ISO),
        ``corrected`` (claims replaced from the ledger, comma-separated).
    """
    si, fixed = _corrected(published, ledger)
    pub = published.set_index("id")
    rows = []
    for h in _HOSTS_000:
        key = lambda k: f"000-table-{k}-{h}"  # noqa: E731
        cfg = dict(p.split("=", 1) for p in pub.at[key("median"), "config"].split(";"))
        rows.append({
            "column": cfg["column"], "host": pub.at[key("median"), "dst"], "repeat": int(cfg["repeat"]),
            "mean_mbps": si[key("avg-mbit")] / 1e6, "median_mbps": si[key("median")] / 1e6,
            "max_mbps": si[key("max")] / 1e6, "iqr_mbps": si[key("iqr")] / 1e6,
            "rtt_min_ms": si[key("rtt-min")] * 1e3, "rtt_mean_ms": si[key("rtt-avg")] * 1e3,
            "rtt_max_ms": si[key("rtt-max")] * 1e3, "loss": int(pub.at[key("loss"), "value"]),
            "pings": int(pub.at[key("pings"), "value"]), "start": pub.at[key("start"), "date"],
            "end": pub.at[key("end"), "date"],
            "corrected": ",".join(sorted(c for c in fixed if c.endswith(f"-{h}"))),
        })
    return pd.DataFrame(rows)


def seed_001_apps(published):
    """Seed 001's application x TCP stack table (Mbit/s), one row per printed cell.

    Returns
    -------
    pandas.DataFrame
        ``app``, ``stack``, ``network``, ``low``, ``high`` (equal unless a range was
        printed), ``mid`` (their mean), all Mbit/s.
    """
    df = published[published["group"] == "001-apps"]
    cfg = config_frame(df)
    df = df.assign(app=cfg["app"], stack=cfg["stack"], network=cfg["network"], mbps=df["value_si"] / 1e6)
    out = df.pivot_table(index=["app", "stack", "network"], columns="statistic", values="mbps", aggfunc="first")
    low = out.get("range_low", pd.Series(np.nan, index=out.index)).fillna(out.get("mean"))
    high = out.get("range_high", pd.Series(np.nan, index=out.index)).fillna(out.get("mean"))
    res = pd.DataFrame({"low": low, "high": high}).reset_index()
    res["mid"] = (res["low"] + res["high"]) / 2
    order = {"app": _APPS_001, "stack": _STACKS_001, "network": _NETWORKS_001}
    res = res.sort_values(["app", "stack", "network"],
                          key=lambda col: col.map({v: i for i, v in enumerate(order[col.name])}))
    return res.reset_index(drop=True)


#: row and column order of seed 001's "Average Transfer Rates" table
_APPS_001 = ("Iperf", "bbcp", "bbftp", "apache", "Gridftp")
_STACKS_001 = ("Standard", "HighSpeed", "Scalable")
_NETWORKS_001 = ("SuperMicro on MB-NG", "SuperMicro on SuperJANET4", "BaBar on SuperJANET4", "SC2004 on UKLight")


def seed_001_reno(published):
    """Seed 001's Reno table beside :mod:`thruput.stats.theory` (RTT 200 ms, MSS 1500).

    Returns
    -------
    pandas.DataFrame
        ``throughput_bps``; ``window_pkts`` (published) and ``window_pkts_theory``;
        ``recovery_s`` and ``recovery_s_theory``; ``loss_rate`` and ``loss_rate_theory``.
    """
    pub = published.set_index("id")
    rtt = pub.at["001-reno-rtt", "value_si"]
    rows = []
    for k in ("10mbps", "100mbps", "1gbps", "10gbps"):
        cap = pub.at[f"001-reno-{k}-rate", "value_si"]
        rows.append({"throughput_bps": cap,
                     "window_pkts": pub.at[f"001-reno-{k}-window", "value"],
                     "window_pkts_theory": theory.bdp_packets(cap, rtt, 1500),
                     "recovery_s": pub.at[f"001-reno-{k}-recovery", "value_si"],
                     "recovery_s_theory": theory.reno_recovery_time(cap, rtt, 1500),
                     "loss_rate": pub.at[f"001-reno-{k}-loss", "value"],
                     "loss_rate_theory": theory.mathis_loss_rate(cap, 1500, rtt)})
    return pd.DataFrame(rows)


def seed_001_latency(published):
    """Seed 001's UDPmon latency slopes: measured, published expectation, and theory.

    Returns
    -------
    pandas.DataFrame
        ``board``, ``pci``, ``measured_us_per_byte``, ``expected_us_per_byte`` (as
        printed), ``expected_theory_us_per_byte`` (PCI + GigE + PCI from
        :func:`thruput.stats.theory.expected_latency_slope`), ``intercept_us``.
    """
    pub = published.set_index("id")
    rows = []
    for board, tag, measured, expect, intercept, width, clock in (
            ("SuperMicro 370DLE", "32 bit 33 MHz", "001-370dle-32-slope", "001-370dle-32-expect",
             "001-370dle-32-intercept", 32, 33e6),
            ("SuperMicro 370DLE", "64 bit 66 MHz", "001-370dle-64-slope", "001-370dle-64-expect",
             "001-370dle-64-intercept", 64, PCI66_HZ),
            ("SuperMicro P4DP6", "64 bit 66 MHz", "001-p4dp6-slope", "001-p4dp6-expect", None, 64, PCI66_HZ),
            ("SuperMicro P4DP6 (flat sections)", "64 bit 66 MHz", "001-p4dp6-slope-flat", "001-p4dp6-expect", None,
             64, PCI66_HZ)):
        rows.append({"board": board, "pci": tag, "measured_us_per_byte": pub.at[measured, "value"],
                     "expected_us_per_byte": pub.at[expect, "value"],
                     "expected_theory_us_per_byte": theory.expected_latency_slope(
                         [(width, clock), GIGE_BPS / 8, (width, clock)]),
                     "intercept_us": pub.at[intercept, "value"] if intercept else np.nan})
    return pd.DataFrame(rows)


def seed_004_ping(published):
    """Seed 004's ping table: RTT by packet size and month (ms), as printed.

    Returns
    -------
    pandas.DataFrame
        ``month``, ``packet_size`` (bytes), ``n``, ``min_ms``, ``median_ms``, ``mean_ms``,
        ``max_ms``, ``median_erratum`` (True where the median contradicts the row).
    """
    rows = []
    pub = published.set_index("id")
    for month in ("august", "september"):
        for size in (108, 1480):
            k = f"004-ping-{month}-{size}-"
            r = {"month": month, "packet_size": size, "n": int(pub.at[k + "n", "value"])}
            for stat in ("min", "median", "mean", "max"):
                r[f"{stat}_ms"] = pub.at[k + stat, "value"]
            r["median_erratum"] = not (r["min_ms"] <= r["median_ms"] <= r["max_ms"])
            rows.append(r)
    return pd.DataFrame(rows)


def _window_curve(seed, label, windows_kib, rtt_s, streams=1, cap_bps=None):
    y = theory.window_limited_throughput(np.asarray(windows_kib, float) * 1024, rtt_s, streams)
    if cap_bps is not None:
        y = np.minimum(y, cap_bps)
    return pd.DataFrame({"seed": seed, "curve": "window_limit", "label": label, "x": windows_kib,
                         "x_unit": "KiB", "y": y / 1e6, "y_unit": "Mbit/s"})


def _streams_curve(seed, label, window_bytes, rtt_s, cap_bps=None):
    n = np.arange(1, 41)
    y = theory.window_limited_throughput(window_bytes, rtt_s, n)
    if cap_bps is not None:
        y = np.minimum(y, cap_bps)
    return pd.DataFrame({"seed": seed, "curve": "streams_x_window", "label": label, "x": n,
                         "x_unit": "streams", "y": y / 1e6, "y_unit": "Mbit/s"})


def theory_curves(published):
    """Theory lines for each study's page, from the studies' own published inputs.

    Parameters
    ----------
    published : pandas.DataFrame
        Rows of :func:`thruput.published.load` (all seeds).

    Returns
    -------
    pandas.DataFrame
        Long format: ``seed``, ``curve`` (``window_limit``, ``streams_x_window``,
        ``mathis``, ``reno_recovery``), ``label`` (legend text naming the inputs), ``x``,
        ``x_unit``, ``y``, ``y_unit``. Window-limited lines are capped at the path's
        capacity where the document gives one.

    Notes
    -----
    - 000: 1 stream x window / min ping RTT for datamove8 (0.203 ms) and datamove38
      (0.171 ms), capped at 1 Gbit/s.
    - 001: Mathis throughput vs loss rate (MSS 1500) at the MB-NG (6.2 ms), UKLight
      (180 ms) and DataTAG (128 ms) RTTs; Reno recovery time vs capacity at 200 ms.
    - 002: n x 64 KiB and n x 128 KiB over the 50.1 ms handshake RTT, capped at OC3.
    - 003: n x 128 KiB over the 48.6 ms min ping RTT.
    - 004: window / 17.684 ms (August min ping RTT, 108 bytes), capped at 1 Gbit/s.
    """
    v = published.set_index("id")["value_si"]
    windows = [8, 16, 32, 64, 128, 256, 512, 1024]
    parts = [
        _window_curve("000", "1 stream, RTT 0.203 ms (datamove8 min ping)", windows, v["000-dm8-rtt-min"],
                      cap_bps=GIGE_BPS),
        _window_curve("000", "1 stream, RTT 0.171 ms (datamove38 min ping)", windows, v["000-dm38-rtt-min"],
                      cap_bps=GIGE_BPS),
        _streams_curve("002", "n x 64 KiB / 50.1 ms (wscale 0 limit)", 65536, v["002-snoop-synack-time"],
                       cap_bps=SONET_BPS["OC3"]),
        _streams_curve("002", "n x 128 KiB / 50.1 ms (wscale 1 limit)", 131072, v["002-snoop-synack-time"],
                       cap_bps=SONET_BPS["OC3"]),
        _streams_curve("003", "n x 128 KiB / 48.6 ms (min ping RTT)", 131072, v["003-ping-min"]),
        _window_curve("004", "1 stream, RTT 17.684 ms (August min ping)", windows + [2048, 4096, 8192],
                      v["004-ping-august-108-min"], cap_bps=GIGE_BPS),
    ]
    loss = np.logspace(-8, -2, 61)
    for name, claim in (("MB-NG", "001-hp-mbng-rtt"), ("DataTAG", "001-hp-datatag-rtt"), ("UKLight", "001-uklight-rtt")):
        rtt = v[claim]
        parts.append(pd.DataFrame({"seed": "001", "curve": "mathis",
                                   "label": f"Reno (Mathis), {name} RTT {rtt * 1e3:g} ms, MSS 1500",
                                   "x": loss, "x_unit": "1", "y": theory.mathis_throughput(1500, rtt, loss) / 1e6,
                                   "y_unit": "Mbit/s"}))
    cap = np.logspace(7, 10, 31)
    parts.append(pd.DataFrame({"seed": "001", "curve": "reno_recovery", "label": "C x RTT^2 / (2 MSS), RTT 200 ms",
                               "x": cap / 1e6, "x_unit": "Mbit/s",
                               "y": theory.reno_recovery_time(cap, v["001-reno-rtt"], 1500), "y_unit": "s"}))
    return pd.concat(parts, ignore_index=True)
