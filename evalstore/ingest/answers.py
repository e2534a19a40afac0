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
from .jsonl import LineFile, LineGroup, content_sha, first_error, read_lines, repeated
from .text_formats import CTL, json_first
from .write import IngestResult, run_meta_row, stored_identities

if TYPE_CHECKING:
    from ..store.handle import StoreHandle

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

# error codes of an answer line
E_JSON, E_RUN, E_TOPIC, E_ANSWER, E_SENTENCE, E_CITES, E_REFS, E_RANGE, E_DUPREF, E_LENGTH, E_CTL, E_DUPCITE = range(
    1, 13
)

_SENTENCES = "json_extract(line, '$.answer[*]')"
_REFS = "json_extract(line, '$.references[*]')"


def _line_checks(named: bool) -> str:
    """SQL: the error code of an answer line (0: good); ``named``: the run is named by ``--run``."""
    run = json_first(RUN_KEYS, scalar_ok=True)
    topic = json_first(TOPIC_KEYS, scalar_ok=True)
    sentence_ok = (
        f"coalesce(list_bool_and(list_transform({_SENTENCES}, lambda x: coalesce(json_type(x) = 'OBJECT' "
        "AND json_type(x, '$.text') = 'VARCHAR', FALSE))), TRUE)"
    )
    cites_ok = (
        f"coalesce(list_bool_and(list_transform({_SENTENCES}, lambda x: json_type(x, '$.citations') IS NULL "
        "OR (json_type(x, '$.citations') = 'ARRAY' AND coalesce(list_bool_and(list_transform("
        "json_extract(x, '$.citations[*]'), lambda c: json_type(c) = 'UBIGINT')), TRUE)))), TRUE)"
    )
    refs_ok = (
        "json_type(line, '$.references') IS NULL OR (json_type(line, '$.references') = 'ARRAY' AND "
        f"coalesce(list_bool_and(list_transform({_REFS}, lambda x: json_type(x) = 'VARCHAR')), TRUE))"
    )
    n_refs = f"len({_REFS})"
    in_range = (
        f"coalesce(list_bool_and(list_transform({_SENTENCES}, lambda x: coalesce(list_bool_and(list_transform("
        f"json_extract(x, '$.citations[*]'), lambda c: c::UBIGINT < {n_refs})), TRUE))), TRUE)"
    )
    once = (
        f"coalesce(list_bool_and(list_transform({_SENTENCES}, lambda x: len(list_distinct(json_extract(x, "
        "'$.citations[*]'))) = len(json_extract(x, '$.citations[*]')))), TRUE)"
    )
    length_ok = "json_type(line, '$.response_length') IS NULL OR json_type(line, '$.response_length') = 'UBIGINT'"
    return f"""CASE
        WHEN NOT json_valid(line) OR json_type(line) <> 'OBJECT' THEN {E_JSON}
        WHEN {"FALSE" if named else f"coalesce(trim({run}), '') = ''"} THEN {E_RUN}
        WHEN coalesce(trim({topic}), '') = '' THEN {E_TOPIC}
        WHEN {CTL.format(f=topic)} OR {"FALSE" if named else CTL.format(f=run)} THEN {E_CTL}
        WHEN json_type(line, '$.answer') IS DISTINCT FROM 'ARRAY' THEN {E_ANSWER}
        WHEN NOT {sentence_ok} THEN {E_SENTENCE}
        WHEN NOT {cites_ok} THEN {E_CITES}
        WHEN NOT ({refs_ok}) THEN {E_REFS}
        WHEN NOT {in_range} THEN {E_RANGE}
        WHEN NOT {once} THEN {E_DUPCITE}
        WHEN len(list_distinct({_REFS})) < {n_refs} THEN {E_DUPREF}
        WHEN NOT ({length_ok}) THEN {E_LENGTH}
        ELSE 0 END"""


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
        first_error(con, "_answer_lines", _line_checks(run is not None), files, PROBLEMS, EXPECTED)
        try:
            _parse(con, run)
            repeated(
                con, "_answers", "run, topic", files, "the answer of run and topic", "one answer per run and topic"
            )
            runs = _runs(con, files, run)
            with store.transaction():
                return [_store_run(store, g, replace) for g in runs]
        finally:
            con.execute("DROP TABLE IF EXISTS _answers")


def _parse(con: Any, run: str | None) -> None:
    """``_answers``: one row per line with its run, topic, query, references, length and sentences."""
    name = "?" if run is not None else f"trim({json_first(RUN_KEYS, scalar_ok=True)})"
    words = (
        f"list_sum(list_transform({_SENTENCES}, lambda x: len(regexp_split_to_array(trim(json_extract_string(x, "
        "'$.text')), '\\s+')) * (trim(json_extract_string(x, '$.text')) <> '')::INTEGER))"
    )
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE _answers AS
            SELECT file, ln, line, {name} AS run, trim({json_first(TOPIC_KEYS, scalar_ok=True)}) AS topic,
                   {json_first(QUERY_KEYS)} AS query,
                   coalesce(json_extract_string(line, '$.references[*]'), []::VARCHAR[]) AS refs,
                   json_type(line, '$.response_length') IS NOT NULL AS length_given,
                   coalesce(json_extract(line, '$.response_length')::BIGINT, coalesce({words}, 0)) AS length,
                   {_SENTENCES} AS sentences
            FROM _answer_lines""",
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
    run_id, res = run_meta_row(store, g, int(n_rows or 0), int(n_topics), 0, replace, FORMAT, old, kind="answers")
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
           SELECT ?, topic, query, length, length_given, len(sentences), len(refs), ln FROM _answers WHERE run = ?""",
        [run_id, g.name],
    )
    con.execute(
        """INSERT INTO answer_sentence_data (run_id, topic, sentence, text, citations)
           SELECT ?, topic, s.i - 1, json_extract_string(s.x, '$.text'),
                  coalesce(json_extract(s.x, '$.citations[*]')::INTEGER[], []::INTEGER[])
           FROM _answers, unnest(sentences) WITH ORDINALITY AS s(x, i) WHERE run = ?""",
        [run_id, g.name],
    )
    return res
