"""The report site: execute the notebooks, then Quarto (if installed) or nbconvert.

Both builds share everything but the last HTML step: the page list and navigation come
from ``_quarto.yml``; notebooks run in real Jupyter kernels (nbclient) with
papermill-style parameters; the Vega bundle and the data files are written into the site.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from ..campaign.store import STATS_SUFFIX
from ..errors import ThruputError
from . import assets, datapackage, html, quarto
from .config import load_config
from .execute import NotebookError, execute
from .serve import serve

__all__ = ["build", "execute_page", "campaigns_in", "serve", "NotebookError"]


def build(root=".", out=None, processed="data/processed", published="data/published",
          campaigns=None, seeds=None, engine="auto", log=print, reports="data/report",
          comparisons=None, pages=None, data=None, monitors=None):
    """Build the site.

    Parameters
    ----------
    root : path-like
        The project (holds ``_quarto.yml`` and ``notebooks/``).
    out : path-like, optional
        Output folder; default the ``output-dir`` of ``_quarto.yml`` (``_site``).
    processed, published, reports : path-like
        Where the campaigns' ``.nc`` files and statistics products, the published
        numbers, and the catalogue and comparisons are (relative to ``root``).
    campaigns, seeds, comparisons : list of str, optional
        Pages to make from parameterized notebooks; by default every campaign of
        ``<processed>/*.nc``, every seed in ``published`` and no comparison.
    monitors : list of str, optional
        Monitor campaign pages; by default none.
    engine : {"auto", "quarto", "nbconvert"}
        ``auto`` uses Quarto when it is on PATH.
    log : callable
        Receives one progress line per page.
    pages : path-like, optional
        A folder of notebooks already executed (``thruput site page``, one DVC stage
        each), laid out as the site: nothing is executed, the pages are only assembled.
        By default every page is executed here.
    data : path-like, optional
        The data package (``thruput site data``) copied to the site's ``data/``; by
        default it is exported from ``processed`` here.

    Returns
    -------
    pathlib.Path
        The site folder.
    """
    root = Path(root).resolve()
    processed, published, reports = root / processed, root / published, root / reports
    if campaigns is None:
        campaigns = campaigns_in(processed)
    if seeds is None:
        seeds = _seeds(published)
    config = load_config(root, campaigns, seeds, titles={"seeds": _study_titles()},
                         comparisons=comparisons or (), monitors=monitors or ())
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
    if data is None:
        datapackage.export(processed, site / "data", root, campaigns=[*campaigns, *(monitors or ())])
    else:
        shutil.copytree(root / data, site / "data", dirs_exist_ok=True)
    n = len(config.pages)
    if pages is None:
        defaults = {"processed": str(processed), "published": str(published), "reports": str(reports),
                    "package": str(site / "data" / datapackage.DESCRIPTOR)}
        for i, page in enumerate(config.pages, start=1):
            started = time.perf_counter()
            execute(root / page.notebook, staging / page.output, page.parameters, cwd=root,
                    defaults=defaults)
            log(f"[{i}/{n}] {page.html.as_posix()}: executed {page.notebook.as_posix()}"
                f"{' ' + str(page.parameters) if page.parameters else ''} "
                f"({time.perf_counter() - started:.1f} s)")
    else:
        missing = [p.output.as_posix() for p in config.pages if not (root / pages / p.output).exists()]
        if missing:
            raise ThruputError(f"{root / pages}: no executed notebook for {', '.join(missing)} "
                               "(`thruput site page` writes them; `dvc repro` runs one stage per page)")
        for page in config.pages:       # only the pages of this build (not a campaign's
            target = staging / page.output      # left in build/pages after params.yaml dropped it)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / pages / page.output, target)
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


def execute_page(root, notebook, out, parameters=None):
    """Execute one page's notebook into ``out`` (what a ``page@...`` stage runs).

    The kernel starts in ``root`` (notebooks use project-relative paths); ``parameters``
    override the defaults of the notebook's ``parameters`` cell.
    """
    root = Path(root).resolve()
    return execute(root / notebook, root / out, parameters or {}, cwd=root)


def campaigns_in(processed):
    """Names of the normalized campaigns in ``processed`` (``<c>.nc``, not statistics products)."""
    return sorted(p.name[:-3] for p in Path(processed).glob("*.nc") if not p.name.endswith(STATS_SUFFIX))


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


