"""``ds.thruput`` and ``da.thruput``: accessors that only forward to :mod:`thruput.stats`.

Registered by ``import thruput`` (:mod:`thruput.accessors`, which imports this module, and
SciPy with it, only when an accessor is first used). Every method names the variable it
works on (campaign names by default) and passes the rest through unchanged, so
``ds.thruput.plateau(tolerance=0.05)`` is ``plateau(ds["throughput"], tolerance=0.05)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Hashable, Mapping

from importlib import import_module


# by module path, not `from . import`: thruput.stats re-exports functions named like their
# modules (plateau), which would shadow the module once the package is imported
_bounds = import_module(".bounds", __package__)
_changes = import_module(".changes", __package__)
_compare = import_module(".compare", __package__)
_design = import_module(".design", __package__)
_jitter = import_module(".jitter", __package__)
_latency = import_module(".latency", __package__)
_load = import_module(".load", __package__)
_monitor = import_module(".monitor", __package__)
_monitor_tables = import_module(".monitor_tables", __package__)
_periodic = import_module(".periodic", __package__)
_plateau = import_module(".plateau", __package__)
_summaries = import_module(".summaries", __package__)
_tcp = import_module(".tcp", __package__)
_udp = import_module(".udp", __package__)

__all__ = ["DatasetAccessor", "DataArrayAccessor", "SIZE_COORDS", "sizes_to_bytes"]

#: Coordinates in bytes that may be selected with sizes as text ("64K", "1M"; K = 1024).
SIZE_COORDS = ("window", "socket_buffer", "window_requested", "size", "packet_size",
               "request_size")


def sizes_to_bytes(indexers: Mapping[Hashable, Any]) -> dict[Hashable, Any]:
    """``{"window": "64K"}`` -> ``{"window": 65536}``: sizes as text (one, a list or a
    slice) become bytes on the coordinates of :data:`SIZE_COORDS`; others pass unchanged."""
    from ..quantities import parse_size

    def one(value):
        return parse_size(value) if isinstance(value, str) else value

    out = {}
    for name, value in indexers.items():
        if name in SIZE_COORDS:
            if isinstance(value, slice):
                value = slice(one(value.start), one(value.stop), value.step)
            elif isinstance(value, (list, tuple)):
                value = [one(v) for v in value]
            else:
                value = one(value)
        out[name] = value
    return out


#: Methods of ``ds.thruput`` that apply to a monitor campaign (``campaign_kind:
#: monitor``); its repr lists only these.
MONITOR_METHODS = frozenset({"sel", "change_points", "periodogram", "daily_cycle", "ecdf",
                             "frequency", "compare", "metadata_diff", "udp_tcp_ratio",
                             "gap_report", "monitor_product"})
#: Methods that apply only to a monitor campaign (not listed for other Datasets).
MONITOR_ONLY = frozenset({"change_points", "udp_tcp_ratio", "gap_report", "monitor_product"})


#: Methods of ``ds.thruput`` that apply to a design campaign (``campaign_kind: design``):
#: they take factor names; its repr lists only these.
DESIGN_METHODS = frozenset({"sel", "factors", "design_summary", "design_plateau", "level_comparison",
                            "compare_designs", "design_product", "describe", "bootstrap_ci", "ecdf",
                            "frequency", "metadata_diff", "periodogram", "daily_cycle"})
#: Methods that apply only to a design campaign (not listed for other Datasets).
DESIGN_ONLY = frozenset({"factors", "design_summary", "design_plateau", "level_comparison",
                         "compare_designs", "design_product"})


def _is_design(ds):
    return ds.attrs.get("campaign_kind") == "design"


def _is_monitor(ds):
    return ds.attrs.get("campaign_kind") == "monitor"


def _describe_object(obj, what, only=None, hide=frozenset()):
    """The accessor's repr: what the object holds and what can be asked of it (``only``
    those names, if given, never those of ``hide``)."""
    methods = sorted(m for m in dir(type(obj)) if not m.startswith("_")
                     and (only is None or m in only) and m not in hide)
    return f"<thruput accessor of {what}>\nmethods: " + ", ".join(methods)



class DataArrayAccessor:
    """Statistics of one DataArray (``da.thruput.describe("repeat")`` ...)."""

    def __init__(self, da):
        self._da = da

    def __repr__(self):
        units = self._da.attrs.get("units", "")
        dims = ", ".join(f"{d}: {n}" for d, n in self._da.sizes.items())
        return _describe_object(self, f"{self._da.name or 'a DataArray'} ({units}; {dims})")

    def sel(self, indexers=None, method=None, **kwargs):
        """``da.sel`` that also takes sizes as text on byte coordinates
        (``da.thruput.sel(window="64K")``)."""
        return self._da.sel(sizes_to_bytes({**(indexers or {}), **kwargs}), method=method)

    def describe(self, dim=None, **kwargs):
        """:func:`thruput.stats.describe` of this array."""
        return _summaries.describe(self._da, dim, **kwargs)

    def bootstrap_ci(self, dim=None, **kwargs):
        """:func:`thruput.stats.bootstrap_ci` of this array."""
        return _summaries.bootstrap_ci(self._da, dim, **kwargs)

    def ecdf(self, dim=None):
        """:func:`thruput.stats.ecdf` of this array."""
        return _summaries.ecdf(self._da, dim)

    def frequency(self, dim=None, **kwargs):
        """:func:`thruput.stats.frequency` of this array."""
        return _summaries.frequency(self._da, dim, **kwargs)

    def plateau(self, **kwargs):
        """:func:`thruput.stats.plateau` of this array."""
        return _plateau.plateau(self._da, **kwargs)

    def best_cells(self, **kwargs):
        """:func:`thruput.stats.best_cells` of this array."""
        return _plateau.best_cells(self._da, **kwargs)

    def top_fraction(self, **kwargs):
        """:func:`thruput.stats.top_fraction` of this array."""
        return _plateau.top_fraction(self._da, **kwargs)

    def smallest_product(self, **kwargs):
        """:func:`thruput.stats.smallest_product` of this array."""
        return _plateau.smallest_product(self._da, **kwargs)

    def compare(self, other, **kwargs):
        """:func:`thruput.stats.compare` of this array (``a``) with ``other`` (``b``)."""
        return _compare.compare(self._da, other, **kwargs)

    def periodogram(self, time=None, **kwargs):
        """:func:`thruput.stats.periodogram` of this array."""
        return _periodic.periodogram(self._da, time, **kwargs)

    def daily_cycle(self, time=None, **kwargs):
        """:func:`thruput.stats.daily_cycle` of this array."""
        return _periodic.daily_cycle(self._da, time, **kwargs)

    # --- monitor campaigns (thruput.stats.changes, thruput.stats.monitor) ---
    def change_points(self, time=None, **kwargs):
        """:func:`thruput.stats.change_points` of this array."""
        return _changes.change_points(self._da, time, **kwargs)

    def rolling_summary(self, **kwargs):
        """:func:`thruput.stats.rolling_summary` of this array."""
        return _monitor.rolling_summary(self._da, **kwargs)

    def compare_periods(self, period_a, period_b, **kwargs):
        """:func:`thruput.stats.compare_periods` of this array."""
        return _monitor.compare_periods(self._da, period_a, period_b, **kwargs)

    def direction_asymmetry(self, **kwargs):
        """:func:`thruput.stats.direction_asymmetry` of this array."""
        return _monitor.direction_asymmetry(self._da, **kwargs)

    def buffer_curves(self, periods, **kwargs):
        """:func:`thruput.stats.buffer_curves` of this array."""
        return _monitor.buffer_curves(self._da, periods, **kwargs)

    def ipdv(self, dim="probe"):
        """:func:`thruput.stats.ipdv` of this array (delays, NaN = lost)."""
        return _jitter.ipdv(self._da, dim)

    def jitter_rfc3550(self, dim="probe"):
        """:func:`thruput.stats.jitter_rfc3550` of this array (delays, NaN = lost)."""
        return _jitter.jitter_rfc3550(self._da, dim)

    def loss_bursts(self, dim="probe", **kwargs):
        """:func:`thruput.stats.loss_bursts` of this array (1 = lost, 0 = received)."""
        return _jitter.loss_bursts(self._da, dim, **kwargs)

    def jain_fairness(self, dim="stream"):
        """:func:`thruput.stats.jain_fairness` of this array (per-stream values)."""
        return _jitter.jain_fairness(self._da, dim)



class DatasetAccessor:
    """Statistics of a campaign or contract Dataset (``ds.thruput.plateau()`` ...)."""

    def __init__(self, ds):
        self._ds = ds

    def __repr__(self):
        kind = self._ds.attrs.get("campaign_kind") or self._ds.attrs.get("kind") or "Dataset"
        name = self._ds.attrs.get("campaign") or self._ds.attrs.get("source_path") or ""
        dims = ", ".join(f"{d}: {n}" for d, n in self._ds.sizes.items())
        what = f"{kind} {name} ({dims})".replace("  ", " ")
        if _is_monitor(self._ds):
            return _describe_object(self, what, only=MONITOR_METHODS)
        if _is_design(self._ds):
            return _describe_object(self, what, only=DESIGN_METHODS)
        return _describe_object(self, what, hide=MONITOR_ONLY | DESIGN_ONLY)

    def __dir__(self):
        names = set(super().__dir__())
        if _is_monitor(self._ds):
            return sorted(n for n in names if n.startswith("_") or n in MONITOR_METHODS)
        if _is_design(self._ds):
            return sorted(n for n in names if n.startswith("_") or n in DESIGN_METHODS)
        return sorted(names - MONITOR_ONLY - DESIGN_ONLY)

    def _time(self, time):
        """``time`` as given, else ``start_time`` (sweeps) or ``time`` (monitors)."""
        if time is not None:
            return time
        return "time" if _is_monitor(self._ds) or "start_time" not in self._ds.variables else "start_time"

    def sel(self, indexers=None, method=None, **kwargs):
        """``ds.sel`` that also takes sizes as text on byte coordinates
        (``ds.thruput.sel(window="64K", streams=4)``)."""
        return self._ds.sel(sizes_to_bytes({**(indexers or {}), **kwargs}), method=method)

    def describe(self, var="throughput", dim="repeat", **kwargs):
        """:func:`thruput.stats.describe` of ``ds[var]``."""
        return _summaries.describe(self._ds[var], dim, **kwargs)

    def bootstrap_ci(self, var="throughput", dim="repeat", **kwargs):
        """:func:`thruput.stats.bootstrap_ci` of ``ds[var]``."""
        return _summaries.bootstrap_ci(self._ds[var], dim, **kwargs)

    def ecdf(self, var="rtt", dim=None):
        """:func:`thruput.stats.ecdf` of ``ds[var]``."""
        return _summaries.ecdf(self._ds[var], dim)

    def frequency(self, var="throughput", dim=None, **kwargs):
        """:func:`thruput.stats.frequency` of ``ds[var]``."""
        return _summaries.frequency(self._ds[var], dim, **kwargs)

    def plateau(self, var="throughput", **kwargs):
        """:func:`thruput.stats.plateau` of ``ds[var]``."""
        return _plateau.plateau(self._ds[var], **kwargs)

    def best_cells(self, var="throughput", **kwargs):
        """:func:`thruput.stats.best_cells` of ``ds[var]``."""
        return _plateau.best_cells(self._ds[var], **kwargs)

    def top_fraction(self, var="throughput", **kwargs):
        """:func:`thruput.stats.top_fraction` of ``ds[var]``."""
        return _plateau.top_fraction(self._ds[var], **kwargs)

    def smallest_product(self, var="throughput", **kwargs):
        """:func:`thruput.stats.smallest_product` of ``ds[var]``."""
        return _plateau.smallest_product(self._ds[var], **kwargs)

    def window_bound(self, var="throughput", rtt_ms=None, capacity_bps=None, **kwargs):
        """:func:`thruput.stats.window_bound` of ``ds[var]``; ``rtt_ms`` defaults to the
        median unloaded ping RTT, ``capacity_bps`` to ``attrs["capacity_bps"]``."""
        if rtt_ms is None:
            rtt = self._ds["rtt"].sel(phase="unloaded")
            if "rtt_status" in self._ds:
                rtt = rtt.where(self._ds["rtt_status"].sel(phase="unloaded") == "reply")
            rtt_ms = float(rtt.median())
        if capacity_bps is None:
            capacity_bps = self._ds.attrs.get("capacity_bps")
        return _bounds.window_bound(self._ds[var], rtt_ms, capacity_bps, **kwargs)

    def rtt_load(self, var="rtt", status="rtt_status", **kwargs):
        """:func:`thruput.stats.rtt_load` of ``ds[var]`` with ``ds[status]`` if present."""
        return _load.rtt_load(self._ds[var], self._ds.get(status), **kwargs)

    def rtt_growth(self, var="throughput", rtt=None, **kwargs):
        """:func:`thruput.stats.rtt_growth`; ``rtt`` defaults to each run's median
        loaded ping RTT."""
        if rtt is None:
            rtt = self._ds["rtt"].sel(phase="loaded").median("probe")
        return _load.rtt_growth(self._ds[var], rtt, **kwargs)

    def compare(self, other, var="throughput", **kwargs):
        """:func:`thruput.stats.compare` of ``ds[var]`` (``a``) with ``other[var]`` (``b``)."""
        return _compare.compare(self._ds[var], other[var], **kwargs)

    def metadata_diff(self, other, **kwargs):
        """:func:`thruput.stats.metadata_diff` of this campaign and ``other``."""
        return _compare.metadata_diff(self._ds, other, **kwargs)

    def periodogram(self, var="throughput", time=None, **kwargs):
        """:func:`thruput.stats.periodogram` of ``ds[var]`` timed by ``ds[time]`` (default
        ``start_time``, on a monitor campaign ``time``)."""
        return _periodic.periodogram(self._ds[var], self._ds[self._time(time)], **kwargs)

    def daily_cycle(self, var="throughput", time=None, **kwargs):
        """:func:`thruput.stats.daily_cycle` of ``ds[var]`` timed by ``ds[time]`` (as
        :meth:`periodogram`)."""
        return _periodic.daily_cycle(self._ds[var], self._ds[self._time(time)], **kwargs)

    # --- design campaigns (thruput.stats.design): methods that take factor names ---
    def factors(self):
        """:func:`thruput.stats.design.factors_of` of this design campaign."""
        return _design.factors_of(self._ds)

    def design_summary(self, var="throughput", by=None, **kwargs):
        """:func:`thruput.stats.design.design_summary` of ``ds[var]`` per cell of the
        factors ``by`` (default every factor)."""
        return _design.design_summary(self._ds, var, by, **kwargs)

    def design_plateau(self, along, var="throughput", by=None, **kwargs):
        """:func:`thruput.stats.design.design_plateau` along the factor ``along``."""
        return _design.design_plateau(self._ds, along, var, by, **kwargs)

    def level_comparison(self, factor, var="throughput", by=None, **kwargs):
        """:func:`thruput.stats.design.level_comparison` of the levels of ``factor``."""
        return _design.level_comparison(self._ds, factor, var, by, **kwargs)

    def compare_designs(self, other, var="throughput", by=None, **kwargs):
        """:func:`thruput.stats.design.compare_designs` of this campaign (``a``) and
        ``other`` (``b``)."""
        return _design.compare_designs(self._ds, other, var, by, **kwargs)

    def design_product(self, params=None, monitor=None):
        """:func:`thruput.stats.design.design_product` of this design campaign."""
        return _design.design_product(self._ds, params, monitor)

    # --- monitor campaigns (thruput.stats.monitor, thruput.stats.monitor_tables) ---
    def change_points(self, **kwargs):
        """:func:`thruput.stats.series_change_points` of this monitor campaign: the
        change points of every series (path, direction, test, buffer or size)."""
        return _monitor_tables.series_change_points(self._ds, **kwargs)

    def udp_tcp_ratio(self, **kwargs):
        """:func:`thruput.stats.udp_tcp_ratio` of this monitor campaign."""
        return _monitor.udp_tcp_ratio(self._ds, **kwargs)

    def gap_report(self, interval_s, **kwargs):
        """:func:`thruput.stats.gap_report` of this monitor campaign."""
        return _monitor.gap_report(self._ds, interval_s, **kwargs)

    def monitor_product(self, params=None):
        """:func:`thruput.stats.monitor_product` of this monitor campaign."""
        return _monitor_tables.monitor_product(self._ds, params)

    def udp_grid(self, **kwargs):
        """:func:`thruput.stats.udp_grid` of this UDP sweep."""
        return _udp.udp_grid(self._ds, **kwargs)

    def udp_onset(self, **kwargs):
        """:func:`thruput.stats.udp_onset` of this sweep's :func:`udp_grid`."""
        return _udp.udp_onset(_udp.udp_grid(self._ds), **kwargs)

    def tcp_series(self):
        """:func:`thruput.stats.tcp_series` of this TCP instrumentation Dataset."""
        return _tcp.tcp_series(self._ds)

    def tcp_summary(self):
        """:func:`thruput.stats.tcp_summary` of this TCP instrumentation Dataset."""
        return _tcp.tcp_summary(self._ds)

    def latency_fit(self, file=None, **kwargs):
        """:func:`thruput.stats.latency_fit` of this latency scan.

        On a UDPmon campaign the scan variables are ``scan_size`` and
        ``scan_latency_avg``, used by default; ``file`` keeps only the points of one
        scan file (``scan_file``).
        """
        ds = self._ds
        if "scan_size" in ds:
            kwargs.setdefault("size", "scan_size")
            kwargs.setdefault("latency", "scan_latency_avg")
        if file is not None:
            ds = ds.isel(point=(ds["scan_file"] == file).values)
        return _latency.latency_fit(ds, **kwargs)

    def _status(self, status):
        if status is None:
            status = "status" if "status" in self._ds else "rtt_status"
        return self._ds[status]

    def ipdv(self, var="rtt", status=None, dim="probe"):
        """:func:`thruput.stats.ipdv` of the replies' ``ds[var]``
        (:func:`thruput.stats.reply_delays` with ``status``, default ``status`` or
        ``rtt_status``)."""
        return _jitter.ipdv(_jitter.reply_delays(self._ds[var], self._status(status), dim), dim)

    def jitter_rfc3550(self, var="rtt", status=None, dim="probe"):
        """:func:`thruput.stats.jitter_rfc3550` of the replies' ``ds[var]``."""
        return _jitter.jitter_rfc3550(_jitter.reply_delays(self._ds[var], self._status(status), dim), dim)

    def loss_bursts(self, status=None, dim="probe", **kwargs):
        """:func:`thruput.stats.loss_bursts` of :func:`thruput.stats.lost_indicator` of
        the probes' status."""
        return _jitter.loss_bursts(_jitter.lost_indicator(self._status(status)), dim, **kwargs)

    def jain_fairness(self, var="stream_throughput", dim="stream"):
        """:func:`thruput.stats.jain_fairness` of ``ds[var]`` over ``dim``."""
        return _jitter.jain_fairness(self._ds[var], dim)
