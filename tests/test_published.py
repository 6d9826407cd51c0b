"""thruput.published: the transcribed numbers load, validate, and quote their sources."""

import re
import shutil
from pathlib import Path

import pytest

from thruput import published

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


@pytest.fixture(scope="module")
def df():
    return published.load()


def test_row_counts(df):
    assert df.groupby("seed").size().to_dict() == {"000": 193, "001": 302, "002": 72, "003": 45, "004": 74}
    assert df["id"].is_unique


def test_seed_filter():
    assert set(published.load(seed=4)["seed"]) == {"004"}
    assert set(published.load(seed=["000", "3"])["seed"]) == {"000", "003"}


def test_exact_si_values(df):
    row = df.set_index("id")
    assert row.at["000-table-median-kangadata02", "value_si"] == 458e6
    assert row.at["000-table-median-kangadata02", "unit_si"] == "bit/s"
    assert row.at["000-table-median-kangadata03-r2", "value_si"] == 345.0  # the misprint, as printed
    assert row.at["001-370dle-32-slope", "value_si"] == pytest.approx(2.86e-8, rel=1e-12)
    assert row.at["004-cern-2.4-5-rmem_default", "value_si"] == pytest.approx(87380.0, abs=0.5)
    assert row.at["003-nton-peak", "window_bytes"] == 131072.0
    assert row.at["003-nton-peak", "streams"] == 25
    assert row.at["003-nton-peak", "host_pair"] == "SC2000 booth (Dallas)->SLAC"


def test_seed_000_table_is_complete(df):
    t = df[df["id"].str.startswith("000-table-")]
    # 8 columns x (avg Mbit, avg MByte, median, max, IQR, 3 RTT, loss, pings, start, end, cpus, clock, memory, os)
    assert len(t) == 8 * 16
    assert sorted(t.loc[t["measures"] == "start_time", "date"])[-1] == "2031-02-01T07:53"


def test_seed_001_apps_table_has_every_numeric_cell(df):
    apps = df[df["group"] == "001-apps"]
    # 44 printed numbers (iperf 12, bbcp 9, bbftp 10, apache 9, Gridftp 4), 8 of them
    # ranges such as "350-370" (two rows each)
    assert len(apps) == 44 + 8
    assert (apps["statistic"] == "range_low").sum() == 8


def test_config_frame(df):
    cfg = published.config_frame(df[df["group"] == "004-ping-september-1480"])
    assert set(cfg["month"]) == {"september"} and set(cfg["packet_size"]) == {"1480"}


def _norm(text):
    return re.sub(r"\s+", " ", text)


@pytest.mark.skipif(not SEEDS.is_dir(), reason="../shared/seeds not present")
def test_every_quote_is_verbatim(df):
    texts = {p.name[:3]: _norm(p.read_text(encoding="utf-8")) for p in SEEDS.glob("0*.txt")}
    missing = [(r.id, r.quote) for r in df.itertuples() if _norm(r.quote) not in texts[r.seed]]
    assert missing == []


def _broken_copy(tmp_path, old, new):
    src = published.DEFAULT_DIR / "seed_003.csv"
    text = src.read_text(encoding="utf-8")
    assert old in text
    (tmp_path / "seed_003.csv").write_text(text.replace(old, new, 1), encoding="utf-8")
    return tmp_path


def test_unknown_unit_names_file_and_line(tmp_path):
    path = _broken_copy(tmp_path, ",48.6,ms,", ",48.6,furlongs,")
    with pytest.raises(published.PublishedError, match=r"seed_003\.csv:\d+: '003-ping-min': unknown unit 'furlongs'"):
        published.load(path=path)


def test_bad_value_names_file_and_line(tmp_path):
    path = _broken_copy(tmp_path, ",48.6,ms,", ",48.6.1,ms,")
    with pytest.raises(published.PublishedError, match=r"seed_003\.csv:\d+: .*not a number"):
        published.load(path=path)


def test_duplicate_id(tmp_path):
    path = _broken_copy(tmp_path, "003-ping-max,", "003-ping-min,")
    with pytest.raises(published.PublishedError, match="duplicate id"):
        published.load(path=path)


def test_empty_directory(tmp_path):
    with pytest.raises(published.PublishedError, match="no seed_"):
        published.load(path=tmp_path)


def test_copy_loads_the_same(tmp_path):
    for f in published.DEFAULT_DIR.glob("seed_*.csv"):
        shutil.copy(f, tmp_path)
    assert len(published.load(path=tmp_path)) == len(published.load())


def test_default_dir_is_the_checkouts_data():
    """In a checkout the package's published numbers are data/published itself (a symlink)."""
    from .conftest import ROOT

    assert published.DEFAULT_DIR.resolve() == (ROOT / "data" / "published").resolve()


def test_default_dir_when_installed(tmp_path):
    """A copy of the package with no project around it (as pip installs it) still finds the numbers."""
    import subprocess
    import sys

    import thruput

    site = tmp_path / "site-packages"
    shutil.copytree(Path(thruput.__file__).parent, site / "thruput", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = ("from thruput import published; d = published.DEFAULT_DIR; "
            "print(d); print(len(published.load()))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={"PYTHONPATH": str(site)},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(site / "thruput" / "studies" / "published"), "686"]
