"""Notebook entry point: evaluate qrels and runs given as files or dicts, without a store file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from .ingest import qrels_from_dict, run_from_dict
from .result import EvalResult
from .store import open as open_store


def evaluate(qrels, runs, metrics: Sequence[str] | str = ("AP", "nDCG@10"), **options) -> EvalResult:
    """Evaluate runs against qrels with evalstore's SQL, on a throw-away in-memory store.

    ``qrels``: a path to a qrels file or ``{topic: {doc: grade}}``.
    ``runs``: a path, a list of paths (globs allowed), or ``{run: {topic: {doc: score}}}``.
    ``metrics``: names such as ``"AP"``, ``"nDCG@10"``, ``"P(rel=2)@10"`` or trec_eval's ``"map"``.
    ``options``: ``convention``, ``complete``, ``depth`` (see :mod:`evalstore.evaluate`), and
    ``qrels_format`` / ``run_format`` (``'trec'`` or ``'ntcir'``) for files.

    Returns an :class:`~evalstore.result.EvalResult`: ``.per_topic`` rows
    ``(run, topic, metric, value)``, ``.means`` rows ``(run, metric, mean, n_topics)``,
    ``.table()`` and ``.topics()`` as nested dicts.
    """
    qrels_format = options.pop("qrels_format", "trec")
    run_format = options.pop("run_format", "trec")
    store = open_store(":memory:")
    try:
        if isinstance(qrels, Mapping):
            qrels_from_dict(store, "qrels", qrels)
        else:
            store.ingest_qrels(qrels, name="qrels", format=qrels_format, progress=False)
        names: list[str] = []
        if isinstance(runs, Mapping):
            for name, run in runs.items():
                run_from_dict(store, str(name), run)
                names.append(str(name))
        else:
            if isinstance(runs, (str, os.PathLike, Path)):
                runs = [runs]
            for r in store.ingest_run(list(runs), format=run_format, progress=False):
                names.append(r.name)
        return store.evaluate("qrels", names, metrics, save=False, **options)
    finally:
        store.close()
