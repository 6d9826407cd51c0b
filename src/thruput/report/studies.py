"""Study pages (one per source document) and the reproduction summary of the site.

Each study page shows, from top to bottom: what the document measured (:data:`STUDIES`),
its published tables as charts (:func:`study_charts`), the theory that explains them with
the published figures on it (:func:`study_theory`), the reproduction ledger of the study
(:func:`study_ledger`) and, where a bundled campaign shows the same effect, the two side
by side, marked as a new measurement (:func:`study_side_by_side`). The reproduction page
shows counts by status (:func:`ledger_summary`, :func:`ledger_status_chart`), how far each
differing figure is from its derivation (:func:`ledger_differences_chart`) and every
``differs`` and ``erratum`` with its reasoning (:func:`ledger_problems`).

Nothing here derives a published number: values come from :mod:`thruput.published`, the
tidy per-seed tables, theory curves and the ledger from :mod:`thruput.reproduce`, and
campaign statistics from :mod:`thruput.stats` (through :mod:`.campaigns`). This module
picks rows, converts them to display units and arranges them.
"""

from __future__ import annotations

import functools
import html
from pathlib import Path

import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown, display

from .. import charts, reproduce, stats, units
from .. import published as pub
from ..stats import theory
from .campaigns import _is_tcp, _unloaded_rtt_s, cell_summary, load_campaign, metadata

__all__ = ["STUDIES", "study_title", "study_charts", "study_theory", "study_ledger", "study_side_by_side",
           "ledger_summary", "ledger_status_chart", "ledger_differences_chart", "ledger_problems", "ledger_frame",
           "published_frame"]

MBIT = 1e6
LEDGER_FILE = "reproduction.csv"

#: What each source document is: title, who, where and when, and a one-paragraph summary
#: written from reading the document in full (/work/shared/seeds/<seed>_*.txt).
STUDIES = {
    "000": {
        "title": "Throughput between Tersk03 and Kangadata02 (SLAC, 2001)",
        "source": "Les Cottrell, SLAC Network Group web page, created 29 January 2001",
        "summary": (
            "BaBar users copying files between two Solaris servers on the same Cisco Catalyst 6509 "
            "switch at SLAC (1 Gbit/s interfaces, VLAN 124) saw less than 10 MByte/s. On 29 January "
            "2001 (14:28–15:21 PST) iperf TCP throughput was measured from Tersk03 to Kangadata02 over "
            "windows of 8 KB–1 MB and 1–40 parallel streams, 10 s per run, with ping running during "
            "each run (loaded) and during a 10 s break after it (unloaded). The same sweep from Tersk03 "
            "to other Sun Solaris hosts (30 January – 6 February 2001) gives the per-host table: "
            "average, median, maximum and IQR of throughput, loaded ping RTT min/avg/max and loss. "
            "Two further pairs (datamove8→7 and datamove38→39, March 2001) show that the default "
            "8 KB Solaris window caps one stream at 160–176 Mbit/s, 32 KB at 350–400 Mbit/s, and "
            "that parallel streams with 512 KB windows reach 650–700 Mbit/s.")},
    "001": {
        "title": "End-user systems: NICs, motherboards, disks, TCP stacks and applications",
        "source": "Richard Hughes-Jones (University of Manchester), talk on work of the MB-NG, DataTAG, "
                  "UKLight and SC2004 collaborations, 2002–2005",
        "summary": (
            "Back-to-back PCs (SuperMicro 370DLE, P4DP6, P4DP8-G2, IBM das; SysKonnect and Intel "
            "Pro/1000 gigabit NICs on 32/64-bit, 33/66 MHz PCI and PCI-X) were measured with UDPmon: "
            "request–response latency against frame size, whose slope should be the sum of 1/rate over "
            "the data paths (PCI, Gigabit Ethernet, PCI), and UDP throughput and loss against the "
            "spacing between packets, with a logic analyser on the PCI buses. The talk then compares "
            "TCP stacks (Reno, HighSpeed, Scalable) under induced packet loss on MB-NG (6 ms RTT) and "
            "DataTAG (128 ms), tabulates how long Reno takes to recover from one loss at 10 Mbit/s–"
            "10 Gbit/s (RTT 200 ms), benchmarks disks and RAID controllers, and reports the average "
            "transfer rates of iperf, bbcp, bbftp, Apache and GridFTP per TCP stack on four networks "
            "(MB-NG, SuperJANET4 with two host types, UKLight at SC2004).")},
    "002": {
        "title": "Bulk throughput measurements, SLAC to ANL (SLAC IEPM, 2000–2002)",
        "source": "SLAC IEPM web page (Les Cottrell), created 25 August 2000, last updated 2 August 2002",
        "summary": (
            "iperf TCP throughput from SLAC to Argonne National Laboratory (Chicago) over window size "
            "x parallel streams, repeated as the path changed: 7 September 2000 on a 43 Mbit/s T3 ATM "
            "link (about 30 Mbit/s usable) and 27 October 2000 after the upgrade to OC3; 26 September "
            "2001 from pharlap (Sun E4500, Solaris 5.8) to wiggum (Linux 2.4) via ESnet, where the top "
            "10 % of the measurements exceeded 118 Mbit/s for 8 or more streams and windows of 64 KB or "
            "more; 6 and 8 November 2001 after SLAC's OC12 upgrade and ANL's larger buffers, when every "
            "window above 64 KB gave the same curve; a snoop trace of the handshake showed wiggum "
            "advertising window scale 1 (at most 128 KB). On 2 August 2002 windows up to 8 MB with "
            "web100 showed that several streams still more than double one stream's throughput, and "
            "that the smoothed RTT grows up to five-fold once throughput exceeds 300 Mbit/s.")},
    "003": {
        "title": "SC2000 bulk throughput to SLAC (SLAC at SC2000, Dallas)",
        "source": "SLAC web page (D. Salomoni, S. Luitz, L. Cottrell), created 9 November 2000, "
                  "last updated 16 November 2000",
        "summary": (
            "From the SLAC/FNAL booth at the SC2000 show in Dallas, two Linux PCs with gigabit "
            "Ethernet sent iperf TCP traffic over SCInet and the NTON OC48 (2.4 Gbit/s) link to two Sun "
            "servers at SLAC. On 9 November 2000 the peak was about 990 Mbit/s (2 s samples of the "
            "switch counters) with 128 KB windows and 25 parallel streams; UDP sent about 1.25 Gbit/s "
            "and about 975 Mbit/s arrived at SLAC; over Internet2 a little more than 300 Mbit/s was "
            "sustained. Pings from SLAC to the booth (56 bytes, one per second) gave min/avg/max RTT "
            "48.6/53.1/172 ms with no loss in 370. Tests on the show floor reached 300 and 800 Mbit/s.")},
    "004": {
        "title": "Network analysis of the CERN ↔ RAL link (UCL, 2002)",
        "source": "Yee-Ting Li (UCL High Energy Physics), web page of September 2002 (generated July 2003)",
        "summary": (
            "Two weeks of iperf TCP (30 s tests) and UDP throughput between RAL and CERN in both "
            "directions, end of August and start of September 2002, with a pause from 29 August to "
            "2 September. The two end hosts differ (a 1.5 GHz Pentium 4 with Linux 2.4 web100 at CERN, "
            "a 600 MHz Athlon with Linux 2.2 at RAL); their kernel socket buffer limits are tabulated. "
            "The TCP socket buffer size was varied to find the plateau where a larger buffer no longer "
            "helps (about 1 MB), with min/median/average/max per buffer size (medians below 100 Mbit/s). "
            "Ping RTT by packet size (108 and 1480 bytes) is compared between August and September, and "
            "UDP throughput distributions (mostly above 480 Mbit/s) suggest reporting the 10th–90th "
            "percentiles.")},
}

#: Ledger columns of the readable tables, with their headings.
_LEDGER_HEADINGS = {"claim": "claim", "quote": "printed", "published_value": "published",
                    "published_unit": "unit", "derived_value": "derived", "status": "status",
                    "note": "reasoning"}
#: Statuses whose rows are shown folded on a study page (the list is long, the news is elsewhere).
_FOLDED = ("consistent", "not-reproducible")
#: Styles of the ledger tables and the "new measurement" call-out (inline: the page
#: stylesheet is the site's, and Quarto's theme differs from the nbconvert one).
_STYLE = """<style>
table.thruput-ledger { border-collapse: collapse; font-size: 0.85rem; width: 100%; }
table.thruput-ledger th, table.thruput-ledger td { text-align: left; vertical-align: top;
  border-bottom: 1px solid #d0d7de; padding: 0.3rem 0.5rem; }
table.thruput-ledger td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.thruput-ledger td.claim { font-family: monospace; font-size: 0.8rem; white-space: nowrap; }
table.thruput-ledger td.quote { font-style: italic; max-width: 18rem; }
table.thruput-ledger ul { margin: 0; padding-left: 1.1rem; }
span.thruput-status { display: inline-block; padding: 0 0.45rem; border-radius: 0.6rem; color: #fff;
  font-size: 0.78rem; white-space: nowrap; }
div.thruput-new { border-left: 6px solid #b35900; background: #fff4e5; padding: 0.6rem 1rem; margin: 1rem 0; }
div.thruput-source { color: #57606a; margin-bottom: 0.8rem; }
table.thruput-summary th:nth-child(2), table.thruput-summary td:nth-child(2) { text-align: left; }
details.thruput-fold > summary { cursor: pointer; font-weight: 600; margin: 0.6rem 0; }
</style>"""


# --------------------------------------------------------------------------- loading

@functools.lru_cache(maxsize=8)
def _load_published(path):
    return pub.load(path=path)


def _ledger(processed):
    path = Path(processed) / LEDGER_FILE
    return pd.read_csv(path, dtype={"seed": str}) if path.exists() else pd.DataFrame(columns=reproduce.LEDGER_COLUMNS)


def ledger_frame(processed):
    """The reproduction ledger (``<processed>/reproduction.csv``); empty if not built."""
    return _ledger(processed)


def published_frame(published, processed=None):
    """The published numbers with their ledger verdict.

    Parameters
    ----------
    published : path-like
        ``data/published``.
    processed : path-like, optional
        Folder of ``reproduction.csv``; without it every ``status`` is "".

    Returns
    -------
    pandas.DataFrame
        :func:`thruput.published.load` plus the ledger's ``status``, ``derived_value`` and
        ``ledger_note``, and ``value_fixed_si``: ``value_si`` with every ``erratum`` that has a derived
        value replaced by it (so 345 bit/s is shown as the 345 Mbit/s the table meant);
        ``quote`` without the Markdown bold markers of the slide transcripts.
    """
    p = _load_published(str(Path(published).resolve())).copy()
    ledger = _ledger(processed) if processed is not None else pd.DataFrame(columns=reproduce.LEDGER_COLUMNS)
    led = ledger.set_index("claim")[["status", "derived_value", "note"]] if len(ledger) else None
    if led is not None:
        p = p.join(led.rename(columns={"note": "ledger_note"}), on="id")
    for column in ("status", "ledger_note"):
        p[column] = p[column].fillna("") if column in p else ""
    if "derived_value" not in p:
        p["derived_value"] = np.nan
    fixed = p["value_si"].copy()
    erratum = (p["status"] == "erratum") & p["derived_value"].notna() & (p["unit"] != pub.DATETIME_UNIT)
    for i in p.index[erratum]:
        fixed[i] = units.to_base(float(p.at[i, "derived_value"]), p.at[i, "unit"])
    p["value_fixed_si"] = fixed
    p["quote"] = p["quote"].map(_quote)
    return p


def _seed(seed):
    return f"{int(seed):03d}"


def _rows(p, seed):
    return p[p["seed"] == _seed(seed)]


def _ids(p, ids):
    """Rows of ``p`` with these ids, in this order (KeyError names a missing id)."""
    return p.set_index("id").loc[list(ids)].reset_index()


# --------------------------------------------------------------------------- title

def study_title(published, seed, processed=None):
    """The page heading: the document's title, its source and a summary of what it measured.

    With ``processed``, one line says how the study's figures fared in the ledger.
    """
    seed = _seed(seed)
    info = STUDIES.get(seed, {"title": f"Study {seed}", "source": "", "summary": ""})
    parts = [_STYLE, f"<h1>Study {seed}: {html.escape(info['title'])}</h1>"]
    if info["source"]:
        parts.append(f'<div class="thruput-source">{html.escape(info["source"])}. '
                     "The raw logs are lost; what survives are the published numbers, transcribed into "
                     f"<code>data/published/seed_{seed}.csv</code>.</div>")
    parts.append(f"<p>{html.escape(info['summary'])}</p>")
    if processed is not None:
        ledger = _ledger(processed)
        rows = ledger[ledger["seed"] == seed]
        if len(rows):
            counts = rows["status"].value_counts()
            text = ", ".join(f"{_badge(s)} {int(counts[s])}" for s in reproduce.STATUSES if s in counts)
            parts.append(f"<p><b>{len(rows)} published figures</b> in the reproduction ledger: {text}.</p>")
    return HTML("\n".join(parts))


def _badge(status):
    colour = dict(zip(charts.STATUS_DOMAIN, charts.STATUS_RANGE)).get(status, "#666")
    return f'<span class="thruput-status" style="background:{colour}">{html.escape(status)}</span>'


# --------------------------------------------------------------------------- published charts

def study_charts(published, seed, processed=None):
    """The study's published tables and figures as charts (with the ledger status of each).

    Displays headings, captions and charts in order; returns None.
    """
    p = published_frame(published, processed)
    fn = _PUBLISHED.get(_seed(seed))
    if fn is None:
        return Markdown("No tables are transcribed for this study.")
    fn(p)


def _points(rows, x, y, what):
    """Published figures as points for :func:`thruput.charts.theory_points`."""
    return pd.DataFrame({"x": list(x), "y": list(y), "what": list(what), "status": list(rows["status"]),
                         "quote": list(rows["quote"])})


def _published_000(p):
    rows = _rows(p, "000")
    table = rows[rows["group"].str.startswith("000-table-")]
    cfg = pub.config_frame(table)
    table = table.assign(column=cfg["column"])
    display(Markdown("### Throughput per host (the per-host table)\n\n"
                     "Tersk03 to each Solaris host on VLAN 124, one row per table column (a repeat of the "
                     "same host is a later sweep). Dots: average, median and maximum over the whole window x "
                     "streams sweep; the bar spans the IQR, drawn centred on the median because the document "
                     "prints its width only, not the quartiles. Ringed: values the ledger flags."))
    names = {"mean": "average", "median": "median", "max": "maximum"}
    thr = table[(table["measures"] == "throughput") & table["statistic"].isin(names) & (table["unit"] != "MByte/s")]
    points = pd.DataFrame({"category": thr["column"], "statistic": thr["statistic"].map(names),
                           "value": thr["value_fixed_si"] / MBIT, "status": thr["status"], "quote": thr["quote"]})
    med = thr[thr["statistic"] == "median"].set_index("column")["value_fixed_si"] / MBIT
    iqr = table[table["statistic"] == "iqr"].set_index("column")["value_si"] / MBIT
    ranges = pd.DataFrame({"category": med.index, "low": (med - iqr / 2).values, "high": (med + iqr / 2).values,
                           "what": [f"IQR {w:g} Mbit/s, centred on the median" for w in iqr.reindex(med.index)]})
    display(charts.range_dots(points, ranges, unit="throughput (Mbit/s)", range_label="bar",
                              title="Tersk03 → host: iperf throughput over the sweep"))
    display(Markdown("### Ping RTT while iperf ran (loaded)\n\n"
                     "Minimum, average and maximum of 1360 pings per column, on a symmetric-log axis (the "
                     "Solaris ping reports whole milliseconds, hence the 0 ms minima); loss in the tooltip of "
                     "the bar."))
    rtt = table[(table["measures"] == "rtt")]
    rstats = {"min": "minimum", "mean": "average", "max": "maximum"}
    rpoints = pd.DataFrame({"category": rtt["column"], "statistic": rtt["statistic"].map(rstats),
                            "value": rtt["value_fixed_si"] * 1e3, "status": rtt["status"], "quote": rtt["quote"]})
    lo = rtt[rtt["statistic"] == "min"].set_index("column")["value_si"] * 1e3
    hi = rtt[rtt["statistic"] == "max"].set_index("column")["value_si"] * 1e3
    loss = table[table["measures"] == "loss"].set_index("column")["value"]
    sent = table[table["measures"] == "pings_sent"].set_index("column")["value"]
    rranges = pd.DataFrame({"category": lo.index, "low": lo.values, "high": hi.reindex(lo.index).values,
                            "what": [f"min to max; loss {int(loss[c])}/{int(sent[c])}" for c in lo.index]})
    display(charts.range_dots(rpoints, rranges, unit="loaded ping RTT (ms)", scale="symlog", range_label="bar",
                              title="Tersk03 → host: ping RTT during the iperf runs"))
    hosts = reproduce.seed_000_hosts(p, _ledger_of(p))
    flagged = set(table.loc[table["status"].isin(["erratum", "differs"]), "column"])
    display(Markdown("The table as transcribed (Mbit/s, ms). Columns marked * hold a value the ledger flags (see "
                     "below); a misprinted unit is shown as the value the ledger derives (345 bit/s as 345 Mbit/s), "
                     "a misprinted date as printed."))
    display(HTML(_simple_table(pd.DataFrame({
        "column": [c + (" *" if c in flagged else "") for c in hosts["column"]],
        "average": hosts["mean_mbps"].round(1), "median": hosts["median_mbps"].round(1),
        "max": hosts["max_mbps"].round(1), "IQR": hosts["iqr_mbps"].round(1),
        "RTT min": hosts["rtt_min_ms"].round(2), "RTT avg": hosts["rtt_mean_ms"].round(2),
        "RTT max": hosts["rtt_max_ms"].round(1), "loss": hosts["loss"].astype(str) + "/" + hosts["pings"].astype(str),
        "start": hosts["start"].str.replace("T", " "), "end": hosts["end"].str.replace("T", " ")}))))


def _ledger_of(p):
    """The ledger columns carried by :func:`published_frame`, as :func:`reproduce.seed_000_hosts` wants them."""
    return pd.DataFrame({"claim": p["id"], "status": p["status"], "derived_value": p["derived_value"]})


def _published_001(p):
    apps = reproduce.seed_001_apps(p)
    display(Markdown("### Average transfer rates: applications x TCP stacks x networks\n\n"
                     "Mbit/s as printed; where a range was printed (350–370) the bar is at its middle and a "
                     "black rule spans it. Cells the document leaves empty have no bar."))
    display(charts.grouped_ranges(apps.replace({"app": {"Iperf": "iperf"}}), title="Average transfer rates (Mbit/s)"))
    rows = _rows(p, "001")
    lat = reproduce.seed_001_latency(p)
    status = rows.set_index("id")["status"]
    measured_ids = ["001-370dle-32-slope", "001-370dle-64-slope", "001-p4dp6-slope", "001-p4dp6-slope-flat"]
    expect_ids = ["001-370dle-32-expect", "001-370dle-64-expect", "001-p4dp6-expect", "001-p4dp6-expect"]
    labels = [f"{b}, PCI {c}" for b, c in zip(lat["board"], lat["pci"])]
    slopes = pd.concat([
        pd.DataFrame({"board": labels, "kind": "measured", "slope": lat["measured_us_per_byte"],
                      "status": [status.get(i, "") for i in measured_ids]}),
        pd.DataFrame({"board": labels, "kind": "expected (printed)", "slope": lat["expected_us_per_byte"],
                      "status": [status.get(i, "") for i in expect_ids]}),
        pd.DataFrame({"board": labels, "kind": "expected (PCI + GigE + PCI, derived)",
                      "slope": lat["expected_theory_us_per_byte"], "status": "derived"})], ignore_index=True)
    display(Markdown("### UDPmon latency slopes: measured vs expected\n\n"
                     "The slope of request–response latency against frame size should be the sum of 1/rate "
                     "of the data paths a byte crosses (send PCI, Gigabit Ethernet, receive PCI). Measured "
                     "slopes above the expectation point to extra data moves."))
    display(charts.slope_dots(slopes))
    udp = rows[(rows["measures"] == "throughput") & (rows["statistic"] == "max")
               & rows["config"].str.contains("board=")]
    cfg = pub.config_frame(udp)
    spacing = rows[rows["statistic"] == "loss_free_above"]
    free = pd.Series(spacing["value"].to_numpy(),
                     index=spacing["id"].str.replace(r"-spacing(-free)?$", "", regex=True))
    keys = udp["id"].str.replace(r"-max$", "", regex=True)
    bars = pd.DataFrame({
        "category": [f"{b} · {n} · {c}" for b, n, c in zip(cfg["board"], cfg.get("nic", ""), cfg.get("pci", ""))],
        "value": udp["value_si"].values / MBIT, "kind": "UDP, max", "status": udp["status"].values,
        "quote": udp["quote"].values,
        "detail": [f"no loss above {free[k]:g} us spacing" if k in free else "" for k in keys]})
    display(Markdown("### UDP throughput per board and NIC\n\nMaximum UDPmon receive rate; the tooltip gives the "
                     "spacing above which no packet was lost."))
    display(charts.category_bars(bars, unit="throughput (Mbit/s)", title="Maximum UDP throughput (UDPmon)",
                                 hrules=pd.DataFrame({"value": [1000.0], "label": ["Gigabit Ethernet"]})))
    coal = rows[rows["id"].str.startswith("001-coal-rx")]
    cfg = pub.config_frame(coal)
    coal = coal.assign(setting=cfg["coalescence"])
    ends = coal[coal["statistic"].isin(["range_low", "range_high"])]
    points = pd.DataFrame({"category": ends["setting"], "statistic": ends["statistic"].map(
        {"range_low": "low end", "range_high": "high end"}), "value": ends["value_si"] / MBIT,
        "status": ends["status"], "quote": ends["quote"]})
    pm = coal[coal["statistic"] == "pm"].set_index("setting")["value"]
    ranges = (ends.pivot_table(index="setting", columns="statistic", values="value_si", sort=False) / MBIT).reset_index()
    ranges = pd.DataFrame({"category": ranges["setting"], "low": ranges["range_low"], "high": ranges["range_high"],
                           "what": [f"printed range, ± {pm[c]:g} Mbit/s" for c in ranges["setting"]]})
    display(Markdown("### Interrupt coalescence and TCP throughput\n\nTCP memory-to-memory lon2 → man1 with the socket "
                     "buffer set to RTT x bandwidth, for three receive-interrupt settings: without receive "
                     "coalescence the rate swings over 160 Mbit/s; with it, it holds at 937–940 Mbit/s."))
    display(charts.range_dots(points, ranges, unit="TCP throughput (Mbit/s)", zero=False, range_label="bar",
                              title="Throughput range per interrupt-coalescence setting (Intel Pro/1000)"))
    ten = _ids(rows, ["001-10ge-1500", "001-10ge-datatag-rate", "001-10ge-slac-rate", "001-10ge-openlab-rate",
                      "001-10ge-pcix-expected"])
    tbars = pd.DataFrame({
        "category": ["1500-byte MTU", "DataTAG Xeon 2.2 GHz, mmrbc 512", "SLAC Dell Xeon 3.0 GHz, mmrbc 4096",
                     "CERN OpenLab Itanium 1.0 GHz, mmrbc 4096", "expected from PCI-X timings, mmrbc 4096"],
        "value": ten["value_si"] / 1e9, "kind": ["measured"] * 4 + ["expected"], "status": ten["status"],
        "quote": ten["quote"]})
    display(Markdown("### 10 Gigabit Ethernet: UDP rates and the PCI-X burst size\n\n16144-byte MTU unless "
                     "stated; the PCI-X maximum memory read byte count (mmrbc) sets how much of the bus a transfer "
                     "can use."))
    display(charts.category_bars(tbars, unit="UDP throughput (Gbit/s)", title="10 GbE UDP throughput"))


def _published_002(p):
    rows = _rows(p, "002")
    ids = ["002-t3-capacity", "002-t3-effective", "002-bottleneck", "002-oc3", "002-sep2001-max", "002-oc12",
           "002-iperf-rate", "002-aug02-srtt-onset"]
    labels = ["Sep 2000: T3 ATM link, nominal", "Sep 2000: T3, effective capacity",
              "Oct 2000: bottleneck (path characterisation)", "2001: SLAC OC3 link",
              "Sep 2001: maxima, ≥ 8 streams, windows ≥ 64 KB (top 10 %)", "Nov 2001: SLAC OC12 PoS link",
              "Nov 2001: one 1 s iperf run, 512 KB window", "Aug 2002: SRTT starts growing above"]
    r = _ids(rows, ids)
    kinds = np.where(r["measures"] == "capacity", "link capacity", "measured throughput")
    bars = pd.DataFrame({"category": labels, "value": r["value_si"] / MBIT, "kind": kinds, "status": r["status"],
                         "quote": r["quote"]})
    display(Markdown("### Window and stream maxima against the path's capacities\n\n"
                     "Every rate the document states for the SLAC → ANL path, in date order."))
    display(charts.category_bars(bars, unit="Mbit/s", title="SLAC → ANL: capacities and measured maxima"))
    wids = ["002-pharlap-tcp_xmit_hiwat", "002-pharlap-tcp_recv_hiwat", "002-anl-max-rwin", "002-wscale-trace-max",
            "002-iperf-w", "002-pharlap-tcp_cwnd_max", "002-pharlap-tcp_max_buf", "002-anl-rmem_max", "002-aug02-maxwin"]
    wl = ["pharlap tcp_xmit_hiwat", "pharlap tcp_recv_hiwat", "ANL max receive window (wscale 0)",
          "wiggum's SYN/ACK: wscale 1 → max window", "iperf -w 512k (requested)", "pharlap tcp_cwnd_max",
          "pharlap tcp_max_buf", "ANL rmem_max after 7 Nov 2001", "Aug 2002: largest window"]
    w = _ids(rows, wids)
    kinds = ["setting"] * 2 + ["limit"] * 2 + ["requested"] + ["setting"] * 4
    display(Markdown("### Windows: settings, requests and the window-scaling limit\n\n"
                     "A receiver that advertises window scale *s* can offer at most 65535 x 2^*s* bytes: "
                     "wscale 1 caps the 512 KB request at 128 KB, whatever the buffers allow. Log axis."))
    wbars = pd.DataFrame({"category": wl, "value": w["value_si"] / 1024, "kind": kinds, "status": w["status"],
                          "quote": w["quote"]})
    display(charts.category_bars(wbars, unit="window (KiB)", title="SLAC → ANL: window sizes", scale="log"))


def _published_003(p):
    rows = _rows(p, "003")
    ids = ["003-nton-peak", "003-udp-poweredge", "003-udp-other", "003-udp-total", "003-udp-received",
           "003-i2-in", "003-i2-out", "003-floor-caltech", "003-floor-both"]
    labels = ["NTON: TCP peak, 128 KB x 25 streams", "UDP sent by the PowerEdge", "UDP sent by the 2nd PC",
              "UDP sent, total", "UDP received at SLAC (5 min average)", "Internet2: into SLAC (sustained)",
              "Internet2: out of SLAC", "floor: PowerEdge → Caltech booth", "floor: PowerEdge → Caltech + 2nd Dell"]
    kinds = ["TCP", "UDP", "UDP", "UDP", "UDP", "TCP", "TCP", "TCP", "TCP"]
    r = _ids(rows, ids)
    bars = pd.DataFrame({"category": labels, "value": r["value_si"] / MBIT, "kind": kinds, "status": r["status"],
                         "quote": r["quote"]})
    ref = _ids(rows, ["003-ppdg-goal", "003-oc48"])
    hrules = pd.DataFrame({"value": ref["value_si"] / MBIT, "label": ["PPDG goal 100 MByte/s", "NTON OC48"]})
    display(Markdown("### The SC2000 figures\n\nEvery rate stated for 9 November 2000, Mbit/s; dashed: the PPDG goal "
                     "and the OC48 capacity."))
    display(charts.category_bars(bars, unit="throughput (Mbit/s)", title="SC2000 → SLAC: rates", hrules=hrules,
                                 color_title="protocol"))
    rtt = _ids(rows, ["003-ping-min", "003-ping-avg", "003-ping-max"])
    points = pd.DataFrame({"category": "SLAC → booth, 56 bytes, 370 pings", "statistic": ["minimum", "average", "maximum"],
                           "value": rtt["value_si"] * 1e3, "status": rtt["status"], "quote": rtt["quote"]})
    ranges = pd.DataFrame({"category": ["SLAC → booth, 56 bytes, 370 pings"], "low": [points["value"].min()],
                           "high": [points["value"].max()], "what": ["min to max; no loss in 370"]})
    display(Markdown("### Ping RTT distribution\n\nThe document shows the distribution as a histogram; its "
                     "min/avg/max survive. The average close to the minimum and a far maximum: a few slow "
                     "replies in a tight distribution."))
    display(charts.range_dots(points, ranges, unit="ping RTT (ms)", title="SLAC → SC2000 booth: ping RTT",
                              range_label="bar"))


def _published_004(p):
    ping = reproduce.seed_004_ping(p)
    rows = _rows(p, "004")
    names = {"min": "minimum", "median": "median", "mean": "average", "max": "maximum"}
    pts, rng = [], []
    for r in ping.itertuples():
        cat = f"{r.month.capitalize()} · {r.packet_size} bytes · {r.n} pings"
        for s, label in names.items():
            claim = f"004-ping-{r.month}-{r.packet_size}-{s}"
            row = rows.set_index("id").loc[claim]
            pts.append({"category": cat, "statistic": label, "value": getattr(r, f"{s}_ms"),
                        "status": row["status"], "quote": row["quote"]})
        rng.append({"category": cat, "low": r.min_ms, "high": r.max_ms, "what": "min to max"})
    bad = ping[ping["median_erratum"]]
    note = "".join(f" The {r.month.capitalize()} {r.packet_size}-byte median ({r.median_ms:g} ms) lies outside "
                   f"that row's own min–max ({r.min_ms:g}–{r.max_ms:g} ms): an erratum (ringed; see the ledger)."
                   for r in bad.itertuples())
    display(Markdown("### Ping RTT by packet size, August vs September 2002\n\n"
                     "The table's four rows: minimum, median, average and maximum of each sample." + note))
    display(charts.range_dots(pd.DataFrame(pts), pd.DataFrame(rng), unit="ping RTT (ms)", zero=False,
                              title="RAL ↔ CERN: ping RTT by packet size", range_label="bar"))
    buf = rows[rows["group"] == "004-buffers"]
    cfg = pub.config_frame(buf)
    table = pd.DataFrame({"host": cfg["host"], "kernel parameters": cfg["kernel_params"], "parameter": cfg["param"],
                          "KiB": buf["value"]})
    wide = table.pivot_table(index=["kernel parameters", "parameter"], columns="host", values="KiB", aggfunc="first",
                             sort=False).reset_index()
    wide.columns.name = None
    display(Markdown("### Socket buffer limits of the two hosts\n\nAs printed, in KiB (the page divides bytes by "
                     "1024: 63.999 = 65535/1024)."))
    display(HTML(_simple_table(wide)))


_PUBLISHED = {"000": _published_000, "001": _published_001, "002": _published_002, "003": _published_003,
              "004": _published_004}


def _simple_table(df, classes="thruput-plain"):
    """A DataFrame as an HTML table, numbers as printed (no rounding beyond 10 digits)."""
    return df.to_html(index=False, classes=classes, border=0, na_rep="–", float_format=lambda v: f"{v:.10g}")


# --------------------------------------------------------------------------- theory

def study_theory(published, seed, processed=None):
    """The theory curves of :func:`thruput.reproduce.theory_curves` for this study, with
    the published figures they explain drawn on them. Displays; returns None."""
    p = published_frame(published, processed)
    curves = reproduce.theory_curves(p)
    fn = _THEORY.get(_seed(seed))
    if fn is None:
        return Markdown("No theory curves for this study.")
    fn(p, curves[curves["seed"] == _seed(seed)])


def _window_points(rows):
    """Throughput statements with a window, as (window KiB, Mbit/s) points."""
    t = rows[(rows["measures"] == "throughput") & rows["window_bytes"].notna()]
    what = [f"{s}→{d}, {w}, {n} stream{'s' if n != 1 else ''}" for s, d, w, n in
            zip(t["src"], t["dst"], t["window"], t["streams"].fillna(1).astype(int))]
    return _points(t, t["window_bytes"] / 1024, t["value_si"] / MBIT, what), t


def _theory_000(p, curves):
    rows = _rows(p, "000")
    points, _ = _window_points(rows)
    display(Markdown("### One stream is window-limited\n\n"
                     "A TCP stream cannot carry more than one window per round trip: throughput ≤ window / RTT "
                     "(lines: the minimum ping RTT of each datamove pair, capped at the 1 Gbit/s interfaces). "
                     "Diamonds: the single- and multi-stream figures the document states, coloured by their "
                     "ledger status; 64.8 kbit/s is the misprint of 64.8 Mbit/s. The measured points sit well "
                     "below the bound: at 0.2 ms the bound is loose, and the Solaris hosts' CPUs and stacks "
                     "limit first."))
    display(charts.theory_points(curves, points, "window (KiB)", "throughput (Mbit/s)", x_scale="log",
                                 title="Window-limited throughput vs the published figures"))


def _theory_001(p, curves):
    rows = _rows(p, "001")
    reno = reproduce.seed_001_reno(p)
    display(Markdown("### TCP Reno's response function (Mathis)\n\n"
                     "Throughput ≈ (MSS / RTT) x 1.22 / √p for loss rate p, at the RTTs of the networks in the "
                     "talk. Diamonds: the Reno table's supporting loss rates at 200 ms, which lie on the 200 ms "
                     "line; dashed: the loss the MB-NG and DataTAG tests induced."))
    loss = np.logspace(-11, -3, 81)
    rtt = float(_ids(rows, ["001-reno-rtt"])["value_si"].iloc[0])
    extra = pd.DataFrame({"x": loss, "y": theory.mathis_throughput(1500, rtt, loss) / MBIT,
                          "label": f"Reno (Mathis), Reno-table RTT {rtt * 1e3:g} ms, MSS 1500"})
    mathis = pd.concat([curves[curves["curve"] == "mathis"][["x", "y", "label"]], extra], ignore_index=True)
    mathis = mathis[(mathis["y"] <= 1e5) & (mathis["x"] >= 1e-11)]
    loss_rows = _ids(rows, [f"001-reno-{k}-loss" for k in ("10mbps", "100mbps", "1gbps", "10gbps")])
    points = _points(loss_rows, reno["loss_rate"], reno["throughput_bps"] / MBIT,
                     [f"Reno table: {c / MBIT:g} Mbit/s needs loss ≤ {l:.1e}" for c, l in
                      zip(reno["throughput_bps"], reno["loss_rate"])])
    drops = _ids(rows, ["001-hp-mbng-drop", "001-hp-datatag-drop"])
    vrules = pd.DataFrame({"x": drops["value_si"], "label": ["MB-NG drop 1 in 25,000", "DataTAG drop 1 in 10^6"]})
    display(charts.theory_points(mathis, points, "loss rate (fraction of packets)", "throughput (Mbit/s)",
                                 x_scale="log", y_scale="log", vrules=vrules,
                                 title="Throughput a Reno stream can sustain vs loss rate"))
    display(Markdown("### Time for Reno to recover from one loss\n\n"
                     "ρ = C x RTT² / (2 MSS) at RTT 200 ms, MSS 1500 bytes; diamonds: the table's recovery times "
                     "(17 s, 2 min 50 s, 28 min, 4 h 43 min)."))
    rec_rows = _ids(rows, [f"001-reno-{k}-recovery" for k in ("10mbps", "100mbps", "1gbps", "10gbps")])
    rec = curves[curves["curve"] == "reno_recovery"][["x", "y", "label"]]
    display(charts.theory_points(rec, _points(rec_rows, reno["throughput_bps"] / MBIT, reno["recovery_s"],
                                              [f"{c / MBIT:g} Mbit/s" for c in reno["throughput_bps"]]),
                                 "capacity (Mbit/s)", "recovery time (s)", x_scale="log", y_scale="log",
                                 title="Reno loss-recovery time vs capacity"))
    display(Markdown("The Reno table, published beside the formulas (RTT 200 ms, MSS 1500 bytes):"))
    display(HTML(_simple_table(pd.DataFrame({
        "throughput (Mbit/s)": reno["throughput_bps"] / MBIT,
        "window (packets)": reno["window_pkts"], "C x RTT / MSS": reno["window_pkts_theory"].round(0),
        "recovery (s)": reno["recovery_s"], "C x RTT² / 2 MSS (s)": reno["recovery_s_theory"].round(1),
        "loss rate": [f"{v:.1e}" for v in reno["loss_rate"]],
        "Mathis loss rate": [f"{v:.2e}" for v in reno["loss_rate_theory"]]}))))


def _theory_002(p, curves):
    rows = _rows(p, "002")
    top = _ids(rows, ["002-sep2001-max"])
    at8 = curves[curves["x"] == 8].set_index("label")["y"]
    display(Markdown("### Parallel streams compensate a small window\n\n"
                     "n streams each limited to one window per RTT carry n x window / RTT, up to the link "
                     "(here OC3). Lines: the 64 KB (wscale 0) and 128 KB (wscale 1) limits over the 50.1 ms "
                     "handshake RTT of the snoop trace. Diamond: the top 10 % of September 2001, over 118 Mbit/s "
                     "from 8 streams on. At 8 streams the lines give "
                     + " and ".join(f"{y:.0f} Mbit/s ({label.split(' (')[0]})" for label, y in at8.items())
                     + "; whether the published figure fits under its line is the ledger's bound check, and its "
                     "status colours the diamond."))
    pts = _points(top, [8], top["value_si"] / MBIT, ["Sep 2001: > 118 Mbit/s, ≥ 8 streams, ≥ 64 KB"])
    display(charts.theory_points(curves[["x", "y", "label"]], pts, "parallel streams", "throughput (Mbit/s)",
                                 title="n x window / RTT vs the published maxima"))
    rtt = float(_ids(rows, ["002-snoop-synack-time"])["value_si"].iloc[0])
    windows = np.geomspace(8, 1024, 29)
    line = pd.DataFrame({"x": windows, "y": theory.window_limited_throughput(windows * 1024, rtt, 1) / MBIT,
                         "label": f"1 stream: window / {rtt * 1e3:g} ms"})
    w = _ids(rows, ["002-anl-max-rwin", "002-wscale-trace-max", "002-iperf-w"])
    vrules = pd.DataFrame({"x": w["value_si"] / 1024, "label": ["wscale 0: 64 KB", "wscale 1: 128 KB", "requested 512 KB"]})
    run = _ids(rows, ["002-iperf-rate"])
    pts = _points(run, [512], run["value_si"] / MBIT, ["iperf -w 512k -t 1 (1.1 s, mostly slow start)"])
    limit = float(theory.window_limited_throughput(w["value_si"].iloc[1], rtt, 1)) / MBIT
    display(Markdown("### The window-scaling point\n\n"
                     "Whatever window iperf asks for, the receiver's window scale caps what it can advertise. "
                     f"With wscale 1 one stream is limited to 128 KB / {rtt * 1e3:g} ms = {limit:.1f} Mbit/s, which is "
                     "why every window request above 64–128 KB gave the same curve."))
    links = _ids(rows, ["002-oc3", "002-oc12"])
    hrules = pd.DataFrame({"y": links["value_si"] / MBIT, "label": ["OC3", "OC12"]})
    display(charts.theory_points(line, pts, "window (KiB)", "throughput (Mbit/s)", x_scale="log", y_scale="log",
                                 vrules=vrules, hrules=hrules,
                                 title="One stream: window / RTT and the window-scale limits"))


def _theory_003(p, curves):
    rows = _rows(p, "003")
    peak = _ids(rows, ["003-nton-peak"])
    goal = _ids(rows, ["003-ppdg-goal"])
    at25 = float(curves.loc[curves["x"] == 25, "y"].iloc[0])
    display(Markdown("### 25 streams x 128 KB over 48.6 ms\n\n"
                     "The bound n x window / RTT for 128 KB windows over the minimum ping RTT. 25 streams x 128 KB "
                     f"carry at most {at25:.0f} Mbit/s over one path at that RTT; the 990 Mbit/s peak was measured "
                     "with two PC → Sun pairs over a few 2 s samples. The ledger weighs the claim against the bound "
                     "(its status colours the diamond; the reasoning is in the ledger below)."))
    pts = _points(peak, [25], peak["value_si"] / MBIT, ["990 Mbit/s peak, 128 KB x 25 streams"])
    hrules = pd.DataFrame({"y": goal["value_si"] / MBIT, "label": ["PPDG goal 100 MByte/s"]})
    display(charts.theory_points(curves[["x", "y", "label"]], pts, "parallel streams", "throughput (Mbit/s)",
                                 hrules=hrules, title="n x 128 KB / 48.6 ms vs the SC2000 peak"))


def _theory_004(p, curves):
    rows = _rows(p, "004")
    v = rows.set_index("id")
    vr = pd.DataFrame({"x": [v.at["004-deviation-128k", "value_si"] / 1024, v.at["004-half-meg", "value_si"] / 1024,
                             v.at["004-plateau-1024", "value_si"] / 1024, v.at["004-server-max-2mb", "value_si"] / 1024],
                       "label": ["128 KB: max departs from median", "0.5 MB: little spread below",
                                 "≈1024 KB: plateau", "2 MB: iperf server's max window"]})
    hr = pd.DataFrame({"y": [v.at["004-median-100", "value_si"] / MBIT, v.at["004-min-25", "value_si"] / MBIT,
                             v.at["004-udp-480", "value_si"] / MBIT],
                       "label": ["TCP medians below 100 Mbit/s", "TCP minimum ≈ 25 MByte/s (printed mBytes)",
                                 "UDP: most above 480 Mbit/s (10th–90th pct proposed)"]})
    display(Markdown("### Throughput vs socket buffer size: the plateau\n\n"
                     "Theory: one stream carries at most buffer / RTT (line: the 17.684 ms August minimum ping "
                     "RTT, capped at 1 Gbit/s), so throughput grows linearly with the buffer and then flattens "
                     "where something else limits. The document's graphs are lost; its statements survive as "
                     "the dashed rules. The line reaches 100 Mbit/s near 216 KB and 1 Gbit/s near 2.1 MB: "
                     "the observed plateau near 1 MB with medians below 100 Mbit/s means the path, not the "
                     "buffer, limited most transfers."))
    display(charts.theory_points(curves[["x", "y", "label"]], None, "socket buffer (KiB)", "throughput (Mbit/s)",
                                 x_scale="log", vrules=vr, hrules=hr,
                                 title="RAL ↔ CERN: buffer / RTT and the published statements"))


_THEORY = {"000": _theory_000, "001": _theory_001, "002": _theory_002, "003": _theory_003, "004": _theory_004}


# --------------------------------------------------------------------------- ledger tables

def _fmt(value, digits=10):
    """A ledger value for a table cell: numbers without float noise, dates as printed.

    ``digits`` significant digits: 10 keeps every printed value as printed (8191.999).
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return html.escape(str(value))
    if x == 0:
        return "0"
    if abs(x) >= 1e6 and float(x).is_integer():
        return f"{x:,.0f}"
    if 1e-4 <= abs(x) < 1e6:
        return f"{x:.{digits}g}"
    return f"{x:.{min(digits, 4)}g}"


def _quote(text):
    """The printed text as a reader sees it: the seeds' slide transcripts keep Markdown bold
    markers (``**0.0286 μ s/byte**``), which are typography, not text."""
    return " ".join(str(text).replace("**", "").split())


def _ledger_html(rows, link_seed=False):
    head = "".join(f"<th>{h}</th>" for h in (["study"] if link_seed else []) + list(_LEDGER_HEADINGS.values()))
    body = []
    for r in rows.itertuples():
        notes = [n.strip() for n in str(r.note if isinstance(r.note, str) else "").split(" | ") if n.strip()]
        note = ("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>") if len(notes) > 1 \
            else html.escape(notes[0]) if notes else ""
        seed_cell = f'<td><a href="study-{r.seed}.html">{r.seed}</a></td>' if link_seed else ""
        unit = "" if r.published_unit in (None, "1") or pd.isna(r.published_unit) else r.published_unit
        body.append(
            f"<tr>{seed_cell}<td class=\"claim\">{html.escape(r.claim)}</td>"
            f"<td class=\"quote\">{html.escape(_quote(r.quote))}</td>"
            f"<td class=\"num\">{_fmt(r.published_value)}</td><td>{html.escape(str(unit))}</td>"
            f"<td class=\"num\">{_fmt(r.derived_value, 6)}</td><td>{_badge(r.status)}</td><td>{note}</td></tr>")
    return (f'<table class="thruput-ledger"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def study_ledger(processed, seed):
    """The ledger rows of one study, grouped by status (errata first), as readable tables.

    ``derived`` is in the published unit; for bound checks it is the bound itself.
    """
    ledger = _ledger(processed)
    rows = ledger[ledger["seed"] == _seed(seed)]
    if rows.empty:
        return Markdown("The reproduction ledger has not been built (`thruput reproduce`).")
    parts = [_STYLE]
    for status in reproduce.STATUSES:
        group = rows[rows["status"] == status]
        if group.empty:
            continue
        heading = f"{_badge(status)} {len(group)} figure{'s' if len(group) != 1 else ''}"
        table = _ledger_html(group)
        if status in _FOLDED:
            parts.append(f'<details class="thruput-fold"><summary>{heading} (click to show)</summary>{table}</details>')
        else:
            parts.append(f"<h4>{heading}</h4>{table}")
    return HTML("\n".join(parts))


def ledger_summary(processed):
    """Counts of ledger rows by status, one row per study plus ``all`` (linked to the pages)."""
    ledger = _ledger(processed)
    if ledger.empty:
        return Markdown("The reproduction ledger has not been built (`thruput reproduce`).")
    table = reproduce.summary(ledger).reset_index()
    table.insert(1, "document", [STUDIES.get(s, {}).get("title", "all five documents") for s in table["seed"]])
    table["seed"] = [f'<a href="study-{s}.html">{s}</a>' if s in STUDIES else s for s in table["seed"]]
    table = table.rename(columns={"seed": "study"})
    return HTML(_STYLE + table.to_html(index=False, escape=False, border=0, classes="thruput-summary"))


def ledger_status_chart(processed):
    """Stacked bars of the same counts, one bar per study."""
    ledger = _ledger(processed)
    if ledger.empty:
        return Markdown("The reproduction ledger has not been built.")
    counts = ledger.groupby(["seed", "status"]).size().rename("n").reset_index()
    counts["study"] = [f"{s}: {STUDIES.get(s, {}).get('title', s).split(' (')[0]}" for s in counts["seed"]]
    return charts.status_counts(counts)


def ledger_differences_chart(processed):
    """Every numeric ``differs`` figure: how far the published value is from its derivation (%).

    For bound checks the derived value is the bound, so a positive percentage is by how much
    the published figure exceeds what the bound allows.
    """
    ledger = _ledger(processed)
    rows = ledger[ledger["status"] == "differs"].copy()
    rows["published"] = pd.to_numeric(rows["published_value"], errors="coerce")
    rows = rows[rows["published"].notna() & rows["derived_value"].notna() & (rows["derived_value"] != 0)]
    if rows.empty:
        return Markdown("No figure differs from its derivation.")
    diffs = pd.DataFrame({
        "claim": rows["claim"], "study": rows["seed"], "published": rows["published"],
        "derived": rows["derived_value"], "unit": rows["published_unit"], "quote": rows["quote"].map(_quote),
        "percent": (rows["published"] - rows["derived_value"]) / rows["derived_value"] * 100})
    return charts.relative_differences(diffs)


def ledger_problems(processed):
    """Every ``differs`` and ``erratum`` row with its reasoning, study by study."""
    ledger = _ledger(processed)
    if ledger.empty:
        return Markdown("The reproduction ledger has not been built.")
    rows = ledger[ledger["status"].isin(["erratum", "differs"])]
    parts = [_STYLE, f"<p>{(rows['status'] == 'erratum').sum()} errata and {(rows['status'] == 'differs').sum()} "
             "figures that differ from their derivation. <i>derived</i> is in the published unit; the "
             "reasoning lists what each check that looked at the figure found.</p>"]
    for seed, group in rows.groupby("seed", sort=True):
        title = STUDIES.get(seed, {}).get("title", "")
        parts.append(f'<h3><a href="study-{seed}.html">Study {seed}</a>: {html.escape(title)}</h3>')
        order = {s: i for i, s in enumerate(reproduce.STATUSES)}
        group = group.assign(_o=group["status"].map(order)).sort_values("_o", kind="stable")
        parts.append(_ledger_html(group))
    return HTML("\n".join(parts))


# --------------------------------------------------------------------------- side by side

#: The effects a bundled campaign can show, per study (see :func:`study_side_by_side`).
EFFECTS = {
    "000": ("window", "rtt"),
    "001": ("latency", "udp"),
    "002": ("streams", "rtt"),
    "003": ("streams",),
    "004": ("window",),
}


#: The effects, as the page names them.
EFFECT_NAMES = {"window": "window-limited throughput and its plateau",
                "streams": "parallel streams compensating small windows",
                "rtt": "RTT growing under load", "latency": "UDP latency growing with frame size",
                "udp": "UDP throughput and loss against packet spacing"}


@functools.lru_cache(maxsize=32)
def _campaign(processed, name, mtime):
    return load_campaign(processed, name)


def _campaigns(processed):
    out = []
    for nc in sorted(Path(processed).glob("*.nc")):
        try:
            out.append(_campaign(str(processed), nc.stem, nc.stat().st_mtime))
        except (OSError, ValueError):
            continue
    return out


def _strength(ds, effect):
    """How strongly a TCP campaign shows ``effect`` (a ratio >= 1; 1 for other effects).

    - window: best / worst median throughput over windows, at the fewest streams;
    - streams: median at the most / at the fewest streams, at the smallest window;
    - rtt: highest loaded median RTT of a cell / unloaded median RTT of the campaign.
    """
    if effect in ("window", "streams"):
        med = stats.describe(ds["throughput"], "repeat")["median"]
        if effect == "window":
            line = med.isel(streams=0)
        else:
            line = med.isel(window=0).isel(streams=[0, -1])
            first, last = (float(v) for v in line.values)
            return last / first if first > 0 and np.isfinite(last / first) else 0.0
        lo, hi = float(line.min()), float(line.max())
        return hi / lo if lo > 0 else 0.0
    if effect == "rtt":
        rtt = ds["rtt"].where(ds["rtt_status"] == "reply") if "rtt_status" in ds else ds["rtt"]
        unloaded = float(rtt.sel(phase="unloaded").median(skipna=True))
        loaded = rtt.sel(phase="loaded").median(dim=[d for d in ("repeat", "probe") if d in rtt.dims], skipna=True)
        top = float(loaded.max(skipna=True))
        return top / unloaded if unloaded > 0 and np.isfinite(top) else 0.0
    return 1.0


def _score(ds, effect):
    """Prefer a shaped path (a known capacity) over loopback, then the campaign that shows
    the effect most strongly (:func:`_strength`), then the larger sweep."""
    meta = metadata(ds)
    path = meta.get("path", {}) or {}
    loop = "loopback" in str(path.get("between", "")).lower()
    size = int(np.prod([ds.sizes.get(d, 1) for d in ("window", "streams")]))
    return (path.get("capacity_bps") is not None, not loop, round(_strength(ds, effect), 1), size)


#: A campaign "shows" an effect when its :func:`_strength` reaches this ratio (a 50 % change).
MIN_STRENGTH = 1.5


def _pick(processed, effect):
    """The bundled campaign that shows ``effect`` best, or None if none shows it."""
    found = []
    for ds in _campaigns(processed):
        if effect in ("window", "streams", "rtt"):
            if not _is_tcp(ds):
                continue
            if effect == "window" and ds.sizes.get("window", 0) < 3:
                continue
            if effect == "streams" and ds.sizes.get("streams", 0) < 2:
                continue
            if effect == "rtt" and ("rtt" not in ds or "loaded" not in ds["phase"].values):
                continue
        elif effect == "latency" and "scan_latency_avg" not in ds:
            continue
        elif effect == "udp" and ("packet_size" not in ds or _is_tcp(ds)):
            continue
        if effect in ("window", "streams", "rtt") and _strength(ds, effect) < MIN_STRENGTH:
            continue
        found.append(ds)
    return max(found, key=lambda ds: _score(ds, effect)) if found else None


def _callout(ds, effect_text, pair=True):
    meta = metadata(ds)
    name = ds.attrs.get("campaign", "?")
    path = meta.get("path", {}) or {}
    dates = meta.get("dates", {}) or {}
    where = ""
    if path.get("source") and path.get("destination"):
        where = f": {path['source']} → {path['destination']}"
        where += f" over {path['between']}" if path.get("between") else ""
    when = f", recorded {str(dates['start'])[:10]}" if dates.get("start") else ""
    return HTML(
        _STYLE + '<div class="thruput-new"><b>New measurement on different hardware, not the original data.</b> '
        f'{html.escape(effect_text)} Campaign '
        f'<a href="campaign-{html.escape(name)}.html"><code>{html.escape(name)}</code></a>'
        f" ({html.escape(str(meta.get('title', name)))}){html.escape(where)}{html.escape(when)}."
        + (" The axes of the two charts are independent: compare the shape of the effect, not the numbers." if pair
           else "") + "</div>")


def _cells(ds):
    cells = cell_summary(ds).rename(columns={"p25": "q25", "p75": "q75"})
    rtt_s = _unloaded_rtt_s(ds)
    bound = None
    if rtt_s:
        bound = cells[["window", "streams"]].copy()
        bound["bound"] = theory.window_limited_throughput(bound["window"].to_numpy(float), rtt_s,
                                                          bound["streams"].to_numpy(float))
    return cells, bound, rtt_s


def study_side_by_side(processed, seed, published="data/published"):
    """Where a bundled campaign shows the effect the study reports, the published figure and
    the new measurement side by side, marked as a new measurement. Displays; returns None."""
    seed = _seed(seed)
    p = published_frame(published, processed)
    curves = reproduce.theory_curves(p)
    curves = curves[curves["seed"] == seed]
    missing = []
    for effect in EFFECTS.get(seed, ()):
        ds = _pick(processed, effect)
        if ds is None or not _SIDE[effect](p, seed, curves, ds):
            missing.append(EFFECT_NAMES[effect])
    if missing:
        display(Markdown(f"No bundled campaign shows {' or '.join(missing)} yet. A TCP campaign counts when the "
                         f"effect changes what it measures by at least {MIN_STRENGTH:g} x (the bundled campaigns are "
                         "listed in `params.yaml` and on the catalogue page)."))


def _side_window(p, seed, curves, ds):
    cells, bound, rtt_s = _cells(ds)
    name = ds.attrs.get("campaign", "campaign")
    capacity = metadata(ds).get("path", {}).get("capacity_bps")
    display(Markdown("### Window-limited throughput and its plateau"))
    display(_callout(ds, "Throughput grows with the window until the window covers the bandwidth-delay "
                         "product, then stays on a plateau."))
    rows = _rows(p, seed)
    if seed == "004":
        left = _left_004(p, curves)
    else:
        points, _ = _window_points(rows)
        left = charts.theory_points(curves[["x", "y", "label"]], points, "window (KiB)", "throughput (Mbit/s)",
                                    x_scale="log", width=charts.PAIR_WIDTH)
    right = charts.throughput_vs_window(cells, bound, capacity)
    display(charts.side_by_side(left, right, f"Study {seed}", f"Campaign {name}"))
    return 1


def _left_004(p, curves):
    v = _rows(p, "004").set_index("id")
    vr = pd.DataFrame({"x": [v.at["004-plateau-1024", "value_si"] / 1024], "label": ["≈1024 KB: plateau"]})
    hr = pd.DataFrame({"y": [v.at["004-median-100", "value_si"] / MBIT], "label": ["medians < 100 Mbit/s"]})
    return charts.theory_points(curves[["x", "y", "label"]], None, "socket buffer (KiB)", "throughput (Mbit/s)",
                                x_scale="log", vrules=vr, hrules=hr, width=charts.PAIR_WIDTH)


def _side_streams(p, seed, curves, ds):
    cells, bound, _ = _cells(ds)
    name = ds.attrs.get("campaign", "campaign")
    rows = _rows(p, seed)
    display(Markdown("### Parallel streams compensate small windows"))
    display(_callout(ds, "With a window too small for the path, n streams carry about n times as much, "
                         "until the path is full."))
    if seed == "002":
        top = _ids(rows, ["002-sep2001-max"])
        pts = _points(top, [8], top["value_si"] / MBIT, ["Sep 2001: > 118 Mbit/s, ≥ 8 streams"])
    else:
        peak = _ids(rows, ["003-nton-peak"])
        pts = _points(peak, [25], peak["value_si"] / MBIT, ["990 Mbit/s peak, 128 KB x 25 streams"])
    left = charts.theory_points(curves[["x", "y", "label"]], pts, "parallel streams", "throughput (Mbit/s)",
                                width=charts.PAIR_WIDTH)
    small = sorted(cells["window"].unique())[: max(1, min(4, cells["window"].nunique()))]
    sel = cells[cells["window"].isin(small)]
    right = charts.throughput_vs_streams(sel, None if bound is None else bound[bound["window"].isin(small)],
                                         title="Throughput vs streams (smallest windows)")
    display(charts.side_by_side(left, right, f"Study {seed}", f"Campaign {name}"))
    return 1


def _side_rtt(p, seed, curves, ds):
    cells, _, rtt_s = _cells(ds)
    if "rtt_median" not in cells or cells["rtt_median"].isna().all():
        return 0
    name = ds.attrs.get("campaign", "campaign")
    display(Markdown("### RTT grows under load"))
    display(_callout(ds, "While the path is busy, queues fill and ping RTT rises above its unloaded value.",
                     pair=seed != "002"))   # study 002 has no RTT figure to pair with
    unloaded = rtt_s * 1e3 if rtt_s else None
    log = _strength(ds, "rtt") > 10   # loaded RTTs an order of magnitude above the unloaded one
    if seed == "002":
        factor = float(_ids(_rows(p, "002"), ["002-aug02-srtt-factor"])["value"].iloc[0])
        display(Markdown("Study 002 prints no RTT values, only the statement that the web100 smoothed RTT grew up "
                         f"to {factor:g}-fold once throughput exceeded 300 Mbit/s; the dashed rule marks {factor:g} x "
                         "the campaign's unloaded RTT."))
        display(charts.rtt_vs_throughput(cells, unloaded, factor, log=log,
                                         title=f"Campaign {name}: loaded RTT vs throughput (new measurement)"))
        return 1
    table = _rows(p, "000")
    table = table[table["group"].str.startswith("000-table-") & (table["measures"].isin(["rtt", "throughput"]))]
    cfg = pub.config_frame(table)
    table = table.assign(column=cfg["column"])
    avg_rtt = table[(table["measures"] == "rtt") & (table["statistic"] == "mean")]
    avg_thr = table[(table["measures"] == "throughput") & (table["statistic"] == "mean") & (table["unit"] == "Mbit/s")]
    merged = avg_rtt.merge(avg_thr[["column", "value_fixed_si"]], on="column", suffixes=("", "_thr"))
    pts = _points(merged, merged["value_fixed_si_thr"] / MBIT, merged["value_si"] * 1e3, merged["column"])
    dm = _ids(_rows(p, "000"), ["000-dm8-rtt-avg"])
    hrules = pd.DataFrame({"y": dm["value_si"] * 1e3, "label": ["unloaded: datamove8→7 ping avg (same switch)"]})
    left = charts.theory_points(None, pts, "average throughput (Mbit/s)", "average loaded ping RTT (ms)",
                                hrules=hrules, width=charts.PAIR_WIDTH)
    right = charts.rtt_vs_throughput(cells, unloaded, log=log)
    display(charts.side_by_side(left, right, "Study 000", f"Campaign {name}"))
    return 1


def _side_latency(p, seed, curves, ds):
    name = ds.attrs.get("campaign", "campaign")
    pts = pd.DataFrame({"size": ds["scan_size"].values, "latency": ds["scan_latency_avg"].values}).dropna()
    if len(pts) < 2:
        return 0
    fit = stats.fit_latency(pts["size"], pts["latency"])
    lat = reproduce.seed_001_latency(p)
    labels = [f"{b}, PCI {c}" for b, c in zip(lat["board"], lat["pci"])]
    slopes = pd.concat([
        pd.DataFrame({"board": labels, "kind": "measured (2002–2004)", "slope": lat["measured_us_per_byte"],
                      "status": ""}),
        pd.DataFrame({"board": labels, "kind": "expected (PCI + GigE + PCI)",
                      "slope": lat["expected_theory_us_per_byte"], "status": ""})], ignore_index=True)
    low, high = lat["measured_us_per_byte"].min(), lat["measured_us_per_byte"].max()
    se = fit["slope_se"]
    where = "below" if fit["slope"] + se < low else "above" if fit["slope"] - se > high else "within"
    display(Markdown("### UDP latency vs frame size"))
    display(_callout(ds, "UDPmon request–response latency grows linearly with the frame size; the slope is the "
                         "time per byte of every copy and bus on the way."))
    display(Markdown(f"The campaign's fitted slope is {fit['slope']:.5f} ± {fit['slope_se']:.5f} us/byte (intercept "
                     f"{fit['intercept']:.1f} us), {where} the range of the published boards' measured slopes "
                     f"({low:.4f}–{high:.4f} us/byte). The paths differ: a veth pair between namespaces has no PCI "
                     "bus and no wire, but memory copies, the kernel stack and a rate shaper."))
    left = charts.slope_dots(slopes, title="Latency slopes (us/byte)").properties(width=charts.PAIR_WIDTH)
    right = charts.latency_vs_size(pts, fit)
    display(charts.side_by_side(left, right, "Study 001", f"Campaign {name}"))
    return 1


def _side_udp(p, seed, curves, ds):
    name = ds.attrs.get("campaign", "campaign")
    display(Markdown("### UDP throughput vs packet spacing"))
    display(_callout(ds, "Sending UDP frames closer together raises the rate until the slowest element (there a "
                         "PCI bus or NIC, here the path's shaper) saturates and frames are lost; compare the maximum "
                         "UDP throughput per board above.", pair=False))
    rows = ds[["spacing", "recv_rate", "loss_fraction", "packet_size"]].to_dataframe().reset_index()
    display(charts.udp_vs_spacing(rows, title=f"Campaign {name}: UDP receive rate and loss vs spacing "
                                              "(new measurement)"))
    return 1


_SIDE = {"window": _side_window, "streams": _side_streams, "rtt": _side_rtt, "latency": _side_latency,
         "udp": _side_udp}
