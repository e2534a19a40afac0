"""``evalstore agree``: how far two qrels sets (two judges: NIST assessors and an LLM, say) agree,
on the labels and on the leaderboards they produce; stored as an analysis (``meta_runs`` kind
'agree', rows in ``meta_agree_labels``, ``meta_agree_confusion``, ``meta_agree_ranking``,
``meta_agree_runs``: migrations/0015_judges_rank_intervals.sql).

:func:`agree` reads the label agreement in one SQL pass (:mod:`.labels`) and, for each metric, the
agreement of the two leaderboards of the stored runs (:mod:`.ranking`), evaluating first whatever
has not been evaluated. :meth:`Agreement.to_dict` is the ``--format json`` document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.arguments import metric_names, names
from ..errors import MetaError
from ..meta.common import finish, inputs_of, require_two_runs
from ..meta.matrix import Column, normalise_missing, score_matrices
from ..meta.persist import Analysis
from ..metrics.engine import KIND_TEXT
from ..metrics.options import EvalOptions
from ..stats.sampling import check_seed, check_trials
from ..stats.significance import check_alpha
from .labels import ITEM_TEXT, LabelAgreement, confusion_rows, label_agreement
from .ranking import TESTS, RankingAgreement, flipped, moved, ranking_agreement

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: the metrics of the ranking agreement when none is named, by the kind of the sets: nDCG@10 for
#: relevance judgments (the metric of the judge studies: UMBRELA, LLMJudge, TREC DL); every
#: nuggetizer score for nugget assignments (AutoNuggetizer against manual assignment, TREC 2024
#: RAG); weighted support precision and recall for support labels
DEFAULT_METRICS = {
    "judgments": ("nDCG@10",),
    "nuggets": ("strict_vital", "strict_all", "vital", "all"),
    "support": ("support_precision", "support_recall"),
}
TABLES = ("meta_agree_labels", "meta_agree_confusion", "meta_agree_ranking", "meta_agree_runs")


@dataclass
class Agreement:
    """The result of :func:`agree`: ``labels`` (:class:`~.labels.LabelAgreement`), ``ranking`` (one
    :class:`~.ranking.RankingAgreement` per metric), ``notes`` for the reader."""

    reference: str
    candidate: str
    rel: int
    labels: LabelAgreement
    ranking: list[RankingAgreement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    analysis: Analysis | None = None

    @property
    def analysis_id(self) -> int | None:
        return self.analysis.analysis_id if self.analysis else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: ``labels`` (counts, the confusion matrix with its ``grades``, kappas,
        alphas, and ``per_topic``) and ``ranking`` (per metric: the correlations, the rank changes,
        the significance flips and every run)."""
        la = self.labels
        labels: dict[str, Any] = {k: v for k, v in la.overall.items() if k != "topic"}
        labels["grades"] = la.grades
        labels["confusion"] = [[int(x) for x in row] for row in la.confusion]
        labels["per_topic"] = {r["topic"]: {k: v for k, v in r.items() if k != "topic"} for r in la.topics}
        ranking = {}
        for ra in self.ranking:
            entry = {k: v for k, v in ra.summary.items() if k != "metric"}
            entry["max_rank_change_runs"] = moved(ra)
            entry["flips"] = flipped(ra)
            entry["runs"] = [{k: v for k, v in r.items() if k != "metric"} for r in ra.runs]
            ranking[ra.metric] = entry
        return {
            "reference": self.reference,
            "candidate": self.candidate,
            "rel": self.rel,
            "labels": labels,
            "ranking": ranking,
            "analysis_id": self.analysis_id,
        }


def agree(
    store: StoreHandle,
    reference: str,
    candidate: str,
    metrics: str | Sequence[str] | None = None,
    *,
    rel: int = 1,
    runs: Sequence[str] | None = None,
    test: str = "t",
    alpha: float = 0.05,
    trials: int = 10000,
    seed: int = 0,
    missing: str = "error",
    options: EvalOptions = EvalOptions(),
    save: bool = True,
    progress: bool | None = None,
) -> Agreement:
    """Compare the qrels set ``candidate`` with ``reference``: labels over the pairs judged in both
    (binary relevance at grade >= ``rel``), and, for each of ``metrics`` (default nDCG@10; ``[]``:
    none), the leaderboards of the runs evaluated under both, with the runs whose significance
    (``test`` at ``alpha`` against the reference's best run) flips: label agreement is the confusion
    matrix, Cohen's kappa plain/linear/quadratic and at ``rel``, Krippendorff's alpha
    nominal/ordinal, also per topic; leaderboard agreement is tau-b, rho, tau_AP and the rank
    changes. Stored as an analysis unless ``save=False``; ``.to_dict()`` is the JSON document. See
    the module docstring. Two sets of nugget assignments (or of support labels) compare their
    labels on the (run, topic, nugget) items (the (run, topic, sentence, citation) items) both
    judge, and the leaderboards under each nugget (support) metric: by default every nuggetizer
    score (weighted support precision and recall)."""
    if reference == candidate:
        raise MetaError("give two different qrels sets to compare (--qrels REF --with CAND)")
    ref_id, cand_id = store.qrels_id(reference), store.qrels_id(candidate)
    kind = _kind(store, reference, ref_id, candidate, cand_id)
    _check_rel_and_test(rel, test)
    alpha = check_alpha(alpha)
    trials, seed = check_trials(trials), check_seed(seed)
    missing = normalise_missing(missing)
    chosen = list(DEFAULT_METRICS[kind]) if metrics is None else metric_names(metrics) if metrics else []
    result = Agreement(reference, candidate, int(rel), label_agreement(store, ref_id, cand_id, int(rel), kind))
    if result.labels.overall["n_common"] == 0:
        result.notes.append(f"{reference} and {candidate} have no judged {ITEM_TEXT[kind]} in common")
    mats: list = []
    if chosen and (metrics is not None or store.run_names()):
        cols = [Column(q, m) for m in chosen for q in (reference, candidate)]
        run_list = names(runs, "run") if runs is not None else None
        require_two_runs(store, run_list, "the ranking agreement")  # before any score is stored
        mats = score_matrices(store, cols, run_list, missing=missing, options=options, progress=progress)
        _add_rankings(result, mats, test=test, alpha=alpha, trials=trials, seed=seed)
    elif chosen:
        result.notes.append("the store has no runs: label agreement only")
    params = {
        "reference": reference,
        "candidate": candidate,
        "qrels": [reference, candidate],
        "rel": int(rel),
        "metrics": chosen,
        "test": test,
        "alpha": alpha,
        "trials": trials if test == "randomisation" else None,
        "missing": missing,
        **options.as_dict(),
    }
    inputs = inputs_of(mats) if mats else {"runs": [], "columns": []}
    inputs["qrels"] = [reference, candidate]
    analysis = Analysis("agree", params, seed if test == "randomisation" else None, inputs, _tables(result))
    result.analysis = finish(store, analysis, save)
    return result


def _check_rel_and_test(rel: int, test: str) -> None:
    if isinstance(rel, bool) or not isinstance(rel, (int, np.integer)) or rel < 1:
        raise MetaError(f"--rel is the lowest relevant grade, a whole number >= 1, not {rel!r}")
    if test not in TESTS:
        raise MetaError(f"unknown test {test!r}; use one of {', '.join(TESTS)}")


def _add_rankings(result: Agreement, mats: list, *, test: str, alpha: float, trials: int, seed: int) -> None:
    """The ranking agreement of each metric into ``result``: ``mats`` holds the reference's and the
    candidate's score matrix of each metric, in turn."""
    if len(mats[0].runs) < 2:
        raise MetaError(f"the ranking agreement needs at least 2 runs, got {len(mats[0].runs)}")
    for k in range(0, len(mats), 2):
        ra = ranking_agreement(mats[k], mats[k + 1], test=test, alpha=alpha, trials=trials, seed=seed)
        result.ranking.append(ra)
        result.notes += ra.notes


def _kind(store: StoreHandle, reference: str, ref_id: int, candidate: str, cand_id: int) -> str:
    """The kind both sets are of (relevance judgments, nugget assignments, support labels)."""
    kinds = dict(
        store.con.execute(
            "SELECT qrels_id, kind FROM qrels_meta WHERE qrels_id IN (?, ?)", [ref_id, cand_id]
        ).fetchall()
    )
    ref_kind, cand_kind = kinds.get(ref_id) or "judgments", kinds.get(cand_id) or "judgments"
    if ref_kind != cand_kind:
        raise MetaError(
            f"{reference!r} holds {KIND_TEXT[ref_kind][0]} and {candidate!r} {KIND_TEXT[cand_kind][0]}: agree "
            "compares two sets of one kind"
        )
    return str(ref_kind)


def _tables(a: Agreement) -> dict[str, list[dict[str, Any]]]:
    """The rows stored for an agreement (the tables of migration 0015)."""
    return {
        "meta_agree_labels": [a.labels.overall, *a.labels.topics],
        "meta_agree_confusion": confusion_rows(a.labels),
        "meta_agree_ranking": [ra.summary for ra in a.ranking],
        "meta_agree_runs": [r for ra in a.ranking for r in ra.runs],
    }
