"""Every number on a page says where it comes from (thruput.report.provenance)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from thruput import published, reproduce
from thruput.report import provenance, studies as report_studies
from thruput.stats.product import campaign_product

from . import synthetic


@pytest.fixture(scope="module")
def ledger():
    return reproduce.build_ledger(published.load())


def test_campaign_provenance_names_function_parameters_and_raw_hashes():
    ds = synthetic.campaign(repeats=3)
    ds["source"] = (ds["throughput"].dims, np.full(ds["throughput"].shape, "runs/a.json", dtype=object))
    ds["source_sha256"] = (ds["throughput"].dims, np.full(ds["throughput"].shape, "ab" * 32, dtype=object))
    product = campaign_product(ds, {"bootstrap": 50})
    page = provenance.campaign_provenance(ds, product).data
    row = re.search(r'<tr id="source-cells">(.*?)</tr>', page).group(1)
    assert "thruput.stats.describe" in row and "reduced_dims=repeat" in row and "median [bit/s]" in row
    assert '<tr id="source-plateau">' in page and "thruput.stats.plateau" in page and "n_boot=50" in page
    assert "bootstrap=50" in page                                  # the pipeline's parameters
    assert "<code>runs/a.json</code></td><td><code>" + "ab" * 32 in page
    assert 'href="#source-cells"' in provenance.source_link("cells").data


def test_every_ledger_row_is_anchored_and_says_where_from(ledger, tmp_path):
    ledger.to_csv(tmp_path / "reproduction.csv", index=False)
    page = report_studies.study_ledger(tmp_path, "001").data
    rows = ledger[ledger["seed"] == "001"]
    assert page.count('<tr id="claim-') == len(rows)
    row = re.search(r'<tr id="claim-001-370dle-64-expect">(.*?)</tr>', page).group(1)
    assert "<b>quote</b>: Expect: 0.0118 μ s/byte" in row
    assert "derive: 2 * bus_time(pci_width, pci_clock) + link_time(GIGE_BPS)" in row
    assert ('<a href="study-001.html#claim-001-370dle-64-pci-clock">001-370dle-64-pci-clock</a>: '
            "PCI:64 bit 66 MHz") in row
    assert "<b>verdict</b>: reproduced" in row


def test_reproduction_page_lists_the_reproduced_rows(ledger, tmp_path):
    ledger.to_csv(tmp_path / "reproduction.csv", index=False)
    page = report_studies.ledger_reproduced(tmp_path).data
    listed = re.findall(r'<td class="claim">([^<]+)</td>', page)
    assert sorted(listed) == sorted(ledger.loc[ledger["status"] == "reproduced", "claim"])
    assert len(listed) == 16 and "001-nd-drop-1500" not in listed
