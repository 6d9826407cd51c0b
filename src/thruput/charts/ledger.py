"""Charts of the reproduction ledger (:mod:`thruput.reproduce`): its statuses in fixed
colours on every page, how many published figures have each, and how far each differing
figure is from its derivation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

import altair as alt
import pandas as pd

# the statuses alone, not the studies
from ..reproduce_statuses import STATUSES as _LEDGER_STATUSES
from .style import WHOLE_LABELS, WIDTH

__all__ = ["STATUS_DOMAIN", "STATUS_RANGE", "status_values", "status_color", "status_counts",
           "relative_differences"]

#: Ledger statuses, most serious first (thruput.reproduce.STATUSES), with fixed colours.
STATUS_DOMAIN = list(_LEDGER_STATUSES)
_STATUS_COLOURS = {"erratum": "#d62728", "differs": "#ff7f0e", "reproduced": "#2ca02c", "measured-vs-model": "#9467bd",
                   "consistent": "#4c78a8", "bound": "#9ecae9", "input": "#c7c7c7", "not-reproducible": "#a0a0a0"}
STATUS_RANGE = [_STATUS_COLOURS[s] for s in STATUS_DOMAIN]


def status_values(present: Iterable[Any], domain: Sequence[str] = STATUS_DOMAIN) -> list[str]:
    """The statuses of ``domain`` that occur in ``present``, in the domain's order: what a
    legend lists (the colours stay fixed by the whole domain)."""
    seen = set(present)
    return [s for s in domain if s in seen]


def status_color(field: str = "status", legend: bool = True,
                 present: Iterable[Any] | None = None) -> alt.Color:
    """The shared colour encoding of a ledger status; with ``present`` (the statuses the
    chart shows) the legend lists only those, each in its fixed colour."""
    values = status_values(present) if present is not None else alt.Undefined
    return alt.Color(f"{field}:N", title="ledger status", legend=alt.Legend(values=values) if legend else None,
                     scale=alt.Scale(domain=STATUS_DOMAIN, range=STATUS_RANGE))


def status_counts(counts: pd.DataFrame, title: str = "Published figures by reproduction status") -> alt.Chart:
    """Stacked horizontal bars: how many ledger rows of each study have each status.

    ``counts``: ``study`` (label), ``status``, ``n`` (count of figures).
    """
    order = {s: i for i, s in enumerate(STATUS_DOMAIN)}
    df = counts.assign(order=counts["status"].map(order))
    return alt.Chart(df, title=title).mark_bar().encode(
        y=alt.Y("study:N", title=None, sort=None, axis=WHOLE_LABELS),
        x=alt.X("n:Q", title="published figures (count)", stack="zero"),
        color=status_color(present=df["status"]), order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("study:N"), alt.Tooltip("status:N"), alt.Tooltip("n:Q", title="figures")],
    ).properties(width=WIDTH, height=28 * df["study"].nunique())


def relative_differences(diffs: pd.DataFrame,
                         title: str = "How far each differing figure is from its derivation") -> alt.TopLevelMixin:
    """Published value vs derived value, in percent, one row per ``differs`` figure.

    ``diffs``: ``claim``, ``study``, ``percent`` ((published - derived) / derived x 100),
    ``published``, ``derived`` (in the published unit), ``unit``, ``quote``.
    A symmetric-log axis keeps 0.2 % and 97 % readable on one chart.
    """
    y = alt.Y("claim:N", title=None, sort=None, axis=WHOLE_LABELS)
    tooltip = [alt.Tooltip("claim:N"), alt.Tooltip("quote:N", title="printed"),
               alt.Tooltip("published:Q", title="published", format=".6~g"),
               alt.Tooltip("derived:Q", title="derived", format=".6~g"), alt.Tooltip("unit:N"),
               alt.Tooltip("percent:Q", title="published vs derived (%)", format="+.1f")]
    symlog = alt.Scale(type="symlog")
    x = alt.X("percent:Q", title="published vs derived (%, symmetric log)", scale=symlog,
              axis=alt.Axis(values=[-100, -50, -20, -10, -5, -1, 0, 1, 5, 10, 20, 50, 100]))
    rules = alt.Chart(diffs.assign(zero=0.0)).mark_rule(color="#ccc").encode(
        y=y, x=alt.X("zero:Q", title="published vs derived (%, symmetric log)", scale=symlog), x2="percent:Q")
    dots = alt.Chart(diffs).mark_point(filled=True, size=90).encode(
        y=y, x=x, color=alt.Color("study:N", title="study", scale=alt.Scale(scheme="tableau10")), tooltip=tooltip)
    zero = alt.Chart(pd.DataFrame({"zero": [0]})).mark_rule(color="#333").encode(x="zero:Q")
    return alt.layer(rules, zero, dots, title=title).properties(width=WIDTH, height=22 * len(diffs))
