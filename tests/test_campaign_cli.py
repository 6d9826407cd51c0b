"""``thruput campaign check | new | import`` on recorded campaigns."""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from thruput import open_campaign
from thruput.campaign import load_metadata
from thruput.campaign.importer import parse_size
from thruput.campaign.layout import sha256_of
from thruput.cli import main

from .conftest import DATA, ROOT

MINI = DATA / "campaigns" / "loopback-mini"
UDPMON = ROOT / "data" / "raw" / "udpmon-veth-500m"
#: The file names record.sh writes, as a user would describe them.
PATTERN = r"w(?P<window>\d+)-s(?P<streams>\d+)-r(?P<repeat>\d+)\.(?P<phase>loaded|unloaded)?"


def rows(directory):
    with open(Path(directory) / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_check_ok(capsys):
    assert main(["campaign", "check", str(MINI), str(UDPMON)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{MINI}: ok (0 errors, 0 warnings)", f"{UDPMON}: ok (0 errors, 0 warnings)"]


def test_check_lists_problems_with_file_and_line(tmp_path, capsys):
    mini = Path(shutil.copytree(MINI, tmp_path / "loopback-mini"))
    victim = mini / "runs" / "w262144-s1-r0.loaded.ping"
    lines = victim.read_text().splitlines()
    lines[2] = "[1795355359.5] 64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 tim=0.036 ms"
    victim.write_text("\n".join(lines) + "\n")
    assert main(["campaign", "check", str(mini)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{victim}: error: changed since it was recorded: ")     # its sha256
    assert out[1].startswith(f"{victim}:3: error: ")                                    # and why
    assert out[-1] == f"{mini}: FAILED (2 errors, 0 warnings)"


def test_check_of_a_folder_that_is_no_campaign_says_so_once(tmp_path, capsys):
    (tmp_path / "pkg").mkdir()
    for i in range(20):
        (tmp_path / "pkg" / f"m{i}.py").write_text("x = 1\n")
    assert main(["campaign", "check", str(tmp_path / "pkg"), str(UDPMON)]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"thruput: {tmp_path / 'pkg'}: not a campaign (no campaign.yaml or runs.csv in it; "
        "`thruput campaign new NAME` or `thruput campaign import` makes one)"]
    assert captured.out.splitlines() == [f"{UDPMON}: ok (0 errors, 0 warnings)"]     # the others still checked
    assert main(["campaign", "check", str(ROOT / "src")]) == 1
    assert "not a campaign" in capsys.readouterr().err


def test_check_name_under_root(capsys):
    assert main(["campaign", "check", "udpmon-veth-500m", "--root", str(ROOT / "data" / "raw")]) == 0


def test_new_writes_a_valid_template(tmp_path, capsys):
    assert main(["campaign", "new", "fresh", "--root", str(tmp_path)]) == 0
    meta = load_metadata(tmp_path / "fresh")
    assert meta["name"] == "fresh" and meta["kind"] == "tcp_sweep"
    assert meta["hosts"]["host-a"]["tcp"]["congestion_control"] is None
    assert rows(tmp_path / "fresh") == []
    assert (tmp_path / "fresh" / "runs").is_dir()
    assert main(["campaign", "new", "fresh", "--root", str(tmp_path)]) == 1
    assert "already exists" in capsys.readouterr().err


def test_import_takes_window_and_streams_from_the_logs(tmp_path, capsys):
    files = sorted(str(p) for p in (MINI / "runs").glob("*.iperf3.json"))
    # no pattern: iperf3 -J says its window (sock_bufsize) and streams (num_streams);
    # repeats are numbered in file-name order within a cell
    assert main(["campaign", "import", "imported", *files, "--root", str(tmp_path)]) == 0
    got = {(r["run"], r["path"]) for r in rows(tmp_path / "imported")}
    want = {(r["run"], r["path"]) for r in rows(MINI) if r["role"] == "iperf"}
    assert got == want
    meta = load_metadata(tmp_path / "imported")
    assert meta["plan"] == {"tool": "iperf3", "windows": [65536, 262144], "streams": [1, 2], "repeats": 2}
    assert main(["campaign", "check", str(tmp_path / "imported")]) == 0


def test_import_with_pattern_for_pings(tmp_path):
    files = sorted(str(p) for p in (MINI / "runs").iterdir())
    assert main(["campaign", "import", "imported", *files, "--root", str(tmp_path),
                 "--pattern", PATTERN]) == 0
    strip = lambda rs: sorted((r["run"], r["role"], r["path"], r["window"], r["streams"],
                               r["repeat"], r["phase"]) for r in rs)
    assert strip(rows(tmp_path / "imported")) == strip(rows(MINI))
    assert main(["campaign", "check", str(tmp_path / "imported")]) == 0
    a, b = open_campaign(tmp_path / "imported"), open_campaign(MINI)
    np.testing.assert_array_equal(a["throughput"].values, b["throughput"].values)
    np.testing.assert_array_equal(a["rtt"].values, b["rtt"].values)


def test_import_of_pings_alone_is_refused(tmp_path, capsys):
    ping = str(MINI / "runs" / "w65536-s1-r0.loaded.ping")
    assert main(["campaign", "import", "x", ping, "--root", str(tmp_path)]) == 1
    assert "no iperf log among the files" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_import_udpmon(tmp_path):
    files = [str(UDPMON / r["path"]) for r in rows(UDPMON)]
    assert main(["campaign", "import", "u", *files, "--root", str(tmp_path)]) == 0
    assert {r["role"] for r in rows(tmp_path / "u")} == {"udpmon_bw", "udpmon_req"}
    assert load_metadata(tmp_path / "u")["kind"] == "udp_sweep"
    assert open_campaign(tmp_path / "u").sizes["row"] == 68


@pytest.mark.parametrize("text, value", [("4096", 4096), ("64K", 65536), ("64k", 65536),
                                         ("1M", 1048576), ("2MB", 2097152), ("8KiB", 8192)])
def test_parse_size(text, value):
    assert parse_size(text) == value


def test_check_against_normalized_catches_a_file_changed_in_place(tmp_path, capsys):
    mini = Path(shutil.copytree(MINI, tmp_path / "loopback-mini"))
    nc = tmp_path / "mini.nc"
    assert main(["pipeline", "normalize", str(mini), str(nc)]) == 0
    assert main(["campaign", "check", str(mini), "--against", str(nc)]) == 0
    victim = mini / "runs" / "w262144-s2-r0.unloaded.ping"
    # a value edited so that the log still parses: only the hashes can tell, those of
    # runs.csv (recorded with the file) and those of the normalized campaign
    victim.write_text(victim.read_text().replace("time=0.0", "time=0.1", 1))
    assert main(["campaign", "check", str(mini)]) == 1
    assert f"{victim}: error: changed since it was recorded" in capsys.readouterr().out
    rows = (mini / "runs.csv").read_text().replace(sha256_of(MINI / "runs" / victim.name), "")
    (mini / "runs.csv").write_text(rows)                 # as a manifest that keeps no hash
    assert main(["campaign", "check", str(mini)]) == 0
    capsys.readouterr()
    assert main(["campaign", "check", str(mini), "--against", str(nc)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and out[1].startswith(f"{victim}: error: changed since the campaign was normalized")


def test_import_takes_start_times_from_the_logs(tmp_path):
    files = [str(MINI / "runs" / "w65536-s1-r0.iperf3.json"), str(MINI / "runs" / "w65536-s1-r0.loaded.ping")]
    assert main(["campaign", "import", "t", *files, "--root", str(tmp_path), "--pattern", PATTERN]) == 0
    started = {r["role"]: r["started"] for r in rows(tmp_path / "t")}
    raw = json.loads((MINI / "runs" / "w65536-s1-r0.iperf3.json").read_text())
    want = dt.datetime.fromtimestamp(raw["start"]["timestamp"]["timesecs"], dt.timezone.utc)
    assert started["iperf"] == want.strftime("%Y-%m-%dT%H:%M:%SZ")
    first = float(re.search(r"^\[([0-9.]+)\]", (MINI / "runs" / "w65536-s1-r0.loaded.ping").read_text(), re.M)[1])
    assert started["ping"] == dt.datetime.fromtimestamp(int(first), dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert load_metadata(tmp_path / "t")["dates"]["start"] == min(started.values())


def test_check_with_a_malformed_manifest_row_still_checks_the_others(tmp_path, capsys):
    directory = shutil.copytree(MINI, tmp_path / "loopback-mini")
    manifest = directory / "runs.csv"
    lines = manifest.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace(",65536,1,0,loaded,", ",65536,x,0,loaded,")        # a typo
    lines.append("w1-s1-r0,iperf,runs/nothere.json,,1,1,0,,\n")
    manifest.write_text("".join(lines))
    assert main(["campaign", "check", str(directory)]) == 1
    out = capsys.readouterr().out.splitlines()
    plan_line = next(i for i, line in enumerate((directory / "campaign.yaml").read_text().splitlines(), 1)
                     if line.startswith("plan:"))
    # the typo, the row after it still checked, no file reported as "not listed"; the plan
    # error points into the plan mapping (its first key)
    assert out == [
        f"{manifest}:3: error: streams 'x' is not a non-negative integer",
        f"{manifest}:26: error: runs/nothere.json is listed but missing",
        f"{directory / 'campaign.yaml'}:{plan_line + 1}: error: planned run w65536-s1-r0 lacks its "
        "loaded ping and is not explained",
        f"{directory}: FAILED (3 errors, 0 warnings)"]


def test_check_warns_of_todos_left_from_the_template(tmp_path, capsys):
    files = sorted(str(p) for p in (MINI / "runs").glob("*.iperf3.json"))
    assert main(["campaign", "import", "imported", *files, "--root", str(tmp_path)]) == 0
    meta = tmp_path / "imported" / "campaign.yaml"
    capsys.readouterr()
    assert main(["campaign", "check", str(tmp_path / "imported")]) == 0
    todo = [f"{meta}:{i}: warning: TODO left from the template: {line.strip()}"
            for i, line in enumerate(meta.read_text().splitlines(), start=1)
            if "TODO" in line and not line.lstrip().startswith("#")]
    out = capsys.readouterr().out.splitlines()
    assert out == todo + [f"{tmp_path / 'imported'}: ok (0 errors, 3 warnings)"]
    assert [line.split(": ", 1)[1] for line in todo] == [
        'warning: TODO left from the template: title: "TODO: one line"',
        "warning: TODO left from the template: TODO: where and how it was measured, honestly "
        "(hardware, virtual or not, what else ran).",
        'warning: TODO left from the template: who: ["TODO"]']
    assert main(["campaign", "check", "--strict", str(tmp_path / "imported")]) == 1
