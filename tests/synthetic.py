"""Synthetic Datasets with known answers, for the statistics tests.

Everything is built from closed-form models (no measurement), with small bounded noise
so that the statistics must cope with spread but their answers stay exact:

- :func:`campaign`: a TCP sweep campaign Dataset as in docs/design.md ("The campaign
  Dataset"): throughput = min(streams x window / RTT, capacity) x (1 + noise), so the
  plateau level is the capacity and its onset per streams count is
  :func:`expected_onset`; loaded RTT grows linearly with utilisation.
- :func:`udp_sweep`: a UDPmon sweep whose host saturates at a known rate, so loss starts
  at a known spacing (:func:`expected_loss_onset`).
- :func:`tcp_instrumentation`: one run's web100/tcp_info snapshots with known counters.
- :func:`daily_series`: a throughput series with a 24 h cycle, unevenly sampled with a gap.
"""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

from thruput.stats.theory import window_limited_throughput

WINDOWS = (8192, 16384, 32768, 65536, 131072, 262144, 524288)
STREAMS = (1, 2, 4, 8)
CAPACITY = 1e9           # bit/s
RTT_MS = 1.0             # unloaded RTT, ms (bandwidth-delay product 125000 bytes)
PROBES = 20              # ping probes per phase and run
#: Loaded RTT = RTT_MS x (1 + QUEUE_GROWTH x utilisation): 5 x the unloaded RTT at capacity.
QUEUE_GROWTH = 4.0

METADATA = {
    "name": "synthetic", "title": "Synthetic sweep", "kind": "tcp_sweep",
    "path": {"source": "alpha", "destination": "beta", "capacity_bps": CAPACITY},
    "hosts": {
        "alpha": {"kernel": "6.1.0-18", "tcp": {"congestion_control": "cubic", "rmem_max": 212992}},
        "beta": {"kernel": "6.1.0-18", "tcp": {"congestion_control": "cubic", "rmem_max": 212992}},
    },
    "tools": {"iperf3": "3.12", "ping": "iputils 20221126"},
}


def model_throughput(window, streams, rtt_ms=RTT_MS, capacity=CAPACITY):
    """Noise-free throughput of the model, bit/s."""
    return np.minimum(window_limited_throughput(np.asarray(window, float), rtt_ms / 1e3,
                                                np.asarray(streams, float)), capacity)


def expected_onset(streams, tolerance=0.1, windows=WINDOWS, rtt_ms=RTT_MS, capacity=CAPACITY):
    """Smallest window whose noise-free throughput is within ``tolerance`` of capacity."""
    for w in windows:
        if model_throughput(w, streams, rtt_ms, capacity) >= (1 - tolerance) * capacity:
            return w
    return None


def campaign(windows=WINDOWS, streams=STREAMS, repeats=5, noise=0.02, rtt_noise=0.1, seed=0,
             capacity=CAPACITY, rtt_ms=RTT_MS, probes=PROBES, metadata=None,
             start="2026-11-22T14:00:00", run_spacing_s=20):
    """A ``tcp_sweep`` campaign Dataset with a known plateau.

    Throughput is ``model_throughput x (1 + u)``, ``u`` uniform in ``[-noise, noise]``.
    Ping: unloaded RTTs are ``rtt_ms x (1 + v)``, ``v`` uniform in
    ``[-rtt_noise, rtt_noise]``; loaded RTTs scale by
    ``1 + QUEUE_GROWTH x throughput / capacity``. In every run, loaded probe 0 is lost
    and the last two unloaded probes are padding ("" status), so each cell loses
    exactly ``repeats`` loaded probes of ``repeats x probes`` sent.
    """
    rng = np.random.default_rng(seed)
    W, S = np.meshgrid(np.asarray(windows, float), np.asarray(streams, float), indexing="ij")
    shape = (len(windows), len(streams), repeats)
    base = model_throughput(W, S, rtt_ms, capacity)[..., None]
    tp = base * (1 + rng.uniform(-noise, noise, shape))
    util = tp / capacity
    unloaded = rtt_ms * (1 + rng.uniform(-rtt_noise, rtt_noise, shape + (probes,)))
    loaded = unloaded * (1 + QUEUE_GROWTH * util)[..., None]
    rtt = np.stack([loaded, unloaded], axis=3)
    status = np.full(rtt.shape, "reply", dtype=object)
    status[..., 0, 0] = "lost"
    status[..., 1, -2:] = ""
    rtt = np.where(status == "reply", rtt, np.nan)
    order = np.arange(np.prod(shape)).reshape(shape)
    start_time = np.datetime64(start) + (order * run_spacing_s).astype("timedelta64[s]")
    n_int = 10
    interval = tp[..., None] * (1 + rng.uniform(-noise, noise, shape + (n_int,)))
    dims3 = ("window", "streams", "repeat")
    meta = metadata if metadata is not None else METADATA

    def var(dims, values, units, long_name):
        return xr.Variable(dims, values, {"units": units, "long_name": long_name})

    names = np.vectorize(lambda w, s, r: f"runs/w{w}-s{s}-r{r}.json")(
        *np.meshgrid(windows, streams, range(repeats), indexing="ij"))
    ds = xr.Dataset({
        "throughput": var(dims3, tp, "bit/s", "whole-run throughput"),
        "throughput_sender": var(dims3, tp * 1.001, "bit/s", "sender-side throughput"),
        "window_actual": var(dims3, np.broadcast_to(2 * W[..., None], shape).copy(), "byte", "window granted"),
        "retransmits": var(dims3, np.round(10 * util), "count", "retransmissions"),
        "start_time": xr.Variable(dims3, start_time, {"long_name": "when the run started (UTC)"}),
        "interval_throughput": var(dims3 + ("interval",), interval, "bit/s", "interval throughput"),
        "rtt": var(dims3 + ("phase", "probe"), rtt, "ms", "ping round-trip time"),
        "rtt_status": var(dims3 + ("phase", "probe"), status.astype(str), "1", "probe outcome"),
        "source": var(dims3, names.astype(str), "1", "iperf log"),
    }, coords={
        "window": ("window", np.asarray(windows), {"units": "byte", "long_name": "requested window"}),
        "streams": ("streams", np.asarray(streams), {"units": "count", "long_name": "streams"}),
        "repeat": ("repeat", np.arange(repeats), {"units": "1", "long_name": "repeat"}),
        "phase": ("phase", np.array(["loaded", "unloaded"]), {"units": "1", "long_name": "phase"}),
        "interval": ("interval", np.arange(n_int), {"units": "1", "long_name": "interval"}),
        "probe": ("probe", np.arange(probes), {"units": "1", "long_name": "probe"}),
    }, attrs={"kind": "campaign", "campaign": meta.get("name", "synthetic"),
              "campaign_kind": "tcp_sweep", "metadata": json.dumps(meta), "capacity_bps": capacity})
    return ds


UDP_LIMIT = 500e6         # bit/s the receiving host can take
UDP_SIZES = (1000, 1472)  # bytes
UDP_SPACINGS = tuple(range(5, 41))  # us


def expected_loss_onset(size, limit=UDP_LIMIT, spacings=UDP_SPACINGS):
    """Largest spacing whose offered rate exceeds ``limit`` (us), or None."""
    lossy = [s for s in spacings if 8 * size / (s * 1e-6) > limit]
    return max(lossy) if lossy else None


def udp_sweep(sizes=UDP_SIZES, spacings=UDP_SPACINGS, limit=UDP_LIMIT, repeats=2, sent=1000):
    """A ``udp_sweep`` Dataset: received rate ``min(offered, limit)``, the rest lost."""
    rows = [(size, s) for size in sizes for s in spacings for _ in range(repeats)]
    size = np.array([r[0] for r in rows], float)
    spacing = np.array([r[1] for r in rows], float)
    offered = 8 * size / (spacing * 1e-6)
    recv = np.minimum(offered, limit)
    received = np.where(offered > limit, np.floor(sent * limit / offered), sent)
    lost = sent - received

    def var(values, units, long_name):
        return xr.Variable("row", values, {"units": units, "long_name": long_name})

    return xr.Dataset({
        "packet_size": var(size, "byte", "UDP payload length"),
        "spacing": var(spacing, "us", "requested inter-packet spacing"),
        "packets_sent": var(np.full(size.size, float(sent)), "count", "datagrams sent"),
        "packets_received": var(received, "count", "datagrams received"),
        "packets_lost": var(lost, "count", "datagrams lost"),
        "loss_fraction": var(lost / sent, "1", "fraction lost"),
        "send_rate": var(offered, "bit/s", "send rate"),
        "recv_rate": var(recv, "bit/s", "receive rate"),
    }, attrs={"kind": "udp_sweep"})


def tcp_instrumentation(duration=10.0, step=0.1, rate=400e6, srtt_ms=2.0, mss=1448,
                        loss_every=20, start_counter=5):
    """One run's TCP snapshots: constant ``rate`` acked, a cwnd sawtooth, a loss (one
    retransmit and one congestion signal) every ``loss_every`` snapshots, counters that
    start at ``start_counter``. Total retransmits = number of losses."""
    n = int(round(duration / step)) + 1
    time = np.arange(n) * step
    k = np.arange(n)
    losses = (k > 0) & (k % loss_every == 0)
    counter = start_counter + np.cumsum(losses)
    cwnd = mss * (50 + (k % loss_every))
    srtt = srtt_ms * (1 + 0.5 * (k % loss_every) / loss_every)
    acked = rate / 8 * time

    def var(values, units, long_name):
        return xr.Variable("snapshot", values, {"units": units, "long_name": long_name})

    return xr.Dataset({
        "time": var(time, "s", "time"), "cwnd": var(cwnd.astype(float), "byte", "cwnd"),
        "srtt": var(srtt, "ms", "srtt"), "mss": var(np.full(n, float(mss)), "byte", "mss"),
        "retransmits_total": var(counter.astype(float), "count", "retransmits"),
        "congestion_signals": var(counter.astype(float), "count", "congestion signals"),
        "bytes_acked": var(acked, "byte", "bytes acked"),
        "line": var(np.arange(1, n + 1), "1", "line"),
    }, attrs={"kind": "tcp_instrumentation"})


def daily_series(days=14, step_h=0.5, mean=500e6, amplitude=100e6, noise=20e6,
                 gap=(5.0, 8.0), seed=0, start="2002-08-20T00:00:00"):
    """Throughput with a 24 h cycle (lowest at 12:00 UTC), jittered sampling and a gap
    of ``gap`` days (seed 004's 29 Aug to 2 Sep). Returns a DataArray on ``run`` with a
    ``time`` coordinate."""
    rng = np.random.default_rng(seed)
    hours = np.arange(0, days * 24, step_h) + rng.uniform(0, step_h / 2, int(days * 24 / step_h))
    hours = hours[(hours < gap[0] * 24) | (hours >= gap[1] * 24)]
    value = mean + amplitude * np.cos(2 * np.pi * hours / 24) + rng.normal(0, noise, hours.size)
    time = np.datetime64(start) + (hours * 3600).astype("timedelta64[s]")
    return xr.DataArray(value, dims="run", coords={"time": ("run", time)},
                        attrs={"units": "bit/s", "long_name": "throughput"})
