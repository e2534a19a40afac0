"""Dropping runs and qrels sets from a store, with everything that depends on them.

:func:`plan_drop` says what would go (the rows, the stored scores, the subsamples drawn from a
qrels set, the analyses that read them); :func:`drop` removes it in one transaction. Which tables
hold a run's or a qrels set's rows is read from the schema (every table with a ``run_id`` or
``qrels_id`` column), so a table added by a later migration is covered without a change here.
Analyses (``meta_runs`` and the tables keyed by ``analysis_id``) record runs and qrels sets by
name: an analysis depends on a run whose name is in its ``runs``, and on a qrels set named by a
``qrels`` or ``parent`` entry of its inputs or parameters.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..base.arguments import names as arg_names
from ..errors import NotFoundError, StoreError
from .handle import _known

if TYPE_CHECKING:
    from .handle import StoreHandle

KINDS = ("run", "qrels", "topics", "docs", "nuggets", "pool")
_MAIN_TABLE = {
    "run": "run_meta", "qrels": "qrels_meta", "topics": "topic_set_meta", "docs": "doc_set_meta",
    "nuggets": "nugget_set_meta", "pool": "pool_meta",
}  # fmt: skip
_ID = {
    "run": "run_id", "qrels": "qrels_id", "topics": "topics_id", "docs": "docs_id", "nuggets": "nuggets_id",
    "pool": "pool_id",
}  # fmt: skip
_DATA = {
    "run": "run_row_data", "qrels": "qrels_data", "topics": "topic_data", "docs": "doc_data", "nuggets": "nugget_data",
    "pool": "pool_data",
}  # fmt: skip
#: how each kind is called in messages
WHAT = {
    "run": "run",
    "qrels": "qrels set",
    "topics": "topic set",
    "docs": "doc set",
    "nuggets": "nugget set",
    "pool": "pool",
}
#: the sets named in a table of their own, without scores or analyses depending on them
TEXT_KINDS = ("topics", "docs", "nuggets", "pool")


@dataclass
class DropPlan:
    """What dropping ``names`` removes: ``ids`` (with the subsamples' for qrels), the number of
    run rows or judgments, of stored per-topic scores, the subsamples and the analyses."""

    kind: str
    names: list[str]
    ids: list[int]
    rows: int = 0
    scores: int = 0
    subsamples: list[str] = field(default_factory=list)
    analyses: list[int] = field(default_factory=list)

    def summary(self) -> str:
        what = WHAT[self.kind]
        rows = {"run": "run rows", "qrels": "judgments", "topics": "topics", "docs": "documents", "nuggets": "nuggets",
                "pool": "pooled documents"}[self.kind]  # fmt: skip
        parts = [
            f"{len(self.names)} {what}{'s' if len(self.names) != 1 else ''} ({_short(self.names)})",
            f"{self.rows} {rows}",
        ]
        if self.kind in ("run", "qrels"):
            parts.append(f"{self.scores} stored per-topic scores")
        if self.subsamples:
            parts.append(f"{len(self.subsamples)} subsample(s) drawn from it ({_short(self.subsamples)})")
        if self.analyses:
            parts.append(f"{len(self.analyses)} meta analysis(es) that read it (ids {_short(self.analyses)})")
        return ", ".join(parts)


def plan_drop(store: StoreHandle, kind: str, names: Sequence[str]) -> DropPlan:
    """What :func:`drop` would remove; unknown names are an error (with the closest names)."""
    if kind not in KINDS:
        raise StoreError(f"can drop a run, a qrels set, a topic set, a doc set, a nugget set or a pool, not {kind!r}")
    names = arg_names(names, WHAT[kind])
    if not names:
        raise StoreError(f"name the {kind} to drop")
    if kind in TEXT_KINDS:
        ids = [text_set_id(store, kind, n) for n in names]
        if kind == "nuggets":
            _no_assignment_sets(store, ids)
        [(n_rows,)] = store.con.execute(
            f"SELECT count(*) FROM {_DATA[kind]} WHERE {_ID[kind]} IN ({_ints(ids)})"
        ).fetchall()
        return DropPlan(kind, names, ids, n_rows)
    lookup = store.run_id if kind == "run" else store.qrels_id
    ids = [lookup(n) for n in names]
    con = store.con
    subsamples: list[str] = []
    if kind == "qrels":  # subsamples drawn from these sets, and from those, ...
        rows = con.execute(
            f"""WITH RECURSIVE d(qrels_id) AS (
                    SELECT unnest([{_ints(ids)}])
                    UNION SELECT s.qrels_id FROM subsample_meta s JOIN d ON s.parent_id = d.qrels_id)
                SELECT q.qrels_id, q.name FROM d JOIN qrels_meta q USING (qrels_id) ORDER BY q.name"""
        ).fetchall()
        subsamples = [n for i, n in rows if i not in ids]
        ids = ids + [i for i, _ in rows if i not in ids]
    data = _DATA[kind]
    col = _ID[kind]
    [(n_rows,)] = con.execute(f"SELECT count(*) FROM {data} WHERE {col} IN ({_ints(ids)})").fetchall()
    [(n_scores,)] = con.execute(f"SELECT count(*) FROM score_data WHERE {col} IN ({_ints(ids)})").fetchall()
    return DropPlan(kind, names, ids, n_rows, n_scores, subsamples, analyses_reading(store, kind, names + subsamples))


def drop(store: StoreHandle, plan: DropPlan) -> DropPlan:
    """Remove what ``plan`` names, in one transaction (all or nothing)."""
    with store.transaction():
        clear_dependents(store, plan)
        store.con.execute(f"DELETE FROM {_MAIN_TABLE[plan.kind]} WHERE {_ID[plan.kind]} IN ({_ints(plan.ids)})")
    return plan


def clear_dependents(store: StoreHandle, plan: DropPlan) -> None:
    """Remove everything that depends on what ``plan`` names but its ``run_meta`` / ``qrels_meta``
    rows (their ids stay, e.g. for a subsample recreated under its name): every table with a
    ``run_id`` / ``qrels_id`` column, the derivations, and the analyses that read them."""
    con = store.con
    col = _ID[plan.kind]
    tables = [t for t in _tables_with(store, col) if t != _MAIN_TABLE[plan.kind]]
    with store.transaction():
        for t in tables:
            con.execute(f"DELETE FROM {t} WHERE {col} IN ({_ints(plan.ids)})")
        if plan.kind == "qrels":
            con.execute(f"DELETE FROM subsample_meta WHERE parent_id IN ({_ints(plan.ids)})")
        drop_analyses(store, plan.analyses)


def text_set_id(store: StoreHandle, kind: str, name: str) -> int:
    """The id of the topic set (``kind='topics'``), doc set or pool ``name``; NotFoundError with the
    closest names."""
    table, col = _MAIN_TABLE[kind], _ID[kind]
    rows = store.con.execute(f"SELECT {col} FROM {table} WHERE name = ?", [name]).fetchall()
    if rows:
        return int(rows[0][0])
    known = [r[0] for r in store.con.execute(f"SELECT name FROM {table} ORDER BY name").fetchall()]
    if kind == "pool" and not known:
        raise NotFoundError(f"no pool named {name!r} in the store; build one with `evalstore pool --name NAME`")
    hint = _known(name, known, f"{WHAT[kind]}s", kind)
    raise NotFoundError(f"no {WHAT[kind]} named {name!r} in the store{hint}")


def _no_assignment_sets(store: StoreHandle, nuggets_ids: Sequence[int]) -> None:
    """A nugget set that assignment sets match their nuggets in is not dropped behind their back."""
    users = [
        r[0]
        for r in store.con.execute(
            f"SELECT name FROM qrels_meta WHERE nuggets_id IN ({_ints(nuggets_ids)}) ORDER BY name"
        ).fetchall()
    ]
    if users:
        raise StoreError(
            f"the assignment set(s) {_short(users)} assign the nuggets of this nugget set: drop them first "
            f"(evalstore drop qrels {' '.join(users[:3])}{' ...' if len(users) > 3 else ''})"
        )


def drop_analyses(store: StoreHandle, ids: Sequence[int]) -> None:
    """Remove the analyses ``ids`` (``meta_runs`` and their result rows), in the caller's transaction."""
    if not ids:
        return
    with store.transaction():
        for t in _tables_with(store, "analysis_id"):
            if t != "meta_runs":
                store.con.execute(f"DELETE FROM {t} WHERE analysis_id IN ({_ints(ids)})")
        store.con.execute(f"DELETE FROM meta_runs WHERE analysis_id IN ({_ints(ids)})")


def drop_runs(store: StoreHandle, names: Sequence[str]) -> DropPlan:
    """Drop runs with their scores and the analyses that read them; returns what was removed."""
    return drop(store, plan_drop(store, "run", names))


def drop_pools(store: StoreHandle, names: Sequence[str]) -> DropPlan:
    """Drop pools (their documents and contributions); returns what was removed."""
    return drop(store, plan_drop(store, "pool", names))


def drop_texts(store: StoreHandle, kind: str, names: Sequence[str]) -> DropPlan:
    """Drop topic sets (``kind='topics'``), doc sets or nugget sets with their texts; returns what
    was removed (a nugget set that assignment sets use is not dropped)."""
    return drop(store, plan_drop(store, kind, names))


def drop_qrels(store: StoreHandle, names: Sequence[str]) -> DropPlan:
    """Drop qrels sets with their judgments, scores, subsamples and the analyses that read them."""
    return drop(store, plan_drop(store, "qrels", names))


# ---------------------------------------------------------------------------------------------
def _tables_with(store: StoreHandle, column: str) -> list[str]:
    """The store's tables (not views) that have ``column``."""
    rows = store.con.execute(
        """SELECT c.table_name FROM information_schema.columns c
           JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
           WHERE c.column_name = ? AND t.table_type = 'BASE TABLE' AND c.table_schema = 'main'
           ORDER BY c.table_name""",
        [column],
    ).fetchall()
    return [r[0] for r in rows]


def analyses_reading(store: StoreHandle, kind: str, names: Sequence[str]) -> list[int]:
    """The ids of the stored analyses that read one of the runs (``kind='run'``) or qrels sets
    ``names``: their results depend on that content, so they go when it is dropped or replaced."""
    wanted = set(names)
    keys = ("runs", "run", "baseline") if kind == "run" else ("qrels", "parent")
    out = []
    for analysis_id, inputs, params in store.con.execute(
        "SELECT analysis_id, inputs, params FROM meta_runs ORDER BY analysis_id"
    ).fetchall():
        found = set(_values(json.loads(inputs), keys)) | set(_values(json.loads(params), keys))
        if found & wanted:
            out.append(analysis_id)
    return out


def _values(doc: Any, keys: tuple[str, ...]) -> Iterator[str]:
    """Every string under one of ``keys`` anywhere in a JSON document (lists of names included)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in keys and isinstance(v, str):
                yield v
            elif k in keys and isinstance(v, list):
                yield from (x for x in v if isinstance(x, str))
            else:
                yield from _values(v, keys)
    elif isinstance(doc, list):
        for x in doc:
            yield from _values(x, keys)


def _ints(ids: Sequence[int]) -> str:
    return ", ".join(str(int(i)) for i in ids)


def _short(items: Sequence[Any]) -> str:
    return ", ".join(map(str, items[:10])) + (" ..." if len(items) > 10 else "")
