#!/usr/bin/env bash
# Re-record the nuttcp fixtures of this folder with the installed nuttcp (Debian 12:
# nuttcp 6.1.2): on loopback, and between two network namespaces this script creates (and
# removes) through a router namespace shaped with tc tbf (50 Mbit/s, a queue of 6000 bytes):
# UDP drops appear. This machine's kernel has no netem, so losses are those of a tail-drop
# queue, not random ones; nuttcp 6.1.2 reported 0 TCP retransmits on this path in every
# attempt (non-zero retrans/cwnd columns are tested on the nuttcp 8.1.4 corpus logs). Then rewrite every
# .expected.json (review the diff by hand against nuttcp's own final lines before committing).
# Usage: bash tests/data/nuttcp/record.sh [--no-expected | --expected-only]   (needs root)
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
PY=${PY:-python}
CTL=$((30000 + $$ % 10000))               # control port, unique per invocation
DATA=$((CTL + 1))                         # first data port
NS=thruput-nut-$$                         # namespaces: $NS-a (client), $NS-r (router), $NS-b (server)
NET=$((10 + $$ % 200))                    # 10.<NET>.2.0/24 and .3.0/24 inside the namespaces only
V=$(nuttcp -V | sed 's/^nuttcp-//')       # "6.1.2"

source "$ROOT/tools/netns-router.sh"

PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    router_down "$NS"
}
trap cleanup EXIT

if [ "${1:-}" != "--expected-only" ]; then
nuttcp -S --nofork -P "$CTL" -p "$DATA" >/dev/null 2>&1 &
PIDS+=($!)
sleep 0.5
c() { nuttcp -P "$CTL" -p "$DATA" "$@" 127.0.0.1; }

c -T 2 -i 0.5                        > "$V--tcp-i.out"          # brief (default) output
c -v -T 2 -i 0.5                     > "$V--tcp-i-v.out"        # verbose: both ends' lines
c -r -v -T 2 -i 0.5                  > "$V--tcp-r-v.out"        # receive (server transmits)
c -v -N 2 -T 2 -i 0.5                > "$V--tcp-N2-v.out"       # two streams, summed reports
c -fparse -v -T 2 -i 0.5             > "$V--tcp-fparse-v.out"   # key=value output
c -u -R 20m -T 2 -i 0.5              > "$V--udp-i.out"
c -u -R 20m -fparse -T 2 -i 0.5      > "$V--udp-fparse.out"
c -u -R 20m -fparse -v -T 2 -i 0.5   > "$V--udp-fparse-v.out"
# runs cut off: the client killed (SIGTERM) 2.3 s into a 10 s run, as a wrapper's timeout
# leaves them: intervals, no final lines
for what in "tcp-cut-v:-v" "tcp-cut:" "tcp-r-cut-v:-r -v" "udp-cut:-u -R 20m"; do
    # shellcheck disable=SC2086
    timeout -s TERM 2.3 nuttcp -P "$CTL" -p "$DATA" ${what#*:} -T 10 -i 0.5 127.0.0.1 > "$V--${what%%:*}.out" || true
    sleep 1
done

# three namespaces a - r - b (tools/netns-router.sh); r's egress towards each end is shaped
# by tbf (50 Mbit/s, a queue of 6000 bytes): the drops happen in r
router_up "$NS" "10.$NET.2" "10.$NET.3" tbf rate 50mbit burst 4kb limit 6000
ip netns exec "$NS-b" nuttcp -S --nofork -P "$CTL" -p "$DATA" >/dev/null 2>&1 &
PIDS+=($!)
sleep 0.5
n() { ip netns exec "$NS-a" nuttcp -P "$CTL" -p "$DATA" "$@" "10.$NET.3.2"; }
n -v -w1m -T 3 -i 0.5                > "$V--tcp-netns-loss-v.out"
n -w1m -T 3 -i 0.5                   > "$V--tcp-netns-loss.out"
n -r -w1m -T 3 -i 0.5                > "$V--tcp-r-netns-loss.out"
n -u -R 60m -v -T 2 -i 0.5           > "$V--udp-netns-loss-v.out"
cleanup
PIDS=()

# a 20 ms RTT path with a drop-tail queue (tools/delayline.py: 10 ms each way, 20 Mbit/s,
# 30 KB queue): segments are dropped on the path (the delay line prints its drop counts on
# stderr when stopped) and TCP retransmits them, yet nuttcp 6.1.2 prints "retrans = 0"
DL=nut$(( $$ % 100000 ))                  # delay line namespaces $DL-a, $DL-b (12 characters at most)
"$PY" "$ROOT/tools/delayline.py" up "$DL" --delay 10ms --rate 20mbit --queue 30k --subnet "10.$NET.6" > /dev/null &
DELAYLINE=$!
PIDS+=($DELAYLINE)
sleep 2
ip netns exec "$DL-b" nuttcp -S --nofork -P "$CTL" -p "$DATA" >/dev/null 2>&1 &
PIDS+=($!)
sleep 0.5
ip netns exec "$DL-a" nuttcp -v -P "$CTL" -p "$DATA" -T 4 -i 0.5 "10.$NET.6.2" > "$V--tcp-delayline-drops-v.out"
cleanup
wait "$DELAYLINE" || true
PIDS=()

# a run cut off mid-way (the writer died): the first 55 % of the verbose netns recording
head -c $(( $(wc -c < "$V--tcp-netns-loss-v.out") * 55 / 100 )) "$V--tcp-netns-loss-v.out" \
    > "$V--truncated-v.out"
# hand-edited copies of recorded logs, for lines nuttcp 6.1.2 does not print here (other
# versions do): a negative interval retrans count (-2: a difference of the kernel's counter
# that went backwards), and fields that touch where a number outgrows its column
sed -E '3s/ 0 retrans/ -2 retrans/' "$V--tcp-i.out" > "$V--tcp-i-negative-retrans-edited.out"
sed -E '2,3{s/= +([0-9])/=\1/; s/Mbps +([0-9])/Mbps\1/}' "$V--tcp-i.out" > "$V--tcp-i-merged-columns-edited.out"
# empty input, and nuttcp's own error without any run (no format may claim it)
: > empty--empty.out
nuttcp -P "$((CTL + 7))" -T 1 127.0.0.1 > not-a-run--refused.out 2>&1 || true
# a server that refuses the test: nuttcp's client against a stand-in control server (the
# Python below: it answers HELO, then the test's parameters with "KO ..." instead of "OK
# v6.1.2"; no real nuttcp server could be made to refuse here). nuttcp writes "nuttcp-t:
# v6.1.2: error from server" on stdout and "server " on stderr: stdout alone, and both
# (2>&1: "server " then the line, as a wrapper capturing both leaves it)
for what in "error-from-server:/dev/null" "error-from-server-stderr:&1"; do
    READY=$(mktemp -u)
    "$PY" - "$((CTL + 9))" "$READY" <<'FAKE' &
import socket, sys
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", int(sys.argv[1])))
s.listen()
open(sys.argv[2], "w").close()
s.settimeout(20)
c, _ = s.accept()
f = c.makefile("rwb")
f.readline(); f.write(b"HELO nuttcp v6.1.2\n"); f.flush()
f.readline(); f.write(b"KO too many connections\n"); f.flush()
c.settimeout(2)
try:
    c.recv(100)
except OSError:
    pass
FAKE
    FAKE_PID=$!
    for _ in $(seq 50); do [ -e "$READY" ] && break; sleep 0.1; done
    if [ "${what#*:}" = "&1" ]; then
        nuttcp -v -P "$((CTL + 9))" -T 1 -i 0.5 127.0.0.1 > "not-a-run--${what%%:*}.out" 2>&1 || true
    else
        nuttcp -v -P "$((CTL + 9))" -T 1 -i 0.5 127.0.0.1 > "not-a-run--${what%%:*}.out" 2>/dev/null || true
    fi
    wait "$FAKE_PID" || true
    rm -f "$READY"
done
fi

[ "${1:-}" = "--no-expected" ] && exit 0
cd "$ROOT"
PYTHONPATH=${PYTHONPATH:-src} "$PY" - <<'PYEOF'
from pathlib import Path
from tests.test_formats import write_expected

RUN = ("throughput", "throughput_sender", "throughput_receiver", "bytes", "duration", "streams",
       "protocol", "window_requested", "window_actual", "retransmits", "loss_fraction",
       "packets", "packets_lost")
INTERVAL = ("interval_end", "interval_bytes", "interval_throughput", "interval_retransmits")
for sample in sorted(Path("tests/data/nuttcp").iterdir()):
    if sample.name in ("record.sh", "README.md") or sample.name.endswith(".expected.json"):
        continue
    read_as = "nuttcp" if sample.name.startswith("empty--") else None
    values = () if sample.name.startswith(("empty--", "not-a-run--")) else RUN + INTERVAL
    write_expected(sample, read_as=read_as, values=values)
PYEOF
