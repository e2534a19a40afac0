"""Why a score is what it is (``evalstore explain``, docs/explain.md):

* :mod:`.explanation`: a metric on one run and topic, rank by rank, from the metric's own SQL block
  (its queries: :mod:`evalstore.metrics.explain_sql`), and the conventions side by side;
* :mod:`.tables`: their tables.
"""
