"""The intervals an evaluation asks for, as one value: checked when made, attached after the work.

Every evaluation that offers intervals (``Store.evaluate``, ``Store.evaluate_subsamples``,
``Store.leaderboard``, :func:`evalstore.evaluate`, and so ``evalstore eval`` in each of its modes)
takes an :class:`IntervalRequest`: ``ci`` (the intervals of the means: ``t`` or ``bootstrap``),
``rank_ci`` (the intervals of the ranks: ``bootstrap`` or ``t``), ``level``, ``trials`` and
``seed``, with their defaults here. Made, it is checked (methods, level, B, seed; MetricError);
:meth:`IntervalRequest.check_memory` holds a bootstrap's B against the memory limit before any
work. Once the results are there, :meth:`IntervalRequest.attach` adds the intervals of the means
(:mod:`evalstore.intervals.means`) and then the rank intervals (:mod:`evalstore.intervals.ranks`)
to each result, and with a store stores them beside the scores they were computed from (unless
the evaluation was not saved either).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..stats.budget import check_bootstrap
from .means import DEFAULT_LEVEL, DEFAULT_TRIALS, IntervalSpec, Summaries
from .means import attach as attach_intervals
from .means import spec as interval_spec
from .ranks import Ranked
from .ranks import attach as attach_ranks
from .ranks import spec as rank_spec

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


class Result(Summaries, Ranked, Protocol):
    """What the intervals read of an evaluation and add to it (an
    :class:`evalstore.results.eval_result.EvalResult`, which sits above this module)."""


@dataclass(frozen=True)
class IntervalRequest:
    """The intervals of an evaluation: of the means (``ci``) and of the ranks (``rank_ci``), at
    ``level``, a bootstrap with ``trials`` resamples drawn with ``seed``; None: not asked for."""

    ci: str | None = None
    rank_ci: str | None = None
    level: float = DEFAULT_LEVEL
    trials: int = DEFAULT_TRIALS
    seed: int = 0

    def __post_init__(self) -> None:
        _ = (self.means, self.ranks)  # checked when made: MetricError

    @property
    def means(self) -> IntervalSpec | None:
        """How the intervals of the means are computed (None: not asked for)."""
        return interval_spec(self.ci, self.level, self.trials, self.seed) if self.ci is not None else None

    @property
    def ranks(self) -> IntervalSpec | None:
        """How the rank intervals are computed (None: not asked for)."""
        return rank_spec(self.rank_ci, self.level, self.trials, self.seed) if self.rank_ci is not None else None

    @property
    def asked(self) -> bool:
        return self.ci is not None or self.rank_ci is not None

    def check_memory(self, memory: int | None) -> IntervalRequest:
        """Before any work: MemoryBudgetError for a bootstrap interval of the means whose B cannot
        fit in ``memory`` bytes (None: the default limit). Returns the request."""
        if self.ci == "bootstrap":
            check_bootstrap(self.trials, memory, interval=True)
        return self

    def attach(
        self,
        store: StoreHandle | None,
        results: Sequence[Result] | Result,
        *,
        save_to_store: bool = True,
        memory: int | None = None,
    ) -> None:
        """Add the intervals asked for to each result (the means' first, then the ranks') and, with
        a store and ``save_to_store``, store them. ``memory``: the bootstrap's memory limit in bytes
        (default: the store's, or without a store the default limit)."""
        means, ranks = self.means, self.ranks
        if means is not None:
            attach_intervals(store, results, means, save_to_store=save_to_store, memory=memory)
        if ranks is not None:
            attach_ranks(store, results, ranks, save_to_store=save_to_store, memory=memory)


#: No interval asked for.
NO_INTERVALS = IntervalRequest()
