"""Rank intervals of an evaluation: each run's rank by each metric's mean, with its interval.

For every metric of an :class:`~evalstore.results.eval_result.EvalResult`, the runs x topics matrix of its
per-topic scores (a topic a run has no score on is left out of that run's mean, as in the
leaderboard) goes to :func:`evalstore.stats.rank_intervals.rank_intervals`: ``bootstrap`` (the
paired bootstrap over topics, all runs resampled together, ``trials`` resamples drawn with
``seed``) or ``t`` (from paired t intervals of the differences, Bonferroni over each run's
comparisons); the module docstring there defines both. The observed rank is the competition rank
of the result's means (the leaderboard view's ``rank`` for the same runs: 1 = best, ties share the
best rank). Geometric means (GM_AP) are ranked on the log scale, which orders them the same.

:func:`save` stores a result's rankings (table ``rank_interval_data``, view ``rank_intervals``): one
ranking per (qrels set, metric, method, level, trials, seed), replacing the previous one, tied to
the evaluations it read; the ``leaderboard`` view shows ``rank_lo`` and ``rank_hi`` of the most
recent ranking that covers every run of its board and reads the current scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..base.memory_limit import of_store
from ..errors import MetricError
from ..stats.rank_intervals import RankIntervals, rank_intervals
from .means import spec as interval_spec

if TYPE_CHECKING:
    from ..db.handle import StoreHandle
    from .means import IntervalSpec

RANK_METHODS = ("bootstrap", "t")


class Ranked(Protocol):
    """What the rank intervals read of an evaluation (an :class:`evalstore.results.eval_result.EvalResult`,
    which imports this module; this module does not import it)."""

    qrels: str
    metrics: list[str]
    stored_names: dict[str, str]
    per_topic: list[tuple[str, str, str, float]]
    means: list[tuple[str, str, float, int]]
    aggregates: dict[str, str]
    rank_intervals: list[tuple[str, str, int, int, int]]
    rank_spec: IntervalSpec | None
    rank_widened: list[tuple[str, str]]

    def score_matrix(self, metric: str, runs: Sequence[str]) -> tuple[list[str], np.ndarray]: ...

    def add_rank_intervals(
        self, method: str, level: float, trials: int, seed: int, *, memory: int | None = None
    ) -> Ranked: ...


def spec(method: str, level: float = 0.95, trials: int = 1000, seed: int = 0) -> IntervalSpec:
    """A checked specification (the same checks as the intervals of the means)."""

    if method not in RANK_METHODS:
        raise MetricError(f"unknown rank interval {method!r}; use one of {', '.join(RANK_METHODS)}")
    return interval_spec(method, level, trials, seed)


def describe(how: IntervalSpec) -> str:
    """What a rank interval of ``how`` is, in one line."""
    pct = f"{how.level * 100:g} %"
    if how.method == "bootstrap":
        return (
            f"{pct} interval of the run's rank over {how.trials} paired bootstrap resamples of the topics "
            f"(all runs resampled together, seed {how.seed}; rank 1 = best, ties share the best rank)"
        )
    return (
        f"{pct} interval of the run's rank from paired t intervals of its differences with every other run "
        f"(Bonferroni over its comparisons; Klein, Wright & Wieczorek 2020)"
    )


def matrix(result: Ranked, metric: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(runs, X, means)``: the runs in the result's order, their per-topic scores of ``metric``
    (runs x topics, NaN where a run has none) and their means (the result's, exactly)."""
    runs = list(dict.fromkeys(r for r, m, _, _ in result.means if m == metric))
    means = {r: v for r, m, v, _ in result.means if m == metric}
    _, X = result.score_matrix(metric, runs)  # topics in byte order (= code point order)
    score = np.array([np.nan if means[r] is None else float(means[r]) for r in runs], dtype=np.float64)
    return runs, X, score


def compute(
    result: Ranked, how: IntervalSpec, memory: int | None = None
) -> tuple[list[tuple[str, str, int, int, int]], list[tuple[str, str]]]:
    """``(rows, widened)``: ``(run, metric, rank, lo, hi)`` for every run and metric of ``result``
    (metrics in request order, runs in the result's order), and the ``(run, metric)`` whose
    bootstrap percentile interval was widened to hold the observed rank. ``memory``: the memory
    limit in bytes the bootstrap's blocks are sized from (None: the default limit)."""
    rows: list[tuple[str, str, int, int, int]] = []
    widened: list[tuple[str, str]] = []
    for metric in result.metrics:
        runs, X, score = matrix(result, metric)
        if not runs:
            continue
        ri = ranks_of(X, result.aggregates.get(metric, "mean"), how, score, memory)
        for i, run in enumerate(runs):
            rows.append((run, metric, int(ri.rank[i]), int(ri.lo[i]), int(ri.hi[i])))
            if ri.widened[i]:
                widened.append((run, metric))
    return rows, widened


def ranks_of(
    X: np.ndarray, summary: str, how: IntervalSpec, score: np.ndarray | None = None, memory: int | None = None
) -> RankIntervals:
    """The rank intervals of one runs x topics matrix (``memory``: as :func:`compute`'s)."""
    return rank_intervals(
        [X], [summary], how.method, level=how.level, trials=how.trials or 1000, seed=how.seed or 0, score=score,
        memory=memory,
    )  # fmt: skip


def save(store: StoreHandle, result: Ranked, qrels_id: int, run_ids: dict[str, int]) -> int:
    """Store ``result``'s rankings with the evaluations they read (see the module docstring).
    Returns the number of rows stored."""
    how = result.rank_spec
    if how is None or not result.rank_intervals:
        return 0
    widened = set(result.rank_widened)
    n_runs: dict[str, int] = {}
    for _, m, _, _, _ in result.rank_intervals:
        n_runs[m] = n_runs.get(m, 0) + 1
    rows, seen = [], set()
    for run, metric, rank, lo, hi in result.rank_intervals:
        stored = result.stored_names.get(metric, metric)
        if (run, stored) in seen or run not in run_ids:
            continue
        seen.add((run, stored))
        rows.append((run_ids[run], stored, n_runs[metric], rank, lo, hi, (run, metric) in widened))
    key = [how.method, how.level, how.trials or 0, how.seed or 0]
    con = store.con
    with store.transaction():
        con.execute(
            """DELETE FROM rank_interval_data d WHERE NOT EXISTS (
                   SELECT 1 FROM evaluations e WHERE e.run_id = d.run_id AND e.qrels_id = d.qrels_id
                   AND e.metric = d.metric AND e.computed_at = d.evaluated_at)"""
        )
        con.execute(
            """DELETE FROM rank_interval_data WHERE qrels_id = $1 AND method = $2 AND level = $3 AND trials = $4
               AND seed = $5 AND list_contains($6, metric)""",
            [qrels_id, *key, sorted({r[1] for r in rows})],
        )
        con.execute(
            """INSERT INTO rank_interval_data (run_id, qrels_id, metric, method, level, trials, seed, n_runs, rank,
                                               lo, hi, widened, evaluated_at)
               SELECT x.run_id, $1, x.metric, $2, $3, $4, $5, x.n_runs, x.rank, x.lo, x.hi, x.widened, e.computed_at
               FROM (SELECT unnest($6::INTEGER[]) AS run_id, unnest($7::VARCHAR[]) AS metric,
                            unnest($8::INTEGER[]) AS n_runs, unnest($9::INTEGER[]) AS rank,
                            unnest($10::INTEGER[]) AS lo, unnest($11::INTEGER[]) AS hi,
                            unnest($12::BOOLEAN[]) AS widened) x
               JOIN evaluations e ON e.run_id = x.run_id AND e.qrels_id = $1 AND e.metric = x.metric""",
            [qrels_id, *key, *[list(c) for c in zip(*rows)]],
        )
    return len(rows)


def attach(
    store: StoreHandle | None,
    results: Sequence[Ranked] | Ranked,
    how: IntervalSpec,
    *,
    save_to_store: bool = True,
    memory: int | None = None,
) -> None:
    """Add rank intervals to each result and, with a store, store them (``memory``: the memory
    limit in bytes of the bootstrap's blocks; default: the store's)."""
    if memory is None and store is not None:
        memory = of_store(store)
    for result in [results] if not isinstance(results, Sequence) else results:
        result.add_rank_intervals(how.method, how.level, how.trials or 1000, how.seed or 0, memory=memory)
        if store is not None and save_to_store:
            runs = {r for r, _, _, _ in result.means}
            save(store, result, store.qrels_id(result.qrels), {r: store.run_id(r) for r in runs})


def legend(how: IntervalSpec | None, first_metric: str | None, widened: int = 0) -> list[str]:
    """The legend line of the rank columns (and how many intervals were widened)."""
    if how is None:
        return []
    line = f"rank, rank_lo, rank_hi: by {first_metric}; {describe(how)}" if first_metric else describe(how)
    if widened:
        line += (
            f"; {widened} percentile interval(s) missed the observed rank and were widened to it "
            "(many near-equal runs just below)"
        )
    return [line]
