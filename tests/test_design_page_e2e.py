"""A design from real iperf3 -J logs, end to end: imported by --pattern, normalized and given
its statistics product by the pipeline's commands, and its page built; the product's
per-level medians and level ratios per socket buffer are what the logs' own receiver rates
give.

``tests/data/designs/loopback-cc`` (reno, cubic x 64 KiB, 1 MiB x 2 repeats on loopback,
record.sh beside it) runs everywhere; with root, iproute2, /dev/net/tun and iperf3 a pile of
reno, cubic and bbr x 128 KiB, 1 MiB over a lossy long path is recorded as
tests/test_design_netns.py records it, and bbr's ratio over reno checked the same way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import altair as alt
import numpy as np
import pytest
import yaml
from IPython.display import HTML, Markdown

from thruput.cli import main
from thruput.report import campaigns as report
from thruput.report import design as page
from thruput.stats._util import cell_rngs
from thruput.stats.compare import median_ratio
from thruput.stats.load import median_difference

from .test_design_pages import page_items


PILE = Path(__file__).parent / "data" / "designs" / "loopback-cc"
PATTERN = r"cc-(?P<cc>\w+?)_buf-(?P<socket_buffer>\d+)_r(?P<repeat>\d+)"
#: The statistics parameters of these tests (params.yaml's stats section).
STATS = {"stats": {"bootstrap": 400, "seed": 7, "confidence": 0.9}}
BAD = re.compile(r"\b(nan|NaN|None|inf)\b|(?<![\w.-])\d+(\.\d+)?[eE][+-]?\d+(?![\w.-])")


def pipeline(tmp_path, files, cc_order):
    """Import ``files`` as design ``ccbuf`` (cc levels declared in ``cc_order``, as a user
    edits campaign.yaml), normalize it and write its product with the pipeline's commands."""
    assert main(["campaign", "import", "ccbuf", *map(str, files), "--root", str(tmp_path),
                 f"--pattern={PATTERN}", "--factor-spec", "socket_buffer:byte:ordered"]) == 0
    directory = tmp_path / "ccbuf"
    meta = yaml.safe_load((directory / "campaign.yaml").read_text())
    meta["factors"][0]["levels"] = list(cc_order)
    (directory / "campaign.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    processed = tmp_path / "processed"
    processed.mkdir()
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(STATS))
    assert main(["pipeline", "normalize", str(directory), str(processed / "ccbuf.nc")]) == 0
    assert main(["pipeline", "stats", "--params", str(params), str(processed / "ccbuf.nc"),
                 str(processed / "ccbuf.stats.nc")]) == 0
    return directory, report.read_processed(processed, "ccbuf")


def log_rates(directory):
    """(cc, socket buffer) -> the receiver rates (bit/s) the logs themselves report."""
    rates = {}
    for path in sorted((directory / "runs").glob("cc-*.json")):
        cc, buf = re.search(PATTERN, path.name).group("cc", "socket_buffer")
        log = json.loads(path.read_text())
        rates.setdefault((cc, int(buf)), []).append(log["end"]["sum_received"]["bits_per_second"])
    return rates


def expected_ratio(reference, level, cell, n_cells):
    """The ratio of medians and its interval as the product's bootstrap draws it for cell
    ``cell`` of ``n_cells`` (stats.compare: the difference's resamples first, then the ratio's)."""
    boot = STATS["stats"]
    rng = cell_rngs(boot["seed"], n_cells)[cell]
    a, b = np.asarray(reference), np.asarray(level)
    median_difference(a, b, boot["bootstrap"], boot["confidence"], rng)
    return median_ratio(a, b, boot["bootstrap"], boot["confidence"], rng)


#: Everything the campaign notebook shows of a design (tests/test_design_pages.py's).
shown = page_items


def text(items):
    return " ".join(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", i.data)) for i in items
                    if isinstance(i, (HTML, Markdown)))


def check_product_against_logs(directory, ds, reference, levels, buffers):
    rates = log_rates(directory)
    product = report.read_product(ds)
    per_cc = product["levels/throughput/cc"].to_dataset()
    for cc in [reference, *levels]:
        pooled = [r for (c, _), rs in rates.items() if c == cc for r in rs]
        assert float(per_cc["median"].sel(cc=cc)) == pytest.approx(float(np.median(pooled)), rel=1e-12)
        assert int(per_cc["n"].sel(cc=cc)) == len(pooled)
    compared = product["compare/cc"].to_dataset()
    assert compared.attrs["reference"] == reference
    assert json.loads(compared.attrs["by"]) == ["socket_buffer"]
    assert list(compared["cc"].values) == list(levels)
    for i, buf in enumerate(buffers):
        for cc in levels:
            ratio, low, high = expected_ratio(rates[(reference, buf)], rates[(cc, buf)], i, len(buffers))
            got = compared.sel(cc=cc, socket_buffer=buf)
            assert float(got["ratio"]) == pytest.approx(
                float(np.median(rates[(cc, buf)]) / np.median(rates[(reference, buf)])), rel=1e-12)
            assert (float(got["ratio"]), float(got["ratio_low"]), float(got["ratio_high"])) == pytest.approx(
                (ratio, low, high), rel=1e-12)
    return product


def test_loopback_cc_by_buffer_end_to_end(tmp_path, monkeypatch):
    files = sorted(PILE.glob("cc-*.json"))
    directory, ds = pipeline(tmp_path, files, ["reno", "cubic"])
    product = check_product_against_logs(directory, ds, "reno", ["cubic"], [65536, 1048576])
    assert list(product["plateau"].children) == ["socket_buffer"] and "failures" in product.children
    items = shown(ds, monkeypatch)
    words = text(items)
    assert not BAD.findall(words)
    assert "cc: each level over reno, per socket_buffer" in words
    assert "64 KiB" in words and "1 MiB" in words
    charts = [i for i in items if isinstance(i, alt.TopLevelMixin)]
    assert len(charts) == 3 and all(len(d) for c in charts for d in c.to_dict()["datasets"].values())
    # (small multiples, cc over reno per buffer, 1 MiB over 64 KiB per cc); the ratio of cubic
    # over reno at 1 MiB as the table gives it
    rates = log_rates(directory)
    ratio = np.median(rates[("cubic", 1048576)]) / np.median(rates[("reno", 1048576)])
    assert "cubic 1 MiB" in words and page.number_text(ratio) in words


DRIVE_PATTERN = r"^(?P<operator>[^/]+)/[^/]+/[^/]+/(?P<test>tcp|udp|ping)(?:_(?P<direction>uplink|downlink))?_"


@pytest.mark.slow
def test_the_drive_pile_compares_the_operators_each_way(corpus, tmp_path, monkeypatch):
    """../shared/corpus/real/starlink-drive as operator x test x direction over time: the page
    compares the operators per test and direction, and draws series over time."""
    assert main(["campaign", "import", "drive", str(corpus / "real/starlink-drive"), "--root", str(tmp_path),
                 "--kind", "design", "--over-time", f"--pattern={DRIVE_PATTERN}"]) == 0
    processed = tmp_path / "processed"
    processed.mkdir()
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(STATS))
    assert main(["pipeline", "normalize", str(tmp_path / "drive"), str(processed / "drive.nc")]) == 0
    assert main(["pipeline", "stats", "--params", str(params), str(processed / "drive.nc"),
                 str(processed / "drive.stats.nc")]) == 0
    ds = report.read_processed(processed, "drive")
    product = report.read_product(ds)
    ops = product["compare/operator"].to_dataset()
    assert json.loads(ops.attrs["by"]) == ["test", "direction"] and ops.attrs["reference"] == "att"
    ok = ds["outcome"].values == "ok"
    for op in ("att", "starlink", "verizon"):
        for way in ("downlink", "uplink"):
            runs = ok & (ds["operator"].values == op) & (ds["test"].values == "udp") & (ds["direction"].values == way)
            cell = product["cells/throughput"].to_dataset().sel(operator=op, test="udp", direction=way)
            assert float(cell["median"]) == float(np.median(ds["throughput"].values[runs]))
            if op != "att":
                ref = ok & (ds["operator"].values == "att") & (ds["test"].values == "udp") & (ds["direction"].values == way)
                expected = np.median(ds["throughput"].values[runs]) / np.median(ds["throughput"].values[ref])
                assert float(ops.sel(operator=op, test="udp", direction=way)["ratio"]) == pytest.approx(expected)
    items = shown(ds, monkeypatch)
    words = text(items)
    assert not BAD.findall(words)
    assert "operator: each level over att, per test and direction" in words
    assert "## Over time: throughput" in [i.data.split("\n")[0] for i in items if isinstance(i, Markdown)]
    assert "No plateau to find: no factor is ordered and numeric" in words
