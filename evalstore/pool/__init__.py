"""Pools: which documents the assessors see, made from the stored runs (docs/pools.md).

* :mod:`.build`: ``evalstore pool`` / ``Store.pool``: depth, RBP and RRF pooling as trectools'
  ``TrecPoolMaker`` defines them, in one DuckDB statement for all runs and topics;
* :mod:`.manage`: the stored pools: list, sizes per topic, the file for the assessors;
* :mod:`.coverage`: how much of each run a pool and a qrels set cover, and each run's unique
  contributions;
* :mod:`.groups`: which runs belong together (a participant's), from the runs' metadata or a file;
* :mod:`.leave_out`: the qrels without one group's unique contributions, stored as subsamples
  (the reusability analysis of :mod:`evalstore.meta.reusability` reads them).
"""

from .build import RANK_SOURCES, RBP_AGGREGATES, STRATEGIES, PoolResult, Recipe, build_pool, recipe

__all__ = ["RANK_SOURCES", "RBP_AGGREGATES", "STRATEGIES", "PoolResult", "Recipe", "build_pool", "recipe"]
