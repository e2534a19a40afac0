"""Rank correlation between two orderings of the same items: one implementation for metrics and meta-evaluation.

Used by the preference metrics of Zhou & Yao (NDPM, Kendall-tau, Spearman over a topic's
documents: :mod:`evalstore.metrics.udf_graded`) and by the rank correlation of system rankings
(:mod:`evalstore.stats.correlation`). The statistics are scipy's: :func:`kendall_tau_b` equals
``scipy.stats.kendalltau`` (tau-b), :func:`spearman_rho` is Pearson's r of ``scipy.stats.rankdata``
average ranks (``scipy.stats.spearmanr``); what scipy does not give is the pair counts
(concordant, discordant, ties), which NDPM and the stored correlation tables need.

Pairs are counted by sorting, never pair by pair: tied pairs from the sizes of runs of equal
values after one sort, discordant pairs from a running one-hot count over the groups of the
variable with fewer distinct values (G <= number of relevance levels + 1 for qrels data): O(n log n
+ n G). When both sides have more than 64 distinct values, ``searchsorted`` per group instead.
"""

from __future__ import annotations

import math

import numpy as np

# --------------------------------------------------------------------------- pair counting
_ONEHOT_MAX_GROUPS = 64


def _pairs_in_runs(new_run: np.ndarray) -> int:
    """Unordered pairs inside runs of equal values; ``new_run[i]`` is True where a run starts."""
    bounds = np.flatnonzero(np.concatenate((new_run, [True])))
    sizes = np.diff(bounds).astype(np.int64)
    return int((sizes * (sizes - 1) // 2).sum())


def _discordant_sorted(new_k: np.ndarray, gi: np.ndarray, n_groups: int) -> int:
    """Pairs (i, j) with key_i < key_j and g_i > g_j, the documents sorted by key (``new_k[i]``
    True where a run of equal keys starts), ``gi`` their group numbers 0..n_groups-1.

    For every document j: how many documents of a higher group lie strictly below it in key, read
    from a running one-hot count of the groups (O(n G), G = number of groups)."""
    n = len(gi)
    cum = np.zeros((n + 1, n_groups), dtype=np.int64)
    np.cumsum(np.eye(n_groups, dtype=np.int64)[gi], axis=0, out=cum[1:])
    run_start = np.flatnonzero(new_k)[np.cumsum(new_k) - 1]  # first position of j's key run
    below = cum[run_start]  # group counts strictly below in key
    # documents strictly below in key with a group > g_j = all of them minus those with group <= g_j
    at_most = np.cumsum(below, axis=1)[np.arange(n), gi]
    return int((run_start - at_most).sum())


def _discordant_by_groups(s: np.ndarray, u: np.ndarray) -> int:
    """Fallback for many distinct values on both sides: per user-value group, ``searchsorted`` in
    the sorted s of the documents the user ranks higher (O(G n log n))."""
    levels = np.unique(u)
    order = np.argsort(-u, kind="stable")
    s_ord, u_ord = s[order], u[order]
    starts = np.searchsorted(-u_ord, -levels[::-1], side="left")
    ends = np.searchsorted(-u_ord, -levels[::-1], side="right")
    total = 0
    for g in range(1, len(levels)):
        hi = np.sort(s_ord[: starts[g]])
        total += int(np.searchsorted(hi, s_ord[starts[g] : ends[g]], side="left").sum())
    return total


def _runs(sorted_values: np.ndarray) -> np.ndarray:
    return np.concatenate(([True], sorted_values[1:] != sorted_values[:-1]))


def pair_counts(system, user) -> dict[str, int]:
    """Pair statistics of two value vectors over the same documents.

    ``n0`` all pairs, ``ties_s`` / ``ties_u`` pairs tied by the system / the user, ``ties_both``
    pairs tied by both, ``discordant`` pairs ordered oppositely, ``concordant`` pairs ordered alike.
    One sort by (system, user); discordant pairs from a one-hot running count over the groups of
    the variable with fewer distinct values (the pair set is symmetric in the two roles).
    """
    s = np.asarray(system, dtype=float)
    u = np.asarray(user, dtype=float)
    if s.shape != u.shape:
        raise ValueError(f"system and user lists differ in length ({len(s)} vs {len(u)})")
    if np.isnan(s).any() or np.isnan(u).any():
        raise ValueError("system and user values must not be NaN (use -inf for 'ranked last')")
    n = len(s)
    n0 = n * (n - 1) // 2
    if n < 2:
        return {"n0": n0, "ties_s": 0, "ties_u": 0, "ties_both": 0, "discordant": 0, "concordant": 0}
    u_vals, u_idx, u_cnt = np.unique(u, return_inverse=True, return_counts=True)
    ties_u = int((u_cnt * (u_cnt - 1) // 2).sum())
    order = np.lexsort((u_idx, s))  # by system value, then user value
    new_s = _runs(s[order])
    g_sorted = u_idx[order]
    ties_s = _pairs_in_runs(new_s)
    ties_both = _pairs_in_runs(new_s | _runs(g_sorted))
    n_u, n_s = len(u_vals), int(new_s.sum())
    if n_u < 2 or n_s < 2:
        disc = 0
    elif n_u <= _ONEHOT_MAX_GROUPS:  # usual case: few relevance levels
        disc = _discordant_sorted(new_s, g_sorted, n_u)
    elif n_s <= _ONEHOT_MAX_GROUPS:  # few distinct system values: swap the roles
        s_idx = np.empty(n, dtype=np.int64)
        s_idx[order] = np.cumsum(new_s) - 1
        order_u = np.lexsort((s_idx, u))
        disc = _discordant_sorted(_runs(u[order_u]), s_idx[order_u], n_s)
    else:
        disc = _discordant_by_groups(s, u)
    conc = n0 - ties_s - ties_u + ties_both - disc
    return {
        "n0": n0,
        "ties_s": ties_s,
        "ties_u": ties_u,
        "ties_both": ties_both,
        "discordant": disc,
        "concordant": conc,
    }


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
