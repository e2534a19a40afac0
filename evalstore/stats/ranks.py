"""Ranks of systems, tau_AP between two rankings, and leaderboards over several collections.

Scores are "higher is better" throughout; a missing score (NaN) ranks after every score.

* :func:`competition_ranks`: rank 1 for the best, tied scores share the best rank of their group
  (``1 + the number of strictly better scores``: "1, 2, 2, 4"), for one vector or each row of a
  matrix;
* :func:`tau_ap`: the AP rank correlation coefficient of Yilmaz, Aslam & Robertson (SIGIR 2008) of
  a candidate ranking against a reference ranking, with ties treated as Urbano & Marrero do
  (ICTIR 2017, tau_AP,b); :func:`tau_ap_b` is their symmetric tau_AP,b (the mean of both
  directions, as TREC AutoJudge's scorer reports it);
* :func:`borda` and :func:`mean_of_means`: one score per system over several collections, as MTEB
  ranks models over tasks (each collection counted once).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: rows of the pair matrix compared at once by :func:`tau_ap` (bounds its memory to ~ 8 MB a block)
_BLOCK = 1 << 20


def _scores(values) -> np.ndarray:
    """Scores with NaN as -inf (ranked last, tied with each other)."""
    x = np.asarray(values, dtype=np.float64)
    return np.where(np.isnan(x), -np.inf, x)


def competition_ranks(values) -> np.ndarray:
    """``1 + #(strictly higher scores)`` of every score (along the last axis), as int64."""
    x = _scores(values)
    if x.ndim == 1:
        s = np.sort(x)
        return (len(x) - np.searchsorted(s, x, side="right") + 1).astype(np.int64)
    flat = x.reshape(-1, x.shape[-1])
    order = np.argsort(-flat, axis=1, kind="stable")
    sv = np.take_along_axis(flat, order, axis=1)
    n = sv.shape[1]
    pos = np.broadcast_to(np.arange(n), sv.shape)
    starts = np.concatenate([np.ones((sv.shape[0], 1), bool), sv[:, 1:] != sv[:, :-1]], axis=1)
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)  # first position of each tie group
    out = np.empty_like(order)
    np.put_along_axis(out, order, first + 1, axis=1)
    return out.reshape(x.shape).astype(np.int64)


def tau_ap(reference, candidate) -> float:
    """tau_AP of the ``candidate`` ranking against the ``reference`` ranking (scores of the same
    items, higher ranks first; NaN for fewer than two tie groups in the candidate ranking).

    Yilmaz, Aslam & Robertson (SIGIR 2008, Eq. 3): ``tau_AP = 2 / (n - 1) * sum_{i=2..n} C(i) /
    (i - 1) - 1``, where ``i`` runs over the candidate ranking's positions and ``C(i)`` counts the
    items above position ``i`` that the reference ranking also puts above that item. Errors near the
    top cost more: one swap of the first two of 10 items gives 7/9 = 0.7778, of the last two 79/81
    = 0.9753.

    Ties (Urbano & Marrero, ICTIR 2017, the per-direction part of tau_AP,b): the items tied at an
    item's position in the candidate ranking are neither above nor below it; ``i - 1`` becomes the
    number of items strictly above the item's tie group, the items of the top tie group are
    skipped, and ``n - 1`` becomes the number of items outside the top group. An item above in the
    candidate ranking that the reference ranking ties with the item counts as not concordant. Without
    ties this is Yilmaz et al.'s formula exactly; it equals pyircor's ``tauap_b_ties(reference,
    candidate)`` (Urbano's ircor, which TREC AutoJudge's scorer uses)."""
    ref, cand = _scores(reference), _scores(candidate)
    if ref.shape != cand.shape or ref.ndim != 1:
        raise ValueError(f"two score vectors of the same items are needed, not shapes {ref.shape} and {cand.shape}")
    above = competition_ranks(cand) - 1  # items strictly above each item in the candidate ranking
    keep = np.flatnonzero(above > 0)
    if keep.size == 0:
        return float("nan")
    n = len(cand)
    step = max(1, _BLOCK // max(n, 1))
    concordant = np.empty(keep.size, dtype=np.float64)
    for s in range(0, keep.size, step):
        i = keep[s : s + step]
        both = (cand[None, :] > cand[i, None]) & (ref[None, :] > ref[i, None])
        concordant[s : s + step] = both.sum(axis=1)
    return float(2.0 / keep.size * np.sum(concordant / above[keep]) - 1.0)


def tau_ap_b(a, b) -> float:
    """Urbano & Marrero's symmetric tau_AP,b: the mean of :func:`tau_ap` in both directions (what
    TREC AutoJudge's scorer reports as ``tauap_b``)."""
    return (tau_ap(a, b) + tau_ap(b, a)) / 2.0


def _sets_by_runs(scores) -> np.ndarray:
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim < 2:
        raise ValueError(f"scores are a (collections x systems) matrix (or a stack of them), not of shape {S.shape}")
    return S


def average_ranks(scores) -> np.ndarray:
    """Ranks 1 = best along the last axis with ties averaged (``scipy.stats.rankdata(-x)``, method
    ``average``); NaN where the score is missing (they are not ranked)."""
    from scipy.stats import rankdata

    x = np.asarray(scores, dtype=np.float64)
    r = rankdata(-x, method="average", axis=-1, nan_policy="omit")
    return np.where(np.isnan(x), np.nan, r)


def borda(scores) -> np.ndarray:
    """Borda points of each system over collections (``scores``: collections x systems, NaN where a
    system has no score on a collection), as MTEB's leaderboard counts them: on each collection a
    system earns ``N - r`` points, ``N`` the number of systems on the leaderboard and ``r`` its rank
    among the systems scored on that collection (1 = best, ties averaged); a collection it has no
    score on earns it nothing. Each collection counts once. Rank the points with
    :func:`competition_ranks` (MTEB: ``rank(method="min")`` of the points, descending)."""
    S = _sets_by_runs(scores)
    points = S.shape[-1] - average_ranks(S)
    return np.nansum(points, axis=-2)


def mean_of_means(scores) -> np.ndarray:
    """The mean of each system's scores over the collections, each counted once (MTEB's "Mean
    (Task)"); NaN for a system missing a collection (it is ranked after the others)."""
    S = _sets_by_runs(scores)
    return S.mean(axis=-2)


AGGREGATES = {"mean": mean_of_means, "borda": borda}


def across(scores, how: str) -> np.ndarray:
    """One score per system over collections: ``mean`` (:func:`mean_of_means`) or ``borda``
    (``scores``: collections x systems, or a stack of such matrices)."""
    if how not in AGGREGATES:
        raise ValueError(f"aggregate over collections by {' or '.join(AGGREGATES)}, not {how!r}")
    return AGGREGATES[how](scores)


def largest_change(a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray) -> tuple[int, list[int]]:
    """The largest ``|a_i - b_i|`` of two rank vectors and the positions where it occurs."""
    d = np.abs(np.asarray(a, dtype=np.int64) - np.asarray(b, dtype=np.int64))
    if d.size == 0:
        return 0, []
    top = int(d.max())
    return top, [int(i) for i in np.flatnonzero(d == top)] if top > 0 else []
