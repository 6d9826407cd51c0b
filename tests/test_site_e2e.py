"""The built site, checked as a reader would: every page in headless Chromium, served on
localhost, with no console errors, no request leaving localhost, every chart rendered
(an SVG with marks) and tables holding numbers. Screenshots go to tests/output/screenshots/.

The site is the project's own ``_site/`` as ``make site`` (``dvc repro``) built it; when it
is missing, the test runs ``dvc repro`` first, as a user would.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from .conftest import ROOT

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
NUMBER = re.compile(r"^-?\d[\d,]*(\.\d+)?(e[-+]?\d+)?$")


@pytest.fixture(scope="module")
def site():
    site = ROOT / "_site"
    if not (site / "index.html").exists():
        dvc = Path(sys.executable).with_name("dvc")
        subprocess.run([str(dvc), "repro"], cwd=ROOT, check=True)
    return site


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM,
            headless=True, args=CHROMIUM_ARGS, viewport={"width": 1280, "height": 900})
        yield context
        context.close()


def _pages(site):
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))


def test_site_has_every_kind_of_page(site):
    pages = _pages(site)
    for expected in ("index.html", "notebooks/index.html", "notebooks/reproduction.html",
                     "notebooks/methods.html", "notebooks/data.html"):
        assert expected in pages
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for name in params["comparisons"]:                 # one page per comparison chosen
        assert f"notebooks/compare-{name}.html" in pages
        assert (site / "notebooks" / f"compare-{name}.html").read_text().count('class="thruput-chart"') == 1
    assert sum(p.startswith("notebooks/campaign-") for p in pages) >= 3, pages
    assert sum(p.startswith("notebooks/study-") for p in pages) == 5, pages
    assert (site / "data" / "datapackage.json").exists()


def test_no_page_shows_a_bare_python_value(site):
    """The site hides the code, so a cell whose last line is a call (``'thruput-site'``
    from ``charts.enable_offline_renderer()``, say) shows its value on the page with no
    context: every result on a page is a table, a chart or Markdown."""
    import json

    bare = []
    for page in sorted((ROOT / "build" / "pages" / "notebooks").glob("*.ipynb")):
        for k, cell in enumerate(json.loads(page.read_text())["cells"]):
            for out in cell.get("outputs", []):
                if out.get("output_type") == "execute_result" and list(out.get("data", {})) == ["text/plain"]:
                    bare.append(f"{page.name} cell {k}: {''.join(out['data']['text/plain'])[:60]}")
    assert not bare


def test_every_page_in_a_browser(site, server, browser, output_dir):
    shots = output_dir / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    problems = []
    for rel in _pages(site):
        page = browser.new_page()
        errors, outside = [], []
        page.on("console", lambda msg, errors=errors: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))

        def guard(route, outside=outside):
            host = urlparse(route.request.url).hostname
            if route.request.url.startswith(("data:", "blob:")) or host == "127.0.0.1":
                route.continue_()
            else:
                outside.append(route.request.url)
                route.abort()

        page.route("**/*", guard)
        page.goto(f"{server}/{rel}", wait_until="load")
        if rel == "index.html":  # the site root forwards to the home page
            page.wait_for_url("**/notebooks/index.html")
            page.wait_for_load_state("load")
        charts = page.locator(".thruput-chart")
        n_charts = charts.count()
        if n_charts:
            page.wait_for_function(
                "n => document.querySelectorAll('.thruput-chart svg .role-mark').length >= n",
                arg=n_charts, timeout=20_000)
        for i in range(n_charts):
            marks = charts.nth(i).locator("svg .role-mark > *").count()
            if marks == 0:
                problems.append(f"{rel}: chart {i + 1} has no marks")
        # (a NaN a scale gave, as an opacity: the browser ignores it, so a band meant to
        # be faint was drawn opaque over its median line)
        nan = page.evaluate("""() => [...document.querySelectorAll('.thruput-chart svg *')].flatMap(
            e => [...e.attributes].filter(a => a.value === 'NaN').map(a => e.tagName + ' ' + a.name))""")
        if nan:
            problems.append(f"{rel}: chart attributes that are NaN: {sorted(set(nan))}")
        cells = [t.strip() for t in page.locator("table td").all_inner_texts()]
        if page.locator("table").count() and not any(NUMBER.match(c.replace(" ", "")) for c in cells):
            problems.append(f"{rel}: tables hold no numbers")
        page.screenshot(path=str(shots / (rel.replace("/", "__") + ".png")), full_page=True)
        problems += [f"{rel}: console error: {e}" for e in errors]
        problems += [f"{rel}: request outside localhost: {u}" for u in outside]
        page.close()
    assert not problems, "\n".join(problems)


def test_campaign_pages_have_charts_and_numbers(site):
    for page in site.glob("notebooks/campaign-*.html"):
        text = page.read_text()
        assert text.count('class="thruput-chart"') >= 2, page
        assert "<table" in text, page
