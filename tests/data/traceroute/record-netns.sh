#!/usr/bin/env bash
# A small routed network in namespaces (prefix tph5-), shared by the record.sh scripts of
# traceroute, mtr_json and scamper_json:
#
#   tph5-a 10.77.1.2 --- 10.77.1.1 tph5-r1 10.77.2.1 --- 10.77.2.2 tph5-r2 10.77.3.1 --- 10.77.3.2 tph5-b
#          fd77:1::2      fd77:1::1        fd77:2::1      fd77:2::2        fd77:3::1      fd77:3::2
#
# r1 has no route to 10.77.7.0/24 (ICMP net unreachable: traceroute !N), an "unreachable"
# route to 10.77.8.0/24 (host unreachable: !H) and a "prohibit" one to 10.77.9.0/24
# (administratively prohibited: !X); r2 drops 10.77.6.0/24 silently (blackhole: * * *).
# Names for traceroute without -n come from /etc/netns/tph5-a/hosts (ip netns exec
# mounts it over /etc/hosts). Usage: source record-netns.sh; netns_up; ...; netns_down
NS="tph5-a tph5-r1 tph5-r2 tph5-b"

netns_down() {
    for n in $NS; do ip netns del "$n" 2>/dev/null || true; done
    rm -rf /etc/netns/tph5-a
}

link() {   # link NS1 IF1 ADDR1 ADDR6_1 NS2 IF2 ADDR2 ADDR6_2
    ip link add "$2" netns "$1" type veth peer name "$6" netns "$5"
    ip -n "$1" addr add "$3/24" dev "$2"; ip -n "$1" -6 addr add "$4/64" dev "$2" nodad
    ip -n "$5" addr add "$7/24" dev "$6"; ip -n "$5" -6 addr add "$8/64" dev "$6" nodad
    ip -n "$1" link set "$2" up; ip -n "$5" link set "$6" up
}

netns_up() {
    netns_down
    for n in $NS; do ip netns add "$n"; ip -n "$n" link set lo up; done
    link tph5-a a0 10.77.1.2 fd77:1::2 tph5-r1 r1a 10.77.1.1 fd77:1::1
    link tph5-r1 r1b 10.77.2.1 fd77:2::1 tph5-r2 r2a 10.77.2.2 fd77:2::2
    link tph5-r2 r2b 10.77.3.1 fd77:3::1 tph5-b b0 10.77.3.2 fd77:3::2
    for r in tph5-r1 tph5-r2; do
        ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
        ip netns exec "$r" sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0
    done
    ip -n tph5-a route add default via 10.77.1.1; ip -n tph5-a -6 route add default via fd77:1::1
    ip -n tph5-b route add default via 10.77.3.1; ip -n tph5-b -6 route add default via fd77:3::1
    ip -n tph5-r1 route add 10.77.3.0/24 via 10.77.2.2; ip -n tph5-r1 route add 10.77.6.0/24 via 10.77.2.2
    ip -n tph5-r1 -6 route add fd77:3::/64 via fd77:2::2
    ip -n tph5-r1 route add unreachable 10.77.8.0/24
    ip -n tph5-r1 route add prohibit 10.77.9.0/24
    ip -n tph5-r2 route add default via 10.77.2.1; ip -n tph5-r2 -6 route add default via fd77:2::1
    ip -n tph5-r2 route add blackhole 10.77.6.0/24
    mkdir -p /etc/netns/tph5-a
    printf '%s\n' "127.0.0.1 localhost" "10.77.1.1 r1.tph5.test" "10.77.2.2 r2.tph5.test" \
        "10.77.3.2 b.tph5.test" "fd77:1::1 r1.tph5.test" "fd77:2::2 r2.tph5.test" "fd77:3::2 b.tph5.test" \
        > /etc/netns/tph5-a/hosts
}
