#!/bin/sh
# Re-create the udpmon_req samples from the UDPmon corpus (../shared/corpus/udpmon, recorded
# for this project between two network namespaces; the one corpus folder that may be copied).
# UDPmon itself is not installed here, so variants are derived from those files (README.md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
corpus=${CORPUS:-$root/../shared/corpus/udpmon}
cd "$here"
cp "$corpus/req-latency-scan.txt" scan--r64-i64-e1472.txt
cp "$corpus/req-histogram.txt" histogram--r64-l5000-H.txt
: > empty--nothing.txt
"$root/.venv/bin/python" - "$corpus" <<'PY'
import sys
from pathlib import Path
corpus = Path(sys.argv[1])
scan = (corpus / "req-latency-scan.txt").read_text()
hist = (corpus / "req-histogram.txt").read_text()
# truncated scan: cut in the middle of the row for 1024 bytes
Path("truncated--scan-cut-in-row.txt").write_text(scan[: scan.index(" 1024;  64;") + 16])
# truncated histogram: cut among its bins, before the closing statistics
Path("truncated--histogram-cut-in-bins.txt").write_text(hist[: hist.index("\n80 ; 82\n") + 1])
# must not match: udpmon_bw_mon -q rows belong to udpmon_bw
Path("notmine--bw-quiet.txt").write_text((corpus / "bw_mon-quiet-p1472.txt").read_text())
PY
