#!/usr/bin/env bash
# Re-record the iperf3 -J fixtures of this folder on loopback (127.0.0.1) with the
# installed iperf3, then rewrite their .expected.json (review the diff by hand against the
# tool's own end sums before committing).
# Usage: bash tests/data/iperf3_json/record.sh [--no-expected | --expected-only]
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
PORT=$((20000 + $$ % 20000))          # unique per invocation, so parallel recordings don't collide
SPORT=$((PORT + 1))
V=$(iperf3 --version | awk 'NR==1 {print $2}')   # "3.12"

if [ "${1:-}" != "--expected-only" ]; then
iperf3 -s -p "$PORT" >/dev/null 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
sleep 0.5
c() { iperf3 -c 127.0.0.1 -p "$PORT" -J "$@"; }

c -t 2 -i 0.5                       > "$V--tcp.json"
c -t 1 -i 0.5 -P 4                  > "$V--tcp-P4.json"
c -t 1 -i 0.5 -R                    > "$V--tcp-R.json"
c -t 1 -i 0.5 --bidir               > "$V--tcp-bidir.json"
c -t 1 -i 0.5 -w 64K                > "$V--tcp-window64K.json"
c -t 2 -i 0.5 -O 1                  > "$V--tcp-omit1.json"
c -t 1 -i 0.5 -u -b 20M             > "$V--udp.json"
c -t 1 -i 0.5 -u -b 10M -P 2 -R     > "$V--udp-P2-R.json"
c -t 1 -i 0.5 -u -b 10M --bidir     > "$V--udp-bidir.json"
# two runs appended to one log file (--logfile appends), as a campaign script might leave them
rm -f "$V--two-runs.json"
c -t 1 -i 0.5 --logfile "$V--two-runs.json"
c -t 1 -i 0.5 -P 2 --logfile "$V--two-runs.json"
# the client interrupted (SIGINT) after 1.2 s of a 5 s run: iperf3 still writes a whole
# JSON document, with "error" and a receiver sum of 0 bytes (never exchanged)
timeout -s INT 1.2 iperf3 -c 127.0.0.1 -p "$PORT" -J -t 5 -i 0.5 > "$V--tcp-interrupted.json" || true
# no server listening: iperf3 writes a JSON document holding only "error"
iperf3 -c 127.0.0.1 -p 1 -J > "$V--refused.json" || true
# the server's side of one test (-s -1 -J)
iperf3 -s -1 -J -p "$SPORT" > "$V--server-tcp.json" &
ONE=$!
sleep 0.5
iperf3 -c 127.0.0.1 -p "$SPORT" -t 1 -i 0.5 >/dev/null
wait "$ONE"
# a run cut off mid-way (the writer died): the first 55 % of the -P 4 document
head -c $(( $(wc -c < "$V--tcp-P4.json") * 55 / 100 )) "$V--tcp-P4.json" > "$V--truncated-P4.json"
# empty input, and a JSON document of another tool that no format may claim
: > empty--empty.json
ip -j -p link show lo > not-iperf3--ip-link.json
kill "$SERVER"
fi

[ "${1:-}" = "--no-expected" ] && exit 0
cd "$ROOT"
"$PY" - "$V" <<'PYEOF'
import sys
from tests.test_formats import write_expected
v = sys.argv[1]
d = "tests/data/iperf3_json/"
run = ["throughput", "throughput_sender", "throughput_receiver", "bytes", "duration", "streams",
       "window_requested", "window_actual", "retransmits", "loss_fraction"]
per = ["stream_throughput", "stream_direction", "interval_start", "interval_end", "interval_bytes"]
for name in ["tcp", "tcp-P4", "tcp-R", "tcp-bidir", "tcp-window64K", "tcp-omit1", "two-runs",
             "tcp-interrupted", "server-tcp", "truncated-P4"]:
    write_expected(d + f"{v}--{name}.json", values=run + per + ["interval_retransmits", "interval_cwnd", "interval_rtt"])
for name in ["udp", "udp-P2-R", "udp-bidir"]:
    write_expected(d + f"{v}--{name}.json", values=run + per + ["jitter", "packets", "packets_lost", "out_of_order"])
write_expected(d + f"{v}--refused.json")
write_expected(d + "empty--empty.json", read_as="iperf3_json")
write_expected(d + "not-iperf3--ip-link.json")
PYEOF
