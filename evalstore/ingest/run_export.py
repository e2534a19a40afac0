"""A stored run as a TREC run file: ``evalstore export run NAME -o FILE`` and ``Store.export_run``.

The file holds the run's ir_metadata header first, byte for byte as it stood in the ingested file
(or the recipe block of a fused run; :mod:`evalstore.ingest.ir_metadata`), then one line per row,
``topic Q0 doc rank score tag``, single spaces:

* the rows in the order of the file they came from (``line_no``); a fused run's by topic and rank;
* ``rank``: the rank column as it was written (a fused run's: its rank); the evaluation ranks
  come from the scores again when the file is read, so re-ingesting it gives the same run;
* ``score``: the stored double in its shortest text that reads back as the same double (a run
  without scores, an NTCIR res file, gets ``n - rank + 1``, which trec_eval orders as the file);
* ``tag``: the run's tag when it is one field, else its name (spaces as ``_``), or ``tag=``.

The lines are made in DuckDB and streamed in batches. :func:`run_file_chunks` is also how a fused
run's content hash is taken (:mod:`evalstore.fusion.store`): the sha256 of a fused run is that of
the file this module writes for it, so exporting it and ingesting the file gives the same identity.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import StoreError

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: Rows per batch read from DuckDB while writing.
BATCH_ROWS = 200_000
_FIELD = re.compile(r"\S+")


@dataclass(frozen=True)
class ExportedRun:
    """What :func:`export_run` wrote: the run, the file (None: standard output), the rows, and the
    sha256 of the uncompressed text (the run's content hash when it is a fused run)."""

    name: str
    path: str | None
    n_rows: int
    sha256: str
    header: bool

    def summary(self) -> str:
        where = self.path or "standard output"
        head = " below its ir_metadata header" if self.header else ""
        return f"wrote run {self.name!r} to {where}: {self.n_rows} rows{head}"


def line_tag(tag: str | None, name: str) -> str:
    """The tag field of the exported lines: the stored tag when it is one field (not a list of a
    file's several tags), else the name with blanks as ``_``."""
    if tag and _FIELD.fullmatch(tag) and "," not in tag:
        return tag
    return re.sub(r"\s+", "_", name.strip()) or "run"


def stored_rows(run_id: int) -> str:
    """The rows of a stored run, as :func:`lines_sql` reads them."""
    return f"(SELECT * FROM run_row_data WHERE run_id = {int(run_id)})"


def lines_sql(rows: str) -> str:
    """The lines of a run (one VARCHAR column ``line``, each with its line end, in file order) from
    ``rows``, a relation with the columns of ``run_row_data`` (topic, doc, rank, submitted_rank,
    score, line_no)."""
    return f"""SELECT topic || ' Q0 ' || doc || ' ' || coalesce(submitted_rank, rank) || ' ' ||
                      CAST(coalesce(score, count(*) OVER (PARTITION BY topic) - rank + 1) AS VARCHAR) || ' ' ||
                      $tag || chr(10) AS line
               FROM {rows} ORDER BY line_no, topic"""


def run_file_chunks(store: StoreHandle, rows: str, header: str | None, tag: str) -> Iterator[bytes]:
    """The bytes of the run file of ``rows`` (:func:`stored_rows`, or a fused run's rows before they
    are stored): ``header`` (the ir_metadata block), then the lines."""
    if header:
        yield header.encode("utf-8")
    # on the store's connection, which sees the temporary table of a fusion (a cursor would not)
    rel = store.con.sql(lines_sql(rows), params={"tag": tag})
    # DuckDB 2 names it to_arrow_reader (fetch_arrow_reader before)
    reader = (getattr(rel, "to_arrow_reader", None) or rel.fetch_arrow_reader)(BATCH_ROWS)
    for batch in reader:
        if batch.num_rows:
            yield text_bytes(batch.column(0))


def text_bytes(lines) -> bytes:
    """The UTF-8 bytes of an Arrow string array's values, one after the other (its data buffer, no
    Python string per line)."""
    import numpy as np

    kind = str(lines.type)
    if kind not in ("string", "utf8", "large_string", "large_utf8"):  # (a string view: no one data buffer)
        return "".join(lines.to_pylist()).encode("utf-8")
    offsets_type = np.int64 if kind.startswith("large") else np.int32
    _, offsets, data = lines.buffers()
    bounds = np.frombuffer(offsets, dtype=offsets_type)
    start, end = int(bounds[lines.offset]), int(bounds[lines.offset + len(lines)])
    return data[start:end].to_pybytes()


def content_sha256(chunks: Iterator[bytes]) -> tuple[str, int]:
    """The sha256 of the chunks and the number of lines they hold."""
    h, n = hashlib.sha256(), 0
    for chunk in chunks:
        h.update(chunk)
        n += chunk.count(b"\n")
    return h.hexdigest(), n


def write_file(target: Path, chunks: Iterable[bytes], *, compress: bool = False) -> None:
    """Write ``chunks`` to ``target`` (gzipped with ``compress``) through a temporary file beside it,
    renamed into place when complete: a failed write leaves no half-written file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
    try:
        with os.fdopen(fd, "wb") as raw:
            fh = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") if compress else raw
            for chunk in chunks:
                fh.write(chunk)
            if fh is not raw:
                fh.close()
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export_run(
    store: StoreHandle, name: str, path: str | os.PathLike | None = None, *, tag: str | None = None
) -> ExportedRun:
    """Write the stored run ``name`` as a TREC run file to ``path`` (gzip when it ends in ``.gz``;
    None or ``-``: standard output), written to a temporary file first and renamed, so a failed
    export leaves no half-written file. See the module docstring for the lines."""
    run_id = store.run_id(name)
    stored_tag, header = store.con.execute(
        "SELECT tag, metadata_header FROM run_meta WHERE run_id = ?", [run_id]
    ).fetchall()[0]
    field = tag if tag is not None else line_tag(stored_tag, name)
    if not _FIELD.fullmatch(field):
        raise StoreError(f"the tag {field!r} is not one field of a run line (no blanks)")
    n_header = header.count("\n") if header else 0
    h = hashlib.sha256()
    n_lines = 0

    def counted() -> Iterator[bytes]:
        nonlocal n_lines
        for chunk in run_file_chunks(store, stored_rows(run_id), header, field):
            h.update(chunk)
            n_lines += chunk.count(b"\n")
            yield chunk

    if path is None or str(path) == "-":
        out = sys.stdout.buffer
        for chunk in counted():
            out.write(chunk)
        out.flush()
        return ExportedRun(name, None, n_lines - n_header, h.hexdigest(), bool(header))
    target = Path(path)
    write_file(target, counted(), compress=target.suffix == ".gz")
    return ExportedRun(name, str(target), n_lines - n_header, h.hexdigest(), bool(header))
