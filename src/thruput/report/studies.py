"""Study pages (one per source document) and the reproduction summary of the site.

What each page shows is declared beside the study's checks, in
``src/thruput/studies/seed_<nnn>/page.yaml`` (title, summary, the claims each chart shows and
their labels, the theory curves, the effects a campaign is shown beside, the section text);
this module only arranges it. Each study page shows, from top to bottom: what the document
measured (:data:`STUDIES`),
its published tables as charts (:func:`study_charts`; a study with no charts of its own,
one added by YAML alone, gets generic ones: its verdict counts and, per table, each
published figure beside its derived value), the theory that explains them with
the published figures on it (:func:`study_theory`), the reproduction ledger of the study
(:func:`study_ledger`) and, where a bundled campaign shows the same effect, the two side
by side, marked as a new measurement (:func:`study_side_by_side`): which campaign shows
each effect best, and every number of its panel, is the ``study-effects`` stage's product
(``data/report/study-effects.nc``, :mod:`thruput.stats.study_effects`). The reproduction page
shows counts by status (:func:`ledger_summary`, :func:`ledger_status_chart`), how far each
differing figure is from its derivation (:func:`ledger_differences_chart`) and every
``differs`` and ``erratum`` with its reasoning (:func:`ledger_problems`), after what each
status means (:func:`status_table`).

Nothing here derives a number: values come from :mod:`thruput.published`, the tidy
per-seed tables and theory curves from :mod:`thruput.studies.tables`, the ledger from
:mod:`thruput.reproduce`, and the campaigns' statistics from the pipeline's products
(read as the campaign pages read them, :mod:`.campaigns`). This module picks rows,
converts them to display units and arranges them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import os
    import altair as alt

import functools
import html

import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown, display

from .. import charts, reproduce, studies, units
from ..project import project_path
from ..studies import tables
from .. import published as pub
from .campaigns import _group, _unloaded_rtt_s, cell_summary, metadata, read_product
from .provenance import claim_details

__all__ = ["STUDIES", "study_title", "study_charts", "study_theory", "study_ledger", "study_side_by_side",
           "ledger_summary", "ledger_status_chart", "ledger_differences_chart", "ledger_problems", "status_table",
           "ledger_reproduced",
           "published_frame"]

MBIT = 1e6
LEDGER_FILE = "reproduction.csv"

#: What each source document is (title, source, summary), from ``studies/seed_<nnn>/page.yaml``.
STUDIES = {seed: studies.page(seed) for seed in studies.SEEDS}

#: Ledger columns of the readable tables, with their headings.
_LEDGER_HEADINGS = {"claim": "claim", "quote": "printed", "published_value": "published",
                    "published_unit": "unit", "derived_value": "derived", "status": "status",
                    "note": "reasoning"}
#: Statuses whose rows are shown folded on a study page (the list is long, the news is elsewhere).
_FOLDED = ("consistent", "bound", "input", "not-reproducible")
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
    path = project_path(processed) / LEDGER_FILE
    return pd.read_csv(path, dtype={"seed": str}) if path.exists() else pd.DataFrame(columns=reproduce.LEDGER_COLUMNS)


def published_frame(published: str | os.PathLike[str],
                    processed: str | os.PathLike[str] | None = None) -> pd.DataFrame:
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
    p = _load_published(str(project_path(published).resolve())).copy()
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

def study_title(published: str | os.PathLike[str], seed: str,
                processed: str | os.PathLike[str] | None = None) -> HTML:
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
    if info.get("monitoring"):   # a bundled monitor campaign watched the way this study did
        m = info["monitoring"]
        parts.append(f'<p>{html.escape(m["text"])} <a href="{html.escape(m["href"])}">'
                     f'{html.escape(m["title"])}</a>.</p>')
    if processed is not None:
        ledger = _ledger(processed)
        rows = ledger[ledger["seed"] == seed]
        if len(rows):
            counts = rows["status"].value_counts()
            text = ", ".join(f"{_badge(s)} {int(counts[s])}" for s in reproduce.STATUSES if s in counts)
            checked = int(rows["status"].isin(reproduce.COUNTED).sum())
            judged = int((rows["status"].isin(reproduce.COUNTED) & rows["judgement"].astype(bool)).sum()) \
                if "judgement" in rows else 0
            parts.append(f"<p><b>{len(rows)} published figures</b> in the reproduction ledger: {text}. "
                         f"{checked} were checked, {judged} of them by a person's judgement (marked in the "
                         f"ledger) and the rest by a computation declared in "
                         f"<code>src/thruput/studies/seed_{seed}/claims.yaml</code>.</p>")
    return HTML("\n".join(parts))


def _badge(status):
    colour = dict(zip(charts.STATUS_DOMAIN, charts.STATUS_RANGE)).get(status, "#666")
    return f'<span class="thruput-status" style="background:{colour}">{html.escape(status)}</span>'


# --------------------------------------------------------------------------- published charts

def study_charts(published: str | os.PathLike[str], seed: str,  # type: ignore[return]
                 processed: str | os.PathLike[str] | None = None) -> Markdown | None:
    """The study's published tables and figures as charts (with the ledger status of each).

    Displays headings, captions and charts in order; returns None.
    """
    p = published_frame(published, processed)
    fn = _PUBLISHED.get(_seed(seed))
    if fn is None:
        return _published_generic(p, _seed(seed))
    fn(p)


def _table_key(rows):
    """The table a published row belongs to: its ``group``, else its document section."""
    return rows["group"].where(rows["group"] != "", rows["section"])


def _published_generic(p, seed):
    """The charts of a study without charts of its own (a study added by YAML alone): how
    many of its figures have each ledger status, and per table (``group``, else section)
    and unit, every published figure beside the value its check derived."""
    rows = _rows(p, seed)
    rows = rows[rows["value"].notna() & (rows["unit"] != pub.DATETIME_UNIT)]
    if rows.empty:
        return Markdown("No numbers are transcribed for this study.")
    if (rows["status"] != "").any():
        counts = rows.groupby("status").size().rename("n").reset_index()
        counts["study"] = f"Study {seed}"
        display(Markdown("How many of the study's published figures have each status in the reproduction ledger."))
        display(charts.status_counts(counts, title=f"Study {seed}: published figures by reproduction status"))
    display(Markdown("Each table of the study (rows of one `group`, else of one section of the document) as "
                     "transcribed, with the value its declared check derived beside it (in the printed unit; for "
                     "a bound, the bound)."))
    for (table, unit), t in rows.groupby([_table_key(rows), rows["unit"]], sort=False):
        label = "" if unit in ("", "1") else unit
        parts = [pd.DataFrame({"category": t["id"] + " · published", "value": t["value"].astype(float),
                               "kind": "published", "status": t["status"], "quote": t["quote"]})]
        derived = t[t["derived_value"].notna()]
        if len(derived):
            parts.append(pd.DataFrame({"category": derived["id"] + " · derived",
                                       "value": derived["derived_value"].astype(float), "kind": "derived",
                                       "status": derived["status"], "quote": derived["ledger_note"]}))
        bars = pd.concat(parts, ignore_index=True).sort_values("category", kind="stable")
        display(charts.category_bars(bars, unit=label, title=f"{table}: published vs derived"
                                     + (f" ({label})" if label else "")))


def _points(rows, x, y, what):
    """Published figures as points for :func:`thruput.charts.theory_points`."""
    return pd.DataFrame({"x": list(x), "y": list(y), "what": list(what), "status": list(rows["status"]),
                         "quote": list(rows["quote"])})


def _text(seed, key, **values):
    """A piece of the study page's text (``page.yaml``: ``text``), with ``values`` filled in."""
    text = studies.page(seed)["text"][key]
    return text.format(**values) if values else text


def _named(rows, spec, scale):
    """Rows of a ``page.yaml`` list ``{claims, labels[, kinds]}`` as the columns of a bar chart."""
    r = _ids(rows, spec["claims"])
    return pd.DataFrame({"category": spec["labels"], "value": (r["value_si"] / scale).to_numpy(),
                         "status": r["status"].to_numpy(), "quote": r["quote"].to_numpy()}), r


def _published_000(p):
    rows = _rows(p, "000")
    spec = studies.page("000")["tables"]["hosts"]
    table = rows[rows["group"].str.startswith(spec["group_prefix"])]
    cfg = pub.config_frame(table)
    table = table.assign(column=cfg["column"])
    display(Markdown(_text("000", "hosts_throughput")))
    names = {"mean": "average", "median": "median", "max": "maximum"}
    thr = table[(table["measures"] == "throughput") & table["statistic"].isin(names) & (table["unit"] != "MByte/s")]
    points = pd.DataFrame({"category": thr["column"], "statistic": thr["statistic"].map(names),
                           "value": thr["value_fixed_si"] / MBIT, "status": thr["status"], "quote": thr["quote"]})
    med = thr[thr["statistic"] == "median"].set_index("column")["value_fixed_si"] / MBIT
    iqr = table[table["statistic"] == "iqr"].set_index("column")["value_si"] / MBIT
    ranges = pd.DataFrame({"category": med.index, "low": (med - iqr / 2).values, "high": (med + iqr / 2).values,
                           "what": [f"IQR {w:g} Mbit/s, centred on the median" for w in iqr.reindex(med.index)]})
    display(charts.range_dots(points, ranges, unit="throughput (Mbit/s)", range_label="bar",
                              title=_text("000", "hosts_throughput_title")))
    display(Markdown(_text("000", "hosts_rtt")))
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
                              title=_text("000", "hosts_rtt_title")))
    hosts = tables.seed_000_hosts(p, _ledger_of(p))
    flagged = set(table.loc[table["status"].isin(["erratum", "differs"]), "column"])
    display(Markdown(_text("000", "hosts_table")))
    display(HTML(_simple_table(pd.DataFrame({
        "column": [c + (" *" if c in flagged else "") for c in hosts["column"]],
        "average": hosts["mean_mbps"].round(1), "median": hosts["median_mbps"].round(1),
        "max": hosts["max_mbps"].round(1), "IQR": hosts["iqr_mbps"].round(1),
        "RTT min": hosts["rtt_min_ms"].round(2), "RTT avg": hosts["rtt_mean_ms"].round(2),
        "RTT max": hosts["rtt_max_ms"].round(1), "loss": hosts["loss"].astype(str) + "/" + hosts["pings"].astype(str),
        "start": hosts["start"].str.replace("T", " "), "end": hosts["end"].str.replace("T", " ")}))))


def _ledger_of(p):
    """The ledger columns carried by :func:`published_frame`, as :func:`tables.seed_000_hosts` wants them."""
    return pd.DataFrame({"claim": p["id"], "status": p["status"], "derived_value": p["derived_value"]})


def _published_001(p):
    page = studies.page("001")
    apps = tables.seed_001_apps(p)
    display(Markdown(_text("001", "apps")))
    display(charts.grouped_ranges(apps.replace({"app": {"Iperf": "iperf"}}), title=_text("001", "apps_title")))
    rows = _rows(p, "001")
    lat = tables.seed_001_latency(p)
    status = rows.set_index("id")["status"]
    labels = [f"{b}, PCI {c}" for b, c in zip(lat["board"], lat["pci"])]
    slopes = pd.concat([
        pd.DataFrame({"board": labels, "kind": "measured", "slope": lat["measured_us_per_byte"],
                      "status": [status.get(i, "") for i in lat["measured_claim"]]}),
        pd.DataFrame({"board": labels, "kind": "expected (printed)", "slope": lat["expected_us_per_byte"],
                      "status": [status.get(i, "") for i in lat["expected_claim"]]}),
        pd.DataFrame({"board": labels, "kind": "expected (PCI + GigE + PCI, derived)",
                      "slope": lat["expected_theory_us_per_byte"], "status": "derived"})], ignore_index=True)
    display(Markdown(_text("001", "slopes")))
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
    display(Markdown(_text("001", "udp")))
    display(charts.category_bars(bars, unit="throughput (Mbit/s)", title=_text("001", "udp_title"),
                                 hrules=pd.DataFrame({"value": [1000.0], "label": ["Gigabit Ethernet"]})))
    coal = rows[rows["id"].str.startswith(page["charts"]["coalescence"]["prefix"])]
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
    display(Markdown(_text("001", "coalescence")))
    display(charts.range_dots(points, ranges, unit="TCP throughput (Mbit/s)", zero=False, range_label="bar",
                              title=_text("001", "coalescence_title")))
    spec = page["charts"]["tengig"]
    tbars, _ = _named(rows, spec, 1e9)
    tbars["kind"] = spec["kinds"]
    display(Markdown(_text("001", "tengig")))
    display(charts.category_bars(tbars, unit="UDP throughput (Gbit/s)", title=_text("001", "tengig_title")))


def _published_002(p):
    rows = _rows(p, "002")
    page = studies.page("002")["charts"]
    bars, r = _named(rows, page["rates"], MBIT)
    bars["kind"] = np.where(r["measures"] == "capacity", "link capacity", "measured throughput")
    display(Markdown(_text("002", "rates")))
    display(charts.category_bars(bars, unit="Mbit/s", title=_text("002", "rates_title")))
    wbars, _ = _named(rows, page["windows"], 1024)
    wbars["kind"] = page["windows"]["kinds"]
    display(Markdown(_text("002", "windows")))
    display(charts.category_bars(wbars, unit="window (KiB)", title=_text("002", "windows_title"), scale="log"))


def _published_003(p):
    rows = _rows(p, "003")
    page = studies.page("003")["charts"]
    bars, _ = _named(rows, page["rates"], MBIT)
    bars["kind"] = page["rates"]["kinds"]
    ref = _ids(rows, page["rules"]["claims"])
    hrules = pd.DataFrame({"value": ref["value_si"] / MBIT, "label": page["rules"]["labels"]})
    display(Markdown(_text("003", "rates")))
    display(charts.category_bars(bars, unit="throughput (Mbit/s)", title=_text("003", "rates_title"), hrules=hrules,
                                 color_title="protocol"))
    spec = page["ping"]
    rtt = _ids(rows, spec["claims"])
    points = pd.DataFrame({"category": spec["category"], "statistic": ["minimum", "average", "maximum"],
                           "value": rtt["value_si"] * 1e3, "status": rtt["status"], "quote": rtt["quote"]})
    ranges = pd.DataFrame({"category": [spec["category"]], "low": [points["value"].min()],
                           "high": [points["value"].max()], "what": [spec["what"]]})
    display(Markdown(_text("003", "ping")))
    display(charts.range_dots(points, ranges, unit="ping RTT (ms)", title=_text("003", "ping_title"),
                              range_label="bar"))


def _published_004(p):
    ping = tables.seed_004_ping(p)
    rows = _rows(p, "004").set_index("id")
    names = {"min": "minimum", "median": "median", "mean": "average", "max": "maximum"}
    pts, rng = [], []
    for r in ping.itertuples():
        cat = f"{r.month.capitalize()} · {r.packet_size} bytes · {r.n} pings"
        for s, label in names.items():
            row = rows.loc[r.claims[s]]
            pts.append({"category": cat, "statistic": label, "value": getattr(r, f"{s}_ms"),
                        "status": row["status"], "quote": row["quote"]})
        rng.append({"category": cat, "low": r.min_ms, "high": r.max_ms, "what": "min to max"})
    note = "".join(_text("004", "ping_erratum", month=r.month.capitalize(), size=r.packet_size, median=r.median_ms,
                         low=r.min_ms, high=r.max_ms) for r in ping[ping["median_erratum"]].itertuples())
    display(Markdown(_text("004", "ping") + note))
    display(charts.range_dots(pd.DataFrame(pts), pd.DataFrame(rng), unit="ping RTT (ms)", zero=False,
                              title=_text("004", "ping_title"), range_label="bar"))
    buf = rows[rows["group"] == studies.page("004")["tables"]["buffers"]["group"]]
    cfg = pub.config_frame(buf)
    table = pd.DataFrame({"host": cfg["host"], "kernel parameters": cfg["kernel_params"], "parameter": cfg["param"],
                          "KiB": buf["value"]})
    wide = table.pivot_table(index=["kernel parameters", "parameter"], columns="host", values="KiB", aggfunc="first",
                             sort=False).reset_index()
    wide.columns.name = None
    display(Markdown(_text("004", "buffers")))
    display(HTML(_simple_table(wide)))


_PUBLISHED = {"000": _published_000, "001": _published_001, "002": _published_002, "003": _published_003,
              "004": _published_004}


def _simple_table(df, classes="thruput-plain"):
    """A DataFrame as an HTML table, numbers as printed (no rounding beyond 10 digits)."""
    return df.to_html(index=False, classes=classes, border=0, na_rep="–", float_format=lambda v: f"{v:.10g}")


# --------------------------------------------------------------------------- theory

def study_theory(published: str | os.PathLike[str], seed: str,  # type: ignore[return]
                 processed: str | os.PathLike[str] | None = None) -> Markdown | None:
    """The theory curves of :func:`thruput.tables.theory_curves` for this study, with
    the published figures they explain drawn on them. Displays; returns None."""
    p = published_frame(published, processed)
    curves = tables.theory_curves(p)
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
    points, _ = _window_points(_rows(p, "000"))
    display(Markdown(_text("000", "theory")))
    display(charts.theory_points(curves, points, "window (KiB)", "throughput (Mbit/s)", x_scale="log",
                                 title=_text("000", "theory_title")))


def _theory_001(p, curves):
    rows = _rows(p, "001")
    page = studies.page("001")
    reno = tables.seed_001_reno(p)
    display(Markdown(_text("001", "mathis")))
    spec = page["tables"]["reno"]
    mathis = pd.concat([curves[curves["curve"] == "mathis"][["x", "y", "label"]], tables.seed_001_reno_line(p)],
                       ignore_index=True)
    mathis = mathis[(mathis["y"] <= 1e5) & (mathis["x"] >= 1e-11)]
    claim = lambda what: [spec["claim"].format(rate=k, what=what) for k in spec["rates"]]  # noqa: E731
    points = _points(_ids(rows, claim("loss")), reno["loss_rate"], reno["throughput_bps"] / MBIT,
                     [f"Reno table: {c / MBIT:g} Mbit/s needs loss ≤ {l:.1e}" for c, l in
                      zip(reno["throughput_bps"], reno["loss_rate"])])
    drops = page["charts"]["drops"]
    vrules = pd.DataFrame({"x": _ids(rows, drops["claims"])["value_si"], "label": drops["labels"]})
    display(charts.theory_points(mathis, points, "loss rate (fraction of packets)", "throughput (Mbit/s)",
                                 x_scale="log", y_scale="log", vrules=vrules, title=_text("001", "mathis_title")))
    display(Markdown(_text("001", "recovery")))
    rec = curves[curves["curve"] == "reno_recovery"][["x", "y", "label"]]
    display(charts.theory_points(rec, _points(_ids(rows, claim("recovery")), reno["throughput_bps"] / MBIT,
                                              reno["recovery_s"], [f"{c / MBIT:g} Mbit/s" for c in reno["throughput_bps"]]),
                                 "capacity (Mbit/s)", "recovery time (s)", x_scale="log", y_scale="log",
                                 title=_text("001", "recovery_title")))
    display(Markdown(_text("001", "reno_table")))
    display(HTML(_simple_table(pd.DataFrame({
        "throughput (Mbit/s)": reno["throughput_bps"] / MBIT,
        "window (packets)": reno["window_pkts"], "C x RTT / MSS": reno["window_pkts_theory"].round(0),
        "recovery (s)": reno["recovery_s"], "C x RTT² / 2 MSS (s)": reno["recovery_s_theory"].round(1),
        "loss rate": [f"{v:.1e}" for v in reno["loss_rate"]],
        "Mathis loss rate": [f"{v:.2e}" for v in reno["loss_rate_theory"]]}))))


def _streams_point(rows, seed):
    """The published (streams, throughput) point a study's streams chart shows (``page.yaml``)."""
    spec = studies.page(seed)["charts"]["streams_point"]
    top = _ids(rows, [spec["claim"]])
    return _points(top, [spec["streams"]], top["value_si"] / MBIT, [spec["label"]])


def _theory_002(p, curves):
    rows = _rows(p, "002")
    spec = studies.page("002")["charts"]["scaling"]
    at8 = curves[curves["x"] == 8].set_index("label")["y"]
    display(Markdown(_text("002", "streams", at8=" and ".join(f"{y:.0f} Mbit/s ({label.split(' (')[0]})"
                                                                for label, y in at8.items()))))
    display(charts.theory_points(curves[["x", "y", "label"]], _streams_point(rows, "002"), "parallel streams",
                                 "throughput (Mbit/s)", title=_text("002", "streams_title")))
    rtt = float(_ids(rows, [spec["rtt"]])["value_si"].iloc[0])
    line, limit = tables.seed_002_window_scaling(p)
    w = _ids(rows, spec["windows"])
    vrules = pd.DataFrame({"x": w["value_si"] / 1024, "label": spec["window_labels"]})
    run = _ids(rows, [spec["run"]])
    pts = _points(run, [spec["run_window_kib"]], run["value_si"] / MBIT, [spec["run_label"]])
    display(Markdown(_text("002", "scaling", rtt_ms=rtt * 1e3, limit=limit)))
    links = _ids(rows, spec["links"])
    hrules = pd.DataFrame({"y": links["value_si"] / MBIT, "label": spec["link_labels"]})
    display(charts.theory_points(line, pts, "window (KiB)", "throughput (Mbit/s)", x_scale="log", y_scale="log",
                                 vrules=vrules, hrules=hrules, title=_text("002", "scaling_title")))


def _theory_003(p, curves):
    rows = _rows(p, "003")
    goal = studies.page("003")["charts"]["goal"]
    at25 = float(curves.loc[curves["x"] == 25, "y"].iloc[0])
    display(Markdown(_text("003", "theory", at25=at25)))
    hrules = pd.DataFrame({"y": _ids(rows, [goal["claim"]])["value_si"] / MBIT, "label": [goal["label"]]})
    display(charts.theory_points(curves[["x", "y", "label"]], _streams_point(rows, "003"), "parallel streams",
                                 "throughput (Mbit/s)", hrules=hrules, title=_text("003", "theory_title")))


def _rules(rows, spec, scale, axis):
    return pd.DataFrame({axis: _ids(rows, spec["claims"])["value_si"].to_numpy() / scale, "label": spec["labels"]})


def _theory_004(p, curves):
    rows = _rows(p, "004")
    page = studies.page("004")["charts"]
    vr = _rules(rows, page["buffer_rules"], 1024, "x")
    hr = _rules(rows, page["rate_rules"], MBIT, "y")
    display(Markdown(_text("004", "theory")))
    display(charts.theory_points(curves[["x", "y", "label"]], None, "socket buffer (KiB)", "throughput (Mbit/s)",
                                 x_scale="log", vrules=vr, hrules=hr, title=_text("004", "theory_title")))


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


@functools.lru_cache(maxsize=1)
def _all_quotes():
    """Every published figure's quote, by id (for the claims a ledger row uses)."""
    frame = pub.load()
    return dict(zip(frame["id"], frame["quote"]))


def _ledger_html(rows, link_seed=False):
    head = "".join(f"<th>{h}</th>" for h in (["study"] if link_seed else []) + list(_LEDGER_HEADINGS.values()))
    body = []
    for r in rows.itertuples():
        notes = [n.strip() for n in str(r.note if isinstance(r.note, str) else "").split(" | ") if n.strip()]
        note = ("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>") if len(notes) > 1 \
            else html.escape(notes[0]) if notes else ""
        seed_cell = f'<td><a href="{studies.page_link(r.seed)[1]}">{r.seed}</a></td>' if link_seed else ""
        unit = "" if r.published_unit in (None, "1") or pd.isna(r.published_unit) else r.published_unit
        body.append(
            f"<tr id=\"claim-{html.escape(r.claim)}\">{seed_cell}<td class=\"claim\">{html.escape(r.claim)}</td>"
            f"<td class=\"quote\">{html.escape(_quote(r.quote))}</td>"
            f"<td class=\"num\">{_fmt(r.published_value)}</td><td>{html.escape(str(unit))}</td>"
            f"<td class=\"num\">{_fmt(r.derived_value, 6)}</td><td>{_badge(r.status)}</td>"
            f"<td>{note}{claim_details(r, _all_quotes())}</td></tr>")
    return (f'<table class="thruput-ledger"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def study_ledger(processed: str | os.PathLike[str], seed: str) -> HTML | Markdown:
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


def status_table() -> HTML:
    """What each ledger status means (:data:`thruput.reproduce.STATUS_MEANING`), as a table."""
    rows = "".join(f"<tr><td>{_badge(s)}</td><td>{'yes' if s in reproduce.COUNTED else 'no'}</td>"
                   f"<td>{html.escape(reproduce.STATUS_MEANING[s])}</td></tr>" for s in reproduce.STATUSES)
    return HTML(_STYLE + '<table class="thruput-ledger"><thead><tr><th>status</th><th>counted as checked</th>'
                f"<th>meaning</th></tr></thead><tbody>{rows}</tbody></table>"
                "<p>A verdict set by a person rather than computed is marked <i>judgement</i> in the ledger, "
                "with its reasoning; <code>reproduced</code> is never a judgement.</p>")


def ledger_summary(processed: str | os.PathLike[str]) -> HTML | Markdown:
    """Counts of ledger rows by status, one row per study plus ``all`` (linked to the pages).

    ``checked`` counts the statuses of :data:`thruput.reproduce.COUNTED`; ``judgement``
    how many of those a person, not a computation, decided.
    """
    ledger = _ledger(processed)
    if ledger.empty:
        return Markdown("The reproduction ledger has not been built (`thruput reproduce`).")
    table = reproduce.summary(ledger).reset_index()
    table.insert(1, "document", [STUDIES.get(s, {}).get("title", "all five documents") for s in table["seed"]])
    table["seed"] = [f'<a href="{studies.page_link(s)[1]}">{s}</a>' if s in STUDIES else s for s in table["seed"]]
    table = table.rename(columns={"seed": "study"})
    return HTML(_STYLE + table.to_html(index=False, escape=False, border=0, classes="thruput-summary"))


def ledger_status_chart(processed: str | os.PathLike[str]) -> Markdown | alt.Chart:
    """Stacked bars of the same counts, one bar per study."""
    ledger = _ledger(processed)
    if ledger.empty:
        return Markdown("The reproduction ledger has not been built.")
    counts = ledger.groupby(["seed", "status"]).size().rename("n").reset_index()
    counts["study"] = [f"{s}: {STUDIES.get(s, {}).get('title', s).split(' (')[0]}" for s in counts["seed"]]
    return charts.status_counts(counts)


def ledger_differences_chart(processed: str | os.PathLike[str]) -> Markdown | alt.TopLevelMixin:
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


def ledger_problems(processed: str | os.PathLike[str]) -> HTML | Markdown:
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
        parts.append(f'<h3><a href="{studies.page_link(seed)[1]}">Study {seed}</a>: {html.escape(title)}</h3>')
        order = {s: i for i, s in enumerate(reproduce.STATUSES)}
        group = group.assign(_o=group["status"].map(order)).sort_values("_o", kind="stable")
        parts.append(_ledger_html(group))
    return HTML("\n".join(parts))


def ledger_reproduced(processed: str | os.PathLike[str]) -> HTML | Markdown:
    """Every ``reproduced`` row with its derivation, study by study: the figures a model
    re-derived from inputs other than their own statement."""
    ledger = _ledger(processed)
    if ledger.empty:
        return Markdown("The reproduction ledger has not been built.")
    rows = ledger[ledger["status"] == "reproduced"]
    parts = [_STYLE, f"<p>{len(rows)} figures are reproduced. <i>derived</i> is the model's output in the "
             "published unit; <i>where from</i> gives the quote, the formula, the claims it uses and their "
             "quotes.</p>"]
    for seed, group in rows.groupby("seed", sort=True):
        title = STUDIES.get(seed, {}).get("title", "")
        parts.append(f'<h3><a href="{studies.page_link(seed)[1]}">Study {seed}</a>: {html.escape(title)}</h3>')
        parts.append(_ledger_html(group))
    return HTML("\n".join(parts))


# --------------------------------------------------------------------------- side by side

#: The effects a bundled campaign can show, per study (``page.yaml``: ``side_by_side``).
EFFECTS = {seed: tuple(studies.page(seed).get("side_by_side", ())) for seed in studies.SEEDS}


#: The effects, as the page names them.
EFFECT_NAMES = {"window": "window-limited throughput and its plateau",
                "streams": "parallel streams compensating small windows",
                "rtt": "RTT growing under load", "latency": "UDP latency growing with frame size",
                "udp": "UDP throughput and loss against packet spacing"}


#: The pipeline's choice of campaign per effect (``thruput pipeline study-effects``, in the
#: reports folder): one group per effect, :mod:`thruput.stats.study_effects`.
STUDY_EFFECTS = "study-effects.nc"


def _effects(reports):
    """The ``study-effects`` stage's product, or None when it has not been built."""
    path = project_path(reports) / STUDY_EFFECTS
    return read_product(path) if path.exists() else None


def _callout(node, effect_text, pair=True):
    meta = metadata(node)
    name = node.attrs.get("campaign", "?")
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
           else "") + _choice_note(node) + "</div>")


def _choice_note(node):
    """Who chose the campaign: the author (params.yaml ``study-effects: show``) or the
    automatic pick, and what the pick suggests when the author chose another."""
    suggested, by = node.attrs.get("suggested", ""), node.attrs.get("chosen_by", "")
    if by == "author":
        other = (f" The automatic pick suggests <code>{html.escape(suggested)}</code>." if suggested
                 and suggested != node.attrs.get("campaign") else "")
        return f" Chosen in <code>params.yaml</code> (<code>study-effects: show</code>).{other}"
    return " Picked automatically (no <code>study-effects: show</code> entry in <code>params.yaml</code>)." if by else ""


def _cells(node):
    """The chosen campaign's cells (throughput and loaded RTT), window bound and unloaded RTT (s),
    as its campaign page shows them (:func:`.campaigns.cell_summary`)."""
    cells = cell_summary(None, node).rename(columns={"p25": "q25", "p75": "q75"})
    rtt_s = _unloaded_rtt_s(None, node)
    bound = _group(node, "bound")["bound"].to_dataframe().reset_index() if rtt_s else None
    return cells, bound, rtt_s


def study_side_by_side(reports: str | os.PathLike[str], seed: str,
                       published: str | os.PathLike[str] = "data/published",
                       processed: str | os.PathLike[str] | None = None) -> None:
    """Where a bundled campaign shows the effect the study reports, the published figure and
    the new measurement side by side, marked as a new measurement. Displays; returns None.

    Parameters
    ----------
    reports : path-like
        Folder of the ``study-effects`` stage's ``study-effects.nc``: for each effect, the
        campaign that shows it best and what its panel draws.
    seed : str
        The study.
    published, processed : path-like
        ``data/published``, and the folder of ``reproduction.csv`` (the ledger statuses of
        the published points).
    """
    seed = _seed(seed)
    effects = _effects(reports)
    if effects is None:
        display(Markdown(f"The choice of campaigns for the study pages has not been built "
                         f"(`thruput pipeline study-effects`, `{STUDY_EFFECTS}`)."))
        return
    p = published_frame(published, processed)
    curves = tables.theory_curves(p)
    curves = curves[curves["seed"] == seed]
    missing = []
    for effect in EFFECTS.get(seed, ()):
        node = effects[effect] if effect in effects.children else None
        if node is None or not node.attrs.get("campaign") or not _SIDE[effect](p, seed, curves, node):
            missing.append(EFFECT_NAMES[effect])
    if missing:
        display(Markdown(f"No bundled campaign shows {' or '.join(missing)} yet. A TCP campaign counts when the "
                         f"effect changes what it measures by at least {float(effects.attrs['min_strength']):g} x "
                         "(the bundled campaigns are listed in `params.yaml` and on the catalogue page)."))


def _side_window(p, seed, curves, node):
    cells, bound, rtt_s = _cells(node)
    name = node.attrs["campaign"]
    capacity = metadata(node).get("path", {}).get("capacity_bps")
    display(Markdown("### Window-limited throughput and its plateau"))
    display(_callout(node, "Throughput grows with the window until the window covers the bandwidth-delay "
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
    rows, spec = _rows(p, "004"), studies.page("004")["charts"]["side_rules"]
    vr = _rules(rows, spec["buffer"], 1024, "x")
    hr = _rules(rows, spec["rate"], MBIT, "y")
    return charts.theory_points(curves[["x", "y", "label"]], None, "socket buffer (KiB)", "throughput (Mbit/s)",
                                x_scale="log", vrules=vr, hrules=hr, width=charts.PAIR_WIDTH)


def _side_streams(p, seed, curves, node):
    cells, bound, _ = _cells(node)
    name = node.attrs["campaign"]
    rows = _rows(p, seed)
    display(Markdown("### Parallel streams compensate small windows"))
    display(_callout(node, "With a window too small for the path, n streams carry about n times as much, "
                         "until the path is full."))
    pts = _streams_point(rows, seed)
    left = charts.theory_points(curves[["x", "y", "label"]], pts, "parallel streams", "throughput (Mbit/s)",
                                width=charts.PAIR_WIDTH)
    small = sorted(cells["window"].unique())[: max(1, min(4, cells["window"].nunique()))]
    sel = cells[cells["window"].isin(small)]
    right = charts.throughput_vs_streams(sel, None if bound is None else bound[bound["window"].isin(small)],
                                         title="Throughput vs streams (smallest windows)")
    display(charts.side_by_side(left, right, f"Study {seed}", f"Campaign {name}"))
    return 1


def _side_rtt(p, seed, curves, node):
    cells, _, rtt_s = _cells(node)
    if "rtt_median" not in cells or cells["rtt_median"].isna().all():
        return 0
    name = node.attrs["campaign"]
    display(Markdown("### RTT grows under load"))
    display(_callout(node, "While the path is busy, queues fill and ping RTT rises above its unloaded value.",
                     pair=seed != "002"))   # study 002 has no RTT figure to pair with
    unloaded = rtt_s * 1e3 if rtt_s else None
    log = float(node.attrs["strength"]) > 10   # loaded RTTs an order of magnitude above the unloaded one
    if seed == "002":
        claim = studies.page("002")["charts"]["srtt_factor"]
        factor = float(_ids(_rows(p, "002"), [claim])["value"].iloc[0])
        display(Markdown(_text("002", "rtt_side", factor=factor)))
        display(charts.rtt_vs_throughput(cells, unloaded, factor, log=log,
                                         title=f"Campaign {name}: loaded RTT vs throughput (new measurement)"))
        return 1
    table = _rows(p, "000")
    side = studies.page("000")
    table = table[table["group"].str.startswith(side["tables"]["hosts"]["group_prefix"])
                  & (table["measures"].isin(["rtt", "throughput"]))]
    cfg = pub.config_frame(table)
    table = table.assign(column=cfg["column"])
    avg_rtt = table[(table["measures"] == "rtt") & (table["statistic"] == "mean")]
    avg_thr = table[(table["measures"] == "throughput") & (table["statistic"] == "mean") & (table["unit"] == "Mbit/s")]
    merged = avg_rtt.merge(avg_thr[["column", "value_fixed_si"]], on="column", suffixes=("", "_thr"))
    pts = _points(merged, merged["value_fixed_si_thr"] / MBIT, merged["value_si"] * 1e3, merged["column"])
    dm = _ids(_rows(p, "000"), [side["rtt_side"]["unloaded"]])
    hrules = pd.DataFrame({"y": dm["value_si"] * 1e3, "label": [side["rtt_side"]["unloaded_label"]]})
    left = charts.theory_points(None, pts, "average throughput (Mbit/s)", "average loaded ping RTT (ms)",
                                hrules=hrules, width=charts.PAIR_WIDTH)
    right = charts.rtt_vs_throughput(cells, unloaded, log=log)
    display(charts.side_by_side(left, right, "Study 000", f"Campaign {name}"))
    return 1


def _side_latency(p, seed, curves, node):
    name = node.attrs["campaign"]
    group = _group(node, "latency_fit")
    pts = group[["size", "latency"]].to_dataframe().reset_index()[["size", "latency"]].dropna()
    fit = {k: float(group[k]) for k in ("slope", "slope_se", "intercept")}
    lat = tables.seed_001_latency(p)
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
    display(_callout(node, "UDPmon request–response latency grows linearly with the frame size; the slope is the "
                         "time per byte of every copy and bus on the way."))
    display(Markdown(f"The campaign's fitted slope is {fit['slope']:.5f} ± {fit['slope_se']:.5f} us/byte (intercept "
                     f"{fit['intercept']:.1f} us), {where} the range of the published boards' measured slopes "
                     f"({low:.4f}–{high:.4f} us/byte). The paths differ: a veth pair between namespaces has no PCI "
                     "bus and no wire, but memory copies, the kernel stack and a rate shaper."))
    left = charts.slope_dots(slopes, title="Latency slopes (us/byte)").properties(width=charts.PAIR_WIDTH)
    right = charts.latency_vs_size(pts, fit)
    display(charts.side_by_side(left, right, "Study 001", f"Campaign {name}"))
    return 1


def _side_udp(p, seed, curves, node):
    name = node.attrs["campaign"]
    display(Markdown("### UDP throughput vs packet spacing"))
    display(_callout(node, "Sending UDP frames closer together raises the rate until the slowest element (there a "
                         "PCI bus or NIC, here the path's shaper) saturates and frames are lost; compare the maximum "
                         "UDP throughput per board above.", pair=False))
    rows = _group(node, "udp_rows").to_dataframe().reset_index()
    display(charts.udp_vs_spacing(rows, title=f"Campaign {name}: UDP receive rate and loss vs spacing "
                                              "(new measurement)"))
    return 1


_SIDE = {"window": _side_window, "streams": _side_streams, "rtt": _side_rtt, "latency": _side_latency,
         "udp": _side_udp}
