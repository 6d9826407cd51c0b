"""The statuses of the reproduction ledger (:mod:`thruput.reproduce`), on their own: what
``thruput --help`` shows without importing the studies and their statistics (scipy: 1.2
of the CLI's 2 s start)."""

from __future__ import annotations

__all__ = ["STATUSES", "STATUS_MEANING", "COUNTED"]

#: statuses, most serious first: a claim with several findings keeps the first
STATUSES = ("erratum", "differs", "reproduced", "measured-vs-model", "consistent", "bound", "input",
            "not-reproducible")
#: what each status means, for ``thruput reproduce --help``, the README and the site
STATUS_MEANING = {
    "erratum": "contradicts the document itself (a misprinted unit, order statistic or date)",
    "differs": "a derivation, bound or equality fails by more than the printed precision",
    "reproduced": "a model's output from inputs other than the figure's own statement (a hardware specification "
                  "printed beside it is an input), within the printed precision; never arithmetic among numbers "
                  "printed together or through a constant fitted to it",
    "measured-vs-model": "a measurement set against the expectation the source itself computes",
    "consistent": "passes a check that is not an independent re-derivation: arithmetic among numbers printed "
                  "together (a ratio, a drop, a unit reading on one slide or in one sentence), "
                  "a bound from other published figures, the same figure printed twice or in another unit, a "
                  "standard constant, a weekday, an order statistic",
    "bound": "within a physical limit no published figure enters (a line rate, TCP or UDP goodput of GigE): "
             "it can hardly fail, so it is counted apart, not as a check that confirms the value",
    "input": "only an input of a derivation or table, which no check constrains",
    "not-reproducible": "nothing else published constrains it; it needs the lost raw data",
}
#: statuses that say something was checked (``bound``, ``input`` and ``not-reproducible`` do not)
COUNTED = ("erratum", "differs", "reproduced", "measured-vs-model", "consistent")
