"""The pipeline steps of monitor health (``thruput pipeline rollups`` and ``thruput
pipeline health``): registered by :mod:`thruput.cli.pipeline`.

  thruput pipeline rollups IN.zarr OUT.rollups.nc [--params params.yaml]
  thruput pipeline health IN.zarr OUT.health.nc [--stats IN.stats.nc] [--params params.yaml]
"""

from __future__ import annotations

import sys
from pathlib import Path

#: params.yaml sections of the two steps.
ROLLUPS_SECTION, HEALTH_SECTION = "rollups", "health"


def add_parsers(verbs, params_option):
    ro = verbs.add_parser("rollups", help="monitor campaign -> its 5 min / 1 h / 1 day rollups",
                          description="Per path, direction, test and time bin: count, median, "
                                      "p10/p25/p75/p90, min, max, loss (thruput.stats.rollups).")
    ro.add_argument("input", metavar="IN.zarr", help="a monitor campaign's store (or raw directory)")
    ro.add_argument("out", metavar="OUT.rollups.nc", help="the rollups to write (one netCDF group per resolution and series)")
    params_option(ro, "its `rollups` section is used")
    ro.set_defaults(func=run_rollups)
    he = verbs.add_parser("health", help="monitor campaign -> alert state of every slot, breaches, SLA",
                          description="Evaluate campaign.yaml's alerts: and baseline: rules "
                                      "(thruput.monitor.alerts); the change points come from --stats.")
    he.add_argument("input", metavar="IN.zarr", help="a monitor campaign's store (or raw directory)")
    he.add_argument("out", metavar="OUT.health.nc", help="the alert tables to write (one netCDF group per table)")
    he.add_argument("--stats", metavar="IN.stats.nc",
                    help="the campaign's statistics product (its change points); default: computed")
    params_option(he, "its `health` section is used")
    he.set_defaults(func=run_health)


def open_monitor(path):
    """A monitor campaign from its Zarr store (lazily) or its raw directory."""
    from ..campaign.dataset import open_campaign, open_stored

    if Path(path).suffix == ".zarr":
        from ..campaign.store import compute_chunks
        return open_stored(path, chunks=compute_chunks(path))
    return open_campaign(path, chunks={})


def _section(path, name):
    from .. import guard

    return ((guard.load_yaml_file(path, "params.yaml") or {}).get(name) or {}) if Path(path).is_file() else {}


def run_rollups(args):
    from ..stats.rollups import FREQS, rollups, save_rollups

    p = _section(args.params, ROLLUPS_SECTION)
    ds = open_monitor(args.input)
    tables = rollups(ds, freqs=p.get("freqs", FREQS))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(args.out).with_name(Path(args.out).name + ".part")
    save_rollups(tables, tmp)
    tmp.replace(args.out)
    print(f"{args.out}: rollups of {ds.attrs.get('campaign', args.input)} ({len(tables)} tables)")
    return 0


def throughput_delay_table(ds, monitor_section):
    """Throughput vs delay per compared period of the statistics product (its periods)."""
    from ..stats.monitor_tables import monitor_params
    from ..stats.rollups import throughput_delay

    return throughput_delay(ds, monitor_params(ds, monitor_section)["periods"])


def run_health(args):
    from ..monitor.alerts import evaluate, save_health, series_changes

    p = _section(args.params, HEALTH_SECTION)
    ds = open_monitor(args.input)
    if args.stats:
        import xarray as xr
        with xr.open_dataset(args.stats, group="changes") as changes:
            changes = changes.load()
    else:
        changes = series_changes(ds, _section(args.params, "monitor"))
    try:
        tables = evaluate(ds, p, changes=changes)
    except ValueError as exc:
        print(f"thruput pipeline health: {exc}", file=sys.stderr)
        return 2
    tables["throughput_delay"] = throughput_delay_table(ds, _section(args.params, "monitor"))
    tmp = Path(args.out).with_name(Path(args.out).name + ".part")
    save_health(tables, tmp)
    tmp.replace(args.out)
    print(f"{args.out}: alert state of {ds.attrs.get('campaign', args.input)} "
          f"({tables['breaches'].sizes.get('breach', 0)} breaches)")
    return 0
