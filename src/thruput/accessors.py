"""``ds.thruput`` and ``da.thruput``, registered with xarray by ``import thruput``.

The accessors themselves live in :mod:`thruput.stats.accessor` and forward to
:mod:`thruput.stats`; what is registered here is a thin stand-in that imports them (and
SciPy) the first time an accessor is used, so ``import thruput`` stays quick.
"""

from __future__ import annotations

import xarray as xr

__all__ = []


class _Lazy:
    _target = ""

    def __init__(self, obj):
        self._obj = obj
        self._real = None

    def _resolve(self):
        if self._real is None:
            from .stats import accessor

            self._real = getattr(accessor, self._target)(self._obj)
        return self._real

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._resolve(), name)

    def __dir__(self):
        return dir(self._resolve())

    def __repr__(self):
        return repr(self._resolve())


@xr.register_dataset_accessor("thruput")
class _DatasetThruput(_Lazy):
    """Statistics of a campaign or contract Dataset: see :class:`thruput.stats.accessor.DatasetAccessor`."""

    _target = "DatasetAccessor"


@xr.register_dataarray_accessor("thruput")
class _DataArrayThruput(_Lazy):
    """Statistics of one DataArray: see :class:`thruput.stats.accessor.DataArrayAccessor`."""

    _target = "DataArrayAccessor"
