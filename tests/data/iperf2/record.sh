#!/usr/bin/env bash
# Re-record the iperf 2 text fixtures on loopback with the installed iperf (2.1.8).
# Usage: tests/data/iperf2/record.sh   (from anywhere; about 30 s). It then rebuilds the
# v2.0--* samples from iperf 2.0's documented format and rewrites every
# <sample>.expected.json: review that diff against the tool's own [SUM] lines.
# See README.md for what comes from where.
# Options: --no-record (only rebuild the documented samples and the expected values).
set -euo pipefail
RECORD=1; [ "${1:-}" = --no-record ] && RECORD=0
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
cd "$(dirname "$0")"
if [ "$RECORD" = 1 ]; then
IPERF=${IPERF:-iperf}
PORT=$(( 20000 + $$ % 20000 ))      # unique per run, so parallel recordings don't collide
HOST=127.0.0.1
TMP=$(mktemp -d)
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

start_server() {  # start_server <logfile> <args...>: a listener on $PORT, line-buffered log
  local log=$1; shift
  stdbuf -oL -eL "$IPERF" -s -p "$PORT" "$@" > "$log" 2>&1 &
  SERVER_PID=$!
  sleep 0.5
}
stop_server() { sleep 0.7; kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""; }
client() { "$IPERF" -c "$HOST" -p "$PORT" "$@"; }

# TCP: classic and enhanced clients; the enhanced server sees all three runs
start_server v2.1.8--tcp-server-e.txt -e -i 1
client -t 2 -i 1 > v2.1.8--tcp-client.txt
client -t 2 -i 1 -e > v2.1.8--tcp-client-e.txt
client -t 2 -i 1 -e -P 4 > v2.1.8--tcp-client-P4-e.txt
stop_server

# -w: Linux doubles the request (128 KByte granted for 64 KByte) and prints the WARNING;
# below the minimum it also warns on stderr (captured, as scripts usually do)
PORT=$((PORT + 1))
start_server "$TMP/server.txt"
client -t 1 -w 64K > v2.1.8--tcp-client-window-warning.txt
client -t 1 -w 1K > v2.1.8--tcp-client-small-window.txt 2>&1
# several runs in one file, one per -f unit, separated by '#' lines like the corpus file
: > v2.1.8--tcp-client-units.txt
for f in b k m g B K M; do
  client -t 0.5 -f "$f" >> v2.1.8--tcp-client-units.txt
  [ "$f" != M ] && printf '\n#\n\n' >> v2.1.8--tcp-client-units.txt
done
stop_server

# UDP: enhanced client with Server Report (single stream, intervals)
PORT=$((PORT + 1))
start_server "$TMP/server.txt" -u -e -i 1
client -u -e -b 10M -t 2 -i 1 > v2.1.8--udp-client-e.txt
stop_server

# UDP -P 2, classic: client (SUM, Server Reports) and the server's own log
PORT=$((PORT + 1))
start_server v2.1.8--udp-server.txt -u -i 0.5
client -u -P 2 -b 5M -t 1 -i 0.5 > v2.1.8--udp-client-P2.txt
stop_server

# UDP -P 2, enhanced client and server (2.1.8's -e UDP server crashes with -P and -i)
PORT=$((PORT + 1))
start_server v2.1.8--udp-server-P2-e.txt -u -e
client -u -e -P 2 -b 5M -t 1 > v2.1.8--udp-client-P2-e.txt
stop_server

# must not match: the help text; an error sample: a client whose server is not there
"$IPERF" -h > not-iperf2--help.txt 2>&1 || true
: > empty.txt
PORT=$((PORT + 1))
client -t 1 > not-iperf2--connect-failed.txt 2>&1 || true

# truncated: the -P 4 -e client log cut before its final [SUM] (as if killed)
head -n -3 v2.1.8--tcp-client-P4-e.txt > v2.1.8--tcp-client-P4-e-truncated.txt

date -u +"recorded %Y-%m-%dT%H:%M:%SZ with $("$IPERF" -v 2>&1 | head -1)" > "$TMP/stamp"
cat "$TMP/stamp"
fi

# ---- samples of versions that can't run here, built from the documented format ----
cd "$ROOT"
"$PY" - <<'PYEOF'
"""Build the iperf 2.0 classic samples (v2.0--*.txt) from iperf 2.0.5's documented format.

iperf 2.0.x can't be run here (Debian ships 2.1.8), so these samples are written by this
script with the printf formats of iperf 2.0.4/2.0.5's src/Locale.c (report_bw_format
"[%3d] %4.1f-%4.1f sec  %ss  %ss/sec", the jitter/loss and [SUM] variants, the banners)
and the number formatting of its byte_snprintf (adaptive units, 3 significant digits:
"%4.2f" below 9.995, "%4.1f" below 99.95, else "%4.0f"). The byte counts are invented
but consistent: every rate is bytes * 8 / seconds, every [SUM] the sum of its streams.
Addresses are from the documentation range 192.0.2.0/24. Run: python build_classic.py
"""

from pathlib import Path

HERE = Path("tests/data/iperf2")
SEP = "-" * 60


def fmt_num(x):
    if x < 9.995:
        return f"{x:4.2f}"
    if x < 99.95:
        return f"{x:4.1f}"
    return f"{x:4.0f}"


def adaptive(value, step, labels):
    k = 0
    while value >= step and k < len(labels) - 1:
        value /= step
        k += 1
    return f"{fmt_num(value)} {labels[k]}"


def transfer(nbytes):   # 'A': bytes, binary steps
    return adaptive(nbytes, 1024.0, ["Byte", "KByte", "MByte", "GByte"]) + "s"


def rate(nbytes, seconds):   # 'a': bits, decimal steps
    return adaptive(nbytes * 8 / seconds, 1000.0, ["bit", "Kbit", "Mbit", "Gbit"]) + "s/sec"


def bw(sid, start, end, nbytes):
    return f"[{sid}] {start:4.1f}-{end:4.1f} sec  {transfer(nbytes)}  {rate(nbytes, end - start)}"


def tag(i):
    return f"{i:3d}" if isinstance(i, int) else i


def tcp_client_p2():
    per_second = {4: [58_982_400, 59_244_544, 58_720_256], 3: [58_589_184, 58_851_328, 59_113_472]}
    out = [SEP, "Client connecting to 192.0.2.10, TCP port 5001",
           "TCP window size: 85.0 KByte (default)", SEP,
           "[  4] local 192.0.2.20 port 50312 connected with 192.0.2.10 port 5001",
           "[  3] local 192.0.2.20 port 50311 connected with 192.0.2.10 port 5001",
           "[ ID] Interval       Transfer     Bandwidth"]
    for k in range(3):
        for sid in (4, 3):
            out.append(bw(tag(sid), k, k + 1, per_second[sid][k]))
        out.append(bw("SUM", k, k + 1, per_second[4][k] + per_second[3][k]))
    # finals: [SUM] printed between the streams' lines, as -P threads race for stdout
    out.append(bw(tag(4), 0, 3, sum(per_second[4])))
    out.append(bw("SUM", 0, 3, sum(per_second[4]) + sum(per_second[3])))
    out.append(bw(tag(3), 0, 3, sum(per_second[3])))
    return out


def udp_client():
    sent = 893
    nbytes = sent * 1470
    lost, ooo = 3, 1
    rx = (sent - lost) * 1470
    return [SEP, "Client connecting to 192.0.2.10, UDP port 5001",
            "Sending 1470 byte datagrams", "UDP buffer size:  208 KByte (default)", SEP,
            "[  3] local 192.0.2.20 port 41000 connected with 192.0.2.10 port 5001",
            "[ ID] Interval       Transfer     Bandwidth",
            bw("  3", 0, 10, nbytes),
            f"[  3] Sent {sent} datagrams",
            "[  3] Server Report:",
            bw("  3", 0, 10, rx) + f"  {0.032:5.3f} ms {lost:4d}/{sent:5d} ({100 * lost / sent:.2g}%)",
            f"[  3]  0.0-10.0 sec  {ooo} datagrams received out-of-order"]


def udp_server_p2():
    streams = {3: (447, 0, 0.021), 4: (446, 2, 0.045)}
    out = [SEP, "Server listening on UDP port 5001", "Receiving 1470 byte datagrams",
           "UDP buffer size:  208 KByte (default)", SEP,
           "[  3] local 192.0.2.10 port 5001 connected with 192.0.2.20 port 41000",
           "[  4] local 192.0.2.10 port 5001 connected with 192.0.2.20 port 41001",
           "[ ID] Interval       Transfer     Bandwidth       Jitter   Lost/Total Datagrams"]
    for sid, (total, lost, jitter) in streams.items():
        out.append(bw(tag(sid), 0, 5, (total - lost) * 1470)
                   + f"  {jitter:5.3f} ms {lost:4d}/{total:5d} ({100 * lost / total:.2g}%)")
    total = sum(t for t, _, _ in streams.values())
    lost = sum(x for _, x, _ in streams.values())
    out.append(bw("SUM", 0, 5, (total - lost) * 1470)
               + f"  {0.045:5.3f} ms {lost:4d}/{total:5d} ({100 * lost / total:.2g}%)")
    return out


if __name__ == "__main__":
    for name, lines in (("v2.0--tcp-client-P2.txt", tcp_client_p2()),
                        ("v2.0--udp-client.txt", udp_client()),
                        ("v2.0--udp-server-P2.txt", udp_server_p2())):
        (HERE / name).write_text("\n".join(lines) + "\n")
        print(name)
PYEOF

# ---- expected values (review the diff against the tool's own summary lines!) ----
"$PY" - <<'PYEOF'
"""Write <sample>.expected.json for every iperf 2 text sample (this script runs from the
repo root; ``record.sh --no-record`` skips the recording). Review the diff by hand against
the tool's own [SUM] / Server Report lines before committing (tests/test_format_iperf2.py
pins the hand-checked numbers)."""

import sys
from pathlib import Path

sys.path.insert(0, ".")  # the repo root, for tests.*

from tests.test_formats import write_expected  # noqa: E402

HERE = Path("tests/data/iperf2")
VALUES = ("throughput", "throughput_sender", "throughput_receiver", "bytes", "duration",
          "retransmits", "packets", "packets_lost", "out_of_order", "jitter",
          "stream_throughput", "interval_start", "interval_end", "interval_throughput", "line")
READ_AS = {"empty.txt": "iperf2"}

for sample in sorted(HERE.glob("*.txt")):
    out = write_expected(sample, read_as=READ_AS.get(sample.name), values=VALUES)
    print(sample.name, out["format"], out["errors"][:1] or out["summary"].get("throughput_bps"))

# error messages name the file: keep only the part after the path, so CI paths don't matter
import json  # noqa: E402

for expected in HERE.glob("*.expected.json"):
    data = json.loads(expected.read_text())
    for error in data.get("errors", []):
        message = error["message"]
        if message.startswith("/"):
            message = message.split(": ", 1)[-1]
        error["message"] = message.split(";")[0]  # not the list of formats: it grows
    expected.write_text(json.dumps(data, indent=1) + "\n")
PYEOF
