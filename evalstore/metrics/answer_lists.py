"""The judged lists of generated answers (``sql/answer_lists.sql``): what nugget and support
metrics read, built as the ranked judged list is for ranked-list metrics.

A metric block declares what it reads (``-- reads:``); reading ``rl_nuggets`` makes it a metric of
nugget assignment sets, reading ``rl_citations`` one of support label sets (:data:`KIND_OF`). The
engine builds, per evaluation context, the relations of its kind for all runs and sets at once
(:func:`build`): ``rl_topics`` (the evaluated set, run and topic triples, as for ranked lists: so
the engine's one rule that every evaluated topic gets a value holds for answers too) and
``rl_nuggets`` or ``rl_citations``. :func:`evalstore.metrics.ranked_list.drop` removes them.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

import duckdb

from ..base.resources import read_sql
from .ranked_list import statements

#: the kind of judged set (``qrels_meta.kind``) a block reading each relation evaluates against
KIND_OF = {"rl_nuggets": "nuggets", "rl_citations": "support"}
#: the relations a block may read for each kind (besides rl_topics)
RELATIONS = tuple(KIND_OF)
#: the temporary tables of an answer evaluation (dropped with the ranked list's)
WORK_TABLES = ("rl_judged_answers", "rl_nuggets", "rl_citations")

_KIND_RE = re.compile(r"^--\s*@kind\s+(\S+)\s*$", re.M)


def kind_of(reads: frozenset[str] | set[str]) -> str:
    """The kind of judged set a block that reads ``reads`` evaluates against: 'judgments' (ranked
    lists and relevance judgments), 'nuggets' or 'support'."""
    kinds = {KIND_OF[r] for r in reads if r in KIND_OF}
    if len(kinds) > 1:
        raise ValueError(f"internal: a block reads relations of several kinds ({', '.join(sorted(kinds))})")
    return kinds.pop() if kinds else "judgments"


def scripts() -> dict[str, str]:
    """``{kind: script}``: the statements of ``sql/answer_lists.sql`` for each kind."""
    text = read_sql("answer_lists.sql")
    marks = list(_KIND_RE.finditer(text))
    return {m.group(1): text[m.end() : nxt.start() if nxt else len(text)] for m, nxt in zip(marks, [*marks[1:], None])}


def render(kind: str, qrels_ids: Sequence[int], run_ids: Sequence[int], complete: bool) -> list[str]:
    """The statements that build the judged lists of ``kind`` for the sets and runs."""
    values = {
        "qrels_ids": ", ".join(str(int(q)) for q in qrels_ids) or "NULL",
        "run_ids": ", ".join(str(int(r)) for r in run_ids) or "NULL",
        "complete": "TRUE" if complete else "FALSE",
    }
    return statements(string.Template(scripts()[kind]).substitute(values))


def build(
    con: duckdb.DuckDBPyConnection, kind: str, qrels_ids: Sequence[int], run_ids: Sequence[int], complete: bool
) -> None:
    """(Re)build ``rl_topics`` and the judged list of ``kind`` for the sets and runs."""
    for stmt in render(kind, qrels_ids, run_ids, complete):
        con.execute(stmt)
