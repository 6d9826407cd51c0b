"""Elementary functions that give the same bits on every CPU.

NumPy picks its ``sin``, ``cos``, ``exp`` and ``log`` loops by the CPU's instruction set
(SSE, AVX2, AVX-512), and OpenBLAS its dot-product kernel by the CPU model; each is
accurate to an ulp or two, but not the same ulp. A periodogram computed on two machines
therefore differed in its last bits (1e-12 relative, measured with
``NPY_DISABLE_CPU_FEATURES`` and ``OPENBLAS_CORETYPE``), and with it the hash of a
statistics file, so ``dvc repro`` elsewhere could not be checked against ``dvc.lock``.

These use only IEEE-754 addition, multiplication and division, elementwise (exactly
rounded everywhere, whatever the vector width), and Python's :mod:`decimal` (software,
correctly rounded): the same inputs give the same bits on any machine.
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction
from math import factorial

import numpy as np

__all__ = ["geomspace", "sincos", "dot_rows"]

#: pi/2 to 60 digits (its decimal expansion; the split below is made from it).
_HALF_PI = Fraction("1.57079632679489661923132169163975144209858469968755291048747")


def _split(value, parts, bits):
    """``value`` as ``parts`` floats of at most ``bits`` significant bits each (the last
    rounded), so that ``k * part`` is exact for ``|k| < 2**(53 - bits)``."""
    out = []
    for i in range(parts):
        x = float(value)
        if i < parts - 1:
            m, e = np.frexp(x)
            x = float(np.ldexp(np.trunc(np.ldexp(m, bits)), int(e) - bits))
        out.append(x)
        value -= Fraction(x)
    return tuple(out)


#: pi/2 in three pieces of 26 bits and a last of 53 (Cody and Waite's reduction): each
#: ``k * piece`` is exact for quotients ``k`` below 2**27 (arguments up to ~2e8 rad).
_P1, _P2, _P3, _P4 = _split(_HALF_PI, 4, 26)
#: Taylor coefficients (-1)^k / (2k+1)! and (-1)^k / (2k)!, to degree 19 and 20: on
#: |r| <= pi/4 the first term left out is below 1e-19 of the result.
_SIN = tuple(float(Fraction((-1) ** k, factorial(2 * k + 1))) for k in range(10))
_COS = tuple(float(Fraction((-1) ** k, factorial(2 * k))) for k in range(11))


def _horner(coefficients, z):
    acc = np.full_like(z, coefficients[-1])
    for c in coefficients[-2::-1]:
        acc = acc * z + c
    return acc


def sincos(x):
    """``(sin(x), cos(x))`` of a float array (rad), within 3 ulp of the exact values for
    ``|x| < 2e8`` and bit for bit the same on every CPU.

    ``x`` is reduced to ``r`` in [-pi/4, pi/4] and a quadrant (Cody-Waite with the four
    pieces of pi/2 above), then both are Taylor polynomials in ``r**2`` (Horner).
    """
    x = np.asarray(x, dtype=float)
    k = np.rint(x * (2 / np.pi))
    r = (((x - k * _P1) - k * _P2) - k * _P3) - k * _P4
    z = r * r
    s = _horner(_SIN, z) * r
    c = _horner(_COS, z)
    q = np.mod(k, 4)                    # quadrant: (sin, cos) = (s, c), (c, -s), (-s, -c), (-c, s)
    odd = (q == 1) | (q == 3)
    sin = np.where(odd, c, s)
    cos = np.where(odd, s, c)
    np.negative(sin, out=sin, where=q >= 2)
    np.negative(cos, out=cos, where=(q == 1) | (q == 2))
    return sin, cos


def dot_rows(a, b):
    """``sum(a * b, axis=-1)``: NumPy's pairwise sum along the last axis, not BLAS (whose
    kernel, and so whose rounding, depends on the CPU)."""
    return np.add.reduce(np.ascontiguousarray(a * b), axis=-1)


def geomspace(start, stop, num):
    """``num`` numbers from ``start`` to ``stop`` (both > 0, both included), evenly spaced
    on a log scale, as :func:`numpy.geomspace` but computed in decimal arithmetic at 34
    digits and rounded once: the same floats on every machine."""
    if not (start > 0 and stop > 0):
        raise ValueError(f"geomspace needs positive ends, not {start!r} and {stop!r}")
    num = int(num)
    if num < 1:
        return np.empty(0)
    if num == 1:
        return np.array([float(start)])
    with localcontext() as ctx:
        ctx.prec = 34
        lo, hi = Decimal(float(start)), Decimal(float(stop))
        step = (hi.ln() - lo.ln()) / (num - 1)
        out = [float(lo * (step * i).exp()) for i in range(num - 1)]
    return np.array(out + [float(stop)])
