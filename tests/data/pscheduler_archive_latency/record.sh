#!/bin/sh
# Re-create the constructed archive documents of this folder and of its sibling
# (pscheduler_archive_throughput, pscheduler_archive_latency) from the real pScheduler
# http-archiver bodies of the shared corpus, by perfsonar/logstash's pipeline steps
# (tools/pscheduler_archive_from_corpus.py says which); then their expected values.
set -eu
cd "$(dirname "$0")/../../.."
python tools/pscheduler_archive_from_corpus.py "${CORPUS:-../shared/corpus}/perfsonar5" tests/data
python - <<'PY'
from pathlib import Path
from tests.test_formats import write_expected
VALUES = {"pscheduler_archive_throughput": ("throughput", "retransmits", "start_time", "pscheduler_source_hostname",
                                            "pscheduler_destination_ip", "pscheduler_index"),
          "pscheduler_archive_latency": ("pscheduler_sent", "pscheduler_received", "pscheduler_rtt_mean",
                                         "pscheduler_delay_percentile", "pscheduler_destination_hostname",
                                         "pscheduler_index", "pscheduler_start_time")}
for name, values in VALUES.items():
    for sample in sorted(Path("tests/data", name).iterdir()):
        if sample.name.endswith(".expected.json") or sample.name in ("record.sh", "README.md"):
            continue
        if sample.name.startswith("empty--"):
            write_expected(sample, read_as=name)
        elif sample.name.startswith("not-archive--"):
            write_expected(sample)
        else:
            write_expected(sample, values=values)
PY
