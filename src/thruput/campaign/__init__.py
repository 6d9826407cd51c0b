"""Campaigns: a directory of raw logs plus its description, as one labelled Dataset.

``layout``
    File names, manifest columns, run ids and sizes, shared with :mod:`thruput.record`.
``dataset``
    Reading the on-disk layout (``campaign.yaml``, ``runs.csv``) and :func:`open_campaign`.
``check``
    ``thruput campaign check``: every problem of a campaign directory, each naming a file.
``importer``
    ``thruput campaign new`` and ``thruput campaign import``.
"""

from .dataset import *  # noqa: F401,F403
from .dataset import KINDS, __all__  # noqa: F401
