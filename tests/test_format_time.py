"""Start times as the throughput tools print them (thruput.formats._time), to UTC."""

from __future__ import annotations

import numpy as np
import pytest

from thruput.formats._time import from_iso, from_text, unix_to_datetime


@pytest.mark.parametrize("stamp, expected", [
    ("Sun, 25 Jul 2021 13:00:23 UTC", "2021-07-25T13:00:23"),     # iperf3 -V Time:
    ("Sun, 22 Nov 2026 13:54:09 GMT", "2026-11-22T13:54:09"),
    ("Sun Nov 22 18:31:42 2026", "2026-11-22T18:31:42"),          # iperf3 --timestamps (%c)
    ("2026-11-22 13:53:16 (UTC)", "2026-11-22T13:53:16"),         # iperf 2.1 -e connection
    ("20261122135613", "2026-11-22T13:56:13"),                    # iperf 2 CSV
    ("+0000:20240908113035.128", "2024-09-08T11:30:35.128"),      # 2.1.9+ CSV with its offset
    ("+0200:20240908113035.128", "2024-09-08T09:30:35.128"),
    ("-0130:20240908113035", "2024-09-08T13:00:35"),
])
def test_printed_stamps(stamp, expected):
    assert from_text(stamp) == np.datetime64(expected, "ns")


@pytest.mark.parametrize("stamp", ["19700101000000.000", "", "yesterday", "99999999999999"])
def test_placeholders_and_noise_are_nat(stamp):
    assert np.isnat(from_text(stamp))


def test_unix_times_and_iso():
    got = unix_to_datetime([1627218023, float("nan"), 1e300, -5])
    assert str(got[0]) == "2021-07-25T13:00:23.000000000" and np.isnat(got[1:]).all()
    assert str(from_iso("2017-02-21T20:55:11.677001Z")) == "2017-02-21T20:55:11.677001000"
    assert np.isnat(from_iso("not a time"))
