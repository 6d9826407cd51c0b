"""``thruput record --design`` between two network namespaces the test creates, over a
path with delay, a rate limit and random loss (tools/delayline.py: netem is not available
here): congestion control (reno, bbr; sysctl at both ends) x MTU (1500, 9000; ip link at
both ends) x application (iperf3, http, disk). Afterwards both namespaces' MTU and
congestion control are what they were, ``thruput campaign check`` passes and the campaign
opens with those factors; each run's throughput is its tool's own. Then a smaller design
with the far end over ssh to a namespace running a real sshd. Needs root, iproute2,
/dev/net/tun, iperf3, curl (and openssh-server for the ssh test)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import subprocess
import time

import numpy as np
import pytest

import thruput
from thruput.campaign.check import check_campaign
from thruput.cli import main

from .conftest import load_tool

pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("iperf3")
                       or not shutil.which("curl") or not os.path.exists("/dev/net/tun"),
                       reason="needs root, iproute2, /dev/net/tun, iperf3 and curl"),
]

delayline = load_tool("delayline")
#: Unique per test process, with this helper's prefix.
NAME = f"tph9-{os.getpid() % 10000}"
PORT = 5391


def _state(ns, dev):
    def sh(*argv):
        return subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True,
                              check=True).stdout.strip()
    return sh("cat", f"/sys/class/net/{dev}/mtu"), sh("sysctl", "-n", "net.ipv4.tcp_congestion_control")


def _devices(p):
    out = {}
    for ns in (p["ns_a"], p["ns_b"]):
        text = subprocess.run(["ip", "netns", "exec", ns, "ip", "-o", "link"], capture_output=True,
                              text=True, check=True).stdout
        out[ns] = [line.split(":")[1].strip().split("@")[0] for line in text.splitlines()
                   if f"{NAME}-t" in line][0]
    return out


def test_design_cc_x_mtu_x_application_between_namespaces(tmp_path, monkeypatch):
    campaign = tmp_path / "design-lab"
    with delayline.path(NAME, delay="5ms", rate="40mbit", queue="256k", subnet="10.79.9",
                        loss=0.002, seed=56) as p:
        devs = _devices(p)
        before = {ns: _state(ns, dev) for ns, dev in devs.items()}
        code = main(["record", str(campaign), "--to", p["addr_b"], "--netns", p["ns_a"],
                     "--far", f"netns:{p['ns_b']}", "--port", str(PORT),
                     "--factor", "cc=reno,bbr", "--factor", "mtu=1500,9000",
                     "--factor", "application=iperf3,http,disk",
                     "--duration", "1", "--size", "2M", "--seed", "7", "--no-progress"])
        after = {ns: _state(ns, dev) for ns, dev in devs.items()}
        # resuming records nothing again
        again = main(["record", str(campaign), "--to", p["addr_b"], "--netns", p["ns_a"],
                      "--far", f"netns:{p['ns_b']}", "--port", str(PORT), "--factor", "cc=reno,bbr",
                      "--factor", "mtu=1500,9000", "--factor", "application=iperf3,http,disk",
                      "--no-progress"])
    assert code == 0 and again == 0
    assert after == before, "MTU and congestion control are back to what they were"
    problems = check_campaign(campaign)
    assert not problems, problems   # no error, no warning: the server logs are listed as ancillary
    ds = thruput.open_campaign(campaign)
    assert ds.attrs["campaign_kind"] == "design"
    assert [f for f in ("cc", "mtu", "application") if f in ds.coords] == ["cc", "mtu", "application"]
    assert ds.sizes["run"] == 12
    assert set(ds.cc.values) == {"reno", "bbr"} and set(ds.mtu.values.tolist()) == {1500, 9000}
    assert set(ds.application.values) == {"iperf3", "http", "disk"}
    assert (ds.outcome.values == "ok").all()
    assert (ds.throughput.values > 1e6).all() and (ds.throughput.values < 45e6).all()
    # each run's throughput is its tool's own (curl's speed; iperf3's receiver rate)
    for i in range(ds.sizes["run"]):
        log = thruput.read(campaign / str(ds.source.values[i]))
        assert ds.throughput.values[i] == pytest.approx(float(log.throughput.values[0]), rel=1e-9)
    meta = (campaign / "campaign.yaml").read_text()
    assert "applied: sysctl net.ipv4.tcp_congestion_control" in meta and "applied: mtu" in meta
    # the congestion control and MTU in force are in the logs themselves
    for run in ds.run.values[ds.application.values == "iperf3"]:
        text = (campaign / "runs" / f"{run}.json").read_text()
        cc = str(ds.cc.sel(run=run).values)
        assert f'"sender_tcp_congestion":\t"{cc}"' in text or f'"sender_tcp_congestion": "{cc}"' in text
        mss = json.loads(text)["start"]["tcp_mss_default"]
        assert (mss > 8000) == (int(ds.mtu.sel(run=run).values) == 9000), (run, mss)
    assert (campaign / "server").is_dir() and len(list((campaign / "server").iterdir())) == 8
    assert "far:" in meta and "near:" in meta
    # its page compares them: the pipeline's product, then every part of the campaign page
    from .test_design_pages import check_page, page_items, processed

    from thruput.report import campaigns as report

    stored = processed(tmp_path, ds)
    product = report.read_product(stored)
    assert {f"compare/{f}" for f in ("cc", "mtu", "application")} <= {
        node.path.lstrip("/") for node in product.subtree}, "a level comparison for each factor"
    items = page_items(stored, monkeypatch)
    assert check_page(items) == []
    text = " ".join(str(getattr(i, "data", "")) for i in items)
    assert "## Levels compared" in text and "bbr" in text and "reno" in text


def _sshd(tmp_path, ns, address, port):
    """A real sshd (Debian's openssh-server) in namespace ``ns`` with its own config, host
    key and authorized key, /run a tmpfs of its own mount namespace (for /run/sshd): no
    system-wide change. Returns (Popen, ssh options)."""
    for name in ("host", "id"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / name)], check=True)
    (tmp_path / "authorized_keys").write_text((tmp_path / "id.pub").read_text())
    config = tmp_path / "sshd_config"
    config.write_text(f"Port {port}\nListenAddress {address}\nHostKey {tmp_path / 'host'}\n"
                      f"AuthorizedKeysFile {tmp_path / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
                      f"PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
                      f"StrictModes no\nPidFile none\nSubsystem sftp internal-sftp\n")
    proc = subprocess.Popen(["ip", "netns", "exec", ns, "sh", "-c",
                             "mount -t tmpfs tmpfs /run && mkdir -m 755 /run/sshd && "
                             f"exec /usr/sbin/sshd -D -e -f {config}"],
                            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "sshd.log", "w"))
    options = ["-p", str(port), "-i", str(tmp_path / "id"), "-o", "StrictHostKeyChecking=no",
               "-o", f"UserKnownHostsFile={tmp_path / 'known_hosts'}", "-o", "ConnectTimeout=10"]
    return proc, options


@pytest.mark.skipif(not os.path.exists("/usr/sbin/sshd") or not shutil.which("ssh"),
                    reason="needs openssh-server and openssh-client")
def test_design_with_the_far_end_over_ssh(tmp_path):
    campaign = tmp_path / "design-ssh"
    name = f"{NAME}s"
    with delayline.path(name, delay="5ms", rate="40mbit", queue="256k", subnet="10.79.11",
                        loss=0.002, seed=57) as p:
        sshd, options = _sshd(tmp_path, p["ns_b"], p["addr_b"], 2222)
        try:
            for _ in range(100):   # until sshd answers
                if subprocess.run(["ip", "netns", "exec", p["ns_a"], "ssh", "-o", "BatchMode=yes", *options,
                                   f"root@{p['addr_b']}", "true"], capture_output=True).returncode == 0:
                    break
                time.sleep(0.1)
            devs = {p["ns_a"]: f"{name}-ta", p["ns_b"]: f"{name}-tb"}
            before = {ns: _state(ns, dev) for ns, dev in devs.items()}
            code = main(["record", str(campaign), "--to", p["addr_b"], "--netns", p["ns_a"],
                         "--far", f"ssh:root@{p['addr_b']}", *[f"--ssh-option={o}" for o in options],
                         "--port", str(PORT), "--factor", "cc=reno,bbr", "--factor", "mtu=1500,9000",
                         "--factor", "application=iperf3,http", "--duration", "1", "--size", "1M",
                         "--seed", "8", "--no-progress"])
            after = {ns: _state(ns, dev) for ns, dev in devs.items()}
        finally:
            sshd.terminate()
            sshd.wait(10)
    assert code == 0
    assert after == before
    assert not check_campaign(campaign)
    ds = thruput.open_campaign(campaign)
    assert ds.sizes["run"] == 8 and (ds.outcome.values == "ok").all()
    assert set(ds.application.values) == {"iperf3", "http"}
    meta = (campaign / "campaign.yaml").read_text()
    assert "reached over ssh" in meta and f"ssh:root@{p['addr_b']}" in meta
    assert len(list((campaign / "server").iterdir())) == 4


def test_interrupted_design_restores_the_settings_and_resumes(tmp_path):
    """SIGINT in the middle of a run: the namespaces' MTU and congestion control are put
    back, the command exits 130, and running it again records only the rest."""
    campaign = tmp_path / "design-cut"
    name = f"{NAME}i"
    with delayline.path(name, delay="2ms", rate="40mbit", queue="256k", subnet="10.79.13") as p:
        devs = {p["ns_a"]: f"{name}-ta", p["ns_b"]: f"{name}-tb"}
        before = {ns: _state(ns, dev) for ns, dev in devs.items()}
        argv = [sys.executable, "-m", "thruput.cli", "record", str(campaign), "--to", p["addr_b"],
                "--netns", p["ns_a"], "--far", f"netns:{p['ns_b']}", "--port", str(PORT + 2),
                "--factor", "cc=reno,bbr", "--factor", "mtu=9000,1400", "--duration", "3", "--seed", "3",
                "--no-progress"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None and not (
                    (campaign / "runs.csv").exists() and len((campaign / "runs.csv").read_text().splitlines()) >= 2):
                time.sleep(0.1)
            time.sleep(1.0)        # inside the second run
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        interrupted = {ns: _state(ns, dev) for ns, dev in devs.items()}
        rows = len((campaign / "runs.csv").read_text().splitlines()) - 1
        again = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        after = {ns: _state(ns, dev) for ns, dev in devs.items()}
    assert proc.returncode == 130, err
    assert "restored" in err
    assert interrupted == before and after == before
    assert 1 <= rows < 4
    assert again.returncode == 0, again.stderr
    assert f"{4 - rows} runs recorded, {rows} already there" in again.stdout
    ds = thruput.open_campaign(campaign)
    assert ds.sizes["run"] == 4 and (ds.outcome.values == "ok").all()


@pytest.mark.skipif(not shutil.which("tcpdump"), reason="needs tcpdump")
def test_capture_of_a_recorded_run_agrees_with_iperf3(tmp_path):
    """--capture keeps a headers-only pcap per run; the bytes the receiver acknowledged in
    it are iperf3's receiver bytes within 1 %, and its retransmissions are the sender's
    count (the capture is at the sender, so it sees every one; at most a congestion window
    more, sent after iperf3 read its counter)."""
    from thruput.packets import flow_series, read_pcap

    campaign = tmp_path / "design-cap"
    name = f"{NAME}c"
    with delayline.path(name, delay="5ms", rate="30mbit", queue="64k", subnet="10.79.17",
                        loss=0.005, seed=58) as p:
        code = main(["record", str(campaign), "--to", p["addr_b"], "--netns", p["ns_a"],
                     "--far", f"netns:{p['ns_b']}", "--port", str(PORT + 4), "--factor", "cc=reno,bbr",
                     "--duration", "3", "--seed", "4", "--capture", "--no-progress"])
    assert code == 0
    assert not check_campaign(campaign)
    for run in ("reno-r0", "bbr-r0"):
        result = json.loads((campaign / "runs" / f"{run}.json").read_text())
        flows, info = read_pcap(campaign / "runs" / f"{run}.pcap")
        assert info["snaplen"] == 128 and not info["truncated"]
        data = max(flows, key=lambda k: flows[k].payload_bytes)
        ds = flow_series(flows, data)
        received = result["end"]["sum_received"]["bytes"]
        assert abs(float(ds.bytes_acked) / received - 1) < 0.01, (run, float(ds.bytes_acked), received)
        # iperf3 reads the kernel's counter when its test ends: a segment of the last window
        # sent again while the connection closes is in the capture only, so the capture has
        # at most a congestion window's segments more (a CI run under load saw 168 vs 164)
        sender = result["end"]["sum_sent"]["retransmits"]
        last = result["intervals"][-1]["streams"][0]
        window = max(1, int(last.get("snd_cwnd", 0)) // int(result["start"].get("tcp_mss_default") or 1448))
        assert sender > 0 and 0 <= int(ds.retransmits) - sender <= window, \
            (run, int(ds.retransmits), sender, window)
        assert 10 < float(ds.rtt.median()) < 200      # 10 ms of path plus queueing
        assert float(ds.interval_throughput.sum() * ds.attrs["bin_s"] / 8) == pytest.approx(float(ds.bytes))
    # damaged copies: cut inside a record (the complete ones kept), a record length that
    # exceeds the snap length (refused, naming the record), not a pcap at all
    from thruput.errors import ParseError

    raw = (campaign / "runs" / "bbr-r0.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(raw[: len(raw) // 2])
    flows, info = read_pcap(cut)
    assert info["truncated"] and 0 < info["records"] < read_pcap(campaign / "runs" / "bbr-r0.pcap")[1]["records"]
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(raw[:24 + 8] + (10**6).to_bytes(4, "little") + raw[24 + 12:])
    with pytest.raises(ParseError, match="record 1 claims 1000000"):
        read_pcap(bad)
    with pytest.raises(ParseError, match="not a pcap"):
        read_pcap(campaign / "runs" / "bbr-r0.json")


@pytest.mark.skipif(not shutil.which("iperf") or not shutil.which("nuttcp"), reason="needs iperf 2 and nuttcp")
def test_iperf2_and_nuttcp_take_the_equivalent_options(tmp_path):
    """application iperf2, nuttcp, iperf3 x window: each tool gets the window in its own
    spelling (iperf -w, nuttcp -w<KB>), and -C (no nuttcp equivalent) leaves nuttcp's cell
    empty; each log is read by its own reader."""
    campaign = tmp_path / "design-tools"
    name = f"{NAME}t"
    with delayline.path(name, delay="2ms", rate="40mbit", queue="256k", subnet="10.79.19") as p:
        code = main(["record", str(campaign), "--to", p["addr_b"], "--netns", p["ns_a"],
                     "--far", f"netns:{p['ns_b']}", "--port", str(PORT + 6),
                     "--factor", "application=iperf2,nuttcp,iperf3", "--factor", "window=131072,1048576",
                     "--factor", "cc=reno", "--apply", "cc=iperf3 -C", "--duration", "1", "--no-progress"])
    assert code == 0
    assert not check_campaign(campaign)
    ds = thruput.open_campaign(campaign)
    assert ds.sizes["run"] == 6 and (ds.outcome.values == "ok").all()
    assert list(ds.cc.values[ds.application.values == "nuttcp"]) == ["", ""]
    for run in ds.run.values:
        log = thruput.read(campaign / str(ds.source.sel(run=run).values))
        assert log.attrs["tool"].startswith({"iperf2": "iperf", "nuttcp": "nuttcp", "iperf3": "iperf3"}[
            str(ds.application.sel(run=run).values)])
        assert float(ds.throughput.sel(run=run)) == pytest.approx(float(log.throughput.values[0]))
    text = (campaign / "runs" / "nuttcp-131072-_-r0.txt").read_text()
    assert "receive window size = 131072" in text
