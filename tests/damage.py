"""Damage recorded fixtures the way real archives are damaged, for the truncation tests.

Every reproducer of a cut or mangled log is made here from a recorded sample of
``tests/data``, never typed by hand: ``head`` at a line boundary, a line lost, a file cut
inside a line, a ``^C`` echoed into the output.
"""

from __future__ import annotations

from .conftest import DATA


def sample(fmt, name):
    """The text of the recorded sample ``tests/data/<fmt>/<name>``."""
    return (DATA / fmt / name).read_text()


def head(text, n):
    """The first ``n`` lines of ``text``, line ends kept (``head -n``)."""
    return "".join(text.splitlines(keepends=True)[:n])


def drop(text, *numbers):
    """``text`` without the lines numbered ``numbers`` (1-based)."""
    return "".join(line for k, line in enumerate(text.splitlines(keepends=True), 1) if k not in numbers)


def cut(text, chars):
    """``text`` without its last ``chars`` characters (a copy cut inside a line)."""
    return text[:-chars]


def interrupt(text, n):
    """``text`` with ``^C`` echoed by the terminal at the start of line ``n`` (1-based)."""
    lines = text.splitlines(keepends=True)
    lines[n - 1] = "^C" + lines[n - 1]
    return "".join(lines)


def scale_json(text, keys, factor):
    """An iperf3 -J ``text`` with the number at ``keys`` (a path of keys) times ``factor``,
    re-written as iperf3 writes it (tab-indented)."""
    import json

    doc = json.loads(text)
    obj = doc
    for key in keys[:-1]:
        obj = obj[key]
    obj[keys[-1]] = obj[keys[-1]] * factor
    return json.dumps(doc, indent="\t") + "\n"


def replace(text, n, old, new):
    """``text`` with ``old`` replaced by ``new`` in line ``n`` (1-based): a damaged number."""
    lines = text.splitlines(keepends=True)
    assert old in lines[n - 1], (old, lines[n - 1])
    lines[n - 1] = lines[n - 1].replace(old, new, 1)
    return "".join(lines)


def set_json(text, keys, value):
    """An iperf3 -J ``text`` with the value at ``keys`` (a path of keys and list indices)
    set to ``value``, re-written as iperf3 writes it (tab-indented)."""
    import json

    doc = json.loads(text)
    obj = doc
    for key in keys[:-1]:
        obj = obj[key]
    obj[keys[-1]] = value
    return json.dumps(doc, indent="\t") + "\n"


def edit_event(text, event, keys, factor):
    """An iperf3 --json-stream ``text`` whose first ``event`` line has the number at ``keys``
    (a path inside its ``data``) times ``factor``, written back on one line as iperf3 does."""
    import json

    lines = text.splitlines(keepends=True)
    for k, line in enumerate(lines):
        if line.startswith('{"event":"%s"' % event):
            doc = json.loads(line)
            obj = doc["data"]
            for key in keys[:-1]:
                obj = obj[key]
            obj[keys[-1]] = obj[keys[-1]] * factor
            lines[k] = json.dumps(doc, separators=(",", ":")) + "\n"
            return "".join(lines)
    raise AssertionError(f"no {event!r} event")


def duplicate(text, n):
    """``text`` with line ``n`` (1-based) printed twice (a line repeated by a copy)."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[:n] + [lines[n - 1]] + lines[n:])


def drop_json(text, keys):
    """An iperf3 -J ``text`` without the item at ``keys`` (a path of keys and list indices),
    re-written as iperf3 writes it (tab-indented)."""
    import json

    doc = json.loads(text)
    obj = doc
    for key in keys[:-1]:
        obj = obj[key]
    del obj[keys[-1]]
    return json.dumps(doc, indent="\t") + "\n"
