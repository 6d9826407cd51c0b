"""IPDV (RFC 3393), RFC 3550 jitter, loss bursts (Gilbert model) and Jain's fairness index:
hand-computed values, lost probes, NumPy and dask alike, the accessors, and irtt's own
IPDV and loss counts as the reference on recorded irtt files."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

import thruput
import thruput.stats as S

from .conftest import DATA

NAN = np.nan


def _probes(values, units="ms"):
    return xr.DataArray(np.array(values, dtype=float), dims="probe", attrs={"units": units})


def test_ipdv_is_undefined_for_pairs_with_a_lost_packet():
    d = _probes([10, 12, NAN, 11, 15]).assign_coords(probe=np.arange(5))
    out = S.ipdv(d)
    # pairs (0,1) (1,2) (2,3) (3,4): 12-10, lost, lost, 15-11
    np.testing.assert_array_equal(out.values, [2.0, NAN, NAN, 4.0])
    assert out.probe.values.tolist() == [1, 2, 3, 4]  # labelled by the later packet
    assert out.attrs["units"] == "ms" and "3393" in out.attrs["long_name"]


def test_rfc3550_jitter_by_hand():
    # received transit times 10, 12, (lost), 11, 15: |D| = 2, 1, 4 between received packets
    # J: 0, 0 + (2 - 0)/16 = 0.125, carried over the loss, 0.125 + (1 - 0.125)/16 = 0.1796875,
    #    0.1796875 + (4 - 0.1796875)/16 = 0.41845703125
    out = S.jitter_rfc3550(_probes([10, 12, NAN, 11, 15]))
    np.testing.assert_array_equal(out.values, [0.0, 0.125, 0.125, 0.1796875, 0.41845703125])
    lead = S.jitter_rfc3550(_probes([NAN, NAN, 5, 7]))
    np.testing.assert_array_equal(lead.values, [NAN, NAN, 0.0, 0.125])
    np.testing.assert_array_equal(S.jitter_rfc3550(_probes([NAN, 3])).values, [NAN, 0.0])
    np.testing.assert_array_equal(S.jitter_rfc3550(_probes([NAN, NAN])).values, [NAN, NAN])
    # a constant |D| converges to it: J_k = D (1 - (15/16)^k)
    ramp = S.jitter_rfc3550(_probes(np.arange(0, 200, 2.0)))
    assert float(ramp[-1]) == pytest.approx(2 * (1 - (15 / 16) ** 99), rel=1e-12)


def test_loss_bursts_by_hand():
    lost = _probes([0, 1, 1, 0, 0, 1, 0, 1, 1, 1], units="1")
    out = S.loss_bursts(lost, max_length=2)
    # bursts of 2, 1, 3; transitions: 0->1 three times out of 4 pairs starting received,
    # 1->0 twice out of 5 pairs starting lost
    assert float(out.burst_count) == 3
    assert float(out.mean_burst_length) == 2.0
    assert float(out.max_burst_length) == 3
    assert float(out.loss_fraction) == 0.6
    assert float(out.gilbert_p) == 0.75
    assert float(out.gilbert_r) == 0.4
    assert out.burst_length_count.values.tolist() == [1.0, 2.0]  # the 3-burst is in the last bin
    assert out.burst_length.values.tolist() == [1, 2]
    none = S.loss_bursts(_probes([0, 0, NAN, 0], units="1"))
    assert float(none.burst_count) == 0 and np.isnan(float(none.mean_burst_length))
    assert float(none.loss_fraction) == 0.0 and float(none.gilbert_p) == 0.0
    assert np.isnan(float(none.gilbert_r))
    # NaN (padding, duplicates) closes up: 1, NaN, 1 is one burst of 2
    assert float(S.loss_bursts(_probes([1, NAN, 1, 0], units="1")).max_burst_length) == 2
    with pytest.raises(ValueError, match="max_length"):
        S.loss_bursts(lost, max_length=0)


def test_jain_fairness_by_hand():
    x = xr.DataArray([[1.0, 1, 1, 1], [4, 0, 0, 0], [1, 1, NAN, NAN], [0, 0, 0, 0], [3, 1, NAN, NAN]],
                     dims=("run", "stream"), attrs={"units": "bit/s"})
    out = S.jain_fairness(x)
    # equal shares 1; one of four takes all 1/4; padding left out; all zero undefined;
    # (3 + 1)^2 / (2 * (9 + 1)) = 0.8
    np.testing.assert_array_equal(out.values, [1.0, 0.25, 1.0, NAN, 0.8])
    assert out.attrs["units"] == "1"


def test_numpy_and_dask_agree():
    pytest.importorskip("dask")
    rng = np.random.default_rng(1)
    rtt = rng.gamma(2.0, 3.0, size=(3, 400))
    rtt[rng.random(rtt.shape) < 0.1] = NAN
    da = xr.DataArray(rtt, dims=("run", "probe"), attrs={"units": "ms"})
    lazy = da.chunk({"run": 1, "probe": 100})
    for f in (S.ipdv, S.jitter_rfc3550):
        eager, chunked = f(da), f(lazy)
        assert chunked.chunks is not None
        np.testing.assert_array_equal(eager.values, chunked.compute().values)
    lost = xr.DataArray(np.isnan(rtt).astype(float), dims=("run", "probe"))
    eager, chunked = S.loss_bursts(lost), S.loss_bursts(lost.chunk({"run": 1, "probe": 50}))
    xr.testing.assert_identical(eager, chunked.compute())
    streams = xr.DataArray(rng.random((5, 4)), dims=("run", "stream"))
    xr.testing.assert_identical(S.jain_fairness(streams), S.jain_fairness(streams.chunk({"run": 2})).compute())


def test_against_irtt_own_ipdv_and_losses():
    ds = thruput.read(DATA / "irtt" / "0.9.0--netns-loss.json")
    ours = ds.thruput.ipdv()
    theirs = ds.irtt_ipdv_rtt.isel(probe=slice(1, None))
    # irtt gives an IPDV exactly where both consecutive probes came back
    np.testing.assert_array_equal(np.isnan(ours.values), np.isnan(theirs.values))
    np.testing.assert_allclose(ours.values, theirs.values, rtol=0, atol=1e-9, equal_nan=True)
    summary = json.loads(ds.attrs["tool_summary"])
    assert float(np.abs(ours).mean()) == pytest.approx(summary["ipdv_round_trip_mean_ms"], abs=1e-6)
    bursts = ds.thruput.loss_bursts()
    assert float(bursts.loss_fraction) == pytest.approx(summary["packet_loss_percent"] / 100, rel=1e-12)
    assert float((bursts.burst_length_count * bursts.burst_length).sum()) == \
        summary["packets_sent"] - summary["packets_received"]


def test_ping_accessor_drops_duplicates():
    ds = xr.Dataset({"rtt": ("probe", [1.0, 2.0, 2.5, 4.0, NAN, 5.0]),
                     "status": ("probe", ["reply", "reply", "duplicate", "reply", "lost", "reply"])})
    # the duplicate row is dropped, so probes 1 and 3 are neighbours: 2-1, 4-2, lost, lost
    np.testing.assert_array_equal(ds.thruput.ipdv().values, [1.0, 2.0, NAN, NAN])
    bursts = ds.thruput.loss_bursts()
    assert float(bursts.loss_fraction) == 0.2 and float(bursts.burst_count) == 1
    run = xr.Dataset({"stream_throughput": (("run", "stream"), [[2.0, 2.0]])})
    assert run.thruput.jain_fairness().values.tolist() == [1.0]


def test_ping_losses_against_ping_own_counts():
    # iputils ping -O through a peer that stops answering: 5 replies, then 3 lost probes
    ds = thruput.read(DATA / "ping" / "iputils--no-answer-O-netns.out")
    printed = json.loads(ds.attrs["tool_summary"])
    bursts = ds.thruput.loss_bursts(max_length=4)
    assert float(bursts.loss_fraction) == printed["loss_percent"] / 100
    assert float(bursts.burst_count) == 1
    assert float(bursts.max_burst_length) == printed["transmitted"] - printed["received"]
    # 1 of 5 replies with a successor is followed by a loss; 0 of 2 losses with a successor
    # by a reply (the path never recovered)
    assert float(bursts.gilbert_p) == 1 / 5 and float(bursts.gilbert_r) == 0.0
    jumps = ds.thruput.ipdv()
    replies = ds.rtt.values[:5]
    np.testing.assert_array_equal(jumps.values[:4], np.diff(replies))
    assert np.isnan(jumps.values[4:]).all()
