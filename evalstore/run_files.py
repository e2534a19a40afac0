"""Run and qrels files read for an evaluation without a store (``evalstore eval QRELS RUN...``,
:func:`evalstore.evaluate` with paths, :class:`evalstore.Evaluator` given a path).

Each run file is read once and handed to the evaluation as it was read: cleanly delimited TREC runs
by the fast reader (:mod:`evalstore.ingest.fast`: parsed, checked and ranked in one pass, on two
threads, a few files ahead of the evaluation), every other file by the store's own ingest in a
throw-away in-memory store, which gives the same rows or the same error message as ``evalstore
ingest run``. Nothing is hashed (nothing is stored) and nothing is ranked twice.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa

from .facade import open as open_store
from .ingest import fast, readers
from .ingest.checks import check_names
from .ingest.files import compression, expand_paths, fields, first_content_line, materialized
from .ingest.formats import INPUT_FORMATS
from .ingest.staging import Group, SourceFile
from .store.query import arrow_table

#: Run lines per evaluation batch: the batch's rows and DuckDB's working set stay a few hundred MB
#: however many runs are given.
BATCH_LINES = 250_000
#: Files read ahead of the evaluation (on the reader threads).
READ_AHEAD = 4


def qrels_file(paths: Any, fmt: str) -> pa.Table:
    """``(topic, doc, grade)`` of a qrels file, read and checked by the store's ingest."""
    with open_store(":memory:") as s:
        s.ingest_qrels(paths, name="qrels", format=fmt, progress=False)
        return arrow_table(s.con, "SELECT topic, doc, grade FROM qrels_data")


#: A run as read: its name, its rows (``topic, doc, score, ln, rank``: the rank in trec_eval's order)
#: and, when the rows were narrowed to the docnos of ``keep_docs``, each topic's count of rows
#: (``topic, n``).
RunRows = tuple[str, pa.Table, "pa.Table | None"]


def run_tables(
    paths: Any, fmt: str, name: str | None = None, keep_docs: pa.Array | None = None
) -> Iterator[list[RunRows]]:
    """Batches of runs read from the run files ``paths`` (names from their tags, or ``name`` for a
    single run), about :data:`BATCH_LINES` lines each, in the order given (see :data:`RunRows`).
    ``keep_docs``: the rows of other docnos are dropped as they are read (the judged docnos: a
    narrower ranked list; counted per topic first)."""
    with materialized(expand_paths(paths)) as inputs:
        files = [SourceFile(i, p, compression(p), "trec_run") for i, p in enumerate(inputs)]
        firsts = [first_content_line(f.path) for f in files]
        layouts = [INPUT_FORMATS[fmt].run_layout(len(fields(x)) if x is not None else None) for x in firsts]
        for f, first in zip(files, firsts):
            f.delim = readers.fast_delimiter(first)
            if f.delim and first is not None:
                f.tag0 = first.split(f.delim)[5]
        if any(lay != "trec_run" or f.delim is None for f, lay in zip(files, layouts)) or (
            name is not None and len(files) > 1
        ):
            # NTCIR res files (one run of many files), or a file whose first line the fast reader cannot
            # read: the store's ingest of the whole call, as before
            yield [_narrowed(n, t, keep_docs) for n, t in _ingested(inputs, fmt, name)]
            return
        groups = [Group(f.idx, [f], "", name=name or f.tag0) for f in files]
        check_names(groups, "run")  # two files with one tag, a tag too long
        yield from _batches(files, fmt, name, keep_docs)


def _batches(
    files: list[SourceFile], fmt: str, name: str | None, keep_docs: pa.Array | None
) -> Iterator[list[RunRows]]:
    batch: list[RunRows] = []
    lines = 0
    with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        pending: list[tuple[SourceFile, Future]] = []
        todo = list(files)
        try:
            while todo or pending:
                while todo and len(pending) < READ_AHEAD:
                    f = todo.pop(0)
                    assert f.delim is not None
                    read = pool.submit(
                        fast.read_run, f.path, f.compression, f.delim, f.tag0, want_sha=False, keep_docs=keep_docs
                    )
                    pending.append((f, read))
                f, future = pending.pop(0)
                read = future.result()
                if read is None:  # the general reader: same rows, or the exact error
                    batch.append(_narrowed(*_ingested([f.path], fmt, name)[0], keep_docs))
                    lines += batch[-1][1].num_rows
                else:
                    batch.append((name or str(f.tag0), read.table, read.counts))
                    lines += read.table.num_rows
                if lines >= BATCH_LINES:
                    yield batch
                    batch, lines = [], 0
        finally:
            for _, fut in pending:
                fut.cancel()
    if batch:
        yield batch


def _narrowed(name: str, table: pa.Table, keep_docs: pa.Array | None) -> RunRows:
    """A run read by the store's ingest, narrowed like the fast reader's when ``keep_docs`` is given."""
    if keep_docs is None:
        return name, table, None
    import pyarrow.compute as pc

    agg = table.group_by("topic").aggregate([([], "count_all")])
    counts = pa.table({"topic": agg.column("topic"), "n": agg.column("count_all")})
    return name, table.filter(pc.is_in(table.column("doc"), value_set=keep_docs)), counts


def _ingested(paths: Sequence[Path], fmt: str, name: str | None) -> list[tuple[str, pa.Table]]:
    """``(run name, rows)`` of run files read, checked and ranked by the store's ingest (in a
    throw-away in-memory store)."""
    with open_store(":memory:") as s:
        results = s.ingest_run(list(paths), name=name, format=fmt, progress=False)
        return [
            (
                r.name,
                arrow_table(
                    s.con,
                    "SELECT topic, doc, coalesce(score, -rank)::DOUBLE AS score, line_no AS ln, rank "
                    "FROM run_row_data WHERE run_id = ? ORDER BY line_no",
                    [s.run_id(r.name)],
                ),
            )
            for r in results
        ]
