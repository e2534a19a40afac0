"""Evaluation: from qrels, runs, metrics and options to per-topic scores, by the SQL blocks of
``sql/``.

* :mod:`.stored`: the one path of a store's runs (``Store.evaluate``, ``evalstore eval`` on a store,
  subsamples, the meta-evaluation's score matrices), which stores the scores;
* :mod:`.context`: :class:`~.context.EvaluationContext`, one evaluation of stored runs: its plan,
  its temporary tables and the one writer of scores;
* :mod:`.in_memory`: :class:`~.in_memory.Evaluator` (``evalstore.Evaluator``), runs given in memory
  or as files, without a store: the same SQL, the same numbers.

The package imports none of them: ``in_memory`` sits in a higher layer than the other two
(tests/test_structure.py). It names the evaluation of each kind of source given in memory,
imported when first read (:mod:`evalstore.base.lazy`): :func:`evalstore.api.evaluate_source`
dispatches to every kind, and a command that evaluates one kind loads none of the others
(``evalstore eval`` of a store's runs: not the readers of run files; of run files: not the answers').
"""

from typing import TYPE_CHECKING

from ..base.lazy import exports

if TYPE_CHECKING:
    from .answers import evaluate_answers
    from .in_memory import Evaluator

__getattr__, __dir__ = exports(__name__, {"Evaluator": ".in_memory", "evaluate_answers": ".answers"})

__all__ = ["Evaluator", "evaluate_answers"]
