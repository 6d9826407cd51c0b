#!/bin/sh
# Records the pile of tests/test_design_import.py: real iperf3 -J runs on loopback,
# congestion control (-C reno | cubic) x socket buffer (-w 64K | 1M) x 2 repeats, 1 s each,
# one ping beside them (-s 56) and one file that is not a log (notes.csv).
# Run from this folder: sh record.sh
set -eu
PORT=5263
for cc in reno cubic; do
  for buf in 65536 1048576; do
    for r in 0 1; do
      iperf3 -s -p $PORT -1 >/dev/null 2>&1 &
      server=$!
      sleep 0.3
      iperf3 -c 127.0.0.1 -p $PORT -J -t 1 -i 0.5 -C $cc -w $buf > "cc-${cc}_buf-${buf}_r${r}.json"
      wait $server || true
    done
  done
done
ping -D -c 5 -i 0.2 -s 56 127.0.0.1 > ping_size-56.txt
printf 'run,note\ncc-reno_buf-65536_r0,first run\n' > notes.csv
