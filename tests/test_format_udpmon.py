"""UDPmon readers (udpmon_bw_mon, udpmon_req): hand-checked values and agreement with the
numbers the tool printed itself, on the samples and on every corpus file."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import thruput
from thruput.errors import ParseError
from thruput.formats import udpmon_bw, udpmon_req

from .conftest import DATA

BW = DATA / "udpmon_bw"
REQ = DATA / "udpmon_req"


def _printed_2g(value):
    """Half a unit of the second significant digit: how UDPmon's %g-style %lost rounds."""
    if value == 0:
        return 1e-9
    return 0.5 * 10 ** (math.floor(math.log10(abs(value))) - 1) + 1e-9


def check_bw_agrees_with_tool(ds):
    """Loss and rates re-derived from counts and times agree with what udpmon_bw_mon printed."""
    lost_pct = ds["loss_fraction"].values * 100
    for derived, printed in zip(lost_pct, ds["udpmon_lost_percent"].values):
        assert abs(derived - printed) <= _printed_2g(printed)
    if "udpmon_send_time" in ds:  # -x: rate = bits sent / send time (us) -> Mbit/s
        bits = ds["packet_size"] * ds["packets_sent"] * 8
        np.testing.assert_allclose(bits / ds["udpmon_send_time"] * 1e6, ds["send_rate"], rtol=1e-3)
        bits = ds["packet_size"] * ds["packets_received"] * 8
        np.testing.assert_allclose(bits / ds["udpmon_recv_time"] * 1e6, ds["recv_rate"], rtol=1e-3)


def test_extended_row_by_hand():
    ds = thruput.read(BW / "x--p1000-w0-40.txt")
    row = ds.isel(row=1)  # " 1000; 2000; 0; 0; 16.7435;  2;  33487; 477.797; 1668; 332; 0; 17; ..."
    assert float(row.packet_size) == 1000 and float(row.spacing) == 2
    assert float(row.send_rate) == 477.797e6 and float(row.recv_rate) == 398.738e6
    assert float(row.udpmon_recv_wire_rate) == 425.055e6
    assert float(row.packets_lost) == 332 and float(row.loss_fraction) == pytest.approx(332 / 2000)
    assert float(row.udpmon_time_per_frame) == 16.7435 and float(row.udpmon_send_time) == 33487
    assert float(row.udpmon_hist_count) == 1334 and float(row.udpmon_hist_iq75) == 115
    assert int(row.line) == 14
    # the -x blocks: CPU loads, interface and SNMP counters of both hosts
    assert ds.udpmon_cpu.values.tolist() == ["L", "L0", "L1", "R", "R0", "R1"]
    assert row.udpmon_cpu_kernel.sel(udpmon_cpu="L").item() == 57
    assert row.udpmon_cpu_softirq.sel(udpmon_cpu="L").item() == 14
    assert ds.udpmon_if.values.tolist() == ["L lo", "L uma", "R lo", "R umb"]
    assert row.udpmon_if_bytesout.sel(udpmon_if="L uma").item() == 2084070
    assert ds.udpmon_if_bytesout.attrs["units"] == "byte"
    assert row.udpmon_snmp_UDPInDatagrams.sel(udpmon_host="R").item() == 1669
    assert row.udpmon_snmp_UDPInErrors.sel(udpmon_host="R").item() == 332
    check_bw_agrees_with_tool(ds)


def test_banner_goes_to_attrs():
    ds = thruput.read(BW / "x--p1000-w0-40.txt")
    assert ds.attrs["tool_version"] == "1.5.2"
    assert json.loads(ds.attrs["udpmon_flags"]) == {
        "-d": "10.214.0.2", "-p": "1000", "-l": "2000", "-w": "0", "-i": "2", "-e": "40", "-x": ""}
    assert ds.attrs["udpmon_cpu_mhz"] == 2596.1318851
    assert (ds.attrs["udpmon_rcvbuf_default"], ds.attrs["udpmon_rcvbuf"]) == (212992, 65535)
    assert ds.attrs["udpmon_destination_ip"] == "10.214.0.2"
    assert ds.attrs["udpmon_destination_port"] == 14233


def test_plain_and_extended_agree():
    plain = thruput.read(BW / "plain--p1000-derived.txt")
    ext = thruput.read(BW / "x--p1000-w0-40.txt")
    for name in ("packet_size", "spacing", "send_rate", "recv_rate", "packets_lost", "loss_fraction"):
        np.testing.assert_array_equal(plain[name].values, ext[name].values)
    assert "udpmon_cpu" not in plain.dims and "udpmon_send_time" not in plain
    check_bw_agrees_with_tool(plain)


def test_quiet_rows_keep_host_prefix():
    ds = thruput.read(BW / "quiet--p1472.txt")
    assert ds.udpmon_start_time.values.tolist() == [1795340078 + i for i in range(5)]
    assert set(ds.udpmon_local_name.values) == {"vm"}
    assert set(ds.udpmon_remote_ip.values) == {"10.214.0.2"}
    # last row: 686 received of 1000 -> UDPmon prints %lost 31 while num_lost says 237
    last = ds.isel(row=-1)
    assert float(last.loss_fraction) == pytest.approx(0.314) and float(last.packets_lost) == 237
    check_bw_agrees_with_tool(ds)


def test_truncated_row_is_reported_not_kept():
    ds = thruput.read(BW / "truncated--p1000-cut-in-row.txt")
    assert ds.sizes["row"] == 6 and ds.attrs["truncated"] == 1
    assert "line 19" in ds.attrs["truncation"]


@pytest.mark.parametrize("kept", [" 1", " 1795340082 ; 127.0"])
def test_quiet_row_cut_inside_its_host_prefix_is_truncated(kept):
    text = (BW / "quiet--p1472.txt").read_text()
    ds = udpmon_bw.parse(text[: text.rindex(" 1795340082 ;")] + kept)
    assert ds.sizes["row"] == 4 and ds.attrs["truncation"] == "last row (line 5) cut off"
    assert json.loads(ds.attrs["skipped_reasons"]) == {"truncated row": 1}


@pytest.mark.parametrize("name", ["quiet--p1472.txt", "plain--p1000-derived.txt"])
def test_row_cut_inside_its_last_number_is_truncated_not_kept(name):
    text = (BW / name).read_text()
    cut = text.rstrip().rstrip(";")[:-1]  # UDPmon ends every row with ';': one digit less
    ds, full = udpmon_bw.parse(cut), udpmon_bw.parse(text)
    assert ds.sizes["row"] == full.sizes["row"] - 1 and ds.attrs["truncated"] == 1
    assert json.loads(ds.attrs["skipped_reasons"])["truncated row"] == 1


def test_bad_row_names_file_and_line():
    with pytest.raises(ParseError) as err:
        thruput.read(BW / "bad--short-row.txt")
    assert err.value.line == 15 and "bad--short-row.txt:15" in str(err.value)


@pytest.mark.parametrize("module", [udpmon_bw, udpmon_req])
def test_empty_input(module):
    with pytest.raises(ParseError, match="empty input"):
        module.parse("\n \n")


def test_latency_scan_by_hand():
    ds = thruput.read(REQ / "scan--r64-i64-e1472.txt")
    assert ds.sizes["point"] == 23
    first = ds.isel(point=0)  # " 64;  64;  1000;   0;  19.463;   19.408;   16.14;  925.151; 0"
    assert (float(first["size"]), float(first.request_size), float(first["count"])) == (64, 64, 1000)
    assert (float(first.latency_avg), float(first.latency_min), float(first.latency_max)) == (19.408, 16.14, 925.151)
    assert float(first.udpmon_time_per_frame) == 19.463
    assert ds["size"].values[-1] == 1472 and ds.latency_avg.values[-1] == 97.809
    assert json.loads(ds.attrs["udpmon_flags"])["-e"] == "1472"


def test_histogram_agrees_with_printed_statistics():
    ds = thruput.read(REQ / "histogram--r64-l5000-H.txt")
    counts = ds.udpmon_hist_counts.isel(point=0)
    assert ds.sizes["udpmon_hist_bin"] == 150 and counts.sel(udpmon_hist_bin=18).item() == 884
    printed = json.loads(ds.attrs["tool_summary"])["histograms"][0]
    assert printed["entries"] == 4994 and printed["overflows"] == 6
    assert counts.sum().item() == printed["entries"]
    # entries + underflows + overflows = the 5000 exchanges of the row
    assert printed["entries"] + printed["underflows"] + printed["overflows"] == float(ds["count"][0])
    # the printed mean/median/quartiles follow from the bins (bin value = lower edge, us)
    bins = ds.udpmon_hist_bin.values
    assert (bins * counts.values).sum() / counts.sum().item() == pytest.approx(printed["mean"], abs=0.01)
    cumulative = np.cumsum(counts.values) / counts.sum().item()
    assert bins[np.searchsorted(cumulative, 0.5)] == printed["median"] == 19
    assert bins[np.searchsorted(cumulative, 0.25)] == printed["q25"] == 18
    assert bins[np.searchsorted(cumulative, 0.75)] == printed["q75"] == 76


def test_a_bin_label_beyond_float64_is_an_error_without_a_warning():
    """A damaged histogram whose bin label overflows float64: a ParseError names the bin;
    NumPy warns of nothing on the way (the fuzzer's case: the bins' mean is NaN)."""
    import warnings

    from thruput.errors import ParseError

    text = (REQ / "histogram--r64-l5000-H.txt").read_text()
    bad = text.replace("\n5 ; 0\n", "\n" + "9" * 400 + " ; 0\n", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ParseError, match="udpmon_hist_bin .* is infinite"):
            udpmon_req.parse(bad)


def test_truncated_histogram_is_dropped_point_kept():
    ds = thruput.read(REQ / "truncated--histogram-cut-in-bins.txt")
    assert ds.sizes["point"] == 1 and float(ds.latency_avg[0]) == 43.659
    assert "udpmon_hist_counts" not in ds and ds.attrs["truncated"] == 1


@pytest.mark.parametrize("cut_before", ["underflows 0; overflows 6;", "149 ; 0", "47 ; 0"])
def test_histogram_cut_mid_line_is_dropped_not_an_error(cut_before):
    text = (REQ / "histogram--r64-l5000-H.txt").read_text()
    ds = udpmon_req.parse(text[: text.rindex(cut_before) + 1])
    assert ds.sizes["point"] == 1 and float(ds.latency_avg[0]) == 43.659
    assert "udpmon_hist_counts" not in ds and ds.attrs["truncated"] == 1
    assert ds.attrs["truncation"].endswith("cut off")


def test_scan_cut_before_the_first_separator_of_a_row_is_truncated():
    text = (REQ / "scan--r64-i64-e1472.txt").read_text()
    ds = udpmon_req.parse(text[: text.rindex(" 1472;") + 3])  # " 14"
    assert ds.attrs["truncated"] == 1 and json.loads(ds.attrs["skipped_reasons"])["truncated row"] == 1
    assert ds.sizes["point"] == 22 and float(ds["size"][-1]) == 1408


def test_sniffers_tell_the_two_apart():
    scan = (REQ / "scan--r64-i64-e1472.txt").read_text()[:4096]
    bw = (BW / "x--p1000-w0-40.txt").read_text()[:4096]
    assert udpmon_req.sniff(scan) and not udpmon_bw.sniff(scan)
    assert udpmon_bw.sniff(bw) and not udpmon_req.sniff(bw)


def test_every_corpus_file(corpus):
    files = sorted((corpus / "udpmon").glob("*.txt"))
    assert len(files) == 6
    for path in files:
        ds = thruput.read(path)
        assert ds.attrs["lines_parsed"] + ds.attrs["lines_skipped"] == ds.attrs["lines_total"]
        assert ds.attrs["truncated"] == 0
        if ds.attrs["format"] == "udpmon_bw":
            assert ds.sizes["row"] == (5 if "quiet" in path.name else 21)
            check_bw_agrees_with_tool(ds)
        else:
            assert ds.attrs["format"] == "udpmon_req"
            assert ds.sizes["point"] == (1 if "histogram" in path.name else 23)


def test_nic_block_with_counters():
    """udpmon_bw_mon prints NIC counters (ethtool -S names) when the driver has them; the
    corpus host had none ("R NIC; ;"), so one row is given nine values here."""
    text = (BW / "x--p1000-w0-40.txt").read_text()
    lines = text.split("\n")
    lines[12] = lines[12].replace("R NIC; ;", "R NIC; eth0: ; 1; 2; 3; 4; 5; 6; 7; 8; 9;")
    ds = udpmon_bw.parse("\n".join(lines))
    assert ds.udpmon_nic.values.tolist() == ["R eth0"]
    assert ds.udpmon_nic_rx_packets.values[0].tolist() == [1]
    assert ds.udpmon_nic_rx_out_of_buffer.values[0].tolist() == [9]
    assert np.isnan(ds.udpmon_nic_rx_packets.values[1]).all()      # other rows: not printed


def test_size_line_agrees_with_rows():
    ds = thruput.read(BW / "x--p200-w0-40.txt")
    assert ds.attrs["udpmon_size_line"] == 200 and set(ds.packet_size.values) == {200}


def test_header_without_rows_is_an_error():
    text = (BW / "x--p1000-w0-40.txt").read_text().split("\n")[:12]
    with pytest.raises(ParseError, match="no data rows"):
        udpmon_bw.parse("\n".join(text) + "\n")


# --- issue 10: the tool's derived columns checked against its counts ---------------------------

def test_sweep_rates_and_loss_agree_with_counts_and_times(corpus):
    ds = thruput.read(corpus / "udpmon" / "bw_mon-p200.txt")
    checks = json.loads(ds.attrs["consistency"])
    assert ds.attrs["consistent"] == 1
    # the worst row of each: %lost printed to 2 digits ("12" for 2000 sent, 1750 received)
    assert [(c["check"], c["tool"], round(c["data"], 4)) for c in checks] == [
        ("%lost vs (num_sent - num_recv) / num_sent (worst row: line 18)", 12.0, 12.5),
        ("send_user_data_rate vs num_sent x pkt len x 8 / Send time (worst row: line 18)", 142.437, 142.4375),
        ("recv_user_data_rate vs num_recv x pkt len x 8 / Recv time (worst row: line 16)", 123.144, 123.1445),
        # and no row whose histogram quartiles or entries are out of order
        ("histogram: iq25 <= median <= iq75: rows out of order", 0, 0),
        ("histogram: num_in_hist <= num_recv: rows out of order", 0, 0)]


def test_a_damaged_count_makes_the_sweep_inconsistent():
    from .damage import replace, sample
    text = sample("udpmon_bw", "x--p1000-w0-40.txt")
    n = next(k for k, line in enumerate(text.splitlines(), 1) if line.startswith(" 1000; 2000;"))
    ds = udpmon_bw.parse(replace(text, n, " 1000; 2000;", " 1000; 200;"))   # a lost digit
    assert ds.attrs["consistent"] == 0
    bad = [c["check"] for c in json.loads(ds.attrs["consistency"]) if not c["ok"]]
    assert bad == [f"%lost vs (num_sent - num_recv) / num_sent (worst row: line {n})",
                   f"send_user_data_rate vs num_sent x pkt len x 8 / Send time (worst row: line {n})"]


def test_histogram_adds_up_to_its_entries_and_the_loop_count():
    ds = thruput.read(DATA / "udpmon_req" / "histogram--r64-l5000-H.txt")
    checks = json.loads(ds.attrs["consistency"])
    # counts 4994 mean 42.51 underflows 0 overflows 6; loop_count 5000
    assert [(c["tool"], c["data"], c["ok"]) for c in checks[:2]] == [(4994, 4994, True), (5000, 5000, True)]
    # the opening line's figures printed again at the end; mean, sigma, median and
    # quartiles against the bins (mean 42.51 sigma 31.24; median 19; 25-quartile 18; 75-quartile 76)
    rest = {c["check"].split("histogram ")[1]: c for c in checks[2:]}
    assert all(c["ok"] for c in rest.values())
    assert sorted(rest) == sorted([
        "entries: opening line vs closing lines", "mean: opening line vs closing lines",
        "underflows: opening line vs closing lines", "overflows: opening line vs closing lines",
        "mean vs its bins", "sigma vs its bins",
        "median vs the bin where its bins' count crosses 0.5",
        "q25 vs the bin where its bins' count crosses 0.25",
        "q75 vs the bin where its bins' count crosses 0.75"])
    assert rest["mean vs its bins"]["data"] == pytest.approx(42.5076, abs=1e-4)
    assert [rest[f"{k} vs the bin where its bins' count crosses {s}"]["data"]
            for k, s in (("median", 0.5), ("q25", 0.25), ("q75", 0.75))] == [19, 18, 76]
