#!/usr/bin/env bash
# Re-record the iperf3 --json-stream fixtures of this folder. iperf3 3.12 (Debian 12) has no
# --json-stream (3.17+), so real -J runs are recorded here on loopback and converted to the
# event stream by tools/iperf3_json_stream.py (README.md says exactly what is real and what
# is converted). The --get-server-output runs are also kept as -J fixtures of the iperf3_json
# reader (../iperf3_json/3.12--get-server-output-*.json). Then rewrite every .expected.json
# here and of those two (review the diff by hand against iperf3's own end sums).
# Usage: bash tests/data/iperf3_stream/record.sh [--no-expected | --expected-only]
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
PY=${PY:-python}
PORT=$((20000 + $$ % 20000))          # unique per invocation
JPORT=$((PORT + 1))                   # a server run with -J (server_output_json)
V=$(iperf3 --version | awk 'NR==1 {print $2}')   # "3.12"
TMP=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT
convert() { "$PY" "$ROOT/tools/iperf3_json_stream.py" "$1" "$2"; }

if [ "${1:-}" != "--expected-only" ]; then
iperf3 -s -p "$PORT" >/dev/null 2>&1 &
PIDS+=($!)
iperf3 -s -J -p "$JPORT" >/dev/null 2>&1 &
PIDS+=($!)
sleep 0.5
c() { iperf3 -c 127.0.0.1 -p "$PORT" -J "$@"; }

c -t 2 -i 0.5                                    > "$TMP/tcp.json"
c -t 1 -i 0.5 -P 2                               > "$TMP/tcp-P2.json"
c -t 1 -i 0.5 -u -b 20M                          > "$TMP/udp.json"
c -t 2 -i 0.5 -O 1                               > "$TMP/tcp-omit1.json"
# the server's text output brought back (server without -J): server_output_text
c -t 1 -i 0.5 --get-server-output                > "$TMP/server-output-text.json"
# a server run with -J: server_output_json, forward TCP and reverse UDP
iperf3 -c 127.0.0.1 -p "$JPORT" -J -t 1 -i 0.5 --get-server-output         > "$TMP/server-output-json.json"
iperf3 -c 127.0.0.1 -p "$JPORT" -J -t 1 -i 0.5 -u -b 10M -R --get-server-output > "$TMP/server-output-json-udp-R.json"
# the client interrupted after 1.2 s of a 5 s run: "error" beside the data
timeout -s INT 1.2 iperf3 -c 127.0.0.1 -p "$PORT" -J -t 5 -i 0.5 > "$TMP/tcp-interrupted.json" || true
# two runs appended to one log (--logfile appends)
cat "$TMP/tcp-P2.json" "$TMP/udp.json" > "$TMP/two-runs.json"

for name in tcp tcp-P2 udp tcp-omit1 server-output-text server-output-json server-output-json-udp-R \
            tcp-interrupted two-runs; do
    convert "$TMP/$name.json" "$V--$name.jsonl"
done
cp "$TMP/server-output-text.json" "../iperf3_json/$V--get-server-output-text.json"
cp "$TMP/server-output-json.json" "../iperf3_json/$V--get-server-output-json.json"
cp "$TMP/server-output-json-udp-R.json" "../iperf3_json/$V--get-server-output-json-udp-R.json"
# a stream cut off mid-run (the writer died, or iperf3 still running): the first 60 % of the
# 2 s TCP stream, cut inside a line
head -c $(( $(wc -c < "$V--tcp.jsonl") * 60 / 100 )) "$V--tcp.jsonl" > "$V--truncated.jsonl"
# empty input, and one line of another tool's JSON that no format may claim
: > empty--empty.jsonl
ip -j addr show lo > not-iperf3--ip-addr.jsonl
fi

[ "${1:-}" = "--no-expected" ] && exit 0
cd "$ROOT"
PYTHONPATH=${PYTHONPATH:-src} "$PY" - <<'PYEOF'
from pathlib import Path
from tests.test_formats import write_expected

RUN = ("throughput", "throughput_sender", "throughput_receiver", "bytes", "duration", "streams",
       "protocol", "retransmits", "loss_fraction", "iperf3_server_output",
       "iperf3_server_bytes_received", "iperf3_server_bytes_sent")
INTERVAL = ("interval_end", "interval_bytes", "line")
samples = sorted(Path("tests/data/iperf3_stream").iterdir()) + sorted(
    Path("tests/data/iperf3_json").glob("*--get-server-output-*.json"))
for sample in samples:
    if sample.name in ("record.sh", "README.md") or sample.name.endswith(".expected.json"):
        continue
    read_as = "iperf3_stream" if sample.name.startswith("empty--") else None
    plain = sample.name.startswith(("empty--", "not-iperf3--"))
    write_expected(sample, read_as=read_as, values=() if plain else RUN + INTERVAL)
PYEOF
