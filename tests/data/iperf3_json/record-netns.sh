#!/usr/bin/env bash
# Re-record the iperf3 fixtures of a lossy, slower path (for -J here and for text in
# ../iperf3_text/), then rewrite their .expected.json (review the diff by hand against the
# tool's own end sums before committing). Needs root.
#
# Three namespaces a - r - b (tools/netns-router.sh); r's egress towards each end is shaped
# by tbf (80 Mbit/s, a queue of 30000 bytes). This kernel has no netem: the losses are
# those of the tail-drop queue, as on a real path offered more than it carries.
#   udp-150M-netns-loss   -u -b 150M on the 80 Mbit/s path: about half the datagrams lost
#                         (received < sent is loss, not a disagreement)
#   tcp-w1M-2s-netns      -w 1M -t 2: the sender's count includes the bytes still in its
#                         socket buffer when the test ends (sent > received by several %)
#   udp-none-arrived      -u -l 1400 with the server's interface at MTU 1100: the veth drops
#                         every 1428-byte datagram (too big for its peer), while the control
#                         connection (MSS 1060) and iperf3's 4-byte UDP "connect" pass: the
#                         receiver's report comes back with 0 datagrams of N sent
# Usage: bash tests/data/iperf3_json/record-netns.sh [--no-expected | --expected-only]
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
PY=${PY:-python}
PORT=$((20000 + $$ % 20000))              # unique per invocation
NS=tph4-i3-$$                             # namespaces $NS-a (client), $NS-r (router), $NS-b (server)
NET=$((10 + $$ % 200))                    # 10.<NET>.2.0/24 and .3.0/24 inside the namespaces only
V=$(iperf3 --version | awk 'NR==1 {print $2}')   # "3.12"
TXT=../iperf3_text

source "$ROOT/tools/netns-router.sh"

PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    router_down "$NS"
}
trap cleanup EXIT

if [ "${1:-}" != "--expected-only" ]; then
router_up "$NS" "10.$NET.2" "10.$NET.3" tbf rate 80mbit burst 8kb limit 30000
ip netns exec "$NS-b" iperf3 -s -p "$PORT" >/dev/null 2>&1 &
PIDS+=($!)
sleep 0.5
c() { ip netns exec "$NS-a" iperf3 -c "10.$NET.3.2" -p "$PORT" "$@"; }

c -J -u -b 150M -t 2 -i 0.5        > "$V--udp-150M-netns-loss.json"
c -J -u -b 150M -t 2 -i 0.5 -R     > "$V--udp-150M-R-netns-loss.json"
c -J -w 1M -t 2 -i 0.5             > "$V--tcp-w1M-2s-netns.json"
c -J -w 1M -t 2 -i 0.5 -R          > "$V--tcp-w1M-2s-R-netns.json"
c -u -b 150M -t 2 -i 0.5           > "$TXT/$V--udp-150M-netns-loss.txt"
c -u -b 150M -t 2 -i 0.5 -R        > "$TXT/$V--udp-150M-R-netns-loss.txt"
c -w 1M -t 2 -i 0.5                > "$TXT/$V--tcp-w1M-2s-netns.txt"
c -w 1M -t 2 -i 0.5 -R             > "$TXT/$V--tcp-w1M-2s-R-netns.txt"
# no datagram reaches the server: its interface's MTU below the datagrams' size
ip -n "$NS-b" link set vb mtu 1100
c -J -u -b 20M -l 1400 -t 1 -i 0.5 > "$V--udp-none-arrived.json"
c -u -b 20M -l 1400 -t 1 -i 0.5    > "$TXT/$V--udp-none-arrived.txt"
cleanup
PIDS=()
fi

[ "${1:-}" = "--no-expected" ] && exit 0
cd "$ROOT"
PYTHONPATH=${PYTHONPATH:-src} "$PY" - "$V" <<'PYEOF'
import sys
from tests.test_formats import write_expected
v = sys.argv[1]
run = ["throughput", "throughput_sender", "throughput_receiver", "bytes", "duration", "streams",
       "window_requested", "window_actual", "retransmits", "loss_fraction"]
per = ["stream_throughput", "stream_direction", "interval_start", "interval_end", "interval_bytes"]
udp = ["jitter", "packets", "packets_lost"]
for d, ext in (("tests/data/iperf3_json/", "json"), ("tests/data/iperf3_text/", "txt")):
    for name in ["tcp-w1M-2s-netns", "tcp-w1M-2s-R-netns"]:
        write_expected(d + f"{v}--{name}.{ext}", values=run + per + ["interval_retransmits"])
    for name in ["udp-150M-netns-loss", "udp-150M-R-netns-loss", "udp-none-arrived"]:
        write_expected(d + f"{v}--{name}.{ext}", values=run + per + udp)
PYEOF
