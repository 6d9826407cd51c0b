"""Campaigns: a directory of raw logs plus its description, as one labelled Dataset.

``layout``
    File names, manifest columns, run ids, paths kept inside the campaign folder, shared
    with :mod:`thruput.record`.
``metadata``
    ``campaign.yaml``: read with its lines, checked against its JSON Schema.
``outcome``
    The outcomes of a run in ``runs.csv`` (``ok``, ``timeout``...) and the tools' messages
    mapped to them, shared by :mod:`thruput.record` and :mod:`thruput.monitor`.
``dataset``
    Reading the on-disk layout (``runs.csv``, the raw files) and :func:`open_campaign`.
``store``
    Every Zarr, netCDF and product file: the monitor store, its normalize and appends.
``check``
    ``thruput campaign check``: every problem of a campaign directory, each naming a file.
``importer``
    ``thruput campaign new`` and ``thruput campaign import``.
"""

from .dataset import *  # noqa: F401,F403
from .dataset import KINDS, __all__  # noqa: F401
