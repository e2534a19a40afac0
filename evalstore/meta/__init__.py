"""Meta-evaluation: how metrics rank systems, how discriminative they are, how robust to
incomplete judgments (Sakai, IPSJ TOD 2007 = "Sakai IPSJ 2007"; Sakai, SIGIR 2007; Bompada et al.,
SIGIR 2007). See docs/meta.md.

Store-level analyses (score columns = qrels sets x metrics; results saved in ``meta_*``)::

    from evalstore import meta
    meta.kendall(store, "dl20", ["AP(rel=2)", "nDCG@10"])        # Sakai IPSJ 2007 Table 2
    meta.swap(store, "dl20", ["AP(rel=2)"], trials=1000, seed=0)  # Sakai IPSJ 2007 Table 3
    meta.discpower(store, "dl20", ["AP(rel=2)"])                  # Sakai IPSJ 2007 Table 4
    meta.tests(store, "dl20", ["AP(rel=2)"], adjust="holm")       # t, Wilcoxon, randomisation, bootstrap
    meta.robustness(store, "dl20", ["AP(rel=2)"])                 # Sakai SIGIR 2007 Figs. 2-3,
                                                                  # Bompada et al. 2007 Figs. 1-2
    meta.reusability(store, "dl20", ["nDCG@10"], group_by="participant", groups="runs_metadata.tsv")
                                                                  # leave one group out (Zobel 1998)

The array-level building blocks live in :mod:`evalstore.stats` (no store behind them) and are
offered here too, as the analyses use them: :func:`correlate`, :func:`swap_method`,
:func:`paired_bootstrap`, :func:`paired_t`, :func:`wilcoxon`, :func:`randomisation`, :func:`adjust`;
matrices from the store with :func:`score_matrix`. Importing this package registers the SQL functions of
:mod:`evalstore.metrics.udf_tests` (``bootstrap_asl`` etc.) on every store connection.
"""

from __future__ import annotations

from ..errors import MetaError  # noqa: F401
from ..metrics import udf_tests  # noqa: F401  (declares the SQL functions)
from ..stats.bootstrap import BootstrapResult, bootstrap_asl, paired_bootstrap, round_sig  # noqa: F401
from ..stats.correlation import Correlation, correlate, kendall_p, kendall_tau, kendall_z, spearman_rho  # noqa: F401
from ..stats.significance import adjust, paired_t, randomisation, wilcoxon  # noqa: F401
from ..stats.swap import SwapResult, difference_bins, swap_method  # noqa: F401
from .analyses import discpower, kendall, swap, tests  # noqa: F401
from .common import Analysis  # noqa: F401
from .matrix import Column, ScoreMatrix, score_matrices, score_matrix, top_runs  # noqa: F401
from .persist import load_table, save_analysis  # noqa: F401
from .reusability import Reusability, reusability  # noqa: F401
from .robustness import knee, robustness  # noqa: F401
