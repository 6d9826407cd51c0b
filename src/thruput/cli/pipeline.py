"""``thruput pipeline``: the steps ``dvc.yaml`` runs, every path an argument.

``normalize DIR OUT.nc|OUT.zarr [--workers N | --scheduler ADDRESS]``
    Check a campaign directory (as ``thruput campaign check``) and, only if it has no
    errors, write :func:`thruput.open_campaign` of it as netCDF. A monitor campaign goes
    to a Zarr store (``OUT.zarr``, chunked along ``run``) which later calls bring up to
    date by appending only the runs.csv rows it does not hold yet (see
    :mod:`thruput.campaign.store`); its files are read on a dask cluster with
    ``--workers``/``--scheduler`` (:mod:`thruput.parallel`).
``stats IN.nc OUT.json --params params.yaml``
    The statistics of one normalized campaign, with the parameters of the ``stats``
    section of ``params.yaml``, as JSON (see :func:`campaign_statistics`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

import numpy as np
import yaml

from ..errors import ThruputError

#: Engine of the netCDF files the pipeline writes: netCDF-C writes no timestamps, so the
#: same campaign gives the same bytes (DVC compares outputs by hash).
NETCDF_ENGINE = "netcdf4"
#: Defaults of the ``stats`` section of params.yaml.
STATS_DEFAULTS = {"percentiles": [10, 25, 75, 90], "plateau_tolerance": 0.1, "confidence": 0.95,
                  "bootstrap": 1000, "seed": 0, "best_cells": 5, "udp_loss_threshold": 0.0}


def add_parser(sub):
    p = sub.add_parser("pipeline", help="the steps dvc.yaml runs (normalize, stats)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = p.add_subparsers(dest="verb", metavar="STEP", required=True)
    norm = verbs.add_parser("normalize", help="campaign directory -> one netCDF file or Zarr store",
                            description=NORMALIZE_HELP)
    norm.add_argument("campaign", metavar="DIR")
    norm.add_argument("out", metavar="OUT", help="OUT.nc, or OUT.zarr (monitor campaigns: always)")
    where = norm.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N",
                       help="read the raw files on a local dask cluster of N worker processes "
                            "(monitor campaigns; default: in this process)")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="read them on a running dask cluster, e.g. tcp://10.0.0.1:8786 "
                            "(docs/scale.md: SLURM, Kubernetes)")
    norm.add_argument("--no-verify", dest="verify", action="store_false",
                      help="on append, do not hash again the raw files already stored")
    norm.set_defaults(func=run_normalize)
    st = verbs.add_parser("stats", help="normalized campaign -> statistics as JSON")
    st.add_argument("input", metavar="IN.nc")
    st.add_argument("out", metavar="OUT.json")
    st.add_argument("--params", default="params.yaml", metavar="params.yaml",
                    help="parameters file; its `stats` section is used (default: %(default)s)")
    st.set_defaults(func=run_stats)


NORMALIZE_HELP = """\
Write a campaign directory as a normalized campaign. Sweeps: check it (as `thruput
campaign check`), then write OUT.nc (or OUT.zarr). Monitor campaigns: OUT must be a .zarr
store; a new one gets every runs.csv row, an existing one only the rows it does not hold
yet (appended; a stored row or file that changed is an error)."""


def run_normalize(args):
    from ..campaign import load_metadata, open_campaign
    from ..campaign.check import check_campaign

    try:
        kind = load_metadata(args.campaign)["kind"]
    except ThruputError as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    if kind == "monitor":
        return _normalize_monitor(args)

    problems = check_campaign(args.campaign)
    errors = [p for p in problems if p.severity == "error"]
    for p in problems:
        print(p, file=sys.stderr)
    if errors:
        print(f"thruput: {args.campaign}: {len(errors)} errors; nothing written to {args.out}",
              file=sys.stderr)
        return 1
    try:
        ds = open_campaign(args.campaign)
    except ThruputError as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    if Path(args.out).suffix == ".zarr":
        from ..campaign.store import write_store

        write_store(ds, args.out)
    else:
        write_netcdf(ds, args.out)
    print(f"{args.out}: {ds.attrs['campaign']} ({ds.attrs['campaign_kind']}), "
          f"{ds.attrs['files_read']} files, {ds.attrs['lines_parsed']}/{ds.attrs['lines_total']} lines parsed")
    return 0


def _normalize_monitor(args):
    from ..campaign.store import normalize_monitor

    if Path(args.out).suffix != ".zarr":
        print(f"thruput: {args.out}: a monitor campaign is stored as Zarr (OUT.zarr), "
              "so that new runs can be appended", file=sys.stderr)
        return 2
    try:
        done = normalize_monitor(args.campaign, args.out, workers=args.workers,
                                 scheduler=args.scheduler, verify=args.verify)
    except ThruputError as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    verb = "appended" if done["appended"] else "wrote"
    print(f"{args.out}: {verb} {done['runs_added']} runs; {done['runs']} runs, "
          f"{done['files_read']} files in the store")
    return 0


def write_netcdf(ds, out):
    """Write ``ds`` to ``out`` atomically (a temporary file renamed), reproducibly."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    ds.to_netcdf(tmp, engine=NETCDF_ENGINE)
    os.replace(tmp, out)


def load_stats_params(path):
    """The ``stats`` section of the parameters file over :data:`STATS_DEFAULTS`."""
    params = yaml.safe_load(Path(path).read_text()) or {}
    return {**STATS_DEFAULTS, **(params.get("stats") or {})}


def run_stats(args):
    import xarray as xr

    params = load_stats_params(args.params)
    with xr.open_dataset(args.input, engine=NETCDF_ENGINE) as ds:
        ds = ds.load()
    result = campaign_statistics(ds, params)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    tmp.write_text(json.dumps(result, indent=1, sort_keys=True, allow_nan=False) + "\n")
    os.replace(tmp, out)
    print(f"{args.out}: statistics of {ds.attrs['campaign']} ({', '.join(k for k in result if k not in ('campaign', 'kind', 'params'))})")
    return 0


def campaign_statistics(ds, params):
    """The statistics of one normalized campaign as a JSON-ready dict.

    Every number comes from :mod:`thruput.stats`; this only chooses the calls and turns
    the Datasets they return into lists of records (NaN -> null; units in ``units``).

    For a TCP sweep: ``cells`` (:func:`~thruput.stats.describe` of throughput over repeats
    per window x streams), ``plateau`` (per streams count), ``best_cells``,
    ``smallest_product`` and ``rtt`` (:func:`~thruput.stats.rtt_load`, loaded vs unloaded
    per cell; absent when the campaign has no ping logs). For a UDPmon campaign:
    ``udp_grid``, ``udp_onset`` and ``latency_fit``.
    """
    from .. import stats

    out = {"campaign": ds.attrs["campaign"], "kind": ds.attrs["campaign_kind"], "params": params}
    boot = {"n_boot": int(params["bootstrap"]), "seed": int(params["seed"])}
    if ds.attrs["campaign_kind"] == "tcp_sweep":
        tput = ds["throughput"]
        out["cells"] = records(stats.describe(tput, "repeat", percentiles=params["percentiles"]))
        out["plateau"] = records(stats.plateau(tput, dim="window", tolerance=params["plateau_tolerance"],
                                               confidence=params["confidence"], **boot))
        out["best_cells"] = records(stats.best_cells(tput, n=int(params["best_cells"])))
        out["smallest_product"] = records(stats.smallest_product(tput, tolerance=params["plateau_tolerance"]))
        if ds.sizes.get("probe", 0):        # a sweep without ping logs has no probes
            out["rtt"] = records(stats.rtt_load(ds["rtt"], ds["rtt_status"], confidence=params["confidence"], **boot))
    else:
        if "row" in ds.dims:
            grid = stats.udp_grid(ds)
            out["udp_grid"] = records(grid)
            out["udp_onset"] = records(stats.udp_onset(grid, threshold=params["udp_loss_threshold"]))
        if "point" in ds.dims:
            scan = ds[["scan_size", "scan_latency_avg"]].where(ds["scan_file"] == _main_scan(ds), drop=True)
            out["latency_fit"] = records(stats.latency_fit(scan, size="scan_size", latency="scan_latency_avg"))
    return out


def _main_scan(ds):
    """The latency scan with the most points (histogram runs add single points)."""
    files, counts = np.unique(ds["scan_file"].values, return_counts=True)
    return files[np.argmax(counts)]


def records(result):
    """A stats Dataset as ``{"units": {...}, "scalars": {...}, "records": [...]}``.

    Variables without dimensions go to ``scalars``; the others are flattened to one
    record per combination of their dimensions (coordinates included).
    """
    scalars = {k: _json(v.values) for k, v in result.data_vars.items() if v.ndim == 0}
    units = {k: v.attrs.get("units", "") for k, v in result.variables.items()}
    table = result[[k for k, v in result.data_vars.items() if v.ndim > 0]]
    rows = []
    if table.data_vars:
        frame = table.to_dataframe().reset_index()
        rows = [{k: _json(v) for k, v in row.items()} for row in frame.to_dict("records")]
    return {"units": units, "scalars": scalars, "records": rows}


def _json(value):
    value = np.asarray(value).item() if np.ndim(value) == 0 else value
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, (bytes,)):
        return value.decode()
    if isinstance(value, (np.ndarray, list)):
        return [_json(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value
