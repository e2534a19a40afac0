"""SQL functions over per-topic score lists, registered on every connection the store opens.

    bootstrap_asl(x DOUBLE[], y DOUBLE[], B INTEGER, seed BIGINT) -> DOUBLE
        ASL of the paired bootstrap test (000 Sec. 4.3); the same value as the pair's ASL in
        ``evalstore meta discpower`` with the same B and seed.
    paired_t_p(x DOUBLE[], y DOUBLE[]) -> DOUBLE          two-sided paired t-test p-value
    wilcoxon_p(x DOUBLE[], y DOUBLE[]) -> DOUBLE          two-sided Wilcoxon signed-rank p-value
    randomisation_p(x DOUBLE[], y DOUBLE[], B INTEGER, seed BIGINT) -> DOUBLE

Rank correlation between two lists is provided by ``kendall_tau_b`` and ``spearman_rho``
(:mod:`evalstore.metrics.udf_graded`); over system means they give the same values as
``evalstore meta kendall``.

x[i] and y[i] must belong to the same topic (or system): build the lists with the same ORDER BY,
e.g. for two runs over the topics both were scored on::

    SELECT bootstrap_asl(list(a.value ORDER BY a.topic), list(b.value ORDER BY b.topic), 1000, 0)
    FROM scores a JOIN scores b USING (qrels, metric, topic)
    WHERE a.run = 'bm25' AND b.run = 'rerank' AND a.qrels = 'sample' AND a.metric = 'AP'

A NULL argument gives NULL; lists of different lengths or with NULL elements are an error.
"""

from __future__ import annotations

import numpy as np

from ..udfs import sql_function
from .bootstrap import bootstrap_asl
from .significance import paired_t, randomisation, wilcoxon


def _pair(name: str, x, y) -> tuple[np.ndarray, np.ndarray]:
    if len(x) != len(y):
        raise ValueError(
            f"{name}: the two lists have different lengths ({len(x)} and {len(y)}); "
            f"build both with the same topics in the same order"
        )
    if any(v is None for v in x) or any(v is None for v in y):
        raise ValueError(f"{name}: the lists contain NULL scores; filter them out or use coalesce(value, 0)")
    return np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)


@sql_function("bootstrap_asl", ["DOUBLE[]", "DOUBLE[]", "INTEGER", "BIGINT"], "DOUBLE")
def _bootstrap_asl(x, y, B, seed):
    x, y = _pair("bootstrap_asl", x, y)
    return bootstrap_asl(x, y, int(B), int(seed))


@sql_function("paired_t_p", ["DOUBLE[]", "DOUBLE[]"], "DOUBLE")
def _paired_t_p(x, y):
    x, y = _pair("paired_t_p", x, y)
    return float(paired_t((x - y)[None, :])[1][0])


@sql_function("wilcoxon_p", ["DOUBLE[]", "DOUBLE[]"], "DOUBLE")
def _wilcoxon_p(x, y):
    x, y = _pair("wilcoxon_p", x, y)
    return float(wilcoxon((x - y)[None, :])[1][0])


@sql_function("randomisation_p", ["DOUBLE[]", "DOUBLE[]", "INTEGER", "BIGINT"], "DOUBLE")
def _randomisation_p(x, y, B, seed):
    x, y = _pair("randomisation_p", x, y)
    return float(randomisation((x - y)[None, :], int(B), int(seed))[1][0])
