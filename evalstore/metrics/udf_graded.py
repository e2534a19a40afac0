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

Pair counts and rank correlations come from :mod:`evalstore.rankcorr` (shared with the
meta-evaluation).
"""

from __future__ import annotations

import numpy as np

from .. import rankcorr
from ..rankcorr import pair_counts
from ..udfs import sql_function


@sql_function("ndpm", ["DOUBLE[]", "DOUBLE[]"], "DOUBLE", null_handling="special")
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


@sql_function("kendall_tau_b", ["DOUBLE[]", "DOUBLE[]"], "DOUBLE", null_handling="special")
def kendall_tau_b(system, user) -> float | None:
    """Kendall's tau-b between the system's and the user's values of a topic's documents."""
    if system is None or user is None:
        return None
    return rankcorr.kendall_tau_b(system, user)


@sql_function("spearman_rho", ["DOUBLE[]", "DOUBLE[]"], "DOUBLE", null_handling="special")
def spearman_rho(system, user) -> float | None:
    """Spearman's rho between the system's and the user's values of a topic's documents."""
    if system is None or user is None:
        return None
    return rankcorr.spearman_rho(system, user)


# --------------------------------------------------------------------------- P+-measure
@sql_function(
    "pplus_measure", ["BIGINT[]", "BIGINT[]", "DOUBLE[]", "DOUBLE[]", "DOUBLE"], "DOUBLE", null_handling="special"
)
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
