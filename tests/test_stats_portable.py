"""thruput.stats._portable: sin/cos, sums and log-spaced grids with the same bits on every
CPU, and the periodogram built on them (against SciPy, and across instruction sets, with
the UDP latency line)."""

import hashlib
import os
import platform
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.signal

from thruput.stats._portable import dot_rows, geomspace, sincos
from thruput.stats.periodic import _lombscargle

RNG = np.random.default_rng(20261124)
#: arguments (rad): small, a campaign's (10^6), near the reduction's limit, and multiples
#: of pi/4 (the quadrants' edges)
ANGLES = np.concatenate([RNG.uniform(-10, 10, 20000), RNG.uniform(-1e6, 1e6, 20000),
                         RNG.uniform(-2e8, 2e8, 2000), np.arange(-400, 400) * np.pi / 4,
                         [0.0, -0.0, 1e-300, 5e-324]])


def _ulps(got, exact):
    exact64 = exact.astype(float)
    return np.abs(got - exact64) / np.spacing(np.abs(exact64))


@pytest.mark.skipif(np.finfo(np.longdouble).eps > 1e-18, reason="no extended long double here")
def test_sincos_within_3_ulp_of_extended_precision():
    s, c = sincos(ANGLES)
    wide = ANGLES.astype(np.longdouble)
    exact_s, exact_c = np.sin(wide), np.cos(wide)
    for got, exact in ((s, exact_s), (c, exact_c)):
        assert float(np.max(np.abs(got - exact))) < 2.5e-16
        away = np.abs(exact) > 1e-3       # (near a zero, an ulp of the result is tiny)
        assert _ulps(got[away], exact[away]).max() <= 3


def test_sincos_agrees_with_numpy_and_keeps_shape():
    x = ANGLES.reshape(-1, 2)
    s, c = sincos(x)
    assert s.shape == c.shape == x.shape
    np.testing.assert_allclose(s, np.sin(x), rtol=0, atol=4e-16)
    np.testing.assert_allclose(c, np.cos(x), rtol=0, atol=4e-16)
    assert sincos(0.0) == (0.0, 1.0)


def test_dot_rows_is_the_sum_of_products_along_the_last_axis():
    a, b = RNG.normal(size=(7, 300)), RNG.normal(size=(7, 300))
    np.testing.assert_allclose(dot_rows(a, b), np.einsum("ij,ij->i", a, b), rtol=1e-13)
    np.testing.assert_array_equal(dot_rows(a, b), np.add.reduce(a * b, axis=1))


def test_geomspace_ends_exactly_and_agrees_with_numpy():
    g = geomspace(0.3, 700.0, 500)
    assert g[0] == 0.3 and g[-1] == 700.0 and g.size == 500
    assert np.all(np.diff(g) > 0)
    np.testing.assert_allclose(g, np.geomspace(0.3, 700.0, 500), rtol=1e-14)
    assert geomspace(2.0, 2.0, 3).tolist() == [2.0, 2.0, 2.0]
    assert geomspace(5.0, 1.0, 3).tolist() == pytest.approx([5.0, 5 ** 0.5, 1.0], rel=1e-15)
    assert geomspace(1.0, 8.0, 1).tolist() == [1.0] and geomspace(1.0, 8.0, 0).size == 0
    with pytest.raises(ValueError, match="positive"):
        geomspace(0.0, 1.0, 5)


def test_lombscargle_is_scipys_normalised_generalised_periodogram():
    t = np.sort(RNG.uniform(0, 24 * 60, 700))
    v = 1e7 + 1e6 * np.sin(2 * np.pi * t / 24) + RNG.normal(0, 3e5, t.size)
    periods = np.geomspace(0.2, 700, 400)
    ref = scipy.signal.lombscargle(t, v, 2 * np.pi / periods, normalize=True, floating_mean=True)
    got = _lombscargle(t, v, periods)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-13)
    assert abs(periods[np.argmax(got)] - 24) < 0.5


def test_lombscargle_in_blocks_and_at_aliased_periods():
    # regular sampling every 0.5 h: at 1 h and 0.5 h every sample has the same phase (or
    # two), the sine's column is zero; the power stays finite, as SciPy's
    t = np.arange(3000) * 0.5
    v = RNG.normal(size=t.size)
    periods = np.array([1.0, 0.5, 2.0, 3.0, 7.3] * 40)     # 200 x 3000 > one block
    got = _lombscargle(t, v, periods)
    ref = scipy.signal.lombscargle(t, v, 2 * np.pi / periods, normalize=True, floating_mean=True)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-12)


def _instruction_sets():
    """Environments that make NumPy and OpenBLAS take other kernels on this CPU (only
    those the CPU can run)."""
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    out = [{}, {"NPY_DISABLE_CPU_FEATURES": "X86_V4,AVX512_ICL,AVX512_SPR", "OPENBLAS_CORETYPE": "Prescott"},
           {"NPY_DISABLE_CPU_FEATURES": "X86_V3,X86_V4,AVX512_ICL,AVX512_SPR"}]
    if "avx" in flags:
        out.append({"OPENBLAS_CORETYPE": "Sandybridge"})
    if "avx512f" in flags:
        out.append({"OPENBLAS_CORETYPE": "SkylakeX"})
    return out


CHILD = textwrap.dedent("""
    import hashlib, numpy as np, xarray as xr
    from thruput.stats import latency_line
    from thruput.stats.periodic import periodogram
    rng = np.random.default_rng(4)
    hours = np.sort(rng.uniform(0, 24 * 40, 600))
    time = np.datetime64("2002-09-01", "ns") + (hours * 3.6e12).astype("timedelta64[ns]")
    v = xr.DataArray(5e8 + 5e7 * np.cos(2 * np.pi * hours / 24) + rng.normal(0, 2e7, hours.size),
                     dims="run", coords={"time": ("run", time)})
    p = periodogram(v)
    h = hashlib.sha256()
    for name in ("period", "power", "dominant_period", "dominant_period_low",
                 "dominant_period_high", "dominant_power"):
        h.update(np.ascontiguousarray(p[name].values).tobytes())
    size = np.arange(64, 1473, 64, dtype=float)
    fit = latency_line(size, 20 + 0.0231 * size + rng.normal(0, 0.5, size.size))
    h.update(np.array([fit[k] for k in sorted(fit)], dtype=float).tobytes())
    print(h.hexdigest())
""")


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64") or sys.platform != "linux",
                    reason="the instruction-set switches are x86-64 Linux ones")
def test_periodogram_and_latency_line_are_the_same_bits_whatever_the_instruction_set():
    # SciPy's periodogram and NumPy's lstsq changed in their last bits from one of these
    # to the next (1e-12 and 1e-14 relative), and with them the hashes of statistics files
    digests = set()
    for extra in _instruction_sets():
        env = {**os.environ, **extra}
        done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, (extra, done.stderr[-2000:])
        digests.add(done.stdout.strip())
    assert len(digests) == 1, digests
    assert len(hashlib.sha256().hexdigest()) == len(digests.pop())
