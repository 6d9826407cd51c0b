#!/usr/bin/env bash
# Re-record the iperf3 text fixtures of this folder on loopback (127.0.0.1) with the
# installed iperf3, then rewrite their .expected.json (review the diff by hand against the
# tool's own sender/receiver summary lines before committing).
# Usage: bash tests/data/iperf3_text/record.sh [--no-expected | --expected-only]
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
c() { iperf3 -c 127.0.0.1 -p "$PORT" "$@"; }

c -t 2 -i 0.5                       > "$V--tcp.txt"
c -t 1 -i 0.5 -P 4                  > "$V--tcp-P4.txt"
c -t 1 -i 0.5 -R                    > "$V--tcp-R.txt"
c -t 1 -i 0.5 --bidir               > "$V--tcp-bidir.txt"
c -t 1 -i 0.5 --bidir -P 2          > "$V--tcp-bidir-P2.txt"
c -t 1 -i 0.5 -V -w 64K             > "$V--tcp-verbose-window64K.txt"
c -t 2 -i 0.5 -O 1                  > "$V--tcp-omit1.txt"
c -t 1 -i 0.5 -f k                  > "$V--tcp-fk.txt"
c -t 1 -i 0.5 --timestamps          > "$V--tcp-timestamps.txt"   # every line stamped (%c, local time)
c -t 1 -i 0.5 -u -b 20M             > "$V--udp.txt"
c -t 1 -i 0.5 -u -b 10M -P 2 -R     > "$V--udp-P2-R.txt"
c -t 1 -i 0.5 -u -b 10M --bidir     > "$V--udp-bidir.txt"
# two runs appended to one log file (--logfile appends), as a campaign script might leave them
rm -f "$V--two-runs.txt"
c -t 1 -i 0.5 --logfile "$V--two-runs.txt"
c -t 1 -i 0.5 -P 2 --logfile "$V--two-runs.txt"
# the client interrupted (SIGINT) after 1.2 s of a 5 s run: its receiver line shows 0 bytes
timeout -s INT 1.2 iperf3 -c 127.0.0.1 -p "$PORT" -t 5 -i 0.5 --logfile "$V--tcp-interrupted.txt" || true
# no server listening: only iperf3's error line
iperf3 -c 127.0.0.1 -p 1 > "$V--refused.txt" 2>&1 || true
# the server's side of one test (-s -1)
iperf3 -s -1 -p "$SPORT" > "$V--server-tcp.txt" &
ONE=$!
sleep 0.5
iperf3 -c 127.0.0.1 -p "$SPORT" -t 1 -i 0.5 -P 2 >/dev/null
wait "$ONE"
# the server's side of a -R test (the server sends) and of a UDP test
for what in "tcp-R:-R" "udp:-u -b 10M"; do
    iperf3 -s -1 -p "$SPORT" > "$V--server-${what%%:*}.txt" &
    ONE=$!
    sleep 0.5
    iperf3 -c 127.0.0.1 -p "$SPORT" -t 1 -i 0.5 ${what#*:} >/dev/null
    wait "$ONE"
done
# a run cut off mid-way (the writer died): the first 12 lines of the -P 4 log
head -n 12 "$V--tcp-P4.txt" > "$V--truncated-P4.txt"
# empty input, and iperf3's JSON output, which the iperf3_json format must claim instead
: > empty--empty.txt
c -t 1 -i 0.5 -J > not-text--json.json
kill "$SERVER"
fi
[ "${1:-}" = "--no-expected" ] && exit 0

cd "$ROOT"
"$PY" - "$V" <<'PYEOF'
import sys
from tests.test_formats import write_expected
v = sys.argv[1]
d = "tests/data/iperf3_text/"
run = ["throughput", "throughput_sender", "throughput_receiver", "bytes", "duration", "streams",
       "retransmits", "loss_fraction"]
per = ["stream_throughput", "stream_direction", "interval_start", "interval_end", "interval_bytes",
       "interval_throughput"]
for name in ["tcp", "tcp-P4", "tcp-R", "tcp-bidir", "tcp-bidir-P2", "tcp-verbose-window64K",
             "tcp-omit1", "tcp-fk", "tcp-timestamps", "two-runs", "tcp-interrupted", "server-tcp", "server-tcp-R",
             "truncated-P4"]:
    write_expected(d + f"{v}--{name}.txt", values=run + per + ["interval_retransmits", "interval_cwnd"])
for name in ["udp", "udp-P2-R", "udp-bidir", "server-udp"]:
    write_expected(d + f"{v}--{name}.txt", values=run + per + ["jitter", "packets", "packets_lost"])
write_expected(d + f"{v}--refused.txt")
write_expected(d + "empty--empty.txt", read_as="iperf3_text")
write_expected(d + "not-text--json.json")
PYEOF
