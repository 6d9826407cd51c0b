"""The ds.thruput / da.thruput accessors forward to thruput.stats unchanged."""

from __future__ import annotations

import xarray as xr

import thruput.stats as stats

from . import synthetic


def test_every_public_name_is_exported():
    for name in stats.__all__:
        assert hasattr(stats, name), name
    assert callable(stats.plateau) and callable(stats.bdp)


def test_dataset_accessor_forwards():
    ds = synthetic.campaign(repeats=3)
    xr.testing.assert_identical(ds.thruput.describe(), stats.describe(ds["throughput"], "repeat"))
    xr.testing.assert_identical(ds.thruput.plateau(n_boot=50, tolerance=0.05),
                                stats.plateau(ds["throughput"], n_boot=50, tolerance=0.05))
    xr.testing.assert_identical(ds.thruput.rtt_load(n_boot=20),
                                stats.rtt_load(ds["rtt"], ds["rtt_status"], n_boot=20))
    xr.testing.assert_identical(ds.thruput.smallest_product(), stats.smallest_product(ds["throughput"]))
    xr.testing.assert_identical(ds.thruput.compare(ds, n_boot=20),
                                stats.compare(ds["throughput"], ds["throughput"], n_boot=20))
    assert ds.thruput.metadata_diff(ds) == []
    growth = ds.thruput.rtt_growth(window=3)
    xr.testing.assert_identical(growth, stats.rtt_growth(
        ds["throughput"], ds["rtt"].sel(phase="loaded").median("probe"), window=3))
    per = ds.thruput.periodogram(periods=[1, 2])
    xr.testing.assert_identical(per, stats.periodogram(ds["throughput"], ds["start_time"], periods=[1, 2]))


def test_dataarray_accessor_forwards():
    da = synthetic.campaign(repeats=3)["throughput"]
    xr.testing.assert_identical(da.thruput.describe("repeat", percentiles=(5,)),
                                stats.describe(da, "repeat", percentiles=(5,)))
    xr.testing.assert_identical(da.thruput.bootstrap_ci("repeat", n_boot=30),
                                stats.bootstrap_ci(da, "repeat", n_boot=30))
    xr.testing.assert_identical(da.thruput.best_cells(n=2), stats.best_cells(da, n=2))
    xr.testing.assert_identical(da.thruput.ecdf("repeat"), stats.ecdf(da, "repeat"))


def test_udp_and_tcp_accessors():
    sweep = synthetic.udp_sweep()
    xr.testing.assert_identical(sweep.thruput.udp_onset(), stats.udp_onset(stats.udp_grid(sweep)))
    run = synthetic.tcp_instrumentation()
    xr.testing.assert_identical(run.thruput.tcp_summary(), stats.tcp_summary(run))


def test_a_monitor_dataset_lists_what_applies_to_it_and_finds_its_change_points():
    from thruput.stats.accessor import MONITOR_ONLY
    ds = synthetic.monitor_campaign()
    listed = repr(ds.thruput).split("methods: ")[1].split(", ")
    assert "change_points" in listed and "monitor_product" in listed
    assert not {"plateau", "best_cells", "window_bound", "udp_grid", "rtt_load"} & set(listed)
    assert "change_points" in dir(ds.thruput) and "plateau" not in dir(ds.thruput)
    sweep = repr(synthetic.campaign(repeats=3).thruput)
    assert "plateau" in sweep and not MONITOR_ONLY & set(sweep.split("methods: ")[1].split(", "))
    found = ds.thruput.change_points(n_boot=20)
    xr.testing.assert_identical(found, stats.series_change_points(ds, n_boot=20))
    tcp = found.where(found["test"] == "tcp", drop=True)
    assert tcp.sizes["change"] >= 1
