"""Campaigns: a directory of raw logs plus its description, as one labelled Dataset.

The bottom layer of campaign code: :mod:`thruput.record`, :mod:`thruput.monitor` and
:mod:`thruput.design` build on it and it imports none of them (docs/design.md, "Layers").

``layout``
    File names, manifest columns, run ids, paths kept inside the campaign folder, shared
    with :mod:`thruput.record`.
``metadata``
    ``campaign.yaml``: read with its lines, checked against its JSON Schema.
``outcome``
    The outcomes of a run in ``runs.csv`` (``ok``, ``timeout``...) and the tools' messages
    mapped to them, shared by :mod:`thruput.record` and :mod:`thruput.monitor`.
``design``
    A campaign's factors and levels, every kind's (:func:`~thruput.campaign.design.design_of`).
``dataset``
    Reading the on-disk layout (``runs.csv``, the raw files) and :func:`open_campaign`.
``kinds``
    The monitor and design kinds' own open and check, named as ``"module:function"``.
``store``
    Every Zarr, netCDF and product file (a monitor campaign's store is written by
    :mod:`thruput.monitor.normalize`).
``check``
    ``thruput campaign check``: every problem of a campaign directory, each naming a file.
``importer``
    ``thruput campaign new`` and ``thruput campaign import`` of a sweep.
"""

from .dataset import *  # noqa: F401,F403
from .dataset import KINDS, __all__  # noqa: F401
