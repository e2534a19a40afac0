"""JSON-lines input: files read in bounded chunks into one temporary table of lines, checked in
DuckDB. The common reader of generated answers, nugget sets, nugget assignments and support
labels (:mod:`.answers`, :mod:`.nuggets`, :mod:`.support`).

A file is read as text (UTF-8, gzip detected by its magic bytes, ``-`` for standard input);
blank lines are skipped; each other line must be one JSON object. The lines keep their physical
line numbers, so every error names the file, the line, its text and what was expected. A file's
content hash is the hash of its decompressed bytes (the same content from a ``.gz`` file, the
plain file or a pipe has one identity).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import IngestError
from .files import compression, display_name, expand_paths, hashes, materialized
from .staging import Group
from .texts import decode_lines, line_chunks

#: what a JSON-lines file is, for messages
JSONL = "one JSON object per line (JSON lines)"


@dataclass(frozen=True)
class LineFile:
    """One input file of a call: ``idx`` (its number in the lines table), the name the user gave
    (``<stdin>`` for standard input), the hash of its content and of the file as given."""

    idx: int
    name: str
    sha: str
    file_sha: str


@dataclass
class LineGroup(Group):
    """What one call stores as one run or set (a :class:`~.staging.Group` read from JSON lines,
    with no staged files): its name, content hash and the files it came from."""

    source_names: list[str] = field(default_factory=list)

    @property
    def sources(self) -> list[str]:
        return self.source_names


@contextmanager
def read_lines(con: Any, paths: str | os.PathLike | Iterable, table: str) -> Iterator[list[LineFile]]:
    """Read ``paths`` (globs expanded) into the temporary table ``table (file, ln, line)``: every
    non-blank line with its 1-based physical line number; a file holding a JSON array instead of
    JSON lines is an error. The table is dropped when the ``with`` block ends."""
    given = expand_paths(paths)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} (file INTEGER, ln BIGINT, line VARCHAR)")
    try:
        with materialized(given) as local:
            files = []
            for idx, p in enumerate(local):
                compression(p)
                files.append(_read_file(con, table, idx, p))
            yield files
    finally:
        con.execute(f"DROP TABLE IF EXISTS {table}")


def _read_file(con: Any, table: str, idx: int, path: Path) -> LineFile:
    import pyarrow as pa
    import pyarrow.compute as pc

    name = display_name(path)
    for start, raw in line_chunks(path):
        text = decode_lines(raw, start, name)
        chunk = pa.table({"ln": pa.array(range(start, start + len(text)), pa.int64()), "line": text})
        chunk = chunk.filter(pc.invert(pc.equal(pc.utf8_trim_whitespace(chunk.column("line")), "")))
        con.register("_jsonl_chunk", chunk)
        try:
            con.execute(f"INSERT INTO {table} SELECT {idx}, ln, line FROM _jsonl_chunk")
        finally:
            con.unregister("_jsonl_chunk")
    first = con.execute(f"SELECT ln, line FROM {table} WHERE file = ? ORDER BY ln LIMIT 1", [idx]).fetchall()
    if first and first[0][1].lstrip().startswith("["):
        raise IngestError("a JSON array, not JSON lines", file=name, line=first[0][0], text=first[0][1], expected=JSONL)
    shas, file_shas = hashes([path])
    return LineFile(idx, name, shas[path], file_shas[path])


def first_error(
    con: Any,
    table: str,
    err_sql: str,
    files: list[LineFile],
    problems: Mapping[int, str | Callable[[str], str]],
    expected: str,
) -> None:
    """Raise an IngestError at the first line whose error code ``err_sql`` (an SQL expression over
    ``table``'s columns, 0 when the line is good) is not 0 (:func:`first_bad`). ``problems``: what
    each code means, or a function of the line's text that says it precisely."""
    bad = f"SELECT file, ln, err FROM (SELECT file, ln, ({err_sql}) AS err FROM {table}) WHERE err > 0"
    first_bad(con, table, bad, files, problems, expected)


def first_bad(
    con: Any,
    table: str,
    bad_sql: str,
    files: list[LineFile],
    problems: Mapping[int, str | Callable[[str], str]],
    expected: str,
) -> None:
    """Raise an IngestError at the first line (file and line order) that the query ``bad_sql``
    reports: rows ``(file, ln, err)``, one per problem found (a line, or a part of it, checked on
    rows of their own); a line's smallest code is its first problem."""
    rows = con.execute(
        f"SELECT file, ln, min(err) FROM ({bad_sql}) b GROUP BY file, ln ORDER BY file, ln LIMIT 1"
    ).fetchall()
    if rows:
        f, ln, err = rows[0]
        [(line,)] = con.execute(f"SELECT line FROM {table} WHERE file = ? AND ln = ?", [f, ln]).fetchall()
        problem = problems.get(int(err), "unreadable line")
        message = problem(line) if callable(problem) else problem
        raise IngestError(message, file=files[f].name, line=int(ln), text=line, expected=expected)


def repeated(
    con: Any, table: str, key: str, files: list[LineFile], what: str, expected: str, where: str = "TRUE"
) -> None:
    """Raise an IngestError when two lines of ``table`` (rows with ``where``) have the same ``key``
    (SQL columns): the message names both lines."""
    rows = con.execute(
        f"""SELECT list(file ORDER BY file, ln)[1:2], list(ln ORDER BY file, ln)[1:2],
                   list(line ORDER BY file, ln)[2], {key}
            FROM {table} WHERE {where} GROUP BY ALL HAVING count(*) > 1 ORDER BY 1, 2 LIMIT 1"""
    ).fetchall()
    if rows:
        (f1, f2), (l1, l2), line, *values = rows[0]
        shown = ", ".join(str(v) for v in values)
        first = f"line {l1}" if f1 == f2 else f"{files[f1].name}, line {l1}"
        raise IngestError(
            f"{what} {shown} is given twice (also {first})", file=files[f2].name, line=int(l2), text=line,
            expected=expected,
        )  # fmt: skip


def content_sha(con: Any, table: str, where: str = "TRUE", params: list[Any] | None = None) -> str:
    """The hash of the lines of ``table`` selected by ``where`` in file and line order: the
    identity of content read from one or several files (line ends and blank lines aside)."""
    rows = con.execute(
        f"SELECT sha256(coalesce(string_agg(line, chr(10) ORDER BY file, ln), '')) FROM {table} WHERE {where}",
        params or [],
    ).fetchall()
    return str(rows[0][0])
