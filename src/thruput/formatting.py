"""Numbers as a reader reads them: significant digits, never e-notation, always a unit.

``number(8367000.0)`` -> ``"8367000"``; ``rate(8.367e6)`` -> ``"8.37 Mbit/s"``;
``duration(89730)`` -> ``"24.9 h"``; ``value(0.47, "1")`` -> ``"47 %"``. A value that is
not a finite number is ``"–"`` (an empty period, a series without data), never ``nan``.
Pages, tables and ``thruput monitor report`` format with these; the statistics keep
their numbers in base units (bit/s, s, ms, fraction).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MISSING", "duration", "number", "rate", "value"]

#: What a missing number is shown as.
MISSING = "–"
#: Rate units, largest first: (bit/s per unit, name).
RATE_UNITS = ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1.0, "bit/s"))
#: Duration units, largest first: (seconds, name, from how many of them on it is used).
DURATION_UNITS = ((86400.0, "d", 2), (3600.0, "h", 2), (60.0, "min", 2), (1.0, "s", 0))


def _finite(x: object) -> float | None:
    """``x`` as a finite float, else None."""
    try:
        f = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def number(x: float | None, digits: int = 3, sign: str = "") -> str:
    """``x`` with ``digits`` significant digits, positional (``12300``, ``0.0000123``);
    ``sign="+"`` writes a plus on positive numbers. ``"–"`` if not finite."""
    x = _finite(x)
    if x is None:
        return MISSING
    text = np.format_float_positional(x, precision=digits, unique=False, fractional=False, trim="-")
    if text in ("-0", "0"):
        text = "0"
    return ("+" + text) if sign == "+" and x > 0 else text


def rate(bps: float | None, digits: int = 3, unit: str | None = None, sign: str = "") -> str:
    """A rate in bit/s as text in the unit that suits its size (or ``unit``, e.g.
    ``"Mbit/s"``): ``"8.37 Mbit/s"``, ``"15.5 Gbit/s"``."""
    bps = _finite(bps)
    if bps is None:
        return MISSING
    scale = {name: f for f, name in RATE_UNITS}
    if unit is None:
        f, unit = next(((f, u) for f, u in RATE_UNITS if abs(bps) >= f), RATE_UNITS[-1])
    else:
        f = scale[unit]
    return f"{number(bps / f, digits, sign)} {unit}"


def duration(seconds: float | None, digits: int = 3) -> str:
    """Seconds as text in the unit that suits: ``"45 s"``, ``"12.5 min"``, ``"24.9 h"``,
    ``"46.5 d"``."""
    s = _finite(seconds)
    if s is None:
        return MISSING
    for f, unit, least in DURATION_UNITS:
        if abs(s) >= least * f:
            return f"{number(s / f, digits)} {unit}"
    return f"{number(s, digits)} s"


def value(x: float | None, units: str, digits: int = 3) -> str:
    """``x`` in ``units`` (``bit/s``, ``1`` a fraction, ``ms``, ``s``, ...) as text with its
    unit: a rate by :func:`rate`, a fraction in percent, seconds by :func:`duration`."""
    f = _finite(x)
    if f is None:
        return MISSING
    if units == "bit/s":
        return rate(f, digits)
    if units == "1":
        return f"{number(100 * f, digits)} %"
    if units == "s":
        return duration(f, digits)
    return f"{number(f, digits)} {units}".rstrip()
