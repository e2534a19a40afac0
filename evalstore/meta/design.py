"""Topic set size design of a stored collection (Sakai, "Topic set size design", Information
Retrieval Journal 19(3), 2016): V_E from the stored topic x run score matrix of a qrels set and a
metric, then :func:`evalstore.stats.topic_set_size.plan` (the formulas, docs/reproducibility.md), stored as
an analysis (``meta_runs`` kind ``'design'``, a ``meta_design`` row)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import MetaError
from ..metrics.options import EvalOptions
from ..stats.effects import residual_variance
from ..stats.topic_set_size import TESTS, check_positive, check_rates, check_systems, plan
from .common import Analysis, finish, inputs_of, need_mean
from .matrix import score_matrix

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


# --------------------------------------------------------------------------- the analysis
@dataclass
class Design:
    """The result of :func:`design`: the required topics ``n`` (exact) and ``n_approx`` (Sakai's
    closed form), the variance used, and the reverse for the set's current ``n_topics``."""

    qrels: str
    metric: str
    test: str
    alpha: float
    beta: float | None
    min_diff: float
    systems: int | None
    n_runs: int
    n_topics: int
    variance: float
    sigma2: float
    n: int
    n_approx: int
    achieved: float
    min_diff_current: float | None
    power_current: float | None
    analysis: Analysis | None = None
    notes: list[str] = field(default_factory=list)  # the metric on the set (as eval says it)

    @property
    def analysis_id(self) -> int | None:
        return self.analysis.analysis_id if self.analysis is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "variance": self.variance,
            "sigma2": self.sigma2,
            "n_approx": self.n_approx,
            "achieved": self.achieved,
            "min_diff_current": self.min_diff_current,
            "power_current": self.power_current,
            "test": self.test,
            "alpha": self.alpha,
            "beta": self.beta,
            "min_diff": self.min_diff,
            "systems": self.systems,
            "qrels": self.qrels,
            "metric": self.metric,
            "n_runs": self.n_runs,
            "n_topics": self.n_topics,
        }


def design(
    store: StoreHandle,
    qrels: str,
    metric: str,
    *,
    test: str = "t",
    alpha: float = 0.05,
    beta: float = 0.20,
    min_diff: float,
    systems: int | None = None,
    runs: Sequence[str] | None = None,
    missing: str = "error",
    options: EvalOptions = EvalOptions(),
    save: bool = True,
    progress: bool | None = None,
    kinds: str | Sequence[str] | None = None,
) -> Design:
    """Topic set size design (Sakai 2016) from the stored scores of ``runs`` (default: all runs
    sharing topics with ``qrels``) on ``qrels`` and ``metric``: V_E of the runs x topics matrix,
    then the topics needed for ``test`` (``'t'``, ``'anova'``, ``'ci'``) at ``alpha``, ``beta``
    (power 1 - beta; unused by ``'ci'``) and ``min_diff`` (minD; the range for ANOVA; the width
    cap for CI), and what the set's current topics detect. ``systems``: m for ANOVA (default:
    the number of runs of the matrix). ``missing``, ``options``, ``kinds`` (instead of ``runs``,
    every run of these kinds): as the meta analyses. ``save``: store it (a ``meta_design`` row).
    """
    if test not in TESTS:
        raise MetaError(f"unknown design test {test!r}; use one of {', '.join(TESTS)}")
    check_rates(alpha, None if test == "ci" else beta)
    check_positive(min_diff, "the minimum detectable difference" if test != "ci" else "the CI width cap")
    if systems is not None:
        check_systems(systems)
    m = score_matrix(store, qrels, metric, runs, missing=missing, options=options, progress=progress, kinds=kinds)
    need_mean([m], "topic set size design")
    if len(m.runs) < 2 or len(m.topics) < 2:
        raise MetaError(
            f"V_E needs at least 2 runs and 2 topics; {metric} on {qrels} has {len(m.runs)} run(s) and "
            f"{len(m.topics)} topic(s)"
        )
    ve = residual_variance(m.values)
    if not ve > 0:
        raise MetaError(
            f"V_E is 0: the residual variance of {metric} on {qrels} over these {len(m.runs)} runs is 0 (the runs "
            f"score alike on every topic, up to a constant), so no topic set size follows from it; design from runs "
            f"that differ"
        )
    k = systems if systems is not None else (len(m.runs) if test == "anova" else None)
    res = plan(test, ve, alpha=alpha, beta=beta, min_diff=min_diff, systems=k, n_topics=len(m.topics))
    d = Design(
        qrels, m.metric, test, float(alpha), None if test == "ci" else float(beta), float(min_diff), k,
        len(m.runs), len(m.topics), ve, res["sigma2"], res["n"], res["n_approx"], res["achieved"],
        res["min_diff_current"], res["power_current"], notes=list(m.notes),
    )  # fmt: skip
    params = {
        "test": test,
        "alpha": alpha,
        "beta": d.beta,
        "min_diff": min_diff,
        "systems": k,
        "missing": missing,
        **options.as_dict(),
        **({"kinds": [kinds] if isinstance(kinds, str) else list(kinds)} if kinds is not None else {}),
        "variance": "V_E, residual variance of the two-way ANOVA without replication (runs x topics)",
        "solver": "exact noncentral t / F (scipy), expected CI width with c(n); n_approx: Sakai's closed form",
    }
    an = Analysis("design", params, None, inputs_of([m]), {"meta_design": [d.to_dict()]}, {"design": d})
    finish(store, an, save)
    d.analysis = an
    return d
