"""The two readers, both in SQL, that parse input files into a staging table.

* The **fast reader**: a TREC run whose first line is cleanly tab- or single-space separated is read
  by DuckDB's CSV parser itself (strict, six fields), with one multi-file ``read_csv`` per delimiter
  and compression (and ~128 MB of text), which DuckDB reads in parallel over the files, straight
  into the staging table; the line index of a row is its position in its file, kept by the
  insertion order of the staging table and computed from the rowid (a view). It copies neither the
  Q0 column nor the tag (every line must carry the first line's tag, else the file goes to the
  general reader).
* The **general reader**: every other file, and any file in which the fast reader meets a line it
  cannot read exactly like the general reader, is read line by line (a few files per
  ``INSERT ... UNION ALL`` statement, one ``read_csv`` per file) and split in SQL (``string_split``
  for clean lines, a regular expression only for messy ones).

Both readers store exactly the same rows (tests/store/test_ingest.py checks this). Row errors are codes in
the ``err`` column (:mod:`evalstore.ingest.formats`); :mod:`evalstore.ingest.checks` turns them into
messages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import duckdb

from ..errors import IngestError
from .files import WS, check_decodable, duckdb_path, same_file
from .formats import E_CTL, E_MESSY, E_NF, INT_SQL, NUM_SQL
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
    and no other whitespace: such files are read by DuckDB's CSV parser directly."""
    if not first_line or first_line.startswith("#") or re.search(r"[\x00-\x08\x0b-\x1f\x7f]", first_line):
        return None  # control bytes (and CR): the general reader gives the exact error
    for d, other in (("\t", " "), (" ", "\t")):
        parts = first_line.split(d)
        if other not in first_line and len(parts) == 6 and all(parts):
            return d
    return None


def branch_sql(f: SourceFile, out_cols: str, k: int) -> tuple[str, list]:
    """SELECT for one file: file_idx, grp, ln, err, then the layout's columns."""
    lay = f.layout
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


_FAST_COLUMNS = (
    "columns={'topic': 'VARCHAR', 'q0': 'VARCHAR', 'doc': 'VARCHAR', 'rank': 'VARCHAR', "
    "'score': 'VARCHAR', 'tag': 'VARCHAR'}"
)


def fast_select_sql(delim: str, compression: str) -> str:
    """INSERT source over one multi-file ``read_csv`` of cleanly delimited TREC runs, read by DuckDB's
    CSV parser (strict: exactly 6 fields per line). Parameters: $1 the paths as given to read_csv,
    $2 the plain paths, $3 each file's first-line tag, $4 file_idx and $5 grp of each file.

    Columns: those of the staging table (file_idx, grp, ln, err, topic, doc, submitted_rank, score,
    tag), with ln and tag NULL: ln is filled afterwards from the row's position (see :func:`load`),
    and the tag is the first line's for every row (a line with another tag is messy), so it is not
    copied 5 million times. A line that the general reader would split or judge differently
    (another whitespace or a control character inside a field, an empty field, a '#' line, a bad
    number, another tag) gets err = E_MESSY, and its file is then read again by the general reader,
    which gives the exact error or the same rows. So both readers always store the same thing.
    file_idx is -1 if DuckDB reports a file name that is none of the paths given."""
    other = " " if delim == "\t" else "\t"
    # The first line (checked in Python by _fast_delimiter) holds no other whitespace, \r or \x01,
    # so a tag equal to it is clean, and so is a Q0 column that reads 'Q0'; only the topic and the
    # docno (and an unusual Q0 column) are searched for the other delimiter and \x01.
    inside = " OR ".join(f"contains({c}, '{ch}')" for c in ("topic", "doc") for ch in (other, "\x01"))
    messy = (
        f"topic IS NULL OR q0 IS NULL OR doc IS NULL OR tag IS NULL OR tag <> $3[fpos] OR "
        f"starts_with(topic, '#') OR {inside} OR regexp_matches(topic || doc, '{CONTROL_ANY}') OR "
        f"(q0 <> 'Q0' AND (contains(q0, '{other}') OR contains(q0, '\x01')))"
    )
    return (
        f"SELECT coalesce($4[fpos], -1) AS file_idx, coalesce($5[fpos], -1) AS grp, NULL::BIGINT AS ln, "
        f"(CASE WHEN messy OR submitted_rank IS NULL OR score IS NULL OR NOT isfinite(score) "
        f"THEN {E_MESSY} ELSE 0 END)::UTINYINT AS err, topic, doc, submitted_rank, score, NULL::VARCHAR AS tag "
        f"FROM (SELECT fpos, topic, doc, {INT_SQL.format(f='rank', t='BIGINT')} AS submitted_rank, "
        f"{NUM_SQL.format(f='score')} AS score, ({messy}) AS messy "
        f"FROM (SELECT coalesce(list_position($1, filename), list_position($2, filename)) AS fpos, * "
        f"FROM read_csv($1, {_FAST_COLUMNS}, delim='{delim}', quote='', escape='', header=false, "
        f"auto_detect=false, strict_mode=true, compression='{compression}', filename=true)))"
    )


def fast_batches(files: list[SourceFile], max_bytes: int = 128 << 20) -> Iterator[list[SourceFile]]:
    """Files with the same delimiter and compression, a batch at most ~max_bytes of text (gzip
    counted five times its size), so that DuckDB's read buffers for one statement stay small."""
    by_kind: dict[tuple, list[SourceFile]] = {}
    for f in files:
        by_kind.setdefault((f.delim, f.compression), []).append(f)
    for kind_files in by_kind.values():
        batch: list[SourceFile] = []
        size = 0
        for f in kind_files:
            try:
                n = os.path.getsize(f.path) * (5 if f.compression == "gzip" else 1)
            except OSError:
                n = 0
            if batch and size + n > max_bytes:
                yield batch
                batch, size = [], 0
            batch.append(f)
            size += n
        if batch:
            yield batch


class _UnknownFileName(Exception):
    """DuckDB reported a file name that matches none of the batch's paths."""


def load_fast(con, raw: str, batch: list[SourceFile]) -> None:
    """Read a batch of cleanly delimited runs with one multi-file read_csv (DuckDB reads the files
    in parallel) straight into ``raw``, in the reader's order (insertion order: each file's rows
    are contiguous and in file order), with ln NULL; :func:`line_index_sql` then numbers them."""
    f0 = batch[0]
    assert f0.delim is not None, "internal: the fast reader reads delimited files only"
    con.execute(
        f"INSERT INTO {raw} {fast_select_sql(f0.delim, f0.compression)}",
        [
            [duckdb_path(f.path) for f in batch],
            [str(f.path) for f in batch],
            [f.tag0 for f in batch],
            [f.idx for f in batch],
            [f.grp for f in batch],
        ],
    )
    if con.execute(f"SELECT count(*) FROM {raw} WHERE file_idx = -1").fetchall()[0][0]:
        con.execute(
            f"DELETE FROM {raw} WHERE file_idx = -1 OR file_idx IN (SELECT unnest(?))", [[f.idx for f in batch]]
        )
        raise _UnknownFileName


def line_index_sql(con, raw: str) -> str:
    """The SQL expression for ln (the content-line index within its file) over table ``raw``.

    The fast reader leaves ln NULL: a row's line index is its position in the staging table, whose
    insertion order keeps each file's rows contiguous and in file order, so ln = rowid - (the
    file's first rowid) + 1, computed when read (an UPDATE of millions of rows would cost time and
    memory). A file whose rows are not contiguous (not expected, but not assumed either) gets ln
    written by a window over rowid instead."""
    spans = con.execute(
        f"SELECT file_idx, min(rowid), max(rowid), count(*) FROM {raw} WHERE ln IS NULL GROUP BY file_idx"
    ).fetchall()
    scattered = [fi for fi, lo, hi, n in spans if hi - lo + 1 != n]
    if scattered:
        con.execute(
            f"UPDATE {raw} SET ln = w.ln FROM "
            f"(SELECT rowid AS rid, row_number() OVER (PARTITION BY file_idx ORDER BY rowid) AS ln "
            f" FROM {raw} WHERE ln IS NULL AND file_idx IN (SELECT unnest(?))) w "
            f"WHERE {raw}.rowid = w.rid",
            [scattered],
        )
    contiguous = [(fi, lo) for fi, lo, hi, n in spans if hi - lo + 1 == n]
    if not contiguous:
        return "ln"
    bases = ["NULL"] * (max(fi for fi, _ in contiguous) + 1)
    for fi, lo in contiguous:
        bases[fi] = str(int(lo))
    return f"coalesce(ln, rowid - ([{', '.join(bases)}]::BIGINT[])[file_idx + 1] + 1)"


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
    """Parse the files into the staging table ``st.raw`` and define the view ``st.rows`` over it,
    a few files per statement so that DuckDB reads them in parallel and the progress bar moves.

    Cleanly delimited TREC runs (``f.delim``) are read by the fast reader; a file it cannot read
    exactly (see :func:`fast_select_sql`) is read again by the general reader."""
    con, raw = st.con, st.raw
    general = [f for f in files if not f.delim]
    fallback: list[SourceFile] = []
    for batch in fast_batches([f for f in files if f.delim]):
        todo = list(batch)
        while todo:
            try:
                load_fast(con, raw, todo)
                break
            except _UnknownFileName:  # cannot tell the files apart: read them all the general way
                fallback.extend(todo)
                break
            except (duckdb.IOException, duckdb.InvalidInputException) as e:
                bad = culprit(e, todo)
                if bad is None:  # cannot tell which file: read them all the general way
                    fallback.extend(todo)
                    break
                fallback.append(bad)
                todo.remove(bad)
        bar.advance(len(batch))
    messy = [r[0] for r in con.execute(f"SELECT DISTINCT file_idx FROM {raw} WHERE err = {E_MESSY}").fetchall()]
    if messy:
        con.execute(f"DELETE FROM {raw} WHERE file_idx IN (SELECT unnest(?))", [messy])
        fallback.extend(f for f in files if f.idx in set(messy))
    for f in fallback:
        f.delim = None
    for batch in general_batches(sorted(general + fallback, key=lambda f: f.idx), con):
        try:
            insert_union(con, raw, [branch_sql(f, st.columns, 0) for f in batch])
        except (duckdb.IOException, duckdb.InvalidInputException) as e:
            read_failed(e, batch)
        bar.advance(sum(1 for f in batch if f in general))
    # the rowid bases are taken after every insert and delete of the load: DuckDB may compact
    # the table (and renumber rowids) when rows were deleted before
    st.define_view(line_index_sql(con, raw))


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
