#!/usr/bin/env bash
# Re-record the tcp_info samples: `ss -tin` (iproute2 6.1) polled while iperf3 (3.12) runs,
# each poll preceded by a line "# time: <Unix seconds>" (the documented way thruput
# timestamps ss snapshots; ss itself prints no time). Then rewrite every .expected.json
# (review the diff by hand before committing).
#   loopback--*     iperf3 on 127.0.0.1 (no loss: ss prints no retrans field)
#   oneline-O--*    the same with ss -tinO (one line per socket)
#   tbf-netns--*    three network namespaces, the middle one forwarding through tc tbf at
#                   20 Mbit/s (cubic), so that TCP loses and retransmits: retrans:a/b
# Usage: bash tests/data/tcp_info/record.sh [--no-expected | --expected-only]   (needs root)
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
NS=thruput-tcpinfo-$$
NET=$((10 + $$ % 200))
PORT=$((20000 + $$ % 20000))
cleanup() {
    [ -n "${SERVER:-}" ] && kill "$SERVER" 2>/dev/null || true
    for n in a r b; do ip netns del "$NS-$n" 2>/dev/null || true; done
}
trap cleanup EXIT

# poll NS OUT FILTER...: every 0.5 s while the client ($CLIENT) runs
poll() {
    local ns=$1 out=$2; shift 2
    : > "$out.part"
    while kill -0 "$CLIENT" 2>/dev/null; do
        echo "# time: $(date +%s.%N | cut -c1-17)" >> "$out.part"
        $ns ss "$@" >> "$out.part"
        sleep 0.5
    done
    mv "$out.part" "$out"
}

if [ "${1:-}" != "--expected-only" ]; then
# loopback, multi-line and one-line forms
iperf3 -s -p "$PORT" -1 >/dev/null & SERVER=$!
sleep 0.3
iperf3 -c 127.0.0.1 -p "$PORT" -t 2 -b 100M -C cubic >/dev/null & CLIENT=$!
poll "" loopback--iperf3-2s.txt -tin "dst 127.0.0.1:$PORT"
wait "$SERVER" || true
iperf3 -s -p "$PORT" -1 >/dev/null & SERVER=$!
sleep 0.3
iperf3 -c 127.0.0.1 -p "$PORT" -t 1 -b 100M -C cubic >/dev/null & CLIENT=$!
poll "" oneline-O--iperf3-1s.txt -tinO "dst 127.0.0.1:$PORT"
wait "$SERVER" || true

# three namespaces a - r - b; r forwards and shapes its link to b with tc tbf (20 Mbit/s,
# short queue), so segments are dropped on the path and the sender retransmits them
# (a qdisc on the sender's own interface only signals local congestion, no retransmission)
ip netns add "$NS-a"; ip netns add "$NS-r"; ip netns add "$NS-b"
ip -n "$NS-a" link add va type veth peer name ra netns "$NS-r"
ip -n "$NS-b" link add vb type veth peer name rb netns "$NS-r"
ip -n "$NS-a" addr add "10.$NET.0.1/24" dev va
ip -n "$NS-r" addr add "10.$NET.0.2/24" dev ra
ip -n "$NS-r" addr add "10.$NET.1.1/24" dev rb
ip -n "$NS-b" addr add "10.$NET.1.2/24" dev vb
for l in "$NS-a va" "$NS-r ra" "$NS-r rb" "$NS-b vb" "$NS-a lo" "$NS-r lo" "$NS-b lo"; do
    ip -n "${l% *}" link set "${l#* }" up
done
ip -n "$NS-a" route add default via "10.$NET.0.2"
ip -n "$NS-b" route add default via "10.$NET.1.1"
ip netns exec "$NS-r" sysctl -qw net.ipv4.ip_forward=1
ip netns exec "$NS-r" tc qdisc add dev rb root tbf rate 20mbit burst 16kb limit 30kb
ip netns exec "$NS-b" iperf3 -s -p "$PORT" -1 >/dev/null & SERVER=$!
sleep 0.3
ip netns exec "$NS-a" iperf3 -c "10.$NET.1.2" -p "$PORT" -t 3 -C cubic >/dev/null & CLIENT=$!
poll "ip netns exec $NS-a" tbf-netns--iperf3-3s-retrans.txt -tin "dst 10.$NET.1.2:$PORT"
wait "$SERVER" || true
cleanup

# a recording cut off in the middle of the last info line
head -c $(( $(wc -c < tbf-netns--iperf3-3s-retrans.txt) - 200 )) tbf-netns--iperf3-3s-retrans.txt \
    > truncated--tbf-cut-in-info.txt
# ss without -i: socket lines only, no tcp_info (no format may claim it)
iperf3 -s -p "$PORT" -1 >/dev/null & SERVER=$!
sleep 0.3
iperf3 -c 127.0.0.1 -p "$PORT" -t 1 >/dev/null & CLIENT=$!
sleep 0.5
ss -tn "dst 127.0.0.1:$PORT" > notmine--ss-tn-without-info.txt
wait "$CLIENT" "$SERVER" || true
: > empty--nothing.txt
fi

if [ "${1:-}" != "--no-expected" ]; then
cd "$ROOT"
"$PY" - <<'PYEOF'
from pathlib import Path
from tests.test_formats import write_expected

VALUES = ("time", "cwnd", "srtt", "rttvar", "retransmits_total", "bytes_acked", "connection", "line")
for sample in sorted(Path("tests/data/tcp_info").iterdir()):
    if sample.name.endswith(".expected.json") or sample.name in ("record.sh", "README.md"):
        continue
    if sample.name.startswith("empty--"):
        write_expected(sample, read_as="tcp_info")
    elif sample.name.startswith("notmine--"):
        write_expected(sample)
    else:
        write_expected(sample, values=VALUES)
PYEOF
fi
