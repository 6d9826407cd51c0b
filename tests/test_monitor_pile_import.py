"""`thruput campaign import --kind monitor` of a real pile as the measurement scripts left it:
every test kept, every file that is not a test log skipped with a count (or kept as
ancillary data), each run dated by its own log, and `thruput campaign check` passing."""

from __future__ import annotations

import csv
import re
import shutil

import numpy as np
import pytest
import yaml

from thruput.campaign.check import check_campaign
from thruput.cli import main
from thruput.monitor.importer import import_pile

from .conftest import DATA

AS_FOUND = "real/starlink-drive-as-found"
OPERATOR = "^(?P<path>[^/]+)/"
#: The wrapper's Start time / End time lines (epoch ms, UTC).
WRAPPER = re.compile(r"(?m)^(Start|End) time: (\d+)$")


def rows(directory):
    with open(directory / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


def _span(path):
    """(Start time, End time) of a wrapped log, datetime64[ms]."""
    found = dict(WRAPPER.findall(path.read_text()))
    return tuple(np.datetime64(int(found[k]), "ms") for k in ("Start", "End"))


def _started(row):
    return np.datetime64(row["started"].removesuffix("Z"), "ms")


@pytest.fixture
def as_found(corpus):
    pile = corpus / AS_FOUND
    if not pile.is_dir():
        pytest.skip(f"{AS_FOUND} not present")
    return pile


def test_the_as_found_pile_keeps_every_test_and_skips_every_other_file(as_found, tmp_path, capsys):
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path), "drive",
                 str(as_found), "--path-pattern", OPERATOR]) == 0
    out = capsys.readouterr().out
    tests = sorted(p.relative_to(as_found).as_posix() for p in as_found.rglob("*.out")
                   if re.match(r"(tcp|udp)_(up|down)link_|ping_", p.name))
    assert "imported 21 runs; kept 14 ancillary files: 7 DNS lookups, 7 route; " \
           "skipped 19 files that are not test logs: 19 csv export;" in out
    directory = tmp_path / "drive"
    got = rows(directory)
    assert sorted(r["path"].removeprefix("runs/") for r in got) == tests
    assert [p for p in check_campaign(directory) if p.severity == "error"] == []
    meta = yaml.safe_load((directory / "campaign.yaml").read_text())
    kept = sorted(a["path"] for a in meta["ancillary"])
    assert kept == sorted("ancillary/" + p.relative_to(as_found).as_posix() for p in as_found.rglob("*.out")
                          if p.name.startswith(("nslookup_", "traceroute_")))
    assert "19 csv export" in meta["notes"]
    # each run dated by its own log: within its wrapper's Start and End time (UTC), the
    # 100 %-loss ping (no reply, no time of its own) at its Start time
    for r in got:
        start, end = _span(as_found / r["path"].removeprefix("runs/"))
        assert start <= _started(r) <= end, r
    (lost,) = [r for r in got if r["path"].endswith("ping_144449733.out")]
    assert _started(lost) == _span(as_found / lost["path"].removeprefix("runs/"))[0]
    assert (lost["outcome"], lost["test"]) == ("ok", "ping")


def test_a_time_pattern_does_not_outrank_the_logs_own_times(as_found, tmp_path):
    folder = r"(?P<year>\d{4})(?P<month>\d\d)(?P<day>\d\d)/(?P<hour>\d\d)(?P<minute>\d\d)(?P<second>\d\d)"
    plain = import_pile("plain", [as_found], tmp_path, path_pattern=OPERATOR)
    timed = import_pile("timed", [as_found], tmp_path, path_pattern=OPERATOR, time_pattern=folder)
    assert (plain.runs, plain.skipped) == (timed.runs, timed.skipped)
    assert {r["path"]: r["started"] for r in rows(plain.directory)} == \
        {r["path"]: r["started"] for r in rows(timed.directory)}


def test_a_time_from_the_path_is_read_in_the_zone_given(tmp_path):
    """A log with no time of its own, in a folder named by the local time it ran."""
    pile = tmp_path / "pile" / "20240527" / "165752"
    pile.mkdir(parents=True)
    shutil.copy(DATA / "iperf3_text" / "3.12--tcp.txt", pile / "tcp_uplink.out")
    folder = r"(?P<year>\d{4})(?P<month>\d\d)(?P<day>\d\d)/(?P<hour>\d\d)(?P<minute>\d\d)(?P<second>\d\d)"
    east = import_pile("east", [tmp_path / "pile"], tmp_path, time_pattern=folder, tz="America/New_York")
    (row,) = rows(east.directory)
    assert row["started"] == "2024-05-27T20:57:52.000000Z"         # EDT: UTC-4
    utc = import_pile("utc", [tmp_path / "pile"], tmp_path, time_pattern=folder)
    (row,) = rows(utc.directory)
    assert row["started"] == "2024-05-27T16:57:52.000000Z"
    assert "as UTC (no --tz given)" in yaml.safe_load((utc.directory / "campaign.yaml").read_text())["notes"]


def test_a_pile_without_any_test_log_says_what_it_skipped(tmp_path):
    pile = tmp_path / "pile"
    pile.mkdir()
    (pile / "export.csv").write_text("time,rtt_ms\n2024-05-27T17:02:12,80.3\n")
    (pile / "empty.out").write_text("")
    (pile / "README.md").write_text("# drive test\nWhat the scripts wrote.\n")
    with pytest.raises(Exception, match=r"no test logs to import \(skipped: 1 README or notes, "
                                        r"1 empty file, 1 csv export\)"):
        import_pile("x", [pile], tmp_path / "root")


def test_the_description_given_on_import_is_in_campaign_yaml(tmp_path, capsys):
    pile = tmp_path / "pile" / "20240527"
    pile.mkdir(parents=True)
    shutil.copy(DATA / "iperf3_json" / "3.12--tcp.json", pile / "tcp_uplink.json")
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path / "raw"), "d",
                 str(tmp_path / "pile"), "--title", "Uplink of one host", "--who", "A. User",
                 "--between", "a home router", "--capacity", "5e7", "--notes", "Seen from the client."]) == 0
    meta = yaml.safe_load((tmp_path / "raw" / "d" / "campaign.yaml").read_text())
    assert (meta["title"], meta["who"]) == ("Uplink of one host", ["A. User"])
    assert [(p["between"], p["capacity_bps"]) for p in meta["paths"]] == [("a home router", 5e7)]
    assert meta["notes"].startswith("Seen from the client. ")


def test_the_page_says_the_routes_of_the_as_found_pile_did_not_change(as_found, tmp_path, capsys):
    """import -> normalize -> stats --routes -> the page's route table."""
    from thruput.report import load_product
    from thruput.report.monitor import monitor_route_changes

    import_pile("drive", [as_found], tmp_path, path_pattern=OPERATOR)
    assert main(["pipeline", "normalize", str(tmp_path / "drive"), str(tmp_path / "drive.zarr")]) == 0
    assert main(["pipeline", "stats", str(tmp_path / "drive.zarr"), str(tmp_path / "drive.stats.nc"),
                 "--routes", str(tmp_path / "drive")]) == 0
    product = load_product(tmp_path, "drive")
    assert product["route_changes"].attrs["routes_traced"] == 7
    assert monitor_route_changes(product).data == "*7 routes traced; no path's route changed.*"
