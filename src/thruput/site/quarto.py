"""The Quarto-only layer: render the already-executed notebooks with ``quarto render``.

Thin on purpose: thruput executes the notebooks (nbclient) for both builds; here a staging
copy of the project holds the executed notebooks and a ``_quarto.yml`` with the expanded
page list and navigation, and Quarto turns it into HTML without executing anything.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from ..errors import ThruputError
from .assets import FAVICON, VEGA_BUNDLE

__all__ = ["available", "render", "QuartoError"]


class QuartoError(ThruputError):
    """``quarto render`` could not run or failed (its own messages are on stderr above)."""


def available():
    """True when a ``quarto`` executable is on PATH."""
    return shutil.which("quarto") is not None


def staging_config(config):
    """The ``_quarto.yml`` of the staging project: thruput's section expanded, execution off."""
    raw = {k: v for k, v in config.raw.items() if k != "thruput"}
    project = dict(raw.get("project", {}))
    project["output-dir"] = "_site"
    project["render"] = [p.output.as_posix() for p in config.pages]
    project.setdefault("resources", []).extend([str(Path(VEGA_BUNDLE).parent) + "/**", FAVICON])
    raw["project"] = project
    website = dict(raw.get("website", {}))
    website.setdefault("favicon", FAVICON)
    left = []
    for text, target in config.navbar:
        if isinstance(target, list):
            left.append({"text": text, "menu": [{"href": p.output.as_posix(), "text": p.title} for p in target]})
        else:
            left.append({"href": target.output.as_posix(), "text": text})
    website["navbar"] = {**website.get("navbar", {}), "left": left}
    raw["website"] = website
    raw["execute"] = {**raw.get("execute", {}), "enabled": False}
    fmt = raw.setdefault("format", {}).setdefault("html", {})
    fmt["include-in-header"] = {"text": f'<script src="../{VEGA_BUNDLE}"></script>'}
    return raw


def render(config, staging, site_dir):
    """Render ``staging`` (executed notebooks + assets) with Quarto into ``site_dir``."""
    staging = Path(staging)
    (staging / "_quarto.yml").write_text(yaml.safe_dump(staging_config(config), sort_keys=False))
    argv = ["quarto", "render", str(staging), "--no-execute"]
    if not available():
        raise QuartoError("quarto is not on PATH (install it, or build with --engine nbconvert)")
    done = subprocess.run(argv, check=False)
    if done.returncode != 0:
        raise QuartoError(f"`{' '.join(argv)}` failed with exit status {done.returncode}")
    if not (staging / "_site").is_dir():
        raise QuartoError(f"`{' '.join(argv)}` wrote no {staging / '_site'}")
    shutil.copytree(staging / "_site", site_dir, dirs_exist_ok=True)
