"""Two campaigns side by side: shifts in the numbers, and changes in the set-up.

Seed 002 measures SLAC to ANL before and after link and window changes; seed 004
compares August with September. :func:`compare` gives, per cell, how much the
throughput moved and whether the move is more than noise; :func:`metadata_diff` lists
what changed in the hosts, kernels, TCP settings and tools, so the two are read
together.

References
----------
.. [1] H. B. Mann, D. R. Whitney, "On a test of whether one of two random variables is
   stochastically larger than the other", Annals of Mathematical Statistics 18(1),
   50-60, 1947.
.. [2] J. L. Hodges, E. L. Lehmann, "Estimates of location based on rank tests",
   Annals of Mathematical Statistics 34(2), 598-611, 1963.
.. [3] B. Efron, R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall,
   1993, ch. 16 (two-sample problems).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from numpy.typing import ArrayLike

from .defaults import CONFIDENCE, N_BOOT, SEED

import json

import numpy as np
import scipy.stats
import xarray as xr

from ._util import alpha_bounds, as_dims, cell_rngs, labelled, units_of
from .load import median_difference
from .summaries import bootstrap_samples

__all__ = ["compare", "hodges_lehmann", "metadata_diff", "flatten_metadata"]


def hodges_lehmann(a: ArrayLike, b: ArrayLike) -> float:
    """Hodges-Lehmann estimate of the shift from sample ``a`` to sample ``b``.

    Parameters
    ----------
    a, b : array_like
        The two samples (same units); NaN values are left out.

    Returns
    -------
    float
        ``median(b_j - a_i)`` over all pairs, units of the samples; NaN if either
        sample is empty.

    Notes
    -----
    The estimator that goes with the Mann-Whitney test [2]_: robust to outliers, and
    unlike the difference of medians it uses every pair of runs. Up to
    :data:`HL_PAIRS_FORMED` pairs the differences are formed and their median taken;
    beyond, the median is selected without forming them (memory of the two samples, not
    of their product: two years of 90-minute runs on one path are 10^8 pairs); it is the
    same float.

    Examples
    --------
    >>> hodges_lehmann([1, 2, 3], [2, 4, 7])
    2.0
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if a.size == 0 or b.size == 0:  # type: ignore[union-attr]
        return np.nan
    if a.size * b.size <= HL_PAIRS_FORMED:  # type: ignore[union-attr]
        return float(np.median(np.subtract.outer(b, a)))
    return _median_difference_selected(np.sort(a), b)


#: Pairs up to which :func:`hodges_lehmann` forms every difference (8 bytes each); the
#: selection is the faster beyond (5000 x 5000 runs: 0.08 s against 1.1 s).
HL_PAIRS_FORMED = 1 << 20


def _median_difference_selected(a, b):
    """``np.median(np.subtract.outer(b, a))`` of ``a`` sorted ascending, without the
    outer array: the middle order statistic(s) of the differences, each found by
    bisecting the floats (:func:`_kth_difference`), averaged as ``np.median`` does."""
    if (np.isposinf(a).any() and np.isposinf(b).any()) or (np.isneginf(a).any() and np.isneginf(b).any()):
        return np.nan                       # (inf - inf: a NaN difference, as np.median says)
    n = a.size * b.size
    low = _kth_difference(a, b, (n - 1) // 2)
    if n % 2:
        return float(low)
    return float(np.mean(np.array([low, _kth_difference(a, b, n // 2)])))


def _kth_difference(a, b, k):
    """The ``k``-th smallest (0-based) of the differences ``b[j] - a[i]`` as float64
    subtraction gives them, ``a`` sorted ascending. Rounding is monotonic, so for each
    ``b[j]`` the differences fall as ``i`` grows; how many are <= ``t`` is found for every
    ``j`` at once by bisection on ``i``, and the smallest ``t`` with more than ``k`` of
    them by bisection on the floats in order (at most 64 steps)."""
    def at_most(t):
        first = np.zeros(b.size, dtype=np.int64)          # first i with b - a[i] <= t
        last = np.full(b.size, a.size, dtype=np.int64)
        while True:
            open_ = first < last
            if not open_.any():
                return int((a.size - first).sum())
            mid = (first + last) // 2
            ok = open_ & (b - a[np.minimum(mid, a.size - 1)] <= t)
            last = np.where(ok, mid, last)
            first = np.where(open_ & ~ok, mid + 1, first)

    lo, hi = _ordered(b.min() - a[-1]), _ordered(b.max() - a[0])
    while lo < hi:
        mid = (lo + hi) // 2
        if at_most(_from_ordered(mid)) > k:
            hi = mid
        else:
            lo = mid + 1
    return _from_ordered(lo)


_SIGN = 1 << 63


def _ordered(x):
    """An int that orders floats as ``<`` does (-0.0 just below 0.0)."""
    bits = int(np.float64(x).view(np.uint64))
    return bits if bits < _SIGN else -1 - (bits - _SIGN)


def _from_ordered(key):
    bits = key if key >= 0 else (-1 - key) + _SIGN
    return float(np.uint64(bits).view(np.float64))


def median_ratio(a, b, n_boot, confidence, rng):
    """``median(b) / median(a)`` and its percentile-bootstrap interval (two samples
    resampled independently, as :func:`~thruput.stats.load.median_difference`); NaN when
    either is empty or the median of ``a`` is not positive."""
    if a.size == 0 or b.size == 0 or not np.median(a) > 0:
        return np.nan, np.nan, np.nan
    lo_q, hi_q = alpha_bounds(confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = bootstrap_samples(b, np.median, n_boot, rng) / bootstrap_samples(a, np.median, n_boot, rng)
    low, high = np.quantile(reps, [lo_q, hi_q])
    return float(np.median(b) / np.median(a)), float(low), float(high)


def compare(a: xr.DataArray, b: xr.DataArray, dim: str | Sequence[str] = "repeat", n_boot: int = N_BOOT,
            confidence: float = CONFIDENCE, seed: int = SEED) -> xr.Dataset:
    """Per-cell comparison of two campaigns' throughput (``b`` relative to ``a``).

    Parameters
    ----------
    a, b : xarray.DataArray
        The same quantity (e.g. ``throughput``, bit/s) from two campaigns ("before" and
        "after"), with the sample dimension ``dim`` (its length may differ) and cell
        coordinates (e.g. window, streams); only cells present in both are compared.
    dim : str or sequence of str, default "repeat"
        Dimension(s) holding each cell's sample.
    n_boot, confidence, seed
        Bootstrap of the difference of medians (resamples, coverage, seed).

    Returns
    -------
    xarray.Dataset
        Per shared cell: ``n_a``, ``n_b`` (count); ``median_a``, ``median_b``,
        ``difference`` (``median_b - median_a``) with ``difference_low`` and
        ``difference_high``, and ``hodges_lehmann`` (shift estimate), all in the units
        of ``a``; ``ratio`` (``median_b / median_a``, 1) with ``ratio_low`` and
        ``ratio_high`` (what to read where the two levels differ by orders of magnitude); ``u`` (Mann-Whitney U of ``b``, 1), ``p_value`` (two-sided, 1) and
        ``prob_superiority`` (``U / (n_a n_b)``: the chance a run of ``b`` beats one of
        ``a``, ties half, 1).

    Notes
    -----
    ``u`` and ``p_value`` are :func:`scipy.stats.mannwhitneyu` (``b`` first, two-sided,
    ``method="auto"``: exact for small samples without ties) [1]_; the shift is
    Hodges-Lehmann's [2]_; the interval of the difference of medians is a two-sample
    percentile bootstrap [3]_, and so is that of their ratio (drawn after the
    difference's resamples, from the same per-cell generator). Cells with fewer than one value in either campaign are
    NaN. No correction for testing many cells is applied: read p-values of a whole
    sweep as a screen, not as proof.
    """
    dims = as_dims(dim, a)
    as_dims(dim, b)
    a, b = xr.align(a, b, join="inner", exclude=dims)
    other = [d for d in a.dims if d not in dims]
    sa = a.stack(_sample=list(dims)).transpose(*other, "_sample")
    sb = b.stack(_sample=list(dims)).transpose(*other, "_sample")
    va = np.asarray(sa.values, dtype=float)
    vb = np.asarray(sb.values, dtype=float)
    shape = va.shape[:-1]
    va, vb = va.reshape(-1, va.shape[-1]), vb.reshape(-1, vb.shape[-1])
    keys = ("n_a", "n_b", "median_a", "median_b", "difference", "difference_low",
            "difference_high", "hodges_lehmann", "u", "p_value", "prob_superiority",
            "ratio", "ratio_low", "ratio_high")
    out = {k: np.full(va.shape[0], np.nan) for k in keys}
    for c, rng in enumerate(cell_rngs(seed, va.shape[0])):
        x, y = va[c][~np.isnan(va[c])], vb[c][~np.isnan(vb[c])]
        out["n_a"][c], out["n_b"][c] = x.size, y.size
        if x.size == 0 or y.size == 0:
            continue
        out["median_a"][c], out["median_b"][c] = np.median(x), np.median(y)
        (out["difference"][c], out["difference_low"][c],
         out["difference_high"][c]) = median_difference(x, y, n_boot, confidence, rng)
        out["hodges_lehmann"][c] = hodges_lehmann(x, y)
        res = scipy.stats.mannwhitneyu(y, x, alternative="two-sided", method="auto")
        out["u"][c], out["p_value"][c] = res.statistic, res.pvalue
        out["prob_superiority"][c] = res.statistic / (x.size * y.size)
        out["ratio"][c], out["ratio_low"][c], out["ratio_high"][c] = median_ratio(x, y, n_boot, confidence, rng)
    coords = {k: v for k, v in a.coords.items() if set(v.dims) <= set(other)}
    units = units_of(a)
    spec = {
        "n_a": ("count", "values in campaign a"), "n_b": ("count", "values in campaign b"),
        "median_a": (units, "median of campaign a"), "median_b": (units, "median of campaign b"),
        "difference": (units, "median b - median a"),
        "difference_low": (units, "lower bootstrap bound of the difference"),
        "difference_high": (units, "upper bootstrap bound of the difference"),
        "hodges_lehmann": (units, "Hodges-Lehmann shift from a to b"),
        "u": ("1", "Mann-Whitney U of b"), "p_value": ("1", "two-sided Mann-Whitney p-value"),
        "prob_superiority": ("1", "P(b > a) + P(b = a)/2"),
        "ratio": ("1", "median b / median a"),
        "ratio_low": ("1", "lower bootstrap bound of the ratio"),
        "ratio_high": ("1", "upper bootstrap bound of the ratio"),
    }
    data = {}
    for k in keys:
        v = out[k].reshape(shape)
        if k in ("n_a", "n_b"):
            v = v.astype(int)
        data[k] = labelled(v, other, coords, *spec[k])
    return xr.Dataset(data, attrs={"n_boot": n_boot, "confidence": confidence, "seed": seed,
                                   "reduced_dims": " ".join(dims)})


def _metadata(obj):
    """A campaign's metadata dict from a dict, a JSON string, or a Dataset's attrs."""
    if isinstance(obj, (xr.Dataset, xr.DataArray)):
        obj = obj.attrs.get("metadata", "{}")
    if isinstance(obj, str):
        obj = json.loads(obj)
    return dict(obj)


def _by_role(meta):
    """Rename ``hosts.<name>`` to ``hosts.source`` / ``hosts.destination`` using ``path``."""
    hosts = meta.get("hosts")
    path = meta.get("path") or {}
    if not isinstance(hosts, dict):
        return meta
    roles = {path.get("source"): "source", path.get("destination"): "destination"}
    renamed = {}
    for name, host in hosts.items():
        role = roles.get(name)
        if role is not None:
            renamed[role] = {"name": name, **(host or {})}
        else:
            renamed[name] = host
    return {**meta, "hosts": renamed}


def flatten_metadata(meta: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested campaign description as ``{"dotted.key": value}`` (lists kept whole)."""
    flat = {}
    for key, value in meta.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten_metadata(value, name + "."))
        else:
            flat[name] = value
    return flat


def metadata_diff(a: Mapping[str, Any] | str | xr.Dataset, b: Mapping[str, Any] | str | xr.Dataset,
                  ignore: Sequence[str] = (), by_role: bool = True) -> list[dict[str, Any]]:
    """What differs between two campaigns' descriptions (``campaign.yaml``).

    Parameters
    ----------
    a, b : dict, str or xarray.Dataset
        The descriptions as dicts, JSON text, or campaign Datasets (their
        ``attrs["metadata"]``).
    ignore : sequence of str, default ()
        Dotted keys, or prefixes of them, left out (e.g. ``("name", "title", "dates")``
        to show only the set-up).
    by_role : bool, default True
        Compare hosts by their role in ``path`` (``hosts.source``,
        ``hosts.destination``) rather than by name, so that a kernel upgrade on the
        sender shows up even when the two campaigns name their hosts differently.

    Returns
    -------
    list of dict
        One row per differing key, sorted by key: ``{"key", "a", "b", "change"}`` with
        ``change`` in ``"changed"``, ``"added"`` (only in ``b``), ``"removed"`` (only
        in ``a``). Missing values are ``None``.

    Notes
    -----
    Nested mappings are compared key by key (``hosts.source.tcp.tcp_rmem``); lists are
    compared whole. A value of ``None`` and a missing key count as different: the
    description says "unknown" in one and nothing in the other.

    Examples
    --------
    >>> metadata_diff({"tools": {"iperf3": "3.9"}}, {"tools": {"iperf3": "3.12"}})
    [{'key': 'tools.iperf3', 'a': '3.9', 'b': '3.12', 'change': 'changed'}]
    """
    ma, mb = _metadata(a), _metadata(b)
    if by_role:
        ma, mb = _by_role(ma), _by_role(mb)
    fa, fb = flatten_metadata(ma), flatten_metadata(mb)

    def ignored(key):
        return any(key == p or key.startswith(p + ".") for p in ignore)

    rows = []
    for key in sorted(set(fa) | set(fb)):
        if ignored(key):
            continue
        if key not in fb:
            rows.append({"key": key, "a": fa[key], "b": None, "change": "removed"})
        elif key not in fa:
            rows.append({"key": key, "a": None, "b": fb[key], "change": "added"})
        elif fa[key] != fb[key]:
            rows.append({"key": key, "a": fa[key], "b": fb[key], "change": "changed"})
    return rows
