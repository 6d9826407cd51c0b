"""The rollups store (``write_rollups``, ``append_rollups``): built window by window from a
lazily read campaign, and appended after each new day, it holds what ``rollups`` gives
for the whole campaign at once."""

import numpy as np
import pytest
import xarray as xr

from thruput.stats.rollups import (
    append_rollups,
    open_rollup,
    open_rollups,
    rollups,
    write_rollups,
)

from .test_stats_rollups_incremental import _campaign as _unordered


def _campaign():
    """test_stats_rollups_incremental's campaign in time order, as a store holds it."""
    ds = _unordered()
    return ds.isel(run=np.argsort(ds["time"].values, kind="stable"))


def _equal(got, want):
    """Counts exact, floats allclose (NaN where NaN), same labels and bins."""
    assert sorted(got) == sorted(want)
    for key, w in want.items():
        g = got[key]
        for d in ("path", "direction", "variant", "time"):
            np.testing.assert_array_equal(g[d].values, w[d].values, err_msg=f"{key} {d}")
        for var in w.data_vars:
            assert g[var].dims == w[var].dims and g[var].dtype == w[var].dtype, (key, var)
            if w[var].dtype.kind in "iu":
                np.testing.assert_array_equal(g[var].values, w[var].values, err_msg=f"{key} {var}")
            else:
                np.testing.assert_allclose(g[var].values, w[var].values, rtol=1e-12, equal_nan=True,
                                           err_msg=f"{key} {var}")
            assert g[var].attrs == w[var].attrs, (key, var)
        assert g.attrs == w.attrs, key


def _day_ends(ds):
    """Run index of each day's end (the store is in time order)."""
    days = ds["time"].values.astype("datetime64[D]")
    return np.flatnonzero(days[1:] != days[:-1]) + 1


@pytest.mark.parametrize(("window", "chunk"), [(700, 100), (700, 4096), (1 << 19, 4096)])
def test_store_built_in_windows_equals_rollups_at_once(window, chunk, tmp_path, monkeypatch):
    """Windows of 700 runs; tables written every 100 bins (several windows' at once) or at the end."""
    from thruput.campaign import store

    monkeypatch.setattr(store, "TABLE_CHUNK", chunk)
    ds = _campaign()
    write_rollups(ds.chunk({"run": 256}), tmp_path / "r.zarr", runs=window)
    _equal(open_rollups(tmp_path / "r.zarr"), rollups(ds))


def test_store_appended_day_by_day_equals_a_full_build(tmp_path):
    """N days built, then each later day appended: the store equals a build of N+1 days
    (the third day brings path c, which makes the store be built again)."""
    ds = _campaign()
    ends = list(_day_ends(ds)) + [ds.sizes["run"]]
    out = tmp_path / "r.zarr"
    write_rollups(ds.isel(run=slice(0, ends[0])).chunk({"run": 256}), out)
    why = []
    for end in ends[1:]:
        part = ds.isel(run=slice(0, end))
        got = append_rollups(part.chunk({"run": 256}), out)
        why.append(got["rebuilt"])
        assert got["runs"] == end
        _equal(open_rollups(out), rollups(part))
    assert why[0] == "" and "new labels" in why[1]
    assert open_rollup(out, "1h", "ping_rtt")["path"].values.tolist() == ["a", "b", "c"]


def test_append_within_a_day_and_nothing_new(tmp_path):
    ds = _campaign()
    out = tmp_path / "r.zarr"
    n = ds.sizes["run"]
    write_rollups(ds.isel(run=slice(0, n - 100)), out)
    assert append_rollups(ds.isel(run=slice(0, n - 37)), out)["rebuilt"] == ""
    assert append_rollups(ds, out)["rebuilt"] == ""
    assert append_rollups(ds, out)["rebuilt"] == ""          # (no new run: nothing written)
    _equal(open_rollups(out), rollups(ds))


def test_a_run_inserted_before_the_last_rebuilds(tmp_path):
    ds = _campaign()
    out = tmp_path / "r.zarr"
    n = ds.sizes["run"]
    keep = np.r_[0:1000, 1001:n - 50]               # (run 1000 arrives late, with the last ones)
    write_rollups(ds.isel(run=keep), out)
    got = append_rollups(ds, out)
    assert "not those it was built from" in got["rebuilt"]
    _equal(open_rollups(out), rollups(ds))


def test_other_freqs_rebuild(tmp_path):
    ds = _campaign()
    out = tmp_path / "r.zarr"
    write_rollups(ds.isel(run=slice(0, 1500)), out, freqs=("1h",))
    got = append_rollups(ds, out, freqs=("5min", "1h", "1D"))
    assert got["rebuilt"] == "built with other freqs or percentiles"
    _equal(open_rollups(out), rollups(ds))
    xr.testing.assert_equal(open_rollup(out, "1h", "tcp_throughput", "2026-03-01T16:00", "2026-03-01T18:00"),
                            rollups(ds)["1h/tcp_throughput"].sel(time=slice("2026-03-01T16:00", "2026-03-01T17:00")))


def test_pipeline_rollups_into_a_store_and_update(tmp_path, capsys):
    """``thruput pipeline rollups IN.zarr OUT.rollups.zarr``, then ``--update`` after runs
    were appended to the campaign's store."""
    from thruput.campaign.store import put_attrs, resize_runs, write_region, write_store
    from thruput.cli import main

    ds = _campaign()
    ds = ds.assign_coords(run=np.array([f"r{i:05d}" for i in range(ds.sizes["run"])]))
    ds.attrs = {"campaign": "synthetic", "campaign_kind": "monitor"}
    store, out = tmp_path / "c.zarr", tmp_path / "c.rollups.zarr"
    cut = int(np.searchsorted(ds["time"].values, np.datetime64("2026-03-04T00:00")))
    write_store(ds.isel(run=slice(0, cut)), store)
    assert main(["pipeline", "rollups", str(store), str(out)]) == 0
    _equal(open_rollups(out), rollups(ds.isel(run=slice(0, cut))))
    resize_runs(store, ds, ds.sizes["run"])
    write_region(ds.isel(run=slice(cut, None)), store, cut)
    put_attrs(store, ds.attrs)
    assert main(["pipeline", "rollups", str(store), str(out), "--update"]) == 0
    assert "appended" in capsys.readouterr().out
    _equal(open_rollups(out), rollups(ds))


def test_store_built_from_a_campaign_store_read_lazily(tmp_path):
    """From a campaign store opened lazily, the label and number columns are read with Zarr
    straight from the store (a column computed on, through xarray), giving what xarray
    gives; the rollups store built from it equals rollups at once."""
    from thruput.campaign.store import (
        _stored_column,
        compute_chunks,
        label_codes,
        open_store,
        run_values,
        write_store,
    )

    ds = _campaign()
    ds = ds.assign_coords(run=[f"r{i:05d}" for i in range(ds.sizes["run"])])
    write_store(ds, tmp_path / "c.zarr")
    lazy = open_store(tmp_path / "c.zarr", chunks=compute_chunks(tmp_path / "c.zarr"))
    part = lazy.isel(run=slice(5, lazy.sizes["run"] - 7))
    loaded = part.compute()
    for name in ("test", "path", "outcome", "direction", "socket_buffer", "size", "time", "throughput"):
        assert _stored_column(part, name) is not None, name
    for name in ("test", "path", "outcome", "direction", "socket_buffer", "size"):
        got, want = label_codes(part, name, runs=500), label_codes(loaded, name, runs=500)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    for name in ("time", "throughput", "rtt_median"):
        np.testing.assert_array_equal(run_values(part, name, 10, 900), loaded[name].values[10:900])
    changed = part.assign(throughput=part["throughput"] * 2)
    assert _stored_column(changed, "throughput") is None
    np.testing.assert_array_equal(run_values(changed, "throughput"), loaded["throughput"].values * 2)
    renumbered = part.assign_coords(run=part["run"].values[::-1])
    assert _stored_column(renumbered, "throughput") is None
    every_other = lazy.isel(run=slice(0, None, 2))
    assert _stored_column(every_other, "path") is None
    np.testing.assert_array_equal(label_codes(every_other, "path")[1], label_codes(every_other.compute(), "path")[1])
    write_rollups(part, tmp_path / "r.zarr", runs=700)
    _equal(open_rollups(tmp_path / "r.zarr"), rollups(loaded))


def test_runs_are_read_from_the_store_only_where_they_are_and_nowhere_else(monkeypatch):
    """A Dataset's runs are found in their store only as one range in order, none of their
    ids elsewhere (a store with an id twice is read through xarray)."""
    import pandas as pd
    import zarr

    from thruput.campaign import store

    monkeypatch.setattr(store, "LABEL_WINDOW", 3)
    ids = zarr.array(np.arange(8))
    assert store._runs_at(ids, pd.Index([2, 3, 4, 5])) == 2
    assert store._runs_at(ids, pd.Index([0])) == 0
    assert store._runs_at(ids, pd.Index([3, 5])) is None
    assert store._runs_at(ids, pd.Index([6, 7, 8])) is None
    twice = zarr.array(np.array([0, 1, 2, 3, 0, 1, 2, 3]))
    assert store._runs_at(twice, pd.Index([2, 3])) is None
    assert store._runs_at(zarr.array(np.array(["a", "b", "c", "d"], dtype=object), dtype=str), pd.Index(["b", "c"])) == 1
