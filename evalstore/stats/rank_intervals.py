"""Each system's rank with an interval: how far it could move if the topics had been others.

The input is one runs x topics score matrix per collection (the same runs, in the same order, in
every matrix; NaN where a run has no score on a topic: a run's summary is over the topics it has,
as the leaderboard's). The observed rank is the competition rank of the summaries
(:func:`evalstore.stats.ranks.competition_ranks`: 1 = best, ties share the best rank); over
several collections of the score :func:`evalstore.stats.ranks.across` gives (mean of means, or
Borda points).

Two methods:

``bootstrap`` (the paired bootstrap over topics): ``trials`` resamples of the topics of each
collection, drawn with replacement from ``numpy.random.default_rng(seed)`` (one generator;
collection by collection ``rng.integers(0, n, size=(trials, n))``: for a single collection the
same draws as :func:`evalstore.stats.sampling.bootstrap_indices`, hence as the bootstrap intervals
of the means with the same seed). Every run is summarised on the same resampled topics (all runs
resampled together, so their correlation through the topics is kept), the runs are ranked in
every resample, and a run's interval ``[lo, hi]`` holds the middle ``level`` of its ranks: with
``k = floor(trials * (1 - level) / 2)``, ``lo`` is the ``(k+1)``-th smallest and ``hi`` the
``(k+1)``-th largest of its ``trials`` ranks, so at most ``k`` ranks fall below ``lo`` and at most
``k`` above ``hi``. A percentile interval of ranks can miss the observed rank (Hall & Miller 2009:
a run just above many near-equal runs ranks lower in most resamples); such an interval is widened
to the observed rank, and ``widened`` says where. The resamples are drawn and ranked in blocks
sized from the memory limit (:mod:`evalstore.stats.budget`; each collection's draws continue its
own stream of the one generator, so the numbers are those of one call), and what is kept of them
is a count of each run's ranks (runs x runs), so memory does not grow with ``trials``.

``t`` (ranks from paired t intervals, Klein, Wright & Wieczorek, *A joint confidence region for an
overall ranking of populations*, JRSS C 2020): for every pair of runs the t interval of the mean
of their per-topic differences (over the topics both have), at level ``1 - (1 - level) / (R - 1)``
(Bonferroni over a run's ``R - 1`` comparisons). A run's interval is ``lo = 1 +`` the number of
runs whose interval of (other - run) lies above 0 (significantly better) and ``hi = R -`` the
number whose interval lies below 0 (significantly worse); if every interval covers its true
difference, the run's true rank lies in ``[lo, hi]``, so each interval covers the true rank with
probability at least ``level`` under the t-test's assumptions. Only for one collection.
"Non-overlapping t intervals of the two means" is not used: it ignores that runs are scored on the
same topics (paired), which makes it far too conservative, and gives no coverage statement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .budget import rows_per_block, working
from .ranks import across, competition_ranks

METHODS = ("bootstrap", "t")
SUMMARIES = ("mean", "gmean", "sum")
#: per-topic scores are floored here before the logarithm of a geometric mean (trec_eval's floor)
GMEAN_FLOOR = 1e-5
#: bytes of working arrays per resample and topic (the draws, their offsets, the weights), and per
#: resample and run (sums, counts, summaries, ranks) in a block of resamples
_PER_TOPIC, _PER_RUN = 40, 48
#: the most resamples of a block: larger blocks cost more CPU time, not less (the weight matrix
#: leaves the cache and numpy's matrix product goes multi-threaded: 0.3 against 1.5 CPU-s for
#: 300,000 resamples of 6 runs x 43 topics at 2,048 against 4,096 a block)
_MAX_BLOCK = 2048


@dataclass
class RankIntervals:
    """``rank[i]``, ``lo[i]``, ``hi[i]`` of run ``i``; ``widened[i]``: the bootstrap percentile
    interval did not hold the observed rank and was widened to it; ``score``: what was ranked."""

    method: str
    level: float
    trials: int | None
    seed: int | None
    score: np.ndarray
    rank: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    widened: np.ndarray

    def describe(self) -> str:
        pct = f"{self.level * 100:g} %"
        if self.method == "bootstrap":
            return (
                f"{pct} interval of each run's rank over {self.trials} paired bootstrap resamples of the topics "
                f"(all runs resampled together, seed {self.seed})"
            )
        return (
            f"{pct} interval of each run's rank from paired t intervals of its differences with every other run "
            f"(Bonferroni over its comparisons; Klein et al. 2020)"
        )


def _check(matrices: Sequence[np.ndarray], summaries: Sequence[str]) -> list[np.ndarray]:
    mats = [np.asarray(m, dtype=np.float64) for m in matrices]
    if not mats or any(m.ndim != 2 for m in mats) or len({m.shape[0] for m in mats}) != 1:
        raise ValueError("one runs x topics matrix per collection, all with the same runs")
    if len(summaries) != len(mats) or any(s not in SUMMARIES for s in summaries):
        raise ValueError(f"one summary per matrix, each one of {', '.join(SUMMARIES)}")
    return mats


def _prepared(X: np.ndarray, summary: str) -> np.ndarray:
    return np.log(np.maximum(X, GMEAN_FLOOR)) if summary == "gmean" else X


def _summaries(sums: np.ndarray, counts: np.ndarray, summary: str) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        if summary == "sum":
            return np.where(counts > 0, sums, np.nan)
        m = np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)
    return np.exp(m) if summary == "gmean" else m


def observed(matrices: Sequence[np.ndarray], summaries: Sequence[str], how: str = "mean") -> np.ndarray:
    """The score each run is ranked by: its summary (one collection), or ``across`` collections."""
    mats = _check(matrices, summaries)
    rows = []
    for X, s in zip(mats, summaries):
        P = _prepared(X, s)
        present = ~np.isnan(P)
        rows.append(_summaries(np.where(present, P, 0.0).sum(axis=1), present.sum(axis=1), s))
    return rows[0] if len(rows) == 1 else across(np.vstack(rows), how)


def bootstrap(
    matrices: Sequence[np.ndarray],
    summaries: Sequence[str],
    *,
    trials: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    how: str = "mean",
    score: np.ndarray | None = None,
    memory: int | None = None,
) -> RankIntervals:
    """Rank intervals by the paired bootstrap over topics (see the module docstring). ``score``:
    the observed scores when the caller has them (the exact means); else :func:`observed`.
    ``memory``: the memory limit in bytes the blocks of resamples are sized from (None: the
    default limit)."""
    mats = _check(matrices, summaries)
    _check_level(level)
    if trials < 1:
        raise ValueError(f"trials must be at least 1, not {trials}")
    obs = observed(mats, summaries, how) if score is None else np.asarray(score, dtype=np.float64)
    rank = competition_ranks(obs)
    R = len(obs)
    streams = _streams(seed, [X.shape[1] for X in mats], trials)
    prepared = [_prepared(X, s) for X, s in zip(mats, summaries)]
    per_trial = sum(X.shape[1] for X in mats) * _PER_TOPIC + R * _PER_RUN * (1 + len(mats))
    block = min(_MAX_BLOCK, rows_per_block(per_trial, working(memory) // 2, trials))
    counts = np.zeros((R, R + 1), dtype=np.int64)  # counts[i, r]: resamples in which run i ranks r
    for b0 in range(0, trials, block):
        size = min(block, trials - b0)
        rows = [
            _resampled(P, rng.integers(0, P.shape[1], size=(size, P.shape[1])), s)
            for P, rng, s in zip(prepared, streams, summaries)
        ]
        S = rows[0] if len(rows) == 1 else across(np.stack(rows, axis=1), how)  # (block, collections, runs)
        ranks = competition_ranks(S)  # (block, runs), each 1..R
        cells = (np.arange(R) * (R + 1) + ranks).ravel()
        counts += np.bincount(cells, minlength=R * (R + 1)).reshape(R, R + 1)
    k = int(math.floor(trials * (1.0 - level) / 2.0 + 1e-9))
    cum = counts.cumsum(axis=1)
    lo = (cum >= k + 1).argmax(axis=1)  # the (k+1)-th smallest rank
    hi = (cum >= trials - k).argmax(axis=1)  # the (k+1)-th largest
    widened = (rank < lo) | (rank > hi)
    return RankIntervals(
        "bootstrap", level, trials, seed, obs, rank, np.minimum(lo, rank), np.maximum(hi, rank), widened
    )


def _streams(seed: int, n_topics: Sequence[int], trials: int) -> list[np.random.Generator]:
    """One generator per collection, each where ``numpy.random.default_rng(seed)`` stands once the
    draws of the collections before it (``trials x n`` each) are made: collection by collection the
    numbers of ``rng.integers(0, n, size=(trials, n))`` in turn, drawn in blocks. The draws of the
    collections before are made (in blocks, and dropped) to get there."""
    rng = np.random.default_rng(seed)
    out = []
    for c, n in enumerate(n_topics):
        out.append(np.random.default_rng(seed))
        out[-1].bit_generator.state = rng.bit_generator.state
        if c + 1 < len(n_topics):
            step = max(1, (1 << 22) // max(1, n))
            for b0 in range(0, trials, step):
                rng.integers(0, n, size=(min(step, trials - b0), n))
    return out


def _resampled(P: np.ndarray, idx: np.ndarray, summary: str) -> np.ndarray:
    """``(block, runs)`` summaries of every run on each resample of the topics (``idx``: topic indices)."""
    n = P.shape[1]
    B = idx.shape[0]
    W = np.bincount((idx + (np.arange(B) * n)[:, None]).ravel(), minlength=B * n).reshape(B, n).astype(np.float64)
    present = ~np.isnan(P)
    sums = W @ np.where(present, P, 0.0).T
    counts = W @ present.T.astype(np.float64)
    return _summaries(sums, counts, summary)


def paired_t(matrix: np.ndarray, summary: str = "mean", *, level: float = 0.95, score=None) -> RankIntervals:
    """Rank intervals from paired t intervals with Bonferroni (see the module docstring)."""
    from scipy.stats import t as t_dist

    X = _check([matrix], [summary])[0]
    _check_level(level)
    obs = observed([X], [summary]) if score is None else np.asarray(score, dtype=np.float64)
    rank = competition_ranks(obs)
    R = X.shape[0]
    P = _prepared(X, "gmean" if summary == "gmean" else "mean")
    present = ~np.isnan(P)
    V = np.where(present, P, 0.0)
    M = present.astype(np.float64)
    better = np.zeros((R, R), dtype=bool)  # better[i, j]: run j significantly better than run i
    worse = np.zeros((R, R), dtype=bool)
    alpha = (1.0 - level) / max(R - 1, 1)
    for i in range(R):
        both = M * M[i]  # topics run i and each other run have
        n = both.sum(axis=1)
        d = (V - V[i]) * both  # other - run i
        mean = np.divide(d.sum(axis=1), n, out=np.zeros(R), where=n > 0)
        ss = (((V - V[i]) - mean[:, None]) ** 2 * both).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            se = np.sqrt(ss / (n - 1) / n)
            q = t_dist.ppf(1.0 - alpha / 2.0, np.maximum(n - 1, 1))
        ok = n >= 2
        half = np.where(ok, q * se, np.inf)
        better[i] = ok & (mean - half > 0)
        worse[i] = ok & (mean + half < 0)
        better[i, i] = worse[i, i] = False
    lo = 1 + better.sum(axis=1)
    hi = R - worse.sum(axis=1)
    widened = (rank < lo) | (rank > hi)
    return RankIntervals("t", level, None, None, obs, rank, np.minimum(lo, rank), np.maximum(hi, rank), widened)


def _check_level(level: float) -> None:
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"the level is between 0 and 1, not {level}")


def rank_intervals(
    matrices: Sequence[np.ndarray],
    summaries: Sequence[str],
    method: str,
    *,
    level: float = 0.95,
    trials: int = 1000,
    seed: int = 0,
    how: str = "mean",
    score=None,
    memory: int | None = None,
) -> RankIntervals:
    """:func:`bootstrap` or :func:`paired_t` (one collection only) by name (``memory``: the
    bootstrap's memory limit in bytes)."""
    if method not in METHODS:
        raise ValueError(f"rank intervals by {' or '.join(METHODS)}, not {method!r}")
    if method == "t":
        if len(matrices) != 1:
            raise ValueError(
                "t rank intervals compare runs on the topics of one collection; over several collections use bootstrap"
            )
        return paired_t(matrices[0], summaries[0], level=level, score=score)
    return bootstrap(matrices, summaries, trials=trials, seed=seed, level=level, how=how, score=score, memory=memory)
