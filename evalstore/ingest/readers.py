"""The general reader, in SQL, that parses input files into a staging table.

Every qrels file, and every run file that the fast reader (:mod:`evalstore.ingest.fast`) does not
read (not cleanly delimited, or a line it cannot read exactly like this reader), is read line by
line (a few files per ``INSERT ... UNION ALL`` statement, one ``read_csv`` per file) and split in SQL
(``string_split`` for clean lines, a regular expression only for messy ones). :func:`fast_delimiter`
tells from a file's first line whether the fast reader is tried.

Both readers store exactly the same rows (tests/evalstore/ingest/test_pipeline.py, tests/evalstore/ingest/test_fast.py).
Row errors are codes in the ``err`` column (:mod:`evalstore.ingest.formats`);
:mod:`evalstore.ingest.checks` turns them into messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import duckdb

from ..errors import IngestError
from .files import WS, check_decodable, duckdb_path, same_file
from .formats import E_CTL, E_NF
from .staging import SourceFile, Staging

# A line is "simple" when splitting it on one tab (or on one space) gives the same fields as the
# general whitespace split: no other whitespace, no empty field, nothing to trim. Those lines are
# split with string_split; the rest (mixed or repeated whitespace, padding) with a regexp.
_SIMPLE_TAB = (
    "(NOT contains(line, ' ') AND NOT contains(line, '\r') AND NOT contains(line, '\t\t') "
    "AND NOT starts_with(line, '\t') AND NOT ends_with(line, '\t'))"
)
_SIMPLE_SP = (
    "(NOT contains(line, '\t') AND NOT contains(line, '\r') AND NOT contains(line, '  ') "
    "AND NOT starts_with(line, ' ') AND NOT ends_with(line, ' '))"
)
# Data lines: not blank, first non-blank character not '#'. (CASE, so that the regexps only run on
# lines that are not simple; trim/ltrim with a character set are slow in DuckDB.)
_CONTENT = (
    f"line IS NOT NULL AND line <> '' AND NOT starts_with(line, '#') AND CASE WHEN {_SIMPLE_TAB} OR "
    f"{_SIMPLE_SP} THEN true ELSE regexp_matches(line, '[^{WS}]') AND NOT regexp_matches(line, '^[{WS}]*#') "
    f"END"
)
_SPLIT = (
    f"CASE WHEN {_SIMPLE_TAB} THEN string_split(line, '\t') WHEN {_SIMPLE_SP} THEN string_split(line, ' ') "
    f"ELSE regexp_split_to_array(trim(line, '{WS}'), '[{WS}]+') END"
)
# One VARCHAR per line: \x01 is the delimiter, so a line holding that control character spills
# into column x, which is then reported (never silently cut).
# Control bytes: a field holding one (NUL, ESC, ...) is refused; trec_eval would read a NUL as the end of
# the string. Tab and CR are whitespace (they separate fields); the fast reader sends any line with a
# control byte in the topic or docno to the general reader, which gives the exact error.
CONTROL_BAD = "[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]"
CONTROL_ANY = "[\\x00-\\x1f\\x7f]"
_READ_OPTS = (
    "columns={'line': 'VARCHAR', 'x': 'VARCHAR'}, delim='\x01', quote='', escape='', header=false, "
    "auto_detect=false, new_line='\\n', strict_mode=false, null_padding=true"
)


def fast_delimiter(first_line: str | None) -> str | None:
    """'\t' or ' ' when the line has exactly 6 fields separated by single tabs (or single spaces)
    and no other whitespace: such files are tried by the fast reader."""
    if not first_line or first_line.startswith("#") or re.search(r"[\x00-\x08\x0b-\x1f\x7f]", first_line):
        return None  # control bytes (and CR): the general reader gives the exact error
    for d, other in (("\t", " "), (" ", "\t")):
        parts = first_line.split(d)
        if other not in first_line and len(parts) == 6 and all(parts):
            return d
    return None


def branch_sql(f: SourceFile, out_cols: str, k: int) -> tuple[str, list]:
    """SELECT for one file: file_idx, grp, ln, err, then the layout's columns."""
    lay = f.line_kind
    cols = lay.columns.replace("$topic", f"${k + 2}")
    names = [c.split()[0] for c in out_cols.split(", ")]
    sql = (
        f"SELECT {f.idx} AS file_idx, {f.grp} AS grp, ln, "
        f"(CASE WHEN ctl THEN {E_CTL} WHEN NOT nf_ok THEN {E_NF} {lay.checks} ELSE 0 END)::UTINYINT AS err, "
        f"{', '.join(names)} FROM ("
        f"SELECT ln, x IS NOT NULL OR regexp_matches(line, '{CONTROL_BAD}') AS ctl, {lay.field_count_ok()} AS nf_ok, "
        f"{cols} FROM ("
        f"SELECT ln, x, line, {_SPLIT} AS f FROM ("
        f"SELECT row_number() OVER () AS ln, line, x FROM read_csv(${k + 1}, {_READ_OPTS}, "
        f"compression='{f.compression}') WHERE {_CONTENT})))"
    )
    return sql, [duckdb_path(f.path)] + ([f.topic] if "$topic" in lay.columns else [])


def general_batches(files: list[SourceFile], con) -> Iterator[list[SourceFile]]:
    try:
        threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    except (duckdb.Error, ValueError, TypeError):
        threads = 2
    size = max(8, 2 * threads)
    for start in range(0, len(files), size):
        yield files[start : start + size]


def insert_union(con, table: str, branches: list[tuple[str, list]]) -> None:
    parts: list[str] = []
    params: list = []
    for sql, p in branches:
        # renumber this branch's $n parameters after those of the previous branches
        parts.append(re.sub(r"\$(\d+)", lambda m: f"${int(m.group(1)) + len(params)}", sql))
        params.extend(p)
    con.execute(f"INSERT INTO {table} " + " UNION ALL ".join(parts), params)


def culprit(e: duckdb.Error, batch: list[SourceFile]) -> SourceFile | None:
    """The file of the batch that a DuckDB reader error is about, if the message names one."""
    msg = str(e)
    named = re.search(r"^\s*file = (.+)$", msg, re.M)
    if named:
        for f in batch:
            if same_file(named.group(1), f.path):
                return f
    mentioned = [f for f in batch if str(f.path) in msg or duckdb_path(f.path) in msg]
    return max(mentioned, key=lambda f: len(str(f.path))) if mentioned else None


def load(st: Staging, files: list[SourceFile], bar) -> None:
    """Parse the files into the staging table ``st.raw`` with the general reader and define the
    view ``st.rows`` over it, a few files per statement so that DuckDB reads them in parallel and
    the progress bar moves. (Cleanly delimited TREC runs are read by :mod:`evalstore.ingest.fast`
    before; the files it declines come here.)"""
    con, raw = st.con, st.raw
    for batch in general_batches(sorted(files, key=lambda f: f.idx), con):
        try:
            insert_union(con, raw, [branch_sql(f, st.columns, 0) for f in batch])
        except (duckdb.IOException, duckdb.InvalidInputException) as e:
            read_failed(e, batch)
        bar.advance(len(batch))
    st.define_view()


def read_failed(e: duckdb.Error, batch: list[SourceFile]) -> None:
    """Turn a reader error into an IngestError naming the file (and line, for bad bytes)."""
    msg = str(e)
    named = culprit(e, batch)
    suspects = [named] if named else batch
    for f in suspects:  # bad bytes or damaged gzip data: found again, with the line, by Python
        check_decodable(f.path)
    first = msg.splitlines()[0] if msg else type(e).__name__
    target = suspects[0].path if len(suspects) == 1 else ", ".join(str(f.path) for f in suspects)
    too_long = re.search(r"Maximum line size of (\d+) bytes exceeded\. Actual Size:\s*(\d+)", msg)
    if too_long:
        line = re.search(r"CSV Error on Line: (\d+)", msg)
        raise IngestError(
            f"a line of {int(too_long.group(2)):,} bytes is longer than the reader's limit of "
            f"{int(too_long.group(1)):,} bytes (DuckDB's max_line_size)",
            file=str(target),
            line=int(line.group(1)) if line else None,
            expected="short lines: a topic, a docno and numbers (fix or remove the long line)",
        ) from None
    raise IngestError(f"cannot read the file: {first}", file=str(target)) from None
