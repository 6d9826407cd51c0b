"""What the JSON readers (iperf3 -J, flent) share: telling a cut-off document from bad JSON."""

from __future__ import annotations

import re

__all__ = ["is_cut_off"]

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
