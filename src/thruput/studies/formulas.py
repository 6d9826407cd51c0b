"""The formulas a study's checks may use, and a safe evaluator of them.

A derivation in ``claims.yaml`` is an arithmetic expression over named inputs (published
claims, in SI base units), the named constants of :data:`CONSTANTS` and the functions of
:data:`FUNCTIONS`::

    formula: window_limited_throughput(window, rtt)
    inputs: {window: "000-dm8-32k-window", rtt: "000-dm8-rtt-min"}

:func:`evaluate` parses the expression with :mod:`ast` and walks only numbers, strings
(as function arguments), the four operators, ``**``, unary minus, names and calls of
registered functions: nothing else is evaluated, so a claims file cannot run code. Sizes
are bounded too (:data:`MAX_EXPONENT`, :data:`MAX_MAGNITUDE`, :data:`MAX_FORMULA`): ``9**9**9``,
``10**400`` or a huge string product is refused before it is computed, never left to hang or
to raise OverflowError or MemoryError.

References
----------
.. [1] IEEE 802.3: Ethernet preamble + SFD 8, header 14, FCS 4, inter-frame gap 12 bytes.
.. [2] ANSI T1.105 (SONET line rates); ANSI T1.107 (T3 = 44.736 Mbit/s).
.. [3] RFC 7323: the TCP timestamp option (12 bytes with padding).
"""

from __future__ import annotations

import ast
import math
import operator

from ..errors import ThruputError
from ..stats.theory import (ETH_WIRE_OVERHEAD, GIGE_BPS, IP_UDP_HEADER, TCP_IP_TS_HEADER,
                            gige_goodput)
from ..stats import theory

__all__ = ["CONSTANTS", "FITTED", "FUNCTIONS", "FormulaError", "evaluate", "names", "gige_goodput", "round_sig",
           "half_unit"]


class FormulaError(ThruputError):
    """A formula that does not parse, names an unknown input or function, or fails."""


# Ethernet and IP framing and gige_goodput are physics: thruput.stats.theory owns them.
#: Named constants a formula may use (exact, from the standards).
CONSTANTS = {
    "GIGE_BPS": GIGE_BPS,                # Gigabit Ethernet line rate, bit/s
    "OC3_BPS": 155.52e6,                 # SONET line rates, bit/s [2]_
    "OC12_BPS": 622.08e6,
    "OC48_BPS": 2488.32e6,
    "OC48_PAYLOAD_BPS": 2396.16e6,       # OC-48c SPE less path overhead
    "T3_BPS": 44.736e6,
    "PCI33_HZ": 33e6,                    # as the UDPmon slides compute (the PCI 33 clock is 33.33 MHz)
    "PCI66_HZ": 200e6 / 3,               # PCI 2.1 66 MHz is 66.67 MHz; seed 001's 0.00188 us/byte uses it
    "PCIX133_HZ": 133e6,
    "ETH_WIRE_OVERHEAD": ETH_WIRE_OVERHEAD,
    "TCP_IP_TS_HEADER": TCP_IP_TS_HEADER,
    "IP_UDP_HEADER": IP_UDP_HEADER,
    "TCP_IP_HEADER": 40,                 # IPv4 20 + TCP 20, no options
    "ETH_MTU": 1500,
    "LINUX_INITIAL_RWND_SEGMENTS": 4,    # fitted: see FITTED
    "HOURS_PER_YEAR": 8766,              # 365.25 days
    "BITS_PER_BYTE": 8,
}


#: Constants that are not standards but were read off a study's own figure: a derivation
#: through one of them cannot confirm that figure, so it is never ``reproduced`` (the
#: ledger calls it ``consistent``), and the tests check that no ``reproduced`` row uses one.
FITTED = {
    "LINUX_INITIAL_RWND_SEGMENTS": "set from seed 002's own SYN/ACK trace (Win=5840 = 4 x MSS 1460); "
                                   "Linux 2.4's initial receive window is not documented as 4 segments",
}

#: Bounds of the evaluator: a formula longer than MAX_FORMULA characters, a power with an
#: exponent beyond MAX_EXPONENT, or any intermediate result beyond MAX_MAGNITUDE (or a
#: string longer than MAX_STRING) is refused. Physical formulas stay far inside them.
#: Levels of nesting a formula may have (the published derivations use under ten).
MAX_DEPTH = 100
MAX_FORMULA = 2000
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 1e300
MAX_STRING = 100


def round_sig(x, sig):
    """``x`` rounded to ``sig`` significant figures (the Reno table rounds its W so)."""
    if x == 0:
        return 0.0
    return round(x, int(sig) - 1 - int(math.floor(math.log10(abs(x)))))


def half_unit(value):
    """Half a unit in the last printed digit of ``value`` (53.3 -> 0.05, 5.4e-5 -> 5e-7)."""
    from decimal import Decimal

    exp = Decimal(repr(float(value))).normalize().as_tuple().exponent
    return 0.5 * 10.0 ** exp if exp < 0 else 0.5


def bus_time(width_bits, clock_hz):
    """Time one byte takes on a parallel bus, s/byte: ``1 / bus_rate`` (UDPmon slope term)."""
    return 1.0 / theory.bus_rate(width_bits, clock_hz)


def bogomips(clock_hz):
    """Linux 2.2/2.4's delay-loop calibration on a Pentium 4 or Athlon: two loops per clock
    cycle, so BogoMIPS ~ 2 x the clock in MHz (measured, so within about 1 %)."""
    return 2.0 * clock_hz / 1e6


def link_time(rate_bps):
    """Time one byte takes on a serial link, s/byte."""
    return theory.BITS_PER_BYTE / rate_bps


#: Functions a formula may call: the textbook formulas of :mod:`thruput.stats.theory`
#: (SI units) and a few helpers.
FUNCTIONS = {
    "bdp": theory.bdp,
    "bdp_packets": theory.bdp_packets,
    "window_limited_throughput": theory.window_limited_throughput,
    "mathis_throughput": theory.mathis_throughput,
    "mathis_loss_rate": theory.mathis_loss_rate,
    "reno_recovery_time": theory.reno_recovery_time,
    "bus_rate": theory.bus_rate,
    "bus_time": bus_time,
    "link_time": link_time,
    "bogomips": bogomips,
    "gige_goodput": gige_goodput,
    "round_sig": round_sig,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
}

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _parse(formula):
    if len(str(formula)) > MAX_FORMULA:
        raise FormulaError(f"formula of {len(str(formula))} characters, longer than {MAX_FORMULA}")
    try:
        tree = ast.parse(str(formula), mode="eval").body
    except SyntaxError as exc:
        raise FormulaError(f"formula {formula!r} does not parse: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise FormulaError(f"formula {str(formula)[:60]!r}: nested too deeply or not text") from None
    # the walks below recurse: bound the depth here, not by whatever recursion limit the
    # interpreter has at the time
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise FormulaError(f"formula {str(formula)[:60]!r}: nested too deeply (over {MAX_DEPTH} levels)")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


def names(formula):
    """The input and constant names a formula uses (functions excluded), in order of use."""
    found = []

    def walk(node):
        if isinstance(node, ast.Name):
            found.append(node.id)
        elif isinstance(node, ast.Call):
            for arg in node.args:
                walk(arg)
        else:
            for child in ast.iter_child_nodes(node):
                walk(child)

    try:
        walk(_parse(formula))
    except RecursionError:
        raise FormulaError(f"formula {str(formula)[:60]!r}: nested too deeply") from None
    return list(dict.fromkeys(found))


def evaluate(formula, values):
    """Evaluate ``formula`` with the named ``values``.

    Parameters
    ----------
    formula : str
        An expression: numbers, names, ``+ - * / **``, unary minus, calls of
        :data:`FUNCTIONS` (string arguments allowed, e.g. ``gige_goodput(1500, 'udp')``).
    values : dict
        Name -> number; names not found here are looked up in :data:`CONSTANTS`.

    Returns
    -------
    float

    Raises
    ------
    FormulaError
        Any other syntax, an unknown name or function, or an arithmetic error.
    """
    def _number(x):
        if isinstance(x, str):
            raise FormulaError(f"formula {formula!r}: a string {x[:20]!r} is only a function's argument")
        return x

    def _binary(op, a, b):
        a, b = _number(a), _number(b)
        if isinstance(op, ast.Pow) and abs(b) > MAX_EXPONENT:
            raise FormulaError(f"formula {formula!r}: exponent {b:.6g} beyond {MAX_EXPONENT}")
        if isinstance(op, ast.Pow) and abs(a) > 1 and abs(b) * math.log10(abs(a)) > math.log10(MAX_MAGNITUDE):
            raise FormulaError(f"formula {formula!r}: {a:.6g} ** {b:.6g} beyond {MAX_MAGNITUDE:g}")
        return _BINARY[type(op)](a, b)

    def _bounded(x):
        if isinstance(x, complex):
            raise FormulaError(f"formula {formula!r}: a complex result")
        if isinstance(x, (int, float)) and not isinstance(x, bool) and not abs(x) <= MAX_MAGNITUDE:
            raise FormulaError(f"formula {formula!r}: a result beyond {MAX_MAGNITUDE:g}")
        return x

    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if len(node.value) > MAX_STRING:
                raise FormulaError(f"formula {formula!r}: a string longer than {MAX_STRING} characters")
            return node.value
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            return _bounded(node.value)
        if isinstance(node, ast.Name):
            if node.id in values:
                return values[node.id]
            if node.id in CONSTANTS:
                return CONSTANTS[node.id]
            raise FormulaError(f"formula {formula!r}: unknown name {node.id!r}")
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _bounded(_binary(node.op, ev(node.left), ev(node.right)))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _bounded(_UNARY[type(node.op)](_number(ev(node.operand))))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            if node.func.id not in FUNCTIONS:
                raise FormulaError(f"formula {formula!r}: unknown function {node.func.id!r} "
                                   f"(known: {', '.join(sorted(FUNCTIONS))})")
            return _bounded(FUNCTIONS[node.func.id](*(ev(a) for a in node.args)))
        raise FormulaError(f"formula {formula!r}: {ast.dump(node)[:60]} is not allowed")

    if len(str(formula)) > MAX_FORMULA:
        raise FormulaError(f"formula of {len(str(formula))} characters, longer than {MAX_FORMULA}")
    try:
        result = ev(_parse(formula))
    except FormulaError:
        raise
    except RecursionError:
        raise FormulaError(f"formula {str(formula)[:60]!r}: nested too deeply") from None
    except (ArithmeticError, TypeError, ValueError, MemoryError) as exc:
        raise FormulaError(f"formula {formula!r}: {exc}") from None
    if isinstance(result, str):
        raise FormulaError(f"formula {formula!r} is a string, not a number")
    return float(result)
