"""Benchmarks of thruput (not tests: nothing here asserts a time).

``python -m benchmarks`` runs every benchmark below in turn; ``python -m benchmarks NAME``
runs one. Each module is also runnable alone (``python -m benchmarks.ingest --help``) and
writes its results under ``benchmarks/output/`` (not committed).
"""

#: Benchmark modules, in the order ``python -m benchmarks`` runs them.
BENCHMARKS = ("ingest", "rebuild", "scale", "hostile", "health")
