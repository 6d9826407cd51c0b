"""The nbconvert build: executed notebooks + the navigation of ``_quarto.yml`` -> HTML pages.

Used where Quarto is not installed. Code cells are hidden, as the Quarto build does
(``execute: echo: false``); every page loads the site's own Vega bundle and stylesheet.
"""

from __future__ import annotations

import html
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

from .assets import FAVICON, STYLESHEET, VEGA_BUNDLE

__all__ = ["render_page", "page_shell", "OFFLINE_NBCONVERT", "write_nbconvert_config"]

#: ``jupyter nbconvert --to html`` settings that keep its pages offline: its templates load
#: require.js, MathJax, Mermaid, jQuery and the widget manager from CDNs by default. A
#: notebook's charts need none of them (their outputs hold a static SVG, see
#: :mod:`thruput.charts.rendering`), so each URL is an empty script, served by nobody;
#: Mermaid's URL is no setting, so :data:`TEMPLATES` overrides the macro that names it.
OFFLINE_NBCONVERT = {"HTMLExporter": {
    name: "data:text/javascript," for name in (
        "require_js_url", "mathjax_url", "mermaid_js_url", "mermaid_layout_elk_js_url",
        "jquery_url", "widget_renderer_url")} | {"jupyter_widgets_base_url": "data:text/javascript,"}}
#: nbconvert templates of thruput's own, searched before nbconvert's (``lab/mermaidjs``).
TEMPLATES = Path(__file__).with_name("nbconvert")


def _exporter():
    exporter = HTMLExporter(template_name="basic")
    exporter.exclude_input = True
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    exporter.anchor_link_text = ""
    return exporter


def render_page(config, page, executed, site_dir):
    """Convert the executed notebook ``executed`` of ``page`` to ``site_dir/<page>.html``."""
    nb = nbformat.read(executed, as_version=4)
    nb.cells = [c for c in nb.cells if "injected-parameters" not in c.get("metadata", {}).get("tags", [])
                and "parameters" not in c.get("metadata", {}).get("tags", [])]
    body, _ = _exporter().from_notebook_node(nb)
    target = Path(site_dir) / page.html
    target.parent.mkdir(parents=True, exist_ok=True)
    prefix = "../" * (len(page.html.parts) - 1)
    target.write_text(page_shell(config, page, body, prefix), encoding="utf-8")
    return target


def write_nbconvert_config(directory=None):
    """Write :data:`OFFLINE_NBCONVERT` into ``directory/jupyter_nbconvert_config.json``.

    ``directory`` defaults to this environment's Jupyter config folder
    (``<sys.prefix>/etc/jupyter``, which ``tools/bootstrap.sh`` fills); keys already set
    there are kept. Returns the file's path.
    """
    import json
    import sys

    path = Path(directory or Path(sys.prefix, "etc", "jupyter")) / "jupyter_nbconvert_config.json"
    config = json.loads(path.read_text()) if path.is_file() else {}
    for section, values in OFFLINE_NBCONVERT.items():
        for key, value in values.items():
            config.setdefault(section, {}).setdefault(key, value)
    bases = config["HTMLExporter"].setdefault("extra_template_basedirs", [])
    if str(TEMPLATES) not in bases:
        bases.insert(0, str(TEMPLATES))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    return path


def _link(prefix, page):
    return f'<a href="{prefix}{page.html.as_posix()}">{html.escape(page.title)}</a>'


def page_shell(config, page, body, prefix):
    """A whole HTML page: head with local assets only, navbar from ``_quarto.yml``, body."""
    nav = [f'<a class="brand" href="{prefix}index.html">{html.escape(config.title)}</a>']
    for text, target in config.navbar:
        if isinstance(target, list):
            items = "".join(f"<li>{_link(prefix, p)}</li>" for p in target)
            nav.append(f"<details><summary>{html.escape(text)}</summary><ul>{items}</ul></details>")
        else:
            nav.append(_link(prefix, target).replace(f">{html.escape(target.title)}<", f">{html.escape(text)}<"))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(page.title)} – {html.escape(config.title)}</title>
<link rel="icon" href="{prefix}{FAVICON}">
<link rel="stylesheet" href="{prefix}{STYLESHEET}">
<script src="{prefix}{VEGA_BUNDLE}"></script>
</head>
<body>
<nav class="site">{''.join(nav)}</nav>
<main>
{body}
</main>
<footer>Built by thruput from the notebooks in <code>{html.escape(page.notebook.as_posix())}</code>
with nbclient and nbconvert.</footer>
</body>
</html>
"""
