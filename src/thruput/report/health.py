"""The health page of a monitor campaign: arranges its health and rollup products,
computes nothing.

Everything shown comes from ``data/processed/<c>.health.zarr`` (alert state of every slot,
breaches, verdicts, SLA: :func:`thruput.monitor.alerts.evaluate`, kept up to date by
:mod:`thruput.monitor.alerts_store`), ``data/processed/<c>.rollups.zarr``
(:func:`thruput.stats.rollups.write_rollups`) and the statistics product's throughput vs
delay, all written by the pipeline; ``thruput monitor report`` prints the same verdicts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping, Sequence
    from numpy.typing import ArrayLike
    import altair as alt
    import xarray as xr

import json
from pathlib import Path

import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown

from ..campaign.store import ROLLUP_FREQS as FREQS
from ..campaign.store import open_rollup
from ..charts import health as hcharts
from ..formatting import duration
from ..formatting import value as _value
from ..monitor.alerts import STATES, report_json
from ..project import project_path

__all__ = ["load_health", "health_title", "health_grid", "grid_cells", "health_verdicts",
           "health_breaches", "health_states", "health_all_states", "health_events", "auto_freq", "open_rollup", "health_sla", "health_smokeping",
           "health_throughput_delay", "health_udp_loss", "loss_class"]


def load_health(processed: str | os.PathLike[str], campaign: str) -> tuple[dict[str, xr.Dataset], Path]:
    """The campaign's health tables and the path of its rollups, as the pipeline writes them
    in ``processed``: ``(tables, rollups_path)``. The alert tables come from its alerts
    store ``<c>.health.zarr``, throughput vs delay from its statistics product
    ``<c>.stats.nc``, the rollups from ``<c>.rollups.zarr``."""
    import xarray as xr

    from ..campaign.store import NETCDF_ENGINE, STATS_SUFFIX
    from ..monitor.alerts_store import open_alerts

    base = Path(project_path(processed))
    tables = open_alerts(base / f"{campaign}.health.zarr")
    product = base / f"{campaign}{STATS_SUFFIX}"
    if product.is_file():
        with xr.open_datatree(product, engine=NETCDF_ENGINE) as tree:     # (lazily: one group read)
            if "throughput_delay" in tree.children:
                tables["throughput_delay"] = tree["throughput_delay"].to_dataset().load()
    return tables, base / f"{campaign}.rollups.zarr"


def _meta(tables):
    return json.loads(tables["alert_state"].attrs.get("rules", "[]"))


def health_title(tables: Mapping[str, xr.Dataset]) -> Markdown:
    rep = report_json(tables)
    return Markdown(f"# Health: {rep['campaign']}\n\nState now (slot {rep['last_slot']}): "
                    f"**{rep['state']}** (`thruput monitor report` exit status {rep['exit_status']}). "
                    f"Slots {rep['first_slot']} to {rep['last_slot']}, every {duration(rep['interval_s'])}; "
                    f"rules: " + ("; ".join(f"`{r}`" for r in rep["rules"]) or "none (campaign.yaml "
                                  "has no `alerts:` or `baseline:`)") + ".")


def grid_cells(tables: Mapping[str, xr.Dataset], paths_meta: Sequence[Mapping[str, Any]] | None = None,
               href: str = "#{path}-{direction}") -> pd.DataFrame:
    """One row per path and direction: its source and destination (reverse: swapped),
    state now, since when, number of breaches, and the link of its cell."""
    verdict = tables["verdict"]
    br = tables["breaches"]
    paths_meta = {p["name"]: p for p in (paths_meta or [])}  # type: ignore[assignment]
    rows = []
    for path in verdict["path"].values:
        meta = paths_meta.get(str(path), {})  # type: ignore[union-attr]
        src, dst = meta.get("source") or f"{path} (source)", meta.get("destination") or f"{path} (destination)"
        for direction in verdict["direction"].values:
            v = verdict.sel(path=path, direction=direction)
            n = int(((br["path"] == path) & (br["direction"] == direction)).sum()) if br.sizes.get("breach") else 0
            since = pd.Timestamp(v["since"].values)
            rows.append({"path": str(path), "direction": str(direction),
                         "source": src if direction == "forward" else dst,
                         "destination": dst if direction == "forward" else src,
                         "state": str(v["state"].values), "since": "" if pd.isna(since) else f"{since:%Y-%m-%d %H:%M}Z",
                         "breaches": n, "href": href.format(path=path, direction=direction)})
    return pd.DataFrame(rows)


def health_grid(tables: Mapping[str, xr.Dataset], paths_meta: Sequence[Mapping[str, Any]] | None = None,
                href: str = "#{path}-{direction}") -> alt.Chart:
    """MaDDash's grid of the campaign (rows sources, columns destinations); the sources
    and destinations of campaign.yaml's ``paths``."""
    if paths_meta is None:
        paths_meta = json.loads(tables["alert_state"].attrs.get("metadata", "{}") or "{}").get("paths")
    cells = grid_cells(tables, paths_meta, href)
    return hcharts.grid(cells, title="state now, per source and destination (click: the path)")


def health_verdicts(tables: Mapping[str, xr.Dataset]) -> HTML | Markdown:
    rep = report_json(tables)
    rows = [{"path": s["path"], "direction": s["direction"], "state": s["state"], "since": s["since"] or "",
             "last data": s["last_data"] or "", "open breaches": sum(b["open"] for b in s["breaches"])}
            for s in rep["series"]]
    return _table(pd.DataFrame(rows))


def _table(frame):
    """A table as HTML, whole cells (no truncated rule text), no index column."""
    with pd.option_context("display.max_colwidth", None):
        return HTML(frame.to_html(index=False, na_rep=""))


def health_breaches(tables: Mapping[str, xr.Dataset]) -> HTML | Markdown:
    """Every breach: rule, series, start, end (open), worst value, change points in it."""
    rep = report_json(tables)
    rows = []
    for s in rep["series"]:
        for b in s["breaches"]:
            unit = rep["units"].get(b["rule"], "")
            rows.append({"path": s["path"], "direction": s["direction"], "rule": b["rule"],
                         "start": b["start"], "end": b["end"] or "open", "slots": b["slots"],
                         "worst": _value(b["worst"], unit, 4), "limit": _value(b["threshold"], unit, 4),
                         "change points": ", ".join(b["changes"])})
    if not rows:
        return Markdown("No breach.")
    return _table(pd.DataFrame(rows))


def health_states(tables: Mapping[str, xr.Dataset], path: str, direction: str) -> Markdown | alt.Chart:
    """The state of every slot of every rule of one path and direction."""
    alert = tables["alert_state"].sel(path=path, direction=direction)
    times = pd.DatetimeIndex(alert["time"].values)
    step = pd.Timedelta(seconds=float(alert.attrs.get("interval_s") or 60))
    frames = []
    for rule in alert["rule"].values:
        a = alert.sel(rule=rule)
        if not bool(a["applies"]):
            continue
        frames.append(_runs(pd.DataFrame({"time": times, "end": times + step, "row": str(rule),
                                          "state": [STATES[int(s)] for s in a["state"].values],
                                          "value": a["value"].values, "threshold": a["threshold"].values})))
    if not frames:
        return Markdown(f"No rule applies to {path} {direction}.")
    from IPython.display import display
    display(HTML(f'<a id="{path}-{direction}"></a>'))
    return hcharts.state_strip(pd.concat(frames), title=f"{path} {direction}: state of every slot")


def _runs(states):
    """Consecutive slots of one state as one rectangle (``time`` of the first, ``end`` of
    the last, ``slots``, the median ``value``): a year of 5-minute slots is a few runs,
    not 10^5 rectangles."""
    run = (states["state"] != states["state"].shift()).cumsum()
    g = states.groupby(run, sort=False)
    return pd.DataFrame({"time": g["time"].first(), "end": g["end"].last(), "row": g["row"].first(),
                         "state": g["state"].first(), "slots": g.size(), "value": g["value"].median(),
                         "threshold": g["threshold"].first()}).reset_index(drop=True)


def health_all_states(tables: Mapping[str, xr.Dataset]) -> None:
    """:func:`health_states` of every path and direction, each under its own anchor
    (``#<path>-<direction>``, where the grid's cells link)."""
    from IPython.display import display
    for path in tables["verdict"]["path"].values:
        for direction in tables["verdict"]["direction"].values:
            display(health_states(tables, path, direction))


def health_sla(tables: Mapping[str, xr.Dataset], freq: str = "1D") -> HTML | Markdown:
    """Per rule, path, direction and period: fraction of slots meeting the rule, longest
    breach, availability (slots run / slots due)."""
    t = tables.get(f"sla_{freq}")
    if t is None:
        return Markdown(f"No SLA table at {freq}.")
    frame = t.to_dataframe().reset_index()
    frame = frame[frame["applies"]]
    if frame.empty:
        return Markdown("No rule, so no SLA: campaign.yaml has no `alerts:` or `baseline:` "
                        "that applies to a path here.")
    frame["period"] = pd.to_datetime(frame["period"]).dt.strftime("%Y-%m-%d")
    frame["met (%)"] = (100 * frame["fraction_met"]).round(1)
    frame["availability (%)"] = (100 * frame["availability"]).round(1)
    frame = frame.rename(columns={"longest_breach": "longest breach (slots)", "with_data": "with data"})
    return _table(frame[["period", "path", "direction", "rule", "due", "ran", "with data", "met (%)",
                         "longest breach (slots)", "availability (%)"]])


def loss_class(loss: ArrayLike) -> np.ndarray:
    """SmokePing's loss classes (:data:`thruput.charts.health.LOSS_COLORS`)."""
    loss = np.asarray(loss, float)
    out = np.full(loss.shape, "0", dtype=object)
    out[loss > 0] = "< 5 %"
    out[loss >= 0.05] = "5-20 %"
    out[loss >= 0.2] = "20-50 %"
    out[loss >= 0.5] = ">= 50 %"
    return out


def health_events(tables: Mapping[str, xr.Dataset]) -> pd.DataFrame | None:
    """campaign.yaml's events (drawn as rules on the charts), or None."""
    return _events(tables)


def _events(tables):
    meta = json.loads(tables["alert_state"].attrs.get("metadata", "{}") or "{}")
    ev = meta.get("events") or []
    return pd.DataFrame({"time": pd.to_datetime([e["time"] for e in ev]).tz_localize(None),
                         "what": [e["what"] for e in ev]}) if ev else None


#: Most bins a chart draws: ``freq="auto"`` takes the finest rollup with no more.
MAX_BINS = 600


#: What each rollup shows, and what its absence means, in one line.
KIND_TEXT = {"ping_rtt": ("ping RTT", "ping"), "tcp_throughput": ("TCP throughput", "TCP"),
             "udp_throughput": ("UDP throughput", "UDP"), "udp_jitter": ("UDP jitter", "UDP")}


def rollup_kinds(rollups_path: str | Path) -> dict[str, set[str]]:
    """``{freq: set of kinds}`` the rollups file holds (a campaign without ping has no
    ``ping_rtt``; one whose tests all failed has no rollup at all)."""
    import xarray as xr
    with xr.open_datatree(rollups_path) as tree:
        return {f: set(node.children) for f, node in tree.children.items()}


def auto_freq(rollups_path: str | Path, kind: str, start: Any = None, end: Any = None) -> str:
    """The finest resolution of the rollups file with at most :data:`MAX_BINS` bins in
    ``[start, end)`` (read: the time coordinate of each, nothing else)."""
    import xarray as xr
    held = rollup_kinds(rollups_path)
    freqs = [f for f in FREQS if kind in held.get(f, ())] or [f for f in held if kind in held[f]]
    for freq in freqs:
        with xr.open_dataset(rollups_path, group=f"{freq}/{kind}") as ds:
            t = ds["time"].values
        t0 = np.datetime64(pd.Timestamp(start), "ns") if start is not None else t.min()
        t1 = np.datetime64(pd.Timestamp(end), "ns") if end is not None else t.max()
        if (t1 - t0) / pd.Timedelta(freq).to_timedelta64() <= MAX_BINS:
            return freq
    return freqs[-1]


def health_smokeping(rollups_path: str | Path, kind: str = "ping_rtt", freq: str = "auto",
                     direction: str = "forward", variant: float | None = None,
                     events: pd.DataFrame | None = None, start: Any = None, end: Any = None,
                     paths: Sequence[str] | None = None) -> Markdown | alt.VConcatChart:
    """SmokePing's chart of one rollup (``ping_rtt``, ``tcp_throughput`` ...) for the
    paths ``paths`` (default: all) of one direction: read from the rollups file, the bins
    of ``[start, end)`` at ``freq`` (``"auto"``: :func:`auto_freq`)."""
    quantity, test = KIND_TEXT.get(kind, (kind, kind))
    held = rollup_kinds(rollups_path)
    if not any(kind in kinds for kinds in held.values()):
        return Markdown(f"*No {quantity} to draw: no {test} test of this campaign ran with a result.*")
    if freq == "auto":
        freq = auto_freq(rollups_path, kind, start, end)
    r = open_rollup(rollups_path, freq, kind, start, end)
    if paths is not None:
        r = r.sel(path=[p for p in paths if p in r["path"].values])
    if direction not in r["direction"].values:
        return Markdown(f"*No {quantity} in the {direction} direction: no {test} test ran that way.*")
    r = r.sel(direction=direction)
    variants = r["variant"].values if variant is None else [variant]
    factor, unit, label = (1e6, "Mbit/s", "throughput") if r.attrs["units"] == "bit/s" else (1.0, r.attrs["units"], kind.split("_")[-1].upper() if kind == "ping_rtt" else kind)
    step = pd.Timedelta(freq)
    charts, empty = [], []
    for path in r["path"].values:
        for v in variants:
            s = r.sel(path=path, variant=v)
            what = {"ping_rtt": f"ping size {v:g} B" if v else "default ping size",
                    "tcp_throughput": f"socket buffer {v / 1024:g} KiB" if v else "default socket buffer"}.get(kind, "")
            name = f"{path} {direction}" + (f", {what}" if what else "")
            if not (s["n"].values > 0).any():
                empty.append(name)
                continue
            frame = pd.DataFrame({q: s[q].values / factor for q in ("median", "p10", "p25", "p75", "p90")})
            frame["time"] = pd.DatetimeIndex(s["time"].values)
            frame["end"] = frame["time"] + step
            frame["n"] = s["n"].values
            frame["loss"] = s["loss"].values
            frame["loss_class"] = loss_class(np.nan_to_num(s["loss"].values))
            frame["segment"] = np.cumsum(frame["n"].to_numpy() == 0)
            frame = frame[frame["n"] > 0]
            charts.append(hcharts.smokeping(frame, unit=unit, y_title=label, events=events,
                                            title=f"{name}: {freq} bins"))
    import altair as alt
    from IPython.display import display
    if empty:
        display(Markdown(f"*No {quantity} with a result (every test failed or none ran): "
                         + "; ".join(empty) + ".*"))
    return alt.vconcat(*charts) if charts else Markdown(f"*No {quantity} chart: no bin has a result.*")  # type: ignore[arg-type]


def health_throughput_delay(tables: Mapping[str, xr.Dataset]) -> Markdown | alt.VConcatChart:
    """Throughput against delay per series, one panel a path and direction."""
    t = tables.get("throughput_delay")
    if t is None or t.sizes.get("series", 0) == 0:
        return Markdown("No TCP runs paired with pings.")
    points = pd.DataFrame({"path": t["path"].values, "direction": t["direction"].values,
                           "series": [f"{d} {b / 1024:g} KiB" for d, b in zip(t["direction"].values, t["socket_buffer"].values)],
                           "period": t["period"].values, "rtt": t["rtt"].values,
                           "throughput": t["throughput"].values / 1e6, "n": t["n"].values})
    ell = []
    for i in range(t.sizes["series"]):
        ell.append(pd.DataFrame({"rtt": t["ellipse_rtt"].values[i], "throughput": t["ellipse_throughput"].values[i] / 1e6,
                                 "order": np.arange(t.sizes["vertex"]), "period": points["period"][i],
                                 "series": points["series"][i], "path": points["path"][i], "key": str(i)}))
    ellipses = pd.concat(ell)
    import altair as alt
    charts = [hcharts.throughput_delay(points[points["path"] == p], ellipses[ellipses["path"] == p],
                                       title=f"{p}: throughput vs delay per period (dot: median; ellipse: 1 sigma)")
              for p in points["path"].unique()]
    return alt.vconcat(*charts)  # type: ignore[arg-type]


def health_udp_loss(rollups_path: str | Path, freq: str = "1D") -> HTML | Markdown:
    """UDP per path and direction: datagram loss and the rate offered beside the rate
    received, per ``freq`` bin of the rollups (``udp_throughput`` and ``udp_offered``),
    in Mbit/s and percent; a sentence where the campaign has no UDP test."""
    import xarray as xr
    with xr.open_datatree(rollups_path) as tree:
        have = {str(node.path).strip("/") for node in tree.subtree}
    if f"{freq}/udp_throughput" not in have:
        return Markdown("No UDP test in this campaign: no datagram loss or offered rate to show.")
    received = open_rollup(rollups_path, freq, "udp_throughput")
    frame = received[["n", "median", "loss"]].to_dataframe().reset_index()
    if f"{freq}/udp_offered" in have:
        offered = open_rollup(rollups_path, freq, "udp_offered")["median"].rename("offered")
        frame = frame.merge(offered.to_dataframe().reset_index(), on=["path", "direction", "variant", "time"],
                            how="left")
    else:
        frame["offered"] = np.nan
    frame = frame[frame["n"] > 0]

    def mbit(x):
        return "–" if not np.isfinite(x) else f"{x / 1e6:.4g}"

    out = pd.DataFrame({
        "bin (UTC)": pd.to_datetime(frame["time"]).dt.strftime("%Y-%m-%d %H:%M" if freq != "1D" else "%Y-%m-%d"),
        "path": frame["path"], "direction": frame["direction"], "ok runs": frame["n"].astype(int),
        "datagram loss (%)": ["–" if not np.isfinite(x) else f"{100 * x:.3g}" for x in frame["loss"]],
        "offered, median (Mbit/s)": [mbit(x) for x in frame["offered"]],
        "received, median (Mbit/s)": [mbit(x) for x in frame["median"]]})
    return _table(out)
