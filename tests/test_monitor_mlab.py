"""`thruput campaign import --kind monitor` on M-Lab's daily archives: a .tgz of .json.gz
ndt7 results (built here from the genuine results of ../shared/corpus/real/ndt7, never
copied into the project) and plain .json files; archive members read safely."""

from __future__ import annotations

import csv
import gzip
import io
import tarfile

import pytest
import yaml

from thruput.campaign.check import check_campaign
from thruput.cli import main
from thruput.errors import ThruputError
from thruput.monitor import importer

NDT7 = "real/ndt7"


def _rows(directory):
    with open(directory / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


def _tgz(path, members):
    """A gzip'd tar of ``{name: bytes}`` (M-Lab's daily archive layout)."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_a_daily_archive_and_a_plain_result_make_a_monitor_campaign(corpus, tmp_path, capsys):
    files = sorted((corpus / NDT7).glob("ndt7-*.json"))
    assert len(files) == 3
    archive = tmp_path / "in" / "2020" / "03" / "18"
    archive.mkdir(parents=True)
    # the two 2020-03-18 results (a download and an upload) as M-Lab archives them, the
    # 2022 download as a plain .json beside the archive
    _tgz(archive / "20200318T000000.000000Z-ndt7-mlab1-knwp4-ndt.tgz",
         {f"2020/03/18/{f.name}.gz": gzip.compress(f.read_bytes()) for f in files if "2020" in f.name})
    (archive / files[1].name).write_bytes(files[1].read_bytes())
    assert main(["campaign", "import", "--kind", "monitor", "--root", str(tmp_path), "mlab",
                 str(tmp_path / "in")]) == 0
    directory = tmp_path / "mlab"
    rows = _rows(directory)
    assert [r["started"][:19] for r in rows] == ["2020-03-18T00:06:57", "2020-03-18T00:13:52",
                                                  "2022-11-30T23:07:35"]  # StartTime, not the name
    assert [r["direction"] for r in rows] == ["reverse", "forward", "reverse"]
    assert {r["tool"] for r in rows} == {"ndt7"} and {r["test"] for r in rows} == {"tcp"}
    assert rows[0]["path"].startswith("runs/2020/03/18/20200318T000000.000000Z-ndt7-mlab1-knwp4-ndt/2020/03/18/")
    assert rows[0]["path"].endswith(".json.gz") and (directory / rows[0]["path"]).is_file()
    assert all(r["outcome"] == "ok" for r in rows)
    # the path names client and server (the addresses of the results, without ports)
    import thruput

    ds = thruput.read(directory / rows[0]["path"])
    client = str(ds.ndt7_client.values[0]).rsplit(":", 1)[0].strip("[]")
    server = str(ds.ndt7_server.values[0]).rsplit(":", 1)[0].strip("[]")
    assert rows[0]["run"].split("-")[1] == importer.NAME_BAD.sub("_", f"{client}_{server}")
    meta = yaml.safe_load((directory / "campaign.yaml").read_text())
    assert meta["kind"] == "monitor" and server in [p["address"] for p in meta["paths"]]
    assert not [p for p in check_campaign(directory) if p.severity == "error"]
    # the campaign's throughput is ndt7's of each result (StartTime order)
    camp = thruput.open_campaign(directory)
    want = [float(thruput.read(directory / r["path"]).throughput[0]) for r in rows]
    assert camp.throughput.values.tolist() == want
    assert round(want[0] / 1e6, 2) == 38.71 and round(want[2] / 1e6, 2) == 76.66


@pytest.mark.parametrize("name", ["../evil.json", "/etc/evil.json", "a/../../evil.json"])
def test_a_member_named_outside_the_archive_is_refused(tmp_path, name):
    archive = _tgz(tmp_path / "bad.tgz", {name: b"{}"})
    with pytest.raises(ThruputError, match="outside the archive"):
        importer.import_monitor("x", [archive], root=tmp_path / "root")
    assert not (tmp_path / "evil.json").exists() and not (tmp_path / "root" / "x").exists()


def test_a_link_member_is_refused(tmp_path):
    path = tmp_path / "link.tgz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("passwd.json")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(info)
    with pytest.raises(ThruputError, match="link or device"):
        importer.import_monitor("x", [path], root=tmp_path / "root")


def test_decompression_is_bounded(tmp_path, monkeypatch):
    archive = _tgz(tmp_path / "bomb.tgz", {"zeros.json": b"0" * (3 * 2**20)})
    assert archive.stat().st_size < 2**15
    monkeypatch.setattr(importer, "ARCHIVE_MEMBER_BYTES", 2**20)
    with pytest.raises(ThruputError, match="bomb"):
        importer.import_monitor("x", [archive], root=tmp_path / "root")


def test_a_damaged_archive_is_a_thruput_error(tmp_path):
    path = tmp_path / "cut.tgz"
    data = _tgz(tmp_path / "whole.tgz", {f"{i}.json": bytes(range(256)) * 400 for i in range(4)}).read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ThruputError, match="not a readable tar archive"):
        importer.import_monitor("x", [path], root=tmp_path / "root")
