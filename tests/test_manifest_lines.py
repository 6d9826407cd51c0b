"""Rows of runs.csv sent to workers as where they are (thruput.campaign.manifest_lines):
read back by the worker as the rows this process read, in store order, from a whole
runs.csv or an append's; a runs.csv changed meanwhile is an error by its lines, one
added to is not; and a runs.csv not read the usual way is sent as rows."""

from __future__ import annotations

import time

import pytest

from thruput.campaign import manifest_lines, regions, store
from thruput.campaign import monitor as mon
from thruput.errors import ThruputError

from .test_campaign_store import CAMPAIGN, copy, files

LINES = (CAMPAIGN / "runs.csv").read_text().splitlines(keepends=True)


def in_store_order(directory, start=0, text=None, at=None):
    rows, _ = mon.read_monitor_manifest(directory, start, text=text, at=at)
    return mon.in_time_order(rows)[0]


def sent_and_read(directory, index, rows, size):
    """Each unit of ``size`` of ``rows`` as the worker reads it, and how it was sent."""
    out = []
    for unit in regions.units(rows, size):
        lines = index.lines(unit.rows)
        out.append((lines, manifest_lines.read_lines(directory, lines) if lines is not None else None))
    return out


@pytest.mark.parametrize("order", ["in time order", "out of time order"])
def test_each_unit_is_read_back_as_its_rows_in_store_order(tmp_path, order):
    target = copy(tmp_path)
    if order == "out of time order":        # (every third row swapped with the one before)
        body = LINES[1:]
        for k in range(2, 20, 3):
            body[k], body[k - 1] = body[k - 1], body[k]
        (target / "runs.csv").write_text(LINES[0] + "".join(body))
    text = (target / "runs.csv").read_text()
    wanted = in_store_order(target)
    index = store._line_index(text, 0, None)
    for size in (1, 3, 8, 20):
        got = sent_and_read(target, index, wanted, size)
        assert all(lines is not None for lines, _ in got)
        assert [r for _, rs in got for r in rs] == wanted       # (each row's line too)
        if order == "out of time order" and size >= 3:
            assert any(lines.take is not None for lines, _ in got)
    assert sent_and_read(target, index, wanted, 20)[0][0].start == len(LINES[0])


def test_an_appends_rows_are_read_back_from_the_bytes_after_the_store(tmp_path):
    target = copy(tmp_path)
    size = len("".join(LINES[:13]).encode())        # the header and 12 stored rows
    after = mon.read_manifest_after(target, size)
    assert after.size == size
    wanted = in_store_order(target, 12, after.text, after.at)
    index = store._line_index(after.text, 12, after)
    got = sent_and_read(target, index, wanted, 3)
    assert [r for _, rs in got for r in rs] == wanted
    assert [r.line for r in wanted] == list(range(14, 22))
    assert got[0][0].start == size


def test_a_row_found_changed_is_an_error_by_its_lines_and_rows_added_are_not(tmp_path):
    target = copy(tmp_path)
    text = (target / "runs.csv").read_text()
    rows = in_store_order(target)
    lines = store._line_index(text, 0, None).lines(rows[8:16])
    with open(target / "runs.csv", "a") as f:       # (the recorder goes on adding rows)
        f.write(LINES[1].replace("000000-lo", "999999-lo"))
    assert manifest_lines.read_lines(target, lines) == rows[8:16]
    (target / "runs.csv").write_text(text.replace(",65536,", ",65537,"))    # (same length)
    with pytest.raises(ThruputError, match=r"runs.csv: lines 10-17 are not what was read"):
        manifest_lines.read_lines(target, lines)


def test_rows_that_the_column_reader_leaves_are_read_one_by_one(tmp_path, monkeypatch):
    target = copy(tmp_path)
    text = (target / "runs.csv").read_text()
    rows = in_store_order(target)
    lines = store._line_index(text, 0, None).lines(rows)
    monkeypatch.setattr(mon, "_split_rows", lambda body, first_line, at=0: None)
    assert manifest_lines.read_lines(target, lines) == rows


@pytest.mark.parametrize("change", ["carriage returns", "a reason of two lines", "not ASCII",
                                    "no last line end"])
def test_a_runs_csv_not_read_the_usual_way_is_sent_as_rows(change):
    text = "".join(LINES)
    text = {"carriage returns": text.replace("\n", "\r\n"),
            "a reason of two lines": "".join(LINES[:20]) + LINES[20].replace("killed after", '"killed\nafter').rstrip() + '"\n',
            "not ASCII": text.replace("lo,", "lö,", 1),
            "no last line end": text.rstrip("\n")}[change]
    assert store._line_index(text, 0, None) is None


def test_rows_spread_over_many_lines_are_sent_as_rows():
    text = "".join(LINES)
    rows, _ = mon.read_monitor_manifest(CAMPAIGN, text=text)
    index = store._line_index(text, 0, None)
    assert index.lines([rows[0], rows[19]]) is None         # (20 lines for 2 rows)
    assert index.lines([rows[0], rows[1]]).take is None
    assert index.lines([rows[1], rows[0]]).take.tolist() == [1, 0]


def test_on_a_cluster_workers_read_their_rows_from_runs_csv(tmp_path, monkeypatch):
    """The units go to the workers as lines of runs.csv: the store is the one this process
    writes, rows added to runs.csv meanwhile are left for the next append, and a stored
    row changed meanwhile stops the normalize by its lines, leaving no store."""
    from distributed import Client, LocalCluster

    monkeypatch.setattr(regions, "UNIT_ROWS", 8)
    monkeypatch.setattr(regions, "GUESS_UNITS", 1)
    read = mon.read_monitor_manifest
    after_read = []

    def reading(directory, *a, **k):
        out = read(directory, *a, **k)
        for change in after_read:
            change(directory)
        return out

    monkeypatch.setattr(mon, "read_monitor_manifest", reading)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=40) as cluster, Client(cluster) as client:
        target = copy(tmp_path, name="added")
        here, there = tmp_path / "here.zarr", tmp_path / "there.zarr"
        store.normalize_monitor(target, here)
        after_read.append(lambda d: (d / "runs.csv").open("a").write(LINES[1].replace("000000-lo", "999999-lo")))
        assert store.normalize_monitor(target, there, client=client)["runs"] == 20
        assert files(there) == files(here)
        changed = copy(tmp_path, name="changed")
        after_read[:] = [lambda d: (d / "runs.csv").write_text(
            "".join(LINES[:17]) + LINES[17].replace(",ok,", ",OK,") + "".join(LINES[18:]))]
        with pytest.raises(ThruputError, match=r"runs.csv: lines \d+-\d+ are not what was read"):
            store.normalize_monitor(changed, tmp_path / "changed.zarr", client=client)
        deadline = time.monotonic() + 30
        while client.who_has() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not client.who_has()
    assert not (tmp_path / "changed.zarr").exists()     # (its .part is written anew next time)
