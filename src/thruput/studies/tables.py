"""Tidy tables and theory curves of the study pages, from the claims each ``page.yaml`` names.

Each function picks the published rows a study page charts (``tables`` and ``curves`` of
``studies/seed_<nnn>/page.yaml``) and returns them as a tidy DataFrame, beside the textbook
values of :mod:`thruput.stats.theory` where the page compares them. Nothing here decides a
verdict: the ledger (:func:`thruput.reproduce.build_ledger`) does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import units
from ..published import config_frame
from ..stats import theory
from . import StudyError, SEEDS, page
from .formulas import CONSTANTS

__all__ = ["seed_000_hosts", "seed_001_apps", "seed_001_reno", "seed_001_reno_line", "seed_001_latency",
           "seed_002_window_scaling", "seed_004_ping", "theory_curves"]


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
    """Seed 000's per-host table, one row per column of the table (``page.yaml``: ``tables.hosts``).

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
    spec = page("000")["tables"]["hosts"]
    si, fixed = _corrected(published, ledger)
    pub = published.set_index("id")
    rows = []
    for h in spec["hosts"]:
        key = lambda k: spec["claim"].format(stat=k, host=h)  # noqa: E731
        cfg = dict(p.split("=", 1) for p in pub.at[key("median"), "config"].split(";"))
        mine = {key(k) for k in ("avg-mbit", "median", "max", "iqr", "rtt-min", "rtt-avg", "rtt-max")}
        rows.append({
            "column": cfg["column"], "host": pub.at[key("median"), "dst"], "repeat": int(cfg["repeat"]),
            "mean_mbps": si[key("avg-mbit")] / 1e6, "median_mbps": si[key("median")] / 1e6,
            "max_mbps": si[key("max")] / 1e6, "iqr_mbps": si[key("iqr")] / 1e6,
            "rtt_min_ms": si[key("rtt-min")] * 1e3, "rtt_mean_ms": si[key("rtt-avg")] * 1e3,
            "rtt_max_ms": si[key("rtt-max")] * 1e3, "loss": int(pub.at[key("loss"), "value"]),
            "pings": int(pub.at[key("pings"), "value"]), "start": pub.at[key("start"), "date"],
            "end": pub.at[key("end"), "date"],
            "corrected": ",".join(sorted(fixed & mine)),
        })
    return pd.DataFrame(rows)


def seed_001_apps(published):
    """Seed 001's application x TCP stack table (Mbit/s), one row per printed cell.

    Returns
    -------
    pandas.DataFrame
        ``app``, ``stack``, ``network``, ``low``, ``high`` (equal unless a range was
        printed), ``mid`` (their mean), all Mbit/s; in the table's row and column order
        (``page.yaml``: ``tables.apps``).
    """
    spec = page("001")["tables"]["apps"]
    df = published[published["group"] == spec["group"]]
    cfg = config_frame(df)
    df = df.assign(app=cfg["app"], stack=cfg["stack"], network=cfg["network"], mbps=df["value_si"] / 1e6)
    out = df.pivot_table(index=["app", "stack", "network"], columns="statistic", values="mbps", aggfunc="first")
    low = out.get("range_low", pd.Series(np.nan, index=out.index)).fillna(out.get("mean"))
    high = out.get("range_high", pd.Series(np.nan, index=out.index)).fillna(out.get("mean"))
    res = pd.DataFrame({"low": low, "high": high}).reset_index()
    res["mid"] = (res["low"] + res["high"]) / 2
    res = res.sort_values(["app", "stack", "network"],
                          key=lambda col: col.map({v: i for i, v in enumerate(spec[col.name])}))
    return res.reset_index(drop=True)


def seed_001_reno(published):
    """Seed 001's Reno table beside :mod:`thruput.stats.theory` (RTT 200 ms, MSS 1500).

    Returns
    -------
    pandas.DataFrame
        ``throughput_bps``; ``window_pkts`` (published) and ``window_pkts_theory``;
        ``recovery_s`` and ``recovery_s_theory``; ``loss_rate`` and ``loss_rate_theory``.
    """
    spec = page("001")["tables"]["reno"]
    pub = published.set_index("id")
    rtt, mss = pub.at[spec["rtt"], "value_si"], spec["mss"]
    rows = []
    for k in spec["rates"]:
        key = lambda what: spec["claim"].format(rate=k, what=what)  # noqa: E731
        cap = pub.at[key("rate"), "value_si"]
        rows.append({"throughput_bps": cap,
                     "window_pkts": pub.at[key("window"), "value"],
                     "window_pkts_theory": theory.bdp_packets(cap, rtt, mss),
                     "recovery_s": pub.at[key("recovery"), "value_si"],
                     "recovery_s_theory": theory.reno_recovery_time(cap, rtt, mss),
                     "loss_rate": pub.at[key("loss"), "value"],
                     "loss_rate_theory": theory.mathis_loss_rate(cap, mss, rtt)})
    return pd.DataFrame(rows)


def seed_001_reno_line(published):
    """The Mathis line at the Reno table's RTT and MSS, over the table's loss rates.

    Returns
    -------
    pandas.DataFrame
        ``x`` (loss rate, 1, 10^-11 to 10^-3), ``y`` (Mbit/s, :func:`thruput.stats.theory.mathis_throughput`)
        and ``label`` (``page.yaml``: ``text.mathis_label`` with the RTT it uses).
    """
    spec = page("001")["tables"]["reno"]
    rtt = float(published.set_index("id").at[spec["rtt"], "value_si"])
    loss = np.logspace(-11, -3, 81)
    return pd.DataFrame({"x": loss, "y": theory.mathis_throughput(spec["mss"], rtt, loss) / 1e6,
                         "label": page("001")["text"]["mathis_label"].format(rtt_ms=rtt * 1e3)})


def seed_001_latency(published):
    """Seed 001's UDPmon latency slopes: measured, published expectation, and theory.

    Returns
    -------
    pandas.DataFrame
        ``board``, ``pci``, ``measured_us_per_byte``, ``expected_us_per_byte`` (as
        printed), ``expected_theory_us_per_byte`` (PCI + GigE + PCI from
        :func:`thruput.stats.theory.expected_latency_slope`), ``intercept_us``, and the
        claims ``measured_claim`` and ``expected_claim``.
    """
    pub = published.set_index("id")
    rows = []
    for r in page("001")["tables"]["latency"]:
        bus = (r["width"], CONSTANTS[r["clock"]])
        rows.append({"board": r["board"], "pci": r["pci"], "measured_us_per_byte": pub.at[r["measured"], "value"],
                     "expected_us_per_byte": pub.at[r["expected"], "value"],
                     "expected_theory_us_per_byte": theory.expected_latency_slope(
                         [bus, CONSTANTS["GIGE_BPS"] / 8, bus]),
                     "intercept_us": pub.at[r["intercept"], "value"] if r.get("intercept") else np.nan,
                     "measured_claim": r["measured"], "expected_claim": r["expected"]})
    return pd.DataFrame(rows)


def seed_002_window_scaling(published):
    """Seed 002's one-stream window limit over the handshake RTT (``page.yaml``: ``charts.scaling``).

    Returns
    -------
    line : pandas.DataFrame
        ``x`` (window, KiB, 8 to 1024), ``y`` (window / RTT, Mbit/s, one stream) and ``label``
        (``text.scaling_label``).
    limit : float
        The same limit at the second published window of ``windows`` (wscale 1), Mbit/s.
    """
    spec = page("002")["charts"]["scaling"]
    pub = published.set_index("id")
    rtt = float(pub.at[spec["rtt"], "value_si"])
    windows = np.geomspace(8, 1024, 29)
    line = pd.DataFrame({"x": windows, "y": theory.window_limited_throughput(windows * 1024, rtt, 1) / 1e6,
                         "label": page("002")["text"]["scaling_label"].format(rtt_ms=rtt * 1e3)})
    limit = float(theory.window_limited_throughput(pub.at[spec["windows"][1], "value_si"], rtt, 1)) / 1e6
    return line, limit


def seed_004_ping(published):
    """Seed 004's ping table: RTT by packet size and month (ms), as printed.

    Returns
    -------
    pandas.DataFrame
        ``month``, ``packet_size`` (bytes), ``n``, ``min_ms``, ``median_ms``, ``mean_ms``,
        ``max_ms``, ``median_erratum`` (True where the median contradicts the row), and
        ``claims`` (statistic -> claim id).
    """
    spec = page("004")["tables"]["ping"]
    rows = []
    pub = published.set_index("id")
    for month in spec["months"]:
        for size in spec["sizes"]:
            key = lambda stat: spec["claim"].format(month=month, size=size, stat=stat)  # noqa: E731
            r = {"month": month, "packet_size": size, "n": int(pub.at[key("n"), "value"])}
            for stat in ("min", "median", "mean", "max"):
                r[f"{stat}_ms"] = pub.at[key(stat), "value"]
            r["median_erratum"] = not (r["min_ms"] <= r["median_ms"] <= r["max_ms"])
            r["claims"] = {stat: key(stat) for stat in ("min", "median", "mean", "max")}
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


def _mathis_curve(seed, label, rtt_s):
    loss = np.logspace(-8, -2, 61)
    return pd.DataFrame({"seed": seed, "curve": "mathis", "label": label, "x": loss,
                         "x_unit": "1", "y": theory.mathis_throughput(1500, rtt_s, loss) / 1e6, "y_unit": "Mbit/s"})


def _recovery_curve(seed, label, rtt_s):
    cap = np.logspace(7, 10, 31)
    return pd.DataFrame({"seed": seed, "curve": "reno_recovery", "label": label, "x": cap / 1e6, "x_unit": "Mbit/s",
                         "y": theory.reno_recovery_time(cap, rtt_s, 1500), "y_unit": "s"})


def theory_curves(published):
    """Theory lines for each study's page, from the studies' own published inputs.

    The curves are declared in each study's ``page.yaml`` (``curves``): the curve family,
    its legend label (``{rtt_ms}`` is filled with the RTT used), the published RTT claim,
    the windows and the cap.

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
        capacity where the page declares one.
    """
    v = published.set_index("id")["value_si"]
    parts = []
    present = set(published["seed"])
    for seed in SEEDS:
        if seed not in present:   # a page built from one study's rows draws that study's curves only
            continue
        for c in page(seed).get("curves", []):
            rtt = v[c["rtt"]]
            cap = CONSTANTS[c["cap"]] if c.get("cap") else None
            c = dict(c, label=c["label"].format(rtt_ms=rtt * 1e3))   # labels name the RTT they use
            if c["curve"] == "window_limit":
                parts.append(_window_curve(seed, c["label"], c["windows_kib"], rtt, cap_bps=cap))
            elif c["curve"] == "streams_x_window":
                parts.append(_streams_curve(seed, c["label"], c["window_bytes"], rtt, cap_bps=cap))
            elif c["curve"] == "mathis":
                parts.append(_mathis_curve(seed, c["label"], rtt))
            elif c["curve"] == "reno_recovery":
                parts.append(_recovery_curve(seed, c["label"], rtt))
            else:
                raise StudyError(f"study {seed}: unknown curve {c['curve']!r}")
    if not parts:
        return pd.DataFrame(columns=["seed", "curve", "label", "x", "x_unit", "y", "y_unit"])
    return pd.concat(parts, ignore_index=True)
