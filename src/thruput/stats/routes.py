"""Routes over time: when the sequence of hops of a path changes.

Seed 004 compares transport results with traceroutes: a route change is the commonest
cause of a level shift in RTT. :func:`hop_sequence` reduces one traced route (a
``route`` Dataset's ``hop_address``) to the sequence of its hops; :func:`route_changes`
finds, per path, the times that sequence changes.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

__all__ = ["hop_sequence", "route_changes", "UNANSWERED"]

#: A hop no probe of which was answered, in a hop sequence.
UNANSWERED = "*"


#: Between the addresses of one hop that answered from several (load balancing).
ALTERNATIVES = "|"


def hop_sequence(hop_address: xr.DataArray) -> tuple:
    """The hops of one route: each hop's answering addresses (sorted, joined by
    :data:`ALTERNATIVES` where probes of a hop were answered from several: load
    balancing), :data:`UNANSWERED` where none answered.

    Parameters
    ----------
    hop_address : xarray.DataArray
        Dims ``(hop, probe)``, ``""`` where a probe got no answer (the ``route`` kind).

    Returns
    -------
    tuple of str
    """
    values = np.asarray(hop_address.transpose("hop", "probe").values)
    return tuple(ALTERNATIVES.join(sorted({str(a) for a in row if a})) or UNANSWERED for row in values)


def _before_last(hops):
    """``hops`` without the unanswered hops just before the last one (a target that limits
    its ICMP rate answers probes of a higher TTL only: traceroute prints ``* * *`` for
    hops that do not exist)."""
    keep = len(hops) - 1
    while keep > 0 and hops[keep - 1] == UNANSWERED:
        keep -= 1
    return hops[:keep] + hops[-1:]


def _same(a, b):
    """Whether two hop sequences are one route: as long (once the unanswered hops just
    before the last are left out, where they differ in number), and at every hop both
    answered, answered from one address at least in common (an unanswered hop is no
    evidence of another router; a load-balanced hop answers from any of its routers)."""
    if len(a) != len(b):
        a, b = _before_last(a), _before_last(b)
    return len(a) == len(b) and all(
        UNANSWERED in (x, y) or set(x.split(ALTERNATIVES)) & set(y.split(ALTERNATIVES)) for x, y in zip(a, b))


def _answered(hops):
    return sum(h != UNANSWERED for h in hops)


def route_changes(sequence: xr.DataArray) -> xr.Dataset:
    """The times the route of each path changes.

    Parameters
    ----------
    sequence : xarray.DataArray
        Dim ``route``: each traced route's hops joined by spaces (:func:`hop_sequence`),
        with coordinates ``time`` (datetime64, when it was traced) and ``path``.

    Returns
    -------
    xarray.Dataset
        Dim ``change``, in time order: ``time`` (the first route traced after the change),
        ``previous_time`` (the last one before it: the change happened between the two),
        ``path``, ``before`` and ``after`` (hop sequences, space separated).

    Notes
    -----
    Routes of one path are taken in time order; a route differs from the last one kept
    when it has another number of hops (not counting unanswered hops just before the
    last: a target that rate-limits its answers makes traceroute print ``* * *`` for hops
    beyond it until it answers), or no address in common at a hop where both were
    answered (a load-balanced hop answers from any of its routers). A hop unanswered in
    one of them (traceroute's ``* * *``, lost probes or a router that does not answer) is
    no change, and a route no hop of which answered is left out (the trace failed: no
    route was seen); the route with the most hops answered is kept as the reference while
    they agree.
    """
    times = sequence["time"].values.astype("datetime64[ns]")
    paths = sequence["path"].values.astype(str)
    hops = [tuple(str(s).split()) for s in sequence.values]
    rows = []
    for path in sorted(set(paths)):
        index = [i for i in np.argsort(times, kind="stable") if paths[i] == path]
        ref, ref_time = None, None
        for i in index:
            if not _answered(hops[i]):
                continue                # no hop answered: the trace failed, no route seen
            if ref is not None and not _same(ref, hops[i]):
                rows.append((times[i], ref_time, path, " ".join(ref), " ".join(hops[i])))
                ref = hops[i]
            elif ref is None or _answered(hops[i]) > _answered(ref):
                ref = hops[i]
            ref_time = times[i]
    rows.sort(key=lambda r: (r[0], r[2]))
    cols = list(zip(*rows)) if rows else [[], [], [], [], []]  # type: ignore[list-item]
    return xr.Dataset(
        {"time": ("change", np.array(cols[0], dtype="datetime64[ns]"),
                  {"long_name": "first route traced after the change, UTC"}),
         "previous_time": ("change", np.array(cols[1], dtype="datetime64[ns]"),
                           {"long_name": "last route traced before the change, UTC"}),
         "path": ("change", np.array(cols[2], dtype=object), {"units": "1", "long_name": "path"}),
         "before": ("change", np.array(cols[3], dtype=object),
                    {"units": "1", "long_name": "hop sequence before the change"}),
         "after": ("change", np.array(cols[4], dtype=object),
                   {"units": "1", "long_name": "hop sequence after the change"})})
