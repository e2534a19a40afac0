"""Pure statistics: functions of arrays, with no store, SQL or evalstore state behind them.

* :mod:`.agreement`: label agreement of two judges from their confusion matrices: Cohen's kappa
  (plain, linearly and quadratically weighted, as scikit-learn's ``cohen_kappa_score``) and
  Krippendorff's alpha (nominal and ordinal, as the ``krippendorff`` package), vectorised over a
  stack of matrices (one per topic);
* :mod:`.ranks`: ranks of scores, tau_AP (Yilmaz, Aslam & Robertson, SIGIR 2008) with Urbano &
  Marrero's treatment of ties, Borda counts over several collections (MTEB's definition);
* :mod:`.rank_intervals`: each system's rank with its interval, from a runs x topics score matrix
  (or several, one per collection): the paired bootstrap over topics, or paired t intervals of the
  differences (Bonferroni over each run's comparisons);
* :mod:`.sampling`: the random draws of every resampling analysis (bootstrap topic samples, pairs
  of topic sets for the swap method, sign flips), made up front from one seeded generator;
* :mod:`.budget`: how a resampling is cut into blocks that fit its share of the memory limit;
* :mod:`.effects`: effect sizes and confidence intervals of paired differences (t and bootstrap
  percentile intervals, d_z, Sakai's SMD with the residual variance of the two-way ANOVA);
* :mod:`.bootstrap`: Sakai's paired bootstrap test (ASL, estimated difference) over system pairs;
* :mod:`.significance`: paired t, Wilcoxon signed-rank, randomisation test, randomised
  Tukey HSD, p-value adjustment (Bonferroni, Holm, BH, BY);
* :mod:`.swap`: the Voorhees/Buckley swap method, Sakai's with-replacement version, on a score
  matrix;
* :mod:`.correlation`: Kendall's tau and Spearman's rho of two system orderings, with p-values;
* :mod:`.topic_set_size`: Sakai's topic set size design (paired t, one-way ANOVA, CI width) from
  a known V_E: exact noncentral t / F and the closed forms;
* :mod:`.rank_correlation`: pair counts, tau-b and rho with ties in O(n log n) (the metrics'
  SQL functions use them per ranked list).

Nothing here imports from the rest of evalstore but :mod:`evalstore.errors` and
:mod:`evalstore.base.memory_limit` (the memory limit): ``tests/test_structure.py`` checks the layers.
"""
