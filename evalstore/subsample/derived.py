"""Storing derived qrels sets: the one writer of subsamples, whatever the method that chose their
judgments (Buckley–Voorhees in :mod:`.create`, the leave-out sets of :mod:`evalstore.pool.leave_out`).

The caller stages the rows of every target in the temporary table ``_ss_rows(pos, topic, doc,
grade)`` (``pos``: the target's position) and describes each target by a :class:`Derivation`: its
name, its method, the ``subsample_meta`` columns that record how it was made, and the text of its
``source``. :func:`stage_stats` reads each target's size and content hash from the staged rows;
:func:`store_derived` writes the targets whose stored namesake differs, in the caller's
transaction: a same-named set with the same derivation and content is kept as it is; one made
otherwise is an error unless ``replace`` (then everything that depends on it goes first, as
``drop qrels`` does); a same-named qrels set that is not a subsample is always an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..db.drop import clear_dependents, plan_drop
from ..errors import SubsampleError
from ..ingest.write import QrelsMeta, write_qrels_meta

if TYPE_CHECKING:
    import duckdb

    from ..db.handle import StoreHandle

#: the temporary tables of a derivation, dropped by :func:`drop_staging`
STAGING = ("_ss_rows", "_ss_ids")
#: the subsample_meta columns holding JSON (compared as documents, not as text)
JSON_COLUMNS = ("pool_runs",)


@dataclass(frozen=True)
class Derivation:
    """One derived qrels set: ``name``, ``method`` and the other ``subsample_meta`` columns that say
    how it was made (``columns``), the ``source`` text of its ``qrels_meta`` row and ``describe``,
    the derivation in words for the message that asks for ``replace``."""

    name: str
    method: str
    source: str
    columns: Mapping[str, Any] = field(default_factory=dict)
    describe: str = ""


def parent_of(store: StoreHandle, qrels: str, why: str = "the fractions of one trial are nested") -> int:
    """The id of the qrels set to derive from, which must not itself be a subsample (``why``: what
    deriving from its parent keeps, for the message)."""
    parent_id = store.qrels_id(qrels)
    grandparent = store.con.execute(
        "SELECT p.name FROM subsample_meta s JOIN qrels_meta p ON p.qrels_id = s.parent_id WHERE s.qrels_id = ?",
        [parent_id],
    ).fetchone()
    if grandparent:
        raise SubsampleError(
            f"{qrels!r} is itself a subsample of {grandparent[0]!r}; subsample {grandparent[0]!r} instead ({why})"
        )
    return parent_id


def stage_stats(con: duckdb.DuckDBPyConnection, n_targets: int) -> dict[int, tuple]:
    """Per target position of ``_ss_rows``: rows, topics, highest grade, content hash (the sha256
    of its ``topic doc grade`` lines in topic and docno order)."""
    return {
        row[0]: row[1:]
        for row in con.execute(
            """
        SELECT g.pos, count(r.doc), count(DISTINCT r.topic), max(r.grade),
               sha256(coalesce(string_agg(r.topic || ' ' || r.doc || ' ' || r.grade::VARCHAR, chr(10)
                                          ORDER BY r.topic, r.doc), ''))
        FROM (SELECT unnest(range(?)) AS pos) g LEFT JOIN _ss_rows r USING (pos) GROUP BY g.pos""",
            [n_targets],
        ).fetchall()
    }


def store_derived(
    store: StoreHandle, parent_id: int, targets: Sequence[Derivation], stats: Mapping[int, tuple], replace: bool
) -> list[str]:
    """Write the staged targets (see the module docstring); returns the names written (added or
    replaced), in order."""
    con = store.con
    parent_gains = con.execute("SELECT default_gains FROM qrels_meta WHERE qrels_id = ?", [parent_id]).fetchall()[0][0]
    ids: dict[int, int] = {}
    for pos, target in enumerate(targets):
        n_rows, n_topics, max_grade, sha = stats[pos]
        keep, old_id = _existing(store, parent_id, target, sha, replace)
        if keep:
            continue  # same derivation, same content
        meta = QrelsMeta(target.name, target.source, "subsample", sha, None, n_topics, n_rows, max_grade, parent_gains)
        qid = write_qrels_meta(con, meta, old_id)
        cols = list(target.columns)
        values = [_stored(c, target.columns[c]) for c in cols]
        con.execute(
            f"INSERT INTO subsample_meta (qrels_id, parent_id, method, {', '.join(cols)}) "
            f"VALUES (?, ?, ?{', ?' * len(cols)})",
            [qid, parent_id, target.method, *values],
        )
        ids[pos] = qid
    if ids:
        _copy_rows(con, parent_id, ids)
    return [targets[pos].name for pos in ids]


def drop_staging(con: duckdb.DuckDBPyConnection, extra: Sequence[str] = ()) -> None:
    for table in (*STAGING, *extra):
        con.execute(f"DROP TABLE IF EXISTS {table}")


def _stored(column: str, value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if column in JSON_COLUMNS and value is not None else value


def _same(column: str, stored: Any, wanted: Any) -> bool:
    if column in JSON_COLUMNS and stored is not None:
        return json.loads(stored) == wanted
    return stored == wanted


def _existing(
    store: StoreHandle, parent_id: int, target: Derivation, sha: str, replace: bool
) -> tuple[bool, int | None]:
    """Whether to keep the stored subsample ``target.name`` as it is (same derivation, same
    content), and else the id of the stored one to replace (everything that depends on it deleted,
    as by ``drop qrels``: judgments, scores, intervals, the analyses that read it; None: there is
    none); an error when it may not be replaced."""
    con = store.con
    cols = list(target.columns)
    existing = con.execute(
        f"SELECT q.qrels_id, q.sha256, s.parent_id, s.method{''.join(', s.' + c for c in cols)} "
        "FROM qrels_meta q LEFT JOIN subsample_meta s USING (qrels_id) WHERE q.name = ?",
        [target.name],
    ).fetchone()
    if existing is None:
        return False, None
    name = target.name
    if existing[2] is None:
        raise SubsampleError(
            f"a qrels set named {name!r} already exists and is not a subsample; choose another name prefix (--prefix)"
        )
    same = (
        existing[2] == parent_id
        and existing[3] == target.method
        and all(_same(c, v, target.columns[c]) for c, v in zip(cols, existing[4:]))
    )
    if same and existing[1] == sha:
        return True, None
    if not replace:
        why = "its parent's judgments changed since" if same else f"it was made otherwise ({_made(existing, cols)})"
        raise SubsampleError(
            f"subsample {name!r} already exists and {why}; pass replace=True (--replace) to "
            f"recreate it, or prefix= (--prefix) to store these under other names"
        )
    clear_dependents(store, plan_drop(store, "qrels", [name]))
    return False, int(existing[0])


def _made(existing: Sequence[Any], cols: Sequence[str]) -> str:
    """How the stored subsample was made, in words (method and the derivation's columns)."""
    parts = [f"method={existing[3]}"]
    for c, v in zip(cols, existing[4:]):
        if v is not None and c not in JSON_COLUMNS:
            parts.append(f"{c}={v:g}" if isinstance(v, float) else f"{c}={v}")
    return ", ".join(parts)


def _copy_rows(con: duckdb.DuckDBPyConnection, parent_id: int, ids: dict[int, int]) -> None:
    """Store the staged rows of the targets in ``ids`` (position -> new qrels id), with the
    diversity judgments of the documents kept and the parent's intent probabilities."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _ss_ids AS SELECT unnest(?::INTEGER[]) AS pos, unnest(?::INTEGER[]) AS qrels_id",
        [list(ids), list(ids.values())],
    )
    con.execute("""INSERT INTO qrels_data (qrels_id, topic, doc, grade)
                   SELECT i.qrels_id, r.topic, r.doc, r.grade FROM _ss_rows r JOIN _ss_ids i USING (pos)
                   ORDER BY i.qrels_id, r.topic, r.doc""")
    con.execute(f"""INSERT INTO subtopic_qrels_data (qrels_id, topic, subtopic, doc, grade)
                   SELECT i.qrels_id, p.topic, p.subtopic, p.doc, p.grade
                   FROM _ss_ids i JOIN qrels_data c ON c.qrels_id = i.qrels_id
                   JOIN subtopic_qrels_data p ON p.qrels_id = {int(parent_id)}
                        AND p.topic = c.topic AND p.doc = c.doc
                   ORDER BY i.qrels_id, p.topic, p.subtopic, p.doc""")
    con.execute(f"""INSERT INTO subtopic_probs (qrels_id, topic, subtopic, prob)
                   SELECT i.qrels_id, p.topic, p.subtopic, p.prob
                   FROM _ss_ids i CROSS JOIN subtopic_probs p WHERE p.qrels_id = {int(parent_id)}""")
