"""``thruput site build|serve``: the report site."""

from __future__ import annotations

import sys


def add_parser(sub):
    p = sub.add_parser("site", help="build or serve the report site", description=__doc__)
    site_sub = p.add_subparsers(dest="site_command", metavar="ACTION", required=True)
    b = site_sub.add_parser("build", help="execute the notebooks and write the site")
    b.add_argument("--root", default=".", help="project folder with _quarto.yml (default: .)")
    b.add_argument("--out", default=None, help="output folder (default: output-dir of _quarto.yml)")
    b.add_argument("--processed", default="data/processed", help="folder of <campaign>.nc files")
    b.add_argument("--published", default="data/published", help="folder of published numbers")
    b.add_argument("--campaign", action="append", dest="campaigns", help="only these campaigns")
    b.add_argument("--engine", choices=("auto", "quarto", "nbconvert"), default="auto",
                   help="render with Quarto, or with nbconvert and the navigation of _quarto.yml; "
                        "auto: Quarto when it is on PATH (default: auto)")
    b.set_defaults(func=run_build)
    s = site_sub.add_parser("serve", help="serve the built site on localhost")
    s.add_argument("--dir", default="_site", help="the built site folder (default: _site)")
    s.add_argument("--port", type=int, default=8000,
                   help="port on 127.0.0.1; 0 picks a free one (default: 8000)")
    s.set_defaults(func=run_serve)


def run_build(args):
    from ..errors import ThruputError
    from ..site import build

    try:
        build(args.root, args.out, args.processed, args.published, campaigns=args.campaigns,
              engine=args.engine)
    except ThruputError as exc:       # a failing notebook cell, Quarto failing
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    return 0


def run_serve(args):
    from ..site import serve

    serve(args.dir, port=args.port)
    return 0
