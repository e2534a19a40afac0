"""The result of a comparison (:class:`Comparison`) and how it reads: the paper table (runs x
metrics, means with significance marks; with effect sizes, Δ and its interval beside each mean,
:mod:`.effect_columns`) for readers (terminal, Markdown, LaTeX: that one table and its legend,
ready to paste), the per-topic scores against the baseline, and the long data table (one row per
comparison, every test statistic and effect size) for csv/tsv/json/parquet; the writers of
:mod:`evalstore.output` draw every format.

Marks (:class:`~evalstore.output.table.Marked`): ``▲`` / ``▼`` (LaTeX ``$^{\\uparrow}$`` /
``$^{\\downarrow}$``) after a mean that is significantly better / worse than the baseline's; with
``all_pairs`` each run gets a letter and a mean carries the letters of the runs it is
significantly better than (as ranx does). The best mean of a column is bold in Markdown and LaTeX
(every run that prints it, on a tie). p-values print as ``<0.001`` below 0.001.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..intervals.ranks import describe
from ..output import frames
from ..output.formats import OUTPUT_FORMATS
from ..output.meta_tables import input_notes, p_text
from ..output.table import Marked, Output, Table
from ..output.text import count
from . import effect_columns

if TYPE_CHECKING:
    from ..intervals.means import IntervalSpec
    from ..meta.matrix import ScoreMatrix

#: What each test of ``compare`` is called in the legend.
TEST_NAMES = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomisation": "paired randomisation test",
    "bootstrap": "paired bootstrap test",
    "tukey-hsd": "randomised Tukey HSD test",
}
MONTE_CARLO = ("randomisation", "bootstrap", "tukey-hsd")


@dataclass
class Comparison:
    """The result of :func:`compare`: ``means[i, k]`` is run ``runs[i]``'s mean of ``metrics[k]``
    (``runs[0]`` is the baseline); ``pairs`` one record per comparison and metric."""

    qrels: str
    baseline: str
    runs: list[str]
    metrics: list[str]  # as requested
    stored: list[str]  # as stored in scores.metric
    means: np.ndarray
    n_topics: list[int]
    test: str
    adjust: str
    alpha: float
    trials: int | None
    seed: int | None
    all_pairs: bool
    pairs: list[dict[str, Any]]
    effects: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    matrices: list[ScoreMatrix] = field(default_factory=list)
    analysis_id: int | None = None
    ranks: dict[tuple[str, str], tuple[int, int, int]] = field(default_factory=dict)  # (metric, run) -> rank, lo, hi
    rank_spec: IntervalSpec | None = None
    queries: dict[str, str] = field(default_factory=dict)  # topic -> query text (the store's topic sets)

    def pair(self, run: str, other: str, metric: str) -> dict[str, Any] | None:
        """The comparison record of ``run`` against ``other`` on ``metric`` (either orientation)."""
        for p in self.pairs:
            if p["metric"] == metric and {p["run"], p["other"]} == {run, other}:
                return p
        return None

    def report(self, per_topic: bool = False, dz: bool = False) -> Output:
        """The comparison as a report (:func:`report`): the paper table, or the per-topic scores;
        ``dz``: Cohen's d_z beside Δ (needs effects)."""
        return per_topic_report(self) if per_topic else report(self, dz)

    def to_latex(self, dz: bool = False) -> str:
        """The paper table as LaTeX (booktabs; the test, the marks and Δ in the caption)."""
        return latex(self, dz)

    def to_markdown(self, dz: bool = False) -> str:
        """The paper table as Markdown, with its legend."""
        return markdown(self, dz)

    def to_df(self, per_topic: bool = False) -> Any:
        """A pandas DataFrame: one row per comparison (and effect sizes when computed), or with
        ``per_topic=True`` one row per (metric, topic, run) beside the baseline, worst losses first."""
        return frames.pandas(per_topic_table(self) if per_topic else long_table(self))

    def legend(self) -> str:
        what = TEST_NAMES[self.test]
        parts = [f"{what}"]
        if self.test in MONTE_CARLO:
            parts.append(f"B = {self.trials}, seed {self.seed}")
        parts.append(f"alpha = {self.alpha:g}")
        parts.append("adjustment: " + ("none" if self.adjust == "none" else ADJUST_NAMES[self.adjust]))
        family = "all pairs of runs" if self.all_pairs or self.test == "tukey-hsd" else "runs vs the baseline"
        parts.append(f"family per metric: {family}")
        return "; ".join(parts)


ADJUST_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "by": "Benjamini-Yekutieli"}


UP, DOWN = "▲", "▼"
#: A p-value as printed: ``<0.001`` below 0.001, else three decimals (one rule with the meta tables).
format_p = p_text


def letters(cmp: Comparison) -> list[str]:
    return [chr(ord("a") + i) if i < 26 else f"r{i}" for i in range(len(cmp.runs))]


def _markers(cmp: Comparison, i: int, k: int) -> tuple[str, str]:
    """(direction marker, letters) of run i on metric k."""
    run, metric = cmp.runs[i], cmp.metrics[k]
    mark = ""
    if i > 0:
        p = cmp.pair(run, cmp.baseline, metric)
        if p is not None and p["significant"]:
            better = (p["diff"] > 0) == (p["run"] == run)
            mark = UP if better else DOWN
    beaten = ""
    if cmp.all_pairs:
        lets = letters(cmp)
        for j, other in enumerate(cmp.runs):
            q = cmp.pair(run, other, metric) if j != i else None
            if q is not None and q["significant"] and ((q["diff"] > 0) == (q["run"] == run)):
                beaten += lets[j]
    return mark, beaten


def _best(cmp: Comparison, k: int) -> set[int]:
    """The runs whose mean of metric k, as printed (4 decimals), is the column's best: all of them
    when several print the same value (a reader cannot tell them apart)."""
    shown = [f"{v:.4f}" for v in cmp.means[:, k]]
    top = shown[int(np.argmax(cmp.means[:, k]))]
    return {i for i, v in enumerate(shown) if v == top}


def _run_label(cmp: Comparison, i: int) -> str:
    label = cmp.runs[i] + (" (baseline)" if i == 0 else "")
    return f"({letters(cmp)[i]}) {label}" if cmp.all_pairs else label


def legend(cmp: Comparison, dz: bool = False) -> list[str]:
    """What the marks mean: the test line and the marker line (and Δ, d_z with effect sizes, and the
    rank intervals')."""
    lines = [
        cmp.legend(),
        f"{UP} / {DOWN}: significantly better / worse than the baseline {cmp.baseline}"
        + ("; letters: the runs a mean is significantly better than" if cmp.all_pairs else ""),
    ] + (effect_columns.legend(cmp, dz) if cmp.effects else [])
    if cmp.rank_spec is not None:
        lines.append(f"<metric> rank: rank [lo, hi] among the {len(cmp.runs)} runs compared; {describe(cmp.rank_spec)}")
    return lines


def notes(cmp: Comparison) -> list[str]:
    """What the person at the terminal should know: runs or topics left out, what was stored."""
    lines = input_notes([m.describe() for m in cmp.matrices])
    if cmp.analysis_id is not None:
        tables = "meta_runs, meta_pair_tests" + (", meta_effects" if cmp.effects else "")
        lines.append(f"stored as analysis {cmp.analysis_id} ({tables})")
    return lines + cmp.notes


def paper_table(cmp: Comparison, dz: bool = False) -> Table:
    """Runs x metrics, each cell the mean with its marks (the baseline first, set apart); with
    effect sizes, Δ [95% CI] (and d_z) after each mean, under a head spanning the metric's columns."""
    best = [_best(cmp, k) for k in range(len(cmp.metrics))]
    effects = bool(cmp.effects)
    rows = []
    for i, run in enumerate(cmp.runs):
        cells: list[Any] = [_run_label(cmp, i)]
        for k, stored in enumerate(cmp.stored):
            mark, beaten = _markers(cmp, i, k)
            cells.append(Marked(float(cmp.means[i, k]), bold=i in best[k], mark=mark, letters=beaten))
            if effects:
                cells += effect_columns.cells(cmp, run, stored, dz)
            if cmp.ranks:
                rank, lo, hi = cmp.ranks[(cmp.metrics[k], cmp.runs[i])]
                cells.append(f"{rank} [{lo}, {hi}]")
        rows.append(cells)
    title = f"{cmp.qrels}: runs against {cmp.baseline}"
    heads = [_heads(cmp, label, effects, dz) for label in cmp.metrics]
    columns = ["run", *[full for h in heads for full, _ in h]]
    if not effects:
        return Table(columns, rows, title=title, digits=4, rule_after=(0,))
    return Table(
        columns,
        rows,
        title=title,
        digits=4,
        rule_after=(0,),
        groups=(("", 1), *[(label, len(h)) for label, h in zip(cmp.metrics, heads)]),
        subheads=("run", *[sub for h in heads for _, sub in h]),
    )


def _heads(cmp: Comparison, label: str, effects: bool, dz: bool) -> list[tuple[str, str]]:
    """(column name, sub-head) of one metric's columns in the paper table: the mean, Δ with its
    interval (and d_z) with effect sizes, the rank with its interval when asked."""
    out = effect_columns.heads(label, dz) if effects else [(label, "mean")]
    return out + [(f"{label} rank", "rank")] if cmp.ranks else out


_PAIR_COLUMNS = ["qrels", "metric", "run", "other", "mean_run", "mean_other", "diff", "test", "statistic"]
_PAIR_COLUMNS += ["p_value", "p_adjusted", "significant", "direction"]
_EFFECT_COLUMNS = ["ci_t_lo", "ci_t_hi", "ci_boot_lo", "ci_boot_hi", "d_z", "smd"]
_RANK_COLUMNS = ["rank", "rank_lo", "rank_hi", "other_rank", "other_rank_lo", "other_rank_hi"]


def pairs_table(cmp: Comparison) -> Table:
    """One row per comparison (and effect sizes when computed): the data behind the marks."""
    fx = {(e["metric"], e["run"], e["other"]): e for e in cmp.effects}
    extra = _EFFECT_COLUMNS if cmp.effects else []
    ranked = _RANK_COLUMNS if cmp.ranks else []
    rows = []
    for p in cmp.pairs:
        row = [p[c] for c in _PAIR_COLUMNS]
        e = fx.get((p["stored"], p["run"], p["other"]))
        row += [e[c] if e else None for c in extra]
        if ranked:
            row += [*cmp.ranks[(p["metric"], p["run"])], *cmp.ranks[(p["metric"], p["other"])]]
        rows.append(row)
    return Table(_PAIR_COLUMNS + extra + ranked, rows, title="comparisons", digits=4)


def long_table(cmp: Comparison) -> Table:
    """The data for csv/tsv/json/parquet: one row per comparison, values as computed."""
    t = pairs_table(cmp)
    t.title = None
    t.digits = None
    return t


PER_TOPIC_COLUMNS = ["metric", "topic", "run", "baseline", "run_value", "baseline_value", "diff"]


def per_topic_table(cmp: Comparison) -> Table:
    """Every run's per-topic scores beside the baseline's: one row per (metric, run, topic), the
    run's worst losses against the baseline first (``diff`` = run - baseline); with a ``query``
    column last when the store has the topics' texts."""
    table = _per_topic_rows(cmp)
    if cmp.queries:
        table.columns = [*table.columns, "query"]
        table.rows = [(*row, cmp.queries.get(row[1])) for row in table.rows]
    return table


def _per_topic_rows(cmp: Comparison) -> Table:
    rows: list[tuple[Any, ...]] = []
    for label, m in zip(cmp.metrics, cmp.matrices):
        base = m.values[0]
        for i, run in enumerate(m.runs[1:], start=1):
            diffs = m.values[i] - base
            for j in np.lexsort((np.arange(len(m.topics)), diffs)):
                rows.append(
                    (label, m.topics[j], run, cmp.baseline, float(m.values[i, j]), float(base[j]), float(diffs[j]))
                )
    return Table(list(PER_TOPIC_COLUMNS), rows, title=f"{cmp.qrels}: per-topic scores against {cmp.baseline}")


def per_topic_report(cmp: Comparison) -> Output:
    """The per-topic table as a report (wins, ties and losses per run in the notes)."""
    table = per_topic_table(cmp)
    counts: dict[tuple[str, str], list[int]] = {}
    for metric, _, run, _, _, _, d, *_ in table.rows:
        c = counts.setdefault((metric, run), [0, 0, 0])
        c[0 if d > 0 else 1 if d == 0 else 2] += 1
    lines = [
        f"{run} vs {cmp.baseline} on {metric}: {count(w, 'win')}, {count(t, 'tie')}, {count(lo, 'loss', 'losses')}"
        for (metric, run), (w, t, lo) in counts.items()
    ]
    return Output([table], notes=lines + notes(cmp))


def caption(cmp: Comparison, dz: bool = False) -> str:
    sig = "up/down arrow: significantly better/worse than the baseline"
    if cmp.all_pairs:
        sig += "; letters: runs a mean is significantly better than"
    n = len(cmp.runs) - 1
    effects = "".join(f" {line}." for line in effect_columns.legend(cmp, dz)) if cmp.effects else ""
    return (
        f"Mean scores on {cmp.qrels}, {n} run{'s' if n != 1 else ''} against {cmp.baseline}. {cmp.legend()}. "
        f"{sig}.{effects}"
    )


def report(cmp: Comparison, dz: bool = False) -> Output:
    """The comparison as a report: for readers the paper table alone (means, marks and, with
    effect sizes, Δ with its interval and d_z when ``dz``) with its legend; for programs the long
    table (every comparison with its test, p-values and every effect size)."""
    return Output(
        [paper_table(cmp, dz)],
        data=long_table(cmp),
        legend=legend(cmp, dz),
        notes=notes(cmp),
        caption=caption(cmp, dz),
    )


def text(cmp: Comparison, fmt: str, dz: bool = False) -> str:
    """The report written in ``fmt`` (a text format of :data:`~evalstore.output.formats.OUTPUT_FORMATS`)."""
    buf = io.StringIO()
    OUTPUT_FORMATS[fmt].write(report(cmp, dz), buf)
    return buf.getvalue()


def markdown(cmp: Comparison, dz: bool = False) -> str:
    return text(cmp, "markdown", dz)


def latex(cmp: Comparison, dz: bool = False) -> str:
    """A booktabs table (needs ``\\usepackage{booktabs}``), compilable as is inside a document."""
    return text(cmp, "latex", dz)
