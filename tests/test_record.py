"""``thruput record`` on loopback: the plan, the files, runs.csv, campaign.yaml, resume,
interruption and failures, with real iperf3/iperf/ping against a server on 127.0.0.1."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import jsonschema
import pytest
import yaml

from thruput.campaign.check import check_campaign
from thruput.campaign.importer import new_campaign
from thruput.record import Plan, RecordError, Target, parse_counts, parse_sizes, record, run_cell
from thruput.record.hostinfo import far_host_from_iperf3, local_host
from thruput.record.manifest import COLUMNS, complete_runs, read_rows
from thruput.record.plan import Cell

from .conftest import ROOT

SCHEMA = ROOT / "src" / "thruput" / "schemas" / "campaign.schema.json"

needs_tools = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("iperf3", "iperf", "ping")),
    reason="iperf3, iperf and ping are needed")


# -- the plan ----------------------------------------------------------------------------

def test_parse_sizes_expands_doubling_with_binary_suffixes():
    assert parse_sizes("4K,8K,...,4M") == [4096 * 2**i for i in range(11)]
    assert parse_sizes("8K,16K,...,1M") == [8192, 16384, 32768, 65536, 131072, 262144,
                                            524288, 1048576]
    assert parse_sizes("65536,1M") == [65536, 1048576]
    assert parse_sizes("1.5K") == [1536]


def test_parse_counts_expands_and_rejects_bad_lists():
    assert parse_counts("1,2,...,16") == [1, 2, 4, 8, 16]
    assert parse_counts("1,2,4,8,16") == [1, 2, 4, 8, 16]
    assert parse_counts("2,3,...,6") == [2, 3, 4, 5, 6]  # ratio not whole: the step repeats
    for bad in ("0,1", "4,2", "1,...,8", "1,2,...", "x", "1,1"):
        with pytest.raises(ValueError):
            parse_counts(bad)
    with pytest.raises(ValueError, match="bad size"):
        parse_sizes("8Q")


def test_plan_order_and_round_trip():
    plan = Plan([4096, 8192], [1, 2], repeats=2, duration_s=1, pause_s=1)
    assert [c.run for c in plan.cells()] == [
        "w4096-s1-r0", "w4096-s2-r0", "w8192-s1-r0", "w8192-s2-r0",
        "w4096-s1-r1", "w4096-s2-r1", "w8192-s1-r1", "w8192-s2-r1"]
    shuffled = Plan([4096, 8192], [1, 2], repeats=2, order="random", seed=7)
    again = Plan([4096, 8192], [1, 2], repeats=2, order="random", seed=7)
    assert [c.run for c in shuffled.cells()] == [c.run for c in again.cells()]
    assert sorted(c.run for c in shuffled.cells()) == sorted(c.run for c in plan.cells())
    assert Plan.from_dict(shuffled.to_dict()) == shuffled
    assert shuffled.to_dict()["seed"] == 7 and "seed" not in plan.to_dict()
    assert Plan([1], [1], pause_s=0).parts == (("iperf", ""), ("ping", "loaded"))
    for bad in (dict(duration_s=0.5), dict(pause_s=-1), dict(repeats=0), dict(tool="nc")):
        with pytest.raises(ValueError):
            Plan([1], [1], **bad)


# -- a real server on loopback -------------------------------------------------------------

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server(argv):
    port = _free_port()
    proc = subprocess.Popen([*argv, "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # wait until it listens
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    return proc, port


@pytest.fixture
def iperf3_server():
    """``iperf3 -s -J`` on a free loopback port; yields the port."""
    if not shutil.which("iperf3"):
        pytest.skip("iperf3 not installed")
    proc, port = _server(["iperf3", "-s", "-J"])
    yield port
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def iperf2_server():
    if not shutil.which("iperf"):
        pytest.skip("iperf not installed")
    proc, port = _server(["iperf", "-s"])
    yield port
    proc.terminate()
    proc.wait(10)


def _validate_yaml(campaign):
    with open(campaign / "campaign.yaml") as f:
        data = yaml.safe_load(f)
    jsonschema.validate(data, json.loads(SCHEMA.read_text()))
    return data


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ping_lines(path):
    return [line for line in path.read_text().splitlines() if "bytes from" in line]


@needs_tools
def test_record_loopback_writes_the_campaign_layout(tmp_path, iperf3_server):
    campaign = tmp_path / "lo-sweep"
    plan = Plan([65536, 262144], [1, 2], repeats=1, duration_s=1, pause_s=1)
    summary = record(campaign, plan, Target("127.0.0.1", iperf3_server), progress=False,
                     about={"title": "loopback test", "who": ["pytest"]})
    runs = ["w65536-s1-r0", "w65536-s2-r0", "w262144-s1-r0", "w262144-s2-r0"]
    assert summary.recorded == runs and summary.failed == {} and summary.complete

    with open(campaign / "runs.csv", newline="") as f:
        table = list(csv.reader(f))
    assert tuple(table[0]) == COLUMNS
    assert [(r[0], r[1], r[2], r[7]) for r in table[1:4]] == [
        ("w65536-s1-r0", "iperf", "runs/w65536-s1-r0.iperf3.json", ""),
        ("w65536-s1-r0", "ping", "runs/w65536-s1-r0.loaded.ping", "loaded"),
        ("w65536-s1-r0", "ping", "runs/w65536-s1-r0.unloaded.ping", "unloaded")]
    assert [r[0] for r in table[1:]] == [run for run in runs for _ in range(3)]
    assert [(r[4], r[5], r[6]) for r in table[1::3]] == [
        ("65536", "1", "0"), ("65536", "2", "0"), ("262144", "1", "0"), ("262144", "2", "0")]
    # every file listed exists and nothing else is in runs/ (no .part left)
    assert sorted(p.name for p in (campaign / "runs").iterdir()) == sorted(
        r[2].split("/")[1] for r in table[1:])
    # the sha256 of each file as recorded
    assert all(r[3] == hashlib.sha256((campaign / r[2]).read_bytes()).hexdigest() for r in table[1:])

    result = json.loads((campaign / "runs/w262144-s2-r0.iperf3.json").read_text())
    assert result["start"]["test_start"]["num_streams"] == 2
    assert result["start"]["test_start"]["duration"] == 1
    assert result["start"]["sock_bufsize"] == 262144
    assert result["start"]["connecting_to"] == {"host": "127.0.0.1", "port": iperf3_server}
    # ping alongside: every 0.2 s during the 1 s run; alone: 1 s after it (-w 1)
    loaded = _ping_lines(campaign / "runs/w262144-s2-r0.loaded.ping")
    unloaded = _ping_lines(campaign / "runs/w262144-s2-r0.unloaded.ping")
    assert loaded[0].startswith("[") and "icmp_seq=1 " in loaded[0]  # -D timestamps
    assert 4 <= len(loaded) <= 8 and 4 <= len(unloaded) <= 6
    start_loaded = table[10][8]
    start_unloaded = table[12][8]
    assert start_loaded < start_unloaded and start_loaded.endswith("Z")

    data = _validate_yaml(campaign)
    assert data["name"] == "lo-sweep" and data["kind"] == "tcp_sweep"
    assert data["title"] == "loopback test" and data["who"] == ["pytest"]
    assert data["plan"] == {"tool": "iperf3", "windows": [65536, 262144], "streams": [1, 2],
                            "repeats": 1, "duration_s": 1, "pause_s": 1,
                            "order": "sequential", "ping": {"interval_s": 0.2, "size_bytes": 56}}
    source, destination = data["path"]["source"], data["path"]["destination"]
    assert destination == "127.0.0.1" and source == socket.gethostname()
    here = data["hosts"][source]
    assert here["cpu_count"] == os.cpu_count() and here["nic"] == "lo (loopback)"
    assert here["kernel"] == os.uname().release
    assert here["tcp"]["rmem_max"] == int(open("/proc/sys/net/core/rmem_max").read())
    assert here["tcp"]["tcp_rmem"] == [int(x) for x in open("/proc/sys/net/ipv4/tcp_rmem").read().split()]
    far = data["hosts"][destination]
    assert far["kernel"] == os.uname().release and far["os"] == "Linux"  # from system_info
    assert far["tcp"]["congestion_control"] == open(
        "/proc/sys/net/ipv4/tcp_congestion_control").read().strip()
    assert data["tools"]["iperf3"] == data["tools"]["iperf3_server"] == result["start"][
        "version"].split()[1]
    assert data["dates"]["end"] >= data["dates"]["start"] and data["explained"] == []
    assert check_campaign(campaign) == []  # no error and no warning


@needs_tools
def test_record_into_a_campaign_new_template(tmp_path, iperf3_server):
    directory = new_campaign("tmpl", tmp_path, "tcp_sweep")
    summary = record(directory, Plan([65536], [1], repeats=1, duration_s=1, pause_s=1),
                     Target("127.0.0.1", iperf3_server), progress=False,
                     about={"title": "filled in", "description": "loopback, one VM"})
    assert summary.recorded == ["w65536-s1-r0"]
    data = _validate_yaml(directory)
    # the template's host keys are kept and filled with what was measured
    assert (data["path"]["source"], data["path"]["destination"]) == ("host-a", "host-b")
    assert sorted(data["hosts"]) == ["host-a", "host-b"]
    assert data["hosts"]["host-a"]["cpu_count"] == os.cpu_count()
    assert data["hosts"]["host-b"]["kernel"] == os.uname().release
    assert data["plan"]["windows"] == [65536] and data["plan"]["duration_s"] == 1
    assert data["who"] == ["TODO"]  # what people write is theirs
    # ... and check reminds them of it
    assert [(p.line, p.message, p.severity) for p in check_campaign(directory)] == [
        (10, "TODO left from the template: who: [TODO]", "warning")]


@needs_tools
def test_rerunning_skips_complete_runs_and_refuses_another_plan(tmp_path, iperf3_server):
    campaign = tmp_path / "resume"
    plan = Plan([65536], [1, 2], repeats=1, duration_s=1, pause_s=1)
    target = Target("127.0.0.1", iperf3_server)
    record(campaign, plan, target, progress=False)
    before = {p.name: _sha(p) for p in (campaign / "runs").iterdir()}
    rows_before = (campaign / "runs.csv").read_text()

    again = record(campaign, Plan([65536], [1, 2], repeats=1, duration_s=1, pause_s=1),
                   target, progress=False)
    assert (again.skipped, again.recorded, again.planned) == (2, [], 2)
    assert {p.name: _sha(p) for p in (campaign / "runs").iterdir()} == before
    assert (campaign / "runs.csv").read_text() == rows_before

    with pytest.raises(RecordError, match="differs from this one in repeats"):
        record(campaign, Plan([65536], [1, 2], repeats=2, duration_s=1, pause_s=1), target,
               progress=False)


@needs_tools
def test_resume_rerecords_a_run_with_missing_rows(tmp_path, iperf3_server):
    campaign = tmp_path / "partial"
    plan = Plan([65536], [1, 2], repeats=1, duration_s=1, pause_s=1)
    target = Target("127.0.0.1", iperf3_server)
    record(campaign, plan, target, progress=False)
    # as if killed between appending rows: the last run has only its iperf row
    lines = (campaign / "runs.csv").read_text().splitlines()
    (campaign / "runs.csv").write_text("\n".join(lines[:-2]) + "\n")
    (campaign / "runs" / "w65536-s2-r0.unloaded.ping.part").write_text("PING half")
    summary = record(campaign, Plan([65536], [1, 2], repeats=1, duration_s=1, pause_s=1),
                     target, progress=False)
    assert summary.skipped == 1 and summary.recorded == ["w65536-s2-r0"]
    rows = read_rows(campaign)
    assert [(r.run, r.role, r.phase) for r in rows] == [
        ("w65536-s1-r0", "iperf", ""), ("w65536-s1-r0", "ping", "loaded"),
        ("w65536-s1-r0", "ping", "unloaded"), ("w65536-s2-r0", "iperf", ""),
        ("w65536-s2-r0", "ping", "loaded"), ("w65536-s2-r0", "ping", "unloaded")]
    assert not list((campaign / "runs").glob("*.part"))


#: Run ``argv`` with SIGINT as in a terminal (default action, unblocked), set in a small
#: launcher that then execs it: not a ``preexec_fn``, which can deadlock between fork and
#: exec in a process with threads (a pytest worker).
SIGINT_AS_IN_A_TERMINAL = [sys.executable, "-c", "import os, signal, sys; "
                           "signal.signal(signal.SIGINT, signal.SIG_DFL); "
                           "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
                           "os.execvp(sys.argv[1], sys.argv[1:])"]


@needs_tools
def test_interrupted_recording_leaves_no_complete_looking_file_and_resumes(tmp_path, iperf3_server):
    campaign = tmp_path / "interrupted"
    # the thruput console script, as a user runs it
    argv = [sys.executable, "-c", "import sys; from thruput.cli import main; sys.exit(main())",
            "record", str(campaign), "--to", "127.0.0.1",
            "--port", str(iperf3_server), "--windows", "64K", "--streams", "1,2",
            "--repeats", "1", "--duration", "2", "--pause", "1", "--no-progress"]
    # as from a terminal: Ctrl-C delivered (a suite started in the background by a
    # non-interactive shell ignores SIGINT, and a child inherits that: it would then
    # record to the end)
    proc = subprocess.Popen([*SIGINT_AS_IN_A_TERMINAL, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    runs = campaign / "runs"
    deadline = time.monotonic() + 60
    # wait until the first run is in runs.csv and the second one is being written
    while time.monotonic() < deadline and proc.poll() is None:
        done = complete_runs(read_rows(campaign)) if (campaign / "runs.csv").exists() else set()
        if done == {"w65536-s1-r0"} and list(runs.glob("w65536-s2-r0*.part")):
            break
        time.sleep(0.05)
    else:
        pytest.fail("the recording never reached its second run")
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "re-run the same command to resume" in err
    rows = read_rows(campaign)
    assert {r.run for r in rows} == {"w65536-s1-r0"}
    assert sorted(p.name for p in runs.iterdir()) == [
        "w65536-s1-r0.iperf3.json", "w65536-s1-r0.loaded.ping", "w65536-s1-r0.unloaded.ping"]
    first = _sha(runs / "w65536-s1-r0.iperf3.json")
    data = _validate_yaml(campaign)
    assert data["dates"]["end"] is None  # unfinished

    resumed = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    assert "1 runs recorded, 1 already there, 0 failed, of 2 planned" in resumed.stdout
    assert complete_runs(read_rows(campaign)) == {"w65536-s1-r0", "w65536-s2-r0"}
    assert len(read_rows(campaign)) == 6
    assert _sha(runs / "w65536-s1-r0.iperf3.json") == first
    assert _validate_yaml(campaign)["dates"]["end"] is not None
    assert _validate_yaml(campaign)["notes"] == "Recorded with: thruput " + " ".join(argv[3:])


@needs_tools
def test_no_server_is_a_clear_error_before_any_run(tmp_path):
    port = _free_port()
    with pytest.raises(RecordError, match=rf"127\.0\.0\.1 port {port}\? Start one there with `iperf3 -s`"):
        record(tmp_path / "nobody", Plan([65536], [1], repeats=1, duration_s=1, pause_s=1),
               Target("127.0.0.1", port), progress=False)
    assert not (tmp_path / "nobody" / "runs.csv").exists()
    # nothing is left of what the failed record created: no empty folder, nor its parents
    assert not (tmp_path / "nobody").exists()
    with pytest.raises(RecordError):
        record(tmp_path / "data" / "raw" / "nobody", Plan([65536], [1], repeats=1, duration_s=1, pause_s=1),
               Target("127.0.0.1", port), progress=False)
    assert list(tmp_path.iterdir()) == []
    # a folder that was there before (a `campaign new` template) is kept as it was
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "campaign.yaml").write_text("name: kept\n")
    with pytest.raises(RecordError):
        record(tmp_path / "kept", Plan([65536], [1], repeats=1, duration_s=1, pause_s=1),
               Target("127.0.0.1", port), progress=False)
    assert [p.name for p in (tmp_path / "kept").iterdir()] == ["campaign.yaml"]


@needs_tools
def test_the_probe_waits_for_a_server_busy_with_another_test(iperf3_server):
    """As after a Ctrl-C, when the server is still ending the test cut short: the probe
    asks again (1, 2 ... s later) rather than fail with "the server is busy"."""
    from thruput.record import probe_server

    other = _test_under_way(iperf3_server)
    try:
        far, version = probe_server(Plan([65536], [1], repeats=1, duration_s=1, pause_s=1),
                                    Target("127.0.0.1", iperf3_server))
        assert version
        rest = other.stdout.read()
        assert other.wait(timeout=10) == 0, rest    # (the other test ran to its end first)
    finally:
        other.kill()
        other.communicate(timeout=10)


def _test_under_way(port, tries=10):
    """A 2-s iperf3 test against the server at ``port``, under way (its streams
    connected). The module's server may still be ending the test before, as the probe's
    would: then that client is refused as busy and ends, and another is started a second
    later."""
    said = []
    for _ in range(tries):
        other = subprocess.Popen(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-t", "2",
                                  "--forceflush"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
        said = []
        for line in other.stdout:           # until its test is under way
            said.append(line)
            if "connected to" in line:
                return other
        other.wait(timeout=10)              # (it ended without a test: refused)
        time.sleep(1)
    pytest.fail("iperf3 never got the server: " + "".join(said))


@needs_tools
def test_a_failed_cell_leaves_nothing_and_says_why(tmp_path):
    plan = Plan([65536], [1], repeats=1, duration_s=1, pause_s=1)
    result = run_cell(tmp_path, plan, Target("127.0.0.1", _free_port()), Cell(65536, 1, 0),
                      retries=0)
    assert result.rows == [] and result.error.startswith("iperf3: unable to connect to server")
    assert list((tmp_path / "runs").iterdir()) == []
    assert not (tmp_path / "runs.csv").exists()


@needs_tools
def test_record_with_iperf2(tmp_path, iperf2_server):
    campaign = tmp_path / "iperf2"
    plan = Plan([131072], [2], repeats=1, duration_s=1, pause_s=1, tool="iperf2")
    summary = record(campaign, plan, Target("127.0.0.1", iperf2_server), progress=False)
    assert summary.recorded == ["w131072-s2-r0"]
    text = (campaign / "runs/w131072-s2-r0.iperf2.txt").read_text()
    assert f"Client connecting to 127.0.0.1, TCP port {iperf2_server}" in text
    assert "[SUM]" in text
    data = _validate_yaml(campaign)
    assert data["plan"]["tool"] == "iperf2" and data["tools"]["iperf2"]
    assert data["hosts"]["127.0.0.1"]["description"] == "far end: not reported by iperf 2"


def test_far_host_without_server_json_stays_unknown():
    host = far_host_from_iperf3({"end": {"receiver_tcp_congestion": "cubic"},
                                 "server_output_text": "Accepted connection"})
    assert host["os"] is None and host["kernel"] is None
    assert host["tcp"]["congestion_control"] == "cubic"
    assert "iperf3 -s -J" in host["description"]


def test_local_host_reads_proc():
    host = local_host()
    with open("/proc/meminfo") as f:
        mem_kib = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    assert host["memory_bytes"] == mem_kib * 1024
    assert host["cpu_count"] == os.cpu_count() and host["nic"] is None
    assert host["tcp"]["sack"] == (open("/proc/sys/net/ipv4/tcp_sack").read().strip() != "0")


def test_cli_names_the_bad_option(capsys, tmp_path):
    from thruput.cli import main
    with pytest.raises(SystemExit) as exc:
        main(["record", str(tmp_path / "x"), "--to", "127.0.0.1", "--windows", "8Q"])
    assert exc.value.code == 2
    assert "argument --windows: bad size '8Q'" in capsys.readouterr().err
    assert main(["record", str(tmp_path / "x"), "--to", "127.0.0.1", "--duration", "0"]) == 2
    assert "duration must be a whole number of seconds" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
