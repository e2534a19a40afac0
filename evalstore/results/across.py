"""One leaderboard over several qrels sets (``eval -q A -q B --agg mean|borda``).

Each qrels set is evaluated as ``eval`` does (one :class:`~evalstore.results.eval_result.EvalResult` per set;
a run's mean on a set is over the topics it has, exactly the set's own leaderboard); a run is
then scored over the sets, each set counted once (a set named twice counts once):

* ``mean``: the mean of the run's per-set means (MTEB's "Mean (Task)"); a run without a score on
  some set has none and is ranked after the others;
* ``borda``: Borda points as MTEB's leaderboard counts them (:func:`evalstore.stats.ranks.borda`):
  on each set, ``N - r`` points, ``N`` the runs on the leaderboard, ``r`` the run's rank among
  the runs scored on that set (ties averaged); nothing for a set without a score.

Runs are ranked by the first metric's score (competition ranks: ties share the best rank). With
rank intervals (``bootstrap`` only: a t interval of a Borda count is not defined) every resample
draws the topics of each set with replacement (:mod:`evalstore.stats.rank_intervals`), re-scores
and re-ranks all runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import MetricError
from ..intervals.ranks import Ranked, describe, matrix
from ..output.table import Table
from ..stats.rank_intervals import RankIntervals, bootstrap
from ..stats.ranks import across, competition_ranks

if TYPE_CHECKING:
    from ..intervals.means import IntervalSpec

AGGREGATES = ("mean", "borda")


@dataclass
class AcrossBoard:
    """Runs scored over several qrels sets: ``means[m][s, i]`` is run ``runs[i]``'s mean of metric
    ``metrics[m]`` on ``qrels[s]`` (NaN: not evaluated there); ``scores[m][i]`` its score over the
    sets (``agg``); ``rank`` (by the first metric) and, with ``rank_spec``, ``rank_lo``/``rank_hi``."""

    qrels: list[str]
    metrics: list[str]
    agg: str
    runs: list[str]
    means: list[np.ndarray]
    scores: list[np.ndarray]
    rank: np.ndarray
    rank_lo: np.ndarray | None = None
    rank_hi: np.ndarray | None = None
    rank_spec: IntervalSpec | None = None
    widened: int = 0
    notes: list[str] = field(default_factory=list)

    def order(self) -> list[int]:
        """Runs best first (by rank, then name)."""
        return sorted(range(len(self.runs)), key=lambda i: (int(self.rank[i]), self.runs[i]))

    def table(self, title: str | None = None) -> Table:
        """``rank, [rank_lo, rank_hi,] run, n_sets, <metric> <agg>, <metric> [<set>]...`` per metric."""
        cols = ["rank"] + (["rank_lo", "rank_hi"] if self.rank_lo is not None else []) + ["run", "n_sets"]
        for m in self.metrics:
            cols += [f"{m} {self.agg}", *(f"{m} [{q}]" for q in self.qrels)]
        rows = []
        for i in self.order():
            row: list[Any] = [int(self.rank[i])]
            if self.rank_lo is not None and self.rank_hi is not None:
                row += [int(self.rank_lo[i]), int(self.rank_hi[i])]
            row += [self.runs[i], int(np.sum(~np.isnan(self.means[0][:, i])))]
            for k in range(len(self.metrics)):
                row += [_value(self.scores[k][i]), *(_value(v) for v in self.means[k][:, i])]
            rows.append(tuple(row))
        return Table(cols, rows, title=title, notes=list(self.notes))

    def legend(self) -> list[str]:
        what = {
            "mean": "the mean of the run's per-set means, each set counted once (none when a set is missing)",
            "borda": "Borda points (MTEB): on each set N - rank among the runs scored there (ties averaged), "
            f"N = {len(self.runs)} runs; a missing set earns none",
        }[self.agg]
        lines = [f"<metric> {self.agg}: {what}; rank: by {self.metrics[0]} {self.agg} (ties share the best rank)"]
        if self.rank_spec is not None:
            lines.append(
                f"rank_lo, rank_hi: {describe(self.rank_spec)}, the topics of each of the {len(self.qrels)} sets "
                "resampled"
                + (f"; {self.widened} interval(s) widened to hold the observed rank" if self.widened else "")
            )
        return lines


def _value(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def across_board(
    results: Sequence[Ranked], agg: str = "mean", how: IntervalSpec | None = None, memory: int | None = None
) -> AcrossBoard:
    """The leaderboard of the runs of ``results`` (one evaluation per qrels set, the same metrics)
    over the sets; see the module docstring. ``memory``: the memory limit in bytes the bootstrap's
    blocks of resamples are sized from (None: the default limit)."""
    if agg not in AGGREGATES:
        raise MetricError(f"aggregate over qrels sets by {' or '.join(AGGREGATES)}, not {agg!r}")
    if how is not None and how.method != "bootstrap":
        raise MetricError(
            "rank intervals over several qrels sets are bootstrap intervals (a t interval of a Borda count or of a "
            "mean of means over different topic sets is not defined): use --rank-ci bootstrap"
        )
    seen: dict[str, Ranked] = {}
    for r in results:
        seen.setdefault(r.qrels, r)  # each set counted once
    sets = list(seen.values())
    if not sets:
        raise MetricError("give at least one qrels set")
    metrics = list(sets[0].metrics)
    runs = list(dict.fromkeys(r for res in sets for r, _, _, _ in res.means))
    where = {r: i for i, r in enumerate(runs)}
    means, scores, mats = [], [], []
    for metric in metrics:
        M = np.full((len(sets), len(runs)), np.nan)
        per_set = []
        for s, res in enumerate(sets):
            names, X, score = matrix(res, metric)
            pos = [where[r] for r in names]
            M[s, pos] = score
            full = np.full((len(runs), X.shape[1]), np.nan)
            full[pos] = X
            per_set.append((full, res.aggregates.get(metric, "mean")))
        means.append(M)
        scores.append(across(M, agg))
        mats.append(per_set)
    board = AcrossBoard([r.qrels for r in sets], metrics, agg, runs, means, scores, competition_ranks(scores[0]))
    if how is not None:
        ri = _intervals(mats[0], agg, how, scores[0], memory)
        board.rank_lo, board.rank_hi, board.rank_spec, board.widened = ri.lo, ri.hi, how, int(ri.widened.sum())
    missing = [runs[i] for i in range(len(runs)) if np.isnan(means[0][:, i]).any()]
    if missing:
        board.notes.append(
            f"{len(missing)} run(s) have no {metrics[0]} score on some set ({', '.join(missing[:5])}"
            f"{' ...' if len(missing) > 5 else ''})"
            + ("; their mean over the sets is undefined and they rank last" if agg == "mean" else "")
        )
    return board


def _intervals(
    per_set: list[tuple[np.ndarray, str]], agg: str, how: IntervalSpec, score: np.ndarray, memory: int | None
) -> RankIntervals:
    return bootstrap(
        [X for X, _ in per_set],
        [s for _, s in per_set],
        trials=how.trials or 1000,
        seed=how.seed or 0,
        level=how.level,
        how=agg,
        score=score,
        memory=memory,
    )
