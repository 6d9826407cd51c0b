"""A design over time is alerted on as a monitor is: campaign.yaml's rules, picked by factor
levels, on each cell's time bins, with the monitor's states, verdict, report and exit status;
a design without time has no slots and is refused."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
import yaml

from thruput.errors import ThruputError
from thruput.monitor.alerts import BREACH, EXIT, OK, format_report, report_json
from thruput.monitor.design_alerts import design_exposition, design_perfdata, design_tables, evaluate_design

from .designs import random_design
from .test_design_changes import INTERVAL, MONITOR, SHIFT_SLOT, timed_design


def with_rules(ds, alerts=(), baseline=(), time=None):
    meta = json.loads(ds.attrs["metadata"])
    meta.update({"alerts": list(alerts), "baseline": list(baseline)})
    if time is not None:
        meta["time"] = time
    return ds.assign_attrs(metadata=json.dumps(meta))


def planted_cell(factors):
    return {f["name"]: f["levels"][0] for f in factors}


def test_a_rule_on_one_cell_opens_a_breach_there_at_the_planted_bin():
    ds, factors = timed_design()        # the planted cell: ~1.6e8 bit/s, halved from slot 22 on
    cell = planted_cell(factors)
    rule = {"metric": "throughput", "where": cell, "below": 1.0e8, "for": 2}
    tables = design_tables(with_rules(ds, [rule], time={"interval": f"{INTERVAL}s"}), monitor=MONITOR)
    alert = tables["alert_state"]
    assert alert.attrs["interval_s"] == INTERVAL and alert.sizes["series"] == 4
    name = " ".join(f"{k}={v}" for k, v in cell.items())
    assert alert["applies"].sel(series=name).item() and int(alert["applies"].sum()) == 1
    state = alert["state"].sel(series=name).isel(rule=0).values
    assert (state[:SHIFT_SLOT] == OK).all() and (state[SHIFT_SLOT:] == BREACH).all()
    br = tables["breaches"]
    assert br.sizes["breach"] == 1 and str(br["series"].values[0]) == name and bool(br["open"].values[0])
    assert br["start"].values[0] == alert["time"].values[SHIFT_SLOT]
    assert br["opened"].values[0] == alert["time"].values[SHIFT_SLOT + 1]            # for: 2
    # the change point of the product's changes/throughput in that cell falls in it
    changes = br["changes"].values[0].split()
    assert len(changes) == 1 and abs(np.datetime64(changes[0].rstrip("Z"), "ns") - br["start"].values[0]) \
        <= np.timedelta64(2 * INTERVAL, "s")
    verdict = tables["verdict"]
    assert dict(zip(verdict["series"].values, verdict["state"].values)) == {
        n: "breach" if n == name else "ok" for n in verdict["series"].values}
    for f in factors:                   # one coordinate per factor: its level
        assert str(verdict[f["name"]].sel(series=name).item()) == str(cell[f["name"]])
    report = report_json(tables)
    assert report["exit_status"] == EXIT["breach"] == 1 and report["state"] == "breach"
    mine = next(s for s in report["series"] if s["series"] == name)
    assert mine["state"] == "breach" and len(mine["breaches"]) == 1
    assert all(mine[f["name"]] == str(cell[f["name"]]) for f in factors)
    text = format_report(report)
    assert text.splitlines()[0].startswith("timed: BREACH")
    assert f"{name}: breach since" in text and "OPEN" in text and f"change points {changes[0]}" in text
    perf = design_perfdata(tables)
    assert f"'{' '.join(map(str, cell.values()))} throughput'=" in perf and ";1e+08:" in perf


def test_the_products_bins_find_it_within_one_bin():
    ds, factors = timed_design()
    rule = {"metric": "throughput", "where": planted_cell(factors), "below": 1.0e8}
    tables = evaluate_design(with_rules(ds, [rule]))
    bin_s = tables["alert_state"].attrs["interval_s"]
    assert bin_s > INTERVAL          # about two runs of a series a bin, as series_bins
    br = tables["breaches"]
    assert br.sizes["breach"] == 1 and bool(br["open"].values[0])
    planted = np.datetime64(ds.attrs["planted"], "ns")
    assert abs((br["start"].values[0] - planted) / np.timedelta64(int(bin_s), "s")) <= 1


def test_no_rule_breached_is_ok_and_exit_0():
    ds, factors = timed_design()
    rules = [{"metric": "throughput", "below": 1.0e7, "for": 3},
             {"metric": "rtt", "where": {factors[1]["name"]: factors[1]["levels"]}, "above": 500}]
    tables = evaluate_design(with_rules(ds, rules, time={"interval": "10m"}))
    assert tables["breaches"].sizes["breach"] == 0
    report = report_json(tables)
    assert report["exit_status"] == 0 and {s["state"] for s in report["series"]} == {"ok"}
    assert len(report["rules"]) == 2 and int(tables["alert_state"]["applies"].sum()) == 8
    text = design_exposition(ds, tables)
    names = [f["name"] for f in factors]
    assert f'thruput_monitor_state{{campaign="timed",{names[0]}="' in text
    assert text.count("thruput_monitor_state{") == 4 and "thruput_monitor_breaches_open{" in text
    assert text.count("thruput_monitor_slot_timestamp_seconds{") == 4
    last = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line.startswith("thruput_monitor_last_run_timestamp_seconds{")]
    assert len(last) == 4 and max(last) == np.asarray(ds["time"].values, "datetime64[ns]").max().astype(np.int64) / 1e9
    if shutil.which("promtool"):                    # (Debian's prometheus package)
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr


def test_a_design_without_time_or_with_a_bad_rule_is_refused():
    flat = random_design(1, n_factors=2, min_levels=2, max_levels=2, time=False, failing=0.0, metrics={"tcp"})
    with pytest.raises(ThruputError, match="not a design over time"):
        evaluate_design(flat)
    ds, factors = timed_design()
    with pytest.raises(ThruputError, match="no such factor"):
        evaluate_design(with_rules(ds, [{"metric": "throughput", "where": {"nope": 1}, "below": 1}]))
    with pytest.raises(ThruputError, match="no level 'x'"):
        evaluate_design(with_rules(ds, [{"metric": "throughput", "where": {factors[0]["name"]: "x"}, "below": 1}]))
    with pytest.raises(ThruputError, match="monitor's rule key"):
        evaluate_design(with_rules(ds, [{"test": "tcp", "metric": "throughput", "below": 1}]))
    with pytest.raises(ThruputError, match="no metric 'retransmits'"):
        evaluate_design(with_rules(ds, [{"metric": "retransmits", "above": 1}]))
    first = factors[0]["name"]
    renamed = ds.rename({first: "series"}).assign_attrs(factors=ds.attrs["factors"].replace(f'"{first}"', '"series"'))
    with pytest.raises(ThruputError, match="factor 'series': a name the alert tables use"):
        evaluate_design(renamed)


def test_prometheus_label_names_are_sanitised():
    from thruput.monitor.design_alerts import _label_name

    assert [_label_name(n) for n in ("socket buffer", "5g", "__x", "outcome", "operator")] == [
        "socket_buffer", "_5g", "factor__x", "factor_outcome", "operator"]


def _import(tmp_path, over_time):
    from thruput.cli import main

    from .test_design import PATTERN, PILE

    files = sorted(str(p) for p in PILE.glob("cc-*.json"))
    args = ["campaign", "import", "lct", *files, "--root", str(tmp_path), f"--pattern={PATTERN}"]
    assert main(args + (["--over-time"] if over_time else [])) == 0
    return tmp_path / "lct"


def test_cli_report_and_metrics_on_a_time_design(tmp_path, capsys):
    from thruput.campaign.metadata import schema_validator
    from thruput.cli import main

    directory = _import(tmp_path, over_time=True)
    meta = yaml.safe_load((directory / "campaign.yaml").read_text())
    meta["time"] = {"interval": "1h"}          # every run in one slot
    meta["alerts"] = [{"metric": "throughput", "where": {"cc": "reno", "socket_buffer": 65536}, "below": 1e12}]
    meta["baseline"] = [{"metric": "throughput", "below": 0.5, "window": "1d"}]
    assert not list(schema_validator().iter_errors(meta))
    bad = {**meta, "alerts": [{"metric": "throughput", "test": "tcp", "below": 1}]}
    assert list(schema_validator().iter_errors(bad))          # a monitor's key in a design rule
    (directory / "campaign.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    capsys.readouterr()
    assert main(["monitor", "report", str(directory)]) == 1
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("lct: BREACH (slots") and " | '65536 cubic throughput'=" in first
    assert "'65536 reno throughput'=1.94041e+10;1e+12:;;0" in first
    assert "socket_buffer=65536 cc=reno: breach (last data" in out
    assert main(["monitor", "report", str(directory), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert {s["series"]: s["state"] for s in report["series"]}["socket_buffer=65536 cc=reno"] == "breach"
    assert main(["monitor", "metrics", str(directory)]) == 0
    text = capsys.readouterr().out
    assert 'thruput_monitor_state{campaign="lct",cc="reno",socket_buffer="65536"} 1' in text
    assert 'thruput_monitor_state{campaign="lct",cc="cubic",socket_buffer="65536"} 0' in text


def test_cli_refuses_a_design_without_time_in_one_line(tmp_path, capsys):
    from thruput.cli import main

    directory = _import(tmp_path, over_time=False)
    capsys.readouterr()
    for action in ("report", "metrics"):
        assert main(["monitor", action, str(directory)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        assert "a campaign of kind 'design', neither a monitor nor a design over time" in err
        assert "no time, no alert" in err
