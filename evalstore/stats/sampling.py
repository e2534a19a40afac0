"""Random draws shared by the resampling analyses (swap method, bootstrap, randomisation test).

Every analysis draws ALL its random numbers up front from ``numpy.random.default_rng(seed)``
(PCG64, NumPy's stable stream), in one call, so a seed fixes the result on any machine and
independently of how the work is later chunked:

* bootstrap (paired test, Sakai IPSJ 2007 Fig. 5):  ``rng.integers(0, n, size=(B, n))``; row b = the topic
  indices of ``Q*b``;
* swap method (Sakai IPSJ 2007 Sec. 4.2):            ``rng.integers(0, n, size=(B, 2, n))``; ``[b, 0]`` = ``Q*b``,
  ``[b, 1]`` = ``Q'*b``;
* randomisation test:                    ``rng.integers(0, 2, size=(B, n))``; 1 keeps the sign of
  topic i's difference in sample b, 0 flips it.

The same samples serve every system pair of an analysis (and every qrels set / metric analysed
with the same seed and topic count): pairs are compared on common random numbers. The papers do
not say whether Sakai shared samples across pairs; sharing is what makes the whole analysis a
handful of matrix products.

The draws can be made in blocks of rows (:func:`blocks`): NumPy's generator keeps its state
between calls, so the blocks are the rows of the one call, whatever their sizes; an analysis then
holds one block at a time (:mod:`evalstore.stats.budget`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..errors import MetaError


def check_trials(B: int, what: str = "trials") -> int:
    if isinstance(B, bool) or not isinstance(B, (int, np.integer)) or int(B) < 1:
        raise MetaError(f"the number of {what} must be a positive integer, not {B!r}")
    return int(B)


def check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise MetaError(f"the seed must be a non-negative integer, not {seed!r}")
    return int(seed)


#: the shape of one trial's draws and the upper bound (exclusive) of its integers, per kind
_KINDS = {
    "bootstrap": (lambda n: (n,), lambda n: n),
    "swap": (lambda n: (2, n), lambda n: n),
    "signs": (lambda n: (n,), lambda n: 2),
}


def blocks(kind: str, n: int, B: int, seed: int, rows: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(start, block)`` for the B trials' draws of ``kind`` (``'bootstrap'``: (b, n) topic
    indices; ``'swap'``: (b, 2, n); ``'signs'``: (b, n) of +1/-1), ``rows`` trials at a time: the
    rows of :func:`bootstrap_indices`, :func:`swap_indices` or :func:`sign_flips` with the same seed."""
    shape, high = _KINDS[kind]
    rng = np.random.default_rng(check_seed(seed))
    B, rows = check_trials(B), max(1, int(rows))
    for start in range(0, B, rows):
        draws = rng.integers(0, high(n), size=(min(rows, B - start), *shape(n)))
        yield start, (draws * 2.0 - 1.0 if kind == "signs" else draws)


def given_blocks(draws: np.ndarray, rows: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(start, block)`` of draws the caller made (the same shape as :func:`blocks`)."""
    rows = max(1, int(rows))
    for start in range(0, draws.shape[0], rows):
        yield start, draws[start : start + rows]


def bootstrap_indices(n: int, B: int, seed: int) -> np.ndarray:
    """``(B, n)`` topic indices, sampled with replacement (Sakai IPSJ 2007 Fig. 5)."""
    rng = np.random.default_rng(check_seed(seed))
    return rng.integers(0, n, size=(check_trials(B), n))


def swap_indices(n: int, B: int, seed: int) -> np.ndarray:
    """``(B, 2, n)`` topic indices: the pair of topic sets ``Q*b``, ``Q'*b`` of each trial."""
    rng = np.random.default_rng(check_seed(seed))
    return rng.integers(0, n, size=(check_trials(B), 2, n))


def sign_flips(n: int, B: int, seed: int) -> np.ndarray:
    """``(B, n)`` signs (+1 keep, -1 flip) for the paired randomisation test."""
    rng = np.random.default_rng(check_seed(seed))
    return rng.integers(0, 2, size=(check_trials(B), n)) * 2.0 - 1.0


def counts(indices: np.ndarray, n: int) -> np.ndarray:
    """Multiplicity of each topic in each sample: ``(B, n)`` float64 from ``(B, n)`` indices.

    ``weighted_sums(counts, v) / n`` is the mean of ``v`` over the sampled topics (duplicates
    counted)."""
    B = indices.shape[0]
    flat = (indices + (np.arange(B) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=B * n).reshape(B, n).astype(np.float64)


#: sums worked on at once by :func:`weighted_sums` (256 KiB of them): the block stays in the cache
SUM_BLOCK = 1 << 15


def weighted_sums(C: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``C @ V.T``: ``(B, P)`` sums from ``(B, n)`` weights and ``(P, n)`` values, each sum taken
    over the topics in their order, so that a sample's sum has the same bits whether its block of
    samples is the whole B or a part (the memory limit) and whatever the BLAS.

    A BLAS product does not promise that: OpenBLAS 0.3.21 (in NumPy 1.24) splits the rows among its
    threads and kernels by the matrix's shape, and the swap method's largest difference came out one
    bit apart in blocks and in one piece. The topic-ordered sum costs about four times a BLAS
    product (0.12 against 0.03 CPU seconds for 1,000 samples of 50 topics and 4,950 pairs)."""
    B, n = C.shape
    VT = np.ascontiguousarray(np.asarray(V, dtype=np.float64).T)  # a topic's values, contiguous
    out = np.zeros((B, VT.shape[1]))
    if n == 0:
        return out
    step = max(1, SUM_BLOCK // max(1, VT.shape[1]))
    term = np.empty((min(step, B), VT.shape[1]))
    for s in range(0, B, step):
        Cs, acc = C[s : s + step], out[s : s + step]
        part = term[: Cs.shape[0]]
        np.multiply(Cs[:, :1], VT[0], out=acc)
        for t in range(1, n):
            np.multiply(Cs[:, t : t + 1], VT[t], out=part)
            acc += part
    return out


def resample(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The resampled vectors ``values[indices]`` (Sakai IPSJ 2007 Fig. 5: ``w*b`` from ``Q*b``)."""
    return np.asarray(values)[..., np.asarray(indices)]


def pair_indices(n_runs: int) -> tuple[np.ndarray, np.ndarray]:
    """All unordered pairs ``(i, j)``, ``i < j``, in row-major order."""
    return np.triu_indices(n_runs, 1)


def block_size(B: int, n: int, budget: int = 1 << 22) -> int:
    """How many pairs to process at once so that a ``(B, pairs)`` block stays near ``budget``
    elements (about 32 MB of float64 per array)."""
    return max(1, budget // max(1, B))
