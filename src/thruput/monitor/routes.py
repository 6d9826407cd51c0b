"""The routes of a monitor campaign: traced paths kept beside its tests.

A real pile holds traceroute (mtr, scamper) outputs beside its test logs; the monitor
importer keeps them under ``ancillary/`` and lists each in campaign.yaml ``ancillary``
with the path it was traced on (``path_name``) and its time. :func:`read_routes` reads
them back as one hop sequence per route (:func:`thruput.stats.hop_sequence`), ready for
:func:`thruput.stats.route_changes`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from ..campaign.layout import escapes
from ..campaign.metadata import load_metadata
from ..errors import ThruputError
from ..reader import read
from ..stats.routes import hop_sequence

__all__ = ["read_routes"]


def read_routes(directory) -> xr.DataArray:
    """The routes of monitor campaign ``directory``, in time order.

    Returns
    -------
    xarray.DataArray
        Dim ``route``: each route's hops joined by spaces (``*`` where no hop answered),
        coordinates ``time`` (datetime64, UTC), ``path`` and ``source`` (the file).
        Routes without a path or a time are left out (a route says nothing of when or
        where without them).

    Raises
    ------
    ThruputError
        For a listed route file that is missing, outside the campaign, or no route.
    """
    directory = Path(directory)
    meta = load_metadata(directory)
    rows = []
    for entry in meta.get("ancillary") or []:
        if not entry.get("path_name") or not entry.get("time") or not entry["what"].startswith("route"):
            continue
        if (problem := escapes(directory, entry["path"])) is not None:
            raise ThruputError(f"{directory}: ancillary {problem}")
        ds = read(directory / entry["path"])
        if ds.attrs["kind"] != "route":
            raise ThruputError(f"{directory / entry['path']}: listed as a route, but read as {ds.attrs['kind']}")
        when = pd.Timestamp(entry["time"]).tz_convert(None).to_datetime64()
        rows.append((when, entry["path_name"], entry["path"], " ".join(hop_sequence(ds["hop_address"]))))
    rows.sort()
    cols = list(zip(*rows)) if rows else [[], [], [], []]
    return xr.DataArray(np.array(cols[3], dtype=object), dims="route", name="hop_sequence",
                        coords={"time": ("route", np.array(cols[0], dtype="datetime64[ns]")),
                                "path": ("route", np.array(cols[1], dtype=object)),
                                "source": ("route", np.array(cols[2], dtype=object))},
                        attrs={"units": "1", "long_name": "hops of the route, space separated"})
