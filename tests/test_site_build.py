"""The site build machinery on a tiny project: parameters, navigation, offline pages, errors."""

from __future__ import annotations

import re
import textwrap

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from thruput.site import NotebookError, build
from thruput.site.config import load_config
from thruput.site.execute import inject_parameters
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


def test_failing_cell_is_named(tmp_path):
    project = _project(tmp_path, item_source="raise ValueError('boom')")
    with pytest.raises(NotebookError) as failed:
        build(project, campaigns=["a"], seeds=[], engine="nbconvert", log=lambda s: None)
    # the number of the cell in the notebook as saved (the injected parameters not counted)
    assert str(failed.value) == (f"{project / 'notebooks' / 'item.ipynb'} (name='a'): "
                                 "cell 2 (raise ValueError('boom')): ValueError: boom")

