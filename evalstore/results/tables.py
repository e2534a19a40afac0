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

from ..errors import MetricError
from ..metrics.registry import parse_metric
from ..output.table import Table
from .eval_result import EvalResult

PER_TOPIC_COLUMNS = ["run", "qrels", "topic", "metric", "value"]


def _best_first(v: float | None) -> float:
    """A mean for sorting best first: missing or NaN values sort last."""
    return -math.inf if v is None or math.isnan(v) else float(v)


def _count(v: float | None) -> float | int | None:
    return int(v) if v is not None and math.isfinite(v) and float(v).is_integer() else v


def residual_pairs(metrics: list[str]) -> dict[str, str]:
    """``{RBP_resid column: RBP column}``: each residual asked for beside an RBP of the same p and
    cutoff (the first such RBP), whose interval [RBP, RBP + RBP_resid] the leaderboard shows."""
    parsed = {}
    for m in metrics:
        try:
            found = parse_metric(m)
        except MetricError:  # a name stored by another version: no pairing
            continue
        if len(found) == 1:
            parsed[m] = found[0]
    out = {}
    for m, inst in parsed.items():
        if inst.spec.name != "RBP_resid":
            continue
        for other, rbp in parsed.items():
            if rbp.spec.name == "RBP" and rbp.cutoff == inst.cutoff and rbp.p.get("p") == inst.p.get("p"):
                out[m] = other
                break
    return out


def leaderboard(result: EvalResult, title: str | None = None) -> Table:
    """One row per run, a column per metric, sorted by the first metric; with intervals
    (``EvalResult.add_intervals``) ``<metric> lo`` and ``<metric> hi`` after each metric that has
    them (not after sums); with rank intervals (``EvalResult.add_rank_intervals``) first ``rank``,
    ``rank_lo``, ``rank_hi``: the run's rank by the first metric and its interval. An ``RBP_resid``
    asked for beside an RBP of the same p and cutoff is followed by ``<RBP> + resid``, the upper end
    of the interval [RBP, RBP + residual] (Moffat & Zobel 2008)."""
    metrics = result.metrics
    table = result.table()
    n_topics = {r: n for r, m, _, n in result.means if m == metrics[0]}
    runs = sorted(table, key=lambda run: (-_best_first(table[run].get(metrics[0])), run))
    counts = {
        m for m in metrics if result.aggregates.get(m) == "sum"
    }  # NumRet, ...: integers, as trec_eval prints them
    ci = {(r, m): (lo, hi) for r, m, lo, hi in result.intervals} if result.interval_spec is not None else None
    upper = residual_pairs(metrics)
    columns: list[str] = ["run", "qrels", "n_topics"]
    for m in metrics:
        columns += [m] if ci is None or m in counts else [m, f"{m} lo", f"{m} hi"]
        columns += [f"{upper[m]} + resid"] if m in upper else []
    rows = []
    for run in runs:
        row: list = [run, result.qrels, n_topics.get(run, 0)]
        for m in metrics:
            row.append(_count(table[run].get(m)) if m in counts else table[run].get(m))
            if ci is not None and m not in counts:
                row += list(ci.get((run, m), (None, None)))
            if m in upper:
                row.append(_sum(table[run].get(upper[m]), table[run].get(m)))
        rows.append(tuple(row))
    if result.rank_spec is not None:
        ranks = {r: (k, lo, hi) for r, m, k, lo, hi in result.rank_intervals if m == metrics[0]}
        columns = ["rank", "rank_lo", "rank_hi", *columns]
        rows = [(*ranks.get(row[0], (None, None, None)), *row) for row in rows]
    return Table(columns, rows, title=title, notes=list(result.notes))


def _sum(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def per_topic(result: EvalResult, title: str | None = None, means: bool = True) -> Table:
    """Per-topic rows, each run's followed by its summaries as topic ``all`` (as trec_eval -q);
    with a ``query`` column last when the store has the topics' texts (``result.queries``)."""
    table = _per_topic(result, title, means)
    if result.queries:
        q = result.queries
        table = Table([*table.columns, "query"], [(*row, q.get(row[2])) for row in table.rows], title=title)
    return table


def _per_topic(result: EvalResult, title: str | None, means: bool) -> Table:
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
    results: Mapping[str, EvalResult],
    derivation: Mapping[str, tuple[float | None, int | None]],
    title: str | None = None,
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
    tables = [per_topic(result, means=means) for result in results.values()]
    queries = any("query" in t.columns for t in tables)
    rows = [(*row, None) if queries and "query" not in t.columns else row for t in tables for row in t.rows]
    return Table([*PER_TOPIC_COLUMNS, *(["query"] if queries else [])], rows, title=title)
