"""Intervals that show how uncertain a leaderboard is:

* :mod:`.means`: t and bootstrap confidence intervals of every mean (``--ci``), stored with their
  evaluation (``interval_data``);
* :mod:`.ranks`: rank intervals of an evaluation's runs (``--rank-ci``), stored with the
  evaluations they ranked (``rank_interval_data``);
* :mod:`.request`: the intervals an evaluation asks for, checked before any work and attached after
  it.
"""
