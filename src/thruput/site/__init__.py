"""The report site: execute the notebooks, then Quarto (if installed) or nbconvert.

Both builds share everything but the last HTML step: the page list and navigation come
from ``_quarto.yml``; notebooks run in real Jupyter kernels (nbclient) with
papermill-style parameters; the Vega bundle and the data files are written into the site.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from ..errors import ThruputError
from . import assets, datapackage, html, quarto
from .config import load_config
from .execute import NotebookError, execute

#: A monitor campaign's statistics product, next to its data: ``<name>.stats.nc``.
PRODUCT_SUFFIX = ".stats.nc"

__all__ = ["build", "serve", "NotebookError"]


def build(root=".", out=None, processed="data/processed", published="data/published",
          campaigns=None, seeds=None, engine="auto", log=print, monitors=None):
    """Build the site.

    Parameters
    ----------
    root : path-like
        The project (holds ``_quarto.yml`` and ``notebooks/``).
    out : path-like, optional
        Output folder; default the ``output-dir`` of ``_quarto.yml`` (``_site``).
    processed, published : path-like
        Where the campaigns' ``.nc`` files and the published numbers are.
    campaigns, seeds : list of str, optional
        Pages to make from parameterized notebooks; by default every ``<processed>/*.nc``
        and every seed in ``published``.
    monitors : list of str, optional
        Monitor pages; by default one per ``<processed>/<name>.stats.nc``.
    engine : {"auto", "quarto", "nbconvert"}
        ``auto`` uses Quarto when it is on PATH.
    log : callable
        Receives one progress line per page.

    Returns
    -------
    pathlib.Path
        The site folder.
    """
    root = Path(root).resolve()
    processed, published = root / processed, root / published
    if campaigns is None:
        campaigns = sorted(p.stem for p in processed.glob("*.nc") if not p.name.endswith(PRODUCT_SUFFIX))
    if monitors is None:
        monitors = sorted(p.name[:-len(PRODUCT_SUFFIX)] for p in processed.glob(f"*{PRODUCT_SUFFIX}"))
    if seeds is None:
        seeds = _seeds(published)
    config = load_config(root, campaigns, seeds, titles={"seeds": _study_titles()}, monitors=monitors)
    site = Path(out).resolve() if out else config.output_dir
    if site == root or site in root.parents:            # it is emptied below
        raise ThruputError(f"{site}: the output folder holds the project {root}; "
                           "give the site a folder of its own (e.g. _site)")
    use_quarto = engine == "quarto" or (engine == "auto" and quarto.available())
    if use_quarto and not quarto.available():           # before minutes of notebooks
        raise quarto.QuartoError("quarto is not on PATH (install it, or build with --engine nbconvert)")
    staging = root / "build" / "site"
    for folder in (site, staging):
        if folder.exists():
            shutil.rmtree(folder)
    site.mkdir(parents=True)
    datapackage.export(processed, site / "data", root)
    os.environ["THRUPUT_SITE_DATA"] = str(site / "data")   # the data page lists these files
    n = len(config.pages)
    defaults = {"processed": str(processed), "published": str(published)}
    for i, page in enumerate(config.pages, start=1):
        started = time.perf_counter()
        execute(root / page.notebook, staging / page.output, page.parameters, cwd=root,
                defaults=defaults)
        log(f"[{i}/{n}] {page.html.as_posix()}: executed {page.notebook.as_posix()}"
            f"{' ' + str(page.parameters) if page.parameters else ''} "
            f"({time.perf_counter() - started:.1f} s)")
    if use_quarto:
        assets.write_assets(staging)
        quarto.render(config, staging, site)
        log(f"rendered {n} pages with Quarto into {site}")
    else:
        assets.write_assets(site)
        for page in config.pages:
            html.render_page(config, page, staging / page.output, site)
        log(f"rendered {n} pages with nbconvert into {site}")
    _write_index(site, config)
    return site


def _seeds(published):
    """The studies with published numbers (none when the folder is absent)."""
    if not Path(published).is_dir():
        return []
    from ..published import load

    return sorted({str(s) for s in load(path=published)["seed"]})


def _study_titles():
    """Short titles of the source studies for the navigation."""
    from ..report.studies import STUDIES

    return {seed: study["title"] for seed, study in STUDIES.items()}


def _write_index(site, config):
    """A root ``index.html`` that forwards to the home page, if the build made none."""
    index = site / "index.html"
    if index.exists() or not config.pages:
        return
    home = config.pages[0].html.as_posix()
    index.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{config.title}</title>'
                     f'<meta http-equiv="refresh" content="0; url={home}"></head>'
                     f'<body><a href="{home}">{config.title}</a></body></html>\n')


def serve(site="_site", host="127.0.0.1", port=8000):
    """Serve ``site`` on ``host:port`` until interrupted (a quick look, not production)."""
    import functools
    import http.server

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    with http.server.ThreadingHTTPServer((host, port), handler) as httpd:
        print(f"serving {site} at http://{host}:{httpd.server_address[1]}/ (Ctrl-C to stop)")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass
