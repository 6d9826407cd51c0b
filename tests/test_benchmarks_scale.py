"""The scale benchmark's round (:func:`benchmarks.scale.bench_large`) on a tiny SYNTHETIC
archive: it runs from an empty output folder to its result, and its append adds the last
1 % of runs.csv to the 99 % store (it is not part of ``make bench``, so nothing else runs
it)."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")

from benchmarks import scale  # noqa: E402


def test_the_large_point_runs_from_an_empty_folder(tmp_path):
    result = scale.bench_large(tmp_path / "out", paths=2, slots=50, probes=5)
    append = result["append"]
    assert result["synthetic"] and result["iperf3_runs"] == 100 and result["ping_probes"] == 500
    assert append["rows_first"] + append["rows_appended"] == 200
    assert 0 < append["rows_appended"] <= 4
    assert result["append_fraction"] > 0 and result["percentiles_seconds"] > 0
