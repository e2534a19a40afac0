"""Leave-out qrels: the judgments a test collection would have had without one group's runs
(Zobel, SIGIR 1998; Buckley, Dimmick, Soboroff & Voorhees, IRJ 2007), stored as subsamples.

For a qrels set, a set of runs with their groups (:mod:`.groups`) and a depth K: the depth-K pool
of the runs is the union of their top K documents per topic (evaluation ranks: score descending,
docno descending). A group's unique documents are the pooled documents no run of another group has
in its top K. Its leave-out set is the qrels set without the judged ones (grade >= 0) among them:
what the assessors would not have seen had the group not taken part. Rows with a negative grade
(pooled but unjudged) and documents judged beyond the pool stay.

Each set is a subsample of the qrels set (``subsample_meta``, method ``leave_one_group_out`` or
``leave_one_run_out``, the group in ``left_out``, K in ``pool_depth``, the runs with their groups
and content hashes in ``pool_runs``), named ``<prefix>@logo<K>:<group>`` or
``<prefix>@loro<K>:<run>`` (``prefix``: the qrels set's name), so that ``evalstore eval
--subsamples``, ``meta`` and every metric work on it. One statement finds every group's unique
documents, one stages every set's rows; the sets are written in one transaction. Re-creating a set
with the same runs, groups and depth is a no-op; the same name made otherwise needs ``replace``
(or another ``prefix``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import PoolError
from ..subsample.derived import Derivation, drop_staging, parent_of, stage_stats, store_derived
from ..subsample.params import METHOD_TAGS
from .build import bound, check_depth, recipe, render_block

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: the subsample method of each way of leaving out (subsample.params.METHOD_TAGS: the tag of its names)
METHODS = {"groups": "leave_one_group_out", "runs": "leave_one_run_out"}


@dataclass
class LeftOut:
    """One group left out: its leave-out subsample, its runs, the pooled documents only it brought
    (``n_unique``), the judged ones among them removed from the qrels (``n_removed``) and how many
    of those are relevant (grade >= 1)."""

    group: str
    qrels: str
    runs: list[str] = field(default_factory=list)
    n_unique: int = 0
    n_removed: int = 0
    n_removed_relevant: int = 0

    def row(self) -> dict:
        """The ``meta_reusability_groups`` row."""
        return {
            "left_out": self.group,
            "qrels": self.qrels,
            "n_runs": len(self.runs),
            "n_unique": self.n_unique,
            "n_removed": self.n_removed,
            "n_removed_relevant": self.n_removed_relevant,
        }


def leave_out_name(prefix: str, method: str, depth: int, group: str) -> str:
    """``<prefix>@logo<K>:<group>`` (or ``@loro``)."""
    return f"{prefix}@{METHOD_TAGS[method]}{depth}:{group}"


def leave_out_subsamples(
    store: StoreHandle,
    qrels: str,
    groups: Mapping[str, str],
    depth: int = 10,
    *,
    leave_one_out: str = "groups",
    prefix: str | None = None,
    replace: bool = False,
) -> list[LeftOut]:
    """Store the leave-out set of every group of ``groups`` (``{run: group}``) and return them,
    groups in order of first appearance (see the module docstring)."""
    if leave_one_out not in METHODS:
        raise PoolError(f"leave one of the {' or '.join(METHODS)} out at a time, not {leave_one_out!r}")
    depth = recipe("depth", depth).depth
    method = METHODS[leave_one_out]
    parent_id = parent_of(store, qrels, "a leave-out set is drawn from a full qrels set")
    order = list(dict.fromkeys(groups.values()))
    if len(order) < 2:
        raise PoolError(f"leaving a group out needs at least 2 groups of runs, got {len(order)} ({', '.join(order)})")
    run_ids = {r: store.run_id(r) for r in groups}
    check_depth(store, list(run_ids.values()), depth)
    prefix = qrels if prefix is None else prefix
    if not prefix:
        raise PoolError("the name prefix must not be empty")
    con = store.con
    shas = dict(
        con.execute("SELECT name, sha256 FROM run_meta WHERE name IN (SELECT unnest(?::VARCHAR[]))", [list(groups)])
        .fetchall()
    )  # fmt: skip
    pool_runs = [{"run": r, "group": g, "sha256": shas[r]} for r, g in sorted(groups.items())]
    parent_sha = con.execute("SELECT sha256 FROM qrels_meta WHERE qrels_id = ?", [parent_id]).fetchall()[0][0]
    out = [LeftOut(g, leave_out_name(prefix, method, depth, g), [r for r in groups if groups[r] == g]) for g in order]
    targets = [
        Derivation(
            lo.qrels,
            method,
            f"{method.replace('_', '-')} subsample of {qrels} (sha256 {parent_sha[:12]}): without the judged "
            f"documents only {lo.group} brought into the depth-{depth} pool of {len(groups)} runs",
            {"left_out": lo.group, "pool_depth": depth, "pool_runs": pool_runs},
        )
        for lo in out
    ]
    position = {g: i for i, g in enumerate(order)}
    try:
        with store.transaction():
            _stage(store, parent_id, [(run_ids[r], position[g]) for r, g in groups.items()], depth, len(order))
            store_derived(store, parent_id, targets, stage_stats(con, len(order)), replace)
            for pos, n_unique, n_removed, n_relevant in _counts(store, parent_id):
                out[pos].n_unique, out[pos].n_removed, out[pos].n_removed_relevant = n_unique, n_removed, n_relevant
    finally:
        drop_staging(con, ("_lo_groups", "_lo_unique"))
    return out


def _stage(store: StoreHandle, parent_id: int, members: list[tuple[int, int]], depth: int, n_groups: int) -> None:
    """``_lo_unique`` (each group's unique pooled documents) and ``_ss_rows`` (every leave-out
    set's judgments, by the group's position)."""
    con = store.con
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _lo_groups AS SELECT unnest(?::INTEGER[]) AS run_id, unnest(?::INTEGER[]) AS pos",
        [[m[0] for m in members], [m[1] for m in members]],
    )
    values = {"depth": depth, "parent": parent_id, "n_groups": n_groups}
    for table, block in (("_lo_unique", "unique"), ("_ss_rows", "leave_out")):
        sql = render_block(block, {"groups": "_lo_groups", "unique": "_lo_unique"})
        con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {sql}", bound(sql, values))


def _counts(store: StoreHandle, parent_id: int) -> list[tuple[int, int, int, int]]:
    """Per group position: its unique documents, the judged ones among them, the relevant ones."""
    return store.con.execute(
        """SELECT u.pos, count(*), count(q.doc) FILTER (WHERE q.grade >= 0), count(q.doc) FILTER (WHERE q.grade >= 1)
           FROM _lo_unique u
           LEFT JOIN qrels_data q ON q.qrels_id = ? AND q.topic = u.topic AND q.doc = u.doc
           GROUP BY u.pos ORDER BY u.pos""",
        [parent_id],
    ).fetchall()
