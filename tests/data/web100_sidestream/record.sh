#!/bin/sh
# Re-create the web100 samples (snaplog, sidestream, dump) from their documented formats:
# web100 needs a kernel patch that no longer runs anywhere, and the corpus files may not be
# copied. The generator is tests/test_format_web100_samples.py (see README.md).
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
exec .venv/bin/python -m tests.test_format_web100_samples
