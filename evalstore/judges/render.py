"""An agreement as tables: for readers the label statistics (with what each means), the confusion
matrix of grades and the ranking agreement per metric (or, asked for, per topic or per run); for
csv/tsv/parquet one long table; for JSON :meth:`~.agree.Agreement.to_dict`."""

from __future__ import annotations

from typing import Any

from ..output.table import Output, Table
from .agree import Agreement
from .labels import STATS
from .ranking import flipped, moved

#: what each label statistic says, as the legend and docs/judges.md explain it
MEANINGS = {
    "n_common": "items judged (grade >= 0) in both sets: (topic, doc) pairs; for answers (run, topic, nugget) or "
    "(run, topic, sentence, citation)",
    "n_ref_only": "items judged in the reference set only",
    "n_cand_only": "items judged in the candidate set only",
    "agreement": "share of common items given the same grade",
    "kappa": "Cohen's kappa: agreement beyond chance, 1 = identical, 0 = chance (scikit-learn)",
    "kappa_linear": "kappa weighting a disagreement by its distance in grades",
    "kappa_quadratic": "kappa weighting a disagreement by its squared distance",
    "kappa_binary": "kappa of relevant (grade >= rel) vs not",
    "alpha_nominal": "Krippendorff's alpha, grades as categories (krippendorff package)",
    "alpha_ordinal": "Krippendorff's alpha, grades as ordered",
    "ref_relevant": "common items relevant (grade >= rel) in the reference set",
    "cand_relevant": "common items relevant in the candidate set",
}
LABEL_COLUMNS = ["n_common", "n_ref_only", "n_cand_only", *STATS, "ref_relevant", "cand_relevant"]
RANKING_COLUMNS = ["metric", "n_runs", "n_topics", "tau_b", "spearman", "tau_ap", "tau_ap_sym", "max_rank_change"]
RUN_COLUMNS = ["metric", "run", "mean_ref", "mean_cand", "rank_ref", "rank_cand", "p_ref", "p_cand", "flip"]


def labels_table(a: Agreement) -> Table:
    """The label statistics of all topics, one per row, with what each means."""
    rows = [(k, a.labels.overall[k], MEANINGS[k]) for k in LABEL_COLUMNS]
    rows[LABEL_COLUMNS.index("kappa_binary")] = (
        "kappa_binary",
        a.labels.overall["kappa_binary"],
        f"kappa of relevant (grade >= {a.rel}) vs not",
    )
    title = f"labels: {a.candidate} against {a.reference}"
    return Table(["statistic", "value", "meaning"], rows, title=title)


def confusion_table(a: Agreement) -> Table:
    """Rows: the reference set's grades; columns: the candidate's; counts of common items."""
    la = a.labels
    cols = [f"{a.reference} \\ {a.candidate}", *(str(g) for g in la.grades), "total"]
    rows = [[str(g), *(int(x) for x in row), int(row.sum())] for g, row in zip(la.grades, la.confusion)]
    rows.append(["total", *(int(x) for x in la.confusion.sum(axis=0)), int(la.confusion.sum())])
    return Table(cols, rows, title="confusion matrix of grades (common items)", digits=None)


def ranking_table(a: Agreement) -> Table:
    """One row per metric: the correlations of the two leaderboards, rank changes and flips."""
    rows = []
    for ra in a.ranking:
        s = ra.summary
        shown = ", ".join(moved(ra)[:3]) + (" ..." if len(moved(ra)) > 3 else "")
        rows.append(
            [
                *(s[c] for c in RANKING_COLUMNS),
                shown,
                s["best_ref"],
                s["best_cand"],
                s["n_flips"],
                ", ".join(flipped(ra)),
            ]
        )
    cols = [*RANKING_COLUMNS, "moved most", "best (ref)", "best (cand)", "flips", "flipped runs"]
    return Table(cols, rows, title=f"leaderboards: {a.candidate} against {a.reference}")


def topics_table(a: Agreement) -> Table:
    """The label statistics of every topic."""
    rows = [[r["topic"], *(r[c] for c in LABEL_COLUMNS)] for r in a.labels.topics]
    return Table(["topic", *LABEL_COLUMNS], rows, title="labels per topic")


def runs_table(a: Agreement) -> Table:
    """Every run under both sets, per metric (best under the reference first)."""
    rows = [[r[c] for c in RUN_COLUMNS] for ra in a.ranking for r in ra.runs]
    return Table(RUN_COLUMNS, rows, title="runs under both sets")


def long_table(a: Agreement) -> Table:
    """Everything as ``scope, metric, statistic, value`` rows (csv, tsv, parquet)."""
    rows: list[list[Any]] = [["labels", None, k, a.labels.overall[k]] for k in LABEL_COLUMNS]
    for ra in a.ranking:
        rows += [["ranking", ra.metric, k, v] for k, v in ra.summary.items() if k != "metric"]
    return Table(["scope", "metric", "statistic", "value"], rows, digits=None)


def legend(a: Agreement) -> list[str]:
    lines = []
    if a.ranking:
        lines += [
            "tau_b, spearman: Kendall's tau-b and Spearman's rho between the two leaderboards (scipy)",
            f"tau_ap: tau_AP of {a.candidate}'s leaderboard against {a.reference}'s (Yilmaz et al. 2008: errors at the "
            "top cost more; ties as Urbano & Marrero 2017); tau_ap_sym: the mean of both directions (AutoJudge)",
            flips_legend(a),
        ]
    return lines


def flips_legend(a: Agreement) -> str:
    """What a flip is, naming the reference run of each metric: the best run under the reference
    set is a metric's own (``best_ref`` of its summary), so with several metrics each is named."""
    s = a.ranking[0].summary
    best = {ra.metric: ra.summary["best_ref"] for ra in a.ranking}
    if len(set(best.values())) == 1:
        against = f"{s['best_ref']} (best under {a.reference})"
    else:
        against = f"the metric's best run under {a.reference} (" + "; ".join(f"{m}: {r}" for m, r in best.items()) + ")"
    return (
        f"flips: runs whose {s['test']} test against {against} is significant (alpha = {s['alpha']:g}) under one set "
        f"and not the other"
    )


def report(a: Agreement, per_topic: bool = False, per_run: bool = False) -> Output:
    """The agreement as a report (see the module docstring)."""
    if per_topic:
        tables = [topics_table(a)]
    elif per_run:
        tables = [runs_table(a)]
    else:
        tables = [labels_table(a), confusion_table(a)] + ([ranking_table(a)] if a.ranking else [])
    data = tables[0] if per_topic or per_run else long_table(a)
    notes = list(a.notes)
    if a.analysis_id is not None:
        notes.append(f"stored as analysis {a.analysis_id} (meta_runs kind 'agree'; rows in meta_agree_*)")
    return Output(tables, data=data, legend=legend(a), notes=notes, document=a.to_dict())
