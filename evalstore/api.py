"""Notebook entry points: evaluate qrels and runs given as files, dicts or DataFrames, without a
store file (:func:`evaluate`), and compare them in one call (:func:`experiment`, as PyTerrier's
``pt.Experiment``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .errors import ArgumentError
from .evaluation.answers import answer_lines, evaluate_answers
from .evaluation.in_memory import Evaluator
from .ingest.sources import is_path, is_ranx
from .interval_request import request as interval_request
from .memory_limit import check_memory_limit, of_limit
from .result import EvalResult

if TYPE_CHECKING:
    from .experiments import Experiment


def evaluate(
    qrels: Any,
    runs: Any,
    metrics: Sequence[str] | str = ("AP", "nDCG@10"),
    *,
    convention: str = "trec_eval",
    complete: bool = False,
    depth: int | None = None,
    gains: str | Sequence[float] | None = None,
    qrels_format: str = "trec",
    run_format: str = "trec",
    qrels_name: str = "qrels",
    run_name: str = "run",
    ci: str | None = None,
    level: float = 0.95,
    trials: int = 1000,
    seed: int = 0,
    rank_ci: str | None = None,
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

    Returns an :class:`~evalstore.result.EvalResult`: ``.per_topic`` rows
    ``(run, topic, metric, value)``, ``.means`` rows ``(run, metric, mean, n_topics)``,
    ``.table()``, ``.topics()``, ``.to_df()``. For many calls with the same qrels use
    :class:`evalstore.Evaluator`, which keeps them loaded.
    """
    memory = of_limit(check_memory_limit(memory_limit)) if memory_limit is not None else None
    asked = interval_request(ci, rank_ci, level, trials, seed, memory=memory)  # before any work
    if (answers := answer_lines(runs, run_name)) is not None:  # generated answers
        result = evaluate_answers(qrels, answers, metrics, complete=complete, qrels_name=str(qrels_name))
    else:
        options: dict[str, Any] = {"convention": convention, "complete": complete, "depth": depth, "gains": gains}
        resources = {"threads": threads, "memory_limit": memory_limit, "temp_directory": temp_directory}
        result = _ranked(qrels, runs, metrics, options, resources, qrels_format, run_format, qrels_name, run_name)
    asked.attach(None, result, memory=memory)
    return result


def _ranked(
    qrels: Any, runs: Any, metrics: Any, options: dict[str, Any], resources: dict[str, Any], qrels_format: str,
    run_format: str, qrels_name: str, run_name: str,
) -> EvalResult:  # fmt: skip
    """:func:`evaluate` of ranked lists, by the in-memory :class:`~evalstore.Evaluator`."""
    files = is_path(runs)
    named = None if files else named_runs(runs, run_name)
    # run files: a database of its own on every core (the evaluation of many lines); runs in memory:
    # one small query on the process-wide database (unless resources are given)
    threads = resources["threads"] or ((os.cpu_count() or 1) if files else None)
    with Evaluator(
        qrels,
        metrics,
        qrels_format=qrels_format,
        run_format=run_format,
        prepare=False,
        threads=threads,
        memory_limit=resources["memory_limit"],
        temp_directory=resources["temp_directory"],
        **options,
    ) as ev:
        return ev.result(named, str(qrels_name)) if named is not None else ev.result_files(runs, str(qrels_name))


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
    convention: str = "trec_eval",
    complete: bool = False,
    depth: int | None = None,
    gains: str | Sequence[float] | None = None,
    qrels_name: str = "qrels",
) -> Experiment:
    """Evaluate ``systems`` against ``qrels`` on ``measures`` and compare them with ``baseline``
    (:mod:`evalstore.experiments`: PyTerrier's ``pt.Experiment`` in one call), without a store.

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
    from .arguments import metric_names  # the comparison's modules only when one is asked for
    from .comparison.core import check_options
    from .experiments import compared, correction_name, named_baselines
    from .meta.matrix import result_matrices

    options = check_options(test, correction_name(correction), alpha, trials, seed, effects)  # before any work
    measures = metric_names(measures)
    evaluate_options: dict[str, Any] = {"convention": convention, "complete": complete, "depth": depth, "gains": gains}
    with Evaluator(qrels, measures, prepare=False, **evaluate_options) as ev:
        if is_path(systems):
            if names is not None:
                raise ArgumentError("run files are named by their tags: leave out names=")
            result = ev.result_files(systems, str(qrels_name))
        else:
            result = ev.result(_named(systems, names), str(qrels_name))
    order = list(dict.fromkeys(r for r, _, _, _ in result.means))
    mats = result_matrices(result, order, missing)
    return compared(mats, measures, named_baselines(baseline, mats[0].runs), options, effects)


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
