"""The project's own dvc.yaml and params.yaml: shape, and the bundled campaigns they list."""

from __future__ import annotations

import re

import pytest
import yaml

from thruput.campaign.check import check_campaign
from thruput import stats
from thruput.monitor import alerts
from thruput.stats import rollups, study_effects
from thruput.site.config import load_config

from .conftest import ROOT

PIPELINE = yaml.safe_load((ROOT / "dvc.yaml").read_text())
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())
STAGES = PIPELINE["stages"]


def stage_bodies():
    for name, stage in STAGES.items():
        yield name, stage.get("do", stage)


def test_stages_and_params_sections():
    assert list(STAGES) == ["normalize", "stats", "normalize-monitor", "stats-monitor", "rollups-monitor",
                            "health-monitor", "catalogue",
                            "compare", "study-effects", "reproduce", "metrics", "datapackage", "page-campaign", "page-monitor",
                            "page-monitor-health", "page-study", "page-compare", "page-catalogue", "page-reproduction",
                            "page-methods", "page-data", "site"]
    for name in ("normalize", "stats", "page-campaign"):
        assert STAGES[name]["foreach"] == "${campaigns}"
    assert STAGES["compare"]["foreach"] == STAGES["page-compare"]["foreach"] == "${comparisons}"
    for name in ("normalize-monitor", "stats-monitor", "page-monitor", "rollups-monitor", "health-monitor",
                 "page-monitor-health"):
        assert STAGES[name]["foreach"] == "${monitors}"
    assert set(PARAMS) == {"campaigns", "monitors", "studies", "comparisons", "stats", "study-effects", "monitor",
                           "rollups", "health"}
    assert PARAMS["health"] == alerts.DEFAULT_PARAMS           # the library's defaults
    assert tuple(PARAMS["rollups"]["freqs"]) == rollups.FREQS
    assert PARAMS["stats"] == stats.DEFAULTS               # one set of defaults
    # the library's defaults, and the author's choice of campaign per effect
    assert {**PARAMS["study-effects"], "show": {}} == study_effects.DEFAULTS
    assert set(PARAMS["study-effects"]["show"].values()) <= set(PARAMS["campaigns"])
    assert STAGES["study-effects"]["params"] == ["study-effects"]


def test_every_page_of_the_site_is_one_stage():
    """The executed notebooks the page stages write are exactly the pages the site assembles."""
    config = load_config(ROOT, PARAMS["campaigns"], PARAMS["studies"],
                         comparisons=list(PARAMS["comparisons"]), monitors=PARAMS["monitors"])
    outs = []
    for name, stage in STAGES.items():
        if name.startswith("page-"):
            body = stage.get("do", stage)
            values = {"page-campaign": PARAMS["campaigns"], "page-study": PARAMS["studies"],
                      "page-compare": list(PARAMS["comparisons"]),
                      "page-monitor": PARAMS["monitors"],
                      "page-monitor-health": PARAMS["monitors"]}.get(name, [None])
            for value in values:
                outs += [o.replace("${item}", str(value)).replace("${key}", str(value)) for o in body["outs"]]
    assert sorted(outs) == sorted(f"build/pages/{p.output.as_posix()}" for p in config.pages)


def test_study_pages_read_the_study_effects_product_not_every_campaign():
    """So that a campaign added without changing a choice executes no study page."""
    deps = STAGES["page-study"]["do"]["deps"]
    assert "data/report/study-effects.nc" in deps and "data/processed/reproduction.csv" in deps
    assert "data/processed" not in deps
    assert "data/report/study-effects.nc" in STAGES["study-effects"]["outs"]


def test_comparisons_name_listed_campaigns():
    for name, comparison in PARAMS["comparisons"].items():
        assert {comparison["a"], comparison["b"]} <= set(PARAMS["campaigns"]), name


@pytest.mark.parametrize("name, stage", list(stage_bodies()), ids=[n for n, _ in stage_bodies()])
def test_every_stage_depends_on_the_package_and_passes_its_paths(name, stage):
    assert "src/thruput" in stage["deps"]
    cmd = " ".join(stage["cmd"].split())
    assert cmd.startswith("thruput ")
    for out in stage["outs"]:                      # every output path is on the command line
        out = next(iter(out)) if isinstance(out, dict) else out   # {path: {persist: true}}
        assert out in cmd
    for dep in stage["deps"]:                      # a page names its inputs in its parameters
        if dep.startswith("data/") and not name.startswith("page-"):
            assert dep.replace("${item.a}", "${item.a}") in cmd


def test_no_stage_lists_the_campaign_list_as_a_parameter():
    # so that adding a campaign does not make every campaign's stages stale; except a stage
    # that reads the whole of data/processed (stale on any new campaign anyway) and
    # publishes only the campaigns listed: the data package, which a campaign taken out of
    # params.yaml must leave (issue 60)
    for name, stage in stage_bodies():
        if name == "datapackage":
            assert "data/processed" in stage["deps"] and "--params params.yaml" in stage["cmd"]
            continue
        assert "campaigns" not in (stage.get("params") or [])


@pytest.mark.parametrize("campaign", PARAMS["campaigns"] + PARAMS["monitors"])
def test_bundled_campaigns_are_sound(campaign):
    directory = ROOT / "data" / "raw" / campaign
    assert directory.is_dir() or (ROOT / "data" / "raw" / f"{campaign}.dvc").is_file()
    if directory.is_dir():
        assert [str(p) for p in check_campaign(directory) if p.severity == "error"] == []


def test_bundled_udpmon_campaign_is_the_corpus_copy():
    raw = ROOT / "data" / "raw" / "udpmon-veth-500m" / "runs"
    corpus = ROOT.parent / "shared" / "corpus" / "udpmon"
    if not corpus.is_dir():
        pytest.skip("../shared/corpus not present")
    assert sorted(p.name for p in raw.iterdir()) == sorted(p.name for p in corpus.iterdir())
    for p in corpus.iterdir():
        assert (raw / p.name).read_bytes() == p.read_bytes()


def test_dvc_config_has_a_default_local_remote_and_no_analytics():
    config = (ROOT / ".dvc" / "config").read_text()
    assert re.search(r"remote = local", config)
    assert re.search(r"url = \.\./\.\./dvc-store", config)
    assert re.search(r"analytics = false", config)
