"""Ingesting the texts of topics (queries) and documents: ``ingest topics`` / ``ingest docs``.

One file per call becomes one named set (default name: the file name without its extensions),
stored in one transaction (``topic_set_meta`` / ``topic_data``, ``doc_set_meta`` / ``doc_data``;
views ``topics``, ``docs``). Identity is by content, as for runs and qrels: the sha256 of the
decompressed bytes, with the format and (topics) the field taken as the query; the same content
under the same name is left alone, other content under a stored name needs ``replace``.

Line formats (:mod:`.text_formats`) are read in chunks of at most :data:`CHUNK_BYTES` (a
collection of millions of passages never sits in memory whole), each chunk parsed and checked in
DuckDB; the first bad line stops the call with its file, line, text and what was expected. An id
given twice is an error naming both lines. A document's text is kept as given (only the line end
is removed); blank lines are skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import IngestError
from .checks import check_name
from .files import (
    GZIP_ERRORS,
    compression,
    damaged_gzip,
    display_name,
    hashes,
    materialized,
    open_bytes,
    raw_lines,
)
from .formats import strip_suffixes
from .text_formats import FORMAT_CHOICES, TEXT_FORMATS, TOPIC_FIELDS, TextFormat, sniff
from .trec_topics import parse

if TYPE_CHECKING:
    import pyarrow as pa

    from ..db.handle import StoreHandle

#: bytes of text read and parsed at a time (a chunk ends at a line end)
CHUNK_BYTES = 32 << 20
_SUFFIXES = (".gz", ".txt", ".tsv", ".jsonl", ".json", ".xml", ".sgml", ".topics", ".queries", ".trec")


@dataclass(frozen=True)
class Kind:
    """What differs between topics and documents."""

    name: str  # 'topics' or 'docs'
    what: str  # 'topic set', 'doc set'
    item: str  # 'topic', 'document'
    meta: str
    data: str
    id_col: str
    key: str  # the id column of the data table
    count: str  # the count column of the meta table


TOPICS = Kind("topics", "topic set", "topic", "topic_set_meta", "topic_data", "topics_id", "topic", "n_topics")
DOCS = Kind("docs", "doc set", "document", "doc_set_meta", "doc_data", "docs_id", "doc", "n_docs")


@dataclass
class TextIngestResult:
    kind: str  # 'topics' or 'docs'
    name: str
    status: str  # 'added', 'replaced', 'unchanged'
    file: str
    format: str
    count: int = 0
    field: str | None = None

    def summary(self) -> str:
        what = "topic set" if self.kind == "topics" else "doc set"
        if self.status == "unchanged":
            return (
                f"{what} {self.name!r}: identical content already stored under this name (same sha256), nothing to do"
            )
        items = "topics" if self.kind == "topics" else "documents"
        extra = f", query text: {self.field}" if self.field else ""
        return f"{what} {self.name!r} {self.status}: {self.count} {items} ({self.format}{extra})"


def ingest_topics(
    store: StoreHandle,
    path: str | os.PathLike,
    *,
    name: str | None = None,
    format: str = "auto",
    field: str = "title",
    replace: bool = False,
) -> TextIngestResult:
    """Ingest a topic (query) file as the topic set ``name``: TREC SGML/XML topics,
    ``qid<TAB>text`` or JSONL (``format='auto'`` sniffs it); ``field`` (title, description,
    narrative) is the query text pages show. See :mod:`evalstore.ingest.texts`."""
    if field not in TOPIC_FIELDS:
        raise IngestError(f"unknown topic field {field!r}; use one of {', '.join(TOPIC_FIELDS)}")
    return _ingest(store, TOPICS, path, name, format, field, replace)


def ingest_docs(
    store: StoreHandle,
    path: str | os.PathLike,
    *,
    name: str | None = None,
    format: str = "auto",
    replace: bool = False,
) -> TextIngestResult:
    """Ingest a document file (``docid<TAB>text`` or JSONL) as the doc set ``name``, read in bounded
    chunks; texts are kept as given. See :mod:`evalstore.ingest.texts`."""
    return _ingest(store, DOCS, path, name, format, None, replace)


def _ingest(
    store: StoreHandle, kind: Kind, path, name: str | None, format: str, field: str | None, replace: bool
) -> TextIngestResult:
    if format not in FORMAT_CHOICES[kind.name]:
        raise IngestError(f"unknown {kind.name} format {format!r}; use one of {', '.join(FORMAT_CHOICES[kind.name])}")
    given = Path(os.fspath(path))
    with materialized([given]) as [p]:
        shown = display_name(p)
        compression(p)
        fmt = TEXT_FORMATS[sniff(_first_char(p), kind.name) if format == "auto" else format]
        if name is None:
            name = default_name(given) if str(given) != "-" else None
            if not name:
                raise IngestError(f"name the {kind.what} read from standard input (--name)", file=shown)
        check_name(name, kind.what)
        sha, file_sha = (d[p] for d in hashes([p]))
        con = store.con
        cols = "field" if kind is TOPICS else "NULL"
        old = con.execute(
            f"SELECT {kind.id_col}, sha256, file_sha256, format, {cols} FROM {kind.meta} WHERE name = ?", [name]
        ).fetchall()
        if old:
            sid, osha, ofile, ofmt, ofield = old[0]
            if (sha == osha or file_sha == ofile) and ofmt == fmt.name and ofield == field:
                return TextIngestResult(kind.name, name, "unchanged", shown, fmt.name, field=field)
            if not replace:
                raise IngestError(
                    f"a {kind.what} named {name!r} is already stored with other content or options",
                    file=shown,
                    expected="--replace to replace it, or another --name",
                )
        with store.transaction():
            if old:
                sid = old[0][0]
                con.execute(f"DELETE FROM {kind.data} WHERE {kind.id_col} = ?", [sid])
                con.execute(
                    f"UPDATE {kind.meta} SET source = ?, format = ?, sha256 = ?, file_sha256 = ?, "
                    f"ingested_at = current_timestamp{', field = ?' if kind is TOPICS else ''} WHERE {kind.id_col} = ?",
                    [shown, fmt.name, sha, file_sha, *([field] if kind is TOPICS else []), sid],
                )
            else:
                fields = "name, source, format, sha256, file_sha256, " + ("field, " if kind is TOPICS else "")
                values = [name, shown, fmt.name, sha, file_sha, *([field] if kind is TOPICS else [])]
                sid = con.execute(
                    f"INSERT INTO {kind.meta} ({fields}{kind.count}) VALUES ({', '.join('?' * len(values))}, 0) "
                    f"RETURNING {kind.id_col}",
                    values,
                ).fetchall()[0][0]
            if fmt.line_based:
                for start, lines in line_chunks(p):
                    _load_chunk(con, kind, fmt, sid, field, start, lines, shown)
            else:
                _load_trec(con, sid, field or "title", p, shown)
            count = _finish(con, kind, sid, fmt, shown)
    return TextIngestResult(kind.name, name, "replaced" if old else "added", shown, fmt.name, count, field)


#: file names that say what a file is but not which collection it belongs to (``topics.tsv`` of
#: TREC DL 2019 and of 2020): such a file's set is named after its folder too
GENERIC_NAMES = frozenset(
    {"topics", "topic", "queries", "query", "questions", "docs", "documents", "collection", "corpus"}
)


def default_name(path: Path) -> str:
    """The name of a set read from ``path`` when none is given: the file name without its suffixes
    (``dl19-queries.tsv.gz`` -> ``dl19-queries``), prefixed with the folder's name when it is a
    generic word (``trec-dl-2019-passage/topics.tsv`` -> ``trec-dl-2019-passage-topics``)."""
    name = strip_suffixes(path.name, _SUFFIXES)
    folder = path.resolve().parent.name
    if name.lower() in GENERIC_NAMES and folder:
        return f"{folder}-{name}"
    return name


def _first_char(path: Path) -> str | None:
    for _, raw in raw_lines(path):
        text = raw.decode("utf-8", errors="replace").strip()
        if text:
            return text[0]
    return None


def line_chunks(path: Path) -> Iterator[tuple[int, list[bytes]]]:
    """``(number of the first line, lines)``: the file in pieces of about :data:`CHUNK_BYTES`."""
    start = 1
    try:
        with open_bytes(path) as f:
            while lines := f.readlines(CHUNK_BYTES):
                yield start, lines
                start += len(lines)
    except GZIP_ERRORS as e:
        raise damaged_gzip(path, start - 1, e) from None


def decode_lines(lines: list[bytes], start: int, file: str) -> pa.Array:
    """The lines as UTF-8 text without their line ends (a BOM at the start of the file dropped);
    IngestError at the first line that is not UTF-8."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if start == 1 and lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    try:
        text = pc.cast(pa.array(lines, pa.binary()), pa.string())
    except (pa.ArrowInvalid, UnicodeDecodeError):
        for i, raw in enumerate(lines):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise IngestError(
                    f"undecodable bytes: byte {raw[e.start : e.start + 1]!r} at column {e.start + 1} is not UTF-8",
                    file=file,
                    line=start + i,
                    text=raw.decode("utf-8", errors="replace").rstrip("\r\n"),
                    expected="UTF-8 text",
                ) from None
        raise
    return pc.utf8_rtrim(text, characters="\r\n")


def _load_chunk(
    con, kind: Kind, fmt: TextFormat, sid: int, field: str | None, start: int, lines: list[bytes], file: str
) -> None:
    import pyarrow as pa

    text = decode_lines(lines, start, file)
    chunk = pa.table({"ln": pa.array(range(start, start + len(text)), pa.int64()), "line": text})
    con.register("_text_chunk", chunk)
    try:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE _text_rows AS SELECT {fmt.select(kind.name)} FROM _text_chunk "
            f"WHERE trim(line, ' \t') <> ''"
        )
    finally:
        con.unregister("_text_chunk")
    bad = con.execute("SELECT ln, line, err FROM _text_rows WHERE err > 0 ORDER BY ln LIMIT 1").fetchall()
    if bad:
        ln, line, err = bad[0]
        raise IngestError(fmt.problem(kind.name, err), file=file, line=ln, text=line, expected=fmt.expected(kind.name))
    if kind is TOPICS:
        assert field is not None
        _need_field(con, field, file)
        con.execute(
            f"INSERT INTO topic_data SELECT ?, id, {field}, title, description, narrative, ln FROM _text_rows", [sid]
        )
    else:
        con.execute("INSERT INTO doc_data SELECT ?, id, title, text, ln FROM _text_rows", [sid])
    con.execute("DROP TABLE _text_rows")


def _need_field(con, field: str, file: str) -> None:
    """Every topic has the field taken as its query."""
    bad = con.execute(f"SELECT ln, line, id FROM _text_rows WHERE {field} IS NULL ORDER BY ln LIMIT 1").fetchall()
    if bad:
        ln, line, ident = bad[0]
        raise IngestError(
            f"the topic {ident!r} has no {field}",
            file=file,
            line=ln,
            text=line,
            expected=f"a {field} for every topic (--field chooses title, description or narrative)",
        )


def _load_trec(con, sid: int, field: str, path: Path, file: str) -> None:
    import pyarrow as pa

    with open_bytes(path) as f:
        raw = f.read()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise IngestError(
            f"undecodable bytes: byte {raw[e.start : e.start + 1]!r} is not UTF-8", file=file, line=line
        ) from None
    topics = parse(text, file)
    missing = next((t for t in topics if t.field(field) is None), None)
    if missing:
        raise IngestError(
            f"the topic {missing.topic!r} has no {field}",
            file=file,
            line=missing.line,
            text=f"topic {missing.topic}",
            expected=f"a {field} for every topic (--field chooses title, description or narrative)",
        )
    table = pa.table(
        {
            "topic": [t.topic for t in topics],
            "query": [t.field(field) for t in topics],
            "title": [t.title for t in topics],
            "description": [t.description for t in topics],
            "narrative": [t.narrative for t in topics],
            "ln": pa.array([t.line for t in topics], pa.int64()),
        }
    )
    con.register("_text_topics", table)
    try:
        con.execute(
            "INSERT INTO topic_data SELECT ?, topic, query, title, description, narrative, ln FROM _text_topics", [sid]
        )
    finally:
        con.unregister("_text_topics")


def _finish(con, kind: Kind, sid: int, fmt: TextFormat, file: str) -> int:
    """The set's count, after checking that no id is given twice and that the file had any."""
    dup = con.execute(
        f"SELECT {kind.key}, min(line_no), list(line_no ORDER BY line_no)[2] FROM {kind.data} "
        f"WHERE {kind.id_col} = ? GROUP BY {kind.key} HAVING count(*) > 1 ORDER BY 3 LIMIT 1",
        [sid],
    ).fetchall()
    if dup:
        ident, first, second = dup[0]
        raise IngestError(
            f"the {kind.item} id {ident!r} is given twice (lines {first} and {second})",
            file=file,
            line=second,
            text=str(ident),
            expected=f"each {kind.item} id once",
        )
    n = con.execute(f"SELECT count(*) FROM {kind.data} WHERE {kind.id_col} = ?", [sid]).fetchall()[0][0]
    if not n:
        raise IngestError(f"no {kind.item} in the file", file=file, expected=fmt.expected(kind.name) or None)
    con.execute(f"UPDATE {kind.meta} SET {kind.count} = ? WHERE {kind.id_col} = ?", [n, sid])
    return int(n)
