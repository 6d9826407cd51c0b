"""``thruput inspect`` as a user runs it: JSON shape, the readable table, exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys

from .conftest import DATA

GOOD = DATA / "ping" / "iputils--loopback-c5.out"
BAD = DATA / "ping" / "iputils--two-runs.out"


def thruput(*args):
    return subprocess.run([sys.executable, "-m", "thruput.cli", *map(str, args)],
                          capture_output=True, text=True)


def test_json_report_of_a_good_file():
    done = thruput("inspect", "--json", GOOD)
    assert done.returncode == 0 and done.stderr == ""
    [report] = json.loads(done.stdout)
    assert set(report) == {"path", "format", "kind", "summary", "lines", "errors"}
    assert (report["format"], report["kind"], report["errors"]) == ("ping", "rtt", [])
    assert set(report["summary"]) == {"sent", "received", "duplicates", "loss_fraction", "rtt_ms",
                                      "rtt_source", "rtt_ms_probes"}
    assert set(report["summary"]["rtt_ms"]) == {"min", "avg", "max", "mdev", "median", "p10", "p90"}
    lines = report["lines"]
    assert lines["parsed"] + lines["skipped"] == lines["total"]
    assert sum(lines["skipped_reasons"].values()) == lines["skipped"]


def test_a_failing_file_exits_1_and_the_others_are_still_reported():
    done = thruput("inspect", "--json", BAD, GOOD)
    assert done.returncode == 1
    bad, good = json.loads(done.stdout)
    assert bad["errors"] and bad["errors"][0]["line"] is not None and good["errors"] == []
    [message] = done.stderr.strip().splitlines()
    assert message.startswith(f"thruput: {BAD}:{bad['errors'][0]['line']}: ")


def test_readable_table_and_usage_errors():
    done = thruput("inspect", GOOD)
    assert done.returncode == 0 and "ping (rtt)" in done.stdout and "sent" in done.stdout
    assert thruput("inspect").returncode == 2
    assert thruput("inspect", "--format", "no-such-format", GOOD).returncode == 2
