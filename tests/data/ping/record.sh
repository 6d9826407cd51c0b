#!/usr/bin/env bash
# Re-record the ping fixtures of this folder that tools installed here can produce:
# iputils ping (Debian 12: iputils 20221126) and BusyBox ping (apt-get install busybox)
# on loopback, plus an unreachable and a silent neighbour inside network namespaces this
# script creates and removes. Then rewrite every .expected.json (review the diff by hand
# against the tool's own summary lines before committing).
# Solaris and Windows samples are built from their documented format (see README.md) and
# are not touched here, except for their .expected.json.
# Usage: bash tests/data/ping/record.sh [--no-expected | --expected-only]   (needs root)
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
NS=thruput-ping-$$                        # unique per invocation
NET=$((10 + $$ % 200))                    # 10.<NET>.0.0/24 inside the namespaces only

cleanup() { ip netns del "$NS-a" 2>/dev/null || true; ip netns del "$NS-b" 2>/dev/null || true; }
trap cleanup EXIT

if [ "${1:-}" != "--expected-only" ]; then
p() { ping "$@" || true; }               # ping exits 1 when replies are missing: still a log

p -c 5 -i 0.2 127.0.0.1                               > iputils--loopback-c5.out
p -c 5 -i 0.2 -D 127.0.0.1                            > iputils--timestamps-D.out
p -c 4 -i 0.2 -s 1400 127.0.0.1                       > iputils--size-s1400.out
# payloads under 16 bytes carry no timestamp: replies without time=
p -c 3 -i 0.2 -s 8 127.0.0.1                          > iputils--size-s8-no-time.out
p -c 4 -i 0.2 -D -O -s 100 -p abcd 127.0.0.1          > iputils--O-D-p-s.out
p -6 -c 4 -i 0.2 ::1                                  > iputils--ping6-loopback.out
p -6 -c 3 -i 0.2 -D -O ::1                            > iputils--ping6-O-D.out

# a neighbour that never answers ARP: veth pair, the far end up but without an address;
# the kernel reports "Destination Host Unreachable" for the probes it could not send
cleanup
ip netns add "$NS-a"
ip -n "$NS-a" link add va type veth peer name vb
ip -n "$NS-a" addr add "10.$NET.0.1/24" dev va
ip -n "$NS-a" link set va up
ip -n "$NS-a" link set vb up
ip -n "$NS-a" link set lo up
ip netns exec "$NS-a" ping -c 6 -i 0.5 -w 5 "10.$NET.0.2" > iputils--unreachable-netns.out || true
# a peer that stops answering: two namespaces over a veth pair; after ~1 s the peer sets
# icmp_echo_ignore_all, so -O reports each missing answer; the last probe is never
# reported (lost, only counted in "transmitted")
ip netns add "$NS-b"
ip -n "$NS-a" link del va
ip -n "$NS-a" link add va type veth peer name vb netns "$NS-b"
ip -n "$NS-a" addr add "10.$NET.1.1/24" dev va
ip -n "$NS-b" addr add "10.$NET.1.2/24" dev vb
ip -n "$NS-a" link set va up
ip -n "$NS-b" link set vb up
ip netns exec "$NS-a" ping -c 8 -i 0.25 -W 1 -O -D "10.$NET.1.2" > iputils--no-answer-O-netns.out &
PING_PID=$!
sleep 1.1
ip netns exec "$NS-b" sysctl -qw net.ipv4.icmp_echo_ignore_all=1
wait "$PING_PID" || true
cleanup

busybox ping -c 4 127.0.0.1                          > busybox--loopback.out || true
busybox ping -c 3 -s 1000 127.0.0.1                  > busybox--size-s1000.out || true
busybox ping -6 -c 3 ::1                             > busybox--ping6-loopback.out || true

# a run cut off mid-line (the writer died): the first 70 % of the -D recording
head -c $(( $(wc -c < iputils--timestamps-D.out) * 70 / 100 )) iputils--timestamps-D.out \
    > iputils--truncated-D.out
# two runs appended to one file: thruput reads one run per file and names the second header
cat iputils--loopback-c5.out iputils--ping6-loopback.out > iputils--two-runs.out
# empty input, and ping's own error output without any run (no format may claim it)
: > empty--empty.out
ping -c 1 -I thruput-no-such-if 127.0.0.1 > not-a-run--no-such-device.out 2>&1 || true
fi

if [ "${1:-}" != "--no-expected" ]; then
cd "$ROOT"
"$PY" - <<'PYEOF'
from pathlib import Path
from tests.test_formats import write_expected

VALUES = ("seq", "rtt", "status", "line", "ttl", "size", "timestamp")
for sample in sorted(Path("tests/data/ping").iterdir()):
    if sample.name in ("record.sh", "README.md") or sample.name.endswith(".expected.json"):
        continue
    read_as = "ping" if sample.name.startswith("empty--") else None
    out = write_expected(sample, read_as=read_as, values=() if "two-runs" in sample.name else VALUES)
    print(sample.name, out["format"], out["summary"], [e["line"] for e in out["errors"]])
PYEOF
fi
