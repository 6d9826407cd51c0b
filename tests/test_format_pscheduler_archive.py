"""perfSONAR 5 in: the real bodies pScheduler's http archiver posted (shared corpus; skipped
when absent) read by pscheduler_throughput / pscheduler_latency, and the archive
documents constructed from them by perfsonar/logstash's pipeline
(tools/pscheduler_archive_from_corpus.py; tests/data/pscheduler_archive_*) read by
pscheduler_archive_throughput / pscheduler_archive_latency, then imported as a monitor
campaign."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import thruput
from thruput.cli.inspect import inspect_file
from thruput.contract import validate
from thruput.errors import ParseError

from .conftest import DATA, ROOT

T = DATA / "pscheduler_archive_throughput"
L = DATA / "pscheduler_archive_latency"
BODIES = "perfsonar5/pscheduler-http-archiver"


def _doc(path):
    return json.loads(path.read_text())


def _body(corpus, stem):
    found = sorted((corpus / BODIES).glob(stem + "*.json"))
    if not found:
        pytest.skip(f"{stem} not in the corpus")
    return found[0]


# --- the real http archiver bodies ----------------------------------------------------

def test_real_iperf3_body_is_read_with_both_rates(corpus):
    path = _body(corpus, "throughput-192.168.1.104-to-192.168.1.101")
    ds = validate(thruput.read(path))
    total = _doc(path)["result"]["summary"]["summary"]
    assert ds.attrs["format"] == "pscheduler_throughput"
    assert float(ds.throughput_sender[0]) == total["throughput-bits"] == 942617924.239199
    assert float(ds.throughput_receiver[0]) == float(ds.throughput[0]) == total["receiver-throughput-bits"]
    assert float(ds.retransmits[0]) == 7 and ds.sizes["interval"] == 10
    assert ds.start_time.values[0] == np.datetime64("2026-07-27T06:02:10")
    assert ds.attrs["consistent"] == 1


def test_real_ping_with_100_percent_loss_is_consistent(corpus):
    ds = validate(thruput.read(_body(corpus, "rtt-FAILED-192.0.2.1")))
    summary = inspect_file(_body(corpus, "rtt-FAILED-192.0.2.1"))["summary"]
    assert ds.sizes["probe"] == 0 and ds.attrs["consistent"] == 1
    assert (summary["sent"], summary["received"], summary["loss_fraction"]) == (5, 0, 1.0)


def test_real_twamp_with_an_unsynchronised_clock_shows_its_delays(corpus):
    path = _body(corpus, "latency-twamp-192.168.1.101")
    report = inspect_file(path)
    delay = report["summary"]["delay_ms"]
    # the VM's clock was off: every one-way delay is negative, and pScheduler says why
    assert delay["min"] == -15.5 and delay["max"] == -11.71 and delay["p50"] == -13.16
    ds = thruput.read(path)
    assert float(ds.pscheduler_max_clock_error) == 27.47 and ds.attrs["consistent"] == 1


def test_inspect_shows_a_266_point_esmond_series(corpus):
    report = inspect_file(corpus / "perfsonar5" / "esmond-era" / "throughput-86400.json")
    tp = report["summary"]["throughput_bps"]
    values = [r["throughput_bps"] for r in report["summary"]["per_run"]]
    assert report["summary"]["runs"] == 266 == tp["runs"]
    assert tp["median"] == float(np.median(values)) and tp["max"] == max(values) and 9e8 < tp["median"] < 1e9


@pytest.mark.parametrize("stem", ["throughput-192.168.1.104", "rtt-1.1.1.1", "rtt-8091.info",
                                  "rtt-twping-192.168.1.101-archiver", "latency-twamp-192.168.1.101"])
def test_archive_documents_hold_the_numbers_of_their_body(corpus, stem):
    """Each constructed document against the reader of the real body it was made from."""
    body = thruput.read(_body(corpus, stem))
    if stem.startswith("throughput"):
        ds = thruput.read(T / "constructed--5.2-iperf3-document.json")
        assert float(ds.throughput[0]) == float(body.throughput_sender[0])       # the sender's
        np.testing.assert_array_equal(ds.interval_bytes.values, body.interval_bytes.values)
        np.testing.assert_array_equal(ds.interval_rtt.values, body.interval_rtt.values)
        return
    if stem.startswith("latency"):
        ds = thruput.read(L / "constructed--5.2-latency-twamp-document.json")
        np.testing.assert_array_equal(ds.pscheduler_delay_percentile.values[0], body.pscheduler_delay_percentile.values)
        assert float(ds.pscheduler_delay_mean[0]) == pytest.approx(float(body.pscheduler_delay_mean), rel=1e-12)
        return
    ds = thruput.read(L / "constructed--5.2-rtt-search.json")
    mine = ds.pscheduler_probe_doc.values == ["rtt-1.1.1.1", "rtt-8091.info", "rtt-FAILED",
                                              "rtt-twping-192.168.1.101-archiver"].index(stem)
    np.testing.assert_array_equal(ds.rtt.values[mine], body.rtt.values)
    np.testing.assert_array_equal(ds.status.values[mine], body.status.values)


# --- the constructed archive documents (always run) ----------------------------------

def test_throughput_document_search_and_dumps_agree():
    doc = _doc(T / "constructed--5.2-iperf3-document.json")
    one = validate(thruput.read(T / "constructed--5.2-iperf3-document.json"))
    assert one.attrs["format"] == "pscheduler_archive_throughput" and one.attrs["consistent"] == 1
    assert float(one.throughput[0]) == doc["result"]["throughput"] == float(one.throughput_sender[0])
    assert np.isnan(float(one.throughput_receiver[0]))               # 5.2 drops the receiver's rate
    assert float(one.retransmits[0]) == doc["result"]["retransmits"]
    intervals = json.loads(doc["result"]["intervals"]["json"])          # kept as JSON text
    assert one.interval_throughput.values[0, 0].tolist() == [iv["streams"][0]["throughput-bits"] for iv in intervals]
    # time: when the run started, not when Logstash received it
    assert one.start_time.values[0] == np.datetime64(doc["pscheduler"]["start_time"][:19])
    assert doc["@timestamp"][:19] != doc["pscheduler"]["start_time"][:19]
    assert str(one.pscheduler_source_hostname.values[0]) == "192.168.1.104"     # 5.1+: the ip
    search = thruput.read(T / "constructed--5.2-iperf3-search.json")
    old = thruput.read(T / "constructed--5.0-iperf3-elasticdump.ndjson")
    for other in (search, old):
        np.testing.assert_array_equal(other.interval_bytes.values, one.interval_bytes.values)
        assert float(other.throughput[0]) == float(one.throughput[0])
    assert str(search.pscheduler_index.values[0]) == ".ds-pscheduler_throughput-2026.07.27-000001"
    assert str(old.pscheduler_index.values[0]) == "pscheduler_throughput-2026.07.27"   # daily, before 5.0.5
    assert str(old.pscheduler_source_hostname.values[0]) == ""                 # null before 5.1


def test_cut_dump_keeps_its_complete_documents():
    ds = validate(thruput.read(T / "constructed--5.2-iperf3-elasticdump-cut-in-second-document.ndjson"))
    assert ds.sizes["run"] == 1 and ds.attrs["truncated"] == 1 and "line 2" in ds.attrs["truncation"]


def test_rtt_search_response_units_and_loss():
    hits = _doc(L / "constructed--5.2-rtt-search.json")["hits"]["hits"]
    ds = validate(thruput.read(L / "constructed--5.2-rtt-search.json"))
    assert ds.sizes["pscheduler_doc"] == 4 and ds.attrs["consistent"] == 1
    # rtt statistics stored in seconds -> ms
    means = [hits[i]["_source"]["result"]["rtt"]["mean"] for i in (0, 1, 3)]
    np.testing.assert_allclose(ds.pscheduler_rtt_mean.values[[0, 1, 3]], np.array(means) * 1e3)
    assert np.isnan(ds.pscheduler_rtt_mean.values[2])                     # 100 % loss: none
    assert ds.pscheduler_loss.values.tolist() == [0.0, 0.0, 1.0, 0.0]
    assert ds.pscheduler_destination_hostname.values.tolist() == ["one.one.one.one", "8091.info", "192.0.2.1",
                                                                  "192.168.1.101"]
    old = thruput.read(L / "constructed--5.0-rtt-scroll.ndjson")
    np.testing.assert_array_equal(old.rtt.values, ds.rtt.values)
    assert old.pscheduler_destination_hostname.values.tolist()[2:] == ["", ""]   # no reverse name, before 5.1
    cut = validate(thruput.read(L / "constructed--5.2-rtt-scroll-cut-in-fourth-document.ndjson"))
    assert cut.sizes["pscheduler_doc"] == 3 and cut.attrs["truncated"] == 1


def test_latency_histogram_keys_are_in_bucket_width_units():
    doc = _doc(L / "constructed--5.2-latency-twamp-document.json")
    ms = validate(thruput.read(L / "constructed--5.2-latency-twamp-document.json"))
    tenth = validate(thruput.read(L / "constructed--5.2-latency-twamp-bucket-0.0001-document.json"))
    # the same delays: keys of 0.001 s (ms) and of 0.0001 s (tenths of ms)
    np.testing.assert_allclose(tenth.pscheduler_delay_percentile.values, ms.pscheduler_delay_percentile.values)
    latency = doc["result"]["latency"]
    assert ms.pscheduler_delay_percentile.values[0].tolist() == [latency["p25"], latency["median"], latency["p75"],
                                                                latency["p95"]]
    assert float(ms.pscheduler_max_clock_error[0]) == 27.47 and ms.attrs["consistent"] == 1
    assert inspect_file(L / "constructed--5.2-latency-twamp-document.json")["summary"]["delay_ms"]["p50"] == -13.16


def test_a_line_that_is_no_document_is_refused(tmp_path):
    lines = (L / "constructed--5.0-rtt-scroll.ndjson").read_text().splitlines()
    bad = tmp_path / "bad.ndjson"
    bad.write_text("\n".join([lines[0], '{"took": 1}', *lines[1:]]) + "\n")
    with pytest.raises(ParseError, match=r":2: not a perfSONAR archive document"):
        thruput.read(bad, format="pscheduler_archive_latency")
    with pytest.raises(ParseError, match="not one of latency"):
        thruput.read(T / "constructed--5.2-iperf3-document.json", format="pscheduler_archive_latency")


# --- campaign import --kind monitor ---------------------------------------------------

def _cli(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "thruput.cli", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("ps5")
    src = tmp_path / "dumps"
    src.mkdir()
    for path in (L / "constructed--5.2-rtt-search.json", L / "constructed--5.2-latency-twamp-document.json",
                 T / "constructed--5.2-iperf3-document.json"):
        (src / path.name).write_bytes(path.read_bytes())
    done = _cli("campaign", "import", "--kind", "monitor", "--root", tmp_path / "raw", "--interval", "60", "ps5", src)
    assert done.returncode == 0, done.stderr
    return tmp_path / "raw" / "ps5"


def test_monitor_import_of_archive_dumps(imported):
    campaign = imported
    rows = list(csv.DictReader((campaign / "runs.csv").open()))
    assert [(r["path_name"], r["test"], r["started"]) for r in rows] == [
        ("lima_perfsonar_vm_one.one.one.one", "ping", "2026-07-27T05:45:23.000000Z"),
        ("192.168.1.104_192.168.1.101", "ping", "2026-07-27T05:46:05.000000Z"),
        ("lima_perfsonar_vm_8091.info", "ping", "2026-07-27T05:46:43.000000Z"),
        ("192.168.1.104_192.168.1.101", "tcp", "2026-07-27T06:02:10.000000Z"),
        ("lima_perfsonar_vm_192.0.2.1", "ping", "2026-07-27T06:08:40.000000Z"),
        ("192.168.1.104_192.168.1.101", "ping", "2026-07-27T11:41:24.000000Z")]
    assert rows[0]["path"] == "runs/constructed--5.2-rtt-search.json.d/000001.json"
    assert _cli("campaign", "check", campaign).returncode == 0
    ds = thruput.open_campaign(campaign)
    assert ds.ping_loss.values[[0, 1, 4]].tolist() == [0.0, 0.0, 1.0]      # latency: its counts, no probes
    assert ds.rtt_median.values[0] == pytest.approx(8.96) and float(ds.throughput.values[3]) == 942617924.239199
    report = _cli("monitor", "report", campaign)
    assert report.returncode == 3 and " | '" in report.stdout.splitlines()[0]     # single tests: no data now
    metrics = _cli("monitor", "metrics", campaign)
    assert metrics.returncode == 0 and 'thruput_monitor_state{campaign="ps5",path="192.0.2.1' not in metrics.stdout
    assert 'path="lima_perfsonar_vm_192.0.2.1",direction="forward",test="ping",socket_buffer="",size=""} 1' \
        in metrics.stdout                                                         # its loss ratio
    if shutil.which("promtool"):
        check = subprocess.run(["promtool", "check", "metrics"], input=metrics.stdout, capture_output=True,
                               text=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr


def test_the_monitor_page_renders_for_an_imported_archive(imported, tmp_path):
    import nbformat

    from thruput.site.execute import execute
    from thruput.stats import monitor_product
    from thruput.campaign.store import write_product as save_product

    save_product(monitor_product(thruput.open_campaign(imported), {"n_boot": 20}), tmp_path / "ps5.stats.nc")
    out = tmp_path / "monitor.ipynb"
    execute(ROOT / "notebooks" / "monitor.ipynb", out, {"campaign": "ps5", "processed": str(tmp_path)}, cwd=ROOT)
    cells = [c for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code"]
    assert not [o for c in cells for o in c.outputs if o.output_type == "error"]
    assert "".join(o.get("data", {}).get("text/html", "") for c in cells for o in c.outputs).count("vegaEmbed(") >= 3


def test_monitor_import_of_the_real_http_archiver_bodies(corpus, tmp_path):
    """The bodies as an archiver's HTTP server caught them: time from run.start-time, path
    from the spec; the throughput is the receiver's here (the archive keeps the sender's)."""
    done = _cli("campaign", "import", "--kind", "monitor", "--root", tmp_path, "--interval", "60", "bodies",
                corpus / BODIES)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader((tmp_path / "bodies" / "runs.csv").open()))
    assert [(r["path_name"], r["test"], r["started"][:19]) for r in rows] == [
        ("1.1.1.1", "ping", "2026-07-27T05:45:23"), ("192.168.1.104_192.168.1.101", "ping", "2026-07-27T05:46:05"),
        ("8091.info", "ping", "2026-07-27T05:46:43"), ("192.168.1.104_192.168.1.101", "tcp", "2026-07-27T06:02:10"),
        ("192.0.2.1", "ping", "2026-07-27T06:08:40"), ("192.168.1.104_192.168.1.101", "ping", "2026-07-27T11:41:24")]
    ds = thruput.open_campaign(tmp_path / "bodies")
    assert float(ds.throughput.values[3]) == 939753602.196996 and ds.ping_loss.values[4] == 1.0
