"""The library's entry points: :func:`evaluate_source`, the one path of every evaluation (a source
and a request, :mod:`evalstore.evaluation.request`); :func:`evaluate`, runs and qrels given as
files, dicts or DataFrames evaluated without a store file (for notebooks); :func:`experiment`,
several systems compared in one call (as PyTerrier's ``pt.Experiment``).

``Store.evaluate``, ``Store.evaluate_subsamples``, ``Store.leaderboard``, :func:`evaluate` and
``evalstore eval`` each make one :class:`~evalstore.evaluation.request.EvalRequest` and call
:func:`evaluate_source` once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import evaluation, subsample  # (each kind's evaluation read when a source of that kind comes)
from .base.arguments import metric_names
from .base.memory_limit import check_memory_limit, of_limit, of_store
from .errors import ArgumentError
from .evaluation.default_qrels import default_qrels
from .evaluation.given_answers import answer_lines
from .evaluation.request import EvalRequest, Evaluation, Given, GivenAnswers, OnSpark, Source, Stored, check
from .evaluation.stored import evaluate_runs
from .ingest.sources import is_path, is_ranx
from .intervals.request import NO_INTERVALS, IntervalRequest
from .metrics.options import DEFAULTS, options_from
from .results.across import across_board
from .results.eval_result import EvalResult

if TYPE_CHECKING:
    from .comparison.experiments import Experiment


def evaluate_source(source: Source, request: EvalRequest) -> Evaluation:
    """Evaluate ``request`` on ``source``: the rules of which options go together first
    (:func:`~evalstore.evaluation.request.check`), and a bootstrap interval's B held against the
    memory limit, before any work; then the evaluation in memory (:class:`Given`), in the store
    (:class:`Stored`: one qrels set, with its subsamples, or a leaderboard over several) or on Spark
    (:class:`OnSpark`); then the intervals asked for, attached (and stored with the scores)."""
    check(source, request)
    if isinstance(source, Given):
        return Evaluation([_given(source, request)])
    if isinstance(source, GivenAnswers):
        result = evaluation.evaluate_answers(
            source.qrels, source.answers, request.names, request.options, source.qrels_name
        )
        request.intervals.attach(None, result)
        return Evaluation([result])
    if isinstance(source, OnSpark):
        return Evaluation([_on_spark(source, request)])
    return _stored(source, request)


def _given(source: Given, request: EvalRequest) -> EvalResult:
    limit = source.memory_limit
    memory = of_limit(check_memory_limit(limit)) if limit is not None else None
    request.intervals.check_memory(memory)
    files = is_path(source.runs)
    named = None if files else named_runs(source.runs, source.run_name)
    # run files: a database of its own on every core (the evaluation of many lines); runs in memory:
    # one small query on the process-wide database (unless resources are given)
    threads = source.threads or ((os.cpu_count() or 1) if files else None)
    with evaluation.Evaluator(
        source.qrels,
        request.names,
        options=request.options,
        gains=source.gains,
        qrels_format=source.qrels_format,
        run_format=source.run_format,
        prepare=False,
        threads=threads,
        memory_limit=limit,
        temp_directory=source.temp_directory,
    ) as ev:
        name = str(source.qrels_name)
        result = ev.result(named, name) if named is not None else ev.result_files(source.runs, name)
    request.intervals.attach(None, result, memory=memory)
    return result


def _on_spark(source: OnSpark, request: EvalRequest) -> EvalResult:
    from . import spark  # pyspark is optional: imported only for Spark

    return spark.evaluate_result(
        source.session or spark.session(),
        source.folder,
        qrels=source.qrels,
        metrics=request.names,
        runs=list(source.runs) if source.runs else None,
        options=request.options,
        write=source.write,
    )


def _stored(source: Stored, request: EvalRequest) -> Evaluation:
    store, metrics = source.store, request.names
    request.intervals.check_memory(of_store(store))
    sets = source.qrels_sets() or [default_qrels(store, metrics)]
    how: dict[str, Any] = {
        "options": request.options,
        "save": source.save,
        "progress": source.progress,
        "recompute": source.recompute,
    }
    if source.kinds is not None:  # one qrels set (check): every run of these kinds
        how["kinds"] = source.kinds
    if source.agg is not None:
        results = [evaluate_runs(store, q, source.runs, metrics, **how) for q in sets]
        board = across_board(results, source.agg, request.intervals.ranks, of_store(store))
        board.notes = [n for r in results for n in r.notes] + board.notes
        return Evaluation(results, board)
    if source.subsamples is not None:
        by_set = subsample.evaluate_subsamples(
            store, sets[0], source.runs, metrics, source.subsamples, include_parent=source.include_parent, **how
        )
        results = list(by_set.values())
    else:
        results = [evaluate_runs(store, sets[0], source.runs, metrics, **how)]
    read_only = bool(getattr(store, "read_only", False))
    request.intervals.attach(store, results, save_to_store=source.save and not read_only)
    if read_only and source.save and (request.intervals.means or request.intervals.ranks):
        for r in results:
            r.notes.append("the store is open read-only: the intervals were computed and not stored")
    return Evaluation(results)


def evaluate(
    qrels: Any,
    runs: Any,
    metrics: Sequence[str] | str = ("AP", "nDCG@10"),
    *,
    convention: str = DEFAULTS.convention,
    complete: bool = DEFAULTS.complete,
    depth: int | None = DEFAULTS.depth,
    gains: str | Sequence[float] | None = None,
    qrels_format: str = "trec",
    run_format: str = "trec",
    qrels_name: str = "qrels",
    run_name: str = "run",
    ci: str | None = NO_INTERVALS.ci,
    level: float = NO_INTERVALS.level,
    trials: int = NO_INTERVALS.trials,
    seed: int = NO_INTERVALS.seed,
    rank_ci: str | None = NO_INTERVALS.rank_ci,
    memory_limit: str | None = None,
    threads: int | None = None,
    temp_directory: str | None = None,
) -> EvalResult:
    """Evaluate runs against qrels with evalstore's SQL, without a store file.

    ``qrels``: a path to a qrels file, ``{topic: {doc: grade}}``, a pandas or polars DataFrame or
    a pyarrow Table (``query_id, doc_id, relevance``, ranx's ``q_id, doc_id, score`` or ``topic,
    doc, grade``), namedtuples (ir_datasets' ``qrels_iter()``) or a ranx ``Qrels``.
    ``runs``: one run, or several. One run is ``{topic: {doc: score}}``, a DataFrame, an Arrow
    table, namedtuples (``scoreddocs_iter()``) or a ranx ``Run``, named ``run_name`` (``"run"``; a
    ranx Run keeps its own name). Several are ``{name: run}``, or a path or a list of paths (globs
    allowed; each run named by its tag).
    ``metrics``: names such as ``"AP"``, ``"nDCG@10"``, ``"P(rel=2)@10"`` or trec_eval's ``"map"``;
    ir_measures' measure objects (``ir_measures.nDCG@10``) are read through their names.
    ``convention``, ``complete``, ``depth``: as in :meth:`evalstore.Store.evaluate`; ``gains``: the
    qrels' declared gains (as ``ingest qrels --gains``); ``qrels_format`` / ``run_format``:
    ``'trec'`` or ``'ntcir'`` for files; ``qrels_name``: the name the result gives the qrels.
    ``memory_limit``, ``threads``, ``temp_directory``: DuckDB's resources for this evaluation (as
    :func:`evalstore.open`; ``temp_directory=''`` never spills: beyond the limit the evaluation
    fails). Run files are read in parts of whole topics and evaluated in batches, so memory stays
    bounded however large they are.

    ``ci``, ``rank_ci``, ``level``, ``trials``, ``seed``: the intervals of the means and of the
    ranks, as in :meth:`evalstore.Store.evaluate` (nothing is stored); a bootstrap interval keeps
    within ``memory_limit`` (e.g. ``"2GB"``, ``"50%"``; default: the default limit).

    A run with no rows is an error, except with ``complete=True``: it then scores every topic of
    the qrels as a run that retrieved nothing (0 for most metrics), as trec_eval ``-c`` does.

    Generated answers (docs/rag.md, :mod:`evalstore.evaluation.answers`): ``evaluate(assignments,
    answers, ["strict_vital", "vital"])``, with support labels or qrels as ``qrels`` too.

    Returns an :class:`~evalstore.results.eval_result.EvalResult`: ``.per_topic`` rows
    ``(run, topic, metric, value)``, ``.means`` rows ``(run, metric, mean, n_topics)``,
    ``.table()``, ``.topics()``, ``.to_df()``. For many calls with the same qrels use
    :class:`evalstore.Evaluator`, which keeps them loaded.
    """
    request = EvalRequest(
        metrics,
        options_from(convention=convention, complete=complete, depth=depth),
        IntervalRequest(ci, rank_ci, level, trials, seed),
    )
    answers = answer_lines(runs, run_name)
    source: Source = (
        GivenAnswers(qrels, answers, qrels_name)
        if answers is not None
        else Given(qrels, runs, qrels_name, run_name, qrels_format, run_format, gains, memory_limit, threads,
                   temp_directory)
    )  # fmt: skip
    return evaluate_source(source, request).result


def named_runs(runs: Any, run_name: str = "run") -> dict[str, Any]:
    """``{name: run}`` of runs given in memory: one run (``{topic: {doc: score}}``, a table, a
    DataFrame, namedtuples, a ranx Run) under ``run_name``, or ``{name: run}`` as given."""
    if is_ranx(runs):
        return {str(getattr(runs, "name", None) or run_name): runs}
    if isinstance(runs, Mapping):
        if not runs:
            raise ArgumentError("no runs given: runs is an empty dict")
        if _one_run(runs):
            return {str(run_name): runs}
        return {str(k): v for k, v in runs.items()}
    if isinstance(runs, (str, bytes)) or runs is None:
        raise ArgumentError(f"runs: give a run or {{name: run}}, not {runs!r}")
    return {str(run_name): runs}


def _one_run(runs: Mapping) -> bool:
    """``{topic: {doc: score}}`` (one run) rather than ``{name: run}``: the first document found
    maps to a number."""
    for docs in runs.values():
        if not isinstance(docs, Mapping):
            return False
        for value in docs.values():
            return isinstance(value, (int, float)) and not isinstance(value, bool) or hasattr(value, "__float__")
    return False


def experiment(
    systems: Mapping[str, Any] | Sequence[Any] | Any,
    qrels: Any,
    measures: str | Sequence[Any],
    *,
    names: Sequence[str] | None = None,
    baseline: str | int | Sequence[str | int] | None = None,
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    trials: int = 10000,
    seed: int = 0,
    effects: bool = False,
    missing: str = "error",
    convention: str = DEFAULTS.convention,
    complete: bool = DEFAULTS.complete,
    depth: int | None = DEFAULTS.depth,
    gains: str | Sequence[float] | None = None,
    qrels_name: str = "qrels",
) -> Experiment:
    """Evaluate ``systems`` against ``qrels`` on ``measures`` and compare them with ``baseline``
    (:mod:`evalstore.comparison.experiments`: PyTerrier's ``pt.Experiment`` in one call), without a store.

    ``systems``: ``{name: run}``, a list of runs with ``names`` (each run a DataFrame with
    PyTerrier's ``qid, docno, score`` or ir_measures' / ranx's / evalstore's columns, an Arrow
    table, ``{qid: {docno: score}}``, a ranx Run), or run files (a path, glob or list; each named by
    its tag). ``qrels``: a DataFrame (``qid, docno, label`` and the other spellings), a dict, a
    path. ``baseline``: a system's name or position, or a list of them (one comparison each).
    ``test``: t, wilcoxon, randomisation, bootstrap, tukey-hsd; ``correction``: None, holm,
    bonferroni, bh (``fdr_bh``), by (``fdr_by``), per measure over the systems compared with a
    baseline; ``alpha``: for ``reject``; ``trials``, ``seed``: of the Monte-Carlo tests and the
    bootstrap interval; ``effects``: also the difference to the baseline with its interval and
    d_z; ``missing``: a system without a score on a query: ``error``, ``zero``, ``drop_topics``,
    ``drop_runs``; ``convention``, ``complete``, ``depth``, ``gains``: as :func:`evalstore.evaluate`.
    """

    from .comparison import experiments  # (with the meta-evaluation it uses: not for `evaluate`)

    options = experiments.options_of(test, correction, alpha, trials, seed, effects)  # before any work
    measures = metric_names(measures)
    evaluated = options_from(convention=convention, complete=complete, depth=depth)
    with evaluation.Evaluator(qrels, measures, options=evaluated, gains=gains, prepare=False) as ev:
        if is_path(systems):
            if names is not None:
                raise ArgumentError("run files are named by their tags: leave out names=")
            result = ev.result_files(systems, str(qrels_name))
        else:
            result = ev.result(_named(systems, names), str(qrels_name))
    return experiments.of_result(result, measures, baseline, options, effects, missing)


def _named(systems: Any, names: Sequence[str] | None) -> dict[str, Any]:
    """``{name: run}`` of systems given as a dict, or as a list with ``names``."""
    if isinstance(systems, (list, tuple)):
        if names is None or len(names) != len(systems):
            raise ArgumentError(
                "a list of systems needs names= of the same length (or give {name: run}), as pt.Experiment"
            )
        if len(set(names)) != len(names):
            raise ArgumentError(f"the names of the systems must differ: {list(names)}")
        return {str(n): s for n, s in zip(names, systems)}
    if names is not None:
        raise ArgumentError("names= goes with a list of systems; a dict names its systems itself")
    return dict(named_runs(systems))
