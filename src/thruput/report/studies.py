"""Study pages (one per source document) and the reproduction summary of the site."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

from .campaigns import _is_tcp, campaign_charts, load_campaign

__all__ = ["study_title", "study_charts", "study_ledger", "study_side_by_side",
           "ledger_summary", "ledger_problems"]


def _ledger(processed):
    path = Path(processed) / "reproduction.csv"
    return pd.read_csv(path, dtype={"seed": str}) if path.exists() else pd.DataFrame()


def study_title(published, seed):
    from .. import published as pub

    return Markdown(f"# {pub.seed_title(seed)}" if hasattr(pub, "seed_title") else f"# Study {seed}")


def study_charts(published, seed):
    """Charts of the study's published tables (provided by :mod:`thruput.published`)."""
    from .. import published as pub

    if hasattr(pub, "study_charts"):
        return pub.study_charts(seed, published)
    return Markdown("No charts for this study.")


def study_ledger(processed, seed):
    """The ledger rows of one study."""
    ledger = _ledger(processed)
    if ledger.empty:
        return Markdown("The reproduction ledger has not been built.")
    rows = ledger[ledger["seed"].astype(str).str.zfill(3) == str(seed).zfill(3)]
    return rows.drop(columns=["seed"]).reset_index(drop=True)


def ledger_summary(processed):
    """Counts of ledger rows by status, per study and in total."""
    ledger = _ledger(processed)
    if ledger.empty:
        return Markdown("The reproduction ledger has not been built.")
    table = pd.crosstab(ledger["seed"], ledger["status"], margins=True, margins_name="all")
    return table


def ledger_problems(processed):
    """Every ``differs`` and ``erratum`` row with its note."""
    ledger = _ledger(processed)
    if ledger.empty:
        return Markdown("The reproduction ledger has not been built.")
    return ledger[ledger["status"].isin(["differs", "erratum"])].reset_index(drop=True)


def study_side_by_side(processed, seed):
    """A bundled campaign showing the effect the study reports, marked as a new measurement."""
    effects = {"000": "window and streams", "002": "window and streams", "003": "parallel streams",
               "004": "window plateau", "001": "latency vs frame size"}
    names = [nc.stem for nc in sorted(Path(processed).glob("*.nc"))]
    want_udp = str(seed).zfill(3) == "001"
    for name in names:
        ds = load_campaign(processed, name)
        if want_udp != _is_tcp(ds):
            display(Markdown(f"**New measurement, not the original data:** campaign `{name}` "
                             f"({effects.get(str(seed).zfill(3), '')})."))
            return campaign_charts(ds)
    return Markdown("No bundled campaign shows this effect.")
