"""Every runs.csv path resolves inside its campaign folder: an absolute path, a ``..``
component or a symbolic link that leads out is refused by ``thruput campaign check``,
by ``open_campaign`` and by the monitor store's normalize, naming runs.csv and its line."""

from __future__ import annotations

import shutil

import pytest

import thruput
from thruput.campaign.layout import escapes, path_problem
from thruput.cli import main
from thruput.errors import ThruputError
from thruput.monitor.normalize import normalize_monitor

from .conftest import DATA, copy_campaign

MONITOR = DATA / "campaigns" / "monitor-loopback"
SWEEP = DATA / "campaigns" / "loopback-mini"


@pytest.mark.parametrize("rel, what", [("/etc/passwd", "is absolute"), ("../../etc/passwd", "goes up"),
                                       ("runs/../../x.json", "goes up"), ("C:/x.json", "is absolute")])
def test_paths_that_name_a_file_outside_are_refused_by_their_text(rel, what):
    assert what in path_problem(rel)


def test_paths_inside_pass():
    assert path_problem("") is None and path_problem("runs/a..b.json") is None
    assert escapes(MONITOR, "runs/2026-11-22/000000-lo-forward-tcp-b65536.json") is None


def edited(target, line, old, new):
    """runs.csv of ``target`` with ``old`` replaced by ``new`` in data ``line`` (2-based)."""
    lines = (target / "runs.csv").read_text().splitlines(keepends=True)
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new)
    (target / "runs.csv").write_text("".join(lines))


def first_path(target):
    return (target / "runs.csv").read_text().splitlines()[1].split(",")[2]


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink"])
def test_a_monitor_campaign_path_out_of_its_folder_is_refused(tmp_path, capsys, how):
    target = copy_campaign(MONITOR, tmp_path / "c")
    rel = first_path(target)
    outside = tmp_path / "outside.json"
    shutil.copy(target / rel, outside)          # the same bytes: the sha256 still matches
    if how == "dotdot":
        edited(target, 2, rel, "../../outside.json")
    elif how == "absolute":
        edited(target, 2, rel, str(outside))
    else:
        (target / rel).unlink()
        (target / rel).symlink_to(outside)
    assert main(["campaign", "check", str(target)]) == 1
    out = capsys.readouterr().out
    assert "runs.csv:2:" in out and ("leads out of the campaign folder" in out or "goes up" in out
                                     or "is absolute" in out)
    with pytest.raises(ThruputError, match=r"runs.csv:?.*2.*(leads out|goes up|is absolute)"):
        normalize_monitor(target, tmp_path / "m.zarr")
    assert not (tmp_path / "m.zarr").exists()


@pytest.mark.parametrize("how", ["dotdot", "symlink"])
def test_a_sweep_path_out_of_its_folder_is_refused(tmp_path, capsys, how):
    target = copy_campaign(SWEEP, tmp_path / "c")
    rel = first_path(target)
    outside = tmp_path / "outside.json"
    shutil.copy(target / rel, outside)
    if how == "dotdot":
        edited(target, 2, rel, "../../outside.json")
    else:
        (target / rel).unlink()
        (target / rel).symlink_to(outside)
    assert main(["campaign", "check", str(target)]) == 1
    out = capsys.readouterr().out
    assert "runs.csv:2:" in out and ("leads out of the campaign folder" in out or "goes up" in out)
    with pytest.raises(ThruputError, match="leads out|goes up"):
        thruput.open_campaign(target)


def test_a_symlink_inside_the_campaign_folder_is_read(tmp_path):
    target = copy_campaign(MONITOR, tmp_path / "c")
    rel = first_path(target)
    moved = target / "elsewhere.json"
    (target / rel).rename(moved)
    (target / rel).symlink_to(moved)
    assert normalize_monitor(target, tmp_path / "m.zarr")["runs"] == 20
