#!/usr/bin/env bash
# Record the design campaign data/raw/netns-cc-lossy with `thruput record`: congestion
# control (reno, cubic, bbr) x socket buffer (iperf3 -w 128 KiB, 1 MiB) x 3 repeats of 4 s
# iperf3 -J runs over a long, lossy path between two network namespaces.
#
#   sudo tools/record-design-cc.sh [NAME]        (default netns-cc-lossy; about 2 minutes)
#
# The path is tools/delayline.py (netem is not available on the machines thruput is
# measured on): namespaces $NS-a (10.79.55.1) and $NS-b (10.79.55.2) joined by two TUN
# devices and one Python process holding each packet 15 ms each way (RTT 30 ms) behind a
# 40 Mbit/s bottleneck with a 256 KiB drop-tail queue, dropping 1 % of the packets at
# random each way (seeded). `thruput record` runs the clients in $NS-a and starts one
# `iperf3 -s -1 -J` per run in $NS-b (--far netns:); the congestion control is the
# sender's, iperf3 -C (a namespace may set net.ipv4.tcp_congestion_control only to what the
# host's tcp_allowed_congestion_control lists, often not cubic; iperf3 run as root may pick
# any loaded one). Runs go in a random order from --seed. The campaign directory is removed first: a re-recording is a new campaign.
# NS (default ccl) names the namespaces; PY and THRUPUT the interpreter and thruput.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
THRUPUT=${THRUPUT:-.venv/bin/thruput}
NAME=${1:-netns-cc-lossy}
NS=${NS:-ccl}
SUBNET=10.79.55
DIR=data/raw/$NAME
DELAY=15ms RATE=40mbit QUEUE=256k LOSS=0.01 LOSS_SEED=55
who="thruput maintainers (recorded by tools/record-design-cc.sh)"

line=""
cleanup() {
    trap - EXIT INT TERM
    [ -n "$line" ] && kill "$line" 2>/dev/null && sleep 1
    "$PY" tools/delayline.py down "$NS" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

coproc DL { exec "$PY" tools/delayline.py up "$NS" --delay "$DELAY" --rate "$RATE" --queue "$QUEUE" \
    --subnet "$SUBNET" --loss "$LOSS" --seed "$LOSS_SEED"; }
line=$DL_PID
read -r info <&"${DL[0]}"
echo "delay line: $info" >&2

rm -rf "$DIR"
"$THRUPUT" record "$DIR" --to "$SUBNET.2" --netns "$NS-a" --far "netns:$NS-b" --port 5393 \
    --factor cc=reno,cubic,bbr --apply 'cc=iperf3 -C' --factor socket_buffer=131072,1048576 \
    --repeats 3 --duration 4 --seed 55 --no-progress \
    --title "Congestion control x socket buffer over a 30 ms path with 1 % random loss (one VM)" \
    --who "$who" \
    --description "A design of two factors: the sender's TCP congestion control (reno, cubic, bbr; iperf3 -C) and the socket buffer (iperf3 -w 128 KiB and 1 MiB), 3 repeats of 4 s iperf3 -J runs each (18 runs, in a random order), recorded with thruput record between two Linux network namespaces on ONE 2-core virtual machine (KVM guest). netem is not available there, so the path is tools/delayline.py: a TUN device in each namespace and one Python process between them that holds every packet 15 ms each way (RTT 30 ms) behind a 40 Mbit/s bottleneck with a 256 KiB drop-tail queue, and drops 1 % of the packets at random in each direction. Random loss is what separates the algorithms: a loss-based Reno is held near MSS / RTT x 1.22 / sqrt(p) (Mathis et al. 1997: about 5 Mbit/s here), and so is CUBIC, also loss-based, while BBR does not take random loss as congestion and runs near the bottleneck rate when its buffer allows. The 128 KiB buffer is below the bandwidth-delay product (150 KB), so it also caps BBR." \
    --notes "Measured on one virtual machine: both hosts are namespaces of the same 2-core KVM guest; no physical network is involved. The delay line is a Python process that shares the CPUs with iperf3; its timers are epoll's (a packet may leave up to ~1 ms late). Path: tools/delayline.py up $NS --delay $DELAY --rate $RATE --queue $QUEUE --loss $LOSS --seed $LOSS_SEED (each way). Recorded by tools/record-design-cc.sh."
# The path, which `thruput record` of a design does not describe, for the catalogue
# (campaign.yaml's description fields are the recorder's to keep, ours to fill)
"$PY" - "$DIR/campaign.yaml" "$DELAY" "$RATE" "$QUEUE" "$LOSS" <<'PYTHON'
import sys, yaml
path, delay, rate, queue, loss = sys.argv[1:]
text = open(path).read()
header, doc = text.split("\n", 1)[0], yaml.safe_load(text)
between = (f"two TUN devices joined by tools/delayline.py (a userspace delay line): {delay} one-way "
           f"delay each way, a {rate} bottleneck with a {queue} drop-tail queue and {float(loss):.0%} "
           "random loss in each direction")
at = list(doc).index("who") + 1
items = list(doc.items())
items.insert(at, ("path", {"source": "near", "destination": "far", "between": between,
                           "capacity_bps": float(rate.removesuffix("mbit")) * 1e6,
                           "rtt_ms": 2 * float(delay.removesuffix("ms"))}))
open(path, "w").write(header + "\n" + yaml.safe_dump(dict(items), sort_keys=False, width=100))
PYTHON
du -sh "$DIR"
