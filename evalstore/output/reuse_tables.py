"""The tables of a reusability analysis (``evalstore meta reusability``; :mod:`evalstore.meta.reusability`):
per metric the agreement of the full and the leave-out leaderboards, the groups left out, and
every run's means and ranks with and without its group's unique documents.

:func:`report` makes what the command prints: for readers the three tables; for csv, tsv and
parquet the runs table (one row per metric and run); for JSON the analysis' document.
"""

from __future__ import annotations

from typing import Any

from .meta_tables import Analysis
from .table import Output, Table

SUMMARY_COLUMNS = ["metric", "n_runs", "n_topics", "tau", "tau_ap", "mean_change", "max_drop", "max_drop_run",
                   "max_rank_drop", "max_rank_drop_run", "n_rank_changes"]  # fmt: skip
GROUP_COLUMNS = ["qrels", "n_runs", "n_unique", "n_removed", "n_removed_relevant"]
RUN_COLUMNS = ["metric", "run", "mean_full", "mean_reduced", "change", "rank_full", "rank_reduced", "rank_change",
               "rank_alone"]  # fmt: skip


def _who(an: Analysis) -> str:
    """What was left out at a time: ``group`` or ``run``."""
    return "run" if an.params.get("leave_one_out") == "runs" else "group"


def summary_table(an: Analysis) -> Table:
    """One row per metric: tau and tau_AP of the two leaderboards, the mean change, the largest
    drops of a mean and of a rank, and how many runs change rank."""
    rows = [[r[c] for c in SUMMARY_COLUMNS] for r in an.rows("meta_reusability")]
    p = an.params
    title = f"reusability of {p.get('qrels')}: depth-{p.get('depth')} pool, leave one {_who(an)} out"
    return Table(SUMMARY_COLUMNS, rows, title=title)


def groups_table(an: Analysis) -> Table:
    """One row per group left out: its leave-out subsample, its runs, the pooled documents only it
    brought and the judged and relevant ones among them (removed from the qrels)."""
    who = _who(an)
    rows = [[g["left_out"], *(g[c] for c in GROUP_COLUMNS)] for g in an.rows("meta_reusability_groups")]
    return Table([who, *GROUP_COLUMNS], rows, title=f"the {who}s left out", digits=None)


def runs_table(an: Analysis) -> Table:
    """Every run per metric (best full rank first): its group, means and ranks with and without
    the group's unique documents, and the changes (negative: the run loses)."""
    who = _who(an)
    rows = []
    for r in an.rows("meta_reusability_runs"):
        full, reduced = r["mean_full"], r["mean_reduced"]
        change = None if full is None or reduced is None else reduced - full
        rows.append([r["metric"], r["run"], r["left_out"], full, reduced, change, r["rank_full"], r["rank_reduced"],
                     r["rank_reduced"] - r["rank_full"], r["rank_alone"]])  # fmt: skip
    cols = [*RUN_COLUMNS[:2], who, *RUN_COLUMNS[2:]]
    return Table(cols, rows, title=f"every run, full qrels and without its {who}'s unique documents")


def legend(an: Analysis) -> list[str]:
    who = _who(an)
    return [
        f"mean_reduced, rank_reduced: each run scored on the qrels without the judged documents only its {who} "
        f"brought into the depth-{an.params.get('depth')} pool (the leave-out leaderboard)",
        "tau: Kendall's tau-b between the full and the leave-out leaderboards; tau_ap: tau_AP of the leave-out "
        "leaderboard against the full one (Yilmaz et al. 2008)",
        "max_drop: the largest loss of a mean (mean_full - mean_reduced); max_rank_drop: the most places a run "
        "falls; rank_change > 0: the run falls",
        "rank_alone: the run's leave-out mean among the other runs' full means (where it would stand on the full "
        "leaderboard had its group not taken part)",
    ]


def report(an: Analysis, document: Any = None, notes: list[str] | None = None) -> Output:
    """The analysis as a report (see the module docstring)."""
    runs = runs_table(an)
    data = Table(runs.columns, runs.rows, None, digits=None)
    return Output(
        [summary_table(an), groups_table(an), runs],
        data=data,
        legend=legend(an),
        notes=list(notes or []),
        document=document,
    )
