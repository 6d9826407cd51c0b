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


# --- a monitor campaign (docs/design.md, "Monitor campaigns") --------------------------

MONITOR_START = "2026-11-22T12:00:00"
MONITOR_INTERVAL_S = 60          # one slot a minute
MONITOR_SLOTS = 240              # four hours
MONITOR_DAY_S = 1200             # the compressed "day": cross traffic cycles every 20 min
MONITOR_CHANGE_SLOT = 120        # capacity 50 -> 30 Mbit/s and RTT 40 -> 80 ms from here on
MONITOR_CAPACITY = (50e6, 30e6)  # bit/s before and after the change
MONITOR_RTT_MS = (40.0, 80.0)    # base RTT before and after the change
MONITOR_GAP_SLOTS = (150, 160)   # slots [150, 160) never ran: maintenance
MONITOR_CROSS = 0.3              # cross traffic takes 0-30 % of the capacity, cyclically
MONITOR_REVERSE = 0.9            # reverse throughput is 0.9 x forward (asymmetric path)
MONITOR_BUFFERS = (65536, 262144, 1048576)   # bytes, every TCP test of every slot
MONITOR_UDP_RATE = 20e6          # bit/s offered
MONITOR_PING_SIZES = (108, 1480)  # bytes (seed 004's two sizes)
MONITOR_PROBES = 10
MONITOR_NOISE = 0.02             # multiplicative, uniform +-2 %
#: (slot, direction, test, socket_buffer, outcome, reason): tests that failed.
MONITOR_FAILURES = (
    (30, "forward", "tcp", 1048576, "timeout", "killed after timeout_s=30"),
    (31, "forward", "tcp", 1048576, "refused",
     "iperf3: error - unable to connect to server: Connection refused"),
    (200, "reverse", "udp", None, "busy", "iperf3: error - the server is busy running a test"),
)
MONITOR_METADATA = {
    "name": "synthetic-monitor", "title": "Synthetic monitor campaign", "kind": "monitor",
    "description": "Synthetic: closed-form model with a known change, cycle and gap.",
    "paths": [{"name": "a-b", "source": "host-a", "destination": "host-b",
               "address": "10.201.0.2", "directions": ["forward", "reverse"],
               "capacity_bps": 5.0e7}],
    "schedule": {"interval_s": MONITOR_INTERVAL_S, "jitter_s": 5, "order": "fixed",
                 "seed": 0, "timeout_s": 30, "day_s": MONITOR_DAY_S,
                 "tests": [{"test": "tcp", "tool": "iperf3", "duration_s": 5,
                            "socket_buffers": list(MONITOR_BUFFERS)},
                           {"test": "udp", "tool": "iperf3", "duration_s": 5,
                            "rate_bps": MONITOR_UDP_RATE},
                           {"test": "ping", "count": MONITOR_PROBES, "interval_s": 0.2,
                            "sizes": list(MONITOR_PING_SIZES)}]},
    "events": [{"time": "2026-11-22T14:00:00Z", "what": "capacity 50 -> 30 Mbit/s, RTT 40 -> 80 ms",
                "planned": True}],
    "explained": [{"from": "2026-11-22T14:30:00Z", "to": "2026-11-22T14:40:00Z",
                   "reason": "maintenance"}],
    "hosts": {"host-a": {"kernel": "6.1.0"}, "host-b": {"kernel": "6.1.0"}},
    "tools": {"iperf3": "3.12", "ping": "iputils 20221126"},
}


def _after_change(seconds, pair):
    """``pair[0]`` before the planned change, ``pair[1]`` from it on."""
    before = np.asarray(seconds, float) < MONITOR_CHANGE_SLOT * MONITOR_INTERVAL_S
    return np.where(before, pair[0], pair[1])


def monitor_available(seconds):
    """Capacity left by the cycling cross traffic at ``seconds`` after the start, bit/s."""
    seconds = np.asarray(seconds, float)
    capacity = _after_change(seconds, MONITOR_CAPACITY)
    cross = MONITOR_CROSS * (1 + np.sin(2 * np.pi * seconds / MONITOR_DAY_S)) / 2
    return capacity * (1 - cross)


def monitor_model(seconds, direction, test, socket_buffer=np.nan):
    """Noise-free throughput (bit/s) of a test started ``seconds`` after the start."""
    seconds = np.asarray(seconds, float)
    rtt = _after_change(seconds, MONITOR_RTT_MS) / 1e3
    avail = monitor_available(seconds)
    if test == "tcp":
        tp = np.minimum(8 * np.asarray(socket_buffer, float) / rtt, avail)
    else:
        tp = np.minimum(MONITOR_UDP_RATE, avail)
    return tp * (MONITOR_REVERSE if direction == "reverse" else 1.0)


def monitor_tests():
    """The tests of one slot, in order: (direction, test, socket_buffer, size, rate)."""
    tests = []
    for direction in ("forward", "reverse"):
        tests += [(direction, "tcp", b, np.nan, np.nan) for b in MONITOR_BUFFERS]
        tests.append((direction, "udp", np.nan, np.nan, MONITOR_UDP_RATE))
        tests += [(direction, "ping", np.nan, s, np.nan) for s in MONITOR_PING_SIZES]
    return tests


def monitor_campaign(seed=0):
    """A ``monitor`` campaign Dataset (docs/design.md names) with known properties.

    One path ``a-b``, both directions, a slot every minute for four hours; in every slot
    TCP at three socket buffers, UDP at 20 Mbit/s and ping at 108 and 1480 bytes, each
    direction. Known answers: a level change at slot :data:`MONITOR_CHANGE_SLOT`
    (capacity 50 -> 30 Mbit/s, RTT 40 -> 80 ms), a cycle of :data:`MONITOR_DAY_S`
    seconds, slots :data:`MONITOR_GAP_SLOTS` missing, the :data:`MONITOR_FAILURES`
    failed, reverse = 0.9 x forward. Throughput is the model x (1 + u), u uniform in
    +-2 %; ping RTT = base RTT + 10 ms x cross-traffic share, +-2 % per probe.
    """
    rng = np.random.default_rng(seed)
    start = np.datetime64(MONITOR_START, "ns")
    failures = {(s, d, t, b): (o, r) for s, d, t, b, o, r in MONITOR_FAILURES}
    rows = []
    for slot in range(MONITOR_SLOTS):
        if MONITOR_GAP_SLOTS[0] <= slot < MONITOR_GAP_SLOTS[1]:
            continue
        t0 = slot * MONITOR_INTERVAL_S + rng.uniform(0, 5)
        for k, (direction, test, buf, size, rate) in enumerate(monitor_tests()):
            key = (slot, direction, test, None if np.isnan(buf) else int(buf))
            outcome, reason = failures.get(key, ("ok", ""))
            rows.append((slot, t0 + 4 * k, direction, test, buf, size, rate, outcome, reason))
    n = len(rows)
    slot, sec, direction, test, buf, size, rate, outcome, reason = (np.array(c) for c in zip(*rows))
    sec = sec.astype(float)
    tp = np.full(n, np.nan)
    for i in range(n):
        if test[i] != "ping" and outcome[i] == "ok":
            tp[i] = monitor_model(sec[i], direction[i], test[i], buf[i])
    tp *= 1 + rng.uniform(-MONITOR_NOISE, MONITOR_NOISE, n)
    is_ping = (test == "ping") & (outcome == "ok")
    base = _after_change(sec, MONITOR_RTT_MS)
    share = 1 - monitor_available(sec) / _after_change(sec, MONITOR_CAPACITY)
    rtt = (base + 10 * share)[:, None] * (1 + rng.uniform(-MONITOR_NOISE, MONITOR_NOISE,
                                                          (n, MONITOR_PROBES)))
    rtt[~is_ping] = np.nan
    status = np.where(is_ping[:, None], "reply", "").astype(object)
    status = np.broadcast_to(status, rtt.shape).copy()
    rtt[is_ping.nonzero()[0][::7], 0] = np.nan          # every 7th ping run loses probe 0
    status[is_ping.nonzero()[0][::7], 0] = "lost"
    received = np.where(is_ping, np.sum(~np.isnan(rtt), axis=1), np.nan)
    time = start + (sec * 1e9).astype("timedelta64[ns]")
    probe_time = time[:, None] + (np.arange(MONITOR_PROBES) * 2e8).astype("timedelta64[ns]")
    probe_time = np.where(is_ping[:, None], probe_time, np.datetime64("NaT"))

    def var(dims, values, units, long_name):
        return xr.Variable(dims, values, {"units": units, "long_name": long_name})

    def ping_stat(func):
        with np.errstate(all="ignore"):
            out = np.full(n, np.nan)
            out[is_ping] = func(rtt[is_ping], axis=1)
        return out

    run = np.array([f"{s:06d}-a-b-{d}-{t}" + (f"-b{int(b)}" if b == b else "")
                    + (f"-z{int(z)}" if z == z else "")
                    for s, d, t, b, z in zip(slot, direction, test, buf, size)])
    tool = np.where(test == "ping", "ping", "iperf3")
    ds = xr.Dataset({
        "outcome": var("run", outcome.astype(str), "1", "test outcome"),
        "reason": var("run", reason.astype(str), "1", "why the test failed"),
        "throughput": var("run", tp, "bit/s", "whole-run throughput (receiver)"),
        "throughput_sender": var("run", tp * 1.001, "bit/s", "sender-side throughput"),
        "retransmits": var("run", np.where(test == "tcp", 0.0, np.nan), "count", "retransmissions"),
        "window_actual": var("run", 2 * buf, "byte", "socket buffer granted"),
        "loss_fraction": var("run", np.where(test == "udp", 0.0, np.nan), "1", "UDP datagrams lost"),
        "jitter": var("run", np.where(test == "udp", 0.1, np.nan), "ms", "UDP jitter"),
        "duration": var("run", np.where(test == "ping", np.nan, 5.0), "s", "test duration"),
        "ping_transmitted": var("run", np.where(is_ping, float(MONITOR_PROBES), np.nan), "count",
                                "probes sent"),
        "ping_received": var("run", received, "count", "probes answered"),
        "ping_loss": var("run", 1 - received / MONITOR_PROBES, "1", "fraction of probes lost"),
        "rtt_min": var("run", ping_stat(np.nanmin), "ms", "minimum RTT"),
        "rtt_p10": var("run", ping_stat(lambda x, axis: np.nanpercentile(x, 10, axis=axis)),
                       "ms", "10th percentile RTT"),
        "rtt_median": var("run", ping_stat(np.nanmedian), "ms", "median RTT"),
        "rtt_p90": var("run", ping_stat(lambda x, axis: np.nanpercentile(x, 90, axis=axis)),
                       "ms", "90th percentile RTT"),
        "rtt_max": var("run", ping_stat(np.nanmax), "ms", "maximum RTT"),
        "rtt_mean": var("run", ping_stat(np.nanmean), "ms", "mean RTT"),
        "rtt_mdev": var("run", ping_stat(np.nanstd), "ms", "RTT mean deviation (ping mdev)"),
        "rtt": var(("run", "probe"), rtt, "ms", "ping round-trip time"),
        "rtt_status": var(("run", "probe"), status.astype(str), "1", "probe outcome"),
        "probe_time": xr.Variable(("run", "probe"), probe_time, {"long_name": "probe sent (UTC)"}),
        "source": var("run", np.char.add(np.char.add("runs/2026-11-22/", run), ".json"), "1",
                      "raw file"),
        "source_sha256": var("run", np.full(n, "0" * 64), "1", "sha256 of the raw file"),
    }, coords={
        "run": ("run", run),
        "time": ("run", time, {"long_name": "test start (UTC)"}),
        "slot": ("run", slot.astype(int), {"units": "1", "long_name": "schedule slot"}),
        "path": ("run", np.full(n, "a-b"), {"units": "1", "long_name": "path"}),
        "direction": ("run", direction.astype(str), {"units": "1", "long_name": "direction"}),
        "test": ("run", test.astype(str), {"units": "1", "long_name": "test"}),
        "tool": ("run", tool.astype(str), {"units": "1", "long_name": "tool"}),
        "socket_buffer": ("run", buf.astype(float), {"units": "byte", "long_name": "socket buffer requested"}),
        "size": ("run", size.astype(float), {"units": "byte", "long_name": "ping payload"}),
        "rate": ("run", rate.astype(float), {"units": "bit/s", "long_name": "UDP rate requested"}),
        "probe": ("probe", np.arange(MONITOR_PROBES), {"units": "1", "long_name": "probe"}),
    }, attrs={"kind": "campaign", "campaign": MONITOR_METADATA["name"],
              "campaign_kind": "monitor", "metadata": json.dumps(MONITOR_METADATA)})
    return ds
