"""The bundled design data/raw/netns-cc-lossy (tools/record-design-cc.sh): congestion control
(reno, cubic, bbr, declared in that order) x socket buffer (128 KiB, 1 MiB) x 3 repeats of
4 s iperf3 -J over a 30 ms, 40 Mbit/s path with 1 % random loss each way. Each run's
throughput is its log's receiver rate and its congestion control and buffer are the log's;
BBR is far above the loss-limited Reno (Mathis et al. 1997) at both buffers; its page,
built from the pipeline's product, shows the comparison with no bare NaN or None.
(``thruput campaign check`` also holds every file to the sha256 runs.csv keeps.)"""

from __future__ import annotations

import json

import numpy as np

import thruput
from thruput.campaign.check import check_campaign

from .conftest import ROOT
from .designs import assert_runs_are_their_logs
from .test_design_pages import check_page, page_items, processed, text_of

DIRECTORY = ROOT / "data" / "raw" / "netns-cc-lossy"
BUFFERS = (131072, 1048576)


def test_the_bundled_design_is_the_logs_own():
    assert check_campaign(DIRECTORY) == []
    ds = thruput.open_campaign(DIRECTORY)
    assert ds.attrs["campaign_kind"] == "design"
    factors = {f["name"]: f["levels"] for f in json.loads(ds.attrs["factors"])}
    assert factors == {"cc": ["reno", "cubic", "bbr"], "socket_buffer": list(BUFFERS)}
    assert ds.sizes["run"] == 18 and (ds.outcome.values == "ok").all()
    assert_runs_are_their_logs(ds, DIRECTORY)
    for source in ds.source.values:
        assert json.loads((DIRECTORY / str(source)).read_text())["start"]["test_start"]["duration"] == 4
    for buf in BUFFERS:
        median = {cc: np.median(ds.throughput.values[(ds.cc.values == cc) & (ds.socket_buffer.values == buf)])
                  for cc in ("reno", "cubic", "bbr")}
        assert median["reno"] < 8e6 and median["bbr"] > 3 * median["reno"], (buf, median)
    assert (ds.throughput.values < 40e6).all()                       # the bottleneck


def test_its_page_compares_the_algorithms(tmp_path, monkeypatch):
    ds = processed(tmp_path, thruput.open_campaign(DIRECTORY))
    items = page_items(ds, monkeypatch)
    assert check_page(items) == []
    words = " ".join(text_of(i) for i in items)
    assert "cc: each level over reno, per socket_buffer" in words
    assert "128 KiB" in words and "1 MiB" in words and "Mathis" in words
