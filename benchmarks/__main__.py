"""``python -m benchmarks [NAME ...]``: run every benchmark (or the named ones)."""

from __future__ import annotations

import importlib
import sys

from . import BENCHMARKS


def main(argv=None):
    names = list(argv if argv is not None else sys.argv[1:]) or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; known: {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    status = 0
    for name in names:
        print(f"== benchmarks.{name}", flush=True)
        status |= importlib.import_module(f"{__package__}.{name}").main([]) or 0
    return status


if __name__ == "__main__":
    sys.exit(main())
