"""Label agreement of two stored qrels sets: one SQL pass over both sets' judgments, then the
statistics of :mod:`evalstore.stats.agreement` for all topics together and for each topic.

A (topic, doc) pair is judged in a set when the set has a grade >= 0 for it (a negative grade is
trec_eval's "pooled but unjudged"). The common pairs are those judged in both; ``n_ref_only`` and
``n_cand_only`` count the pairs judged in one set only (they enter no statistic, as units with a
single value enter neither Cohen's kappa nor Krippendorff's alpha). Binary relevance is
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


_PAIRS_SQL = """
WITH r AS (SELECT topic, doc, grade FROM qrels_data WHERE qrels_id = $ref AND grade >= 0),
     c AS (SELECT topic, doc, grade FROM qrels_data WHERE qrels_id = $cand AND grade >= 0)
SELECT topic, r.grade AS ref_grade, c.grade AS cand_grade, count(*) AS n
FROM r FULL OUTER JOIN c USING (topic, doc)
GROUP BY ALL
ORDER BY topic, ref_grade NULLS FIRST, cand_grade NULLS FIRST
"""


def _value(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def label_agreement(store: StoreHandle, ref_id: int, cand_id: int, rel: int = 1) -> LabelAgreement:
    """The label agreement of the qrels sets ``ref_id`` and ``cand_id`` (see the module docstring)."""
    data = store.con.execute(_PAIRS_SQL, {"ref": ref_id, "cand": cand_id}).fetchnumpy()
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
