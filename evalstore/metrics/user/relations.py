"""The relations a measure of one's own may read: their columns, and the SQL that makes each from
the ranked judged list (``sql/ranked_list.sql``) that every evaluation builds.

* ``ranked(qrels, run, topic, doc, rank, score, grade)``: every retrieved document of every
  evaluated (qrels set, run, topic), in evaluation order (``rank`` as evalstore ranks it: the
  convention's order, truncated at the depth), ``grade`` NULL when the qrels do not judge it;
* ``judgments(qrels, topic, doc, grade)``: every judgment (grade >= 0) of the evaluated topics, for
  measures that need what a run did not retrieve (an ideal ranking, R);
* the ranked list's own relations, as a built-in block reads them: ``rl_judged``, ``rl_topics``,
  ``rl_ideal``, ``rl_qrels``, ``rl_qtopics``, ``rl_retrieved`` (``sql/ranked_list.sql`` describes
  their columns; ``rl_judged``'s running columns come with ``-- needs:``).

``qrels`` and ``run`` (``qrels_id``, ``run_id`` in the ``rl_*`` relations) are keys: a measure
groups by them and returns them, and evalstore maps them back to names.
"""

from __future__ import annotations

import pyarrow as pa

from ..sqlfile import RUNNING_COLUMNS

_I, _S, _D, _B = pa.int32(), pa.string(), pa.float64(), pa.bool_()

#: relation -> (column, Arrow type) of its rows (``rl_judged`` without its optional running columns)
COLUMNS: dict[str, tuple[tuple[str, pa.DataType], ...]] = {
    "ranked": (("qrels", _I), ("run", _I), ("topic", _S), ("doc", _S), ("rank", pa.int64()), ("score", _D),
               ("grade", _I)),
    "judgments": (("qrels", _I), ("topic", _S), ("doc", _S), ("grade", _I)),
    "rl_judged": (("qrels_id", _I), ("run_id", _I), ("topic", _S), ("doc", _S), ("rank", _I), ("score", _D),
                  ("grade", _I), ("gain", _D), ("isrel", _I), ("judged", _B), ("num_ret", pa.int64()),
                  ("R", pa.int64()), ("N", pa.int64()), ("R_gain", pa.int64()), ("ideal_total", _D),
                  ("max_grade", _I)),
    "rl_topics": (("qrels_id", _I), ("run_id", _I), ("topic", _S), ("num_ret", pa.int64()), ("R", pa.int64()),
                  ("N", pa.int64()), ("R_gain", pa.int64()), ("ideal_total", _D), ("max_grade", _I),
                  ("n_pool", pa.int64()), ("in_run", _B)),
    "rl_ideal": (("qrels_id", _I), ("topic", _S), ("rank", pa.int64()), ("gain", _D), ("icg", _D)),
    "rl_qrels": (("qrels_id", _I), ("topic", _S), ("doc", _S), ("grade", _I), ("gain", _D), ("isrel", _I),
                 ("judged", _B)),
    "rl_qtopics": (("qrels_id", _I), ("topic", _S), ("R", pa.int64()), ("N", pa.int64()), ("R_gain", pa.int64()),
                   ("ideal_total", _D), ("max_grade", _I), ("n_pool", pa.int64())),
    "rl_retrieved": (("run_id", _I), ("topic", _S), ("doc", _S), ("rank", pa.int64()), ("score", _D)),
}  # fmt: skip
#: the types of rl_judged's running columns (``-- needs:``)
RUNNING_TYPES: dict[str, pa.DataType] = {
    "cnt": pa.int64(), "cg": _D, "jrank": pa.int64(), "cg_ideal": _D, "gain_ideal": _D,
}  # fmt: skip
RELATIONS = tuple(COLUMNS)
#: what a definition reads when it declares nothing: the simplest form
DEFAULT_READS = frozenset({"ranked"})

#: the ranked list's relations each relation of a measure is made from
UNDERLYING: dict[str, set[str]] = {"ranked": {"rl_topics", "rl_retrieved", "rl_qrels"}, "judgments": {"rl_qrels"}}
#: relation -> the query over the ranked list's relations that gives its rows
_QUERIES = {
    "ranked": (
        "SELECT t.qrels_id AS qrels, t.run_id AS run, r.topic, r.doc, CAST(r.rank AS BIGINT) AS rank, "
        "CAST(r.score AS DOUBLE) AS score, CASE WHEN q.judged THEN q.grade END AS grade "
        "FROM rl_topics t JOIN rl_retrieved r ON r.run_id = t.run_id AND r.topic = t.topic "
        "LEFT JOIN rl_qrels q ON q.qrels_id = t.qrels_id AND q.topic = r.topic AND q.doc = r.doc"
    ),
    "judgments": "SELECT qrels_id AS qrels, topic, doc, grade FROM rl_qrels WHERE judged",
}


def query(relation: str, needs: frozenset[str] = frozenset()) -> str:
    """The query giving ``relation``'s rows from the ranked list's relations (``needs``: the running
    columns of ``rl_judged`` to keep)."""
    if relation in _QUERIES:
        return _QUERIES[relation]
    cols = [c for c, _ in COLUMNS[relation]]
    if relation == "rl_judged":
        cols += [c for c in RUNNING_COLUMNS if c in needs]
    return f"SELECT {', '.join(cols)} FROM {relation}"


def schema(relation: str, needs: frozenset[str] = frozenset()) -> pa.Schema:
    cols = list(COLUMNS[relation])
    if relation == "rl_judged":
        cols += [(c, RUNNING_TYPES[c]) for c in RUNNING_COLUMNS if c in needs]
    return pa.schema(cols)


def empty(relation: str, needs: frozenset[str] = frozenset()) -> pa.Table:
    """No rows, the relation's columns (to check a definition before any data)."""
    return schema(relation, needs).empty_table()


def conformed(relation: str, table: pa.Table, needs: frozenset[str] = frozenset()) -> pa.Table:
    """``table`` with the relation's column types (the same types whichever engine made it)."""
    return table.select([c for c in schema(relation, needs).names]).cast(schema(relation, needs))
