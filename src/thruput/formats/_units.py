"""Unit prefixes as the measurement tools print them, converted to SI base units.

iperf 2, iperf3 and friends print amounts of data with binary prefixes (``KByte`` =
1024 byte) and rates in bits with decimal prefixes (``Mbits/sec`` = 10**6 bit/s); a rate
printed in bytes (``iperf -f M``: ``MBytes/sec``) uses binary prefixes again. These are
the conventions of iperf 2's ``unit_snprintf`` (``kConversion`` vs ``kConversionForBits``)
and iperf3's ``unit_snprintf``; they are stated here once so every reader converts alike.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

__all__ = ["BINARY_PREFIX", "DECIMAL_PREFIX", "to_bytes", "to_bits_per_second"]

#: Prefix letter -> factor for amounts of bytes (binary, as iperf prints them).
BINARY_PREFIX = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}

#: Prefix letter -> factor for bits and bit rates (decimal, as iperf prints them).
DECIMAL_PREFIX = {"": 1, "K": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4}


def _scale(value, factor):
    """``value * factor`` without binary rounding of the printed decimal (16.9 G = 16.9e9).

    ``value`` as printed (str) is multiplied exactly, then rounded once to float.
    """
    try:
        return float(Decimal(str(value).strip()) * factor)
    except InvalidOperation:
        return float(value) * factor


def _split(unit):
    """``"MBytes"`` -> ``("M", "byte")``; ``"Kbits/sec"`` -> ``("K", "bit")``."""
    unit = unit.strip()
    for suffix in ("/sec", "/s", "ps"):
        if unit.endswith(suffix):
            unit = unit[: -len(suffix)]
            break
    prefix = unit[:1] if unit[:1].upper() in ("K", "M", "G", "T") else ""
    base = unit[len(prefix):].rstrip("s").lower()
    if base not in ("byte", "bit"):
        raise ValueError(f"unknown unit {unit!r}")
    return prefix.upper(), base


def to_bytes(value, unit):
    """An amount printed as ``value unit`` (``"KByte"``, ``"MBytes"``, ``"Gbits"``) in byte.

    Byte units take binary prefixes, bit units decimal ones (then divided by 8).
    """
    prefix, base = _split(unit)
    if base == "byte":
        return _scale(value, BINARY_PREFIX[prefix])
    return _scale(value, DECIMAL_PREFIX[prefix]) / 8


def to_bits_per_second(value, unit):
    """A rate printed as ``value unit`` (``"Mbits/sec"``, ``"KBytes/sec"``) in bit/s.

    Bit rates take decimal prefixes; byte rates binary ones (times 8), as iperf prints them.
    """
    prefix, base = _split(unit)
    if base == "bit":
        return _scale(value, DECIMAL_PREFIX[prefix])
    return _scale(value, BINARY_PREFIX[prefix] * 8)
