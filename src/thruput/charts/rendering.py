"""Where Altair charts are drawn, always without network (no CDN, ever).

Altair's default renderer loads Vega from a CDN, so charts stay blank offline. thruput
replaces it wherever it runs:

``site``
    Inside ``thruput site build`` (the executor sets ``THRUPUT_SITE_BUILD=1``): each chart
    is a ``<div>`` and a call of ``vegaEmbed``, which the site serves itself
    (:mod:`thruput.site.assets`), so the static pages work from a file system or localhost.
``notebook``
    In a Jupyter kernel (JupyterLab, Notebook 7, classic notebook with ipywidgets): Altair's
    ``jupyter`` widget renderer in offline mode, whose JavaScript (Vega, Vega-Lite,
    Vega-Embed) is bundled by vl-convert from the Python package, drawing SVG.
``none``
    A plain Python process: nothing to draw into; ``chart.save("c.html", inline=True)``
    writes a self-contained file.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os

import altair as alt

__all__ = ["enable_offline_renderer", "where", "SITE_RENDERER", "EMBED_OPTIONS"]

#: The site's renderer, registered with Altair under this name.
SITE_RENDERER = "thruput-site"
#: Vega-Embed options of both renderers: SVG (crisp, searchable, testable) and no menu.
EMBED_OPTIONS = {"renderer": "svg", "actions": False}
#: The environment variable ``thruput site build`` sets while it executes notebooks.
SITE_BUILD_ENV = "THRUPUT_SITE_BUILD"

_counter = itertools.count()


def _site_renderer(spec, **metadata):
    """A ``<div>`` and a call of the site's own ``vegaEmbed`` (no CDN)."""
    text = json.dumps(spec, sort_keys=True)
    ident = "vis-" + hashlib.sha1(text.encode()).hexdigest()[:10] + f"-{next(_counter)}"
    html = (f'<div id="{ident}" class="thruput-chart"></div>\n'
            f'<script type="text/javascript">vegaEmbed("#{ident}", {text}, '
            f'{json.dumps(EMBED_OPTIONS)}).catch(function (e) {{ console.error(e); }});</script>')
    return {"text/html": html, "text/plain": f"<chart {ident}>"}


alt.renderers.register(SITE_RENDERER, _site_renderer)


def where():
    """``"site"``, ``"notebook"`` or ``"none"``: where charts are being drawn now."""
    if os.environ.get(SITE_BUILD_ENV) == "1":
        return "site"
    from .. import _in_kernel

    return "notebook" if _in_kernel() else "none"


def enable_offline_renderer(target=None):
    """Make Altair (thruput's charts and plain Altair alike) draw without network.

    Parameters
    ----------
    target : {"site", "notebook", "none"}, optional
        Default: detected by :func:`where`. ``import thruput`` calls this in a Jupyter
        kernel, so nothing is needed in a notebook; the site's notebooks call it to be sure.

    Returns
    -------
    str
        The renderer now active (``"thruput-site"``, ``"jupyter"``, or Altair's own when
        there is nowhere to draw).
    """
    target = target or where()
    if target == "site":
        alt.renderers.enable(SITE_RENDERER)
        alt.data_transformers.disable_max_rows()
    elif target == "notebook":
        alt.renderers.enable("jupyter", offline=True, embed_options=EMBED_OPTIONS)
        alt.data_transformers.disable_max_rows()
    elif target != "none":
        raise ValueError(f"target must be 'site', 'notebook' or 'none', not {target!r}")
    return alt.renderers.active
