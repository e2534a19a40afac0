"""Evaluation: from qrels, runs, metrics and options to per-topic scores, by the SQL blocks of
``sql/``.

* :mod:`.stored`: the one path of a store's runs (``Store.evaluate``, ``evalstore eval`` on a store,
  subsamples, the meta-evaluation's score matrices), which stores the scores;
* :mod:`.context`: :class:`~.context.EvaluationContext`, one evaluation of stored runs: its plan,
  its temporary tables and the one writer of scores;
* :mod:`.in_memory`: :class:`~.in_memory.Evaluator` (``evalstore.Evaluator``), runs given in memory
  or as files, without a store: the same SQL, the same numbers.

The package imports none of them: ``in_memory`` sits in a higher layer than the other two
(tests/test_structure.py).
"""
