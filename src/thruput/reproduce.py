"""The reproduction ledger: every published figure checked by its study's declared checks.

The checks are data: ``src/thruput/studies/seed_<nnn>/claims.yaml`` (schema and the
statuses in ``src/thruput/studies/README.md``). This module is their interpreter:
:func:`build_ledger` evaluates every check of every study on the rows of
:func:`thruput.published.load` and keeps, per published figure, the most serious status
its checks found (the order of :data:`STATUSES`). Two generic checks need no
declaration: order statistics within a group (min <= median <= max, ...) and start
before end of a dated run.

Statuses (:data:`STATUS_MEANING` says the same in words the CLI and the site show):

``erratum``
    The figure contradicts the document itself (a unit, an order statistic, a date).
``differs``
    A computed derivation, bound or equality fails by more than the printed precision;
    or a person judged so (``judgement``).
``reproduced``
    A model's output from inputs other than the figure's own statement, within the printed
    precision (a hardware specification printed beside the figure is such an input: the
    UDPmon expected slopes from the bus width and clock). Only a computed ``derive`` check
    can give it, and only when at least one input is independent of the figure: not printed
    together with it (the same ``quote``, or a check that declares ``restates``: the same
    sentence, slide bullet list, table row or trace) and no constant of
    :data:`~.formulas.FITTED` (set from the figure itself) in the formula. Arithmetic among
    numbers printed together (a ratio, a drop, a unit reading) is ``consistent``.
``measured-vs-model``
    A measurement compared with the expectation the source itself computes (UDPmon
    latency slopes vs PCI + GigE + PCI); the difference is the finding, not an error.
``consistent``
    Agrees with the document in a check that is not an independent re-derivation: the
    arithmetic of its own sentence (19 rtt x 20 ms = 380 ms), a bound computed from other
    published figures, the same figure printed twice or in another unit, a standard
    constant, a calendar weekday, an order statistic; or judged plausible by a person
    (``judgement``).
``bound``
    Within a physical limit no published figure enters (the GigE line rate, TCP or UDP
    goodput over GigE, a SONET rate): such a check can hardly fail, so it is counted apart
    and not as checked.
``input``
    An input of a derivation or a table, nothing else constrains it; not counted as
    checked.
``not-reproducible``
    A measurement or setting nothing else published constrains; it needs the raw data.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import studies, units
from .published import DATETIME_UNIT
from .reproduce_statuses import COUNTED, STATUS_MEANING, STATUSES
from .studies import StudyError
from .studies.formulas import FITTED, FormulaError, evaluate, gige_goodput, half_unit, names

__all__ = ["STATUSES", "STATUS_MEANING", "COUNTED", "LEDGER_COLUMNS", "Finding", "build_ledger", "summary",
           "gige_goodput"]

LEDGER_COLUMNS = ["seed", "claim", "published_value", "published_unit", "derived_value",
                  "status", "judgement", "note", "quote", "measures", "check", "inputs"]

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
#: relative slack for float noise when comparing a derivation with its tolerance
_EPS = 1e-9


@dataclass(frozen=True)
class Finding:
    """What one check concluded about one claim.

    ``derived`` is in the claim's published unit (None if nothing was derived);
    ``judgement`` is True when a person, not a computation, set the status;
    ``inputs`` are the published claims the check used.
    """

    claim: str
    status: str
    derived: float | None = None
    note: str = ""
    check: str = ""
    judgement: bool = False
    inputs: tuple = ()

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")


class _MissingClaim(KeyError):
    """A seed's checks need a row the published frame does not have (a partial seed)."""


class _Ctx:
    """The published rows by id, and the findings collected so far."""

    def __init__(self, published):
        self.df = published.set_index("id", drop=False)
        self.findings = []
        #: seed -> the first missing claim that stopped its checks
        self.skipped = {}

    def need(self, claim):
        if claim not in self.df.index:
            raise _MissingClaim(claim)

    def v(self, claim):
        """Published value (in its printed unit)."""
        self.need(claim)
        return float(self.df.at[claim, "value"])

    def si(self, claim):
        self.need(claim)
        return float(self.df.at[claim, "value_si"])

    def unit(self, claim):
        self.need(claim)
        return self.df.at[claim, "unit"]

    def date(self, claim):
        self.need(claim)
        return self.df.at[claim, "date"]

    def add(self, claim, status, derived=None, note="", check="", judgement=False, inputs=()):
        self.need(claim)
        self.findings.append(Finding(claim, status, None if derived is None else float(derived), note, check,
                                     judgement, tuple(inputs)))


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
                                f"({ctx.unit(a)}; {other} is the other)", "order", inputs=(other,))
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
    df = ctx.df[ctx.df["unit"] == DATETIME_UNIT]
    for _, g in df[df["group"] != ""].groupby("group"):
        by = dict(zip(g["measures"], g["id"]))
        if "start_time" in by and "end_time" in by:
            s, e = (pd.Timestamp(ctx.date(by[k])) for k in ("start_time", "end_time"))
            minutes = (e - s).total_seconds() / 60
            if minutes < 0:
                ctx.add(by["start_time"], "erratum", None,
                        f"starts {ctx.date(by['start_time'])}, after its end {ctx.date(by['end_time'])}", "dates",
                        inputs=(by["end_time"],))
            else:
                for k in ("start_time", "end_time"):
                    ctx.add(by[k], "consistent", None, f"start before end ({minutes:.0f} min)", "dates")


# --- declared checks (studies/seed_<nnn>/claims.yaml) ---------------------------------
def _input_values(ctx, check):
    """The check's named inputs: ``{name: value}`` (SI, or ``[unit]`` if the spec says) and the claims."""
    values, claims = {}, []
    for name, spec in (check.get("inputs") or {}).items():
        claim, unit = studies.parse_input(spec)
        ctx.need(claim)
        claims.append(claim)
        values[name] = ctx.si(claim) if unit is None else float(units.convert(ctx.si(claim),
                                                                               units.BASE[units.dimension(unit)],
                                                                               unit))
    return values, claims


def _in_claim_unit(ctx, claim, value, unit):
    """A formula's result, given in ``unit`` (the claim's SI base unit if None), in the claim's unit."""
    cunit = ctx.unit(claim)
    if cunit in ("", DATETIME_UNIT):
        return value
    return float(units.convert(value, unit or units.BASE[units.dimension(cunit)], cunit))


def _derived(ctx, check, key):
    values, claims = _input_values(ctx, check)
    value = evaluate(check[key], values)
    return _in_claim_unit(ctx, check["claim"], value, check.get("unit")), values, claims


def _tolerance(ctx, check, values):
    """(low, high) the derivation may take and a phrase for it, from the check's ``tolerance``.

    ``printed`` (default): half a unit in the published value's last digit; ``{abs: x}``,
    ``{rel: x}`` (of the published value); ``{sig: n}``: the derivation rounded to ``n``
    significant figures must equal the printed value; ``inputs``: the interval the formula
    takes when every printed input varies within its own last digit.
    """
    claim, tol = check["claim"], check.get("tolerance", "printed")
    pub = ctx.v(claim)
    if tol == "printed":
        t = half_unit(pub)
        return pub - t, pub + t, f"+-{t:g}"
    if tol == "inputs":
        corners = []
        spans = []
        for name, spec in check["inputs"].items():
            c, unit = studies.parse_input(spec)
            h = half_unit(ctx.v(c)) * float(units.factor(ctx.unit(c)))
            if unit is not None:
                h = float(units.convert(h, units.BASE[units.dimension(unit)], unit))
            spans.append((name, (values[name] - h, values[name] + h)))
        for combo in itertools.product(*(s for _, s in spans)):
            v = dict(values, **{n: x for (n, _), x in zip(spans, combo)})
            corners.append(_in_claim_unit(ctx, claim, evaluate(check["derive"], v), check.get("unit")))
        t = half_unit(pub)
        return min(corners) - t, max(corners) + t, "the printed rounding of its inputs"
    if "sig" in tol:
        return None, tol["sig"], f"{tol['sig']} significant figures"
    if "abs" in tol:
        return pub - tol["abs"], pub + tol["abs"], f"+-{tol['abs']:g}"
    if "rel" in tol:
        t = abs(pub) * tol["rel"]
        return pub - t, pub + t, f"+-{100 * tol['rel']:g}%"
    raise FormulaError(f"{claim}: unknown tolerance {tol!r}")


def _join(*parts):
    return "; ".join(p for p in parts if p)


def _derive(ctx, check):
    """``reproduced`` (other published inputs, within tolerance), ``consistent`` (a constant or
    the same figure in another unit, within tolerance) or the check's ``fails`` status."""
    claim = check["claim"]
    derived, values, claims = _derived(ctx, check, "derive")
    pub = ctx.v(claim)
    quote = ctx.df.at[claim, "quote"]
    low, high, prec = _tolerance(ctx, check, values)
    if low is None:
        from .studies.formulas import round_sig
        ok = math.isclose(round_sig(derived, high), pub, rel_tol=_EPS)
    else:
        slack = _EPS * max(abs(pub), abs(derived))
        ok = low - slack <= derived <= high + slack
    what = check.get("what", check["derive"])
    others = [c for c in claims if c != claim]
    if not ok:
        note = (f"{what} = {derived:.6g}, published {pub:g}: off by {derived - pub:+.3g} "
                f"({100 * (derived - pub) / pub:+.2g}%)") if pub else f"{what} = {derived:.6g}, published 0"
        ctx.add(claim, check.get("fails", "differs"), derived, _join(note, check.get("note")),
                check.get("check", "derive"), inputs=claims)
        return
    fitted = [n for n in names(check["derive"]) if n in FITTED]
    own = [c for c in others if ctx.df.at[c, "quote"] == quote]
    arithmetic = "arithmetic of the source checked, not a reproduction"
    if not others:
        status, why = "consistent", "a standard or constant, not a published input"
    elif check.get("restates"):
        status, why = "consistent", f"{arithmetic}: {check['restates']}"
    elif fitted:
        status, why = "consistent", f"{arithmetic}: {', '.join(fitted)} was fitted to this figure ({FITTED[fitted[0]]})"
    elif len(others) == 1 and str(check["derive"]).strip() in values:
        status, why = "consistent", f"the same figure as {others[0]}, printed with another rounding"
    elif len(others) == 1 and math.isclose(units.to_base(derived, ctx.unit(claim)), ctx.si(others[0]),
                                             rel_tol=1e-12):
        status, why = "consistent", f"the same figure as {others[0]} in another unit"
    elif len(own) == len(others):
        status, why = "consistent", f"{arithmetic}: its inputs are printed in the same text"
    else:
        status, why = "reproduced", ""
    ctx.add(claim, status, derived, _join(f"{what} = {derived:.6g} (within {prec})", why, check.get("note")),
            check.get("check", "derive"), inputs=claims)


def _bound(ctx, check, key):
    """``at_most``: the claim is at most the formula's value; ``at_least``: at least it."""
    claim = check["claim"]
    values, claims = _input_values(ctx, check)
    limit_si = evaluate(check[key], values)
    if check.get("unit"):
        limit_si = units.to_base(limit_si, check["unit"])
    cunit = ctx.unit(claim)
    shown = float(units.convert(limit_si, units.BASE[units.dimension(cunit)], cunit))
    what = check.get("what", check[key])
    value = ctx.si(claim)
    slack = _EPS * max(abs(value), abs(limit_si))
    upper = key == "at_most"
    ok = value <= limit_si + slack if upper else value >= limit_si - slack
    word = "at most" if upper else "at least"
    shown_text = f"{shown:.4g}" + ("" if cunit == "1" else f" {cunit}")     # a ratio prints no unit
    if ok:
        # a limit no published figure enters (GigE, its goodput) can hardly fail: counted apart
        ctx.add(claim, "consistent" if claims else "bound", shown,
                _join(f"{word} {what} = {shown_text}", check.get("note")), check.get("check", "bound"), inputs=claims)
    else:
        off = 100 * (value / limit_si - 1) if limit_si else math.inf
        ctx.add(claim, check.get("fails", "differs"), shown,
                _join(f"{'exceeds' if upper else 'falls short of'} {what} = {shown_text} by {abs(off):.0f}%",
                      check.get("note")), check.get("check", "bound"), inputs=claims)


def _at_most(ctx, check):
    _bound(ctx, check, "at_most")


def _at_least(ctx, check):
    _bound(ctx, check, "at_least")


def _same_as(ctx, check):
    """``consistent`` if the claim equals another published figure (value in SI, or date), else ``fails``.

    ``tolerance: {rel: x}`` or ``{abs: x}`` (in the claim's unit) allows the two printings
    of one quantity to differ ("rtt 6 ms" and "6.2 ms"); without it they must be equal.
    """
    claim, other = check["claim"], check["same_as"]
    derived = None
    if ctx.unit(claim) == DATETIME_UNIT:
        same, shown = ctx.date(claim) == ctx.date(other), ctx.date(other)
    else:
        tol = check.get("tolerance", {"rel": 1e-12})
        a, b = ctx.si(claim), ctx.si(other)
        limit = tol["rel"] * abs(b) if "rel" in tol else units.to_base(tol["abs"], ctx.unit(claim))
        same, shown = abs(a - b) <= limit * (1 + _EPS), f"{ctx.v(other):g} {ctx.unit(other)}"
        derived = _in_claim_unit(ctx, claim, b, None)
    note = f"same as {other} ({shown})" if same else f"differs from {other} ({shown})"
    ctx.add(claim, "consistent" if same else check.get("fails", "differs"), derived, _join(note, check.get("note")),
            check.get("check", "same figure"), inputs=(other,))


def _after(ctx, check):
    claim, other = check["claim"], check["after"]
    ok = pd.Timestamp(ctx.date(claim)) > pd.Timestamp(ctx.date(other))
    note = f"after {other} ({ctx.date(other)})" if ok else f"not after {other} ({ctx.date(other)})"
    ctx.add(claim, "consistent" if ok else "erratum", None, _join(note, check.get("note")),
            check.get("check", "dates"), inputs=(other,))


def _weekday(ctx, check):
    """The ``weekday=`` of the claim's ``config`` against the calendar."""
    claim = check["claim"]
    ctx.need(claim)
    cfg = dict(p.split("=", 1) for p in ctx.df.at[claim, "config"].split(";") if p)
    day = _dt.date.fromisoformat(ctx.date(claim)[:10]).strftime("%A")
    if day == cfg["weekday"]:
        ctx.add(claim, "consistent", None, f"{ctx.date(claim)[:10]} was a {day}", check.get("check", "calendar"))
    else:
        ctx.add(claim, "erratum", None, f"{ctx.date(claim)[:10]} was a {day}, not a {cfg['weekday']}",
                check.get("check", "calendar"))


def _model(ctx, check):
    claim = check["claim"]
    derived, _, claims = _derived(ctx, check, "model")
    pub = ctx.v(claim)
    note = (f"measured {pub:g}, the source's model {check.get('what', check['model'])} = {derived:.4g}: "
            f"{100 * (pub / derived - 1):+.0f}%")
    ctx.add(claim, "measured-vs-model", derived, _join(note, check.get("note")), check.get("check", "model"),
            inputs=claims)


def _input(ctx, check):
    """``input``; with ``derived``, the note gives what the check computes from it (in ``unit``)."""
    note = check.get("note", "an input of a derivation")
    claims = ()
    if "derived" in check:
        values, claims = _input_values(ctx, check)
        value = evaluate(check["derived"], values)
        note = _join(f"{check.get('what', check['derived'])} = {value:.4g} {check.get('unit', '')}".rstrip(),
                     check.get("note"))
    ctx.add(check["claim"], "input", None, note, check.get("check", "input"), inputs=claims)


def _judgement(ctx, check):
    derived, claims = None, ()
    if "derived" in check:
        derived, _, claims = _derived(ctx, check, "derived")
    ctx.add(check["claim"], check["judgement"], derived, check["note"], check.get("check", "judgement"),
            judgement=True, inputs=claims)


_RUN = {"derive": _derive, "at_most": _at_most, "at_least": _at_least, "same_as": _same_as, "after": _after, "weekday": _weekday,
        "model": _model, "input": _input, "judgement": _judgement}


def _run_study_checks(ctx, seed):
    """Run one study's declared checks; if a row they need is missing, drop that study's findings.

    The checks are written against the complete transcription; on a subset (one table, a
    few rows) they cannot run, and half-run checks would mislabel rows, so the subset
    keeps only the generic checks and the seed is listed in ``ctx.skipped``.
    """
    checks = studies.checks(seed)
    before = len(ctx.findings)
    try:
        for i, check in enumerate(checks):
            ctx.need(check["claim"])
            try:
                _RUN[studies.kind(check)](ctx, check)
            except (FormulaError, ArithmeticError, ValueError, TypeError) as exc:
                if isinstance(exc, (_MissingClaim, StudyError)):
                    raise
                raise StudyError(f"{studies.claims_path(seed)}: check {i + 1}: {check['claim']!r}: "
                                 f"{exc}") from None
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
        re-derived value, or for a bound the bound itself, e.g. the 941.5 Mbit/s TCP
        goodput of GigE; NaN if nothing was derived), ``status`` (one of
        :data:`STATUSES`), ``judgement`` (True if a person, not a computation, set that
        status), ``note`` (how it was derived or why it disagrees; notes of several
        checks joined by " | "), ``quote``, ``measures``, ``check`` (the checks that
        decided) and ``inputs`` (the published claims they used, comma-separated).

    Notes
    -----
    A claim no check touches is ``not-reproducible``. A study's declared checks need its
    complete transcription; given a subset of a seed, only the generic checks (order
    statistics, start before end) run and the default notes say so. A claim several checks
    touch keeps the most serious status in the order of :data:`STATUSES`; its
    ``derived_value`` comes from the first finding of that status that derived one.
    """
    ctx = _Ctx(published)
    _check_order_statistics(ctx)
    _check_dates(ctx)
    for seed in sorted(set(published["seed"])):
        if seed in studies.SEEDS:
            _run_study_checks(ctx, seed)
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
        deciding = [f for f in fs if f.status == status]
        derived = next((f.derived for f in deciding if f.derived is not None),
                       next((f.derived for f in fs if f.derived is not None), None))
        notes = list(dict.fromkeys(f.note for f in fs if f.note))
        checks = list(dict.fromkeys(f.check for f in fs if f.check))
        inputs = list(dict.fromkeys(c for f in deciding for c in f.inputs))
        pub_value = r.date if r.unit == DATETIME_UNIT else r.value
        rows.append({"seed": r.seed, "claim": r.id, "published_value": pub_value, "published_unit": r.unit,
                     "derived_value": np.nan if derived is None else derived, "status": status,
                     "judgement": all(f.judgement for f in deciding), "note": " | ".join(notes),
                     "quote": r.quote, "measures": r.measures, "check": ",".join(checks),
                     "inputs": ",".join(inputs)})
    return pd.DataFrame(rows, columns=LEDGER_COLUMNS)


def summary(ledger):
    """Counts of ledger rows by status, overall and per seed.

    Returns
    -------
    pandas.DataFrame
        Index ``seed`` (plus ``all``), one column per status in :data:`STATUSES` order
        (zeros included), ``checked`` (the :data:`COUNTED` statuses), ``judgement`` (of
        those, set by a person) and ``total``.
    """
    table = pd.crosstab(ledger["seed"], ledger["status"]).reindex(columns=list(STATUSES), fill_value=0)
    counted = ledger["status"].isin(COUNTED)
    judged = counted & ledger["judgement"].astype(bool) if "judgement" in ledger else counted & False
    table["checked"] = counted.groupby(ledger["seed"]).sum().reindex(table.index, fill_value=0)
    table["judgement"] = judged.groupby(ledger["seed"]).sum().reindex(table.index, fill_value=0)
    table.loc["all"] = table.sum()
    table["total"] = table[list(STATUSES)].sum(axis=1)
    table.columns.name = None
    return table
