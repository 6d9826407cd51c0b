"""Campaign directories as Datasets: open_campaign, campaign.yaml schema, runs.csv, check.

The TCP campaign is tests/data/campaigns/loopback-mini (recorded on loopback by
record.sh beside it); the UDPmon one is the bundled data/raw/udpmon-veth-500m. Expected
values are read from the raw files independently of thruput's readers (json and a regex).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from thruput import open_campaign
from thruput.campaign import (CampaignError, load_metadata, parse_run_id, read_manifest,
                              resolve, run_id)
from thruput.campaign.check import check_campaign
from thruput.errors import ParseError

from .conftest import DATA, ROOT

MINI = DATA / "campaigns" / "loopback-mini"
UDPMON = ROOT / "data" / "raw" / "udpmon-veth-500m"
RTT = re.compile(r"time=([0-9.]+) ms")


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def manifest_rows(directory):
    with open(directory / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture()
def mini(tmp_path):
    """A private copy of loopback-mini to damage."""
    return Path(shutil.copytree(MINI, tmp_path / "loopback-mini"))


def test_run_ids():
    assert run_id(65536, 4, 0) == "w65536-s4-r0"
    assert parse_run_id("w65536-s4-r0") == (65536, 4, 0)
    assert parse_run_id("bw-p1400") is None


def test_resolve_name_and_path(tmp_path):
    assert resolve("udpmon-veth-500m", ROOT / "data" / "raw") == ROOT / "data" / "raw" / "udpmon-veth-500m"
    assert resolve(MINI) == MINI
    with pytest.raises(CampaignError, match="no-such: no such campaign directory"):
        resolve("no-such", tmp_path)


def test_tcp_sweep_dataset_shape():
    ds = open_campaign(MINI)
    assert ds.attrs["campaign"] == "loopback-mini"
    assert ds.attrs["campaign_kind"] == "tcp_sweep"
    assert ds.attrs["files_read"] == 24
    assert list(ds["window"].values) == [65536, 262144]
    assert list(ds["streams"].values) == [1, 2]
    assert list(ds["repeat"].values) == [0, 1]
    assert list(ds["phase"].values) == ["loaded", "unloaded"]
    assert ds["throughput"].dims == ("window", "streams", "repeat")
    assert ds["rtt"].dims == ("window", "streams", "repeat", "phase", "probe")
    assert ds["throughput"].sel(streams=2).dims == ("window", "repeat")
    assert ds["throughput"].attrs["units"] == "bit/s"
    assert ds["rtt"].attrs["units"] == "ms"
    assert ds.attrs["interval_s"] == 0.5
    assert "capacity_bps" not in ds.attrs          # null in campaign.yaml: unknown
    assert json.loads(ds.attrs["metadata"])["plan"]["windows"] == [65536, 262144]


@pytest.mark.parametrize("row", [r for r in manifest_rows(MINI) if r["role"] == "iperf"],
                         ids=lambda r: r["run"])
def test_tcp_sweep_values_match_raw_files(row):
    ds = open_campaign(MINI)
    cell = dict(window=int(row["window"]), streams=int(row["streams"]), repeat=int(row["repeat"]))
    raw = json.loads((MINI / row["path"]).read_text())
    end = raw["end"]
    run = ds.sel(cell)
    assert float(run["throughput"]) == end["sum_received"]["bits_per_second"]
    assert float(run["throughput_sender"]) == end["sum_sent"]["bits_per_second"]
    assert float(run["retransmits"]) == end["sum_sent"]["retransmits"]
    assert float(run["window_actual"]) == raw["start"]["sndbuf_actual"]
    sums = [i["sum"]["bits_per_second"] for i in raw["intervals"]]
    # bytes over (end - start) as printed to the microsecond; iperf3 divides by its own
    # single-precision "seconds", so the two agree to ~1e-7
    np.testing.assert_allclose(run["interval_throughput"].values[: len(sums)], sums, rtol=1e-6)
    cwnd = [sum(s["snd_cwnd"] for s in i["streams"]) for i in raw["intervals"]]
    srtt = [np.mean([s["rtt"] / 1000 for s in i["streams"]]) for i in raw["intervals"]]
    assert run["interval_cwnd"].values[: len(cwnd)].tolist() == cwnd
    np.testing.assert_allclose(run["interval_rtt"].values[: len(srtt)], srtt, rtol=1e-12)
    assert str(run["source"].values) == row["path"]
    assert str(run["source_sha256"].values) == sha256(MINI / row["path"])
    assert run["start_time"].values == np.datetime64(row["started"].rstrip("Z"), "ns")


@pytest.mark.parametrize("row", [r for r in manifest_rows(MINI) if r["role"] == "ping"],
                         ids=lambda r: f"{r['run']}-{r['phase']}")
def test_ping_rtts_line_up_with_their_run(row):
    ds = open_campaign(MINI)
    cell = dict(window=int(row["window"]), streams=int(row["streams"]),
                repeat=int(row["repeat"]), phase=row["phase"])
    expected = [float(x) for x in RTT.findall((MINI / row["path"]).read_text())]
    rtt = ds["rtt"].sel(cell).values
    assert list(rtt[: len(expected)]) == expected
    assert np.isnan(rtt[len(expected):]).all()
    status = ds["rtt_status"].sel(cell).values
    assert list(status[: len(expected)]) == ["reply"] * len(expected)
    assert str(ds["ping_source"].sel(cell).values) == row["path"]
    assert str(ds["ping_source_sha256"].sel(cell).values) == sha256(MINI / row["path"])


def test_udp_sweep_dataset():
    ds = open_campaign("udpmon-veth-500m", root=ROOT / "data" / "raw")
    assert ds.attrs["campaign_kind"] == "udp_sweep"
    assert ds.attrs["capacity_bps"] == 5.0e8
    assert ds.attrs["files_read"] == 6
    assert ds.sizes["row"] == 3 * 21 + 5           # three -x sweeps of 21 spacings, one -q of 5
    assert ds.sizes["point"] == 23 + 1             # a 23-size scan and one histogram run
    assert list(ds["source"].values) == [r["path"] for r in manifest_rows(UDPMON)]
    assert list(ds["source_sha256"].values) == [sha256(UDPMON / r["path"]) for r in manifest_rows(UDPMON)]
    first = ds.isel(row=0)
    assert (float(first["packet_size"]), float(first["spacing"])) == (1400.0, 0.0)
    assert str(first["file"].values) == "runs/bw_mon-p1400.txt"
    quiet = ds.where(ds["file"] == "runs/bw_mon-quiet-p1472.txt", drop=True)
    assert list(quiet["spacing"].values) == [0.0, 5.0, 10.0, 15.0, 20.0]
    assert list(quiet["packets_lost"].values) == [0.0, 161.0, 0.0, 172.0, 237.0]
    scan = ds.isel(point=slice(0, 23))
    assert float(scan["scan_size"][0]) == 64.0 and float(scan["scan_latency_avg"][0]) == 19.408
    assert str(ds["scan_file"].values[-1]) == "runs/req-histogram.txt"
    assert float(ds["scan_latency_avg"].values[-1]) == 43.659


def test_metadata_keeps_dates_as_written():
    meta = load_metadata(UDPMON)
    assert meta["dates"] == {"start": "2026-11-22T09:33:27Z", "end": "2026-11-22T09:34:46Z"}


def test_schema_error_names_file_and_line(mini):
    path = mini / "campaign.yaml"
    lines = path.read_text().splitlines()
    n = next(i for i, line in enumerate(lines) if "cpu_count:" in line)
    lines[n] = "    cpu_count: two"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError) as info:
        load_metadata(mini)
    assert info.value.line == n + 1
    assert info.value.path == str(path)
    assert "hosts/vm/cpu_count: 'two' is not of type 'integer', 'null'" in info.value.message


def test_schema_validator_leaves_out_the_iri_grammars_and_checks_as_before(tmp_path):
    """In a fresh process: campaign.yaml is checked without importing rfc3987_syntax (its
    lark grammars take seconds), which still imports afterwards for whoever wants it."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from thruput.campaign import load_metadata\n"
            "from thruput.campaign.dataset import schema_validator\n"
            f"load_metadata({str(UDPMON)!r})\n"
            "assert 'rfc3987_syntax' not in sys.modules\n"
            "errors = list(schema_validator().iter_errors({'name': 1}))\n"
            "assert errors, 'a bad campaign.yaml passed'\n"
            "import importlib.util\n"
            "if importlib.util.find_spec('rfc3987_syntax'): import rfc3987_syntax\n"
            "print('ok', len(errors))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok ")


def test_yaml_syntax_error_names_line(mini):
    (mini / "campaign.yaml").write_text("name: x\ntitle: [unclosed\n")
    with pytest.raises(ParseError) as info:
        load_metadata(mini)
    assert info.value.line == 3


def test_manifest_errors_list_every_bad_row(mini):
    path = mini / "runs.csv"
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace(",iperf,", ",iperf4,")                     # line 2
    lines[4] = lines[4].replace("w65536-s2-r0", "w65536-s3-r0")            # line 5
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError) as info:
        read_manifest(mini)
    assert [line for line, _ in info.value.errors] == [2, 5]
    assert "role 'iperf4'" in info.value.errors[0][1]
    assert "run id w65536-s3-r0 disagrees with window/streams/repeat 65536/2/0" in info.value.errors[1][1]


def test_check_sound_campaigns():
    assert check_campaign(MINI) == []
    assert check_campaign(UDPMON) == []


def test_check_missing_run_until_explained(mini):
    rows = (mini / "runs.csv").read_text().splitlines()
    kept = [r for r in rows if not r.startswith("w262144-s2-r1,")]
    assert len(rows) - len(kept) == 3
    (mini / "runs.csv").write_text("\n".join(kept) + "\n")
    problems = check_campaign(mini)
    errors = [p for p in problems if p.severity == "error"]
    assert [p.message for p in errors] == [
        "planned run w262144-s2-r1 lacks its iperf log and loaded ping and unloaded ping and is not explained"]
    assert errors[0].file == str(mini / "campaign.yaml")
    # the files are still there but no longer listed: warned about, not analysed
    assert sorted(Path(p.file).name for p in problems if p.severity == "warning") == [
        "w262144-s2-r1.iperf3.json", "w262144-s2-r1.loaded.ping", "w262144-s2-r1.unloaded.ping"]
    meta = (mini / "campaign.yaml").read_text().replace(
        "explained: []", 'explained:\n  - {run: w262144-s2-r1, reason: "test: dropped on purpose"}')
    (mini / "campaign.yaml").write_text(meta)
    assert [p for p in check_campaign(mini) if p.severity == "error"] == []
    ds = open_campaign(mini)
    assert np.isnan(float(ds["throughput"].sel(window=262144, streams=2, repeat=1)))
    assert str(ds["source"].sel(window=262144, streams=2, repeat=1).values) == ""
    assert np.isfinite(ds["throughput"].sel(window=262144, streams=2, repeat=0))


def test_check_reports_corrupted_raw_file(mini):
    victim = mini / "runs" / "w65536-s1-r1.iperf3.json"
    text = victim.read_text()
    victim.write_text(text[: len(text) // 2])            # a transfer cut off half way
    problems = check_campaign(mini)
    assert [p.file for p in problems] == [str(victim)] * 2     # its sha256 changed, and it is cut off
    assert problems[0].message.startswith("changed since it was recorded")
    assert "truncated" in problems[1].message
    assert {p.severity for p in problems} == {"error"}
    with pytest.raises(Exception, match="w65536-s1-r1.iperf3.json"):
        open_campaign(mini)


def test_check_reports_missing_file_and_wrong_kind(mini):
    (mini / "runs" / "w65536-s1-r0.unloaded.ping").unlink()
    rows = (mini / "runs.csv").read_text().replace(
        "runs/w65536-s2-r0.loaded.ping", "runs/w65536-s2-r0.iperf3.json", 1)
    (mini / "runs.csv").write_text(rows)
    messages = [str(p) for p in check_campaign(mini)]
    assert any(m.startswith(f"{mini / 'runs.csv'}:4: error: runs/w65536-s1-r0.unloaded.ping is listed but missing")
               for m in messages), messages
    assert any("read as iperf3_json (throughput), but runs.csv line 6 says ping (rtt)" in m
               for m in messages), messages
    assert any("w65536-s2-r0.loaded.ping: warning: not listed in runs.csv" in m for m in messages)


def test_check_cross_checks_streams_in_the_log(mini):
    rows = (mini / "runs.csv").read_text().splitlines()
    rows[1] = rows[1].replace("w65536-s1-r0.iperf3.json", "w65536-s2-r0.iperf3.json")
    (mini / "runs.csv").write_text("\n".join(rows) + "\n")
    messages = [p.message for p in check_campaign(mini)]
    assert "the log ran 2 streams; runs.csv line 2 says 1" in messages


def test_partial_file_is_a_warning_and_not_read(mini):
    (mini / "runs" / "w65536-s1-r0.iperf3.json.part").write_text('{"start": {')
    problems = check_campaign(mini)
    assert [(Path(p.file).name, p.severity) for p in problems] == [("w65536-s1-r0.iperf3.json.part", "warning")]
    assert open_campaign(mini).attrs["files_read"] == 24


def test_role_of_another_kind_is_an_error(mini):
    with open(mini / "runs.csv", "a") as f:
        f.write("bw,udpmon_bw,runs/w65536-s1-r0.loaded.ping,,,,,,\n")
    problems = check_campaign(mini)
    assert [(p.file, p.line, p.message) for p in problems] == [
        (str(mini / "runs.csv"), 26, "role udpmon_bw in a tcp_sweep campaign (iperf or ping expected)")]
    with pytest.raises(CampaignError, match="runs.csv:26: role udpmon_bw in a tcp_sweep campaign"):
        open_campaign(mini)
