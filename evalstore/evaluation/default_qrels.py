"""The one rule for the qrels set a command uses when none is named (``--qrels`` left out).

Every command that reads one judged set (``eval``, ``compare``, ``explain``, ``repro``,
``design``, ``subsample``, ``meta ...``) applies :func:`default_qrels`:

1. The candidates are the store's judged sets that are not subsamples (a subsample is derived
   from a set; it is named, never taken by default).
2. A judged set is of one kind: relevance judgments without or with subtopic (diversity)
   judgments, nugget assignments, or support labels (of generated answers; docs/rag.md). When the
   store holds sets of several kinds and the command knows its metrics, the candidates are the
   sets of the kind the metrics read: the diversity metrics (those that read subtopic judgments,
   such as ``alpha_nDCG@20``) look among the sets with subtopic judgments, the nugget metrics
   (``strict_vital``) among the assignment sets, the support metrics among the support sets,
   every other metric among the sets of relevance judgments without subtopics. Metrics of
   several kinds together need a named set.
3. Exactly one candidate left: it is the default. None or several: an error that lists them and
   says to choose one with ``--qrels NAME``.

So a store with one qrels set (and its subsamples) never needs ``--qrels``; a TREC Web track
store with an ad hoc set and a diversity set takes the ad hoc set for ``nDCG@20`` and the
diversity set for ``alpha_nDCG@20``; a TREC RAG store with qrels and one assignment set takes
the assignment set for ``vital``.

The measures evaluated when none is named are those of :func:`official_measures`: a dataset's
qrels set (``ingest dataset``) keeps its official measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import StoreError
from ..metrics.registry import parse_metric

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: The rule in one line, for the help of the ``--qrels`` options.
HELP = (
    "default: the store's only qrels set, subsamples aside; with sets of several kinds (with and without subtopic "
    "judgments, nugget assignments, support labels), the only one of the kind the metrics read"
)

#: how each kind of set is called in the error
_KIND_TEXT = {
    "judgments": " without subtopic judgments",
    "diversity": " with subtopic judgments",
    "nuggets": " of nugget assignments",
    "support": " of support labels",
}


def reads_subtopics(metric: str) -> bool:
    """True when every instance of ``metric`` reads subtopic judgments (a diversity metric)."""
    return metric_kind(metric) == "diversity"


def metric_kind(metric: str) -> str | None:
    """The kind of set every instance of ``metric`` reads ('judgments', 'diversity', 'nuggets',
    'support'), None when its instances read different kinds."""
    kinds = {"diversity" if "rl_subtopics" in i.spec.block.reads else i.spec.kind for i in parse_metric(metric)}
    return kinds.pop() if len(kinds) == 1 else None


def default_qrels(store: StoreHandle, metrics: Sequence[str] | None = None, option: str = "--qrels") -> str:
    """The qrels set a command uses when none is named (see the module docstring); ``option``
    names the option to give in the error."""
    rows = store.con.execute(
        "SELECT m.name, CASE WHEN m.kind IN ('nuggets', 'support') THEN m.kind "
        "WHEN EXISTS (SELECT 1 FROM subtopic_qrels_data s WHERE s.qrels_id = m.qrels_id) THEN 'diversity' "
        "ELSE 'judgments' END "
        "FROM qrels_meta m WHERE NOT EXISTS (SELECT 1 FROM subsample_meta sm WHERE sm.qrels_id = m.qrels_id) "
        "ORDER BY m.name"
    ).fetchall()
    if not rows:
        raise StoreError("the store holds no qrels set; ingest one with `evalstore ingest qrels FILE`")
    if len(rows) == 1:
        return str(rows[0][0])
    candidates, kind, why = [str(n) for n, _ in rows], "", ""
    if metrics and len({k for _, k in rows}) > 1:
        wanted = {metric_kind(m) for m in metrics}
        if len(wanted) == 1 and None not in wanted:
            want = wanted.pop()
            candidates = [str(n) for n, k in rows if k == want]
            kind = _KIND_TEXT[str(want)]
            if len(candidates) == 1:
                return candidates[0]
        else:
            why = " (the metrics read sets of several kinds)"
    shown = ", ".join(candidates[:10]) + (", ..." if len(candidates) > 10 else "")
    raise StoreError(
        f"the store holds {len(candidates)} qrels sets{kind} ({shown}){why}, and {option} was not given: "
        f"choose one with {option} NAME"
    )


def official_measures(store: StoreHandle, qrels: str) -> list[str] | None:
    """The official measures stored with a dataset's qrels set (None for other qrels sets)."""
    rows = store.con.execute(
        "SELECT d.official_measures FROM dataset_meta d JOIN qrels_meta q USING (qrels_id) WHERE q.name = ?", [qrels]
    ).fetchall()
    return list(rows[0][0]) if rows else None
