"""Runs and qrels read and checked into Arrow tables without a store: what ``evalstore eval QRELS
RUN...``, :func:`evalstore.evaluate` and :class:`evalstore.Evaluator` evaluate.

Files go through ingest's own readers and checks, so that they give the same rows, or the same
error message (file, line, text, expectation), as ``evalstore ingest``; objects (dicts,
DataFrames, Arrow tables, namedtuples) through :mod:`.sources`, as ``Store.ingest_run`` takes them.

* :func:`read_qrels`: ``(topic, doc, grade)`` of a qrels set: a TREC file by the fast qrels reader
  (:mod:`.fast_qrels`), any other file by the general reader (:meth:`IngestCall.parse
  <evalstore.ingest.pipeline.IngestCall.parse>` on a DuckDB connection of its own), an object by
  :func:`.sources.qrels_table`;
* :func:`read_runs`: run files in batches of parts of whole topics (:class:`RunPart`), so that
  memory holds a few parts whatever the files' sizes: cleanly delimited TREC runs by the fast
  reader (:mod:`.fast`: parsed, checked and ranked in one pass, block by block, on two threads, a
  few files ahead of the evaluation), every other file by the general reader;
* :func:`read_run`: the rows of one run (a path, or an object).

Nothing is hashed (nothing is stored) and nothing is ranked twice.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import pyarrow as pa

from ..db.connection import connect
from ..db.query import arrow_reader, arrow_table
from . import fast, fast_qrels, readers
from .checks import check_names, validate_call
from .files import compression, expand_paths, fields, first_content_line, materialized
from .formats import INPUT_FORMATS
from .prefetch import prefetched
from .qrels import QrelsIngest
from .runs import RunIngest
from .sources import is_path, qrels_table, run_table
from .staging import Group, SourceFile

#: Run lines per evaluation batch: the batch's rows and DuckDB's working set stay a few hundred MB
#: however many runs are given (1 M lines: 2.4 CPU-s where 250,000 took 3.4 on 100 runs x 50 x 1000).
BATCH_LINES = 1_000_000
#: Files read ahead of the evaluation (on the reader threads).
READ_AHEAD = 4
#: Rows per part of a run read back from the general reader's staging table.
PART_ROWS = 250_000


def read_qrels(source: Any, format: str = "trec", what: str = "qrels") -> pa.Table:
    """``(topic, doc, grade)`` of qrels given as a path (a file, a glob or a list: one set) in
    ``format``, or as an object (``{topic: {doc: grade}}``, a DataFrame, an Arrow table,
    namedtuples). Diversity judgments give each (topic, doc) its highest grade over the subtopics,
    as the store's ``qrels`` view does."""
    return read_coded_qrels(source, format, what).table


def read_coded_qrels(source: Any, format: str = "trec", what: str = "qrels") -> fast_qrels.Coded:
    """:func:`read_qrels` with its topics and docnos dictionary-encoded once
    (:class:`~evalstore.ingest.fast_qrels.Coded`: the fast reader's encodings, else made on first use)."""
    if not is_path(source):
        return fast_qrels.Coded(qrels_table(source, what))
    validate_call(None, format)
    with materialized(expand_paths(source)) as inputs:
        if format == "trec" and len(inputs) == 1:
            read = fast_qrels.read_coded(inputs[0], compression(inputs[0]))
            if read is not None:
                return read
        with _database() as con:
            call = QrelsIngest(None, inputs, "qrels", format, False, None, False, None, con=con)
            with call.parse() as (st, _):
                if call.subtopics:
                    sql = (
                        f"SELECT topic, doc, max(grade) AS grade FROM {st.rows} GROUP BY topic, doc ORDER BY topic, doc"
                    )
                else:
                    sql = f"SELECT topic, doc, grade FROM {st.rows} ORDER BY topic, doc"
                return fast_qrels.Coded(arrow_table(con, sql))


def read_run(source: Any, format: str = "trec", what: str = "run", *, allow_empty: bool = False) -> pa.Table:
    """The rows of one run given as a path (a file, or NTCIR res files forming one run; ``topic,
    doc, score, ln, rank``) or as an object (``topic, doc, score, ln``: ranked later, in SQL)."""
    if not is_path(source):
        return run_table(source, what, allow_empty=allow_empty)
    tables: list[pa.Table] = []
    for batch in read_runs(source, format, name="run"):
        for part in batch:
            tables = [part.table] if part.restart else [*tables, part.table]
    return pa.concat_tables(tables)


@contextmanager
def _database() -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB database of its own, in memory (spilling beyond its memory limit), for the general
    reader's staging tables."""
    con = connect(":memory:")
    try:
        yield con
    finally:
        con.close()


class RunPart(NamedTuple):
    """Rows of a run as read, on whole topics (a run's other parts have none of its topics): its
    name, its rows (``topic, doc, score, ln, rank``: the rank in trec_eval's order) and, when the
    rows were narrowed to the docnos of ``keep_docs``, each topic's count of rows (``topic, n``).
    ``restart``: the run's parts given before are void (its file went to the general reader, which
    gives all of its rows again)."""

    name: str
    table: pa.Table
    counts: pa.Table | None
    restart: bool = False


def read_runs(
    paths: Any,
    fmt: str,
    name: str | None = None,
    keep_docs: pa.Array | None = None,
    batch_lines: int | None = None,
) -> Iterator[list[RunPart]]:
    """Batches of run parts read from the run files ``paths`` (names from their tags, or ``name``
    for a single run), about ``batch_lines`` (:data:`BATCH_LINES`) lines each, in the order given
    (see :class:`RunPart`; a run has at least one part, empty for an empty run). ``keep_docs``: the rows of other docnos
    are dropped as they are read (the judged docnos: a narrower ranked list; counted per topic first)."""
    validate_call(None, fmt)
    with materialized(expand_paths(paths)) as inputs:
        files = [SourceFile(i, p, compression(p), "trec_run") for i, p in enumerate(inputs)]
        firsts = [first_content_line(f.path) for f in files]
        layouts = [INPUT_FORMATS[fmt].run_line_kind(len(fields(x)) if x is not None else None) for x in firsts]
        for f, first in zip(files, firsts):
            f.delim = readers.fast_delimiter(first)
            if f.delim and first is not None:
                f.tag0 = first.split(f.delim)[5]
        if any(lay != "trec_run" or f.delim is None for f, lay in zip(files, layouts)) or (
            name is not None and len(files) > 1
        ):
            # NTCIR res files (one run of many files), or a file whose first line the fast reader cannot
            # read: the general reader for the whole call
            parts = (_narrowed(n, t, keep_docs) for n, t in _ingested(inputs, fmt, name))
            yield from _batched(parts, batch_lines or BATCH_LINES)
            return
        groups = [Group(f.idx, [f], "", name=name or f.tag0) for f in files]
        check_names(groups, "run")  # two files with one tag, a tag too long
        yield from _batches(files, fmt, name, keep_docs, batch_lines or BATCH_LINES)


def _batches(
    files: list[SourceFile], fmt: str, name: str | None, keep_docs: pa.Array | None, batch_lines: int
) -> Iterator[list[RunPart]]:
    """The files' parts (the fast reader's, a few files ahead on the reader threads; a declined file's
    from the general reader) in batches of about ``batch_lines`` lines."""
    batch: list[RunPart] = []
    lines = 0
    sources = [functools.partial(_fast_parts, f, keep_docs) for f in files]
    for f, parts in zip(files, prefetched(sources, workers=min(2, os.cpu_count() or 1), ahead=READ_AHEAD)):
        run = name or str(f.tag0)
        given = False  # parts of the run were handed on in an earlier batch
        try:
            for part in parts:
                batch.append(RunPart(run, part.table, part.counts))
                lines += part.n_rows
                if lines >= batch_lines:
                    yield batch
                    batch, lines, given = [], 0, True
        except fast.Declined:  # the general reader: same rows, or the exact error
            batch = [p for p in batch if p.name != run]
            for i, (n, t) in enumerate(_ingested([f.path], fmt, name)):
                batch.append(_narrowed(n, t, keep_docs)._replace(restart=given and i == 0))
                lines += t.num_rows
                if lines >= batch_lines:
                    yield batch
                    batch, lines, given = [], 0, False
    if batch:
        yield batch


def _fast_parts(f: SourceFile, keep_docs: pa.Array | None) -> Iterator[fast.Part]:
    assert f.delim is not None
    yield from fast.RunReader(f.path, f.compression, f.delim, f.tag0, want_sha=False, keep_docs=keep_docs).parts()


def _batched(parts: Iterable[RunPart], batch_lines: int) -> Iterator[list[RunPart]]:
    batch: list[RunPart] = []
    lines = 0
    for p in parts:
        batch.append(p)
        lines += p.table.num_rows
        if lines >= batch_lines:
            yield batch
            batch, lines = [], 0
    if batch:
        yield batch


def _narrowed(name: str, table: pa.Table, keep_docs: pa.Array | None) -> RunPart:
    """A run's part read by the general reader, narrowed like the fast reader's when ``keep_docs`` is given."""
    if keep_docs is None:
        return RunPart(name, table, None)
    import pyarrow.compute as pc

    agg = table.group_by("topic").aggregate([([], "count_all")])
    counts = pa.table({"topic": agg.column("topic"), "n": agg.column("count_all")})
    return RunPart(name, table.filter(pc.is_in(table.column("doc"), value_set=keep_docs)), counts)


def _ingested(paths: Sequence[Path], fmt: str, name: str | None) -> Iterator[tuple[str, pa.Table]]:
    """``(run name, rows)`` of run files read, checked, named and ranked by ingest's general reader
    (on a database of its own, which spills beyond its memory limit), each run in parts of whole
    topics of about :data:`PART_ROWS` rows (one empty part for an empty run)."""
    with _database() as con:
        call = RunIngest(None, list(paths), name, fmt, False, False, "tag", False, con=con)
        with call.parse() as (st, groups):
            rank = call.files[0].line_kind.rank_sql
            for g in groups:
                rows = arrow_reader(
                    con,
                    "SELECT topic, doc, coalesce(score, -rank)::DOUBLE AS score, ln, rank FROM ("
                    f"SELECT topic, doc, score, ln, {rank} AS rank FROM {st.rows} WHERE grp = ?) ORDER BY topic, ln",
                    [g.idx],
                    PART_ROWS,
                )
                yield from _whole_topics(g.final, rows)


def _whole_topics(name: str, rows: pa.RecordBatchReader) -> Iterator[tuple[str, pa.Table]]:
    """A run's rows (sorted by topic) in parts that each end on a whole topic."""
    carry: pa.Table | None = None
    given = False
    for rb in rows:
        t = pa.Table.from_batches([rb])
        t, carry = fast.trailing_topic(pa.concat_tables([carry, t]) if carry is not None else t)
        if t.num_rows:
            yield name, t
            given = True
    if carry is not None and carry.num_rows or not given:
        yield name, carry if carry is not None else rows.schema.empty_table()
