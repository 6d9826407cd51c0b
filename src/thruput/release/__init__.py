"""Publication: a citable, validated release whose every number can be traced and diffed.

:func:`make_release` writes ``release/<name>-<VERSION>/`` (the site, the raw and processed
data, a Data Package v2, an RO-Crate of the pipeline run, CITATION.cff, .zenodo.json,
SHA256SUMS, and CHANGES.md / changes.json: every published number added, removed or
changed since the previous release); :func:`diff_releases` compares any two;
:func:`thruput.release.numbers.headline` gives the headline numbers the pipeline's
``metrics`` stage writes for ``dvc metrics diff``. ``docs/releasing.md`` describes it.
"""

from .build import DEFAULT_NAME, RELEASE_DIR, ReleaseError, diff_releases, make_release, resolve
from .numbers import collect, diff, headline

__all__ = ["make_release", "diff_releases", "resolve", "ReleaseError", "collect", "diff", "headline",
           "RELEASE_DIR", "DEFAULT_NAME"]
