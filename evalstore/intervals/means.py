"""Confidence intervals of every mean: how uncertain a run's score is, with the topics as a sample.

For a run's n per-topic scores x_1..x_n of a metric (missing values left out, as in the mean):

* ``t``: ``mean -+ t_{(1+level)/2, n-1} s / sqrt(n)``, s the standard deviation with n - 1
  (scipy's ``t.interval(level, n - 1, mean, s / sqrt(n))``);
* ``bootstrap``: the percentile interval of the mean over ``trials`` (B) resamples of the n topics
  drawn with replacement from ``numpy.random.default_rng(seed)`` (the draws of
  :func:`evalstore.stats.sampling.bootstrap_indices`: the same resamples for every run and metric
  with the same number of topics), the ``(1-level)/2`` and ``(1+level)/2`` quantiles of the B
  means (numpy's linear interpolation).

Both come from :mod:`evalstore.stats.effects` (the intervals of paired differences that
``compare --effects`` reports). A metric summarised by the geometric mean (GM_AP, GM_Bpref) gets
the interval on the log scale: the interval of the mean of ``ln max(x, 1e-5)`` (trec_eval's floor),
exponentiated, so it contains the geometric mean and stays positive (scale ``log``). A metric
summarised by the sum (NumRet, NumRel, ...) is a count, not an estimate of a mean: no interval.
Neither is there one with fewer than 2 topics; n equal scores give the interval (mean, mean).

:func:`compute` returns the intervals of an :class:`~evalstore.results.eval_result.EvalResult`'s means
(``EvalResult.add_intervals`` attaches them); :func:`save` stores them with the evaluations they
were computed from (table ``interval_data``, view ``intervals``; the ``leaderboard`` view shows the
most recent one as ``ci_lo``, ``ci_hi``, ``ci_method``, ``ci_level``). An evaluation computed again
leaves its old intervals out of the views, and saving removes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np

from ..base.aggregate import GMEAN_FLOOR
from ..base.memory_limit import of_store
from ..errors import MetricError
from ..stats.effects import bootstrap_interval, t_interval
from ..stats.sampling import check_seed, check_trials

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

METHODS = ("t", "bootstrap")
DEFAULT_LEVEL = 0.95
DEFAULT_TRIALS = 1000
K = TypeVar("K")


class Summaries(Protocol):
    """What the intervals read of an evaluation (an :class:`evalstore.results.eval_result.EvalResult`, which
    imports this module; this module does not import it)."""

    qrels: str
    stored_names: dict[str, str]
    per_topic: list[tuple[str, str, str, float]]
    means: list[tuple[str, str, float, int]]
    aggregates: dict[str, str]
    intervals: list[tuple[str, str, float | None, float | None]]
    interval_spec: IntervalSpec | None

    def score_groups(self) -> dict[tuple[str, str], np.ndarray]: ...

    def add_intervals(
        self, method: str, level: float, trials: int, seed: int, *, memory: int | None = None
    ) -> Summaries: ...


@dataclass(frozen=True)
class IntervalSpec:
    """How intervals are computed: ``method`` (t or bootstrap), ``level``, and for the bootstrap
    ``trials`` and ``seed`` (None for t)."""

    method: str = "t"
    level: float = DEFAULT_LEVEL
    trials: int | None = None
    seed: int | None = None

    def describe(self) -> str:
        pct = f"{self.level * 100:g} %"
        if self.method == "t":
            return f"{pct} t interval of the mean over the topics"
        return f"{pct} bootstrap percentile interval of the mean over the topics (B = {self.trials}, seed {self.seed})"


def spec(method: str = "t", level: float = DEFAULT_LEVEL, trials: int = DEFAULT_TRIALS, seed: int = 0) -> IntervalSpec:
    """A checked :class:`IntervalSpec` (MetricError for an unknown method or a level outside (0, 1))."""
    if method not in METHODS:
        raise MetricError(f"unknown interval {method!r}; use one of {', '.join(METHODS)}")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < float(level) < 1.0:
        raise MetricError(f"the confidence level is a number between 0 and 1 (e.g. 0.95), not {level!r}")
    if method == "t":
        return IntervalSpec("t", float(level))

    try:
        return IntervalSpec("bootstrap", float(level), check_trials(trials), check_seed(seed))
    except Exception as e:  # MetaError: said as a metric option
        raise MetricError(str(e)) from None


def scale_of(aggregate: str) -> str | None:
    """The scale an aggregate's interval is computed on: ``mean``, ``log`` (geometric mean), or
    None (sums: no interval)."""
    return {"mean": "mean", "gmean": "log"}.get(aggregate)


def compute(
    result: Summaries, how: IntervalSpec, memory: int | None = None
) -> list[tuple[str, str, float | None, float | None]]:
    """``(run, metric, lo, hi)`` for every mean of ``result`` (in its order); lo and hi are None
    where there is no interval (a sum, fewer than 2 topics). ``memory``: the memory limit in bytes
    the bootstrap sizes its work from (:mod:`evalstore.stats.budget`; None: the default limit)."""
    values = result.score_groups()  # each (run, metric)'s present values, in topic order
    keys = [(run, metric) for run, metric, _, _ in result.means]
    aggregates = {(run, metric): result.aggregates.get(metric, "mean") for run, metric in keys}
    found = of_scores({k: values.get(k, np.empty(0)) for k in keys}, aggregates, how, memory)
    return [(r, m, *found.get((r, m), (None, None))) for r, m in keys]


def of_scores(
    values: Mapping[K, Sequence[float] | np.ndarray],
    aggregates: dict[K, str],
    how: IntervalSpec,
    memory: int | None = None,
) -> dict[K, tuple[float, float]]:
    """The interval of each key's mean of per-topic ``values`` (missing values already left out),
    summarised by ``aggregates[key]`` (mean, gmean: on the log scale, sum: none); keys without an
    interval (a sum, fewer than 2 values) are left out. The one computation behind :func:`compute`,
    the explorer's leaderboard and the report. ``memory``: as :func:`compute`'s."""
    # one matrix per (scale, number of topics): the same resamples for all of its rows
    groups: dict[tuple[str, int], list[K]] = {}
    for key, vals in values.items():
        scale = scale_of(aggregates.get(key, "mean"))
        if scale is not None and len(vals) >= 2:
            groups.setdefault((scale, len(vals)), []).append(key)
    found: dict[K, tuple[float, float]] = {}
    for (scale, _), keys in groups.items():
        X = np.array([values[k] for k in keys], dtype=np.float64)
        if scale == "log":
            X = np.log(np.maximum(X, GMEAN_FLOOR))
        lo, hi = _interval(X, how, memory)
        if scale == "log":
            lo, hi = np.exp(lo), np.exp(hi)
        for k, a, b in zip(keys, lo, hi):
            found[k] = (float(a), float(b))
    return found


def _interval(X: np.ndarray, how: IntervalSpec, memory: int | None = None) -> tuple[np.ndarray, np.ndarray]:

    if how.method == "t":
        return t_interval(X, how.level)
    assert how.trials is not None and how.seed is not None
    return bootstrap_interval(X, how.trials, how.seed, how.level, memory=memory)


def save(store: StoreHandle, result: Summaries, qrels_id: int, run_ids: dict[str, int]) -> int:
    """Store ``result``'s intervals with the stored evaluations they were computed from (replacing
    those of the same method, level, trials and seed; dropping intervals of evaluations computed
    again since). Returns the number of intervals stored."""
    how = result.interval_spec
    if how is None:
        return 0
    rows, seen = [], set()
    counts = {(r, m): n for r, m, _, n in result.means}
    for run, metric, lo, hi in result.intervals:
        stored = result.stored_names.get(metric, metric)
        scale = scale_of(result.aggregates.get(metric, "mean"))
        if scale is None or (run, stored) in seen or run not in run_ids:
            continue
        seen.add((run, stored))
        rows.append((run_ids[run], stored, lo, hi, counts.get((run, metric), 0), scale))
    if not rows:
        return 0
    con = store.con
    key = [how.method, how.level, how.trials or 0, how.seed or 0]
    with store.transaction():
        con.execute(
            """DELETE FROM interval_data i WHERE NOT EXISTS (
                   SELECT 1 FROM evaluations e WHERE e.run_id = i.run_id AND e.qrels_id = i.qrels_id
                   AND e.metric = i.metric AND e.computed_at = i.evaluated_at)"""
        )
        con.execute(
            """CREATE OR REPLACE TEMP TABLE _intervals AS
               SELECT unnest($1::INTEGER[]) AS run_id, unnest($2::VARCHAR[]) AS metric, unnest($3::DOUBLE[]) AS lo,
                      unnest($4::DOUBLE[]) AS hi, unnest($5::INTEGER[]) AS n_topics, unnest($6::VARCHAR[]) AS scale""",
            [list(c) for c in zip(*rows)],
        )
        con.execute(
            """DELETE FROM interval_data WHERE qrels_id = $1 AND method = $2 AND level = $3 AND trials = $4
               AND seed = $5 AND (run_id, metric) IN (SELECT run_id, metric FROM _intervals)""",
            [qrels_id, *key],
        )
        con.execute(
            """INSERT INTO interval_data (run_id, qrels_id, metric, method, level, trials, seed, scale, lo, hi,
                                          n_topics, evaluated_at)
               SELECT x.run_id, $1, x.metric, $2, $3, $4, $5, x.scale, x.lo, x.hi, x.n_topics, e.computed_at
               FROM _intervals x JOIN evaluations e ON e.run_id = x.run_id AND e.qrels_id = $1
                                                  AND e.metric = x.metric""",
            [qrels_id, *key],
        )
        n = con.execute("SELECT count(*) FROM _intervals").fetchall()[0][0]
        con.execute("DROP TABLE _intervals")
    return int(n)


def attach(
    store: StoreHandle | None,
    results: Sequence[Summaries] | Summaries,
    how: IntervalSpec,
    *,
    save_to_store: bool = True,
    memory: int | None = None,
) -> None:
    """Add intervals to each result and, with a store, store them (each result's qrels set and runs
    by name). ``memory``: the memory limit in bytes of the bootstrap's work (default: the store's,
    or without a store the default limit)."""
    if memory is None and store is not None:
        memory = of_store(store)
    for result in [results] if not isinstance(results, Sequence) else results:
        result.add_intervals(how.method, how.level, how.trials or DEFAULT_TRIALS, how.seed or 0, memory=memory)
        if store is not None and save_to_store:
            runs = {r for r, _, _, _ in result.means}
            ids = {r: store.run_id(r) for r in runs}
            save(store, result, store.qrels_id(result.qrels), ids)
