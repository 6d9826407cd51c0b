"""The bundled sweeps keep every number (issue 55): the designs, the readers' fixes and
the new product tables of this round leave their normalized campaigns and statistics
products byte-for-byte as they were (the md5 dvc.lock recorded for them before designs
existed), the bundled design's as first built, and the reproduction ledger as the
reclassification of issue 61 left it."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

#: md5 (as DVC records it) of each product of the bundled sweeps.
PINNED = {
    "veth-1g.nc": "52aed833125596d326d1101d2cbe5202",
    "veth-1g.stats.nc": "d236f4515a76dbb10ab057d28f2e968d",
    "delay-40ms.nc": "2e434fab6f5688dd80639e4a41894ad7",
    "delay-40ms.stats.nc": "aac236e7170ffbe96528116a20d1b6e9",
    "udpmon-veth-500m.nc": "170739fe0aea3dfa4df5414d40ab4fb2",
    "udpmon-veth-500m.stats.nc": "275c01861bc6edea295acd46d6b09fb4",
    # the bundled design (tools/record-design-cc.sh): its statistics' bootstraps are seeded too
    "netns-cc-lossy.nc": "fde51ed2247104897c20189f5aa18abe",
    "netns-cc-lossy.stats.nc": "9d379b02f21d1d322bc5848936086c9a",
}
LEDGER_MD5 = "4ffe74d161095d85bce86a8438c1421d"


def _md5(path):
    return hashlib.md5(Path(path).read_bytes()).hexdigest()


def _thruput(*args):
    subprocess.run([sys.executable, "-m", "thruput.cli", *map(str, args)], cwd=ROOT, check=True,
                   capture_output=True, text=True)


@pytest.mark.slow
@pytest.mark.parametrize("campaign", ["veth-1g", "delay-40ms", "udpmon-veth-500m", "netns-cc-lossy"])
def test_a_bundled_sweep_keeps_its_products(campaign, tmp_path):
    _thruput("pipeline", "normalize", ROOT / "data" / "raw" / campaign, tmp_path / f"{campaign}.nc")
    _thruput("pipeline", "stats", tmp_path / f"{campaign}.nc", tmp_path / f"{campaign}.stats.nc",
             "--params", ROOT / "params.yaml")
    for name in (f"{campaign}.nc", f"{campaign}.stats.nc"):
        assert _md5(tmp_path / name) == PINNED[name], name


def test_the_ledger_is_as_pinned(tmp_path):
    _thruput("reproduce", "--published", ROOT / "data" / "published", "--out", tmp_path / "reproduction.csv")
    assert _md5(tmp_path / "reproduction.csv") == LEDGER_MD5
