"""The :class:`Store` facade and :func:`open`: one object for everything a notebook or the CLI does
with a store.

:class:`Store` is a :class:`~evalstore.db.handle.StoreHandle` (the connection, transactions,
name lookups, ad-hoc SQL: what the library's lower layers use) plus the operations, each a thin
method with explicit arguments that delegates to the module owning the job:
:mod:`evalstore.ingest`, :mod:`evalstore.evaluation.stored`, :mod:`evalstore.comparison`,
:mod:`evalstore.db.drop`, :mod:`evalstore.repro`, :mod:`evalstore.meta`, :mod:`evalstore.subsample`.
A method that takes exactly the arguments of a library function is that function with the store
bound (:func:`_method`: its signature and its docstring, written once, in the library). It sits on
top of them all and none of them imports it; the command line calls its methods.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from . import meta
from .api import evaluate_source
from .base.arguments import names
from .comparison import compare
from .comparison.experiments import store_experiment
from .db.drop import DropPlan, drop, drop_pools, drop_qrels, drop_runs, drop_texts, plan_drop
from .db.handle import StoreHandle
from .db.run_kinds import set_kind
from .errors import ArgumentError, StoreError
from .evaluation.default_qrels import official_measures
from .evaluation.request import EvalRequest, Stored
from .explain.explanation import compare_conventions, explain
from .fusion import Provenance, fuse, provenance, refresh
from .ingest import IngestResult, ingest_qrels, ingest_runs
from .ingest.answers import ingest_answers
from .ingest.datasets import ingest_dataset
from .ingest.nuggets import ingest_assignments, ingest_nuggets
from .ingest.run_export import export_run
from .ingest.support import ingest_support
from .ingest.texts import ingest_docs, ingest_topics
from .intervals.request import NO_INTERVALS, IntervalRequest
from .judges import agree
from .layout import export_store, import_scores, import_store
from .meta.design import design
from .meta.reusability import reusability
from .metrics import sql_functions
from .metrics.options import DEFAULTS, KEYWORDS, EvalOptions, options_of
from .metrics.user.stored import MeasureResult, add_measure, drop_measure, list_measures
from .opening import open_handle
from .pool import build_pool
from .pool.coverage import pool_coverage, pool_sizes
from .pool.leave_out import leave_out_subsamples
from .pool.manage import export_pool, list_pools
from .repro import reproducibility
from .results.across import AcrossBoard
from .results.eval_result import EvalResult
from .subsample import (
    create_subsamples,
    export_qrels,
    list_subsamples,
    plan_drop_subsamples,
    subsample_names,
    topic_sizes,
)

if TYPE_CHECKING:
    import sqlalchemy

P = ParamSpec("P")
R = TypeVar("R")


def _method(fn: Callable[Concatenate[Any, P], R], name: str | None = None) -> Callable[Concatenate[Any, P], R]:
    """The library function ``fn(store, ...)`` as a method of :class:`Store` (named ``name``,
    default ``fn``'s): the same arguments after the store, the same docstring, no second copy of
    either (``inspect.signature`` and ``help`` read them from ``fn``). A function that takes the
    evaluation options (``options``, or ``**kwargs`` passed on to an evaluation) also takes them as
    keywords, the public edge's sugar: ``convention=``, ``complete=``, ``depth=``, ``pool=``
    (:func:`~evalstore.metrics.options.options_of`)."""
    params = inspect.signature(fn).parameters
    takes_options = "options" in params
    passes_on = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())

    @functools.wraps(fn)
    def method(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if takes_options or (passes_on and any(k in kwargs for k in ("options", *KEYWORDS))):
            kwargs["options"] = options_of(kwargs)
        return fn(self, *args, **kwargs)

    if takes_options:
        method.__signature__ = _with_keywords(inspect.signature(fn))  # type: ignore[attr-defined]
    if name is not None:
        method.__name__ = name
        method.__qualname__ = f"Store.{name}"
    return method


def _with_keywords(sig: inspect.Signature) -> inspect.Signature:
    """``sig`` with the evaluation options' keywords (and their defaults) beside ``options``."""
    kw = inspect.Parameter.KEYWORD_ONLY
    out: list[inspect.Parameter] = []
    for p in sig.parameters.values():
        if p.name == "options":
            out += [inspect.Parameter(k, kw, default=getattr(DEFAULTS, k)) for k in KEYWORDS]
            out.append(p.replace(default=None))
        else:
            out.append(p)
    return sig.replace(parameters=out)


def _no_more(kwargs: dict[str, Any]) -> None:
    """Refuse the keyword arguments left over (after the evaluation options were taken)."""
    if kwargs:
        raise ArgumentError(f"unexpected keyword argument {next(iter(kwargs))!r}")


class Store(StoreHandle):
    """An open evaluation store. Use :func:`evalstore.open` to get one.

    The DuckDB connection is ``store.con``; the documented relations (``runs``, ``qrels_sets``,
    ``run_rows``, ``qrels``, ``scores``, ``leaderboard``, ...) can be queried with :meth:`sql`.
    """

    def __enter__(self) -> Store:
        return self

    # ------------------------------------------------------------------ ingestion
    def ingest_run(
        self,
        paths: str | os.PathLike | Iterable | Any,
        *,
        name: str | None = None,
        format: str = "trec",
        replace: bool = False,
        dedupe: bool = False,
        name_from: str = "tag",
        progress: bool | None = None,
        kind: str | None = None,
    ) -> list[IngestResult]:
        """Ingest TREC or NTCIR run file(s), or one run given as a dict / DataFrame / Arrow table
        (with ``name``). One run per TREC file, named ``name``, else by its tag (``name_from='file'``:
        by the file name). ``replace``: other content under a stored name replaces it (its scores
        and the analyses that read it go). ``dedupe``: keep the first of a document listed twice in
        a topic. ``kind``: ``submitted`` (a new run's default) or ``scratch`` (set on runs already
        stored too). One transaction: on any error nothing is stored. See
        :func:`evalstore.ingest.ingest_runs`."""
        return ingest_runs(
            self,
            paths,
            name=name,
            format=format,
            replace=replace,
            dedupe=dedupe,
            name_from=name_from,
            progress=progress,
            kind=kind,
        )

    def ingest_qrels(
        self,
        paths: str | os.PathLike | Iterable | Any,
        *,
        name: str | None = None,
        format: str = "trec",
        replace: bool = False,
        gains: str | Sequence[float] | None = None,
        intent_probs: str | os.PathLike | None = None,
        progress: bool | None = None,
    ) -> list[IngestResult]:
        """Ingest TREC or NTCIR qrels file(s) (each a set named after its file; with ``name`` all
        files form one set), or qrels given as a dict / DataFrame / Arrow table (with ``name``).
        ``gains``: the set's declared gains of levels 1..n (``1:2:3``); ``format='subtopic'`` or
        ``'ntcir-intents'``: diversity judgments, with ``intent_probs`` (a file of ``topic intent
        prob`` lines). See :func:`evalstore.ingest.ingest_qrels`."""
        return ingest_qrels(
            self,
            paths,
            name=name,
            format=format,
            replace=replace,
            gains=gains,
            intent_probs=intent_probs,
            progress=progress,
        )

    ingest_topics = _method(ingest_topics)
    ingest_dataset = _method(ingest_dataset)
    official_measures = _method(official_measures)
    ingest_docs = _method(ingest_docs)
    set_run_kind = _method(set_kind, "set_run_kind")
    # generated answers (TREC RAG), nugget sets, nugget assignments and support labels (docs/rag.md)
    ingest_answers = _method(ingest_answers)
    ingest_nuggets = _method(ingest_nuggets)
    ingest_assignments = _method(ingest_assignments)
    ingest_support = _method(ingest_support)

    def drop_topics(self, names: str | Sequence[str]) -> DropPlan:
        """Remove topic sets (a name or names) with their texts."""
        return drop_texts(self, "topics", names)

    def drop_docs(self, names: str | Sequence[str]) -> DropPlan:
        """Remove doc sets (a name or names) with their texts."""
        return drop_texts(self, "docs", names)

    def drop_nuggets(self, names: str | Sequence[str]) -> DropPlan:
        """Remove nugget sets (a name or names) with their nuggets (not while assignment sets use them)."""
        return drop_texts(self, "nuggets", names)

    plan_drop = _method(plan_drop)

    def drop_runs(self, names: str | Sequence[str]) -> DropPlan:
        """Remove runs (a name or names), their scores and the analyses that read them; see
        :mod:`evalstore.db.drop`."""
        return drop_runs(self, names)

    def drop_qrels(self, names: str | Sequence[str]) -> DropPlan:
        """Remove qrels sets (a name or names), their scores, subsamples and analyses; see
        :mod:`evalstore.db.drop`."""
        return drop_qrels(self, names)

    # ------------------------------------------------------------------ evaluation
    def evaluate(
        self,
        qrels: str,
        runs: str | Sequence[str] | None = None,
        metrics: str | Sequence[str] = ("AP",),
        *,
        convention: str = DEFAULTS.convention,
        complete: bool = DEFAULTS.complete,
        depth: int | None = DEFAULTS.depth,
        pool: bool = DEFAULTS.pool,
        save: bool = True,
        progress: bool | None = None,
        recompute: bool = False,
        ci: str | None = NO_INTERVALS.ci,
        level: float = NO_INTERVALS.level,
        trials: int = NO_INTERVALS.trials,
        seed: int = NO_INTERVALS.seed,
        rank_ci: str | None = NO_INTERVALS.rank_ci,
        kinds: str | Sequence[str] | None = None,
    ) -> EvalResult:
        """Compute ``metrics`` for ``runs`` (all runs when None; all the runs of ``kinds``, such as
        ``"submitted"``, when given) against the qrels set ``qrels``, store the per-topic scores and
        return them (the notes say which kinds of runs the result holds when not only submitted ones).

        ``convention``: ``trec_eval`` (score order), ``trec_eval9`` (scores in single precision),
        ``ntcireval`` (file order, R = 0 topics dropped) or ``ir_measures`` (each metric as its
        ir_measures provider); ``complete``: a qrels topic a run lacks scores 0 (trec_eval ``-c``);
        ``depth``: only the top ``depth`` documents (``-M``); ``pool``: for a subsample, the
        parent's dropped judgments count as pooled but unjudged (infAP); ``save=False``: compute
        without storing; ``recompute``: compute again instead of reusing stored evaluations of the
        same content, metric, options and engine version. See :mod:`evalstore.evaluation.stored`.

        ``ci``: also a confidence interval of every mean, ``t`` or ``bootstrap`` (``trials``
        resamples of the topics drawn with ``seed``) at ``level`` (``result.intervals``; stored
        with the scores, and shown by the leaderboard view, unless ``save=False``). See
        :mod:`evalstore.intervals.means`.

        ``rank_ci``: also each run's rank by each metric with its interval at ``level``,
        ``bootstrap`` (the paired bootstrap over the topics, ``trials`` resamples drawn with
        ``seed``) or ``t`` (``result.rank_intervals``; stored unless ``save=False``: the
        leaderboard view's ``rank_lo``, ``rank_hi``). See :mod:`evalstore.intervals.ranks`."""
        request = EvalRequest(
            metrics, EvalOptions(convention, complete, depth, pool), IntervalRequest(ci, rank_ci, level, trials, seed)
        )
        source = Stored(self, qrels, runs, save=save, progress=progress, recompute=recompute, kinds=kinds)
        return evaluate_source(source, request).result

    def evaluate_subsamples(
        self,
        qrels: str,
        runs: str | Sequence[str] | None = None,
        metrics: str | Sequence[str] = ("AP",),
        subsamples: str | Sequence[str] = "all",
        *,
        include_parent: bool = True,
        ci: str | None = NO_INTERVALS.ci,
        level: float = NO_INTERVALS.level,
        trials: int = NO_INTERVALS.trials,
        seed: int = NO_INTERVALS.seed,
        rank_ci: str | None = NO_INTERVALS.rank_ci,
        save: bool = True,
        progress: bool | None = None,
        recompute: bool = False,
        **options: Any,
    ) -> dict[str, EvalResult]:
        """:meth:`evaluate` for the qrels set ``qrels`` and its ``subsamples`` (``all``, names or
        fractions) in one bulk pass: ``{qrels name: EvalResult}``, the parent first (unless
        ``include_parent=False``), then the subsamples, largest fraction first, then by trial. The
        options (``convention``, ``complete``, ``depth``, ``pool``) and the intervals (``ci``,
        ``rank_ci``, ``level``, ``trials``, ``seed``) are :meth:`evaluate`'s. See
        :func:`evalstore.subsample.evaluate_subsamples`."""
        request = EvalRequest(metrics, options_of(options), IntervalRequest(ci, rank_ci, level, trials, seed))
        _no_more(options)
        source = Stored(self, qrels, runs, subsamples, include_parent, None, save, recompute, progress)
        return {r.qrels: r for r in evaluate_source(source, request).results}

    def leaderboard(
        self,
        qrels: str | Sequence[str],
        runs: str | Sequence[str] | None = None,
        metrics: str | Sequence[str] = ("AP",),
        *,
        agg: str = "mean",
        rank_ci: str | None = NO_INTERVALS.rank_ci,
        level: float = NO_INTERVALS.level,
        trials: int = NO_INTERVALS.trials,
        seed: int = NO_INTERVALS.seed,
        save: bool = True,
        progress: bool | None = None,
        **options: Any,
    ) -> AcrossBoard:
        """One leaderboard of ``runs`` over one or several qrels sets: each set evaluated as
        :meth:`evaluate` does (with its options; stored unless ``save=False``), each run scored over
        the sets by ``agg`` (``mean``: the mean of its per-set means; ``borda``: MTEB's Borda
        points), each set counted once, and ranked by the first metric; ``rank_ci='bootstrap'``:
        each rank with its interval over ``trials`` resamples of every set's topics (``seed``).
        ``.table()``; see :mod:`evalstore.results.across`."""
        request = EvalRequest(metrics, options_of(options), IntervalRequest(None, rank_ci, level, trials, seed))
        _no_more(options)
        source = Stored(self, names(qrels, "qrels set"), runs, agg=agg, save=save, progress=progress)
        board = evaluate_source(source, request).board
        assert board is not None
        return board

    explain = _method(explain)
    compare_conventions = _method(compare_conventions)
    compare = _method(compare)
    agree = _method(agree)
    experiment = _method(store_experiment, "experiment")

    # ------------------------------------------------------------------ meta-evaluation (evalstore.meta)
    kendall = _method(meta.kendall)
    swap = _method(meta.swap)
    discpower = _method(meta.discpower)
    significance_tests = _method(meta.tests, "significance_tests")
    robustness = _method(meta.robustness)

    # ------------------------------------------------------------------ subsamples (evalstore.subsample)
    create_subsamples = _method(create_subsamples)
    list_subsamples = _method(list_subsamples)
    subsample_names = _method(subsample_names)
    subsample_sizes = _method(topic_sizes, "subsample_sizes")
    export_qrels = _method(export_qrels)
    plan_drop_subsamples = _method(plan_drop_subsamples)
    drop = _method(drop)

    # ------------------------------------------------------------------ pools (evalstore.pool)
    pool = _method(build_pool, "pool")
    list_pools = _method(list_pools)
    pool_sizes = _method(pool_sizes)
    pool_coverage = _method(pool_coverage)
    export_pool = _method(export_pool)
    leave_out_subsamples = _method(leave_out_subsamples)
    reusability = _method(reusability)

    def drop_pools(self, names: str | Sequence[str]) -> DropPlan:
        """Remove pools (a name or names) with their documents and contributions."""
        return drop_pools(self, names)

    # ------------------------------------------------------------------ reproducibility and design
    repro = _method(reproducibility, "repro")
    design = _method(design)

    # ------------------------------------------------------------------ runs made from runs
    fuse = _method(fuse)
    refresh_fusion = _method(refresh, "refresh_fusion")

    def provenance(self, run: str) -> Provenance | None:
        """How a fused run was made (its recipe, and the inputs replaced or dropped since); None for
        an ingested run."""
        self.run_id(run)
        return provenance(self, run)

    export_run = _method(export_run)

    # ------------------------------------------------------------------ the Parquet layout (evalstore.layout)
    export_layout = _method(export_store, "export_layout")
    import_layout = _method(import_store, "import_layout")
    import_scores = _method(import_scores)

    # ------------------------------------------------------------------ measures of one's own
    add_measure = _method(add_measure)

    def drop_measure(self, name: str) -> MeasureResult:
        """Remove a measure of one's own the store keeps, and its stored scores."""
        return drop_measure(self, name)

    list_measures = _method(list_measures)

    # ------------------------------------------------------------------ other clients
    def sqlalchemy_engine(self, **kwargs: Any) -> sqlalchemy.engine.Engine:
        """An SQLAlchemy engine (duckdb-engine) whose connections are cursors of this store's
        DuckDB connection, so it sees the same database (also ``:memory:`` stores) and the
        store's SQL functions. Close the store after disposing of the engine."""
        import sqlalchemy  # optional heavy imports, only when asked for
        from duckdb_engine import ConnectionWrapper

        def creator() -> ConnectionWrapper:
            if self.con is None:
                raise StoreError("the store is closed")
            cur = self.con.cursor()
            sql_functions.register(cur)
            return ConnectionWrapper(cur)

        return sqlalchemy.create_engine("duckdb://", creator=creator, **kwargs)


def open(  # noqa: A001
    url_or_path: str | os.PathLike | None = None,
    *,
    read_only: bool = False,
    memory_limit: str | None = None,
    threads: int | None = None,
    temp_directory: str | None = None,
    sandbox: bool = False,
    query_only: bool = False,
    wait: float | None = None,
    create: bool = True,
    yield_to_writers: bool = False,
) -> Store:
    """Open (creating or upgrading if needed) an evaluation store.

    ``url_or_path``: a file path, an SQLAlchemy URL such as ``duckdb:///path.duckdb`` or
    ``duckdb:///:memory:``, ``":memory:"``, or None for ``$EVALSTORE_DB`` / ``./evalstore.duckdb``.
    ``read_only=True`` opens an existing, up-to-date store without taking the write lock (several
    readers may share it); DuckDB then refuses every change.
    ``memory_limit`` (e.g. ``'1.5GB'``), ``threads``, ``temp_directory`` (where DuckDB spills):
    DuckDB's resource settings (default ``$EVALSTORE_MEMORY_LIMIT`` etc.; see
    :class:`~evalstore.db.connection.Settings`).
    ``query_only=True``: for ad-hoc SQL (what ``evalstore sql`` runs): DuckDB opens the store
    read-only, without file or network access (but a spill folder of its own) and with its
    configuration locked, so no statement changes the store, a setting or a file
    (:mod:`evalstore.db.lockdown`); operations that write refuse such a store.
    ``sandbox=True``: for untrusted queries (the web pages): ``query_only`` and DuckDB reaches no
    local file at all (it does not spill either), and evalstore's Python functions over lists,
    which a time limit cannot stop, are not there.
    ``wait``: seconds to keep retrying while another process holds the store; None (the default):
    no retry, except that a writer finding the store held by ``evalstore serve`` waits up to
    :data:`evalstore.db.waiting.SERVER_WAIT` seconds for the server to let it in.
    ``create=False``: a store file that does not exist is an error instead of a new empty store
    (the command line creates stores only in ``ingest``, ``demo`` and ``import store``).
    ``yield_to_writers=True``: a writer of another process waiting for the store (``--wait``) goes
    first: the store counts as busy until it got in (for a reader that opens the store again and
    again, such as ``evalstore serve``; :mod:`evalstore.db.waiting`).
    """
    handle = open_handle(
        url_or_path,
        read_only=read_only,
        memory_limit=memory_limit,
        threads=threads,
        temp_directory=temp_directory,
        sandbox=sandbox,
        query_only=query_only,
        wait=wait,
        create=create,
        yield_to_writers=yield_to_writers,
    )
    return Store(handle.con, handle.location, read_only=handle.read_only, lockdown=handle.lockdown)
