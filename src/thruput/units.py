"""Exact, table-driven unit conversion for the quantities the source studies print.

Every unit has a canonical spelling (``Mbit/s``, ``MByte/s``, ``KiB``, ``ms``, ``us/byte``)
that belongs to one dimension and carries an exact factor to that dimension's base unit
(bit/s, byte, s, s/byte, Hz, 1). Printed spellings (``Mbits/sec``, ``MBytes/s``, ``Mbps``,
``kBytes``, ``msec``, ``μs``) map to canonical ones through :data:`ALIASES`.

Factors are :class:`fractions.Fraction`, so ``convert(64, "KiB", "byte") == 65536``
exactly and round trips never drift. :func:`convert` returns a float unless asked for the
exact fraction.

kB versus KiB
-------------
The documents write ``KB``, ``kB`` and ``kBytes`` for both 1000 and 1024 bytes. The
*alias table cannot know which*: ``kB``/``MB``/``GB`` are decimal and ``KiB``/``MiB``
binary, and the transcription in ``data/published`` writes the binary unit wherever the
source or tool implies it (iperf ``-w 64k`` = 65536 bytes, Linux sysctls printed in
kbytes = bytes / 1024, Solaris default window 8 kB = 8192 bytes), with the reason in
that row's ``note``. Rates are decimal throughout (iperf's ``Mbits/sec`` is 10^6 bit/s;
seed 000's ``425Mbits/sec or 53.3MBytes/sec`` divides by 8, not by 8.389).
"""

from __future__ import annotations

import re
from fractions import Fraction as F

__all__ = ["UNITS", "ALIASES", "BASE", "canonical", "dimension", "factor", "convert", "to_base",
           "parse_quantity", "UnitError"]


class UnitError(ValueError):
    """An unknown unit, or a conversion between different dimensions."""


_K, _M, _G, _T = F(10**3), F(10**6), F(10**9), F(10**12)
_KI, _MI, _GI = F(2**10), F(2**20), F(2**30)

#: canonical unit -> (dimension, exact factor to the dimension's base unit).
UNITS = {
    # rates; base bit/s
    "bit/s": ("rate", F(1)),
    "kbit/s": ("rate", _K),
    "Mbit/s": ("rate", _M),
    "Gbit/s": ("rate", _G),
    "byte/s": ("rate", F(8)),
    "kByte/s": ("rate", 8 * _K),
    "MByte/s": ("rate", 8 * _M),
    "GByte/s": ("rate", 8 * _G),
    "KiByte/s": ("rate", 8 * _KI),
    "MiByte/s": ("rate", 8 * _MI),
    # sizes; base byte
    "bit": ("size", F(1, 8)),
    "Gbit": ("size", _G / 8),
    "byte": ("size", F(1)),
    "kB": ("size", _K),
    "MB": ("size", _M),
    "GB": ("size", _G),
    "TB": ("size", _T),
    "KiB": ("size", _KI),
    "MiB": ("size", _MI),
    "GiB": ("size", _GI),
    # segments of a stated size are counts, not sizes: see "packet"
    # times; base s
    "ns": ("time", F(1, 10**9)),
    "us": ("time", F(1, 10**6)),
    "ms": ("time", F(1, 10**3)),
    "s": ("time", F(1)),
    "min": ("time", F(60)),
    "h": ("time", F(3600)),
    "day": ("time", F(86400)),
    "week": ("time", F(7 * 86400)),
    "year": ("time", F(8760 * 3600)),  # 365 days, as MTBF-to-failure-rate arithmetic uses
    # inverse rates (UDPmon latency slopes); base s/byte
    "us/byte": ("slope", F(1, 10**6)),
    "ns/byte": ("slope", F(1, 10**9)),
    "s/byte": ("slope", F(1)),
    # frequencies; base Hz
    "Hz": ("frequency", F(1)),
    "MHz": ("frequency", _M),
    "GHz": ("frequency", _G),
    "1/s": ("frequency", F(1)),
    # counts and ratios; base 1
    "1": ("ratio", F(1)),
    "%": ("ratio", F(1, 100)),
    "packet": ("count", F(1)),
    "count": ("count", F(1)),
    "cpu": ("count", F(1)),
    "bit_width": ("width", F(1)),
    "rpm": ("rotation", F(1, 60)),
    # bogus-looking but printed: BogoMIPS is its own dimension
    "BogoMIPS": ("bogomips", F(1)),
}

#: base unit of each dimension
BASE = {"rate": "bit/s", "size": "byte", "time": "s", "slope": "s/byte", "frequency": "Hz",
        "ratio": "1", "count": "count", "width": "bit_width", "rotation": "rpm",
        "bogomips": "BogoMIPS"}

#: printed spelling (case-sensitive: ``Mb`` is not ``MB``) -> canonical unit. The
#: spellings are those of the five source documents and of iperf/ping output.
ALIASES = {
    # bit rates
    "bps": "bit/s", "bits/s": "bit/s", "bit/sec": "bit/s", "bits/sec": "bit/s",
    "kbps": "kbit/s", "kbits/s": "kbit/s", "Kbits/sec": "kbit/s", "kbits/sec": "kbit/s",
    "Kbits/s": "kbit/s", "kbit/sec": "kbit/s",
    "Mbps": "Mbit/s", "Mbits/s": "Mbit/s", "Mbits/sec": "Mbit/s", "Mbit/sec": "Mbit/s",
    "MBits/s": "Mbit/s", "MBit/s": "Mbit/s", "mbits/sec": "Mbit/s", "mbit/s": "Mbit/s",
    "Mbit": "Mbit/s",  # seed 001: "alternate 600/800 Mbit and zero" (a rate)
    "Gbps": "Gbit/s", "Gbits/s": "Gbit/s", "Gbits/sec": "Gbit/s", "GBit/s": "Gbit/s",
    "Gbit/sec": "Gbit/s",
    # byte rates
    "B/s": "byte/s", "Bytes/s": "byte/s", "bytes/s": "byte/s",
    "kB/s": "kByte/s", "KBytes/sec": "kByte/s", "kBytes/s": "kByte/s",
    "MB/s": "MByte/s", "MB/S": "MByte/s", "MB/sec": "MByte/s", "MBytes/s": "MByte/s",
    "MBytes/sec": "MByte/s", "Mbytes/s": "MByte/s", "Mbyte/s": "MByte/s",
    "GB/s": "GByte/s", "GBytes/s": "GByte/s",
    # sizes
    "bits": "bit", "b": "bit", "Bytes": "byte", "bytes": "byte", "B": "byte",
    "kBytes": "kB", "kbytes": "kB", "KB": "kB", "Kbytes": "kB", "KBytes": "kB",
    "MBytes": "MB", "Mbytes": "MB", "Mbyte": "MB", "MByte": "MB", "mB": "MB",
    "GBytes": "GB", "GByte": "GB", "Gbyte": "GB",
    "KByte": "KiB", "KiBytes": "KiB",  # iperf prints "TCP window size: 512 KByte" in 1024s
    # times
    "μs": "us", "µs": "us", "usec": "us", "msec": "ms", "sec": "s", "secs": "s",
    "mins": "min", "hrs": "h", "hr": "h", "hours": "h", "hour": "h",
    "μs/byte": "us/byte", "µs/byte": "us/byte",
    "Mhz": "MHz", "mhz": "MHz",
    "pkts": "packet", "packets": "packet", "pings": "packet",
    "percent": "%",
}

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
#: a number then (after optional space) a unit word; "1.6 MBytes", "64.8kbits/s"
_QUANTITY = re.compile(rf"^\s*(?P<value>{_NUMBER})\s*(?P<unit>[^\s\d][^\s]*)?\s*$")


def canonical(unit):
    """The canonical spelling of ``unit`` (itself if already canonical).

    Raises
    ------
    UnitError
        If the spelling is neither canonical nor a known alias.
    """
    if unit in UNITS:
        return unit
    try:
        return ALIASES[unit]
    except KeyError:
        raise UnitError(f"unknown unit {unit!r}; known: {', '.join(sorted(UNITS))}") from None


def dimension(unit):
    """The dimension (``rate``, ``size``, ``time``, ...) of ``unit``."""
    return UNITS[canonical(unit)][0]


def factor(unit):
    """Exact factor from ``unit`` to its dimension's base unit (a Fraction)."""
    return UNITS[canonical(unit)][1]


def convert(value, from_unit, to_unit, exact=False):
    """Convert ``value`` between two units of the same dimension.

    Parameters
    ----------
    value : float, int, Fraction or array_like
        Quantity in ``from_unit``. Arrays are multiplied by a float factor.
    from_unit, to_unit : str
        Canonical or printed spellings (see :data:`ALIASES`).
    exact : bool, default False
        Return a :class:`fractions.Fraction` (``value`` must then be int, Fraction or a
        decimal string).

    Returns
    -------
    float, Fraction or array_like

    Raises
    ------
    UnitError
        Unknown unit, or the two units measure different things.

    Examples
    --------
    >>> convert(425, "Mbits/sec", "MBytes/s")
    53.125
    >>> convert(64, "KiB", "byte")
    65536.0
    >>> convert("0.0118", "us/byte", "ns/byte", exact=True)
    Fraction(59, 5)
    """
    f_dim, f_fac = UNITS[canonical(from_unit)]
    t_dim, t_fac = UNITS[canonical(to_unit)]
    if f_dim != t_dim:
        raise UnitError(f"cannot convert {from_unit!r} ({f_dim}) to {to_unit!r} ({t_dim})")
    ratio = f_fac / t_fac
    if exact:
        return F(value) * ratio
    # multiply by the numerator, then divide by the denominator: each step is correctly
    # rounded, where multiplying by a rounded reciprocal (x * 0.001) can be off by an ulp
    out = value * ratio.numerator / ratio.denominator
    return float(out) if isinstance(out, (int, float, F)) else out


def to_base(value, unit):
    """``value`` in the base unit of its dimension (bit/s, byte, s, s/byte, ...)."""
    dim = dimension(unit)
    return float(convert(value, unit, BASE[dim]))


def parse_quantity(text):
    """Split a printed quantity like ``"64.8kbits/s"`` or ``"1.6 MBytes"``.

    Returns
    -------
    tuple of (float, str or None)
        The number and the canonical unit (None if no unit was printed).

    Raises
    ------
    UnitError
        If ``text`` is not a number optionally followed by a known unit.

    Examples
    --------
    >>> parse_quantity("476MBits/s")
    (476.0, 'Mbit/s')
    """
    m = _QUANTITY.match(text)
    if not m:
        raise UnitError(f"not a quantity: {text!r}")
    unit = m["unit"]
    return float(m["value"]), (canonical(unit) if unit else None)
