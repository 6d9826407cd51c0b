"""Two design campaigns compared as the pipeline compares two sweeps: an entry of
``comparisons:`` in params.yaml (``a``, ``b``, optionally ``by`` and ``var``), the
``compare@<name>`` stage's command (``thruput pipeline compare``) and the comparison page
(``report.comparison``, as notebooks/compare.ipynb calls it)."""

from __future__ import annotations

import json
import re

import altair as alt
import numpy as np
import pytest
import yaml
from IPython.display import HTML, Markdown

from thruput.campaign.store import open_product, write_netcdf
from thruput.cli import main
from thruput.report import campaigns as report
from thruput.report import design as page
from thruput.stats.design import design_summary, factors_of

from .designs import random_design
from .synthetic import campaign
from .test_design_pages import BAD, text_of


def two_designs(tmp_path, by=None, var=None):
    """A generated design ``before`` and the same runs ``after`` at twice the throughput and
    half the RTT, normalized, and params.yaml naming their comparison."""
    before = random_design(11, n_factors=3, max_levels=4, min_levels=2, failing=0.05, missing=0.1,
                           metrics={"tcp", "ping"}, name="before")
    after = before.assign(throughput=before["throughput"] * 2, rtt_median=before["rtt_median"] / 2)
    after.attrs = {**before.attrs, "campaign": "after",
                   "metadata": json.dumps({**json.loads(before.attrs["metadata"]), "name": "after",
                                           "notes": "after the upgrade"})}
    processed = tmp_path / "processed"
    for ds in (before, after):
        write_netcdf(ds, processed / f"{ds.attrs['campaign']}.nc")
    entry = {"a": "before", "b": "after", **({"by": by} if by else {}), **({"var": var} if var else {})}
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"stats": {"bootstrap": 50, "seed": 3, "confidence": 0.9},
                                      "comparisons": {"upgrade": entry}}))
    return before, after, params


def compare(tmp_path, params):
    out = tmp_path / "report" / "compare-upgrade.nc"
    code = main(["pipeline", "compare", str(tmp_path / "processed" / "before.nc"),
                 str(tmp_path / "processed" / "after.nc"), str(out), "--name", "upgrade", "--params", str(params)])
    return code, out


def test_two_designs_compared_per_shared_factor_from_params(tmp_path, capsys):
    first = factors_of(two_designs(tmp_path)[0])[0]["name"]
    before, _, params = two_designs(tmp_path, by=first)
    code, out = compare(tmp_path, params)
    assert code == 0
    assert f"after / before (throughput) per {first}" in capsys.readouterr().out
    tree = open_product(out)
    assert (tree.attrs["kind"], tree.attrs["a"], tree.attrs["b"], tree.attrs["var"]) == \
        ("design", "before", "after", "throughput")
    assert json.loads(tree.attrs["by"]) == [first]
    cells = tree["cells"].to_dataset()
    both = (cells["n_a"] > 0) & (cells["n_b"] > 0)
    assert both.any()
    np.testing.assert_allclose(cells["ratio"].where(both, drop=True).values, 2.0, rtol=1e-12)
    # each level's runs pooled over the other factors, as design_summary counts them
    n = design_summary(before, "throughput", [first])["n"].values
    assert cells["n_a"].values.tolist() == cells["n_b"].values.tolist() == n.tolist()
    assert [r["key"] for r in tree["metadata"].to_dataset()[["key"]].to_dataframe().to_dict("records")] == ["notes"]


def test_the_comparison_page_of_two_designs(tmp_path, monkeypatch):
    before, _, params = two_designs(tmp_path, var="rtt_median")
    assert compare(tmp_path, params)[0] == 0
    items = []
    monkeypatch.setattr(report, "display", items.append)
    monkeypatch.setattr(page, "display", items.append)
    items.append(report.comparison(tmp_path / "report", "upgrade"))
    words = " ".join(text_of(i) for i in items if isinstance(i, (HTML, Markdown)))
    assert not BAD.findall(words)
    names = [f["name"] for f in factors_of(before)]
    assert words.startswith(f"## before → after The median median ping RTT of after over that of before, per "
                            f"{' and '.join(names)}")
    assert "after the upgrade" in words and "What differs in the set-up" in words
    charts = [i for i in items if isinstance(i, alt.TopLevelMixin)]
    assert len(charts) == 1 and all(len(d) for d in charts[0].to_dict()["datasets"].values())
    table = next(text_of(i) for i in items if isinstance(i, HTML) and "ratio" in i.data)
    cells = open_product(tmp_path / "report" / "compare-upgrade.nc")["cells"].to_dataset()
    rows = re.findall(r" (\S+) (\S+) – (\S+)", table)      # ratio, its interval: half the RTT in every cell
    assert len(rows) == int(((cells["n_a"] > 0) & (cells["n_b"] > 0)).sum()) and {r[0] for r in rows} == {"0.5"}
    assert all(float(low) <= 0.5 <= float(high) for _, low, high in rows)


def test_a_design_is_compared_only_with_a_design(tmp_path, capsys):
    _, _, params = two_designs(tmp_path)
    write_netcdf(campaign(repeats=2).assign_attrs(campaign="sweep"), tmp_path / "processed" / "sweep.nc")
    assert main(["pipeline", "compare", str(tmp_path / "processed" / "before.nc"),
                 str(tmp_path / "processed" / "sweep.nc"), str(tmp_path / "x.nc"), "--name", "upgrade",
                 "--params", str(params)]) == 1
    assert "sweep is a tcp_sweep campaign; a design is compared only with a design" in capsys.readouterr().err


@pytest.mark.parametrize("entry, message", [({"by": ["nope"]}, "factors ['nope'] are not factors of both"),
                                            ({"var": "jitter"}, "jitter")])
def test_a_bad_comparison_entry_is_named(tmp_path, capsys, entry, message):
    _, _, params = two_designs(tmp_path, **entry)
    assert compare(tmp_path, params)[0] == 1
    assert message in capsys.readouterr().err
