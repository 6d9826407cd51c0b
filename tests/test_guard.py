"""thruput.guard and the files read through it (issue 57): each class of hostile file is
refused with a ThruputError naming the file (and line), or read, never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import thruput
from thruput import guard
from thruput.campaign.dataset import parse_manifest
from thruput.errors import FileRefused, ParseError, ReaderBug, ThruputError
from thruput.reader import read_bytes

from .conftest import DATA, ROOT
from .hostile_files import ALIAS_BOMB

SWEEP = DATA / "campaigns" / "loopback-mini"
PING = DATA / "ping" / "iputils--loopback-c5.out"


@pytest.fixture
def camp(tmp_path):
    return shutil.copytree(SWEEP, tmp_path / "loopback-mini")


# --- what a path can be ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder", "missing", "loop"])
def test_a_path_that_is_no_regular_file_is_refused_at_once_naming_it(tmp_path, kind):
    path = tmp_path / "log.out"
    if kind == "fifo":
        os.mkfifo(path)                     # nobody writes: an open without O_NONBLOCK hangs
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    elif kind == "loop":
        path.symlink_to(path)
    what = {"fifo": "a FIFO", "dev-zero": "a character device", "folder": "a folder",
            "missing": "No such file", "loop": "symbolic links"}[kind]
    for read in (thruput.read, lambda p: thruput.read_many([p])):
        with pytest.raises(FileRefused, match=what) as caught:
            read(path)
        assert caught.value.path == str(path)


def test_a_file_is_refused_past_its_limit_before_it_is_read(tmp_path):
    path = tmp_path / "big.out"
    path.write_bytes(PING.read_bytes())
    with open(path, "ab") as f:
        f.truncate(guard.LIMITS["log"] + 1)         # sparse: no disk, and never read
    start = time.perf_counter()
    with pytest.raises(FileRefused, match="past the 4.0 GiB limit of a log"):
        thruput.read(path)
    assert time.perf_counter() - start < 1


def test_a_file_outside_its_folder_is_refused_links_resolved(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x.yaml").write_text("a: 1\n")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "x.yaml").symlink_to(tmp_path / "out" / "x.yaml")
    with pytest.raises(FileRefused, match="outside"):
        guard.read_text(tmp_path / "in" / "x.yaml", "yaml", root=tmp_path / "in")
    assert guard.read_text(tmp_path / "out" / "x.yaml", "yaml", root=tmp_path) == "a: 1\n"
    assert not guard.inside(tmp_path / "in" / "x.yaml", tmp_path / "i")     # (a prefix is no folder)


def test_invalid_utf8_is_refused_with_its_line():
    with pytest.raises(FileRefused, match=r"^f\.yaml:3: not valid UTF-8 \(byte 0xe9"):
        guard.decode_utf8(b"a: 1\nb: 2\nwho: Jos\xe9\n", "f.yaml")
    assert guard.decode_utf8(b"\xef\xbb\xbfa: 1\n", "f.yaml") == "a: 1\n"


# --- YAML and JSON, bounded -------------------------------------------------------------


def test_a_yaml_alias_bomb_is_refused_at_once():
    start = time.perf_counter()
    with pytest.raises(FileRefused, match="expands to over 200,000 nodes"):
        guard.load_yaml("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + ALIAS_BOMB, "c.yaml")
    assert time.perf_counter() - start < 1
    data, _ = guard.load_yaml("a: &x [1, 2]\nb: *x\n")         # a few aliases are fine
    assert data == {"a": [1, 2], "b": [1, 2]}


@pytest.mark.parametrize("text, match", [
    ("a: &x [1, *x]\n", "refers to its own node"),
    ("a: " + "[" * 300 + "]" * 300 + "\n", "deeper than 200"),
    ("a: " + "[" * 5000 + "]" * 5000 + "\n", "not valid YAML"),                  # libyaml's own bound
    ("a: &s '" + "x" * 2**20 + "'\nb: [" + ", ".join(["*s"] * 20) + "]\n", "characters"),
])
def test_yaml_past_its_bounds_is_refused(text, match):
    with pytest.raises(ParseError, match=match):
        guard.load_yaml(text, "c.yaml")


def test_campaign_yaml_alias_bomb_in_notes_is_refused_naming_the_file(camp):
    text = (camp / "campaign.yaml").read_text()
    (camp / "campaign.yaml").write_text("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + ALIAS_BOMB
                                        + text.replace("\nnotes:", "\nnotes: *i\nx-notes:", 1))
    with pytest.raises(FileRefused, match="campaign.yaml:.*expands"):
        thruput.open_campaign(camp)


def test_campaign_yaml_in_latin1_is_refused_with_its_line(camp):
    text = (camp / "campaign.yaml").read_text()
    (camp / "campaign.yaml").write_bytes(text.replace("notes:", "who_else: Jos\xe9\nnotes:", 1).encode("latin-1"))
    line = text[:text.index("notes:")].count("\n") + 1
    with pytest.raises(FileRefused, match=rf"campaign.yaml:{line}: not valid UTF-8"):
        thruput.open_campaign(camp)


def test_fifty_thousand_schema_errors_are_capped(camp):
    with open(camp / "campaign.yaml", "a") as f:
        f.writelines(f"junk{i}: [{i}]\n" for i in range(50_000))
    start = time.perf_counter()
    with pytest.raises(ParseError, match="Additional properties") as caught:
        thruput.open_campaign(camp)
    assert time.perf_counter() - start < 30
    assert len(str(caught.value)) < 1000


def test_json_nested_5000_deep_is_a_clean_error_in_every_json_reader():
    from .hostile_files import JSON_FORMATS

    for name in JSON_FORMATS:
        for text in ("[" * 5000 + "]" * 5000, '{"start": ' + '{"a": ' * 5000 + "1" + "}" * 5001):
            with pytest.raises(ParseError) as caught:
                read_bytes(text.encode(), format=name, path=f"deep.{name}.json")
            assert not isinstance(caught.value, ReaderBug), caught.value
            assert caught.value.path == f"deep.{name}.json"
    with pytest.raises(FileRefused, match="nested too deep"):
        guard.load_json("[" * 5000 + "]" * 5000, "x.json")


# --- numbers from a file ----------------------------------------------------------------


@pytest.mark.parametrize("cell, match", [("²", "not a non-negative integer"),
                                         ("\u0661\u0662", "not a non-negative integer"),
                                         ("999999999", "past 100,000"),
                                         ("1" + "0" * 30, "not a non-negative integer")])
def test_runs_csv_repeat_cells_that_int_refuses_or_that_size_too_much(camp, cell, match):
    lines = (camp / "runs.csv").read_text().splitlines(keepends=True)
    cells = lines[1].split(",")
    cells[6] = cell
    lines[1] = ",".join(cells)
    (camp / "runs.csv").write_text("".join(lines))
    _, errors, _ = parse_manifest(camp)
    assert errors and errors[0][0] == 2 and match in errors[0][1]


def test_runs_csv_with_a_128_kib_header_cell_is_a_parse_error_naming_line_1(camp):
    text = (camp / "runs.csv").read_text()
    header, rest = text.split("\n", 1)
    (camp / "runs.csv").write_text(header + "," + "h" * (128 * 2**10 + 1) + "\n" + rest)
    with pytest.raises(ParseError, match=r"runs.csv:1: not a CSV row: field larger than field limit"):
        parse_manifest(camp)


def test_a_plan_of_a_billion_repeats_is_refused_by_the_schema(camp):
    text = (camp / "campaign.yaml").read_text()
    (camp / "campaign.yaml").write_text(text.replace("repeats: ", "repeats: 1000000000 #", 1))
    with pytest.raises(ParseError, match="plan/repeats: 1000000000 is greater than the maximum of 100000"):
        thruput.open_campaign(camp)


def test_bounded_int():
    assert guard.bounded_int("12", "repeat") == 12
    for bad in ("²", "١٢", "-1", "1e3", "", "100001"):
        with pytest.raises(ParseError, match="repeat"):
            guard.bounded_int(bad, "repeat", path="runs.csv", line=3)


# --- no quadratic step over counts a file controls --------------------------------------


def test_a_gap_to_slot_999999999_is_arithmetic():
    from thruput.stats.monitor import gap_report, uncovered_slots

    start = time.perf_counter()
    assert uncovered_slots(999_999_999, 0, 300, [(0, 300 * 10)]) == (999_999_988, 11, 999_999_998)
    ds = xr.Dataset({"outcome": ("run", np.array(["ok", "ok", "error"]))},
                    coords={"slot": ("run", np.array([0, 1, 99_999_999])),
                            "time": ("run", np.array(["2026-01-01T00:00:00", "2026-01-01T00:05:00",
                                                      "2026-01-02T00:00:00"], "datetime64[ns]"))})
    # (the missing slots are due between the two tests either side: 00:05 to 24:00)
    report = gap_report(ds, 1.0, explained=[{"from": "2026-01-01T00:00:00Z", "to": "2026-01-01T00:00:05Z",
                                             "reason": "before"}] * 3000
                        + [{"from": "2026-01-01T12:00:00Z", "to": "2026-01-01T12:00:05Z", "reason": "r"}])
    assert report.slots.values.tolist() == [99_999_997] and report.gap_reason.values.tolist() == ["r"]
    assert time.perf_counter() - start < 5


def test_explained_ranges_against_thousands_of_tests_by_bisection():
    from thruput.campaign.check import Problem
    from thruput.monitor.gaps import _check_gaps

    class Row:
        def __init__(self, k):
            self.path_name, self.slot, self.run = "p", k, f"r{k}"
            self.started = (pd.Timestamp("2026-01-01T00:00:00Z") + pd.Timedelta(minutes=5 * k)).isoformat()

    rows = [Row(k) for k in range(3000)]
    explained = [{"from": "2026-01-01T00:00:00Z", "to": "2026-01-01T01:00:00Z", "reason": f"x{i}"}
                 for i in range(3000)]
    start = time.perf_counter()
    problems = _check_gaps({"explained": explained}, None, rows, "c.yaml", Problem, lambda n, k: 1)
    assert len(problems) == 3000 and "13 tests ran then (e.g. r0)" in problems[0].message
    assert time.perf_counter() - start < 10


def test_a_tgz_of_20000_members_extracts_in_linear_time(tmp_path):
    import io
    import tarfile

    from thruput.monitor.importer import _extract

    source = tmp_path / "pile.tgz"
    with tarfile.open(source, "w:gz") as tar:
        for i in range(20_000):
            info = tarfile.TarInfo(f"d/{i}.out")
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    start = time.perf_counter()
    assert len(_extract(source, tmp_path / "x")) == 20_000
    assert time.perf_counter() - start < 60


# --- readers still -----------------------------------------------------------------------


def test_streamed_ping_line_past_the_limit_is_cut_not_held(tmp_path):
    from thruput import reader
    from thruput.contract import lenient

    path = tmp_path / "long.out"
    head = "".join(PING.read_text().splitlines(keepends=True)[:3])
    with open(path, "w") as f:
        f.write(head)
        f.writelines("y" * 2**20 for _ in range(reader.STREAM_BYTES // 2**20 + 4))
        f.write("\n")
    with pytest.raises(ParseError, match=r"long.out:4: unrecognised line: 'yyy"):
        thruput.read(path)
    with lenient(True):
        ds = thruput.read(path)
    assert ds.attrs["lines_total"] == 4 and '"unrecognised line": 1' in ds.attrs["skipped_reasons"]
    assert ds.sizes["probe"] == 2


def test_blank_lines_after_a_header_are_skipped_in_bulk():
    from thruput.formats import ping

    head = "".join(PING.read_text().splitlines(keepends=True)[:3])
    start = time.perf_counter()
    ds = ping.parse(head + "\n" * 3_000_000)
    assert time.perf_counter() - start < 30
    assert ds.attrs["lines_total"] == 3_000_003 and ds.sizes["probe"] == 2
    assert '"blank": 3000000' in ds.attrs["skipped_reasons"]


# --- output --------------------------------------------------------------------------------


def test_inspect_of_a_folder_with_a_non_utf8_name_prints_on_a_strict_stdout(tmp_path):
    shutil.copy(PING, tmp_path / os.fsdecode(b"log-\xff.out"))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONIOENCODING": "ascii:strict"}
    done = subprocess.run([sys.executable, "-m", "thruput.cli", "inspect", str(tmp_path)], check=False,
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"log-\\udcff.out: ping (rtt)" in done.stdout


def test_spreadsheet_cells_are_neutralised_in_csv_downloads(tmp_path):
    from thruput.site.datapackage import _csv_resource

    table = pd.DataFrame({"run": ['=HYPERLINK("http://x")', "w1-s1-r0", "@SUM(A1)", "+1", "-x"],
                          "v": [-1.5, 1.0, 2.0, 3.0, 4.0], "reason": ["-2.5", "", "\tx", "ok", "=1"]})
    _csv_resource("x", tmp_path / "x.csv", table)
    back = pd.read_csv(tmp_path / "x.csv", keep_default_na=False)
    assert back.run.tolist() == ["'=HYPERLINK(\"http://x\")", "w1-s1-r0", "'@SUM(A1)", "+1", "'-x"]
    assert back.v.tolist() == [-1.5, 1.0, 2.0, 3.0, 4.0]
    assert back.reason.astype(str).tolist() == ["-2.5", "", "'\tx", "ok", "'=1"]


def test_every_error_is_a_thruput_error():
    assert issubclass(FileRefused, ParseError) and issubclass(FileRefused, ThruputError)
