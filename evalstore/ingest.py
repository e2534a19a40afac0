"""Ingestion of TREC and NTCIR runs and qrels into the store.

Files are parsed by DuckDB's own CSV reader (gzip read transparently), validated in SQL, and
written inside one transaction per command: either every file of the call is stored or none.

Formats
-------
* TREC run:   ``topic Q0 doc rank score tag [ignored ...]`` (whitespace separated, as trec_eval)
* TREC qrels: ``topic iter doc grade`` (grade an integer; <= 0 judged nonrelevant, negative =
  "in pool but unjudged" as trec_eval reads it)
* NTCIR qrels: ``topic doc L<n>``; NTCIR per-topic rel file ``doc L<n>`` (topic = file stem)
* NTCIR run: TREC layout, or per-topic res files with one docID per line in rank order
  (topic = file stem; all files of the call form one run, which needs ``name=``)

Blank lines, CRLF line ends, trailing spaces and ``#`` comment lines are accepted.
"""
from __future__ import annotations

import glob as _glob
import gzip
import hashlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import duckdb

from .errors import IngestError

RUN_EXPECTED = "6 whitespace-separated fields: topic Q0 docno rank score tag"
QRELS_EXPECTED = "4 whitespace-separated fields: topic iteration docno grade (grade an integer)"
NTCIR_QRELS_EXPECTED = "3 whitespace-separated fields: topic docno L<level> (e.g. 'T001 doc7 L2')"
NTCIR_REL_EXPECTED = "2 whitespace-separated fields: docno L<level> (e.g. 'doc7 L2')"
RES_EXPECTED = "one docno per line, in rank order"


@dataclass
class IngestResult:
    kind: str            # 'run' or 'qrels'
    name: str
    status: str          # 'added', 'replaced', 'unchanged'
    files: list[str]
    n_rows: int = 0
    n_topics: int = 0
    n_dropped_duplicates: int = 0
    messages: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.status == "unchanged":
            return f"{self.kind} {self.name!r}: identical content already stored (same sha256), nothing to do"
        s = f"{self.kind} {self.name!r} {self.status}: {self.n_rows} rows, {self.n_topics} topics"
        if self.n_dropped_duplicates:
            s += f", {self.n_dropped_duplicates} duplicate docs dropped (kept first occurrence)"
        return s


# --------------------------------------------------------------------------- file helpers
def expand_paths(paths: str | os.PathLike | Iterable) -> list[Path]:
    """Expand globs; keep the order given; error for a missing file."""
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
    return out


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with builtins_open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


builtins_open = open


def _open_bytes(path: Path):
    with builtins_open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else builtins_open(path, "rb")


def _is_gzip(path: Path) -> bool:
    with builtins_open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _content_lines(path: Path):
    """Yield (physical line number, decoded text) of the non-blank, non-comment lines.

    Used only on error paths, to turn the position of a bad row into a line number."""
    with _open_bytes(path) as f:
        for i, raw in enumerate(f, 1):
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            stripped = text.strip()
            if not stripped or stripped.startswith("#"):
                continue
            yield i, text


def _physical_line(path: Path, content_index: int) -> tuple[int, str]:
    """Physical line number and text of the content_index-th (1-based) content line."""
    for k, (ln, text) in enumerate(_content_lines(path), 1):
        if k == content_index:
            return ln, text
    return content_index, ""


def _check_decodable(path: Path) -> None:
    """Raise a clear error for bytes that are not UTF-8 (error path of the reader)."""
    with _open_bytes(path) as f:
        for i, raw in enumerate(f, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise IngestError(
                    f"undecodable bytes: byte {raw[e.start:e.start + 1]!r} at column {e.start + 1} is not UTF-8",
                    file=str(path), line=i, text=raw.decode("utf-8", errors="replace").rstrip("\r\n"),
                    expected="a UTF-8 (or ASCII) text file; convert it, e.g. with iconv -f latin1 -t utf-8") from None


def _read_lines(con, path: Path, table: str) -> None:
    """Load the file's content lines into temp table ``table(ln, line)`` in file order.

    ln is the position among content lines (blank and '#' comment lines are skipped)."""
    try:
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {table} AS
            SELECT row_number() OVER () AS ln, line FROM (
                SELECT line FROM read_csv(?, columns={{'line': 'VARCHAR'}}, delim='\\x01', quote='',
                     escape='', header=false, auto_detect=false, compression='{'gzip' if _is_gzip(path) else 'none'}',
                     new_line='\\n', strict_mode=false)
                WHERE trim(line, ' \\t\\r') <> '' AND NOT starts_with(ltrim(line, ' \\t'), '#'))""",
            [str(path)])
    except duckdb.InvalidInputException as e:
        msg = str(e)
        if "unicode" in msg.lower() or "utf" in msg.lower():
            _check_decodable(path)
        raise IngestError(f"cannot read the file: {msg.splitlines()[0]}", file=str(path)) from None
    except duckdb.IOException as e:
        raise IngestError(f"cannot read the file: {str(e).splitlines()[0]}", file=str(path)) from None


def _split_fields(con, src: str, dst: str) -> None:
    """``dst(ln, line, f)`` with f the whitespace-separated fields of each line."""
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {dst} AS
        SELECT ln, line, regexp_split_to_array(trim(line, ' \\t\\r'), '[ \\t\\r]+') AS f FROM {src}""")


def _first_bad(con, table: str, condition: str):
    return con.execute(f"SELECT ln, line FROM {table} WHERE {condition} ORDER BY ln LIMIT 1").fetchone()


def _raise_at(path: Path, row, message: str, expected: str | None) -> None:
    ln, text = _physical_line(path, int(row[0]))
    raise IngestError(message, file=str(path), line=ln, text=text or row[1], expected=expected)


# --------------------------------------------------------------------------- runs
def _parse_trec_run(con, path: Path) -> None:
    """Parse one TREC run file into temp table ``_ing_run(ln, topic, doc, submitted_rank, score, tag)``."""
    _read_lines(con, path, "_ing_lines")
    n = con.execute("SELECT count(*) FROM _ing_lines").fetchone()[0]
    if n == 0:
        raise IngestError("empty file: no run lines found", file=str(path), expected=RUN_EXPECTED)
    _split_fields(con, "_ing_lines", "_ing_fields")
    bad = _first_bad(con, "_ing_fields", "len(f) < 6")
    if bad:
        _raise_at(path, bad, f"wrong number of columns ({len(bad[1].split())} instead of 6)", RUN_EXPECTED)
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _ing_run AS
        SELECT ln, line, f[1] AS topic, f[3] AS doc, f[4] AS rank_text, f[5] AS score_text,
               TRY_CAST(f[4] AS BIGINT) AS submitted_rank, TRY_CAST(f[5] AS DOUBLE) AS score, f[6] AS tag
        FROM _ing_fields""")
    bad = _first_bad(con, "_ing_run", "score IS NULL OR isnan(score) OR isinf(score)")
    if bad:
        txt = con.execute("SELECT score_text FROM _ing_run WHERE ln = ?", [bad[0]]).fetchone()[0]
        _raise_at(path, bad, f"score {txt!r} (column 5) is not a finite number", RUN_EXPECTED)
    bad = _first_bad(con, "_ing_run", "submitted_rank IS NULL")
    if bad:
        txt = con.execute("SELECT rank_text FROM _ing_run WHERE ln = ?", [bad[0]]).fetchone()[0]
        _raise_at(path, bad, f"rank {txt!r} (column 4) is not an integer", RUN_EXPECTED)


def _check_duplicates(con, path: Path, dedupe: bool) -> int:
    """Error on a docno repeated within one topic; with dedupe keep the first occurrence."""
    dup = con.execute("""
        SELECT ln, line, topic, doc FROM (
            SELECT ln, line, topic, doc, row_number() OVER (PARTITION BY topic, doc ORDER BY ln) AS k
            FROM _ing_run) WHERE k > 1 ORDER BY ln LIMIT 1""").fetchone()
    if dup is None:
        return 0
    if not dedupe:
        first = con.execute("SELECT min(ln) FROM _ing_run WHERE topic = ? AND doc = ?", [dup[2], dup[3]]).fetchone()[0]
        first_ln, _ = _physical_line(path, first)
        _raise_at(path, dup, f"duplicate document {dup[3]!r} in topic {dup[2]!r} (first seen on line {first_ln})",
                  "each docno at most once per topic; pass --dedupe to keep the first occurrence "
                  "(the result is then not trec_eval-compatible: trec_eval refuses such runs)")
    before = con.execute("SELECT count(*) FROM _ing_run").fetchone()[0]
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _ing_run AS
        SELECT * FROM _ing_run QUALIFY row_number() OVER (PARTITION BY topic, doc ORDER BY ln) = 1""")
    return before - con.execute("SELECT count(*) FROM _ing_run").fetchone()[0]


def _run_name(con, path: Path, name: str | None, name_from: str) -> tuple[str, str | None]:
    tags = [r[0] for r in con.execute("SELECT DISTINCT tag FROM _ing_run WHERE tag IS NOT NULL ORDER BY tag LIMIT 6").fetchall()]
    tag = tags[0] if len(tags) == 1 else (",".join(tags[:5]) if tags else None)
    if name:
        return name, tag
    if name_from == "file":
        stem = path.name
        for suf in (".gz", ".txt", ".run", ".res", ".trec"):
            if stem.endswith(suf):
                stem = stem[: -len(suf)]
        return stem, tag
    if len(tags) > 1:
        row = con.execute("SELECT ln, line FROM _ing_run WHERE tag <> ? ORDER BY ln LIMIT 1", [tags[0]]).fetchone()
        ln, text = _physical_line(path, row[0])
        raise IngestError(
            f"the file has several run tags ({', '.join(tags[:5])}{' ...' if len(tags) > 5 else ''}) and no name was given; "
            f"this line's tag differs from {tags[0]!r}", file=str(path), line=ln, text=text,
            expected="one tag per run file, or give the run a name with --name NAME")
    if not tags:
        raise IngestError("the run has no tag column; give it a name with --name NAME", file=str(path))
    return tags[0], tag


def _store_run(store, name: str, tag, source: str, fmt: str, sha: str, replace: bool,
               n_dropped: int, result_files: list[str], rank_sql: str) -> IngestResult:
    con = store.con
    existing = con.execute("SELECT run_id, sha256 FROM run_meta WHERE name = ?", [name]).fetchone()
    stats = con.execute("SELECT count(*), count(DISTINCT topic) FROM _ing_run").fetchone()
    if existing and existing[1] == sha:
        return IngestResult("run", name, "unchanged", result_files)
    if existing and not replace:
        raise IngestError(
            f"a run named {name!r} already exists with different content (sha256 {existing[1][:12]} vs {sha[:12]})",
            file=source, expected="--replace to replace it, or --name to store this file under another name")
    if existing:
        run_id = existing[0]
        con.execute("DELETE FROM run_row_data WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM score_data WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM evaluations WHERE run_id = ?", [run_id])
        con.execute("""UPDATE run_meta SET tag = ?, source = ?, format = ?, sha256 = ?, n_topics = ?, n_rows = ?,
                       n_dropped_duplicates = ?, ingested_at = current_timestamp WHERE run_id = ?""",
                    [tag, source, fmt, sha, stats[1], stats[0], n_dropped, run_id])
        status = "replaced"
    else:
        run_id = con.execute("""INSERT INTO run_meta (name, tag, source, format, sha256, n_topics, n_rows, n_dropped_duplicates)
                                VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING run_id""",
                             [name, tag, source, fmt, sha, stats[1], stats[0], n_dropped]).fetchone()[0]
        status = "added"
    con.execute(f"""
        INSERT INTO run_row_data (run_id, topic, doc, rank, line_no, submitted_rank, score)
        SELECT ?, topic, doc, {rank_sql}, ln, submitted_rank, score FROM _ing_run""", [run_id])
    return IngestResult("run", name, status, result_files, n_rows=stats[0], n_topics=stats[1],
                        n_dropped_duplicates=n_dropped)


# trec_eval's order: score descending, ties broken by docno descending (byte-wise, strcmp).
TREC_RANK_SQL = "row_number() OVER (PARTITION BY topic ORDER BY score DESC, doc DESC)"
# NTCIR res files carry no score: the evaluation rank is the file order.
FILE_RANK_SQL = "row_number() OVER (PARTITION BY topic ORDER BY ln)"


def _progress(enabled: bool | None, total: int, label: str):
    from .progress import progress_bar

    return progress_bar(total, label, enabled=enabled)


def ingest_runs(store, paths, *, name: str | None = None, format: str = "trec", replace: bool = False,
                dedupe: bool = False, name_from: str = "tag", progress: bool | None = None) -> list[IngestResult]:
    """Ingest run files: one run per TREC file (named ``name``, else by its tag, or by the file name
    with ``name_from='file'``). With ``format='ntcir'`` files with one column are NTCIREVAL res files
    (one per topic, topic = file stem) and together form one run named ``name``.

    All files are stored in one transaction: any error stores nothing."""
    if format not in ("trec", "ntcir"):
        raise IngestError(f"unknown format {format!r}; use 'trec' or 'ntcir'")
    if name_from not in ("tag", "file"):
        raise IngestError(f"name_from must be 'tag' or 'file', not {name_from!r}")
    files = expand_paths(paths)
    from . import ntcir

    if format == "ntcir" and ntcir.looks_like_res_files(files):
        if not name:
            raise IngestError("NTCIR res files (one per topic) form one run: give it a name with --name NAME",
                              file=str(files[0]))
        with store.transaction():
            sha = ntcir.load_res_files(store.con, files)
            res = _store_run(store, name, None, ",".join(map(str, files)), "ntcir", sha, replace, 0,
                             [str(f) for f in files], FILE_RANK_SQL)
        return [res]
    if name and len(files) > 1:
        raise IngestError(f"--name names one run but {len(files)} files were given; "
                          f"ingest them one at a time, or let each run take its tag (or --name-from file)")
    results: list[IngestResult] = []
    seen: dict[str, str] = {}
    with store.transaction(), _progress(progress, len(files), "ingesting runs") as bar:
        for path in files:
            _parse_trec_run(store.con, path)
            n_dropped = _check_duplicates(store.con, path, dedupe)
            run_name, tag = _run_name(store.con, path, name, name_from)
            if run_name in seen:
                raise IngestError(f"two files of this call are both named {run_name!r} (also {seen[run_name]})",
                                  file=str(path), expected="distinct run tags, or --name-from file")
            seen[run_name] = str(path)
            sha = file_sha256(path)
            results.append(_store_run(store, run_name, tag, str(path), format, sha, replace, n_dropped,
                                      [str(path)], TREC_RANK_SQL))
            bar.advance()
    store.con.execute("DROP TABLE IF EXISTS _ing_run; DROP TABLE IF EXISTS _ing_fields; DROP TABLE IF EXISTS _ing_lines")
    return results


# --------------------------------------------------------------------------- qrels
def _parse_trec_qrels(con, path: Path) -> None:
    """One TREC qrels file into temp table ``_ing_q(ln, line, topic, doc, grade)``."""
    _read_lines(con, path, "_ing_lines")
    if con.execute("SELECT count(*) FROM _ing_lines").fetchone()[0] == 0:
        raise IngestError("empty file: no judgments found", file=str(path), expected=QRELS_EXPECTED)
    _split_fields(con, "_ing_lines", "_ing_fields")
    bad = _first_bad(con, "_ing_fields", "len(f) <> 4")
    if bad:
        _raise_at(path, bad, f"wrong number of columns ({len(bad[1].split())} instead of 4)", QRELS_EXPECTED)
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _ing_q AS
        SELECT ln, line, f[1] AS topic, f[3] AS doc, f[4] AS grade_text, TRY_CAST(f[4] AS INTEGER) AS grade
        FROM _ing_fields""")
    bad = _first_bad(con, "_ing_q", "grade IS NULL OR NOT regexp_full_match(grade_text, '[+-]?[0-9]+')")
    if bad:
        txt = con.execute("SELECT grade_text FROM _ing_q WHERE ln = ?", [bad[0]]).fetchone()[0]
        _raise_at(path, bad, f"grade {txt!r} (column 4) is not an integer", QRELS_EXPECTED)


def _check_qrels_duplicates(con, path: Path) -> None:
    dup = con.execute("""
        SELECT ln, line, topic, doc FROM (
            SELECT ln, line, topic, doc, row_number() OVER (PARTITION BY topic, doc ORDER BY ln) AS k FROM _ing_q)
        WHERE k > 1 ORDER BY ln LIMIT 1""").fetchone()
    if dup:
        _raise_at(path, dup, f"document {dup[3]!r} is judged twice for topic {dup[2]!r}",
                  "one judgment per (topic, docno); trec_eval refuses such qrels too")


def _qrels_name(path: Path) -> str:
    stem = path.name
    for suf in (".gz", ".txt", ".qrels", ".rel"):
        if stem.endswith(suf):
            stem = stem[: -len(suf)]
    return stem


def ingest_qrels(store, paths, *, name: str | None = None, format: str = "trec", replace: bool = False,
                 gains: str | Sequence[float] | None = None, progress: bool | None = None) -> list[IngestResult]:
    """Ingest qrels file(s). Without ``name`` each file becomes a set named after the file; with
    ``name`` all files form one set (e.g. NTCIR per-topic rel files). ``gains`` declares the set's
    default gains of levels 1..n (used when a metric is given no ``gains=``)."""
    if format not in ("trec", "ntcir"):
        raise IngestError(f"unknown format {format!r}; use 'trec' or 'ntcir'")
    files = expand_paths(paths)
    from . import ntcir

    declared = _normalise_gains(gains)
    groups: list[tuple[str, list[Path]]]
    if name:
        groups = [(name, files)]
    else:
        groups = [(_qrels_name(p), [p]) for p in files]
        names = [g[0] for g in groups]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise IngestError(f"several files would be named {sorted(dupes)[0]!r}; give --name to combine them into one set")
    results = []
    with store.transaction(), _progress(progress, len(files), "ingesting qrels") as bar:
        for set_name, group in groups:
            parts = []
            for i, path in enumerate(group):
                if format == "ntcir":
                    ntcir.parse_ntcir_qrels(store.con, path)
                else:
                    _parse_trec_qrels(store.con, path)
                store.con.execute(f"CREATE OR REPLACE TEMP TABLE _ing_q{i} AS SELECT * FROM _ing_q")
                parts.append(f"SELECT * FROM _ing_q{i}")
                bar.advance()
            store.con.execute("CREATE OR REPLACE TEMP TABLE _ing_q AS " + " UNION ALL ".join(parts))
            _check_qrels_duplicates(store.con, group[0] if len(group) == 1 else Path(",".join(map(str, group))))
            sha = file_sha256(group[0]) if len(group) == 1 else hashlib.sha256(
                "".join(file_sha256(p) for p in group).encode()).hexdigest()
            results.append(_store_qrels(store, set_name, ",".join(map(str, group)), format, sha, replace,
                                        declared, [str(p) for p in group]))
            for i in range(len(group)):
                store.con.execute(f"DROP TABLE IF EXISTS _ing_q{i}")
    store.con.execute("DROP TABLE IF EXISTS _ing_q; DROP TABLE IF EXISTS _ing_fields; DROP TABLE IF EXISTS _ing_lines")
    return results


def _normalise_gains(gains) -> str | None:
    if gains is None:
        return None
    if isinstance(gains, str):
        parts = gains.replace(",", ":").split(":")
    else:
        parts = list(gains)
    try:
        vals = [float(x) for x in parts]
    except ValueError:
        raise IngestError(f"gains {gains!r} must be numbers separated by ':' (gains of levels 1..n, e.g. 1:2:3)") from None
    if any(b < a for a, b in zip(vals, vals[1:])) or any(v < 0 for v in vals):
        raise IngestError(f"gains {gains!r} must be non-negative and non-decreasing from level 1 up")
    return ":".join(f"{v:g}" for v in vals)


def _store_qrels(store, name, source, fmt, sha, replace, gains, files) -> IngestResult:
    con = store.con
    existing = con.execute("SELECT qrels_id, sha256 FROM qrels_meta WHERE name = ?", [name]).fetchone()
    n_rows, n_topics, max_grade = con.execute("SELECT count(*), count(DISTINCT topic), max(grade) FROM _ing_q").fetchone()
    if existing and existing[1] == sha:
        return IngestResult("qrels", name, "unchanged", files)
    if existing and not replace:
        raise IngestError(
            f"a qrels set named {name!r} already exists with different content (sha256 {existing[1][:12]} vs {sha[:12]})",
            file=source, expected="--replace to replace it, or --name to store it under another name")
    if existing:
        qid = existing[0]
        con.execute("DELETE FROM qrels_data WHERE qrels_id = ?", [qid])
        con.execute("DELETE FROM score_data WHERE qrels_id = ?", [qid])
        con.execute("DELETE FROM evaluations WHERE qrels_id = ?", [qid])
        con.execute("""UPDATE qrels_meta SET source = ?, format = ?, sha256 = ?, n_topics = ?, n_judged = ?,
                       max_grade = ?, default_gains = ?, ingested_at = current_timestamp WHERE qrels_id = ?""",
                    [source, fmt, sha, n_topics, n_rows, max_grade, gains, qid])
        status = "replaced"
    else:
        qid = con.execute("""INSERT INTO qrels_meta (name, source, format, sha256, n_topics, n_judged, max_grade, default_gains)
                             VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING qrels_id""",
                          [name, source, fmt, sha, n_topics, n_rows, max_grade, gains]).fetchone()[0]
        status = "added"
    con.execute("INSERT INTO qrels_data (qrels_id, topic, doc, grade) SELECT ?, topic, doc, grade FROM _ing_q ORDER BY topic, doc",
                [qid])
    return IngestResult("qrels", name, status, files, n_rows=n_rows, n_topics=n_topics)


def qrels_from_dict(store, name: str, qrels: dict, *, replace: bool = False) -> IngestResult:
    """Store ``{topic: {doc: grade}}`` as a qrels set (used by the notebook API)."""
    rows = [(str(t), str(d), int(g)) for t, docs in qrels.items() for d, g in docs.items()]
    if not rows:
        raise IngestError(f"qrels {name!r} is empty")
    con = store.con
    with store.transaction():
        con.execute("CREATE OR REPLACE TEMP TABLE _ing_q (ln BIGINT, line VARCHAR, topic VARCHAR, doc VARCHAR, grade INTEGER)")
        con.executemany("INSERT INTO _ing_q VALUES (NULL, NULL, ?, ?, ?)", rows)
        sha = hashlib.sha256(repr(sorted(rows)).encode()).hexdigest()
        return _store_qrels(store, name, "<dict>", "dict", sha, replace, None, ["<dict>"])


def run_from_dict(store, name: str, run: dict, *, replace: bool = False) -> IngestResult:
    """Store ``{topic: {doc: score}}`` as a run, ranked like trec_eval (used by the notebook API)."""
    rows = [(str(t), str(d), float(s)) for t, docs in run.items() for d, s in docs.items()]
    if not rows:
        raise IngestError(f"run {name!r} is empty")
    con = store.con
    with store.transaction():
        con.execute("CREATE OR REPLACE TEMP TABLE _ing_run (ln BIGINT, topic VARCHAR, doc VARCHAR, submitted_rank BIGINT, score DOUBLE)")
        con.executemany("INSERT INTO _ing_run VALUES (NULL, ?, ?, NULL, ?)", rows)
        con.execute("UPDATE _ing_run SET ln = rowid + 1")
        sha = hashlib.sha256(repr(sorted(rows)).encode()).hexdigest()
        return _store_run(store, name, name, "<dict>", "dict", sha, replace, 0, ["<dict>"], TREC_RANK_SQL)


def _stderr_is_tty() -> bool:
    return sys.stderr.isatty()
