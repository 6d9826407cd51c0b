"""Out-of-core statistics: dask-backed campaigns give the NumPy answers (exactly, or
within the sketch's stated bound) and no task ever holds the whole array."""

from __future__ import annotations

import dask
import numpy as np
import pytest
import xarray as xr
from dask.callbacks import Callback

from thruput.stats import grouped_summary, monitor_product, rolling_summary
from thruput.stats.grouped import SKETCH_BINS, aligned_chunks, histogram_sketch, sketch_quantiles

from . import synthetic as syn

CHUNK = 97   # runs per chunk: not a divisor of anything, groups straddle chunks


class LargestResult(Callback):
    """Records the largest number of elements along the first axis of any float task result."""

    def __init__(self):
        super().__init__()
        self.largest = 0
        self.tasks = 0

    def _posttask(self, key, result, dsk, state, id):
        self.tasks += 1
        if isinstance(result, np.ndarray) and result.dtype.kind == "f" and result.ndim:
            self.largest = max(self.largest, result.shape[0])


def lazy(obj):
    """``obj`` with its data variables as dask arrays of CHUNK runs; coordinates (one
    label per run, read in memory by design) stay NumPy, as in a Zarr store's index."""
    if isinstance(obj, xr.DataArray):
        return obj.copy(data=dask.array.from_array(obj.values, chunks=(CHUNK,) + obj.shape[1:]))
    return obj.assign({v: (obj[v].dims, lazy(obj[v]).data, obj[v].attrs) for v in obj.data_vars})


@pytest.fixture(scope="module")
def ds():
    return syn.monitor_campaign()


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def test_rolling_summary_on_dask_is_exact(ds):
    tcp = ds["throughput"].where(ds.test == "tcp", drop=True)
    exact = rolling_summary(tcp, freq="5min", by=("path", "direction", "socket_buffer"))
    with LargestResult() as cb:
        got = rolling_summary(lazy(tcp), freq="5min", by=("path", "direction", "socket_buffer"))
    assert got.attrs["exact"] == 1 and got.attrs["quantile_error_bound"] == 0
    for var in ("n", "median", "p10", "p90", "iqr", "min", "max"):
        np.testing.assert_allclose(got[var], exact[var], rtol=1e-12, err_msg=var)
    np.testing.assert_allclose(got["std"], exact["std"], rtol=1e-6)
    # chunks were cut at bin edges: a task holds one 5-min bin's runs plus a few, never all
    assert 0 < cb.largest < tcp.sizes["run"] // 4


def test_sketch_percentiles_stay_within_one_bin_of_the_exact_values(ds):
    tp = ds["throughput"]
    keys = {"direction": ds["direction"].values, "test": ds["test"].values}
    exact = grouped_summary(tp, keys, percentiles=(1, 10, 50, 90, 99))
    with LargestResult() as cb:
        got = grouped_summary(lazy(tp), keys, percentiles=(1, 10, 50, 90, 99))
    bound = got.attrs["quantile_error_bound"]
    assert got.attrs["exact"] == 0
    assert bound == pytest.approx((float(np.nanmax(tp)) - float(np.nanmin(tp))) / SKETCH_BINS)
    for var in ("p1", "p10", "median", "p90", "p99", "iqr"):
        err = np.nanmax(np.abs(got[var].values - exact[var].values))
        assert err <= (2 if var == "iqr" else 1) * bound, var
    np.testing.assert_array_equal(got["n"], exact["n"])
    np.testing.assert_allclose(got["mean"], exact["mean"], rtol=1e-12)
    np.testing.assert_allclose(got["min"], exact["min"], rtol=0)
    assert cb.largest <= CHUNK


def test_probe_level_summaries_count_every_probe_in_its_runs_group(ds):
    # rtt is run x probe: each probe's RTT belongs to its run's group (direction, 10 min)
    rtt = ds["rtt"].where(ds.test == "ping", drop=True)
    hour = rtt["time"].dt.floor("10min").values
    keys = {"direction": rtt["direction"].values, "hour": hour}
    exact = grouped_summary(rtt, keys, percentiles=(10, 90))
    for direction in ("forward", "reverse"):
        for h in np.unique(hour):
            pick = (keys["direction"] == direction) & (hour == h)
            values = rtt.values[pick].ravel()
            values = values[~np.isnan(values)]
            got = exact.sel(direction=direction, hour=h)
            assert int(got["n"]) == values.size
            np.testing.assert_allclose([got["p10"], got["median"], got["p90"]],
                                       np.percentile(values, [10, 50, 90]), rtol=1e-12)
    on_dask = lazy(rtt).chunk(run=aligned_chunks(hour, CHUNK))
    with LargestResult() as cb:
        blockwise = grouped_summary(on_dask, keys, percentiles=(10, 90))
    assert blockwise.attrs["exact"] == 1 and 0 < cb.largest < rtt.sizes["run"] // 4
    sketch = grouped_summary(lazy(rtt), keys, percentiles=(10, 90), exact=False)
    bound = sketch.attrs["quantile_error_bound"]
    for var in ("n", "mean", "std", "p10", "median", "p90", "min", "max"):
        np.testing.assert_array_equal(blockwise[var], exact[var], err_msg=var)   # bit for bit
    for var in ("n", "mean", "p10", "median", "p90", "min", "max"):
        err = np.nanmax(np.abs(sketch[var].values - exact[var].values))
        assert err <= bound * (var != "n"), var


def test_sketch_quantiles_of_a_known_histogram():
    # 10 values 0.5, 1.5, ... 9.5 in 10 unit bins over [0, 10]: order statistics exact
    counts = np.ones((1, 10), dtype=int)
    q = sketch_quantiles(counts, 0.0, 10.0, [0, 50, 100])
    np.testing.assert_allclose(q, [[0.5, 5.0, 9.5]])
    values = np.arange(10) + 0.5
    counted = histogram_sketch(dask.array.from_array(values, chunks=3), np.zeros(10, int), 1, 0.0, 10.0, bins=10)
    np.testing.assert_array_equal(counted, counts)


def test_aligned_chunks_cut_only_where_labels_change():
    labels = np.repeat([1, 2, 3, 4], [5, 1, 7, 2])
    assert aligned_chunks(labels, 4) == (5, 8, 2)
    assert sum(aligned_chunks(labels, 100)) == 15


def test_monitor_product_on_dask_matches_numpy_without_holding_the_campaign(ds):
    params = {"n_boot": 50, "max_points": 0}
    eager = monitor_product(ds, params)
    lazy_ds = lazy(ds)
    with LargestResult() as cb:
        product = monitor_product(lazy_ds, params)
    assert set(product) == set(eager) and "runs" not in product
    # the largest float result any task held: one series (230 runs), never the campaign
    assert cb.largest < ds.sizes["run"] // 4 and cb.tasks > 0
    for name in ("changes", "cycle", "periodogram", "compare_tcp", "asymmetry_tcp", "gaps"):
        xr.testing.assert_allclose(product[name], eager[name])
    bound = product["summary_tcp"].attrs["quantile_error_bound"]
    assert np.nanmax(np.abs(product["summary_tcp"]["median"] - eager["summary_tcp"]["median"])) <= bound
    np.testing.assert_allclose(product["rolling_tcp"]["median"], eager["rolling_tcp"]["median"], rtol=1e-12)


# --- the summaries used on every campaign ------------------------------------------------

from thruput.stats import bootstrap_ci, describe, ecdf, frequency  # noqa: E402


@pytest.fixture(scope="module")
def sweep():
    tp = syn.campaign(repeats=6)["throughput"]
    return tp, tp.chunk(window=2, streams=2, repeat=2)     # reduced dim spans 3 chunks


def test_describe_per_cell_on_dask_is_exact_and_blockwise(sweep):
    tp, chunked = sweep
    with LargestResult() as cb:
        got = describe(chunked, "repeat")
    xr.testing.assert_allclose(got.drop_attrs(), describe(tp, "repeat").drop_attrs())
    assert got.attrs["exact"] == 1
    assert cb.largest <= 2          # a block of two windows at a time, never the sweep


def test_describe_of_everything_on_dask_is_within_the_sketch_bound(sweep):
    tp, chunked = sweep
    exact, got = describe(tp), describe(chunked)
    bound = got.attrs["quantile_error_bound"]
    assert 0 < bound == pytest.approx((float(tp.max()) - float(tp.min())) / SKETCH_BINS)
    for var in ("p10", "p25", "median", "p75", "p90"):
        assert abs(float(got[var]) - float(exact[var])) <= bound, var
    for var in ("n", "mean", "min", "max"):
        assert float(got[var]) == pytest.approx(float(exact[var]), rel=1e-12), var
    assert float(got["std"]) == pytest.approx(float(exact["std"]), rel=1e-9)


@pytest.mark.parametrize("dim", [None, "repeat"])
def test_frequency_on_dask_is_exact(sweep, dim):
    tp, chunked = sweep
    with LargestResult() as cb:
        got = frequency(chunked, dim, bins=7)
    xr.testing.assert_identical(got, frequency(tp, dim, bins=7))
    assert cb.largest < tp.size


def test_bootstrap_ci_and_ecdf_per_cell_on_dask_match_numpy_draw_for_draw(sweep):
    tp, chunked = sweep
    xr.testing.assert_identical(bootstrap_ci(chunked, "repeat", n_boot=200, seed=3),
                                bootstrap_ci(tp, "repeat", n_boot=200, seed=3))
    xr.testing.assert_identical(ecdf(chunked, "repeat"), ecdf(tp, "repeat"))
    with pytest.raises(ValueError, match="every value at once"):
        ecdf(chunked)


def test_a_chunk_or_a_campaign_without_a_value_gives_empty_groups():
    keys = {"g": np.repeat([0, 1], 4)}
    half = xr.DataArray(np.r_[np.full(4, np.nan), 1.0, 2.0, 3.0, 4.0], dims="run")
    for da in (half, half.chunk(run=4)):         # (the first chunk holds no value)
        got = grouped_summary(da, keys)
        np.testing.assert_array_equal(got["n"], [0, 4])
        np.testing.assert_array_equal(got["median"], [np.nan, 2.5])
    none = grouped_summary(xr.DataArray(np.full(8, np.nan), dims="run").chunk(run=4), keys)
    np.testing.assert_array_equal(none["n"], [0, 0])
    assert none["median"].isnull().all()
