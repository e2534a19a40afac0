"""Building a pool from stored runs: ``evalstore pool`` and ``Store.pool``.

A :class:`Recipe` says how (the strategy, the depth K, p and the aggregate of RBP, k of RRF, the
ranks read, the qrels set whose judged documents are left out); :func:`build_pool` checks every
argument before any work, renders ``sql/pool.sql`` with the recipe's expressions and runs it over
the stored rows of every run and topic at once, and stores the pool (``pool_meta``, ``pool_data``,
``pool_contributions``; migration 0017) in one transaction: on any error nothing is stored.

Strategies, as trectools 0.0.50's ``TrecPoolMaker.make_pool`` defines them (docs/pools.md):

* ``depth`` (trectools' ``topX``): the union of every run's top K documents per topic;
* ``rbp``: per topic, the K documents with the highest sum (``rbp_agg='max'``: max) over the runs
  of (1-p) p^(rank-1), every retrieved rank counting;
* ``rrf``: per topic, the K documents with the highest sum over the runs of 1 / (k + rank).

The rank is the evaluation rank (score descending, ties by docno descending, as trec_eval; the
rank of every metric), or with ``ranks='submitted'`` the rank column as written (what trectools
reads for rbp and rrf). Documents of equal weight at the K-th place are ordered by docno
descending, trec_eval's order of tied scores. Weights are summed in one fixed order (smallest
first), so equal rows give equal sums whatever the threads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..base.arguments import names
from ..base.resources import sql_blocks
from ..errors import PoolError
from ..ingest.checks import check_name

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

STRATEGIES = ("depth", "rbp", "rrf")
RBP_AGGREGATES = ("sum", "max")
#: the ranks a pool reads: evalstore's evaluation rank, or the rank column as written
RANK_SOURCES = ("evaluation", "submitted")
DEFAULT_DEPTH = 10
DEFAULT_P = 0.8
DEFAULT_RBP_AGG = "sum"
DEFAULT_K = 60
#: "every document of a topic" as a number of documents
ALL = 1 << 62
_TEMP = ("_pool_runs", "_pool_rows", "_pool_docs")


@dataclass(frozen=True)
class Recipe:
    """How a pool is made (checked by :func:`recipe`)."""

    strategy: str = "depth"
    depth: int = DEFAULT_DEPTH
    p: float | None = None
    rbp_agg: str | None = None
    k: float | None = None
    ranks: str = "evaluation"
    exclude_judged: str | None = None

    @property
    def rank_column(self) -> str:
        return "submitted_rank" if self.ranks == "submitted" else "rank"

    def params(self) -> dict[str, Any]:
        """The recipe as stored (``pool_meta.params``, with the runs added by :func:`build_pool`)."""
        out: dict[str, Any] = {"strategy": self.strategy, "depth": self.depth, "ranks": self.ranks}
        if self.strategy == "rbp":
            out |= {"p": self.p, "rbp_agg": self.rbp_agg}
        if self.strategy == "rrf":
            out["k"] = self.k
        out["exclude_judged"] = self.exclude_judged
        return out

    def describe(self, n_runs: int) -> str:
        """The pool in words: ``depth-10 pool of 37 runs``, ``top 100 by RBP (p = 0.8, sum) of 37
        runs``, ``top 100 by RRF (k = 60) of 37 runs``, and what it leaves out."""
        runs = f"{n_runs} run{'s' if n_runs != 1 else ''}"
        if self.strategy == "depth":
            text = f"depth-{self.depth} pool of {runs}"
        elif self.strategy == "rbp":
            text = f"top {self.depth} per topic by RBP (p = {self.p:g}, {self.rbp_agg} over runs) of {runs}"
        else:
            text = f"top {self.depth} per topic by RRF (k = {self.k:g}) of {runs}"
        if self.ranks == "submitted":
            text += ", ranks as written"
        if self.exclude_judged:
            text += f", without the documents judged in {self.exclude_judged}"
        return text


def recipe(
    strategy: str = "depth",
    depth: int = DEFAULT_DEPTH,
    *,
    p: float | None = None,
    rbp_agg: str | None = None,
    k: float | None = None,
    ranks: str = "evaluation",
    exclude_judged: str | None = None,
) -> Recipe:
    """A checked :class:`Recipe`: a known strategy, a whole depth >= 1, p in (0, 1) and an aggregate
    only for rbp, k >= 0 only for rrf (defaults p = 0.8, sum, k = 60)."""
    if strategy not in STRATEGIES:
        raise PoolError(f"unknown pooling strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise PoolError(f"the pool depth is a whole number of documents, at least 1, not {depth!r}")
    if ranks not in RANK_SOURCES:
        raise PoolError(f"the ranks a pool reads are {' or '.join(RANK_SOURCES)}, not {ranks!r}")
    if strategy != "rbp" and (p is not None or rbp_agg is not None):
        raise PoolError(f"p and the RBP aggregate belong to --strategy rbp, not {strategy}")
    if strategy != "rrf" and k is not None:
        raise PoolError(f"k belongs to --strategy rrf, not {strategy}")
    if strategy == "rbp":
        p = DEFAULT_P if p is None else p
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
            raise PoolError(f"RBP's persistence p is a number strictly between 0 and 1, not {p!r}")
        rbp_agg = rbp_agg or DEFAULT_RBP_AGG
        if rbp_agg not in RBP_AGGREGATES:
            raise PoolError(f"RBP pools aggregate the runs' weights by {' or '.join(RBP_AGGREGATES)}, not {rbp_agg!r}")
        p = float(p)
    if strategy == "rrf":
        k = DEFAULT_K if k is None else k
        if isinstance(k, bool) or not isinstance(k, (int, float)) or not 0 <= k < float("inf"):
            raise PoolError(f"RRF's k is a number >= 0, not {k!r}")
        k = float(k)
    return Recipe(strategy, depth, p, rbp_agg, k, ranks, exclude_judged)


@dataclass
class PoolResult:
    """What :func:`build_pool` stored: the pool's name, recipe and runs, its size, and whether it
    replaced a pool of the same name."""

    name: str
    recipe: Recipe
    runs: list[str]
    n_topics: int
    n_docs: int
    replaced: bool = False
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        verb = "replaced" if self.replaced else "added"
        per = self.n_docs / self.n_topics if self.n_topics else 0.0
        return (
            f"pool {self.name!r} {verb}: {self.recipe.describe(len(self.runs))}; {self.n_docs} documents over "
            f"{self.n_topics} topics ({per:.1f} per topic)"
        )


def build_pool(
    store: StoreHandle,
    name: str,
    runs: str | Sequence[str] | None = None,
    *,
    strategy: str = "depth",
    depth: int = DEFAULT_DEPTH,
    p: float | None = None,
    rbp_agg: str | None = None,
    k: float | None = None,
    ranks: str = "evaluation",
    exclude_judged: str | None = None,
    replace: bool = False,
) -> PoolResult:
    """Pool the stored ``runs`` (all runs when None) by ``strategy`` at ``depth`` and store the pool
    as ``name`` (see the module docstring); ``exclude_judged``: a qrels set whose judged documents
    (grade >= 0) are left out, for the next round of judging; ``replace``: a pool of that name is
    replaced. Every argument is checked before any work; nothing is stored on an error."""
    how = recipe(strategy, depth, p=p, rbp_agg=rbp_agg, k=k, ranks=ranks, exclude_judged=exclude_judged)
    check_name(name, "pool")
    old_id = _old_pool(store, name, replace)
    run_names = store.run_names() if runs is None else names(runs, "run")
    if not run_names:
        raise PoolError("the store has no runs to pool; ingest some with `evalstore ingest run FILE`")
    run_ids = [store.run_id(r) for r in run_names]
    excluded = store.qrels_id(exclude_judged) if exclude_judged is not None else -1
    check_depth(store, run_ids, how.depth, how.rank_column)
    con = store.con
    try:
        with store.transaction():
            n_docs, n_topics = _pool_rows(store, how, run_ids, excluded)
            if n_docs == 0:
                raise PoolError(
                    f"the runs retrieve no document that {exclude_judged!r} does not judge already: nothing to pool"
                )
            pool_id = _write_meta(store, name, how, run_names, run_ids, n_docs, n_topics, old_id)
            _write_rows(store, how, pool_id)
    finally:
        for table in _TEMP:
            con.execute(f"DROP TABLE IF EXISTS {table}")
    return PoolResult(name, how, run_names, n_topics, n_docs, replaced=old_id is not None)


def _old_pool(store: StoreHandle, name: str, replace: bool) -> int | None:
    """The id of a stored pool called ``name`` (None: none); an error unless it may be replaced."""
    row = store.con.execute("SELECT pool_id FROM pool_meta WHERE name = ?", [name]).fetchall()
    if not row:
        return None
    if not replace:
        raise PoolError(f"a pool named {name!r} exists; choose another --name or pass --replace (replace=True)")
    return int(row[0][0])


def check_depth(store: StoreHandle, run_ids: Sequence[int], depth: int, rank_column: str = "rank") -> None:
    """``depth`` is not beyond the deepest ranking of the runs, and the ranks read count from 1
    (the rank column as written may not)."""
    deepest, bad = store.con.execute(
        f"""SELECT max({rank_column}), min(m.name) FILTER (WHERE {rank_column} IS NULL OR {rank_column} < 1)
            FROM run_row_data r JOIN run_meta m USING (run_id) WHERE run_id IN (SELECT unnest(?::INTEGER[]))""",
        [list(run_ids)],
    ).fetchall()[0]
    if bad is not None:
        raise PoolError(
            f"the run {bad!r} has a rank column that does not count from 1 (a rank below 1, or none); "
            "pool by the evaluation ranks (the default)"
        )
    if deepest is not None and depth > deepest:
        raise PoolError(f"the depth {depth} is beyond the runs' depth: the deepest ranking has {deepest} documents")


def render_block(block: str, parts: dict[str, str]) -> str:
    """A block of ``sql/pool.sql`` with its ``${name}`` parts (expressions and table names made
    here from checked values, never a value: values are bound, see :func:`bound`)."""
    return re.sub(r"\$\{(\w+)\}", lambda m: parts[m.group(1)], sql_blocks("pool.sql")[block])


def bound(sql: str, values: dict[str, Any]) -> dict[str, Any]:
    """The named parameters (``$name``) the statement uses, with their values."""
    used = set(re.findall(r"\$(\w+)", sql))
    return {k: v for k, v in values.items() if k in used}


def _render(block: str, how: Recipe, tables: dict[str, str]) -> str:
    """A block of ``sql/pool.sql`` with the recipe's expressions."""
    weight = "(1 - $p) * pow($p, rank - 1)" if how.strategy == "rbp" else "1.0 / ($k + rank)"
    if how.strategy == "depth":
        value = "CAST(NULL AS DOUBLE)"
    elif how.strategy == "rbp" and how.rbp_agg == "max":
        value = f"max({weight})"
    else:  # the sum, smallest weight first: the same double for the same ranks whatever the threads
        value = f"list_sum(list({weight} ORDER BY rank DESC))"
    parts = {
        "runs": "_pool_runs",
        "rank_column": how.rank_column,
        "read": f"r.{how.rank_column} <= $depth" if how.strategy == "depth" else "TRUE",
        "value": value,
        **tables,
    }
    return render_block(block, parts)


def _pool_rows(store: StoreHandle, how: Recipe, run_ids: list[int], excluded: int) -> tuple[int, int]:
    """Temp tables ``_pool_rows`` (the candidates) and ``_pool_docs`` (the pooled documents); their
    number and the number of topics."""
    con = store.con
    values = {
        "depth": how.depth,
        "p": how.p,
        "k": how.k,
        "excluded": excluded,
        "top": ALL if how.strategy == "depth" else how.depth,
    }
    con.execute("CREATE OR REPLACE TEMP TABLE _pool_runs AS SELECT unnest(?::INTEGER[]) AS run_id", [run_ids])
    for table, block in (("_pool_rows", "rows"), ("_pool_docs", "pooled")):
        sql = _render(block, how, {"rows": "_pool_rows"})
        con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {sql}", bound(sql, values))
    n_docs, n_topics = con.execute("SELECT count(*), count(DISTINCT topic) FROM _pool_docs").fetchall()[0]
    return int(n_docs), int(n_topics)


def _write_meta(
    store: StoreHandle,
    name: str,
    how: Recipe,
    run_names: list[str],
    run_ids: list[int],
    n_docs: int,
    n_topics: int,
    old_id: int | None,
) -> int:
    """The ``pool_meta`` row (a replaced pool keeps its id; its rows go first)."""
    con = store.con
    shas = dict(
        con.execute("SELECT run_id, sha256 FROM run_meta WHERE run_id IN (SELECT unnest(?::INTEGER[]))", [run_ids])
        .fetchall()
    )  # fmt: skip
    params = how.params() | {"runs": [{"run": r, "sha256": shas[i]} for r, i in zip(run_names, run_ids)]}
    values = [how.strategy, how.depth, json.dumps(params), how.describe(len(run_names)), n_topics, n_docs]
    if old_id is not None:
        con.execute("DELETE FROM pool_data WHERE pool_id = ?", [old_id])
        con.execute("DELETE FROM pool_contributions WHERE pool_id = ?", [old_id])
        con.execute(
            """UPDATE pool_meta SET strategy = ?, depth = ?, params = ?::JSON, description = ?, n_topics = ?,
                      n_docs = ?, created_at = current_timestamp WHERE pool_id = ?""",
            [*values, old_id],
        )
        return old_id
    return int(
        con.execute(
            """INSERT INTO pool_meta (name, strategy, depth, params, description, n_topics, n_docs)
               VALUES (?, ?, ?, ?::JSON, ?, ?, ?) RETURNING pool_id""",
            [name, *values],
        ).fetchall()[0][0]
    )


def _write_rows(store: StoreHandle, how: Recipe, pool_id: int) -> None:
    """``pool_data`` and ``pool_contributions`` of the pool from the temp tables."""
    con = store.con
    con.execute(
        """INSERT INTO pool_data (pool_id, topic, doc, value, n_runs, best_rank)
           SELECT ?, topic, doc, value, n_runs, best_rank FROM _pool_docs ORDER BY topic, doc""",
        [pool_id],
    )
    sql = _render("contributions", how, {"rows": "_pool_rows", "pooled": "_pool_docs"})
    con.execute(
        f"""INSERT INTO pool_contributions (pool_id, run_id, topic, doc, rank)
            SELECT ?, run_id, topic, doc, rank FROM ({sql}) ORDER BY topic, doc, run_id""",
        [pool_id],
    )
