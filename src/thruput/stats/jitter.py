"""Delay variation, loss bursts and fairness: IPDV (RFC 3393), the RFC 3550 interarrival
jitter that iperf reports, loss-burst lengths with a Gilbert-model summary, and Jain's
fairness index over the streams of a run.

Every function takes DataArrays (NumPy or dask backed) and returns DataArrays or Datasets
with ``units`` and ``long_name``; the dimension worked along is a keyword (``probe`` for
probe series, ``stream`` for the streams of a run).

References
----------
.. [1] C. Demichelis, P. Chimento, "IP Packet Delay Variation Metric for IP Performance
   Metrics (IPPM)", RFC 3393, 2002.
.. [2] H. Schulzrinne et al., "RTP: A Transport Protocol for Real-Time Applications",
   RFC 3550, 2003, section 6.4.1 and appendix A.8 (interarrival jitter).
.. [3] E. N. Gilbert, "Capacity of a burst-noise channel", Bell System Technical Journal
   39, 1253-1265, 1960; M. Yajnik et al., "Measurement and modelling of the temporal
   dependence in packet loss", IEEE INFOCOM 1999 (estimating p and r from transitions).
.. [4] T. Friedman, R. Caceres, A. Clark (eds.), "RTP Control Protocol Extended Reports
   (RTCP XR)", RFC 3611, 2003, section 4.7.2 (burst metrics, Gilbert model).
.. [5] R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and Discrimination
   for Resource Allocation in Shared Computer Systems", DEC-TR-301, 1984.
"""

from __future__ import annotations

import numpy as np
import scipy.signal
import xarray as xr

from ._util import quiet, units_of

__all__ = ["ipdv", "jitter_rfc3550", "loss_bursts", "jain_fairness", "reply_delays",
           "lost_indicator", "RFC3550_GAIN", "DEFAULT_MAX_BURST", "LOST_STATUSES"]

#: RFC 3550's jitter estimator gain: J += (|D| - J) / 16, "a good noise reduction ratio
#: while maintaining a reasonable rate of convergence" (section 6.4.1)
RFC3550_GAIN = 1.0 / 16.0
#: Longest burst length counted on its own in ``burst_length_count``; longer bursts are
#: counted in the last bin (so the output has a fixed size, as dask needs)
DEFAULT_MAX_BURST = 64
#: Probe statuses (``thruput.contract.PROBE_STATUSES``) that count as a probe without reply
LOST_STATUSES = ("lost", "unreachable", "error")


def reply_delays(delay: xr.DataArray, status: xr.DataArray, dim: str = "probe") -> xr.DataArray:
    """Delays of replies only, in probe order: NaN for probes without reply, and duplicate
    replies (a second answer to one probe is not its delay) left out.

    Parameters
    ----------
    delay, status : xarray.DataArray
        ``rtt`` and ``status`` of an rtt Dataset (or ``rtt`` and ``rtt_status`` of a
        campaign), same dims.
    dim : str
        The probe dimension.

    Returns
    -------
    xarray.DataArray
        On a 1-D series, duplicate rows are dropped, so that consecutive probes stay
        neighbours; on N-d arrays (campaigns) they become NaN instead (rows cannot be
        dropped per cell), which makes the pairs around a duplicate undefined.
    """
    delay = delay.where(status == "reply")
    if delay.ndim == 1:
        keep = np.asarray(status != "duplicate")
        if not keep.all():
            delay = delay.isel({dim: keep})
    return delay


def lost_indicator(status: xr.DataArray) -> xr.DataArray:
    """1.0 for probes without reply (:data:`LOST_STATUSES`), 0.0 for replies, NaN for
    duplicates and padding (``""``): the input of :func:`loss_bursts`."""
    lost = status.isin(list(LOST_STATUSES))
    return xr.where(lost, 1.0, xr.where(status == "reply", 0.0, np.nan)).assign_attrs(
        units="1", long_name="1 if the probe had no reply")


def ipdv(delay: xr.DataArray, dim: str = "probe") -> xr.DataArray:
    """Instantaneous packet delay variation of consecutive packets (RFC 3393).

    Parameters
    ----------
    delay : xarray.DataArray
        One-way delays or round-trip times (e.g. ``ds["rtt"]``, ms) in sending order along
        ``dim``; NaN marks a lost packet.
    dim : str
        The packet dimension.

    Returns
    -------
    xarray.DataArray
        ``delay[i] - delay[i-1]`` labelled by the later packet ``i`` (one element shorter
        along ``dim``), in the units of ``delay``. NaN where either packet of the pair was
        lost.

    Notes
    -----
    RFC 3393 defines IPDV for a *selected pair* of packets; the selection here is the
    one the RFC gives as its main example and irtt uses: consecutive packets of the
    stream (section 4.5). A pair with a lost packet has an undefined IPDV (section 3.3:
    "the value is undefined"), so it is NaN and takes no part in statistics. Positive
    values mean the later packet took longer. Summaries commonly reported are the mean
    or percentiles of ``abs(ipdv)`` (irtt's ``ipdv_round_trip`` statistics are of
    absolute values). On RTTs this is the round-trip variation, which mixes both
    directions. Duplicates must be removed before (the accessor does that).
    """
    out = delay.diff(dim, label="upper")
    return out.assign_attrs(units=units_of(delay, "ms"),
                            long_name="IPDV of consecutive packets (RFC 3393)")


def _jitter_1d(x):
    """RFC 3550 running jitter of one row; NaN inputs (lost) carry the last value."""
    ok = np.flatnonzero(~np.isnan(x))
    if len(ok) < 2:
        return np.where(np.arange(len(x)) >= (ok[0] if len(ok) else len(x)), 0.0, np.nan)
    d = np.abs(np.diff(x[ok]))
    # J_k = J_{k-1} + (|D_k| - J_{k-1}) / 16, J_0 = 0: a first-order IIR filter
    j = scipy.signal.lfilter([RFC3550_GAIN], [1.0, RFC3550_GAIN - 1.0], d)
    filled = np.full(x.shape, np.nan)
    filled[ok[0]] = 0.0
    filled[ok[1:]] = j
    # lost packets leave the estimate unchanged: carry it forward
    idx = np.where(~np.isnan(filled), np.arange(len(x)), 0)
    np.maximum.accumulate(idx, out=idx)
    out = filled[idx]
    out[: ok[0]] = np.nan
    return out


def _jitter_nd(x):
    flat = x.reshape(-1, x.shape[-1])
    return np.stack([_jitter_1d(row) for row in flat]).reshape(x.shape) if flat.size else x.astype(float)


def jitter_rfc3550(delay: xr.DataArray, dim: str = "probe") -> xr.DataArray:
    """Running interarrival jitter estimate of RFC 3550 (what iperf reports for UDP).

    Parameters
    ----------
    delay : xarray.DataArray
        Transit times (one-way delays, or RTTs) in sending order along ``dim``; NaN
        marks a lost packet.
    dim : str
        The packet dimension (must not be chunked by dask along it: it is rechunked).

    Returns
    -------
    xarray.DataArray
        The estimate ``J`` after each packet, same shape as ``delay``, in its units. The
        last value is the jitter iperf would print for the series.

    Notes
    -----
    RFC 3550 section 6.4.1: ``J_i = J_{i-1} + (|D(i-1, i)| - J_{i-1}) / 16`` with
    ``D(i-1, i)`` the difference of the transit times of consecutive *received* packets
    and ``J`` starting at 0. A lost packet leaves ``J`` unchanged (there is no transit
    time to compare), so the estimate is carried over it; before the first received
    packet it is NaN. The ``1/16`` gain (:data:`RFC3550_GAIN`) makes it an exponentially
    weighted mean of ``|IPDV|`` with a memory of about 16 packets: compare it with
    :func:`ipdv` (whose mean absolute value weighs every pair alike) only as such. iperf
    (2 and 3) computes it from one-way transit times with unsynchronised clocks, which
    the differences cancel; on ping or irtt RTTs it is a round-trip jitter.
    """
    out = xr.apply_ufunc(
        _jitter_nd, delay.astype(float), input_core_dims=[[dim]], output_core_dims=[[dim]],
        dask="parallelized", output_dtypes=[float], dask_gufunc_kwargs={"allow_rechunk": True})
    return out.transpose(*delay.dims).assign_attrs(
        units=units_of(delay, "ms"), long_name="interarrival jitter estimate (RFC 3550)")


def _bursts_1d(x, max_length):
    """(count, mean, max, loss fraction, p, r, histogram) of one row of 0/1/NaN."""
    x = x[~np.isnan(x)] != 0
    hist = np.zeros(max_length)
    if not len(x):
        return (np.nan,) * 6 + (hist,)
    edges = np.diff(np.concatenate(([0], x.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    lengths = ends - starts
    np.add.at(hist, np.minimum(lengths, max_length) - 1, 1)
    pairs = np.stack([x[:-1], x[1:]]) if len(x) > 1 else np.zeros((2, 0), bool)
    n01 = np.count_nonzero(~pairs[0] & pairs[1])
    n10 = np.count_nonzero(pairs[0] & ~pairs[1])
    good, bad = np.count_nonzero(~pairs[0]), np.count_nonzero(pairs[0])
    p = n01 / good if good else np.nan
    r = n10 / bad if bad else np.nan
    mean = lengths.mean() if len(lengths) else np.nan
    longest = lengths.max() if len(lengths) else 0.0
    return float(len(lengths)), mean, float(longest), float(x.mean()), p, r, hist


def _bursts_nd(x, max_length):
    flat = x.reshape(-1, x.shape[-1])
    rows = [_bursts_1d(row, max_length) for row in flat]
    shape = x.shape[:-1]
    scalars = [np.array([row[k] for row in rows], dtype=float).reshape(shape) for k in range(6)]
    hist = np.array([row[6] for row in rows], dtype=float).reshape(shape + (max_length,))
    return (*scalars, hist)


#: loss_bursts outputs: name -> (units, long_name)
BURST_VARIABLES = {
    "burst_count": ("count", "number of loss bursts (runs of consecutive losses)"),
    "mean_burst_length": ("count", "mean length of a loss burst (NaN without losses)"),
    "max_burst_length": ("count", "longest loss burst"),
    "loss_fraction": ("1", "fraction of packets lost"),
    "gilbert_p": ("1", "Gilbert model p: probability that a received packet is followed by a loss"),
    "gilbert_r": ("1", "Gilbert model r: probability that a lost packet is followed by a received one"),
}


def loss_bursts(lost: xr.DataArray, dim: str = "probe", max_length: int = DEFAULT_MAX_BURST) -> xr.Dataset:
    """Loss-burst lengths and the Gilbert-model summary of a probe series.

    Parameters
    ----------
    lost : xarray.DataArray
        1/True where a packet was lost, 0/False where it arrived, NaN where there was no
        packet (padding, duplicates): left out, so the series closes up around it.
    dim : str
        The packet dimension (in sending order).
    max_length : int
        Bursts up to this length are counted per length; longer ones in the last bin.

    Returns
    -------
    xarray.Dataset
        ``burst_count``, ``mean_burst_length``, ``max_burst_length``, ``loss_fraction``,
        ``gilbert_p``, ``gilbert_r`` (the other dims of ``lost``), and
        ``burst_length_count`` (those dims and ``burst_length`` = 1..max_length).

    Notes
    -----
    A burst is a maximal run of consecutive lost packets. The two-state Gilbert model
    (good = received, bad = lost) is estimated from the transitions of the series [3]_:
    ``p = n01 / n0`` (received followed by lost, over received packets with a
    successor) and ``r = n10 / n1`` (lost followed by received, over lost packets with a
    successor). Its mean burst length is ``1 / r`` and its stationary loss rate
    ``p / (p + r)``; ``mean_burst_length`` is the measured mean, which agrees with
    ``1 / r`` up to the end effect of a burst at the end of the series. Independent
    (Bernoulli) loss has ``p + r = 1``. RFC 3611 [4]_ reports bursts with a minimum gap;
    this is its ``Gmin = 1`` case.
    """
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1, got {max_length}")
    values = lost.astype(float)
    outs = xr.apply_ufunc(
        _bursts_nd, values, kwargs={"max_length": int(max_length)},
        input_core_dims=[[dim]], output_core_dims=[[]] * 6 + [["burst_length"]],
        dask="parallelized", output_dtypes=[float] * 7,
        dask_gufunc_kwargs={"output_sizes": {"burst_length": int(max_length)}, "allow_rechunk": True})
    ds = xr.Dataset({name: out.assign_attrs(units=u, long_name=ln)
                     for out, (name, (u, ln)) in zip(outs[:6], BURST_VARIABLES.items())})
    ds["burst_length_count"] = outs[6].assign_attrs(
        units="count", long_name=f"loss bursts of each length (the last bin: {max_length} or longer)")
    ds = ds.assign_coords(burst_length=xr.Variable(
        "burst_length", np.arange(1, max_length + 1), {"units": "count", "long_name": "loss-burst length"}))
    return ds


def jain_fairness(x: xr.DataArray, dim: str = "stream") -> xr.DataArray:
    """Jain's fairness index of the streams of a run: ``(sum x)**2 / (n * sum x**2)``.

    Parameters
    ----------
    x : xarray.DataArray
        Per-stream throughput (or any allocation), e.g. ``ds["stream_throughput"]``; NaN
        entries (padding: runs with fewer streams) are left out of the sums and of ``n``.
    dim : str
        The stream dimension.

    Returns
    -------
    xarray.DataArray
        The index (units ``1``), between ``1/n`` (one stream takes everything) and 1
        (equal shares); NaN where no stream has a value or all are zero.

    Notes
    -----
    Jain, Chiu and Hawe [5]_: independent of the scale and of ``n``, continuous, and
    ``k/n`` when ``k`` of ``n`` streams share equally and the rest get nothing. flent
    and iperf3_plotter report it over the streams of a test.
    """
    values = x.astype(float)
    total = values.sum(dim)
    squares = (values ** 2).sum(dim)
    n = values.count(dim)
    with quiet():
        index = (total ** 2 / (n * squares)).where((n > 0) & (squares > 0))
    return index.assign_attrs(units="1", long_name="Jain's fairness index over streams")
