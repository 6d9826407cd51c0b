"""``thruput pipeline``: the steps ``dvc.yaml`` runs, every path an argument.

``normalize DIR OUT.nc|OUT.zarr [--workers N | --scheduler ADDRESS]``
    Check a campaign directory (as ``thruput campaign check``) and, only if it has no
    errors, write :func:`thruput.open_campaign` of it as netCDF. A monitor campaign goes
    to a Zarr store (``OUT.zarr``, chunked along ``run``) which later calls bring up to
    date by appending only the runs.csv rows it does not hold yet (see
    :mod:`thruput.monitor.normalize`); its files are read on a dask cluster with
    ``--workers``/``--scheduler`` (:mod:`thruput.parallel`).
``stats IN OUT.stats.nc --params params.yaml``
    The statistics product of one normalized campaign (every table its page shows, one
    netCDF group each, :func:`thruput.stats.product.campaign_product`), with the
    parameters of the ``stats`` section of ``params.yaml`` over
    :data:`thruput.stats.DEFAULTS`.
``catalogue DIR OUT.nc --params params.yaml``
    The catalogue: one row per campaign of ``campaigns:``, from ``DIR/<c>.stats.nc``.
``compare A.nc B.nc OUT.nc --name NAME --params params.yaml``
    One comparison of ``comparisons:`` (cells and set-up): two TCP sweeps per (window,
    streams) cell, or two designs per cell of the factors both have (the entry's ``by``
    and ``var`` choose which and what).
``study-effects DIR OUT.nc --scores SCORES.nc --params params.yaml``
    For each effect a study page shows beside a new measurement, the campaign of
    ``campaigns:`` that shows it best and what its panel draws (from ``DIR/<c>.stats.nc``,
    and ``DIR/<c>.nc`` for UDPmon rows), with the ``study-effects`` section of
    ``params.yaml``; SCORES.nc records every campaign's assessment
    (:mod:`thruput.stats.study_effects`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


from .. import guard
from ..errors import ThruputError

from ..campaign.store import (NETCDF_ENGINE, STATS_SUFFIX, open_product,  # noqa: F401
                              write_netcdf, write_product)


def add_parser(sub):
    p = sub.add_parser("pipeline", help="the steps dvc.yaml runs (normalize, stats, catalogue, compare, study-effects)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = p.add_subparsers(dest="verb", metavar="STEP", required=True)
    norm = verbs.add_parser("normalize", help="campaign directory -> one netCDF file or Zarr store",
                            description=NORMALIZE_HELP)
    norm.add_argument("campaign", metavar="DIR", help="the raw campaign, data/raw/<name>")
    norm.add_argument("out", metavar="OUT", help="OUT.nc, or OUT.zarr (monitor campaigns: always)")
    where = norm.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N",
                       help="read the raw files on a local dask cluster of N worker processes "
                            "(monitor campaigns; default: in this process)")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="read them on a running dask cluster, e.g. tcp://10.0.0.1:8786 "
                            "(docs/scale.md: SLURM, Kubernetes)")
    check = norm.add_mutually_exclusive_group()
    check.add_argument("--verify-all", dest="verify", action="store_const", const="all", default=True,
                       help="on append, hash again every raw file already stored (default: only "
                            "those whose size or modification time changed since they were last "
                            "found unchanged)")
    check.add_argument("--no-verify", dest="verify", action="store_false",
                       help="on append, do not check the raw files already stored")
    norm.set_defaults(func=run_normalize)
    st = verbs.add_parser("stats", help="normalized campaign -> its statistics product (netCDF groups)")
    st.add_argument("input", metavar="IN.nc", help="a normalized campaign")
    st.add_argument("out", metavar="OUT.stats.nc", help="the statistics product to write")
    st.add_argument("--routes", metavar="DIR",
                    help="monitor: the raw campaign folder whose traced routes (routes.csv, ancillary "
                         "routes) give the product's route_changes table")
    _params_option(st)
    st.set_defaults(func=run_stats)
    cat = verbs.add_parser("catalogue", help="statistics products -> the catalogue table")
    cat.add_argument("processed", metavar="DIR", help="folder of the <campaign>.stats.nc files")
    cat.add_argument("out", metavar="OUT.nc", help="the catalogue to write")
    _params_option(cat, "its `campaigns` list gives the rows and their order")
    cat.set_defaults(func=run_catalogue)
    cmp = verbs.add_parser("compare", help="two normalized TCP sweeps or designs -> their comparison")
    cmp.add_argument("a", metavar="A.nc", help="the reference campaign")
    cmp.add_argument("b", metavar="B.nc", help="the campaign compared with it (differences are B - A)")
    cmp.add_argument("out", metavar="OUT.nc", help="the comparison to write")
    cmp.add_argument("--name", help="the comparison's name in params.yaml (`comparisons:`)")
    _params_option(cmp)
    cmp.set_defaults(func=run_compare)
    eff = verbs.add_parser("study-effects", help="statistics products -> the campaign each study page shows",
                           description="For each effect a study page shows beside a new measurement (window "
                                       "plateau, streams, RTT under load, UDP latency, UDP spacing), choose the "
                                       "campaign of `campaigns:` that shows it best and write what its panel "
                                       "draws; see thruput.stats.study_effects.")
    eff.add_argument("processed", metavar="DIR", help="folder of the <campaign>.stats.nc and <campaign>.nc files")
    eff.add_argument("out", metavar="OUT.nc", help="the effects product the study pages read")
    eff.add_argument("--scores", metavar="SCORES.nc", required=True,
                     help="where to write every campaign's assessment of every effect")
    _params_option(eff, "its `campaigns` list and `study-effects` section are used")
    eff.set_defaults(func=run_study_effects)
    met = verbs.add_parser("metrics", help="statistics products and ledger -> the headline numbers (DVC metrics)",
                           description="Write the headline numbers of every <campaign>.stats.nc in DIR and the "
                                       "ledger's status counts (DIR/reproduction.csv) as plain JSON, the file "
                                       "dvc.yaml declares under `metrics:` (so `dvc metrics diff` compares "
                                       "them between revisions); see thruput.release.numbers.headline.")
    met.add_argument("processed", metavar="DIR", help="folder of the <campaign>.stats.nc files")
    met.add_argument("out", metavar="OUT.json", help="the metrics file to write")
    met.set_defaults(func=run_metrics)
    from .pipeline_health import add_parsers     # rollups, health (monitor campaigns)
    add_parsers(verbs, _params_option)


def _params_option(parser, what="its `stats` section is used"):
    parser.add_argument("--params", default="params.yaml", metavar="params.yaml",
                        help=f"parameters file; {what} (default: %(default)s)")


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
    from ..monitor.normalize import normalize_monitor

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
    if done["rebuilt"]:
        print(f"{args.out}: rebuilt: {done['rebuilt']}")
    if done.get("metadata_updated"):
        print(f"{args.out}: campaign.yaml changed since the store was written "
              f"({', '.join(done['metadata_updated'])}): its copy in the store replaced")
    verb = "appended" if done["appended"] else "wrote"
    print(f"{args.out}: {verb} {done['runs_added']} runs; {done['runs']} runs, "
          f"{done['files_read']} files in the store")
    if done["runs_added_disagreeing"]:
        print(f"{args.out}: {done['runs_added_disagreeing']} of the {done['runs_added']} runs "
              f"{'appended' if done['appended'] else 'written'} have a failed "
              "check of their tool's own totals against their data (tool_checks_failed; "
              "docs/consistency.md)")
    return 0


def load_stats_params(path):
    """The ``stats`` section of the parameters file over :data:`thruput.stats.DEFAULTS`."""
    from ..stats.product import params_with_defaults

    return params_with_defaults(_params_file(path).get("stats"))


def _params_file(path):
    return guard.load_yaml_file(path, "params.yaml") or {}


def _open_campaign_nc(path):
    import xarray as xr

    with xr.open_dataset(path, engine=NETCDF_ENGINE) as ds:
        return ds.load()


def run_stats(args):
    from ..stats.product import campaign_product

    try:
        params = load_stats_params(args.params)
    except ValueError as exc:
        print(f"thruput: {args.params}: {exc}", file=sys.stderr)
        return 1
    if Path(args.input).suffix == ".zarr":  # a monitor campaign: read lazily, chunk by chunk
        from ..campaign.dataset import open_stored
        from ..campaign.store import compute_chunks

        ds = open_stored(args.input, chunks=compute_chunks(args.input))
    else:
        ds = _open_campaign_nc(args.input)
    if ds.attrs.get("campaign_kind") == "monitor":
        from ..stats.monitor_tables import monitor_tree

        tree = monitor_tree(ds, _params_file(args.params).get("monitor") or {})
        if args.routes:
            from ..monitor.routes import route_changes_table

            tree["route_changes"] = route_changes_table(args.routes)
    else:
        # (a design over time takes its change points' settings from the monitor's section)
        tree = campaign_product(ds, params, _params_file(args.params).get("monitor"))
    write_product(tree, args.out)
    print(f"{args.out}: statistics of {ds.attrs['campaign']} ({', '.join(tree.children)})")
    return 0


def run_catalogue(args):
    from ..stats.product import catalogue_product

    params = _params_file(args.params)
    names = (params.get("campaigns") or []) + (params.get("monitors") or [])
    processed = Path(args.processed)
    missing = [n for n in names if not (processed / f"{n}{STATS_SUFFIX}").exists()]
    if missing:
        print(f"thruput: no statistics product for {', '.join(missing)} in {processed} "
              f"(run `thruput pipeline stats` first)", file=sys.stderr)
        return 1
    table = catalogue_product({n: open_product(processed / f"{n}{STATS_SUFFIX}") for n in names})
    write_product(table, args.out)
    print(f"{args.out}: catalogue of {len(names)} campaigns")
    return 0


def run_metrics(args):
    import json

    from ..release.numbers import headline

    metrics = headline(args.processed)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(metrics, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{out}: headline numbers of {sum(k != 'ledger' for k in metrics)} campaigns"
          + (", the ledger's counts" if "ledger" in metrics else ""))
    return 0


def run_compare(args):
    import json

    from ..stats.product import comparison_product

    try:
        params = load_stats_params(args.params)
        entry = (_params_file(args.params).get("comparisons") or {}).get(args.name) or {} if args.params else {}
        if not isinstance(entry, dict):
            raise ValueError(f"{args.params}: comparisons: {args.name}: not a mapping of a, b (by, var)")
        by = entry.get("by")
        tree = comparison_product(_open_campaign_nc(args.a), _open_campaign_nc(args.b), params,
                                  name=args.name, by=[by] if isinstance(by, str) else by, var=entry.get("var"))
    except ValueError as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    write_product(tree, args.out)
    if tree.attrs.get("kind") == "design":
        cells = tree["cells"].to_dataset()
        both = int(((cells["n_a"] > 0) & (cells["n_b"] > 0)).sum())
        print(f"{args.out}: {tree.attrs['b']} / {tree.attrs['a']} ({tree.attrs['var']}) per "
              f"{', '.join(json.loads(tree.attrs['by'])) or 'campaign'}, {both} cells in both, "
              f"{tree['metadata'].sizes.get('entry', 0)} set-up differences")
        return 0
    print(f"{args.out}: {tree.attrs['b']} - {tree.attrs['a']}, {tree['cells'].sizes.get('window', 0)} windows, "
          f"{tree['metadata'].sizes.get('entry', 0)} set-up differences")
    return 0


def run_study_effects(args):
    import xarray as xr

    from ..stats.study_effects import effect_scores, params_with_defaults, study_effects_product

    params = _params_file(args.params)
    try:
        section = params_with_defaults(params.get("study-effects"))
    except ValueError as exc:
        print(f"thruput: {args.params}: {exc}", file=sys.stderr)
        return 1
    names = params.get("campaigns") or []
    processed = Path(args.processed)
    missing = [n for n in names if not (processed / f"{n}{STATS_SUFFIX}").exists()
               or not (processed / f"{n}.nc").exists()]
    if missing:
        print(f"thruput: no normalized campaign or statistics product for {', '.join(missing)} in "
              f"{processed} (run `thruput pipeline normalize` and `stats` first)", file=sys.stderr)
        return 1
    products = {n: open_product(processed / f"{n}{STATS_SUFFIX}") for n in names}
    campaigns = {n: xr.open_dataset(processed / f"{n}.nc", engine=NETCDF_ENGINE) for n in names}
    try:
        tree = study_effects_product(products, campaigns, section)
    except ValueError as exc:          # a `show:` entry naming no campaign, or one without the effect
        print(f"thruput: {args.params}: {exc}", file=sys.stderr)
        return 1
    finally:
        for ds in campaigns.values():
            ds.close()
    write_product(tree, args.out)
    write_product(effect_scores(products, section), args.scores)
    shown = {e: (tree[e].attrs["campaign"] or "-", tree[e].attrs["suggested"]) for e in tree.children}
    print(f"{args.out}: " + ", ".join(f"{e} {c}" + (f" (suggested: {s or '-'})" if s != c and c != "-" else "")
                                      for e, (c, s) in shown.items()))
    return 0
