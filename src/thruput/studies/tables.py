"""Tidy tables and theory curves of the study pages, from what each ``page.yaml`` declares.

A study's page declares its tables (``tables``) and theory lines (``curves``) as data:
which published claims fill which cell, and which textbook formula of
:mod:`thruput.stats.theory` a line draws over which range. The functions here read such a
declaration and return a tidy DataFrame; none of them knows a study, a claim id or a
published number. Nothing here decides a verdict: the ledger
(:func:`thruput.reproduce.build_ledger`) does.

Declarations (``page.yaml``; schema in ``src/thruput/studies/README.md``):

``claim_grid``
    ``claim`` (a template such as ``004-ping-{month}-{size}-{stat}``), ``axes`` (each
    placeholder but ``stat`` with its values, in table order) and ``stats``.
``range_cells``
    ``group`` and, per config key, its values in table order.
``capacity_table``
    ``claim`` (``{rate}`` and ``{what}``), ``rates``, ``rtt`` (a claim), ``mss`` (bytes).
``latency_slopes``
    one mapping per board: ``board``, ``pci``, ``measured``, ``expected`` (claims),
    ``intercept`` (optional), ``width`` (bits) and ``clock`` (a constant of
    :data:`thruput.studies.formulas.CONSTANTS`).
a curve
    ``curve`` (:data:`CURVES`), ``label`` (``{rtt_ms}`` is filled in), ``rtt`` (a claim),
    ``x`` (the values, or ``{geomspace: [a, b, n]}``, ``{logspace: [a, b, n]}``,
    ``{arange: [a, b]}``), ``mss`` (bytes) or ``window_bytes``, and ``cap`` (a constant).
"""

from __future__ import annotations

from typing import Any

import itertools

import numpy as np
import pandas as pd

from ..published import config_frame
from ..stats import theory
from . import StudyError, SEEDS, page
from .formulas import CONSTANTS

__all__ = ["axis_values", "claim_grid", "range_cells", "capacity_table", "latency_slopes", "curve",
           "theory_curves", "CURVES"]


def axis_values(spec: Any) -> np.ndarray | list:
    """The x values a declaration names: a list as is, or ``{geomspace: [a, b, n]}``,
    ``{logspace: [a, b, n]}`` (exponents of ten) or ``{arange: [a, b]}`` (b excluded)."""
    if isinstance(spec, dict):
        (how, args), = spec.items()
        if how not in ("geomspace", "logspace", "arange"):
            raise StudyError(f"x values: {how!r} is not geomspace, logspace or arange")
        return getattr(np, how)(*args)
    return list(spec)


def claim_grid(published: pd.DataFrame, spec: dict, column: str = "value") -> pd.DataFrame:
    """The published values of a table whose claim ids follow a template, one row per cell.

    Parameters
    ----------
    published : pandas.DataFrame
        Rows of :func:`thruput.published.load` (or :func:`thruput.report.studies.published_frame`).
    spec : dict
        ``claim`` (template with ``{stat}`` and one placeholder per axis), ``axes`` (name ->
        values, in table order), ``stats`` (the ``{stat}`` values).
    column : str
        Which value to take: ``value`` (as printed), ``value_si``, ``value_fixed_si``, ``date``.

    Returns
    -------
    pandas.DataFrame
        One row per combination of the axes (first axis outermost): the axis values, one
        column per stat, and ``claims`` (stat -> claim id).
    """
    pub = published.set_index("id")
    axes = spec["axes"]
    rows = []
    for combo in itertools.product(*axes.values()):
        where = dict(zip(axes, combo))
        claims = {s: spec["claim"].format(stat=s, **where) for s in spec["stats"]}
        rows.append({**where, **{s: pub.at[c, column] for s, c in claims.items()}, "claims": claims})
    return pd.DataFrame(rows)


def range_cells(published: pd.DataFrame, group: str, order: dict) -> pd.DataFrame:
    """A table of printed values and ranges (``mean``, or ``range_low`` to ``range_high``), Mbit/s.

    Parameters
    ----------
    group : str
        The published rows' ``group``.
    order : dict
        Config key -> its values in the table's order; the keys index the cells.

    Returns
    -------
    pandas.DataFrame
        The keys of ``order``, ``low``, ``high`` (equal unless a range was printed) and
        ``mid`` (their mean), Mbit/s, in the table's order.
    """
    keys = list(order)
    df = published[published["group"] == group]
    cfg = config_frame(df)
    df = df.assign(**{k: cfg[k] for k in keys}, mbps=df["value_si"] / 1e6)
    out = df.pivot_table(index=keys, columns="statistic", values="mbps", aggfunc="first")
    low = out.get("range_low", pd.Series(np.nan, index=out.index)).fillna(out.get("mean"))
    high = out.get("range_high", pd.Series(np.nan, index=out.index)).fillna(out.get("mean"))
    res = pd.DataFrame({"low": low, "high": high}).reset_index()
    res["mid"] = (res["low"] + res["high"]) / 2
    res = res.sort_values(keys, key=lambda col: col.map({v: i for i, v in enumerate(order[col.name])}))
    return res.reset_index(drop=True)


def capacity_table(published: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """A table of capacities with the window, recovery time and loss rate a Reno stream
    needs, beside :mod:`thruput.stats.theory` at the table's RTT and MSS.

    Parameters
    ----------
    spec : dict
        ``claim`` (template with ``{rate}`` and ``{what}``: ``rate``, ``window``,
        ``recovery``, ``loss``), ``rates``, ``rtt`` (claim), ``mss`` (bytes).

    Returns
    -------
    pandas.DataFrame
        ``throughput_bps``; ``window_pkts`` (published) and ``window_pkts_theory``;
        ``recovery_s`` and ``recovery_s_theory``; ``loss_rate`` and ``loss_rate_theory``.
    """
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


def latency_slopes(published: pd.DataFrame, boards: list[dict]) -> pd.DataFrame:
    """UDPmon latency slopes: measured, the published expectation, and the theory
    (send bus + link + receive bus, :func:`thruput.stats.theory.expected_latency_slope`).

    Returns
    -------
    pandas.DataFrame
        ``board``, ``pci``, ``measured_us_per_byte``, ``expected_us_per_byte`` (as
        printed), ``expected_theory_us_per_byte``, ``intercept_us``, and the claims
        ``measured_claim`` and ``expected_claim``.
    """
    pub = published.set_index("id")
    rows = []
    for r in boards:
        bus = (r["width"], CONSTANTS[r["clock"]])
        link = CONSTANTS[r.get("link", "GIGE_BPS")] / theory.BITS_PER_BYTE
        rows.append({"board": r["board"], "pci": r["pci"], "measured_us_per_byte": pub.at[r["measured"], "value"],
                     "expected_us_per_byte": pub.at[r["expected"], "value"],
                     "expected_theory_us_per_byte": theory.expected_latency_slope([bus, link, bus]),
                     "intercept_us": pub.at[r["intercept"], "value"] if r.get("intercept") else np.nan,
                     "measured_claim": r["measured"], "expected_claim": r["expected"]})
    return pd.DataFrame(rows)


def _window_limit(c, x, rtt):
    return x, "KiB", theory.window_limited_throughput(np.asarray(x, float) * 1024, rtt, c.get("streams", 1))


def _streams_x_window(c, x, rtt):
    return x, "streams", theory.window_limited_throughput(c["window_bytes"], rtt, x)


def _mathis(c, x, rtt):
    return x, "1", theory.mathis_throughput(c["mss"], rtt, x)


def _reno_recovery(c, x, rtt):
    return x / 1e6, "Mbit/s", theory.reno_recovery_time(x, rtt, c["mss"])


#: Curve families: x (as declared) -> (x shown, its unit, y in SI) from :mod:`thruput.stats.theory`.
#: ``window_limit``: window (KiB) -> window / RTT (bit/s); ``streams_x_window``: streams ->
#: n x window / RTT; ``mathis``: loss rate -> Mathis throughput at ``mss``; ``reno_recovery``:
#: capacity (bit/s, shown in Mbit/s) -> C x RTT^2 / (2 MSS) (s).
CURVES = {"window_limit": _window_limit, "streams_x_window": _streams_x_window, "mathis": _mathis,
          "reno_recovery": _reno_recovery}
_Y_UNIT = {"reno_recovery": "s"}


def curve(seed: str, c: dict, rtt_s: float) -> pd.DataFrame:
    """One declared theory line (``page.yaml``: ``curves``) at the RTT ``rtt_s`` (s).

    Returns
    -------
    pandas.DataFrame
        ``seed``, ``curve``, ``label`` (``{rtt_ms}`` filled in), ``x``, ``x_unit``, ``y``,
        ``y_unit`` (Mbit/s, or s for a recovery time); capped at ``cap`` where declared.
    """
    if c["curve"] not in CURVES:
        raise StudyError(f"study {seed}: unknown curve {c['curve']!r} (known: {', '.join(CURVES)})")
    x, x_unit, y = CURVES[c["curve"]](c, axis_values(c["x"]), rtt_s)
    if c.get("cap"):
        y = np.minimum(y, CONSTANTS[c["cap"]])
    y_unit = _Y_UNIT.get(c["curve"], "Mbit/s")
    return pd.DataFrame({"seed": seed, "curve": c["curve"], "label": c["label"].format(rtt_ms=rtt_s * 1e3),
                         "x": x, "x_unit": x_unit, "y": y / 1e6 if y_unit == "Mbit/s" else y, "y_unit": y_unit})


def theory_curves(published: pd.DataFrame) -> pd.DataFrame:
    """Theory lines for each study's page, from the studies' own published inputs.

    The curves are declared in each study's ``page.yaml`` (``curves``): the family, its
    legend label (``{rtt_ms}`` is filled with the RTT used), the published RTT claim, the
    x values, the window or MSS and the cap.

    Parameters
    ----------
    published : pandas.DataFrame
        Rows of :func:`thruput.published.load` (all seeds).

    Returns
    -------
    pandas.DataFrame
        Long format: ``seed``, ``curve`` (a family of :data:`CURVES`), ``label``, ``x``,
        ``x_unit``, ``y``, ``y_unit``.
    """
    v = published.set_index("id")["value_si"]
    parts = []
    present = set(published["seed"])
    for seed in SEEDS:
        if seed not in present:   # a page built from one study's rows draws that study's curves only
            continue
        parts += [curve(seed, c, v[c["rtt"]]) for c in page(seed).get("curves", [])]
    if not parts:
        return pd.DataFrame(columns=["seed", "curve", "label", "x", "x_unit", "y", "y_unit"])
    return pd.concat(parts, ignore_index=True)
