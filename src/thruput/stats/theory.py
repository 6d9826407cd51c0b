"""Textbook TCP and data-path formulas the source studies compare their measurements with.

Every function is pure and element-wise: scalars, NumPy arrays and xarray DataArrays
broadcast alike (only ``+ - * / **`` and ``numpy`` ufuncs are used). Units are SI with
rates in bit/s and sizes in bytes, except where a name says otherwise:

=============================  ==========================================================
quantity                        unit
=============================  ==========================================================
capacity, throughput            bit/s
window, MSS, bandwidth-delay    bytes
round-trip time                 s
loss rate                       packets lost per packet sent (dimensionless)
recovery time                   s
latency slope                   us/byte
=============================  ==========================================================

References
----------
.. [1] M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The macroscopic behavior of the TCP
   congestion avoidance algorithm", ACM SIGCOMM CCR 27(3), 1997.
.. [2] R. Hughes-Jones, "End-user systems: NICs, MotherBoards, Disks, TCP Stacks &
   Applications" (seed 001): Reno loss-recovery table and the UDPmon latency slope
   s = Σ 1/(db/dt) over the data path.
.. [3] W. R. Stevens, *TCP/IP Illustrated* vol. 1, 1994: bandwidth-delay product.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

import math

import numpy as np

__all__ = [
    "MATHIS_C",
    "ETH_WIRE_OVERHEAD",
    "TCP_IP_TS_HEADER",
    "IP_UDP_HEADER",
    "GIGE_BPS",
    "gige_goodput",
    "BITS_PER_BYTE",
    "bdp",
    "bdp_packets",
    "window_limited_throughput",
    "mathis_throughput",
    "mathis_loss_rate",
    "reno_recovery_time",
    "bus_rate",
    "expected_latency_slope",
]

#: Mathis et al. constant for periodic loss with delayed ACKs off: sqrt(3/2) [1]_.
MATHIS_C = math.sqrt(3.0 / 2.0)
#: Ethernet bytes on the wire around an IP packet: preamble+SFD 8, header 14, FCS 4,
#: inter-frame gap 12 (IEEE 802.3).
ETH_WIRE_OVERHEAD = 38
#: IPv4 20 + TCP 20 + timestamp option 12 (RFC 7323), as Linux sends by default, bytes.
TCP_IP_TS_HEADER = 52
#: IPv4 20 + UDP 8, bytes.
IP_UDP_HEADER = 28
#: Gigabit Ethernet line rate, bit/s.
GIGE_BPS = 1e9
BITS_PER_BYTE = 8
#: Seconds to microseconds, for latency slopes (s/byte -> us/byte).
_US_PER_S = 1e6


def bdp(capacity_bps: Any, rtt_s: Any) -> Any:
    """Bandwidth-delay product: the bytes in flight needed to fill a path.

    Parameters
    ----------
    capacity_bps : float or array_like
        Bottleneck capacity, bit/s.
    rtt_s : float or array_like
        Round-trip time, s (the unloaded RTT for the classical window rule).

    Returns
    -------
    float or array_like
        Bandwidth-delay product, bytes: ``capacity_bps * rtt_s / 8``.

    Notes
    -----
    The TCP window (``min(cwnd, rwnd)``) must be at least this large for one stream to
    reach ``capacity_bps`` [3]_.

    Examples
    --------
    >>> bdp(1e9, 0.2)
    25000000.0
    """
    return capacity_bps * rtt_s / BITS_PER_BYTE


def bdp_packets(capacity_bps: Any, rtt_s: Any, mss_bytes: Any = 1500) -> Any:
    """Bandwidth-delay product in segments of ``mss_bytes``.

    Parameters
    ----------
    capacity_bps : float or array_like
        Capacity, bit/s.
    rtt_s : float or array_like
        Round-trip time, s.
    mss_bytes : float, default 1500
        Segment size, bytes (seed 001's Reno table counts 1500-byte packets).

    Returns
    -------
    float or array_like
        Window needed, packets (not rounded).

    Examples
    --------
    >>> round(bdp_packets(10e6, 0.2), 2)   # seed 001: "10Mbps  170pkts"
    166.67
    """
    return bdp(capacity_bps, rtt_s) / mss_bytes


def window_limited_throughput(window_bytes: Any, rtt_s: Any, streams: Any = 1) -> Any:
    """Upper bound of TCP throughput set by the window: ``streams x window / RTT``.

    Parameters
    ----------
    window_bytes : float or array_like
        Window per stream (socket buffer or advertised window), bytes.
    rtt_s : float or array_like
        Round-trip time, s.
    streams : int or array_like, default 1
        Number of parallel TCP streams.

    Returns
    -------
    float or array_like
        Throughput bound, bit/s: ``8 * streams * window_bytes / rtt_s``.

    Notes
    -----
    At most one window of data is sent per round trip, so no measured throughput with
    that window and RTT can exceed this bound (unless the RTT used is larger than the
    RTT the data saw). Used for the "can this throughput pass through this window in
    this RTT?" checks of the reproduction ledger.

    Examples
    --------
    >>> window_limited_throughput(65536, 0.05, streams=4) / 1e6
    41.94304
    """
    return BITS_PER_BYTE * streams * window_bytes / rtt_s


def mathis_throughput(mss_bytes: Any, rtt_s: Any, loss: Any, C: float = MATHIS_C) -> Any:
    """Mathis et al. steady-state throughput of one Reno stream under random loss.

    Parameters
    ----------
    mss_bytes : float or array_like
        Maximum segment size, bytes.
    rtt_s : float or array_like
        Round-trip time, s.
    loss : float or array_like
        Loss rate, packets lost per packet sent (0 < loss <= 1).
    C : float, default sqrt(3/2)
        Constant of the model; sqrt(3/2) ~ 1.22 for periodic loss without delayed ACKs,
        sqrt(3/4) ~ 0.87 with delayed ACKs [1]_.

    Returns
    -------
    float or array_like
        Throughput, bit/s: ``8 * mss_bytes * C / (rtt_s * sqrt(loss))``.

    Examples
    --------
    >>> round(float(mathis_throughput(1500, 0.2, 5.4e-5)) / 1e6, 2)
    10.0
    """
    return BITS_PER_BYTE * mss_bytes * C / (rtt_s * np.sqrt(loss))


def mathis_loss_rate(throughput_bps: Any, mss_bytes: Any, rtt_s: Any, C: float = MATHIS_C) -> Any:
    """Loss rate a Reno stream can bear and still reach ``throughput_bps`` (Mathis inverted).

    Parameters
    ----------
    throughput_bps : float or array_like
        Target throughput, bit/s.
    mss_bytes : float or array_like
        Maximum segment size, bytes.
    rtt_s : float or array_like
        Round-trip time, s.
    C : float, default sqrt(3/2)
        Mathis constant, see :func:`mathis_throughput`.

    Returns
    -------
    float or array_like
        Loss rate, packets lost per packet sent:
        ``(8 * mss_bytes * C / (rtt_s * throughput_bps)) ** 2``.

    Notes
    -----
    This is seed 001's "Supporting loss rate" column (RTT 200 ms, MSS 1500 bytes):
    5.4e-5 at 10 Mbit/s, falling 100-fold for each 10-fold rise in throughput.

    Examples
    --------
    >>> f"{mathis_loss_rate(10e6, 1500, 0.2):.2g}"
    '5.4e-05'
    """
    return (BITS_PER_BYTE * mss_bytes * C / (rtt_s * throughput_bps)) ** 2


def reno_recovery_time(capacity_bps: Any, rtt_s: Any, mss_bytes: Any = 1500) -> Any:
    """Time for Reno to regain full rate after one loss: ``C x RTT^2 / (2 MSS)``.

    Parameters
    ----------
    capacity_bps : float or array_like
        Path capacity C, bit/s (the rate the stream had before the loss).
    rtt_s : float or array_like
        Round-trip time, s.
    mss_bytes : float or array_like, default 1500
        Maximum segment size, bytes.

    Returns
    -------
    float or array_like
        Recovery time, s: ``capacity_bps * rtt_s**2 / (2 * 8 * mss_bytes)``.

    Notes
    -----
    After a loss cwnd halves from W = C x RTT / MSS to W/2 and grows by one segment per
    RTT, so it needs W/2 round trips: ``(W / 2) x RTT = C RTT^2 / (2 MSS)`` [2]_. Seed
    001 tabulates it for RTT 200 ms with W rounded to two significant figures first
    (170 pkts -> 17 s), so the 10 Gbit/s row reads 4 h 43 min where the unrounded
    formula gives 4 h 37.8 min.

    Examples
    --------
    >>> round(reno_recovery_time(10e6, 0.2), 3)
    16.667
    """
    return capacity_bps * rtt_s**2 / (2 * BITS_PER_BYTE * mss_bytes)


def bus_rate(width_bits: Any, clock_hz: Any) -> Any:
    """Peak data rate of a parallel bus (PCI, PCI-X, memory): width x clock.

    Parameters
    ----------
    width_bits : float or array_like
        Bus width, bits (32 or 64 for PCI).
    clock_hz : float or array_like
        Bus clock, Hz (one transfer per clock).

    Returns
    -------
    float or array_like
        Rate, bytes/s: ``width_bits / 8 * clock_hz``.

    Examples
    --------
    >>> bus_rate(32, 33e6)
    132000000.0
    """
    return width_bits / BITS_PER_BYTE * clock_hz


def expected_latency_slope(copies: Sequence[Any]) -> float:
    """Expected slope of latency vs frame size: the sum of 1/rate over the data path.

    Parameters
    ----------
    copies : sequence
        One entry per transfer the data makes on its way (memory copies, each PCI bus,
        the link). An entry is a rate in bytes/s (a number) or a ``(width_bits,
        clock_hz)`` pair for a bus, converted with :func:`bus_rate`.

    Returns
    -------
    float
        Slope, us/byte: ``1e6 * sum(1 / rate_i)``.

    Notes
    -----
    Seed 001 [2]_: "Slope is given by s = sum over datapaths of 1/(db/dt)", for
    "Mem-mem copy(s) + pci + Gig Ethernet + pci + mem-mem copy(s)". Its expected
    0.0232 us/byte for 32-bit 33 MHz PCI is 2 x 0.00758 (PCI) + 0.008 (GigE at
    125 Mbyte/s); its 0.0118 us/byte for 64-bit 66 MHz PCI uses 0.00188 per PCI
    crossing, i.e. a 66.67 MHz clock (the nominal PCI 66 clock; 66.0 MHz would give
    0.00189). Memory copies are left out of those sums.

    Examples
    --------
    >>> round(expected_latency_slope([(32, 33e6), 125e6, (32, 33e6)]), 5)
    0.02315
    """
    total = 0.0
    for entry in copies:
        if isinstance(entry, (tuple, list)):
            width, clock = entry
            rate = bus_rate(width, clock)
        else:
            rate = entry
        if not rate > 0:
            raise ValueError(f"data-path rate must be positive, got {entry!r}")
        total = total + 1.0 / rate
    return _US_PER_S * total


def gige_goodput(mtu: int = 1500, protocol: str = "tcp", link_bps: float = GIGE_BPS) -> float:
    """Largest payload rate through an Ethernet link, bit/s.

    Parameters
    ----------
    mtu : int, default 1500
        IP MTU, bytes.
    protocol : {"tcp", "udp"}
        ``tcp`` with the timestamp option (52 header bytes), ``udp`` (28).
    link_bps : float, default 1e9

    Returns
    -------
    float
        ``link_bps * payload / (mtu + 38)``: 941.5 Mbit/s for TCP at 1500 bytes.
    """
    header = TCP_IP_TS_HEADER if protocol == "tcp" else IP_UDP_HEADER
    return link_bps * (mtu - header) / (mtu + ETH_WIRE_OVERHEAD)
