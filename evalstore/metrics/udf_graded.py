"""Python UDFs for the graded-relevance metrics that are awkward in plain SQL.

Registered in DuckDB on every connection the store opens (see :mod:`evalstore.base.python_udf`), so metric
SQL and ad-hoc SQL (``evalstore sql``) can call them. They are vectorised: each call receives a
batch of up to 2,048 rows (one row per (run, topic), its lists as Arrow list columns) and computes
all of them with numpy at once (:mod:`evalstore.metrics.udf_lists`), not one Python call per list.

SQL signatures (docs/graded.md has the formulas):

``pplus_measure(ranks BIGINT[], levels BIGINT[], gains DOUBLE[], ideal_gains DOUBLE[], beta DOUBLE) -> DOUBLE``
    Sakai's P+-measure (IPSJ TOD 2007, Eq. 7). ``ranks``/``levels``/``gains``: the rank, relevance level and
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

Pair counts and rank correlations come from :mod:`evalstore.stats.rank_correlation` (shared with the
meta-evaluation).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..base.python_udf import sql_function
from . import udf_lists as L


def _preference_lists(system, user) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    ok = L.all_valid(system, user)
    s, so, _ = L.lists(system, ok)
    u, uo, _ = L.lists(user, ok)
    L.same_lengths("system and user", [so, uo])
    return s, u, so, ok


@sql_function("ndpm", ["DOUBLE[]", "DOUBLE[]"], "DOUBLE", null_handling="special", arrow=True)
def ndpm(system, user) -> pa.Array:
    """Yao (1995) NDPM: ``(2 C- + C_u) / (2 C)`` over the pairs the user strictly orders."""
    s, u, offsets, ok = _preference_lists(system, user)
    c = L.pair_counts(s, u, offsets)
    strict = c["n0"] - c["ties_u"]  # C: pairs the user strictly prefers
    c_u = c["ties_s"] - c["ties_both"]  # user strict, system tied
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (2 * c["discordant"] + c_u) / (2 * strict)
    return L.column(value, ok & (strict != 0))


@sql_function("kendall_tau_b", ["DOUBLE[]", "DOUBLE[]"], "DOUBLE", null_handling="special", arrow=True)
def kendall_tau_b(system, user) -> pa.Array:
    """Kendall's tau-b between the system's and the user's values of a topic's documents."""
    s, u, offsets, ok = _preference_lists(system, user)
    c = L.pair_counts(s, u, offsets)
    # the product in floating point: in int64 it overflows from about 65,000 documents a list (each
    # factor is exact in a double, so the product is the correctly rounded one, as Python's
    # float(a * b) of rank_correlation.tau_b_of)
    a, b = c["n0"] - c["ties_s"], c["n0"] - c["ties_u"]
    denom = a.astype(np.float64) * b.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (c["concordant"] - c["discordant"]) / np.sqrt(denom)
    return L.column(value, ok & (a > 0) & (b > 0))


@sql_function("spearman_rho", ["DOUBLE[]", "DOUBLE[]"], "DOUBLE", null_handling="special", arrow=True)
def spearman_rho(system, user) -> pa.Array:
    """Spearman's rho between the system's and the user's values of a topic's documents."""
    s, u, offsets, ok = _preference_lists(system, user)
    rho, defined = L.spearman_rho(s, u, offsets)
    return L.column(rho, ok & defined)


# --------------------------------------------------------------------------- P+-measure
@sql_function(
    "pplus_measure",
    ["BIGINT[]", "BIGINT[]", "DOUBLE[]", "DOUBLE[]", "DOUBLE"],
    "DOUBLE",
    null_handling="special",
    arrow=True,
)
def pplus_measure(ranks, levels, gains, ideal_gains, beta) -> pa.Array:
    """Sakai's P+-measure: mean blended ratio over the relevant documents at or above r_p."""
    ok = L.all_valid(ranks, levels, gains, beta)
    r, ro, _ = L.lists(ranks, ok)
    lv, lo, _ = L.lists(levels, ok)
    g, go, _ = L.lists(gains, ok)
    ideal, io, _ = L.lists(ideal_gains, ok)  # a NULL list of ideal gains reads as empty
    b, _ = L.scalars(beta)
    if not (np.array_equal(ro, lo) and np.array_equal(ro, go)):
        raise ValueError("pplus_measure: ranks, levels and gains must have the same length")
    m = len(ro) - 1
    seg = L.segment_ids(ro)
    order = np.lexsort((r, seg))  # by rank within each list
    r, lv, g = r[order], lv[order], g[order]
    rel = lv >= 1
    # r_p: the first rank of the highest level present among the list's relevant documents
    top = np.full(m, -np.inf)
    np.maximum.at(top, seg[rel], lv[rel])
    at_top = rel & (lv == top[seg])
    r_p = np.full(m, np.inf)
    np.minimum.at(r_p, seg[at_top], r[at_top])
    # cumulative sums inside each list, in rank order (the per-list cumsum: row-wise on a padded matrix)
    cg = _seg_cumsum(g, ro)
    cnt = np.cumsum(rel) - np.concatenate(([0], np.cumsum(rel)))[ro[:-1]][seg]
    iseg = L.segment_ids(io)
    io_order = np.lexsort((-ideal, iseg))  # each topic's ideal gains, largest first
    ideal = ideal[io_order]
    pos = ideal > 0
    n_ideal = np.bincount(iseg[pos], minlength=m)
    cg_ideal = _seg_cumsum(ideal[pos], np.concatenate(([0], np.cumsum(n_ideal))))
    ideal_start = np.concatenate(([0], np.cumsum(n_ideal)))[:-1]
    sel = rel & (r <= r_p[seg])
    rr, sseg = r[sel], seg[sel]
    has_ideal = n_ideal[sseg] > 0
    cgi = np.zeros(len(rr))
    idx = ideal_start[sseg] + np.minimum(rr.astype(np.int64), n_ideal[sseg]) - 1
    cgi[has_ideal] = cg_ideal[idx[has_ideal]]
    bb = b[sseg]
    br = (bb * cg[sel] + cnt[sel]) / (bb * cgi + rr)
    n_sel = np.bincount(sseg, minlength=m)
    value = np.zeros(m)
    nz = n_sel > 0  # the mean as ndarray.mean() takes it (the same sum, then / n)
    value[nz] = L.sums_like_numpy(br, np.concatenate(([0], np.cumsum(n_sel))))[nz] / n_sel[nz]
    return L.column(value, ok)


def _seg_cumsum(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The cumulative sum inside each list, added in the same order as ``np.cumsum`` of the list."""
    lens = np.diff(offsets)
    if len(x) == 0:
        return x.astype(np.float64)
    width = int(lens.max())
    pad = np.zeros((len(lens), width))
    col = np.arange(len(x)) - np.repeat(offsets[:-1], lens)
    row = L.segment_ids(offsets)
    pad[row, col] = x
    return np.cumsum(pad, axis=1)[row, col]
