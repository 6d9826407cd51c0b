#!/usr/bin/env bash
# Re-record the irtt JSON fixtures of this folder with the installed irtt (Debian 12: irtt
# 0.9.0): on loopback, and through a router namespace this script creates (and removes)
# whose egress is shaped by tc tbf (2 Mbit/s, a queue of 4000 bytes) while an iperf3 UDP
# flood fills it, so that probes are lost (both directions) and delayed. This machine's
# kernel has no netem: duplicates and reordering cannot be produced here (irtt counts them
# in its stats only; see README.md). Then rewrite every .expected.json (review the diff by
# hand against irtt's own "stats" before committing).
# Usage: bash tests/data/irtt/record.sh [--no-expected | --expected-only]   (needs root)
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
PY=${PY:-python}
PORT=$((40000 + $$ % 10000))              # unique per invocation
NS=thruput-irtt-$$                        # namespaces: $NS-a (client), $NS-r (router), $NS-b (server)
NET=$((10 + $$ % 200))                    # 10.<NET>.4.0/24 and .5.0/24 inside the namespaces only
V=$(irtt version | awk 'NR==1 {print $3}')   # "0.9.0"

source "$ROOT/tools/netns-router.sh"

PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    router_down "$NS"
}
trap cleanup EXIT

if [ "${1:-}" != "--expected-only" ]; then
irtt server -b "127.0.0.1:$PORT" >/dev/null 2>&1 &
PIDS+=($!)
sleep 0.5
irtt client -Q -i 10ms -d 1s -o "$V--loopback.json" "127.0.0.1:$PORT"
irtt client -Q -i 20ms -d 1s -l 172 -o "$V--loopback-l172.json.gz" "127.0.0.1:$PORT"

# three namespaces a - r - b (tools/netns-router.sh); r's egress towards each end is shaped
# by tbf (2 Mbit/s, a queue of 4000 bytes)
router_up "$NS" "10.$NET.4" "10.$NET.5" tbf rate 2mbit burst 4kb limit 4000
ip netns exec "$NS-b" irtt server -b "10.$NET.5.2:$PORT" >/dev/null 2>&1 &
PIDS+=($!)
ip netns exec "$NS-b" iperf3 -s -p "$((PORT + 1))" >/dev/null 2>&1 &
PIDS+=($!)
ip netns exec "$NS-a" iperf3 -s -p "$((PORT + 1))" >/dev/null 2>&1 &
PIDS+=($!)
sleep 1
# floods in both directions during the run: probes lost up, down, and delayed. Whether a
# probe meets a full queue is chance: record again (up to 5 times) until some are lost.
for attempt in 1 2 3 4 5; do
    ip netns exec "$NS-a" iperf3 -c "10.$NET.5.2" -p "$((PORT + 1))" -u -b 20M -l 100 -t 2 >/dev/null 2>&1 &
    FLOOD_UP=$!
    ip netns exec "$NS-b" iperf3 -c "10.$NET.4.1" -p "$((PORT + 1))" -u -b 20M -l 100 -t 2 >/dev/null 2>&1 &
    FLOOD_DOWN=$!
    sleep 0.3
    ip netns exec "$NS-a" irtt client -Q -i 10ms -d 2s -o "$V--netns-loss.json" "10.$NET.5.2:$PORT"
    wait "$FLOOD_UP" "$FLOOD_DOWN" || true
    grep -q '"lost": "true_' "$V--netns-loss.json" && break
done
cleanup
PIDS=()

# a file cut off mid-way (the writer died): the first 60 % of the netns recording
head -c $(( $(wc -c < "$V--netns-loss.json") * 60 / 100 )) "$V--netns-loss.json" > "$V--truncated.json"
# empty input, and a JSON document of another tool that no format may claim
: > empty--empty.json
ip -j -p addr show lo > not-irtt--ip-addr.json
fi

[ "${1:-}" = "--no-expected" ] && exit 0
cd "$ROOT"
PYTHONPATH=${PYTHONPATH:-src} "$PY" - <<'PYEOF'
from pathlib import Path
from tests.test_formats import write_expected

VALUES = ("seq", "rtt", "status", "timestamp", "size", "irtt_send_delay", "irtt_receive_delay",
          "irtt_lost")
for sample in sorted(Path("tests/data/irtt").iterdir()):
    if sample.name in ("record.sh", "README.md") or sample.name.endswith(".expected.json"):
        continue
    read_as = "irtt" if sample.name.startswith("empty--") else None
    values = () if sample.name.startswith(("empty--", "not-irtt--")) else VALUES
    write_expected(sample, read_as=read_as, values=values)
PYEOF
