"""NTCIR formats: qrels ``topic doc L<n>``, per-topic rel files ``doc L<n>`` and res files.

NTCIREVAL reads a res file in file order (one docID per line, rank order) and never sorts by
score; levels are ``L0``..``L15`` and a level without the ``L`` prefix is an error.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from .errors import IngestError
from .ingest import (NTCIR_QRELS_EXPECTED, NTCIR_REL_EXPECTED, RES_EXPECTED, _first_bad, _raise_at,
                     _read_lines, _split_fields, file_sha256)


def looks_like_res_files(files: list[Path]) -> bool:
    """True when the first content line of the first file has a single field (a res file)."""
    from .ingest import _content_lines

    for _, text in _content_lines(files[0]):
        return len(text.split()) == 1
    return False


def load_res_files(con, files: list[Path]) -> str:
    """Per-topic res files (topic = file stem) into temp table ``_ing_run``; returns a sha256."""
    parts = []
    for i, path in enumerate(files):
        _read_lines(con, path, "_ing_lines")
        _split_fields(con, "_ing_lines", "_ing_fields")
        bad = _first_bad(con, "_ing_fields", "len(f) <> 1")
        if bad:
            _raise_at(path, bad, "a res file has one docno per line", RES_EXPECTED)
        topic = path.name.split(".")[0]
        con.execute(f"""CREATE OR REPLACE TEMP TABLE _ing_res{i} AS
            SELECT ln + {i} * 100000000 AS ln, line, ? AS topic, f[1] AS doc, ln AS submitted_rank,
                   NULL::DOUBLE AS score, NULL::VARCHAR AS tag FROM _ing_fields""", [topic])
        parts.append(f"SELECT * FROM _ing_res{i}")
    con.execute("CREATE OR REPLACE TEMP TABLE _ing_run AS " + " UNION ALL ".join(parts))
    for i in range(len(files)):
        con.execute(f"DROP TABLE _ing_res{i}")
    dup = con.execute("""SELECT ln, line, topic, doc FROM (SELECT *, row_number() OVER (PARTITION BY topic, doc ORDER BY ln) k
                         FROM _ing_run) WHERE k > 1 ORDER BY ln LIMIT 1""").fetchone()
    if dup:
        path = files[int(dup[0]) // 100000000]
        _raise_at(path, (int(dup[0]) % 100000000, dup[1]), f"duplicate document {dup[3]!r} in topic {dup[2]!r}",
                  "each docno at most once per topic (NTCIREVAL would count it twice)")
    return hashlib.sha256("".join(file_sha256(p) for p in files).encode()).hexdigest()


def parse_ntcir_qrels(con, path: Path) -> None:
    """NTCIR qrels (``topic doc Ln``) or a per-topic rel file (``doc Ln``, topic = file stem) into
    temp table ``_ing_q(ln, line, topic, doc, grade)``."""
    _read_lines(con, path, "_ing_lines")
    if con.execute("SELECT count(*) FROM _ing_lines").fetchone()[0] == 0:
        raise IngestError("empty file: no judgments found", file=str(path), expected=NTCIR_QRELS_EXPECTED)
    _split_fields(con, "_ing_lines", "_ing_fields")
    width = con.execute("SELECT len(f) FROM _ing_fields ORDER BY ln LIMIT 1").fetchone()[0]
    if width not in (2, 3):
        width = 3
    expected = NTCIR_QRELS_EXPECTED if width == 3 else NTCIR_REL_EXPECTED
    bad = _first_bad(con, "_ing_fields", f"len(f) <> {width}")
    if bad:
        _raise_at(path, bad, f"wrong number of columns ({len(bad[1].split())} instead of {width})", expected)
    topic_expr = "f[1]" if width == 3 else "'" + path.name.split(".")[0].replace("'", "''") + "'"
    doc_i, lvl_i = (2, 3) if width == 3 else (1, 2)
    con.execute(f"""CREATE OR REPLACE TEMP TABLE _ing_q AS
        SELECT ln, line, {topic_expr} AS topic, f[{doc_i}] AS doc, f[{lvl_i}] AS grade_text,
               TRY_CAST(CASE WHEN regexp_full_match(f[{lvl_i}], 'L[0-9]+') THEN f[{lvl_i}][2:] END AS INTEGER) AS grade
        FROM _ing_fields""")
    bad = _first_bad(con, "_ing_q", "grade IS NULL")
    if bad:
        txt = con.execute("SELECT grade_text FROM _ing_q WHERE ln = ?", [bad[0]]).fetchone()[0]
        hint = " (NTCIR levels need the L prefix)" if txt.isdigit() else ""
        _raise_at(path, bad, f"relevance level {txt!r} is not of the form L<n>{hint}", expected)
