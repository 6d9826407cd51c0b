#!/usr/bin/env bash
# Re-record the small campaigns the campaign/pipeline/DVC tests read, on loopback only.
#
#   bash tests/data/campaigns/record.sh            # re-records loopback-mini/
#
# loopback-mini: iperf3 -J on 127.0.0.1, windows 64 KiB and 256 KiB x streams 1 and 2 x
# 2 repeats, 1 s runs, ping -i 0.2 alongside each run (loaded) and alone after it
# (unloaded), in the layout of docs/design.md: campaign.yaml, runs.csv, runs/<files>.
# It is the IEPM method of seed 000 shrunk to a few seconds, so that tests stay fast.
# Each raw file is written as <file>.part and renamed when complete; runs.csv gets its row
# only then, as `thruput record` does.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
name=loopback-mini
dir="$here/$name"
host=127.0.0.1
port=$((20000 + $$ % 20000))
windows=(65536 262144)
streams=(1 2)
repeats=2
duration=1
ping_interval=0.2
ping_count=5            # = duration / ping_interval: the unloaded ping lasts as long as a run

rm -rf "$dir"
mkdir -p "$dir/runs"
iperf3 -s -p "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 0.5

started_all="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "run,role,path,window,streams,repeat,phase,started" > "$dir/runs.csv"
for r in $(seq 0 $((repeats - 1))); do
  for w in "${windows[@]}"; do
    for s in "${streams[@]}"; do
      run="w${w}-s${s}-r${r}"
      t0="$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"
      ping -D -i "$ping_interval" -w "$duration" "$host" > "$dir/runs/$run.loaded.ping.part" &
      pinger=$!
      iperf3 -J -c "$host" -p "$port" -w "$w" -P "$s" -t "$duration" -i 0.5 \
        > "$dir/runs/$run.iperf3.json.part"
      wait "$pinger" || true
      mv "$dir/runs/$run.iperf3.json.part" "$dir/runs/$run.iperf3.json"
      mv "$dir/runs/$run.loaded.ping.part" "$dir/runs/$run.loaded.ping"
      echo "$run,iperf,runs/$run.iperf3.json,$w,$s,$r,,$t0" >> "$dir/runs.csv"
      echo "$run,ping,runs/$run.loaded.ping,$w,$s,$r,loaded,$t0" >> "$dir/runs.csv"
      t1="$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"
      ping -D -i "$ping_interval" -c "$ping_count" "$host" > "$dir/runs/$run.unloaded.ping.part" || true
      mv "$dir/runs/$run.unloaded.ping.part" "$dir/runs/$run.unloaded.ping"
      echo "$run,ping,runs/$run.unloaded.ping,$w,$s,$r,unloaded,$t1" >> "$dir/runs.csv"
    done
  done
done
ended_all="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

cpu_model="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
cpu_mhz="$(awk -F: '/^cpu MHz/ {gsub(/ /, "", $2); print $2; exit}' /proc/cpuinfo)"
mem="$(awk '/^MemTotal/ {printf "%.0f", $2 * 1024}' /proc/meminfo)"
os="$(. /etc/os-release && echo "$PRETTY_NAME")"
sc() { sysctl -n "$1" | tr -s '\t ' ','; }
cat > "$dir/campaign.yaml" <<YAML
name: $name
title: "Loopback mini-sweep (test fixture)"
description: >-
  A tiny TCP sweep over the loopback interface of one virtual machine, recorded by
  tests/data/campaigns/record.sh for the campaign, pipeline and DVC tests. Client and
  server are the same host; there is no network between them, so the numbers measure
  the kernel and memory, not a path.
kind: tcp_sweep
dates: {start: $started_all, end: $ended_all}
who: ["tests/data/campaigns/record.sh"]
path:
  source: vm
  destination: vm
  between: "loopback (lo), same host"
  capacity_bps: null
hosts:
  vm:
    cpu_model: "$cpu_model"
    cpu_count: $(nproc)
    cpu_mhz: ${cpu_mhz:-null}
    memory_bytes: $mem
    os: "$os"
    kernel: "$(uname -r)"
    nic: "lo"
    link_speed_bps: null
    tcp:
      rmem_default: $(sysctl -n net.core.rmem_default)
      rmem_max: $(sysctl -n net.core.rmem_max)
      wmem_default: $(sysctl -n net.core.wmem_default)
      wmem_max: $(sysctl -n net.core.wmem_max)
      tcp_rmem: [$(sc net.ipv4.tcp_rmem)]
      tcp_wmem: [$(sc net.ipv4.tcp_wmem)]
      congestion_control: $(sysctl -n net.ipv4.tcp_congestion_control)
      window_scaling: $([ "$(sysctl -n net.ipv4.tcp_window_scaling)" = 1 ] && echo true || echo false)
      sack: $([ "$(sysctl -n net.ipv4.tcp_sack)" = 1 ] && echo true || echo false)
tools: {iperf3: "$(iperf3 --version | awk 'NR==1 {print $2}')", ping: "iputils $(ping -V | awk '{print $NF; exit}')"}
plan:
  tool: iperf3
  windows: [$(IFS=,; echo "${windows[*]}")]
  streams: [$(IFS=,; echo "${streams[*]}")]
  repeats: $repeats
  duration_s: $duration
  pause_s: 0
  order: sequential
  ping: {interval_s: $ping_interval, size_bytes: 56}
explained: []
notes: >-
  Measured on one virtual machine (KVM guest) over loopback; a test fixture, not a
  measurement of any network.
YAML
echo "recorded $(($(wc -l < "$dir/runs.csv") - 1)) files into $dir"
