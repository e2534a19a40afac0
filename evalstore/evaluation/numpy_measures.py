"""trec_eval's simplest measures of runs given in memory, in numpy: the same numbers as the SQL blocks.

:class:`Evaluator` (:mod:`evalstore.evaluation.in_memory`) hands a call to DuckDB: one statement
over the ranked judged list (``sql/ranked_list.sql``) and the blocks of ``sql/trec_eval.sql``. For
the measures most calls ask for, ``AP``, ``nDCG`` (linear gains, log2 discount), ``P``, ``R`` and
``RR`` (each with its cutoff and ``rel``), under the default options (trec_eval's convention, no
depth, not complete, no declared gains), the same list is built here with numpy instead: the qrels
indexed once (:class:`QrelsIndex`: each (topic, docno) pair as one sorted integer key), and per
run one sort (trec_eval's order: score descending, ties by docno descending, byte-wise;
:func:`evalstore.ingest.fast.evaluation_rank`), one lookup of the judged rows and a few grouped sums.
Planning and running a statement cost more than the whole evaluation at the sizes of a training
loop (1,000 topics x 100 documents: 39 ms in DuckDB, a few here).

The numbers are the SQL's bit for bit: every term is the same IEEE operation on the same operands
(``cnt / rank``, ``gain / log2(rank + 1)`` with the logarithms taken by DuckDB itself, ``1.0 /
rank``, ``count / k``), and ``exact_sum``'s decimal sums are reproduced by
:func:`evalstore.metrics.user.sums.exact_sums`. tests/evalstore/evaluation/test_numpy_measures.py
checks every measure against the SQL path on runs with ties, unjudged and negatively graded
documents, topics without relevant documents, cutoffs beyond the lists, and against pytrec_eval.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..ingest.dict_runs import judged_rows
from ..ingest.fast import ascending, encoded, evaluation_rank, one_array, topic_blocks
from ..ingest.tables import RunPart
from ..metrics.engine import StoredName
from ..metrics.options import NO_DEPTH, EvalOptions
from ..metrics.udf_lists import run_starts
from ..metrics.user.sums import exact_sums

#: The measures computed here, and the parameters each may carry (any other: the SQL path).
_PARAMS = {
    "AP": {"rel", "cutoff"},
    "P": {"rel", "cutoff"},
    "R": {"rel", "cutoff"},
    "RR": {"rel", "cutoff"},
    "nDCG": {"gains", "dcg", "cutoff"},
}
_COMMON = {"metric", "judged_only", "convention", "complete", "depth"}


@dataclass(frozen=True)
class Measure:
    """One measure to compute: the key of its rows, its name, ``rel`` and cutoff (None: none)."""

    key: str
    metric: str
    rel: int
    cutoff: int | None

    @property
    def k(self) -> int:
        """The cutoff as the SQL writes it (no cutoff: :data:`NO_DEPTH`)."""
        return NO_DEPTH if self.cutoff is None else self.cutoff


def numpy_measures(
    names: Mapping[str, StoredName], options: EvalOptions, declared: tuple[float, ...] | None
) -> list[Measure] | None:
    """The measures of ``names`` (display name -> stored name) when every one of them is computed
    here under ``options``, else None (the SQL path evaluates them)."""
    if declared is not None or options.convention != "trec_eval" or options.complete or options.depth is not None:
        return None
    out: dict[str, Measure] = {}
    for n in names.values():
        p = n.params
        metric = p.get("metric")
        if metric not in _PARAMS or not set(p) <= _PARAMS[metric] | _COMMON or p.get("judged_only"):
            return None
        if metric == "nDCG" and (p.get("gains") != "grade" or p.get("dcg") != "log2"):
            return None
        if p.get("convention", "trec_eval") != "trec_eval" or p.get("complete") or p.get("depth") is not None:
            return None
        cutoff = p.get("cutoff")
        if cutoff is not None and (not isinstance(cutoff, int) or cutoff < 1):
            return None
        out[n.key] = Measure(n.key, str(metric), int(p.get("rel", 1)), cutoff)
    return list(out.values()) if out else None


class QrelsIndex:
    """A qrels set (``topic, doc, grade``) indexed once for :func:`run_scores`: the topics and
    docnos as dictionaries, each judged pair as the sorted integer key ``topic code * docnos +
    docno code`` with its grade; R per ``rel`` and the ideal DCG per cutoff made on first use.
    ``log2_of``: ``log2(r + 1)`` for r = 1..n as DuckDB computes it (the SQL's discounts).
    ``given``: the qrels as given, whose dict (of ``str`` keys) lists the judged docnos of each topic
    for :func:`dict_parts` as they are."""

    def __init__(self, table: pa.Table, log2_of: Callable[[int], np.ndarray], given: Any = None) -> None:
        topics = encoded(one_array(table.column("topic")))
        docs = encoded(one_array(table.column("doc")))
        self.topics: pa.Array = topics.dictionary
        self.docs: pa.Array = docs.dictionary
        self.n_topics, self.n_docs = len(self.topics), len(self.docs)
        self.tcode = topics.indices.to_numpy().astype(np.int64)
        self.grade = table.column("grade").to_numpy().astype(np.int64)
        key = self.tcode * self.n_docs + docs.indices.to_numpy()
        order = np.argsort(key, kind="stable")
        self.keys, self.key_grades = key[order], self.grade[order]
        self._log2_of = log2_of
        self._table = table
        self._given = given
        self._judged: Mapping[str, Any] | None = None
        self._discounts = np.zeros(1)
        self._relevant: dict[int, np.ndarray] = {}
        self._ideal: dict[int, np.ndarray] = {}

    def docs_of(self, topics: np.ndarray) -> np.ndarray:
        """The codes of the docnos judged on ``topics`` (topic codes), each once."""
        first = np.searchsorted(self.keys, topics * self.n_docs)
        last = np.searchsorted(self.keys, (topics + 1) * self.n_docs)
        sizes = last - first
        rows = np.repeat(first - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
        return distinct(self.keys[rows] % self.n_docs, self.n_docs)

    @functools.cached_property
    def topics_ascending(self) -> bool:
        """The topics are in ascending (byte) order (a qrels file sorted by topic)."""
        return ascending(self.topics)

    def judged(self) -> Mapping[str, Any]:
        """Each topic's judged docnos, ``{topic: docnos}``: the qrels' dict as given, else made from
        the table on first use."""
        if self._judged is None and _str_keys(self._given):
            self._judged = self._given
        if self._judged is None:
            order = np.argsort(self.tcode, kind="stable")
            docs = self._table.column("doc").take(pa.array(order)).to_pylist()
            ends = np.cumsum(np.bincount(self.tcode, minlength=self.n_topics)).tolist()
            self._judged = dict(zip(self.topics.to_pylist(), map(docs.__getitem__, map(slice, [0, *ends], ends))))
        return self._judged

    def discounts(self, n: int) -> np.ndarray:
        """``d[r] = log2(r + 1)`` for r = 1..n at least (``d[0]`` unused)."""
        if len(self._discounts) <= n:
            size = max(n, 2 * len(self._discounts), 128)
            self._discounts = np.concatenate(([0.0], self._log2_of(size)))
        return self._discounts

    def relevant(self, rel: int) -> np.ndarray:
        """R of each topic: its documents with grade >= max(rel, 0)."""
        if rel not in self._relevant:
            isrel = self.grade >= max(rel, 0)
            self._relevant[rel] = np.bincount(self.tcode[isrel], minlength=self.n_topics)
        return self._relevant[rel]

    def ideal_dcg(self, k: int) -> np.ndarray:
        """Each topic's ideal DCG at cutoff ``k`` (every document with a positive grade, highest
        first), summed as ``exact_sum`` sums."""
        if k not in self._ideal:
            pos = self.grade > 0
            t, g = self.tcode[pos], self.grade[pos].astype(np.float64)
            order = np.lexsort((-g, t))
            t, g = t[order], g[order]
            rank = _rank_in_groups(t)
            keep = rank <= k
            d = self.discounts(int(rank[keep].max()) if keep.any() else 1)
            self._ideal[k] = exact_sums(g[keep] / d[rank[keep]], t[keep], self.n_topics)
        return self._ideal[k]


def _str_keys(qrels: Any) -> bool:
    """``qrels`` is a ``dict`` of ``dict`` whose keys are all ``str`` (the table's topics and docnos
    as they are: no key converted)."""
    if not isinstance(qrels, dict):
        return False
    docs = qrels.values()
    return (
        set(map(type, qrels)) <= {str}
        and all(map(isinstance, docs, repeat(dict)))
        and set(map(type, chain.from_iterable(docs))) <= {str}
    )


def _rank_in_groups(groups: np.ndarray) -> np.ndarray:
    """1-based position of each row within its run of equal ``groups`` values (sorted rows)."""
    n = len(groups)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    return np.arange(1, n + 1, dtype=np.int64) - run_starts(np.concatenate(([True], groups[1:] != groups[:-1])))


@dataclass
class _Hits:
    """The judged rows of one run: topic (its qrels code, then its place among the evaluated topics),
    rank and grade of each."""

    topic: np.ndarray
    rank: np.ndarray
    grade: np.ndarray


def dict_parts(index: QrelsIndex, runs: Mapping[str, Any]) -> list[RunPart] | None:
    """Runs given as ``{topic: {doc: score}}`` as :func:`run_scores` takes them narrowed: each
    one's judged rows, ranked, and its topics' counts of rows, made from the dicts
    (:func:`evalstore.ingest.dict_runs.judged_rows`: no Arrow array of their docnos). None when a
    run is not one that path takes (the runs then go as tables)."""
    parts = []
    for name, run in runs.items():
        got = judged_rows(run, index.judged())
        if got is None:
            return None
        parts.append(RunPart(name, *got))
    return parts


def run_scores(index: QrelsIndex, measures: list[Measure], table: pa.Table, counts: pa.Table | None) -> pa.Table:
    """``topic, key, value`` of one run (``topic, doc, score`` and, when ranked, ``rank``; with
    ``counts``, the rows of judged docnos only, ``counts`` listing every topic of the run) on each
    of its topics that the qrels judge, for every measure. The work is linear in the run's rows and
    topics (not the qrels' topics: a run file comes in many parts)."""
    topics = topic_blocks(one_array(table.column("topic")))
    tcode, names = topics.indices.to_numpy(), topics.dictionary
    # (32-bit codes and ranks per row: 10 M rows hold several such arrays at once)
    to_qrels = positions(names, index.topics, index.topics_ascending)
    row_topic = to_qrels[tcode] if table.num_rows else np.zeros(0, np.int32)
    if counts is None:  # (the run's topics were just looked up: no second hash table of the qrels' topics)
        evaluated = distinct(to_qrels[to_qrels >= 0], index.n_topics)
    else:
        at = positions(one_array(counts.column("topic")), index.topics, index.topics_ascending)
        evaluated = distinct(at[at >= 0], index.n_topics)
    doc = one_array(table.column("doc"))
    if "rank" in table.column_names:
        rank = one_array(table.column("rank")).to_numpy()
    else:
        rank = evaluation_rank(tcode, len(names), one_array(table.column("score")).to_numpy(), doc)
    hits = _judged(index, doc, row_topic, rank, evaluated)
    hits.topic = np.searchsorted(evaluated, hits.topic)  # each hit's place among the evaluated topics
    columns = [_measure(index, m, hits, evaluated) for m in measures]
    n = len(evaluated)
    keys = pa.array([m.key for m in measures], pa.string())
    return pa.table(
        {
            "topic": index.topics.take(pa.array(np.tile(evaluated, len(measures)))),
            "key": keys.take(pa.array(np.repeat(np.arange(len(measures)), n))),  # (no Python string per row)
            "value": pa.array(np.concatenate(columns) if columns else np.zeros(0), pa.float64()),
        }
    )


def positions(values: pa.Array, of: pa.Array, of_ascending: bool = False) -> np.ndarray:
    """Each of ``values``' position in ``of`` (-1: not there); both hold distinct strings. The hash
    table is made of the shorter of the two (a batch of a run file's topics against a million qrels
    topics: the batch's); with ``of`` in ascending order and ``values`` too, only the stretch of
    ``of`` between the first and the last of ``values`` is looked at."""
    if len(values) >= len(of) or not len(values):
        return pc.index_in(values, value_set=of).fill_null(-1).to_numpy().astype(np.int64)
    lo = 0
    if of_ascending and ascending(values):
        strings = _Strings(of)
        lo = bisect.bisect_left(strings, values[0].as_py())
        of = of.slice(lo, bisect.bisect_right(strings, values[-1].as_py()) - lo)
    found = pc.index_in(of, value_set=values)
    where = np.flatnonzero(found.is_valid().to_numpy(zero_copy_only=False)) + lo
    out = np.full(len(values), -1, dtype=np.int64)
    out[found.drop_null().to_numpy()] = where
    return out


class _Strings:
    """An Arrow string array as a sequence of ``str`` for :mod:`bisect` (one scalar per step)."""

    def __init__(self, array: pa.Array) -> None:
        self.array = array

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, i: int) -> str:
        return self.array[i].as_py()


def distinct(codes: np.ndarray, n: int) -> np.ndarray:
    """The distinct values of ``codes`` (integers in [0, n)), ascending, as int64: marked in an
    array of ``n`` flags where they are many (``np.unique`` hashes: 0.4 s for 667,000 of them)."""
    if 16 * len(codes) < n:
        return np.unique(codes).astype(np.int64)
    seen = np.zeros(n, dtype=bool)
    seen[codes] = True
    return np.flatnonzero(seen).astype(np.int64)


def _judged(index: QrelsIndex, doc: pa.Array, row_topic: np.ndarray, rank: np.ndarray, evaluated: np.ndarray) -> _Hits:
    """The rows whose (topic, docno) the qrels hold, with their grades. The docnos are looked up
    among those judged on the ``evaluated`` topics when these are a few of the qrels' (a part of a
    large run file: the lookup's hash table then holds the part's judged docnos, not all)."""
    if len(evaluated) == 0:  # no topic of the run is judged
        none = np.zeros(0, dtype=np.int64)
        return _Hits(none, none, none)
    docs, codes = index.docs, None
    if 2 * len(evaluated) < index.n_topics:
        codes = index.docs_of(evaluated).astype(np.int32)
        docs = docs.take(pa.array(codes))
    found_at = pc.index_in(doc, value_set=docs).fill_null(-1).to_numpy()
    dcode = found_at if codes is None else np.where(found_at >= 0, codes[np.maximum(found_at, 0)], -1)
    rows = np.flatnonzero((dcode >= 0) & (row_topic >= 0))
    key = row_topic[rows].astype(np.int64) * index.n_docs + dcode[rows]  # (64-bit keys: codes up to 2^62)
    at = np.minimum(np.searchsorted(index.keys, key), max(len(index.keys) - 1, 0))
    found = index.keys[at] == key if len(index.keys) else np.zeros(len(key), dtype=bool)
    rows, at = rows[found], at[found]
    return _Hits(row_topic[rows].astype(np.int64), rank[rows].astype(np.int64), index.key_grades[at])


def _measure(index: QrelsIndex, m: Measure, hits: _Hits, evaluated: np.ndarray) -> np.ndarray:
    """The measure's value on each ``evaluated`` topic (qrels topic codes; ``hits.topic``: places
    in it), 0 where the SQL has no row (coalesce(value, 0))."""
    n, k = len(evaluated), m.k
    if m.metric == "nDCG":
        take = (hits.rank <= k) & (hits.grade > 0)
        r = hits.rank[take]
        d = index.discounts(int(r.max()) if len(r) else 1)
        dcg = exact_sums(hits.grade[take].astype(np.float64) / d[r], hits.topic[take], n)
        ideal = index.ideal_dcg(k)[evaluated]
        return np.divide(dcg, ideal, out=np.zeros(n), where=ideal > 0)
    isrel = hits.grade >= max(m.rel, 0)
    t, r = hits.topic[isrel], hits.rank[isrel]
    big_r = index.relevant(m.rel)[evaluated]
    if m.metric == "AP":
        order = np.lexsort((r, t))
        t, r = t[order], r[order]
        cnt = _rank_in_groups(t)
        take = r <= k
        total = exact_sums(cnt[take] / r[take].astype(np.float64), t[take], n)
        return np.divide(total, big_r, out=np.zeros(n), where=big_r > 0)
    take = r <= k
    if m.metric == "RR":
        first = np.full(n, np.iinfo(np.int64).max)
        np.minimum.at(first, t[take], r[take])
        found = first < np.iinfo(np.int64).max
        return np.divide(1.0, first.astype(np.float64), out=np.zeros(n), where=found)
    count = np.bincount(t[take], minlength=n).astype(np.float64)
    if m.metric == "P":
        return count / float(k)
    return np.divide(count, big_r, out=np.zeros(n), where=big_r > 0)  # R
