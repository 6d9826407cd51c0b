"""Campaign pages, the catalogue, comparison, methods and data pages of the site.

Notebooks stay one line per cell: ``report.statistics(ds, product)``,
``report.campaign_charts(ds, product)``. Nothing here parses logs or computes a statistic:
every number comes from the pipeline's statistics products (``<campaign>.stats.nc``,
``catalogue.nc``, ``compare-<name>.nc``, :mod:`thruput.stats.product`), written once by
the ``stats``, ``catalogue`` and ``compare`` stages with the parameters of
``params.yaml``; this module arranges them into tables with units in their headers, and
picks charts. The normalized campaign (``<campaign>.nc``) gives the raw runs the charts
draw (box plots, per-interval series, TCP traces).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os

import html

import functools
import inspect
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
from IPython.display import HTML, Markdown, display

from .. import charts, guard
from . import design
from ..project import project_path
from .provenance import source_link
from ..charts.comparison import difference_intervals, levels_differ
from ..campaign.store import STATS_SUFFIX, open_product

__all__ = [
    "read_processed", "read_product", "title", "hosts_intro", "hosts_table", "statistics", "cell_table",
    "campaign_charts", "catalogue", "comparison", "methods", "data_files", "read_params", "metadata",
    "udp_charts", "udp_table",
]

MBIT = 1e6


def read_params(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The pipeline's parameters file (``params.yaml``, given by the page) as a dict."""
    return guard.load_yaml_file(path, guard.PARAMS) or {}


def read_processed(processed: str | os.PathLike[str], name: str) -> xr.Dataset:
    """The normalized campaign ``name`` from ``processed/<name>.nc``, loaded in memory.

    Its ``attrs["stats_product"]`` names the campaign's statistics product beside it
    (``<name>.stats.nc``), which :func:`read_product` opens.

    Raises
    ------
    ValueError
        When ``name`` is a statistics product (``<c>.stats``), not a campaign.
    """
    if name.endswith(STATS_SUFFIX[:-3]):
        raise ValueError(f"{name}: a statistics product, not a normalized campaign")
    with xr.open_dataset(project_path(processed) / f"{name}.nc") as ds:
        ds = ds.load()
    return ds.assign_attrs(stats_product=str(project_path(processed) / f"{name}{STATS_SUFFIX}"))



def read_product(processed: str | os.PathLike[str], name: str | None = None) -> xr.DataTree:
    """The statistics product of campaign ``name`` (``processed/<name>.stats.nc``).

    ``processed`` may also be a campaign Dataset from :func:`read_processed` (its
    ``attrs["stats_product"]``) or the path of any product file.
    """
    if isinstance(processed, xr.Dataset):
        path = processed.attrs.get("stats_product")
        if not path:
            raise ValueError(f"campaign {processed.attrs.get('campaign')!r} was not read by "
                             "report.read_processed: its statistics product is unknown")
    else:
        path = project_path(processed) / f"{name}{STATS_SUFFIX}" if name else project_path(processed)
    if not Path(path).exists():
        raise FileNotFoundError(f"{path}: no statistics product (`thruput pipeline stats` writes it)")
    return _cached_product(str(path), Path(path).stat().st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _cached_product(path, mtime_ns):
    return open_product(path)


def _group(product, name):
    """Group ``name`` of a product as a Dataset (None when the product has no such group)."""
    return product[name].to_dataset() if name in product.children else None


def metadata(ds: xr.Dataset) -> dict[str, Any]:
    """The campaign's ``campaign.yaml`` as a dict (kept as JSON in ``attrs['metadata']``)."""
    raw = ds.attrs.get("metadata", "{}")
    return json.loads(raw) if isinstance(raw, str) else dict(raw)


def _is_design(ds):
    return ds.attrs.get("campaign_kind") == "design"


def title(ds: xr.Dataset) -> Markdown:
    """A Markdown heading and description of the campaign (a design's: :mod:`thruput.report.design`)."""
    if _is_design(ds):
        return design.design_title(read_product(ds))
    meta = metadata(ds)
    path = meta.get("path", {})
    dates = meta.get("dates", {})
    lines = [f"# {meta.get('title', ds.attrs.get('campaign', 'campaign'))}", "",
             meta.get("description", "").strip(), "",
             f"**Path:** {path.get('source', '?')} → {path.get('destination', '?')}"
             + (f" ({path['between']})" if path.get("between") else ""),
             f"**Dates:** {dates.get('start') or '?'} – {dates.get('end') or 'not ended'}"]
    if meta.get("notes"):
        lines += ["", f"*{meta['notes'].strip()}*"]
    return Markdown("\n\n".join(line for line in lines if line is not None))


def hosts_intro() -> Markdown:
    """The sentence above the hosts table, naming and linking seed 000's page (its host table)."""
    from ..studies import page_link

    title, href = page_link("000")
    return Markdown("The hosts and their TCP settings, as recorded with the campaign; compare the "
                    f"per-host table of [{title}]({href}).")


def hosts_table(ds: xr.Dataset) -> pd.DataFrame:
    """One column per host, one row per property, as seed 000's host table."""
    meta = metadata(ds)
    rows = {}
    for name, host in meta.get("hosts", {}).items():
        tcp = host.get("tcp", {}) or {}
        rows[name] = {
            "CPU": host.get("cpu_model"),
            "CPUs x MHz": _joined(" x ", host.get("cpu_count"), host.get("cpu_mhz")),
            "memory (GiB)": _round(host.get("memory_bytes"), 2 ** 30),
            "OS": host.get("os"), "kernel": host.get("kernel"), "NIC": host.get("nic"),
            "link (Mbit/s)": _round(host.get("link_speed_bps"), MBIT),
            "rmem default / max (bytes)": _joined(" / ", tcp.get("rmem_default"), tcp.get("rmem_max")),
            "wmem default / max (bytes)": _joined(" / ", tcp.get("wmem_default"), tcp.get("wmem_max")),
            "tcp_rmem min/default/max (bytes)": _joined(" ", *(tcp.get("tcp_rmem") or [])),
            "tcp_wmem min/default/max (bytes)": _joined(" ", *(tcp.get("tcp_wmem") or [])),
            "congestion control": tcp.get("congestion_control"),
            "window scaling / SACK": _joined(" / ", tcp.get("window_scaling"), tcp.get("sack")),
        }
    if not rows:
        return Markdown("The campaign does not describe its hosts.")
    table = pd.DataFrame(rows)
    tools = meta.get("tools", {})
    if tools:
        table.loc["tools"] = ", ".join(f"{k} {v}" for k, v in tools.items())
    return table.fillna("–")


def _joined(separator, *values):
    """Values joined for a table cell; None when none of them is known."""
    if not values or all(v is None for v in values):
        return None
    return separator.join("?" if v is None else str(v) for v in values)


def _round(value, unit):
    return None if value is None else round(value / unit, 2)


def _is_tcp(ds):
    return ds.attrs.get("campaign_kind", "tcp_sweep") == "tcp_sweep" and "throughput" in ds


def _has_ping(ds):
    """True when the campaign has ping probes (a sweep imported without ping logs has none)."""
    return "rtt" in ds and ds.sizes.get("probe", 0) > 0


def cell_summary(ds, product=None):
    """Per window x streams cell: throughput statistics over repeats and loaded ping RTT,
    from the statistics product (groups ``cells`` and ``rtt``)."""
    product = read_product(ds) if product is None else product
    df = _group(product, "cells").to_dataframe().reset_index()
    rtt = _group(product, "rtt")
    if rtt is not None:
        loaded = rtt.sel(phase="loaded")[["min", "mean", "max", "median", "sent", "lost"]]
        rtt = loaded.to_dataframe().reset_index().rename(columns={
            "min": "rtt_min", "mean": "rtt_mean", "max": "rtt_max", "median": "rtt_median"})
        df = df.merge(rtt[["window", "streams", "rtt_min", "rtt_mean", "rtt_max", "rtt_median",
                           "sent", "lost"]], on=["window", "streams"], how="left")
    return df


def cell_table(ds: xr.Dataset, product: xr.DataTree | None = None) -> HTML | pd.DataFrame:
    """The statistics the seeds report, per cell: average, median, max, IQR (Mbit/s),
    loaded ping RTT min/avg/max (ms) and loss."""
    product = read_product(ds) if product is None else product
    if not _is_tcp(ds):
        return udp_table(ds, product)
    df = cell_summary(ds, product)
    out = pd.DataFrame({
        "window (KiB)": [f"{w / 1024:g}" for w in df["window"]],
        "streams": df["streams"].astype(int),
        "runs": df["n"].astype(int),
        "average (Mbit/s)": [_mbit_text(v) for v in df["mean"]],
        "median (Mbit/s)": [_mbit_text(v) for v in df["median"]],
        "max (Mbit/s)": [_mbit_text(v) for v in df["max"]],
        "IQR (Mbit/s)": [_mbit_text(v) for v in df["iqr"]],
    })
    if "rtt_min" in df:
        out["loaded RTT min/avg/max (ms)"] = [
            f"{a:.3f} / {b:.3f} / {c:.3f}" if np.isfinite(b) else "–"
            for a, b, c in zip(df["rtt_min"], df["rtt_mean"], df["rtt_max"])]
        out["loaded loss"] = [f"{int(l)}/{int(s)}" if np.isfinite(s) and s > 0 else "–"
                              for l, s in zip(df["lost"], df["sent"])]
    return HTML(out.to_html(index=False))


def _mbit_text(value):
    """bit/s as Mbit/s with one decimal (three significant digits below 1 Mbit/s)."""
    if not np.isfinite(value):
        return "–"
    mbit = value / MBIT
    return f"{mbit:.1f}" if abs(mbit) >= 1 else f"{mbit:.3g}"


def udp_table(ds: xr.Dataset, product: xr.DataTree | None = None) -> HTML | pd.DataFrame:
    """Per packet size of a UDPmon sweep: peak receive rate (Mbit/s) and its spacing, and the
    spacing below which frames are lost (us), from :func:`thruput.stats.udp_onset`."""
    product = read_product(ds) if product is None else product
    if "udp_onset" not in product.children:
        return pd.DataFrame()
    onset = _group(product, "udp_onset").to_dataframe().reset_index()
    return HTML(pd.DataFrame({
        "packet (bytes)": onset["packet_size"].astype(int),
        "peak receive (Mbit/s)": (onset["peak_rate"] / MBIT).round(1),
        "at spacing (us)": onset["peak_spacing"],
        "loss up to spacing (us)": onset["loss_onset"],
        "loss-free from (us)": onset["loss_free_from"],
    }).fillna("–").to_html(index=False))


def statistics(ds: xr.Dataset, product: xr.DataTree | None = None) -> HTML | pd.DataFrame:
    """The statistics section of a campaign page: heading, what it shows, the table (a
    design's: :func:`thruput.report.design.design_statistics`)."""
    product = read_product(ds) if product is None else product
    if _is_design(ds):
        return design.design_statistics(product)
    if _is_tcp(ds):
        display(Markdown("## Throughput statistics\n\nPer window x streams cell over the repeats "
                         "(shown in Mbit/s), with the ping RTT measured while the cell ran (loaded)."))
    else:
        display(Markdown("## UDP throughput and loss\n\nPer packet size, over the inter-packet "
                         "spacings swept by `udpmon_bw_mon`."))
    display(source_link("cells" if _is_tcp(ds) else "udp_grid"))
    return cell_table(ds, product)


def _unloaded_rtt_s(ds, product=None):
    """The unloaded median ping RTT of the campaign (s), None without ping probes."""
    product = read_product(ds) if product is None else product
    bound = _group(product, "bound")
    if bound is None:
        return None
    value = float(bound["rtt"])
    return value / 1000 if np.isfinite(value) else None


def campaign_charts(ds: xr.Dataset, product: xr.DataTree | None = None) -> Markdown | None:  # type: ignore[return]
    """Every chart of a campaign page, displayed in order (a design's:
    :func:`thruput.report.design.design_charts`)."""
    product = read_product(ds) if product is None else product
    if _is_design(ds):
        return design.design_charts(product)
    if not _is_tcp(ds):
        return udp_charts(ds, product)  # type: ignore[func-returns-value]
    df = cell_summary(ds, product)
    cells = df.rename(columns={"p25": "q25", "p75": "q75"})
    if not np.isfinite(cells["median"]).any():
        return Markdown("No run of this campaign completed: there is nothing to chart.")
    rtt_s = _unloaded_rtt_s(ds, product)
    capacity = metadata(ds).get("path", {}).get("capacity_bps")
    theory = None
    if rtt_s:
        theory = _group(product, "bound")["bound"].to_dataframe().reset_index()
    display(Markdown("## Throughput over window and streams"))
    display(charts.heatmap(cells))
    display(Markdown(
        "Median over repeats per cell, IQR as a band; dashed: the window bound n x window / RTT "
        f"with the unloaded median RTT ({rtt_s * 1000:.3f} ms)" if rtt_s else "Median over repeats per cell."))
    display(charts.throughput_vs_window(cells, theory, capacity))
    display(charts.cell_boxplots(ds["throughput"].to_dataframe().reset_index().dropna(subset=["throughput"])))
    if "interval_throughput" in ds:
        display(Markdown("## Per-interval throughput of the best cell's runs"))
        display(charts.interval_series(_best_cell_intervals(ds, cells)))
    if "interval_cwnd" in ds and np.isfinite(ds["interval_cwnd"].values).any():
        display(Markdown("## TCP congestion window and smoothed RTT\n\nThe sender's TCP state at the "
                         "end of each reporting interval (iperf3's `tcp_info`: cwnd summed over the "
                         "streams, smoothed RTT averaged over them), for the first completed repeat "
                         "of the smallest and of the best window with the fewest streams."))
        display(charts.tcp_trace(_tcp_trace_frame(ds, cells)))
    if _has_ping(ds):
        display(Markdown("## Ping RTT with and without load"))
        display(charts.rtt_ecdf(_rtt_ecdf_frame(product)))
    display(Markdown("## Window plateau per streams count"))
    display(source_link("plateau"))
    display(_plateau_table(_group(product, "plateau")))


#: How a plateau onset at the edge of the sweep is shown (stats.plateau's ``censored``): the
#: true onset may lie outside the windows measured, so the value is a bound, not an estimate.
CENSORED_ONSET = {"below": "≤ {:.1f} (at the smallest window: the onset may be below the sweep)",
                  "above": "≥ {:.1f} (at the largest window: the plateau may lie beyond the sweep)"}


def _plateau_table(plateau):
    df = plateau.to_dataframe().reset_index()
    censored = df["censored"] if "censored" in df else pd.Series(["no"] * len(df))
    onset = [CENSORED_ONSET[c].format(o / 1024) if c in CENSORED_ONSET else f"{o / 1024:.1f}"
             if np.isfinite(o) else "–" for o, c in zip(df["onset"], censored)]
    ci = [f"{a / 1024:.0f} – {b / 1024:.0f}" if np.isfinite(a) and np.isfinite(b) and c not in CENSORED_ONSET
          else "–" for a, b, c in zip(df["onset_low"], df["onset_high"], censored)]
    return _plain_table({
        "streams": df["streams"].astype(int),
        "plateau (Mbit/s)": (df["level"] / MBIT).round(1),
        "onset window (KiB)": onset,
        f"onset {float(plateau.attrs['confidence']):.0%} CI (KiB)": ci,
        "limited by": df["limited_by"],
    })


def _nowrap(text):
    return f'<span style="white-space: nowrap">{html.escape(str(text))}</span>'


def _plain_table(columns):
    """A table without the DataFrame index, as HTML; "–" where a number is unknown."""
    return HTML(pd.DataFrame(columns).to_html(index=False, na_rep="–"))


def _best_cell_intervals(ds, cells):
    best = cells.loc[cells["median"].idxmax()]
    runs = ds["interval_throughput"].sel(window=best["window"], streams=best["streams"])
    df = runs.to_dataframe().reset_index().dropna(subset=["interval_throughput"])
    width = float(ds.attrs.get("interval_s", 1.0))
    if "interval_end" in ds:
        ends = ds["interval_end"].sel(window=best["window"], streams=best["streams"]).to_dataframe().reset_index()
        df = df.merge(ends[["repeat", "interval", "interval_end"]], on=["repeat", "interval"])
        df["time"] = df["interval_end"]
    else:
        df["time"] = (df["interval"] + 1) * width
    df["run"] = [f"{best['window'] / 1024:g} KiB x {int(best['streams'])}, repeat {int(r)}" for r in df["repeat"]]
    return df.rename(columns={"interval_throughput": "throughput"})[["time", "throughput", "run"]]


def _tcp_trace_frame(ds, cells):
    # the fewest streams that have a completed run (a cell the plan asked for but that
    # never ran is all NaN, and so may be a whole streams count)
    measured = cells.dropna(subset=["median"])
    one = measured[measured["streams"] == measured["streams"].min()]
    picks = [one["window"].min(), one.loc[one["median"].idxmax(), "window"]]
    frames = []
    for window in dict.fromkeys(picks):
        cell = ds.sel(window=window, streams=one["streams"].min())
        run = cell.sel(repeat=cell["throughput"].dropna("repeat")["repeat"][0])
        width = float(ds.attrs.get("interval_s", 1.0))
        frames.append(pd.DataFrame({
            "time": (np.arange(run.sizes["interval"]) + 1) * width,
            "cwnd": run["interval_cwnd"].values, "srtt": run["interval_rtt"].values,
            "run": f"{window / 1024:g} KiB x {int(one['streams'].min())} stream"}))
    return pd.concat(frames).dropna(subset=["cwnd"])


def _rtt_ecdf_frame(product):
    e = _group(product, "rtt_ecdf")
    df = e[["value", "probability"]].to_dataframe().reset_index().dropna()
    return df.rename(columns={"value": "rtt", "probability": "fraction"})[["rtt", "fraction", "phase"]]


def udp_charts(ds: xr.Dataset, product: xr.DataTree | None = None) -> None:
    """Charts of a UDPmon campaign: rate and loss vs spacing, latency vs size with the fit
    of the statistics product (the campaign's main latency scan)."""
    product = read_product(ds) if product is None else product
    if "packet_size" in ds:
        rows = ds[["spacing", "recv_rate", "loss_fraction", "packet_size"]].to_dataframe().reset_index()
        display(charts.udp_vs_spacing(rows))
    fit = _group(product, "latency_fit")
    if fit is not None:
        pts = fit[["size", "latency"]].to_dataframe().reset_index()[["size", "latency"]].dropna()
        display(Markdown(f"Fitted slope {float(fit['slope']):.5f} ± {float(fit['slope_se']):.5f} us/byte, "
                         f"intercept {float(fit['intercept']):.2f} ± {float(fit['intercept_se']):.2f} us "
                         f"(least squares over the {int(fit['n'])} points of `{fit.attrs.get('scan_file', 'the scan')}`)."))
        display(charts.latency_vs_size(pts, {"slope": float(fit["slope"]), "intercept": float(fit["intercept"])}))


#: File names of the stage outputs in the reports folder (``data/report``).
CATALOGUE = "catalogue.nc"
COMPARISON = "compare-{name}.nc"


def catalogue(reports: str | os.PathLike[str]) -> HTML:
    """The home page table: one row per campaign with its headline numbers and a link.

    ``reports`` is the folder of the ``catalogue`` stage's ``catalogue.nc``.
    """
    table = open_product(project_path(reports) / CATALOGUE).to_dataset()
    rows = []
    for name in table["campaign"].values:
        c = table.sel(campaign=name)
        # paths and dates never wrap (a reader scans them down the column)
        page = "monitor" if c["kind"].item() == "monitor" else "campaign"
        row = {"campaign": f'<a href="{page}-{name}.html">{name}</a>',
               "path": _nowrap(_path_text(c)),
               "dates": _nowrap(_dates(c)), "kind": c["kind"].item()}
        best = float(c["best_median"])
        if np.isfinite(best):
            row["best median (Mbit/s)"] = f"{best / MBIT:.1f}"
        if c["kind"].item() == "tcp_sweep":
            onset = float(c["plateau_onset"])
            row["plateau onset, 1 stream (KiB)"] = f"{onset / 1024:.0f}" if np.isfinite(onset) else "–"
            if np.isfinite(float(c["rtt_unloaded"])):
                row["RTT unloaded / loaded median (ms)"] = (
                    f"{float(c['rtt_unloaded']):.3f} / {float(c['rtt_loaded']):.3f}")
        rows.append(row)
    return HTML(pd.DataFrame(rows).fillna("–").to_html(escape=False, index=False))


def endpoints(source: str | None, destination: str | None) -> str:
    """``"a → b"`` with only what is known (``"from a"``, ``"to b"``, ``""``): a
    campaign.yaml may name neither end of a path (an imported pile)."""
    known = [str(x) for x in (source, destination)]
    known = [x if x not in ("", "None", "nan", "?") else "" for x in known]
    if all(known):
        return f"{known[0]} → {known[1]}"
    return f"from {known[0]}" if known[0] else (f"to {known[1]}" if known[1] else "")


def _path_text(row):
    """A catalogue row's path: its ends where known; a monitor's path names otherwise
    (and how many paths it watches)."""
    ends = endpoints(row["source"].item(), row["destination"].item())
    names = [n for n in str(row["paths"].item()).split(", ") if n] if "paths" in row else []
    if len(names) > 1:
        return f"{len(names)} paths: {', '.join(names[:3])}" + (", …" if len(names) > 3 else "")
    if names and not ends:
        return names[0]
    return ends or "–"


def _dates(row):
    """A catalogue row's dates: its start, and the day of its last run if another
    (a monitor campaign; catalogues written before ``end`` have none)."""
    start = str(row["start"].item())[:16].replace("T", " ")
    end = str(row["end"].item()) if "end" in row else ""
    return f"{start} → {end}" if end and end != start[:10] else start


def comparison(reports: str | os.PathLike[str], name: str) -> HTML:
    """A comparison page: per-cell differences of the median with their bootstrap
    intervals (chart and table), and what differs in the set-up.

    ``reports/compare-<name>.nc`` is what the ``compare@<name>`` stage wrote for the
    comparison ``name`` of ``params.yaml``.
    """
    product = open_product(project_path(reports) / COMPARISON.format(name=name))
    a, b = product.attrs["a"], product.attrs["b"]
    if product.attrs.get("kind") == "design":
        display(design.design_comparison(product))
        return _setup_table(product, a, b)
    cells = _group(product, "cells")
    confidence = float(cells.attrs["confidence"])
    display(Markdown(f"## {a} → {b}\n\nPer cell present in both; differences are "
                     f"{b} minus {a}. With {product.attrs['repeats_a']} and "
                     f"{product.attrs['repeats_b']} repeats per cell the exact Mann-Whitney p-value "
                     "cannot go below 0.1: read it as a screen, and no correction for the many cells "
                     "is applied."))
    df = cells.to_dataframe().reset_index().dropna(subset=["median_a", "median_b"])
    if len(df):
        if "ratio" in df and levels_differ(df):
            display(Markdown(f"The two levels differ by an order of magnitude or more, so the chart "
                             f"shows the ratio {b} / {a} on a log scale (1: no difference); the table "
                             "gives both."))
        display(difference_intervals(df, a, b, confidence))
    ratio = {}
    if "ratio" in df:
        ratio = {f"ratio {b} / {a}": [f"{v:.3g}" for v in df["ratio"]],
                 f"{confidence:.0%} CI (ratio)": [f"{lo:.3g} – {hi:.3g}" for lo, hi in zip(df["ratio_low"], df["ratio_high"])]}
    display(HTML(pd.DataFrame({
        "window (KiB)": [f"{w / 1024:g}" for w in df["window"]], "streams": df["streams"].astype(int),
        f"median {a} (Mbit/s)": [_mbit_text(v) for v in df["median_a"]],
        f"median {b} (Mbit/s)": [_mbit_text(v) for v in df["median_b"]],
        "difference (Mbit/s)": [_mbit_text(v) for v in df["difference"]],
        f"{confidence:.0%} CI (Mbit/s)": [
            f"{_mbit_text(lo)} – {_mbit_text(hi)}" for lo, hi in zip(df["difference_low"], df["difference_high"])],
        **ratio,
        "Hodges-Lehmann (Mbit/s)": [_mbit_text(v) for v in df["hodges_lehmann"]],
        "Mann-Whitney p": df["p_value"].round(3),
    }).to_html(index=False)))
    return _setup_table(product, a, b)


def _setup_table(product, a, b):
    """What differs between the two campaigns' set-ups (the comparison's ``metadata``)."""
    display(Markdown("## What differs in the set-up\n\nEvery entry of the two `campaign.yaml` files "
                     "that differs (hosts matched by their role on the path)."))
    meta = _group(product, "metadata").to_dataframe().reset_index(drop=True)
    table = pd.DataFrame({"key": meta["key"], a: meta["a"], b: meta["b"], "change": meta["change"]})
    # (pandas writes a line break inside a cell as a literal "\n": a paragraph break is <br>)
    return HTML(table.replace("", "–").map(_html_lines).to_html(index=False, escape=False))


def _html_lines(value):
    """Text for an HTML table cell: escaped, its line breaks kept as ``<br>``."""
    return html.escape(str(value)).strip().replace("\n", "<br>")


def methods(params: str | os.PathLike[str]) -> Markdown:
    """The methods page: the pipeline's parameters, then each statistic with its estimator
    (the summary line and the Notes of its docstring, where the reference is given).

    ``params`` is the pipeline's ``params.yaml`` (the page's parameter).
    """
    from .. import stats                  # only the docstrings: nothing is computed here

    p = read_params(params)
    display(Markdown("## Parameters (`params.yaml`, section `stats`)"))
    rows = [{"parameter": k, "value": ", ".join(map(str, v)) if isinstance(v, list) else v}
            for k, v in p.get("stats", {}).items()]
    display(HTML(pd.DataFrame(rows).to_html(index=False)))
    display(Markdown("## Statistics (`thruput.stats`)"))
    parts = []
    for name in stats.__all__:
        fn = getattr(stats, name)
        if not callable(fn) or not getattr(fn, "__doc__", None):
            continue
        summary, notes = _doc_parts(fn)
        parts.append(f"**`thruput.stats.{name}`**: {summary}" + (f"\n\n> {notes}" if notes else ""))
    return Markdown("\n\n".join(parts))


def _doc_parts(fn):
    """The summary line and the first paragraph of the Notes section of a numpydoc docstring."""
    doc = inspect.getdoc(fn) or ""
    summary = doc.split("\n\n", 1)[0].replace("\n", " ")
    notes = ""
    match = re.search(r"^Notes\n-+\n(.*?)(?:\n\n|\Z)", doc, flags=re.M | re.S)
    if match:
        notes = " ".join(match.group(1).split())
    return _plain_rst(summary), _plain_rst(notes)


#: reStructuredText in docstrings -> Markdown: roles become code, citation marks go.
_RST = ((re.compile(r":(?:func|class|mod|data|attr|meth|math):`~?([^`]+)`"), r"`\1`"),
        (re.compile(r"``([^`]+)``"), r"`\1`"),
        (re.compile(r"\s?\[\d+\]_"), ""))


def _plain_rst(text):
    for pattern, replacement in _RST:
        text = pattern.sub(replacement, text)
    return text


def data_files(package: str | os.PathLike[str]) -> HTML | Markdown:
    """The data page table: each file of the data package with its sha256 and a link.

    ``package`` is the ``datapackage.json`` the site's ``datapackage`` step wrote.
    """
    pkg_path = Path(package)
    if not pkg_path.exists():
        return Markdown("The data package is assembled by `thruput site build`.")
    pkg = json.loads(pkg_path.read_text())
    rows = [{"file": f'<a href="../data/{r["path"]}">{r["path"]}</a>', "format": r["format"],
             "bytes": r.get("bytes"), "sha256": r["hash"].split(":", 1)[1]} for r in pkg["resources"]]
    rows.append({"file": '<a href="../data/datapackage.json">datapackage.json</a>', "format": "json",
                 "bytes": pkg_path.stat().st_size, "sha256": "(the descriptor)"})
    if (pkg_path.parent / "CITATION.cff").exists():
        rows.append({"file": '<a href="../data/CITATION.cff">CITATION.cff</a>', "format": "cff",
                     "bytes": (pkg_path.parent / "CITATION.cff").stat().st_size, "sha256": "(citation)"})
    return HTML(pd.DataFrame(rows).to_html(escape=False, index=False))


