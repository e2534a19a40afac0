"""Label agreement of two stored judged sets of one kind: one SQL pass over both sets' labels,
then the statistics of :mod:`evalstore.stats.agreement` for all topics together and for each topic.

The items judged are, by the sets' kind (:data:`ITEMS`): (topic, doc) pairs of relevance
judgments, judged when the set has a grade >= 0 for it (a negative grade is trec_eval's "pooled
but unjudged"); (run, topic, nugget) nugget assignments, the nugget known by its text (so sets
over different versions of a nugget set meet where the texts agree), graded 2 support, 1
partial_support, 0 not_support; (run, topic, sentence, citation) support labels, graded 2 full, 1
partial, 0 none. The common items are those judged in both; ``n_ref_only`` and ``n_cand_only``
count the items judged in one set only (they enter no statistic, as units with a single value
enter neither Cohen's kappa nor Krippendorff's alpha). Binary relevance (support) is
``grade >= rel`` in each set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..stats import agreement as ag

if TYPE_CHECKING:
    from ..db.handle import StoreHandle

#: the statistics of a row, in the order of the meta_agree_labels table
STATS = ("agreement", "kappa", "kappa_linear", "kappa_quadratic", "kappa_binary", "alpha_nominal", "alpha_ordinal")


@dataclass
class LabelAgreement:
    """``overall``: the row of all topics together; ``topics``: one row per topic (natural order of
    the store's topics: as text); ``grades``: the grades of the common pairs (ascending, the rows and
    columns of ``confusion``, rows: the reference set); ``confusion_topics``: per topic."""

    grades: list[int]
    confusion: np.ndarray
    overall: dict[str, Any]
    topics: list[dict[str, Any]] = field(default_factory=list)
    confusion_topics: dict[str, np.ndarray] = field(default_factory=dict)


#: the items each kind of judged set labels, ``(topic, item key, grade)`` of the set ``{q}``
ITEMS = {
    "judgments": "SELECT topic, doc AS item, grade FROM qrels_data WHERE qrels_id = {q} AND grade >= 0",
    "nuggets": """SELECT a.topic, [a.run, d.text] AS item, a.grade FROM assignment_data a
                  JOIN qrels_meta m ON m.qrels_id = a.qrels_id
                  JOIN nugget_data d ON d.nuggets_id = m.nuggets_id AND d.topic = a.topic AND d.nugget = a.nugget
                  WHERE a.qrels_id = {q}""",
    "support": """SELECT topic, [run, sentence::VARCHAR, citation::VARCHAR] AS item, grade FROM support_data
                  WHERE qrels_id = {q}""",
}
#: what an item is, for messages
ITEM_TEXT = {
    "judgments": "(topic, doc) pair",
    "nuggets": "(run, topic, nugget) assignment",
    "support": "(run, topic, sentence, citation) label",
}

_PAIRS_SQL = """
WITH r AS ({ref}), c AS ({cand})
SELECT topic, r.grade AS ref_grade, c.grade AS cand_grade, count(*) AS n
FROM r FULL OUTER JOIN c USING (topic, item)
GROUP BY ALL
ORDER BY topic, ref_grade NULLS FIRST, cand_grade NULLS FIRST
"""


def _value(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def label_agreement(
    store: StoreHandle, ref_id: int, cand_id: int, rel: int = 1, kind: str = "judgments"
) -> LabelAgreement:
    """The label agreement of the judged sets ``ref_id`` and ``cand_id``, both of ``kind`` (see the
    module docstring)."""
    items = ITEMS[kind]
    sql = _PAIRS_SQL.format(ref=items.format(q=int(ref_id)), cand=items.format(q=int(cand_id)))
    data = store.con.execute(sql).fetchnumpy()
    topic = np.asarray(data["topic"], dtype=object).astype(str)
    rg = np.ma.asarray(data["ref_grade"])
    cg = np.ma.asarray(data["cand_grade"])
    n = np.asarray(data["n"], dtype=np.int64)
    ref_missing, cand_missing = np.ma.getmaskarray(rg), np.ma.getmaskarray(cg)
    both = ~ref_missing & ~cand_missing
    topics, tpos = np.unique(topic, return_inverse=True)
    grades = np.unique(np.concatenate([rg.data[both], cg.data[both]])).astype(np.int64)
    G, T = len(grades), len(topics)
    C = np.zeros((T, G, G))
    if both.any():
        np.add.at(
            C, (tpos[both], np.searchsorted(grades, rg.data[both]), np.searchsorted(grades, cg.data[both])), n[both]
        )
    ref_only = np.bincount(tpos[cand_missing], weights=n[cand_missing], minlength=T)
    cand_only = np.bincount(tpos[ref_missing], weights=n[ref_missing], minlength=T)
    per_topic = _rows(C, grades, rel, ref_only, cand_only)
    total = _rows(C.sum(axis=0)[None], grades, rel, ref_only.sum(keepdims=True), cand_only.sum(keepdims=True))[0]
    for t, row in zip(topics, per_topic):
        row["topic"] = str(t)
    total["topic"] = None
    return LabelAgreement(
        [int(g) for g in grades],
        C.sum(axis=0),
        total,
        per_topic,
        {str(t): C[i] for i, t in enumerate(topics)},
    )


def _rows(C: np.ndarray, grades: np.ndarray, rel: int, ref_only: np.ndarray, cand_only: np.ndarray) -> list[dict]:
    """One row of statistics per matrix of the stack ``C``."""
    B = ag.binary(C, grades, rel) if len(grades) else np.zeros((len(C), 2, 2))
    values = {
        "agreement": ag.observed_agreement(C),
        "kappa": ag.cohen_kappa(C),
        "kappa_linear": ag.cohen_kappa(C, "linear"),
        "kappa_quadratic": ag.cohen_kappa(C, "quadratic"),
        "kappa_binary": ag.cohen_kappa(B),
        "alpha_nominal": ag.krippendorff_alpha(C, "nominal"),
        "alpha_ordinal": ag.krippendorff_alpha(C, "ordinal"),
    }
    out = []
    for i in range(len(C)):
        row: dict[str, Any] = {
            "n_common": int(C[i].sum()),
            "n_ref_only": int(ref_only[i]),
            "n_cand_only": int(cand_only[i]),
        }
        row.update({k: _value(v[i]) for k, v in values.items()})
        row["ref_relevant"] = int(B[i, 1, :].sum())
        row["cand_relevant"] = int(B[i, :, 1].sum())
        out.append(row)
    return out


def confusion_rows(la: LabelAgreement) -> list[dict[str, Any]]:
    """The non-zero cells of the matrices as ``meta_agree_confusion`` rows (overall first)."""
    out = []
    for topic, M in [(None, la.confusion), *la.confusion_topics.items()]:
        a, b = np.nonzero(M)
        out += [
            {"topic": topic, "ref_grade": la.grades[i], "cand_grade": la.grades[j], "n": int(M[i, j])}
            for i, j in zip(a.tolist(), b.tolist())
        ]
    return out
