"""``thruput release VERSION``: the citable folder a study deposits (release/<name>-<VERSION>/),
and ``thruput release diff A B``: every published number added, removed or changed between
two releases.

A release refuses to run on a stale pipeline (``dvc status`` not clean) or on raw data git
or DVC does not hold as committed, and never overwrites a published version.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import ThruputError


def add_parser(sub):
    p = sub.add_parser("release", help="write release/<name>-<VERSION>/, or `release diff A B`",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n  thruput release 1.0.0\n  thruput release 1.1.0 --raw-limit 500M\n"
                              "  thruput release diff 1.0.0 1.1.0")
    p.add_argument("what", nargs="+", metavar="VERSION | diff A B",
                   help="the version to release (MAJOR.MINOR.PATCH), or `diff A B` (versions or folders)")
    p.add_argument("--root", type=Path, default=Path("."), help="the project (default: .)")
    p.add_argument("--name", default=None, help="the release's name prefix (default: thruput)")
    p.add_argument("--raw-limit", metavar="SIZE", default=None,
                   help="a campaign whose raw logs exceed SIZE (bytes, or 500M, 2G) is shipped as a DVC remote "
                        "reference with every file's sha256 instead of its files")
    p.add_argument("--previous", metavar="VERSION", help="list changes against this release "
                   "(default: the highest earlier version under release/)")
    p.add_argument("--json", action="store_true", help="diff: print changes.json instead of the summary")
    p.set_defaults(func=run)


def run(args):
    from .. import release
    from ..quantities import parse_size
    from ..release.build import changes_markdown

    name = args.name or release.DEFAULT_NAME
    try:
        if args.what[0] == "diff":
            if len(args.what) != 3:
                print("thruput release diff: give two releases, A B", file=sys.stderr)
                return 2
            a, b = (release.resolve(args.root, w, name) for w in args.what[1:])
            changes = release.diff_releases(a, b)
            if args.json:
                print(json.dumps(changes, indent=1, ensure_ascii=False))
            else:
                print(changes_markdown(changes, b.name, a.name))
            return 0
        if len(args.what) != 1:
            print("thruput release: give one VERSION (or `diff A B`)", file=sys.stderr)
            return 2
        limit = parse_size(args.raw_limit) if args.raw_limit else None
        folder = release.make_release(args.root, args.what[0], name=name, raw_limit=limit, previous=args.previous)
    except (ThruputError, OSError) as exc:       # a ThruputError is a ValueError: first
        print(f"thruput release: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:                      # a bad --raw-limit
        print(f"thruput release: {exc}", file=sys.stderr)
        return 2
    changes = json.loads((folder / "changes.json").read_text(encoding="utf-8"))
    print(f"{folder}: " + ", ".join(f"{len(changes[k])} {k}" for k in ("added", "removed", "changed"))
          + " numbers (CHANGES.md); validate with `frictionless validate` and `rocrate-validator validate`")
    return 0
