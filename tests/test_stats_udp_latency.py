"""thruput.stats.udp and .latency: UDPmon throughput/loss vs spacing, latency vs size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.stats
import xarray as xr

from thruput.stats import (expected_latency_slope, latency_line, latency_fit, offered_rate,
                           udp_grid, udp_onset)

from . import synthetic


def test_offered_rate():
    assert offered_rate(1472, 12) == pytest.approx(8 * 1472 / 12e-6)
    # Gigabit Ethernet wire overhead: 1472-byte payload every 12.304 us is line rate
    assert offered_rate(1472, 8 * 1538 / 1e9 * 1e6, overhead_bytes=66) == pytest.approx(1e9)
    assert np.isnan(offered_rate(1472, 0))


def test_udp_grid_of_a_synthetic_sweep():
    sweep = synthetic.udp_sweep()
    g = udp_grid(sweep)
    assert g["recv_rate"].dims == ("packet_size", "spacing")
    np.testing.assert_array_equal(g["packet_size"].values, synthetic.UDP_SIZES)
    assert (g["n"].values == 2).all()
    c = g.sel(packet_size=1472, spacing=10)
    assert float(c["recv_rate"]) == synthetic.UDP_LIMIT
    assert float(c["offered_rate"]) == pytest.approx(8 * 1472 / 10e-6)
    # pooled loss: lost / sent over both rows
    lost = sweep["packets_lost"].values[(sweep.packet_size.values == 1472) & (sweep.spacing.values == 10)]
    assert float(c["packets_lost"]) == lost.sum() and float(c["packets_sent"]) == 2000
    assert float(c["loss_fraction"]) == pytest.approx(lost.sum() / 2000)
    assert g["recv_rate"].attrs["units"] == "bit/s" and g["spacing"].attrs["units"] == "us"
    assert g["loss_fraction"].attrs["units"] == "1"


def test_udp_onset_matches_the_model():
    o = udp_onset(udp_grid(synthetic.udp_sweep()))
    for size in synthetic.UDP_SIZES:
        onset = synthetic.expected_loss_onset(size)
        c = o.sel(packet_size=size)
        assert float(c["loss_onset"]) == onset          # 1472 bytes: 23 us; 1000: 15 us
        assert float(c["loss_free_from"]) == onset + 1
        assert float(c["peak_rate"]) == synthetic.UDP_LIMIT
    assert synthetic.expected_loss_onset(1472) == 23


def test_udp_onset_hand_case_with_gaps():
    g = xr.Dataset({
        "recv_rate": (("packet_size", "spacing"), [[1.0, 3.0, 2.0, np.nan, 1.0]]),
        "loss_fraction": (("packet_size", "spacing"), [[0.5, 0.0, 0.01, np.nan, 0.0]]),
    }, coords={"packet_size": [1000], "spacing": [5, 10, 15, 20, 25]})
    o = udp_onset(g).sel(packet_size=1000)
    assert float(o["peak_rate"]) == 3.0 and float(o["peak_spacing"]) == 10
    assert float(o["loss_onset"]) == 15 and float(o["loss_free_from"]) == 25
    # with a 2 % threshold only the first point counts as lossy
    o = udp_onset(g, threshold=0.02).sel(packet_size=1000)
    assert float(o["loss_onset"]) == 5 and float(o["loss_free_from"]) == 10
    # lossy at the largest spacing: never loss-free
    g["loss_fraction"][0, -1] = 0.3
    assert np.isnan(float(udp_onset(g).sel(packet_size=1000)["loss_free_from"]))


def test_fit_latency_agrees_with_linregress():
    rng = np.random.default_rng(5)
    size = np.arange(64, 1473, 64, dtype=float)
    latency = 20 + 0.0231 * size + rng.normal(0, 0.5, size.size)
    fit = latency_line(size, latency)
    ref = scipy.stats.linregress(size, latency)
    assert fit["slope"] == pytest.approx(ref.slope, rel=1e-10)
    assert fit["intercept"] == pytest.approx(ref.intercept, rel=1e-10)
    assert fit["slope_se"] == pytest.approx(ref.stderr, rel=1e-8)
    assert fit["intercept_se"] == pytest.approx(ref.intercept_stderr, rel=1e-8)
    assert fit["r2"] == pytest.approx(ref.rvalue ** 2, rel=1e-10)
    assert fit["n"] == size.size


def test_fit_latency_nan_range_and_short_input():
    fit = latency_line([0, 100, 200, np.nan, 1000], [10, 12, 14, 99, 100], size_range=(0, 500))
    assert fit["n"] == 3 and fit["slope"] == pytest.approx(0.02) and fit["slope_se"] == pytest.approx(0)
    two = latency_line([0, 100], [1, 2])
    assert two["slope"] == pytest.approx(0.01) and np.isnan(two["slope_se"])
    assert np.isnan(latency_line([1], [1])["slope"])
    one_size = latency_line([500, 500, 500], [1, 2, 3])
    assert one_size["n"] == 3 and np.isnan(one_size["slope"]) and np.isnan(one_size["r2"])


def test_latency_fit_beside_seed_001_expected_slope():
    # seed 001: 32-bit 33 MHz PCI on both hosts and Gigabit Ethernet: 0.0232 us/byte expected
    expected = expected_latency_slope([(32, 33e6), 125e6, (32, 33e6)])
    size = np.arange(0, 1500, 100, dtype=float)
    scan = xr.Dataset({"size": ("point", size), "latency_avg": ("point", 30 + 0.0286 * size)})
    out = latency_fit(scan, expected_slope=expected)
    assert float(out["slope"]) == pytest.approx(0.0286)
    assert float(out["slope_ratio"]) == pytest.approx(0.0286 / expected)
    np.testing.assert_allclose(out["residual"].values, 0, atol=1e-9)
    np.testing.assert_allclose(out["expected"].values, 30 + expected * size)
    assert out["slope"].attrs["units"] == "us/byte" and out["fitted"].attrs["units"] == "us"


BUNDLED = Path(__file__).resolve().parents[1] / "data" / "raw" / "udpmon-veth-500m"


@pytest.mark.skipif(not BUNDLED.is_dir(), reason="bundled UDPmon campaign absent")
def test_udp_grid_and_latency_of_the_bundled_campaign():
    import thruput

    ds = thruput.open_campaign(BUNDLED)
    g = ds.thruput.udp_grid()
    size, spacing = ds["packet_size"].values, ds["spacing"].values
    assert int(g["n"].sum()) == int((np.isfinite(size) & np.isfinite(spacing)).sum())
    for s in np.unique(size[np.isfinite(size)]):
        rows = size == s
        for sp in np.unique(spacing[rows]):
            pick = rows & (spacing == sp)
            c = g.sel(packet_size=s, spacing=sp)
            assert float(c["recv_rate"]) == np.median(ds["recv_rate"].values[pick])
            assert float(c["loss_fraction"]) == pytest.approx(
                ds["packets_lost"].values[pick].sum() / ds["packets_sent"].values[pick].sum())
    # the veth pair is shaped to 500 Mbit/s: no frame size is received faster
    o = udp_onset(g)
    assert (o["peak_rate"].values <= ds.attrs["capacity_bps"]).all()
    fit = ds.thruput.latency_fit(file="runs/req-latency-scan.txt")
    pts = ds["scan_file"].values == "runs/req-latency-scan.txt"
    ref = scipy.stats.linregress(ds["scan_size"].values[pts], ds["scan_latency_avg"].values[pts])
    assert float(fit["slope"]) == pytest.approx(ref.slope, rel=1e-9)
    assert int(fit["n"]) == int(pts.sum())
