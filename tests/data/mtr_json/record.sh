#!/usr/bin/env bash
# Record mtr's report JSON (Debian's mtr-tiny 0.95: mtr --json) through the namespaces of
# ../traceroute/record-netns.sh, run as root: a route of three hops (numeric and with names, IPv6)
# and one into r1's "unreachable" route. Usage: sudo bash tests/data/mtr_json/record.sh
set -euo pipefail
cd "$(dirname "$0")"
source ../traceroute/record-netns.sh
trap netns_down EXIT
netns_up
a() { ip netns exec tph5-a "$@" || true; }
v=$(mtr --version | sed -n 's/^mtr \([0-9.]*\).*/\1/p')
a mtr --json -n -c 3 -i 0.2 10.77.3.2      > "$v--n.json"
a mtr --json -c 3 -i 0.2 10.77.3.2         > "$v--names.json"
a mtr --json -6 -n -c 3 -i 0.2 fd77:3::2   > "$v--ipv6-n.json"
a mtr --json -n -c 3 -i 0.2 -m 4 10.77.6.1 > "$v--blackhole.json"
head -c 300 "$v--n.json"                   > "$v--truncated.json"
: > empty--empty.json
