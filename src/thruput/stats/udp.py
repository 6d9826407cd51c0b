"""UDP throughput and loss against inter-packet spacing (UDPmon ``udpmon_bw_mon`` sweeps).

Seed 001 sends bursts of UDP frames of fixed size with a set spacing and reads the
received user-data rate and the loss: the rate follows ``8 x size / spacing`` until the
host or NIC saturates ("Max throughput 584 Mbit/s"), and loss appears below some spacing
("No packet loss > 18 us spacing").

References
----------
.. [1] R. Hughes-Jones, S. Dallison, G. Fairey, "Performance measurements on Gigabit
   Ethernet NICs and server quality motherboards", PFLDnet 2003 (seed 001): UDPmon
   throughput and loss vs spacing.
"""

from __future__ import annotations

from typing import Any

from .defaults import UDP_LOSS_THRESHOLD

import numpy as np
import xarray as xr

from ._util import labelled, quiet

__all__ = ["udp_grid", "udp_onset", "offered_rate", "GRID_VARIABLES"]

#: Variables of a ``udp_sweep`` Dataset summarised on the (packet_size, spacing) grid,
#: with the reduction used: rates by their median over repeated rows, packets summed so
#: that loss is pooled (lost / sent over all rows of the cell).
GRID_VARIABLES = {
    "recv_rate": "median",
    "send_rate": "median",
    "packets_sent": "sum",
    "packets_lost": "sum",
}


def offered_rate(packet_size: Any, spacing: Any, overhead_bytes: float = 0) -> Any:
    """Rate at which frames of ``packet_size`` are offered with ``spacing`` between them.

    Parameters
    ----------
    packet_size : float or array_like
        UDP payload per frame, bytes.
    spacing : float or array_like
        Time between the starts of successive frames, us.
    overhead_bytes : float, default 0
        Bytes added per frame to count a wire rate instead of user data (UDP 8 + IPv4
        20 + Ethernet 14 + FCS 4 + preamble 8 + inter-frame gap 12 = 66 for Gigabit
        Ethernet).

    Returns
    -------
    float or array_like
        Rate, bit/s: ``8 * (packet_size + overhead_bytes) / (spacing * 1e-6)``; NaN
        for a spacing of 0 (frames sent back to back: no rate is set).

    Examples
    --------
    >>> round(float(offered_rate(1472, 12)) / 1e6, 3)   # seed 001: 1472-byte frames every 12 us
    981.333
    """
    spacing = np.asarray(spacing, dtype=float)
    with quiet():
        return 8.0 * (np.asarray(packet_size, dtype=float) + overhead_bytes) / (
            np.where(spacing > 0, spacing, np.nan) * 1e-6)


def udp_grid(sweep: xr.Dataset, dim: str = "row") -> xr.Dataset:
    """Summarise a UDP sweep's rows on a (packet_size, spacing) grid.

    Parameters
    ----------
    sweep : xarray.Dataset
        A ``udp_sweep`` Dataset (one file or a campaign's concatenated rows): variables
        ``packet_size`` (byte), ``spacing`` (us), ``recv_rate``, ``send_rate`` (bit/s),
        ``packets_sent``, ``packets_lost`` (count) along ``dim``.
    dim : str, default "row"
        The row dimension.

    Returns
    -------
    xarray.Dataset
        On dimensions ``packet_size`` (byte) and ``spacing`` (us), both sorted:
        ``recv_rate`` and ``send_rate`` (median over rows, bit/s), ``packets_sent`` and
        ``packets_lost`` (sums, count), ``loss_fraction`` (pooled lost / sent, 1),
        ``offered_rate`` (:func:`offered_rate`, bit/s) and ``n`` (rows, count). Grid
        points without rows are NaN (``n = 0``).

    Notes
    -----
    Loss is pooled rather than averaged, so a row with many frames weighs more than
    one with few. Rows with a NaN size or spacing are left out.
    """
    names = [v for v in GRID_VARIABLES if v in sweep]
    frame = sweep[["packet_size", "spacing", *names]].to_dataframe()
    frame = frame.reset_index(drop=True).dropna(subset=["packet_size", "spacing"])
    grouped = frame.groupby(["packet_size", "spacing"])
    table = grouped.agg({v: GRID_VARIABLES[v] for v in names})
    table["n"] = grouped.size()
    grid = xr.Dataset.from_dataframe(table.sort_index())
    grid["n"] = grid["n"].fillna(0).astype(int)
    for v in names:
        grid[v].attrs = dict(sweep[v].attrs)
        if GRID_VARIABLES[v] == "median":
            grid[v].attrs["long_name"] = f"median {sweep[v].attrs.get('long_name', v)}"
    if {"packets_sent", "packets_lost"} <= set(names):
        with quiet():
            grid["loss_fraction"] = grid["packets_lost"] / grid["packets_sent"].where(
                grid["packets_sent"] > 0)
        grid["loss_fraction"].attrs = {"units": "1", "long_name": "pooled fraction of frames lost"}
    grid["offered_rate"] = xr.DataArray(
        offered_rate(grid["packet_size"].values[:, None], grid["spacing"].values[None, :]),
        dims=("packet_size", "spacing"),
        attrs={"units": "bit/s", "long_name": "user-data rate offered: 8 x size / spacing"})
    grid["n"].attrs = {"units": "count", "long_name": "rows in the grid point"}
    grid["packet_size"].attrs = dict(sweep["packet_size"].attrs) or {"units": "byte"}
    grid["spacing"].attrs = dict(sweep["spacing"].attrs) or {"units": "us"}
    return grid


def udp_onset(grid: xr.Dataset, threshold: float = UDP_LOSS_THRESHOLD) -> xr.Dataset:
    """Peak rate and the spacing below which loss starts, per packet size.

    Parameters
    ----------
    grid : xarray.Dataset
        A :func:`udp_grid` result (``recv_rate`` and ``loss_fraction`` over
        ``packet_size`` and ``spacing``).
    threshold : float, default 0.0
        Loss fraction that counts as loss (0 = any frame lost).

    Returns
    -------
    xarray.Dataset
        Per ``packet_size``: ``peak_rate`` (highest median received rate, bit/s) and
        ``peak_spacing`` (its spacing, us); ``loss_onset`` (the largest spacing with
        loss above ``threshold``, us) and ``loss_free_from`` (the smallest spacing from
        which no larger spacing shows loss, us). ``loss_onset`` is NaN when no spacing
        shows loss; ``loss_free_from`` is NaN when the largest spacing does.

    Notes
    -----
    Seed 001's "No packet loss > 18 us spacing" reads here as ``loss_onset = 18``;
    grid points without data are skipped.
    """
    rate = grid["recv_rate"].transpose("packet_size", "spacing").values.astype(float)
    loss = grid["loss_fraction"].transpose("packet_size", "spacing").values.astype(float)
    spacing = grid["spacing"].values.astype(float)
    n = rate.shape[0]
    out = {k: np.full(n, np.nan) for k in ("peak_rate", "peak_spacing", "loss_onset", "loss_free_from")}
    for i in range(n):
        if np.isfinite(rate[i]).any():
            j = int(np.nanargmax(rate[i]))
            out["peak_rate"][i], out["peak_spacing"][i] = rate[i, j], spacing[j]
        known = np.isfinite(loss[i])
        lossy = known & (loss[i] > threshold)
        if lossy.any():
            last = np.flatnonzero(lossy)[-1]
            out["loss_onset"][i] = spacing[last]
            after = np.flatnonzero(known[last + 1:]) + last + 1
            if after.size:
                out["loss_free_from"][i] = spacing[after[0]]
        elif known.any():
            out["loss_free_from"][i] = spacing[np.flatnonzero(known)[0]]
    coords = {"packet_size": grid["packet_size"]}
    units = grid["recv_rate"].attrs.get("units", "bit/s")
    return xr.Dataset({
        "peak_rate": labelled(out["peak_rate"], "packet_size", coords, units, "highest median received rate"),
        "peak_spacing": labelled(out["peak_spacing"], "packet_size", coords, "us", "spacing of the peak rate"),
        "loss_onset": labelled(out["loss_onset"], "packet_size", coords, "us",
                               "largest spacing with loss above the threshold"),
        "loss_free_from": labelled(out["loss_free_from"], "packet_size", coords, "us",
                                   "smallest spacing from which no larger spacing shows loss"),
    }, attrs={"threshold": threshold})
