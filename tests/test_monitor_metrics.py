"""Prometheus and Nagios out: ``thruput monitor metrics`` on the bundled monitor campaign
(normalized into a store), checked by ``promtool check metrics``, scraped by a real
Prometheus on loopback and read back through its query API; ``thruput monitor report``'s
performance data; the textfile written atomically."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

from thruput.cli import main
from thruput.monitor.alerts import evaluate
from thruput.monitor.metrics import (
    exposition,
    last_slot_values,
    perfdata,
    with_perfdata,
)

from .conftest import ROOT

CAMPAIGN = ROOT / "data" / "raw" / "netns-wan-monitor"
pytestmark = pytest.mark.skipif(not (CAMPAIGN / "runs.csv").exists(), reason="bundled monitor campaign not present")
#: A sample line of the exposition: name, labels, value.
SAMPLE = re.compile(r'^(?P<name>[a-z_]+)\{(?P<labels>[^}]*)\} (?P<value>\S+)$')


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    out = tmp_path_factory.mktemp("metrics") / "netns-wan-monitor.zarr"
    assert main(["pipeline", "normalize", str(CAMPAIGN), str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def text(store):
    done = _cli("monitor", "metrics", store)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _cli(*args, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "thruput.cli", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600, **kw)


def _samples(text):
    out = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m["labels"]))
            out[(m["name"], tuple(sorted(labels.items())))] = float(m["value"])
    return out


def _get(samples, name, **labels):
    found = [v for (n, ls), v in samples.items() if n == name and labels.items() <= dict(ls).items()]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_exposition_holds_the_reports_state_and_last_slot(store, text):
    report = json.loads(_cli("monitor", "report", store, "--json").stdout)
    samples = _samples(text)
    codes = {"ok": 0, "breach": 1, "no data": 3}
    for s in report["series"]:
        assert _get(samples, "thruput_monitor_state", path=s["path"], direction=s["direction"]) == codes[s["state"]]
        opened = sum(b["open"] for b in s["breaches"])
        assert _get(samples, "thruput_monitor_breaches_open", path=s["path"], direction=s["direction"]) == opened
    assert _get(samples, "thruput_monitor_state", path="a-b", direction="forward") == 1
    # the last slot's values: the same medians the report's rules see, in base units
    import thruput
    ds = thruput.open_campaign(CAMPAIGN)
    last = {(v["direction"], v["test"], v["socket_buffer"], v["size"], v["variable"]): v for v in last_slot_values(ds)}
    tp = last[("forward", "tcp", 1048576, None, "throughput")]
    assert _get(samples, "thruput_monitor_throughput_bytes_per_second", direction="forward", test="tcp",
                socket_buffer="1048576") == pytest.approx(tp["value"])
    assert tp["value"] * 8 < 2.8e7                        # below the rule's 28 Mbit/s: the open breach
    rtt = last[("forward", "ping", None, 108, "rtt_median")]
    assert _get(samples, "thruput_monitor_rtt_seconds", size="108", stat="median") == pytest.approx(rtt["value"])
    assert 0.07 < rtt["value"] < 0.1                                      # 80 ms after the planned change
    mask = (ds.direction.values == "reverse") & (ds.test.values == "udp")
    assert _get(samples, "thruput_monitor_last_run_timestamp_seconds", direction="reverse", test="udp") == \
        pytest.approx(ds.time.values[mask].max().astype("datetime64[ns]").astype("int64") / 1e9)
    assert _get(samples, "thruput_monitor_runs_total", direction="reverse", test="tcp", socket_buffer="65536",
                outcome="refused") == 1


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) not installed")
def test_promtool_accepts_the_exposition(text):
    done = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_report_first_line_carries_nagios_perfdata(store):
    done = _cli("monitor", "report", store)
    assert done.returncode == 1
    first = done.stdout.splitlines()[0]
    head, _, data = first.partition(" | ")
    assert head.startswith("netns-wan-monitor: BREACH") and data
    items = dict(re.findall(r"'([^']+)'=(\S+)", data))
    # 'label'=value[UOM];warn;crit;min;max: the rule's limit as the warning range
    assert items["a-b forward tcp b1048576 throughput"].split(";")[1] == "2.8e+07:"
    value, unit = re.match(r"([0-9.e+-]+)(s?)", items["a-b forward ping z108 rtt"]).groups()
    assert unit == "s" and 0.07 < float(value) < 0.1 and items["a-b forward ping z108 rtt"].split(";")[1] == "0.06"
    assert items["a-b forward udp loss"].endswith(";20;;0;100")


def test_with_perfdata_only_touches_the_first_line():
    assert with_perfdata("A: OK\nmore", "'x'=1") == "A: OK | 'x'=1\nmore"
    assert with_perfdata("A: OK", "") == "A: OK"


def test_textfile_is_written_whole(store, tmp_path):
    target = tmp_path / "thruput.prom"
    assert _cli("monitor", "metrics", store, "--textfile", target).returncode == 0
    body = target.read_text()
    assert "thruput_monitor_state{" in body and body.endswith("\n")
    assert [p.name for p in tmp_path.iterdir()] == ["thruput.prom"]       # no temporary left


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


@pytest.mark.skipif(shutil.which("prometheus") is None, reason="prometheus (Debian package) not installed")
def test_prometheus_scrapes_serve_and_answers_queries(store, tmp_path, text):
    """A real Prometheus on loopback scrapes ``--serve``; the series come back through its
    HTTP query API with the exposition's values. Both processes are stopped by pid."""
    ours, theirs = _free_port(), _free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                      "scrape_configs:\n  - job_name: thruput\n    static_configs:\n"
                      f"      - targets: ['127.0.0.1:{ours}']\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    server = subprocess.Popen([sys.executable, "-m", "thruput.cli", "monitor", "metrics", str(store),
                               "--serve", f"127.0.0.1:{ours}"], env=env, stderr=subprocess.PIPE, text=True)
    prom = None
    try:
        line = server.stderr.readline()                       # printed once listening
        assert "serving http://127.0.0.1:" in line, line
        served = urllib.request.urlopen(f"http://127.0.0.1:{ours}/metrics", timeout=30)
        assert served.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        assert served.read().decode() == text
        prom = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                 f"--web.listen-address=127.0.0.1:{theirs}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
        query = "http://127.0.0.1:{}/api/v1/query?query={}".format(
            theirs, urllib.parse.quote('thruput_monitor_state{path="a-b",direction="forward"}'))
        result, deadline = [], time.monotonic() + 120
        while not result and time.monotonic() < deadline:
            time.sleep(1)
            try:
                answer = json.load(urllib.request.urlopen(query, timeout=10))
                result = answer["data"]["result"]
            except OSError:
                continue                                      # not listening yet
        assert result, "Prometheus never scraped thruput monitor metrics --serve"
        assert result[0]["metric"]["job"] == "thruput" and result[0]["value"][1] == "1"
        tp = "http://127.0.0.1:{}/api/v1/query?query={}".format(theirs, urllib.parse.quote(
            'thruput_monitor_throughput_bytes_per_second{direction="forward",test="tcp",socket_buffer="1048576"}'))
        got = json.load(urllib.request.urlopen(tp, timeout=10))["data"]["result"]
        want = _get(_samples(text), "thruput_monitor_throughput_bytes_per_second", direction="forward", test="tcp",
                    socket_buffer="1048576")
        assert len(got) == 1 and float(got[0]["value"][1]) == pytest.approx(want, rel=1e-12)
    finally:
        if prom is not None:
            _stop(prom)
        _stop(server)


def test_metrics_are_computed_from_the_report_tables():
    import thruput
    ds = thruput.open_campaign(CAMPAIGN)
    tables = evaluate(ds)
    body = exposition(ds, tables)
    assert body.count("# TYPE thruput_monitor_state gauge") == 1
    assert "'a-b forward tcp b65536 throughput'=" in perfdata(ds, tables)


def test_grafana_dashboard_queries_exported_metrics(text):
    dashboard = json.loads((ROOT / "docs" / "grafana-thruput.json").read_text())
    exported = set(re.findall(r"^# TYPE (\S+) ", text, re.MULTILINE))
    queried = {name for panel in dashboard["panels"] for t in panel["targets"]
               for name in re.findall(r"thruput_monitor_\w+", t["expr"])}
    assert queried and queried <= exported, queried - exported
    assert {p["type"] for p in dashboard["panels"]} >= {"state-timeline", "timeseries"}
