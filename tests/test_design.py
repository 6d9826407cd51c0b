"""Designs (docs/design.md, "Designs"): the design of every kind of campaign, a design's
campaign.yaml and runs.csv, and its Dataset, read from the recorded loopback pile of
tests/data/designs/loopback-cc (record.sh beside it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import thruput
from thruput.campaign.check import check_campaign
from thruput.campaign.design import (
    DESIGN_COLUMNS,
    Design,
    Factor,
    design_of,
    design_of_dataset,
    design_run_id,
    parse_design_manifest,
    safe_level,
    with_levels,
)
from thruput.campaign.metadata import load_metadata
from thruput.cli import main
from thruput.errors import ContractError, ParseError

HERE = Path(__file__).parent
PILE = HERE / "data" / "designs" / "loopback-cc"
RAW = HERE.parent / "data" / "raw"
PATTERN = r"cc-(?P<cc>\w+?)_buf-(?P<socket_buffer>\d+)_r(?P<repeat>\d+)"


def _import(tmp_path, *extra, name="lc"):
    files = sorted(str(p) for p in PILE.glob("cc-*.json"))
    assert main(["campaign", "import", name, *files, "--root", str(tmp_path),
                 f"--pattern={PATTERN}", *extra]) == 0
    return tmp_path / name


def _log_rate(path):
    return json.loads(Path(path).read_text())["end"]["sum_received"]["bits_per_second"]


# -- the design of every kind -------------------------------------------------------------

def test_every_bundled_campaign_has_a_design():
    sweep = design_of(load_metadata(RAW / "veth-1g"))
    assert sweep.kind == "tcp_sweep" and sweep.time is False and sweep.replicate == "repeat"
    assert sweep.names == ("window", "streams", "phase")
    window, streams, phase = sweep.factors
    assert (window.units, window.ordered, streams.units, streams.ordered) == ("byte", True, "count", True)
    assert window.levels == tuple(sorted(load_metadata(RAW / "veth-1g")["plan"]["windows"]))
    assert phase.levels == ("loaded", "unloaded") and phase.scope == "ping" and not phase.numeric
    udp = design_of(load_metadata(RAW / "udpmon-veth-500m"))
    assert udp.names == ("spacing", "packet_size") and udp.replicate is None
    assert [f.units for f in udp.factors] == ["us", "byte"]
    mon = design_of(load_metadata(RAW / "netns-wan-monitor"))
    assert mon.time is True and mon.kind == "monitor"
    assert mon.names == ("path", "direction", "test", "socket_buffer", "size", "rate")
    assert mon.factor("socket_buffer").levels == (65536, 1048576)
    assert mon.factor("size").levels == (108, 1480)
    assert mon.factor("direction").levels == ("forward", "reverse")
    with pytest.raises(KeyError, match="no factor 'cc'"):
        mon.factor("cc")


def test_a_declared_design_and_its_run_ids():
    meta = {"kind": "design", "time": True,
            "factors": [{"name": "cc", "levels": ["reno", "bbr"], "applied": "iperf3 -C"},
                        {"name": "mtu", "levels": [1500, 9000]},
                        {"name": "buf", "units": "byte", "ordered": False}]}
    d = design_of(meta)
    assert d.time and d.names == ("cc", "mtu", "buf")
    assert d.factor("mtu").units == "1" and d.factor("mtu").ordered       # numbers: numeric, ordered
    assert not d.factor("buf").ordered and d.factor("cc").applied == "iperf3 -C"
    filled = with_levels(d, {"cc": ["cubic", "reno"], "buf": [4096.0, 1024.0, np.nan]})
    assert filled.factor("cc").levels == ("reno", "bbr", "cubic")          # declared first
    assert filled.factor("buf").levels == (1024, 4096)
    assert design_run_id(["bbr", 65536.0, "a b/c"], 2) == "bbr-65536-a_b_c-r2"
    assert safe_level(1.5) == "1.5" and safe_level("") == "_"
    assert json.loads(d.to_json())[0] == {"name": "cc", "levels": ["reno", "bbr"], "units": None,
                                          "ordered": False, "from": None, "applied": "iperf3 -C"}


def test_factor_names_that_collide_are_refused(tmp_path):
    directory = tmp_path / "c"
    directory.mkdir()
    base = ("name: c\ntitle: t\ndescription: d\nkind: design\ndates: {start: '2026-01-01'}\n"
            "hosts: {a: {}}\nfactors:\n")
    (directory / "campaign.yaml").write_text(base + "  - {name: cc}\n  - {name: throughput}\n"
                                             "  - {name: cc}\n  - {name: buf, units: byte, levels: [a]}\n")
    with pytest.raises(ParseError) as info:
        load_metadata(directory)
    assert [line for line, _ in info.value.errors] == [9, 10, 11]
    messages = " | ".join(m for _, m in info.value.errors)
    assert "'throughput' is taken" in messages and "'cc' is declared twice" in messages
    assert "has numbers for levels" in messages
    (directory / "campaign.yaml").write_text(base + "  - {name: 2x}\n")
    with pytest.raises(ParseError, match="factors/0/name"):
        load_metadata(directory)
    (directory / "campaign.yaml").write_text(base.replace("factors:\n", ""))
    with pytest.raises(ParseError, match="'factors' is a required property"):
        load_metadata(directory)


# -- a design's runs.csv and Dataset ------------------------------------------------------

def test_the_imported_pile_opens_as_a_design(tmp_path):
    directory = _import(tmp_path, "--factor-spec", "socket_buffer:byte:ordered")
    meta = load_metadata(directory)
    assert meta["kind"] == "design" and meta["time"] is False
    assert [f["name"] for f in meta["factors"]] == ["cc", "socket_buffer"]
    header = (directory / "runs.csv").read_text().splitlines()[0]
    assert header == ",".join(DESIGN_COLUMNS + ("cc", "socket_buffer"))
    ds = thruput.open_campaign(directory)
    assert ds.attrs["campaign_kind"] == "design" and ds.attrs["design_time"] == 0
    assert dict(ds.sizes) == {"run": 8}
    assert sorted(ds.coords) == ["cc", "repeat", "run", "socket_buffer", "time"]
    assert ds.socket_buffer.dtype == np.int64 and ds.socket_buffer.attrs["units"] == "byte"
    assert ds.cc.dtype.kind == "U" and set(ds.cc.values) == {"reno", "cubic"}
    assert not np.isnat(ds.time.values).any() and ds.time.dtype == "datetime64[ns]"
    factors = json.loads(ds.attrs["factors"])
    assert [(f["name"], f["levels"], f["units"], f["ordered"], f["from"]) for f in factors] == [
        ("cc", ["cubic", "reno"], None, False, "pattern"),
        ("socket_buffer", [65536, 1048576], "byte", True, "pattern")]
    # each run's throughput is its log's own receiver rate, bit for bit
    for run in ds.run.values:
        one = ds.sel(run=run)
        assert str(one.source.values) == f"runs/cc-{one.cc.values}_buf-{int(one.socket_buffer)}_r{int(one.repeat)}.json"
        assert float(one.throughput) == _log_rate(directory / str(one.source.values))
        assert run == f"{one.cc.values}-{int(one.socket_buffer)}-r{int(one.repeat)}"
    assert (ds.outcome.values == "ok").all() and np.isnan(ds.rtt_median.values).all()
    assert ds.attrs["files_read"] == 8 and ds.attrs["lines_parsed"] == ds.attrs["lines_total"]
    assert ds.throughput.attrs["units"] == "bit/s" and ds.rtt_median.attrs["units"] == "ms"
    assert thruput.validate(ds) is ds
    again = design_of_dataset(ds)
    assert again.names == ("cc", "socket_buffer") and again.time is False
    assert again.factor("socket_buffer") == Factor("socket_buffer", (65536, 1048576), "byte", True, "pattern")
    assert check_campaign(directory) == [p for p in check_campaign(directory) if p.severity == "warning"]


def test_validate_finds_the_design_check_in_a_fresh_process(tmp_path):
    directory = _import(tmp_path)
    out = tmp_path / "lc.nc"
    assert main(["pipeline", "normalize", str(directory), str(out)]) == 0
    code = ("import sys, xarray as xr, thruput\n"
            "ds = xr.open_dataset(sys.argv[1]).load()\n"
            "assert 'thruput.design.dataset' not in sys.modules\n"
            "ds = ds.assign(throughput=ds.throughput.assign_attrs(units='Mbit/s'))\n"
            "try:\n    thruput.validate(ds)\nexcept thruput.ThruputError as e:\n    print(e)\n")
    result = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True)
    assert "design campaign lc: 'throughput' has units 'Mbit/s', expected 'bit/s'" in result.stdout, result.stderr
    stored = thruput.open_campaign(out)
    fresh = thruput.open_campaign(directory)
    xr.testing.assert_identical(stored, fresh)


def test_a_ping_beside_the_runs_and_log_factors(tmp_path):
    files = [str(p) for p in sorted(PILE.glob("*"))]
    skipped_before = len(files) - 9                   # notes.csv, record.sh
    assert main(["campaign", "import", "lc", *files, "--root", str(tmp_path),
                 f"--pattern={PATTERN}|ping", "--factor-from-log", "cc,size,protocol",
                 "--factor", "host=lo"]) == 0
    meta = load_metadata(tmp_path / "lc")
    assert f"skipped {skipped_before} files" in meta["notes"]
    ds = thruput.open_campaign(tmp_path / "lc")
    assert list(json.loads(ds.attrs["factors"])[i]["name"] for i in range(5)) == [
        "cc", "socket_buffer", "host", "size", "protocol"]
    ping = ds.sel(run=ds.run.values[ds.protocol.values == "icmp"][0])
    assert int(ping.size) == 56 and str(ping.cc.values) == "" and np.isnan(float(ping.socket_buffer))
    assert float(ping.ping_transmitted) == 5 and 0 < float(ping.rtt_median) < 1
    assert np.isnan(float(ping.throughput))
    assert set(ds.host.values) == {"lo"}
    runs = ds.sel(run=ds.protocol.values == "tcp")
    assert set(runs.cc.values) == {"reno", "cubic"} and runs.socket_buffer.attrs["units"] == "byte"


def test_check_names_every_bad_cell(tmp_path):
    directory = _import(tmp_path, "--factor-spec", "socket_buffer:byte")
    text = (directory / "runs.csv").read_text().splitlines()
    cells = text[2].split(",")
    cells[8] = "vegas"                      # not a declared level of cc
    text[2] = ",".join(cells)
    cells = text[3].split(",")
    cells[9] = "64K"                        # not a number
    text[3] = ",".join(cells)
    (directory / "runs.csv").write_text("\n".join(text) + "\n")
    first = sorted(directory.glob("runs/*.json"))[0]
    first.write_bytes(first.read_bytes() + b"\n")
    problems = [p for p in check_campaign(directory) if p.severity == "error"]
    messages = [(p.line, p.message) for p in problems]
    assert (3, "cc 'vegas' is not one of its levels cubic, reno") in messages
    assert (4, "socket_buffer '64K' is not a number (byte)") in messages
    assert any("changed since it was recorded" in m for _, m in messages)
    rows, errors, _ = parse_design_manifest(directory, design_of(load_metadata(directory)))
    assert len(rows) == 6 and [line for line, _ in errors] == [3, 4]


def test_a_design_without_runs_and_a_bad_header(tmp_path):
    directory = _import(tmp_path)
    (directory / "runs.csv").write_text(",".join(DESIGN_COLUMNS + ("cc", "socket_buffer")) + "\n")
    ds = thruput.open_campaign(directory)
    assert dict(ds.sizes) == {"run": 0} and "cc" in ds.coords
    (directory / "runs.csv").write_text(",".join(DESIGN_COLUMNS + ("cc",)) + "\n")
    with pytest.raises(ParseError, match="header must be run,role,path,sha256,started,repeat,"
                                         "outcome,reason,cc,socket_buffer"):
        thruput.open_campaign(directory)


def test_validate_design_lists_what_is_wrong(tmp_path):
    from thruput.design.dataset import validate_design

    ds = thruput.open_campaign(_import(tmp_path))
    bad = ds.drop_vars("cc").assign(outcome=("run", np.array(["ok"] * 7 + ["lost"])))
    with pytest.raises(ContractError, match="missing coordinate 'cc'"):
        validate_design(bad)
    with pytest.raises(ContractError, match=r"outcome has values \['lost'\]"):
        validate_design(ds.assign(outcome=ds.outcome.copy(data=np.array(["ok"] * 7 + ["lost"]))))
    timed = ds.assign_coords(time=ds.time.copy(data=np.full(8, np.datetime64("NaT", "ns")))).assign_attrs(design_time=1)
    with pytest.raises(ContractError, match="runs without a start"):
        validate_design(timed)


def test_the_bundled_campaigns_keep_their_datasets():
    """Designs add nothing to the other kinds' Datasets (their products stay byte-equal)."""
    ds = thruput.open_campaign(RAW / "delay-40ms")
    assert ds.attrs["campaign_kind"] == "tcp_sweep"
    assert "factors" not in ds.attrs and "design_time" not in ds.attrs
    assert design_of_dataset(ds).names == ("window", "streams", "phase")


def test_design_and_factor_are_plain_data():
    f = Factor("cc", ("reno",))
    d = Design((f,), time=False)
    assert d.names == ("cc",) and not f.numeric and d.replicate == "repeat"
    from dataclasses import FrozenInstanceError

    with pytest.raises(FrozenInstanceError):
        f.name = "x"


def test_nuttcp_direction_and_protocol_from_the_logs(tmp_path):
    """nuttcp -r (the server sends: reverse) and -u read from the recorded samples; a cut
    log is a failed run with the reader's reason; a README is skipped."""
    nuttcp = HERE / "data" / "nuttcp"
    files = [nuttcp / f"6.1.2--{n}.out" for n in ("tcp-i-v", "tcp-r-v", "udp-i", "truncated-v")]
    assert main(["campaign", "import", "nt", *map(str, files), str(nuttcp / "README.md"),
                 "--root", str(tmp_path), "--factor-from-log", "direction,protocol"]) == 0
    ds = thruput.open_campaign(tmp_path / "nt")
    by_file = {Path(str(s)).name: i for i, s in enumerate(ds.source.values)}
    got = {name: (str(ds.direction.values[i]), str(ds.protocol.values[i]), str(ds.outcome.values[i]))
           for name, i in by_file.items()}
    assert got == {"6.1.2--tcp-i-v.out": ("forward", "tcp", "ok"),
                   "6.1.2--tcp-r-v.out": ("reverse", "tcp", "ok"),
                   "6.1.2--udp-i.out": ("forward", "udp", "ok"),
                   "6.1.2--truncated-v.out": ("forward", "tcp", "ok")}     # cut, its intervals kept
    cut = by_file["6.1.2--truncated-v.out"]
    # a cut run keeps what it measured (its intervals' rate), flagged by its reason
    cut_log = thruput.read(files[[f.name for f in files].index("6.1.2--truncated-v.out")])
    assert str(ds.reason.values[cut]).startswith("log cut off, what it measured is kept:")
    assert float(ds.throughput.values[cut]) == float(cut_log.throughput.values[0])
    ok = by_file["6.1.2--udp-i.out"]
    assert float(ds.throughput.values[ok]) == float(thruput.read(files[2]).throughput.values[0])
    assert "skipped 1 files (1 not a log)" in load_metadata(tmp_path / "nt")["notes"]


def test_a_new_design_template_passes_its_check(tmp_path):
    assert main(["campaign", "new", "dz", "--root", str(tmp_path), "--kind", "design"]) == 0
    directory = tmp_path / "dz"
    assert (directory / "runs.csv").read_text() == ",".join(DESIGN_COLUMNS + ("cc", "socket_buffer")) + "\n"
    problems = check_campaign(directory)
    assert problems and all(p.severity == "warning" and "TODO" in p.message for p in problems)
    assert dict(thruput.open_campaign(directory).sizes) == {"run": 0}
    text = (directory / "campaign.yaml").read_text().replace("name: socket_buffer", "name: mtu")
    (directory / "campaign.yaml").write_text(text)
    errors = [p for p in check_campaign(directory) if p.severity == "error"]
    assert [(p.line, p.message[:59]) for p in errors] == [
        (1, "header must be run,role,path,sha256,started,repeat,outcome,")]
