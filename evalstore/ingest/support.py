"""``ingest support``: citation support labels, a qrels set of kind ``support`` (docs/rag.md).

One JSON object per line: ``{"run_id", "topic_id", "sentence", "citation", "label"}`` — the
sentence (0-based) of a run's answer for a topic, the citation (the 0-based index into the answer's
references that the sentence cites, or the cited document's id) and whether the cited document supports the sentence:
``full``, ``partial`` or ``none`` (also read: ``full_support``/``FS``, ``partial_support``/``PS``,
``no_support``/``not_support``/``NS``, any case). An optional ``doc`` (or ``docid``) must be the
document the citation names. The answers must be stored (``ingest answers``): a label for a run,
topic, sentence or citation the stored answer lacks is an error with its line, as is a label given
twice. Stored in one transaction in ``support_data``, keyed by the set's qrels id.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..errors import IngestError
from .checks import check_name
from .formats import strip_suffixes
from .jsonl import LineFile, LineGroup, content_sha, first_error, read_lines, repeated
from .text_formats import CTL, json_first
from .write import IngestResult, QrelsMeta, qrels_meta_row

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

FORMAT = "jsonl"
RUN_KEYS = ("run_id",)
TOPIC_KEYS = ("topic_id", "qid")
DOC_KEYS = ("doc", "docid", "doc_id")
#: the labels, each with the spellings read as it, and its grade (what `agree` compares)
LABELS = {
    "full": (2, ("full", "full_support", "fs", "support")),
    "partial": (1, ("partial", "partial_support", "ps")),
    "none": (0, ("none", "no_support", "not_support", "ns", "no")),
}
EXPECTED = (
    'one label per line: {"run_id": "...", "topic_id": "...", "sentence": 0, "citation": 2, "label": "full"} '
    "(label full, partial or none; citation: the index into the answer's references)"
)
E_JSON, E_RUN, E_TOPIC, E_SENTENCE, E_CITATION, E_LABEL, E_CTL = range(1, 8)
_LABEL = "replace(replace(lower(trim(json_extract_string(line, '$.label'))), ' ', '_'), '-', '_')"


def _checks() -> str:
    run, topic = json_first(RUN_KEYS, scalar_ok=True), json_first(TOPIC_KEYS, scalar_ok=True)
    spellings = tuple(s for _, names in LABELS.values() for s in names)
    return f"""CASE
        WHEN NOT json_valid(line) OR json_type(line) <> 'OBJECT' THEN {E_JSON}
        WHEN coalesce(trim({run}), '') = '' THEN {E_RUN}
        WHEN coalesce(trim({topic}), '') = '' THEN {E_TOPIC}
        WHEN {CTL.format(f=topic)} OR {CTL.format(f=run)} THEN {E_CTL}
        WHEN json_type(line, '$.sentence') IS DISTINCT FROM 'UBIGINT' THEN {E_SENTENCE}
        WHEN json_type(line, '$.citation') IS DISTINCT FROM 'UBIGINT'
             AND (json_type(line, '$.citation') IS DISTINCT FROM 'VARCHAR'
                  OR trim(json_extract_string(line, '$.citation')) = '') THEN {E_CITATION}
        WHEN {_LABEL} IS NULL OR {_LABEL} NOT IN {spellings} THEN {E_LABEL}
        ELSE 0 END"""


PROBLEMS = {
    E_JSON: "not a JSON object",
    E_RUN: "no run_id (a string)",
    E_TOPIC: "no topic_id (a string or number)",
    E_CTL: "a control character in the run_id or topic_id",
    E_SENTENCE: "sentence is not a whole number >= 0 (the sentence's position in the answer, from 0)",
    E_CITATION: "citation is neither a whole number >= 0 (the index into the answer's references) nor a document id",
    E_LABEL: "the label is not full, partial or none",
}


def ingest_support(
    store: StoreHandle, paths: str | os.PathLike | Iterable, *, name: str | None = None, replace: bool = False
) -> IngestResult:
    """Ingest citation support labels (``{"run_id", "topic_id", "sentence", "citation", "label"}``
    lines) of stored answers as the support set ``name`` (a qrels set of kind ``support``; default:
    the file name). All files form one set. See :mod:`evalstore.ingest.support`."""
    con = store.con
    with read_lines(con, paths, "_support_lines") as files:
        if name is None and len(files) == 1 and files[0].name != "<stdin>":
            name = strip_suffixes(files[0].name.rsplit("/", 1)[-1], (".gz", ".jsonl", ".json", ".txt")) or None
        if name is None:
            raise IngestError("name the support set with --name", file=", ".join(f.name for f in files))
        check_name(name, "support set")
        first_error(con, "_support_lines", _checks(), files, PROBLEMS, EXPECTED)
        try:
            _parse(con)
            repeated(con, "_support_raw", "run, topic, sentence, citation", files,
                     "the label of run, topic, sentence and citation", "one label per citation")  # fmt: skip
            _match(con, files)
            g = LineGroup(0, [], content_sha(con, "_support_lines"), name,
                          file_sha=files[0].file_sha if len(files) == 1 else None,
                          source_names=[f.name for f in files])  # fmt: skip
            with store.transaction():
                return _store(store, g, replace)
        finally:
            for t in ("_support_raw", "_support"):
                con.execute(f"DROP TABLE IF EXISTS {t}")


def _parse(con: Any) -> None:
    grade = " ".join(f"WHEN {_LABEL} IN {names} THEN '{label}'" for label, (_, names) in LABELS.items())
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE _support_raw AS
            SELECT l.file, l.ln, l.line, trim({json_first(RUN_KEYS, scalar_ok=True)}) AS run,
                   trim({json_first(TOPIC_KEYS, scalar_ok=True)}) AS topic,
                   json_extract(line, '$.sentence')::BIGINT AS sentence,
                   CASE WHEN json_type(line, '$.citation') = 'UBIGINT'
                        THEN json_extract(line, '$.citation')::BIGINT END AS citation,
                   coalesce({json_first(("citation",))}, {json_first(DOC_KEYS)}) AS given_doc,
                   CASE {grade} END AS label
            FROM _support_lines l"""
    )


def _match(con: Any, files: list[LineFile]) -> None:
    """Each label against the stored answer: run, topic, sentence, citation (and doc, if given);
    a citation given as a document id becomes the index of that document in the references."""
    con.execute(
        """CREATE OR REPLACE TEMP TABLE _support AS
           SELECT l.* EXCLUDE (citation), coalesce(l.citation, d.rank - 1) AS citation, r.run_id, a.n_sentences,
                  s.citations, list_contains(s.citations, coalesce(l.citation, d.rank - 1)::INTEGER) AS cited, d.doc
           FROM _support_raw l
           LEFT JOIN run_meta r ON r.name = l.run
           LEFT JOIN answer_data a ON a.run_id = r.run_id AND a.topic = l.topic
           LEFT JOIN answer_sentence_data s ON s.run_id = r.run_id AND s.topic = l.topic AND s.sentence = l.sentence
           LEFT JOIN run_row_data d ON d.run_id = r.run_id AND d.topic = l.topic
                 AND (d.rank = l.citation + 1 OR (l.citation IS NULL AND d.doc = l.given_doc))"""
    )
    bad = con.execute(
        """SELECT file, ln, line, run, topic, sentence, citation, given_doc, run_id, n_sentences, citations, cited, doc
           FROM _support
           WHERE n_sentences IS NULL OR citations IS NULL OR citation IS NULL OR NOT cited
              OR (given_doc IS NOT NULL AND given_doc <> doc)
           ORDER BY file, ln LIMIT 1"""
    ).fetchall()
    if not bad:
        return
    f, ln, line, run, topic, sentence, citation, given, run_id, n_sentences, citations, cited, doc = bad[0]
    if run_id is None:
        problem = f"no run named {run!r} in the store (ingest its answers first: evalstore ingest answers FILE)"
    elif n_sentences is None:
        problem = f"the run {run!r} has no answer for topic {topic!r}"
    elif citations is None:
        problem = f"the answer of {run!r} for topic {topic!r} has {n_sentences} sentence(s) (0..{n_sentences - 1})"
    elif citation is None:
        problem = f"the document {given!r} is not among the references of the answer of {run!r} for topic {topic!r}"
    elif not cited:
        problem = f"sentence {sentence} cites references {list(citations)}; citation {citation} is not one of them"
    else:
        problem = f"citation {citation} names the document {doc!r}, not {given!r}"
    raise IngestError(problem, file=files[f].name, line=int(ln), text=line,
                      expected="labels of the stored answers' citations")  # fmt: skip


def _store(store: StoreHandle, g: LineGroup, replace: bool) -> IngestResult:
    con = store.con
    n_judged, n_topics = con.execute("SELECT count(*), count(DISTINCT topic) FROM _support").fetchall()[0]
    meta = QrelsMeta(g.final, ",".join(g.sources), FORMAT, g.sha, g.file_sha, int(n_topics), int(n_judged), 2, None,
                     kind="support")  # fmt: skip
    qid, res = qrels_meta_row(store, g, meta, replace)
    if qid is None:
        return res
    grade = " ".join(f"WHEN '{label}' THEN {g_}" for label, (g_, _) in LABELS.items())
    con.execute(
        "INSERT INTO support_data (qrels_id, run, topic, sentence, citation, doc, label, grade, line_no) "
        f"SELECT ?, run, topic, sentence, citation, doc, label, CASE label {grade} END, ln FROM _support "
        "ORDER BY run, topic, sentence, citation",
        [qid],
    )
    n_runs = con.execute("SELECT count(DISTINCT run) FROM _support").fetchall()[0][0]
    res.kind = "support set"
    res.messages.insert(0, f"support labels of the citations of {n_runs} run(s)")
    return res
