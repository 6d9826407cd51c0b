"""What the JSON readers (iperf3 -J, flent, irtt, ndt7, pScheduler, esmond) share: a
decoder whose integers fit a float, telling a cut-off document from bad JSON, and
salvaging the complete part of a cut-off one."""

from __future__ import annotations

import json
import re
from typing import NamedTuple

import numpy as np

from ..contract import Ledger, count_lines
from ..errors import ParseError

__all__ = ["is_cut_off", "DECODER", "loads", "WS", "salvage", "Salvaged", "read_document", "Document"]


def _int(text):
    """A JSON integer: an int up to 19 digits (int64's), else a float (``inf`` past about
    308 digits), which the readers' ``float()`` takes without an OverflowError and the
    contract refuses as infinite, naming the line (a damaged log)."""
    return int(text) if len(text.lstrip("-")) <= 19 else float(text)


#: The standard library's decoder, integers through :func:`_int` (``raw_decode`` for
#: documents one after another).
DECODER = json.JSONDecoder(parse_int=_int)


def loads(text):
    """``json.loads`` with :data:`DECODER`'s integers."""
    return json.loads(text, parse_int=_int)


#: JSON's blanks (RFC 8259).
WS = re.compile(r"[ \t\n\r]*")

#: What a document cut off inside a value leaves where the decoder stops: part of a number
#: (``0.``, ``1e``, ``-``) or of a literal (``tru``, ``fal``, ``nu``).
_CUT_VALUE = re.compile(r"[-+.eE0-9]*|t(?:r(?:ue?)?)?|f(?:a(?:l(?:se?)?)?)?|n(?:u(?:ll?)?)?")


def is_cut_off(text, exc):
    """Did decoding ``text`` fail (``exc``, a JSONDecodeError) because the text ends there?

    True when nothing but blanks follows the failure, when a string is cut in the middle
    (nothing after its opening quote holds a newline), or when the failure is inside a
    number or literal that the end of the text cut short.
    """
    rest = text[exc.pos:].strip()
    if not rest:
        return True
    if exc.msg.startswith("Unterminated string"):
        return "\n" not in rest
    return _CUT_VALUE.fullmatch(rest) is not None


class Salvaged(NamedTuple):
    """What :func:`salvage` kept of a cut-off document."""

    #: The top-level object with every complete member (and the complete elements of the
    #: containers it was asked to descend into).
    doc: dict
    #: Offset just past the last complete value or closing bracket.
    end: int
    #: Keys and indices (0-based) to the value that was cut: ``("intervals", 12)``.
    where: tuple


class _Cut(Exception):
    """The text ends (or breaks) inside the value being decoded."""


def salvage(text, pos=0, descend=frozenset(), decoder=DECODER):
    """The complete part of a cut-off JSON object starting at ``pos``, or None if no object
    starts there.

    Members are decoded one by one; the members whose key path is in ``descend`` (tuples
    of keys from the top: ``{("intervals",)}``, ``{("Download",), ("Download",
    "ServerMeasurements")}``) are objects or arrays decoded element by element in turn, so
    that a file cut inside its long list keeps the list's complete elements. Work is one
    pass over the text; depth is bounded by the longest path in ``descend``. ``decoder``:
    a :class:`json.JSONDecoder` (default :data:`DECODER`).
    """
    i = WS.match(text, pos).end()
    if text[i:i + 1] != "{":
        return None
    doc = {}
    progress = [i, ()]  # end of the last complete value, path being decoded
    try:
        _fill(text, i + 1, doc, (), frozenset(descend), progress, decoder)
    except _Cut:
        pass
    return Salvaged(doc, progress[0], progress[1])


def _fill(text, i, out, path, descend, progress, decoder):
    """Decode the members (``out`` a dict) or elements (a list) of the container opened just
    before ``i`` into ``out``; returns the offset past its closing bracket."""
    is_object = isinstance(out, dict)
    close = "}" if is_object else "]"
    while True:
        i = WS.match(text, i).end()
        if text[i:i + 1] == ",":
            i = WS.match(text, i + 1).end()
        if text[i:i + 1] == close:
            progress[0] = i + 1
            return i + 1
        if is_object:
            key, i = _decode(decoder, text, i)
            i = WS.match(text, i).end()
            if not isinstance(key, str) or text[i:i + 1] != ":":
                raise _Cut
            i = WS.match(text, i + 1).end()
        else:
            key = len(out)
        progress[1] = here = path + (key,)
        opener = text[i:i + 1]
        if here in descend and opener in ("{", "["):
            value = {} if opener == "{" else []
            _put(out, key, value)
            i = _fill(text, i + 1, value, here, descend, progress, decoder)
        else:
            value, i = _decode(decoder, text, i)
            _put(out, key, value)
            progress[0] = i


def _decode(decoder, text, i):
    try:
        return decoder.raw_decode(text, i)
    except (json.JSONDecodeError, IndexError) as exc:
        raise _Cut from exc


def _put(out, key, value):
    if isinstance(out, dict):
        out[key] = value
    else:
        out.append(value)


class Document(NamedTuple):
    """The one JSON document of a log (:func:`read_document`)."""

    #: The decoded document, or what was salvaged of a cut-off one.
    doc: object
    #: Offset past its last complete value.
    end: int
    #: What a cut-off file lost ("" when complete).
    lost: str
    #: The line accounting: lines up to ``end`` parsed, the rest skipped.
    ledger: Ledger


def read_document(text, salvaged, decoder=DECODER):
    """Decode a log holding one JSON document; a cut-off one through ``salvaged(text) ->
    (doc, end, lost)`` (built on :func:`salvage`), any other bad JSON a ParseError naming
    its line. The lines after the document's last complete value are skipped ("incomplete
    JSON (file cut off)", or "blank")."""
    n = count_lines(text)  # not split_lines: a list of every line costs 5 times the text
    if not n or not text.strip():
        raise ParseError("empty input", line=1 if n else None)
    try:
        doc, end, lost = decoder.decode(text), len(text.rstrip()), ""
    except json.JSONDecodeError as exc:
        if not is_cut_off(text, exc):
            raise ParseError(f"not valid JSON: {exc.msg}", line=exc.lineno) from None
        doc, end, lost = salvaged(text)
    ledger = Ledger(n)
    last = min(text.count("\n", 0, end) + 1, n)
    ledger.parsed(np.arange(1, last + 1))
    if last < n:
        ledger.skip(np.arange(last + 1, n + 1), "incomplete JSON (file cut off)" if text[end:].strip() else "blank")
    return Document(doc, end, lost, ledger)
