"""``ingest answers``: generated answers (TREC RAG) as runs of kind ``answers``.

One JSON object per line (docs/rag.md):

* the TREC RAG form: ``run_id``, ``topic_id``, ``topic`` (the query, optional), ``references``
  (document ids, in order), ``response_length`` (optional), ``answer``: a list of sentences
  ``{"text", "citations": [indexes into references]}``; the ids may also sit under ``metadata``
  (``metadata.run_id``, ``metadata.topic_id`` or ``metadata.narrative_id``), as TREC RAG 2025
  writes them;
* nuggetizer's answers form: ``{"topic_id", "answer": [{"text"}]}`` (no references, no citations),
  named by ``run`` (``--run NAME``).

Each run of the call (lines grouped by ``run_id``, or all lines under ``run``) is stored as a run
(``run_meta``, kind ``answers``) whose ranked list is its answers' references (rank = position in
``references``), with one ``answer_data`` row per answer and its sentences in
``answer_sentence_data``. Identity is by content, as for runs: the hash of the run's lines; the
same content under the same name is left alone, other content needs ``replace`` (its scores and
the analyses that read it go), and ``drop run`` removes it. Every line is checked in DuckDB; the
first bad line stops the call with its file, line, text and what was expected, and nothing of
the call is stored (one transaction).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import IngestError
from .checks import check_name
from .jsonl import LineFile, LineGroup, content_sha, first_bad, read_lines, repeated
from .text_formats import CTL, json_first
from .write import IngestResult, run_meta_row, stored_identities

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: the format stored in run_meta for answers
FORMAT = "trec-rag"
RUN_KEYS = ("run_id", "metadata.run_id")
TOPIC_KEYS = ("topic_id", "metadata.topic_id", "metadata.narrative_id", "qid")
QUERY_KEYS = ("topic", "metadata.narrative", "query")
EXPECTED = (
    'one answer per line: {"run_id": "...", "topic_id": "...", "references": ["doc", ...], '
    '"answer": [{"text": "...", "citations": [0, ...]}, ...]} (nuggetizer\'s {"topic_id", "answer": [{"text"}]} '
    "with --run NAME)"
)

# error codes of an answer line, in the order they are checked (a line's first problem is reported)
(E_JSON, E_RUN, E_TOPIC, E_CTL, E_ANSWER, E_REFS, E_DUPREF, E_LENGTH, E_SENTENCE, E_CITES, E_RANGE,
 E_DUPCITE) = range(1, 13)  # fmt: skip

_REFS = "json_extract(line, '$.references[*]')"


def _line_checks(named: bool) -> str:
    """SQL: the error code of an answer line as a whole (0: good; its sentences and citations are
    checked by :func:`_bad_items`); ``named``: the run is named by ``--run``."""
    run = json_first(RUN_KEYS, scalar_ok=True)
    topic = json_first(TOPIC_KEYS, scalar_ok=True)
    refs_ok = (
        "json_type(line, '$.references') IS NULL OR (json_type(line, '$.references') = 'ARRAY' AND "
        f"coalesce(list_bool_and(list_transform({_REFS}, lambda x: json_type(x) = 'VARCHAR')), TRUE))"
    )
    length_ok = "json_type(line, '$.response_length') IS NULL OR json_type(line, '$.response_length') = 'UBIGINT'"
    return f"""CASE
        WHEN NOT json_valid(line) OR json_type(line) <> 'OBJECT' THEN {E_JSON}
        WHEN {"FALSE" if named else f"coalesce(trim({run}), '') = ''"} THEN {E_RUN}
        WHEN coalesce(trim({topic}), '') = '' THEN {E_TOPIC}
        WHEN {CTL.format(f=topic)} OR {"FALSE" if named else CTL.format(f=run)} THEN {E_CTL}
        WHEN json_type(line, '$.answer') IS DISTINCT FROM 'ARRAY' THEN {E_ANSWER}
        WHEN NOT ({refs_ok}) THEN {E_REFS}
        WHEN len(list_distinct({_REFS})) < len({_REFS}) THEN {E_DUPREF}
        WHEN NOT ({length_ok}) THEN {E_LENGTH}
        ELSE 0 END"""


def _bad_items(named: bool) -> str:
    """SQL: ``(file, ln, err)`` of every problem of the lines of ``_answer_lines``: a line's own
    (:func:`_line_checks`), then, on good lines, each sentence's (an object with a text string,
    citations a list) and each citation's (a whole number, within the references, once per
    sentence). Each sentence and citation is parsed once (a row each), so the cost is linear."""
    return f"""
    WITH l AS (
        SELECT file, ln, line, ({_line_checks(named)}) AS err FROM _answer_lines
    ), s AS (
        SELECT l.file, l.ln, s.i, s.x, len({_REFS}) AS n_refs
        FROM l, unnest(json_extract(l.line, '$.answer[*]')) WITH ORDINALITY AS s(x, i) WHERE l.err = 0
    ), c AS (
        SELECT s.file, s.ln, s.i, s.n_refs, c.c
        FROM s, unnest(json_extract(s.x, '$.citations[*]')) AS c(c) WHERE json_type(s.x, '$.citations') = 'ARRAY'
    )
    SELECT file, ln, err FROM l WHERE err > 0
    UNION ALL
    SELECT file, ln, CASE WHEN NOT coalesce(json_type(x) = 'OBJECT' AND json_type(x, '$.text') = 'VARCHAR', FALSE)
                          THEN {E_SENTENCE} ELSE {E_CITES} END
    FROM s WHERE NOT coalesce(json_type(x) = 'OBJECT' AND json_type(x, '$.text') = 'VARCHAR', FALSE)
              OR json_type(x, '$.citations') NOT IN ('ARRAY', 'NULL')
    UNION ALL
    SELECT file, ln, CASE WHEN json_type(c) <> 'UBIGINT' THEN {E_CITES} ELSE {E_RANGE} END
    FROM c WHERE json_type(c) <> 'UBIGINT' OR c::UBIGINT >= n_refs
    UNION ALL
    SELECT file, ln, {E_DUPCITE} FROM c WHERE json_type(c) = 'UBIGINT'
    GROUP BY file, ln, i, c::UBIGINT HAVING count(*) > 1"""


def _cited_outside(line: str) -> str:
    """The message of a citation outside the answer's references (the line is valid JSON)."""
    doc = json.loads(line)
    n = len(doc.get("references") or [])
    for i, s in enumerate(doc["answer"]):
        for c in s.get("citations") or []:
            if c >= n:
                refs = f"{n} references (0..{n - 1})" if n else "no references"
                return f"sentence {i} cites reference {c}, but the answer has {refs}"
    return "a citation is outside the answer's references"


def _twice_in_references(line: str) -> str:
    refs = json.loads(line)["references"]
    doc = next(d for i, d in enumerate(refs) if d in refs[:i])
    return f"the document {doc!r} is listed twice in references"


def _cited_twice(line: str) -> str:
    for i, s in enumerate(json.loads(line)["answer"]):
        cites = s.get("citations") or []
        twice = next((c for j, c in enumerate(cites) if c in cites[:j]), None)
        if twice is not None:
            return f"sentence {i} cites reference {twice} twice"
    return "a sentence cites a reference twice"


PROBLEMS: dict[int, str | Callable[[str], str]] = {
    E_JSON: "not a JSON object",
    E_RUN: "no run_id (a string); name the run of nuggetizer's answers form with --run NAME",
    E_TOPIC: "no topic_id (a string or number)",
    E_CTL: "a control character in the run_id or topic_id",
    E_ANSWER: "no answer: a list of sentences under 'answer'",
    E_SENTENCE: 'a sentence of the answer is not an object with a "text" string',
    E_CITES: "citations are not a list of whole numbers >= 0 (indexes into references)",
    E_REFS: "references are not a list of document ids (strings)",
    E_RANGE: _cited_outside,
    E_DUPREF: _twice_in_references,
    E_DUPCITE: _cited_twice,
    E_LENGTH: "response_length is not a whole number >= 0",
}


def ingest_answers(
    store: StoreHandle, paths: str | os.PathLike | Iterable, *, run: str | None = None, replace: bool = False
) -> list[IngestResult]:
    """Ingest generated answers (TREC RAG's JSON lines, or nuggetizer's answers form with ``run``)
    as runs of kind ``answers``: their references are their ranked lists. See
    :mod:`evalstore.ingest.answers` and docs/rag.md."""
    if run is not None:
        check_name(run, "run")
    con = store.con
    with read_lines(con, paths, "_answer_lines") as files:
        first_bad(con, "_answer_lines", _bad_items(run is not None), files, PROBLEMS, EXPECTED)
        try:
            if run is not None:
                _one_run(con, files, run)
            _parse(con, run)
            repeated(
                con, "_answers", "run, topic", files, "the answer of run and topic", "one answer per run and topic"
            )
            runs = _runs(con, files, run)
            with store.transaction():
                return [_store_run(store, g, replace) for g in runs]
        finally:
            for t in ("_answers", "_answer_sentences"):
                con.execute(f"DROP TABLE IF EXISTS {t}")


def _one_run(con: Any, files: list[LineFile], run: str) -> None:
    """``--run`` names the one run of the call: lines of several runs (``run_id``) are refused."""
    ids = con.execute(
        f"SELECT DISTINCT trim({json_first(RUN_KEYS, scalar_ok=True)}) AS r FROM _answer_lines ORDER BY r NULLS FIRST"
    ).fetchall()
    named = [r for (r,) in ids if r]
    if len(named) > 1:
        shown = ", ".join(named[:5]) + (" ..." if len(named) > 5 else "")
        raise IngestError(
            f"--run {run!r} names one run, but the input holds the runs {shown}",
            file=", ".join(f.name for f in files),
            expected="one run per call with --run, or no --run (each run named by its run_id)",
        )


def _parse(con: Any, run: str | None) -> None:
    """``_answer_sentences``: one row per sentence (its answer's line, position, text, citations);
    ``_answers``: one row per line with its run, topic, query, references, length (given, else the
    words of its sentences) and number of sentences."""
    name = "?" if run is not None else f"trim({json_first(RUN_KEYS, scalar_ok=True)})"
    con.execute(
        """CREATE OR REPLACE TEMP TABLE _answer_sentences AS
           SELECT l.file, l.ln, s.i - 1 AS sentence, json_extract_string(s.x, '$.text') AS text,
                  coalesce(json_extract(s.x, '$.citations[*]')::INTEGER[], []::INTEGER[]) AS citations
           FROM _answer_lines l, unnest(json_extract(l.line, '$.answer[*]')) WITH ORDINALITY AS s(x, i)"""
    )
    con.execute(
        rf"""CREATE OR REPLACE TEMP TABLE _answers AS
            WITH w AS (
                SELECT file, ln, count(*) AS n_sentences,
                       sum(CASE WHEN trim(text) = '' THEN 0 ELSE len(regexp_split_to_array(trim(text), '\s+')) END)
                           AS words
                FROM _answer_sentences GROUP BY file, ln
            )
            SELECT l.file, l.ln, l.line, {name} AS run, trim({json_first(TOPIC_KEYS, scalar_ok=True)}) AS topic,
                   {json_first(QUERY_KEYS)} AS query,
                   coalesce(json_extract_string(line, '$.references[*]'), []::VARCHAR[]) AS refs,
                   json_type(line, '$.response_length') IS NOT NULL AS length_given,
                   coalesce(json_extract(line, '$.response_length')::BIGINT, w.words, 0) AS length,
                   coalesce(w.n_sentences, 0) AS n_sentences
            FROM _answer_lines l LEFT JOIN w USING (file, ln)""",
        [run] if run is not None else [],
    )


def _runs(con: Any, files: list[LineFile], run: str | None) -> list[LineGroup]:
    """The runs of the call with their content hashes (``run``: the one name of every line)."""
    rows = con.execute(
        "SELECT run, list(DISTINCT file ORDER BY file), min(file), min(ln) FROM _answers GROUP BY run ORDER BY 3, 4"
    ).fetchall()
    if run is not None and not rows:
        raise IngestError("no answer in the input", file=", ".join(f.name for f in files), expected=EXPECTED)
    out = []
    for i, (name, in_files, _, _) in enumerate(rows):
        check_name(name, "run")
        sha = content_sha(con, "_answers", "run = ?", [name])
        file_sha = files[in_files[0]].file_sha if len(files) == 1 else None
        out.append(
            LineGroup(i, [], sha, name, tag=name, file_sha=file_sha, source_names=[files[f].name for f in in_files])
        )
    if not out:
        raise IngestError("no answer in the input", file=", ".join(f.name for f in files), expected=EXPECTED)
    return out


def _store_run(store: StoreHandle, g: LineGroup, replace: bool) -> IngestResult:
    """Store one run's answers, references and sentences (inside the call's transaction)."""
    con = store.con
    n_rows, n_topics = con.execute("SELECT sum(len(refs)), count(*) FROM _answers WHERE run = ?", [g.name]).fetchall()[
        0
    ]
    old = stored_identities(con, "run", [g.final]).get(g.final)
    run_id, res = run_meta_row(store, g, int(n_rows or 0), int(n_topics), 0, replace, FORMAT, old, unit="answers")
    if run_id is None:
        return res
    con.execute(
        """INSERT INTO run_row_data (run_id, topic, doc, rank, line_no, submitted_rank, score)
           SELECT ?, topic, r.doc, r.i, r.i, r.i, len(refs) - r.i + 1
           FROM _answers, unnest(refs) WITH ORDINALITY AS r(doc, i) WHERE run = ?""",
        [run_id, g.name],
    )
    con.execute(
        """INSERT INTO answer_data (run_id, topic, query, response_length, length_given, n_sentences, n_references,
                                    line_no)
           SELECT ?, topic, query, length, length_given, n_sentences, len(refs), ln FROM _answers WHERE run = ?""",
        [run_id, g.name],
    )
    con.execute(
        """INSERT INTO answer_sentence_data (run_id, topic, sentence, text, citations)
           SELECT ?, a.topic, s.sentence, s.text, s.citations
           FROM _answers a JOIN _answer_sentences s USING (file, ln) WHERE a.run = ?""",
        [run_id, g.name],
    )
    return res
