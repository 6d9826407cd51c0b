"""Run the site's notebooks with real Jupyter kernels (nbclient), papermill-style parameters."""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from ..errors import ThruputError

__all__ = ["NotebookError", "execute", "inject_parameters"]

#: The cell tag Quarto and papermill both use for a notebook's default parameters.
PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"
#: Terminal colour codes in tracebacks.
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Arguments of every kernel: ipykernel warns on its stderr, once per kernel, that it talks
#: to nbclient over unencrypted TCP (on localhost); that line buried the build's one progress
#: line per page. Errors still show; what the notebook's code warns goes to its outputs.
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR"]


class NotebookError(ThruputError):
    """A notebook cell failed while the site was built; names the notebook and the cell."""


def inject_parameters(nb, parameters):
    """Insert a cell assigning ``parameters`` right after the ``parameters``-tagged cell.

    As papermill does: the injected cell is tagged ``injected-parameters`` and overrides the
    defaults. Raises :class:`NotebookError` when parameters are given but the notebook has no
    ``parameters`` cell.
    """
    if not parameters:
        return nb
    source = "# Injected parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in parameters.items())
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [INJECTED_TAG]})
    cell.id = INJECTED_TAG          # not a random id: an executed page is the same bytes each time
    for i, existing in enumerate(nb.cells):
        if PARAMETERS_TAG in existing.get("metadata", {}).get("tags", []):
            nb.cells.insert(i + 1, cell)
            return nb
    raise NotebookError(f"notebook has no cell tagged {PARAMETERS_TAG!r} for {sorted(parameters)}")


def defined_parameters(nb):
    """Names the ``parameters``-tagged cell of ``nb`` assigns (empty set when it has none)."""
    for cell in nb.cells:
        if PARAMETERS_TAG in cell.get("metadata", {}).get("tags", []):
            return set(re.findall(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=", cell.source, flags=re.M))
    return set()


def execute(source, target, parameters=None, cwd=".", timeout=600, kernel_name="python3",
            defaults=None):
    """Execute notebook ``source`` with ``parameters`` and write it, outputs and all, to ``target``.

    ``defaults`` (e.g. the data folders of this build) are injected too, but only those the
    notebook's ``parameters`` cell defines.

    The page is the same bytes each time its inputs are (so ``dvc repro`` in a fresh clone
    leaves ``dvc.lock`` as it was): no cell timings are recorded, the injected cell's id
    is fixed, every kernel has the same hash seed, and charts keep 12 significant digits
    (:func:`thruput.charts.rendering.canonical_spec`: the last bit of NumPy's ``exp`` or
    ``power`` differs between CPUs). The kernel starts in ``cwd`` (the project root, so notebooks use project-relative paths)
    with ``THRUPUT_SITE_BUILD=1`` set, which switches charts to the offline renderer.

    Raises
    ------
    NotebookError
        Naming the notebook and its parameters, the cell (its 1-based number in the
        notebook on disk, and its first line) and the error.
    """
    nb = nbformat.read(source, as_version=4)
    names = defined_parameters(nb)
    given = {k: v for k, v in (defaults or {}).items() if k in names}
    given.update(parameters or {})
    try:
        inject_parameters(nb, given)
    except NotebookError as exc:
        raise NotebookError(f"{source}: {exc}") from None
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel_name,
                            resources={"metadata": {"path": str(cwd)}},
                            extra_arguments=KERNEL_ARGUMENTS, record_timing=False)
    try:
        # one hash seed for every kernel: no page may depend on the order of a set of strings;
        # the offline renderer switched on in the kernel only (this process's environment is
        # left as it was: a JupyterLab started from it later must draw its charts itself)
        client.execute(env={**os.environ, "THRUPUT_SITE_BUILD": "1", "PYTHONHASHSEED": "0"})
    except CellExecutionError as exc:
        index, first_line = _failing_cell(nb)
        summary = ANSI.sub("", str(exc)).strip().splitlines()
        last = next((line for line in reversed(summary) if line.strip()), "error")
        with_values = f" ({', '.join(f'{k}={v!r}' for k, v in given.items())})" if given else ""
        raise NotebookError(f"{source}{with_values}: cell {index} ({first_line}): {last}") from None
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return nb


def _failing_cell(nb):
    """1-based number of the failing cell as in the notebook on disk (the injected
    parameters cell is not counted) and the first line of its source."""
    cells = [c for c in nb.cells if INJECTED_TAG not in c.get("metadata", {}).get("tags", [])]
    for i, cell in enumerate(cells, start=1):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return i, next((line for line in cell.source.splitlines() if line.strip()), "")
    return "?", ""
