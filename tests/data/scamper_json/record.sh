#!/usr/bin/env bash
# Record scamper's JSON traceroute output (Debian's scamper 20211212: scamper -O json, one
# JSON object a line, as sc_warts2json writes them) through the namespaces of
# ../traceroute/record-netns.sh, run as root: UDP-paris and ICMP-paris traces of three hops, IPv6,
# one into r1's "unreachable" route, one into r2's blackhole, one cut off (head -c)
# and a file of two traces (refused: one route a file).
# Usage: sudo bash tests/data/scamper_json/record.sh
set -euo pipefail
cd "$(dirname "$0")"
source ../traceroute/record-netns.sh
trap netns_down EXIT
netns_up
a() { ip netns exec tph5-a "$@" || true; }
v=$( (scamper -v 2>&1 || true) | sed -n 's/^scamper version \([0-9]*\).*/\1/p')
a scamper -O json -c "trace -q 3" -i 10.77.3.2                  > "$v--udp-paris.json"
a scamper -O json -c "trace -P icmp-paris -q 3" -i 10.77.3.2    > "$v--icmp-paris.json"
a scamper -O json -c "trace -q 2" -i fd77:3::2                  > "$v--ipv6.json"
a scamper -O json -c "trace -q 2" -i 10.77.8.1                  > "$v--host-unreachable.json"
a scamper -O json -c "trace -q 2 -m 5 -w 1" -i 10.77.6.1      > "$v--blackhole.json"
a scamper -O json -c "trace -q 2" -i 10.77.3.2 10.77.8.1        > "$v--two-traces.json"
a scamper -O json -c "trace -P icmp-paris -q 2" -i fd77:3::2     > "$v--ipv6-icmp.json"
head -c 900 "$v--udp-paris.json"                                > "$v--truncated.json"
: > empty--empty.json
