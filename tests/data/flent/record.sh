#!/usr/bin/env bash
# Re-record the flent fixtures of this folder on loopback (127.0.0.1) with the installed flent
# (Debian package flent; its "ping" test needs ping and irtt, both run here), then rewrite
# their .expected.json (review the diff by hand against flent's own summary before
# committing). flent's TCP tests need netperf, which Debian main does not ship: TCP streams
# are validated on the genuine files of ../shared/corpus/flent instead (tests only).
# Usage: bash tests/data/flent/record.sh [--no-expected | --expected-only]
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
PY=${PY:-$ROOT/.venv/bin/python}

if [ "${1:-}" != "--expected-only" ]; then
V=$(flent --version 2>&1 | sed -En 's/^Flent v([0-9]+(\.[0-9]+)*).*/\1/p')   # "2.1.1"
TMP=$(mktemp -d)
irtt server -b 127.0.0.1:2112 >/dev/null 2>&1 &    # irtt's default port, which flent's runner uses
IRTT=$!
trap 'kill "$IRTT" 2>/dev/null || true; rm -rf "$TMP"' EXIT
sleep 0.5
flent ping -H 127.0.0.1 -l 3 -D "$TMP" >/dev/null 2>&1
mv "$TMP"/ping-*.flent.gz "$V--ping-loopback.flent.gz"
# a file cut off mid-way: the decompressed JSON up to the middle of its second results series
"$PY" - "$V--ping-loopback.flent.gz" "$V--truncated-ping.flent" <<'PYEOF'
import gzip, sys
text = gzip.decompress(open(sys.argv[1], "rb").read()).decode()
results = text.index('"results"')
second = text.index('"Ping (ms) UDP": [', results)
open(sys.argv[2], "w").write(text[: second + 200])
PYEOF
# empty input, and irtt's own gzip JSON output, which no format may claim
: > empty--empty.flent
irtt client -q -d 1s -i 200ms -o "$TMP/irtt.json.gz" 127.0.0.1:2112 >/dev/null 2>&1
mv "$TMP/irtt.json.gz" not-flent--irtt.json.gz
fi
[ "${1:-}" = "--no-expected" ] && exit 0

cd "$ROOT"
"$PY" - <<'PYEOF'
import glob
from tests.test_formats import write_expected
d = "tests/data/flent/"
for sample in sorted(glob.glob(d + "*--ping-loopback.flent.gz") + glob.glob(d + "*--truncated-ping.flent")):
    write_expected(sample, values=["throughput", "streams", "duration", "interval_start", "flent_ping",
                                   "flent_ping_raw_rtt"])
write_expected(d + "empty--empty.flent", read_as="flent")
write_expected(d + "not-flent--irtt.json.gz")
PYEOF
