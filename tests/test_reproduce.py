"""thruput.reproduce: the ledger's derivations, pinned to hand-computed values."""

import ast
import re
from pathlib import Path

import pandas as pd
import pytest

from thruput import published, reproduce, studies
from thruput.studies import formulas, tables
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
    assert list(s.columns) == [*reproduce.STATUSES, "checked", "judgement", "total"]
    assert s.loc["all", "total"] == 686
    assert s.loc["all", list(reproduce.STATUSES)].sum() == 686
    counts = s.loc["all", list(reproduce.STATUSES)].to_dict()
    assert counts == {"erratum": 17, "differs": 10, "reproduced": 16, "measured-vs-model": 4, "consistent": 371,
                      "bound": 57, "input": 32, "not-reproducible": 179}
    assert s.loc["all", "checked"] == 17 + 10 + 16 + 4 + 371     # bounds are counted apart
    assert s.loc["all", "judgement"] == 69


@pytest.mark.parametrize("claim, status, derived", [
    # seed 000: the sentence's own 425 Mbit/s / 8 = 53.125, printed 53.3: rounding
    ("000-iperf-avg-mbyte", "consistent", 53.125),
    ("000-iperf-32k-1s-mbyte", "consistent", 21.25),
    ("000-iperf-64k-1s-mbyte", "consistent", 27.5),
    ("000-table-avg-mbyte-tersk07", "consistent", 59.5),  # 476/8, a tie printed as 59
    ("000-table-avg-mbyte-kangadata03-r2", "consistent", 41.875),
    ("000-iperf-8k-1s-kbit", "erratum", 64.8e3),
    ("000-table-median-kangadata03-r2", "erratum", 345e6),
    # 1e9 * 0.434e-3 / 8 / 1024 = 52.98 KiB, not "about 32kBytes"
    ("000-dm8-bdp", "differs", 1e9 * 0.434e-3 / 8 / 1024),
    ("000-dm38-bdp", "consistent", 1e9 * 0.252e-3 / 8 / 1024),
    # 8 KiB / 0.203 ms = 322.84 Mbit/s >= 176
    ("000-dm8-8k", "consistent", 8192 * 8 / 0.203e-3 / 1e6),
    ("000-dm-mhz-gain", "consistent", 12.5),              # "over 10%": a lower bound of 450/400 - 1
    ("000-load-spike", "consistent", 250.0),               # its own sentence: ~500 Mbit/s / a factor of 2
    ("000-load-duty", "consistent", 2.0),                  # (10 s on + 10 s off) / 10 s, its own sentence
    ("000-dm8-reported", "consistent", 176.0),             # 'only 200' = 'about 176' to one figure
    # seed 001
    ("001-370dle-32-expect", "reproduced", 2 / (4 * 33e6) * 1e6 + 0.008),   # a model of PCI + GigE + PCI from the bus spec
    ("001-370dle-64-expect", "reproduced", 2 / (8 * 66e6) * 1e6 + 0.008),
    ("001-370dle-64-pci-send", "consistent", 0.001875),             # from the bus standard, not a published input
    ("001-370dle-64-slope", "measured-vs-model", 0.01175),
    ("001-hp-mbng-recover", "consistent", 1e9 * 0.0062**2 / 24000),
    ("001-hp-datatag-recover", "differs", 1e9 * 0.128**2 / 24000 / 60),  # 11.38 min, not ~20
    ("001-reno-10mbps-window", "reproduced", 1e7 * 0.2 / 8 / 1500),
    ("001-reno-10gbps-recovery", "reproduced", 170000 / 2 * 0.2 / 60),   # 283.3 min = 4 h 43 min
    ("001-reno-1gbps-loss", "reproduced", (12000 * 1.5**0.5 / (0.2 * 1e9)) ** 2),
    ("001-sc04-bbftp-socket", "consistent", 22.125),
    ("001-sc04-bbcp-overhead", "consistent", 16e9 / 701e6 - 16e9 / 875e6),   # 4.539 s
    ("001-nd-drop-1500", "consistent", 100 * (1 - 1218 / 1735)),
    ("001-farm-first-ms", "consistent", 380.0),                           # 19 rtt x 20 ms, its own slide
    ("001-370dle-pci-wait10", "bound", 1466 * 8 / 1e3),                 # 11.728 us on the wire
    ("001-370dle-pci-fiber20", "bound", 1466 * 8 / 1e3),
    ("001-p4dp6-pci-occ", "consistent", 100 * 8.14 / 12),
    ("001-ata-mtbf", "consistent", 8766 / 0.02),                          # 2-3% per year: 292k-438k h
    ("001-ata-fail-low", "consistent", 2.0),                              # 3% x 30 / 45 drives
    ("001-drive-slower", "consistent", 25.0),                             # 1 - 5400 / 7200
    ("001-p4dp8-udma", "consistent", 100.0),
    ("001-coal-rx0-high", "differs", 1e3 * 1448 / 1538),                 # TCP goodput of GigE
    ("001-web100-line", "consistent", 940.0),                             # = the apps table cell (and <= goodput)
    ("001-coal-rx20-pm", "consistent", 1.5),                              # (940 - 937) / 2, the same line
    ("001-coal-rx0-pm", "differs", 80.0),                                 # (980 - 820) / 2, printed +- 50
    ("001-10ge-user", "consistent", 16116.0),
    ("001-sfi-rate", "erratum", 1 / 0.115),                                # 115 ms and ~4 ev/s disagree
    ("001-h8daf-mem-bw", "erratum", 51.2),
    # seed 002
    ("002-sep2001-max", "differs", 8 * 65536 * 8 / 0.05013 / 1e6),      # 83.67 Mbit/s
    ("002-wscale-trace-max", "consistent", 131070 / 1024),
    ("002-snoop-synack-win", "consistent", 5840.0),                          # through a constant fitted to it
    ("002-iperf-rate", "consistent", 1.6 * 2**20 * 8 / 1.1 / 1e6),           # 12.2 Mbit/s, printed 11.8
    ("002-upgrade-factor", "differs", 53 / 30),                              # 'over 2' > the capacities' 1.77
    ("002-snoop-syn-mss", "consistent", 1460.0),
    ("002-wscale-text-max", "consistent", 65535 / 1024),
    ("002-oc12", "consistent", 622.08),                                      # a standard, not a derivation
    ("002-snoop-synack-ack", "consistent", 3858732055.0),
    # seed 003
    ("003-nton-peak", "differs", 25 * 131072 * 8 / 0.0486 / 1e6),        # 539.4 Mbit/s
    ("003-udp-total", "consistent", 1.25),
    ("003-ppdg-goal", "consistent", 123.75),
    ("003-oc48", "consistent", 2.39616),
    # seed 004
    ("004-cern-2.4-5-rmem_default", "consistent", 87380 / 1024),
    ("004-cern-2.4-6-rmem_max", "erratum", 8388607 / 1024),
    ("004-ping-diff-small", "reproduced", 17.684 - 17.472),
    ("004-cern-bogomips", "consistent", 2 * 1495.506),
    ("004-plateau-1024", "reproduced", 480e6 * 17.684e-3 / 8 / 1024),     # the window of 480 Mbit/s at 17.7 ms
    ("004-cern-2.2-1-rmem_max", "consistent", 8388607 / 1024),
    ("004-min-25", "erratum", 25 / 8),                    # 25 Mbit/s in the printed MByte/s
    ("002-nov6-64mb", "erratum", 64 / 1024),              # 64 KiB in the printed MiB
])
def test_pinned_derivations(ledger, claim, status, derived):
    row = ledger.loc[claim]
    assert row["status"] == status, row["note"]
    assert row["derived_value"] == pytest.approx(derived, rel=1e-9)


#: Every erratum the ledger finds, by claim, with the reason and whether a computation
#: (False) or a person (True) decides it.
ERRATA = {
    "000-cfg-os-kangadata02": ("text says Solaris 5.6, the table 5.7 in all three Kangadata02 columns", False),
    "000-iperf-8k-1s-kbit": ("printed kbit/s, meant Mbit/s (the same sentence says 8.14 MByte/s)", True),
    "000-table-median-kangadata03-r2": ("printed 345 bit/s; 345 Mbit/s fits its mean 335 and max 502", True),
    "000-table-start-tersk07-r2": ("'2/1/31' starts after its own end on 2/1/01", False),
    "001-p4dp8-fsb-high": ("522 MHz front-side bus: Xeon FSBs run at 400 or 533 MHz", True),
    "001-h8daf-mem-bw": ("'6.4 Gbit' memory bandwidth: 200 MHz DDR x 128 bit is 6.4 GByte/s", False),
    "001-sc04-memory": ("1 MByte of memory cannot run the RAID0 benchmarks; 1 GByte is meant", True),
    "002-sep2001-caption": ("the caption says Sep 28 2001, the text September 26", False),
    "002-nov6-64mb": ("64 MBytes: the sweep never exceeded 8 MBytes; 64 KBytes is meant", True),
    "002-wscale-text": ("the text says wscale 0, the snoop trace shows 1", False),
    "004-cern-2.2-3-rmem_max": ("header 'rmem_max' printed twice; the column is wmem_max", True),
    "004-cern-2.4-6-rmem_max": ("8181.999 kbytes is no power-of-two limit (8191.999 everywhere else)", True),
    "004-ral-2.2-3-rmem_max": ("header 'rmem_max' printed twice; the column is wmem_max", True),
    "004-units-edit": ("the author's own correction: graphs labelled kbit/s are in Mbit/s", True),
    "004-min-25": ("printed 25 MByte/s, which would exceed the median below 100 Mbit/s", True),
    "004-ping-september-1480-median": ("median 17.615 ms below the row's min 18.524 ms", False),
    "001-sfi-rate": ("'Time 115 ms (~4 ev/s)': 1 / 115 ms is 8.7 events/s", False),
}


def test_errata_are_found(ledger):
    found = ledger[ledger["status"] == "erratum"]
    assert set(found.index) == set(ERRATA)
    for claim, (_, judged) in ERRATA.items():
        assert bool(found.at[claim, "judgement"]) is judged, claim


@pytest.mark.parametrize("claim, status", [
    ("000-table-start-tersk07-r2", "erratum"),         # "2/1/31"
    ("000-cfg-os-kangadata02", "erratum"),             # text 5.6, table 5.7
    ("002-sep2001-caption", "erratum"),                # Sep 28 vs September 26
    ("002-wscale-text", "erratum"),                    # text 0, trace 1
    ("002-nov6-64mb", "erratum"),
    ("004-ping-september-1480-median", "erratum"),     # median below min
    ("003-nton-live", "consistent"),                   # 2000-11-06 was a Monday: a calendar check
    ("004-page-date", "consistent"),                   # 2003-07-23 was a Wednesday
    ("000-table-end-kangadata01", "consistent"),
    ("001-370dle-32-intercept", "not-reproducible"),
    ("003-i2-cpu", "not-reproducible"),
    ("001-reno-1gbps-rate", "input"),                  # an input of the Reno table, not a check
    ("001-p4dp6-slope", "measured-vs-model"),          # the slide compares it with PCI + GigE + PCI itself
])
def test_statuses(ledger, claim, status):
    assert ledger.loc[claim, "status"] == status, ledger.loc[claim, "note"]


def test_reproduced_is_only_computed_from_other_published_inputs(ledger):
    rep = ledger[ledger["status"] == "reproduced"]
    assert not rep["judgement"].any()
    for claim, inputs in rep["inputs"].items():
        assert set(inputs.split(",")) - {claim, ""}, claim


SEED_TEXTS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
#: functions of a model (physics or a tool's rule) rather than arithmetic of the text
_ARITHMETIC = {"round_sig", "min", "max", "sqrt"}


def _norm(text):
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.skipif(not SEED_TEXTS.is_dir(), reason="../shared/seeds not present")
def test_no_reproduced_row_restates_its_own_sentence_or_a_fitted_constant(pub, ledger):
    """A ``reproduced`` figure has an input from outside its own paragraph of the source (or
    goes through a model of thruput.stats.theory), and no constant fitted to a figure.

    The provenance is read from the documents themselves: each input's quote is looked up
    in the paragraph (text between blank lines) that prints the figure.
    """
    paragraphs = {p.name[:3]: [_norm(x) for x in re.split(r"\n\s*\n", p.read_text(encoding="utf-8"))]
                  for p in SEED_TEXTS.glob("0*.txt")}
    quote = pub.set_index("id")["quote"].map(_norm)
    derive = {c["claim"]: c["derive"] for seed in studies.SEEDS for c in studies.checks(seed) if "derive" in c}
    circular = []
    for claim, row in ledger[ledger["status"] == "reproduced"].iterrows():
        formula = derive[claim]
        if set(formulas.names(formula)) & set(formulas.FITTED):
            circular.append((claim, "fitted constant"))
            continue
        calls = {n.func.id for n in ast.walk(ast.parse(formula, mode="eval")) if isinstance(n, ast.Call)}
        own = [p for p in paragraphs[row["seed"]] if quote[claim] in p]
        inputs = [c for c in row["inputs"].split(",") if c and c != claim]
        if not calls - _ARITHMETIC and all(any(quote[c] in p for p in own) for c in inputs):
            circular.append((claim, "its own paragraph"))
    assert circular == []
    # the fitted constant exists and the check through it is not a reproduction
    assert "LINUX_INITIAL_RWND_SEGMENTS" in formulas.FITTED
    assert "fitted to this figure" in ledger.at["002-snoop-synack-win", "note"]


def test_bounds_are_counted_apart(ledger):
    """A bound no published figure enters (GigE, its goodput) is ``bound``, not checked;
    a bound computed from other published figures still confirms something."""
    bounds = ledger[ledger["status"] == "bound"]
    assert len(bounds) == 57 and (bounds["inputs"] == "").all()
    assert bounds["note"].str.contains("at most|at least").all()
    assert ledger.at["000-dm8-8k", "status"] == "consistent"      # <= 8 KiB / the published RTT


def test_judgements_say_why(ledger):
    """No judgement copies the default note: each says why the figure is what it is."""
    judged = ledger[ledger["judgement"].astype(bool)]
    defaults = set(reproduce._DEFAULT_NOTE.values())
    assert not judged["note"].isin(defaults).any()
    assert "default" not in set(judged["check"])


def test_a_wrong_published_input_flips_the_verdict(pub):
    """The derivation is computed: change an input and the reproduced figure differs."""
    ok = reproduce.build_ledger(pub).set_index("claim")
    assert ok.at["001-hp-mbng-recover", "status"] == "consistent"    # the slide's own rtt
    bad = pub.copy()
    i = bad.index[bad["id"] == "001-hp-mbng-rtt"][0]
    bad.loc[i, ["value", "value_si"]] = [12.4, 0.0124]        # twice the printed 6.2 ms
    led = reproduce.build_ledger(bad).set_index("claim")
    assert led.at["001-hp-mbng-recover", "status"] == "differs"
    assert led.at["001-hp-mbng-recover", "derived_value"] == pytest.approx(1e9 * 0.0124**2 / 24000)
    # and a computed erratum disappears once the document agrees with itself
    fixed = pub.copy()
    fixed.loc[fixed["id"] == "002-wscale-text", ["value", "value_si"]] = [1.0, 1.0]
    assert reproduce.build_ledger(fixed).set_index("claim").at["002-wscale-text", "status"] == "consistent"


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


def _table(seed, name):
    return studies.page(seed)["tables"][name]


def test_claim_grid_of_seed_000_hosts(pub):
    t = tables.claim_grid(pub, _table("000", "hosts"), "value_si")
    assert t["host"].tolist()[:3] == ["kangadata01", "kangadata02", "kangadata02-r2"] and len(t) == 8
    assert t.iloc[4][["avg-mbit", "median", "max", "iqr"]].tolist() == [476e6, 496e6, 807e6, 292e6]
    assert t.iloc[-1]["median"] == 345.0            # printed "345bits/s": the ledger calls it an erratum
    assert t.iloc[-1]["claims"]["median"] == "000-table-median-kangadata03-r2"
    printed = tables.claim_grid(pub, _table("000", "hosts"))
    assert printed["pings"].eq(1360).all()


def test_range_cells_of_seed_001_apps(pub):
    spec = _table("001", "apps")
    t = tables.range_cells(pub, spec["group"], spec["order"])
    assert len(t) == 44
    row = t[(t["app"] == "bbftp") & (t["stack"] == "Scalable") & (t["network"] == "SuperMicro on SuperJANET4")].iloc[0]
    assert (row["low"], row["high"], row["mid"]) == (345.0, 532.0, 438.5)
    assert t.iloc[0][["app", "stack", "network"]].tolist() == ["Iperf", "Standard", "SuperMicro on MB-NG"]


def test_capacity_table_and_latency_slopes_of_seed_001(pub):
    reno = tables.capacity_table(pub, _table("001", "reno"))
    assert reno["recovery_s"].tolist() == [17.0, 170.0, 1680.0, 16980.0]
    assert reno["recovery_s_theory"].tolist() == pytest.approx([16.6667, 166.667, 1666.67, 16666.7], rel=1e-5)
    lat = tables.latency_slopes(pub, _table("001", "latency"))
    assert lat["measured_us_per_byte"].tolist() == [0.0286, 0.0231, 0.009, 0.0146]
    assert lat["expected_theory_us_per_byte"].round(4).tolist() == [0.0232, 0.0118, 0.0118, 0.0118]


def test_claim_grid_of_seed_004_ping(pub):
    t = tables.claim_grid(pub, _table("004", "ping"))
    assert t[["month", "size", "n"]].values.tolist() == [
        ["august", 108, 241], ["august", 1480, 241], ["september", 108, 112], ["september", 1480, 101]]
    outside = ~((t["min"] <= t["median"]) & (t["median"] <= t["max"]))
    assert outside.tolist() == [False, False, False, True]


@pytest.mark.parametrize("spec, values", [
    ([8, 16], [8, 16]),
    ({"arange": [1, 4]}, [1, 2, 3]),
    ({"geomspace": [8, 32, 3]}, [8, 16, 32]),
    ({"logspace": [-2, 0, 3]}, [0.01, 0.1, 1]),
])
def test_axis_values(spec, values):
    assert list(tables.axis_values(spec)) == pytest.approx(values)


def test_axis_values_refuses_other_functions():
    with pytest.raises(studies.StudyError, match="geomspace, logspace or arange"):
        tables.axis_values({"linspace": [0, 1, 3]})


def test_cli_writes_ledger(tmp_path, capsys):
    out = tmp_path / "processed" / "reproduction.csv"
    assert main(["reproduce", "--published", str(published.DEFAULT_DIR), "--out", str(out)]) == 0
    written = pd.read_csv(out, dtype={"seed": str})
    assert list(written.columns) == reproduce.LEDGER_COLUMNS
    assert len(written) == 686
    out = capsys.readouterr().out
    assert "686 claims, 17 erratum, 10 differs, 16 reproduced, 4 measured-vs-model, 371 consistent" in out
    assert "57 bound, 32 input, 179 not-reproducible" in out


def test_cli_bad_directory(tmp_path, capsys):
    assert main(["reproduce", "--published", str(tmp_path), "--out", str(tmp_path / "x.csv")]) == 1
    assert "no seed_*.csv" in capsys.readouterr().err


def test_theory_curves(pub):
    t = tables.theory_curves(pub)
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
    # one stream over seed 002's SYN/ACK time, 8 KiB to 1 MiB (the window-scaling chart)
    one = t[t["label"].str.startswith("1 stream: window / 50.13 ms")].set_index("x")["y"]
    assert len(one) == 29 and one.iloc[0] == pytest.approx(8192 * 8 / 0.05013 / 1e6)


def test_a_curve_of_an_unknown_family_is_refused():
    with pytest.raises(studies.StudyError, match="unknown curve 'cubic'"):
        tables.curve("009", {"curve": "cubic", "label": "x", "x": [1]}, 0.1)


def test_cli_help_defines_every_status(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for status, meaning in reproduce.STATUS_MEANING.items():
        assert f"{status}: {meaning}" in out
    assert "input: only an input of a derivation or table, which no check constrains [not counted as checked]" in out
