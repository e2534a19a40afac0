"""SQL functions over per-topic score lists, registered on every connection the store opens.

    bootstrap_asl(x DOUBLE[], y DOUBLE[], B INTEGER, seed BIGINT) -> DOUBLE
        ASL of the paired bootstrap test (Sakai IPSJ 2007 Sec. 4.3); the same value as the pair's ASL in
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

A NULL argument gives NULL; lists of different lengths or with NULL elements are an error. The
Monte-Carlo tests work in Python, outside DuckDB's memory limit, in blocks sized from it
(:mod:`evalstore.stats.budget`); as one call cannot be interrupted, they also refuse a B whose
B x n resample cells (about 32 bytes each) would exceed the connection's memory limit
(``bootstrap_asl: B x n = ...``).

The functions are vectorised: DuckDB hands them a batch of rows (Arrow columns); the rows with the
same number of topics (and B, seed) go to the matrix form of the test at once, one row per pair
(the form ``evalstore meta`` uses), not one Python call per pair.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from ..base.python_udf import sql_function
from ..stats.bootstrap import paired_bootstrap
from ..stats.significance import paired_t, randomisation, wilcoxon
from . import udf_lists as L

#: Bytes a resampling test needs per (resample, topic) cell: the index or sign matrix, its counts
#: and the products (measured: bootstrap_asl with B = 30,000,000 and n = 2 used 3 GB).
BYTES_PER_CELL = 32


def _batch(name: str, x, y, *scalars, test: Callable[..., np.ndarray], budget: int | None = None) -> pa.Array:
    """``test(Z, *scalars)`` for the rows of a batch grouped by (length, scalars): Z holds x - y.
    ``budget``: bytes the first scalar (B) times the list length may use (see the module docstring)."""
    ok = L.all_valid(x, y, *scalars)
    xv, xo, _ = L.lists(x, ok)
    yv, yo, _ = L.lists(y, ok)
    xl, yl = np.diff(xo), np.diff(yo)
    if not np.array_equal(xl, yl):
        i = int(np.flatnonzero(xl != yl)[0])
        raise ValueError(
            f"{name}: the two lists have different lengths ({xl[i]} and {yl[i]}); "
            f"build both with the same topics in the same order"
        )
    if np.isnan(xv).any() or np.isnan(yv).any():
        raise ValueError(f"{name}: the lists contain NULL scores; filter them out or use coalesce(value, 0)")
    params = [L.scalars(a)[0].astype(np.int64) for a in scalars]
    if budget is not None and params and ok.any():
        cells = int((params[0][ok].astype(np.float64) * xl[ok]).max())
        if cells * BYTES_PER_CELL > budget:
            raise ValueError(
                f"{name}: B x n = {cells:,} resample cells need about {cells * BYTES_PER_CELL / 2**20:,.0f} MiB, more "
                f"than the connection's memory limit ({budget / 2**20:,.0f} MiB) allows; use a smaller B (or "
                f"evalstore meta, which works in blocks)"
            )
    out = np.zeros(len(xl))
    keys = np.stack([xl, *params], axis=1)[ok]
    rows = np.flatnonzero(ok)
    for key in np.unique(keys, axis=0):
        sel = rows[(keys == key).all(axis=1)]
        n = int(key[0])
        idx = xo[sel][:, None] + np.arange(n)[None, :]
        out[sel] = test(xv[idx] - yv[idx], *(int(k) for k in key[1:]))
    return L.column(out, ok)


@sql_function("bootstrap_asl", ["DOUBLE[]", "DOUBLE[]", "INTEGER", "BIGINT"], "DOUBLE", arrow=True, bounded=True)
def _bootstrap_asl(budget: int) -> Callable[..., pa.Array]:
    def bootstrap_asl(x, y, B, seed) -> pa.Array:
        asl = lambda Z, b, s: paired_bootstrap(Z, B=b, seed=s, memory=budget).asl  # noqa: E731
        return _batch("bootstrap_asl", x, y, B, seed, test=asl, budget=budget)

    return bootstrap_asl


@sql_function("paired_t_p", ["DOUBLE[]", "DOUBLE[]"], "DOUBLE", arrow=True)
def _paired_t_p(x, y) -> pa.Array:
    return _batch("paired_t_p", x, y, test=lambda Z: paired_t(Z)[1])


@sql_function("wilcoxon_p", ["DOUBLE[]", "DOUBLE[]"], "DOUBLE", arrow=True)
def _wilcoxon_p(x, y) -> pa.Array:
    return _batch("wilcoxon_p", x, y, test=lambda Z: wilcoxon(Z)[1])


@sql_function("randomisation_p", ["DOUBLE[]", "DOUBLE[]", "INTEGER", "BIGINT"], "DOUBLE", arrow=True, bounded=True)
def _randomisation_p(budget: int) -> Callable[..., pa.Array]:
    def randomisation_p(x, y, B, seed) -> pa.Array:
        p = lambda Z, b, s: randomisation(Z, b, s, memory=budget)[1]  # noqa: E731
        return _batch("randomisation_p", x, y, B, seed, test=p, budget=budget)

    return randomisation_p
