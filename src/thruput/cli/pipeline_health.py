"""The pipeline steps of monitor health (``thruput pipeline rollups`` and ``thruput
pipeline health``): registered by :mod:`thruput.cli.pipeline`.

  thruput pipeline rollups IN.zarr OUT.rollups.zarr|OUT.rollups.nc [--update] [--params params.yaml]
  thruput pipeline health IN.zarr OUT.health.zarr|OUT.health.nc [--update] [--stats IN.stats.nc] [--params params.yaml]

dvc.yaml runs both into Zarr stores with ``--update``: a store is appended to, and built
whole where it was built by other thruput code (:func:`thruput.hashing.code_digest`),
params or campaign metadata.
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
    ro.add_argument("out", metavar="OUT.rollups.zarr",
                    help="the rollups to write, one group per resolution and series: a Zarr store (OUT ending "
                         "in .zarr: built a window of runs at a time, appended by --update), else a netCDF file")
    params_option(ro, "its `rollups` section is used")
    ro.add_argument("--update", action="store_true",
                    help="OUT holds the rollups of the campaign's earlier runs: keep its bins, recompute "
                         "only those from its last day on (thruput.stats.rollups.update_rollups; a .zarr "
                         "OUT: append_rollups, the recomputed bins written in place and appended)")
    ro.set_defaults(func=run_rollups)
    he = verbs.add_parser("health", help="monitor campaign -> alert state of every slot, breaches, SLA",
                          description="Evaluate campaign.yaml's alerts: and baseline: rules "
                                      "(thruput.monitor.alerts); the change points come from --stats.")
    he.add_argument("input", metavar="IN.zarr", help="a monitor campaign's store (or raw directory)")
    he.add_argument("out", metavar="OUT.health.zarr",
                    help="the alert tables to write: a Zarr store (OUT ending in .zarr, thruput.monitor.alerts_store, "
                         "appended by --update), else one netCDF file of every table and throughput_delay")
    he.add_argument("--stats", metavar="IN.stats.nc",
                    help="the campaign's statistics product (its change points); default: computed")
    params_option(he, "its `health` section is used")
    he.add_argument("--update", action="store_true",
                    help="a .zarr OUT holds the alert tables of the campaign's earlier runs: compute only the new "
                         "slots and what their rules need from before (append_alerts; built whole where it cannot)")
    he.set_defaults(func=run_health)


def open_monitor(path):
    """A monitor campaign from its Zarr store (lazily) or its raw directory."""
    from ..campaign.dataset import open_campaign, open_stored

    if Path(path).suffix == ".zarr":
        from ..campaign.store import compute_chunks
        return open_stored(path, chunks=compute_chunks(path))
    return open_campaign(path, chunks={})


def monitor_only(ds, directory, command):
    """Refuse a campaign that is neither a monitor nor a design over time with a one-line
    :class:`ThruputError` naming its kind: alert rules are evaluated on a monitor's
    schedule slots or a time design's time bins, which other campaigns do not have."""
    from ..errors import ThruputError

    kind = ds.attrs.get("campaign_kind") or "unknown"
    timed = kind == "design" and int(ds.attrs.get("design_time", 0) or 0)
    if kind == "monitor" or timed:
        return
    hint = ("; a design without time (campaign.yaml time: false) has no slots: no time, no alert"
            if kind == "design" else "")
    raise ThruputError(f"{directory}: a campaign of kind {kind!r}, neither a monitor nor a design over time: "
                       f"{command} evaluates alert rules on a monitor's slots or a time design's time bins{hint}")


def project_params(path, start):
    """params.yaml as a dict: ``path``, else the one of the project ``start`` is in (found by
    its dvc.yaml), else empty."""
    import yaml

    if path is None:
        from ..project import ProjectNotFoundError, find_root

        try:
            path = Path(find_root(Path(start).resolve())) / "params.yaml"
        except ProjectNotFoundError:
            return {}
    return (yaml.safe_load(Path(path).read_text()) or {}) if path is not None and Path(path).is_file() else {}


def _section(path, name):
    from .. import guard

    return ((guard.load_yaml_file(path, "params.yaml") or {}).get(name) or {}) if Path(path).is_file() else {}


def run_rollups(args):
    from ..campaign.store import product_tables, write_product
    from ..stats.rollups import FREQS, append_rollups, rollups_encoding, update_rollups, write_rollups

    p = _section(args.params, ROLLUPS_SECTION)
    freqs = tuple(p.get("freqs", FREQS))
    ds = open_monitor(args.input)
    if Path(args.out).suffix == ".zarr":     # a store: built window by window, appended in place
        other = _other_code(args.out) if args.update else ""
        done = (append_rollups(ds, args.out, freqs=freqs) if args.update and not other
                else {**write_rollups(ds, args.out, freqs=freqs), "rebuilt": other})
        _stamp_code(args.out)
        how = "appended" if args.update and not done.get("rebuilt") else "built"
        print(f"{args.out}: rollups of {ds.attrs.get('campaign', args.input)} ({len(done['tables'])} tables, "
              f"{how}{': ' + done['rebuilt'] if args.update and done.get('rebuilt') else ''})")
        return 0
    built = product_tables(args.out) if args.update and Path(args.out).is_file() else {}
    if {t.attrs.get("freq") for t in built.values()} - set(freqs):
        built = {}                  # (other resolutions: built again)
    tables = update_rollups(built, ds, freqs=freqs)
    write_product(tables, args.out, encoding=rollups_encoding(tables))
    print(f"{args.out}: rollups of {ds.attrs.get('campaign', args.input)} ({len(tables)} tables)")
    return 0


def run_health(args):
    from ..campaign.store import write_product
    from ..monitor.alerts import health_tables

    ds = open_monitor(args.input)
    changes = None
    if args.stats:
        import xarray as xr
        with xr.open_dataset(args.stats, group="changes") as changes:
            changes = changes.load()
    if Path(args.out).suffix == ".zarr":
        return _run_alerts_store(args, ds, changes)
    if args.update:
        print("thruput pipeline health: --update needs a Zarr OUT (ending in .zarr)", file=sys.stderr)
        return 2
    try:
        tables = health_tables(ds, _section(args.params, HEALTH_SECTION), _section(args.params, "monitor"),
                               changes=changes)
    except ValueError as exc:
        print(f"thruput pipeline health: {exc}", file=sys.stderr)
        return 2
    write_product(tables, args.out)
    print(f"{args.out}: alert state of {ds.attrs.get('campaign', args.input)} "
          f"({tables['breaches'].sizes.get('breach', 0)} breaches)")
    return 0


def _run_alerts_store(args, ds, changes):
    """``thruput pipeline health IN OUT.zarr [--update]``: the alert tables as a Zarr store."""
    from ..monitor.alerts import series_changes
    from ..monitor.alerts_store import append_alerts, write_alerts

    if changes is None:
        changes = series_changes(ds, _section(args.params, "monitor"))
    health = _section(args.params, HEALTH_SECTION)
    other = _other_code(args.out) if args.update else ""
    try:
        done = (append_alerts(ds, args.out, health, changes) if args.update and not other
                else {**write_alerts(ds, args.out, health, changes), "rebuilt": other})
    except ValueError as exc:
        print(f"thruput pipeline health: {exc}", file=sys.stderr)
        return 2
    _stamp_code(args.out)
    how = "updated" if args.update and not done["rebuilt"] else "built"
    print(f"{args.out}: alert state of {ds.attrs.get('campaign', args.input)} ({how}"
          f"{': ' + done['rebuilt'] if args.update and done['rebuilt'] else ''})")
    return 0


def _other_code(store):
    """Why the store at ``store`` must be built whole, not appended to, because of the code
    that built it: ``""`` when it records this thruput's :func:`~thruput.hashing.code_digest`
    (a store there is none of, or not a table store, is left to the append to judge)."""
    from ..campaign.store import table_attrs
    from ..hashing import code_digest

    attrs = table_attrs(store)
    if not attrs or attrs.get("code") == code_digest():
        return ""
    return "built by other thruput code" if attrs.get("code") else "built by thruput code it does not record"


def _stamp_code(store):
    """Record in the store's attrs the :func:`~thruput.hashing.code_digest` of the code
    that built or appended it (read by :func:`_other_code`)."""
    from ..campaign.store import finish_tables, table_attrs
    from ..hashing import code_digest

    finish_tables(store, {**table_attrs(store), "code": code_digest()})
