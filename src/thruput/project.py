"""Where the thruput project is: found from any working directory inside it.

A project is the directory holding ``dvc.yaml`` (the pipeline), with ``data/raw/<campaign>/``,
``data/processed/`` and ``data/published/`` below it. Notebooks run with their own folder
as the working directory (JupyterLab starts kernels in ``notebooks/``), so every default
path of the library is taken relative to the project root found here, not to the working
directory.
"""

from __future__ import annotations

from pathlib import Path

from .errors import ThruputError

__all__ = ["find_root", "project_path", "ProjectNotFoundError", "MARKER", "RAW", "PROCESSED", "PUBLISHED"]

#: The file that marks a project's root directory.
MARKER = "dvc.yaml"
#: Folders of a project, relative to its root.
RAW = "data/raw"
PROCESSED = "data/processed"
PUBLISHED = "data/published"


class ProjectNotFoundError(ThruputError):
    """No directory from the starting point up to the file-system root holds ``dvc.yaml``."""


def find_root(start=None):
    """The nearest directory at or above ``start`` (default: the working directory) that
    holds ``dvc.yaml``.

    Raises
    ------
    ProjectNotFoundError
        Naming the directory searched from and what was looked for.
    """
    here = Path(start if start is not None else Path.cwd()).resolve()
    for directory in (here, *here.parents):
        if (directory / MARKER).is_file():
            return directory
    raise ProjectNotFoundError(
        f"no thruput project found: looked for {MARKER} in {here} and every folder above it; "
        "run from inside a project (a clone of the thruput repository or a folder made like "
        "it), or pass explicit paths")


def project_path(relative, start=None):
    """``relative`` (e.g. ``"data/processed"``) under the project root found from ``start``.

    An absolute path, or a relative one that exists from the working directory, is
    returned unchanged, so explicit paths always win.
    """
    path = Path(relative)
    if path.is_absolute() or path.exists():
        return path
    return find_root(start) / path
