"""Rollups built in pieces (``update_rollups`` after each append) equal the rollups built
at once, and equal ``rolling_summary``'s numbers per kind and resolution."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from thruput.campaign.store import open_product, write_product
from thruput.stats.monitor import rolling_summary
from thruput.stats.rollups import rollups, rollups_encoding, update_rollups


def _campaign(seed=1):
    """A SYNTHETIC monitor campaign: 3 days of 10 min slots from mid-day, a day-long gap, a path that
    starts on the last day, TCP (two buffers), UDP and ping, failed runs."""
    rng = np.random.default_rng(seed)
    t0 = np.datetime64("2026-03-01T14:55", "ns")   # (mid-day: the first day's bins start late)
    slots = [s for s in range(3 * 144) if not 150 <= s < 300]
    rows = []
    for s in slots:
        for path in ("a", "b", "c") if s >= 300 else ("a", "b"):
            for test, off in (("tcp", 0), ("udp", 20), ("ping", 40)):
                rows.append((t0 + np.timedelta64(s * 600 + off, "s"), path, test))
    time, path, test = (np.array(c) for c in zip(*rows))
    n = time.size
    ok = rng.uniform(size=n) > 0.05
    return xr.Dataset({
        "throughput": ("run", np.where(test != "ping", rng.uniform(1e7, 5e7, n), np.nan), {"units": "bit/s"}),
        "throughput_sender": ("run", np.where(test == "udp", 5e7, np.nan), {"units": "bit/s"}),
        "jitter": ("run", np.where(test == "udp", rng.gamma(2, 0.1, n), np.nan), {"units": "ms"}),
        "loss_fraction": ("run", np.where(test == "udp", rng.uniform(0, 0.01, n), np.nan)),
        "rtt_median": ("run", np.where(test == "ping", rng.gamma(2, 5, n), np.nan), {"units": "ms"}),
        "ping_transmitted": ("run", np.where(test == "ping", 10.0, np.nan)),
        "ping_received": ("run", np.where(test == "ping", rng.integers(8, 11, n), np.nan)),
        "outcome": ("run", np.where(ok, "ok", "failed")),
    }, coords={"time": ("run", time), "path": ("run", path), "direction": ("run", np.full(n, "forward")),
               "test": ("run", test),
               "socket_buffer": ("run", np.where(test == "tcp", rng.choice([65536.0, 262144.0], n), np.nan)),
               "size": ("run", np.where(test == "ping", 56.0, np.nan))})


def test_rollups_are_rolling_summaries():
    ds = _campaign()
    tables = rollups(ds)
    tcp = ds.isel(run=np.flatnonzero(ds["test"].values == "tcp"))
    tcp = tcp.assign_coords(variant=("run", tcp["socket_buffer"].values))
    values = tcp["throughput"].where(tcp["outcome"] == "ok")
    for freq in ("5min", "1h", "1D"):
        want = rolling_summary(values, freq=freq, by=("path", "direction", "variant"), percentiles=(10, 25, 50, 75, 90))
        got = tables[f"{freq}/tcp_throughput"]
        for var in ("n", "median", "p10", "p25", "p75", "p90", "min", "max", "mean", "std"):
            np.testing.assert_array_equal(got[var].values, want[var].transpose(*got[var].dims).values)
        frame = pd.DataFrame({"path": tcp["path"].values, "variant": tcp["variant"].values,
                              "time": pd.DatetimeIndex(tcp["time"].values).floor(freq),
                              "failed": tcp["outcome"].values != "ok"})
        g = frame.groupby(["path", "variant", "time"])
        for var, want in (("runs", g.size()), ("failed", g["failed"].sum())):
            got_var = got[var].sel(direction="forward").to_series()
            assert (got_var.reindex(want.index) == want).all() and got_var.sum() == want.sum()


@pytest.mark.parametrize("cuts", [(500, 501, 2000), (10, 1500, 1510, 2600)])
def test_rollups_appended_in_pieces_equal_rollups_at_once(cuts, tmp_path):
    ds = _campaign()
    full = rollups(ds)
    tables = {}
    for end in (*cuts, ds.sizes["run"]):
        tables = update_rollups(tables, ds.isel(run=slice(0, end)).chunk({"run": 256}))
        out = write_product(tables, tmp_path / "r.nc", encoding=rollups_encoding(tables))
        tree = open_product(out)
        tables = {n.path.lstrip("/"): n.to_dataset() for n in tree.subtree if n.data_vars}
    assert sorted(tables) == sorted(full)
    for key, want in full.items():
        xr.testing.assert_identical(tables[key], want)
        for var in want.variables:
            if want[var].dtype.kind not in "OU":        # (netCDF reads labels back as <U)
                assert tables[key][var].dtype == want[var].dtype, (key, var)
