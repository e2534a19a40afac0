"""Score matrices: per-topic scores of runs x topics for one (qrels set, metric) column.

:func:`score_matrix` / :func:`score_matrices` read the stored per-topic scores (``score_data``,
view ``scores``) and evaluate first, in one bulk pass (:func:`evalstore.evaluation.stored.evaluate_qrels_sets`),
whatever (qrels, run, metric) has not been evaluated yet with the same options.

Runs missing topics. Without ``complete=True`` a run is only scored on the topics it retrieved
something for (trec_eval's default), so some cells of the matrix can be empty. Every paired
analysis needs one value per run and topic, so the policy is explicit (``missing=``):

* ``'error'`` (default): stop and say which runs miss which topics;
* ``'zero'``: an unscored topic scores 0 for that run (what trec_eval -c does);
* ``'drop_topics'``: keep only topics every run was scored on;
* ``'drop_runs'``: keep only runs scored on every topic (across all columns of the call).

The topics of a column are the topics scored for at least one of its runs (byte order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base.aggregate import aggregate_rows
from ..base.arguments import names
from ..db.run_kinds import kinds_note, runs_of_kinds
from ..errors import MetaError
from ..evaluation.stored import evaluate_qrels_sets, qrels_notes, stored_name, unrelated_note, unrelated_runs
from ..metrics.engine import resolve_metrics
from ..metrics.options import EvalOptions

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

MISSING_POLICIES = ("error", "zero", "drop_topics", "drop_runs")


@dataclass
class ScoreMatrix:
    """Per-topic scores of one column: ``values[i, j]`` = score of ``runs[i]`` on ``topics[j]``."""

    qrels: str
    metric: str  # canonical name, as stored in ``scores.metric``
    label: str  # the name as requested (e.g. 'AP(rel=2)')
    runs: list[str]
    topics: list[str]
    values: np.ndarray
    aggregate: str = "mean"
    filled: int = 0  # cells set to 0 by missing='zero'
    dropped_topics: list[str] = field(default_factory=list)
    dropped_runs: list[str] = field(default_factory=list)
    unrelated_runs: list[str] = field(default_factory=list)  # store runs sharing no topic with the qrels set
    notes: list[str] = field(default_factory=list)  # what a reader should know about the metric on the set

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape

    def means(self) -> np.ndarray:
        """Per-run summary with the metric's aggregate (mean, gmean as trec_eval, or sum)."""
        m = aggregate_rows(self.values, self.aggregate)
        # aggregate() sums with fsum, so the same per-topic values give the same mean in any order;
        # rounding to 12 decimals also ties runs whose per-topic values differ in the last bits.
        return np.round(m, 12)

    def subset(self, runs: Sequence[str]) -> ScoreMatrix:
        pos = {r: i for i, r in enumerate(self.runs)}
        idx = [pos[r] for r in runs]
        return ScoreMatrix(
            self.qrels,
            self.metric,
            self.label,
            list(runs),
            list(self.topics),
            self.values[idx],
            self.aggregate,
            self.filled,
            list(self.dropped_topics),
            list(self.dropped_runs) + [r for r in self.runs if r not in set(runs)],
            notes=list(self.notes),
        )

    def sorted_by_mean(self) -> ScoreMatrix:
        """Runs ordered by descending summary score (ties by name), so pairs (i < j) put the
        better run first."""
        m = self.means()
        order = sorted(range(len(self.runs)), key=lambda i: (-m[i], self.runs[i]))
        return self.subset([self.runs[i] for i in order])

    def sha256(self) -> str:
        """Fingerprint of the exact input (runs, topics, values as float64 bytes)."""
        h = hashlib.sha256()
        h.update("\x1f".join(self.runs).encode())
        h.update(b"\x1e")
        h.update("\x1f".join(self.topics).encode())
        h.update(b"\x1e")
        h.update(np.ascontiguousarray(self.values, dtype="<f8").tobytes())
        return h.hexdigest()

    def describe(self) -> dict:
        return (
            {
                "qrels": self.qrels,
                "metric": self.metric,
                "label": self.label,
                "runs": list(self.runs),
                "topics": list(self.topics),
                "aggregate": self.aggregate,
                "filled_with_zero": self.filled,
                "dropped_topics": list(self.dropped_topics),
                "dropped_runs": list(self.dropped_runs),
                "sha256": self.sha256(),
            }
            | ({"unrelated_runs": list(self.unrelated_runs)} if self.unrelated_runs else {})
            | ({"notes": list(self.notes)} if self.notes else {})
        )


@dataclass(frozen=True)
class Column:
    qrels: str
    metric: str

    def label(self, multi_qrels: bool) -> str:
        return f"{self.metric} [{self.qrels}]" if multi_qrels else self.metric


def normalise_missing(missing: str) -> str:
    m = missing.replace("-", "_").lower()
    if m not in MISSING_POLICIES:
        raise MetaError(
            f"unknown missing-topic policy {missing!r}; use one of "
            f"{', '.join(p.replace('_', '-') for p in MISSING_POLICIES)}"
        )
    return m


def canonical_metric(
    store: StoreHandle,
    qrels: str,
    metric: str,
    *,
    options: EvalOptions = EvalOptions(),
) -> str:
    """The canonical name under which ``metric`` evaluated on ``qrels`` with these options is
    stored (parameters sorted, defaults and the qrels set's declared gains filled in)."""
    return stored_name(store, qrels, metric, options)


def _run_ids(
    store: StoreHandle, runs: Sequence[str] | None, kinds: str | Sequence[str] | None = None
) -> tuple[list[str], list[int]]:
    if kinds is not None:
        if runs is not None:
            raise MetaError("name the runs or give their kinds, not both (-r or --kind)")
        runs = runs_of_kinds(store, kinds)
    if runs is None:
        runs = store.run_names()
        if not runs:
            raise MetaError("the store has no runs; ingest some with `evalstore ingest run FILE`")
    runs = names(runs, "run")
    return runs, [store.run_id(r) for r in runs]


def score_matrices(
    store: StoreHandle,
    columns: Sequence[Column | tuple[str, str]],
    runs: Sequence[str] | None = None,
    *,
    missing: str = "error",
    evaluate: bool = True,
    options: EvalOptions = EvalOptions(),
    progress: bool | None = None,
    kinds: str | Sequence[str] | None = None,
) -> list[ScoreMatrix]:
    """One :class:`ScoreMatrix` per column, all over the same runs (in the order given; all runs
    of the store by name when None). Unevaluated (qrels, run, metric) combinations are evaluated
    first, all in one bulk pass, unless ``evaluate=False`` (then they are an error)."""
    missing = normalise_missing(missing)
    cols = [c if isinstance(c, Column) else Column(*c) for c in columns]
    if not cols:
        raise MetaError("no score column given (a qrels set and a metric)")
    every_run = runs is None
    runs, run_ids = _run_ids(store, runs, kinds)
    canon = [canonical_metric(store, c.qrels, c.metric, options=options) for c in cols]
    qids = [store.qrels_id(c.qrels) for c in cols]
    left_out: list[str] = []
    if every_run:  # all runs of the store: leave out those of another collection (no topic in common)
        unrelated = set().union(*unrelated_runs(store, qids, run_ids).values())
        left_out = [r for r, rid in zip(runs, run_ids) if rid in unrelated]
        runs = [r for r, rid in zip(runs, run_ids) if rid not in unrelated]
        run_ids = [rid for rid in run_ids if rid not in unrelated]
        if not runs:
            shown = ", ".join(dict.fromkeys(c.qrels for c in cols))
            raise MetaError(f"no run of the store shares a topic with qrels {shown}")
    con = store.con
    todo_qrels: list[str] = []
    todo_metrics: list[str] = []
    todo_runs: list[str] = []
    for c, name, qid in zip(cols, canon, qids):
        done = {
            r
            for (r,) in con.execute(
                "SELECT run_id FROM evaluations WHERE qrels_id = ? AND metric = ? "
                "AND run_id IN (SELECT unnest(?::INTEGER[]))",
                [qid, name, run_ids],
            ).fetchall()
        }
        lacking = [r for r, rid in zip(runs, run_ids) if rid not in done]
        if lacking:
            todo_qrels.append(c.qrels)
            todo_metrics.append(c.metric)
            todo_runs.extend(lacking)
    if todo_qrels:
        if not evaluate:
            raise MetaError(
                f"{todo_metrics[0]} has not been evaluated on {todo_qrels[0]} for every run; "
                f"run `evalstore eval` first or allow evaluation"
            )
        evaluate_qrels_sets(
            store,
            list(dict.fromkeys(todo_qrels)),
            list(dict.fromkeys(todo_runs)),
            list(dict.fromkeys(todo_metrics)),
            options=options,
            progress=progress,
        )
    mats = [_fetch(store, c, name, qid, runs, run_ids) for c, name, qid in zip(cols, canon, qids)]
    left_out_note = [_unrelated_note(store, left_out, qids)] if left_out else []
    left_out_note += [k] if (k := kinds_note(store, runs, "the runs include")) else []
    for m, qid in zip(mats, qids):
        m.unrelated_runs = list(left_out)
        m.notes = left_out_note + qrels_notes(store, {m.qrels: qid}, resolve_metrics([m.label]))[m.qrels]
    return _apply_missing(mats, missing)


def score_matrix(
    store: StoreHandle, qrels: str, metric: str, runs: Sequence[str] | None = None, **kwargs
) -> ScoreMatrix:
    """Per-topic scores of ``runs`` x topics for one (qrels, metric); see :func:`score_matrices`."""
    return score_matrices(store, [Column(qrels, metric)], runs, **kwargs)[0]


def _fetch(
    store: StoreHandle, col: Column, canonical: str, qid: int, runs: list[str], run_ids: list[int]
) -> ScoreMatrix:
    con = store.con
    data = con.execute(
        """SELECT s.run_id, s.topic, s.value FROM score_data s
                          WHERE s.qrels_id = ? AND s.metric = ? AND s.run_id IN (SELECT unnest(?::INTEGER[]))""",
        [qid, canonical, run_ids],
    ).fetchnumpy()
    agg = (
        con.execute(
            "SELECT any_value(aggregate) FROM evaluations WHERE qrels_id = ? AND metric = ?", [qid, canonical]
        ).fetchall()[0][0]
        or "mean"
    )
    rid = np.asarray(data["run_id"], dtype=np.int64)
    topic_arr = np.asarray(data["topic"], dtype=object)
    vals = np.ma.filled(np.ma.asarray(data["value"], dtype=np.float64), np.nan)
    if rid.size:
        topics, tpos = np.unique(topic_arr.astype(str), return_inverse=True)
    else:
        topics, tpos = np.array([], dtype=str), np.array([], dtype=np.int64)
    order = np.argsort(np.asarray(run_ids))
    sorted_ids = np.asarray(run_ids)[order]
    rpos = order[np.searchsorted(sorted_ids, rid)]
    values = np.full((len(runs), len(topics)), np.nan)
    values[rpos, tpos] = vals
    return ScoreMatrix(col.qrels, canonical, col.metric, list(runs), [str(t) for t in topics], values, agg)


def result_matrices(result: Any, runs: Sequence[str] | None = None, missing: str = "error") -> list[ScoreMatrix]:
    """One :class:`ScoreMatrix` per metric of an :class:`~evalstore.results.eval_result.EvalResult` (runs
    evaluated in memory: :func:`evalstore.evaluate`, :class:`evalstore.Evaluator`), over ``runs``
    (default: the result's, in its order), with the ``missing`` policy of :func:`score_matrices`;
    the result's notes go with every matrix."""
    missing = normalise_missing(missing)
    order = list(runs) if runs is not None else list(dict.fromkeys(r for r, _, _, _ in result.means))
    mats = []
    for metric in result.metrics:
        topics, values = result.score_matrix(metric, order)
        stored = result.stored_names.get(metric, metric)
        mats.append(
            ScoreMatrix(
                result.qrels,
                stored,
                metric,
                order,
                topics,
                values,
                result.aggregates.get(metric, "mean"),
                notes=list(result.notes),
            )
        )
    return _apply_missing(mats, missing)


def _unrelated_note(store: StoreHandle, left_out: Sequence[str], qrels_ids: Sequence[int]) -> str:
    """One note for the runs left out of every column (the same runs: those that share no topic
    with the columns' sets), naming the judged sets and counting their subsamples."""
    rows = store.con.execute(
        "SELECT coalesce(p.name, m.name), s.qrels_id IS NOT NULL FROM qrels_meta m "
        "LEFT JOIN subsample_meta s USING (qrels_id) LEFT JOIN qrels_meta p ON p.qrels_id = s.parent_id "
        "WHERE m.qrels_id IN (SELECT unnest(?::INTEGER[])) ORDER BY m.qrels_id",
        [list(dict.fromkeys(qrels_ids))],
    ).fetchall()
    return unrelated_note(left_out, list(dict.fromkeys(str(n) for n, _ in rows)), sum(bool(s) for _, s in rows))


def _apply_missing(mats: list[ScoreMatrix], policy: str) -> list[ScoreMatrix]:
    holes = [np.isnan(m.values) for m in mats]
    if not any(h.any() for h in holes):
        return mats
    if policy == "error":
        m, h = next((m, h) for m, h in zip(mats, holes) if h.any())
        per_run = h.sum(axis=1)
        bad = [(m.runs[i], int(per_run[i])) for i in np.nonzero(per_run)[0]]
        shown = ", ".join(f"{r} ({k} of {len(m.topics)} topics)" for r, k in bad[:5])
        raise MetaError(
            f"{len(bad)} run(s) have no {m.label} score on some topics of qrels {m.qrels!r}: {shown}"
            f"{' ...' if len(bad) > 5 else ''}. Paired analyses need every run on every topic: choose "
            f"missing='zero' (unscored topics score 0, as trec_eval -c), 'drop_topics' or 'drop_runs' "
            f"(CLI: --missing zero|drop-topics|drop-runs), or evaluate with complete=True (--complete)"
        )
    if policy == "zero":
        for m, h in zip(mats, holes):
            m.filled = int(h.sum())
            m.values = np.where(h, 0.0, m.values)
        return mats
    if policy == "drop_topics":
        for m, h in zip(mats, holes):
            keep = ~h.any(axis=0)
            m.dropped_topics = [t for t, k in zip(m.topics, keep) if not k]
            m.topics = [t for t, k in zip(m.topics, keep) if k]
            m.values = m.values[:, keep]
        return mats
    # drop_runs: a run must be complete in every column
    keep = ~np.any(np.stack([h.any(axis=1) for h in holes]), axis=0)
    if keep.sum() < 2:
        raise MetaError("fewer than 2 runs are scored on every topic; use missing='zero' or 'drop_topics'")
    kept = [r for r, k in zip(mats[0].runs, keep) if k]
    return [m.subset(kept) for m in mats]


def top_runs(
    store: StoreHandle, qrels: str, metric: str, n: int, runs: Sequence[str] | None = None, **kwargs
) -> list[str]:
    """The ``n`` best runs by their summary ``metric`` score on ``qrels`` (as Sakai's "top 30
    runs by Mean AveP"); ties broken by run name. Missing topics follow ``missing=`` (default
    'zero' here, so that a run is not excluded for one unscored topic)."""
    if n < 2:
        raise MetaError(f"--top must be at least 2 runs, not {n}")
    kwargs.setdefault("missing", "zero")
    m = score_matrix(store, qrels, metric, runs, **kwargs)
    return m.sorted_by_mean().runs[:n]
