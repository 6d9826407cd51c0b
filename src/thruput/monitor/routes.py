"""The routes of a monitor campaign: traced paths kept beside its tests.

Two sources: a schedule's ``traceroute`` test, run by ``thruput monitor`` once a slot,
whose outputs go to ``routes/<YYYY-MM-DD>/<run>.txt``, each listed in ``routes.csv``
(:data:`ROUTE_COLUMNS`: like runs.csv, without the columns of a measurement); and a real
pile's traceroute (mtr, scamper) outputs, which the monitor importer keeps under
``ancillary/`` and lists in campaign.yaml ``ancillary`` with the path they were traced on
(``path_name``) and their time. Routes are not runs: the monitor Dataset, its statistics
and pages see none of them. :func:`read_routes` reads both back as one hop sequence per
route (:func:`thruput.stats.hop_sequence`), ready for :func:`thruput.stats.route_changes`.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import xarray as xr

from ..campaign.layout import escapes
from ..campaign.metadata import load_metadata
from ..errors import ThruputError
from ..reader import read

__all__ = ["read_routes", "route_changes_table", "read_route_rows", "append_route_row", "ROUTES_MANIFEST", "ROUTES_DIR",
           "ROUTE_COLUMNS"]

#: The manifest of the routes a monitor traced, and their folder.
ROUTES_MANIFEST = "routes.csv"
ROUTES_DIR = "routes"
ROUTE_COLUMNS = ("run", "path", "sha256", "slot", "started", "path_name", "tool", "outcome", "reason")


def append_route_row(campaign_dir, **values):
    """Append one row to routes.csv (header first if the file is new), synced to disk;
    returns it (attributes named by :data:`ROUTE_COLUMNS`)."""
    path = os.path.join(campaign_dir, ROUTES_MANIFEST)
    new = not os.path.exists(path)
    row = {c: "" if values.get(c) is None else str(values[c]) for c in ROUTE_COLUMNS}
    with open(path, "a", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        if new:
            writer.writerow(ROUTE_COLUMNS)
        writer.writerow([row[c] for c in ROUTE_COLUMNS])
        f.flush()
        os.fsync(f.fileno())
    return SimpleNamespace(**row)


def read_route_rows(directory):
    """``[(line, row dict)]`` of routes.csv (empty if there is none).

    Raises
    ------
    ThruputError
        For a header that is not :data:`ROUTE_COLUMNS`.
    """
    path = Path(directory) / ROUTES_MANIFEST
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = tuple(next(reader, ()))
        if header != ROUTE_COLUMNS:
            raise ThruputError(f"{path}:1: header {','.join(header)!r} is not {','.join(ROUTE_COLUMNS)!r}")
        return [(n, dict(zip(ROUTE_COLUMNS, cells))) for n, cells in enumerate(reader, 2)]


def read_routes(directory) -> xr.DataArray:
    """The routes of monitor campaign ``directory``, in time order.

    Reads the routes routes.csv lists (traced by the monitor, ``outcome`` ok) and the
    ancillary routes of campaign.yaml.

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
    from ..stats.routes import hop_sequence   # (the statistics load only where used: the CLI's parser

    directory = Path(directory)              # imports this module)
    meta = load_metadata(directory)
    rows = []
    entries = [{"path": r["path"], "path_name": r["path_name"], "time": r["started"], "what": "route"}
               for _, r in read_route_rows(directory) if r["path"] and r["outcome"] == "ok"]
    for entry in entries + list(meta.get("ancillary") or []):
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


def route_changes_table(directory) -> xr.Dataset:
    """The ``route_changes`` table of a monitor campaign's statistics product:
    :func:`thruput.stats.route_changes` of :func:`read_routes`, strings as fixed text (for
    netCDF), how many routes were traced in ``attrs["routes_traced"]``."""
    from ..stats.routes import route_changes

    routes = read_routes(directory)
    table = route_changes(routes)
    for name in ("path", "before", "after"):
        table[name] = table[name].astype(str)
    table.attrs["routes_traced"] = int(routes.sizes["route"])
    return table
