#!/usr/bin/env bash
# Re-record monitor-loopback/, the small monitor campaign the monitor-Dataset, store and
# distributed-normalize tests read, on loopback only (no namespaces, no other host).
#
#   bash tests/data/campaigns/record-monitor.sh
#
# Four slots 8 s apart of one "path" (127.0.0.1, both directions), in the layout of
# docs/design.md "Monitor campaigns": each slot runs iperf3 -J TCP at 64 KiB forward and
# reverse and at 256 KiB forward (1 s each), iperf3 -J UDP at 20 Mbit/s (1 s), and ping -D
# at 108 and 1480 bytes (5 probes, 0.2 s apart). Slot 2 is skipped on purpose (a gap,
# explained in campaign.yaml). Slot 3 also holds two failed tests, as the recorder
# writes them: a TCP test to a port with no server (iperf3's own "Connection refused"
# JSON) and a ping killed by `timeout` after 0.5 s (its log cut off, outcome "timeout").
# Each raw file is written as <file>.part and renamed when complete; its runs.csv row
# (with the file's sha256) is written only then, as `thruput monitor` does.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
name=monitor-loopback
dir="$here/$name"
host=127.0.0.1
port=$((20000 + $$ % 20000))
dead_port=$((port + 1))              # nothing listens there
interval=8
slots=(0 1 3)

rm -rf "$dir"
mkdir -p "$dir/runs"
iperf3 -s -p "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 0.5

start_epoch=$(date -u +%s)
start_iso=$(date -u -d "@$start_epoch" +%Y-%m-%dT%H:%M:%SZ)
echo "run,role,path,sha256,slot,started,path_name,direction,test,tool,socket_buffer,size,rate,outcome,reason" > "$dir/runs.csv"

# finish FILE ROW...: rename FILE.part to FILE and append the runs.csv row with its sha256
finish() {
  local rel=$1 slot=$2 started=$3 rest=$4 run=$5
  mv "$dir/$rel.part" "$dir/$rel"
  local sha
  sha=$(sha256sum "$dir/$rel" | cut -d' ' -f1)
  echo "$run,$6,$rel,$sha,$slot,$started,$rest" >> "$dir/runs.csv"
}

for slot in "${slots[@]}"; do
  due=$((start_epoch + slot * interval))
  while [ "$(date -u +%s)" -lt "$due" ]; do sleep 0.1; done
  day=$(date -u +%Y-%m-%d)
  mkdir -p "$dir/runs/$day"
  for spec in "forward 65536" "reverse 65536" "forward 262144"; do
    set -- $spec
    direction=$1 buf=$2
    run=$(printf '%06d' "$slot")-lo-$direction-tcp-b$buf
    rel="runs/$day/$run.json"
    started=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
    flag=""; [ "$direction" = reverse ] && flag="-R"
    iperf3 -J -c "$host" -p "$port" -w "$buf" -t 1 -i 0.5 $flag > "$dir/$rel.part"
    finish "$rel" "$slot" "$started" "lo,$direction,tcp,iperf3,$buf,,,ok," "$run" iperf
  done
  run=$(printf '%06d' "$slot")-lo-forward-udp
  rel="runs/$day/$run.json"
  started=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  iperf3 -J -c "$host" -p "$port" -u -b 20M -t 1 -i 0.5 > "$dir/$rel.part"
  finish "$rel" "$slot" "$started" "lo,forward,udp,iperf3,,,20000000,ok," "$run" iperf
  for size in 108 1480; do
    run=$(printf '%06d' "$slot")-lo-forward-ping-z$size
    rel="runs/$day/$run.txt"
    started=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
    ping -D -c 5 -i 0.2 -s "$size" "$host" > "$dir/$rel.part"
    finish "$rel" "$slot" "$started" "lo,forward,ping,ping,,$size,,ok," "$run" ping
  done
  if [ "$slot" = 3 ]; then
    run=$(printf '%06d' "$slot")-lo-forward-tcp-b1048576
    rel="runs/$day/$run.json"
    started=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
    iperf3 -J -c "$host" -p "$dead_port" -w 1048576 -t 1 > "$dir/$rel.part" || true
    reason=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"])' "$dir/$rel.part")
    finish "$rel" "$slot" "$started" "lo,forward,tcp,iperf3,1048576,,,refused,\"$reason\"" "$run" iperf
    run=$(printf '%06d' "$slot")-lo-reverse-ping-z108
    rel="runs/$day/$run.txt"
    started=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
    timeout 0.5 ping -D -c 20 -i 0.2 -s 108 "$host" > "$dir/$rel.part" || true
    finish "$rel" "$slot" "$started" "lo,reverse,ping,ping,,108,,timeout,killed after 0.5 s (timeout_s)" "$run" ping
  fi
done
end_iso=$(date -u +%Y-%m-%dT%H:%M:%SZ)

cat > "$dir/campaign.yaml" <<EOF
name: $name
title: "Loopback monitor (test fixture)"
description: >-
  Three test slots of a tiny monitor campaign over the loopback interface of one virtual
  machine, recorded by tests/data/campaigns/record-monitor.sh for the monitor Dataset,
  Zarr store and distributed normalize tests. Client and server are the same host; the
  "reverse" direction is iperf3 -R on the same loopback. No network lies between them.
kind: monitor
dates: {start: $start_iso, end: $end_iso}
who: ["tests/data/campaigns/record-monitor.sh"]
paths:
  - {name: lo, source: vm, destination: vm, address: $host, directions: [forward, reverse],
     between: "loopback (lo), same host", capacity_bps: null}
hosts:
  vm: {os: "$(. /etc/os-release && echo "$PRETTY_NAME")", kernel: "$(uname -r)", nic: lo}
tools: {iperf3: "$(iperf3 --version | head -1 | cut -d' ' -f2)", ping: "$(ping -V | head -1 | sed 's/^ping from //')"}
schedule:
  interval_s: $interval
  jitter_s: 0
  order: fixed
  seed: null
  timeout_s: 30
  tests:
    - {test: tcp, tool: iperf3, duration_s: 1, socket_buffers: [65536, 262144]}
    - {test: udp, tool: iperf3, duration_s: 1, rate_bps: 20000000}
    - {test: ping, count: 5, interval_s: 0.2, sizes: [108, 1480]}
explained:
  - {from: $(date -u -d "@$((start_epoch + 2 * interval))" +%Y-%m-%dT%H:%M:%SZ), to: $(date -u -d "@$((start_epoch + 2 * interval + interval / 2))" +%Y-%m-%dT%H:%M:%SZ), reason: "slot 2 skipped on purpose by record-monitor.sh (a gap for the tests)"}
notes: "Slot 3 holds a refused TCP test (no server on the port) and a ping killed by timeout."
EOF
echo "$dir: $(($(wc -l < "$dir/runs.csv") - 1)) tests"
