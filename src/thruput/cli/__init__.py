"""The ``thruput`` command line: one module per sub-command in this package.

Each module exposes ``add_parser(subparsers)`` (which registers the sub-command and sets
``func``) and keeps its work in the library, so the CLI stays thin. Exit status: 0 when
all went well, 1 when some input failed (each failure reported on one line), 2 for usage
errors.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

#: Sub-command modules, in the order ``thruput --help`` lists them.
COMMANDS = ("inspect", "campaign", "record", "monitor", "pipeline", "reproduce", "site", "release")


def build_parser():
    from ._help import DESCRIPTION, polish

    parser = argparse.ArgumentParser(prog="thruput", description=DESCRIPTION)
    from .. import __version__
    parser.add_argument("--version", action="version", version=f"thruput {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        module.add_parser(sub)
    return polish(parser)


def main(argv=None):
    for stream in (sys.stdout, sys.stderr):     # a file name that is not UTF-8 (surrogate
        if hasattr(stream, "reconfigure"):      # escapes) is printed escaped, never a crash
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.func(args) or 0
    except BrokenPipeError:  # e.g. `thruput inspect --json ... | head`: the reader left
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
