"""The table of a seeded fuzz run (``make fuzz``): ``python -m tests.fuzz_summary [DIR]``.

Reads the per-format counts that ``tests/test_fuzz.py::test_seeded_fuzz_only_thruput_errors``
wrote under ``tests/output/fuzz/<seed>-<count>/`` (the newest run by default) and prints
one row a format and the totals: inputs, read clean, read and flagged (truncated or
inconsistent), refused (a ThruputError), crashes, hangs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

COLUMNS = ("inputs", "ok", "flagged", "refused", "crashes", "hangs")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    base = Path(__file__).parent / "output" / "fuzz"
    runs = [Path(argv[0])] if argv else sorted(
        base.glob("*-*"), key=lambda p: max((f.stat().st_mtime for f in p.glob("*.json")), default=0))[-1:]
    if not runs:
        print(f"no fuzz run under {base}: run `make fuzz` first")
        return 1
    rows = [json.loads(p.read_text()) for p in sorted(runs[0].glob("*.json"))]
    print(f"seeded fuzz run {runs[0].name} (seed-count): {len(rows)} formats")
    print("| format | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for row in rows:
        print(f"| {row['format']} | " + " | ".join(f"{row[c]:,}" for c in COLUMNS) + " |")
    print("| **all** | " + " | ".join(f"**{sum(r[c] for r in rows):,}**" for c in COLUMNS) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
