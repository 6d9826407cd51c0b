"""Statistics of monitor campaigns: paths watched for weeks on a schedule.

Seed 004 watched CERN <-> RAL in both directions for weeks and asked for percentiles
(10th-90th), standard deviations and frequency distributions, compared August with
September, plotted throughput against socket buffer per period and drew a maintenance
gap as straight lines. These functions answer each of those on the monitor Dataset of
docs/design.md (one ``run`` dimension with ``time``, ``path``, ``direction``, ``test``,
``socket_buffer``, ``size`` coordinates), on NumPy and dask alike:

===================  ==========================================================  ============
function             what                                                        dask
===================  ==========================================================  ============
rolling_summary      median, IQR, p10/p90, count per time bin, path, direction   exact
buffer_curves        throughput vs socket buffer per period                      sketch
udp_tcp_ratio        UDP median over TCP median per socket buffer                sketch
compare_periods      two date ranges: shift of medians with CI, Hodges-Lehmann   per group
direction_asymmetry  reverse vs forward                                          per group
gap_report           slots that did not run, tests that failed and why           coords only
udp_loss_offered     UDP loss, offered (sender) and received rates per series    exact
===================  ==========================================================  ============

"per group" loads one group's runs at a time (one path, direction and test), never the
whole array; "sketch" is :func:`thruput.stats.grouped.grouped_summary`'s mergeable
histogram when groups span chunks (error bound in its attrs).

References
----------
.. [1] L. Cottrell, C. Logg, M. Chhaparia et al., "IEPM-BW: a bandwidth measurement
   and monitoring infrastructure", PAM 2004 (monitoring many paths on a schedule).
.. [2] J. L. Hodges, E. L. Lehmann, "Estimates of location based on rank tests", Annals
   of Mathematical Statistics 34(2), 598-611, 1963.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from numpy.typing import ArrayLike

import json

import numpy as np
import pandas as pd
import xarray as xr

from ..quantities import as_utc
from ._util import units_of
from .compare import compare
from .grouped import aligned_chunks, grouped_summary, is_lazy

__all__ = ["rolling_summary", "compare_periods", "direction_asymmetry", "udp_tcp_ratio",
           "buffer_curves", "gap_report", "missing_slots", "uncovered_slots", "period_labels", "as_utc", "udp_loss_offered",
           "ROLLING_PERCENTILES", "FAILED_OUTCOMES"]

#: Percentiles of the rolling summaries: seed 004's 10th-90th range and the median.
ROLLING_PERCENTILES = (10, 50, 90)
#: Outcomes of a test that did not give a measurement (docs/design.md, runs.csv).
FAILED_OUTCOMES = ("timeout", "refused", "busy", "unreachable", "error")
#: Reason given for missed slots that ``explained`` does not cover.
UNEXPLAINED = "not run (no reason recorded)"


def _labels(da, name):
    """The 1-D NumPy labels of coordinate ``name`` (coordinates are small: one per run)."""
    if name not in da.coords:
        raise ValueError(f"{da.name or 'array'} has no coordinate {name!r}; it has {list(da.coords)}")
    return np.asarray(da[name].values)


def _floor(times, freq):
    return pd.DatetimeIndex(np.asarray(times, "datetime64[ns]")).floor(freq).to_numpy()


def rolling_summary(da: xr.DataArray, time: str = "time", freq: str = "1h",
                    by: Sequence[str] = ("path", "direction"),
                    percentiles: Sequence[float] = ROLLING_PERCENTILES) -> xr.Dataset:
    """Median, IQR, percentiles and count per time bin and group (per hour, per day ...).

    Parameters
    ----------
    da : xarray.DataArray
        One quantity on ``run`` (e.g. TCP ``throughput`` of one socket buffer, bit/s),
        NumPy or dask, with coordinates ``time`` and ``by``.
    time : str, default "time"
        The datetime64 coordinate binned.
    freq : str, default "1h"
        Bin width, a pandas offset (``"1h"``, ``"1D"``, ``"5min"``); bins start at
        multiples of it since 1970-01-01 UTC.
    by : sequence of str, default ("path", "direction")
        Coordinates that split the runs into series.
    percentiles : sequence of float, default (10, 50, 90)

    Returns
    -------
    xarray.Dataset
        On ``(*by, time)`` (``time`` = bin start; every bin from the first to the last,
        empty ones with ``n = 0`` and NaN, so gaps stay gaps): ``n``, ``median``,
        ``iqr``, ``p<q>``, ``mean``, ``std``, ``min``, ``max``. Attrs ``freq`` and
        those of :func:`~thruput.stats.grouped.grouped_summary`.

    Notes
    -----
    Exact on dask too: a campaign in time order is re-chunked so that chunk edges fall
    on bin edges, and each chunk's bins are summarized by one task. Not a moving window:
    bins are fixed, so one run counts in one bin.
    """
    bins = _floor(_labels(da, time), freq)
    keys = {b: _labels(da, b) for b in by}
    keys[time] = bins
    dim = da[time].dims[0]
    if is_lazy(da) and np.all(bins[1:] >= bins[:-1]):
        assert da.chunks is not None   # lazy
        da = da.chunk({dim: aligned_chunks(bins, max(da.chunks[0]))})
    out = grouped_summary(da, keys, percentiles, dim=dim)
    if bins.size:
        full = pd.date_range(np.nanmin(bins), np.nanmax(bins), freq=freq).to_numpy()
        out = out.reindex({time: full})
        out["n"] = out["n"].fillna(0).astype(int)
    out[time].attrs = {"long_name": f"start of the {freq} bin (UTC)"}
    out.attrs["freq"] = freq
    return out


def period_labels(times: ArrayLike, periods: Mapping[str, tuple[Any, Any]]) -> np.ndarray:
    """Name of the period each time falls in (``None`` outside all of them).

    ``periods``: ``{name: (start, end)}``, ISO strings or datetime64, ``[start, end)``.
    """
    times = np.asarray(times, "datetime64[ns]")
    out = np.full(times.shape, None, dtype=object)
    for name, (start, end) in periods.items():
        inside = (times >= as_utc(start)) & (times < as_utc(end))
        out[inside & (out == None)] = name  # noqa: E711  (elementwise)
    return out


def buffer_curves(da: xr.DataArray, periods: Mapping[str, tuple[Any, Any]],
                  by: Sequence[str] = ("path", "direction"), socket_buffer: str = "socket_buffer",
                  time: str = "time", percentiles: Sequence[float] = (10, 50, 90)) -> xr.Dataset:
    """Throughput against socket buffer, per period: seed 004's August vs September.

    Parameters
    ----------
    da : xarray.DataArray
        TCP ``throughput`` (bit/s) on ``run``, NumPy or dask.
    periods : dict of str to (start, end)
        Named date ranges ``[start, end)`` (ISO strings or datetime64).
    by, socket_buffer, time : str
        Coordinates: the series, the requested buffer (byte), the run's time.
    percentiles : sequence of float

    Returns
    -------
    xarray.Dataset
        On ``(*by, period, socket_buffer)``: ``n``, ``min``, ``p<q>``, ``median``,
        ``mean``, ``max``, ``std``, ``iqr`` (seed 004 plots min, max, median and
        average against the buffer).
    """
    keys = {b: _labels(da, b) for b in by}
    keys["period"] = period_labels(_labels(da, time), periods)
    keys[socket_buffer] = _labels(da, socket_buffer)
    out = grouped_summary(da, keys, percentiles, dim=da[time].dims[0])
    out = out.reindex(period=[p for p in periods if p in out["period"].values])
    out[socket_buffer].attrs = {"units": "byte", "long_name": "socket buffer requested"}
    out.attrs["periods"] = repr({k: tuple(str(x) for x in v) for k, v in periods.items()})
    return out


def udp_tcp_ratio(ds: xr.Dataset, var: str = "throughput", by: Sequence[str] = ("path", "direction"),
                  test: str = "test", socket_buffer: str = "socket_buffer") -> xr.Dataset:
    """UDP over TCP median throughput, per series and TCP socket buffer (seed 004's O3).

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign (NumPy or dask).
    var, by, test, socket_buffer : str
        Names in ``ds``.

    Returns
    -------
    xarray.Dataset
        On ``(*by, socket_buffer)``: ``tcp_median``, ``udp_median`` (units of ``var``),
        ``ratio`` (``udp_median / tcp_median``, 1), ``tcp_n``, ``udp_n`` (count).

    Notes
    -----
    UDP is sent at a fixed rate without congestion control; TCP's rate is bounded by
    ``socket_buffer / RTT`` and by its reaction to loss. A ratio well above 1 at small
    buffers and near 1 at large ones says the TCP runs were window-limited.
    """
    da = ds[var]
    kinds = _labels(da, test)
    tcp = grouped_summary(da, {**{b: _labels(da, b) for b in by},
                               socket_buffer: np.where(kinds == "tcp", _labels(da, socket_buffer), np.nan)},
                          dim=da[test].dims[0])
    udp = grouped_summary(da, {**{b: np.where(kinds == "udp", _labels(da, b), None) for b in by}},
                          dim=da[test].dims[0])
    udp = udp.reindex({b: tcp[b].values for b in by})
    units = units_of(da)
    out = xr.Dataset({
        "tcp_median": tcp["median"], "tcp_n": tcp["n"],
        "udp_median": udp["median"].broadcast_like(tcp["median"]),
        "udp_n": udp["n"].fillna(0).astype(int).broadcast_like(tcp["n"]),
    })
    out["ratio"] = out["udp_median"] / out["tcp_median"]
    out["ratio"].attrs = {"units": "1", "long_name": "UDP median / TCP median throughput"}
    out["tcp_median"].attrs = {"units": units, "long_name": "median TCP throughput"}
    out["udp_median"].attrs = {"units": units, "long_name": "median UDP throughput"}
    out[socket_buffer].attrs = {"units": "byte", "long_name": "TCP socket buffer requested"}
    return out


def _group_samples(da, masks, by):
    """Per distinct ``by`` key: the values under each mask (loaded one group at a time)."""
    keys = pd.DataFrame({b: _labels(da, b) for b in by})
    dim = da[by[0]].dims[0] if by else da.dims[0]
    out = {}
    for key, rows in keys.groupby(list(by), sort=True).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        picked = []
        for mask in masks:
            idx = rows[mask[rows]]
            picked.append(np.asarray(da.isel({dim: idx}).values, dtype=float))
        out[key] = picked
    return out


def _padded(samples, by, which, units):
    """``{key: [a, b]}`` as a DataArray on ``(*by, sample)`` (NaN padding)."""
    keys = sorted(samples)
    width = max((s[which].size for s in samples.values()), default=0)
    values = np.full((len(keys), max(width, 1)), np.nan)
    for i, k in enumerate(keys):
        values[i, :samples[k][which].size] = samples[k][which]
    index = pd.MultiIndex.from_tuples(keys, names=list(by))
    da = xr.DataArray(values, dims=("group", "sample"),
                      coords={"group": index}, attrs={"units": units})
    return da.unstack("group") if len(by) else da


def _histograms(samples, by, bins):
    """Counts of a and b on shared bins, per group."""
    every = np.concatenate([np.concatenate(s) for s in samples.values()] or [np.array([])])
    every = every[np.isfinite(every)]
    edges = np.histogram_bin_edges(every if every.size else [0, 1], bins=bins)
    keys = sorted(samples)
    counts = np.zeros((2, len(keys), edges.size - 1), dtype=int)
    for i, k in enumerate(keys):
        for j in range(2):
            x = samples[k][j]
            counts[j, i] = np.histogram(x[np.isfinite(x)], bins=edges)[0]
    return counts, edges


def compare_periods(da: xr.DataArray, period_a: tuple[Any, Any], period_b: tuple[Any, Any],
                    by: Sequence[str] = ("path", "direction"), time: str = "time", n_boot: int = 1000,
                    confidence: float = 0.95, seed: int = 0, bins: int = 20) -> xr.Dataset:
    """Two date ranges of one campaign compared, per series (August vs September).

    Parameters
    ----------
    da : xarray.DataArray
        One quantity on ``run`` (NumPy or dask), with ``time`` and ``by`` coordinates;
        select one test (and socket buffer) first.
    period_a, period_b : (start, end)
        ``[start, end)`` as ISO strings or datetime64; ``b`` is compared to ``a``.
    by : sequence of str, default ("path", "direction")
    time : str, default "time"
    n_boot, confidence, seed
        Bootstrap of the difference of medians.
    bins : int, default 20
        Bins of the two distributions (shared by all series and both periods).

    Returns
    -------
    xarray.Dataset
        On ``by``: everything :func:`thruput.stats.compare` returns (``median_a``,
        ``median_b``, ``difference`` with ``difference_low``/``difference_high``,
        ``hodges_lehmann``, ``u``, ``p_value``, ``prob_superiority``, ``n_a``,
        ``n_b``); on ``(*by, bin)``: ``count_a``, ``count_b`` (count) with
        ``bin_low``, ``bin_high`` (units of ``da``): both distributions.

    Notes
    -----
    Reuses :func:`thruput.stats.compare` (Mann-Whitney, Hodges-Lehmann [2]_, two-sample
    bootstrap) with each period's runs as one sample. Runs of a monitor campaign are
    serially correlated (cross traffic lingers), so the intervals are optimistic.
    """
    t = _labels(da, time).astype("datetime64[ns]")
    in_a = (t >= as_utc(period_a[0])) & (t < as_utc(period_a[1]))
    in_b = (t >= as_utc(period_b[0])) & (t < as_utc(period_b[1]))
    samples = _group_samples(da, (in_a, in_b), tuple(by))
    units = units_of(da)
    a = _padded(samples, by, 0, units)
    b = _padded(samples, by, 1, units)
    out = compare(a, b, dim="sample", n_boot=n_boot, confidence=confidence, seed=seed)
    counts, edges = _histograms(samples, by, bins)
    for j, name in enumerate(("a", "b")):
        flat = xr.DataArray(counts[j], dims=("group", "bin"),
                            coords={"group": pd.MultiIndex.from_tuples(sorted(samples), names=list(by))})
        out[f"count_{name}"] = flat.unstack("group").transpose(*by, "bin")
        out[f"count_{name}"].attrs = {"units": "count", "long_name": f"runs in the bin, period {name}"}
    out = out.assign_coords(
        bin_low=("bin", edges[:-1], {"units": units, "long_name": "lower bin edge"}),
        bin_high=("bin", edges[1:], {"units": units, "long_name": "upper bin edge"}))
    out.attrs.update({"period_a": " / ".join(map(str, period_a)),
                      "period_b": " / ".join(map(str, period_b))})
    return out


def direction_asymmetry(da: xr.DataArray, by: Sequence[str] = ("path",), direction: str = "direction",
                        n_boot: int = 1000, confidence: float = 0.95, seed: int = 0) -> xr.Dataset:
    """Reverse against forward, per series: is the path faster one way?

    Parameters
    ----------
    da : xarray.DataArray
        One quantity on ``run`` (one test, one socket buffer), NumPy or dask.
    by : sequence of str, default ("path",)
    direction : str, default "direction"
        Coordinate with ``"forward"`` and ``"reverse"``.
    n_boot, confidence, seed
        As :func:`compare_periods`.

    Returns
    -------
    xarray.Dataset
        On ``by``: :func:`thruput.stats.compare` of forward (``a``) and reverse
        (``b``), plus ``ratio`` (``median_b / median_a``, 1).

    Notes
    -----
    Seed 004 found RAL -> CERN "messy" and CERN -> RAL "smoother"; a ratio away from 1
    with a difference interval excluding 0 says the two directions differ, not why
    (cross traffic on one direction, an asymmetric route, different hosts).
    """
    d = _labels(da, direction)
    samples = _group_samples(da, (d == "forward", d == "reverse"), tuple(by))
    units = units_of(da)
    out = compare(_padded(samples, by, 0, units), _padded(samples, by, 1, units),
                  dim="sample", n_boot=n_boot, confidence=confidence, seed=seed)
    out["ratio"] = out["median_b"] / out["median_a"]
    out["ratio"].attrs = {"units": "1", "long_name": "median reverse / median forward"}
    out.attrs.update({"a": "forward", "b": "reverse"})
    return out


def missing_slots(slot: Any, time: Any, path: Any = None) -> xr.Dataset:
    """The slots of a schedule that did not run, per path: the definition of a gap.

    Parameters
    ----------
    slot : array of int
        Each test's slot number (negative slots are ignored).
    time : array of datetime64
        Each test's start, UTC.
    path : array of str, optional
        Each test's path (``None``: one path, named ``""``).

    Returns
    -------
    xarray.Dataset
        On ``gap``, in path then slot order: ``gap_path``, ``first_slot``, ``slots``
        (count), ``gap_start`` and ``gap_last`` (datetime64, UTC: when the first and the
        last missing slot were due) and ``gap_end`` (when the next slot that ran was due:
        the start of its first test).

    Notes
    -----
    On each path, a slot is missing when no test of that path has it, between the path's
    first and last slot; a gap is a run of consecutive missing slots. A slot that ran is
    placed at the start of its first test, and a missing slot ``k`` between the slots
    ``i`` and ``j`` that ran either side was due at
    ``t_i + (k - i) (t_j - t_i) / (j - i)``: interpolated, so that a schedule that
    drifted, or one inferred from an archive, still places it right. ``thruput campaign
    check`` (:mod:`thruput.monitor.gaps`) and the monitor page (:func:`gap_report`) both
    report these gaps. Only the gaps are walked, never every slot (a slot number is the
    file's, up to 18 digits).
    """
    slot = np.asarray(slot, dtype=np.int64).ravel()
    time = np.asarray(time, "datetime64[ns]").ravel().astype(np.int64)
    names = np.full(slot.size, "", dtype=object) if path is None else np.asarray(path).ravel().astype(str)
    rows = []
    for name in sorted(set(names.tolist())):
        pick = np.flatnonzero((names == name) & (slot >= 0))
        order = pick[np.lexsort((time[pick], slot[pick]))]
        s, t = slot[order], time[order]
        first_of = np.r_[True, s[1:] != s[:-1]]         # each slot's first test
        slots, times = s[first_of], t[first_of]
        for i in np.flatnonzero(np.diff(slots) > 1):
            step = (times[i + 1] - times[i]) / (slots[i + 1] - slots[i])
            first, last = int(slots[i] + 1), int(slots[i + 1] - 1)
            due = [int(times[i] + step * (k - slots[i])) for k in (first, last)]
            rows.append((name, first, last - first + 1, *due, int(times[i + 1])))
    cols: list[Any] = list(zip(*rows)) if rows else [[]] * 6
    when = [np.array(c, dtype=np.int64).astype("datetime64[ns]") for c in cols[3:]]
    return xr.Dataset({
        "gap_path": ("gap", np.array(cols[0], dtype=str), {"units": "1", "long_name": "path"}),
        "first_slot": ("gap", np.array(cols[1], int), {"units": "1", "long_name": "first missing slot"}),
        "slots": ("gap", np.array(cols[2], int), {"units": "count", "long_name": "slots missing"}),
        "gap_start": ("gap", when[0], {"long_name": "first missing slot due (UTC)"}),
        "gap_last": ("gap", when[1], {"long_name": "last missing slot due (UTC)"}),
        "gap_end": ("gap", when[2], {"long_name": "next slot due (UTC)"}),
    })


def slot_steps(gaps: xr.Dataset) -> np.ndarray:
    """Nanoseconds between the due times of consecutive missing slots of each gap of
    :func:`missing_slots` (int64; 0 for a gap of one slot)."""
    span = (np.asarray(gaps["gap_last"].values, "datetime64[ns]")
            - np.asarray(gaps["gap_start"].values, "datetime64[ns]")).astype(np.int64)
    # (as pandas divides a Timedelta: whole nanoseconds)
    return np.array([(pd.Timedelta(int(s), "ns") / max(int(n) - 1, 1)).value
                     for s, n in zip(span.tolist(), np.asarray(gaps["slots"].values).tolist())], dtype=np.int64)


def uncovered_slots(n: int, start: int, step: int, spans: Sequence[tuple[int, int]]) -> tuple:
    """``(count, first, last)`` of the slots ``0..n-1`` (due at ``start + step * k``, ns)
    that no span ``(from, to)`` (ns, inclusive) covers; count 0 when all are. Each span
    covers one run of slots, found by division: no walk over the slots (a gap of 10^9
    missing slots costs what a gap of one does); the runs are sorted and merged."""
    runs = []
    for lo, hi in spans:
        if step == 0:
            a, b = (0, n - 1) if lo <= start <= hi else (1, 0)
        elif step > 0:      # lo <= start + step * k <= hi, k whole
            a, b = -((start - lo) // step), (hi - start) // step
        else:
            a, b = -((start - hi) // step), (lo - start) // step
        a, b = max(a, 0), min(b, n - 1)
        if a <= b:
            runs.append((a, b))
    merged: list[list[Any]] = []
    for a, b in sorted(runs):
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    covered = sum(b - a + 1 for a, b in merged)
    if covered == n:
        return 0, None, None
    first = 0 if not merged or merged[0][0] > 0 else merged[0][1] + 1
    last = n - 1 if not merged or merged[-1][1] < n - 1 else merged[-1][0] - 1
    return n - covered, first, last


def explained_spans(explained: Sequence[Mapping[str, Any]], path: str) -> list[tuple[int, int]]:
    """``(from, to)`` (ns since 1970, UTC) of the ``explained`` entries that apply to
    ``path``: those naming it and those naming no path."""
    return [(int(as_utc(e["from"]).astype(np.int64)), int(as_utc(e["to"]).astype(np.int64)))
            for e in explained if "from" in e and e.get("path") in (None, path)]


def gap_report(ds: xr.Dataset, interval_s: float, explained: Sequence[Mapping[str, Any]] = (),
               outcome: str = "outcome", reason: str = "reason",
               slot: str = "slot", time: str = "time") -> xr.Dataset:
    """Slots that did not run, and tests that failed with their reason.

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign (only its coordinates and ``outcome``/``reason`` are read).
    interval_s : float
        The schedule's interval between slots, s (kept in the attrs).
    explained : sequence of dict, default ()
        ``campaign.yaml``'s ``explained`` entries: ``{"from", "to", "reason"}``, and
        optionally ``path`` (else every path).

    Returns
    -------
    xarray.Dataset
        On ``gap`` (:func:`missing_slots`: runs of consecutive slots without a test of a
        path): ``gap_path``, ``gap_start``, ``gap_end`` (datetime64, UTC: when the first
        missing slot was due and when the next slot that ran was due), ``first_slot``,
        ``slots`` (count), ``gap_reason``.
        On ``failure`` (every test that ran but failed): ``failure_time``,
        ``failure_run``, ``failure_path``, ``failure_direction``, ``failure_test``,
        ``failure_outcome``, ``failure_reason``, ``failure_source``. Attrs: ``slots_expected``
        (from the first slot seen to the last),
        ``slots_run``, ``tests``, ``tests_failed`` (counts), and where ``ds`` has
        ``tool_checks_failed``: ``tests_disagreeing`` (tests with a failed check of their
        tool's own totals against their data) and ``tests_disagreeing_by_test`` (JSON).

    Notes
    -----
    Gaps are those of :func:`missing_slots` (per path; an archive whose slots are
    numbered from a ``dates.start`` before its first log has no gap before that log); a
    slot that started but whose every test failed is not a gap but a list of failures.
    The reason of a gap is that of the first ``explained`` entry (of its path, or of no
    path) whose range holds the due time of one of its slots; where none does it is
    :data:`UNEXPLAINED` (``thruput campaign check`` warns of every slot no entry covers).
    """
    slots = np.asarray(ds[slot].values, dtype=int)
    times = np.asarray(ds[time].values, "datetime64[ns]")
    seen = np.unique(slots)
    lo, last = (int(seen.min()), int(seen.max())) if seen.size else (0, -1)
    gaps = missing_slots(slots, times, ds["path"].values if "path" in ds.variables else None)
    steps = slot_steps(gaps)
    why = []
    for k, name in enumerate(gaps["gap_path"].values.tolist()):
        n, start = int(gaps["slots"].values[k]), int(gaps["gap_start"].values[k].astype(np.int64))
        hit = [e for e in explained if "from" in e and e.get("path") in (None, name)
               and uncovered_slots(n, start, int(steps[k]), explained_spans([e], name))[0] < n]
        why.append(hit[0].get("reason", "") if hit else UNEXPLAINED)
    out = np.asarray(ds[outcome].values).astype(str)
    failed = np.flatnonzero(out != "ok")

    def col(name):
        return np.asarray(ds[name].values)[failed].astype(str) if name in ds.variables else np.full(failed.size, "")

    return xr.Dataset({
        **{name: gaps[name].variable for name in ("gap_start", "gap_end", "first_slot", "slots")},
        "gap_reason": ("gap", np.array(why, str), {"units": "1", "long_name": "why (campaign.yaml explained)"}),
        "gap_path": gaps["gap_path"].variable,
        "failure_time": ("failure", times[failed], {"long_name": "test start (UTC)"}),
        "failure_run": ("failure", col("run"), {"units": "1", "long_name": "run id"}),
        "failure_path": ("failure", col("path"), {"units": "1", "long_name": "path"}),
        "failure_direction": ("failure", col("direction"), {"units": "1", "long_name": "direction"}),
        "failure_test": ("failure", col("test"), {"units": "1", "long_name": "test"}),
        "failure_outcome": ("failure", out[failed], {"units": "1", "long_name": "outcome"}),
        "failure_reason": ("failure", col(reason), {"units": "1", "long_name": "the tool's message"}),
        "failure_source": ("failure", col("source"), {"units": "1", "long_name": "its log (empty: none written)"}),
    }, attrs={"interval_s": float(interval_s), "slots_expected": last - lo + 1, "slots_run": int(seen.size),
              "tests": int(out.size), "tests_failed": int(failed.size), **_disagreeing(ds)})


def _disagreeing(ds):
    """Counts of the runs whose tool's own totals disagree with their data, if recorded."""
    if "tool_checks_failed" not in ds.variables:
        return {}
    bad = np.asarray(ds["tool_checks_failed"].values) > 0
    tests, counts = np.unique(np.asarray(ds["test"].values).astype(str)[bad], return_counts=True)
    return {"tests_disagreeing": int(bad.sum()),
            "tests_disagreeing_by_test": json.dumps(dict(zip(tests.tolist(), counts.tolist())))}


#: What :func:`udp_loss_offered` summarises: output prefix -> (variable, long name).
UDP_QUANTITIES = {"loss": ("loss_fraction", "fraction of the datagrams lost"),
                  "offered": ("throughput_sender", "rate offered (the sender's)"),
                  "received": ("throughput", "rate received (the receiver's)")}


def udp_loss_offered(ds: xr.Dataset, freq: str = "1h", by: tuple[str, ...] = ("path", "direction"),
                     time: str = "time", test: str = "test", outcome: str = "outcome") -> xr.Dataset:
    """UDP loss and the rate offered against the rate received, per series: over the
    whole campaign and per time bin.

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign (NumPy or dask) with ``loss_fraction`` (1),
        ``throughput_sender`` and ``throughput`` (bit/s); only its ok UDP runs count.
    freq : str, default "1h"
        Bin width of the per-bin series (:func:`rolling_summary`).
    by : sequence of str, default ("path", "direction")

    Returns
    -------
    xarray.Dataset
        On ``by``: ``n`` (ok UDP runs), ``loss_median``, ``loss_mean``, ``loss_p90`` (1),
        ``offered_median``, ``received_median`` (bit/s), ``received_over_offered`` (1, the
        medians' ratio). On ``(*by, time)`` (every bin from the first to the last; empty
        ones ``bin_n`` 0 and NaN): ``bin_n``, ``bin_loss_median``, ``bin_loss_mean``,
        ``bin_offered_median``, ``bin_received_median``. Empty (no variables) without
        UDP runs.

    Notes
    -----
    UDP is sent at a fixed rate without congestion control: the sender's rate is the
    load offered to the path, the receiver's what it carried; on a path offered more
    than its capacity, received / offered is about 1 - loss. A run whose receiver got
    nothing has a received rate of 0 and a loss of 1; one whose receiver's report never
    came back has both NaN (counted in neither). The loss is each run's
    ``lost / total`` as the receiver counted it; the bin's mean weighs runs equally.
    """
    keep = (np.asarray(ds[test].values) == "udp") & (np.asarray(ds[outcome].values).astype(str) == "ok")
    names = [v for v, _ in UDP_QUANTITIES.values()]
    if not keep.any() or any(v not in ds for v in names):
        return xr.Dataset(attrs={"freq": freq})
    sub = ds.isel({ds[test].dims[0]: np.flatnonzero(keep)})
    keys = {b: _labels(sub[names[0]], b) for b in by}
    out = xr.Dataset()
    for prefix, (var, long_name) in UDP_QUANTITIES.items():
        units = "1" if prefix == "loss" else "bit/s"
        whole = grouped_summary(sub[var], keys, (50, 90), dim=ds[test].dims[0])
        binned = rolling_summary(sub[var], time=time, freq=freq, by=by, percentiles=(50,))
        stats = ("median", "mean", "p90") if prefix == "loss" else ("median",)
        for stat in stats:
            out[f"{prefix}_{stat}"] = whole[stat].assign_attrs(units=units, long_name=f"{stat} {long_name}")
        for stat in ("median", "mean") if prefix == "loss" else ("median",):
            out[f"bin_{prefix}_{stat}"] = binned[stat].assign_attrs(
                units=units, long_name=f"{stat} {long_name} in the {freq} bin")
        if prefix == "loss":
            out["n"] = whole["n"].assign_attrs(units="count", long_name="ok UDP runs")
            out["bin_n"] = binned["n"].assign_attrs(units="count", long_name=f"ok UDP runs in the {freq} bin")
    out["received_over_offered"] = (out["received_median"] / out["offered_median"]).assign_attrs(
        units="1", long_name="median received rate / median offered rate")
    out[time].attrs = {"long_name": f"start of the {freq} bin (UTC)"}
    out.attrs["freq"] = freq
    return out
