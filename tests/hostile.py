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


# --- the seeded fuzzer: damage at and inside line boundaries ---------------------------

#: Numbers a damaged log may hold: too many digits for int() (4,300) or a float, a sign,
#: an exponent, nothing.
HUGE_NUMBERS = (b"9" * 5000, b"1" + b"0" * 400, b"-1", b"1e999", b"4294967295", b"18446744073709551616",
                b".", b"-", b"nan", b"0" * 30)


def _line_op(lines, r):
    """One damage at line boundaries: cut, drop, duplicate, swap, or a blank/junk line."""
    op = r.choice(("cut", "drop", "dup", "swap", "insert"))
    i = r.randrange(len(lines))
    if op == "cut":
        del lines[i + 1:]
        lines[i] = lines[i][: r.randrange(len(lines[i]) + 1)]
    elif op == "drop" and len(lines) > 1:
        del lines[i]
    elif op == "dup":
        lines.insert(i, lines[i])
    elif op == "swap":
        j = r.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines.insert(i, r.choice((b"", b" ", lines[r.randrange(len(lines))][:20], bytes(r.randbytes(40)))))


def _inline_op(lines, r):
    """One damage inside a line: a digit flipped, a number replaced, bytes inserted."""
    i = r.randrange(len(lines))
    line = lines[i]
    digits = [k for k, c in enumerate(line) if 48 <= c <= 57]
    op = r.choice(("flip", "number", "junk", "delete"))
    if op == "flip" and digits:
        k = r.choice(digits)
        lines[i] = line[:k] + bytes([48 + r.randrange(10)]) + line[k + 1:]
    elif op == "number" and digits:
        k = r.choice(digits)
        end = k
        while end < len(line) and 48 <= line[end] <= 57:
            end += 1
        lines[i] = line[:k] + r.choice(HUGE_NUMBERS) + line[end:]
    elif op == "junk":
        k = r.randrange(len(line) + 1)
        lines[i] = line[:k] + r.choice((bytes(r.randbytes(8)), b"\x00", b"\xff\xfe", b"\r", b"\t", b";", b"[")) + line[k:]
    else:
        k = r.randrange(len(line) + 1)
        lines[i] = line[:k] + line[k + r.randrange(1, 10):]


def _wrap(data, r):
    """The whole file as an archive may hold it: CRLF, UTF-16, gzip (whole or cut)."""
    op = r.choice(("none", "none", "crlf", "utf16", "gzip", "gzip-cut", "bom"))
    if op == "crlf":
        return data.replace(b"\n", b"\r\n")
    if op == "utf16":
        return data.decode("latin-1").encode("utf-16")
    if op == "gzip":
        return gzip.compress(data, mtime=0)
    if op == "gzip-cut":
        packed = gzip.compress(data, mtime=0)
        return packed[: r.randrange(2, len(packed) + 1)]
    if op == "bom":
        return b"\xef\xbb\xbf" + data
    return data


def mutate(data, r):
    """``data`` with one to four damages at or inside line boundaries, then wrapped."""
    lines = data.split(b"\n") or [b""]
    for _ in range(r.randint(1, 4)):
        (_line_op if r.random() < 0.5 else _inline_op)(lines, r)
        if not lines:
            lines = [b""]
    return _wrap(b"\n".join(lines), r)


def all_samples(name):
    """Every recorded sample file of ``name`` (bytes, gzip undone), the foreign ones too."""
    out = []
    for path in sorted((DATA / name).glob("*")):
        if path.is_file() and not path.name.endswith(".expected.json") and path.suffix not in (".sh", ".md"):
            raw = path.read_bytes()
            out.append(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return out


def fuzz_inputs(name, count, seed=0):
    """``count`` damaged copies of the samples of ``name``, the same for the same seed."""
    r = random.Random(f"{name}:{seed}")
    texts = all_samples(name) or [b""]
    for k in range(count):
        yield k, mutate(r.choice(texts), r)


def read_fuzzed(name, data, sniffed=False):
    """``thruput.read_bytes`` of ``data`` (as format ``name``, or sniffed): ``"ok"``,
    ``"flagged"`` (read, and marked truncated or inconsistent), ``"refused"`` or
    ``"crash: ..."``."""
    from thruput.errors import ReaderBug, ThruputError
    from thruput.reader import read_bytes

    try:
        ds = read_bytes(data, format=None if sniffed else name, path="<fuzz>")
    except ReaderBug as exc:  # the reader's own exception, caught and named for the user
        return f"crash: {exc.message}"
    except ThruputError:
        return "refused"
    except Exception as exc:  # noqa: BLE001 - what the fuzzer is looking for
        import traceback
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return f"crash: {type(exc).__name__}: {str(exc)[:200]} at {where.filename}:{where.lineno}"
    return "flagged" if ds.attrs.get("truncated") or not ds.attrs.get("consistent", 1) else "ok"
