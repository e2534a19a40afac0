"""Store-level meta-evaluation: fetch score matrices, run an analysis, persist it.

Each function takes score columns as ``qrels`` (one name or several) x ``metrics`` (names as for
``evalstore eval``), evaluates what is missing, runs the analysis and (``save=True``) stores it
in the ``meta_*`` relations (migration 0003). It returns an :class:`Analysis` whose ``tables``
hold exactly the rows stored, plus in-memory result objects in ``results`` (for plots).

Common keyword arguments: ``runs`` (names; default all), ``top`` (keep the ``top`` best runs by
the summary score of ``top_by``, default the first metric, on the first qrels set, as Sakai's "top
30 runs by Mean AveP"), ``missing`` (see
:mod:`evalstore.meta.matrix`), ``convention`` / ``complete`` / ``depth`` (evaluation options, as
``evalstore eval``), ``progress`` (progress bars; default: on a terminal).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.arguments import names as arg_names
from ..base.memory_limit import of_store
from ..base.progress import progress_bar
from ..errors import MetaError
from ..stats import budget
from ..stats.correlation import correlate
from ..stats.sampling import check_seed, check_trials, pair_indices
from ..stats.significance import ADJUSTMENTS, check_alpha, test_name
from ..stats.significance import adjust as adjust_p
from ..stats.swap import BIN_WIDTH, N_BINS, swap_method
from .common import (
    Analysis,
    columns_for,
    finish,
    finite,
    inputs_of,
    load,
    need_mean,
    num,
    pairs_z,
    run_tests,
)
from .matrix import ScoreMatrix

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


# --------------------------------------------------------------------------- Kendall
def kendall(
    store: StoreHandle,
    qrels: str | Sequence[str],
    metrics: str | Sequence[str],
    runs=None,
    *,
    save: bool = True,
    **kwargs,
) -> Analysis:
    """Kendall's tau (with Z test) and Spearman's rho between the system rankings of every two
    columns (Sakai IPSJ 2007 Table 2, Sakai SIGIR 2007 Table 2). Runs are ranked by each column's summary score."""
    cols = columns_for(qrels, metrics)
    if len(cols) < 2:
        raise MetaError("rank correlation needs at least two columns (metrics x qrels sets)")
    mats, params = load(store, cols, runs, **kwargs)
    means = [m.means() for m in mats]
    rows = []
    for a, b in itertools.combinations(range(len(mats)), 2):
        c = correlate(means[a], means[b])
        rows.append(
            {
                "col_a": a,
                "col_b": b,
                "qrels_a": mats[a].qrels,
                "metric_a": mats[a].metric,
                "qrels_b": mats[b].qrels,
                "metric_b": mats[b].metric,
                "n_runs": c.n,
                "tau": num(c.tau),
                "tau_a": num(c.tau_a),
                "tau_b": num(c.tau_b),
                "concordant": c.concordant,
                "discordant": c.discordant,
                "ties_a": c.ties_a,
                "ties_b": c.ties_b,
                "ties_both": c.ties_both,
                "z": num(c.z),
                "p_value": num(c.p_value),
                "spearman": num(c.spearman),
            }
        )
    an = Analysis(
        "kendall",
        params,
        None,
        inputs_of(mats),
        {"meta_correlations": rows},
        {"labels": [m.label for m in mats], "qrels": [m.qrels for m in mats], "matrices": mats},
    )
    return finish(store, an, save)


# --------------------------------------------------------------------------- swap method
def swap(
    store: StoreHandle,
    qrels: str | Sequence[str],
    metrics: str | Sequence[str],
    runs=None,
    *,
    trials: int = 1000,
    seed: int = 0,
    max_rate: float = 0.05,
    bin_width: float = BIN_WIDTH,
    n_bins: int = N_BINS,
    save: bool = True,
    progress: bool | None = None,
    **kwargs,
) -> Analysis:
    """The swap method for each column (Sakai IPSJ 2007 Sec. 4.2, Table 3)."""
    B, seed = check_trials(trials), check_seed(seed)
    mats, params = load(store, columns_for(qrels, metrics), runs, progress=progress, **kwargs)
    need_mean(mats, "the swap method")
    params.update(
        trials=B,
        max_rate=max_rate,
        bin_width=bin_width,
        n_bins=n_bins,
        sampling="rng.integers(0, n, size=(B, 2, n)); shared by all pairs",
    )
    summary, bins, results = [], [], []
    n_pairs = len(mats[0].runs) * (len(mats[0].runs) - 1) // 2
    with progress_bar(n_pairs * len(mats), "swap method", enabled=progress) as bar:
        memory = of_store(store)
        for m in mats:
            r = swap_method(
                m.values,
                B,
                seed,
                bin_width=bin_width,
                n_bins=n_bins,
                max_rate=max_rate,
                progress=bar,
                memory=memory,
            )
            results.append(r)
            summary.append(_swap_summary(m, r, B, max_rate))
            bins += _swap_bins(m, r)
    an = Analysis(
        "swap",
        params,
        seed,
        inputs_of(mats),
        {"meta_swap": summary, "meta_swap_bins": bins},
        {"labels": [m.label for m in mats], "swap": results, "matrices": mats},
    )
    return finish(store, an, save)


def _swap_summary(m: ScoreMatrix, r: Any, B: int, max_rate: float) -> dict[str, Any]:
    """The ``meta_swap`` row of one column (Sakai IPSJ 2007 Table 3's columns)."""
    return {
        "qrels": m.qrels,
        "metric": m.metric,
        "n_runs": len(m.runs),
        "n_topics": len(m.topics),
        "n_pairs": r.n_pairs,
        "trials": B,
        "max_rate": max_rate,
        "abs_diff": finite(r.abs_diff),
        "abs_diff_first": finite(r.abs_diff_first),
        "max_diff": r.max_diff,
        "rel_diff": finite(r.rel_diff),
        "share": finite(r.share),
    }


def _swap_bins(m: ScoreMatrix, r: Any) -> list[dict[str, Any]]:
    """The ``meta_swap_bins`` rows of one column: comparisons, swaps and the swap rate per bin."""
    return [
        {
            "qrels": m.qrels,
            "metric": m.metric,
            "bin": i,
            "lo": lo,
            "hi": hi,
            "comparisons": int(r.counts[i]),
            "swaps": int(r.swaps[i]),
            "swap_rate": finite(r.rates[i]),
        }
        for i, (lo, hi) in enumerate(r.edges())
    ]


# --------------------------------------------------------------------------- paired tests
def _pair_rows(
    m: ScoreMatrix,
    test: str,
    stat: np.ndarray,
    p: np.ndarray,
    p_adj: np.ndarray,
    alpha: float,
    means: np.ndarray,
    diffs: np.ndarray,
) -> list[dict[str, Any]]:
    ii, jj = pair_indices(len(m.runs))
    sig = p_adj < alpha
    return [
        {
            "qrels": m.qrels,
            "metric": m.metric,
            "run_a": m.runs[i],
            "run_b": m.runs[j],
            "mean_a": float(means[i]),
            "mean_b": float(means[j]),
            "diff": float(d),
            "test": test,
            "statistic": num(s),
            "p_value": float(pv),
            "p_adjusted": float(pa),
            "significant": bool(g),
        }
        for i, j, d, s, pv, pa, g in zip(
            ii.tolist(), jj.tolist(), diffs.tolist(), stat.tolist(), p.tolist(), p_adj.tolist(), sig.tolist()
        )
    ]


def _disc_row(m: ScoreMatrix, test: str, alpha: float, adjust: str, n_sig: int, est_diff=None) -> dict[str, Any]:
    P = len(m.runs) * (len(m.runs) - 1) // 2
    return {
        "qrels": m.qrels,
        "metric": m.metric,
        "test": test,
        "alpha": alpha,
        "adjust": adjust,
        "n_runs": len(m.runs),
        "n_topics": len(m.topics),
        "n_pairs": P,
        "n_significant": int(n_sig),
        "disc_power": n_sig / P if P else None,
        "est_diff": est_diff,
    }


def discpower(
    store: StoreHandle,
    qrels: str | Sequence[str],
    metrics: str | Sequence[str],
    runs=None,
    *,
    trials: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    save: bool = True,
    progress: bool | None = None,
    **kwargs,
) -> Analysis:
    """Bootstrap sensitivity (Sakai IPSJ 2007 Sec. 4.3, Table 4; Sakai SIGIR 2007 Table 3): paired
    bootstrap test for every run pair of each column, discriminative power and the estimated
    difference required."""
    B, seed, alpha = check_trials(trials), check_seed(seed), check_alpha(alpha)
    budget.check_bootstrap(B, of_store(store), test=True)  # before any work
    mats, params = load(store, columns_for(qrels, metrics), runs, progress=progress, **kwargs)
    need_mean(mats, "the paired bootstrap test")
    params.update(
        trials=B,
        alpha=alpha,
        test="bootstrap",
        statistic="studentised, shifted to H0",
        sampling="rng.integers(0, n, size=(B, n)); shared by all pairs",
        est_diff="max over pairs of |wbar*| at the (B*alpha)-th largest |t*|, 2 significant figures",
    )
    disc, pairs, results = [], [], []
    memory = of_store(store)
    n_pairs = len(mats[0].runs) * (len(mats[0].runs) - 1) // 2
    with progress_bar(n_pairs * len(mats), "bootstrap", enabled=progress) as bar:
        for m in mats:
            m = m.sorted_by_mean()
            res = run_tests(m, ["bootstrap"], trials=B, seed=seed, alpha=alpha, memory=memory, bar=bar)["bootstrap"]
            means, diffs = m.values.mean(axis=1), pairs_z(m).mean(axis=1)
            pairs.extend(_pair_rows(m, "bootstrap", res["stat"], res["asl"], res["asl"], alpha, means, diffs))
            n_sig = int(np.count_nonzero(res["asl"] < alpha))
            disc.append(_disc_row(m, "bootstrap", alpha, "none", n_sig, finite(res["est_diff"])))
            results.append(res["result"])
    an = Analysis(
        "discpower",
        params,
        seed,
        inputs_of(mats),
        {"meta_discpower": disc, "meta_pair_tests": pairs},
        {"labels": [m.label for m in mats], "bootstrap": results, "matrices": mats},
    )
    return finish(store, an, save)


def tests(
    store: StoreHandle,
    qrels: str | Sequence[str],
    metrics: str | Sequence[str],
    runs=None,
    *,
    tests: Sequence[str] = ("t", "wilcoxon", "randomisation", "bootstrap"),
    trials: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    adjust: str = "none",
    save: bool = True,
    progress: bool | None = None,
    **kwargs,
) -> Analysis:
    """Paired tests for every run pair of each column, with optional Holm / Bonferroni / BH / BY adjustment
    over the pairs of a column, and the discriminative power of each test."""
    B, seed, alpha = check_trials(trials), check_seed(seed), check_alpha(alpha)
    names = list(dict.fromkeys(test_name(t) for t in arg_names(tests, "test")))
    budget.check_bootstrap(B, of_store(store), test="bootstrap" in names)  # before any work
    if adjust not in ADJUSTMENTS:
        raise MetaError(f"unknown p-value adjustment {adjust!r}; use one of {', '.join(ADJUSTMENTS)}")
    mats, params = load(store, columns_for(qrels, metrics), runs, progress=progress, **kwargs)
    need_mean(mats, "paired tests")
    params.update(
        tests=names,
        trials=B,
        alpha=alpha,
        adjust=adjust,
        wilcoxon="zeros dropped; exact if n <= 50 and no ties, else normal with tie correction, "
        "no continuity correction",
        randomisation="sign flips rng.integers(0, 2, size=(B, n)); p = (hits + 1) / (B + 1)",
        bootstrap="p = (count + 1) / (B + 1); the ASL count / B is what meta discpower reports",
    )
    disc, pairs = [], []
    memory = of_store(store)
    n_pairs = len(mats[0].runs) * (len(mats[0].runs) - 1) // 2
    heavy = sum(t in ("bootstrap",) for t in names)
    with progress_bar(max(1, n_pairs * len(mats) * heavy), "paired tests", enabled=progress if heavy else False) as bar:
        for m in mats:
            m = m.sorted_by_mean()
            res = run_tests(m, names, trials=B, seed=seed, alpha=alpha, memory=memory, bar=bar)
            means, diffs = m.values.mean(axis=1), pairs_z(m).mean(axis=1)
            for t in names:
                p_adj = adjust_p(res[t]["p"], adjust)
                pairs.extend(_pair_rows(m, t, res[t]["stat"], res[t]["p"], p_adj, alpha, means, diffs))
                est = finite(res[t]["est_diff"]) if t == "bootstrap" and adjust == "none" else None
                disc.append(_disc_row(m, t, alpha, adjust, int(np.count_nonzero(p_adj < alpha)), est))
    an = Analysis(
        "tests",
        params,
        seed,
        inputs_of(mats),
        {"meta_discpower": disc, "meta_pair_tests": pairs},
        {"labels": [m.label for m in mats], "matrices": mats},
    )
    return finish(store, an, save)
