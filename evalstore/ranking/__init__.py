"""Leaderboards that show their uncertainty: each run's rank with an interval (``--rank-ci``), and
leaderboards over several qrels sets (``--agg mean|borda``).

* :mod:`.intervals`: the rank intervals of an evaluation's runs, per metric
  (:func:`evalstore.stats.rank_intervals.rank_intervals` on the result's per-topic scores), and
  storing them with the evaluations they ranked (``rank_interval_data``; the ``leaderboard`` view's
  ``rank_lo``, ``rank_hi``);
* :mod:`.across`: one leaderboard over several qrels sets (the mean of the per-set means, or Borda
  points as MTEB counts them), with rank intervals from resampling each set's topics.
"""

from __future__ import annotations

from .across import AcrossBoard, across_board
from .intervals import RANK_METHODS, attach, compute, describe

__all__ = ["RANK_METHODS", "AcrossBoard", "across_board", "attach", "compute", "describe"]
