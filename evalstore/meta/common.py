"""What the meta-evaluation analyses share: the Analysis record, score columns and matrices,
parameter checks, the paired tests on every run pair, and persisting.

Each analysis (:mod:`.analyses`, :mod:`.robustness`) takes score columns as ``qrels`` (one name or
several) x ``metrics``, gets their score matrices with :func:`load`, runs, and ends with
:func:`finish` (stores it in the ``meta_*`` relations when asked).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.arguments import metric_names, names
from ..errors import MetaError
from ..metrics.options import EvalOptions
from ..stats.bootstrap import paired_bootstrap
from ..stats.sampling import pair_indices
from ..stats.significance import TESTS, monte_carlo_p, paired_t, randomisation, wilcoxon
from .matrix import Column, ScoreMatrix, normalise_missing, score_matrices, top_runs
from .persist import Analysis, save_analysis

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


def columns_for(qrels: str | Sequence[str], metrics: str | Sequence[str]) -> list[Column]:
    """Score columns: every metric on every qrels set (qrels-major order)."""
    qs, ms = names(qrels, "qrels set"), metric_names(metrics)
    if not qs or not ms:
        raise MetaError("give at least one qrels set and one metric")
    return [Column(q, m) for q in qs for m in ms]


def load(
    store: StoreHandle,
    columns: Sequence[Column],
    runs=None,
    *,
    top: int | None = None,
    top_by: str | None = None,
    missing: str = "error",
    options: EvalOptions = EvalOptions(),
    progress: bool | None = None,
    kinds: str | Sequence[str] | None = None,
) -> tuple[list[ScoreMatrix], dict[str, Any]]:
    """Score matrices of the columns over the same runs (``runs``, or all the runs of ``kinds``),
    and the evaluation parameters used."""
    missing = normalise_missing(missing)
    require_two_runs(store, runs, "meta-evaluation")  # before any score is computed and stored
    if top is not None:
        runs = top_runs(
            store, columns[0].qrels, top_by or columns[0].metric, top, runs, options=options, progress=progress,
            kinds=kinds,
        )  # fmt: skip
        kinds = None  # the top runs are named now
    mats = score_matrices(store, columns, runs, missing=missing, options=options, progress=progress, kinds=kinds)
    if len(mats[0].runs) < 2:
        raise MetaError(f"meta-evaluation needs at least 2 runs, got {len(mats[0].runs)}")
    params = {
        "missing": missing,
        "top": top,
        "top_by": (top_by or columns[0].metric) if top else None,
        **options.as_dict(),
    }
    if kinds is not None:
        params["kinds"] = list(kinds) if not isinstance(kinds, str) else [kinds]
    return mats, params


def require_two_runs(store: StoreHandle, runs, what: str) -> None:
    """Before any work: an analysis over runs needs at least two of them (the runs named, else the
    store's); the same check after the scores are read catches runs left out as missing."""
    n = len(set(names(runs, "run"))) if runs is not None else len(store.run_names())
    if n < 2:
        raise MetaError(f"{what} needs at least 2 runs, got {n}")


def inputs_of(mats: Sequence[ScoreMatrix]) -> dict[str, Any]:
    cols = []
    for m in mats:
        d = m.describe()
        d.pop("runs")
        cols.append(d)
    return {"runs": list(mats[0].runs), "columns": cols}


def finite(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def num(x) -> float | None:
    """NaN -> NULL; +-inf kept (a legitimate t statistic)."""
    x = float(x)
    return None if math.isnan(x) else x


def finish(store: StoreHandle, analysis: Analysis, save: bool) -> Analysis:
    if save:
        save_analysis(store, analysis)
    return analysis


def need_mean(mats: Sequence[ScoreMatrix], what: str) -> None:
    for m in mats:
        if m.aggregate != "mean":
            raise MetaError(
                f"{what} compares arithmetic means of per-topic scores, but {m.label} is summarised "
                f"by {m.aggregate}; use a metric averaged arithmetically"
            )


def pairs_z(m: ScoreMatrix) -> np.ndarray:
    ii, jj = pair_indices(len(m.runs))
    return m.values[ii] - m.values[jj]


def run_tests(
    m: ScoreMatrix,
    tests: Sequence[str],
    *,
    trials: int,
    seed: int,
    alpha: float,
    memory: int | None = None,
    bar=None,
) -> dict[str, dict[str, Any]]:
    """Run the named tests on every pair of the (sorted) matrix: ``{test: {stat, p, ...}}``.
    ``memory``: the memory limit in bytes the resampling tests size their blocks from (the
    samples are drawn again from ``seed`` for each matrix: the same samples, never all held)."""
    Z = pairs_z(m)
    out: dict[str, dict[str, Any]] = {}
    for test in tests:
        if test == "bootstrap":
            r = paired_bootstrap(Z, trials, seed, alpha, progress=bar, memory=memory)
            # asl: Sakai's achieved significance level, count / B (the discriminative power of his
            # papers is defined with it); p: the Monte-Carlo p-value (count + 1) / (B + 1)
            count = np.rint(r.asl * trials)
            out[test] = {
                "stat": r.t_obs,
                "p": monte_carlo_p(count, trials),
                "asl": r.asl,
                "est_diff": r.estimated_diff,
                "result": r,
            }
        elif test == "t":
            t, p = paired_t(Z)
            out[test] = {"stat": t, "p": p}
        elif test == "wilcoxon":
            w, p = wilcoxon(Z)
            out[test] = {"stat": w, "p": p}
        elif test == "randomisation":
            d, p = randomisation(Z, trials, seed, memory=memory)
            out[test] = {"stat": d, "p": p}
        else:
            raise MetaError(f"unknown test {test!r}; use one of {', '.join(TESTS)}")
    return out
