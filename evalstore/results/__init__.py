"""Results of an evaluation:

* :mod:`.eval_result`: :class:`~.eval_result.EvalResult` (per-topic scores and per-run summaries,
  in request order) and :func:`~.eval_result.result_of_rows`, the one builder of a result from
  per-topic rows (the store, the in-memory paths and Spark);
* :mod:`.query`: the same result shaped in DuckDB from a table of per-topic scores;
* :mod:`.tables`: a result's leaderboards and per-topic tables;
* :mod:`.across`: one leaderboard over several qrels sets (``--agg mean|borda``).
"""
