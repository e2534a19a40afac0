"""How much two rankings of the same topics agree: Kendall's tau Union (KTU) and rank-biased
overlap (RBO), per topic, as repro_eval 0.5.0 computes them (Breuer et al., SIGIR 2020).

The rankings come from the store (``run_row_data``) in one query per pair of runs, cut at
``depth`` documents; the per-topic statistics are computed with numpy.

Order of a ranking (``order=``):

* ``'trec_eval'`` (default): evalstore's ``rank``, i.e. trec_eval's order: score descending, ties
  by docno descending (byte order), whatever the order of the file's lines;
* ``'repro_eval'``: repro_eval's ``break_ties``: the order of the file's lines, with each run of
  *consecutive* lines of equal score sorted by docno descending. For a file sorted by score (as
  TREC requires) both orders are the same; for a file that is not, repro_eval keeps the file's
  order, trec_eval sorts.

KTU (repro_eval's ``KTU``): with ``o_1..o_n`` the documents of the original ranking and
``r_1..r_n`` those of the reproduced one, position by position, Kendall's tau between the two
sequences with documents compared by their docno (repro_eval maps each docno to its position in
the sorted union of both lists; only that order matters):
``tau = sum_{i<j} sgn(o_i - o_j) sgn(r_i - r_j) / (n (n - 1) / 2)``. Both lists hold distinct
documents, so tau-a = tau-b. repro_eval needs lists of the same length (scipy refuses others);
here two lists of different lengths are compared on their first ``min(len)`` positions.

RBO (repro_eval's ``_rbo``, after Clarke et al.'s implementation): with ``X_d`` the number of
documents the two top-``d`` lists share and ``D = depth``:
``RBO = sum_{d=1}^{D} p^(d-1) X_d / d / sum_{d=1}^{D} p^(d-1)``. A document found at ranks
``a`` and ``b`` counts in every ``X_d`` with ``d >= max(a, b)``, so
``RBO = sum_{shared docs} S(max(a, b)) / sum_{d=1}^{D} p^(d-1)`` with
``S(m) = sum_{d=m}^{D} p^(d-1) / d``, which is how it is computed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import MetaError

ORDERS = ("trec_eval", "repro_eval")


@dataclass
class Rankings:
    """The cut rankings of one run: ``topics`` (sorted) and, per topic, the documents in order."""

    run: str
    docs: dict[str, np.ndarray]  # topic -> docnos, in ranking order (at most depth)

    @property
    def topics(self) -> list[str]:
        return sorted(self.docs)

    @property
    def longest(self) -> int:
        """The length of the longest of its rankings (0 without any)."""
        return max((len(d) for d in self.docs.values()), default=0)


def check_order(order: str) -> str:
    o = order.replace("-", "_").lower()
    if o not in ORDERS:
        raise MetaError(f"unknown ranking order {order!r}; use one of {', '.join(ORDERS)}")
    return o


def rankings(store, runs: list[str], depth: int, order: str = "trec_eval") -> dict[str, Rankings]:
    """The rankings of ``runs`` cut at ``depth``, in one query: ``{run: Rankings}``."""
    order = check_order(order)
    ids = {r: store.run_id(r) for r in dict.fromkeys(runs)}
    if order == "trec_eval":
        ranked = (
            "SELECT run_id, topic, doc, rank AS pos FROM run_row_data WHERE run_id IN (SELECT unnest(?::INTEGER[]))"
        )
    else:
        # file order; a new group starts at every line whose score differs from the line before
        # (NULL scores never tie); within a group docno descending
        ranked = """
            WITH r AS (
                SELECT run_id, topic, doc, line_no,
                       CASE WHEN score = lag(score) OVER w THEN 0 ELSE 1 END AS brk
                FROM run_row_data WHERE run_id IN (SELECT unnest(?::INTEGER[]))
                WINDOW w AS (PARTITION BY run_id, topic ORDER BY line_no)),
            g AS (
                SELECT *, sum(brk) OVER (PARTITION BY run_id, topic ORDER BY line_no
                                         ROWS UNBOUNDED PRECEDING) AS grp FROM r)
            SELECT run_id, topic, doc,
                   row_number() OVER (PARTITION BY run_id, topic ORDER BY grp, doc DESC) AS pos
            FROM g"""
    data = store.con.execute(
        f"SELECT run_id, topic, doc FROM ({ranked}) WHERE pos <= ? ORDER BY run_id, topic, pos",
        [list(ids.values()), min(int(depth), 2**63 - 1)],
    ).fetchnumpy()
    rid = np.asarray(data["run_id"], dtype=np.int64)
    topic = np.asarray(data["topic"], dtype=object)
    doc = np.asarray(data["doc"], dtype=object)
    out = {}
    for run, i in ids.items():
        sel = rid == i
        t, d = topic[sel], doc[sel]
        if t.size:
            starts = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
            ends = np.r_[starts[1:], t.size]
            per = {str(t[s]): d[s:e] for s, e in zip(starts, ends)}
        else:
            per = {}
        out[run] = Rankings(run, per)
    return out


def _docno_ranks(docs: np.ndarray) -> np.ndarray:
    """Position of each document in the docno order of the list: code point order (numpy's
    order of str, Python's ``sorted`` in repro_eval, and UTF-8 byte order, DuckDB's)."""
    order = np.argsort(np.asarray(docs, dtype=str), kind="stable")
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order))
    return ranks


def ktu(orig: np.ndarray, rep: np.ndarray) -> tuple[float, int]:
    """KTU of two rankings (docno arrays) and the number of positions compared (NaN below 2)."""
    n = min(len(orig), len(rep))
    if n < 2:
        return float("nan"), n
    a = _docno_ranks(orig[:n]).astype(np.int32)
    b = _docno_ranks(rep[:n]).astype(np.int32)
    sa = np.sign(a[:, None] - a[None, :]).astype(np.int8)
    sb = np.sign(b[:, None] - b[None, :]).astype(np.int8)
    s = int(np.einsum("ij,ij->", sa, sb, dtype=np.int64)) // 2  # each pair counted twice
    return s / (n * (n - 1) / 2), n


#: a rank cut up to this depth is summed term by term, as repro_eval does; beyond it (a cut larger
#: than any ranking: ``--cut 2147483648``) the terms past the longest ranking are summed in closed
#: form, so the work and memory follow the data, not the cut
DIRECT_DEPTH = 1_000_000


def rbo_weights(p: float, depth: int, longest: int | None = None) -> tuple[np.ndarray, float]:
    """``S(m)`` for m = 1..depth (index m - 1) and the normaliser ``sum_{d=1}^{depth} p^(d-1)``.

    ``longest``: the length of the longest ranking compared; only ``S(1)..S(longest)`` can be used
    (a shared document's deeper rank is at most that), so only those are returned. A ``depth``
    beyond :data:`DIRECT_DEPTH` and the longest ranking costs the length of the ranking, not of
    ``depth``: the sum over ranks ``longest + 1 .. depth`` is :func:`rbo_tail`, the normaliser
    ``(1 - p^depth) / (1 - p)``."""
    depth = int(depth)
    used = depth if longest is None else max(1, min(depth, int(longest)))
    if depth <= max(DIRECT_DEPTH, used):
        d = np.arange(1, depth + 1, dtype=np.float64)
        w = p ** (d - 1)
        suffix = np.cumsum((w / d)[::-1])[::-1]
        return suffix[:used].copy(), float(w.sum())
    d = np.arange(1, used + 1, dtype=np.float64)
    w = p ** (d - 1)
    suffix = np.cumsum((w / d)[::-1])[::-1] + rbo_tail(p, used + 1, depth)
    return suffix, _geometric_sum(p, depth)


def _geometric_sum(p: float, n: int) -> float:
    """``sum_{d=1}^{n} p^(d-1) = (1 - p^n) / (1 - p)``, accurate for p near 1 and any n."""
    if p >= 0.5:  # 1 - p and p - 1 are exact here
        return float(-math.expm1(n * math.log1p(p - 1)) / (1 - p))
    return float((1 - p**n) / (1 - p)) if n < 10_000 else float(1 / (1 - p))


def rbo_tail(p: float, a: int, b: int, *, block: int = 1 << 16, direct: int = DIRECT_DEPTH) -> float:
    """``sum_{d=a}^{b} p^(d-1) / d`` for 0 < p < 1 and 1 <= a <= b (b may be 2^63 - 1), in bounded
    work: term by term (in blocks) until the rest is below 1e-17 of the sum, or for up to ``direct``
    terms; the rest by the Euler-Maclaurin formula, whose integral is
    ``(E1(c |ln p|) - E1(b |ln p|)) / p`` (exponential integral E1; its correction terms at
    c >= ``direct`` are below 1e-20 of the sum)."""
    lnp = math.log(p)
    total, d = 0.0, int(a)
    stop = min(int(b), int(a) + int(direct) - 1)
    while d <= stop:
        hi = min(stop, d + block - 1)
        x = np.arange(d, hi + 1, dtype=np.float64)
        terms = np.exp((x - 1) * lnp) / x
        total += float(np.sum(terms[::-1]))  # smallest first
        d = hi + 1
        rest = math.exp((d - 1) * lnp) / (d * -math.expm1(lnp)) if d <= b else 0.0  # >= the remaining sum
        if rest <= 1e-17 * max(total, 1e-300):
            return total
    if d > b:
        return total
    return total + _euler_maclaurin(p, lnp, d, int(b))


def _euler_maclaurin(p: float, lnp: float, c: int, b: int) -> float:
    """``sum_{d=c}^{b} f(d)`` with ``f(x) = p^(x-1) / x``, for large c: the integral, half of each
    end point and two derivative corrections (with ``g = ln p - 1/x``: the first derivative is
    ``f g``, the third ``f (g^3 + 3 g / x^2 - 2 / x^3)``)."""
    from scipy.special import exp1

    k = -lnp

    def f(x: float) -> float:
        return math.exp((x - 1) * lnp) / x if (x - 1) * k < 745 else 0.0

    def d1(x: float) -> float:
        return f(x) * (lnp - 1 / x)

    def d3(x: float) -> float:
        g = lnp - 1 / x
        return f(x) * (g**3 + 3 * g / x**2 - 2 / x**3)

    integral = (float(exp1(c * k)) - float(exp1(b * k))) / p
    return integral + (f(c) + f(b)) / 2 + (d1(b) - d1(c)) / 12 - (d3(b) - d3(c)) / 720


def rbo(orig: np.ndarray, rep: np.ndarray, p: float, depth: int, weights=None) -> float:
    """repro_eval's RBO of two rankings (docno arrays) to ``depth``."""
    S, norm = weights if weights is not None else rbo_weights(p, depth)
    o = np.asarray(orig[:depth], dtype=str)
    r = np.asarray(rep[:depth], dtype=str)
    _, io, ir = np.intersect1d(o, r, assume_unique=True, return_indices=True)
    if io.size == 0:
        return 0.0
    m = np.maximum(io, ir)  # 0-based: the deeper of the two ranks of each shared document
    return float(S[m].sum() / norm)


def check_p(p: float) -> float:
    if not (0 < p < 1):
        raise MetaError(f"the RBO persistence p must be between 0 and 1, not {p}")
    return float(p)


def check_depth(depth: int) -> int:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)):
        raise MetaError(f"the rank cut is a whole number of documents, not {depth!r}")
    if not 1 <= int(depth) <= 2**63 - 1:
        raise MetaError(f"the rank cut must be between 1 and 2^63 - 1 documents, not {depth}")
    return int(depth)
