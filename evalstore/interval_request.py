"""The intervals an evaluation asks for, in one place: checked before any work, attached after it.

Every evaluation that offers intervals (``Store.evaluate`` and ``Store.evaluate_subsamples`` on a
store, :func:`evalstore.evaluate` on files and runs in memory, and so ``evalstore eval`` in each of
its modes) takes the same options, ``ci``, ``rank_ci``, ``level``, ``trials``, ``seed``, and hands
them to :func:`request` before it evaluates: the methods, the level, B and the seed are checked and
a bootstrap's B is held against the memory limit. Once the results are there,
:meth:`IntervalRequest.attach` adds the intervals of the means (:mod:`evalstore.intervals`) and then
the rank intervals (:mod:`evalstore.ranking.intervals`) to each result, and with a store stores them
beside the scores they were computed from (unless the evaluation was not saved either).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .intervals import IntervalSpec
from .intervals import attach as attach_intervals
from .intervals import spec as interval_spec
from .ranking.intervals import attach as attach_ranks
from .ranking.intervals import spec as rank_spec
from .stats.budget import check_bootstrap

if TYPE_CHECKING:
    from .result import EvalResult
    from .store.handle import StoreHandle


@dataclass(frozen=True)
class IntervalRequest:
    """The checked intervals of an evaluation: of the means (``means``) and of the ranks (``ranks``);
    None where not asked for."""

    means: IntervalSpec | None = None
    ranks: IntervalSpec | None = None

    def attach(
        self,
        store: StoreHandle | None,
        results: Sequence[EvalResult] | EvalResult,
        *,
        save_to_store: bool = True,
        memory: int | None = None,
    ) -> None:
        """Add the intervals asked for to each result (the means' first, then the ranks') and, with
        a store and ``save_to_store``, store them. ``memory``: the bootstrap's memory limit in bytes
        (default: the store's, or without a store the default limit)."""
        if self.means is not None:
            attach_intervals(store, results, self.means, save_to_store=save_to_store, memory=memory)
        if self.ranks is not None:
            attach_ranks(store, results, self.ranks, save_to_store=save_to_store, memory=memory)


def request(
    ci: str | None = None,
    rank_ci: str | None = None,
    level: float = 0.95,
    trials: int = 1000,
    seed: int = 0,
    *,
    memory: int | None,
) -> IntervalRequest:
    """The intervals asked for, checked before any work (MetricError for an unknown method or a
    level outside (0, 1); MemoryBudgetError for a bootstrap interval whose B cannot fit in
    ``memory`` bytes, None: the default limit)."""
    means = interval_spec(ci, level, trials, seed) if ci is not None else None
    ranks = rank_spec(rank_ci, level, trials, seed) if rank_ci is not None else None
    if means is not None and means.method == "bootstrap":
        check_bootstrap(means.trials or 0, memory, interval=True)
    return IntervalRequest(means, ranks)
