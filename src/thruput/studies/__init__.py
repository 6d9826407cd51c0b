"""The five source studies as data: one folder per study, its checks beside its page.

``src/thruput/studies/seed_<nnn>/`` holds

``claims.yaml``
    how each published figure of the study (``data/published/seed_<nnn>.csv``) is
    checked: a formula and the published inputs it uses, a bound, an equality, or a
    person's judgement with its reasoning (schema in ``studies/README.md``);
    :func:`thruput.reproduce.build_ledger` interprets them.
``page.yaml`` (optional)
    what the study's page shows: title, source, summary, the sections of its published
    tables and of its theory (chart kinds with the claims they draw), the theory curves and
    which effects a bundled campaign is shown beside. Without it the page has a default
    title (``title`` of ``claims.yaml`` if it has one) and generic charts drawn from the claims.

Study folders outside the package are found through the ``THRUPUT_STUDIES`` environment
variable (folders holding ``seed_<nnn>/``, separated by ``os.pathsep``): a new study is a
``claims.yaml`` (and a ``page.yaml``) beside its ``seed_<nnn>.csv``, with no code.

:func:`page_link` gives other pages a stable title and relative link for a study.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from .. import guard
from ..errors import FileRefused, ParseError, ThruputError
from .formulas import CONSTANTS, FormulaError, names

__all__ = ["SEEDS", "STUDY_DIR", "STUDIES_ENV", "StudyError", "checks", "claims_path", "kind", "parse_input",
           "page", "page_link", "study_dirs", "title"]

#: folder of the study folders (inside the package, so it ships with it)
STUDY_DIR = Path(__file__).resolve().parent
#: environment variable naming more folders of study folders (``os.pathsep``-separated)
STUDIES_ENV = "THRUPUT_STUDIES"


def study_dirs():
    """The folders searched for ``seed_<nnn>/``: the package's, then those of ``THRUPUT_STUDIES``."""
    extra = [Path(p) for p in os.environ.get(STUDIES_ENV, "").split(os.pathsep) if p.strip()]
    return [STUDY_DIR] + extra


def _scan():
    return tuple(sorted({p.name.split("_", 1)[1] for d in study_dirs() for p in d.glob("seed_*")
                         if p.is_dir() and (p / "claims.yaml").is_file()}))


#: the studies, by seed
SEEDS = _scan()
#: the kind of a check is named by the one of these keys it has
KINDS = ("derive", "at_most", "at_least", "same_as", "after", "weekday", "model", "input", "judgement")
#: statuses a ``judgement`` may set: ``reproduced`` must be computed
JUDGEMENTS = ("erratum", "differs", "consistent", "not-reproducible")
#: check keys besides the kind
_KEYS = {"claim", "inputs", "unit", "tolerance", "what", "note", "check", "fails", "derived", "restates"}
_INPUT = re.compile(r"^\s*(?P<claim>\d{3}-\S+?)\s*(?:\[(?P<unit>[^\]]+)\])?\s*$")


class StudyError(ThruputError):
    """A study file breaks its schema; the message names the file and the check."""


def _seed(seed):
    return f"{int(seed):03d}"


def _folder(seed):
    dirs = [STUDY_DIR] + study_dirs()[1:]
    for d in dirs:
        folder = d / f"seed_{_seed(seed)}"
        if folder.is_dir():
            return folder
    raise StudyError(f"no study {_seed(seed)!r} in {', '.join(map(str, dirs))} (known: {', '.join(SEEDS)})")


def claims_path(seed):
    """The ``claims.yaml`` of one study (for messages)."""
    return _folder(seed) / "claims.yaml"


def parse_input(spec):
    """``"000-dm8-rtt-min"`` -> (claim, None): the value in SI; ``"001-x [MHz]"`` -> (claim, "MHz")."""
    m = _INPUT.match(str(spec))
    if not m:
        raise StudyError(f"input {spec!r} is not '<claim id>' or '<claim id> [unit]'")
    return m["claim"], m["unit"]


def kind(check):
    """The kind of a check (the one key of :data:`KINDS` it has)."""
    found = [k for k in KINDS if k in check]
    if len(found) != 1:
        raise StudyError(f"check of {check.get('claim')!r} has kinds {found}, needs exactly one of {KINDS}")
    return found[0]


def _validate(check, where):
    def fail(msg):
        raise StudyError(f"{where}: {check.get('claim')!r}: {msg}")

    if not isinstance(check, dict) or "claim" not in check:
        raise StudyError(f"{where}: a check is a mapping with a 'claim'")
    if "restates" in check and not (isinstance(check["restates"], str) and check["restates"].strip()):
        fail("'restates' says where the inputs are printed in the figure's own sentence (text)")
    try:
        k = kind(check)
    except StudyError as exc:
        fail(str(exc))
    extra = set(check) - _KEYS - {k}
    if extra:
        fail(f"unknown keys {sorted(extra)}")
    if k == "judgement":
        if check["judgement"] not in JUDGEMENTS:
            fail(f"a judgement may set {JUDGEMENTS}, not {check['judgement']!r} (reproduced must be computed)")
        if not check.get("note"):
            fail("a judgement needs its reasoning in 'note'")
    inputs = check.get("inputs") or {}
    if not isinstance(inputs, dict):
        fail(f"'inputs' is a mapping of name: claim, not {inputs!r}"[:200])
    for spec in inputs.values():
        try:
            parse_input(spec)
        except StudyError as exc:
            fail(str(exc))
    formula = check.get(k) if k in ("derive", "at_most", "at_least", "model") else check.get("derived")
    if formula is not None:
        try:
            unknown = [n for n in names(formula) if n not in inputs and n not in CONSTANTS]
        except FormulaError as exc:
            fail(str(exc))
        if unknown:
            fail(f"formula {formula!r} uses undeclared inputs {unknown}")


@functools.lru_cache(maxsize=None)
def _load(seed, what):
    path = _folder(seed) / f"{what}.yaml"
    if what == "page" and not path.exists():
        return {}
    try:            # inside the studies' folder, bounded (thruput.guard): an alias bomb is refused
        data = guard.load_yaml(guard.read_text(path, f"{what}.yaml", root=_folder(seed).parent), str(path))[0] or {}
    except FileRefused:
        raise
    except ParseError as exc:   # a !!python/object tag, a tab, an unclosed quote: never a raw error
        raise StudyError(f"{path}: not plain YAML: {' '.join(exc.message.removeprefix('not valid YAML: ').split())}") from None
    if not isinstance(data, dict):
        raise StudyError(f"{path}: a mapping of keys is expected, not a {type(data).__name__}")
    if what == "claims" and not isinstance(data.get("checks", []), list):
        raise StudyError(f"{path}: 'checks' is a list of checks")
    if what == "claims":
        for i, check in enumerate(data.get("checks", [])):
            _validate(check, f"{path}: check {i + 1}")
    return data


def checks(seed):
    """The declared checks of one study, in file order (a list of mappings; see README)."""
    return _load(_seed(seed), "claims").get("checks", [])


def page(seed):
    """What one study's page shows: its ``page.yaml`` over the defaults of a study without one.

    The defaults: ``title`` and ``source`` and ``summary`` from ``claims.yaml`` (or
    ``"Study <nnn>"`` and empty), no tables, curves, published or theory sections, or
    side-by-side effects.
    """
    seed = _seed(seed)
    claims = _load(seed, "claims")
    info = {"title": claims.get("title") or f"Study {seed}", "source": claims.get("source", ""),
            "summary": claims.get("summary", ""), "side_by_side": [], "curves": [], "tables": {}, "published": [], "theory": [],
            "text": {}}
    info.update(_load(seed, "page"))
    return info


def title(seed):
    """The study's title (``page.yaml``)."""
    return page(seed)["title"]


def page_link(seed, prefix=""):
    """A stable title and relative link to the study's page, for other pages to cite it.

    Parameters
    ----------
    seed : str or int
    prefix : str
        Path from the citing page to the site root ("" when both are at the root).

    Returns
    -------
    tuple of (str, str)
        ``("Study 000: Throughput between Tersk03 and Kangadata02 (SLAC, 2001)",
        "study-000.html")``.
    """
    seed = _seed(seed)
    info = page(seed)
    return f"Study {seed}: {info['title']}", f"{prefix}{info.get('page', f'study-{seed}')}.html"
