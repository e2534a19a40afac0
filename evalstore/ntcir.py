"""NTCIR formats, as NTCIREVAL documents them (see metric_definitions.md, Sec. 1).

* qrels: ``<topicID> <docID> L<n>`` per line;
* per-topic rel file: ``<docID> L<n>`` (the topic is the file name up to its first dot, as in
  NTCIREVAL's ``0001.rel``);
* res file: one docID per line, in rank order, possibly empty (topic from the file name as above).
  NTCIREVAL reads a res file in file order and never sorts by score.

Levels are ``L0``, ``L1``, ...; a level without the ``L`` prefix is an error (NTCIREVAL refuses it
too). Runs in TREC layout are read like TREC runs. The parsing itself is done by
:mod:`evalstore.ingest`; this module holds what is specific to NTCIR.
"""

from __future__ import annotations

from pathlib import Path

NTCIR_QRELS_EXPECTED = "3 whitespace-separated fields: topic docno L<level> (e.g. 'T001 doc7 L2')"
NTCIR_REL_EXPECTED = "2 whitespace-separated fields: docno L<level> (e.g. 'doc7 L2')"
RES_EXPECTED = "one docno per line, in rank order (NTCIREVAL res file)"

# SQL: the integer level of an 'L<n>' field, NULL when the field is not of that form.
LEVEL_SQL = "CASE WHEN regexp_full_match({f}, 'L[0-9]+') THEN TRY_CAST({f}[2:] AS INTEGER) END"


def topic_from_name(path: Path) -> str:
    """The topic of a per-topic file: its name up to the first dot (``0001.res`` -> ``0001``)."""
    return Path(path).name.split(".")[0]


def qrels_layout(n_fields_first_line: int | None) -> str:
    """'ntcir_rel' for per-topic rel files (2 fields), else 'ntcir_qrels' (3 fields expected)."""
    return "ntcir_rel" if n_fields_first_line == 2 else "ntcir_qrels"


def is_res_layout(n_fields_first_line: int | None) -> bool:
    """A run file whose lines hold a single field is an NTCIREVAL res file."""
    return n_fields_first_line == 1


def level_hint(level_text: str) -> str:
    """Advice for a bad level, e.g. '2' instead of 'L2'."""
    if level_text.lstrip("+-").isdigit():
        return f" (NTCIR levels need the L prefix: L{level_text.lstrip('+')})"
    return ""
