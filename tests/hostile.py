"""Hostile input for every reader: long runs of digits, dots and blanks.

A regular expression that backtracks (``\\d+\\.?\\d*`` before a literal, ``(.*?)\\s*$``)
takes time quadratic or worse in the length of a line: a few KB of digits in a damaged
log then hold a reader for minutes. :func:`inputs` makes, for one format, 1 MB blobs of
such shapes, alone and spliced into a recorded sample of the format (so that the reader
is past its header when it meets them). ``tests/test_hostile.py`` requires every reader
to finish them; ``python -m benchmarks hostile`` times them.

Run as ``python -m tests.hostile [FORMAT ...] [SIZE]``: reads every input of each FORMAT
(default: all) and prints one JSON line per input (``format``, ``label``, ``seconds``,
``outcome``: ``ok``, ``refused`` (a ThruputError) or ``crash: <exception> at <where>``).
"""

from __future__ import annotations

import gzip
import json
import random
import sys
import time

from .conftest import DATA

#: Size of each hostile input (bytes).
SIZE = 2**20

#: Blob shapes: label -> a function of (size, random) returning text of that size.
SHAPES = {
    "digits": lambda n, r: "1" * n,
    "digits-dots": lambda n, r: "1." * (n // 2),
    "digits-dots-spaces": lambda n, r: "".join(r.choices("0123456789. ", k=n)),
    "spaces": lambda n, r: " " * n,
    "digits-spaces": lambda n, r: "1 " * (n // 2),
    "numbers-lines": lambda n, r: ("1.5 2 " * 13 + "\n") * (n // 79),
    "tabs-letters": lambda n, r: "".join(r.choices("ab1\t=:;,-", k=n)),
}
#: Shapes spliced into a sample (the others only stand alone).
SPLICED = ("digits", "digits-dots", "digits-dots-spaces", "spaces")
#: Sample files that are not of the format (or empty), by name prefix.
NOT_SAMPLES = ("empty", "not")


def samples(name, limit=2):
    """``(file name, bytes with gzip undone)`` of up to ``limit`` recorded samples of
    ``name`` that its reader reads."""
    out = []
    for path in sorted((DATA / name).glob("*")):
        if (not path.is_file() or path.name.endswith(".expected.json") or path.suffix in (".sh", ".md")
                or path.name.startswith(NOT_SAMPLES)):
            continue
        raw = path.read_bytes()
        data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        if read_one(name, data) == "ok":
            out.append((path.name, data))
        if len(out) == limit:
            break
    return out


def splice(data, blob):
    """``data`` with the first digit run of its middle line holding a digit replaced by
    ``blob`` (at the start of that line if it has none)."""
    lines = data.split(b"\n")
    numbered = [k for k, line in enumerate(lines) if any(c in b"0123456789" for c in line)] or [0]
    k = numbered[len(numbered) // 2]
    line = lines[k]
    at = next((i for i, c in enumerate(line) if 48 <= c <= 57), 0)
    end = at
    while end < len(line) and 48 <= line[end] <= 57:
        end += 1
    lines[k] = line[:at] + blob + line[end:]
    return b"\n".join(lines)


def inputs(name, size=SIZE, seed=0):
    """``(label, bytes)`` of every hostile input of format ``name``."""
    r = random.Random(seed)
    blobs = {label: make(size, r).encode() for label, make in SHAPES.items()}
    for label, blob in blobs.items():
        yield label, blob
    for sample, data in samples(name):
        for label in SPLICED:
            yield f"{sample} + {label}", splice(data, blobs[label])


def read_one(name, data):
    """Parse ``data`` as format ``name`` (as the readers see it); ``"ok"``, ``"refused"`` or
    ``"crash: ..."``."""
    from thruput import formats
    from thruput.errors import ThruputError
    from thruput.reader import decode

    module = formats.get(name)
    try:
        module.parse(data if module.BINARY else decode(data))
        module.sniff(decode(data[: formats.HEAD_BYTES]))
    except ThruputError:
        return "refused"
    except Exception as exc:  # noqa: BLE001 - what this harness is looking for
        import traceback
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return f"crash: {type(exc).__name__}: {str(exc)[:200]} at {where.filename}:{where.lineno}"
    return "ok"


def main(argv=None):
    from thruput.formats import REGISTRY

    argv = sys.argv[1:] if argv is None else argv
    names = [a for a in argv if not a.isdigit()] or list(REGISTRY)
    size = next((int(a) for a in argv if a.isdigit()), SIZE)
    for name in names:
        for label, data in inputs(name, size):
            start = time.perf_counter()
            outcome = read_one(name, data)
            print(json.dumps({"format": name, "label": label, "bytes": len(data),
                              "seconds": round(time.perf_counter() - start, 4), "outcome": outcome}),
                  flush=True)


if __name__ == "__main__":
    main()
