"""Evaluation of a store's runs: the one path from (qrels, runs, metrics, options) to stored
scores and a result.

Every evaluation of stored runs goes through :func:`evaluate_qrels_sets`: ``Store.evaluate``
(:func:`evaluate_runs`, one qrels set), ``evalstore eval`` on a store, bulk evaluation of
subsamples and the score matrices of the meta-evaluation. (Runs given in memory or as files,
without a store, go through :class:`evalstore.Evaluator`, which runs the same SQL blocks.)
It resolves names to ids and opens an :class:`~evalstore.evaluation.context.EvaluationContext`
(the plan, computed once; the temporary tables; the one writer of scores), which computes every
metric for every (qrels set, run) not reused from stored evaluations and stores the per-topic
scores (unless ``save=False``; evaluating the same thing again replaces the earlier rows); they are
shaped into an :class:`~evalstore.results.eval_result.EvalResult` per qrels set.

``options``: an :class:`~evalstore.metrics.options.EvalOptions` (``convention``, ``complete``,
``depth``, and ``pool``: for a subsample, treat the parent's judged documents it dropped as "in the
pool but unjudged", what infAP needs; no other metric is affected); ``save``, ``progress``
(progress bar; default: on a terminal), ``recompute`` (with ``save``: compute every score again
instead of reusing stored evaluations of the same run content, qrels content, metric, options and
engine version; see :mod:`evalstore.evaluation.incremental`).

On a store opened read-only, the stored evaluations are reused (unless ``recompute``) and what is
not stored is computed for the result and not stored: each result says so in a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from ..base.arguments import names as arg_names
from ..base.progress import progress_bar
from ..db.run_kinds import kinds_note, runs_of_kinds
from ..db.topic_texts import topic_queries
from ..errors import MetricError
from ..metrics import engine
from ..metrics.gains import declared_gains
from ..metrics.options import EvalOptions
from ..metrics.registry import MetricInstance
from ..results.eval_result import EvalResult
from ..results.query import result_of_table
from . import incremental
from .context import EvaluationContext

if TYPE_CHECKING:
    import duckdb

    from ..db.handle import StoreHandle


def evaluate_runs(
    store: StoreHandle,
    qrels: str,
    runs: Sequence[str] | str | None = None,
    metrics: Sequence[str] | str = ("AP",),
    *,
    options: EvalOptions = EvalOptions(),
    save: bool = True,
    progress: bool | None = None,
    recompute: bool = False,
    kinds: str | Sequence[str] | None = None,
) -> EvalResult:
    """Evaluate ``runs`` (names; all runs when None, or the runs of ``kinds``) against the qrels set
    ``qrels``; see the module docstring for the options."""
    return evaluate_qrels_sets(
        store, [qrels], runs, metrics, options=options, save=save, progress=progress, recompute=recompute, kinds=kinds
    )[qrels]


def evaluate_qrels_sets(
    store: StoreHandle,
    qrels: Sequence[str] | str,
    runs: Sequence[str] | str | None = None,
    metrics: Sequence[str] | str = ("AP",),
    *,
    options: EvalOptions = EvalOptions(),
    save: bool = True,
    progress: bool | None = None,
    recompute: bool = False,
    kinds: str | Sequence[str] | None = None,
) -> dict[str, EvalResult]:
    """Evaluate runs against several qrels sets (e.g. a qrels set and all its subsamples) in bulk:
    one ranked judged list per context covers every qrels set and run at once. Returns
    ``{qrels name: EvalResult}`` in the order given. ``kinds``: all the runs of these kinds
    (:mod:`evalstore.db.run_kinds`) instead of ``runs``; each result notes the kinds it holds
    when not all its runs are submitted ones."""
    qrels_names = arg_names(qrels, "qrels set")
    qrels_ids = {name: store.qrels_id(name) for name in qrels_names}
    run_ids = _run_ids(store, runs, kinds)
    instances = engine.resolve_metrics(metrics)
    con = store.con
    qids = list(qrels_ids.values())
    names_of = {v: k for k, v in qrels_ids.items()}
    read_only = bool(getattr(store, "read_only", False))
    with EvaluationContext(con, qids, instances, options, declared_gains(con, qids), names_of) as ctx:
        reuse = (save or read_only) and not recompute
        work = ctx.reuse(list(run_ids.values())) if reuse else ctx.everything(list(run_ids.values()))
        # only runs without stored scores can be of another collection (such runs are never stored)
        pending = list(dict.fromkeys(r for j in work.jobs for r in j.run_ids))
        unrelated = unrelated_runs(store, qids, pending)
        # a run that shares no topic with any of the qrels sets (another collection's) is not evaluated
        skip = {rid for rid in pending if all(rid in unrelated[q] for q in qids)}
        if len(skip) == len(run_ids):
            raise MetricError(
                f"no run ({', '.join(list(run_ids)[:10])}{' ...' if len(run_ids) > 10 else ''}) shares a topic with "
                f"qrels {', '.join(qrels_names)}: are the runs and the qrels of the same collection? "
                f'(`evalstore sql "SELECT DISTINCT run, topic FROM run_rows"` shows the runs\' topics)'
            )
        work = incremental.chunked(con, incremental.without(work, skip), incremental.CHUNK_LINES)
        total = sum(len(j.instances) * len(j.qrels_ids) for j in work.jobs)
        with progress_bar(total, "evaluating", enabled=progress, min_total=2) as bar:
            for job in work.jobs:
                ctx.compute(job, bar)
        if save and work.jobs and not read_only:
            ctx.save_scores(store)
        ctx.add_reused(work)
        # every score of the results is the store's now (reused, or computed and stored): so are the means
        stored_means = not work.jobs or (save and not read_only)
        results = {
            name: _collect(ctx, name, qid, run_ids, instances, ctx.names, unrelated[qid], stored_means)
            for name, qid in qrels_ids.items()
        }
    for name, notes in qrels_notes(store, qrels_ids, instances).items():
        results[name].notes += notes
    for name, qid in qrels_ids.items():
        results[name].queries = topic_queries(con, [qid])
        kinds_of = kinds_note(store, list(dict.fromkeys(r for r, *_ in results[name].means)))
        results[name].notes += [kinds_of] if kinds_of else []
    for r in results.values():
        r.reused, r.computed = work.reused, work.computed
        if read_only and save and work.computed:
            r.notes.append(read_only_note(work.computed))
    return results


def read_only_note(computed: int) -> str:
    """What a read-only store did not do for an evaluation."""
    return (
        f"the store is open read-only: {computed} evaluation(s) (run, qrels set, metric) were computed for this "
        f"result and not stored (open the store for writing to store them)"
    )


def unrelated_runs(store: StoreHandle, qrels_ids: Sequence[int], run_ids: Sequence[int]) -> dict[int, set[int]]:
    """``{qrels_id: run ids}``: the runs that share no topic with each qrels set (runs of another
    collection in the same store). They are left out of the qrels set's results with a note."""
    if not run_ids:  # (every score reused: no query)
        return {int(q): set() for q in qrels_ids}
    rows = store.con.execute(
        """WITH rt AS (SELECT DISTINCT run_id, topic FROM run_row_data
                       WHERE run_id IN (SELECT unnest($runs::INTEGER[]))),
                qt AS (SELECT DISTINCT qrels_id, topic FROM qrels_data
                       WHERE qrels_id IN (SELECT unnest($sets::INTEGER[]))),
                answers AS (  -- the answers a set of nugget assignments or support labels judges
                    SELECT qrels_id, run, topic FROM assigned_answer_data UNION ALL
                    SELECT qrels_id, run, topic FROM support_data),
                shared AS (SELECT DISTINCT qt.qrels_id, rt.run_id FROM rt JOIN qt USING (topic)
                           UNION SELECT a.qrels_id, m.run_id FROM answers a JOIN run_meta m ON m.name = a.run)
           SELECT q.qrels_id, r.run_id
           FROM (SELECT unnest($sets::INTEGER[]) AS qrels_id) q CROSS JOIN (SELECT unnest($runs::INTEGER[]) AS run_id) r
           WHERE NOT EXISTS (SELECT 1 FROM shared s WHERE s.qrels_id = q.qrels_id AND s.run_id = r.run_id)""",
        {"runs": list(run_ids), "sets": list(qrels_ids)},
    ).fetchall()
    out: dict[int, set[int]] = {int(q): set() for q in qrels_ids}
    for q, r in rows:
        out[q].add(r)
    return out


def stored_name(store: StoreHandle, qrels: str, metric: str, options: EvalOptions) -> str:
    """The name under which ``metric`` evaluated on ``qrels`` with ``options`` is stored (see
    :mod:`evalstore.metrics.names`)."""
    insts = engine.resolve_metrics([metric])
    if len(insts) != 1:
        raise MetricError(
            f"{metric!r} names {len(insts)} metrics ({', '.join(i.display for i in insts)}); give each on its own"
        )
    qid = store.qrels_id(qrels)
    declared = declared_gains(store.con, [qid])[qid]
    ctx = engine.effective_context(insts[0], declared, options)
    return engine.stored_name(insts[0], ctx, options, declared).metric


def _run_ids(
    store: StoreHandle, runs: Sequence[str] | str | None, kinds: str | Sequence[str] | None = None
) -> dict[str, int]:
    """``{name: run_id}`` of the runs named (all runs, by name, when None: one query; the runs of
    ``kinds`` when given)."""
    if kinds is not None:
        if runs is not None:
            raise MetricError("name the runs or give their kinds, not both (-r or --kind)")
        runs = runs_of_kinds(store, kinds)
    if runs is None:
        ids = {n: int(i) for n, i in store.con.execute("SELECT name, run_id FROM run_meta ORDER BY name").fetchall()}
        if not ids:
            raise MetricError("the store has no runs; ingest some with `evalstore ingest run FILE`")
        return ids
    return {name: store.run_id(name) for name in arg_names(runs, "run")}


def _collect(
    ctx: EvaluationContext,
    qrels: str,
    qrels_id: int,
    run_ids: Mapping[str, int],
    instances: Sequence[MetricInstance],
    names: Mapping[tuple[int, str], engine.StoredName],
    unrelated: AbstractSet[int] = frozenset(),
    stored_means: bool = False,
) -> EvalResult:
    """The result of one qrels set; ``stored_means``: every score of it is stored, so are its means
    (``evaluations.summary``: read instead of summing the scores again, when each is there)."""
    left_out = [r for r, rid in run_ids.items() if rid in unrelated]
    runs = {r: rid for r, rid in run_ids.items() if rid not in unrelated}
    stored = {i.display: names[(qrels_id, i.display)] for i in instances}
    notes = [unrelated_note(left_out, qrels)] if left_out else []
    source, params = ctx.scores(qrels_id)
    result = result_of_table(ctx.con, qrels, stored, runs, source, params, notes)
    means = _stored_means(ctx.con, qrels_id, runs, stored) if stored_means else None
    if means is not None:
        result.means = means
    return result


def _stored_means(
    con: duckdb.DuckDBPyConnection, qrels_id: int, runs: Mapping[str, int], stored: Mapping[str, engine.StoredName]
) -> list[tuple[str, str, float, int]] | None:
    """``EvalResult.means`` of the runs (name -> id, output order) and metrics (display -> stored
    name, request order) on one qrels set, read from their stored evaluations; None when one of them
    has no summary stored (a store layout written before migration 23): the result then computes them."""
    metrics = list(dict.fromkeys(n.metric for n in stored.values()))
    rows = con.execute(
        "SELECT run_id, metric, summary, n_topics FROM evaluations WHERE qrels_id = ? AND summary IS NOT NULL "
        "AND run_id IN (SELECT unnest(?::INTEGER[])) AND metric IN (SELECT unnest(?::VARCHAR[]))",
        [qrels_id, list(runs.values()), metrics],
    ).fetchall()
    found = {(int(r), m): (float(v), int(n)) for r, m, v, n in rows}
    out = []
    for run, rid in runs.items():
        for display, name in stored.items():
            if (rid, name.metric) not in found:
                return None
            out.append((run, display, *found[(rid, name.metric)]))
    return out


def qrels_notes(
    store: StoreHandle, qrels_ids: Mapping[str, int], instances: Sequence[MetricInstance]
) -> dict[str, list[str]]:
    """``{qrels name: notes}``: :func:`metric_notes` of the metrics on each qrels set; the one rule
    of what every evaluation and analysis of stored runs tells about its metrics."""
    facts = {
        int(q): (g, bool(s))
        for q, g, s in store.con.execute(
            "SELECT m.qrels_id, m.max_grade, "
            "EXISTS (SELECT 1 FROM subtopic_qrels_data s WHERE s.qrels_id = m.qrels_id) "
            "FROM qrels_meta m WHERE m.qrels_id IN (SELECT unnest(?::INTEGER[]))",
            [list(qrels_ids.values())],
        ).fetchall()
    }
    return {name: metric_notes(instances, name, *facts[qid]) for name, qid in qrels_ids.items()}


def metric_notes(
    instances: Sequence[MetricInstance], qrels: str, max_grade: int | None, has_subtopics: bool
) -> list[str]:
    """What a reader of the scores should know about the metrics on this qrels set: an
    intent-aware (diversity) metric on a set without subtopic judgments (every topic then counts as
    one subtopic, as ir_measures warns), and a relevance threshold above the set's highest grade
    (every topic then scores as if nothing were relevant)."""
    notes = []
    diversity = [i.display for i in instances if "rl_subtopics" in i.spec.block.reads]
    if diversity and not has_subtopics:
        notes.append(
            f"{', '.join(diversity)} on qrels {qrels!r}: the set has no subtopic judgments, so every topic counts as "
            f"one subtopic and the values are not diversity scores; ingest diversity qrels with --format subtopic "
            f"(or ntcir-intents)"
        )
    for inst in instances:
        rel = inst.context().rel
        if max_grade is not None and rel > max(max_grade, 0):
            notes.append(
                f"{inst.display} on qrels {qrels!r}: no judgment reaches the relevance threshold rel={rel} (the "
                f"highest grade is {max_grade}), so no document counts as relevant"
            )
    return notes


def unrelated_note(runs: Sequence[str], qrels: str | Sequence[str], subsamples: int = 0) -> str:
    """The note on the runs left out of an evaluation of ``qrels`` (a name, or several sets that
    leave out the same runs) because they share no topic with it; ``subsamples``: how many
    subsamples of those sets left out the same runs (said once, not once per subsample)."""
    shown = ", ".join(runs[:10]) + (" ..." if len(runs) > 10 else "")
    names = [qrels] if isinstance(qrels, str) else list(qrels)
    sets = ", ".join(repr(n) for n in names) + (f" and their {subsamples} subsample(s)" if subsamples else "")
    if subsamples and len(names) == 1:
        sets = f"{names[0]!r} and its {subsamples} subsample(s)"
    return f"left out {len(runs)} run(s) that share no topic with qrels {sets}: {shown}"
