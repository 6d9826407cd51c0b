"""thruput.units: exact conversions between the units the source studies print."""

from fractions import Fraction

import numpy as np
import pytest

from thruput import units


@pytest.mark.parametrize("value, src, dst, expected", [
    (425, "Mbits/sec", "MBytes/sec", 53.125),          # seed 000: "425Mbits/sec or 53.3MBytes/sec"
    (170, "Mbits/s", "Mbytes/s", 21.25),
    (64.8, "kbits/s", "MByte/s", 0.0081),
    (64, "KiB", "byte", 65536.0),
    (64, "kB", "byte", 64000.0),
    (8191.999, "KiB", "byte", 8388606.976),            # seed 004's table, bytes/1024
    (1.6, "MiB", "byte", 1677721.6),                    # iperf 2 "1.6 MBytes"
    (22, "Mbytes", "byte", 22e6),
    (6.2, "ms", "s", 0.0062),
    (172, "msec", "us", 172000.0),
    (0.0118, "us/byte", "s/byte", 1.18e-08),
    (2.4, "Gbits/s", "Mbit/s", 2400.0),
    (4.5, "hrs", "min", 270.0),
    (66, "Mhz", "Hz", 66e6),
    (25, "%", "1", 0.25),
])
def test_convert(value, src, dst, expected):
    assert units.convert(value, src, dst) == pytest.approx(expected, rel=1e-15)


def test_convert_exact_round_trip():
    assert units.convert("0.0118", "us/byte", "ns/byte", exact=True) == Fraction(59, 5)
    there = units.convert(Fraction(53125, 1000), "MByte/s", "Mbit/s", exact=True)
    assert there == 425
    assert units.convert(there, "Mbit/s", "MByte/s", exact=True) == Fraction(425, 8)


def test_convert_array():
    out = units.convert(np.array([1.0, 2.5]), "Gbit/s", "Mbit/s")
    np.testing.assert_array_equal(out, [1000.0, 2500.0])


def test_binary_and_decimal_differ():
    assert units.convert(1, "KiB", "kB") == 1.024
    assert units.convert(1, "MiB", "MB") == 1.048576


def test_aliases_are_case_sensitive_where_it_matters():
    assert units.canonical("MBits/s") == "Mbit/s"       # seed 000: "476MBits/s" is bits
    assert units.canonical("MBytes/s") == "MByte/s"
    assert units.canonical("KByte") == "KiB"             # iperf's banner "512 KByte"


def test_wrong_dimension_raises():
    with pytest.raises(units.UnitError, match="cannot convert 'Mbit/s' \\(rate\\) to 'ms' \\(time\\)"):
        units.convert(1, "Mbit/s", "ms")


def test_unknown_unit_lists_known_ones():
    with pytest.raises(units.UnitError, match="unknown unit 'furlong'.*Mbit/s"):
        units.canonical("furlong")


@pytest.mark.parametrize("text, expected", [
    ("64.8kbits/s", (64.8, "kbit/s")),
    ("1.6 MBytes", (1.6, "MB")),
    ("476MBits/s", (476.0, "Mbit/s")),
    ("0.0286 μs/byte", (0.0286, "us/byte")),
    ("5.4e-5", (5.4e-5, None)),
])
def test_parse_quantity(text, expected):
    assert units.parse_quantity(text) == expected


def test_parse_quantity_rejects_words():
    with pytest.raises(units.UnitError, match="not a quantity"):
        units.parse_quantity("Rate decreases")


def test_every_alias_points_to_a_unit():
    assert set(units.ALIASES.values()) <= set(units.UNITS)
    assert set(units.BASE.values()) <= set(units.UNITS)
    for name, (dim, factor) in units.UNITS.items():
        assert dim in units.BASE, name
        assert factor > 0
