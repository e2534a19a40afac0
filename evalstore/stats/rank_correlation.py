"""Rank correlation between two orderings of the same items: one implementation for metrics and meta-evaluation.

Used by the preference metrics of Zhou & Yao (NDPM, Kendall-tau, Spearman over a topic's
documents: :mod:`evalstore.metrics.udf_graded`) and by the rank correlation of system rankings
(:mod:`evalstore.stats.correlation`). The statistics are scipy's: :func:`kendall_tau_b` equals
``scipy.stats.kendalltau`` (tau-b), :func:`spearman_rho` is Pearson's r of ``scipy.stats.rankdata``
average ranks (``scipy.stats.spearmanr``); what scipy does not give is the pair counts
(concordant, discordant, ties), which NDPM and the stored correlation tables need.

Pairs are counted by sorting, never pair by pair: tied pairs from the sizes of runs of equal
values after one sort by (system, user), discordant pairs as the inversions of the user's values in
that order, counted by a radix partition (O(n log G), G distinct user values; O(n log n) at worst)
in O(n) memory, for one list or every list of a batch at once (:func:`list_pair_counts`).
"""

from __future__ import annotations

import math

import numpy as np

# --------------------------------------------------------------------------- pair counting
_KEYS = ("n0", "ties_s", "ties_u", "ties_both", "discordant", "concordant")


def dense_codes(x: np.ndarray) -> tuple[np.ndarray, int]:
    """0-based dense ranks of the values (equal values, equal codes; -0.0 equals 0.0) and their
    number of distinct values."""
    vals, codes = np.unique(x, return_inverse=True)
    return codes.reshape(-1).astype(np.int64), len(vals)


def pair_counts(system, user) -> dict[str, int]:
    """Pair statistics of two value vectors over the same documents.

    ``n0`` all pairs, ``ties_s`` / ``ties_u`` pairs tied by the system / the user, ``ties_both``
    pairs tied by both, ``discordant`` pairs ordered oppositely, ``concordant`` pairs ordered alike
    (:func:`list_pair_counts` of one list)."""
    s = np.asarray(system, dtype=float)
    u = np.asarray(user, dtype=float)
    if s.shape != u.shape:
        raise ValueError(f"system and user lists differ in length ({len(s)} vs {len(u)})")
    if np.isnan(s).any() or np.isnan(u).any():
        raise ValueError("system and user values must not be NaN (use -inf for 'ranked last')")
    codes, n_u = dense_codes(u)
    c = list_pair_counts(s, codes, n_u, np.array([0, len(s)], dtype=np.int64))
    return {k: int(c[k][0]) for k in _KEYS}


def list_pair_counts(s: np.ndarray, u: np.ndarray, n_u: int, offsets: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`pair_counts` of every list at once: list i holds ``s[offsets[i]:offsets[i + 1]]``
    (the system's values, no NaN) and ``u[...]``, the user's values as dense codes ``0..n_u-1``
    (:func:`dense_codes`). Arrays of one count per list.

    One ordering of the documents by (list, system value, user code), taken as given when the
    lists come sorted that way (``list(s ORDER BY s, u)`` in SQL): tied pairs from the runs of
    equal values, discordant pairs as the inversions of the user codes in that order
    (:func:`inversions`). O(n log n) time at worst, O(n) memory, whatever the number of distinct
    values on either side."""
    m = len(offsets) - 1
    lens = np.diff(offsets)
    n0 = lens * (lens - 1) // 2
    n = len(s)
    z = np.zeros(m, dtype=np.int64)
    if n == 0:
        return {"n0": n0, "ties_s": z, "ties_u": z, "ties_both": z, "discordant": z, "concordant": n0}
    seg = np.repeat(np.arange(m), lens)
    first = np.zeros(n, dtype=bool)
    first[offsets[:-1][lens > 0]] = True
    if not _sorted_by(seg, s, u, first):
        order = np.lexsort((u, s, seg))
        s, u = s[order], u[order]
    new_s = first.copy()
    new_s[1:] |= s[1:] != s[:-1]
    new_su = new_s.copy()
    new_su[1:] |= u[1:] != u[:-1]
    ties_s = _pairs_in_runs(new_s, offsets)
    ties_both = _pairs_in_runs(new_su, offsets)
    if m * n_u <= 4 * n + 4096:  # the user's ties from the counts per (list, code)
        per = np.bincount(seg * n_u + u, minlength=m * n_u).reshape(m, n_u)
        ties_u = (per * (per - 1) // 2).sum(axis=1)
    else:  # many codes: from the runs of one more ordering
        uo = np.sort(seg * n_u + u)
        ties_u = _pairs_in_runs(np.concatenate(([True], uo[1:] != uo[:-1])), offsets)
    disc = inversions(u, offsets, n_u)
    return {
        "n0": n0,
        "ties_s": ties_s,
        "ties_u": ties_u,
        "ties_both": ties_both,
        "discordant": disc,
        "concordant": n0 - ties_s - ties_u + ties_both - disc,
    }


def _sorted_by(seg: np.ndarray, s: np.ndarray, u: np.ndarray, first: np.ndarray) -> bool:
    """Each list is ordered by (system value, user code) already."""
    up = (s[1:] > s[:-1]) | ((s[1:] == s[:-1]) & (u[1:] >= u[:-1])) | first[1:]
    return bool(up.all())


def _pairs_in_runs(new_run: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Unordered pairs inside runs of equal values, per list (``new_run`` True where a run starts;
    runs never cross lists): the k-th element of a run pairs with the k-1 before it."""
    starts = np.flatnonzero(new_run)
    before = np.arange(len(new_run)) - starts[np.cumsum(new_run) - 1]
    return _list_sums(before, offsets)


def _list_sums(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    lens = np.diff(offsets)
    out = np.zeros(len(lens), dtype=np.int64)
    nz = lens > 0
    if nz.any():
        out[nz] = np.add.reduceat(x, offsets[:-1][nz])
    return out


def inversions(codes: np.ndarray, offsets: np.ndarray, n_codes: int) -> np.ndarray:
    """Per list, the pairs i < j with ``codes[i] > codes[j]`` (codes in ``0..n_codes-1``).

    A radix partition from the highest bit down: at each bit, inside each group of equal higher
    bits (kept in list order), every element with the bit 0 forms an inversion with each element
    before it with the bit 1; then each group is split, stably, into its 0s and its 1s. O(n) per
    bit, ceil(log2 n_codes) bits, O(n) memory (a running one-hot count would take n x n_codes)."""
    n = len(codes)
    acc = np.zeros(n, dtype=np.int64)
    if n == 0 or n_codes < 2:
        return _list_sums(acc, offsets)
    cur = np.asarray(codes, dtype=np.int64)
    lens = np.diff(offsets)
    group_new = np.zeros(n, dtype=bool)
    group_new[offsets[:-1][lens > 0]] = True
    pos = np.arange(n)
    for b in reversed(range(int(n_codes - 1).bit_length())):
        bit = (cur >> b) & 1
        starts = np.flatnonzero(group_new)
        gid = np.cumsum(group_new) - 1
        gstart = starts[gid]
        ones = np.cumsum(bit) - bit  # ones strictly before, in the whole array
        ones_before = ones - ones[gstart]
        zero = bit == 0
        acc[zero] += ones_before[zero]
        zeros_in_group = np.add.reduceat(1 - bit, starts)
        zeros_before = (pos - gstart) - ones_before
        new_pos = gstart + np.where(zero, zeros_before, zeros_in_group[gid] + ones_before)
        nxt = np.empty_like(cur)
        nxt[new_pos] = cur
        cur = nxt
        sizes = np.diff(np.append(starts, n))
        group_new = np.zeros(n, dtype=bool)
        group_new[starts] = True
        split = (zeros_in_group > 0) & (zeros_in_group < sizes)
        group_new[starts[split] + zeros_in_group[split]] = True
    return _list_sums(acc, offsets)


def kendall_tau_b(a, b) -> float | None:
    """Kendall's tau-b between two orderings (None when either side is all ties)."""
    return tau_b_of(pair_counts(a, b))


def tau_b_of(c: dict[str, int]) -> float | None:
    """Kendall's tau-b from :func:`pair_counts` (None when either side is all ties)."""
    denom = (c["n0"] - c["ties_s"]) * (c["n0"] - c["ties_u"])
    if denom <= 0:
        return None
    return (c["concordant"] - c["discordant"]) / math.sqrt(denom)


def spearman_rho(a, b) -> float | None:
    """Spearman's rho: Pearson's r of the average ranks (None when either side is all ties)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"the two lists differ in length ({len(x)} vs {len(y)})")
    if len(x) < 2:
        return None
    # scipy.stats costs seconds to import: loaded on first use, not with evalstore
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denom = math.sqrt(float((rx * rx).sum()) * float((ry * ry).sum()))
    if denom == 0:
        return None
    return float((rx * ry).sum()) / denom
