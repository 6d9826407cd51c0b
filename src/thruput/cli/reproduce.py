"""``thruput reproduce``: build the reproduction ledger of the source studies' numbers."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import ThruputError


def add_parser(sub):
    p = sub.add_parser("reproduce", help="re-derive and cross-check every published figure",
                       description=__doc__)
    p.add_argument("--published", required=True, type=Path, metavar="DIR",
                   help="directory of seed_*.csv (data/published)")
    p.add_argument("--out", required=True, type=Path, metavar="CSV",
                   help="ledger to write (data/processed/reproduction.csv)")
    p.add_argument("--seed", action="append", metavar="SEED", help="only this seed (repeatable)")
    p.set_defaults(func=run)


def run(args):
    from .. import published, reproduce

    try:
        rows = published.load(seed=args.seed, path=args.published)
    except (ThruputError, OSError) as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    ledger = reproduce.build_ledger(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    ledger.to_csv(args.out, index=False, lineterminator="\n")
    counts = reproduce.summary(ledger).loc["all"]
    print(f"{args.out}: {int(counts['total'])} claims, "
          + ", ".join(f"{int(counts[s])} {s}" for s in reproduce.STATUSES))
    return 0
