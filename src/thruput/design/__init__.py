"""Campaigns of declared factors (``kind: design``): opened and imported run by run.

``dataset``
    :func:`~thruput.design.dataset.open_design`: ``runs.csv`` and every run's log as one
    Dataset on a ``run`` dimension, read by the monitor's per-run reader
    (:func:`thruput.monitor.reader.read_batch`); ``validate_design``.
``importer``
    ``thruput campaign import --kind design``: a pile of logs as a design campaign.

The design itself (factors, levels, the runs.csv of a design) is
:mod:`thruput.campaign.design`, shared by every kind; :func:`thruput.open_campaign` reaches
this package by name (:data:`thruput.campaign.dataset.KIND_OPENERS`).
"""
