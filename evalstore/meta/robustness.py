"""Robustness of metrics to incomplete judgments (Sakai SIGIR 2007 Secs. 6-7, Figs. 2-3; Bompada et
al. 2007 Sec. 5, Figs. 1-2, Tables 2-5).

Inputs: a full qrels set and its subsamples (``evalstore subsample``; Buckley-Voorhees reduced
qrels, one per fraction and trial), a set of runs and metrics. For each metric and subsample:

* ``tau``: Kendall's tau between the system ranking on the full qrels and on the subsample
  (tau_b when either ranking has ties, else tau_a); averaged over trials per fraction;
* discriminative power: share of run pairs whose paired test (default the bootstrap, Sakai SIGIR 2007 Sec. 7;
  Bompada et al. use Wilcoxon: ``test='wilcoxon'``) rejects H0 at ``alpha``; averaged over trials;
* Bompada et al.'s confusion matrix: ``C(i, j)``, i = outcome with the full qrels, j = with the
  subsample, 1 = H0 accepted (p >= alpha), 2 = rejected. Summed over trials per fraction:
  ``accuracy = (C11 + C22) / total``, ``TP = C11 / (C11 + C12)``, ``P = C11 / (C11 + C21)``,
  ``g-mean = sqrt(TP * P)``; false positives = C21 (rejected with full, accepted with the
  subsample), false negatives = C12 (the paper's naming);
* the knee (Bompada et al. 2007 Tables 3 and 5): the lowest fraction whose tau (accuracy) exceeds ``threshold``
  (0.9, strictly). The curves need not be monotone; the rule used (``knee``) is the lowest
  fraction f such that the value exceeds the threshold at f *and at every larger fraction
  analysed* (the curve stays above from f on); ``knee_first`` is the lowest fraction exceeding
  the threshold regardless of later dips. The full qrels is the point f = 1 (tau = accuracy = 1),
  so a curve that never stays above has knee 1.

Every subsample is analysed with the same seed, hence the same bootstrap samples (the topic set
does not change under Buckley-Voorhees reduction, which keeps at least one relevant document per
topic), so differences between fractions are not resampling noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.memory_limit import of_store
from ..base.progress import progress_bar
from ..errors import MetaError
from ..stats import budget
from ..stats.correlation import correlate
from ..stats.sampling import check_seed, check_trials
from ..stats.significance import check_alpha, test_name
from ..subsample import list_subsamples, resolve_subsamples
from .common import Analysis, finish, finite, inputs_of, load, need_mean, run_tests
from .matrix import Column, ScoreMatrix

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


def knee(
    fractions: Sequence[float], values: Sequence[float], threshold: float = 0.9
) -> tuple[float | None, float | None]:
    """``(knee, knee_first)`` of a curve (see the module docstring); None when no point exceeds."""
    f = np.asarray(fractions, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    order = np.argsort(f)
    f, v = f[order], v[order]
    above = v > threshold  # NaN compares False
    first = float(f[np.argmax(above)]) if above.any() else None
    # stays above: suffix-all of `above`
    suffix = np.logical_and.accumulate(above[::-1])[::-1]
    stay = float(f[np.argmax(suffix)]) if suffix.any() else None
    return stay, first


def _subsamples(store: StoreHandle, qrels: str, subsamples) -> list[dict[str, Any]]:
    """The Buckley–Voorhees subsamples of ``qrels`` that ``subsamples`` names (leave-out sets have
    no fraction of the judgments: they are another analysis, evalstore.meta.reusability)."""
    names = resolve_subsamples(store, qrels, subsamples, method="buckley_voorhees")
    info = {r["name"]: r for r in list_subsamples(store, qrels).records()}
    return [info[n] for n in names]


def robustness(
    store: StoreHandle,
    qrels: str,
    metrics: str | Sequence[str],
    runs=None,
    *,
    subsamples="all",
    test: str = "bootstrap",
    trials: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    threshold: float = 0.9,
    save: bool = True,
    progress: bool | None = None,
    **kwargs,
) -> Analysis:
    """Tau, discriminative power, confusion matrices and knees of each metric over the subsamples
    of ``qrels`` (``subsamples``: 'all', names, or fractions; see
    :func:`evalstore.subsample.resolve_subsamples`)."""
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if not metrics:
        raise MetaError("give at least one metric")
    test = test_name(test)
    B, seed, alpha = check_trials(trials), check_seed(seed), check_alpha(alpha)
    budget.check_bootstrap(B, of_store(store), test=test == "bootstrap")  # before any work
    subs = _subsamples(store, qrels, subsamples)
    levels = [{"name": qrels, "fraction": 1.0, "trial": 0}] + subs
    cols = [Column(lv["name"], m) for m in metrics for lv in levels]
    mats, params = load(store, cols, runs, progress=progress, **kwargs)
    need_mean(mats, f"the {test} test")
    params.update(_parameters(qrels, test, B, alpha, threshold, subs))
    L = len(levels)
    rows, knees = [], []
    memory = of_store(store)
    by_metric: dict[str, list[dict[str, Any]]] = {}
    with progress_bar(len(mats), f"robustness ({test} test per qrels set)", enabled=progress) as bar:
        for k, metric in enumerate(metrics):
            block = mats[k * L : (k + 1) * L]
            full_means = block[0].means()
            full_sig = None
            out = []
            for lv, m in zip(levels, block):
                res = run_tests(m, [test], trials=B, seed=seed, alpha=alpha, memory=memory)[test]
                bar.advance(1)
                # the bootstrap's discriminative power is Sakai's (ASL = count / B < alpha)
                sig = res["asl" if test == "bootstrap" else "p"] < alpha
                if full_sig is None:
                    full_sig = sig
                out.append(_trial_row(metric, qrels, lv, m, full_means, full_sig, sig))
            rows.extend(out)
            by_metric[metric] = out
            knees += _knees(metric, summarise(out), threshold)
    an = Analysis(
        "robustness",
        params,
        seed,
        inputs_of(mats),
        {"meta_robustness_trials": rows, "meta_knees": knees},
        {"metrics": metrics, "curves": {m: summarise(r) for m, r in by_metric.items()}, "matrices": mats},
    )
    return finish(store, an, save)


def _parameters(
    qrels: str, test: str, B: int, alpha: float, threshold: float, subs: list[dict[str, Any]]
) -> dict[str, Any]:
    """The analysis' parameters beside the common ones: the test, the subsamples, the knee rule."""
    return {
        "parent": qrels,
        "test": test,
        "trials": B,
        "alpha": alpha,
        "threshold": threshold,
        "subsamples": [
            {k: s[k] for k in ("fraction", "trial", "seed", "method", "min_rel", "min_nonrel")} | {"qrels": s["name"]}
            for s in subs
        ],
        "knee_rule": "lowest fraction from which the curve stays above the threshold (knee); "
        "lowest fraction above it (knee_first)",
    }


def _trial_row(
    metric: str,
    parent: str,
    level: dict[str, Any],
    m: ScoreMatrix,
    full_means: np.ndarray,
    full_sig: np.ndarray,
    sig: np.ndarray,
) -> dict[str, Any]:
    """One qrels set (the parent or a subsample) against the parent: Kendall's tau of the system
    rankings and the confusion counts of the test outcomes (c11: neither significant, c12: only the
    subsample, c21: only the parent, c22: both)."""
    n_runs = len(m.runs)
    return {
        "metric": metric,
        "parent": parent,
        "qrels": m.qrels,
        "fraction": float(level["fraction"]),
        "trial": int(level["trial"]),
        "n_runs": n_runs,
        "n_topics": len(m.topics),
        "tau": finite(correlate(full_means, m.means()).tau),
        "n_pairs": n_runs * (n_runs - 1) // 2,
        "n_significant": int(np.count_nonzero(sig)),
        "c11": int(np.count_nonzero(~full_sig & ~sig)),
        "c12": int(np.count_nonzero(~full_sig & sig)),
        "c21": int(np.count_nonzero(full_sig & ~sig)),
        "c22": int(np.count_nonzero(full_sig & sig)),
    }


def _knees(metric: str, curve: list[dict[str, Any]], threshold: float) -> list[dict[str, Any]]:
    """The knees of the tau and accuracy curves (Bompada et al. 2007 Tables 3, 5)."""
    out = []
    for crit in ("tau", "accuracy"):
        fr = [c["fraction"] for c in curve]
        vals = [np.nan if c[crit] is None else c[crit] for c in curve]
        kn, first = knee(fr, vals, threshold)
        out.append({"metric": metric, "criterion": crit, "threshold": threshold, "knee": kn, "knee_first": first})
    return out


def summarise(trial_rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-fraction summary of trial rows (the ``meta_robustness`` view, computed in Python for
    results that are not saved): tau mean/min/max, discriminative power, confusion sums,
    accuracy, g-mean, false positives/negatives. Largest fraction first."""
    groups: dict[float, list[dict[str, Any]]] = {}
    for r in trial_rows:
        groups.setdefault(r["fraction"], []).append(r)
    out = []
    for f in sorted(groups, reverse=True):
        g = groups[f]
        taus = [r["tau"] for r in g if r["tau"] is not None]
        c = {k: sum(r[k] for r in g) for k in ("c11", "c12", "c21", "c22")}
        total = sum(c.values())
        tp = c["c11"] / (c["c11"] + c["c12"]) if c["c11"] + c["c12"] else None
        pp = c["c11"] / (c["c11"] + c["c21"]) if c["c11"] + c["c21"] else None
        out.append(
            {
                "fraction": f,
                "n_trials": len(g),
                "tau_mean": sum(taus) / len(taus) if taus else None,
                "tau_min": min(taus) if taus else None,
                "tau_max": max(taus) if taus else None,
                "tau": sum(taus) / len(taus) if taus else None,
                "disc_power": sum(r["n_significant"] / r["n_pairs"] for r in g) / len(g) if g[0]["n_pairs"] else None,
                **c,
                "accuracy": (c["c11"] + c["c22"]) / total if total else None,
                "g_mean": math.sqrt(tp * pp) if tp is not None and pp is not None else None,
                "false_pos": c["c21"],
                "false_neg": c["c12"],
            }
        )
    return out
