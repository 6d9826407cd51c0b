"""What the JSON readers (iperf3 -J, flent, irtt) share: telling a cut-off document from
bad JSON, and a decoder whose integers fit a float."""

from __future__ import annotations

import json
import re

__all__ = ["is_cut_off", "DECODER", "loads"]


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
