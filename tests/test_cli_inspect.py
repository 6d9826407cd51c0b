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


# --- issue 10: batches of messy archives --------------------------------------------------------

def _archive(tmp_path):
    """A small messy archive: a good log, a truncated one, an empty file and a log with a
    shell prompt left in it, in nested directories (all cut from recorded fixtures)."""
    from .damage import head, sample
    full = sample("iperf2", "v2.1.8--tcp-client-P4-e.txt")
    (tmp_path / "b" / "c").mkdir(parents=True)
    (tmp_path / "a-good.txt").write_text(sample("iperf2", "v2.1.8--tcp-client.txt"))
    (tmp_path / "b" / "cut.txt").write_text(head(full, 16))
    (tmp_path / "b" / "c" / "empty.txt").write_text("")
    (tmp_path / "b" / "prompt.txt").write_text(full + "user@host:~$ exit\n")
    return tmp_path


def test_a_directory_is_walked_in_sorted_order_and_each_error_said_once(tmp_path):
    root = _archive(tmp_path)
    done = thruput("inspect", "--json", root)
    assert done.returncode == 1
    reports = json.loads(done.stdout)
    assert [r["path"] for r in reports] == [
        str(root / p) for p in ("a-good.txt", "b/c/empty.txt", "b/cut.txt", "b/prompt.txt")]
    assert reports[1]["errors"] == [{"line": None, "message": "empty file"}]
    assert reports[3]["errors"] == [{"line": 28, "message": "unrecognised line: 'user@host:~$ exit'"}]
    assert reports[2]["truncation"] == "run 0: no final report for stream(s) [1, 2, 3, 4] (cut after 1 interval(s))"
    assert done.stderr.splitlines() == [
        f"thruput: {root}/b/c/empty.txt: empty file",
        f"thruput: warning: {root}/b/cut.txt: truncated: run 0: no final report for stream(s) "
        "[1, 2, 3, 4] (cut after 1 interval(s))",
        f"thruput: {root}/b/prompt.txt:28: unrecognised line: 'user@host:~$ exit'"]


def test_the_readable_table_keeps_errors_off_stdout(tmp_path):
    root = _archive(tmp_path)
    done = thruput("inspect", root)
    assert done.returncode == 1
    assert "empty file" not in done.stdout and "unrecognised" not in done.stdout
    assert done.stdout.count(": iperf2 (throughput)") == 2
    assert "  truncated: run 0: no final report" in done.stdout


def test_lenient_counts_unrecognised_lines_instead_of_failing(tmp_path):
    root = _archive(tmp_path)
    (root / "b" / "c" / "empty.txt").unlink()
    done = thruput("inspect", "--json", "--lenient", root)
    assert done.returncode == 0
    prompt = json.loads(done.stdout)[-1]
    assert prompt["errors"] == [] and prompt["lines"]["skipped_reasons"]["unrecognised line"] == 1
    assert prompt["summary"]["throughput_bps"] == 51.9e9


def test_inconsistent_summary_is_warned_about(tmp_path):
    from .damage import replace, sample
    path = tmp_path / "sum.txt"
    path.write_text(replace(sample("iperf2", "v2.1.8--tcp-client-P4-e.txt"), 26, "12.1 GBytes", "121 GBytes"))
    done = thruput("inspect", "--json", path)
    assert done.returncode == 0
    [report] = json.loads(done.stdout)
    assert [c["check"] for c in report["consistency"]] == [
        "run 0: bytes: [SUM] final vs the streams' finals", "run 0: [SUM] final: bit/s vs bytes x 8 / seconds",
        "run 0: bytes: [SUM] final vs the sum of its intervals"]
    assert done.stderr.startswith(f"thruput: warning: {path}: the tool's summary disagrees with the data: "
                                  "run 0: bytes: [SUM] final vs the streams' finals: tool 1.29923e+11, data 1.30352e+10 "
                                  "(3 significant digits printed)\n")


def test_a_missing_path_fails_alone(tmp_path):
    done = thruput("inspect", tmp_path / "nope.txt", GOOD)
    assert done.returncode == 1
    assert done.stderr == f"thruput: {tmp_path / 'nope.txt'}: No such file or directory\n"
    assert "ping (rtt)" in done.stdout


def test_read_lenient_is_the_same_leniency(tmp_path):
    """``thruput.read(path, lenient=True)``: what ``inspect --lenient`` does, in Python."""
    import thruput as api

    from .damage import sample
    path = tmp_path / "prompt.txt"
    path.write_text(sample("iperf2", "v2.1.8--tcp-client.txt") + "user@host:~$ exit\n")
    ds = api.read(path, lenient=True)
    assert json.loads(ds.attrs["skipped_reasons"])["unrecognised line"] == 1
    assert float(ds.throughput[0]) == 23.7e9
    try:
        api.read(path)
    except api.errors.ParseError as exc:
        assert exc.errors == [(10, "unrecognised line: 'user@host:~$ exit'")]
    else:
        raise AssertionError("strict read accepted an unrecognised line")


# --- issue 39: a mixed folder, as a user's project holds it --------------------------------------

def test_a_mixed_folder_skips_non_logs_in_one_line_and_walks_no_venv(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "ping.out").write_text(GOOD.read_text())
    (tmp_path / "README.md").write_text("# my measurements\n\nSome notes.\n")
    (tmp_path / "plot.py").write_text("import matplotlib\n")
    for hidden in (".venv/lib", ".git", "node_modules/x", "src/__pycache__", "env/lib"):
        (tmp_path / hidden).mkdir(parents=True)
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for inside in (".venv/lib/ping.out", ".git/ping.out", "node_modules/x/ping.out",
                   "src/__pycache__/ping.out", "env/lib/ping.out"):
        (tmp_path / inside).write_text(GOOD.read_text())
    done = thruput("inspect", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("ping (rtt)") == 1 and str(tmp_path / "logs" / "ping.out") in done.stdout
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("thruput: skipped 2 files that are not a log of any format (")
    assert "known formats" not in done.stderr.lower() and "iperf3" not in done.stderr
    # JSON lists the logs only
    assert [r["path"] for r in json.loads(thruput("inspect", "--json", tmp_path).stdout)] == [
        str(tmp_path / "logs" / "ping.out")]
    # a file named on the command line is read, and fails when it is not a log
    named = thruput("inspect", tmp_path / "README.md")
    assert named.returncode == 1 and named.stderr.startswith(f"thruput: {tmp_path / 'README.md'}")
    # a folder with no log at all
    (tmp_path / "logs" / "ping.out").unlink()
    none = thruput("inspect", tmp_path)
    assert none.returncode == 1 and f"thruput: no log found in {tmp_path}" in none.stderr
