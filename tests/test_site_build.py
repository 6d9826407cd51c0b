"""The site build machinery on a tiny project: parameters, navigation, offline pages, errors."""

from __future__ import annotations

import json
import os
import re
import textwrap

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from thruput.site import NotebookError, build
from thruput.site.config import load_config
from thruput.site.execute import execute, inject_parameters
from thruput.site.quarto import staging_config

QUARTO_YML = textwrap.dedent("""\
    project:
      type: website
      output-dir: _site
      render: [notebooks/home.ipynb, notebooks/item.ipynb]
    website:
      title: "Tiny"
      navbar:
        left:
          - {href: notebooks/home.ipynb, text: Home}
          - text: Items
            menu: [{href: notebooks/item.ipynb}]
    thruput:
      pages:
        - {notebook: notebooks/item.ipynb, foreach: campaigns, parameter: name, title: "Item {value} {title}"}
    """)


def _project(tmp_path, item_source="print('item', name)"):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_quarto.yml").write_text(QUARTO_YML)
    home = new_notebook(cells=[
        new_markdown_cell("# Home page"),
        new_code_cell("import altair as alt, pandas as pd\nfrom thruput import charts\n"
                      "charts.enable_offline_renderer()\n"
                      "alt.Chart(pd.DataFrame({'x': [1, 2], 'y': [3, 4]})).mark_line().encode(x='x', y='y')"),
    ])
    item = new_notebook(cells=[new_code_cell("name = 'default'", metadata={"tags": ["parameters"]}),
                               new_code_cell(item_source)])
    for nb in (home, item):
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(home, tmp_path / "notebooks" / "home.ipynb")
    nbformat.write(item, tmp_path / "notebooks" / "item.ipynb")
    return tmp_path


def test_config_expands_parameterized_pages(tmp_path):
    config = load_config(_project(tmp_path), campaigns=["a", "b"], titles={"campaigns": {"a": "Alpha"}})
    assert config.title == "Tiny"
    assert [p.html.as_posix() for p in config.pages] == [
        "notebooks/home.html", "notebooks/item-a.html", "notebooks/item-b.html"]
    assert config.pages[1].parameters == {"name": "a"}
    assert [text for text, _ in config.navbar] == ["Home", "Items"]
    assert [p.title for p in config.navbar[1][1]] == ["Item a Alpha", "Item b b"]


def test_staging_config_for_quarto_lists_executed_pages(tmp_path):
    raw = staging_config(load_config(_project(tmp_path), campaigns=["a"]))
    assert "thruput" not in raw
    assert raw["project"]["render"] == ["notebooks/home.ipynb", "notebooks/item-a.ipynb"]
    assert raw["execute"]["enabled"] is False
    assert raw["website"]["navbar"]["left"][1]["menu"] == [{"href": "notebooks/item-a.ipynb", "text": "Item a a"}]


def test_inject_parameters_goes_after_the_parameters_cell():
    nb = new_notebook(cells=[new_code_cell("x = 1", metadata={"tags": ["parameters"]}), new_code_cell("x")])
    inject_parameters(nb, {"x": "two"})
    assert nb.cells[1].source.endswith("x = 'two'\n")
    assert nb.cells[1].metadata["tags"] == ["injected-parameters"]


def test_a_page_executed_twice_is_the_same_bytes(tmp_path):
    """dvc.lock records each executed page's md5: a fresh clone's ``dvc repro`` must give
    the same one (no cell timings, no random id for the injected cell)."""
    project = _project(tmp_path)
    pages = [tmp_path / f"item-{k}.ipynb" for k in (1, 2)]
    for page in pages:
        execute(project / "notebooks" / "item.ipynb", page, {"name": "a"}, cwd=project)
    assert pages[0].read_bytes() == pages[1].read_bytes()
    # the offline renderer is switched on in the page's kernel only, not in this process
    # (a JupyterLab started from it afterwards would have drawn no chart)
    assert "THRUPUT_SITE_BUILD" not in os.environ
    cells = nbformat.read(pages[0], as_version=4).cells
    assert cells[1].id == "injected-parameters" and cells[2].outputs[0]["text"] == "item a\n"


def test_nbconvert_build_makes_offline_pages(tmp_path):
    project = _project(tmp_path)
    lines = []
    site = build(project, campaigns=["a", "b"], seeds=[], engine="nbconvert", log=lines.append)
    assert len(lines) == 4 and lines[0].startswith("[1/3] notebooks/home.html")
    item = (site / "notebooks" / "item-b.html").read_text()
    assert "item b" in item and "name = " not in item      # parameters applied, code hidden
    home = (site / "notebooks" / "home.html").read_text()
    assert 'src="../vega/vega-bundle.js"' in home and "vegaEmbed(" in home
    assert '<a class="brand" href="../index.html">Tiny</a>' in home
    assert (site / "vega" / "vega-bundle.js").stat().st_size > 100_000
    for page in site.rglob("*.html"):
        external = re.findall(r'(?:src|href)="(https?:)?//', page.read_text())
        assert not external, f"{page} references outside the site"
    assert (site / "index.html").read_text().count("notebooks/home.html") == 2


def test_build_prints_one_line_per_page_and_no_kernel_chatter(tmp_path, capfd):
    site = build(_project(tmp_path), campaigns=["a"], seeds=[], engine="nbconvert")
    out, err = capfd.readouterr()
    assert [re.sub(r"\(\d+\.\d s\)", "(t)", line) for line in out.splitlines()] == [
        "[1/2] notebooks/home.html: executed notebooks/home.ipynb (t)",
        "[2/2] notebooks/item-a.html: executed notebooks/item.ipynb {'name': 'a'} (t)",
        f"rendered 2 pages with nbconvert into {site}"]
    assert "IPKernelApp" not in err


def test_failing_cell_is_named(tmp_path):
    project = _project(tmp_path, item_source="raise ValueError('boom')")
    with pytest.raises(NotebookError) as failed:
        build(project, campaigns=["a"], seeds=[], engine="nbconvert", log=lambda s: None)
    # the number of the cell in the notebook as saved (the injected parameters not counted)
    assert str(failed.value) == (f"{project / 'notebooks' / 'item.ipynb'} (name='a'): "
                                 "cell 2 (raise ValueError('boom')): ValueError: boom")


#: A stand-in for the `quarto` executable (there is no Quarto here): it records how it was
#: called and what the staging project held, and writes one HTML page per listed notebook
#: into the staging project's _site, as `quarto render` does. It checks thruput's wiring of
#: the Quarto layer, not Quarto itself.
STAND_IN_QUARTO = '''#!{python}
import json, os, sys
from pathlib import Path
import nbformat, yaml
log = Path(os.environ["STAND_IN_QUARTO_LOG"])
if os.environ.get("STAND_IN_QUARTO_FAIL"):
    sys.exit(3)
project = Path(sys.argv[2])
config = yaml.safe_load((project / "_quarto.yml").read_text())
executed = {{}}
for entry in config["project"]["render"]:
    nb = nbformat.read(project / entry, as_version=4)
    executed[entry] = sum(len(c.get("outputs", [])) for c in nb.cells if c.cell_type == "code")
    page = project / "_site" / Path(entry).with_suffix(".html")
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("<html>stand-in quarto page of " + entry + "</html>")
log.write_text(json.dumps({{"argv": sys.argv[1:], "config": config, "executed": executed,
                            "bundle": (project / "vega" / "vega-bundle.js").is_file()}}))
'''


@pytest.fixture
def stand_in_quarto(tmp_path, monkeypatch):
    """A fake `quarto` first on PATH; returns the path of the JSON log it writes."""
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "quarto"
    script.write_text(STAND_IN_QUARTO.format(python=sys.executable))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    log = tmp_path / "quarto-call.json"
    monkeypatch.setenv("STAND_IN_QUARTO_LOG", str(log))
    return log


def test_quarto_build_renders_the_executed_staging_project(tmp_path, stand_in_quarto):
    (tmp_path / "project").mkdir()
    project = _project(tmp_path / "project")
    lines = []
    site = build(project, campaigns=["a"], seeds=[], engine="auto", log=lines.append)
    call = json.loads(stand_in_quarto.read_text())
    staging = project / "build" / "site"
    assert call["argv"] == ["render", str(staging), "--no-execute"]
    assert call["config"]["project"]["render"] == ["notebooks/home.ipynb", "notebooks/item-a.ipynb"]
    assert call["config"]["execute"]["enabled"] is False
    assert call["executed"] == {"notebooks/home.ipynb": 1, "notebooks/item-a.ipynb": 1}
    assert call["bundle"] is True
    assert lines[-1] == f"rendered 2 pages with Quarto into {site}"
    assert (site / "notebooks" / "item-a.html").read_text() == \
        "<html>stand-in quarto page of notebooks/item-a.ipynb</html>"
    assert (site / "index.html").read_text().count("notebooks/home.html") == 2
    assert (site / "data" / "datapackage.json").is_file()


def test_quarto_failure_is_an_error_not_a_traceback(tmp_path, stand_in_quarto, monkeypatch, capsys):
    from thruput.cli import main

    (tmp_path / "project").mkdir()
    project = _project(tmp_path / "project")
    monkeypatch.setenv("STAND_IN_QUARTO_FAIL", "1")
    assert main(["site", "build", "--root", str(project), "--processed", "data/processed",
                 "--published", "none", "--campaign", "a", "--engine", "quarto"]) == 1
    staging = project / "build" / "site"
    assert capsys.readouterr().err.endswith(
        f"thruput: `quarto render {staging} --no-execute` failed with exit status 3\n")


def test_quarto_engine_without_quarto_fails_before_executing(tmp_path, monkeypatch):
    from thruput.site.quarto import QuartoError

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    lines = []
    with pytest.raises(QuartoError, match="quarto is not on PATH"):
        build(_project(tmp_path), campaigns=["a"], seeds=[], engine="quarto", log=lines.append)
    assert lines == []


def test_an_output_folder_holding_the_project_is_refused(tmp_path, capsys):
    from thruput.cli import main

    project = _project(tmp_path)
    for out in (project, project.parent):
        assert main(["site", "build", "--root", str(project), "--out", str(out),
                     "--published", "none"]) == 1
        assert capsys.readouterr().err == (f"thruput: {out}: the output folder holds the project "
                                           f"{project}; give the site a folder of its own (e.g. _site)\n")
    assert (project / "_quarto.yml").is_file() and (project / "notebooks" / "home.ipynb").is_file()


def test_pages_executed_one_by_one_are_assembled_without_executing(tmp_path, capsys):
    """What the page-...@ stages and the site stage of dvc.yaml do."""
    from thruput.cli import main

    project = _project(tmp_path)
    assert main(["site", "page", "notebooks/item.ipynb", "build/pages/notebooks/item-a.ipynb",
                 "-p", "name=a", "--root", str(project)]) == 0
    assert capsys.readouterr().out == "build/pages/notebooks/item-a.ipynb: executed notebooks/item.ipynb {'name': 'a'}\n"
    (project / "params.yaml").write_text("campaigns: [a]\nstudies: []\ncomparisons: {}\n")
    assert main(["site", "build", "--root", str(project), "--params", str(project / "params.yaml"),
                 "--pages", "build/pages", "--engine", "nbconvert"]) == 1
    assert "no executed notebook for notebooks/home.ipynb" in capsys.readouterr().err
    assert main(["site", "page", "notebooks/home.ipynb", "build/pages/notebooks/home.ipynb",
                 "--root", str(project)]) == 0
    lines = []
    site = build(project, campaigns=["a"], seeds=[], engine="nbconvert", log=lines.append,
                 pages="build/pages")
    assert lines == [f"rendered 2 pages with nbconvert into {site}"]        # nothing executed
    assert "item a" in (site / "notebooks" / "item-a.html").read_text()


def test_page_parameters_are_name_value(tmp_path, capsys):
    from thruput.cli import main

    assert main(["site", "page", "notebooks/item.ipynb", "out.ipynb", "-p", "name", "--root", str(tmp_path)]) == 2
    assert "--parameter 'name': expected NAME=VALUE" in capsys.readouterr().err
