"""Pure statistics: functions of arrays, with no store, SQL or evalstore state behind them.

* :mod:`.agreement`: label agreement of two judges from their confusion matrices: Cohen's kappa
  (plain, linearly and quadratically weighted, as scikit-learn's ``cohen_kappa_score``) and
  Krippendorff's alpha (nominal and ordinal, as the ``krippendorff`` package), vectorised over a
  stack of matrices (one per topic);
* :mod:`.ranks`: ranks of scores, tau_AP (Yilmaz, Aslam & Robertson, SIGIR 2008) with Urbano &
  Marrero's treatment of ties, Borda counts over several collections (MTEB's definition);
* :mod:`.rank_intervals`: each system's rank with its interval, from a runs x topics score matrix
  (or several, one per collection): the paired bootstrap over topics, or paired t intervals of the
  differences (Bonferroni over each run's comparisons).

Nothing here imports from the rest of evalstore (tests/analysis/test_agreement_stats.py checks it).
"""
