"""Properties every summary must keep, on random inputs (Hypothesis), and the doctests."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from thruput.stats import bootstrap_ci, describe, ecdf, hodges_lehmann, plateau

finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False)
with_nan = st.one_of(finite, st.just(float("nan")))
samples = arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=with_nan)


@settings(max_examples=60, deadline=None)
@given(samples)
def test_describe_orders_its_statistics(values):
    da = xr.DataArray(values, dims=("cell", "repeat"))
    s = describe(da, "repeat")
    for i in range(values.shape[0]):
        c = s.isel(cell=i)
        finite_row = values[i][np.isfinite(values[i])]
        assert int(c["n"]) == finite_row.size
        if finite_row.size == 0:
            assert np.isnan(float(c["median"]))
            continue
        chain = [float(c[k]) for k in ("min", "p10", "p25", "median", "p75", "p90", "max")]
        assert all(a <= b + 1e-6 * (abs(a) + abs(b) + 1) for a, b in zip(chain, chain[1:]))
        assert float(c["iqr"]) >= 0


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, st.integers(1, 12), elements=finite), st.integers(0, 2**32 - 1))
def test_bootstrap_interval_lies_within_the_sample(values, seed):
    ci = bootstrap_ci(xr.DataArray(values, dims="repeat"), n_boot=50, seed=seed)
    assert values.min() <= float(ci["low"]) <= float(ci["high"]) <= values.max()


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.integers(1, 8), elements=finite),
       arrays(np.float64, st.integers(1, 8), elements=finite),
       st.floats(min_value=-1e6, max_value=1e6))
def test_hodges_lehmann_is_shift_equivariant_and_antisymmetric(a, b, shift):
    base = hodges_lehmann(a, b)
    assert hodges_lehmann(a, b + shift) == pytest.approx(base + shift, abs=1e-6 * (abs(base) + abs(shift) + 1))
    assert hodges_lehmann(b, a) == pytest.approx(-base, abs=1e-6 * (abs(base) + 1))


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.integers(1, 30), elements=with_nan))
def test_ecdf_is_a_distribution(values):
    e = ecdf(xr.DataArray(values, dims="probe"))
    p = e["probability"].values[: int(e["n"])]
    if p.size:
        assert p[-1] == 1.0 and np.all(np.diff(p) > 0)
        assert np.all(np.diff(e["value"].values[: int(e["n"])]) >= 0)


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 3)),
              elements=st.floats(min_value=0, max_value=1e10)))
def test_plateau_onset_is_a_window_on_the_plateau(values):
    windows = 2 ** np.arange(values.shape[0]) * 1024
    da = xr.DataArray(values, dims=("window", "repeat"), coords={"window": windows})
    p = plateau(da, n_boot=20, tolerance=0.1)
    med = np.median(values, axis=1)
    assert float(p["level"]) == med.max()
    onset = int(p["onset"])
    assert med[list(windows).index(onset)] >= 0.9 * med.max()
    assert all(m < 0.9 * med.max() for m, w in zip(med, windows) if w < onset)
    assert float(p["onset_low"]) <= float(p["onset_high"])
    assert str(p["limited_by"].values) in ("window", "capacity", "undetermined")


MODULES = ["summaries", "plateau", "bounds", "load", "udp", "latency", "tcp", "compare", "periodic"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"thruput.stats.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
