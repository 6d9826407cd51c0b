#!/usr/bin/env bash
# Re-record the curl -w '%{json}' fixtures of this folder with the installed curl (Debian 12:
# 7.88.1): files served on loopback by `python3 -m http.server` from a temporary directory
# (this script starts and stops it), fetched to /dev/null; a transfer that fails (nothing
# listens on the port); damaged copies made from the recording (the last line cut off, a
# doubled size_download); then rewrite every .expected.json (review the diff by hand against
# curl's own speed_download before committing).
# Usage: bash tests/data/curl_json/record.sh [--no-expected | --expected-only]
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
PY=${PY:-python}
PORT=$((40000 + $$ % 10000))
V=$(curl --version | awk 'NR==1 {print $2}')   # "7.88.1"
DIR=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$DIR"
}
trap cleanup EXIT

if [ "${1:-}" != "--expected-only" ]; then
head -c 20000000 /dev/urandom > "$DIR/f20M"
head -c 1000000 /dev/urandom > "$DIR/f1M"
python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$DIR" >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
# one transfer, then three in a row (one JSON line each), then one that fails
curl -s -o /dev/null -w '%{json}\n' "http://127.0.0.1:$PORT/f20M" > "$V--loopback-20M.json"
: > "$V--loopback-three.json"
for f in f1M f20M f1M; do
    curl -s -o /dev/null -w '%{json}\n' "http://127.0.0.1:$PORT/$f" >> "$V--loopback-three.json"
done
curl -s -o /dev/null -w '%{json}\n' "http://127.0.0.1:1/f1M" > "$V--refused.json" || true
# damaged copies: the last transfer cut in the middle; a doubled size_download
"$PY" - "$V" <<'PYEOF'
import json, re, sys
v = sys.argv[1]
lines = open(f"{v}--loopback-three.json").read().splitlines(keepends=True)
open(f"{v}--truncated.json", "w").write("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
doc = json.loads(open(f"{v}--loopback-20M.json").read())
text = open(f"{v}--loopback-20M.json").read()
open(f"{v}--doubled-size.json", "w").write(
    re.sub(r'"size_download":\d+', f'"size_download":{2 * doc["size_download"]}', text))
PYEOF
: > empty--empty.json
ip -j addr show lo > not-curl--ip-addr.json
fi

[ "${1:-}" = "--no-expected" ] && exit 0
cd "$ROOT"
PYTHONPATH=${PYTHONPATH:-src} "$PY" - <<'PYEOF'
from pathlib import Path
from tests.test_formats import write_expected

VALUES = ("throughput", "bytes", "duration", "curl_speed", "curl_exitcode")
for sample in sorted(Path("tests/data/curl_json").iterdir()):
    if sample.name in ("record.sh", "README.md") or sample.name.endswith(".expected.json"):
        continue
    read_as = "curl_json" if sample.name.startswith("empty--") else None
    values = () if sample.name.startswith(("empty--", "not-curl--")) else VALUES
    write_expected(sample, read_as=read_as, values=values)
PYEOF
