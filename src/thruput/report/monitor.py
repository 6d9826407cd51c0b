"""The page of a monitor campaign: arranges its statistics product, computes nothing.

Everything shown comes from ``data/processed/<campaign>.stats.nc``, written by the
pipeline from :func:`thruput.stats.monitor_product`; this module only reads that file,
converts units for display, labels series, and picks charts and tables. Seed 004's
questions are data (:data:`SEED004_QUESTIONS`); each answer quotes numbers of the
product.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import os
    from pathlib import Path
    from collections.abc import Mapping
    import altair as alt
    import xarray as xr

import json
from typing import Any
from html import escape as html_escape

import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown, display

from ..campaign.store import STATS_SUFFIX
from ..project import project_path
from ..charts import monitor as mcharts
from ..formatting import duration, number, rate

__all__ = ["load_product", "monitor_title", "monitor_overview", "monitor_time_series",
           "monitor_changes", "monitor_daily_profile", "monitor_distributions",
           "monitor_buffer_curves", "monitor_gaps", "monitor_udp_loss", "monitor_route_changes", "seed004_answers",
           "product_path",
           "SEED004_QUESTIONS", "DISPLAY"]

#: How each test is displayed: the product's unit -> the page's (factor, unit, quantity).
DISPLAY = {"tcp": (1e6, "Mbit/s", "TCP throughput"), "udp": (1e6, "Mbit/s", "UDP throughput"),
           "ping": (1.0, "ms", "median ping RTT")}
#: Seed 004's questions, quoted briefly (../shared/seeds/004_*.txt), and what in the
#: product answers each (None: monitoring data cannot say).
SEED004_QUESTIONS = {
    "O1": ("Why did we see a change in pattern in August to September? ... how comes we "
           "can't see the cyclic variations prior to September.", "cycle"),
    "O2": ("Why do we seem to get a higher throughput now than we did in September?", "shift"),
    "O3": ("Why do we get a much higher throughput for udp than tcp?", "udp_tcp"),
    "TCP1": ("When the 2.2 tcp files are edited in a 2.4 setup, what configuration takes "
             "precedence?", None),
    "TCP2": ("What is causing maximum the throughput to decrease as we are increasing the "
             "socket buffer size?", "max_vs_buffer"),
    "TCP3": ("Why is the minimum throughput always around the same regardless of the socket "
             "buffer size?", "min_vs_buffer"),
    "TCP4": ("Investigate into the variations of min and max throughputs.", "spread"),
    "TCP5": ("How reliable are the iperf results? ... what is the accuracy rate?", "sender_receiver"),
    "TCP6": ("Why is there a noticeable peak at 2meg socket buffer?", "peak"),
    "TCP7": ("Why are the August maximum values for low socket buffer sizes not linear?", "linear"),
    "TCP8": ("What is the effect of the 2.4 kernel tuning?", None),
    "TCP9": ("Formal investigation into the TCP LAN environment required.", None),
}
#: What the page says where the monitoring data cannot answer.
CANNOT_SAY = ("The monitoring data cannot say: no kernel, sysctl or host setting varies "
              "within one monitor campaign; compare campaigns whose `hosts` differ instead.")


def product_path(processed: str | os.PathLike[str], name: str) -> Path:
    """Where the pipeline keeps a campaign's statistics product."""
    return project_path(processed) / f"{name}{STATS_SUFFIX}"


def load_product(processed: str | os.PathLike[str], name: str) -> dict[str, xr.Dataset]:
    """The statistics product of campaign ``name``: ``{table: Dataset}``, loaded."""
    from ..campaign.store import open_product

    tree = open_product(product_path(processed, name))
    return {node.name: node.to_dataset() for node in tree.children.values()}


def _meta(product):
    return json.loads(product["campaign"].attrs.get("metadata", "{}"))


def _params(product):
    return json.loads(product["campaign"].attrs.get("params", "{}"))


def _kib(buffer):
    """A socket buffer as text; 0 (or NaN): not set, the tool's default."""
    return f"{buffer / 1024:g} KiB" if buffer and np.isfinite(buffer) else "default buffer"


def _label(row, test):
    """Series label: direction and what distinguishes series of one test."""
    path = f"{row['path']} " if row.get("path") else ""
    if test == "tcp":
        return f"{path}{row['direction']}, {_kib(row['socket_buffer'])}"
    if test == "ping":
        size = row["size"]
        return f"{path}{row['direction']}, " + (f"{size:g} B" if size and np.isfinite(size) else "default size")
    return f"{path}{row['direction']}"


def _frame(ds, test):
    """A product table as a tidy DataFrame with a ``series`` label."""
    frame = ds.to_dataframe().reset_index()
    if len(frame):
        frame["series"] = [_label(r, test) for r in frame.to_dict("records")]
    return frame


def monitor_title(product: Mapping[str, xr.Dataset]) -> Markdown:
    """Heading, description and honesty note of the campaign."""
    meta = _meta(product)
    c = product["campaign"].attrs
    from .campaigns import endpoints

    paths = ", ".join(str(p.get("name")) + (f" ({ends})" if (ends := endpoints(p.get("source"), p.get("destination"))) else "")
                      for p in meta.get("paths", []))
    lines = [f"# {meta.get('title', c.get('campaign', 'monitor campaign'))}", "",
             str(meta.get("description", "")).strip(), "",
             f"**Paths:** {paths or '?'}", f"**Runs:** {c.get('runs')} from {c.get('start', '?')[:19]} "
             f"to {c.get('end', '?')[:19]} UTC"]
    if meta.get("notes"):
        lines += ["", f"*{str(meta['notes']).strip()}*"]
    return Markdown("\n\n".join(lines))


def monitor_overview(product: Mapping[str, xr.Dataset]) -> HTML:
    """Schedule, periods compared and parameters of the statistics (one table)."""
    p = _params(product)
    gaps = product["gaps"].attrs
    meta = _meta(product)
    periods = "; ".join(f"{k}: {v[0][:19]} – {v[1][:19]}" for k, v in p.get("periods", {}).items())
    period = p.get("period_s")
    rows = [("interval between slots", duration(p.get("interval_s"))),
            ("period of the cycle, the 'day'", "none" if period is None else duration(period)),
            ("why this period", p.get("period_reason", "")),
            ("slots due / run", f"{gaps.get('slots_expected')} / {gaps.get('slots_run')}"),
            ("tests / failed", f"{gaps.get('tests')} / {gaps.get('tests_failed')}"),
            ("rolling bin", p.get("freq")), ("periods compared", periods),
            ("change-point penalty (x log n) / min. segment", f"{p.get('penalty')} / {p.get('min_size')}"),
            ("bootstrap resamples / confidence / seed",
             f"{p.get('n_boot')} / {p.get('confidence')} / {p.get('seed')}"),
            ("events (campaign.yaml)", "; ".join(f"{e.get('time')}: {e.get('what')}"
                                                 for e in meta.get("events", [])) or "–")]
    return HTML(pd.DataFrame(rows, columns=["", "value"]).to_html(index=False))


def _bins(product, test):
    """Non-empty rolling bins with a ``segment`` that changes across every empty bin."""
    factor, _, _ = DISPLAY[test]
    frame = _frame(product[f"rolling_{test}"], test)
    frame = frame.sort_values(["series", "time"])
    frame["segment"] = frame.groupby("series")["n"].transform(lambda n: (n == 0).cumsum())
    frame["segment"] = frame["series"] + " #" + frame["segment"].astype(str)
    frame = frame[frame["n"] > 0].copy()
    for col in ("median", "p10", "p90"):
        frame[col] = frame[col] / factor
    return frame


def _selected(frame, test):
    keep = frame["test"] == test
    return frame[keep]


def monitor_time_series(product: Mapping[str, xr.Dataset], test: str = "tcp",
                        direction: str | None = None) -> Markdown | alt.TopLevelMixin:
    """Time series of one test: rolling median, p10-p90 band, runs, change points."""
    if f"rolling_{test}" not in product:
        return Markdown(f"*No {test} runs in this campaign.*")
    factor, unit, quantity = DISPLAY[test]
    bins = _bins(product, test)
    runs = changes = None
    if "runs" in product and product["runs"].sizes.get("run"):
        runs = _selected(_frame(product["runs"], test), test).copy()
        runs["value"] = runs["value"] / factor
    if product["changes"].sizes.get("change"):
        changes = _selected(_frame(product["changes"], test), test).copy()
        changes["shift"] = changes["shift"] / factor
    if direction is not None:
        bins = bins[bins["direction"] == direction]
        runs = runs[runs["direction"] == direction] if runs is not None else None
        changes = changes[changes["direction"] == direction] if changes is not None else None
        if not len(bins):
            return Markdown(f"*No {test} runs in the {direction} direction in this campaign.*")
    title = f"{quantity}{', ' + direction if direction else ''}: median and p10–p90 per {_params(product).get('freq')} bin"
    return mcharts.time_series(bins, runs, changes, unit=unit, title=title,
                               y_title=quantity)


def monitor_changes(product: Mapping[str, xr.Dataset]) -> HTML | Markdown:
    """Every change point found, with its bounds and shift (display units)."""
    ch = product["changes"]
    if not ch.sizes.get("change"):
        return Markdown("*No change point found in any series.*")
    rows = []
    for r in ch.to_dataframe().reset_index().to_dict("records"):
        factor, unit, quantity = DISPLAY[r["test"]]
        # the bounds' times, with their dates where one is not the change's day (a long campaign)
        same_day = str(r["time_lower"])[:10] == str(r["time_upper"])[:10] == str(r["time"])[:10]
        bound = lambda t: str(t)[11:19] if same_day else str(t)[:19]  # noqa: E731
        rows.append({"series": f"{quantity}, {_label(r, r['test'])}",
                     "change (UTC)": str(r["time"])[:19],
                     "95 % bounds (UTC)": f"{bound(r['time_lower'])} – {bound(r['time_upper'])}",
                     "before": f"{number(r['before'] / factor, 4)} {unit}",
                     "after": f"{number(r['after'] / factor, 4)} {unit}",
                     "shift (95 % CI)": f"{number(r['shift'] / factor, 3, '+')} ({number(r['shift_lower'] / factor, 3, '+')} … "
                                        f"{number(r['shift_upper'] / factor, 3, '+')}) {unit}"})
    return HTML(pd.DataFrame(rows).to_html(index=False))


#: How near (s) a change point must be to a route change to be shown beside it.
ROUTE_CHANGE_NEAR_S = 3600


def monitor_route_changes(product: Mapping[str, xr.Dataset]) -> HTML | Markdown:
    """The times each path's route changed (the product's ``route_changes``: the traced hops
    of the campaign's routes), each beside the change points of that path found within
    :data:`ROUTE_CHANGE_NEAR_S` of it."""
    found = product.get("route_changes")
    traced = int(found.attrs.get("routes_traced", 0)) if found is not None else 0
    if not traced:
        return Markdown("*No route was traced on any path (a `traceroute` test in the schedule, or "
                        "traceroute outputs in an imported pile, give them).*")
    if not found.sizes.get("change"):  # type: ignore[union-attr]
        return Markdown(f"*{traced} routes traced; no path's route changed.*")
    ch = product["changes"].to_dataframe().reset_index() if product["changes"].sizes.get("change") else pd.DataFrame()
    rows = []
    for r in found.to_dataframe().to_dict("records"):  # type: ignore[union-attr]
        near = []
        if len(ch):
            same = ch[ch["path"] == r["path"]] if "path" in ch else ch
            gap = (pd.to_datetime(same["time"]) - pd.Timestamp(r["time"])).dt.total_seconds().abs()
            near = [f"{DISPLAY[c['test']][2]}, {_label(c, c['test'])} at {str(c['time'])[11:19]}"
                    for c in same[gap <= ROUTE_CHANGE_NEAR_S].to_dict("records")]
        rows.append({"path": r["path"],
                     "route changed (UTC)": f"{str(r['previous_time'])[:19]} – {str(r['time'])[11:19]}",
                     "hops before": r["before"], "hops after": r["after"],
                     "change points within 1 h": "; ".join(near) or "none"})
    return HTML(pd.DataFrame(rows).to_html(index=False))


def _series_table(ds):
    frame = ds.to_dataframe().reset_index()
    frame["series"] = [_label(r, r["test"]) for r in frame.to_dict("records")]
    return frame


def monitor_daily_profile(product: Mapping[str, xr.Dataset],
                          test: str = "tcp") -> Markdown | alt.TopLevelMixin:
    """Median per hour of the day (compressed where the campaign says so), with CIs, in
    each of the periods compared."""
    if "cycle" not in product:
        return Markdown(f"*No daily profile of {DISPLAY[test][2]}: "
                        f"{_params(product).get('period_reason', 'no period')}.*")
    cyc = product["cycle"]
    frame = _series_table(cyc[["median", "low", "high", "n"]])
    frame = frame[frame["test"] == test].copy()
    if not len(frame):
        return Markdown(f"*No {test} runs in this campaign.*")
    factor, unit, quantity = DISPLAY[test]
    for col in ("median", "low", "high"):
        frame[col] = frame[col] / factor
    day = _params(product).get("period_s", 86400)
    x_title = "hour of day (UTC)" if day == 86400 else f"'hour' of the compressed day ({day:g} s / 24 each)"
    return mcharts.daily_profile(frame, unit=unit, x_title=x_title,
                                 title=f"{quantity}: daily profile per period (95 % bootstrap CI of each median)")


def monitor_distributions(product: Mapping[str, xr.Dataset], test: str = "tcp") -> Markdown | alt.Chart:
    """Distribution of each series in the two periods compared (shared bins)."""
    name = f"compare_{test}"
    if name not in product:
        return Markdown(f"*No {test} runs in this campaign.*")
    factor, unit, quantity = DISPLAY[test]
    c = product[name]
    names = list(_params(product).get("periods", {"a": 0, "b": 1}))
    parts = []
    for which, period in zip(("a", "b"), names):
        frame = c[f"count_{which}"].to_dataframe(name="count").reset_index()
        n = c[f"n_{which}"].to_dataframe(name="n_total").reset_index()
        frame = frame.merge(n, on=[d for d in c[f"n_{which}"].dims])
        frame["fraction"] = frame["count"] / frame["n_total"].where(frame["n_total"] > 0)
        frame["period"] = period
        parts.append(frame)
    frame = pd.concat(parts)
    frame = frame[frame["count"] > 0]           # an empty bin draws no bar (and was most rows)
    if not len(frame):
        return Markdown(f"*No {quantity} to compare between the periods: no run with a result.*")
    frame["series"] = [_label({**r, "path": r.get("path", "")}, test) for r in frame.to_dict("records")]
    frame["bin_low"] = c["bin_low"].values[frame["bin"].values] / factor
    frame["bin_high"] = c["bin_high"].values[frame["bin"].values] / factor
    return mcharts.period_distributions(frame, unit=unit, title=f"{quantity} per period",
                                        quantity=quantity)


def monitor_buffer_curves(product: Mapping[str, xr.Dataset]) -> Markdown | alt.TopLevelMixin:
    """TCP throughput against socket buffer, per period and direction (seed 004)."""
    if "buffer_curves" not in product:
        return Markdown("*No TCP runs in this campaign.*")
    b = product["buffer_curves"]
    frame = b[["median", "mean", "min", "max"]].to_dataframe().reset_index()
    frame = frame.melt(id_vars=[d for d in b["median"].dims], value_vars=["median", "mean", "min", "max"],
                       var_name="statistic", value_name="value")
    if "window_limit" in b:
        limit = b["window_limit"].to_dataframe(name="value").reset_index()
        limit["statistic"] = "buffer / RTT"
        frame = pd.concat([frame, limit])
    frame["value"] = frame["value"] / 1e6
    frame["buffer_kib"] = frame["socket_buffer"] / 1024
    frame = frame[frame["buffer_kib"] > 0]      # (a buffer not set has no place on the axis)
    if not len(frame):
        return Markdown("*No TCP run set its socket buffer (each used its tool's default).*")
    frame["series"] = frame["path"] + " " + frame["direction"]
    return mcharts.buffer_curves(frame.dropna(subset=["value"]),
                                 title="TCP throughput vs socket buffer, per period")


def monitor_gaps(product: Mapping[str, xr.Dataset]) -> HTML:
    """Missed slots (gaps, with the reason from campaign.yaml) and failed tests."""
    g = product["gaps"]
    gaps = pd.DataFrame({**({"path": g["gap_path"].values} if "gap_path" in g else {}),
                         "from (UTC)": [str(t)[:19] for t in g["gap_start"].values],
                         "to (UTC)": [str(t)[:19] for t in g["gap_end"].values],
                         "first slot": g["first_slot"].values, "slots missed": g["slots"].values,
                         "reason": g["gap_reason"].values})
    html = ["<h4>Slots that did not run</h4>",
            gaps.to_html(index=False) if len(gaps) else
            "<p><em>No slot was missed: every slot from the first to the last ran.</em></p>",
            "<h4>Tests that failed</h4>", failure_groups(g)]
    if "tests_disagreeing" in g.attrs:
        by_test = json.loads(g.attrs["tests_disagreeing_by_test"])
        html += ["<h4>Tests whose tool disagrees with its own data</h4>",
                 f"<p>{g.attrs['tests_disagreeing']} of {g.attrs['tests']} tests have a failed "
                 "check of the tool's own totals against the rest of its output"
                 + (" (" + ", ".join(f"{k}: {v}" for k, v in by_test.items()) + ")" if by_test else "")
                 + ". Their numbers are kept as the tool printed them; the runs are those with "
                 "<code>tool_checks_failed &gt; 0</code>, and <code>thruput inspect</code> of a "
                 "run's file shows each check with its note (data in flight at the end of an "
                 "iperf3 run over a long or lossy path is the usual one).</p>"]
    return HTML("\n".join(html))


def monitor_udp_loss(product: dict) -> object:
    """UDP: datagram loss and the rate offered against the rate received, per series (the
    product's ``udp_loss`` table): the whole campaign's table is displayed, the chart per
    time bin returned."""
    if "udp_loss" not in product or "n" not in product["udp_loss"]:
        return Markdown("*No UDP runs in this campaign: no loss or offered rate to show.*")
    u = product["udp_loss"]
    factor, unit, _ = DISPLAY["udp"]
    whole = u[["n", "loss_median", "loss_mean", "loss_p90", "offered_median", "received_median",
               "received_over_offered"]].to_dataframe().reset_index()
    whole = whole[whole["n"] > 0]

    def pct(x):
        return "–" if not np.isfinite(x) else f"{100 * x:.3g} %"

    def rate(x):
        return "–" if not np.isfinite(x) else f"{x / factor:.4g} {unit}"

    table = pd.DataFrame({
        "series": [_label(r, "udp") for r in whole.to_dict("records")], "ok runs": whole["n"].astype(int),
        "loss, median": [pct(x) for x in whole["loss_median"]], "loss, mean": [pct(x) for x in whole["loss_mean"]],
        "loss, p90": [pct(x) for x in whole["loss_p90"]],
        "offered (median)": [rate(x) for x in whole["offered_median"]],
        "received (median)": [rate(x) for x in whole["received_median"]],
        "received / offered": [pct(x) for x in whole["received_over_offered"]]})
    binned = u[["bin_n", "bin_loss_median", "bin_offered_median", "bin_received_median"]].to_dataframe().reset_index()
    binned["series"] = [_label(r, "udp") for r in binned.to_dict("records")]
    binned = binned.sort_values(["series", "time"])
    binned["segment"] = binned["series"] + " #" + binned.groupby("series")["bin_n"].transform(
        lambda n: (n == 0).cumsum()).astype(str)
    binned = binned[binned["bin_n"] > 0]
    loss = pd.DataFrame({"time": binned["time"], "loss": 100 * binned["bin_loss_median"], "n": binned["bin_n"],
                         "series": binned["series"], "segment": binned["segment"]}).dropna(subset=["loss"])
    rates = pd.concat([pd.DataFrame({"time": binned["time"], "value": binned[col] / factor, "rate": name,
                                     "series": binned["series"], "segment": binned["segment"] + name})
                       for col, name in zip(("bin_offered_median", "bin_received_median"), mcharts.UDP_RATES)])
    rates = rates.dropna(subset=["value"])
    chart = mcharts.udp_loss(rates, loss, unit=unit, title=f"UDP: offered and received rate, datagrams lost, "
                                                           f"per {u.attrs.get('freq', _params(product).get('freq'))} bin")
    display(HTML(table.to_html(index=False)))
    return chart


#: Example files a group of failed tests names.
EXAMPLES = 3


def failure_groups(gaps: Any) -> str:
    """The failed tests grouped by outcome and reason: how many (of which test and
    direction), first and last time, and a few of their logs (or runs, where no log was
    written) as HTML: a pile of 2,000 files that are not logs is one row, not 2,000."""
    n = gaps.sizes.get("failure", 0)
    if not n:
        return "<p><em>No test failed.</em></p>"
    frame = pd.DataFrame({k: np.asarray(gaps[f"failure_{k}"].values) for k in
                          ("time", "run", "test", "direction", "outcome", "reason")})
    frame["file"] = (np.asarray(gaps["failure_source"].values).astype(str) if "failure_source" in gaps
                     else np.full(n, ""))
    frame["example"] = [f if f else f"{r} (no log)" for f, r in zip(frame["file"], frame["run"])]
    rows = []
    for (outcome, reason), part in frame.groupby(["outcome", "reason"], sort=False):
        part = part.sort_values("time")
        examples = ", ".join(f"<code>{html_escape(e)}</code>" for e in part["example"].head(EXAMPLES))
        more = len(part) - EXAMPLES
        kinds = part.groupby(["test", "direction"]).size()
        rows.append({"tests": len(part), "of which": ", ".join(f"{n} {t} {d}" for (t, d), n in kinds.items()),
                     "outcome": outcome, "reason": html_escape(reason),
                     "first (UTC)": str(part["time"].iloc[0])[:19], "last (UTC)": str(part["time"].iloc[-1])[:19],
                     "e.g.": examples + (f" and {more} more" if more > 0 else "")})
    table = pd.DataFrame(rows).sort_values("tests", ascending=False, kind="stable")
    with pd.option_context("display.max_colwidth", None):
        return (f"<p>{n} of {gaps.attrs.get('tests')} tests failed, for {len(rows)} "
                f"reason{'s' if len(rows) > 1 else ''}:</p>" + table.to_html(index=False, escape=False))


# ----------------------------------------------------------------- seed 004's questions

def _mbit(x, sign=""):
    """bit/s as text in the unit that suits it (Mbit/s, Gbit/s...); "–" where the
    product has no value (an empty period)."""
    return rate(x, sign=sign)


def _answer_cycle(product):
    per = product["periodogram"]
    p = _params(product)
    period = p.get("period_s")
    day_h = period / 3600 if period is not None else np.nan
    why = f"Period used: {'none' if period is None else duration(period)} ({p.get('period_reason', '')})."
    if not per.sizes.get("series"):
        return "Too few runs in every series for a periodogram (it needs three or more). " + why
    lines = []
    for i in range(per.sizes["series"]):
        s = per.isel(series=i)
        r = {k: s[k].item() for k in ("path", "direction", "test", "socket_buffer", "size")}
        near = abs(float(s["dominant_period"]) - day_h) <= 0.1 * day_h
        fap = (f", false-alarm probability {number(float(s['false_alarm']), 2)}"
               if "false_alarm" in s and np.isfinite(float(s["false_alarm"])) else "")
        lines.append(f"{DISPLAY[r['test']][2]} {_label(r, r['test'])}: strongest period "
                     f"{duration(float(s['dominant_period']) * 3600)} (half power "
                     f"{duration(float(s['dominant_period_low']) * 3600)} – "
                     f"{duration(float(s['dominant_period_high']) * 3600)}), "
                     f"explains {float(s['dominant_power']):.0%} of the variance{fap}"
                     + (" — the day's cycle" if near else ""))
    text = ("The Lomb–Scargle periodogram of every series, its levels between change points "
            f"removed. {why}\n\n- " + "\n- ".join(lines))
    if "cycle" in product:
        cyc = product["cycle"]
        rows = []
        for i in range(cyc.sizes["series"]):
            s = cyc.isel(series=i)
            r = {k: s[k].item() for k in ("path", "direction", "test", "socket_buffer", "size")}
            amp = ", ".join(f"{name}: {float(a):.0%}" for name, a in
                            zip(s["period"].values, s["relative_amplitude"].values))
            rows.append(f"{DISPLAY[r['test']][2]} {_label(r, r['test'])}: {amp}")
        text += ("\n\nAmplitude of the daily profile (largest minus smallest hourly median, "
                 "relative to the median) in each period:\n\n- " + "\n- ".join(rows))
    return text


def _answer_shift(product):
    names = list(_params(product).get("periods", {"a": 0, "b": 1}))
    lines = []
    for test in ("tcp", "udp"):
        if f"compare_{test}" not in product:
            continue
        frame = product[f"compare_{test}"].drop_dims("bin").to_dataframe().reset_index()
        for r in frame.to_dict("records"):
            lines.append(f"{DISPLAY[test][2]} {_label(r, test)}: median {_mbit(r['median_a'])} → "
                         f"{_mbit(r['median_b'])}, shift {_mbit(r['difference'], '+')} (95 % CI "
                         f"{_mbit(r['difference_low'], '+')} … {_mbit(r['difference_high'], '+')}), "
                         f"Hodges–Lehmann {_mbit(r['hodges_lehmann'], '+')}")
    ch = product["changes"]
    found = "; ".join(f"{str(t)[:19]}" for t in np.unique(ch["time"].values.astype("datetime64[m]"))) \
        if ch.sizes.get("change") else "none"
    return (f"Period '{names[1]}' against '{names[0]}':\n\n- " + "\n- ".join(lines)
            + f"\n\nChange points found (minute): {found}. The campaign's `events` say what was changed.")


def _table(product, name):
    """A product table as a DataFrame, or None when the campaign has no such runs."""
    return product[name].to_dataframe().reset_index() if name in product else None


def _bullets(intro, lines, outro=""):
    return f"{intro}\n\n- " + "\n- ".join(lines) + (f"\n\n{outro}" if outro else "")


NO_TCP = "No TCP runs in this campaign."


def _each_row(product, name, empty, intro, line, outro=""):
    """A bullet per row of table ``name`` (``line(row)``), or ``empty`` without it."""
    frame = _table(product, name)
    if frame is None:
        return empty
    if "path" in frame and "direction" in frame and frame["path"].nunique() > 1:   # name the path
        frame = frame.assign(direction=frame["path"].astype(str) + " " + frame["direction"].astype(str))
    return _bullets(intro, [line(r) for r in frame.to_dict("records")], outro)


def _answer_udp_tcp(product):
    return _each_row(
        product, "udp_tcp", "No UDP runs in this campaign.",
        "Medians over the whole campaign (UDP sent at a fixed rate):",
        lambda r: (f"{r['direction']}, TCP at {_kib(r['socket_buffer'])}: " + (
            f"UDP / TCP = {r['ratio']:.2f}" if np.isfinite(r["ratio"]) else "no ratio (a test without a result)")
            + f" ({_mbit(r['udp_median'])} vs {_mbit(r['tcp_median'])})"),
        "Where the ratio falls towards 1 as the buffer grows, TCP was window-limited "
        "(buffer / RTT) at the small buffers.")


def _per_curve(product, by, line):
    """One bullet per group of the buffer curves, ``line(key, rows sorted by buffer)``."""
    frame = _table(product, "buffer_curves")
    if frame is None:
        return None
    if "path" in frame and frame["path"].nunique() > 1:     # several paths: one bullet each
        frame = frame.assign(direction=frame["path"].astype(str) + " " + frame["direction"].astype(str))
    return [line(key, g.sort_values("socket_buffer"))
            for key, g in frame.groupby(by, sort=False)]


def _answer_buffer(product, stat, what):
    lines = _per_curve(product, ["direction", "period"], lambda k, g: f"{k[0]}, {k[1]}: " + ", ".join(
        f"{_kib(b)}: {_mbit(v)}" for b, v in zip(g["socket_buffer"], g[stat])))
    return NO_TCP if lines is None else _bullets(what, lines)


def _answer_spread(product):
    return _each_row(
        product, "buffer_curves", NO_TCP,
        "The extremes rest on one run each; the 10th–90th percentiles are the stable version "
        "of seed 004's min and max:",
        lambda r: (f"{r['direction']}, {r['period']}, {_kib(r['socket_buffer'])}: p10–p90 "
                   f"{_mbit(r['p10'])} – {_mbit(r['p90'])}, min–max {_mbit(r['min'])} – "
                   f"{_mbit(r['max'])} (n = {r['n']})"))


def _answer_sender_receiver(product):
    return _each_row(
        product, "sender_receiver", NO_TCP,
        "iperf's own consistency: sender-side over receiver-side throughput of each run "
        "(1 = the two ends agree):",
        lambda r: (f"{r['direction']}, {_kib(r['socket_buffer'])}: median {r['median']:.4f} "
                   f"(p10–p90 {r['p10']:.4f}–{r['p90']:.4f})" if np.isfinite(r["median"]) else
                   f"{r['direction']}, {_kib(r['socket_buffer'])}: no run with both ends' numbers"),
        "It says how far the two ends of one run agree, not how close either is to the path's "
        "true capacity; for that see the reproduction pages.")


def _answer_peak(product):
    def best(k, g):
        if not g["median"].notna().any():
            return f"{k[0]}, {k[1]}: no run with a result"
        top = g.loc[g["median"].idxmax()]
        return f"{k[0]}, {k[1]}: highest median at {_kib(top['socket_buffer'])} ({_mbit(top['median'])})"

    lines = _per_curve(product, ["direction", "period"], best)
    if lines is None:
        return NO_TCP
    buffers = sorted(product["buffer_curves"]["socket_buffer"].values)
    return _bullets(f"This campaign tried buffers of {', '.join(_kib(b) for b in buffers)}:",
                    lines, "A peak at 2 MB can only be seen if 2 MB was among them.")


def _answer_linear(product):
    def ratio(k, g):
        if len(g) < 2:
            return (f"{k[0]}, {k[1]}: one socket buffer ({_kib(g['socket_buffer'].values[0])}) "
                    "only: growth with the buffer cannot be seen")
        (b0, b1), (m0, m1) = g["socket_buffer"].values[:2], g["median"].values[:2]
        if not (np.isfinite(m0) and np.isfinite(m1) and m0 > 0 and b0 > 0):
            return (f"{k[0]}, {k[1]}: {_kib(b0)} → {_kib(b1)}: no median at both "
                    "(a buffer without a run with a result), no ratio")
        return (f"{k[0]}, {k[1]}: {b0 / 1024:g} → {b1 / 1024:g} KiB multiplied the median by "
                f"{m1 / m0:.2f} (linear: {b1 / b0:.2f})")

    if "buffer_curves" in product:
        buffers = np.unique(product["buffer_curves"]["socket_buffer"].values)
        if buffers.size == 1:
            return (f"This campaign used one socket buffer ({_kib(buffers[0])}) only: growth "
                    "with the buffer cannot be seen.")
    lines = _per_curve(product, ["direction", "period"], ratio)
    if lines is None:
        return NO_TCP
    return _bullets("Window-limited throughput grows in proportion to the buffer:", lines)


_ANSWERS = {
    "cycle": _answer_cycle, "shift": _answer_shift, "udp_tcp": _answer_udp_tcp,
    "max_vs_buffer": lambda p: _answer_buffer(p, "max", "Maximum throughput per buffer and period:"),
    "min_vs_buffer": lambda p: _answer_buffer(p, "min", "Minimum throughput per buffer and period:"),
    "spread": _answer_spread, "sender_receiver": _answer_sender_receiver, "peak": _answer_peak,
    "linear": _answer_linear,
}


def seed004_answers(product: Mapping[str, xr.Dataset]) -> Markdown:
    """Each of seed 004's questions (O1-O3, TCP1-TCP9), quoted, and what this campaign's
    product shows about it (or that it cannot say)."""
    parts = ["## What this campaign says about seed 004's questions", "",
             "*The questions are quoted from the CERN–RAL study (seed 004); the answers are "
             "this campaign's numbers, not the 2002 link's.*"]
    for key, (question, answer) in SEED004_QUESTIONS.items():
        text = _ANSWERS[answer](product) if answer else CANNOT_SAY
        parts += ["", f"**{key}.** *“{question}”*", "", text]
    return Markdown("\n".join(parts))
