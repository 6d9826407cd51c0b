"""Where each number on a page comes from.

A campaign page ends with :func:`campaign_provenance`: for every group of its statistics
product (each table and chart reads one), the :mod:`thruput.stats` function that computed
it and its parameters, with an anchor ``#source-<group>`` the page's sections link to
(:func:`source_link`); then every raw file read with its sha256. A ledger row links to
:func:`claim_details`: its quote, its check's formula written out, the claims it uses with
their own quotes, and its verdict. The same sources are in a release's ``numbers.json``
(:mod:`thruput.release.numbers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping
    import xarray as xr

import functools
import html
import json

import numpy as np
from IPython.display import HTML

from ..product_groups import COMPARISON_GROUP_FUNCTIONS, GROUP_FUNCTIONS, PRODUCT_FUNCTIONS

__all__ = ["campaign_provenance", "comparison_provenance", "source_link", "claim_details", "raw_files_of"]

#: Variables of a campaign Dataset that name raw files, and the variable with their sha256.
_SOURCES = (("source", "source_sha256"), ("ping_source", "ping_source_sha256"),
            ("baseline_source", "baseline_source_sha256"))


def source_link(group: str, what: str = "where these numbers come from") -> HTML:
    """An HTML link to the provenance of product group ``group`` on the same page."""
    return HTML(f'<p class="thruput-source"><a href="#source-{html.escape(group)}">{html.escape(what)}: '
                f"{html.escape(GROUP_FUNCTIONS.get(group, group))}</a></p>")


def raw_files_of(ds: xr.Dataset) -> dict[str, Any]:
    """Every raw file a campaign Dataset was read from: ``{path: sha256}``, sorted."""
    out = {}
    for name, digest in _SOURCES:
        if name in ds and digest in ds:
            paths = np.asarray(ds[name].values).ravel().astype(str)
            hashes = np.asarray(ds[digest].values).ravel().astype(str)
            for p, h in zip(paths, hashes):
                if p and p != "nan" and h and h != "nan":
                    out[p] = h
    return dict(sorted(out.items()))


def _params_text(attrs):
    keep = {k: v for k, v in attrs.items() if k not in ("units", "long_name")}
    return ", ".join(f"{k}={v}" for k, v in keep.items()) or "-"


def campaign_provenance(ds: xr.Dataset | None, product: xr.DataTree, comparison: bool = False) -> HTML:
    """The page's last section: each statistics group's function and parameters (anchored
    ``#source-<group>``) and every raw file with its sha256.

    Parameters
    ----------
    ds : xarray.Dataset or None
        The campaign (for its raw files); None for a comparison.
    product : xarray.DataTree
        Its statistics product (or a comparison's).
    """
    functions = COMPARISON_GROUP_FUNCTIONS if comparison else GROUP_FUNCTIONS
    kind = "comparison" if comparison else product.attrs.get("campaign_kind", "")
    params = product.attrs.get("params", "{}")
    params = json.loads(params) if isinstance(params, str) else dict(params)
    rows = []
    for node in product.subtree:
        data = node.to_dataset(inherit=False)
        if not data.data_vars:
            continue
        group = node.path.strip("/")
        fn = functions.get(group, PRODUCT_FUNCTIONS.get(kind, ""))
        names = ", ".join(f"{v} [{data[v].attrs.get('units', '')}]" for v in data.data_vars)
        rows.append(f'<tr id="source-{html.escape(group)}"><td><code>{html.escape(group)}</code></td>'
                    f"<td><code>{html.escape(fn)}</code></td><td>{html.escape(_params_text(data.attrs))}</td>"
                    f"<td>{html.escape(names)}</td></tr>")
    parts = ['<h2 id="sources">Where each number comes from</h2>',
             "<p>Every table and chart above reads one group of the statistics product the pipeline "
             "computed once (<code>thruput pipeline stats</code>, or <code>compare</code>); the function, "
             "its parameters and the variables (units) of each group, then the pipeline's parameters and "
             "the raw files with their sha256. A release lists every number with the same source "
             "(<code>numbers.csv</code>).</p>",
             '<table class="thruput-plain"><thead><tr><th>group</th><th>function</th><th>parameters</th>'
             f"<th>numbers [unit]</th></tr></thead><tbody>{''.join(rows)}</tbody></table>",
             f"<p>Pipeline parameters (<code>params.yaml</code>, <code>stats</code>): "
             f"{html.escape(', '.join(f'{k}={v}' for k, v in sorted(params.items())) or '-')}</p>"]
    if ds is not None:
        files = raw_files_of(ds)
        body = "".join(f"<tr><td><code>{html.escape(p)}</code></td><td><code>{h}</code></td></tr>"
                       for p, h in files.items())
        parts.append(f'<details class="thruput-fold" id="raw-files"><summary>The {len(files)} raw files read, '
                     f"with their sha256 (click to show)</summary><table class=\"thruput-plain\"><thead><tr>"
                     f"<th>file</th><th>sha256</th></tr></thead><tbody>{body}</tbody></table></details>")
    return HTML("\n".join(parts))


def comparison_provenance(reports: str | os.PathLike[str], name: str) -> HTML:
    """:func:`campaign_provenance` of a comparison page (``reports/compare-<name>.nc``)."""
    from ..campaign.store import open_product
    from ..project import project_path

    product = open_product(project_path(reports) / f"compare-{name}.nc")
    return campaign_provenance(None, product, comparison=True)


@functools.lru_cache(maxsize=1)
def _checks():
    """Every declared check, by claim (claims.yaml of every study)."""
    from .. import studies

    out = {}
    for seed in studies.SEEDS:
        for check in studies.checks(seed):
            out.setdefault(check["claim"], []).append(check)
    return out


#: The keys naming a check's kind whose value is a formula.
_FORMULAS = ("derive", "at_most", "at_least", "model", "derived", "same_as", "after")


def _claim_href(claim):
    """The link to a claim's ledger row on its study's page (``study-<seed>.html#claim-<id>``)."""
    from .. import studies

    seed = claim.split("-", 1)[0]
    try:
        page = studies.page_link(seed)[1]
    except Exception:                    # an id whose prefix names no study: a same-page anchor
        page = ""
    return f"{page}#claim-{claim}"


def claim_details(row: Any, quotes: Mapping[str, Any]) -> str:
    """A ledger row's provenance as HTML: its quote, each check's formula written out, the
    claims it uses (each linked ``#claim-<id>`` with its own quote) and the verdict.

    Parameters
    ----------
    row : namedtuple or Series
        A ledger row (``claim``, ``quote``, ``status``, ``inputs``, ``check``, ``note``).
    quotes : dict
        Claim id -> its quote (the whole ledger's), for the inputs; each input links to its
        row on its study's page.
    """
    checks = _checks().get(row.claim, [])
    lines = [f"<b>quote</b>: {html.escape(' '.join(str(row.quote).replace('**', '').split()))}"]
    for c in checks:
        kind = next((k for k in _FORMULAS if k in c), None)
        formula = f"{kind}: {c[kind]}" if kind else ", ".join(f"{k}: {c[k]}" for k in ("judgement", "input", "weekday")
                                                             if k in c)
        what = f" ({c['what']})" if c.get("what") else ""
        lines.append(f"<b>check</b> <code>{html.escape(str(formula))}</code>{html.escape(what)}")
    inputs = [i for i in str(row.inputs if isinstance(row.inputs, str) else "").split(",") if i]
    for i in inputs:
        lines.append(f'<b>uses</b> <a href="{html.escape(_claim_href(i))}">{html.escape(i)}</a>: '
                     f"{html.escape(' '.join(str(quotes.get(i, '')).replace('**', '').split()))}")
    lines.append(f"<b>verdict</b>: {html.escape(str(row.status))}")
    return ('<details class="thruput-why"><summary>where from</summary><ul>'
            + "".join(f"<li>{x}</li>" for x in lines) + "</ul></details>")
