#!/usr/bin/env bash
# Re-record the fio --output-format=json fixtures of this folder with the installed fio
# (Debian 12: fio 3.33) on a file in a temporary directory under /tmp (removed afterwards):
# a sequential read and a sequential write job with direct=1 (O_DIRECT; where the file
# system refuses it, the script falls back to direct=0 and the job options say so), and
# one job doing both (rw=rw); damaged copies made from the recording (cut off inside the
# second job, a doubled io_bytes); then rewrite every .expected.json (review the diff by
# hand against fio's own bw_bytes before committing).
# Usage: bash tests/data/fio_json/record.sh [--no-expected | --expected-only]
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
PY=${PY:-python}
V=$(fio --version | sed 's/^fio-//')   # "3.33"
DIR=$(mktemp -d /tmp/thruput-fio.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

if [ "${1:-}" != "--expected-only" ]; then
DIRECT=1
fio --name=probe --filename="$DIR/probe" --size=1M --bs=4k --rw=write --direct=1 \
    --output-format=json >/dev/null 2>&1 || DIRECT=0
COMMON=(--filename="$DIR/data" --size=16M --bs=128k --ioengine=psync --direct=$DIRECT)
fio --output-format=json --output="$V--read-write.json" \
    --name=seqwrite --rw=write "${COMMON[@]}" --end_fsync=1 \
    --name=seqread --rw=read "${COMMON[@]}" --stonewall
fio --output-format=json --output="$V--rw-mixed.json" \
    --name=mixed --rw=rw --rwmixread=50 "${COMMON[@]}"
"$PY" - "$V" <<'PYEOF'
import re, sys
v = sys.argv[1]
text = open(f"{v}--read-write.json").read()
second = text.index('"jobname" : "seqread"')
open(f"{v}--truncated.json", "w").write(text[: second + (len(text) - second) // 3])
first = re.search(r'"io_bytes" : (\d+)', text[text.index('"write" :'):])
at = text.index('"write" :') + first.start(1)
open(f"{v}--doubled-io-bytes.json", "w").write(text[:at] + str(2 * int(first.group(1))) + text[first.end(1) + at - first.start(1):])
PYEOF
: > empty--empty.json
ip -j -p addr show lo > not-fio--ip-addr.json
fi

[ "${1:-}" = "--no-expected" ] && exit 0
cd "$ROOT"
PYTHONPATH=${PYTHONPATH:-src} "$PY" - <<'PYEOF'
from pathlib import Path
from tests.test_formats import write_expected

VALUES = ("throughput", "bytes", "duration", "fio_job", "fio_direction")
for sample in sorted(Path("tests/data/fio_json").iterdir()):
    if sample.name in ("record.sh", "README.md") or sample.name.endswith(".expected.json"):
        continue
    read_as = "fio_json" if sample.name.startswith("empty--") else None
    values = () if sample.name.startswith(("empty--", "not-fio--")) else VALUES
    write_expected(sample, read_as=read_as, values=values)
PYEOF
