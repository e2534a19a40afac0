"""The input formats: one registry entry per format, one layout per kind of line.

A **layout** says how the fields of one kind of line become columns (SQL over the split fields
``f``), what an error message expects, and where the topic and the evaluation order come from. An
**input format** (``--format``) says which layout a run or qrels file has, sniffed from the number
of fields of its first data line, and how an unnamed run or set is named. Adding a format is one
:class:`InputFormat` entry (plus its layouts) and its fixtures in the tests.

* TREC run:   ``topic Q0 doc rank score tag [ignored ...]``, whitespace separated (fields after the
  tag are ignored, as trec_eval does). ``rank`` must be an integer, ``score`` a finite decimal
  number; the evaluation order is trec_eval's: score descending, ties by docno descending.
* TREC qrels: ``topic iteration doc grade``, grade an integer. 0 = judged nonrelevant, negative =
  "in the pool but unjudged" (as trec_eval reads them); both are kept.
* NTCIR qrels: ``topic doc L<n>``; NTCIR per-topic rel file ``doc L<n>`` (topic = file name up to
  its first dot, as NTCIREVAL's ``0001.rel``). A level without the ``L`` prefix is an error, as in
  NTCIREVAL.
* Subtopic qrels (``--format subtopic``, ndeval's): ``topic subtopic doc grade``; the second column
  is a subtopic id (trec qrels' iteration column is ignored), so the format is chosen, not sniffed.
* NTCIR intent qrels (``--format ntcir-intents``, the per-intent levels of Sakai's D-measures):
  ``topic intent doc L<n>``, or per-topic files ``intent doc L<n>`` (topic = file name up to its
  first dot). Intent probabilities (``topic intent prob``) come from a separate file.
* NTCIR run: TREC layout, or NTCIREVAL per-topic res files with one docno per line in rank order
  (topic = file name up to its first dot; all files of the call form one run, which needs a name).
  NTCIREVAL reads a res file in file order and never sorts by score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

# --------------------------------------------------------------------------- SQL building blocks
# The syntax is checked first because DuckDB's casts are more lenient than C's strtod/atol (they
# accept '1_000', '0x10', 'nan', 'inf' and round '1.5' to an integer). (regexp_full_match is
# much cheaper here than ltrim/translate with a character set.)
INT_SQL = "CASE WHEN regexp_full_match({f}, '[+-]?[0-9]+') THEN TRY_CAST({f} AS {t}) END"
NUM_SQL = (
    "CASE WHEN regexp_full_match({f}, '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?') "
    "THEN TRY_CAST({f} AS DOUBLE) END"
)
# The integer level of an NTCIR 'L<n>' field, NULL when the field is not of that form.
LEVEL_SQL = "CASE WHEN regexp_full_match({f}, 'L[0-9]+') THEN TRY_CAST({f}[2:] AS INTEGER) END"

# Row error codes (column err of the parsed rows). E_MESSY: the fast reader met a line it cannot
# read exactly like the general reader; the file is then read again by the general reader.
E_CTL, E_NF, E_SCORE, E_RANK, E_GRADE, E_LEVEL, E_MESSY = 1, 2, 3, 4, 5, 6, 255

# trec_eval's order: score descending, ties broken by docno descending (byte-wise, strcmp).
TREC_RANK_SQL = "row_number() OVER (PARTITION BY grp, topic ORDER BY score DESC, doc DESC)"
# NTCIR res files carry no score: the evaluation rank is the file order.
FILE_RANK_SQL = "row_number() OVER (PARTITION BY grp, topic ORDER BY ln)"

# The columns of the staging tables, per kind of input.
RUN_COLUMNS = "topic VARCHAR, doc VARCHAR, submitted_rank BIGINT, score DOUBLE, tag VARCHAR"
QRELS_COLUMNS = "topic VARCHAR, doc VARCHAR, grade INTEGER"
SUBTOPIC_COLUMNS = "topic VARCHAR, subtopic VARCHAR, doc VARCHAR, grade INTEGER"

RUN_EXPECTED = (
    "at least 6 whitespace-separated fields: topic Q0 docno rank score tag "
    "(rank an integer, score a number; further fields are ignored)"
)
QRELS_EXPECTED = "4 whitespace-separated fields: topic iteration docno grade (grade an integer)"
NTCIR_QRELS_EXPECTED = "3 whitespace-separated fields: topic docno L<level> (e.g. 'T001 doc7 L2')"
NTCIR_REL_EXPECTED = "2 whitespace-separated fields: docno L<level> (e.g. 'doc7 L2')"
SUBTOPIC_EXPECTED = (
    "4 whitespace-separated fields: topic subtopic docno grade (ndeval's subtopic qrels; grade an integer)"
)
INTENT_EXPECTED = "4 whitespace-separated fields: topic intent docno L<level> (e.g. '0001 2 doc7 L1')"
INTENT_REL_EXPECTED = "3 whitespace-separated fields: intent docno L<level> (e.g. '2 doc7 L1')"
RES_EXPECTED = "one docno per line, in rank order (NTCIREVAL res file)"


# --------------------------------------------------------------------------- layouts
@dataclass(frozen=True)
class LineKind:
    """How the fields of one kind of line become columns."""

    name: str
    expected: str  # the "expected:" part of error messages
    n_fields: int
    at_least: bool  # further fields are allowed (and ignored)
    columns: str  # SQL select list over f (the fields), ln and $topic (the per-file topic)
    checks: str = ""  # SQL CASE arms (after control chars and field count) giving err
    topic_from_file: bool = False  # one file per topic: the topic is the file name up to its first dot
    file_order: bool = False  # the evaluation rank is the file order (no scores)

    def field_count_ok(self) -> str:
        return f"len(f) >= {self.n_fields}" if self.at_least else f"len(f) = {self.n_fields}"

    @property
    def rank_sql(self) -> str:
        return FILE_RANK_SQL if self.file_order else TREC_RANK_SQL


LINE_KINDS = {
    lay.name: lay
    for lay in (
        LineKind(
            "trec_run",
            RUN_EXPECTED,
            6,
            True,
            f"f[1] AS topic, f[3] AS doc, {INT_SQL.format(f='f[4]', t='BIGINT')} AS submitted_rank, "
            f"{NUM_SQL.format(f='f[5]')} AS score, f[6] AS tag",
            f"WHEN score IS NULL OR NOT isfinite(score) THEN {E_SCORE} WHEN submitted_rank IS NULL THEN {E_RANK}",
        ),
        LineKind(
            "res",
            RES_EXPECTED,
            1,
            False,
            "$topic AS topic, f[1] AS doc, ln AS submitted_rank, NULL::DOUBLE AS score, NULL::VARCHAR AS tag",
            topic_from_file=True,
            file_order=True,
        ),
        LineKind(
            "trec_qrels",
            QRELS_EXPECTED,
            4,
            False,
            f"f[1] AS topic, f[3] AS doc, {INT_SQL.format(f='f[4]', t='INTEGER')} AS grade",
            f"WHEN grade IS NULL THEN {E_GRADE}",
        ),
        LineKind(
            "ntcir_qrels",
            NTCIR_QRELS_EXPECTED,
            3,
            False,
            f"f[1] AS topic, f[2] AS doc, {LEVEL_SQL.format(f='f[3]')} AS grade",
            f"WHEN grade IS NULL THEN {E_LEVEL}",
        ),
        LineKind(
            "ntcir_rel",
            NTCIR_REL_EXPECTED,
            2,
            False,
            f"$topic AS topic, f[1] AS doc, {LEVEL_SQL.format(f='f[2]')} AS grade",
            f"WHEN grade IS NULL THEN {E_LEVEL}",
            topic_from_file=True,
        ),
        LineKind(
            "subtopic_qrels",
            SUBTOPIC_EXPECTED,
            4,
            False,
            f"f[1] AS topic, f[2] AS subtopic, f[3] AS doc, {INT_SQL.format(f='f[4]', t='INTEGER')} AS grade",
            f"WHEN grade IS NULL THEN {E_GRADE}",
        ),
        LineKind(
            "ntcir_intents",
            INTENT_EXPECTED,
            4,
            False,
            f"f[1] AS topic, f[2] AS subtopic, f[3] AS doc, {LEVEL_SQL.format(f='f[4]')} AS grade",
            f"WHEN grade IS NULL THEN {E_LEVEL}",
        ),
        LineKind(
            "ntcir_intent_rel",
            INTENT_REL_EXPECTED,
            3,
            False,
            f"$topic AS topic, f[1] AS subtopic, f[2] AS doc, {LEVEL_SQL.format(f='f[3]')} AS grade",
            f"WHEN grade IS NULL THEN {E_LEVEL}",
            topic_from_file=True,
        ),
    )
}


# --------------------------------------------------------------------------- naming rules
def strip_suffixes(name: str, suffixes: Sequence[str]) -> str:
    changed = True
    while changed:
        changed = False
        for suf in suffixes:
            if name.endswith(suf) and len(name) > len(suf):
                name = name[: -len(suf)]
                changed = True
    return name


def run_stem(path: Path) -> str:
    """The run name taken from a file name (``--name-from file``)."""
    return strip_suffixes(path.name, (".gz", ".txt", ".run", ".res", ".trec", ".tsv"))


def qrels_stem(path: Path) -> str:
    """The name of a qrels set ingested without ``--name``."""
    return strip_suffixes(path.name, (".gz", ".txt", ".qrels", ".rel", ".tsv"))


def topic_from_name(path: Path) -> str:
    """The topic of a per-topic file: its name up to the first dot (``0001.res`` -> ``0001``)."""
    return Path(path).name.split(".")[0]


def level_hint(level_text: str) -> str:
    """Advice for a bad NTCIR level, e.g. '2' instead of 'L2'."""
    if level_text.lstrip("+-").isdigit():
        return f" (NTCIR levels need the L prefix: L{level_text.lstrip('+')})"
    return ""


# --------------------------------------------------------------------------- the registry
@dataclass(frozen=True)
class InputFormat:
    """One ``--format``: which layout its run and qrels files have, sniffed from the number of
    fields of the first data line (None for a file with no data line)."""

    name: str
    description: str
    run_line_kind: Callable[[int | None], str]
    qrels_line_kind: Callable[[int | None], str]
    subtopics: bool = False  # qrels with a subtopic (intent) column: diversity judgments
    runs: bool = True  # offered for runs (`ingest run --format`); diversity formats concern qrels only


INPUT_FORMATS: dict[str, InputFormat] = {
    f.name: f
    for f in (
        InputFormat(
            "trec",
            "TREC runs (topic Q0 docno rank score tag) and qrels (topic iteration docno grade)",
            lambda n: "trec_run",
            lambda n: "trec_qrels",
        ),
        InputFormat(
            "ntcir",
            "NTCIR qrels (topic docno L<n>) or per-topic rel files (docno L<n>); runs in TREC layout "
            "or NTCIREVAL per-topic res files (one docno per line)",
            lambda n: "res" if n == 1 else "trec_run",
            lambda n: "ntcir_rel" if n == 2 else "ntcir_qrels",
        ),
        InputFormat(
            "subtopic",
            "ndeval's subtopic qrels (topic subtopic docno grade) for diversity metrics; runs in TREC layout",
            lambda n: "trec_run",
            lambda n: "subtopic_qrels",
            subtopics=True,
            runs=False,
        ),
        InputFormat(
            "ntcir-intents",
            "NTCIR per-intent qrels (topic intent docno L<n>, or per-topic files intent docno L<n>) for "
            "diversity metrics; runs as for ntcir",
            lambda n: "res" if n == 1 else "trec_run",
            lambda n: "ntcir_intent_rel" if n == 3 else "ntcir_intents",
            subtopics=True,
            runs=False,
        ),
    )
}
