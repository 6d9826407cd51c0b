"""Real piles imported as designs (../shared/corpus/real, skipped when absent): the
starlink-drive pile as operator x test x direction over time, and M-Lab ndt7 results in
their daily archives as server site x client network (the --pattern examples of
docs/design.md)."""

from __future__ import annotations

import gzip
import io
import json
import tarfile

import numpy as np
import pytest

import thruput
from thruput.campaign.check import check_campaign
from thruput.cli import main

pytestmark = pytest.mark.slow

DRIVE = "real/starlink-drive"
DRIVE_PATTERN = r"^(?P<operator>[^/]+)/[^/]+/[^/]+/(?P<test>tcp|udp|ping)(?:_(?P<direction>uplink|downlink))?_"
NDT7_PATTERN = r"mlab\d-(?P<site>[a-z0-9]+)-ndt/"


def test_the_drive_pile_is_operator_by_test_by_direction_over_time(corpus, tmp_path):
    files = sorted(p for p in (corpus / DRIVE).rglob("*") if p.is_file())
    assert main(["campaign", "import", "drive", str(corpus / DRIVE), "--root", str(tmp_path),
                 "--kind", "design", "--over-time", f"--pattern={DRIVE_PATTERN}"]) == 0
    directory = tmp_path / "drive"
    assert [p for p in check_campaign(directory) if p.severity == "error"] == []
    ds = thruput.open_campaign(directory)
    assert ds.attrs["design_time"] == 1 and dict(ds.sizes) == {"run": len(files)}
    factors = {f["name"]: f["levels"] for f in json.loads(ds.attrs["factors"])}
    assert factors == {"operator": ["att", "starlink", "verizon"], "test": ["ping", "tcp", "udp"],
                       "direction": ["downlink", "uplink"]}
    assert not np.isnat(ds.time.values).any()
    assert (np.diff(ds.time.values.astype(np.int64)) >= 0).all()           # in start order
    ping = ds.test.values == "ping"
    assert (ds.direction.values[ping] == "").all() and (ds.direction.values[~ping] != "").all()
    assert np.isfinite(ds.rtt_median.values[ping & (ds.outcome.values == "ok")]).all()
    udp = (ds.test.values == "udp") & (ds.outcome.values == "ok")
    assert udp.sum() > 0 and np.isfinite(ds.loss_fraction.values[udp]).all()
    # a run's numbers are its log's, read alone
    first = ds.isel(run=int(np.flatnonzero(udp)[0]))
    alone = thruput.read(directory / str(first.source.values))
    assert float(first.throughput) == float(alone.throughput.values[0])
    # each operator's median UDP downlink, as the logs give it
    medians = {op: float(np.median(ds.throughput.values[udp & (ds.operator.values == op)
                                                        & (ds.direction.values == "downlink")]))
               for op in factors["operator"]}
    assert all(v > 0 for v in medians.values())


def _tgz(path, members):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_mlab_archives_are_site_by_client_network(corpus, tmp_path):
    files = sorted((corpus / "real/ndt7").glob("ndt7-*.json"))
    pile = tmp_path / "in"
    pile.mkdir()
    # M-Lab's daily archives are named after the machine and site that served them
    _tgz(pile / "20200318T000000.000000Z-ndt7-mlab1-lga03-ndt.tgz",
         {f"2020/03/18/{f.name}.gz": gzip.compress(f.read_bytes()) for f in files if "2020" in f.name})
    _tgz(pile / "20221130T000000.000000Z-ndt7-mlab2-syd02-ndt.tgz",
         {f"2022/11/30/{f.name}.gz": gzip.compress(f.read_bytes()) for f in files if "2022" in f.name})
    (pile / "README.md").write_text("not a log\n")
    assert main(["campaign", "import", "mlab", str(pile), "--root", str(tmp_path),
                 f"--pattern={NDT7_PATTERN}", "--factor-from-log", "client_network,direction"]) == 0
    directory = tmp_path / "mlab"
    ds = thruput.open_campaign(directory)
    assert ds.attrs["campaign_kind"] == "design"
    assert ds.site.values.tolist() == ["lga03", "lga03", "syd02"]
    assert ds.client_network.values.tolist() == ["86.188.171.0/24", "192.168.0.0/24", "2a01:cb08:1a7::/48"]
    assert ds.direction.values.tolist() == ["reverse", "forward", "reverse"]       # download, upload
    for run in ds.run.values:
        one = ds.sel(run=run)
        assert float(one.throughput) == float(thruput.read(directory / str(one.source.values)).throughput.values[0])
    assert "skipped 1 files" in thruput.campaign.load_metadata(directory)["notes"]


def test_the_pile_as_found_keeps_every_test_and_skips_the_rest(corpus, tmp_path):
    """starlink-drive-as-found: the logs beside traceroute, nslookup and CSV exports; a
    ping with 100 % loss dated by its wrapper's Start time."""
    pile = corpus / "real/starlink-drive-as-found"
    files = sorted(p for p in pile.rglob("*") if p.is_file())
    logs = [p for p in files if p.suffix == ".out" and p.name.startswith(("tcp_", "udp_", "ping_"))]
    assert main(["campaign", "import", "found", str(pile), "--root", str(tmp_path), "--kind", "design",
                 "--over-time", "--pattern=(?P<operator>att|starlink|verizon)/[^/]+/[^/]+/"
                 "(?P<test>tcp|udp|ping)(?:_(?P<direction>uplink|downlink))?_"]) == 0
    directory = tmp_path / "found"
    ds = thruput.open_campaign(directory)
    assert dict(ds.sizes) == {"run": len(logs)}
    notes = thruput.campaign.load_metadata(directory)["notes"]
    # every file that is not a test log is counted with its reason (traceroutes are read as
    # routes, which are no run of a design; CSV exports and nslookup outputs are no log)
    assert f"skipped {len(files) - len(logs)} files (" in notes and "a route log (traceroute)" in notes
    lost = ds.sel(run=ds.run.values[ds.source.values == "runs/att/20240528/143956363/ping_144449733.out"][0])
    assert str(lost.time.values)[:23] == "2024-05-28T18:44:49.745" and float(lost.ping_loss) == 1.0
