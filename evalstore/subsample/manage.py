"""Working with stored subsamples: listing, selecting, sizes, dropping, exporting, evaluating."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..base.arguments import names as arg_names
from ..base.output_file import replacing
from ..db.drop import DropPlan, drop, plan_drop
from ..errors import NotFoundError, SubsampleError
from ..evaluation.stored import evaluate_qrels_sets
from .params import METHOD_TAGS, fraction_label

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


# --------------------------------------------------------------------------- queries
def list_subsamples(store: StoreHandle, parent: str | None = None):
    """The ``subsamples`` view (name, parent, method, fraction, seed, trial, min_rel, min_nonrel,
    n_topics, n_judged, n_rel, n_nonrel, created_at), for one parent or all, ordered by parent,
    fraction (largest first) and trial."""
    where, params = "", None
    if parent is not None:
        store.qrels_id(parent)
        where, params = "WHERE parent = ?", [parent]
    return store.sql(f"SELECT * FROM subsamples {where} ORDER BY parent, fraction DESC, trial, name", params)


def subsample_names(store: StoreHandle, parent: str) -> list[str]:
    """All subsamples of ``parent``, largest fraction first, then by trial."""
    return [r[0] for r in list_subsamples(store, parent).rows]


def resolve_subsamples(
    store: StoreHandle, parent: str, spec: str | Sequence[str] = "all", *, method: str | None = None
) -> list[str]:
    """Subsamples of ``parent`` selected by ``spec``: ``'all'``, a list (or comma-separated text)
    of subsample names, of fractions (every Buckley–Voorhees trial of those fractions) or of method
    tags (``bv``, ``logo``, ``loro``: every subsample of that method). ``method``: only subsamples of
    that method count (the robustness analysis reads Buckley–Voorhees subsamples alone)."""
    known = [k for k in list_subsamples(store, parent).records() if method is None or k["method"] == method]
    methods = {tag: m for m, tag in METHOD_TAGS.items()}
    if isinstance(spec, str):
        if spec.strip().lower() == "all":
            if not known:
                raise NotFoundError(
                    f"qrels {parent!r} has no subsamples; create some with "
                    f"`evalstore subsample --qrels {parent} --fractions 0.9,0.7,0.5,0.3,0.1`"
                )
            return [k["name"] for k in known]
        items = [s.strip() for s in spec.split(",") if s.strip()]
    else:
        items = [str(s) for s in spec]
    out: list[str] = []
    by_name = {k["name"]: k for k in known}
    for item in items:
        if item in by_name:
            out.append(item)
            continue
        if item in methods:
            out.extend(k["name"] for k in known if k["method"] == methods[item])
            continue
        try:
            f = float(item)
        except ValueError:
            raise NotFoundError(
                f"{item!r} is not a subsample of {parent!r}"
                + (
                    f" (its subsamples: {', '.join(list(by_name)[:8])}{' ...' if len(by_name) > 8 else ''})"
                    if by_name
                    else "; it has none yet (`evalstore subsample --qrels ...`)"
                )
            ) from None
        hits = [k["name"] for k in known if k["fraction"] is not None and abs(k["fraction"] - f) < 1e-12]
        if not hits:
            have = sorted({k["fraction"] for k in known if k["fraction"] is not None}, reverse=True)
            raise NotFoundError(
                f"qrels {parent!r} has no subsample at fraction {item}"
                + (f" (fractions: {', '.join(fraction_label(x) for x in have)})" if have else "")
            )
        out.extend(hits)
    return list(dict.fromkeys(out))


def topic_sizes(store: StoreHandle, name: str):
    """Per topic of a subsample: judged relevant / nonrelevant counts of the parent and of the
    subsample (columns topic, parent_rel, parent_nonrel, n_rel, n_nonrel)."""
    qid = store.qrels_id(name)
    row = store.con.execute("SELECT parent_id FROM subsample_meta WHERE qrels_id = ?", [qid]).fetchone()
    if row is None:
        raise NotFoundError(f"qrels set {name!r} is not a subsample (see `evalstore subsample list`)")
    return store.sql(
        """
        WITH c AS (
            SELECT qrels_id, topic, count(*) FILTER (WHERE grade >= 1) AS n_rel,
                   count(*) FILTER (WHERE grade = 0) AS n_nonrel
            FROM qrels_data WHERE qrels_id IN (?, ?) GROUP BY qrels_id, topic)
        SELECT p.topic, p.n_rel AS parent_rel, p.n_nonrel AS parent_nonrel,
               coalesce(s.n_rel, 0) AS n_rel, coalesce(s.n_nonrel, 0) AS n_nonrel
        FROM c p LEFT JOIN c s ON s.qrels_id = ? AND s.topic = p.topic
        WHERE p.qrels_id = ? ORDER BY p.topic""",
        [row[0], qid, qid, row[0]],
    )


def plan_drop_subsamples(store: StoreHandle, names: Sequence[str]) -> DropPlan | None:
    """What dropping the subsamples ``names`` removes (None: no names): the plan of
    :func:`evalstore.db.drop.plan_drop` for them, after checking each is a subsample."""
    todo = list(dict.fromkeys(arg_names(names, "subsample")))
    for name in todo:
        qid = store.qrels_id(name)
        if store.con.execute("SELECT 1 FROM subsample_meta WHERE qrels_id = ?", [qid]).fetchone() is None:
            raise SubsampleError(f"{name!r} is not a subsample; only subsamples can be dropped here")
    return plan_drop(store, "qrels", todo) if todo else None


def drop_subsamples(store: StoreHandle, names: Sequence[str]) -> int:
    """Delete subsamples with everything that depends on them, as ``drop qrels`` does (one drop
    path, :mod:`evalstore.db.drop`): judgments, scores, intervals, derivation and the stored
    analyses that read them. Returns how many subsamples were deleted."""
    plan = plan_drop_subsamples(store, names)
    if plan is None:
        return 0
    drop(store, plan)
    return len(plan.names)


# --------------------------------------------------------------------------- export
def qrels_rows(store: StoreHandle, name: str) -> list[tuple[str, str, int]]:
    """The judgments of a qrels set (e.g. a subsample) as ``(topic, doc, grade)``, sorted by topic
    and docno (byte order)."""
    qid = store.qrels_id(name)
    return store.con.execute(
        "SELECT topic, doc, grade FROM qrels_data WHERE qrels_id = ? ORDER BY topic, doc", [qid]
    ).fetchall()


def qrels_text(store: StoreHandle, name: str) -> str:
    """A qrels set in TREC qrels format: ``topic 0 docno grade`` per line, sorted by topic and
    docno (byte order), no comments or blank lines."""
    return "".join(f"{t} 0 {d} {g}\n" for t, d, g in qrels_rows(store, name))


def export_qrels(store: StoreHandle, name: str, path: str | os.PathLike) -> int:
    """Write the qrels set ``name`` as a TREC qrels file (``'-'`` = stdout); returns the number of lines."""
    text = qrels_text(store, name)
    if os.fspath(path) == "-":
        sys.stdout.write(text)
    else:
        with replacing(path) as f:
            f.write(text)
    return text.count("\n")


# --------------------------------------------------------------------------- evaluation
def evaluate_subsamples(
    store: StoreHandle,
    qrels: str,
    runs: Sequence[str] | str | None = None,
    metrics: Sequence[str] | str = ("AP",),
    subsamples: str | Sequence[str] = "all",
    *,
    include_parent: bool = True,
    **options,
):
    """Evaluate runs against ``qrels`` and its subsamples in one bulk pass
    (:func:`evalstore.evaluation.stored.evaluate_qrels_sets`: one ranked judged list per context covers
    every qrels set). Returns ``{qrels name: EvalResult}``, parent first, then the subsamples
    (largest fraction first, then by trial). Options as for :meth:`Store.evaluate`."""
    names = resolve_subsamples(store, qrels, subsamples)
    order = ([qrels] if include_parent else []) + names
    return evaluate_qrels_sets(store, order, runs, metrics, **options)


def derivations(store: StoreHandle) -> dict[str, tuple[float | None, int | None]]:
    """``{subsample name: (fraction, trial)}`` of every subsample in the store (None for a
    leave-out set, which has neither)."""
    rows = store.con.execute(
        "SELECT q.name, s.fraction, s.trial FROM subsample_meta s JOIN qrels_meta q USING (qrels_id)"
    ).fetchall()
    return {name: (fraction, trial) for name, fraction, trial in rows}
