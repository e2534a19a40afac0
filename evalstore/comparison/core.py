"""Comparing runs against a baseline: means, significance per metric, effect sizes; stored like
the other analyses (``meta_runs`` kind 'compare', ``meta_pair_tests``, ``meta_effects``).

The family of a multiple-comparison adjustment is one metric's comparisons: the runs against the
baseline, or every pair with ``all_pairs``. The randomised Tukey HSD test controls the family-wise
error over all pairs of the runs compared by itself, so it takes no further adjustment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.arguments import metric_names, names
from ..base.memory_limit import of_store
from ..db.topic_texts import topic_queries
from ..errors import MetaError
from ..intervals.means import IntervalSpec
from ..intervals.ranks import RANK_METHODS
from ..meta.common import Analysis, columns_for, finish, inputs_of, load, need_mean, num
from ..meta.matrix import ScoreMatrix
from ..metrics.options import EvalOptions
from ..stats import budget
from ..stats import effects as fx
from ..stats.bootstrap import paired_bootstrap
from ..stats.rank_intervals import rank_intervals
from ..stats.sampling import check_seed, check_trials
from ..stats.significance import (
    ADJUSTMENTS,
    check_alpha,
    min_trials,
    monte_carlo_p,
    paired_t,
    randomisation,
    test_name,
    tukey_hsd,
    wilcoxon,
)
from ..stats.significance import adjust as adjust_p
from .result import MONTE_CARLO, Comparison

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: The tests of ``compare``, as spelled on the command line.
TESTS = ("t", "wilcoxon", "randomisation", "bootstrap", "tukey-hsd")


def check_test(test: str) -> str:
    """The name of a compare test (``randomization`` is ``randomisation``)."""
    return test_name(test, TESTS)


def check_adjust(method: str, test: str) -> str:
    if method not in ADJUSTMENTS:
        raise MetaError(f"unknown p-value adjustment {method!r}; use one of {', '.join(ADJUSTMENTS)}")
    if test == "tukey-hsd" and method != "none":
        raise MetaError(
            "the randomised Tukey HSD test already controls the family-wise error over all pairs; "
            "use --adjust none with it (or another test with --adjust)"
        )
    return method


def compare(
    store: StoreHandle,
    qrels: str,
    baseline: str,
    runs: Sequence[str] | None = None,
    metrics: str | Sequence[str] = ("AP",),
    *,
    test: str = "t",
    adjust: str = "none",
    alpha: float = 0.05,
    trials: int = 10000,
    seed: int = 0,
    all_pairs: bool = False,
    effects: bool = False,
    save: bool = True,
    missing: str = "error",
    options: EvalOptions = EvalOptions(),
    progress: bool | None = None,
    rank_ci: str | None = None,
) -> Comparison:
    """Compare ``runs`` (default: every other run of the store) with ``baseline`` on ``metrics``
    over the qrels set ``qrels``: means, significance per metric (``test``: t, wilcoxon,
    randomisation, bootstrap, tukey-hsd; ``adjust``: none, holm, bonferroni, bh, by), effect sizes
    (``effects``); stored as an analysis unless ``save=False``. See the module docstring and
    docs/meta.md. ``rank_ci`` (``bootstrap`` with ``trials`` and ``seed``, or ``t``): each run's rank
    among the runs compared with its ``1 - alpha`` interval (:mod:`evalstore.stats.rank_intervals`)."""
    checked = check_options(test, adjust, alpha, trials, seed, effects, rank_ci)  # before any work
    memory = of_store(store)
    if checked["test"] in MONTE_CARLO or effects:  # a B that cannot fit is refused before any work
        budget.check_bootstrap(checked["trials"], memory, test=checked["test"] == "bootstrap", interval=effects)
    metrics = metric_names(metrics)
    mats, params = _matrices(store, qrels, baseline, runs, metrics, missing, options, progress)
    cmp = compare_matrices(mats, metrics, baseline, all_pairs=all_pairs, effects=effects, memory=memory, **checked)
    cmp.queries = topic_queries(store.con, [store.qrels_id(qrels)])
    if rank_ci is not None:
        level = 1.0 - checked["alpha"]
        cmp.ranks, cmp.rank_spec = _ranks(mats, metrics, rank_ci, level, checked["trials"], checked["seed"], memory)
    save_comparison(store, cmp, params, save, effects)
    return cmp


def check_options(
    test: str, adjust: str, alpha: float, trials: int, seed: int, effects: bool, rank_ci: str | None = None
) -> dict[str, Any]:
    """The checked test options of a comparison (``test``, ``adjust``, ``alpha``, ``trials``, ``seed``;
    ``rank_ci`` is checked, not returned)."""
    test = check_test(test)
    if rank_ci is not None and rank_ci not in RANK_METHODS:
        raise MetaError(f"unknown rank interval {rank_ci!r}; use one of {', '.join(RANK_METHODS)}")
    resampled = test in MONTE_CARLO or effects or rank_ci == "bootstrap"
    return {
        "test": test,
        "adjust": check_adjust(adjust, test),
        "alpha": check_alpha(alpha),
        "trials": check_trials(trials) if resampled else trials,
        "seed": check_seed(seed),
    }


def compare_matrices(
    mats: Sequence[ScoreMatrix],
    metrics: Sequence[str],
    baseline: str,
    *,
    test: str = "t",
    adjust: str = "none",
    alpha: float = 0.05,
    trials: int = 10000,
    seed: int = 0,
    all_pairs: bool = False,
    effects: bool = False,
    memory: int | None = None,
) -> Comparison:
    """The comparison of the runs of score matrices (one per metric, the same runs and topics)
    with ``baseline``: the statistics of :func:`compare`, whatever made the matrices (the store, or
    runs evaluated in memory: :mod:`evalstore.comparison.experiments`). Nothing is stored. ``memory``: the
    bytes the resampling may use (:mod:`evalstore.stats.budget`; default: its own)."""
    options = check_options(test, adjust, alpha, trials, seed, effects)
    test, method, alpha, seed = options["test"], options["adjust"], options["alpha"], options["seed"]
    B = options["trials"] if test in MONTE_CARLO or effects else None
    if baseline not in mats[0].runs:
        raise MetaError(f"the baseline {baseline!r} is not among the runs compared ({', '.join(mats[0].runs)})")
    order = [baseline] + [r for r in mats[0].runs if r != baseline]
    mats = [m.subset(order) for m in mats]
    need_mean(mats, "compare")
    k = len(order)
    if all_pairs or test == "tukey-hsd":
        jj, ii = np.triu_indices(k, 1)  # ii > jj: the later run against the earlier (the baseline is 0)
    else:
        ii, jj = np.arange(1, k), np.zeros(k - 1, dtype=np.int64)
    pairs: list[dict[str, Any]] = []
    effect_rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for m, label in zip(mats, metrics):
        Z = m.values[ii] - m.values[jj]
        stat, p = _test(test, m.values, Z, ii, jj, B, seed, alpha, memory)
        pairs += _pairs(m, label, order, ii, jj, Z, stat, p, adjust_p(p, method), alpha, test)
        if effects:
            assert B is not None
            effect_rows.extend(_effects(m, label, order, ii, jj, Z, B, seed, memory))
        if test in MONTE_CARLO:
            notes += _trials_note(label, B, alpha, len(ii), method)
    return Comparison(
        qrels=mats[0].qrels,
        baseline=baseline,
        runs=order,
        metrics=list(metrics),
        stored=[m.metric for m in mats],
        means=np.stack([m.values.mean(axis=1) for m in mats], axis=1),
        n_topics=[len(m.topics) for m in mats],
        test=test,
        adjust=method,
        alpha=alpha,
        trials=B if test in MONTE_CARLO else None,
        seed=seed if test in MONTE_CARLO or effects else None,
        all_pairs=all_pairs,
        pairs=pairs,
        effects=effect_rows,
        notes=notes,
        matrices=mats,
    )


def _ranks(
    mats: Sequence[ScoreMatrix],
    metrics: Sequence[str],
    method: str,
    level: float,
    B: int | None,
    seed: int,
    memory: int | None = None,
) -> tuple[dict[tuple[str, str], tuple[int, int, int]], IntervalSpec]:
    """``{(metric, run): (rank, lo, hi)}`` among the runs compared, and how they were computed."""
    how = IntervalSpec(method, level, B if method == "bootstrap" else None, seed if method == "bootstrap" else None)
    out: dict[tuple[str, str], tuple[int, int, int]] = {}
    for m, label in zip(mats, metrics):
        ri = rank_intervals([m.values], [m.aggregate], method, level=level, trials=B or 1, seed=seed, memory=memory)
        for i, run in enumerate(m.runs):
            out[(label, run)] = (int(ri.rank[i]), int(ri.lo[i]), int(ri.hi[i]))
    return out, how


def _matrices(
    store: StoreHandle,
    qrels: str,
    baseline: str,
    runs: Sequence[str] | None,
    metrics: list[str],
    missing: str,
    options: EvalOptions,
    progress: bool | None,
) -> tuple[list[ScoreMatrix], dict[str, Any]]:
    """The score matrices of the runs (the baseline among them) and the analysis' parameters."""
    store.run_id(baseline)  # a name the store does not hold: the error says the closest ones
    others = names(runs, "run") if runs is not None else None
    if others is not None:
        others = [r for r in others if r != baseline]
        if not others:
            raise MetaError("give at least one run to compare with the baseline (-r RUN)")
    return load(
        store,
        columns_for(qrels, metrics),
        [baseline, *others] if others is not None else None,
        missing=missing,
        options=options,
        progress=progress,
    )


def _pairs(
    m: ScoreMatrix,
    label: str,
    order: list[str],
    ii: np.ndarray,
    jj: np.ndarray,
    Z: np.ndarray,
    stat: np.ndarray,
    p: np.ndarray,
    p_adj: np.ndarray,
    alpha: float,
    test: str,
) -> list[dict[str, Any]]:
    """One record per comparison of metric ``label``: the means, the difference, the test's outcome."""
    means = m.values.mean(axis=1)
    out = []
    for a, b, d, s, pv, pa in zip(ii.tolist(), jj.tolist(), Z.mean(axis=1), stat, p, p_adj):
        sig = bool(pa < alpha)
        out.append(
            {
                "qrels": m.qrels,
                "metric": label,
                "stored": m.metric,
                "run": order[a],
                "other": order[b],
                "mean_run": float(means[a]),
                "mean_other": float(means[b]),
                "diff": float(d),
                "test": test,
                "statistic": num(s),
                "p_value": float(pv),
                "p_adjusted": float(pa),
                "significant": sig,
                "direction": (1 if d > 0 else -1 if d < 0 else 0) if sig else 0,
            }
        )
    return out


def _trials_note(label: str, B: int | None, alpha: float, m: int, method: str) -> list[str]:
    """The note naming the B that a Monte-Carlo p-value needs to pass the (adjusted) threshold."""
    need = min_trials(alpha, m, method)
    if need <= (B or 0):
        return []
    return [
        f"{label}: with B = {B} the smallest possible p-value is 1/(B+1) = {1 / ((B or 0) + 1):.2g}, "
        f"which cannot be significant at alpha = {alpha:g}"
        + (f" after the {method} adjustment over {m} comparisons" if method != "none" else "")
        + f"; use --trials {need} or more"
    ]


def save_comparison(store: StoreHandle, cmp: Comparison, params: dict[str, Any], save: bool, effects: bool) -> None:
    """The comparison as an analysis (``meta_runs`` kind 'compare', ``meta_pair_tests``, ``meta_effects``)."""
    params.update(
        baseline=cmp.baseline,
        test=cmp.test,
        adjust=cmp.adjust,
        alpha=cmp.alpha,
        trials=cmp.trials,
        all_pairs=cmp.all_pairs,
        effects=effects,
        p_values="(count + 1) / (B + 1) for the Monte-Carlo tests",
    )
    an = Analysis(
        "compare",
        params,
        cmp.seed,
        inputs_of(cmp.matrices),
        {"meta_pair_tests": [_pair_row(p) for p in cmp.pairs], "meta_effects": cmp.effects},
    )
    finish(store, an, save)
    cmp.analysis_id = an.analysis_id


def _test(
    test: str,
    X: np.ndarray,
    Z: np.ndarray,
    ii: np.ndarray,
    jj: np.ndarray,
    B: int | None,
    seed: int,
    alpha: float,
    memory: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(statistic, p) per row of Z (the comparisons ii vs jj of the runs x topics matrix X);
    ``memory``: the memory limit in bytes the resampling tests size their work from."""
    if test == "t":
        return paired_t(Z)
    if test == "wilcoxon":
        return wilcoxon(Z)
    assert B is not None
    if test == "randomisation":
        return randomisation(Z, B, seed, memory=memory)
    if test == "bootstrap":
        r = paired_bootstrap(Z, B, seed, alpha, memory=memory)
        return r.t_obs, monte_carlo_p(np.rint(r.asl * B), B)
    D, P, _ = tukey_hsd(X, B, seed, memory=memory)
    return D[ii, jj], P[ii, jj]


def _effects(
    m: ScoreMatrix,
    label: str,
    order: list[str],
    ii: np.ndarray,
    jj: np.ndarray,
    Z: np.ndarray,
    B: int,
    seed: int,
    memory: int | None = None,
) -> list[dict[str, Any]]:
    t_lo, t_hi = fx.t_interval(Z)
    b_lo, b_hi = fx.bootstrap_interval(Z, B, seed, memory=memory)
    dz, sm = fx.d_z(Z), fx.smd(Z, m.values)
    return [
        {
            "qrels": m.qrels,
            "metric": m.metric,
            "run": order[a],
            "other": order[b],
            "n_topics": Z.shape[1],
            "diff": float(Z[r].mean()),
            "ci_t_lo": float(t_lo[r]),
            "ci_t_hi": float(t_hi[r]),
            "ci_boot_lo": float(b_lo[r]),
            "ci_boot_hi": float(b_hi[r]),
            "d_z": num(dz[r]),
            "smd": num(sm[r]),
        }
        for r, (a, b) in enumerate(zip(ii.tolist(), jj.tolist()))
    ]


def _pair_row(p: dict[str, Any]) -> dict[str, Any]:
    """The comparison as a ``meta_pair_tests`` row (run_a = the run compared, run_b = the other)."""
    return {
        "qrels": p["qrels"],
        "metric": p["stored"],
        "run_a": p["run"],
        "run_b": p["other"],
        "mean_a": p["mean_run"],
        "mean_b": p["mean_other"],
        "diff": p["diff"],
        "test": p["test"],
        "statistic": p["statistic"],
        "p_value": p["p_value"],
        "p_adjusted": p["p_adjusted"],
        "significant": p["significant"],
    }
