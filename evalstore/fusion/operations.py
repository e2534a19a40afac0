"""The fusion operations a store offers: :func:`fuse` (``evalstore fuse``, ``Store.fuse``),
:func:`refresh` (a stale fused run made again from its recipe) and :func:`normalized_scores` (the
normalised scores a fusion would read, to look at)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..db.query import QueryResult
from ..errors import FusionError
from .compute import FusionWork, render_normalized
from .optimize import search
from .provenance import provenance
from .recipe import Recipe, check_cuts, make
from .registry import method as method_entry
from .registry import normalization
from .store import FusionResult, check_overlap, coverage_notes, store_fused

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


def fuse(
    store: StoreHandle,
    runs: Sequence[str],
    method: str,
    *,
    name: str,
    norm: str | None = None,
    params: Sequence[str] | Mapping[str, Any] | None = None,
    weights: str | Sequence[float] | None = None,
    depth: int | None = None,
    top: int | None = None,
    ranks: str = "evaluation",
    replace: bool = False,
    optimize: str | None = None,
    qrels: str | None = None,
    step: float | None = None,
    allow_disjoint: bool = False,
) -> FusionResult:
    """Fuse the stored ``runs`` with ``method`` (ranx's names: rrf, sum, mnz, wsum, ...; see
    :mod:`evalstore.fusion.registry`) and store the result as the run ``name`` with its recipe.

    ``norm``: the score normalisation (default min-max for methods of scores, as ranx's; none for
    methods of ranks); ``params``: ``{"k": 60}`` or ``["k=60"]``; ``weights``: one per run (weighted
    methods); ``depth``: only the top ``depth`` documents of each run; ``top``: keep ``top``
    documents per topic; ``ranks``: ``evaluation`` (evalstore's order: score descending, docno
    descending) or ``submitted`` (the rank column as written, Pyserini's reading). ``optimize``:
    choose the weights (or the method's parameter) by a grid search with ``step`` that maximises
    the mean of this metric on ``qrels`` (see :mod:`evalstore.fusion.optimize`). ``replace``: other
    content under ``name`` is replaced. An input run that shares no topic with the other inputs (a
    run of another collection) is refused unless ``allow_disjoint``. One transaction."""
    searching = optimize is not None
    if searching and not qrels:
        raise FusionError("--optimize METRIC chooses the fusion on a qrels set: give it with --qrels NAME")
    if not searching and (qrels is not None or step is not None):
        raise FusionError("--qrels and --step go with --optimize METRIC")
    recipe = make(
        runs, method, norm=norm, params=params, weights=weights, depth=depth, top=top, ranks=ranks, searching=searching
    )
    if name in recipe.runs:
        raise FusionError(f"the fused run cannot take the name of its input {name!r}; choose another --name")
    with FusionWork(store) as work:
        inputs = work.load_inputs(recipe)
        if not allow_disjoint:
            check_overlap(store, inputs, work.inputs_table)
        found = None
        if optimize is not None and qrels is not None:
            found = search(store, recipe, work, optimize, qrels, step)
            recipe = recipe.with_choice(found.best.get("params", {}), found.best.get("weights"))
        work.fuse(recipe, [{}])
        notes = coverage_notes(store, inputs, work.inputs_table)
        result = store_fused(
            store, recipe, inputs, work.rows(0), name, replace=replace, optimized=found.record() if found else None
        )
    result.optimization = found
    result.notes = notes + result.notes
    return result


def refresh(store: StoreHandle, name: str) -> FusionResult:
    """Make the fused run ``name`` again from its recipe over the input runs as they are now (a
    stale run: an input was replaced). Weights or a parameter chosen by ``--optimize`` are kept."""
    made = provenance(store, name)
    if made is None:
        store.run_id(name)  # not found: the error with the closest names
        raise FusionError(f"the run {name!r} was not made by `evalstore fuse`: there is no recipe to make it again")
    r = made.recipe
    dropped = [n for n, how in made.changed if how == "dropped"]
    if dropped:
        raise FusionError(f"the input run {dropped[0]!r} of {name!r} was dropped; it cannot be fused again")
    return fuse(
        store,
        [i["run"] for i in r["inputs"]],
        r["method"],
        name=name,
        norm=r["norm"],
        params=r["params"],
        weights=r["weights"],
        depth=r["depth"],
        top=r["top"],
        ranks=r["ranks"],
        replace=True,
        allow_disjoint=True,
    )


def normalized_scores(
    store: StoreHandle,
    runs: Sequence[str],
    norm: str | None = "min-max",
    *,
    depth: int | None = None,
    ranks: str = "evaluation",
) -> QueryResult:
    """The scores a fusion of ``runs`` reads after the normalisation ``norm``: ``run, topic, doc,
    score`` (per run, topic and document; with ``borda``, also the candidates a run lacks)."""
    n = normalization(norm)
    names = (runs,) if isinstance(runs, str) else tuple(runs)
    if not names:
        raise FusionError("name the runs whose normalised scores to show")
    check_cuts(depth, None, ranks)
    recipe = Recipe(names, method_entry("sum"), n, depth=depth, ranks=ranks)
    with FusionWork(store) as work:
        work.load_inputs(recipe)
        work.number_docs(recipe)
        q = f"""SELECT i.name AS run, g.topic, g.doc, g.s AS score
                FROM ({render_normalized(recipe, work.inputs_table, work.docs)}) g
                JOIN (SELECT unnest(?) AS pos, unnest(?) AS name) i USING (pos)
                WHERE g.counted ORDER BY i.pos, g.topic, g.s DESC, g.doc DESC"""
        rows = store.con.execute(q, [[i.pos for i in work.inputs], [i.name for i in work.inputs]])
        cols = [d[0] for d in rows.description]
        return QueryResult(cols, rows.fetchall())
