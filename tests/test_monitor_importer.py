"""`thruput campaign import --kind monitor` on genuine archives (../shared/corpus, not
copied), and `thruput campaign check` of monitor campaigns (gaps, files, rows)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import shutil

import numpy as np
import pytest
import yaml

import thruput
from thruput.campaign.check import check_campaign
from thruput.monitor.importer import time_from_pattern
from thruput.cli import main

from . import generated
from .conftest import DATA, ROOT

CAMPAIGN = DATA / "campaigns" / "monitor-loopback"
BASELINE = "real/intercloud/results/host-europe-west2-a_gcp/target-us-west1-a_gcp/baseline"


def rows(directory):
    with open(directory / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_intercloud_sessions_become_two_paths_with_the_gap_between_explained(corpus, tmp_path, capsys):
    archive = corpus / BASELINE
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path), "ic", str(archive),
                 "--path-pattern", r"baseline_(?P<path>host_target|target_host)_direct"]) == 0
    assert "imported 20 runs" in capsys.readouterr().out
    directory = tmp_path / "ic"
    listed = rows(directory)
    # time and address from the iperf3 JSON itself (start.timestamp, connecting_to)
    first = json.loads((archive / "time-01-08-2021_19-15/baseline_host_target_direct_0.res").read_text())
    assert listed[0]["started"] == np.datetime_as_string(
        np.datetime64(first["start"]["timestamp"]["timesecs"], "s"), unit="us") + "Z"
    assert listed[0]["path"] == "runs/time-01-08-2021_19-15/baseline_host_target_direct_0.res"
    assert [r["slot"] for r in listed if r["path_name"] == "host_target"] == \
        ["0", "1", "2", "3", "4", "164", "165", "166", "167", "168"]
    meta = yaml.safe_load((directory / "campaign.yaml").read_text())
    assert [p["address"] for p in meta["paths"]] == [first["start"]["connecting_to"]["host"], "34.142.73.160"]
    assert meta["schedule"]["interval_s"] == 17.5
    assert meta["explained"] == [
        {"from": "2021-08-01T16:17:01Z", "to": "2021-08-01T17:03:12Z", "path": "host_target",
         "reason": "no log in the archive"},
        {"from": "2021-08-01T16:18:35Z", "to": "2021-08-01T17:04:36Z", "path": "target_host",
         "reason": "no log in the archive"}]
    problems = check_campaign(directory)
    assert [p.severity for p in problems] == ["warning"] * 4          # the TODOs to fill in
    ds = thruput.open_campaign(directory)
    assert float(ds["throughput"][0]) == first["end"]["sum_received"]["bits_per_second"]
    # without the explanation, the gap is a warning naming the slots and when they were due
    meta["explained"] = meta["explained"][1:]
    (directory / "campaign.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    gaps = [str(p) for p in check_campaign(directory) if "did not run" in p.message]
    assert gaps == [f"{directory / 'campaign.yaml'}:{gaps[0].split(':')[1]}: warning: path host_target: "
                    "159 slots (5-163, due 2021-08-01T16:17:01Z to 2021-08-01T17:03:11Z) did not run "
                    "and are not explained (gaps are data: the monitor page and stats.gap_report "
                    "list them)"]


def test_leo_ping_without_summary_keeps_its_probes_and_counts_the_silent_losses(corpus, tmp_path):
    directory = tmp_path / "leo"
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path), "leo",
                 str(corpus / "real/leo-ping"), "--path-pattern", "(?P<path>starlink)"]) == 0
    (row,) = rows(directory)
    assert (row["started"], row["test"], row["size"], row["outcome"]) == \
        ("2024-08-12T19:00:00.167948Z", "ping", "56", "ok")        # cut, but it kept its probes
    assert row["reason"] == ("log cut off, what it measured is kept: the run has no summary (cut off): "
                             "probes never printed are unknown")
    ds = thruput.open_campaign(directory)
    # about 10,000 replies and 337 probes lost, visible only as gaps in icmp_seq
    assert ds["ping_received"].item() == 10000 and ds["ping_transmitted"].item() == 10337
    # every probe kept, the silent losses too (ping's reader counts icmp_seq gaps as lost)
    assert ds.sizes["probe"] == 10337
    assert int((ds["rtt_status"] == "lost").sum()) == 337
    assert not [p for p in check_campaign(directory) if p.severity == "error"]


def test_leo_ping_path_from_its_header(corpus, tmp_path):
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path), "leo",
                 str(corpus / "real/leo-ping")]) == 0
    (row,) = rows(tmp_path / "leo")
    assert row["path_name"] == "fe80__200_5eff_fe00_101"       # ':' cannot be in a path name
    meta = yaml.safe_load((tmp_path / "leo" / "campaign.yaml").read_text())
    assert meta["paths"][0]["address"] == "fe80::200:5eff:fe00:101"
    assert meta["schedule"]["interval_s"] is None and meta["explained"] == []


@pytest.mark.parametrize("pattern, text, expected", [
    ("time-%d-%m-%Y_%H-%M", "a/time-01-08-2021_19-15/x.res", "2021-08-01T19:15"),
    (r"(?P<year>\d{4})(?P<month>\d\d)(?P<day>\d\d)-(?P<hour>\d\d)", "ping-20240812-19.txt", "2024-08-12T19:00"),
    (r"\.(?P<epoch>\d+)\.json$", "iperf.1723489200.json", "2024-08-12T19:00"),
])
def test_time_patterns(pattern, text, expected):
    assert time_from_pattern(pattern, text) == np.datetime64(expected, "ns")


def test_an_archive_log_with_no_time_needs_a_pattern(tmp_path, capsys):
    archive = tmp_path / "archive" / "20261122-1800"
    archive.mkdir(parents=True)
    shutil.copy(DATA / "ping" / "iputils--loopback-c5.out", archive / "ping.txt")   # no -D times
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path), "a", str(archive.parent)]) == 1
    assert "does not say when it ran; give --time-pattern" in capsys.readouterr().err
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path), "a", str(archive.parent),
                 "--time-pattern", "%Y%m%d-%H%M"]) == 0
    (row,) = rows(tmp_path / "a")
    assert (row["started"], row["path_name"], row["outcome"]) == ("2026-11-22T18:00:00.000000Z", "127.0.0.1", "ok")


def test_check_lists_bad_rows_missing_files_and_unlisted_ones(tmp_path):
    directory = tmp_path / CAMPAIGN.name
    shutil.copytree(CAMPAIGN, directory)
    assert check_campaign(directory) == []
    listed = rows(directory)
    (directory / listed[3]["path"]).unlink()
    (directory / "runs" / "stray.txt").write_text("x")
    text = (directory / "runs.csv").read_text().replace(",lo,reverse,tcp,", ",wan,reverse,tcp,", 1)
    (directory / "runs.csv").write_text(text)
    found = sorted(str(p).replace(str(directory), "") for p in check_campaign(directory))
    assert found == [
        "/runs.csv:3: error: path_name 'wan' is not a paths[].name of campaign.yaml",
        "/runs.csv:3: error: run id '000000-lo-reverse-tcp-b65536' does not match its columns "
        "('000000-wan-reverse-tcp-b65536')",
        f"/runs.csv:5: error: {listed[3]['path']} is listed but missing",
        "/runs/stray.txt: warning: not listed in runs.csv (not analysed)",
    ]


# -- a drive test's pile: nuttcp TCP and iperf3 UDP both ways, ping, through a timestamping
# wrapper (../shared/corpus/real/starlink-drive, and tests/data/wrapped/monitor-pile recorded
# by running the real tools through the same wrapper: record-monitor-pile.sh)

PILE = DATA / "wrapped" / "monitor-pile"
#: The operator is the first folder of each log's path relative to the folder given.
OPERATOR = "^(?P<path>[^/]+)/"


def _import_check_normalize_stats(tmp_path, source, capsys, name="pile"):
    """import -> check -> normalize -> stats; the rows of runs.csv and the product."""
    from thruput.report import monitor as page
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path), name,
                 str(source), "--path-pattern", OPERATOR]) == 0
    directory = tmp_path / name
    assert [p for p in check_campaign(directory) if p.severity == "error"] == []
    store = tmp_path / f"{name}.zarr"
    assert main(["pipeline", "normalize", str(directory), str(store)]) == 0
    assert main(["pipeline", "stats", str(store), str(tmp_path / f"{name}.stats.nc")]) == 0
    capsys.readouterr()
    return rows(directory), page.load_product(tmp_path, name)


def _direction_of(row):
    """What the file name of a drive test says: downlink = this host received."""
    name = row["path"].rsplit("/", 1)[-1]
    return {"downlink": "reverse", "uplink": "forward"}.get(name.split("_")[1] if "link" in name else "", "forward")


def test_a_recorded_pile_imports_with_directions_from_the_content(tmp_path, capsys):
    got, product = _import_check_normalize_stats(tmp_path, PILE, capsys)
    assert len(got) == 18
    assert {r["path_name"] for r in got} == {"a", "b"}
    assert {(r["test"], r["tool"]) for r in got} == {("tcp", "nuttcp"), ("udp", "iperf3"), ("ping", "ping")}
    for r in got:       # nuttcp -r / iperf3 -R ("Reverse mode"): this host received
        assert r["direction"] == _direction_of(r), r
    # the log with nothing but its wrapper's lines: a failed test at its Start time
    (failed,) = [r for r in got if r["outcome"] != "ok"]
    assert failed["path"].endswith(".out") and "/b/" in "/" + failed["path"]
    assert (failed["test"], failed["direction"], failed["tool"], failed["outcome"]) == \
        ("tcp", "reverse", "nuttcp", "error")
    assert failed["reason"] == ("the log holds only its wrapper's Start time/End time lines: "
                                "the test printed nothing")
    start = int((PILE / failed["path"].removeprefix("runs/")).read_text().split()[2])
    assert failed["started"] == np.datetime_as_string(np.datetime64(start, "ms"), "us") + "Z"
    assert product["gaps"].attrs["tests_failed"] == 1
    runs = product["runs"].to_dataframe()
    assert set(zip(runs["test"], runs["direction"])) >= {("tcp", "forward"), ("tcp", "reverse"),
                                                        ("udp", "forward"), ("udp", "reverse")}


def test_the_path_pattern_is_matched_against_the_relative_path(tmp_path, capsys):
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path), "x",
                 str(PILE), "--path-pattern", "^monitor-pile/(?P<path>[^/]+)/"]) == 1
    err = capsys.readouterr().err
    assert "does not match 'a/" in err and f"the file's path relative to {PILE}" in err
    help_text = io.StringIO()
    with contextlib.redirect_stdout(help_text), contextlib.suppress(SystemExit):
        main(["campaign", "import", "--help"])
    assert "relative to the folder given" in " ".join(help_text.getvalue().split())


def test_the_starlink_drive_sample_imports_checks_normalizes_and_builds_its_page(corpus, tmp_path, capsys):
    drive = corpus / "real" / "starlink-drive"
    if not drive.is_dir():
        pytest.skip("starlink-drive sample not present")
    got, product = _import_check_normalize_stats(tmp_path, drive, capsys, name="drive")
    assert {r["path_name"] for r in got} == {"att", "starlink", "verizon"}
    assert len(got) == sum(1 for p in drive.rglob("*") if p.is_file())
    for r in got:
        assert r["direction"] == _direction_of(r), r
    assert {r["tool"] for r in got if r["test"] == "tcp"} == {"nuttcp"}
    assert len({r["run"] for r in got}) == len(got)
    assert product["campaign"].attrs["runs"] == len(got)
    out = tmp_path / "page.ipynb"
    assert main(["site", "page", "notebooks/monitor.ipynb", str(out), "--root", str(ROOT),
                 "-p", "campaign=drive", "-p", f"processed={tmp_path}"]) == 0
    cells = json.loads(out.read_text())["cells"]
    assert [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"] == []
    health = generated.build_health_page("drive", tmp_path, tmp_path)       # (and its health page)
    assert [o for c in health.cells for o in c.get("outputs", []) if o.get("output_type") == "error"] == []


def test_without_a_path_pattern_a_wrapper_only_log_takes_its_folders_path(tmp_path, capsys):
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path), "lo", str(PILE)]) == 0
    got = rows(tmp_path / "lo")
    assert {r["path_name"] for r in got} == {"127.0.0.1"}      # what every log connected to
    (failed,) = [r for r in got if r["outcome"] != "ok"]
    assert failed["reason"].startswith("the log holds only its wrapper's")
    assert len({r["run"] for r in got}) == len(got)
    assert [p for p in check_campaign(tmp_path / "lo") if p.severity == "error"] == []
