#!/usr/bin/env bash
# Record Linux traceroute (Debian's traceroute 2.1.2, apt-get install traceroute) through
# the namespaces of record-netns.sh, run as root: a route of three hops with and without -n, IPv6,
# four probes a hop, the !N, !H and !X annotations, a route into a blackhole (* * *), one
# cut off (head), an empty file, and mtr's text report (a route, but not traceroute's). Usage: sudo bash tests/data/traceroute/record.sh
set -euo pipefail
cd "$(dirname "$0")"
source ./record-netns.sh
trap netns_down EXIT
netns_up
a() { ip netns exec tph5-a "$@" || true; }     # traceroute exits 1 on !N/!H/!X: still a log
v=$(traceroute --version 2>&1 | sed -n 's/.*version \([0-9.]*\).*/\1/p')

a traceroute -n 10.77.3.2                > "linux-$v--n.txt"
a traceroute 10.77.3.2                   > "linux-$v--names.txt"
a traceroute -n -q 4 10.77.3.2           > "linux-$v--n-q4.txt"
a traceroute -6 -n fd77:3::2             > "linux-$v--ipv6-n.txt"
a traceroute -6 fd77:3::2                > "linux-$v--ipv6-names.txt"
a traceroute -n 10.77.7.1                > "linux-$v--net-unreachable-N.txt"
a traceroute -n 10.77.8.1                > "linux-$v--host-unreachable-H.txt"
a traceroute -n 10.77.9.1                > "linux-$v--prohibited-X.txt"
a traceroute -n -m 5 -w 0.5 10.77.6.1    > "linux-$v--blackhole-stars.txt"
a traceroute -I -n 10.77.3.2             > "linux-$v--icmp-I.txt"
a mtr -r -n -c 2 -i 0.2 10.77.3.2       > "mtr-0.95-report--not-traceroute.txt"
head -n 3 "linux-$v--n.txt"              > "linux-$v--truncated.txt"
: > empty--empty.txt
