"""What ``thruput --help`` says: plain words (the docstrings the commands reuse are written
for Sphinx), every option explained, and examples for the main commands."""

from __future__ import annotations

import argparse
import re

__all__ = ["plain", "polish", "DESCRIPTION", "EXAMPLES"]

DESCRIPTION = ("Turn network measurement logs (iperf 2 and 3, nuttcp, ping, irtt, UDPmon, "
               "web100, ss) into labelled data, campaigns, statistics and an offline report "
               "site that others can rebuild.")

#: Examples shown under ``--help``, by command path.
EXAMPLES = {
    "thruput": """\
examples:
  thruput inspect logs/                      what every log in a folder holds
  thruput campaign check data/raw/veth-1g    is a campaign complete and intact?
  dvc repro                                  the whole pipeline: data, statistics, site
  thruput site serve                         look at the site on http://127.0.0.1:8000/""",
    "thruput inspect": """\
examples:
  thruput inspect run.json                   format, kind, summary and line accounting
  thruput inspect --json logs/ > logs.json   a folder, recursively, as JSON
  thruput inspect --format ping old.txt      skip sniffing""",
    "thruput campaign": """\
examples:
  thruput campaign new my-path               a template to fill in
  thruput campaign check data/raw/my-path    schema, manifest, every file and its hash
  thruput campaign import old-path logs/*.json --pattern 'w(?P<window>\\d+K)-s(?P<streams>\\d+)'""",
    "thruput record": """\
examples:
  iperf3 -s -J > /dev/null &                 on the far host
  thruput record data/raw/my-path --to far.example.org --windows 8K,16K,...,4M \\
      --streams 1,2,4,8,16 --repeats 3 --duration 10 --pause 10
  # a design as seed 001 measured: applications x TCP stacks x MTU, servers started at the far end
  thruput record data/raw/apps-cc-mtu --to 10.0.0.2 --netns lab-a --far ssh:root@10.0.0.2 \\
      --factor application=iperf3,http,disk --factor cc=reno,cubic,bbr \\
      --factor mtu=1500,9000 --repeats 3 --duration 10 --size 256M""",
    "thruput monitor": """\
examples:
  thruput monitor new data/raw/cern-ral --to 10.0.0.2 --tcp-buffers 64K,1M --ping-sizes 108,1480
  thruput monitor data/raw/cern-ral --duration 14d     run the schedule (safe to kill and restart)
  thruput monitor status data/raw/cern-ral             what ran, what failed, the next slot""",
    "thruput site": """\
examples:
  thruput site build                         what `dvc repro` runs as its last stage
  thruput site serve --port 0                serve _site/ on a free port of 127.0.0.1""",
}

_ROLE = re.compile(r":(?:func|mod|class|data|meth|attr|obj|exc):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain(text):
    """reStructuredText roles and literals as plain words: ``:func:`~thruput.read``` ->
    ``read()``, ````thruput inspect```` -> ``thruput inspect``."""
    if not text:
        return text

    def role(m):
        name = m[1]
        is_func = m[0].startswith((":func:", ":meth:"))
        name = name.rsplit(".", 1)[-1] if m[0].split("`")[1].startswith("~") else name
        return f"{name}()" if is_func and not name.endswith(")") else name

    return _LITERAL.sub(r"\1", _ROLE.sub(role, text))


class Formatter(argparse.HelpFormatter):
    """Wraps paragraphs of descriptions to the terminal; keeps indented lines (examples,
    tables) as written."""

    def _fill_text(self, text, width, indent):
        out = []
        for para in text.split("\n\n"):
            lines = para.splitlines()
            if any(line.startswith(" ") for line in lines[1:]) or para.startswith("examples:"):
                out.append("\n".join(indent + line for line in lines))
            else:
                out.append(super()._fill_text(" ".join(lines), width, indent))
        return "\n\n".join(out)


def polish(parser, path="thruput"):
    """Plain help texts, examples and a layout that keeps line breaks, for ``parser`` and
    every sub-command below it."""
    parser.formatter_class = Formatter
    parser.description = plain(parser.description)
    if path in EXAMPLES and not parser.epilog:
        parser.epilog = EXAMPLES[path]
    for action in parser._actions:
        action.help = plain(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = plain(choice.help)
            for name, sub in action.choices.items():
                polish(sub, f"{path} {name}")
    return parser
