"""Runs made from runs: rank fusion in SQL over stored runs, kept with the recipe that made them.

* :mod:`.registry`: the methods (ranx's: rrf, sum, mnz, anz, max, min, med, gmnz, wsum, wmnz, mixed,
  isr, log_isr, logn_isr, bordafuse, w_bordafuse, rbc) and normalisations (none, min-max,
  min-max-inverted, max, sum, zmuv, rank, borda) as declarative entries with their SQL;
* :mod:`.recipe`: a fusion's recipe, checked, described and stored;
* :mod:`.compute`: ``sql/fusion.sql`` rendered and run, for all topics and any number of candidate
  fusions at once;
* :mod:`.optimize`: the grid search of ``--optimize`` (ranx's ``optimize_fusion``), evaluated in bulk;
* :mod:`.store`: the fused run stored with its recipe, its inputs' content hashes and an
  ir_metadata header; :mod:`.provenance`: how a run was made, and whether it is stale;
* :mod:`.operations`: :func:`fuse`, :func:`refresh`, :func:`normalized_scores`.

Ties in an input run's ranking follow evalstore's order (score descending, docno descending);
ranx orders tied documents by NumPy's unstable argsort, so the methods and normalisations that
read positions (rrf, isr, log_isr, logn_isr, bordafuse, w_bordafuse, rbc; rank, borda) can give a
tied document another position there (docs/fusion.md).
"""

from .operations import fuse, normalized_scores, refresh
from .optimize import Optimization
from .provenance import Provenance, provenance
from .recipe import Recipe
from .registry import METHODS, NORMALIZATIONS, Method, Normalization, Param
from .store import FusionResult

__all__ = [
    "METHODS",
    "NORMALIZATIONS",
    "FusionResult",
    "Method",
    "Normalization",
    "Optimization",
    "Param",
    "Provenance",
    "Recipe",
    "fuse",
    "normalized_scores",
    "provenance",
    "refresh",
]
