#!/bin/sh
# Re-create the udpmon_bw samples from the UDPmon corpus (../shared/corpus/udpmon, recorded
# for this project between two network namespaces; the one corpus folder that may be copied).
# UDPmon itself is not installed here, so variants are derived from those files (README.md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
corpus=${CORPUS:-$root/../shared/corpus/udpmon}
cd "$here"
cp "$corpus/bw_mon-p1000.txt" x--p1000-w0-40.txt
cp "$corpus/bw_mon-p200.txt" x--p200-w0-40.txt
cp "$corpus/bw_mon-p1400.txt" x--p1400-w0-40.txt
cp "$corpus/bw_mon-quiet-p1472.txt" quiet--p1472.txt
: > empty--nothing.txt
"$root/.venv/bin/python" - "$corpus" <<'PY'
import sys
from pathlib import Path
corpus = Path(sys.argv[1])
x = (corpus / "bw_mon-p1000.txt").read_text()
lines = x.split("\n")
# plain: the same run as udpmon_bw_mon prints it without -x: the 12 plain columns only
# (column layout from udpmon_bw_mon.c's printf calls), command line without -x.
PLAIN = [0, 1, 5, 7, 8, 9, 10, 11, 12, 13, 16, 17]
out = []
for line in lines:
    if "Command line:" in line:
        line = line.replace(" -x ", " ")
    if line.lstrip().startswith("pkt len;") or (line[:2] == " 1" and ";" in line):
        cells = line.split(";")
        line = ";".join(cells[i] for i in PLAIN) + ";"
    out.append(line)
Path("plain--p1000-derived.txt").write_text("\n".join(out))
# truncated: the -x file cut in the middle of its 13th row (a run stopped mid-print)
rows_end = x.index("\n", x.index(" 1000; 2000; 0; 0; 16.71;")) 
Path("truncated--p1000-cut-in-row.txt").write_text(x[: rows_end - 300])
# bad: a row that lost its columns in the middle of the file must be an error, not dropped
bad = lines[:14] + [" 1000; 2000; 0; 0; 16.7435;  2"] + lines[15:17]
Path("bad--short-row.txt").write_text("\n".join(bad) + "\n")
# must not match: the udpmon_req latency scan belongs to udpmon_req
Path("notmine--udpmon-req-scan.txt").write_text((corpus / "req-latency-scan.txt").read_text())
PY
