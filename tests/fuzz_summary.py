"""The table of a seeded fuzz run (``make fuzz``): ``python -m tests.fuzz_summary [DIR]``.

Reads the per-format counts that ``tests/test_fuzz.py::test_seeded_fuzz_only_thruput_errors``
wrote under ``tests/output/fuzz/<seed>-<count>/`` (the newest run by default) and prints
one row a format and the totals: inputs, read clean, read and flagged (truncated or
inconsistent), refused (a ThruputError), crashes, hangs. Then the table of the newest
hostile-files run (``tests/test_hostile_files.py``, ``tests/output/fuzz/files-*``): one row
a strategy, with the files opened outside their folder and the peak resident set.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

COLUMNS = ("inputs", "ok", "flagged", "refused", "crashes", "hangs")
FILE_COLUMNS = ("inputs", "read", "refused", "crashes", "hangs", "outside")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    base = Path(__file__).parent / "output" / "fuzz"
    runs = [Path(argv[0])] if argv else _newest(p for p in base.glob("*-*") if not p.name.startswith("files-"))
    files = _newest(base.glob("files-*"))
    if not runs and not files:
        print(f"no fuzz run under {base}: run `make fuzz` first")
        return 1
    if runs:
        _readers_table(runs[0])
    if files:
        print()
        _files_table(files[0])
    return 0


def _newest(runs):
    return sorted(runs, key=lambda p: max((f.stat().st_mtime for f in p.glob("*.json")), default=0))[-1:]


def _readers_table(run):
    rows = [json.loads(p.read_text()) for p in sorted(run.glob("*.json"))]
    print(f"seeded fuzz run {run.name} (seed-count): {len(rows)} formats")
    print("| format | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for row in rows:
        print(f"| {row['format']} | " + " | ".join(f"{row[c]:,}" for c in COLUMNS) + " |")
    print("| **all** | " + " | ".join(f"**{sum(r[c] for r in rows):,}**" for c in COLUMNS) + " |")


def _files_table(run):
    """The table of a hostile-files run (``tests/test_hostile_files.py``): one row a
    strategy, its outcomes, slowest case and peak resident set."""
    rows = [json.loads(p.read_text()) for p in sorted(run.glob("*.json"))]
    print(f"hostile files run {run.name}: {len(rows)} strategies")
    print("| strategy | " + " | ".join(FILE_COLUMNS) + " | slowest (s) | peak (MB) |")
    print("|---" * (len(FILE_COLUMNS) + 3) + "|")
    for row in rows:
        print(f"| {row['strategy']} | " + " | ".join(f"{row[c]:,}" for c in FILE_COLUMNS)
              + f" | {row['slowest_s']} | {row['peak_mb']} |")
    print("| **all** | " + " | ".join(f"**{sum(r[c] for r in rows):,}**" for c in FILE_COLUMNS)
          + f" | {max(r['slowest_s'] for r in rows)} | {max(r['peak_mb'] for r in rows)} |")


if __name__ == "__main__":
    sys.exit(main())
