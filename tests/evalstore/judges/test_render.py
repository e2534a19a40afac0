"""The agreement's tables and legend (evalstore.judges.render)."""

from __future__ import annotations

import numpy as np

from evalstore.judges.agree import Agreement
from evalstore.judges.labels import LabelAgreement
from evalstore.judges.ranking import ranking_agreement
from evalstore.judges.render import legend, ranking_table
from evalstore.meta.matrix import ScoreMatrix

RUNS = ["a", "b", "c"]
TOPICS = ["1", "2", "3", "4"]


def _matrix(qrels: str, metric: str, values: list[list[float]]) -> ScoreMatrix:
    return ScoreMatrix(qrels, metric, metric, list(RUNS), list(TOPICS), np.array(values, dtype=float))


def _agreement(*metrics: tuple[str, list[list[float]]]) -> Agreement:
    labels = LabelAgreement([0, 1], np.zeros((2, 2)), {})
    ranking = [ranking_agreement(_matrix("ref", m, v), _matrix("cand", m, v)) for m, v in metrics]
    return Agreement("ref", "cand", 1, labels, ranking)


A_BEST = [[0.9, 0.8, 0.9, 0.7], [0.5, 0.4, 0.6, 0.5], [0.1, 0.2, 0.1, 0.3]]
C_BEST = [[0.1, 0.2, 0.1, 0.3], [0.5, 0.4, 0.6, 0.5], [0.9, 0.8, 0.9, 0.7]]


def test_the_flips_legend_names_the_reference_run_of_each_metric():
    """Each metric's flips are counted against its own best run under the reference set; the legend
    named the first metric's best run for all of them (issue 44.1)."""
    a = _agreement(("nDCG@10", A_BEST), ("AP(rel=2)", C_BEST))
    assert [ra.summary["best_ref"] for ra in a.ranking] == ["a", "c"]
    (flips,) = [line for line in legend(a) if line.startswith("flips:")]
    assert "(nDCG@10: a; AP(rel=2): c)" in flips and "best under ref" not in flips
    table = ranking_table(a)
    assert [row[table.columns.index("best (ref)")] for row in table.rows] == ["a", "c"]


def test_one_reference_run_is_named_once():
    a = _agreement(("nDCG@10", A_BEST), ("AP", A_BEST))
    (flips,) = [line for line in legend(a) if line.startswith("flips:")]
    assert "against a (best under ref)" in flips
