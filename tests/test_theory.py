"""thruput.stats.theory against hand-computed values and seed 001's Reno table."""

import math

import numpy as np
import pytest
import xarray as xr

from thruput.stats import theory


def test_bdp():
    # 1 Gbit/s x 177 ms = 22.125 MB: seed 001's "Socket size 22 Mbytes; rtt 177ms"
    assert theory.bdp(1e9, 0.177) == pytest.approx(22.125e6, rel=1e-12)
    # 1 Gbit/s x 0.252 ms = 31500 bytes: seed 000's "about 32kBytes"
    assert theory.bdp(1e9, 0.252e-3) == pytest.approx(31500.0, rel=1e-12)


def test_window_limited_throughput():
    # 25 streams x 128 KiB / 48.6 ms = 25*131072*8/0.0486 = 539.39 Mbit/s (seed 003)
    assert theory.window_limited_throughput(131072, 0.0486, streams=25) == pytest.approx(539390946.5, rel=1e-9)
    assert theory.window_limited_throughput(8192, 0.203e-3) == pytest.approx(322837438.4, rel=1e-9)


def test_broadcasts_over_xarray():
    w = xr.DataArray([8192.0, 65536.0], dims="window", coords={"window": [8192, 65536]})
    out = theory.window_limited_throughput(w, 0.001, streams=2)
    assert isinstance(out, xr.DataArray)
    np.testing.assert_allclose(out.values, [131.072e6, 1048.576e6])


def test_mathis_round_trip():
    # hand: 8*1500*sqrt(1.5)/(0.2*sqrt(5.4e-5)) = 14696.94/(0.2*0.00734847) = 1.0e7
    assert theory.mathis_throughput(1500, 0.2, 5.4e-5) == pytest.approx(1e7, rel=1e-12)
    p = theory.mathis_loss_rate(3.3e8, 1460, 0.05)
    assert theory.mathis_throughput(1460, 0.05, p) == pytest.approx(3.3e8, rel=1e-12)


def test_mathis_delayed_ack_constant():
    c = math.sqrt(3 / 4)
    assert theory.mathis_throughput(1500, 0.1, 1e-4, C=c) == pytest.approx(12000 * c / (0.1 * 0.01))


@pytest.mark.parametrize("rate, window, recovery_s, loss", [
    # seed 001, "TCP (Reno) - Details", rtt ~200 ms, MSS 1500 bytes
    (10e6, 170, 17, 5.4e-5),
    (100e6, 1700, 2 * 60 + 50, 5.4e-7),
    (1e9, 17000, 28 * 60, 5.4e-9),
    (10e9, 170000, 4 * 3600 + 43 * 60, 5.4e-11),
])
def test_reno_table_seed_001(rate, window, recovery_s, loss):
    def sig2(x):
        return float(f"{x:.2g}")
    w = theory.bdp_packets(rate, 0.2, 1500)
    assert sig2(w) == window
    t = theory.reno_recovery_time(rate, 0.2, 1500)
    # the table rounds to two significant figures (it rounds W first: (W/2) x RTT)
    assert sig2(t) == sig2(recovery_s)
    assert abs(sig2(w) / 2 * 0.2 - recovery_s) < 60  # printed to the minute at most
    assert sig2(theory.mathis_loss_rate(rate, 1500, 0.2)) == loss


def test_reno_recovery_mb_ng():
    # seed 001: "rtt 6.2 ms ... Recover in 1.6 s" at 1 Gbit/s: 1e9*0.0062^2/(2*12000) = 1.60167 s
    assert theory.reno_recovery_time(1e9, 6.2e-3) == pytest.approx(1.6016667, rel=1e-6)


def test_bus_rate():
    assert theory.bus_rate(64, 133e6) == 1.064e9
    assert theory.bus_rate(32, 33e6) == 132e6


def test_expected_latency_slope_seed_001():
    # 32 bit 33 MHz PCI: 1e6/132e6 = 0.0075758 us/byte; GigE 1e6/125e6 = 0.008
    s32 = theory.expected_latency_slope([(32, 33e6), 125e6, (32, 33e6)])
    assert s32 == pytest.approx(2 / 132 + 0.008, rel=1e-12)
    assert round(s32, 4) == 0.0232
    # 64 bit PCI at 66.67 MHz: 1e6/533.33e6 = 0.001875 -> "PCI 0.00188", total 0.01175 -> "0.0118"
    s64 = theory.expected_latency_slope([(64, 200e6 / 3), 125e6, (64, 200e6 / 3)])
    assert s64 == pytest.approx(0.01175, rel=1e-12)
    assert round(theory.expected_latency_slope([(64, 200e6 / 3)]), 5) == 0.00188


def test_expected_latency_slope_rejects_zero_rate():
    with pytest.raises(ValueError, match="positive"):
        theory.expected_latency_slope([125e6, 0])


def test_gige_goodput_is_theory():
    """TCP with timestamps: 1448 payload bytes per 1538 on the wire; UDP: 1472."""
    assert theory.gige_goodput() == 1e9 * 1448 / 1538
    assert theory.gige_goodput(protocol="udp") == 1e9 * 1472 / 1538
    assert theory.gige_goodput(9000) == 1e9 * 8948 / 9038
