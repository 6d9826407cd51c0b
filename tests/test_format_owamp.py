"""owamp reader (owping/twping text): public examples (tests/data/owamp/README.md), exact
values, the owamp quirks they show, -v packet lines and damage."""

from __future__ import annotations

import json

import numpy as np
import pytest

import thruput
from thruput.contract import validate
from thruput.errors import ParseError
from thruput.formats import owamp, ping

from .conftest import DATA

HERE = DATA / "owamp"


def test_owping_both_directions():
    ds = validate(thruput.read(HERE / "public--owping-2019-a99-offset-clocks.txt"))
    assert ds.sizes["owamp_block"] == 2 and ds.sizes["probe"] == 0
    assert ds.owamp_from.values.tolist() == ["[nu-lab-01.fungible.local]:8915", "[hu-lab-01]:8848"]
    assert ds.owamp_to.values.tolist() == ["[hu-lab-01]:9270", "[nu-lab-01.fungible.local]:8920"]
    assert ds.owamp_delay_min.values.tolist() == [-12.5, 12.8]
    assert ds.owamp_delay_median.values.tolist() == [-12.5, 12.9]
    assert ds.owamp_delay_max.values.tolist() == [-12.4, 12.8]
    assert ds.owamp_err.values.tolist() == [9.01, 9.01] and ds.owamp_jitter.values.tolist() == [0.0, 0.0]
    assert ds.owamp_level.values.tolist() == [99.0]
    assert ds.owamp_percentile.values.tolist() == [[-12.5], [12.9]]
    assert ds.owamp_sent.values.tolist() == [10, 10] and ds.owamp_lost.values.tolist() == [0, 0]
    assert np.isnan(ds.owamp_hops.values).all()       # TTL not reported
    assert ds.owamp_reordering.values.tolist() == [0.0, 0.0]
    assert ds.owamp_sid.values[1] == "0a012818e00ef46a68dfd8e9e4886fc9"
    assert ds.owamp_first.values[0] == "2019-02-13T11:54:19.387"
    # the median printed above the max (12.9 > 12.8) is within owamp's 3-digit printing
    assert ds.attrs["consistent"] == 1
    summary = json.loads(ds.attrs["tool_summary"])
    assert summary["transmitted"] == 20 and summary["received"] == 20


def test_owping_hops_and_microsecond_delays():
    ds = validate(thruput.read(HERE / "public--owping-go-loopback-a99.txt"))
    assert ds.owamp_delay_min.values.tolist() == [0.00602, 0.00465]
    assert ds.owamp_hops.values.tolist() == [0, 0] and ds.owamp_sent.values.tolist() == [100, 100]
    assert ds.owamp_percentile.values.tolist() == [[0.0654], [0.0995]]
    assert ds.owamp_jitter.values.tolist() == [0.0311, 0.0406]


def test_twping_round_trip_send_reflect():
    ds = validate(thruput.read(HERE / "public--twping-2022.txt"))
    assert ds.owamp_tool.values.tolist() == ["twping"]
    assert ds.owamp_delay_min.values.tolist() == [0.109] and ds.owamp_delay_max.values.tolist() == [1.07]
    assert ds.owamp_send_median.values.tolist() == [936.0] and ds.owamp_reflect_median.values.tolist() == [-936.0]
    assert ds.owamp_processing_min.values.tolist() == [0.00191]
    assert ds.owamp_jitter.values.tolist() == [0.1] and ds.owamp_reflect_jitter.values.tolist() == [0.0]
    assert ds.owamp_hops.values.tolist() == [0] and ds.owamp_reflect_hops.values.tolist() == [0]
    assert ds.owamp_duplicates.values.tolist() == [0] and ds.owamp_reflect_duplicates.values.tolist() == [0]
    assert ds.owamp_err.values.tolist() == [3.8]


def test_cut_file_keeps_complete_lines():
    ds = validate(thruput.read(HERE / "public--owping-2019-cut-in-second-block.txt"))
    assert ds.attrs["truncated"] == 1 and json.loads(ds.attrs["skipped_reasons"])["truncated line"] == 1
    assert ds.owamp_sent.values.tolist() == [10, 10]
    assert ds.owamp_delay_min.values[0] == -12.5 and np.isnan(ds.owamp_delay_min.values[1])


VERBOSE = """\
--- owping statistics from [10.0.0.1]:5000 to [10.0.0.2]:6000 ---
SID:\tc0a80001e3f0b7a1
seq_no=0          delay=1.23 ms\t(sync, err=0.5 ms)
seq_no=1          *LOST*
seq_no=2          delay=1.5 ms\t(unsync)

--- owping statistics from [10.0.0.1]:5000 to [10.0.0.2]:6000 ---
SID:\tc0a80001e3f0b7a1
first:\t2024-01-01T00:00:00.000
last:\t2024-01-01T00:00:00.200
3 sent, 1 lost (33.333%), 0 duplicates
one-way delay min/median/max = 1.23/1.5/1.5 ms, (unsync)
one-way jitter = 0.27 ms (P95-P50)
hops = 2 (consistently)
1-reordering = 2.000000%
no 2-reordering
"""


def test_verbose_packet_lines_are_probes_and_checked():
    """The -v layout of owamp's stats.c (header, packets, then header and summary again),
    written out to exercise the packet lines: no public -v sample was found."""
    ds = validate(owamp.parse(VERBOSE))
    assert ds.sizes["owamp_block"] == 1 and ds.seq.values.tolist() == [0, 1, 2]
    assert ds.status.values.tolist() == ["reply", "lost", "reply"]
    np.testing.assert_array_equal(ds.owamp_delay.values, [1.23, np.nan, 1.5])
    assert np.isnan(ds.owamp_err.values[0]) and ds.owamp_reordering.values.tolist() == [2.0]
    assert ds.owamp_hops.values.tolist() == [2]
    checks = {c["check"].split(": ", 1)[1]: c["ok"] for c in json.loads(ds.attrs["consistency"])}
    assert checks == {"loss % vs lost/sent": True, "median outside [min, max] by": True,
                      "sent vs packet lines": True, "lost vs *LOST* lines": True, "min delay vs packet lines": True}
    bad = owamp.parse(VERBOSE.replace("3 sent, 1 lost (33.333%)", "4 sent, 1 lost (25.000%)"))
    assert bad.attrs["consistent"] == 0


def test_other_units_are_converted_to_ms():
    ds = owamp.parse(VERBOSE.replace("min/median/max = 1.23/1.5/1.5 ms", "min/median/max = 1230/1500/1500 us"))
    assert ds.owamp_delay_min.values.tolist() == [1.23]


@pytest.mark.parametrize("text, line", [
    ("", None),
    ("--- owping statistics from [a]:1 to [b]:2 ---\nsomething else\n", 2),
    ("hello\n", 1),
])
def test_bad_input_raises_parse_error(text, line):
    with pytest.raises(ParseError) as info:
        owamp.parse(text)
    assert info.value.line == line


def test_sniff():
    for path in HERE.glob("public--*.txt"):
        assert owamp.sniff(path.read_text()[:4096]) and not ping.sniff(path.read_text()[:4096]), path
    assert not owamp.sniff((HERE / "not-owamp--busybox--loopback.out").read_text())
    assert not owamp.sniff("")
