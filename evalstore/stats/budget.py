"""How much memory the Python side of resampling may use: a share of the store's memory limit.

DuckDB's ``memory_limit`` (``--memory-limit``, ``evalstore.open(memory_limit=...)``) bounds what
DuckDB allocates; the resampling tests, bootstrap intervals and the swap method allocate numpy
arrays outside it. So they size their work from the same limit: :data:`SHARE` of it (DuckDB may
hold the rest) is their budget, and they work in blocks of trials that fit it (the random draws
are made block by block from one generator, the same numbers as one call would give, so a seed
gives the same result however the work is cut). What must be kept for every trial at once (the
B resampled means of a percentile interval, the B statistics of Sakai's estimated difference) is
kept for as many rows as fit; a B whose kept part alone does not fit is refused before the work
with :class:`~evalstore.errors.MemoryBudgetError`, which names the largest B that fits.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.memory_limit import default
from ..errors import MemoryBudgetError

#: the share of the memory limit the Python side of one resampling analysis may use
SHARE = 0.5
#: trials a block should hold at least when rows can be traded for trials (each group of rows
#: draws the samples again, so fewer, larger groups are cheaper)
MIN_BLOCK = 4096


def working(memory: int | None) -> int:
    """The bytes one resampling analysis may use: :data:`SHARE` of ``memory`` (the memory limit in
    bytes; None: :func:`evalstore.base.memory_limit.default`, the limit a store would get now)."""
    return max(1 << 20, int((memory if memory is not None else default()) * SHARE))


#: bytes kept per trial (and needed per trial to finish a row) by the bootstrap test (|t*| and
#: wbar* for the estimated difference) and the bootstrap percentile interval (the resampled means)
BOOTSTRAP_KEPT, BOOTSTRAP_FINAL = 16, 10
INTERVAL_KEPT, INTERVAL_FINAL = 8, 10


def check_bootstrap(B: int, memory: int | None, *, test: bool = False, interval: bool = False) -> None:
    """Before any work: refuse a B that the bootstrap test (``test``) or the bootstrap interval
    (``interval``) could not keep for one row (the kept part depends on B alone)."""
    if test:
        require(BOOTSTRAP_KEPT + BOOTSTRAP_FINAL, B, working(memory), "the bootstrap test", memory)
    if interval:
        require(INTERVAL_KEPT + INTERVAL_FINAL, B, working(memory), "the bootstrap interval", memory)


def rows_per_block(per_row: float, budget: int, total: int) -> int:
    """How many rows (trials) of ``per_row`` bytes fit in ``budget`` bytes: at least 1, at most
    ``total``."""
    return int(max(1, min(total, budget // max(1.0, per_row))))


def require(kept_per_trial: float, B: int, budget: int, what: str, memory: int | None) -> None:
    """Refuse a B whose kept part (``kept_per_trial`` bytes for each of the B trials, for one row
    at least) does not fit in ``budget``, naming the largest B that fits."""
    if kept_per_trial * B <= budget:
        return
    fits = int(budget // max(1.0, kept_per_trial))
    limit = memory if memory is not None else default()
    raise MemoryBudgetError(
        f"{what} with B = {B:,} keeps {kept_per_trial * B / 2**20:,.0f} MiB, more than its share of the "
        f"memory limit ({budget / 2**20:,.0f} MiB of {limit / 2**20:,.0f} MiB); B = {fits:,} fits (-B {fits}), "
        f"or raise --memory-limit"
    )


@dataclass(frozen=True)
class Blocks:
    """How a resampling over ``rows`` (pairs, runs) x B trials is cut: ``rows`` per group (each
    group goes through every trial), ``trials`` per block."""

    rows: int
    trials: int


def plan(
    B: int,
    n_rows: int,
    *,
    per_trial: float,
    per_row_trial: float,
    kept_per_row_trial: float = 0.0,
    final_per_trial: float = 0.0,
    memory: int | None = None,
    what: str = "the resampling",
) -> Blocks:
    """The blocks of a resampling within its budget (:func:`working` of ``memory``):
    ``per_trial`` bytes for each trial's draws, ``per_row_trial`` bytes of working arrays per row
    and trial of a block, ``kept_per_row_trial`` bytes per row and trial kept for all B trials,
    ``final_per_trial`` bytes per trial to finish one row from what was kept (after the blocks).
    As many rows as fit go through all B trials in one block (the whole analysis at once for the
    usual sizes); a B whose kept part does not fit for one row is refused (:func:`require`)."""
    budget = working(memory)
    n_rows = max(1, int(n_rows))
    if kept_per_row_trial > 0:
        require(kept_per_row_trial + final_per_trial, B, budget, what, memory)
        room = (budget - final_per_trial * B) * 3 // 4  # the rest: the blocks of trials
        rows = int(min(n_rows, max(1, room // (kept_per_row_trial * B))))
    else:  # nothing kept: as many rows as leave blocks of at least MIN_BLOCK trials
        rows = int(min(n_rows, max(1, (budget // 2) // max(1.0, per_row_trial * min(B, MIN_BLOCK)))))
    left = budget - kept_per_row_trial * B * rows
    trials = rows_per_block(per_trial + per_row_trial * rows, int(left), B)
    return Blocks(rows, trials)
