"""thruput.reproduce: the ledger's derivations, pinned to hand-computed values."""

import pandas as pd
import pytest

from thruput import published, reproduce
from thruput.cli import main


@pytest.fixture(scope="module")
def pub():
    return published.load()


@pytest.fixture(scope="module")
def ledger(pub):
    return reproduce.build_ledger(pub).set_index("claim")


def test_one_row_per_figure(pub, ledger):
    assert list(ledger.index) == list(pub["id"])
    assert set(ledger["status"]) <= set(reproduce.STATUSES)
    assert ledger["note"].str.len().min() > 0  # every row says why


def test_summary_counts(ledger):
    s = reproduce.summary(ledger.reset_index())
    assert list(s.columns) == [*reproduce.STATUSES, "total"]
    assert s.loc["all", "total"] == 682
    assert s.loc["all", list(reproduce.STATUSES)].sum() == 682
    assert s.loc["all", "erratum"] == 16
    assert s.loc["all", "differs"] == 14


@pytest.mark.parametrize("claim, status, derived", [
    # seed 000: 426 Mbit/s (table) / 8 = 53.25 -> "53.3MBytes/sec"
    ("000-iperf-avg-mbyte", "reproduced", 53.25),
    ("000-iperf-32k-1s-mbyte", "reproduced", 21.25),
    ("000-iperf-64k-1s-mbyte", "reproduced", 27.5),
    ("000-table-avg-mbyte-tersk07", "reproduced", 59.5),  # 476/8, a tie printed as 59
    ("000-table-avg-mbyte-kangadata03-r2", "reproduced", 41.875),
    ("000-iperf-8k-1s-kbit", "erratum", 64.8e3),
    ("000-table-median-kangadata03-r2", "erratum", 345e6),
    # 1e9 * 0.434e-3 / 8 / 1024 = 52.98 KiB, not "about 32kBytes"
    ("000-dm8-bdp", "differs", 1e9 * 0.434e-3 / 8 / 1024),
    ("000-dm38-bdp", "reproduced", 1e9 * 0.252e-3 / 8 / 1024),
    # 8 KiB / 0.203 ms = 322.84 Mbit/s >= 176
    ("000-dm8-8k", "consistent", 8192 * 8 / 0.203e-3 / 1e6),
    ("000-dm-mhz-gain", "reproduced", 12.5),
    ("000-load-spike", "reproduced", 250.0),
    # seed 001
    ("001-370dle-32-expect", "reproduced", 2e6 / 132e6 + 0.008),
    ("001-370dle-64-pci-send", "reproduced", 0.001875),
    ("001-370dle-64-slope", "differs", 0.01175),
    ("001-hp-mbng-recover", "reproduced", 1e9 * 0.0062**2 / 24000),
    ("001-hp-datatag-recover", "differs", 1e9 * 0.128**2 / 24000 / 60),  # 11.38 min, not ~20
    ("001-reno-10mbps-window", "reproduced", 1e7 * 0.2 / 8 / 1500),
    ("001-reno-10gbps-recovery", "reproduced", 170000 / 2 * 0.2 / 60),   # 283.3 min = 4 h 43 min
    ("001-reno-1gbps-loss", "reproduced", (12000 * 1.5**0.5 / (0.2 * 1e9)) ** 2),
    ("001-sc04-bbftp-socket", "reproduced", 22.125),
    ("001-sc04-bbcp-overhead", "reproduced", 16e9 / 701e6 - 16e9 / 875e6),   # 4.539 s
    ("001-nd-drop-1500", "reproduced", 100 * (1 - 1218 / 1735)),
    ("001-farm-first-ms", "reproduced", 380.0),
    ("001-370dle-pci-wait10", "reproduced", 1466 * 8 / 1e3),             # 11.728 us on the wire
    ("001-p4dp6-pci-occ", "reproduced", 100 * 8.14 / 12),
    ("001-coal-rx0-high", "differs", 1e3 * 1448 / 1538),                 # TCP goodput of GigE
    ("001-web100-line", "reproduced", 1e3 * 1448 / 1538),
    ("001-coal-rx20-pm", "reproduced", 1.5),                              # (940 - 937) / 2
    ("001-coal-rx0-pm", "differs", 80.0),                                 # (980 - 820) / 2, printed +- 50
    ("001-10ge-user", "consistent", 16116.0),
    ("001-sfi-rate", "differs", 1 / 0.115),
    ("001-h8daf-mem-bw", "erratum", 51.2),
    # seed 002
    ("002-sep2001-max", "differs", 8 * 65536 * 8 / 0.05013 / 1e6),      # 83.67 Mbit/s
    ("002-wscale-trace-max", "reproduced", 131070 / 1024),
    ("002-snoop-synack-win", "reproduced", 5840.0),
    ("002-iperf-rate", "reproduced", 1.6 * 2**20 * 8 / 1.1 / 1e6),           # 12.2 Mbit/s, printed 11.8
    ("002-oc12", "reproduced", 622.08),
    ("002-snoop-synack-ack", "reproduced", 3858732055.0),
    # seed 003
    ("003-nton-peak", "differs", 25 * 131072 * 8 / 0.0486 / 1e6),        # 539.4 Mbit/s
    ("003-udp-total", "reproduced", 1.25),
    ("003-ppdg-goal", "reproduced", 123.75),
    ("003-oc48", "reproduced", 2.39616),
    # seed 004
    ("004-cern-2.4-5-rmem_default", "reproduced", 87380 / 1024),
    ("004-cern-2.4-6-rmem_max", "erratum", 8388607 / 1024),
    ("004-ping-diff-small", "reproduced", 17.684 - 17.472),
    ("004-cern-bogomips", "reproduced", 2 * 1495.506),
    ("004-min-25", "erratum", 25 / 8),                    # 25 Mbit/s in the printed MByte/s
    ("002-nov6-64mb", "erratum", 64 / 1024),              # 64 KiB in the printed MiB
])
def test_pinned_derivations(ledger, claim, status, derived):
    row = ledger.loc[claim]
    assert row["status"] == status, row["note"]
    assert row["derived_value"] == pytest.approx(derived, rel=1e-9)


@pytest.mark.parametrize("claim, status", [
    ("000-table-start-tersk07-r2", "erratum"),         # "2/1/31"
    ("000-cfg-os-kangadata02", "erratum"),             # text 5.6, table 5.7
    ("002-sep2001-caption", "erratum"),                # Sep 28 vs September 26
    ("002-wscale-text", "erratum"),                    # text 0, trace 1
    ("002-nov6-64mb", "erratum"),
    ("004-ping-september-1480-median", "erratum"),     # median below min
    ("003-nton-live", "reproduced"),                   # 2000-11-06 was a Monday
    ("004-page-date", "reproduced"),                   # 2003-07-23 was a Wednesday
    ("000-table-end-kangadata01", "consistent"),
    ("001-370dle-32-intercept", "not-reproducible"),
    ("003-i2-cpu", "not-reproducible"),
])
def test_statuses(ledger, claim, status):
    assert ledger.loc[claim, "status"] == status, ledger.loc[claim, "note"]


def _one(claim, **changes):
    """A two-row published frame to exercise the generic checks in isolation."""
    base = published.load(seed=4)
    rows = base[base["group"] == "004-ping-august-108"].copy()
    for key, value in changes.items():
        rows.loc[rows["id"] == claim, key] = value
    return rows


def test_order_statistics_blame_the_central_value():
    rows = _one("004-ping-august-108-median", value=18.5, value_si=0.0185)  # above max 18.054
    led = reproduce.build_ledger(rows).set_index("claim")
    assert led.loc["004-ping-august-108-median", "status"] == "erratum"
    assert "median 18.5 > max 18.054" in led.loc["004-ping-august-108-median", "note"]
    assert led.loc["004-ping-august-108-max", "status"] == "consistent"


def test_untouched_rows_are_not_reproducible(ledger):
    assert ledger.loc["003-i2-avg", "status"] == "not-reproducible"
    assert ledger.loc["003-i2-avg", "note"] == "a stated setting or fact no other published number constrains"
    assert ledger.loc["003-i2-out", "note"].startswith("a measurement no other")
    assert not ledger["note"].str.contains("checks did not run").any()


def test_partial_seed_runs_generic_checks_only():
    rows = published.load(seed=3)
    rows = rows[rows["id"].isin(["003-ping-min", "003-ping-avg", "003-ping-max"])]
    led = reproduce.build_ledger(rows).set_index("claim")
    assert led["status"].tolist() == ["consistent"] * 3
    one = reproduce.build_ledger(published.load(seed=3).query("id == '003-i2-out'"))
    assert one.loc[0, "status"] == "not-reproducible"
    assert "checks did not run" in one.loc[0, "note"]


def test_gige_goodput():
    assert reproduce.gige_goodput() == pytest.approx(1e9 * 1448 / 1538)
    assert reproduce.gige_goodput(protocol="udp") == pytest.approx(1e9 * 1472 / 1538)
    assert reproduce.gige_goodput(9000) == pytest.approx(1e9 * 8948 / 9038)


def test_seed_000_hosts_table(pub, ledger):
    t = reproduce.seed_000_hosts(pub, ledger.reset_index())
    assert list(t["column"]) == ["Kangadata01", "Kangadata02", "Kangadata02 - 2", "Kangadata02 - 3",
                                 "Tersk07", "Tersk07 - 2", "Kangadata03", "Kangadata03 - 2"]
    last = t.iloc[-1]
    assert last["median_mbps"] == 345.0 and last["corrected"] == "000-table-median-kangadata03-r2"
    assert t.iloc[4][["mean_mbps", "median_mbps", "max_mbps", "iqr_mbps"]].tolist() == [476.0, 496.0, 807.0, 292.0]
    assert t["pings"].eq(1360).all()
    raw = reproduce.seed_000_hosts(pub)
    assert raw.iloc[-1]["median_mbps"] == pytest.approx(345e-6)


def test_seed_001_apps_table(pub):
    t = reproduce.seed_001_apps(pub)
    assert len(t) == 44
    row = t[(t["app"] == "bbftp") & (t["stack"] == "Scalable") & (t["network"] == "SuperMicro on SuperJANET4")].iloc[0]
    assert (row["low"], row["high"], row["mid"]) == (345.0, 532.0, 438.5)
    assert t.iloc[0][["app", "stack", "network"]].tolist() == ["Iperf", "Standard", "SuperMicro on MB-NG"]


def test_seed_001_reno_and_latency_tables(pub):
    reno = reproduce.seed_001_reno(pub)
    assert reno["recovery_s"].tolist() == [17.0, 170.0, 1680.0, 16980.0]
    assert reno["recovery_s_theory"].tolist() == pytest.approx([16.6667, 166.667, 1666.67, 16666.7], rel=1e-5)
    lat = reproduce.seed_001_latency(pub)
    assert lat["measured_us_per_byte"].tolist() == [0.0286, 0.0231, 0.009, 0.0146]
    assert lat["expected_theory_us_per_byte"].round(4).tolist() == [0.0232, 0.0118, 0.0118, 0.0118]


def test_seed_004_ping_table(pub):
    t = reproduce.seed_004_ping(pub)
    assert t[["month", "packet_size", "n"]].values.tolist() == [
        ["august", 108, 241], ["august", 1480, 241], ["september", 108, 112], ["september", 1480, 101]]
    assert t["median_erratum"].tolist() == [False, False, False, True]


def test_cli_writes_ledger(tmp_path, capsys):
    out = tmp_path / "processed" / "reproduction.csv"
    assert main(["reproduce", "--published", str(published.DEFAULT_DIR), "--out", str(out)]) == 0
    written = pd.read_csv(out, dtype={"seed": str})
    assert list(written.columns) == reproduce.LEDGER_COLUMNS
    assert len(written) == 682
    assert "682 claims, 16 erratum, 14 differs" in capsys.readouterr().out


def test_cli_bad_directory(tmp_path, capsys):
    assert main(["reproduce", "--published", str(tmp_path), "--out", str(tmp_path / "x.csv")]) == 1
    assert "no seed_*.csv" in capsys.readouterr().err


def test_theory_curves(pub):
    t = reproduce.theory_curves(pub)
    assert set(t["seed"]) == {"000", "001", "002", "003", "004"}
    dm8 = t[t["label"].str.contains("datamove8")].set_index("x")["y"]
    assert dm8[8] == pytest.approx(8192 * 8 / 0.203e-3 / 1e6)   # 322.8 Mbit/s
    assert dm8[64] == 1000.0                                     # capped at GigE
    oc3 = t[t["label"].str.startswith("n x 64 KiB")].set_index("x")["y"]
    assert oc3[8] == pytest.approx(8 * 65536 * 8 / 0.05013 / 1e6)
    assert oc3[40] == pytest.approx(155.52)
    reno = t[t["curve"] == "reno_recovery"].set_index("x")["y"]
    assert reno[1000.0] == pytest.approx(1e9 * 0.04 / 24000)   # 1666.7 s
    mathis = t[t["label"].str.contains("MB-NG")]
    assert mathis["y"].is_monotonic_decreasing
