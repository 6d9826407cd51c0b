"""The logs ``python -m benchmarks.hostile --at-limit`` grows from the samples
(:func:`benchmarks.hostile.make_at_limit`), made small: each format's reader reads all of
it, with more records than the sample (a log it refused would measure a refusal, not a read)."""

from __future__ import annotations

import pytest

import thruput
from benchmarks.hostile import AT_LIMIT, make_at_limit

from .conftest import DATA

#: The dimension that grows with the log, per format (the first of the Dataset's otherwise).
GROWS = {"iperf2_csv": "run", "esmond_latency": "esmond_point", "owamp": "owamp_block",
         "udpmon_bw": "row", "udpmon_req": "point"}


@pytest.mark.parametrize("name", sorted(AT_LIMIT))
def test_a_log_grown_to_a_limit_is_read_whole(name, tmp_path):
    sample = DATA / name / AT_LIMIT[name][1]
    small = thruput.read(sample, format=name)
    size = make_at_limit(name, tmp_path / "big.log", 2**19)
    assert 2**18 < size <= 2**19
    big = thruput.read(tmp_path / "big.log", format=name)
    dim = GROWS.get(name) or next(d for d in ("interval", "probe", "snapshot", "run") if big.sizes.get(d))
    assert big.sizes[dim] >= 2 * small.sizes[dim]
