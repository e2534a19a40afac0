"""The Voorhees/Buckley swap method, Sakai's with-replacement version (Sakai IPSJ 2007 Sec. 4.2, Fig. 4).

For b = 1..B two topic sets ``Q*b`` and ``Q'*b`` of size n = |Q| are drawn independently with
replacement (the same pairs of sets for every system pair). For a system pair (X, Y):

    D  = M(X, Q*b)  - M(Y, Q*b)        M = mean over the sampled topics, duplicates counted
    D' = M(X, Q'*b) - M(Y, Q'*b)
    count[BIN(|D|)] += 1;  unless D * D' > 0: swap[BIN(|D|)] += 1     (D * D' = 0 is a swap)

BIN: 21 bins of width 0.01, ``[0, .01), [.01, .02), ..., [.19, .20), [.20, inf)``, computed as
``floor(round(|D| / 0.01, 9))`` capped at 20: without the rounding ``0.03 / 0.01`` is
2.9999999999999996 and 0.03 would fall into the third bin instead of the fourth.
``swap_rate(bin) = swap / count``.

The summary (Sakai IPSJ 2007 Table 3):

* ``abs_diff``: the smallest difference that guarantees a swap rate <= ``max_rate`` (5 %): the
  lower edge of the lowest bin such that it and every higher non-empty bin have a swap rate
  <= 5 % (``abs_diff_first`` is the other reading: the first bin whose rate is <= 5 %);
* ``max_diff``: the largest |D| observed over all pairs and both topic sets of every trial
  (Sakai IPSJ 2007: "among the 2,000 values (1,000 trials, each with two topic sets)");
* ``rel_diff = abs_diff / max_diff``;
* ``share``: the fraction of the |pairs| x B comparisons whose |D| falls in a bin at or above
  ``abs_diff`` (i.e. |D| >= abs_diff with the same binning).

Differences are computed as means of per-topic differences (``weighted_sums(counts, z) / n``,
summed in topic order: the same bits in blocks and in one piece), so a pair that is identical on
the sampled topics has D = 0 exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import MetaError
from . import budget, sampling
from .sampling import check_trials, counts, pair_indices, weighted_sums

N_BINS = 21
BIN_WIDTH = 0.01


def difference_bins(abs_d: np.ndarray, bin_width: float = BIN_WIDTH, n_bins: int = N_BINS) -> np.ndarray:
    """Bin index (0-based) of each absolute difference: ``floor(round(|D| / width, 9))``, the last
    bin open-ended. ``difference_bins(0.03) == 3`` (the fourth bin)."""
    x = np.floor(np.round(np.abs(np.asarray(abs_d, dtype=np.float64)) / bin_width, 9))
    return np.minimum(x, n_bins - 1).astype(np.int64)


@dataclass
class SwapResult:
    counts: np.ndarray  # comparisons per bin
    swaps: np.ndarray  # swaps per bin
    max_diff: float
    n_pairs: int
    B: int
    seed: int
    bin_width: float = BIN_WIDTH
    max_rate: float = 0.05
    rates: np.ndarray = field(init=False)

    def __post_init__(self):
        with np.errstate(divide="ignore", invalid="ignore"):
            self.rates = np.where(self.counts > 0, self.swaps / np.maximum(self.counts, 1), np.nan)

    @property
    def n_bins(self) -> int:
        return len(self.counts)

    def edges(self) -> list[tuple[float, float]]:
        """``(lo, hi)`` of each bin, hi = inf for the last."""
        w = self.bin_width
        return [
            (round(i * w, 10), round((i + 1) * w, 10) if i < self.n_bins - 1 else math.inf) for i in range(self.n_bins)
        ]

    @property
    def guaranteed_bin(self) -> int | None:
        """Lowest bin such that it and all higher non-empty bins have swap rate <= max_rate."""
        ok = np.isnan(self.rates) | (self.rates <= self.max_rate)
        best = None
        for i in range(self.n_bins - 1, -1, -1):  # 21 bins: a loop over bins, not over data
            if not ok[i]:
                break
            if self.counts[i] > 0:
                best = i
        return best

    @property
    def first_bin(self) -> int | None:
        """Lowest non-empty bin whose swap rate is <= max_rate."""
        hits = np.nonzero((self.counts > 0) & (self.rates <= self.max_rate))[0]
        return int(hits[0]) if hits.size else None

    def _edge(self, i: int | None) -> float:
        return float("nan") if i is None else round(i * self.bin_width, 10)

    @property
    def abs_diff(self) -> float:
        return self._edge(self.guaranteed_bin)

    @property
    def abs_diff_first(self) -> float:
        return self._edge(self.first_bin)

    @property
    def rel_diff(self) -> float:
        return self.abs_diff / self.max_diff if self.max_diff > 0 else float("nan")

    @property
    def share(self) -> float:
        """Share of all comparisons with |D| >= abs_diff (same binning)."""
        i = self.guaranteed_bin
        total = self.counts.sum()
        if i is None or total == 0:
            return float("nan")
        return float(self.counts[i:].sum() / total)


def _draws(n: int, B: int, seed: int, indices: np.ndarray | None, rows: int):
    return sampling.given_blocks(indices, rows) if indices is not None else sampling.blocks("swap", n, B, seed, rows)


def _counts2(indices: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The sample-count matrices of the two topic sets of a block of trials."""
    return counts(indices[:, 0, :], n), counts(indices[:, 1, :], n)


def swap_method(
    S: np.ndarray,
    B: int = 1000,
    seed: int = 0,
    *,
    bin_width: float = BIN_WIDTH,
    n_bins: int = N_BINS,
    max_rate: float = 0.05,
    indices: np.ndarray | None = None,
    progress=None,
    memory: int | None = None,
) -> SwapResult:
    """Swap method over all pairs of the rows of ``S`` (runs x topics, per-topic scores).

    ``indices``: the ``(B, 2, n)`` topic samples (default: drawn from ``seed`` block by block, see
    :func:`evalstore.stats.sampling.blocks`). ``memory``: the memory limit in bytes the blocks are
    sized from (:mod:`evalstore.stats.budget`; the counts add up over blocks, nothing is kept per
    trial)."""
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] < 2:
        raise MetaError("the swap method needs a (runs x topics) matrix with at least 2 runs")
    if not np.all(np.isfinite(S)):
        raise MetaError("per-topic scores contain NaN or infinite values; choose a missing-topic policy")
    if bin_width <= 0 or n_bins < 2:
        raise MetaError("bin_width must be positive and there must be at least 2 bins")
    B = check_trials(B)
    R, n = S.shape
    if indices is not None and indices.shape != (B, 2, n):
        raise MetaError(f"swap indices must have shape ({B}, 2, {n}), not {indices.shape}")
    ii, jj = pair_indices(R)
    P = ii.size
    cnt = np.zeros(n_bins, dtype=np.int64)
    swp = np.zeros(n_bins, dtype=np.int64)
    max_diff = 0.0
    # per trial: the two samples' indices and counts (48 n bytes); per pair and trial: D, D', bins
    cut = budget.plan(B, P, per_trial=64 * n, per_row_trial=64, memory=memory, what="the swap method")
    once = None if cut.trials < B else _counts2(next(_draws(n, B, seed, indices, B))[1], n)
    for s in range(0, P, cut.rows):
        Z = S[ii[s : s + cut.rows]] - S[jj[s : s + cut.rows]]
        parts = [once] if once is not None else (_counts2(idx, n) for _, idx in _draws(n, B, seed, indices, cut.trials))
        for C1, C2 in parts:
            D = weighted_sums(C1, Z) / n
            D2 = weighted_sums(C2, Z) / n
            bins = difference_bins(D, bin_width, n_bins).ravel()
            cnt += np.bincount(bins, minlength=n_bins)
            swp += np.bincount(bins[~(D * D2 > 0).ravel()], minlength=n_bins)
            max_diff = max(max_diff, float(np.abs(D).max()), float(np.abs(D2).max()))
        if progress is not None:
            progress.advance(Z.shape[0])
    return SwapResult(
        counts=cnt, swaps=swp, max_diff=max_diff, n_pairs=P, B=B, seed=int(seed), bin_width=bin_width, max_rate=max_rate
    )
