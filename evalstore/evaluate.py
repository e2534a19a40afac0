"""Evaluation: the one path from (qrels, runs, metrics, options) to stored scores and a result.

Every entry point goes through :func:`evaluate_many`: ``Store.evaluate``, ``evalstore.evaluate``
(notebooks), ``evalstore eval`` (CLI), bulk evaluation of subsamples and the score matrices of
the meta-evaluation. It resolves names to ids, computes every metric for every (qrels set, run)
with :func:`evalstore.metrics.engine.compute`, stores the per-topic scores (unless
``save=False``; evaluating the same thing again replaces the earlier rows) and shapes them into
an :class:`~evalstore.result.EvalResult` per qrels set.

Options (keyword arguments): ``convention``, ``complete``, ``depth`` (see
:mod:`evalstore.metrics.options`), ``pool`` (for a subsample, treat the parent's judged documents
it dropped as "in the pool but unjudged", what infAP needs; no other metric is affected),
``save``, ``progress`` (progress bar; default: on a terminal).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import duckdb

from .aggregate import aggregate
from .errors import MetricError
from .metrics import engine
from .metrics.gains import declared_gains
from .metrics.options import Options, make_options
from .metrics.ranked_list import drop as drop_ranked_list
from .metrics.registry import MetricInstance
from .progress import progress_bar
from .result import EvalResult
from .version import __version__ as ENGINE_VERSION

if TYPE_CHECKING:
    from .store import Store


def evaluate(
    store: Store,
    qrels: str,
    runs: Sequence[str] | str | None = None,
    metrics: Sequence[str] | str = ("AP",),
    **options: Any,
) -> EvalResult:
    """Evaluate ``runs`` (names; all runs when None) against the qrels set ``qrels``; see the
    module docstring for the options."""
    return evaluate_many(store, [qrels], runs, metrics, **options)[qrels]


def evaluate_many(
    store: Store,
    qrels: Sequence[str] | str,
    runs: Sequence[str] | str | None = None,
    metrics: Sequence[str] | str = ("AP",),
    *,
    convention: str = "trec_eval",
    complete: bool = False,
    depth: int | None = None,
    pool: bool = True,
    save: bool = True,
    progress: bool | None = None,
) -> dict[str, EvalResult]:
    """Evaluate runs against several qrels sets (e.g. a qrels set and all its subsamples) in bulk:
    one ranked judged list per context covers every qrels set and run at once. Returns
    ``{qrels name: EvalResult}`` in the order given."""
    options = make_options(convention, complete, depth, pool)
    qrels_names = [qrels] if isinstance(qrels, str) else list(dict.fromkeys(qrels))
    qrels_ids = {name: store.qrels_id(name) for name in qrels_names}
    run_ids = {name: store.run_id(name) for name in _run_names(store, runs)}
    instances = engine.resolve_metrics(metrics)
    con = store.con
    try:
        with progress_bar(len(instances) * len(qrels_ids), "evaluating", enabled=progress, min_total=2) as bar:
            canon_of = engine.compute(
                con,
                list(qrels_ids.values()),
                list(run_ids.values()),
                instances,
                options,
                declared_gains=declared_gains(con, list(qrels_ids.values())),
                qrels_names={v: k for k, v in qrels_ids.items()},
                progress=bar,
            )
        aggregates = {canon_of[(qid, i.display)]: i.spec.aggregate for qid in qrels_ids.values() for i in instances}
        if save:
            _save(store, aggregates)
        return {
            name: _collect(con, name, qid, run_ids, instances, canon_of, aggregates) for name, qid in qrels_ids.items()
        }
    finally:
        drop_ranked_list(con)
        for t in (engine.OUTPUT_TABLE, "_eval_agg"):
            con.execute(f"DROP TABLE IF EXISTS {t}")


def stored_name(store: Store, qrels: str, metric: str, options: Options) -> str:
    """The canonical name under which ``metric`` evaluated on ``qrels`` with ``options`` is
    stored (parameters sorted, defaults and the qrels set's declared gains filled in)."""
    insts = engine.resolve_metrics([metric])
    if len(insts) != 1:
        raise MetricError(
            f"{metric!r} names {len(insts)} metrics ({', '.join(i.display for i in insts)}); give each on its own"
        )
    qid = store.qrels_id(qrels)
    ctx = engine.effective_context(insts[0], declared_gains(store.con, [qid])[qid])
    return engine.canonical_name(insts[0], ctx, options)


def _run_names(store: Store, runs: Sequence[str] | str | None) -> list[str]:
    if runs is None:
        names = store.run_names()
        if not names:
            raise MetricError("the store has no runs; ingest some with `evalstore ingest run FILE`")
        return names
    return [runs] if isinstance(runs, str) else list(runs)


def _save(store: Store, aggregates: Mapping[str, str]) -> None:
    con = store.con
    out = engine.OUTPUT_TABLE
    with store.transaction():
        con.execute(f"""DELETE FROM score_data WHERE (qrels_id, run_id, metric) IN
                        (SELECT DISTINCT qrels_id, run_id, metric FROM {out})""")
        con.execute(f"""DELETE FROM evaluations WHERE (qrels_id, run_id, metric) IN
                        (SELECT DISTINCT qrels_id, run_id, metric FROM {out})""")
        con.execute(
            f"INSERT INTO score_data (run_id, qrels_id, metric, topic, value) "
            f"SELECT run_id, qrels_id, metric, topic, value FROM {out}"
        )
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _eval_agg AS SELECT unnest(?::VARCHAR[]) AS metric, "
            "unnest(?::VARCHAR[]) AS aggregate",
            [list(aggregates), list(aggregates.values())],
        )
        con.execute(
            f"""INSERT INTO evaluations (run_id, qrels_id, metric, aggregate, n_topics, engine_version)
                SELECT o.run_id, o.qrels_id, o.metric, a.aggregate, count(o.value), ? FROM {out} o
                JOIN _eval_agg a USING (metric) GROUP BY o.run_id, o.qrels_id, o.metric, a.aggregate""",
            [ENGINE_VERSION],
        )


def _collect(
    con: duckdb.DuckDBPyConnection,
    qrels: str,
    qrels_id: int,
    run_ids: Mapping[str, int],
    instances: Sequence[MetricInstance],
    canon_of: Mapping[tuple[int, str], str],
    aggregates: Mapping[str, str],
) -> EvalResult:
    id_to_name = {v: k for k, v in run_ids.items()}
    canonical = {i.display: canon_of[(qrels_id, i.display)] for i in instances}
    rows = con.execute(
        f"SELECT run_id, topic, metric, value FROM {engine.OUTPUT_TABLE} WHERE qrels_id = ? ORDER BY run_id, topic",
        [qrels_id],
    ).fetchall()
    by_canon: dict[str, list[str]] = {}
    for disp, canon in canonical.items():
        by_canon.setdefault(canon, []).append(disp)
    order = {d: i for i, d in enumerate(canonical)}
    per_topic = []
    for run_id, topic, canon, value in rows:
        for disp in by_canon.get(canon, []):
            per_topic.append((id_to_name[run_id], topic, disp, value))
    # trec_eval prints topics in strcmp order: sorted the same way (byte order)
    per_topic.sort(key=lambda r: (r[0], r[1].encode("utf-8"), order.get(r[2], 0)))
    groups: dict[tuple[str, str], list[float]] = {}
    for run, _, disp, value in per_topic:
        groups.setdefault((run, disp), []).append(value)
    means = []
    for run in run_ids:
        for disp in order:
            vals = groups.get((run, disp), [])
            means.append((run, disp, aggregate(vals, aggregates[canonical[disp]]), sum(v is not None for v in vals)))
    return EvalResult(
        qrels=qrels,
        metrics=list(order),
        canonical=canonical,
        per_topic=per_topic,
        means=means,
        aggregates={d: aggregates[canonical[d]] for d in order},
    )
