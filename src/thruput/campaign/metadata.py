"""``campaign.yaml``: read, with the line of each node, and checked against its JSON Schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os

import itertools
import json
import re
from importlib import resources
from pathlib import Path

import yaml

from .. import guard
from ..errors import ParseError, ThruputError
from .layout import CAMPAIGN_FILE

__all__ = ["CampaignError", "schema", "schema_validator", "load_yaml", "node_line", "load_metadata"]


#: Schema errors collected from one file (each is located by a walk of the node tree: a
#: file of 50,000 wrong keys is not worth 50,000 walks), and the characters of each
#: message (jsonschema quotes the offending value whole).
#: ``uname -a`` as iperf3 prints it in ``system_info``: sysname nodename release version...
#: (a host's ``os`` and ``kernel`` in campaign.yaml, recorded or imported).
UNAME = re.compile(r"^(?P<sysname>\S+)\s+(?P<nodename>\S+)\s+(?P<release>\S+)")
MAX_SCHEMA_ERRORS = 100
MESSAGE_CHARS = 300


class CampaignError(ThruputError):
    """A campaign directory is not usable as it stands (the message names file and line)."""


def schema() -> dict[str, Any]:
    """The JSON Schema of ``campaign.yaml`` (a dict)."""
    text = resources.files("thruput").joinpath("schemas/campaign.schema.json").read_text()
    return json.loads(text)


def schema_validator():
    """A ``jsonschema`` Draft 2020-12 validator of :func:`schema`.

    jsonschema is imported, if nothing has imported it yet, without ``rfc3987_syntax``:
    that optional checker of the ``iri`` formats compiles 39 lark grammars when imported,
    1.3-2.5 s of every fresh ``thruput`` process here (python-jsonschema/jsonschema#1428),
    and thruput's schema uses no ``format``. Anything importing it later gets it as usual.
    """
    import importlib
    import sys

    if "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None        # an ImportError, which jsonschema skips
        try:
            importlib.import_module("jsonschema")
        finally:
            del sys.modules["rfc3987_syntax"]
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """YAML 1.1 safe loader that keeps dates and times as the strings written: libyaml's
    where PyYAML was built with it (a tenth of the time of the pure-Python one).

    PyYAML turns ``2026-11-22T14:00:00Z`` into a ``datetime``; the schema and the JSON copy
    in the Dataset's attrs want the text as written.
    """


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_yaml(path):
    """Parse a YAML file; return ``(data, root_node)`` (the node tree gives line numbers).

    Raises
    ------
    ParseError
        Naming the file and line of a YAML syntax error; a FileRefused for a file that is
        not a regular one inside its folder, too large, not UTF-8, or a document past
        :func:`thruput.guard.load_yaml`'s bounds (an alias bomb).
    """
    kind = CAMPAIGN_FILE if Path(path).name == CAMPAIGN_FILE else "yaml"
    text = guard.read_text(path, kind, root=Path(path).parent)     # inside its campaign folder
    return guard.load_yaml(text, str(path), _Loader)    # (parsed once: the data from the node tree)


def node_line(node, keys):
    """1-based line of the YAML node at ``keys`` (a path of mapping keys / sequence indices).

    Falls back to the deepest node that exists on the way, so a missing key points at its
    parent mapping.
    """
    line = node.start_mark.line + 1 if node is not None else None
    for key in keys:
        child = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == str(key):
                    child = v
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            child = node.value[key]
        if child is None:
            break
        node = child
        line = node.start_mark.line + 1
    return line


def load_metadata(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and schema-check ``campaign.yaml`` of ``directory``; return it as a dict.

    Raises
    ------
    ParseError
        For a YAML syntax error or the first schema violation, naming file and line.
    """
    path = Path(directory) / CAMPAIGN_FILE
    if not path.is_file():
        raise CampaignError(f"{path}: missing")
    data, node = load_yaml(path)
    errors = sorted(itertools.islice(schema_validator().iter_errors(data), MAX_SCHEMA_ERRORS),
                    key=lambda e: list(e.path))
    listed = [(node_line(node, list(e.path)), _schema_message(e)) for e in errors]
    if not listed and data.get("kind") == "design":
        from .design import factor_problems

        listed = [(node_line(node, keys), message) for keys, message in factor_problems(data["factors"])]
    if listed:
        raise ParseError(listed[0][1], line=listed[0][0], path=str(path), errors=listed)
    plan = data.get("plan") if isinstance(data, dict) else None
    if isinstance(plan, dict):
        cells = (len(plan.get("windows") or [1]) * len(plan.get("streams") or [1])
                 * int(plan.get("repeats") or 1))
        if cells > guard.MAX_CELLS:
            raise ParseError(f"plan: {cells:,} runs (windows x streams x repeats), past "
                             f"{guard.MAX_CELLS:,} (thruput.guard.MAX_CELLS)",
                             line=node_line(node, ["plan"]), path=str(path))
    return data


def _schema_message(error):
    where = "/".join(str(p) for p in error.path) or "(top level)"
    message = error.message if len(error.message) <= MESSAGE_CHARS else error.message[:MESSAGE_CHARS] + " ..."
    return f"{where}: {message}"
