"""``thruput site build|page|data|serve``: the report site.

In the pipeline every page is a DVC stage of its own (``page@<campaign>``...: ``thruput
site page``), so adding a campaign executes only its page, the catalogue and the data
page; ``thruput site build --pages build/pages`` then assembles the site from the
executed notebooks (navigation, HTML, assets), executing nothing. Without ``--pages``,
``build`` executes every page itself.
"""

from __future__ import annotations

import sys

from .. import guard


def add_parser(sub):
    p = sub.add_parser("site", help="build or serve the report site", description=__doc__)
    site_sub = p.add_subparsers(dest="site_command", metavar="ACTION", required=True)
    b = site_sub.add_parser("build", help="execute the notebooks (or take them from --pages) and write the site")
    b.add_argument("--root", default=".", help="project folder with _quarto.yml (default: .)")
    b.add_argument("--out", default=None, help="output folder (default: output-dir of _quarto.yml)")
    b.add_argument("--processed", default="data/processed", help="folder of <campaign>.nc files")
    b.add_argument("--published", default="data/published", help="folder of published numbers")
    b.add_argument("--reports", default="data/report", help="folder of catalogue.nc and compare-<name>.nc")
    b.add_argument("--campaign", action="append", dest="campaigns", help="only these campaigns")
    b.add_argument("--params", metavar="params.yaml",
                   help="take the campaigns, studies and comparisons from this parameters file")
    b.add_argument("--pages", metavar="DIR", help="executed notebooks to assemble (execute nothing)")
    b.add_argument("--data", metavar="DIR", help="data package to publish (from `thruput site data`)")
    b.add_argument("--engine", choices=("auto", "quarto", "nbconvert"), default="auto",
                   help="HTML renderer: Quarto, nbconvert, or Quarto when it is on PATH (default)")
    b.set_defaults(func=run_build)
    pg = site_sub.add_parser("page", help="execute one page's notebook (one DVC stage per page)")
    pg.add_argument("notebook", metavar="NOTEBOOK.ipynb", help="the page's notebook, relative to --root")
    pg.add_argument("out", metavar="OUT.ipynb", help="where the executed notebook goes, relative to --root")
    pg.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE",
                    help="a value for the notebook's parameters cell (text)")
    pg.add_argument("--root", default=".", help="project folder; the kernel starts there (default: .)")
    pg.set_defaults(func=run_page)
    d = site_sub.add_parser("data", help="write the data package (netCDF, CSV, datapackage.json)")
    d.add_argument("processed", metavar="DIR", help="folder of <campaign>.nc files and products")
    d.add_argument("out", metavar="OUTDIR", help="folder of the data package to write")
    d.add_argument("--root", default=".", help="project folder (for CITATION.cff; default: .)")
    d.add_argument("--params", metavar="params.yaml",
                   help="publish only the campaigns and monitors it lists (default: every one in DIR)")
    d.set_defaults(func=run_data)
    s = site_sub.add_parser("serve", help="serve the built site on localhost (its files only: no folder listing, no link out of it)")
    s.add_argument("--dir", default="_site", help="the built site folder (default: _site)")
    s.add_argument("--port", type=int, default=8000,
                   help="port on 127.0.0.1; 0 picks a free one (default: 8000)")
    s.set_defaults(func=run_serve)


def run_build(args):
    from ..errors import ThruputError
    from ..site import build

    lists = {"campaigns": args.campaigns}
    if args.params:
        params = guard.load_yaml_file(args.params, "params.yaml") or {}
        lists = {"campaigns": args.campaigns or params.get("campaigns") or [],
                 "seeds": [str(s) for s in params.get("studies") or []],
                 "comparisons": list(params.get("comparisons") or {}),
                 "monitors": list(params.get("monitors") or [])}
    try:
        build(args.root, args.out, args.processed, args.published, engine=args.engine,
              reports=args.reports, pages=args.pages, data=args.data, **lists)
    except ThruputError as exc:       # a failing notebook cell, Quarto failing
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    return 0


def run_page(args):
    from ..errors import ThruputError
    from ..site import execute_page

    parameters = {}
    for item in args.parameter:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            print(f"thruput: --parameter {item!r}: expected NAME=VALUE", file=sys.stderr)
            return 2
        parameters[name] = value
    try:
        execute_page(args.root, args.notebook, args.out, parameters)
    except ThruputError as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    print(f"{args.out}: executed {args.notebook}" + (f" {parameters}" if parameters else ""))
    return 0


def run_data(args):
    from ..site import datapackage

    names = None
    if args.params:
        params = guard.load_yaml_file(args.params, "params.yaml") or {}
        names = list(params.get("campaigns") or []) + list(params.get("monitors") or [])
    package = datapackage.export(args.processed, args.out, args.root, campaigns=names)
    print(f"{args.out}: {len(package['resources'])} resources")
    return 0


def run_serve(args):
    from ..site.serve import serve

    try:
        serve(args.dir, port=args.port)
    except (FileNotFoundError, OSError) as exc:       # no site yet, port taken
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    return 0
