"""Reproducibility and replicability of system-oriented IR experiments (Breuer et al., SIGIR 2020),
as repro_eval 0.5.0 computes them; see docs/reproducibility.md.

::

    from evalstore import repro
    r = repro.reproducibility(store, "dl19", "bm25", "bm25+rm3", "my_bm25", "my_bm25+rm3", ["AP", "nDCG@10"])
    r.to_dict()   # repro_eval's shape: ktu, rbo, rmse, nrmse, er, dri, ttest

Building blocks on arrays: :func:`rmse`, :func:`nrmse`, :func:`effect_ratio`, :func:`delta_ri`,
:func:`t_test_p`; on rankings: :func:`evalstore.repro.orderings.ktu` and
:func:`~evalstore.repro.orderings.rbo`.
"""

from __future__ import annotations

from .core import (  # noqa: F401
    DEPTH,
    RBO_P,
    Reproduction,
    delta_ri,
    effect_ratio,
    nrmse,
    reproducibility,
    rmse,
    t_test_p,
)
from .orderings import ORDERS, ktu, rbo  # noqa: F401
