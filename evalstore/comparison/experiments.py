"""One-call comparison of several systems, as PyTerrier's ``pt.Experiment``: every system's
means, and against one or several baselines the queries improved and degraded, the p-values (with
a correction for multiple comparisons) and, when asked, the effect sizes; the per-query scores.

Two entry points make the same :class:`Experiment`:

* :func:`evalstore.experiment` (:mod:`evalstore.api`): runs given in memory (``{name: run}`` of
  DataFrames, Arrow tables, dicts, ranx Runs; or a list with ``names``; or run files) against
  qrels given the same way: nothing is stored;
* :meth:`evalstore.Store.experiment`: runs of a store against one of its qrels sets (the
  ``--qrels`` default rule when none is named, :mod:`evalstore.evaluation.default_qrels`); scores are stored as
  every evaluation stores them, the comparisons only with ``save=True``.

The statistics are ``compare``'s (:func:`evalstore.comparison.core.compare_matrices`): each
baseline's comparison is exactly the :class:`~evalstore.comparison.Comparison` that ``evalstore
compare -b BASELINE`` prints (``.comparisons[baseline]``, its ``.to_latex()``, ``.to_markdown()``).

Tables (pandas, :meth:`Experiment.to_df`), in PyTerrier's column names where they fit:

* ``to_df()``: one row per system: ``name``, the mean of each measure, then per measure
  ``<measure> +`` (queries improved on the baseline), ``<measure> -`` (degraded), ``<measure>
  p-value``, ``<measure> reject`` (significant at ``alpha`` after the correction), ``<measure>
  p-value corrected`` (with a correction) and, with ``effects``, ``<measure> diff``, ``<measure>
  diff lo``, ``<measure> diff hi`` (the difference to the baseline and its 95 % interval: the
  bootstrap interval with the bootstrap test, else the paired t interval) and ``<measure> d_z``.
  The baseline's own row has them empty. With several baselines: a ``baseline`` column and one
  block of rows per baseline;
* ``to_df(perquery=True)``: ``name, qid, measure, value``, one row per system, query and measure
  (PyTerrier's per-query frame); ``perquery="both"``: both, as a tuple;
* :meth:`Experiment.pairs_df`: compare's data table (every comparison with its statistic, raw and
  adjusted p-values and every effect size), all baselines together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.aggregate import aggregate_rows
from ..base.arguments import metric_names
from ..errors import ArgumentError
from ..evaluation.default_qrels import default_qrels
from ..meta.common import columns_for, load
from ..meta.matrix import ScoreMatrix, result_matrices
from ..metrics.options import EvalOptions
from ..output import frames
from ..output.table import Table
from .core import check_options, compare_matrices, save_comparison
from .effect_columns import interval_of
from .result import Comparison, long_table

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: statsmodels' (and so PyTerrier's) names of the corrections evalstore has, and ``None``.
CORRECTIONS = {None: "none", "fdr_bh": "bh", "fdr_by": "by"}


@dataclass
class Experiment:
    """Systems' scores on the same queries and their comparisons with the baselines (see the
    module docstring). ``names``: the systems in the order given; ``matrices``: one per measure
    (systems x queries, after the ``missing`` policy); ``comparisons``: ``{baseline: Comparison}``."""

    names: list[str]
    measures: list[str]
    matrices: list[ScoreMatrix]
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ tables
    def averages(self) -> Table:
        """One row per system (and baseline): PyTerrier's averages table (module docstring)."""
        means = {m.label: dict(zip(m.runs, aggregate_rows(m.values, m.aggregate).tolist())) for m in self.matrices}
        cols = ["name", *self.measures]
        if not self.comparisons:
            return Table(cols, [[n, *[means[m][n] for m in self.measures]] for n in self.names], digits=None)
        several = len(self.comparisons) > 1
        first = next(iter(self.comparisons.values()))
        corrected = first.adjust != "none"
        effects = bool(first.effects)
        extra = ["+", "-", "p-value", "reject"] + (["p-value corrected"] if corrected else [])
        extra += ["diff", "diff lo", "diff hi", "d_z"] if effects else []
        cols = (["baseline"] if several else []) + cols + [f"{m} {e}" for m in self.measures for e in extra]
        rows = []
        for baseline, cmp in self.comparisons.items():
            for name in self.names:
                row: list[Any] = ([baseline] if several else []) + [name, *[means[m][name] for m in self.measures]]
                for mat, measure in zip(cmp.matrices, self.measures):
                    row += _against(cmp, mat, measure, name, corrected, effects)
                rows.append(row)
        return Table(cols, rows, digits=None)

    def perquery(self) -> Table:
        """``name, qid, measure, value``: every system's score of every query and measure."""
        rows = []
        for name in self.names:
            for m in self.matrices:
                values = m.values[m.runs.index(name)]
                rows += [(name, topic, m.label, float(v)) for topic, v in zip(m.topics, values.tolist())]
        return Table(["name", "qid", "measure", "value"], rows, digits=None)

    def to_df(self, perquery: bool | str = False) -> Any:
        """pandas DataFrames: the averages (``perquery=False``), the per-query scores (``True``),
        or both as a tuple (``"both"``), as ``pt.Experiment`` returns them."""
        if perquery == "both":
            return frames.pandas(self.averages()), frames.pandas(self.perquery())
        return frames.pandas(self.perquery() if perquery else self.averages())

    def pairs_df(self) -> Any:
        """compare's data table (``evalstore compare -f csv``) of every baseline, one after the other."""
        tables = [long_table(c) for c in self.comparisons.values()]
        if not tables:
            raise ArgumentError("no baseline was given, so nothing was compared (baseline=NAME)")
        return frames.pandas(Table(tables[0].columns, [r for t in tables for r in t.rows], digits=None))

    # ------------------------------------------------------------------ paper tables
    def to_latex(self, dz: bool = False) -> str:
        """Each baseline's paper table as LaTeX (what ``compare -f latex`` prints)."""
        return "\n".join(c.to_latex(dz) for c in self._compared())

    def to_markdown(self, dz: bool = False) -> str:
        """Each baseline's paper table as Markdown (what ``compare -f markdown`` prints)."""
        return "\n".join(c.to_markdown(dz) for c in self._compared())

    def _compared(self) -> list[Comparison]:
        if not self.comparisons:
            raise ArgumentError("no baseline was given, so there is no comparison table (baseline=NAME)")
        return list(self.comparisons.values())

    def _repr_html_(self) -> str:
        return str(self.to_df()._repr_html_())

    def __repr__(self) -> str:
        baselines = ", ".join(self.comparisons) or "none"
        return (
            f"<Experiment: {len(self.names)} systems x {len(self.matrices[0].topics)} queries x "
            f"{len(self.measures)} measures; baselines: {baselines}; .to_df(), .to_df(perquery=True), .to_latex()>"
        )


def _against(cmp: Comparison, mat: ScoreMatrix, measure: str, name: str, corrected: bool, effects: bool) -> list[Any]:
    """The columns of system ``name`` against the comparison's baseline on one measure."""
    width = 4 + corrected + 4 * effects
    if name == cmp.baseline:
        return [None] * width
    i = mat.runs.index(name)
    diff = mat.values[i] - mat.values[0]
    p = cmp.pair(name, cmp.baseline, measure)
    assert p is not None
    out: list[Any] = [int((diff > 0).sum()), int((diff < 0).sum()), p["p_value"], p["significant"]]
    if corrected:
        out.append(p["p_adjusted"])
    if effects:
        e = next(e for e in cmp.effects if e["metric"] == mat.metric and {e["run"], e["other"]} == {name, cmp.baseline})
        sign = 1.0 if e["run"] == name else -1.0
        ci = interval_of(cmp)
        lo, hi = sorted((sign * e[f"ci_{ci}_lo"], sign * e[f"ci_{ci}_hi"]))
        out += [sign * e["diff"], lo, hi, None if e["d_z"] is None else sign * e["d_z"]]
    return out


# ---------------------------------------------------------------------------------------------
def correction_name(correction: str | None) -> str:
    """evalstore's name of a correction (statsmodels' ``fdr_bh``/``fdr_by`` and None accepted)."""
    return CORRECTIONS.get(correction, correction)  # type: ignore[return-value]


def named_baselines(baseline: Any, names: Sequence[str]) -> list[str]:
    """The baselines: a name, a position in ``names`` (as PyTerrier's), or a list of either."""
    if baseline is None:
        return []
    items = baseline if isinstance(baseline, (list, tuple)) else [baseline]
    out = []
    for b in items:
        if isinstance(b, (int, np.integer)) and not isinstance(b, bool):
            if not 0 <= int(b) < len(names):
                raise ArgumentError(f"baseline {b} is not the position of a system (0..{len(names) - 1})")
            b = names[int(b)]
        if not isinstance(b, str):
            raise ArgumentError(f"a baseline is a system's name or position, not {b!r}")
        if b not in names:
            raise ArgumentError(f"the baseline {b!r} is not one of the systems ({', '.join(names)})")
        out.append(b)
    return list(dict.fromkeys(out))


def options_of(
    test: str, correction: str | None, alpha: float, trials: int, seed: int, effects: bool
) -> dict[str, Any]:
    """The options of an experiment's comparisons, checked (before any work)."""
    return check_options(test, correction_name(correction), alpha, trials, seed, effects)


def of_result(
    result: Any, measures: list[str], baseline: Any, options: dict[str, Any], effects: bool, missing: str
) -> Experiment:
    """The :class:`Experiment` of an evaluation's result: its runs in the order of its means, each
    baseline's comparison."""
    order = list(dict.fromkeys(r for r, _, _, _ in result.means))
    mats = result_matrices(result, order, missing)
    return compared(mats, measures, named_baselines(baseline, mats[0].runs), options, effects)


def compared(
    mats: list[ScoreMatrix], measures: list[str], baselines: list[str], options: dict[str, Any], effects: bool
) -> Experiment:
    """The :class:`Experiment` of score matrices: each baseline's comparison."""
    names = list(mats[0].runs)
    comparisons = {b: compare_matrices(mats, measures, b, effects=effects, **options) for b in baselines}
    notes = list(dict.fromkeys(n for m in mats for n in m.notes))
    return Experiment(names, measures, mats, comparisons, notes)


def store_experiment(
    store: StoreHandle,
    measures: str | Sequence[Any],
    systems: Sequence[str] | None = None,
    qrels: str | None = None,
    *,
    baseline: str | int | Sequence[str | int] | None = None,
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    trials: int = 10000,
    seed: int = 0,
    effects: bool = False,
    missing: str = "error",
    options: EvalOptions = EvalOptions(),
    save: bool = False,
    progress: bool | None = None,
) -> Experiment:
    """PyTerrier's ``pt.Experiment`` in one call: :func:`experiment` on the runs of a store
    (``systems``: run names, default every run sharing topics with the qrels set) on ``measures``
    against its qrels set ``qrels`` (default: the ``--qrels`` rule), compared with one or several
    ``baseline`` runs (``test``, ``correction``: None, holm, bonferroni, bh, by; ``effects``).
    ``.to_df()`` (name, means, ``<measure> +``, ``-``, ``p-value``, ``reject``, ...),
    ``.to_df(perquery=True)`` (name, qid, measure, value), ``.comparisons[baseline]`` (what
    ``evalstore compare`` prints). ``save``: also store each comparison as an analysis
    (``meta_runs`` kind 'compare')."""

    checked = check_options(test, correction_name(correction), alpha, trials, seed, effects)
    measures = metric_names(measures)
    for b in [b for b in (baseline if isinstance(baseline, (list, tuple)) else [baseline]) if isinstance(b, str)]:
        store.run_id(b)  # an unknown name: the closest ones in the error
    qrels = qrels or default_qrels(store, measures)
    mats, params = load(
        store, columns_for(qrels, measures), systems, missing=missing, options=options, progress=progress
    )
    result = compared(mats, measures, named_baselines(baseline, mats[0].runs), checked, effects)
    for cmp in result.comparisons.values():
        save_comparison(store, cmp, dict(params), save, effects)
    return result
