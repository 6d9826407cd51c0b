"""sha256 of every raw file in runs.csv: a changed file is refused until accepted on purpose."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import yaml

from thruput import read
from thruput.campaign import read_manifest
from thruput.campaign.check import check_campaign
from thruput.campaign.layout import LEGACY_MANIFEST_COLUMNS, MANIFEST_COLUMNS
from thruput.cli import main

from .conftest import DATA, ROOT

VETH = ROOT / "data" / "raw" / "veth-1g"
MINI = DATA / "campaigns" / "loopback-mini"
#: The issue's reproducer: one digit of a receiver rate in an iperf3 JSON of veth-1g.
FLIPPED = ("runs/w65536-s4-r1.iperf3.json", "954544212", "154544212")


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def one_run_of_veth(tmp_path):
    """veth-1g with only the manifest rows of the flipped file's run (the others explained)."""
    directory = tmp_path / "veth-1g"
    directory.mkdir()
    shutil.copy(VETH / "campaign.yaml", directory)
    lines = (VETH / "runs.csv").read_text().splitlines(keepends=True)
    run = Path(FLIPPED[0]).name.split(".")[0]
    kept = [line for line in lines[1:] if line.startswith(run + ",")]
    (directory / "runs.csv").write_text(lines[0] + "".join(kept))
    for line in kept:
        rel = line.split(",")[2]
        (directory / rel).parent.mkdir(exist_ok=True)
        shutil.copy(VETH / rel, directory / rel)
    return directory


def test_bundled_manifests_keep_the_sha256_of_every_file():
    for campaign in ("veth-1g", "delay-40ms", "udpmon-veth-500m"):
        directory = ROOT / "data" / "raw" / campaign
        assert (directory / "runs.csv").read_text().splitlines()[0] == ",".join(MANIFEST_COLUMNS)
        for row in read_manifest(directory):
            assert row.sha256 == sha256(directory / row.path), row.path


def test_a_flipped_digit_that_still_parses_is_refused(tmp_path):
    directory = one_run_of_veth(tmp_path)
    path, good, bad = FLIPPED
    victim = directory / path
    was = sha256(victim)
    victim.write_text(victim.read_text().replace(good, bad, 1))
    ds = read(victim)                                   # it still parses, to a wrong rate
    assert float(ds["throughput"].values[0]) == 154544212.6129123
    problems = [p for p in check_campaign(directory) if p.file == str(victim)]
    assert [str(p) for p in problems] == [
        f"{victim}: error: changed since it was recorded: runs.csv line 2 keeps sha256 {was}, "
        f"the file's is {sha256(victim)}; if the change is intended, record it with "
        f"`thruput campaign accept {directory} {path} --reason ...`"]


def test_accept_records_the_new_hash_and_the_reason(tmp_path, capsys):
    directory = Path(shutil.copytree(MINI, tmp_path / "loopback-mini"))
    path = "runs/w65536-s1-r0.iperf3.json"
    was = sha256(directory / path)
    (directory / path).write_text((directory / path).read_text().replace("31110991834.342953", "31110991834.342958"))
    now = sha256(directory / path)
    assert main(["campaign", "check", str(directory)]) == 1
    capsys.readouterr()
    assert main(["campaign", "accept", str(directory), path, "--reason", "re-exported by hand"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{directory / path}: sha256 {was} -> {now}",
        f"{directory}: 1 changes accepted and recorded in campaign.yaml"]
    assert {r.path: r.sha256 for r in read_manifest(directory)}[path] == now
    accepted = yaml.safe_load((directory / "campaign.yaml").read_text())["accepted"]
    assert len(accepted) == 1
    assert {k: v for k, v in accepted[0].items() if k != "date"} == {
        "file": path, "was": was, "sha256": now, "reason": "re-exported by hand"}
    assert main(["campaign", "check", str(directory)]) == 0
    # a second change is appended to the same list; the first entry stays
    (directory / path).write_text((directory / path).read_text().replace("342958", "342953"))
    assert main(["campaign", "accept", str(directory), path, "--reason", "undone"]) == 0
    accepted = yaml.safe_load((directory / "campaign.yaml").read_text())["accepted"]
    assert [a["reason"] for a in accepted] == ["re-exported by hand", "undone"]
    assert accepted[1]["sha256"] == was
    assert main(["campaign", "check", str(directory)]) == 0


def test_accept_needs_a_listed_file(tmp_path, capsys):
    directory = Path(shutil.copytree(MINI, tmp_path / "loopback-mini"))
    assert main(["campaign", "accept", str(directory), "runs/nope.json", "--reason", "x"]) == 1
    assert f"{directory / 'runs.csv'}: does not list runs/nope.json" in capsys.readouterr().err


def test_a_manifest_without_sha256_is_read_and_warned_about(tmp_path, capsys):
    directory = Path(shutil.copytree(MINI, tmp_path / "loopback-mini"))
    lines = [line.split(",") for line in (directory / "runs.csv").read_text().splitlines()]
    at = MANIFEST_COLUMNS.index("sha256")
    (directory / "runs.csv").write_text("".join(",".join(c[:at] + c[at + 1:]) + "\n" for c in lines))
    assert lines[0][:at] + lines[0][at + 1:] == list(LEGACY_MANIFEST_COLUMNS)
    problems = check_campaign(directory)
    assert [str(p) for p in problems] == [
        f"{directory / 'runs.csv'}:2: warning: 24 of 24 rows keep no sha256, so a change to their "
        f"files cannot be detected; `thruput campaign accept {directory} --reason ...` records the "
        "hashes of the files as they are"]
    assert main(["campaign", "accept", str(directory), "--reason", "hashes first recorded"]) == 0
    assert "24 changes accepted" in capsys.readouterr().out
    assert check_campaign(directory) == []
    assert all(r.sha256 == sha256(directory / r.path) for r in read_manifest(directory))
