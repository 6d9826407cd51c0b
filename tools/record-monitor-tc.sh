#!/usr/bin/env bash
# Record the monitor campaign data/raw/netns-tc-monitor with `thruput monitor`, set up the
# way a new user would: `thruput monitor new` with ONE socket buffer, no schedule.day_s,
# 30 s slots, and a `tc` change of the path half way.
#
#   tools/record-monitor-tc.sh [MINUTES] [NAME]       (default 15 minutes, netns-tc-monitor)
#
# Builds namespaces umon-a (10.203.0.1) and umon-b (10.203.0.2) joined by a veth pair with
# a tc tbf bottleneck of 50 Mbit/s on both ends (tools/netns.py), starts iperf3 -s in
# umon-b, writes campaign.yaml with `thruput monitor new`, runs `thruput monitor` in umon-a
# for MINUTES, and half way (between two slots) changes both tbf qdiscs to 20 Mbit/s with
# `tc qdisc change`. The time of the change is written into campaign.yaml `events`. The
# namespaces are deleted on exit (also on SIGINT/SIGTERM). Needs root, iproute2, iperf3,
# ping and thruput on PATH. CAMPAIGN_DIR overrides data/raw/NAME.
set -euo pipefail

MINUTES=${1:-15}; NAME=${2:-netns-tc-monitor}
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(dirname "$HERE")
DIR=${CAMPAIGN_DIR:-$ROOT/data/raw/$NAME}
NS=umon SUBNET=10.203.0 B=10.203.0.2
RATE0=50mbit RATE1=20mbit BURST=256k LATENCY=10ms INTERVAL=30
PY=${PYTHON:-python3}

[ -e "$DIR/campaign.yaml" ] && { echo "$DIR/campaign.yaml exists: pick a new NAME" >&2; exit 1; }
server=""
cleanup() {
    trap - EXIT INT TERM
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    "$PY" "$HERE/netns.py" down "$NS"
    echo "$(date -u +%FT%TZ) namespaces deleted"
}
trap cleanup EXIT INT TERM

"$PY" "$HERE/netns.py" up "$NS" --rate "$RATE0" --burst "$BURST" --latency "$LATENCY" \
    --subnet "$SUBNET" > /dev/null
ip netns exec "$NS-b" iperf3 -s > /dev/null 2>&1 &
server=$!
sleep 1

thruput monitor new "$DIR" --to "$B" --source "$NS-a" --destination "$NS-b" --path-name a-b \
    --interval "${INTERVAL}s" --timeout 20s --tcp-buffers 256K --tcp-duration 3s \
    --udp-rate 30e6 --udp-duration 3s --ping-sizes 56 --ping-count 10 --ping-interval 0.2 \
    --between "veth pair umon-va/umon-vb, tc tbf $RATE0 (burst $BURST, latency $LATENCY) on both ends" \
    --capacity 50e6 --who "thruput developers (recorded by tools/record-monitor-tc.sh)" \
    --title "Monitor of a veth path shaped by tc tbf, one socket buffer, rate changed half way"

T0=$(date +%s)                                   # slot 0: now (thruput monitor's start)
HALF=$(( T0 + MINUTES * 30 + 22 ))               # between two slots, after the first has ended
END=$(( T0 + MINUTES * 60 ))
( sleep $((HALF - T0))
  for side in a b; do
      ip netns exec "$NS-$side" tc qdisc change dev "$NS-v$side" root tbf rate "$RATE1" \
          burst "$BURST" latency "$LATENCY"
  done
  date -u +%FT%T.%3NZ > "${TMPDIR:-/tmp}/$NAME.change-time"
  echo "$(date -u +%FT%T.%3NZ) path changed to $RATE1" ) &
changer=$!

thruput monitor "$DIR" --until "$(date -u -d "@$END" +%FT%TZ)" --netns "$NS-a"
wait "$changer" || true
echo "$(date -u +%FT%TZ) monitor ended; change at $(cat "${TMPDIR:-/tmp}/$NAME.change-time")"
