"""``thruput monitor`` without a network: command lines, outcomes, runs.csv, the lock,
status, campaign check of a monitor campaign, and the CLI's ``new``."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
import yaml

from thruput.campaign.check import check_campaign
from thruput.cli import main
from thruput.monitor.lock import CampaignLock, CampaignLocked
from thruput.monitor.manifest import MONITOR_MANIFEST_COLUMNS, append_row, read_rows
from thruput.monitor.new import new_campaign
from thruput.campaign.outcome import classify, judge_ping
from thruput.monitor.runner import test_argv as argv_of
from thruput.monitor.schedule import Path, TestSpec, parse_time
from thruput.monitor.status import format_status, status

AB = Path("a-b", "10.201.0.2", "a", "b", ("forward", "reverse"))
T0 = "2026-11-22T18:00:00Z"


def test_command_lines():
    tcp = TestSpec(AB, "reverse", "tcp", "iperf3", duration_s=5.0, socket_buffer=65536)
    assert argv_of(tcp) == ["iperf3", "-c", "10.201.0.2", "-J", "-t", "5",
                            "--connect-timeout", "5000", "-w", "65536", "-R"]
    udp = TestSpec(Path("x", "h", port=5301), "forward", "udp", "iperf3", duration_s=5.0,
                   rate=2e7)
    assert argv_of(udp) == ["iperf3", "-c", "h", "-J", "-t", "5", "--connect-timeout", "5000",
                            "-u", "-b", "20000000", "-p", "5301"]
    iperf2 = TestSpec(AB, "forward", "tcp", "iperf2", duration_s=10.0, socket_buffer=1048576)
    assert argv_of(iperf2) == ["iperf", "-c", "10.201.0.2", "-e", "-i", "1", "-t", "10",
                               "-w", "1048576"]
    ping = TestSpec(AB, "forward", "ping", "ping", size=1480, count=10, interval_s=0.2)
    assert argv_of(ping) == ["ping", "-n", "-O", "-D", "-c", "10", "-i", "0.2", "-s", "1480",
                             "-w", "7", "10.201.0.2"]


@pytest.mark.parametrize("message, outcome", [
    # as iperf3 3.12 and iputils ping print them (tests/test_monitor_netns.py runs them)
    ("unable to connect to server: Connection refused", "refused"),
    ("the server is busy running a test. try again later", "busy"),
    ("unable to connect to server: Network is unreachable", "unreachable"),
    ("unable to connect to server: No route to host", "unreachable"),
    ("From 10.77.9.1 icmp_seq=1 Destination Host Unreachable", "unreachable"),
    ("unable to connect to server: Connection timed out", "timeout"),
    ("unable to receive parameters from client: Bad file descriptor", "error"),
    ("", "error"),
])
def test_outcome_from_the_tools_words(message, outcome):
    assert classify(message) == outcome


def test_ping_with_lost_probes_is_ok_and_without_replies_is_not():
    # a real run that gets fewer replies than -c by its -w deadline: exit status 1
    run = subprocess.run(["ping", "-n", "-c", "10", "-i", "0.2", "-w", "1", "127.0.0.1"],
                         capture_output=True, text=True)
    assert run.returncode == 1 and " received, " in run.stdout
    assert judge_ping(run.returncode, run.stdout, run.stderr) == ("ok", "")
    assert judge_ping(2, "", "ping: connect: Network is unreachable") == \
        ("unreachable", "ping: connect: Network is unreachable")
    assert judge_ping(2, "", "ping: bad.invalid: Name or service not known") == \
        ("error", "ping: bad.invalid: Name or service not known")


def _row(slot, test="tcp", outcome="ok", reason="", direction="forward", buffer=65536,
         size=None, started=None, path="", sha=""):
    run = f"{slot:06d}-a-b-{direction}-{test}" + (f"-b{buffer}" if buffer else "") + \
          (f"-z{size}" if size else "")
    return dict(run=run, role="ping" if test == "ping" else "iperf", path=path, sha256=sha,
                slot=slot, started=started or f"2026-11-22T18:{slot:02d}:01.000Z",
                path_name="a-b", direction=direction, test=test,
                tool="ping" if test == "ping" else "iperf3", socket_buffer=buffer, size=size,
                rate=None, outcome=outcome, reason=reason)


@pytest.fixture
def campaign(tmp_path):
    """A monitor campaign made by `new`, slot 0 at 18:00, one slot a minute."""
    directory = tmp_path / "mon"
    new_campaign(str(directory), to="10.201.0.2", source="a", destination="b",
                 path_name="a-b", interval_s=60.0, tcp_buffers=[65536], tcp_duration_s=5.0,
                 ping_sizes=[108], description="made by a test", title="t")
    data = yaml.safe_load((directory / "campaign.yaml").read_text())
    data["dates"]["start"] = T0
    data["hosts"] = {h: {"description": h} for h in ("a", "b")}
    (directory / "campaign.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return directory


def _write_file(directory, rel, content):
    (directory / rel).parent.mkdir(parents=True, exist_ok=True)
    (directory / rel).write_bytes(content)
    return hashlib.sha256(content).hexdigest()


def test_runs_csv_round_trip_and_bad_header(tmp_path):
    row = append_row(str(tmp_path), **_row(3, test="ping", buffer=None, size=108))
    assert row.run == "000003-a-b-forward-ping-z108"
    lines = (tmp_path / "runs.csv").read_text().splitlines()
    assert lines[0] == ",".join(MONITOR_MANIFEST_COLUMNS)
    assert lines[1] == ("000003-a-b-forward-ping-z108,ping,,,3,2026-11-22T18:03:01.000Z,a-b,"
                        "forward,ping,ping,,108,,ok,")
    assert read_rows(str(tmp_path)) == [row]
    (tmp_path / "runs.csv").write_text("run,role\nx,y\n")
    with pytest.raises(ValueError, match=r"runs.csv:1: header \['run', 'role'\] is not"):
        read_rows(str(tmp_path))


def test_lock_refuses_a_second_copy_and_names_the_holder(campaign):
    with CampaignLock(str(campaign)):
        with pytest.raises(CampaignLocked) as err:
            CampaignLock(str(campaign)).__enter__()
        assert f"process {os.getpid()} is already monitoring this campaign" in str(err.value)
        # a second `thruput monitor` process exits at once with status 1, naming us
        proc = subprocess.run([sys.executable, "-m", "thruput.cli", "monitor", str(campaign),
                               "--duration", "1m"], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert proc.returncode == 1
        assert f"process {os.getpid()} is already monitoring" in proc.stderr
        assert status(str(campaign))["running_pid"] == os.getpid()
    with CampaignLock(str(campaign)):  # released
        pass
    assert status(str(campaign))["running_pid"] is None


def test_status_lists_outcomes_gaps_and_failures(campaign):
    for slot in (0, 1, 4):
        append_row(str(campaign), **_row(slot))
        append_row(str(campaign), **_row(slot, test="ping", buffer=None, size=108))
    refused = "iperf3: unable to connect to server: Connection refused"
    append_row(str(campaign), **_row(5, outcome="refused", reason=refused))
    report = status(str(campaign), now=parse_time("2026-11-22T18:07:30Z"))
    assert report == {
        "campaign": "mon", "start": "2026-11-22T18:00:00.000Z", "interval_s": 60.0,
        "running_pid": None, "tests": 7, "outcomes": {"ok": 6, "refused": 1},
        "by_test": {"a-b forward ping": {"ok": 3}, "a-b forward tcp": {"ok": 3, "refused": 1}},
        "slots_run": 4, "last_slot": 5, "last_test": "2026-11-22T18:05:01.000Z",
        "slots_missing": [[2, 3, "2026-11-22T18:02:00.000Z", "2026-11-22T18:03:00.000Z"]],
        "recent_failures": [{"run": "000005-a-b-forward-tcp-b65536",
                             "started": "2026-11-22T18:05:01.000Z", "outcome": "refused",
                             "reason": "iperf3: unable to connect to server: Connection refused"}],
        "next_slot": None, "next_due": None}
    assert format_status(report).splitlines() == [
        "campaign mon: slot 0 at 2026-11-22T18:00:00.000Z, one slot every 60 s",
        "no monitor running",
        "7 tests in 4 slots (6 ok, 1 refused); last test 2026-11-22T18:05:01.000Z",
        "  a-b forward ping: 3 ok",
        "  a-b forward tcp: 3 ok, 1 refused",
        "2 slots missing:",
        "  slots 2-3 (2026-11-22T18:02:00.000Z .. 2026-11-22T18:03:00.000Z)",
        "latest failures:",
        "  2026-11-22T18:05:01.000Z 000005-a-b-forward-tcp-b65536 refused: "
        "iperf3: unable to connect to server: Connection refused"]


def test_status_cli_json(campaign, capsys):
    append_row(str(campaign), **_row(0))
    assert main(["monitor", "status", str(campaign), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["tests"], report["outcomes"], report["slots_missing"]) == (1, {"ok": 1}, [])


def test_check_passes_a_sound_monitor_campaign_and_finds_what_is_wrong(campaign):
    rel = "runs/2026-11-22/000000-a-b-forward-tcp-b65536.json"
    sha = _write_file(campaign, rel, b'{"start": {}}\n')
    append_row(str(campaign), **_row(0, path=rel, sha=sha))
    append_row(str(campaign), **_row(1, outcome="refused", reason="Connection refused"))
    assert [str(p) for p in check_campaign(campaign)] == []
    # a changed file, a missing one, a row that disagrees with its id, a stray file
    (campaign / rel).write_bytes(b"{}\n")
    rel2 = "runs/2026-11-22/000002-a-b-forward-tcp-b65536.json"
    append_row(str(campaign), **_row(2, path=rel2, sha="0" * 64))
    append_row(str(campaign), **{**_row(3), "direction": "sideways"})
    append_row(str(campaign), **_row(4, outcome="busy"))
    append_row(str(campaign), **_row(1, outcome="refused", reason="again"))
    _write_file(campaign, "runs/stray.txt", b"x")
    problems = [str(p).replace(str(campaign) + "/", "") for p in check_campaign(campaign)]
    assert problems == [
        f"{rel}: error: sha256 is not the one runs.csv line 2 says "
        "(changed since it was recorded?)",
        f"runs.csv:4: error: {rel2} is listed but missing",
        "runs.csv:5: error: run id '000003-a-b-forward-tcp-b65536' does not match its columns "
        "('000003-a-b-sideways-tcp-b65536')",
        "runs.csv:5: error: direction 'sideways' is not watched on path 'a-b'",
        "runs.csv:5: error: direction 'sideways' is not one of ['forward', 'reverse']",
        "runs.csv:5: error: outcome ok but no file",
        "runs.csv:6: error: outcome busy without a reason",
        "runs.csv:7: error: run 000001-a-b-forward-tcp-b65536 already on line 3",
        "runs/stray.txt: warning: not listed in runs.csv (not analysed)"]


def test_check_holds_started_to_the_readers_rule(campaign):
    """`thruput campaign check` takes the start times `pipeline normalize` takes
    (quantities.iso_ns), not Python's wider fromisoformat (basic format, week dates, any year)."""
    for k, started in enumerate(["20261122T180000Z", "2026-W47-7", "9999-11-22T18:00:00Z"]):
        append_row(str(campaign), **{**_row(k, outcome="refused", reason="x"), "started": started})
    problems = [str(p).replace(str(campaign) + "/", "") for p in check_campaign(campaign)]
    assert problems == [f"runs.csv:{k + 2}: error: started {s!r} is not an ISO 8601 time of the "
                        "years 1678-2261"
                        for k, s in enumerate(["20261122T180000Z", "2026-W47-7", "9999-11-22T18:00:00Z"])]


def test_new_writes_a_valid_campaign_and_refuses_to_overwrite(tmp_path, capsys):
    directory = tmp_path / "cern-ral"
    argv = ["monitor", "new", str(directory), "--to", "10.0.0.2", "--source", "cern",
            "--destination", "ral", "--interval", "30m", "--jitter", "2m", "--order", "random",
            "--seed", "4", "--tcp-buffers", "256K,1M", "--udp-rate", "1e8",
            "--ping-sizes", "108,1480"]
    assert main(argv) == 0
    data = yaml.safe_load((directory / "campaign.yaml").read_text())
    assert data["schedule"] == {
        "interval_s": 1800.0, "jitter_s": 120.0, "order": "random", "seed": 4,
        "timeout_s": 60.0,
        "tests": [{"test": "tcp", "tool": "iperf3", "duration_s": 10.0,
                   "socket_buffers": [262144, 1048576]},
                  {"test": "udp", "tool": "iperf3", "duration_s": 10.0, "rate_bps": 1e8},
                  {"test": "ping", "count": 10, "interval_s": 0.2, "sizes": [108, 1480]}]}
    assert data["paths"] == [{"name": "cern-ral", "source": "cern", "destination": "ral",
                              "address": "10.0.0.2", "directions": ["forward", "reverse"],
                              "between": None, "capacity_bps": None}]
    assert main(argv) == 1
    assert "exists; edit it, or pick a new directory" in capsys.readouterr().err


def test_new_asks_for_each_test_by_its_own_options_and_drops_none_in_silence(tmp_path, capsys):
    """A ping count or interval alone asks for ping (at ping's own 56 bytes); a test's
    length without what asks for the test, or no test at all, is an error saying what
    to give, and writes nothing."""
    def schedule(name, *options):
        assert main(["monitor", "new", str(tmp_path / name), "--to", "127.0.0.1", *options]) == 0
        return yaml.safe_load((tmp_path / name / "campaign.yaml").read_text())["schedule"]["tests"]

    assert schedule("count", "--ping-count", "15") == [
        {"test": "ping", "count": 15, "interval_s": 0.2, "sizes": [56]}]
    assert schedule("mixed", "--tcp-buffers", "128K", "--tcp-duration", "2s", "--ping-interval", "0.5") == [
        {"test": "tcp", "tool": "iperf3", "duration_s": 2.0, "socket_buffers": [131072]},
        {"test": "ping", "count": 10, "interval_s": 0.5, "sizes": [56]}]
    capsys.readouterr()
    for name, options, said in [
            ("tcp", ["--tcp-duration", "5s", "--ping-sizes", "56"], "--tcp-buffers"),
            ("udp", ["--udp-duration", "5s", "--tcp-buffers", "1M"], "--udp-rate"),
            ("none", [], "no test asked for")]:
        assert main(["monitor", "new", str(tmp_path / name), "--to", "127.0.0.1", *options]) == 1
        assert said in capsys.readouterr().err
        assert not (tmp_path / name).exists()


def test_monitor_on_a_sweep_campaign_says_so(tmp_path, capsys):
    (tmp_path / "campaign.yaml").write_text("kind: tcp_sweep\nname: x\n")
    assert main(["monitor", str(tmp_path), "--duration", "1s"]) == 1
    assert "kind is 'tcp_sweep', not 'monitor'" in capsys.readouterr().err


def test_edits_made_while_it_runs_are_kept(tmp_path):
    """ping over loopback, in a thread: campaign.yaml edited between slots keeps the edit."""
    import threading
    import time

    from thruput.monitor.campaign import monitor

    directory = tmp_path / "lo"
    new_campaign(str(directory), to="127.0.0.1", source="here", destination="here",
                 path_name="lo", directions=("forward",), interval_s=1.0,
                 ping_sizes=[56], ping_count=2, description="loopback")
    runner = threading.Thread(target=monitor, args=(str(directory),), kwargs={"duration_s": 3.5})
    runner.start()
    data = {}
    while not (data.get("dates") or {}).get("end"):  # slot 0 is over (and written)
        assert runner.is_alive()
        time.sleep(0.05)
        data = yaml.safe_load((directory / "campaign.yaml").read_text())
    data["events"] = [{"time": "2026-11-22T18:00:00Z", "what": "noted while running"}]
    (directory / "campaign.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    runner.join(30)
    final = yaml.safe_load((directory / "campaign.yaml").read_text())
    assert final["events"] == data["events"]
    assert final["dates"]["end"] > final["dates"]["start"]
    rows = read_rows(str(directory))
    assert [r.outcome for r in rows] == ["ok"] * len(rows) and len(rows) >= 3
    assert [int(r.slot) for r in rows] == list(range(len(rows)))


def test_a_new_campaigns_slot_0_runs_however_long_its_set_up_took(tmp_path, monkeypatch):
    """Slot 0 of a new campaign is due once it is set up; writing campaign.yaml slowly (a
    busy machine) must not make it a gap (a fresh-clone CI run started at slot 1)."""
    import time

    from thruput.monitor import campaign

    directory = tmp_path / "lo"
    new_campaign(str(directory), to="127.0.0.1", source="here", destination="here",
                 path_name="lo", directions=("forward",), interval_s=1.0,
                 ping_sizes=[56], ping_count=1, description="loopback")
    write_yaml = campaign.write_yaml
    calls = []

    def slow(*args, **kwargs):          # the first write: after slot 0's time was set
        calls.append(1)
        if len(calls) == 1:
            time.sleep(1.5)
        return write_yaml(*args, **kwargs)

    monkeypatch.setattr(campaign, "write_yaml", slow)
    campaign.monitor(str(directory), duration_s=3.5)
    assert [int(r.slot) for r in read_rows(str(directory))][:1] == [0]


def test_reverse_udp_with_iperf2_is_refused(tmp_path):
    with pytest.raises(ValueError, match="path 'a-b' runs reverse, and iperf 2.1 -u -R "
                                         "measured nothing"):
        new_campaign(str(tmp_path / "x"), to="h", path_name="a-b", tool="iperf2",
                     udp_rate_bps=1e7)


def test_a_campaign_yaml_the_schema_refuses_is_named_with_its_line(tmp_path, capsys):
    directory = tmp_path / "bad"
    new_campaign(str(directory), to="127.0.0.1", ping_sizes=[56], description="d")
    text = (directory / "campaign.yaml").read_text()
    (directory / "campaign.yaml").write_text(text.replace("  jitter_s: 0.0\n",
                                                          "  jitter_s: 0.0\n  colour: red\n"))
    line = (directory / "campaign.yaml").read_text().splitlines().index("schedule:") + 2
    assert main(["monitor", str(directory), "--duration", "1s"]) == 1
    assert capsys.readouterr().err == (
        f"thruput monitor: {directory}/campaign.yaml:{line}: schedule: Additional properties "
        "are not allowed ('colour' was unexpected)\n")
    (directory / "campaign.yaml").write_text(text.replace("    sizes: [56]\n",
                                                          "    sizes: [-56]\n"))
    line = (directory / "campaign.yaml").read_text().splitlines().index("    sizes: [-56]") + 1
    assert main(["monitor", str(directory), "--duration", "1s"]) == 1
    assert capsys.readouterr().err == (
        f"thruput monitor: {directory}/campaign.yaml:{line}: schedule/tests/0/sizes/0: "
        "-56 is less than the minimum of 0\n")


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv (util-linux) is Linux's")
def test_a_test_whose_monitor_died_before_it_could_ask_ends_at_once():
    # the monitor killed between the fork and the child's prctl: no death signal would
    # ever come, so the child ends itself (here: told a parent that is not its own)
    import signal

    from thruput.monitor import runner
    child = subprocess.Popen(runner.with_death_signal([sys.executable, "-c", "import time; time.sleep(30)"],
                                                      parent=os.getpid() + 10**7))
    assert child.wait(timeout=20) == -signal.SIGKILL
    alive = subprocess.Popen(runner.with_death_signal([sys.executable, "-c", "pass"], parent=os.getpid()))
    assert alive.wait(timeout=20) == 0


def test_new_with_day_sets_schedule_day_s_and_without_it_leaves_it_out(tmp_path):
    assert main(["monitor", "new", str(tmp_path / "a"), "--to", "10.0.0.2",
                 "--tcp-buffers", "256K", "--interval", "30s", "--day", "24h"]) == 0
    schedule = yaml.safe_load((tmp_path / "a" / "campaign.yaml").read_text())["schedule"]
    assert schedule["day_s"] == 86400.0
    assert schedule["tests"] == [{"test": "tcp", "tool": "iperf3", "duration_s": 10.0,
                                  "socket_buffers": [262144]}]
    assert main(["monitor", "new", str(tmp_path / "b"), "--to", "10.0.0.2", "--ping-sizes", "56"]) == 0
    assert "day_s" not in yaml.safe_load((tmp_path / "b" / "campaign.yaml").read_text())["schedule"]


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv (util-linux) is Linux's")
def test_a_test_ends_with_its_monitor_killed(tmp_path):
    # a stand-in monitor starts a test as run_test does (its own pid given: killed before
    # setpriv's prctl, the test ends itself), then is killed by SIGKILL
    script = textwrap.dedent("""
        import os, subprocess, sys, time
        from thruput.monitor import runner
        child = subprocess.Popen(runner.with_death_signal(["sleep", "60"], parent=os.getpid()))
        print(child.pid, flush=True)
        time.sleep(60)
    """)
    monitor = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    pid = int(monitor.stdout.readline())
    monitor.kill()
    monitor.wait(timeout=20)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and os.path.exists(f"/proc/{pid}") \
            and open(f"/proc/{pid}/stat").read().split(") ")[1][0] != "Z":
        time.sleep(0.05)
    alive = os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split(") ")[1][0] != "Z"
    if alive:
        os.kill(pid, 9)
    assert not alive
