"""Exports: leaderboards (tidy CSV), trec_eval -q style text, qrels files.

Leaderboard CSV columns (one row per run, sorted by the first metric, best first):

    run, qrels, n_topics, <metric 1>, <metric 2>, ...

``n_topics`` is the number of topics averaged for the first metric. With ``per_topic=True`` the
CSV is long instead: ``run, qrels, topic, metric, value`` (one row per score).
"""

from __future__ import annotations

import csv
import io
import math
import sys
from collections.abc import Sequence
from typing import IO

from .result import EvalResult


def leaderboard_rows(result: EvalResult) -> tuple[list[str], list[tuple]]:
    """Wide leaderboard from an evaluation result: columns and rows sorted by the first metric."""
    metrics = result.metrics
    table = result.table()
    n_topics = {r: n for r, m, _, n in result.means if m == metrics[0]}
    rows = [(run, result.qrels, n_topics.get(run, 0), *[table[run].get(m) for m in metrics]) for run in table]
    rows.sort(key=lambda r: (-_sortable(r[3]), r[0]))
    return ["run", "qrels", "n_topics", *metrics], rows


def _sortable(v) -> float:
    """A mean for sorting best first: missing or NaN values sort last."""
    return -math.inf if v is None or math.isnan(v) else float(v)


def per_topic_rows(result: EvalResult) -> tuple[list[str], list[tuple]]:
    return ["run", "qrels", "topic", "metric", "value"], [(r, result.qrels, t, m, v) for r, t, m, v in result.per_topic]


def write_csv(columns: Sequence[str], rows: Sequence[Sequence], out: IO[str]) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in r])


def export_leaderboard(result: EvalResult, path: str, *, per_topic: bool = False) -> None:
    """Write the leaderboard CSV to ``path`` ('-' for stdout)."""
    columns, rows = per_topic_rows(result) if per_topic else leaderboard_rows(result)
    if path == "-":
        write_csv(columns, rows, sys.stdout)
        return
    with open(path, "w", newline="", encoding="utf-8") as f:
        write_csv(columns, rows, f)


def trec_eval_text(result: EvalResult, *, per_topic: bool = True) -> str:
    """trec_eval ``-q`` layout: ``measure<TAB>topic<TAB>value`` with ``all`` for the summaries.

    Integer-valued sums (NumRet, ...) print as integers, other values with 4 decimals. Metrics
    summarised by a geometric mean (GM_AP = gm_map, ...) print only the summary, as trec_eval."""
    buf = io.StringIO()
    runs = list(dict.fromkeys(r for r, _, _, _ in result.means))
    multi = len(runs) > 1
    for run in runs:
        prefix = f"{run}\t" if multi else ""
        if per_topic:
            for r, t, m, v in result.per_topic:
                if r == run and result.aggregates.get(m) != "gmean":
                    buf.write(f"{prefix}{m:<22s}\t{t}\t{_fmt(v, result.aggregates.get(m))}\n")
        for r, m, v, _ in result.means:
            if r == run:
                buf.write(f"{prefix}{m:<22s}\tall\t{_fmt(v, result.aggregates.get(m))}\n")
    return buf.getvalue()


def _fmt(v, aggregate) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "nan"
    if aggregate == "sum" and float(v).is_integer():
        return str(int(v))
    return f"{v:.4f}"
