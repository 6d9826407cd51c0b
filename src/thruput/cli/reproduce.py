"""``thruput reproduce``: build the reproduction ledger of the source studies' numbers.

Every figure of ``data/published/seed_*.csv`` is checked by the checks its study declares
in ``src/thruput/studies/seed_<nnn>/claims.yaml`` (a formula over other published figures
with a tolerance, a bound, an equality, or a person's judgement with its reasoning), plus
two generic checks (order statistics, start before end). One row per figure is written.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from ..errors import ThruputError


def _status_help():
    from ..reproduce_statuses import COUNTED, STATUS_MEANING

    lines = ["statuses (most serious first; a figure keeps the most serious its checks found):"]
    for status, meaning in STATUS_MEANING.items():
        tag = "" if status in COUNTED else " [not counted as checked]"
        lines += textwrap.wrap(f"{status}: {meaning}{tag}", width=88, initial_indent="  ",
                               subsequent_indent="      ")
    lines.append("A verdict set by a person is marked judgement=True in the ledger; 'reproduced' never is.")
    return "\n".join(lines)


def add_parser(sub):
    p = sub.add_parser("reproduce", help="re-derive and cross-check every published figure",
                       description=__doc__, epilog=_status_help(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
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
        ledger = reproduce.build_ledger(rows)
    except (ThruputError, OSError) as exc:
        print(f"thruput: {exc}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    ledger.to_csv(args.out, index=False, lineterminator="\n")
    counts = reproduce.summary(ledger).loc["all"]
    print(f"{args.out}: {int(counts['total'])} claims, "
          + ", ".join(f"{int(counts[s])} {s}" for s in reproduce.STATUSES)
          + f"; {int(counts['checked'])} checked, {int(counts['judgement'])} of them by judgement")
    return 0
