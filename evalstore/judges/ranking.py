"""Ranking agreement of two qrels sets for one metric: do the two leaderboards order the runs alike?

The runs are the stored runs evaluated under both sets (evaluated first where they are not, by
:func:`evalstore.meta.matrix.score_matrices`; ``missing=`` as in the meta-evaluation). Both
leaderboards average over the topics both sets have scores on (the usual case: the same topics);
a run's score is its mean (the metric's aggregate), rounded to 12 decimals so that runs with the
same per-topic scores tie. On the two vectors of means:

* Kendall's tau-b and Spearman's rho (:mod:`evalstore.stats.rank_correlation`: scipy's ``kendalltau`` and
  ``spearmanr``);
* tau_AP of the candidate leaderboard against the reference's and its symmetric form
  (:mod:`evalstore.stats.ranks`: Yilmaz et al. 2008, ties as Urbano & Marrero 2017);
* each run's competition rank under both sets and the largest change;
* the significance of every run against the reference set's best run (the paired ``test`` at
  ``alpha``, on the per-topic scores of each set): a run flips when it is significantly different
  from that run under one set and not under the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..base.aggregate import aggregate_rows
from ..errors import MetaError
from ..meta.matrix import ScoreMatrix
from ..stats.rank_correlation import kendall_tau_b, spearman_rho
from ..stats.ranks import competition_ranks, largest_change, tau_ap, tau_ap_b
from ..stats.significance import paired_t, randomisation, wilcoxon

#: the paired tests of the significance flips
TESTS = ("t", "wilcoxon", "randomisation")


@dataclass
class RankingAgreement:
    """The agreement of the two leaderboards of one metric: ``summary`` (a ``meta_agree_ranking``
    row) and ``runs`` (``meta_agree_runs`` rows, best under the reference first)."""

    metric: str
    summary: dict[str, Any]
    runs: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def common_topics(ref: ScoreMatrix, cand: ScoreMatrix) -> tuple[ScoreMatrix, ScoreMatrix, list[str]]:
    """Both matrices on the topics both have (and a note when some were left out)."""
    keep = [t for t in ref.topics if t in set(cand.topics)]
    notes = []
    if len(keep) < max(len(ref.topics), len(cand.topics)):
        notes.append(
            f"{ref.label}: the leaderboards are compared on the {len(keep)} topics both sets have scores on "
            f"({len(ref.topics)} under {ref.qrels}, {len(cand.topics)} under {cand.qrels})"
        )
    if not keep:
        raise MetaError(f"{ref.qrels} and {cand.qrels} have no topic with scores in common")
    out = []
    for m in (ref, cand):
        idx = [m.topics.index(t) for t in keep]
        out.append(ScoreMatrix(m.qrels, m.metric, m.label, list(m.runs), keep, m.values[:, idx], m.aggregate, m.filled))
    return out[0], out[1], notes


def _p_values(X: np.ndarray, best: int, test: str, trials: int, seed: int) -> np.ndarray:
    """p of every run against run ``best`` (NaN for ``best`` itself)."""
    Z = X - X[best]
    if test == "t":
        _, p = paired_t(Z)
    elif test == "wilcoxon":
        _, p = wilcoxon(Z)
    else:
        _, p = randomisation(Z, trials, seed)
    p = np.asarray(p, dtype=np.float64).copy()
    p[best] = np.nan
    return p


def ranking_agreement(
    ref: ScoreMatrix, cand: ScoreMatrix, *, test: str = "t", alpha: float = 0.05, trials: int = 10000, seed: int = 0
) -> RankingAgreement:
    """The agreement of the leaderboards of two score matrices of one metric over the same runs."""
    if test not in TESTS:
        raise MetaError(f"unknown test {test!r}; use one of {', '.join(TESTS)}")
    ref, cand, notes = common_topics(ref, cand)
    a, b = ref.means(), cand.means()  # rounded to 12 decimals: equal per-topic scores tie
    exact_a, exact_b = aggregate_rows(ref.values, ref.aggregate), aggregate_rows(cand.values, cand.aggregate)
    ra, rb = competition_ranks(a), competition_ranks(b)
    order = sorted(range(len(ref.runs)), key=lambda i: (int(ra[i]), ref.runs[i]))
    best_ref, best_cand = order[0], min(range(len(cand.runs)), key=lambda i: (int(rb[i]), cand.runs[i]))
    pa = _p_values(ref.values, best_ref, test, trials, seed)
    pb = _p_values(cand.values, best_ref, test, trials, seed)
    change, _ = largest_change(ra, rb)
    runs = []
    for i in order:
        sa = None if np.isnan(pa[i]) else bool(pa[i] < alpha)
        sb = None if np.isnan(pb[i]) else bool(pb[i] < alpha)
        runs.append(
            {
                "metric": ref.label,
                "run": ref.runs[i],
                "mean_ref": float(exact_a[i]),
                "mean_cand": float(exact_b[i]),
                "rank_ref": int(ra[i]),
                "rank_cand": int(rb[i]),
                "p_ref": None if np.isnan(pa[i]) else float(pa[i]),
                "p_cand": None if np.isnan(pb[i]) else float(pb[i]),
                "sig_ref": sa,
                "sig_cand": sb,
                "flip": sa is not None and sa != sb,
            }
        )
    summary = {
        "metric": ref.label,
        "n_runs": len(ref.runs),
        "n_topics": len(ref.topics),
        "tau_b": _num(kendall_tau_b(a, b)),
        "spearman": _num(spearman_rho(a, b)),
        "tau_ap": _num(tau_ap(a, b)),
        "tau_ap_sym": _num(tau_ap_b(a, b)),
        "max_rank_change": change,
        "best_ref": ref.runs[best_ref],
        "best_cand": cand.runs[best_cand],
        "test": test,
        "alpha": alpha,
        "n_flips": sum(1 for r in runs if r["flip"]),
    }
    return RankingAgreement(ref.label, summary, runs, notes)


def _num(x: float | None) -> float | None:
    return None if x is None or np.isnan(x) else float(x)


def flipped(agreement: RankingAgreement) -> list[str]:
    """The runs whose significance against the reference's best run differs between the sets."""
    return [r["run"] for r in agreement.runs if r["flip"]]


def moved(agreement: RankingAgreement) -> list[str]:
    """The runs whose rank changes the most (none when no rank changes)."""
    top = agreement.summary["max_rank_change"]
    return [r["run"] for r in agreement.runs if top > 0 and abs(r["rank_ref"] - r["rank_cand"]) == top]
