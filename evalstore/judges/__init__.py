"""Comparing judges: two qrels sets of the same topics (assessors and an LLM, two LLMs, a qrels
set and a later version of it), on their labels and on the leaderboards they produce.

::

    from evalstore.judges import agree
    a = agree(store, "nist", "umbrela", ["nDCG@10", "AP(rel=2)"], rel=2)
    a.labels.overall["kappa"], a.ranking[0].summary["tau_ap"], a.to_dict()

:mod:`.labels` (label agreement in SQL), :mod:`.ranking` (two leaderboards of one metric),
:mod:`.agree` (the analysis, stored), :mod:`.render` (its tables); the statistics are
:mod:`evalstore.stats`'. See docs/judges.md in the repository.
"""

from __future__ import annotations

from .agree import DEFAULT_METRICS, Agreement, agree

__all__ = ["DEFAULT_METRICS", "Agreement", "agree"]
