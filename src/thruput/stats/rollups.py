"""Rollups of a monitor campaign: per path, direction, test (and socket buffer or ping
size) and fixed time bin, the distribution of the runs, computed once.

esmond (perfSONAR's archive) keeps summaries at fixed resolutions so that a year of many
paths is drawn from a few thousand rows, not from every run; :func:`rollups` does the same
at :data:`FREQS` (5 minutes, 1 hour, 1 day). The pipeline's ``rollups-monitor`` stage
writes them to ``data/processed/<c>.rollups.nc`` (:func:`rollups_encoding`, one group per
resolution and series kind, e.g. ``1h/ping_rtt``); pages and ``thruput monitor report``
read a resolution lazily with :func:`open_rollup`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os
    from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from .monitor import rolling_summary

__all__ = ["rollups", "rollups_encoding", "open_rollup", "throughput_delay", "FREQS", "KINDS", "PERCENTILES"]

#: Resolutions of the rollups (pandas offsets; bins start at multiples since 1970 UTC).
FREQS = ("5min", "1h", "1D")
#: Series kinds: name -> (test, variable, what splits a test's runs besides path and
#: direction: its ``variant`` coordinate).
KINDS = {
    "tcp_throughput": ("tcp", "throughput", "socket_buffer"),
    "udp_throughput": ("udp", "throughput", None),
    "udp_offered": ("udp", "throughput_sender", None),      # the load offered: the sender's rate
    "udp_jitter": ("udp", "jitter", None),
    "ping_rtt": ("ping", "rtt_median", "size"),
}
#: Percentiles of every bin (the median is ``median``).
PERCENTILES = (10, 25, 50, 75, 90)


def _loss(sub, test, bins, keys):
    """Per group and bin: ``runs`` (tests started, any outcome), ``failed`` (not ``ok``)
    and ``loss``: ping, probes lost / sent; UDP, datagrams lost / sent (the mean of the
    runs' fractions); TCP, failed runs / runs."""
    frame = pd.DataFrame({**keys, "time": bins, "failed": np.asarray(sub["outcome"].values) != "ok"})
    if test == "ping":
        frame["sent"] = np.asarray(sub["ping_transmitted"].values, float)
        frame["lost"] = frame["sent"] - np.asarray(sub["ping_received"].values, float)
    elif test == "udp":
        frame["loss"] = np.asarray(sub["loss_fraction"].values, float)
    g = frame.groupby(list(keys) + ["time"], sort=True)
    out = pd.DataFrame({"runs": g.size(), "failed": g["failed"].sum()})
    if test == "ping":
        sent = g["sent"].sum(min_count=1)
        out["loss"] = g["lost"].sum(min_count=1) / sent.where(sent > 0)
    elif test == "udp":
        out["loss"] = g["loss"].mean()
    else:
        out["loss"] = out["failed"] / out["runs"]
    return xr.Dataset.from_dataframe(out)


def rollups(ds: xr.Dataset, freqs: Sequence[str] = FREQS,
            percentiles: Sequence[float] = PERCENTILES) -> dict[str, xr.Dataset]:
    """Every rollup of a monitor campaign.

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign, NumPy or dask (per-run coordinates are read whole; the
        values chunk by chunk, :func:`~thruput.stats.monitor.rolling_summary`).
    freqs : sequence of str
        Bin widths.
    percentiles : sequence of float

    Returns
    -------
    dict of str to xarray.Dataset
        ``"<freq>/<kind>"`` (:data:`KINDS`) -> on ``(path, direction, variant, time)``:
        ``n`` (ok runs), ``median``, ``p<q>``, ``min``, ``max``, ``mean``, ``std``,
        ``runs``, ``failed``, ``loss``; every bin from the first to the last (empty bins:
        ``n`` 0, NaN). ``variant`` is the socket buffer (TCP) or ping size (bytes), 0
        where the test has none.
    """
    test = np.asarray(ds["test"].values)
    outcome = np.asarray(ds["outcome"].values)
    out = {}
    for kind, (name, var, split) in KINDS.items():
        idx = np.flatnonzero(test == name)
        if idx.size == 0 or var not in ds:
            continue
        sub = ds.isel(run=idx)
        variant = np.nan_to_num(np.asarray(sub[split].values, float)) if split else np.zeros(idx.size)
        sub = sub.assign_coords(variant=("run", variant, {"long_name": split or "none", "units": "byte"}))
        values = sub[var].where(xr.DataArray(outcome[idx] == "ok", dims=sub[var].dims))
        values = values.assign_coords({c: sub[c] for c in ("time", "path", "direction", "variant")})
        keys = {"path": np.asarray(sub["path"].values), "direction": np.asarray(sub["direction"].values),
                "variant": variant}
        for freq in freqs:
            summary = rolling_summary(values, freq=freq, by=("path", "direction", "variant"),
                                      percentiles=percentiles)
            bins = pd.DatetimeIndex(np.asarray(sub["time"].values, "datetime64[ns]")).floor(freq).to_numpy()
            extra = _loss(sub, name, bins, keys).reindex_like(summary)
            summary = summary.drop_vars([v for v in ("p50", "iqr") if v in summary])
            summary["runs"] = extra["runs"].fillna(0).astype(int)
            summary["failed"] = extra["failed"].fillna(0).astype(int)
            summary["loss"] = extra["loss"].astype(float)
            summary["loss"].attrs = {"units": "1", "long_name": _LOSS[name]}
            summary["median"].attrs.update(units=sub[var].attrs.get("units", ""),
                                           long_name=sub[var].attrs.get("long_name", var))
            summary.attrs.update({"kind": kind, "test": name, "variable": var, "freq": freq,
                                  "units": sub[var].attrs.get("units", "")})
            out[f"{freq}/{kind}"] = summary
    return out


_LOSS = {"ping": "probes lost / probes sent", "udp": "mean datagram loss fraction of the ok runs",
         "tcp": "failed runs / runs"}


def rollups_encoding(tables: Mapping[str, xr.Dataset]) -> dict[str, dict[Hashable, Any]]:
    """The netCDF encoding of :func:`rollups` written as one file (group ``/<freq>/<kind>``,
    by :func:`thruput.campaign.store.write_product`): chunked and compressed along ``time``
    so that a window of a long campaign reads a few chunks."""
    encoding = {}
    for name, table in tables.items():
        enc = {}
        for var in table.data_vars:
            chunks = tuple(min(s, 4096) if d == "time" else s for d, s in zip(table[var].dims, table[var].shape))
            enc[var] = {"zlib": True, "complevel": 4, "chunksizes": chunks}
        encoding[f"/{name}"] = enc
    return encoding


def open_rollup(path: str | os.PathLike[str], freq: str, kind: str, start: Any = None,
                end: Any = None) -> xr.Dataset:
    """One rollup (``freq``, ``kind``) of a file written with :func:`rollups_encoding`, lazily,
    the bins of ``[start, end)`` only; then loaded (a window is small)."""
    with xr.open_dataset(path, group=f"{freq}/{kind}") as ds:
        if start is not None or end is not None:
            ds = ds.sel(time=slice(start, end))
        if end is not None:                     # [start, end): the bin at end is left out
            ds = ds.isel(time=np.flatnonzero(ds["time"].values < np.datetime64(pd.Timestamp(end), "ns")))
        return ds.load()


#: Vertices of each spread ellipse (closed: the last is the first).
ELLIPSE_VERTICES = 65


def throughput_delay(ds: xr.Dataset, periods: Mapping[str, tuple[Any, Any]],
                     sigma: float = 1.0) -> xr.Dataset:
    """Throughput against delay per path, direction, socket buffer and period (Pantheon's
    view): each slot's TCP throughput paired with the median RTT of the path's pings of
    the smallest size in the same slot; their median and the ellipse of their spread.

    Parameters
    ----------
    ds : xarray.Dataset
        A monitor campaign.
    periods : dict
        ``{name: (start, end)}`` (the statistics product's compared periods).
    sigma : float, default 1
        The ellipse is the ``sigma`` contour of the pairs' covariance about their mean.

    Returns
    -------
    xarray.Dataset
        On ``series``: ``path``, ``direction``, ``socket_buffer``, ``period``, ``n``
        (pairs), ``rtt`` (median, ms), ``throughput`` (median, bit/s); on ``(series,
        vertex)``: ``ellipse_rtt``, ``ellipse_throughput``.

    Notes
    -----
    Pantheon (Yan et al., USENIX ATC 2018) draws each scheme's median and a 1-sigma
    ellipse of its per-run (delay, throughput); here a run is a slot.
    """
    from .monitor import period_labels

    test = np.asarray(ds["test"].values)
    ok = np.asarray(ds["outcome"].values) == "ok"
    ping = np.flatnonzero((test == "ping") & ok)
    tcp = np.flatnonzero((test == "tcp") & ok)
    empty = xr.Dataset({v: ("series", np.zeros(0)) for v in ("n", "rtt", "throughput")})
    if ping.size == 0 or tcp.size == 0:
        return empty
    size = np.asarray(ds["size"].values, float)[ping]
    ping = ping[size == np.nanmin(size)]
    rtt = pd.DataFrame({"path": np.asarray(ds["path"].values)[ping], "slot": np.asarray(ds["slot"].values)[ping],
                        "rtt": np.asarray(ds["rtt_median"].values, float)[ping]}).groupby(["path", "slot"])["rtt"].median()
    frame = pd.DataFrame({"path": np.asarray(ds["path"].values)[tcp], "slot": np.asarray(ds["slot"].values)[tcp],
                          "direction": np.asarray(ds["direction"].values)[tcp],
                          "socket_buffer": np.asarray(ds["socket_buffer"].values, float)[tcp],
                          "throughput": np.asarray(ds["throughput"].values, float)[tcp],
                          "period": period_labels(np.asarray(ds["time"].values)[tcp], periods)})
    frame = frame.join(rtt, on=["path", "slot"]).dropna(subset=["rtt", "throughput", "period"])
    rows, ex, ey = [], [], []
    angle = np.linspace(0, 2 * np.pi, ELLIPSE_VERTICES)
    circle = np.vstack([np.cos(angle), np.sin(angle)])
    for key, part in frame.groupby(["path", "direction", "socket_buffer", "period"], sort=True):
        xy = part[["rtt", "throughput"]].to_numpy().T
        if xy.shape[1] >= 3:
            vals, vecs = np.linalg.eigh(np.cov(xy))
            shape = vecs @ (sigma * np.sqrt(np.clip(vals, 0, None))[:, None] * circle)
            ell = xy.mean(axis=1)[:, None] + shape
        else:
            ell = np.full((2, ELLIPSE_VERTICES), np.nan)
        rows.append((*key, xy.shape[1], float(np.median(xy[0])), float(np.median(xy[1]))))
        ex.append(ell[0])
        ey.append(ell[1])
    if not rows:
        return empty
    cols = list(zip(*rows))
    return xr.Dataset({
        "n": ("series", np.array(cols[4], int), {"long_name": "slots paired"}),
        "rtt": ("series", np.array(cols[5]), {"units": "ms", "long_name": "median RTT of the slots"}),
        "throughput": ("series", np.array(cols[6]), {"units": "bit/s", "long_name": "median throughput"}),
        "ellipse_rtt": (("series", "vertex"), np.array(ex), {"units": "ms"}),
        "ellipse_throughput": (("series", "vertex"), np.array(ey), {"units": "bit/s"}),
    }, coords={"path": ("series", np.array(cols[0], str)), "direction": ("series", np.array(cols[1], str)),
               "socket_buffer": ("series", np.array(cols[2], float)), "period": ("series", np.array(cols[3], str))},
        attrs={"sigma": sigma, "periods": str(periods)})
