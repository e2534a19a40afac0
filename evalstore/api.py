"""Notebook entry point: evaluate qrels and runs given as files or dicts, without a store file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .evaluator import Evaluator, arrow_table
from .result import EvalResult
from .store import open as open_store


def evaluate(qrels, runs, metrics: Sequence[str] | str = ("AP", "nDCG@10"), **options) -> EvalResult:
    """Evaluate runs against qrels with evalstore's SQL, without a store file.

    ``qrels``: a path to a qrels file, ``{topic: {doc: grade}}``, a pandas or polars DataFrame or
    a pyarrow Table (``query_id, doc_id, relevance`` or ``topic, doc, grade``), or namedtuples
    (ir_datasets' ``qrels_iter()``).
    ``runs``: a path or a list of paths (globs allowed), ``{run: {topic: {doc: score}}}``, or
    ``{run: DataFrame / Table / namedtuples}``.
    ``metrics``: names such as ``"AP"``, ``"nDCG@10"``, ``"P(rel=2)@10"`` or trec_eval's ``"map"``.
    ``options``: ``convention``, ``complete``, ``depth`` (see :mod:`evalstore.evaluate`), ``gains``
    (the qrels' declared gains), and ``qrels_format`` / ``run_format`` (``'trec'`` or
    ``'ntcir'``) for files; ``qrels_name``: the name the result gives the qrels (default ``qrels``).

    Returns an :class:`~evalstore.result.EvalResult`: ``.per_topic`` rows
    ``(run, topic, metric, value)``, ``.means`` rows ``(run, metric, mean, n_topics)``,
    ``.table()``, ``.topics()``, ``.to_df()``. For many calls with the same qrels use
    :class:`evalstore.Evaluator`, which keeps them loaded.
    """
    run_format = options.pop("run_format", "trec")
    qrels_name = str(options.pop("qrels_name", "qrels"))
    with Evaluator(qrels, metrics, run_format=run_format, prepare=False, **options) as ev:
        if isinstance(runs, Mapping):
            return ev.result({str(k): v for k, v in runs.items()}, qrels_name)
        return ev.result(_runs_from_files(runs, run_format), qrels_name)


def _runs_from_files(paths, run_format: str) -> dict[str, Any]:
    """``{run name: rows}`` of run files, read and checked by the store's ingest (names from their tags)."""
    if isinstance(paths, (str, os.PathLike, Path)):
        paths = [paths]
    with open_store(":memory:") as s:
        results = s.ingest_run(list(paths), format=run_format, progress=False)
        return {
            r.name: arrow_table(
                s.con,
                "SELECT topic, doc, coalesce(score, -rank)::DOUBLE AS score FROM run_row_data "
                "WHERE run_id = ? ORDER BY line_no",
                [s.run_id(r.name)],
            )
            for r in results
        }
