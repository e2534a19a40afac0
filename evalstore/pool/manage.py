"""The stored pools: listing them, their sizes per topic, and the file the assessors get.

:func:`export_pool` writes what the assessors get, in an order that does not reveal the runs
(topics, then documents within a topic, by docno in byte order):

* ``qrels`` (default): TREC qrels lines ``topic 0 doc -1``; the grade -1 is trec_eval's reading of
  a pooled document not judged yet (judge it by replacing the -1);
* ``pairs``: ``topic doc`` lines.

The lines are made in DuckDB, written to a temporary file beside the target and renamed into place,
so a failed export leaves no half-written file (``-`` writes standard output).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.output_file import OutputPathError, replacing
from ..db.drop import text_set_id
from ..errors import PoolError
from ..ingest.run_text import text_bytes

if TYPE_CHECKING:
    from ..db.handle import StoreHandle
    from ..db.query import QueryResult

#: the file formats of an exported pool: the SQL of a line from topic and doc
EXPORT_FORMATS = {
    "qrels": "topic || ' 0 ' || doc || ' -1' || chr(10)",
    "pairs": "topic || ' ' || doc || chr(10)",
}
#: rows per batch read from DuckDB while writing
BATCH_ROWS = 200_000


def pool_id(store: StoreHandle, name: str) -> int:
    """The id of the pool ``name``; NotFoundError with the closest names."""
    return text_set_id(store, "pool", name)


def list_pools(store: StoreHandle) -> QueryResult:
    """The ``pool_sets`` view: name, strategy, depth, description, n_topics, n_docs, params,
    created_at; by name."""
    return store.sql("SELECT * FROM pool_sets ORDER BY name")


def pool_runs(store: StoreHandle, name: str) -> list[str]:
    """The runs a pool was made from, in the order given (``pool_meta.params``)."""
    pid = pool_id(store, name)
    return [
        r
        for (r,) in store.con.execute(
            "SELECT unnest(json_extract_string(params, '$.runs[*].run')) FROM pool_meta WHERE pool_id = ?", [pid]
        ).fetchall()
    ]


@dataclass(frozen=True)
class ExportedPool:
    """What :func:`export_pool` wrote: the pool, the file (None: standard output), the format and
    the number of lines."""

    name: str
    path: str | None
    format: str
    n_lines: int

    def summary(self) -> str:
        shape = "topic 0 doc -1" if self.format == "qrels" else "topic doc"
        return f"wrote pool {self.name!r} to {self.path or 'standard output'}: {self.n_lines} lines ({shape})"


def export_pool(
    store: StoreHandle, name: str, path: str | os.PathLike | None = None, *, format: str = "qrels"
) -> ExportedPool:
    """Write the pool ``name`` for the assessors (see the module docstring) to ``path`` (None or
    ``-``: standard output)."""
    if format not in EXPORT_FORMATS:
        raise PoolError(f"a pool is written as {' or '.join(EXPORT_FORMATS)}, not {format!r}")
    pid = pool_id(store, name)
    rel = store.con.sql(
        f"SELECT {EXPORT_FORMATS[format]} AS line FROM pool_data WHERE pool_id = {pid} ORDER BY topic, doc"
    )
    reader = (getattr(rel, "to_arrow_reader", None) or rel.fetch_arrow_reader)(BATCH_ROWS)
    n = 0

    def counted() -> Iterator[bytes]:
        nonlocal n
        for batch in reader:
            if batch.num_rows:
                chunk = text_bytes(batch.column(0))
                n += chunk.count(b"\n")
                yield chunk

    if path is None or os.fspath(path) == "-":
        for chunk in counted():
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        return ExportedPool(name, None, format, n)
    target = Path(path)
    try:
        with replacing(target, binary=True) as fh:  # a failed export leaves no half-written file
            for chunk in counted():
                fh.write(chunk)
    except OutputPathError as e:
        raise PoolError(str(e)) from None
    return ExportedPool(name, str(target), format, n)
