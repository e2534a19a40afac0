"""Ingestion of TREC and NTCIR runs and qrels into the store.

Files are read by DuckDB's CSV reader (gzip detected by its magic bytes and read transparently),
split and validated in SQL, and written inside one transaction per call: either every file of the
call is stored or none is.

Formats
-------
* TREC run:   ``topic Q0 doc rank score tag [ignored ...]``, whitespace separated (fields after the
  tag are ignored, as trec_eval does). ``rank`` must be an integer, ``score`` a finite decimal
  number; neither is used for ordering except the score (see below).
* TREC qrels: ``topic iteration doc grade``, grade an integer. 0 = judged nonrelevant, negative =
  "in the pool but unjudged" (as trec_eval reads them); both are kept.
* NTCIR qrels: ``topic doc L<n>``; NTCIR per-topic rel file ``doc L<n>`` (topic = file name up to
  its first dot). A level without the ``L`` prefix is an error, as in NTCIREVAL.
* NTCIR run: TREC layout, or NTCIREVAL per-topic res files with one docno per line in rank order
  (topic = file name up to its first dot; all files of the call form one run, which needs a name).

Rules
-----
* Blank lines, lines whose first non-blank character is ``#``, CRLF (or CR) line ends and
  leading/trailing spaces are accepted. Text must be UTF-8 (a BOM is ignored).
* A run's evaluation rank is trec_eval's order: score descending, ties by docno descending
  (byte-wise). NTCIR res files carry no score: their rank is the file order. ``line_no`` keeps
  the file order (the n-th content line of the file) for NTCIREVAL's convention.
* Run name: ``name``, else the run tag (one tag per file), or the file name with
  ``name_from='file'``. Qrels set name: ``name``, else the file name without its extension.
* sha256 is taken over the bytes of the file as stored (what ``sha256sum FILE`` prints); for a
  run or set made of several files, over their sha256s in order. Re-ingesting identical content
  under the same name is a no-op; different content under an existing name needs ``replace``.
* A docno repeated within one topic of a run is an error (trec_eval refuses such runs);
  ``dedupe=True`` keeps the first occurrence. A docno judged twice in one topic of a qrels set
  is an error.

Speed
-----
All files of a call are parsed into a temporary table. A TREC run whose first line is cleanly
tab- or single-space separated is read by DuckDB's CSV parser itself (strict, six fields: the
*fast reader*), with one multi-file ``read_csv`` per delimiter and compression (and ~128 MB of
text), which DuckDB reads in parallel over the files, straight into the staging table; the line
index of a row is its position in its file, kept by the insertion order of the staging table and
computed from the rowid (a view). The fast reader copies neither the Q0 column nor the tag
(every line must carry the first line's tag, else the file goes to the general reader). Every
other file, and any file in which the fast reader meets a line it cannot read exactly like the
general reader, is read line by line (a few files per ``INSERT ... UNION ALL`` statement, one
``read_csv`` per file) and split in SQL (``string_split`` for clean lines, a regular expression
only for messy ones: the *general reader*). Both readers store exactly the same rows
(tests/test_ingest.py checks this). Checks (field counts, numbers, tags, duplicates) are
set-based queries; Python only looks at a file again to quote the offending line of an error.
The store is written in one transaction at the end (the runs ranked by a window function, about
a million rows per INSERT).
"""

from __future__ import annotations

import glob as _glob
import gzip
import hashlib
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from . import ntcir
from .errors import IngestError
from .ntcir import NTCIR_QRELS_EXPECTED, NTCIR_REL_EXPECTED, RES_EXPECTED

RUN_EXPECTED = (
    "at least 6 whitespace-separated fields: topic Q0 docno rank score tag "
    "(rank an integer, score a number; further fields are ignored)"
)
QRELS_EXPECTED = "4 whitespace-separated fields: topic iteration docno grade (grade an integer)"

# trec_eval's order: score descending, ties broken by docno descending (byte-wise, strcmp).
TREC_RANK_SQL = "row_number() OVER (PARTITION BY grp, topic ORDER BY score DESC, doc DESC)"
# NTCIR res files carry no score: the evaluation rank is the file order.
FILE_RANK_SQL = "row_number() OVER (PARTITION BY grp, topic ORDER BY ln)"

_WS = " \t\r"
_SPLIT_RE = re.compile(r"[ \t\r]+")
_BOM = b"\xef\xbb\xbf"
_OTHER_COMPRESSION = {
    b"BZh": ("bzip2", "bunzip2"),
    b"\xfd7zXZ": ("xz", "unxz"),
    b"\x28\xb5\x2f\xfd": ("zstd", "unzstd"),
    b"PK\x03\x04": ("zip", "unzip"),
}


@dataclass
class IngestResult:
    kind: str  # 'run' or 'qrels'
    name: str
    status: str  # 'added', 'replaced', 'unchanged'
    files: list[str]
    n_rows: int = 0
    n_topics: int = 0
    n_dropped_duplicates: int = 0
    messages: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.status == "unchanged":
            return (
                f"{self.kind} {self.name!r}: identical content already stored under this name "
                f"(same sha256), nothing to do"
            )
        s = f"{self.kind} {self.name!r} {self.status}: {self.n_rows} rows, {self.n_topics} topics"
        if self.n_dropped_duplicates:
            s += f", {self.n_dropped_duplicates} duplicate document line(s) dropped (kept the first occurrence)"
        for m in self.messages:
            s += f"\n  note: {m}"
        return s


# =========================================================================== files
def expand_paths(paths: str | os.PathLike | Iterable) -> list[Path]:
    """Expand globs; keep the order given; error for a missing file or a folder."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[Path] = []
    for p in paths:
        s = os.fspath(p)
        if os.path.exists(s):
            out.append(Path(s))
            continue
        if any(ch in s for ch in "*?["):
            matches = sorted(_glob.glob(s))
            if not matches:
                raise IngestError("no file matches this pattern", file=s)
            out.extend(Path(m) for m in matches)
            continue
        raise IngestError("file not found; check the path", file=s)
    if not out:
        raise IngestError("no input files given")
    for p in out:
        if p.is_dir():
            raise IngestError("is a folder, not a file (give the files, or a glob such as 'runs/*.gz')", file=str(p))
    seen: set[str] = set()
    for p in out:
        key = os.path.realpath(p)
        if key in seen:
            raise IngestError("the same file is given twice in this call", file=str(p))
        seen.add(key)
    return out


builtins_open = open


def file_sha256(path: Path) -> str:
    """sha256 of the file's bytes as stored (what ``sha256sum`` prints)."""
    h = hashlib.sha256()
    with builtins_open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _combined_sha(paths: Sequence[Path], shas: dict[Path, str]) -> str:
    if len(paths) == 1:
        return shas[paths[0]]
    return hashlib.sha256("".join(shas[p] for p in paths).encode()).hexdigest()


def _compression(path: Path) -> str:
    """'gzip' or 'none', from the magic bytes; other compressions are refused with advice."""
    try:
        with builtins_open(path, "rb") as f:
            magic = f.read(6)
    except OSError as e:
        raise IngestError(f"cannot read the file: {e.strerror}", file=str(path)) from None
    if magic[:2] == b"\x1f\x8b":
        return "gzip"
    for m, (kind, tool) in _OTHER_COMPRESSION.items():
        if magic.startswith(m):
            raise IngestError(
                f"the file is {kind}-compressed; evalstore reads plain text and gzip (.gz) files",
                file=str(path),
                expected=f"decompress it first (e.g. {tool} FILE) or recompress it with gzip",
            )
    return "none"


def _open_bytes(path: Path):
    return gzip.open(path, "rb") if _compression(path) == "gzip" else builtins_open(path, "rb")


def _raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(physical line number, bytes without line end). Lines end at LF, CRLF or a lone CR, as in
    DuckDB's reader; a UTF-8 BOM at the start is dropped."""
    n = 0
    try:
        with _open_bytes(path) as f:
            for raw in f:
                if n == 0 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                if raw.endswith(b"\n"):
                    raw = raw[:-1]
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                for part in raw.split(b"\r") if b"\r" in raw else (raw,):
                    n += 1
                    yield n, part
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise IngestError(
            f"the gzip data is damaged or truncated after line {n} ({e})",
            file=str(path),
            expected="a complete gzip file (check it with gzip -t FILE)",
        ) from None
    except OSError as e:
        raise IngestError(f"cannot read the file: {e.strerror or e}", file=str(path)) from None


def _is_content(text: str) -> bool:
    stripped = text.strip(_WS)
    return bool(stripped) and not stripped.startswith("#")


def _content_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(physical line number, text) of the lines that carry data: not blank, not a '#' comment.

    The same definition as the SQL filter of :func:`_branch_sql`; used to sniff the first line
    and, on error paths, to turn the position of a bad row into a line number."""
    for n, raw in _raw_lines(path):
        text = raw.decode("utf-8", errors="replace")
        if _is_content(text):
            yield n, text


def _first_content_line(path: Path, max_bytes: int = 1 << 20) -> str | None:
    """The first data line of the file, or None if none in its first ``max_bytes``."""
    seen = 0
    for _, raw in _raw_lines(path):
        text = raw.decode("utf-8", errors="replace")
        if _is_content(text):
            return text
        seen += len(raw) + 1
        if seen > max_bytes:
            return None
    return None


def _physical_line(path: Path, content_index: int) -> tuple[int, str]:
    """Physical line number and text of the content_index-th (1-based) data line."""
    for k, (ln, text) in enumerate(_content_lines(path), 1):
        if k == content_index:
            return ln, text
    return content_index, ""


def _duckdb_path(path: Path) -> str:
    """The path as a DuckDB file pattern that matches only this file: DuckDB treats * ? [ in
    read_csv paths as glob characters (a file 'run[1].txt' would read 'run1.txt')."""
    return str(path).replace("[", "[[]").replace("*", "[*]").replace("?", "[?]")


def _same_file(name: str, path: Path) -> bool:
    return name.strip() in (str(path), _duckdb_path(path))


def _fields(text: str) -> list[str]:
    s = text.strip(_WS)
    return _SPLIT_RE.split(s) if s else []


def _check_decodable(path: Path) -> None:
    """Raise a clear error at the first bytes that are not UTF-8 (error path of the reader)."""
    for n, raw in _raw_lines(path):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise IngestError(
                f"undecodable bytes: byte {raw[e.start : e.start + 1]!r} at column {e.start + 1} is not UTF-8",
                file=str(path),
                line=n,
                text=raw.decode("utf-8", errors="replace"),
                expected="a UTF-8 (or ASCII) text file; convert it, e.g. with iconv -f latin1 -t utf-8",
            ) from None


# =========================================================================== reading in SQL
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
    f"{_SIMPLE_SP} THEN true ELSE regexp_matches(line, '[^{_WS}]') AND NOT regexp_matches(line, '^[{_WS}]*#') "
    f"END"
)
_SPLIT = (
    f"CASE WHEN {_SIMPLE_TAB} THEN string_split(line, '\t') WHEN {_SIMPLE_SP} THEN string_split(line, ' ') "
    f"ELSE regexp_split_to_array(trim(line, '{_WS}'), '[{_WS}]+') END"
)
# One VARCHAR per line: \x01 is the delimiter, so a line holding that control character spills
# into column x, which is then reported (never silently cut).
_READ_OPTS = (
    "columns={'line': 'VARCHAR', 'x': 'VARCHAR'}, delim='\x01', quote='', escape='', header=false, "
    "auto_detect=false, new_line='\\n', strict_mode=false, null_padding=true"
)

# The syntax is checked first because DuckDB's casts are more lenient than C's strtod/atol (they
# accept '1_000', '0x10', 'nan', 'inf' and round '1.5' to an integer). (regexp_full_match is
# much cheaper here than ltrim/translate with a character set.)
_INT_SQL = "CASE WHEN regexp_full_match({f}, '[+-]?[0-9]+') THEN TRY_CAST({f} AS {t}) END"
_NUM_SQL = (
    "CASE WHEN regexp_full_match({f}, '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?') "
    "THEN TRY_CAST({f} AS DOUBLE) END"
)
_LEVEL_SQL = ntcir.LEVEL_SQL

# Row error codes (column err of the parsed rows). E_MESSY: the fast reader met a line it cannot
# read exactly like the general reader; the file is then read again by the general reader.
E_CTL, E_NF, E_SCORE, E_RANK, E_GRADE, E_LEVEL, E_MESSY = 1, 2, 3, 4, 5, 6, 255


@dataclass(frozen=True)
class Layout:
    """How the fields of one kind of line become columns."""

    name: str
    expected: str
    n_fields: int
    at_least: bool
    columns: str  # SQL select list over f (the fields) and $topic (per-file topic)
    checks: str  # SQL CASE arms (after control chars and field count) giving err

    def field_count_ok(self) -> str:
        return f"len(f) >= {self.n_fields}" if self.at_least else f"len(f) = {self.n_fields}"


RUN_COLUMNS = "topic VARCHAR, doc VARCHAR, submitted_rank BIGINT, score DOUBLE, tag VARCHAR"
QRELS_COLUMNS = "topic VARCHAR, doc VARCHAR, grade INTEGER"

LAYOUTS = {
    "trec_run": Layout(
        "trec_run",
        RUN_EXPECTED,
        6,
        True,
        f"f[1] AS topic, f[3] AS doc, {_INT_SQL.format(f='f[4]', t='BIGINT')} AS submitted_rank, "
        f"{_NUM_SQL.format(f='f[5]')} AS score, f[6] AS tag",
        f"WHEN score IS NULL OR NOT isfinite(score) THEN {E_SCORE} WHEN submitted_rank IS NULL THEN {E_RANK}",
    ),
    "res": Layout(
        "res",
        RES_EXPECTED,
        1,
        False,
        "$topic AS topic, f[1] AS doc, ln AS submitted_rank, NULL::DOUBLE AS score, NULL::VARCHAR AS tag",
        "",
    ),
    "trec_qrels": Layout(
        "trec_qrels",
        QRELS_EXPECTED,
        4,
        False,
        f"f[1] AS topic, f[3] AS doc, {_INT_SQL.format(f='f[4]', t='INTEGER')} AS grade",
        f"WHEN grade IS NULL THEN {E_GRADE}",
    ),
    "ntcir_qrels": Layout(
        "ntcir_qrels",
        NTCIR_QRELS_EXPECTED,
        3,
        False,
        f"f[1] AS topic, f[2] AS doc, {_LEVEL_SQL.format(f='f[3]')} AS grade",
        f"WHEN grade IS NULL THEN {E_LEVEL}",
    ),
    "ntcir_rel": Layout(
        "ntcir_rel",
        NTCIR_REL_EXPECTED,
        2,
        False,
        f"$topic AS topic, f[1] AS doc, {_LEVEL_SQL.format(f='f[2]')} AS grade",
        f"WHEN grade IS NULL THEN {E_LEVEL}",
    ),
}


@dataclass
class _File:
    idx: int
    path: Path
    compression: str
    layout: str
    grp: int = 0
    topic: str | None = None  # res / rel files: the topic taken from the file name
    delim: str | None = None  # TREC runs whose first line is cleanly tab or space separated
    tag0: str | None = None  # the run tag of the first line (fast reader: every line's tag)


def _fast_delimiter(first_line: str | None) -> str | None:
    """'\t' or ' ' when the line has exactly 6 fields separated by single tabs (or single spaces)
    and no other whitespace: such files are read by DuckDB's CSV parser directly."""
    if not first_line or "\r" in first_line or "\x01" in first_line or first_line.startswith("#"):
        return None
    for d, other in (("\t", " "), (" ", "\t")):
        parts = first_line.split(d)
        if other not in first_line and len(parts) == 6 and all(parts):
            return d
    return None


def _branch_sql(f: _File, out_cols: str, k: int) -> tuple[str, list]:
    """SELECT for one file: file_idx, grp, ln, err, then the layout's columns."""
    lay = LAYOUTS[f.layout]
    cols = lay.columns.replace("$topic", f"${k + 2}")
    names = [c.split()[0] for c in out_cols.split(", ")]
    sql = (
        f"SELECT {f.idx} AS file_idx, {f.grp} AS grp, ln, "
        f"(CASE WHEN ctl THEN {E_CTL} WHEN NOT nf_ok THEN {E_NF} {lay.checks} ELSE 0 END)::UTINYINT AS err, "
        f"{', '.join(names)} FROM ("
        f"SELECT ln, x IS NOT NULL AS ctl, {lay.field_count_ok()} AS nf_ok, {cols} FROM ("
        f"SELECT ln, x, {_SPLIT} AS f FROM ("
        f"SELECT row_number() OVER () AS ln, line, x FROM read_csv(${k + 1}, {_READ_OPTS}, "
        f"compression='{f.compression}') WHERE {_CONTENT})))"
    )
    return sql, [_duckdb_path(f.path)] + ([f.topic] if "$topic" in lay.columns else [])


_FAST_COLUMNS = (
    "columns={'topic': 'VARCHAR', 'q0': 'VARCHAR', 'doc': 'VARCHAR', 'rank': 'VARCHAR', "
    "'score': 'VARCHAR', 'tag': 'VARCHAR'}"
)


def _fast_select_sql(delim: str, compression: str) -> str:
    """INSERT source over one multi-file ``read_csv`` of cleanly delimited TREC runs, read by DuckDB's
    CSV parser (strict: exactly 6 fields per line). Parameters: $1 the paths as given to read_csv,
    $2 the plain paths, $3 each file's first-line tag, $4 file_idx and $5 grp of each file.

    Columns: those of the staging table (file_idx, grp, ln, err, topic, doc, submitted_rank, score,
    tag), with ln and tag NULL: ln is filled afterwards from the row's position (see :func:`_load`),
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
        f"starts_with(topic, '#') OR {inside} OR "
        f"(q0 <> 'Q0' AND (contains(q0, '{other}') OR contains(q0, '\x01')))"
    )
    return (
        f"SELECT coalesce($4[fpos], -1) AS file_idx, coalesce($5[fpos], -1) AS grp, NULL::BIGINT AS ln, "
        f"(CASE WHEN messy OR submitted_rank IS NULL OR score IS NULL OR NOT isfinite(score) "
        f"THEN {E_MESSY} ELSE 0 END)::UTINYINT AS err, topic, doc, submitted_rank, score, NULL::VARCHAR AS tag "
        f"FROM (SELECT fpos, topic, doc, {_INT_SQL.format(f='rank', t='BIGINT')} AS submitted_rank, "
        f"{_NUM_SQL.format(f='score')} AS score, ({messy}) AS messy "
        f"FROM (SELECT coalesce(list_position($1, filename), list_position($2, filename)) AS fpos, * "
        f"FROM read_csv($1, {_FAST_COLUMNS}, delim='{delim}', quote='', escape='', header=false, "
        f"auto_detect=false, strict_mode=true, compression='{compression}', filename=true)))"
    )


def _fast_batches(files: list[_File], max_bytes: int = 128 << 20) -> Iterator[list[_File]]:
    """Files with the same delimiter and compression, a batch at most ~max_bytes of text (gzip
    counted five times its size), so that DuckDB's read buffers for one statement stay small."""
    by_kind: dict[tuple, list[_File]] = {}
    for f in files:
        by_kind.setdefault((f.delim, f.compression), []).append(f)
    for kind_files in by_kind.values():
        batch: list[_File] = []
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


def _load_fast(con, table: str, batch: list[_File]) -> None:
    """Read a batch of cleanly delimited runs with one multi-file read_csv (DuckDB reads the files
    in parallel) straight into ``table``, in the reader's order (insertion order: each file's rows
    are contiguous and in file order), with ln NULL; :func:`_fast_ln_sql` then numbers them."""
    f0 = batch[0]
    assert f0.delim is not None, "internal: the fast reader reads delimited files only"
    con.execute(
        f"INSERT INTO {table} {_fast_select_sql(f0.delim, f0.compression)}",
        [
            [_duckdb_path(f.path) for f in batch],
            [str(f.path) for f in batch],
            [f.tag0 for f in batch],
            [f.idx for f in batch],
            [f.grp for f in batch],
        ],
    )
    if con.execute(f"SELECT count(*) FROM {table} WHERE file_idx = -1").fetchall()[0][0]:
        con.execute(
            f"DELETE FROM {table} WHERE file_idx = -1 OR file_idx IN (SELECT unnest(?))", [[f.idx for f in batch]]
        )
        raise _UnknownFileName


def _fast_ln_sql(con, raw: str) -> str:
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


def _batches(files: list[_File], con) -> Iterator[list[_File]]:
    try:
        threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    except (duckdb.Error, ValueError, TypeError):
        threads = 2
    size = max(8, 2 * threads)
    for start in range(0, len(files), size):
        yield files[start : start + size]


def _insert_union(con, table: str, branches: list[tuple[str, list]]) -> None:
    parts: list[str] = []
    params: list = []
    for sql, p in branches:
        # renumber this branch's $n parameters after those of the previous branches
        parts.append(re.sub(r"\$(\d+)", lambda m: f"${int(m.group(1)) + len(params)}", sql))
        params.extend(p)
    con.execute(f"INSERT INTO {table} " + " UNION ALL ".join(parts), params)


def _culprit(e: duckdb.Error, batch: list[_File]) -> _File | None:
    """The file of the batch that a DuckDB reader error is about, if the message names one."""
    msg = str(e)
    named = re.search(r"^\s*file = (.+)$", msg, re.M)
    if named:
        for f in batch:
            if _same_file(named.group(1), f.path):
                return f
    mentioned = [f for f in batch if str(f.path) in msg or _duckdb_path(f.path) in msg]
    return max(mentioned, key=lambda f: len(str(f.path))) if mentioned else None


def _load(con, files: list[_File], table: str, out_cols: str, bar) -> None:
    """Parse the files into the temporary table ``<table>_raw`` and define the view ``table``
    (file_idx, grp, ln, err, <out_cols>, rid = the raw row's rowid) over it,
    a few files per statement so that DuckDB reads them in parallel and the progress bar moves.

    Cleanly delimited TREC runs (``f.delim``) are read by the fast reader; a file it cannot read
    exactly (see :func:`_fast_select_sql`) is read again by the general reader."""
    _drop_temp(con, table)
    raw = f"{table}_raw"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {raw} (file_idx INTEGER, grp INTEGER, ln BIGINT, err UTINYINT, {out_cols})"
    )
    general = [f for f in files if not f.delim]
    fallback: list[_File] = []
    for batch in _fast_batches([f for f in files if f.delim]):
        todo = list(batch)
        while todo:
            try:
                _load_fast(con, raw, todo)
                break
            except _UnknownFileName:  # cannot tell the files apart: read them all the general way
                fallback.extend(todo)
                break
            except (duckdb.IOException, duckdb.InvalidInputException) as e:
                bad = _culprit(e, todo)
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
    for batch in _batches(sorted(general + fallback, key=lambda f: f.idx), con):
        try:
            _insert_union(con, raw, [_branch_sql(f, out_cols, 0) for f in batch])
        except (duckdb.IOException, duckdb.InvalidInputException) as e:
            _read_failed(e, batch)
        bar.advance(sum(1 for f in batch if f in general))
    # the rowid bases are taken after every insert and delete of the load: DuckDB may compact
    # the table (and renumber rowids) when rows were deleted before
    ln_sql = _fast_ln_sql(con, raw)
    names = ", ".join(c.split()[0] for c in out_cols.split(", "))
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW {table} AS SELECT file_idx, grp, {ln_sql} AS ln, err, {names}, "
        f"rowid AS rid FROM {raw}"
    )


def _read_failed(e: duckdb.Error, batch: list[_File]) -> None:
    """Turn a reader error into an IngestError naming the file (and line, for bad bytes)."""
    msg = str(e)
    culprit = _culprit(e, batch)
    suspects = [culprit] if culprit else batch
    for f in suspects:  # bad bytes or damaged gzip data: found again, with the line, by Python
        _check_decodable(f.path)
    first = msg.splitlines()[0] if msg else type(e).__name__
    target = suspects[0].path if len(suspects) == 1 else ", ".join(str(f.path) for f in suspects)
    raise IngestError(f"cannot read the file: {first}", file=str(target)) from None


# =========================================================================== checks
def _row_error(f: _File, ln: int, err: int) -> IngestError:
    lay = LAYOUTS[f.layout]
    line_no, text = _physical_line(f.path, ln)
    flds = _fields(text)
    if err == E_CTL:
        msg = "the line contains the control character \\x01, which is not allowed in these files"
    elif err == E_NF:
        want = f"at least {lay.n_fields}" if lay.at_least else str(lay.n_fields)
        msg = f"wrong number of columns ({len(flds)} instead of {want})"
        if lay.name == "res":
            msg = f"a res file has one docno per line, this line has {len(flds)} fields"
    elif err == E_SCORE:
        msg = f"score {flds[4]!r} (column 5) is not a finite number"
    elif err == E_RANK:
        msg = f"rank {flds[3]!r} (column 4) is not an integer"
    elif err == E_GRADE:
        msg = f"grade {flds[3]!r} (column 4) is not an integer"
    else:
        lvl = flds[-1] if flds else ""
        msg = f"relevance level {lvl!r} is not of the form L<n>{ntcir.level_hint(lvl)}"
    return IngestError(msg, file=str(f.path), line=line_no, text=text, expected=lay.expected)


def _file_stats(con, table: str, extra: str = "") -> dict[int, tuple]:
    """Per file: (n rows, first bad content line, its error code, extra aggregates...)."""
    rows = con.execute(f"""
        SELECT file_idx, count(*), min(ln) FILTER (WHERE err > 0), arg_min(err, ln) FILTER (WHERE err > 0) {extra}
        FROM {table} GROUP BY file_idx""").fetchall()
    return {r[0]: r[1:] for r in rows}


def _check_file(f: _File, st: tuple | None, *, allow_empty: bool = False, empty_what: str = "lines") -> None:
    """Raise for an empty file or for the file's first bad line."""
    if st is None or st[0] == 0:
        if allow_empty:
            return
        raise IngestError(
            f"empty file: no {empty_what} found (only blank or comment lines, or nothing)",
            file=str(f.path),
            expected=LAYOUTS[f.layout].expected,
        )
    if st[1] is not None:
        raise _row_error(f, int(st[1]), int(st[2]))


def _duplicates(con, table: str) -> dict[int, int]:
    """Per group: number of surplus lines of (topic, doc) pairs seen more than once.

    Groups are first screened with h = hash(topic, doc): sorted by h, a repeated pair gives two
    equal neighbours (a collision of different pairs merely sends the group to the exact check)."""
    suspects = [
        r[0]
        for r in con.execute(f"""
        SELECT DISTINCT grp FROM (SELECT grp, h = lag(h) OVER (PARTITION BY grp ORDER BY h) AS same
                                  FROM (SELECT grp, hash(topic, doc) AS h FROM {table}))
        WHERE same""").fetchall()
    ]
    if not suspects:
        return {}
    rows = con.execute(
        f"""
        SELECT grp, sum(c - 1) FROM (SELECT grp, topic, doc, count(*) AS c FROM {table}
                                     WHERE grp IN (SELECT unnest(?)) GROUP BY grp, topic, doc HAVING count(*) > 1)
        GROUP BY grp""",
        [suspects],
    ).fetchall()
    return {g: int(n) for g, n in rows}


def _first_duplicate(con, table: str, grp: int) -> tuple:
    """(file_idx, ln, topic, doc, first_file_idx, first_ln) of the first repeated (topic, doc)."""
    return con.execute(
        f"""
        SELECT file_idx, ln, topic, doc, first_file, first_ln FROM (
            SELECT file_idx, ln, topic, doc,
                   first_value(file_idx) OVER w AS first_file, first_value(ln) OVER w AS first_ln,
                   row_number() OVER w AS k
            FROM {table} WHERE grp = ? WINDOW w AS (PARTITION BY topic, doc ORDER BY file_idx, ln))
        WHERE k > 1 ORDER BY file_idx, ln LIMIT 1""",
        [grp],
    ).fetchall()[0]


def _drop_duplicates(con, table: str, groups: Sequence[int]) -> None:
    """Delete all but the first occurrence of each repeated (topic, doc) of the groups from the
    view ``table``'s raw table. Every computed line index (see :func:`_fast_ln_sql`) is written
    first, for all groups: DuckDB may renumber the rowids of the rows after deleted ones."""
    raw, g = f"{table}_raw", list(groups)
    con.execute(
        f"UPDATE {raw} SET ln = v.ln FROM (SELECT rid, ln FROM {table}) v "
        f"WHERE {raw}.rowid = v.rid AND {raw}.ln IS NULL"
    )
    con.execute(
        f"""
        DELETE FROM {raw} WHERE rowid IN (
            SELECT rid FROM {table} WHERE grp IN (SELECT unnest(?))
            QUALIFY row_number() OVER (PARTITION BY grp, topic, doc ORDER BY file_idx, ln) > 1)""",
        [g],
    )


def _group_stats(con, table: str, extra: str = "") -> dict[int, tuple]:
    rows = con.execute(f"SELECT grp, count(*), count(DISTINCT topic) {extra} FROM {table} GROUP BY grp").fetchall()
    return {r[0]: r[1:] for r in rows}


def _progress(enabled: bool | None, total: int, label: str):
    from .progress import progress_bar

    return progress_bar(total, label, enabled=enabled, min_total=1, transient=True)


def _validate_call(store, format: str) -> None:
    if format not in ("trec", "ntcir"):
        raise IngestError(f"unknown format {format!r}; use 'trec' or 'ntcir'")
    if getattr(store, "read_only", False):
        raise IngestError(
            f"the store {store.location} is open read-only; open it with evalstore.open(path) "
            f"(without read_only=True) to ingest"
        )


# =========================================================================== runs
def _strip_suffixes(name: str, suffixes: Sequence[str]) -> str:
    changed = True
    while changed:
        changed = False
        for suf in suffixes:
            if name.endswith(suf) and len(name) > len(suf):
                name = name[: -len(suf)]
                changed = True
    return name


def _run_stem(path: Path) -> str:
    return _strip_suffixes(path.name, (".gz", ".txt", ".run", ".res", ".trec", ".tsv"))


@dataclass
class _Group:
    idx: int
    files: list[_File]
    sha: str
    name: str | None = None  # final name (known before parsing when given or from the file name)
    guess: str | None = None  # name expected before parsing (first line's tag)
    tag: str | None = None

    @property
    def final(self) -> str:
        """The name, once decided (given, from the file name, or from the run tag)."""
        assert self.name is not None, "internal: the group is stored before it was named"
        return self.name


def ingest_runs(
    store,
    paths,
    *,
    name: str | None = None,
    format: str = "trec",
    replace: bool = False,
    dedupe: bool = False,
    name_from: str = "tag",
    progress: bool | None = None,
) -> list[IngestResult]:
    """Ingest run files: one run per TREC file (named ``name``, else by its tag, or by the file name
    with ``name_from='file'``). With ``format='ntcir'`` files whose lines hold one field are
    NTCIREVAL res files (one per topic, topic = file name up to its first dot) and together form
    one run named ``name``.

    All files are stored in one transaction: any error stores nothing."""
    _validate_call(store, format)
    if name_from not in ("tag", "file"):
        raise IngestError(f"name_from must be 'tag' or 'file', not {name_from!r}")
    if name is not None and not name.strip():
        raise IngestError("the run name is empty")
    paths_ = expand_paths(paths)
    files = [_File(i, p, _compression(p), "trec_run") for i, p in enumerate(paths_)]
    firsts = {f.idx: _first_content_line(f.path) for f in files}
    shas = {f.path: file_sha256(f.path) for f in files}

    for f in files:
        f.delim = _fast_delimiter(firsts[f.idx])
        first_line = firsts[f.idx]
        if f.delim and first_line is not None:
            f.tag0 = first_line.split(f.delim)[5]
    res_mode = False
    if format == "ntcir":
        first = next((firsts[f.idx] for f in files if firsts[f.idx] is not None), None)
        res_mode = first is not None and ntcir.is_res_layout(len(_fields(first)))
    if res_mode:
        if not name:
            raise IngestError(
                "NTCIR res files (one per topic) form one run: give it a name with --name NAME", file=str(files[0].path)
            )
        topics: dict[str, Path] = {}
        for f in files:
            f.layout, f.topic, f.delim = "res", ntcir.topic_from_name(f.path), None
            if f.topic in topics:
                raise IngestError(
                    f"two res files for topic {f.topic!r} (also {topics[f.topic]}); the topic of a "
                    f"res file is its name up to the first dot",
                    file=str(f.path),
                )
            topics[f.topic] = f.path
        groups = [_Group(0, files, _combined_sha([f.path for f in files], shas), name=name)]
    else:
        if name and len(files) > 1:
            raise IngestError(
                f"--name names one run but {len(files)} files were given; ingest them one at a "
                f"time, or let each run take its tag (or --name-from file)"
            )
        groups = []
        for f in files:
            f.grp = f.idx
            g = _Group(f.idx, [f], shas[f.path])
            if name:
                g.name = name
            elif name_from == "file":
                g.name = _run_stem(f.path)
            else:
                flds = _fields(firsts[f.idx] or "")
                g.guess = flds[5] if len(flds) >= 6 else None
            groups.append(g)

    con = store.con
    results: dict[int, IngestResult] = {}
    stored = {
        r[0]: r[1]
        for r in con.execute(
            "SELECT name, sha256 FROM run_meta WHERE name IN (SELECT unnest(?))",
            [[g.name or g.guess for g in groups if (g.name or g.guess)]],
        ).fetchall()
    }
    todo = []
    for g in groups:
        nm = g.name or g.guess
        if nm is not None and stored.get(nm) == g.sha:
            results[g.idx] = IngestResult("run", nm, "unchanged", [str(f.path) for f in g.files])
        else:
            todo.append(g)
    if not todo:
        return [results[g.idx] for g in groups]
    todo_files = [f for g in todo for f in g.files]
    # Parsing and checks fill temporary tables only; the store itself is written in one
    # transaction at the end. (Outside a transaction a failed fast read can simply be retried.)
    if store._in_tx:
        for f in todo_files:
            f.delim = None
    try:
        with _progress(progress, len(todo_files), "reading runs") as bar:
            _load(con, todo_files, "_ing_rows", RUN_COLUMNS, bar)
            stats = _file_stats(con, "_ing_rows", ", min(tag), max(tag), count(DISTINCT topic)")
            for g in todo:
                for f in g.files:
                    _check_file(f, stats.get(f.idx), allow_empty=res_mode, empty_what="run lines")
                if not res_mode:
                    _name_run(con, g, stats[g.idx])
            if res_mode and not any(stats.get(f.idx, (0,))[0] for f in todo_files):
                raise IngestError(
                    "every res file is empty: the run has no documents",
                    file=", ".join(str(f.path) for f in todo_files),
                    expected=RES_EXPECTED,
                )
            _check_names(todo, "run")
            bar.update(description="checking runs")
            dups = _duplicates(con, "_ing_rows")
            if dups and not dedupe:
                g = next(g for g in todo if g.idx in dups)
                raise _duplicate_error(
                    con,
                    "_ing_rows",
                    g,
                    files,
                    "duplicate document {doc!r} in topic {topic!r} (first seen on {where})",
                    "each docno at most once per topic; pass --dedupe to keep the first "
                    "occurrence (trec_eval refuses runs with duplicate documents)",
                )
            if dups:
                _drop_duplicates(con, "_ing_rows", list(dups))
            bar.update(description="storing runs")
            if res_mode or dups:
                gstats = _group_stats(con, "_ing_rows")
            else:  # one file per run: the file's counts
                gstats = {g.idx: (stats[g.idx][0], stats[g.idx][5]) for g in todo}
            with store.transaction():
                results.update(
                    _store_runs(
                        store,
                        todo,
                        gstats,
                        dups,
                        replace,
                        "ntcir" if format == "ntcir" else "trec",
                        FILE_RANK_SQL if res_mode else TREC_RANK_SQL,
                    )
                )
    finally:
        _drop_temp(con, "_ing_rows", "_ing_map")
    return [results[g.idx] for g in groups]


def _drop_temp(con, *tables: str) -> None:
    """Drop temporary tables, or views and their ``_raw`` tables (see :func:`_load`)."""
    for t in tables:
        for stmt in (f"DROP VIEW IF EXISTS {t}", f"DROP TABLE IF EXISTS {t}", f"DROP TABLE IF EXISTS {t}_raw"):
            try:
                con.execute(stmt)
            except duckdb.Error:  # the other kind of object, or a caller's transaction that an error aborted
                pass


def _duplicate_error(con, table: str, g: _Group, files: list[_File], message: str, expected: str) -> IngestError:
    """The error for the first repeated (topic, doc) of group g: its line, and where it was first seen."""
    fi, ln, topic, doc, ffi, fln = _first_duplicate(con, table, g.idx)
    f, ff = files[fi], files[ffi]
    where = f"line {_physical_line(ff.path, int(fln))[0]}" + ("" if ff is f else f" of {ff.path}")
    line_no, text = _physical_line(f.path, int(ln))
    return IngestError(
        message.format(doc=doc, topic=topic, where=where), file=str(f.path), line=line_no, text=text, expected=expected
    )


def _name_run(con, g: _Group, st: tuple) -> None:
    """Set the group's tag (and name from the tag when no name was given)."""
    f = g.files[0]
    # the fast reader stores no tag (every line carries the first line's), so min/max are NULL
    tag_min, tag_max = (f.tag0, f.tag0) if f.delim else (st[3], st[4])
    if tag_min == tag_max:
        g.tag = tag_min
        if g.name is None:
            g.name = tag_min
        return
    tags = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT tag FROM _ing_rows WHERE file_idx = ? ORDER BY tag LIMIT 6", [f.idx]
        ).fetchall()
    ]
    g.tag = ",".join(tags[:5]) + (",..." if len(tags) > 5 else "")
    if g.name is not None:
        return
    first_tag = con.execute("SELECT tag FROM _ing_rows WHERE file_idx = ? ORDER BY ln LIMIT 1", [f.idx]).fetchall()[0][
        0
    ]
    ln = con.execute("SELECT min(ln) FROM _ing_rows WHERE file_idx = ? AND tag <> ?", [f.idx, first_tag]).fetchall()[0][
        0
    ]
    line_no, text = _physical_line(f.path, int(ln))
    raise IngestError(
        f"the file has several run tags ({', '.join(tags[:5])}{' ...' if len(tags) > 5 else ''}) and no name was "
        f"given; this line's tag differs from the first line's {first_tag!r}",
        file=str(f.path),
        line=line_no,
        text=text,
        expected="one tag per run file, or give the run a name with --name NAME",
    )


def _check_names(groups: Sequence[_Group], kind: str) -> None:
    seen: dict[str, _Group] = {}
    for g in groups:
        if g.name in seen:
            other = seen[g.name]
            raise IngestError(
                f"two files of this call would both be stored as the {kind} {g.name!r} (also {other.files[0].path})",
                file=str(g.files[0].path),
                expected="distinct run tags, --name-from file, or one call per file"
                if kind == "run"
                else "distinct file names, or --name NAME to combine the files into one set",
            )
        seen[g.final] = g


def _store_runs(
    store, groups: Sequence[_Group], gstats: dict, dups: dict, replace: bool, fmt: str, rank_sql: str
) -> dict[int, IngestResult]:
    con = store.con
    existing = {
        r[0]: (r[1], r[2])
        for r in con.execute(
            "SELECT name, run_id, sha256 FROM run_meta WHERE name IN (SELECT unnest(?))", [[g.name for g in groups]]
        ).fetchall()
    }
    results: dict[int, IngestResult] = {}
    mapping: list[tuple[int, int]] = []
    for g in groups:
        files = [str(f.path) for f in g.files]
        n_rows, n_topics = gstats.get(g.idx, (0, 0))
        old = existing.get(g.name)
        if old and old[1] == g.sha:
            results[g.idx] = IngestResult("run", g.final, "unchanged", files)
            continue
        if old and not replace:
            raise IngestError(
                f"a run named {g.name!r} already exists with different content (sha256 {old[1][:12]} vs {g.sha[:12]})",
                file=", ".join(files),
                expected="--replace to replace it, or --name to store this file under another name",
            )
        source = ",".join(files) or "<dict>"
        n_dropped = dups.get(g.idx, 0)
        if old:
            run_id = old[0]
            for table in ("run_row_data", "score_data", "evaluations"):
                con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
            con.execute(
                """UPDATE run_meta SET tag = ?, source = ?, format = ?, sha256 = ?, n_topics = ?, n_rows = ?,
                           n_dropped_duplicates = ?, ingested_at = current_timestamp WHERE run_id = ?""",
                [g.tag, source, fmt, g.sha, n_topics, n_rows, n_dropped, run_id],
            )
            status = "replaced"
        else:
            run_id = con.execute(
                """INSERT INTO run_meta (name, tag, source, format, sha256, n_topics, n_rows,
                                    n_dropped_duplicates) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING run_id""",
                [g.name, g.tag, source, fmt, g.sha, n_topics, n_rows, n_dropped],
            ).fetchall()[0][0]
            status = "added"
        mapping.append((g.idx, run_id))
        res = IngestResult(
            "run", g.final, status, files, n_rows=n_rows, n_topics=n_topics, n_dropped_duplicates=n_dropped
        )
        if len(g.files) > 1:
            empty = [
                f.topic
                for f in g.files
                if f.topic is not None
                and not con.execute("SELECT 1 FROM _ing_rows WHERE file_idx = ? LIMIT 1", [f.idx]).fetchall()
            ]
            if empty:
                res.messages.append(
                    f"{len(empty)} empty res file(s) (no documents for topic(s) "
                    f"{', '.join(empty[:5])}{' ...' if len(empty) > 5 else ''})"
                )
        results[g.idx] = res
    if mapping:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _ing_map AS SELECT unnest(?)::INTEGER AS grp, unnest(?)::INTEGER AS id",
            [[m[0] for m in mapping], [m[1] for m in mapping]],
        )
        # A few runs per statement (about a million rows): the ranking window partitions by run
        # anyway, and its sort buffers then stay a fraction of the whole call's rows.
        chunks: list[list[int]] = [[]]
        n = 0
        for grp, _ in mapping:
            if n >= _RANK_CHUNK_ROWS:
                chunks.append([])
                n = 0
            chunks[-1].append(grp)
            n += gstats.get(grp, (0, 0))[0]
        for chunk in chunks:
            con.execute(
                f"""
                INSERT INTO run_row_data (run_id, topic, doc, rank, line_no, submitted_rank, score)
                SELECT id, topic, doc, {rank_sql}, ln, submitted_rank, score
                FROM _ing_rows JOIN _ing_map USING (grp) WHERE grp IN (SELECT unnest(?::INTEGER[]))""",
                [chunk],
            )
    return results


_RANK_CHUNK_ROWS = 1_000_000


# =========================================================================== qrels
def _qrels_name(path: Path) -> str:
    return _strip_suffixes(path.name, (".gz", ".txt", ".qrels", ".rel", ".tsv"))


def ingest_qrels(
    store,
    paths,
    *,
    name: str | None = None,
    format: str = "trec",
    replace: bool = False,
    gains: str | Sequence[float] | None = None,
    progress: bool | None = None,
) -> list[IngestResult]:
    """Ingest qrels file(s). Without ``name`` each file becomes a set named after the file; with
    ``name`` all files form one set (e.g. NTCIR per-topic rel files). ``gains`` declares the set's
    default gains of levels 1..n (used when a metric is given no ``gains=``).

    All files are stored in one transaction: any error stores nothing."""
    _validate_call(store, format)
    if name is not None and not name.strip():
        raise IngestError("the qrels set name is empty")
    declared = _normalise_gains(gains)
    paths_ = expand_paths(paths)
    files = [_File(i, p, _compression(p), "trec_qrels") for i, p in enumerate(paths_)]
    if format == "ntcir":
        for f in files:
            first = _first_content_line(f.path)
            f.layout = ntcir.qrels_layout(len(_fields(first)) if first is not None else None)
            if f.layout == "ntcir_rel":
                f.topic = ntcir.topic_from_name(f.path)
    shas = {f.path: file_sha256(f.path) for f in files}
    if name:
        groups = [_Group(0, files, _combined_sha([f.path for f in files], shas), name=name)]
    else:
        groups = []
        for f in files:
            f.grp = f.idx
            groups.append(_Group(f.idx, [f], shas[f.path], name=_qrels_name(f.path)))
        _check_names(groups, "qrels set")

    con = store.con
    stored = {
        r[0]: r[1]
        for r in con.execute(
            "SELECT name, sha256 FROM qrels_meta WHERE name IN (SELECT unnest(?))", [[g.name for g in groups]]
        ).fetchall()
    }
    results: dict[int, IngestResult] = {}
    todo = []
    for g in groups:
        if stored.get(g.name) == g.sha:
            results[g.idx] = IngestResult("qrels", g.final, "unchanged", [str(f.path) for f in g.files])
        else:
            todo.append(g)
    if not todo:
        return [results[g.idx] for g in groups]
    todo_files = [f for g in todo for f in g.files]
    try:
        with _progress(progress, len(todo_files), "reading qrels") as bar:
            _load(con, todo_files, "_ing_q", QRELS_COLUMNS, bar)
            stats = _file_stats(con, "_ing_q")
            for f in todo_files:
                _check_file(f, stats.get(f.idx), empty_what="judgments")
            dups = _duplicates(con, "_ing_q")
            if dups:
                g = next(g for g in todo if g.idx in dups)
                raise _duplicate_error(
                    con,
                    "_ing_q",
                    g,
                    files,
                    "document {doc!r} is judged twice for topic {topic!r} (first on {where})",
                    "one judgment per (topic, docno); trec_eval refuses such qrels too",
                )
            gstats = _group_stats(con, "_ing_q", ", max(grade)")
            with store.transaction():
                for g in todo:
                    results[g.idx] = _store_qrels(store, g, gstats.get(g.idx, (0, 0, None)), format, replace, declared)
    finally:
        _drop_temp(con, "_ing_q")
    return [results[g.idx] for g in groups]


def _normalise_gains(gains) -> str | None:
    if gains is None:
        return None
    if isinstance(gains, str):
        parts = gains.replace(",", ":").split(":")
    else:
        parts = list(gains)
    try:
        vals = [float(x) for x in parts]
    except (TypeError, ValueError):
        raise IngestError(
            f"gains {gains!r} must be numbers separated by ':' (gains of levels 1..n, e.g. 1:2:3)"
        ) from None
    if not vals or any(b < a for a, b in zip(vals, vals[1:])) or any(v < 0 for v in vals):
        raise IngestError(f"gains {gains!r} must be non-negative and non-decreasing from level 1 up")
    return ":".join(f"{v:g}" for v in vals)


def _store_qrels(store, g: _Group, gstat: tuple, fmt: str, replace: bool, gains: str | None) -> IngestResult:
    con = store.con
    files = [str(f.path) for f in g.files]
    source = ",".join(files) or "<dict>"
    n_rows, n_topics, max_grade = gstat
    existing = con.execute("SELECT qrels_id, sha256 FROM qrels_meta WHERE name = ?", [g.name]).fetchall()
    if existing and existing[0][1] == g.sha:
        return IngestResult("qrels", g.final, "unchanged", files)
    if existing and not replace:
        raise IngestError(
            f"a qrels set named {g.name!r} already exists with different content "
            f"(sha256 {existing[0][1][:12]} vs {g.sha[:12]})",
            file=source,
            expected="--replace to replace it, or --name to store it under another name",
        )
    if existing:
        qid = existing[0][0]
        _check_replaceable_qrels(con, g.final, qid)
        for table in ("qrels_data", "score_data", "evaluations"):
            con.execute(f"DELETE FROM {table} WHERE qrels_id = ?", [qid])
        con.execute(
            """UPDATE qrels_meta SET source = ?, format = ?, sha256 = ?, n_topics = ?, n_judged = ?,
                       max_grade = ?, default_gains = ?, ingested_at = current_timestamp WHERE qrels_id = ?""",
            [source, fmt, g.sha, n_topics, n_rows, max_grade, gains, qid],
        )
        status = "replaced"
    else:
        qid = con.execute(
            """INSERT INTO qrels_meta (name, source, format, sha256, n_topics, n_judged, max_grade,
                             default_gains) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING qrels_id""",
            [g.name, source, fmt, g.sha, n_topics, n_rows, max_grade, gains],
        ).fetchall()[0][0]
        status = "added"
    con.execute(
        "INSERT INTO qrels_data (qrels_id, topic, doc, grade) "
        "SELECT ?, topic, doc, grade FROM _ing_q WHERE grp = ? ORDER BY topic, doc",
        [qid, g.idx],
    )
    return IngestResult("qrels", g.final, status, files, n_rows=n_rows, n_topics=n_topics)


def _check_replaceable_qrels(con, name: str, qid: int) -> None:
    """A subsample, or a set that subsamples were drawn from, is not replaced behind their back."""
    has_table = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'subsample_meta'"
    ).fetchall()[0][0]
    if not has_table:
        return
    parent = con.execute(
        "SELECT p.name FROM subsample_meta s JOIN qrels_meta p ON p.qrels_id = s.parent_id WHERE s.qrels_id = ?", [qid]
    ).fetchall()
    if parent:
        raise IngestError(
            f"{name!r} is a subsample of {parent[0][0]!r}, not an ingested qrels set; it cannot be replaced",
            expected=f"ingest under another name, or drop it with `evalstore subsample drop {name}`",
        )
    n = con.execute("SELECT count(*) FROM subsample_meta WHERE parent_id = ?", [qid]).fetchall()[0][0]
    if n:
        raise IngestError(
            f"{n} subsample(s) were drawn from the qrels set {name!r}; replacing its judgments would leave them stale",
            expected=f"drop them first with `evalstore subsample drop --qrels {name}`, or ingest under another name",
        )


# =========================================================================== dicts (notebook API)
def _flatten(nested: Mapping, cast, what: str, rule: str) -> tuple[list[str], list[str], list]:
    """``{topic: {doc: value}}`` as three parallel columns (topics, docs, cast values)."""
    topics = [str(t) for t, docs in nested.items() for _ in docs]
    docs = [str(d) for ds in nested.values() for d in ds]
    try:
        values = [cast(v) for ds in nested.values() for v in ds.values()]
    except (TypeError, ValueError) as e:
        raise IngestError(f"{what}: {rule} ({e})") from None
    if not topics:
        raise IngestError(f"{what} is empty")
    return topics, docs, values


def qrels_from_dict(store, name: str, qrels: Mapping, *, replace: bool = False) -> IngestResult:
    """Store ``{topic: {doc: grade}}`` as a qrels set (used by the notebook API)."""
    topics, docs, grades = _flatten(qrels, int, f"qrels {name!r}", "grades must be integers")
    con = store.con
    with store.transaction():
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE _ing_q (file_idx INTEGER, grp INTEGER, ln BIGINT, err UTINYINT, "
            f"{QRELS_COLUMNS})"
        )
        con.execute(
            "INSERT INTO _ing_q SELECT 0, 0, NULL, 0, unnest($1), unnest($2), unnest($3)", [topics, docs, grades]
        )
        sha = con.execute(
            "SELECT sha256(string_agg(topic || chr(9) || doc || chr(9) || grade, chr(10) "
            "ORDER BY topic, doc)) FROM _ing_q"
        ).fetchall()[0][0]
        st = con.execute("SELECT count(*), count(DISTINCT topic), max(grade) FROM _ing_q").fetchall()[0]
        res = _store_qrels(store, _Group(0, [], sha, name=name), st, "dict", replace, None)
        res.files = ["<dict>"]
        con.execute("DROP TABLE IF EXISTS _ing_q")
        return res


def run_from_dict(store, name: str, run: dict, *, replace: bool = False) -> IngestResult:
    """Store ``{topic: {doc: score}}`` as a run, ranked like trec_eval (used by the notebook API)."""
    topics, docs, scores = _flatten(run, float, f"run {name!r}", "scores must be numbers")
    con = store.con
    with store.transaction():
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE _ing_rows (file_idx INTEGER, grp INTEGER, ln BIGINT, "
            f"err UTINYINT, {RUN_COLUMNS})"
        )
        con.execute(
            "INSERT INTO _ing_rows SELECT 0, 0, unnest(range(1, len($1) + 1)), 0, unnest($1), unnest($2), "
            "NULL, unnest($3), NULL",
            [topics, docs, scores],
        )
        bad = con.execute("SELECT topic, doc FROM _ing_rows WHERE NOT isfinite(score) LIMIT 1").fetchall()
        if bad:
            raise IngestError(f"run {name!r}: the score of topic {bad[0][0]!r}, document {bad[0][1]!r} is not finite")
        sha = con.execute(
            "SELECT sha256(string_agg(topic || chr(9) || doc || chr(9) || score, chr(10) "
            "ORDER BY topic, doc)) FROM _ing_rows"
        ).fetchall()[0][0]
        st = _group_stats(con, "_ing_rows")
        g = _Group(0, [], sha, name=name)
        res = _store_runs(store, [g], st, {}, replace, "dict", TREC_RANK_SQL)[0]
        res.files = ["<dict>"]
        con.execute("DROP TABLE IF EXISTS _ing_rows; DROP TABLE IF EXISTS _ing_map")
        return res
