#!/usr/bin/env bash
# Record monitor-pile/: a small archive shaped like a drive test's (see
# ../../../docs/monitoring.md, "Importing an archive"): two "operators" (a, b), rounds of
# nuttcp TCP both ways (-r: this host receives, -t: it sends), iperf3 UDP both ways (-R,
# "Reverse mode") and ping, each log written through the starlink-measurement wrapper
# ("Start time:"/"End time:" epoch-ms lines around a log prefixed by
# ts '[%Y-%m-%d %H:%M:%.S]'). All on loopback. In round 2 of operator b, the TCP downlink
# goes to a port where no server listens: nuttcp prints its error on stderr only, so the
# log holds nothing but the wrapper's two lines (a failed test for the importer).
# tests/test_campaign_monitor_import.py imports it. Usage: bash tests/data/wrapped/record-monitor-pile.sh
set -euo pipefail
cd "$(dirname "$0")"
command -v ts >/dev/null || { echo "needs ts (apt-get install moreutils)" >&2; exit 1; }
out=monitor-pile
rm -rf "$out"
NPORT=$((21000 + $$ % 2000)); IPORT=$((NPORT + 2)); DEAD=$((NPORT + 4))
nuttcp -S --nofork -P "$NPORT" -p "$((NPORT + 1))" >/dev/null 2>&1 &
nsrv=$!
iperf3 -s -p "$IPORT" >/dev/null 2>&1 &
isrv=$!
trap 'kill $nsrv $isrv 2>/dev/null || true' EXIT
sleep 0.5

ms() { date +%s%3N; }
# wrap FILE CMD...: the starlink-measurement wrapper (the command's stdout only)
wrap() {
    local file=$1; shift
    mkdir -p "$(dirname "$file")"
    { echo "Start time: $(ms)"; { "$@" 2>/dev/null || true; } | ts '[%Y-%m-%d %H:%M:%.S]'; echo "End time: $(ms)"; } > "$file"
}
stamp() { date +%H%M%S%3N; }

for round in 0 1 2; do
    for op in a b; do
        dir="$out/$op/$(date +%Y%m%d)/$(stamp)"
        if [ $((round % 2)) -eq 0 ]; then
            port=$NPORT
            [ "$round" -eq 2 ] && [ "$op" = b ] && port=$DEAD
            wrap "$dir/tcp_downlink_$(stamp).out" nuttcp -v -P "$port" -p "$((port + 1))" -T 1 -i 0.5 -r 127.0.0.1
            wrap "$dir/tcp_uplink_$(stamp).out" nuttcp -v -P "$NPORT" -p "$((NPORT + 1))" -T 1 -i 0.5 -t 127.0.0.1
        else
            wrap "$dir/udp_downlink_$(stamp).out" iperf3 -c 127.0.0.1 -p "$IPORT" -u -b 20M -t 1 -i 0.5 -R
            wrap "$dir/udp_uplink_$(stamp).out" iperf3 -c 127.0.0.1 -p "$IPORT" -u -b 20M -t 1 -i 0.5
        fi
        wrap "$dir/ping_$(stamp).out" ping -c 4 -i 0.2 127.0.0.1
    done
    sleep 2
done
