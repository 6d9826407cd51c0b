"""The site's configuration, read from the project's ``_quarto.yml``.

Quarto reads ``project`` and ``website``; thruput reads the same file for the navigation
of the nbconvert build, plus its own ``thruput:`` section, which says which notebooks are
*parameterized* (one page per campaign or per study)::

    thruput:
      pages:
        - notebook: notebooks/campaign.ipynb
          foreach: campaigns        # campaigns | seeds | comparisons | monitors
          parameter: campaign       # the name the notebook's `parameters` cell defines
          title: "Campaign: {value}"   # {title}: a longer title, where the build knows one
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

__all__ = ["Page", "SiteConfig", "load_config"]


@dataclass(frozen=True)
class Page:
    """One page of the site: a notebook, optionally run with one parameter."""

    notebook: Path                 # source notebook, relative to the project
    output: Path                   # executed notebook / page stem, relative to the project
    title: str
    parameters: dict = field(default_factory=dict)

    @property
    def html(self):
        """Path of the page in the site, relative to the site root."""
        return self.output.with_suffix(".html")


@dataclass
class SiteConfig:
    root: Path
    title: str
    output_dir: Path
    pages: list
    navbar: list                    # [(text, [Page, ...] or Page)]
    raw: dict


def load_config(root, campaigns=(), seeds=(), titles=None, comparisons=(), monitors=()):
    """Read ``<root>/_quarto.yml`` and expand parameterized pages.

    Parameters
    ----------
    root : path-like
        The project directory.
    campaigns, seeds, comparisons : sequence of str
        Values for ``foreach: campaigns`` / ``seeds`` / ``comparisons`` pages.
    monitors : sequence of str
        Values for ``foreach: monitors`` pages: monitor campaigns.
    titles : dict, optional
        ``{"campaigns": {value: title}, "seeds": {...}}``: what ``{title}`` stands for in a
        page's title template (default: the value itself).
    """
    root = Path(root)
    raw = yaml.safe_load((root / "_quarto.yml").read_text())
    website = raw.get("website", {})
    title = website.get("title", "thruput")
    output_dir = root / raw.get("project", {}).get("output-dir", "_site")
    values = {"campaigns": list(campaigns), "seeds": list(seeds), "comparisons": list(comparisons),
              "monitors": list(monitors)}

    param_specs = {Path(p["notebook"]): p for p in raw.get("thruput", {}).get("pages", [])}
    pages, expanded = [], {}
    for entry in raw.get("project", {}).get("render", []):
        nb = Path(entry)
        spec = param_specs.get(nb)
        if spec is None:
            page = Page(nb, nb, _title_of(root / nb) or nb.stem)
            pages.append(page)
            expanded[nb] = page
            continue
        group = []
        for value in values[spec["foreach"]]:
            out = nb.with_name(f"{nb.stem}-{value}.ipynb")
            long_title = (titles or {}).get(spec["foreach"], {}).get(value, value)
            group.append(Page(nb, out, spec.get("title", "{value}").format(value=value, title=long_title),
                              {spec["parameter"]: value}))
        pages.extend(group)
        expanded[nb] = group

    navbar = []
    for item in website.get("navbar", {}).get("left", []):
        if "menu" in item:
            entries = []
            for sub in item["menu"]:
                target = expanded.get(Path(sub["href"]))
                entries.extend(target if isinstance(target, list) else [target] if target else [])
            navbar.append((item.get("text", ""), entries))
        else:
            target = expanded.get(Path(item["href"]))
            if isinstance(target, list):
                navbar.append((item.get("text", ""), target))
            elif target is not None:
                navbar.append((item.get("text", target.title), target))
    return SiteConfig(root, title, output_dir, pages, navbar, raw)


def _title_of(notebook):
    """The first Markdown heading of a notebook, else None."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return None
