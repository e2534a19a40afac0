"""Python UDFs for the graded-relevance metrics that are awkward in plain SQL.

Registered in DuckDB on every connection the store opens (see :mod:`evalstore.udfs`), so metric
SQL and ad-hoc SQL (``evalstore sql``) can call them. Each call receives one topic's lists (one
row per (run, topic), never one per document) and works on them with numpy.

SQL signatures (docs/graded.md has the formulas):

``pplus_measure(ranks BIGINT[], levels BIGINT[], gains DOUBLE[], ideal_gains DOUBLE[], beta DOUBLE) -> DOUBLE``
    Sakai's P+-measure (000 Eq. 7). ``ranks``/``levels``/``gains``: the rank, relevance level and
    gain of retrieved documents (any subset that holds every retrieved relevant document; order
    does not matter, ranks are 1-based and unique); a document is relevant when its level >= 1.
    ``ideal_gains``: the gains of the topic's relevant documents (any order; zeros ignored).
    0 when no relevant document is in the lists.

``ndpm(system DOUBLE[], user DOUBLE[]) -> DOUBLE``
    Yao's normalised distance performance measure, ``(2 C- + C_u) / (2 C)`` (0 = perfect, 1 =
    reversed). ``system[i]`` and ``user[i]`` are the system's and the user's values for document
    i (larger = preferred; equal values are ties, ``-inf`` is a valid "bottom" value). NULL when
    the user prefers no pair (C = 0).

``kendall_tau_b(system DOUBLE[], user DOUBLE[]) -> DOUBLE``
    Kendall's tau-b between the two orderings; NULL when either side is all ties.

``spearman_rho(system DOUBLE[], user DOUBLE[]) -> DOUBLE``
    Spearman's rho (Pearson's r of average ranks); NULL when either side is all ties.

Pairs are counted by sorting, never pair by pair: tied pairs from the sizes of runs of equal
values after one sort, discordant pairs from a running one-hot count over the groups of the
variable with fewer distinct values (G <= number of relevance levels + 1 for qrels data): O(n log n
+ n G). When both sides have more than 64 distinct values, ``searchsorted`` per group instead.
"""

from __future__ import annotations

import math

import numpy as np

from ..udfs import udf_registrar

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


def ndpm(system, user) -> float | None:
    """Yao (1995) NDPM: ``(2 C- + C_u) / (2 C)`` over the pairs the user strictly orders."""
    if system is None or user is None:
        return None
    c = pair_counts(system, user)
    strict = c["n0"] - c["ties_u"]  # C: pairs the user strictly prefers
    if strict == 0:
        return None
    c_u = c["ties_s"] - c["ties_both"]  # user strict, system tied
    return (2 * c["discordant"] + c_u) / (2 * strict)


def kendall_tau_b(system, user) -> float | None:
    if system is None or user is None:
        return None
    c = pair_counts(system, user)
    denom = (c["n0"] - c["ties_s"]) * (c["n0"] - c["ties_u"])
    if denom <= 0:
        return None
    return (c["concordant"] - c["discordant"]) / math.sqrt(denom)


def _average_ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="stable")
    xs = x[order]
    n = len(x)
    bounds = np.flatnonzero(np.concatenate(([True], xs[1:] != xs[:-1], [True])))
    sizes = np.diff(bounds)
    avg = bounds[:-1] + (sizes + 1) / 2.0  # 1-based average rank of each tie group
    ranks = np.empty(n)
    ranks[order] = np.repeat(avg, sizes)
    return ranks


def spearman_rho(system, user) -> float | None:
    if system is None or user is None:
        return None
    s = np.asarray(system, dtype=float)
    u = np.asarray(user, dtype=float)
    if s.shape != u.shape:
        raise ValueError(f"system and user lists differ in length ({len(s)} vs {len(u)})")
    if len(s) < 2:
        return None
    rs, ru = _average_ranks(s), _average_ranks(u)
    rs -= rs.mean()
    ru -= ru.mean()
    denom = math.sqrt(float((rs * rs).sum()) * float((ru * ru).sum()))
    if denom == 0:
        return None
    return float((rs * ru).sum()) / denom


# --------------------------------------------------------------------------- P+-measure
def pplus_measure(ranks, levels, gains, ideal_gains, beta) -> float | None:
    """Sakai's P+-measure: mean blended ratio over the relevant documents at or above r_p."""
    if ranks is None or levels is None or gains is None or beta is None:
        return None
    r = np.asarray(ranks, dtype=float)
    lv = np.asarray(levels, dtype=np.int64)
    g = np.asarray(gains, dtype=float)
    if not (len(r) == len(lv) == len(g)):
        raise ValueError("pplus_measure: ranks, levels and gains must have the same length")
    order = np.argsort(r, kind="stable")
    r, lv, g = r[order], lv[order], g[order]
    rel = lv >= 1
    if not rel.any():
        return 0.0
    top = lv[rel].max()
    r_p = r[rel & (lv == top)].min()  # first document of the highest level present
    ideal = np.sort(np.asarray(ideal_gains if ideal_gains is not None else [], dtype=float))[::-1]
    cg_ideal = np.cumsum(ideal[ideal > 0])
    cg = np.cumsum(g)
    cnt = np.cumsum(rel)
    sel = rel & (r <= r_p)
    rr = r[sel]
    if len(cg_ideal):
        cgi = cg_ideal[np.minimum(rr.astype(np.int64), len(cg_ideal)) - 1]
    else:
        cgi = np.zeros(len(rr))
    br = (beta * cg[sel] + cnt[sel]) / (beta * cgi + rr)
    return float(br.mean())


# --------------------------------------------------------------------------- registration
@udf_registrar
def register(con) -> None:
    import duckdb

    dbl = duckdb.sqltype("DOUBLE")
    dbl_list = duckdb.list_type(dbl)
    big_list = duckdb.list_type(duckdb.sqltype("BIGINT"))
    # SPECIAL: the functions see NULL arguments (as None) and may return NULL (undefined values)
    special = "special"
    con.create_function(
        "pplus_measure", pplus_measure, [big_list, big_list, dbl_list, dbl_list, dbl], dbl, null_handling=special
    )
    con.create_function("ndpm", ndpm, [dbl_list, dbl_list], dbl, null_handling=special)
    con.create_function("kendall_tau_b", kendall_tau_b, [dbl_list, dbl_list], dbl, null_handling=special)
    con.create_function("spearman_rho", spearman_rho, [dbl_list, dbl_list], dbl, null_handling=special)
