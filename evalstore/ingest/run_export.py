"""A stored run as a TREC run file: ``evalstore export run NAME -o FILE`` and ``Store.export_run``.

An ingested TREC run file is written back **byte for byte**: its text, whose sha256 is the run's
``runs.sha256`` (header, separators, the score as it was spelt, line ends; from what the store
kept at ingest, :mod:`evalstore.ingest.run_text`). A run the store keeps no text of (a fused run,
a run given as a DataFrame or dict, NTCIR res files, a run ingested before schema 17) is written
as evalstore's own lines: its ir_metadata header first (a fused run's: its recipe), then one line
per row, ``topic Q0 doc rank score tag``, single spaces:

* the rows in the order of the file they came from (``line_no``); a fused run's by topic and rank;
* ``rank``: the rank column as it was written (a fused run's: its rank); the evaluation ranks
  come from the scores again when the file is read, so re-ingesting it gives the same run;
* ``score``: the stored double in its shortest text that reads back as the same double (a run
  without scores, an NTCIR res file, gets ``n - rank + 1``, which trec_eval orders as the file);
* ``tag``: the run's tag when it is one field, else its name (spaces as ``_``), or ``tag=``.

``--tag`` writes the given tag in every line (the file is then not the ingested one). The
export's sha256 is compared with ``runs.sha256``: :attr:`ExportedRun.exact` says whether the file
is the ingested text. The lines are made in DuckDB and streamed in batches.
:func:`~evalstore.ingest.run_text.run_file_chunks` is also how a fused run's content hash is taken
(:mod:`evalstore.fusion.store`): the sha256 of a fused run is that of the file this module writes
for it, so exporting it and ingesting the file gives the same identity.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.output_file import OutputPathError, replacing
from ..errors import StoreError
from .run_text import line_format, run_file_chunks, stored_rows, stored_text

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

_FIELD = re.compile(r"\S+")


@dataclass(frozen=True)
class ExportedRun:
    """What :func:`export_run` wrote: the run, the file (None: standard output), the rows, the
    sha256 of the uncompressed text, and whether it is the run's content hash (``exact``: the
    ingested file byte for byte, or a fused run's own file)."""

    name: str
    path: str | None
    n_rows: int
    sha256: str
    header: bool
    exact: bool = False
    why: str = ""  # when not exact: what the file is instead

    def summary(self) -> str:
        where = self.path or "standard output"
        head = " below its ir_metadata header" if self.header else ""
        same = "byte for byte (its sha256 is runs.sha256)" if self.exact else self.why
        return f"wrote run {self.name!r} to {where}: {self.n_rows} rows{head}, {same}"


def line_tag(tag: str | None, name: str) -> str:
    """The tag field of the exported lines: the stored tag when it is one field (not a list of a
    file's several tags), else the name with blanks as ``_``."""
    if tag and _FIELD.fullmatch(tag) and "," not in tag:
        return tag
    return re.sub(r"\s+", "_", name.strip()) or "run"


def content_sha256(chunks: Iterator[bytes]) -> tuple[str, int]:
    """The sha256 of the chunks and the number of lines they hold."""
    h, n = hashlib.sha256(), 0
    for chunk in chunks:
        h.update(chunk)
        n += chunk.count(b"\n")
    return h.hexdigest(), n


def export_run(
    store: StoreHandle, name: str, path: str | os.PathLike | None = None, *, tag: str | None = None
) -> ExportedRun:
    """Write the stored run ``name`` as a TREC run file to ``path`` (gzip when it ends in ``.gz``;
    None or ``-``: standard output), written to a temporary file first and renamed, so a failed
    export leaves no half-written file. See the module docstring for the lines."""
    run_id = store.run_id(name)
    header, sha, n_rows = store.con.execute(
        "SELECT metadata_header, sha256, n_rows FROM run_meta WHERE run_id = ?", [run_id]
    ).fetchall()[0]
    chunks, why = run_text(store, run_id, name, tag)
    h = hashlib.sha256()
    if path is None or str(path) == "-":
        out = sys.stdout.buffer
        for chunk in chunks:
            h.update(chunk)
            out.write(chunk)
        out.flush()
        return ExportedRun(name, None, n_rows, h.hexdigest(), bool(header), h.hexdigest() == sha, why)
    target = Path(path)
    try:
        with replacing(target, binary=True) as raw:
            fh = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") if target.suffix == ".gz" else raw
            for chunk in chunks:
                h.update(chunk)
                fh.write(chunk)
            if fh is not raw:
                fh.close()
    except OutputPathError as e:
        raise StoreError(str(e)) from None
    return ExportedRun(name, str(target), n_rows, h.hexdigest(), bool(header), h.hexdigest() == sha, why)


def run_text(store: StoreHandle, run_id: int, name: str, tag: str | None = None) -> tuple[Iterator[bytes], str]:
    """The bytes of the run's file, and (when they are not the ingested text) what they are: the ingested
    text (kept, or made from the kept line format) unless ``tag`` replaces the tag field."""
    stored_tag, header = store.con.execute(
        "SELECT tag, metadata_header FROM run_meta WHERE run_id = ?", [run_id]
    ).fetchall()[0]
    if tag is not None and not _FIELD.fullmatch(tag):
        raise StoreError(f"the tag {tag!r} is not one field of a run line (no blanks)")
    text = stored_text(store, run_id) if tag is None else None
    if text is not None:
        return text, ""
    fmt = line_format(store, run_id)
    if fmt is not None:  # the lines as written (with another tag when --tag gives one)
        why = "its lines as ingested but --tag replaces the tag of every line" if tag is not None else ""
        return run_file_chunks(store, stored_rows(run_id), header, tag, fmt), why
    why = (
        "in evalstore's own lines with --tag's tag"
        if tag is not None
        else "in evalstore's own lines: the store keeps no text of this run (fused, given as a DataFrame or dict, "
        "read from NTCIR res files, or ingested before schema version 17)"
    )
    return run_file_chunks(store, stored_rows(run_id), header, tag or line_tag(stored_tag, name)), why
