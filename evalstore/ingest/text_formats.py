"""The input formats of topic (query) and document files: one registry entry per format.

A line format (``tsv``, ``jsonl``) is SQL over one line of the file (``line``): the id, the fields
and an error code per line, so a file of any size is read in bounded chunks and checked in
DuckDB. A document format (``trec``: TREC topic files) is parsed whole in Python
(:mod:`evalstore.ingest.trec_topics`); topic files are small.

* ``tsv``: ``id<TAB>text`` (MS MARCO's ``queries.*.tsv`` and ``collection.tsv``); the text is
  everything after the first tab, kept as given.
* ``jsonl``: one JSON object per line, as ir_datasets and BEIR write them: the id under
  ``qid`` / ``query_id`` / ``_id`` / ``id`` (documents: ``docid`` / ``doc_id`` / ``_id`` / ``id`` /
  ``pid``), the text under ``text`` / ``query`` / ``title`` (documents: ``text`` / ``contents`` /
  ``body`` / ``passage``; a ``title`` is kept beside it); a topic's ``description`` (or
  ``question``) and ``narrative`` too.
* ``trec``: TREC topic files, the SGML of the ad hoc tracks (``<top><num>...<title>...<desc>...
  <narr>...</top>``) and the XML of the later ones (``<topic number="1"><query>...
  <description>...<narrative>...</topic>``).

``auto`` (the default) picks by the first non-blank character of the file: ``<`` trec, ``{``
jsonl, anything else tsv.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the fields of a topic, and which one becomes its query text (``--field``)
TOPIC_FIELDS = ("title", "description", "narrative")

# Row error codes of the line formats.
E_NO_TAB, E_NO_ID, E_JSON, E_JSON_ID, E_JSON_TEXT, E_CTL = 1, 2, 3, 4, 5, 6

#: JSON keys, in order of preference
TOPIC_ID_KEYS = ("qid", "query_id", "_id", "id", "topic_id", "number")
DOC_ID_KEYS = ("docid", "doc_id", "_id", "id", "pid", "docno")
TOPIC_KEYS = {
    "title": ("text", "query", "title"),
    "description": ("description", "desc", "question"),
    "narrative": ("narrative", "narr"),
}
DOC_TEXT_KEYS = ("text", "contents", "body", "passage")


def json_path(key: str) -> str:
    """The JSON path of a key, a dotted key naming a nested one (``metadata.run_id``)."""
    return "$." + ".".join(f'"{part}"' for part in key.split("."))


def json_first(keys: tuple[str, ...], scalar_ok: bool = False, column: str = "line") -> str:
    """SQL: the first of ``keys`` (dotted for a nested key) present in the JSON text ``column`` as
    a string (or a number, for ids)."""
    types = "('VARCHAR', 'BIGINT', 'UBIGINT', 'DOUBLE')" if scalar_ok else "('VARCHAR')"
    arms = " ".join(
        f"WHEN json_type({column}, '{json_path(k)}') IN {types} THEN json_extract_string({column}, '{json_path(k)}')"
        for k in keys
    )
    return f"CASE {arms} END"


# control characters other than tab: refused in an id (they would break TREC files and pages)
CTL = "regexp_matches({f}, '[\\x00-\\x08\\x0a-\\x1f\\x7f]')"


@dataclass(frozen=True)
class TextFormat:
    """One ``--format`` of ``ingest topics`` / ``ingest docs``."""

    name: str
    description: str
    expected_topics: str
    expected_docs: str
    line_based: bool = True  # else parsed whole by trec_topics

    def expected(self, kind: str) -> str:
        return self.expected_topics if kind == "topics" else self.expected_docs

    def select(self, kind: str) -> str:
        """SQL over (ln, line): ln, err, id, title, description, narrative (topics) or ln, err, id,
        title, text (docs)."""
        if self.name == "tsv":
            tab = "strpos(line, chr(9))"
            ident = f"trim(CASE WHEN {tab} > 0 THEN line[:{tab} - 1] END, ' ')"
            text = f"CASE WHEN {tab} > 0 THEN line[{tab} + 1:] END"
            err = (
                f"CASE WHEN {tab} = 0 THEN {E_NO_TAB} WHEN {ident} = '' THEN {E_NO_ID} "
                f"WHEN {CTL.format(f=ident)} THEN {E_CTL} ELSE 0 END"
            )
            if kind == "topics":
                return f"ln, line, {err} AS err, {ident} AS id, {text} AS title, NULL AS description, NULL AS narrative"
            return f"ln, line, {err} AS err, {ident} AS id, NULL AS title, {text} AS text"
        # jsonl: json_valid first, so the extractions only see valid JSON
        id_keys = TOPIC_ID_KEYS if kind == "topics" else DOC_ID_KEYS
        ident = f"CASE WHEN json_valid(line) THEN trim({json_first(id_keys, scalar_ok=True)}, ' ') END"
        if kind == "topics":
            fields = [f"CASE WHEN json_valid(line) THEN {json_first(TOPIC_KEYS[f])} END" for f in TOPIC_FIELDS]
            has_text = " OR ".join(f"({f}) IS NOT NULL" for f in fields)
        else:
            title = "CASE WHEN json_valid(line) THEN " + json_first(("title",)) + " END"
            body = f"CASE WHEN json_valid(line) THEN {json_first(DOC_TEXT_KEYS)} END"
            fields = [title, body]
            has_text = f"({body}) IS NOT NULL"
        err = (
            f"CASE WHEN NOT json_valid(line) OR left(ltrim(line, ' '), 1) <> '{{' THEN {E_JSON} "
            f"WHEN ({ident}) IS NULL OR ({ident}) = '' THEN {E_JSON_ID} "
            f"WHEN {CTL.format(f=ident)} THEN {E_CTL} WHEN NOT ({has_text}) THEN {E_JSON_TEXT} ELSE 0 END"
        )
        names = ("title", "description", "narrative") if kind == "topics" else ("title", "text")
        cols = ", ".join(f"{sql} AS {n}" for sql, n in zip(fields, names))
        return f"ln, line, {err} AS err, {ident} AS id, {cols}"

    def problem(self, kind: str, err: int) -> str:
        """What is wrong with a line of error code ``err``."""
        what = "topic id" if kind == "topics" else "document id"
        keys = ", ".join(TOPIC_ID_KEYS if kind == "topics" else DOC_ID_KEYS)
        texts = (
            ", ".join(k for f in TOPIC_FIELDS for k in TOPIC_KEYS[f]) if kind == "topics" else ", ".join(DOC_TEXT_KEYS)
        )
        return {
            E_NO_TAB: f"no tab after the {what}",
            E_NO_ID: f"the {what} is empty",
            E_JSON: "not a JSON object",
            E_JSON_ID: f"no {what} (a string or number under one of {keys})",
            E_JSON_TEXT: f"no text (a string under one of {texts})",
            E_CTL: f"a control character in the {what}",
        }.get(err, "unreadable line")


TEXT_FORMATS: dict[str, TextFormat] = {
    f.name: f
    for f in (
        TextFormat(
            "tsv",
            "id<TAB>text per line (MS MARCO queries.tsv / collection.tsv)",
            "topic id, a tab, the query text (e.g. '19335\\tanthropological definition of environment')",
            "document id, a tab, the text (e.g. '7187158\\tThe Manhattan Project ...')",
        ),
        TextFormat(
            "jsonl",
            "one JSON object per line (ir_datasets, BEIR): id under qid/query_id/_id (docs: docid/doc_id/_id), "
            "text under text/query/title (docs: text/contents)",
            'one JSON object per line, e.g. {"qid": "19335", "text": "anthropological definition of environment"}',
            'one JSON object per line, e.g. {"docid": "7187158", "text": "The Manhattan Project ..."}',
        ),
        TextFormat(
            "trec",
            "TREC topic files: <top><num>..<title>..<desc>..<narr>..</top> (SGML) or "
            '<topic number="..."><query>..<description>..<narrative>..</topic> (XML); topics only',
            "TREC topics: <top> <num> Number: 301 <title> ... <desc> Description: ... <narr> Narrative: ... </top>, "
            'or <topic number="1"> <query>...</query> <description>...</description> </topic>',
            "",
            line_based=False,
        ),
    )
}

#: the formats offered for each kind (``auto`` first: sniffed from the file)
FORMAT_CHOICES = {"topics": ("auto", "trec", "tsv", "jsonl"), "docs": ("auto", "tsv", "jsonl")}


def sniff(first_char: str | None, kind: str) -> str:
    """The format of a file whose first non-blank character is ``first_char``."""
    if first_char == "<" and kind == "topics":
        return "trec"
    if first_char == "{":
        return "jsonl"
    return "tsv"
