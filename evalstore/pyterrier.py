"""evalstore in PyTerrier (the ``pyterrier`` extra: ``pip install "evalstore[pyterrier]"``; its core
runs on DataFrames without Java).

* :func:`measures` — evalstore's metrics as measures ``pt.Experiment(eval_metrics=...)`` accepts:
  ir_measures ``Measure`` objects served by ir_measures' ``runtime`` provider (the mechanism of
  ``ir_measures.define``: a measure with a ``runtime_impl(qrels, run)``; it is first in
  ``ir_measures.DefaultPipeline``, which ``pt.Experiment`` evaluates with). So PyTerrier gets
  Sakai's measures (``Q``, ``P+``, ``O-measure``, ``nERR-ntcir@10``, ...), Zhou & Yao's (``WAP``,
  ``NDPM``, ...), measures of one's own and every other evalstore metric, computed by evalstore's SQL
  and named in the result table exactly as given. All the measures of one call are computed in one
  evalstore evaluation per run.
* :class:`Recorder` — a transformer that stores what passes through it as a run of a store,
  identified by its content (:mod:`evalstore.ingest.recorded`), with an ir_metadata header naming
  the pipeline: rerunning an unchanged pipeline stores nothing new, a changed one is a new run.

``evalstore.experiment`` gives the same numbers as ``pt.Experiment`` with these measures
(tests/evalstore/test_pyterrier.py checks it to 1e-12 on TREC DL 2019's runs).
"""

from __future__ import annotations

import platform
from collections.abc import Iterator, Sequence
from typing import Any

import ir_measures
import pyterrier as pt
from ir_measures.measures.base import Agg, MeanAgg, Measure, SumAgg

from .base.aggregate import aggregate
from .base.arguments import metric_names
from .db.handle import StoreHandle
from .errors import ArgumentError
from .evaluation.in_memory import Evaluator
from .ingest.recorded import Recorded, record_run
from .metrics.engine import resolve_metrics
from .version import __version__

__all__ = ["Recorder", "measures"]


def measures(
    *names: str,
    convention: str = "trec_eval",
    depth: int | None = None,
    gains: str | Sequence[float] | None = None,
) -> list[Measure]:
    """evalstore's metrics ``names`` (``"AP"``, ``"nDCG@10"``, ``"Q"``, ``"P(rel=2)@10"``, a measure
    of one's own, ...) as measures for ``pt.Experiment(eval_metrics=...)`` or
    ``ir_measures.calc_aggregate``; ``convention``, ``depth``, ``gains``: as in
    :func:`evalstore.evaluate`. Topics of the qrels a run lacks score 0 (ir_measures' rule)."""
    given = metric_names(list(names))
    for name in given:
        if len(resolve_metrics([name])) != 1:
            raise ArgumentError(f"{name!r} names several metrics; give each on its own")
    group = _Group(given, {"convention": convention, "depth": depth, "gains": gains})
    return [EvalstoreMeasure(name, group) for name in given]


class _Group:
    """The measures of one :func:`measures` call: one evalstore evaluation per (qrels, run) serves
    them all (ir_measures' runtime provider asks each measure in turn with the same frames)."""

    def __init__(self, names: list[str], options: dict[str, Any]) -> None:
        self.names = names
        self.options = options
        self._last: tuple[Any, Any, dict[str, dict[str, float]]] | None = None

    def values(self, qrels: Any, run: Any) -> dict[str, dict[str, float]]:
        """``{topic: {measure: value}}`` of ``run`` against ``qrels`` (ir_measures' frames)."""
        if self._last is not None and self._last[0] is qrels and self._last[1] is run:
            return self._last[2]
        with Evaluator(qrels[["query_id", "doc_id", "relevance"]], self.names, prepare=False, **self.options) as ev:
            scored = run[["query_id", "doc_id", "score"]]
            out = ev.evaluate(scored) if len(scored) else {}
        self._last = (qrels, run, out)
        return out


class GeometricMeanAgg(Agg):
    """The geometric mean (GM_AP, GM_Bpref), as evalstore and trec_eval aggregate them."""

    def __init__(self) -> None:
        self.values: list[float] = []

    def add(self, value: float) -> None:
        self.values.append(value)

    def result(self) -> float:
        return aggregate(self.values, "gmean") if self.values else float("nan")


class EvalstoreMeasure(Measure):
    """One evalstore metric as an ir_measures measure (see :func:`measures`)."""

    SUPPORTED_PARAMS: dict = {}
    RUN_INPUTS = ["query_id", "doc_id", "score"]
    QREL_INPUTS = ["query_id", "doc_id", "relevance"]

    def __init__(self, name: str, group: _Group) -> None:
        super().__init__()
        self.NAME = self.given = name
        self.__name__ = name
        self._group = group
        self._aggregate = resolve_metrics([name])[0].spec.aggregate

    def runtime_impl(self, qrels: Any, run: Any) -> Iterator[ir_measures.Metric]:
        """The per-topic values (ir_measures' runtime provider calls it; it pads missing topics)."""
        for topic, values in self._group.values(qrels, run).items():
            value = values.get(self.given)
            if value is not None:
                yield ir_measures.Metric(topic, self, value)

    def aggregator(self) -> Agg:
        if self._aggregate == "sum":
            return SumAgg()
        if self._aggregate == "gmean":
            return GeometricMeanAgg()
        return MeanAgg()

    def __call__(self, **kwargs: Any) -> Measure:
        raise ArgumentError(f"give {self.NAME} its parameters in its name: evalstore.pyterrier.measures('NAME(p=v)@k')")

    def __repr__(self) -> str:
        return self.given

    def __str__(self) -> str:
        return self.given


class Recorder(pt.Transformer):
    """A transformer that stores the results passing through it as a run of ``store`` (a
    :class:`evalstore.Store`), named ``name``, and passes them on unchanged.

    ``Recorder(store, "bm25", pipeline)`` runs ``pipeline`` and records its results (its header then
    names the pipeline as PyTerrier prints it); ``pipeline >> Recorder(store, "bm25")`` records
    what reaches it. A run is identified by its content (:func:`evalstore.ingest.recorded.record_run`):
    the same results again store nothing, other results are a new run (``bm25``, then
    ``bm25@<sha>``); ``.recorded`` lists what each call did. ``metadata``: more of the ir_metadata
    header (merged over evalstore's)."""

    def __init__(
        self, store: StoreHandle, name: str, pipeline: Any = None, *, metadata: dict[str, Any] | None = None
    ) -> None:
        if not isinstance(store, StoreHandle):
            raise ArgumentError(f"Recorder records into a store (evalstore.open(...)), not {type(store).__name__}")
        self.store = store
        self.name = name
        self.pipeline = pipeline
        self.metadata = dict(metadata or {})
        self.recorded: list[Recorded] = []

    def transform(self, inp: Any) -> Any:
        out = self.pipeline.transform(inp) if self.pipeline is not None else inp
        self.recorded.append(record_run(self.store, self.name, out[["qid", "docno", "score"]], self.header()))
        return out

    def header(self) -> dict[str, Any]:
        """The run's ir_metadata header: the pipeline, the software."""
        described = repr(self.pipeline) if self.pipeline is not None else f"the input of {self!r}"
        header: dict[str, Any] = {
            "tag": self.name,
            "method": {"retrieval": [{"name": "pyterrier pipeline", "pipeline": described}]},
            "platform": {
                "software": {
                    "libraries": {"python-terrier": pt.__version__, "evalstore": __version__},
                    "python": platform.python_version(),
                }
            },
        }
        return {**header, **self.metadata}

    def __repr__(self) -> str:
        return f"Recorder({self.name!r}" + (f", {self.pipeline!r})" if self.pipeline is not None else ")")
