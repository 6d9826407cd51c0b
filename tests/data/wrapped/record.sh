#!/usr/bin/env bash
# Record logs written through timestamping wrappers, by running the tools on loopback
# through the real wrapper: moreutils ts (apt-get install moreutils) in each of its forms
# that thruput reads, and a shell wrapper that adds "Start time:"/"End time:" epoch-ms
# lines and prefixes "[%Y-%m-%d %H:%M:%.S]" the way the NUWiNS starlink-measurement
# scripts do (see ../../../docs/ingest.md). Times are those of the recording.
# The logs go into recorded/ (one level down, so that tests/test_formats.py, whose golden
# files are for bare logs, does not take them for samples; tests/test_prefix.py reads them).
# Usage: bash tests/data/wrapped/record.sh
set -euo pipefail
cd "$(dirname "$0")/recorded"
command -v ts >/dev/null || { echo "record.sh: needs ts (apt-get install moreutils)" >&2; exit 1; }

p() { ping "$@" || true; }               # ping exits 1 when replies are missing: still a log
ms() { date +%s%3N; }

# <tool>--<wrapper style>.out
p -c 4 -i 0.2 127.0.0.1       | ts '[%Y-%m-%d %H:%M:%.S]'  > ping--bracket-datetime.out
p -c 4 -i 0.2 127.0.0.1       | ts '%Y-%m-%dT%H:%M:%.S'    > ping--iso-datetime.out
p -c 4 -i 0.2 127.0.0.1       | ts                         > ping--syslog.out
p -c 4 -i 0.2 127.0.0.1       | ts '%.s'                   > ping--epoch.out
p -c 4 -i 0.2 127.0.0.1       | ts '[%.s]'                 > ping--bracket-epoch.out
# ping -D under an epoch wrapper: ping's own time wins, the wrapper's is kept beside it
p -c 4 -i 0.2 -D 127.0.0.1    | ts '[%.s]'                 > ping--D-bracket-epoch.out

# the starlink-measurement shape: Start/End time lines around a prefixed log
{ echo "Start time: $(ms)"; p -c 4 -i 0.2 127.0.0.1 | ts '[%Y-%m-%d %H:%M:%.S]'; echo "End time: $(ms)"; } \
    > ping--start-end-bracket-datetime.out

iperf3 -s -1 -p 5231 >/dev/null 2>&1 &
server=$!
sleep 0.5
{ echo "Start time: $(ms)"; iperf3 -c 127.0.0.1 -p 5231 -t 2 -i 1 | ts '[%Y-%m-%d %H:%M:%.S]'; echo "End time: $(ms)"; } \
    > iperf3_text--start-end-bracket-datetime.out
wait "$server" || true

iperf -s -p 5232 >/dev/null 2>&1 &
server=$!
sleep 0.5
iperf -c 127.0.0.1 -p 5232 -t 2 -i 1 | ts '%Y-%m-%dT%H:%M:%.S' > iperf2--iso-datetime.out
kill "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
