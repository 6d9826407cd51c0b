"""Files the site serves itself, so that it works with no network (no CDN)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["VEGA_BUNDLE", "STYLESHEET", "FAVICON", "write_assets"]

#: Where the one Vega/Vega-Lite/Vega-Embed bundle lives, relative to the site root.
VEGA_BUNDLE = "vega/vega-bundle.js"
#: The nbconvert build's stylesheet, relative to the site root.
STYLESHEET = "thruput.css"
#: The site's icon (browsers ask for one; a missing icon is a console error).
FAVICON = "favicon.svg"
ICON = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
        '<rect width="16" height="16" rx="3" fill="#243447"/>'
        '<path d="M2 12 L6 7 L9 9 L14 3" stroke="#f58518" stroke-width="2" fill="none"/></svg>\n')

CSS = """\
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: #1d2125; line-height: 1.5; }
nav.site { background: #243447; padding: 0.5rem 1rem; display: flex; flex-wrap: wrap;
           gap: 1rem; align-items: center; }
nav.site a, nav.site summary { color: #fff; text-decoration: none; cursor: pointer; }
nav.site .brand { font-weight: 700; font-size: 1.1rem; margin-right: 1rem; }
nav.site details { position: relative; }
nav.site details ul { position: absolute; z-index: 10; background: #243447; list-style: none;
                      margin: 0.3rem 0 0; padding: 0.5rem 1rem; min-width: 14rem; }
main { max-width: 72rem; margin: 1.5rem auto; padding: 0 1rem; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #d0d7de; padding: 0.25rem 0.6rem; text-align: right; }
th { background: #f6f8fa; }
td:first-child, th:first-child { text-align: left; }
pre { background: #f6f8fa; padding: 0.5rem; overflow-x: auto; }
.thruput-chart { margin: 1rem 0; }
footer { color: #57606a; font-size: 0.85rem; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; }
"""


def vega_bundle():
    """JavaScript defining ``vegaEmbed``, ``vegaLite`` and ``vega`` globally (from vl-convert,
    which ships the libraries: no download at build time)."""
    import vl_convert

    return vl_convert.javascript_bundle()


def write_assets(site_dir):
    """Write the Vega bundle and the stylesheet under ``site_dir``; return their paths."""
    site_dir = Path(site_dir)
    bundle = site_dir / VEGA_BUNDLE
    bundle.parent.mkdir(parents=True, exist_ok=True)
    bundle.write_text(vega_bundle(), encoding="utf-8")
    css = site_dir / STYLESHEET
    css.write_text(CSS, encoding="utf-8")
    icon = site_dir / FAVICON
    icon.write_text(ICON, encoding="utf-8")
    return [bundle, css, icon]
