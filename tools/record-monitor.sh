#!/usr/bin/env bash
# Record the bundled monitor campaign data/raw/netns-wan-monitor with `thruput monitor`.
#
#   tools/record-monitor.sh START CHANGE END [NAME]
#   e.g. tools/record-monitor.sh 2026-11-22T18:15:00Z 2026-11-22T19:20:50Z 2026-11-22T20:25:00Z
#
# Builds a WAN-like path on this machine, runs the monitor from START (slot 0) until END,
# and tears the path down (also on SIGINT/SIGTERM). What it builds (all numbers below are
# written into the campaign's campaign.yaml):
#   - namespaces tpmon-a (10.201.0.1) and tpmon-b (10.201.0.2) joined by tools/delayline.py:
#     a 50 Mbit/s drop-tail bottleneck (256 KiB queue) and 20 ms one-way delay (RTT 40 ms);
#   - at CHANGE, a planned change of the path: 30 Mbit/s and 40 ms one way (RTT 80 ms),
#     applied by `tools/delayline.py set` and listed in campaign.yaml `events`;
#   - cross traffic that cycles: tools/crosstraffic.py sends UDP both ways through the same
#     bottleneck, 2 -> 16 -> 2 Mbit/s as a raised cosine with a 600 s period (a compressed
#     "day"), "midnight" at START;
#   - iperf3 -s -J in tpmon-b; the monitor runs in tpmon-a, forward = a -> b, reverse = -R.
# CAMPAIGN_DIR overrides data/raw/NAME. It needs root, iproute2, iperf3, ping and thruput
# on PATH. Re-running it with the same START resumes the same campaign (`thruput monitor`
# picks up the next slot).
set -euo pipefail

START=${1:?START (ISO UTC)}; CHANGE=${2:?CHANGE (ISO UTC)}; END=${3:?END (ISO UTC)}
NAME=${4:-netns-wan-monitor}
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(dirname "$HERE")
DIR=${CAMPAIGN_DIR:-$ROOT/data/raw/$NAME}; ANC="$DIR/ancillary"
PATHNAME=tpmon SUBNET=10.201.0 A=10.201.0.1 B=10.201.0.2
RATE0=50mbit DELAY0=20ms RATE1=30mbit DELAY1=40ms QUEUE=256k
CT_LOW=2mbit CT_HIGH=16mbit CT_PERIOD=600 CT_PORT=9000
PY=${PYTHON:-python3}

mkdir -p "$ANC"
secs() { date -u -d "$1" +%s; }
pids=()
cleanup() {
    trap - EXIT INT TERM
    for p in "${pids[@]}"; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    echo "$(date -u +%FT%TZ) path torn down"
}
trap cleanup EXIT INT TERM

# 1. the path (delayline prints one JSON line when up, then one per change)
# (appended: a resumed recording adds to the records of the first)
lines() { cat "$ANC/delayline.jsonl" 2>/dev/null | wc -l; }
before=$(lines)
"$PY" "$HERE/delayline.py" up "$PATHNAME" --delay "$DELAY0" --rate "$RATE0" --queue "$QUEUE" \
    --subnet "$SUBNET" >> "$ANC/delayline.jsonl" 2>> "$ANC/delayline-counts.json" &
pids+=($!)
for _ in $(seq 50); do [ "$(lines)" -gt "$before" ] && break; sleep 0.2; done
[ "$(lines)" -gt "$before" ] || { echo "delay line did not come up" >&2; exit 1; }
echo "$(date -u +%FT%TZ) path up: $(tail -1 "$ANC/delayline.jsonl")"

# 2. the far end's iperf3 server
ip netns exec "$PATHNAME-b" iperf3 -s -J > /dev/null 2>> "$ANC/iperf3-server.err" &
pids+=($!)

# 3. cross traffic both ways, "midnight" at START
T0=$(secs "$START")
for side in a b; do
    ip netns exec "$PATHNAME-$side" "$PY" "$HERE/crosstraffic.py" sink --port "$CT_PORT" \
        --log "$ANC/crosstraffic-received-$side.csv" &
    pids+=($!)
done
ip netns exec "$PATHNAME-a" "$PY" "$HERE/crosstraffic.py" send --to "$B" --port "$CT_PORT" \
    --low "$CT_LOW" --high "$CT_HIGH" --period "$CT_PERIOD" --t0 "$T0" \
    --log "$ANC/crosstraffic-sent-a-to-b.csv" &
pids+=($!)
ip netns exec "$PATHNAME-b" "$PY" "$HERE/crosstraffic.py" send --to "$A" --port "$CT_PORT" \
    --low "$CT_LOW" --high "$CT_HIGH" --period "$CT_PERIOD" --t0 "$T0" \
    --log "$ANC/crosstraffic-sent-b-to-a.csv" &
pids+=($!)

# 4. the planned change
( now=$(date +%s); at=$(secs "$CHANGE")
  if [ "$at" -gt "$now" ]; then sleep $((at - now)); fi
  "$PY" "$HERE/delayline.py" set "$PATHNAME" --delay "$DELAY1" --rate "$RATE1"
  echo "$(date -u +%FT%T.%3NZ) path changed to $RATE1, $DELAY1 one way" ) &
pids+=($!)

# 5. campaign.yaml (only if new: a re-run resumes) and the monitor
if [ ! -e "$DIR/campaign.yaml" ]; then
    "$PY" "$HERE/monitor_campaign_yaml.py" "$DIR" --start "$START" --change "$CHANGE" \
        --netns-a "$PATHNAME-a" --netns-b "$PATHNAME-b" --address "$B" --address-a "$A"
fi
thruput monitor "$DIR" --until "$END" --netns "$PATHNAME-a"
echo "$(date -u +%FT%TZ) monitor ended"
