"""Measures defined by ir_measures 0.4.3's own providers (sql/ir_measures.sql): Judged, NumQ,
Accuracy, Compat."""

from __future__ import annotations

from ..params import Param
from ..registry import MetricSpec, register

IRM = "ir_measures 0.4.3 (Macdonald & Tonellotto, ICTIR 2020)"

register(
    MetricSpec(
        "Judged",
        "ir_measures.sql#Judged",
        "Fraction of the top k that is in the qrels (any grade, -1 included), divided by min(k, docs retrieved).",
        f"{IRM}, judged provider",
        cutoff="optional",
        reference="judged",
        provider="judged",
    )
)
register(
    MetricSpec(
        "NumQ",
        "ir_measures.sql#NumQ",
        "Number of topics evaluated (trec_eval num_q); summed over topics.",
        f"{IRM}; trec_eval m_num_q.c",
        aggregate="sum",
        aliases=("num_q",),
        provider="pytrec_eval",
    )
)
register(
    MetricSpec(
        "Accuracy",
        "ir_measures.sql#Accuracy",
        "1 - (nonrelevant docs ranked above each relevant doc, summed) / (nonrelevant docs x relevant docs) in the "
        "top k (unjudged docs are nonrelevant); no value for a topic with no relevant doc in the top k or no "
        "nonrelevant one (left out of the mean, as ir_measures does).",
        f"{IRM}, accuracy provider",
        (Param("rel", "int", 1, "relevance threshold: grade >= rel is relevant", minimum=1),),
        cutoff="optional",
        missing=None,
        reference="accuracy",
        provider="accuracy",
    )
)
register(
    MetricSpec(
        "Compat",
        "ir_measures.sql#Compat",
        "Compatibility: rank-biased overlap (persistence p) of the run with the ideal ranking (grade desc, then run "
        "score desc, unretrieved docs at score 0), to depth max(retrieved, relevant); normalize divides by the ideal's "
        "own RBO.",
        "Clarke, Vtyurina & Smucker, Assessing top-k preferences, TOIS 2021; " + IRM + ", compat provider",
        (
            Param("p", "float", 0.95, "persistence", minimum=0.0, maximum=1.0),
            Param("normalize", "bool", True, "divide by the ideal ranking's RBO"),
        ),
        reference="compat",
        provider="compat",
    )
)
