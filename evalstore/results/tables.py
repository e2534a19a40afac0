"""Tables of evaluation results: leaderboards and per-topic scores.

A leaderboard has one row per run, sorted by the first metric (best first; runs without a value
last), columns ``run, qrels, n_topics, <metric 1>, <metric 2>, ...``; ``n_topics`` is the number
of topics summarised for the first metric. Per-topic tables are long: ``run, qrels, topic,
metric, value``. Over several qrels sets (a qrels set and its subsamples) the leaderboard gains
``fraction`` and ``trial`` columns and has one block per qrels set, in the order given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..output.table import Table
from .eval_result import EvalResult

PER_TOPIC_COLUMNS = ["run", "qrels", "topic", "metric", "value"]


def _best_first(v: float | None) -> float:
    """A mean for sorting best first: missing or NaN values sort last."""
    return -math.inf if v is None or math.isnan(v) else float(v)


def _count(v: float | None) -> float | int | None:
    return int(v) if v is not None and math.isfinite(v) and float(v).is_integer() else v


def leaderboard(result: EvalResult, title: str | None = None) -> Table:
    """One row per run, a column per metric, sorted by the first metric; with intervals
    (``EvalResult.add_intervals``) ``<metric> lo`` and ``<metric> hi`` after each metric that has
    them (not after sums); with rank intervals (``EvalResult.add_rank_intervals``) first ``rank``,
    ``rank_lo``, ``rank_hi``: the run's rank by the first metric and its interval."""
    metrics = result.metrics
    table = result.table()
    n_topics = {r: n for r, m, _, n in result.means if m == metrics[0]}
    runs = sorted(table, key=lambda run: (-_best_first(table[run].get(metrics[0])), run))
    counts = {
        m for m in metrics if result.aggregates.get(m) == "sum"
    }  # NumRet, ...: integers, as trec_eval prints them
    ci = {(r, m): (lo, hi) for r, m, lo, hi in result.intervals} if result.interval_spec is not None else None
    columns: list[str] = ["run", "qrels", "n_topics"]
    for m in metrics:
        columns += [m] if ci is None or m in counts else [m, f"{m} lo", f"{m} hi"]
    rows = []
    for run in runs:
        row: list = [run, result.qrels, n_topics.get(run, 0)]
        for m in metrics:
            row.append(_count(table[run].get(m)) if m in counts else table[run].get(m))
            if ci is not None and m not in counts:
                row += list(ci.get((run, m), (None, None)))
        rows.append(tuple(row))
    if result.rank_spec is not None:
        ranks = {r: (k, lo, hi) for r, m, k, lo, hi in result.rank_intervals if m == metrics[0]}
        columns = ["rank", "rank_lo", "rank_hi", *columns]
        rows = [(*ranks.get(row[0], (None, None, None)), *row) for row in rows]
    return Table(columns, rows, title=title, notes=list(result.notes))


def per_topic(result: EvalResult, title: str | None = None, means: bool = True) -> Table:
    """Per-topic rows, each run's followed by its summaries as topic ``all`` (as trec_eval -q)."""
    t = result.to_arrow()  # columns to Python lists once, not tuples made twice
    q = result.qrels
    rows = [(r, q, tp, m, v) for r, tp, m, v in zip(*(c.to_pylist() for c in t.columns))]
    if means:
        summary: dict[str, list[tuple]] = {}
        for r, m, v, _ in result.means:
            summary.setdefault(r, []).append((r, result.qrels, "all", m, v))
        out: list[tuple] = []
        for i, row in enumerate(rows):
            out.append(row)
            if i + 1 == len(rows) or rows[i + 1][0] != row[0]:
                out.extend(summary.pop(row[0], []))
        out.extend(x for rest in summary.values() for x in rest)  # runs with no scored topic
        rows = out
    return Table(list(PER_TOPIC_COLUMNS), rows, title=title)


def leaderboards(
    results: Mapping[str, EvalResult], derivation: Mapping[str, tuple[float, int | None]], title: str | None = None
) -> Table:
    """One leaderboard over several qrels sets: ``run, qrels, fraction, trial, n_topics, <metrics>``.

    ``derivation``: the ``(fraction, trial)`` of each subsample; a qrels set that is not one (the
    parent) has fraction 1 and no trial."""
    columns: list[str] = ["run", "qrels", "fraction", "trial", "n_topics"]
    rows: list[tuple] = []
    for name, result in results.items():
        block = leaderboard(result)
        fraction, trial = derivation.get(name, (1.0, None))
        at = block.columns.index("qrels") + 1  # after run, qrels (and the rank columns)
        columns = [*block.columns[:at], "fraction", "trial", *block.columns[at:]]
        rows.extend((*r[:at], fraction, trial, *r[at:]) for r in block.rows)
    return Table(columns, rows, title=title)


def per_topics(results: Mapping[str, EvalResult], title: str | None = None, means: bool = True) -> Table:
    """Long per-topic rows over several qrels sets (with each run's ``all`` rows when ``means``)."""
    rows = [row for result in results.values() for row in per_topic(result, means=means).rows]
    return Table(list(PER_TOPIC_COLUMNS), rows, title=title)
