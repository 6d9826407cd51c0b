"""Small helpers shared by the statistics modules (private)."""

from __future__ import annotations

import warnings
from contextlib import contextmanager

import numpy as np
import xarray as xr


def units_of(da, default="1"):
    """The ``units`` attr of ``da`` (``default`` when it has none)."""
    return getattr(da, "attrs", {}).get("units", default)


def labelled(values, dims, coords, units, long_name, **attrs):
    """A DataArray with ``units`` and ``long_name`` set."""
    return xr.DataArray(values, dims=dims, coords=coords,
                        attrs={"units": units, "long_name": long_name, **attrs})


def as_dims(dim, da):
    """``dim`` as a tuple of dimension names of ``da`` (``None`` = all of them)."""
    if dim is None:
        return tuple(da.dims)
    dims = (dim,) if isinstance(dim, str) else tuple(dim)
    missing = [d for d in dims if d not in da.dims]
    if missing:
        raise ValueError(f"{da.name or 'array'} has no dimension {missing}; it has {list(da.dims)}")
    return dims


def cells(da, dims):
    """Stack ``dims`` of ``da`` into one trailing axis ``_sample``; the rest stay as cells.

    Returns the stacked DataArray with dims ``(*other, "_sample")``; ``other`` may be
    empty. Coordinates of the other dims are kept.
    """
    other = [d for d in da.dims if d not in dims]
    stacked = da.stack(_sample=list(dims)) if dims else da.expand_dims("_sample", axis=-1)
    stacked = stacked.drop_vars([c for c in stacked.coords if "_sample" in stacked[c].dims])
    return stacked.transpose(*other, "_sample")


def cell_samples(stacked):
    """Yield ``(index, finite values)`` for every cell of a :func:`cells` result."""
    values = np.asarray(stacked.values, dtype=float)
    flat = values.reshape(-1, values.shape[-1])
    for i, row in enumerate(flat):
        yield i, row[~np.isnan(row)]


def cell_shape(stacked):
    """Shape, dims and coords of the cells of a :func:`cells` result."""
    dims = stacked.dims[:-1]
    coords = {k: v for k, v in stacked.coords.items() if set(v.dims) <= set(dims)}
    return stacked.shape[:-1], dims, coords


@contextmanager
def quiet():
    """Silence NumPy's warnings about all-NaN slices and empty means (they become NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def cell_rngs(seed, n):
    """``n`` independent generators from one seed, one per cell, so that a cell's
    resamples depend only on the seed and its position, not on other cells' sizes."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n)]


def alpha_bounds(confidence):
    """Lower and upper quantiles ``(a/2, 1 - a/2)`` of a two-sided ``confidence`` interval."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    alpha = 1.0 - confidence
    return alpha / 2, 1 - alpha / 2


def percentile_name(q):
    """Variable name of percentile ``q``: 10 -> ``p10``, 2.5 -> ``p2_5``."""
    return "p" + f"{q:g}".replace(".", "_")
