"""Run and qrels files read for an evaluation without a store (``evalstore eval QRELS RUN...``,
:func:`evalstore.evaluate` with paths, :class:`evalstore.Evaluator` given a path).

Each run file is read once and handed to the evaluation as it is read, in parts of whole topics
(:class:`RunPart`), so that memory holds a few parts whatever the files' sizes: cleanly delimited
TREC runs by the fast reader (:mod:`evalstore.ingest.fast`: parsed, checked and ranked in one pass,
block by block, on two threads, a few files ahead of the evaluation), every other file by the
store's own ingest in a throw-away in-memory store, which gives the same rows or the same error
message as ``evalstore ingest run``. Nothing is hashed (nothing is stored) and nothing is ranked
twice.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa

from ..db.query import arrow_reader, arrow_table
from ..ingest import fast, fast_qrels, readers
from ..ingest.checks import check_names
from ..ingest.files import compression, expand_paths, fields, first_content_line, materialized
from ..ingest.formats import INPUT_FORMATS
from ..ingest.prefetch import prefetched
from ..ingest.staging import Group, SourceFile
from ..store import open as open_store

#: Run lines per evaluation batch: the batch's rows and DuckDB's working set stay a few hundred MB
#: however many runs are given (1 M lines: 2.4 CPU-s where 250,000 took 3.4 on 100 runs x 50 x 1000).
BATCH_LINES = 1_000_000
#: Files read ahead of the evaluation (on the reader threads).
READ_AHEAD = 4
#: Rows per part of a run read back from the general reader's store.
PART_ROWS = 250_000


def qrels_file(paths: Any, fmt: str) -> pa.Table:
    """``(topic, doc, grade)`` of a qrels file: a cleanly delimited TREC file by the fast qrels
    reader (:mod:`evalstore.ingest.fast_qrels`), any other read and checked by the store's ingest
    (in a throw-away in-memory store), which gives the same rows or the exact message."""
    if fmt == "trec":
        with materialized(expand_paths(paths)) as inputs:
            if len(inputs) == 1:
                read = fast_qrels.read_qrels(inputs[0], compression(inputs[0]))
                if read is not None:
                    return read
    with open_store(":memory:") as s:
        s.ingest_qrels(paths, name="qrels", format=fmt, progress=False)
        return arrow_table(s.con, "SELECT topic, doc, grade FROM qrels_data")


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


def run_tables(
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
            # read: the store's ingest of the whole call, as before
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
    """A run's part read by the store's ingest, narrowed like the fast reader's when ``keep_docs`` is given."""
    if keep_docs is None:
        return RunPart(name, table, None)
    import pyarrow.compute as pc

    agg = table.group_by("topic").aggregate([([], "count_all")])
    counts = pa.table({"topic": agg.column("topic"), "n": agg.column("count_all")})
    return RunPart(name, table.filter(pc.is_in(table.column("doc"), value_set=keep_docs)), counts)


def _ingested(paths: Sequence[Path], fmt: str, name: str | None) -> Iterator[tuple[str, pa.Table]]:
    """``(run name, rows)`` of run files read, checked and ranked by the store's ingest (in a
    throw-away in-memory store, which spills beyond its memory limit), each run in parts of whole
    topics of about :data:`PART_ROWS` rows (one empty part for an empty run)."""
    with open_store(":memory:") as s:
        results = s.ingest_run(list(paths), name=name, format=fmt, progress=False)
        for r in results:
            rows = arrow_reader(
                s.con,
                "SELECT topic, doc, coalesce(score, -rank)::DOUBLE AS score, line_no AS ln, rank "
                "FROM run_row_data WHERE run_id = ? ORDER BY topic, line_no",
                [s.run_id(r.name)],
                PART_ROWS,
            )
            carry: pa.Table | None = None
            given = False
            for rb in rows:
                t = pa.Table.from_batches([rb])
                t, carry = fast.trailing_topic(pa.concat_tables([carry, t]) if carry is not None else t)
                if t.num_rows:
                    yield r.name, t
                    given = True
            if carry is not None and carry.num_rows or not given:
                yield r.name, carry if carry is not None else rows.schema.empty_table()
