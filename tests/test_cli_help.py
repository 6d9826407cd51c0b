"""``thruput --help`` and every sub-command's: plain words, every option explained,
examples for the main commands."""

from __future__ import annotations

import argparse
import re

import pytest

from thruput.cli import build_parser, main
from thruput.cli._help import EXAMPLES, plain

RST = re.compile(r"``|:(func|mod|class|data|meth|attr|obj|exc):`")


def _parsers(parser, path=("thruput",)):
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


PARSERS = dict(_parsers(build_parser()))


@pytest.mark.parametrize("path", sorted(PARSERS))
def test_every_option_and_argument_is_explained(path):
    parser = PARSERS[path]
    missing = [a.option_strings or a.dest for a in parser._actions
               if not isinstance(a, (argparse._HelpAction, argparse._VersionAction,
                                     argparse._SubParsersAction)) and not a.help]
    assert not missing, f"{path}: no help for {missing}"


@pytest.mark.parametrize("path", sorted(PARSERS))
def test_help_is_plain_text(path):
    text = PARSERS[path].format_help()
    assert not RST.search(text), f"{path} --help shows reStructuredText:\n{text}"


@pytest.mark.parametrize("path", sorted(EXAMPLES))
def test_main_commands_show_examples(path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*path.split()[1:], "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and EXAMPLES[path].splitlines()[1].strip() in out


def test_top_level_description_speaks_of_the_user_not_of_modules(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "module" not in out and "iperf" in out


def test_plain_turns_sphinx_roles_into_words():
    assert plain(":func:`~thruput.read` and ``thruput inspect``") == "read() and thruput inspect"
    assert plain(":mod:`thruput.stats`") == "thruput.stats"


def test_the_parser_is_built_without_the_statistics_or_dask():
    """Every command builds the whole parser first: what it imports is what even
    ``thruput --help`` waits for (scipy and the studies took 1.2 of its 2 s)."""
    import subprocess
    import sys

    code = ("import sys; from thruput.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('scipy', 'dask', 'distributed', 'zarr', 'thruput.stats', "
            "'thruput.reproduce') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
