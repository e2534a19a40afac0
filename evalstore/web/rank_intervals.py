"""Rank intervals on the explorer's leaderboard: each run's rank with its interval.

``?rank_ci=bootstrap`` (``&trials=&seed=``) or ``?rank_ci=t`` computes them on the page's board
from the stored per-topic scores (nothing is stored: the explorer is read-only); without it the
page shows the intervals the store holds for this board (the ``leaderboard`` view's ``rank_lo``,
``rank_hi``, stored by ``eval --rank-ci``). The statistics are :mod:`evalstore.intervals.ranks`'
(the same as ``eval --rank-ci``), on the board's runs and means.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.memory_limit import of_store
from ..errors import MetricError
from ..intervals.means import DEFAULT_LEVEL
from ..intervals.ranks import RANK_METHODS, describe, ranks_of, spec
from ..output.figures.model import Intervals
from . import figure_charts
from .render import percent

if TYPE_CHECKING:
    from ..store import Store
    from .queries import BoardRow

#: the most resamples a page may ask for (a request stays short)
MAX_TRIALS = 20000
#: the most resampled topics (trials x topics) a page may ask for: a request's time grows with
#: them (its memory does not: the resamples are drawn in blocks sized from the memory limit)
MAX_DRAWS = 10_000_000


class RankRequestError(ValueError):
    """A bad ``rank_ci``, ``trials`` or ``seed`` (the page answers 400)."""


def _int(value: str | int | None, name: str, default: int, lo: int, hi: int) -> int:
    if value is None or value == "":
        return default
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise RankRequestError(f"{name} must be a whole number, not {value!r}") from None
    if not lo <= v <= hi:
        raise RankRequestError(f"{name} must be between {lo} and {hi}, not {v}")
    return v


def _stored(store: Store, qrels: str, metric: str) -> tuple[dict[str, tuple[int, int, int]], str | None]:
    rows = store.con.execute(
        "SELECT run, rank, rank_lo, rank_hi, rank_method FROM leaderboard "
        "WHERE qrels = ? AND metric = ? AND rank_lo IS NOT NULL",
        [qrels, metric],
    ).fetchall()
    return {r[0]: (int(r[1]), int(r[2]), int(r[3])) for r in rows}, (rows[0][4] if rows else None)


def _stored_how(store: Store, qrels: str, metric: str, method: str) -> tuple[str, float | None]:
    """The stored rank intervals' method in words, and their level."""
    row = store.con.execute(
        "SELECT level, trials, seed FROM rank_intervals WHERE qrels = ? AND metric = ? AND method = ? "
        "ORDER BY computed_at DESC LIMIT 1",
        [qrels, metric, method],
    ).fetchall()
    if not row:
        return method, None
    level, trials, seed = row[0]
    return describe(spec(method, level, trials or 1000, seed or 0)), float(level)


def _computed(store: Store, board: Sequence[BoardRow], qrels: str, metric: str, how) -> dict[str, tuple[int, int, int]]:
    runs = [b.run for b in board]
    data = store.con.execute(
        "SELECT run, topic, value FROM scores WHERE qrels = ? AND metric = ? AND value IS NOT NULL",
        [qrels, metric],
    ).fetchnumpy()
    names, rinv = np.unique(np.asarray(data["run"], dtype=object).astype(str), return_inverse=True)
    topics, tpos = np.unique(np.asarray(data["topic"], dtype=object).astype(str), return_inverse=True)
    pos = {r: i for i, r in enumerate(runs)}
    row_of = np.array([pos.get(str(n), -1) for n in names], dtype=np.int64)[rinv]  # one lookup per run
    keep = row_of >= 0
    X = np.full((len(runs), len(topics)), np.nan)
    X[row_of[keep], tpos[keep]] = np.asarray(data["value"], dtype=np.float64)[keep]
    score = np.array([np.nan if b.mean is None else b.mean for b in board], dtype=np.float64)
    if how.method == "bootstrap" and (how.trials or 0) * len(topics) > MAX_DRAWS:
        fits = max(1, MAX_DRAWS // max(1, len(topics)))
        raise RankRequestError(
            f"trials x topics is at most {MAX_DRAWS:,} on this page: at most {fits:,} trials over these "
            f"{len(topics):,} topics (eval --rank-ci takes more)"
        )
    ri = ranks_of(X, board[0].aggregate if board else "mean", how, score, of_store(store))
    return {r: (int(ri.rank[i]), int(ri.lo[i]), int(ri.hi[i])) for i, r in enumerate(runs)}


def rank_model(
    store: Store,
    board: Sequence[BoardRow],
    qrels: str,
    metric: str,
    method: str | None,
    trials: str | int | None = None,
    seed: str | int | None = None,
    run_link: Callable[[str], str | None] | None = None,
) -> dict[str, Any]:
    """What the leaderboard page adds: ``ranks`` ({run: (rank, lo, hi)}, empty for none), the
    method's text and the chart of the intervals (each run linked by ``run_link``)."""
    if method not in (None, "", *RANK_METHODS):
        raise RankRequestError(f"rank_ci is {' or '.join(RANK_METHODS)}, not {method!r}")
    n_trials = _int(trials, "trials", 1000, 1, MAX_TRIALS)
    n_seed = _int(seed, "seed", 0, 0, 2**31 - 1)
    if method:
        try:
            how = spec(method, DEFAULT_LEVEL, n_trials, n_seed)
        except MetricError as e:
            raise RankRequestError(str(e)) from None
        ranks = _computed(store, board, qrels, metric, how) if board else {}
        text = describe(how) + "; computed for this page (eval --rank-ci stores them)"
        level: float | None = how.level
    else:
        ranks, stored_method = _stored(store, qrels, metric)
        text, level = _stored_how(store, qrels, metric, stored_method) if stored_method else ("", None)
        text = text + " (stored)" if stored_method else ""
    model: dict[str, Any] = {"ranks": ranks, "rank_method": text, "rank_ci": method or "", "rank_chart": None}
    if ranks:
        shown = [b.run for b in board if b.run in ranks][:60]
        what = f"rank by {metric} with its {percent(level) + ' ' if level else ''}interval (1 = best)"
        model["rank_chart"] = figure_charts.interval_chart(
            Intervals(
                what,
                what,
                shown,
                [float(ranks[r][0]) for r in shown],
                [float(ranks[r][1]) for r in shown],
                [float(ranks[r][2]) for r in shown],
            ),
            links=[run_link(r) for r in shown] if run_link else None,
        )
    return model
