#!/usr/bin/env bash
# Re-record the bundled TCP sweep campaigns under data/raw/ with `thruput record`.
#
#   sudo tools/record-campaigns.sh veth-1g      # 8.5 min: namespaces over veth, tbf 1 Gbit/s
#   sudo tools/record-campaigns.sh delay-40ms   # 10.5 min: namespaces over the TUN delay line
#
# Each builds its path (tools/netns.py or tools/delayline.py), starts `iperf3 -s -J` in the
# far namespace, runs `thruput record` from the near one, and tears everything down. The
# campaign directory is removed first: a re-recording is a new campaign, not a resume.
# (To resume an interrupted recording, run the `thruput record` line by hand: it skips the
# runs already in runs.csv.)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
THRUPUT=${THRUPUT:-.venv/bin/thruput}
campaign=${1:?usage: $0 veth-1g|delay-40ms}
dir=data/raw/$campaign
who="thruput maintainers (recorded by tools/record-campaigns.sh)"

server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    case "$campaign" in
        veth-1g) "$PY" tools/netns.py down v1g ;;
        delay-40ms) [ -n "${line:-}" ] && kill "$line" 2>/dev/null; sleep 1
                    "$PY" tools/delayline.py down d40 ;;
    esac
}
trap cleanup EXIT

start_server() {  # namespace
    ip netns exec "$1" iperf3 -s -J >/dev/null 2>&1 &
    server=$!
    sleep 0.5
}

case "$campaign" in
veth-1g)
    "$PY" tools/netns.py up v1g --rate 1gbit --burst 256k --latency 10ms --subnet 10.77.1 >/dev/null
    start_server v1g-b
    rm -rf "$dir"
    "$THRUPUT" record "$dir" --to 10.77.1.2 --netns v1g-a \
        --windows 4K,8K,...,4M --streams 1,2,4,8,16 --repeats 3 --duration 2 --pause 1 \
        --source-name ns-a --destination-name ns-b --capacity 1e9 \
        --title "veth pair shaped to 1 Gbit/s: window x streams sweep (one VM)" \
        --between "veth pair between two network namespaces of one virtual machine; tc tbf rate 1gbit burst 256k latency 10ms as root qdisc on both veth ends (data and ACK directions)" \
        --who "$who" \
        --description "A TCP window x parallel-streams sweep in the manner of SLAC's IEPM bulk-throughput measurements (seed 000), recorded with thruput record between two Linux network namespaces (ns-a -> ns-b) on ONE 2-core virtual machine (KVM guest). The namespaces are joined by a veth pair whose two ends are shaped to 1 Gbit/s with tc tbf (no delay: the round-trip time is tens of microseconds, so the bandwidth-delay product is a few KB and even 4 KB windows come near the shaped rate). Client, server, ping and the kernel share the same 2 CPUs, which can limit throughput with many streams. Runs are short to keep the campaign small: 2 s of iperf3 with ping every 0.2 s alongside (loaded), then 1 s of ping alone (unloaded), instead of seed 000's 10 s + 10 s." \
        --notes "Measured on one virtual machine: both hosts are namespaces of the same 2-core KVM guest; no physical network is involved. The far host (ns-b) has the same CPU, memory, OS and kernel as ns-a; only what iperf3 reports about it is recorded under hosts.ns-b. Shaping: tc tbf 1gbit (burst 256k, latency 10ms) on both veth ends."
    ;;
delay-40ms)
    coproc DL { exec "$PY" tools/delayline.py up d40 --delay 20ms --rate 50mbit --queue 256k --subnet 10.78.1; }
    line=$DL_PID
    read -r info <&"${DL[0]}"
    echo "delay line: $info" >&2
    start_server d40-b
    rm -rf "$dir"
    "$THRUPUT" record "$dir" --to 10.78.1.2 --netns d40-a \
        --windows 8K,16K,...,1M --streams 1,2,4,8 --repeats 3 --duration 4 --pause 2 \
        --source-name ns-a --destination-name ns-b --capacity 5e7 --rtt-ms 40 \
        --title "40 ms, 50 Mbit/s path through a userspace delay line: window x streams sweep (one VM)" \
        --between "two TUN devices joined by tools/delayline.py (a userspace delay line): 20 ms one-way delay each way, a 50 Mbit/s bottleneck with a 256 KiB drop-tail queue in each direction" \
        --who "$who" \
        --description "A TCP window x parallel-streams sweep in the manner of SLAC's IEPM bulk-throughput measurements (seed 000) over a long path, recorded with thruput record between two Linux network namespaces (ns-a -> ns-b) on ONE 2-core virtual machine (KVM guest). netem is not available there, so the path is tools/delayline.py: each namespace has a TUN device and one Python process carries the packets between them, holding each for 20 ms (RTT 40 ms) behind a 50 Mbit/s bottleneck with a 256 KiB drop-tail queue. The bandwidth-delay product is 250 KB, so small windows are window-limited (throughput ~ window/RTT), large ones reach the 50 Mbit/s plateau, and parallel streams multiply the window-limited rate. Runs: 4 s of iperf3 with ping every 0.2 s alongside (loaded), then 2 s of ping alone (unloaded)." \
        --notes "Measured on one virtual machine: both hosts are namespaces of the same 2-core KVM guest; no physical network is involved. The delay line is a Python process that shares the CPUs with iperf3; its timers are epoll's (a packet may leave up to ~1 ms late). The far host (ns-b) has the same CPU, memory, OS and kernel as ns-a; only what iperf3 reports about it is recorded under hosts.ns-b."
    ;;
*)
    echo "unknown campaign $campaign (veth-1g or delay-40ms)" >&2
    exit 2
    ;;
esac
du -sh "$dir"
