"""Where Altair charts are drawn, always without network (no CDN, ever).

Altair's default renderer loads Vega from a CDN, so charts stay blank offline. thruput
replaces it wherever it runs:

``site``
    Inside ``thruput site build`` (the executor sets ``THRUPUT_SITE_BUILD=1``): each chart
    is a ``<div>`` and a call of ``vegaEmbed``, which the site serves itself
    (:mod:`thruput.site.assets`), so the static pages work from a file system or localhost.
``notebook``
    In a Jupyter kernel (JupyterLab, Notebook 7, VS Code): each chart's output is a MIME
    bundle that needs neither a kernel nor a network to draw, so it survives saving,
    reopening and ``jupyter nbconvert``: the Vega-Lite spec under the Vega-Lite 5 MIME
    type (drawn, interactive, by the Vega renderer JupyterLab and Notebook 7 ship, before
    any other type of the bundle), a static SVG made by vl-convert (what nbconvert's HTML,
    GitHub and a viewer without Vega show), and a line of text. (Altair's widget renderer
    draws only while its kernel lives: a saved notebook kept a widget reference and no
    chart.)
``none``
    A plain Python process: nothing to draw into; ``chart.save("c.html", inline=True)``
    writes a self-contained file.
"""

from __future__ import annotations

from typing import Any

import hashlib
import itertools
import json
import os

import altair as alt

from ..hashing import sha256_bytes

__all__ = ["enable_offline_renderer", "where", "notebook_bundle", "canonical_spec", "SITE_RENDERER",
           "NOTEBOOK_RENDERER", "EMBED_OPTIONS"]

#: The site's renderer, registered with Altair under this name.
SITE_RENDERER = "thruput-site"
#: The notebook renderer (spec + static SVG), registered with Altair under this name.
NOTEBOOK_RENDERER = "thruput-notebook"
#: The Vega-Lite MIME type JupyterLab 4 and Notebook 7 draw themselves (their Vega 5
#: extension knows Vega-Lite 3 to 5, not Altair 6's ``application/vnd.vegalite.v6.json``).
VEGALITE_MIME = "application/vnd.vegalite.v5+json"
#: Vega-Embed options of both renderers: SVG (crisp, searchable, testable) and no menu.
EMBED_OPTIONS = {"renderer": "svg", "actions": False}
#: The environment variable ``thruput site build`` sets while it executes notebooks.
SITE_BUILD_ENV = "THRUPUT_SITE_BUILD"

_counter = itertools.count()
#: Significant digits a chart's numbers keep in its spec. NumPy's vectorised ``exp``,
#: ``log`` and ``power`` take other code paths on other CPUs and may differ in the last
#: bit; 17 digits of such a theory curve made a page, and so ``dvc.lock``, differ between
#: two machines building the same commit. 12 digits are far below what a chart can show.
SIGNIFICANT_DIGITS = 12


def _rounded(value, digits):
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if value == value and abs(value) != float("inf") else value
    if isinstance(value, dict):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v, digits) for v in value]
    return value


def canonical_spec(spec: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """``spec`` with every float rounded to ``digits`` significant digits (a new object):
    the same chart, the same bytes on any machine. Altair names each inline dataset by a
    hash of its values; the datasets are named again from the rounded values."""
    spec = _rounded(spec, digits)
    if not isinstance(spec, dict) or not isinstance(spec.get("datasets"), dict):
        return spec
    names = {old: "data-" + sha256_bytes(json.dumps(values, sort_keys=True).encode())[:32]
             for old, values in spec["datasets"].items()}
    text = json.dumps(spec, sort_keys=True)
    for old, new in names.items():
        text = text.replace(json.dumps(old), json.dumps(new))
    return json.loads(text)


def _site_renderer(spec, **metadata):
    """A ``<div>`` and a call of the site's own ``vegaEmbed`` (no CDN)."""
    text = json.dumps(canonical_spec(spec), sort_keys=True)
    ident = "vis-" + hashlib.sha1(text.encode()).hexdigest()[:10] + f"-{next(_counter)}"
    html = (f'<div id="{ident}" class="thruput-chart"></div>\n'
            f'<script type="text/javascript">vegaEmbed("#{ident}", {text}, '
            f'{json.dumps(EMBED_OPTIONS)}).catch(function (e) {{ console.error(e); }});</script>')
    return {"text/html": html, "text/plain": f"<chart {ident}>"}


def _static_svg(spec):
    """The chart as SVG text, drawn by vl-convert (no browser, no network)."""
    from altair.utils.mimebundle import spec_to_mimebundle

    bundle = spec_to_mimebundle(spec, format="svg", mode="vega-lite", engine="vl-convert")
    return bundle["image/svg+xml"]


def notebook_bundle(spec: dict[str, Any], **metadata: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The output of one chart in a notebook: Vega-Lite spec, static SVG and text.

    Parameters
    ----------
    spec : dict
        A Vega-Lite spec (Altair's ``chart.to_dict()``).

    Returns
    -------
    tuple of dict
        The MIME bundle and its metadata, as IPython's ``_repr_mimebundle_`` returns them.
    """
    spec = canonical_spec(spec)
    lite = dict(spec)
    # Vega-Lite 5 draws Altair's specs; its $schema is named so that it does not warn
    lite["$schema"] = "https://vega.github.io/schema/vega-lite/v5.json"
    bundle = {VEGALITE_MIME: lite, "image/svg+xml": _static_svg(spec),
              "text/plain": "<Vega-Lite chart: drawn by JupyterLab, or its static SVG>"}
    return bundle, {VEGALITE_MIME: {"embed_options": dict(EMBED_OPTIONS)}}


alt.renderers.register(SITE_RENDERER, _site_renderer)
alt.renderers.register(NOTEBOOK_RENDERER, notebook_bundle)


def where() -> str:
    """``"site"``, ``"notebook"`` or ``"none"``: where charts are being drawn now."""
    if os.environ.get(SITE_BUILD_ENV) == "1":
        return "site"
    from .. import _in_kernel

    return "notebook" if _in_kernel() else "none"


def enable_offline_renderer(target: str | None = None) -> str:
    """Make Altair (thruput's charts and plain Altair alike) draw without network.

    Parameters
    ----------
    target : {"site", "notebook", "none"}, optional
        Default: detected by :func:`where`. ``import thruput`` calls this in a Jupyter
        kernel, so nothing is needed in a notebook; the site's notebooks call it to be sure.

    Returns
    -------
    str
        The renderer now active (``"thruput-site"``, ``"thruput-notebook"``, or Altair's own when
        there is nowhere to draw).
    """
    target = target or where()
    if target == "site":
        alt.renderers.enable(SITE_RENDERER)
        alt.data_transformers.disable_max_rows()
    elif target == "notebook":
        alt.renderers.enable(NOTEBOOK_RENDERER)
        alt.data_transformers.disable_max_rows()
    elif target != "none":
        raise ValueError(f"target must be 'site', 'notebook' or 'none', not {target!r}")
    return alt.renderers.active
