"""A monitor campaign's state for Prometheus (text exposition) and Nagios (performance data).

Both are computed from what ``thruput monitor report`` computes: the tables of
:func:`thruput.monitor.alerts.evaluate` (the state of every path and direction, the
breaches, the rules' thresholds) and the slot values its rules watch
(:func:`thruput.monitor.alerts._slot_values`: the median of a slot's ``ok`` runs of a test,
here per socket buffer and ping size too). Nothing is recomputed another way.

Prometheus metrics (text exposition format 0.0.4, whose names and types OpenMetrics
also accepts; base units as Prometheus' conventions and ``promtool check metrics`` ask:
seconds, ratios, bytes, so throughput is the tools' bit/s / 8), labelled ``campaign``,
``path``, ``direction`` and, per series, ``test``, ``socket_buffer`` (bytes) and ``size``
(ping payload bytes), ``""`` where a test has none:

``thruput_monitor_state``
    the report's state as a Nagios code: 0 ok, 1 breach open, 3 no data.
``thruput_monitor_breaches_open``, ``thruput_monitor_breaches_total``
    breaches open now, and every breach found over the campaign (a counter: the campaign
    only grows).
``thruput_monitor_throughput_bytes_per_second``, ``thruput_monitor_retransmits``,
``thruput_monitor_loss_ratio``, ``thruput_monitor_jitter_seconds``,
``thruput_monitor_rtt_seconds`` (label ``stat``: min, p10, median, p90, max; not
``quantile``, which Prometheus keeps for summaries)
    the last slot with an ok run of the series: the median of that slot's ok runs.
``thruput_monitor_slot_timestamp_seconds``
    when that slot began (Unix s).
``thruput_monitor_last_run_timestamp_seconds``
    the start of the series' last run, whatever its outcome (Unix s).
``thruput_monitor_runs_total``
    runs by ``outcome`` (``ok``, ``timeout``, ``refused`` ...).

Nagios performance data (:func:`perfdata`): one ``'label'=value[UOM];warn;crit;min;max``
per path, direction and metric of the last slot (``s`` for RTT and jitter, ``%`` for loss,
no unit for bit/s and retransmits; empty trailing fields left out), ``warn`` the range of the first rule that watches it (a
breach is the report's exit status 1, Nagios' WARNING): ``X:`` for "below X", ``X`` for
"above X", at its threshold in the last slot.
"""

from __future__ import annotations

import http.server
import math
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import xarray as xr

from .alerts import EXIT, RunLabels, series_slot_values, slot_grid

__all__ = ["last_slot_values", "exposition", "render", "perfdata", "with_perfdata", "write_textfile", "serve",
           "CONTENT_TYPE", "SERIES_METRICS"]

#: What the Prometheus text format 0.0.4 is served as.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: Per test: (metric, monitor variable, scale to the metric's unit, extra labels).
SERIES_METRICS = {
    "tcp": (("throughput_bytes_per_second", "throughput", 1 / 8, {}),
            ("retransmits", "retransmits", 1.0, {})),
    "udp": (("throughput_bytes_per_second", "throughput", 1 / 8, {}),
            ("loss_ratio", "loss_fraction", 1.0, {}),
            ("jitter_seconds", "jitter", 1e-3, {})),
    "ping": (("rtt_seconds", "rtt_min", 1e-3, {"stat": "min"}),
             ("rtt_seconds", "rtt_p10", 1e-3, {"stat": "p10"}),
             ("rtt_seconds", "rtt_median", 1e-3, {"stat": "median"}),
             ("rtt_seconds", "rtt_p90", 1e-3, {"stat": "p90"}),
             ("rtt_seconds", "rtt_max", 1e-3, {"stat": "max"}),
             ("loss_ratio", "ping_loss", 1.0, {})),
}
#: Metric families: name (after ``thruput_monitor_``) -> (type, help).
FAMILIES = {
    "state": ("gauge", "State of the path and direction now, as thruput monitor report's exit status: "
                       "0 ok, 1 breach open, 3 no data."),
    "breaches_open": ("gauge", "Breaches of the campaign's rules open now."),
    "breaches_total": ("counter", "Breaches of the campaign's rules found over the whole campaign."),
    "throughput_bytes_per_second": ("gauge", "Throughput of the last slot with an ok run (median of its ok runs; "
                                             "the tools' bit/s divided by 8)."),
    "retransmits": ("gauge", "TCP retransmits per run in the last slot with an ok run (median)."),
    "loss_ratio": ("gauge", "Packet loss (0 to 1) in the last slot with an ok run (median)."),
    "jitter_seconds": ("gauge", "UDP jitter in the last slot with an ok run (median)."),
    "rtt_seconds": ("gauge", "Ping round-trip time in the last slot with an ok run: stat min, p10, median, p90, "
                             "max of each run's replies, median over the slot's ok runs."),
    "slot_timestamp_seconds": ("gauge", "Start of the last slot with an ok run of the series (Unix time)."),
    "last_run_timestamp_seconds": ("gauge", "Start of the series' last run, any outcome (Unix time)."),
    "runs_total": ("counter", "Runs of the series by outcome."),
}
PREFIX = "thruput_monitor_"


def _none(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else int(x)


def _settings(ds):
    """The distinct (test, socket_buffer, size) of the campaign's runs (None where n/a)."""
    frame = pd.DataFrame({k: np.asarray(ds[k].values, float if k != "test" else object)
                          for k in ("test", "socket_buffer", "size")})
    return [(str(t), _none(b), _none(z)) for t, b, z in
            frame.drop_duplicates().sort_values(["test", "socket_buffer", "size"]).itertuples(index=False)]


def last_slot_values(ds: xr.Dataset) -> list[dict]:
    """Per path, direction, test (and socket buffer, ping size) and metric: the value of
    the last slot with an ok run, as the report's rules see a slot (the median of its ok
    runs), and when that slot began.

    Returns
    -------
    list of dict
        ``path, direction, test, socket_buffer, size, metric, labels, value`` (in the
        metric's unit: :data:`SERIES_METRICS`), ``variable`` and ``time`` (datetime64).
    """
    slots, times = slot_grid(ds)
    if not slots.size:
        return []
    runs = RunLabels(ds, slots)
    out = []
    for test, buffer, size in _settings(ds):
        for metric, variable, scale, labels in SERIES_METRICS.get(test, ()):
            if variable not in ds.variables:
                continue
            rule = {"test": test, "variable": variable, "socket_buffer": buffer, "size": size,
                    "path": None, "direction": "any"}
            for (path, direction), (value, _) in series_slot_values(ds, runs, rule).items():
                have = np.flatnonzero(np.isfinite(value))
                if not have.size:
                    continue
                out.append({"path": path, "direction": direction, "test": test, "socket_buffer": buffer,
                            "size": size, "metric": metric, "labels": labels, "variable": variable,
                            "value": float(value[have[-1]]) * scale, "time": times[have[-1]]})
    return out


def _unix(t):
    return float(np.datetime64(t, "ns").astype(np.int64)) / 1e9


def _escape(value):
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value):
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def _texts(values):
    """Whole numbers (NaN where n/a) as label text: ``"65536"``, ``""``."""
    return ["" if math.isnan(x) else str(int(x)) for x in np.asarray(values, float)]


def exposition(ds: xr.Dataset, tables: dict) -> str:
    """The Prometheus text exposition of a monitor campaign's state.

    Parameters
    ----------
    ds : xarray.Dataset
        The monitor Dataset (``open_campaign``).
    tables : dict
        :func:`thruput.monitor.alerts.evaluate` of ``ds`` (what ``thruput monitor report``
        computes).
    """
    campaign = str(ds.attrs.get("campaign", ""))
    samples = {name: [] for name in FAMILIES}
    verdict = tables["verdict"]
    breaches = tables["breaches"]
    b_path = np.asarray(breaches["path"].values, str) if breaches.sizes.get("breach", 0) else np.zeros(0, str)
    b_dir = np.asarray(breaches["direction"].values, str) if b_path.size else np.zeros(0, str)
    b_open = np.asarray(breaches["open"].values, bool) if b_path.size else np.zeros(0, bool)
    for i, path in enumerate(verdict["path"].values.tolist()):
        for j, direction in enumerate(verdict["direction"].values.tolist()):
            base = {"campaign": campaign, "path": path, "direction": direction}
            state = str(verdict["state"].values[i, j])
            samples["state"].append((base, EXIT[state]))
            mine = (b_path == path) & (b_dir == direction)
            samples["breaches_open"].append((base, int((mine & b_open).sum())))
            samples["breaches_total"].append((base, int(mine.sum())))
    for v in last_slot_values(ds):
        labels = {"campaign": campaign, "path": v["path"], "direction": v["direction"], "test": v["test"],
                  "socket_buffer": "" if v["socket_buffer"] is None else str(v["socket_buffer"]),
                  "size": "" if v["size"] is None else str(v["size"])}
        samples[v["metric"]].append(({**labels, **v["labels"]}, v["value"]))
        if v["variable"] in ("throughput", "rtt_median"):        # one slot time per series
            samples["slot_timestamp_seconds"].append((labels, _unix(v["time"])))
    frame = pd.DataFrame({"path": np.asarray(ds["path"].values, str),
                          "direction": np.asarray(ds["direction"].values, str),
                          "test": np.asarray(ds["test"].values, str),
                          "socket_buffer": _texts(ds["socket_buffer"].values),
                          "size": _texts(ds["size"].values),
                          "outcome": np.asarray(ds["outcome"].values, str),
                          "time": np.asarray(ds["time"].values, "datetime64[ns]")})
    keys = ["path", "direction", "test", "socket_buffer", "size"]
    for key, part in frame.groupby(keys, sort=True):
        labels = {"campaign": campaign, **dict(zip(keys, key))}
        samples["last_run_timestamp_seconds"].append((labels, _unix(part["time"].max())))
        for outcome, count in part["outcome"].value_counts().sort_index().items():
            samples["runs_total"].append(({**labels, "outcome": outcome}, int(count)))
    return render(samples)


def render(samples: dict[str, list[tuple[dict, Any]]]) -> str:
    """The text exposition of ``samples`` (family of :data:`FAMILIES` -> ``(labels,
    value)`` pairs): each family that has samples with its HELP and TYPE lines."""
    lines = []
    for name, (kind, text) in FAMILIES.items():
        if not samples[name]:
            continue
        lines += [f"# HELP {PREFIX}{name} {text}", f"# TYPE {PREFIX}{name} {kind}"]
        for labels, value in samples[name]:
            body = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
            lines.append(f"{PREFIX}{name}{{{body}}} {_number(value)}")
    return "\n".join(lines) + "\n"


# --- Nagios performance data -------------------------------------------------------------

#: Metric -> (Nagios unit of measurement, factor from the metric's unit, minimum, maximum).
NAGIOS_UNITS = {"throughput_bytes_per_second": ("", 8.0, "0", ""), "retransmits": ("", 1.0, "0", ""),
                "loss_ratio": ("%", 100.0, "0", "100"), "jitter_seconds": ("s", 1.0, "0", ""),
                "rtt_seconds": ("s", 1.0, "0", "")}
#: (test, metric variable) -> the rule metric of campaign.yaml that watches it.
RULE_METRICS = {("tcp", "throughput"): "throughput", ("udp", "throughput"): "throughput",
                ("tcp", "retransmits"): "retransmits", ("udp", "loss_fraction"): "loss",
                ("udp", "jitter"): "jitter", ("ping", "rtt_median"): "rtt", ("ping", "ping_loss"): "loss"}
#: Rule values in the report's units -> the perfdata unit (rtt and jitter rules in ms).
RULE_SCALE = {"rtt": 1e-3, "jitter": 1e-3, "loss": 100.0, "throughput": 1.0, "retransmits": 1.0}


def _label(v):
    parts = [v["path"], v["direction"], v["test"]]
    parts += [f"b{v['socket_buffer']}"] if v["socket_buffer"] is not None else []
    parts += [f"z{v['size']}"] if v["size"] is not None else []
    name = {"rtt_min": "rtt_min", "rtt_p10": "rtt_p10", "rtt_median": "rtt", "rtt_p90": "rtt_p90",
            "rtt_max": "rtt_max"}.get(v["variable"], v["metric"].removesuffix("_bytes_per_second")
                                      .removesuffix("_seconds").removesuffix("_ratio"))
    return " ".join([*parts, name]).replace("'", "''").replace("=", "_")


def _warn(v, tables):
    """The Nagios range of the first rule that watches this value, at its threshold in
    the last slot with data ("" if none)."""
    import json

    alert = tables["alert_state"]
    metric = RULE_METRICS.get((v["test"], v["variable"]))
    if metric is None or not alert.sizes.get("rule"):
        return ""
    rules = json.loads(alert.attrs["rules"])
    paths, directions = alert["path"].values.tolist(), alert["direction"].values.tolist()
    if v["path"] not in paths or v["direction"] not in directions:
        return ""
    i, j = paths.index(v["path"]), directions.index(v["direction"])
    for r, rule in enumerate(rules):
        if rule["test"] != v["test"] or rule["metric"] != metric or not bool(alert["applies"].values[r, i, j]):
            continue
        if any(rule[k] is not None and rule[k] != v[k] for k in ("socket_buffer", "size")):
            continue
        thr = alert["threshold"].values[r, i, j]
        have = np.flatnonzero(np.isfinite(thr))
        if not have.size:
            continue
        limit = float(thr[have[-1]]) * RULE_SCALE.get(metric, 1.0)
        return f"{limit:g}:" if "below" in rule else f"{limit:g}"
    return ""


def perfdata(ds: xr.Dataset, tables: dict) -> str:
    """Nagios performance data of the last slot of every series (module docstring)."""
    out = []
    for v in last_slot_values(ds):
        unit, factor, low, high = NAGIOS_UNITS[v["metric"]]
        fields = f"{v['value'] * factor:.6g}{unit};{_warn(v, tables)};;{low};{high}".rstrip(";")
        out.append(f"'{_label(v)}'={fields}")
    return " ".join(out)


def with_perfdata(text: str, data: str) -> str:
    """``text`` with ``| data`` after its first line (a Nagios plugin's output)."""
    if not data:
        return text
    first, _, rest = text.partition("\n")
    return f"{first} | {data}" + (f"\n{rest}" if rest else "")


# --- serving -------------------------------------------------------------------------------

def write_textfile(text: str, path) -> Path:
    """Write ``text`` to ``path`` atomically (a temporary file beside it, then a rename), as
    node_exporter's textfile collector needs: it never reads half a file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class _Cache:
    """The last exposition, kept while ``signature()`` (the campaign's files' sizes and
    times) is unchanged: a scrape every 15 s does not re-read an unchanged campaign."""

    def __init__(self, produce, signature, initial=None):
        self.produce, self.signature = produce, signature
        self.lock = threading.Lock()
        self.key = signature() if signature and initial is not None else object()
        self.text = initial

    def get(self):
        with self.lock:
            key = self.signature() if self.signature else object()
            if self.text is None or key != self.key:
                self.text, self.key = self.produce(), key
            return self.text


def serve(host: str, port: int, produce: Callable[[], str], signature: Callable[[], object] | None = None,
          ready: Callable[[int], None] | None = None, initial: str | None = None) -> None:
    """Serve ``produce()`` at ``http://host:port/metrics`` until interrupted.

    ``signature()`` (optional) tells when to produce again (else every scrape produces);
    ``initial``: an exposition already produced for the current signature (the first
    scrape then answers at once); ``ready(port)`` is called once listening (``port`` 0
    picks a free one)."""
    cache = _Cache(produce, signature, initial)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # (http.server's name)
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404, "only /metrics is served")
                return
            try:
                body = cache.get().encode("utf-8")
            except Exception as exc:  # noqa: BLE001 - the scrape fails, the server stays
                self.send_error(500, f"thruput monitor metrics: {exc}")
                return
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *args):  # one line per scrape on stderr is noise
            pass

    with http.server.ThreadingHTTPServer((host, port), Handler) as server:
        if ready is not None:
            ready(server.server_address[1])
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("thruput monitor metrics: stopped", file=sys.stderr)
