"""Ingesting an ir_datasets dataset: ``evalstore ingest dataset ID [--name NAME]``,
``Store.ingest_dataset(ID or dataset object, name=...)``.

One transaction stores the dataset's qrels as the qrels set ``NAME`` (default: the id), with the
relevance definitions of its grades (``qrels_defs()``); its queries as the topic set ``NAME``
(TREC-style queries keep title, description and narrative); and its official measures
(``documentation()['official_measures']`` where ir_datasets records them, else
:data:`FALLBACK_MEASURES`), which ``evalstore eval -q NAME`` evaluates when no ``-m`` is given
(:func:`evalstore.evaluation.default_qrels.official_measures`). View ``datasets``.

ir_datasets is an extra (``pip install "evalstore[ir-datasets]"``). ``ingest dataset`` reads what
the dataset reads: files ir_datasets has already downloaded (``~/.ir_datasets``), files a dataset
registered from local files names, and otherwise the internet (ir_datasets downloads qrels and
queries on first use). Documents are not read.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import IngestError, MissingDependency
from ..metrics.engine import resolve_metrics
from .dicts import qrels_from_dict
from .texts import ingest_topics

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


@dataclass(frozen=True)
class Fallback:
    """Official measures of datasets whose ids match ``pattern`` (a regular expression, searched),
    and where they come from."""

    pattern: str
    measures: tuple[str, ...]
    why: str


#: The measures of datasets for which ir_datasets records none, first match wins (docs/measures.md).
FALLBACK_MEASURES: tuple[Fallback, ...] = (
    Fallback(r"^beir/", ("nDCG@10",), "BEIR's measure (Thakur et al., NeurIPS 2021 Datasets and Benchmarks)"),
    Fallback(r"trec-dl", ("nDCG@10", "RR(rel=2)", "AP(rel=2)"), "the TREC Deep Learning track overviews"),
    Fallback(r"^msmarco-(passage|document)(-v2)?/(dev|eval|train)", ("RR@10",), "MS MARCO's official MRR@10"),
    Fallback(r"trec-covid", ("nDCG@10", "P@5", "Judged@10"), "the TREC-COVID overview (Voorhees et al. 2020)"),
    Fallback(r"robust", ("AP", "P@20", "nDCG@20"), "the TREC Robust track's measures"),
    Fallback(r"^clueweb(09|12)/", ("nDCG@20", "ERR@20"), "the TREC Web track's ad hoc measures"),
    Fallback(r"", ("AP", "nDCG@10", "P@10"), "evalstore's default for a dataset without official measures"),
)


@dataclass
class DatasetResult:
    dataset: str
    name: str
    status: str  # added, replaced, unchanged
    n_judged: int
    n_topics: int
    measures: list[str]
    measures_source: str
    relevance: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        if self.status == "unchanged":
            return f"dataset {self.dataset}: qrels and topics {self.name!r} already stored with the same content"
        source = "ir_datasets' official measures" if self.measures_source == "ir_datasets" else "fallback measures"
        return (
            f"dataset {self.dataset} {self.status} as {self.name!r}: {self.n_judged} judgments, {self.n_topics} "
            f"topics; {source}: {', '.join(self.measures)}"
        )


def load_dataset(dataset: Any) -> tuple[Any, str]:
    """The ir_datasets dataset (an id is loaded) and its id."""
    if isinstance(dataset, str):
        try:
            import ir_datasets
        except ImportError:
            raise MissingDependency(
                'ingesting an ir_datasets dataset needs ir_datasets: pip install "evalstore[ir-datasets]"'
            ) from None
        try:
            return ir_datasets.load(dataset), dataset
        except KeyError:
            raise IngestError(f"ir_datasets has no dataset {dataset!r} (https://ir-datasets.com lists them)") from None
    if not hasattr(dataset, "qrels_iter"):
        raise IngestError(f"give an ir_datasets id or dataset, not {type(dataset).__name__}")
    ident = dataset.dataset_id() if hasattr(dataset, "dataset_id") else None
    return dataset, str(ident or getattr(dataset, "_dataset_id", None) or "dataset")


def official(dataset: Any, ident: str) -> tuple[list[str], str]:
    """The dataset's official measures and where they come from (``ir_datasets`` or ``fallback``)."""
    doc = dataset.documentation() if hasattr(dataset, "documentation") else {}
    measures = list((doc or {}).get("official_measures") or [])
    source = "ir_datasets"
    if not measures:
        entry = next(f for f in FALLBACK_MEASURES if re.search(f.pattern, ident))
        measures, source = list(entry.measures), "fallback"
    resolve_metrics(measures)  # each one evalstore computes (a MetricError names any other)
    return measures, source


def ingest_dataset(
    store: StoreHandle, dataset: Any, *, name: str | None = None, replace: bool = False
) -> DatasetResult:
    """Store an ir_datasets dataset's qrels (with the relevance definitions of their grades), its
    queries as a topic set and its official measures, all under ``name`` (default: the dataset id);
    see :mod:`evalstore.ingest.datasets`. ``dataset``: an id or a dataset object (one registered
    from local files too)."""
    ds, ident = load_dataset(dataset)
    name = name or ident
    if not ds.has_qrels():
        raise IngestError(f"the dataset {ident} has no qrels; evalstore ingests datasets with relevance judgments")
    measures, source = official(ds, ident)
    relevance = {str(k): str(v) for k, v in (ds.qrels_defs() or {}).items()} if hasattr(ds, "qrels_defs") else {}
    con = store.con
    with store.transaction():
        qrels = qrels_from_dict(store, name, ds.qrels_iter(), replace=replace, source=f"ir_datasets:{ident}")
        n_topics = _topics(store, ds, name, ident, replace) if ds.has_queries() else 0
        qid = store.qrels_id(name)
        con.execute("UPDATE qrels_meta SET source = ? WHERE qrels_id = ?", [f"ir_datasets:{ident}", qid])
        con.execute("DELETE FROM dataset_meta WHERE qrels_id = ?", [qid])
        con.execute(
            "INSERT INTO dataset_meta (qrels_id, dataset, topic_set, official_measures, measures_source, relevance) "
            "VALUES (?, ?, ?, ?, ?, ?::JSON)",
            [qid, ident, name if n_topics else None, measures, source, json.dumps(relevance)],
        )
    n_judged = con.execute("SELECT n_judged FROM qrels_meta WHERE qrels_id = ?", [qid]).fetchall()[0][0]
    return DatasetResult(ident, name, qrels.status, n_judged, n_topics, measures, source, relevance)


def _topics(store: StoreHandle, ds: Any, name: str, ident: str, replace: bool) -> int:
    """The dataset's queries as the topic set ``name`` (through the topics' JSONL reader)."""
    with tempfile.TemporaryDirectory(prefix="evalstore-dataset-") as tmp:
        path = Path(tmp) / "queries.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for q in ds.queries_iter():
                f.write(json.dumps(_query(q), ensure_ascii=False) + "\n")
        res = ingest_topics(store, path, name=name, format="jsonl", replace=replace)
    store.con.execute("UPDATE topic_set_meta SET source = ? WHERE name = ?", [f"ir_datasets:{ident}", name])
    if res.status == "unchanged":
        return int(store.con.execute("SELECT n_topics FROM topic_set_meta WHERE name = ?", [name]).fetchall()[0][0])
    return res.count


def _query(q: Any) -> dict[str, str]:
    """A query namedtuple as a topic line: its id, and its text or title, description, narrative."""
    fields = q._asdict() if hasattr(q, "_asdict") else dict(q)
    out = {"qid": str(fields.get("query_id"))}
    for key in ("text", "title", "description", "narrative"):
        if isinstance(fields.get(key), str) and fields[key].strip():
            out[key] = fields[key]
    if "text" not in out and "title" not in out:  # a query of other fields: the first text it has
        text = next((v for k, v in fields.items() if k != "query_id" and isinstance(v, str) and v.strip()), None)
        if text:
            out["text"] = text
    return out
