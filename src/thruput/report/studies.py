"""Study pages (one per source document) and the reproduction summary of the site.

What each page shows is declared beside the study's checks, in
``src/thruput/studies/seed_<nnn>/page.yaml`` (title, summary, the sections of its published
tables and of its theory, each a chart kind with the claims and labels it draws, the theory
curves, the effects a campaign is shown beside, the section text); this module holds no
study of its own, only the chart kinds (:data:`CHART_KINDS`, :data:`THEORY_KINDS`) that
draw what a page.yaml declares. Each study page shows, from top to bottom: what the
document measured (:data:`STUDIES`), its published tables as charts (:func:`study_charts`;
a study without a page.yaml gets generic ones: its verdict counts and, per table, each
published figure beside its derived value), the theory that explains them with the
published figures on it (:func:`study_theory`), the reproduction ledger of the study
(:func:`study_ledger`) and, where a bundled campaign shows the same effect, the two side
by side, marked as a new measurement (:func:`study_side_by_side`): which campaign shows
each effect best, and every number of its panel, is the ``study-effects`` stage's product
(``data/report/study-effects.nc``, :mod:`thruput.stats.study_effects`). The reproduction page
shows counts by status (:func:`ledger_summary`, :func:`ledger_status_chart`), how far each
differing figure is from its derivation (:func:`ledger_differences_chart`) and every
``differs`` and ``erratum`` with its reasoning (:func:`ledger_problems`), after what each
status means (:func:`status_table`).

Nothing here derives a number: values come from :mod:`thruput.published`, the tidy tables
and theory curves from :mod:`thruput.studies.tables` (formulas of
:mod:`thruput.stats.theory`), text values from :func:`thruput.studies.formulas.evaluate`, the
ledger from :mod:`thruput.reproduce`, and the campaigns' statistics from the pipeline's
products (read as the campaign pages read them, :mod:`.campaigns`). This module picks rows,
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
from ..studies.formulas import CONSTANTS, evaluate
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

    The sections are declared in the study's ``page.yaml`` (``published``: a list of
    sections, each a chart kind of :data:`CHART_KINDS` with its claims, labels and text); a
    study that declares none gets the generic charts of :func:`_published_generic`.
    Displays headings, captions and charts in order; returns None.
    """
    seed = _seed(seed)
    p = published_frame(published, processed)
    sections = studies.page(seed)["published"]
    if not sections:
        return _published_generic(p, seed)
    for spec in sections:
        _section(CHART_KINDS, spec, seed)(p, seed, spec)


def _section(kinds, spec, seed):
    """The function of a declared section's ``kind`` (a StudyError names an unknown one)."""
    if spec.get("kind") not in kinds:
        raise studies.StudyError(f"study {seed}: page.yaml: section kind {spec.get('kind')!r} is not one of "
                                 f"{', '.join(kinds)}")
    return kinds[spec["kind"]]


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


#: How a page shows a value held in SI base units: (divide by, multiply by).
_SHOW = {"Mbit/s": (MBIT, None), "Gbit/s": (1e9, None), "KiB": (1024, None), "ms": (None, 1e3)}


def _shown(si, unit):
    """Values in SI base units in the display ``unit`` (:data:`_SHOW`; None or another unit: as they are)."""
    div, mul = _SHOW.get(unit, (None, None))
    return si / div if div else si * mul if mul else si


def _select(rows, spec):
    """The published rows a section names: ``claims`` (in that order), else the rows of
    ``group``, ``group_prefix`` or ``id_prefix`` whose ``measures``, ``statistic``,
    ``units`` and config keys (``config_has``) match and whose unit is not in ``exclude_units``."""
    if "claims" in spec:
        return _ids(rows, spec["claims"])
    sel = rows
    if "group" in spec:
        sel = sel[sel["group"] == spec["group"]]
    if "group_prefix" in spec:
        sel = sel[sel["group"].str.startswith(spec["group_prefix"])]
    if "id_prefix" in spec:
        sel = sel[sel["id"].str.startswith(spec["id_prefix"])]
    for column, key in (("measures", "measures"), ("statistic", "statistic"), ("unit", "units")):
        if key in spec:
            sel = sel[sel[column].isin(_listed(spec[key]))]
    if "config_has" in spec:
        sel = sel[sel["config"].str.contains(f"{spec['config_has']}=", regex=False)]
    if "exclude_units" in spec:
        sel = sel[~sel["unit"].isin(spec["exclude_units"])]
    return sel


def _listed(value):
    return value if isinstance(value, list) else [value]


def _points(rows, x, y, what):
    """Published figures as points for :func:`thruput.charts.theory_points`."""
    return pd.DataFrame({"x": list(x), "y": list(y), "what": list(what), "status": list(rows["status"]),
                         "quote": list(rows["quote"])})


def _text(seed, key, **values):
    """A piece of the study page's text (``page.yaml``: ``text``), with ``values`` filled in."""
    text = studies.page(seed)["text"][key]
    return text.format(**values) if values else text


def _table(seed, name):
    """A table declared in the study's ``page.yaml`` (``tables``)."""
    return studies.page(seed)["tables"][name]


def _named(rows, spec, unit):
    """Rows of a ``page.yaml`` list ``{claims, labels}`` as the columns of a bar chart."""
    r = _ids(rows, spec["claims"])
    return pd.DataFrame({"category": spec["labels"], "value": (_shown(r["value_si"], unit)).to_numpy(),
                         "status": r["status"].to_numpy(), "quote": r["quote"].to_numpy()}), r


def _rules(rows, spec, unit, axis):
    """Dashed rules (``{claims, labels}`` or ``{constants, labels}``) as a frame of ``axis`` and ``label``."""
    values = (_ids(rows, spec["claims"])["value_si"].to_numpy() if "claims" in spec
              else np.array([CONSTANTS[c] for c in spec["constants"]]))
    return pd.DataFrame({axis: _shown(values, unit), "label": spec["labels"]})


def _statistic_ranges(p, seed, spec):
    """Order statistics per category as dots, with a bar from ``range.low`` to ``range.high``
    (or ``range.width`` centred on ``range.centre``); ``range.what`` names the bar and may use
    every statistic of the category and the printed value of its other measures."""
    rows = _rows(p, seed)
    source = _select(rows, {k: spec[k] for k in ("claims", "group", "group_prefix", "id_prefix") if k in spec})
    cat = (pd.Series(spec["category"], index=source.index) if "category" in spec
           else pub.config_frame(source)[spec["category_config"]])
    sel = _select(source, {k: spec[k] for k in ("measures", "exclude_units") if k in spec})
    column, unit, stats = spec.get("value", "value_si"), spec.get("unit"), spec["statistics"]
    pts = sel[sel["statistic"].isin(list(stats))]
    points = pd.DataFrame({"category": cat[pts.index], "statistic": pts["statistic"].map(stats),
                           "value": _shown(pts[column], unit), "status": pts["status"], "quote": pts["quote"]})
    r, ranges = spec["range"], []
    for c in dict.fromkeys(points["category"]):
        mine, others = sel[cat[sel.index] == c], source[(cat == c) & ~source.index.isin(sel.index)]
        f = {**dict(zip(others["measures"], others["value"])),
             **dict(zip(mine["statistic"], _shown(mine[column], unit)))}
        if "centre" in r:
            low, high = f[r["centre"]] - f[r["width"]] / 2, f[r["centre"]] + f[r["width"]] / 2
        else:
            low, high = f[r["low"]], f[r["high"]]
        ranges.append({"category": c, "low": low, "high": high, "what": r["what"].format(**f)})
    display(Markdown(_text(seed, spec["text"])))
    display(charts.range_dots(points, pd.DataFrame(ranges), unit=spec["axis"], scale=spec.get("scale", "linear"),
                              range_label="bar", zero=spec.get("zero", True), title=_text(seed, spec["title"])))


def _grid_ranges(p, seed, spec):
    """A table of order statistics declared as a claim grid (``tables``), one category per
    row of the grid (``category`` formats its axes, with ``labels``, and its statistics);
    ``flag`` adds a note for each row whose ``statistic`` lies outside the range."""
    rows = _rows(p, seed).set_index("id")
    table = _table(seed, spec["table"])
    labels, r, flag = spec.get("labels", {}), spec["range"], spec.get("flag")
    pts, rng, note = [], [], ""
    for g in tables.claim_grid(_rows(p, seed), table).to_dict("records"):
        f = {**{a: labels.get(a, {}).get(g[a], g[a]) for a in table["axes"]}, **{s: g[s] for s in table["stats"]}}
        cat = spec["category"].format(**f)
        for s, label in spec["statistics"].items():
            row = rows.loc[g["claims"][s]]
            pts.append({"category": cat, "statistic": label, "value": g[s], "status": row["status"],
                        "quote": row["quote"]})
        low, high = g[r["low"]], g[r["high"]]
        rng.append({"category": cat, "low": low, "high": high, "what": r["what"]})
        if flag and not (low <= g[flag["statistic"]] <= high):
            note += _text(seed, flag["text"], **f, low=low, high=high)
    display(Markdown(_text(seed, spec["text"]) + note))
    display(charts.range_dots(pd.DataFrame(pts), pd.DataFrame(rng), unit=spec["axis"], zero=spec.get("zero", True),
                              title=_text(seed, spec["title"]), range_label="bar"))


def _claim_table(p, seed, spec):
    """A claim grid (``tables``) as an HTML table: a row label from a config key (marked * when
    a row of its ``flag`` groups is an erratum or differs), then one column per declared
    statistic in its display unit (errata shown as derived), a ``format`` of printed values,
    or a date as printed."""
    rows = _rows(p, seed)
    by_id = rows.set_index("id")
    grid = tables.claim_grid(rows, _table(seed, spec["table"]))
    label, flag = spec["label"], spec["flag"]
    flagged_rows = _select(rows, flag)
    flagged = set(pub.config_frame(flagged_rows)[flag["config"]][
        flagged_rows["status"].isin(["erratum", "differs"])])
    names = [pub.config_frame(by_id.loc[[c[label["stat"]]]])[label["config"]].iloc[0] for c in grid["claims"]]
    out = {label["heading"]: [n + (" *" if n in flagged else "") for n in names]}
    for col in spec["columns"]:
        if "format" in col:
            out[col["heading"]] = [col["format"].format(**{s: by_id.at[c, "value"] for s, c in claims.items()})
                                   for claims in grid["claims"]]
        elif col.get("date"):
            out[col["heading"]] = pd.Series([by_id.at[c[col["stat"]], "date"] for c in grid["claims"]]).str.replace(
                "T", " ")
        else:
            out[col["heading"]] = pd.Series([_shown(by_id.at[c[col["stat"]], "value_fixed_si"], col["unit"])
                                             for c in grid["claims"]]).round(col["round"])
    display(Markdown(_text(seed, spec["text"])))
    display(HTML(_simple_table(pd.DataFrame(out))))


def _grouped_ranges(p, seed, spec):
    """A table of printed values and ranges (``tables``: ``group`` and ``order``) as bars per
    panel, with ``rename`` applied to its labels."""
    table = _table(seed, spec["table"])
    cells = tables.range_cells(p, table["group"], table["order"])
    display(Markdown(_text(seed, spec["text"])))
    display(charts.grouped_ranges(cells.replace(spec.get("rename", {})), title=_text(seed, spec["title"])))


def _board_label(spec, r):
    return spec["board_label"].format(board=r["board"], pci=r["pci"])


def _slopes(p, seed, spec):
    """Latency slopes (``tables``: one mapping per board) measured, expected as printed and
    expected from the bus and link rates, with the ledger status of the printed ones."""
    lat = tables.latency_slopes(p, _table(seed, spec["table"]))
    status = _rows(p, seed).set_index("id")["status"]
    labels = [_board_label(spec, r) for r in lat.to_dict("records")]
    kinds = spec["kinds"]
    slopes = pd.concat([
        pd.DataFrame({"board": labels, "kind": kinds["measured"], "slope": lat["measured_us_per_byte"],
                      "status": [status.get(i, "") for i in lat["measured_claim"]]}),
        pd.DataFrame({"board": labels, "kind": kinds["expected"], "slope": lat["expected_us_per_byte"],
                      "status": [status.get(i, "") for i in lat["expected_claim"]]}),
        pd.DataFrame({"board": labels, "kind": kinds["theory"],
                      "slope": lat["expected_theory_us_per_byte"], "status": "derived"})], ignore_index=True)
    display(Markdown(_text(seed, spec["text"])))
    display(charts.slope_dots(slopes))


def _bars(p, seed, spec):
    """One bar per published figure: named claims (``claims``, ``labels``, ``kinds``), or
    the rows ``select`` names with a ``category`` formatted from their config, a ``kind`` and
    a ``detail`` from a companion row; ``rules`` as dashed references."""
    rows = _rows(p, seed)
    unit = spec["unit"]
    if "claims" in spec:
        bars, _ = _named(rows, spec, unit)
        bars["kind"] = spec["kinds"]
    else:
        sel = _select(rows, spec["select"])
        cfg = pub.config_frame(sel)
        bars = pd.DataFrame({"category": [spec["category"].format(**c) for c in cfg.to_dict("records")],
                             "value": _shown(sel["value_si"].values, unit), "kind": spec["bar_kind"],
                             "status": sel["status"].values, "quote": sel["quote"].values})
        if "detail" in spec:
            d = spec["detail"]
            of = rows[rows["statistic"] == d["statistic"]]
            by = pd.Series(of["value"].to_numpy(), index=of["id"].str.replace(d["strip"], "", regex=True))
            keys = sel["id"].str.replace(d["strip_own"], "", regex=True)
            bars["detail"] = [d["what"].format(value=by[k]) if k in by else "" for k in keys]
    hrules = _rules(rows, spec["rules"], unit, "value") if "rules" in spec else None
    display(Markdown(_text(seed, spec["text"])))
    display(charts.category_bars(bars, unit=spec["axis"], title=_text(seed, spec["title"]), hrules=hrules,
                                 scale=spec.get("scale", "linear"), color_title=spec.get("color_title", "kind")))


def _wide_table(p, seed, spec):
    """The rows of a ``group`` as printed, one column per value of a config key (``columns``),
    indexed by other config keys (``index``: key -> heading)."""
    rows = _rows(p, seed)
    sel = rows[rows["group"] == spec["group"]]
    cfg = pub.config_frame(sel)
    table = pd.DataFrame({spec["columns"]: cfg[spec["columns"]],
                          **{heading: cfg[key] for key, heading in spec["index"].items()},
                          spec["values"]: sel["value"]})
    wide = table.pivot_table(index=list(spec["index"].values()), columns=spec["columns"], values=spec["values"],
                             aggfunc="first", sort=False).reset_index()
    wide.columns.name = None
    display(Markdown(_text(seed, spec["text"])))
    display(HTML(_simple_table(wide)))


#: The kinds of section a ``page.yaml`` may declare under ``published`` (schema in
#: ``src/thruput/studies/README.md``).
CHART_KINDS = {"statistic_ranges": _statistic_ranges, "grid_ranges": _grid_ranges, "claim_table": _claim_table,
               "grouped_ranges": _grouped_ranges, "slopes": _slopes, "bars": _bars, "wide_table": _wide_table}


def _simple_table(df, classes="thruput-plain"):
    """A DataFrame as an HTML table, numbers as printed (no rounding beyond 10 digits)."""
    return df.to_html(index=False, classes=classes, border=0, na_rep="–", float_format=lambda v: f"{v:.10g}")


# --------------------------------------------------------------------------- theory

def study_theory(published: str | os.PathLike[str], seed: str,  # type: ignore[return]
                 processed: str | os.PathLike[str] | None = None) -> Markdown | None:
    """The theory curves of :func:`thruput.studies.tables.theory_curves` for this study, with
    the published figures they explain drawn on them, as the study's ``page.yaml`` declares
    them (``theory``: a list of sections of :data:`THEORY_KINDS`). Displays; returns None."""
    seed = _seed(seed)
    sections = studies.page(seed)["theory"]
    if not sections:
        return Markdown("No theory curves for this study.")
    p = published_frame(published, processed)
    curves = tables.theory_curves(p)
    curves = curves[curves["seed"] == seed]
    for spec in sections:
        _section(THEORY_KINDS, spec, seed)(p, seed, curves, spec)


def _window_points(rows):
    """Throughput statements with a window, as (window KiB, Mbit/s) points."""
    t = rows[(rows["measures"] == "throughput") & rows["window_bytes"].notna()]
    what = [f"{s}→{d}, {w}, {n} stream{'s' if n != 1 else ''}" for s, d, w, n in
            zip(t["src"], t["dst"], t["window"], t["streams"].fillna(1).astype(int))]
    return _points(t, t["window_bytes"] / 1024, t["value_si"] / MBIT, what), t


def _lines(curves, spec):
    """The declared curves a chart draws: those of the family ``curve`` (``x``, ``y``,
    ``label``), else every line of the study with all the columns of :func:`tables.theory_curves`;
    within ``x_min`` and ``y_max``."""
    lines = curves[curves["curve"] == spec["curve"]][["x", "y", "label"]] if "curve" in spec else curves
    if "y_max" in spec or "x_min" in spec:
        lines = lines[(lines["y"] <= spec.get("y_max", np.inf)) & (lines["x"] >= spec.get("x_min", -np.inf))]
    return lines


def _theory_chart(p, seed, curves, spec, width=charts.WIDTH, title=""):
    """The declared curves with published points (``points``: ``windows`` for every
    throughput statement with a window, or a list of ``{claim, x, label}``) and rules."""
    rows = _rows(p, seed)
    points = None
    if spec.get("points") == "windows":
        points, _ = _window_points(rows)
    elif spec.get("points"):
        points = pd.concat([_points(r, [pt["x"]], _shown(r["value_si"], spec.get("y_unit", "Mbit/s")), [pt["label"]])
                            for pt in spec["points"] for r in [_ids(rows, [pt["claim"]])]], ignore_index=True)
    vrules = _rules(rows, spec["vrules"], spec["vrules"].get("unit"), "x") if "vrules" in spec else None
    hrules = _rules(rows, spec["hrules"], spec["hrules"].get("unit"), "y") if "hrules" in spec else None
    return charts.theory_points(_lines(curves, spec), points, spec["x_title"], spec["y_title"],
                                x_scale=spec.get("x_scale", "linear"), y_scale=spec.get("y_scale", "linear"),
                                vrules=vrules, hrules=hrules, title=title, width=width)


def _values(p, seed, curves, spec):
    """The text's placeholders: ``values`` (name -> ``{formula, inputs}`` over published
    claims in SI, :func:`thruput.studies.formulas.evaluate`) and, with ``at: n``, the
    declared lines at x = n (``at``: each line's value and name; ``at_value``: the first)."""
    rows = _rows(p, seed).set_index("id")["value_si"]
    values = {name: evaluate(v["formula"], {k: float(rows[c]) for k, c in v.get("inputs", {}).items()})
              for name, v in spec.get("values", {}).items()}
    if "at" in spec:
        lines = _lines(curves, spec)
        at = lines[lines["x"] == spec["at"]].set_index("label")["y"]
        values["at"] = " and ".join(f"{y:.0f} Mbit/s ({label.split(' (')[0]})" for label, y in at.items())
        values["at_value"] = float(at.iloc[0])
    return values


def _theory(p, seed, curves, spec):
    """Text, then the declared curves with the published figures and rules on them."""
    display(Markdown(_text(seed, spec["text"], **_values(p, seed, curves, spec))))
    display(_theory_chart(p, seed, curves, spec, title=_text(seed, spec["title"])))


def _reno_response(p, seed, curves, spec):
    """A capacity table of Reno's needs (``tables``: :func:`thruput.studies.tables.capacity_table`)
    on its theory: the Mathis lines over loss rate with the table's loss rates (``mathis``),
    the recovery-time line with the table's recovery times (``recovery``), and the table
    beside the textbook values."""
    rows = _rows(p, seed)
    table = _table(seed, spec["table"])
    reno = tables.capacity_table(p, table)
    claim = lambda what: [table["claim"].format(rate=k, what=what) for k in table["rates"]]  # noqa: E731
    mbps = reno["throughput_bps"] / MBIT
    m = spec["mathis"]
    display(Markdown(_text(seed, m["text"])))
    points = _points(_ids(rows, claim("loss")), reno["loss_rate"], mbps,
                     [m["what"].format(rate=c, loss=l) for c, l in zip(mbps, reno["loss_rate"])])
    display(charts.theory_points(_lines(curves, m), points, m["x_title"], m["y_title"], x_scale="log", y_scale="log",
                                 vrules=_rules(rows, m["vrules"], None, "x"), title=_text(seed, m["title"])))
    r = spec["recovery"]
    display(Markdown(_text(seed, r["text"])))
    display(charts.theory_points(_lines(curves, r), _points(_ids(rows, claim("recovery")), mbps, reno["recovery_s"],
                                                            [r["what"].format(rate=c) for c in mbps]),
                                 r["x_title"], r["y_title"], x_scale="log", y_scale="log",
                                 title=_text(seed, r["title"])))
    display(Markdown(_text(seed, spec["text"])))
    display(HTML(_simple_table(pd.DataFrame({
        "throughput (Mbit/s)": mbps,
        "window (packets)": reno["window_pkts"], "C x RTT / MSS": reno["window_pkts_theory"].round(0),
        "recovery (s)": reno["recovery_s"], "C x RTT² / 2 MSS (s)": reno["recovery_s_theory"].round(1),
        "loss rate": [f"{v:.1e}" for v in reno["loss_rate"]],
        "Mathis loss rate": [f"{v:.2e}" for v in reno["loss_rate_theory"]]}))))


#: The kinds of section a ``page.yaml`` may declare under ``theory``.
THEORY_KINDS = {"theory": _theory, "reno_response": _reno_response}


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

def _effect_specs(seed):
    """The effects a study's page shows beside a bundled campaign (``page.yaml``:
    ``side_by_side``, each an effect name or a mapping with ``effect`` and how its
    published panel is drawn), as effect -> mapping."""
    return {(e if isinstance(e, str) else e["effect"]): ({} if isinstance(e, str) else e)
            for e in studies.page(seed).get("side_by_side", ())}


#: The effects a bundled campaign can show, per study (``page.yaml``: ``side_by_side``).
EFFECTS = {seed: tuple(_effect_specs(seed)) for seed in studies.SEEDS}


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
    left = _theory_chart(p, seed, curves, _effect_specs(seed)["window"], width=charts.PAIR_WIDTH)
    right = charts.throughput_vs_window(cells, bound, capacity)
    display(charts.side_by_side(left, right, f"Study {seed}", f"Campaign {name}"))
    return 1


def _side_streams(p, seed, curves, node):
    cells, bound, _ = _cells(node)
    name = node.attrs["campaign"]
    display(Markdown("### Parallel streams compensate small windows"))
    display(_callout(node, "With a window too small for the path, n streams carry about n times as much, "
                         "until the path is full."))
    left = _theory_chart(p, seed, curves, _effect_specs(seed)["streams"], width=charts.PAIR_WIDTH)
    small = sorted(cells["window"].unique())[: max(1, min(4, cells["window"].nunique()))]
    sel = cells[cells["window"].isin(small)]
    right = charts.throughput_vs_streams(sel, None if bound is None else bound[bound["window"].isin(small)],
                                         title="Throughput vs streams (smallest windows)")
    display(charts.side_by_side(left, right, f"Study {seed}", f"Campaign {name}"))
    return 1


def _side_rtt(p, seed, curves, node):
    """The campaign's loaded RTT against its throughput, beside the study's (``points``:
    the ``y`` statistic of each row label of ``match`` against its ``x`` statistic, with the
    ``unloaded`` RTT as a rule), or alone with the study's published growth ``factor`` as a
    rule at that multiple of the campaign's unloaded RTT."""
    cells, _, rtt_s = _cells(node)
    if "rtt_median" not in cells or cells["rtt_median"].isna().all():
        return 0
    name = node.attrs["campaign"]
    spec = _effect_specs(seed)["rtt"]
    rows = _rows(p, seed)
    display(Markdown("### RTT grows under load"))
    display(_callout(node, "While the path is busy, queues fill and ping RTT rises above its unloaded value.",
                     pair="factor" not in spec))   # a growth factor alone has no chart to pair with
    unloaded = rtt_s * 1e3 if rtt_s else None
    log = float(node.attrs["strength"]) > 10   # loaded RTTs an order of magnitude above the unloaded one
    if "factor" in spec:
        factor = float(_ids(rows, [spec["factor"]])["value"].iloc[0])
        display(Markdown(_text(seed, spec["text"], factor=factor)))
        display(charts.rtt_vs_throughput(cells, unloaded, factor, log=log,
                                         title=f"Campaign {name}: loaded RTT vs throughput (new measurement)"))
        return 1
    pts = spec["points"]
    x, y = _select(rows, pts["x"]), _select(rows, pts["y"])
    key = pts["match"]
    x, y = x.assign(**{key: pub.config_frame(x)[key]}), y.assign(**{key: pub.config_frame(y)[key]})
    merged = y.merge(x[[key, "value_fixed_si"]], on=key, suffixes=("", "_x"))
    points = _points(merged, _shown(merged["value_fixed_si_x"], pts["x_unit"]),
                     _shown(merged["value_si"], pts["y_unit"]), merged[key])
    hrules = _rules(rows, spec["hrules"], spec["hrules"].get("unit"), "y")
    left = charts.theory_points(None, points, spec["x_title"], spec["y_title"], hrules=hrules, width=charts.PAIR_WIDTH)
    right = charts.rtt_vs_throughput(cells, unloaded, log=log)
    display(charts.side_by_side(left, right, f"Study {seed}", f"Campaign {name}"))
    return 1


def _side_latency(p, seed, curves, node):
    name = node.attrs["campaign"]
    spec = _effect_specs(seed)["latency"]
    group = _group(node, "latency_fit")
    pts = group[["size", "latency"]].to_dataframe().reset_index()[["size", "latency"]].dropna()
    fit = {k: float(group[k]) for k in ("slope", "slope_se", "intercept")}
    lat = tables.latency_slopes(p, _table(seed, spec["table"]))
    labels = [_board_label(spec, r) for r in lat.to_dict("records")]
    slopes = pd.concat([
        pd.DataFrame({"board": labels, "kind": spec["kinds"]["measured"], "slope": lat["measured_us_per_byte"],
                      "status": ""}),
        pd.DataFrame({"board": labels, "kind": spec["kinds"]["theory"],
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
    display(charts.side_by_side(left, right, f"Study {seed}", f"Campaign {name}"))
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
