# Three network namespaces a - r - b for record scripts (source this file; needs root):
# a and b are the end hosts, r forwards between them and shapes its egress towards each
# end with the tc qdisc given, so that drops happen on the path, where the end hosts' TCP
# cannot hold them back (a qdisc on a sender's own interface only slows it down).
#
#   router_up PREFIX SUBNET_A SUBNET_B QDISC...   e.g. router_up t-123 10.24.2 10.24.3 tbf rate 50mbit burst 4kb limit 6000
#   router_down PREFIX
#
# Namespaces PREFIX-a, PREFIX-r, PREFIX-b; addresses SUBNET_A.1 (a), SUBNET_A.254 and
# SUBNET_B.254 (r), SUBNET_B.2 (b), all /24, default routes via r. This kernel has no netem
# (see tools/netns.py), so the shaping is tbf: rate and a tail-drop queue.

router_up() {
    local ns=$1 sa=$2 sb=$3
    shift 3
    ip netns add "$ns-a"
    ip netns add "$ns-r"
    ip netns add "$ns-b"
    ip -n "$ns-a" link add va type veth peer name ra netns "$ns-r"
    ip -n "$ns-b" link add vb type veth peer name rb netns "$ns-r"
    ip -n "$ns-a" addr add "$sa.1/24" dev va
    ip -n "$ns-r" addr add "$sa.254/24" dev ra
    ip -n "$ns-r" addr add "$sb.254/24" dev rb
    ip -n "$ns-b" addr add "$sb.2/24" dev vb
    local x
    for x in a:va r:ra r:rb b:vb a:lo r:lo b:lo; do
        ip -n "$ns-${x%%:*}" link set "${x#*:}" up
    done
    ip -n "$ns-a" route add default via "$sa.254"
    ip -n "$ns-b" route add default via "$sb.254"
    ip netns exec "$ns-r" sysctl -qw net.ipv4.ip_forward=1
    for x in ra rb; do
        ip netns exec "$ns-r" tc qdisc add dev "$x" root "$@"
    done
}

router_down() {
    local x
    for x in a r b; do ip netns del "$1-$x" 2>/dev/null || true; done
}
