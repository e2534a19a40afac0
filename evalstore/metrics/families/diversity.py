"""Diversity (intent-aware) metrics over subtopic judgments (sql/diversity.sql).

ndeval's metrics under ir_measures 0.4.3's names (alpha_DCG, alpha_nDCG, ERR_IA, nERR_IA, NRBP,
nNRBP, AP_IA, P_IA, StRecall), as pyndeval (ndeval 4.5) computes them, and Sakai's D-measures
(I-rec, D-nDCG, D#-nDCG) as NTCIREVAL does. They read ``rl_subtopics`` (the subtopic judgments of
``ingest qrels --format subtopic`` / ``ntcir-intents``; a set without them counts one subtopic
per topic). The greedy ideal ranking of alpha_nDCG, nERR_IA and nNRBP runs in the Python function
``diversity_greedy_gains`` (evalstore/metrics/udf_diversity.py).
"""

from .. import udf_diversity  # noqa: F401  (declares the SQL function)
from ..params import GAINS, REL, Param
from ..registry import MetricSpec, alias, register

NDEVAL = "ndeval 4.5 (TREC Web track; usnistgov/trec_web_track, ndeval.c) through pyndeval 0.0.8 / ir_measures 0.4.3"
ALPHA_NDCG = "Clarke et al., Novelty and diversity in information retrieval evaluation, SIGIR 2008; " + NDEVAL
IA = "Agrawal et al., Diversifying search results, WSDM 2009; " + NDEVAL
NRBP_CITE = "Clarke et al., An effectiveness measure for ambiguous and underspecified queries, ICTIR 2009; " + NDEVAL
DSHARP = (
    "Sakai & Song, Evaluating diversified search results using per-intent graded relevance, SIGIR 2011; "
    "NTCIREVAL's D-measures (NTCIR INTENT)"
)

ALPHA = Param(
    "alpha",
    "float",
    0.5,
    "redundancy penalty: the n-th doc relevant to a subtopic gains (1-alpha)^(n-1)",
    minimum=0,
    maximum=1,
)
BETA = Param("beta", "float", 0.5, "patience of NRBP: rank i has weight beta^(i-1)", minimum=0, maximum=1)
GAMMA = Param(
    "gamma", "float", 0.5, "weight of I-rec in D#-nDCG = gamma I-rec + (1-gamma) D-nDCG", minimum=0, maximum=1
)
NDEVAL_ORDER = " Ranking: score descending, ties by docno ascending (pyndeval's order)."


def _nd(name: str, doc: str, cite: str, params: tuple[Param, ...], cutoff: str, aliases: tuple[str, ...] = (), **kw):
    register(
        MetricSpec(
            name,
            f"diversity.sql#{name}",
            doc + NDEVAL_ORDER,
            cite,
            params,
            cutoff=cutoff,
            aliases=aliases,
            reference="pyndeval",
            provider="pyndeval",
            **kw,
        )
    )


_nd(
    "alpha_DCG",
    "alpha-DCG@k over the subtopics with a relevant doc (S), divided by ndeval's ideal-ideal "
    "sum_{i<=k} S(1-alpha)^(i-1)/log2(i+1) (also at k = 1, where ndeval prints the raw gain).",
    ALPHA_NDCG,
    (ALPHA, REL),
    "required",
    ("alpha-DCG",),
)
_nd(
    "alpha_nDCG",
    "alpha-DCG@k divided by alpha-DCG@k of ndeval's greedy ideal ranking (ties to the larger docno).",
    ALPHA_NDCG,
    (ALPHA, REL),
    "required",
    ("alpha-nDCG",),
)
_nd(
    "ERR_IA",
    "Intent-aware ERR@k (alpha = 0.5, discount 1/i) divided by ndeval's ideal-ideal sum_{i<=k} S 0.5^(i-1)/i "
    "(also at k = 1, where ndeval prints the raw gain).",
    IA,
    (REL,),
    "required",
    ("ERR-IA",),
)
_nd(
    "nERR_IA",
    "Intent-aware ERR@k divided by that of ndeval's greedy ideal ranking.",
    IA,
    (REL,),
    "required",
    ("nERR-IA",),
)
_nd(
    "NRBP",
    "Novelty- and rank-biased precision (1-(1-alpha)beta)/S sum_i beta^(i-1) sum_s rel_s(d_i)(1-alpha)^c_s(i), "
    "whole list.",
    NRBP_CITE,
    (ALPHA, BETA, REL),
    "none",
)
_nd(
    "nNRBP",
    "NRBP divided by NRBP of ndeval's greedy ideal ranking; undefined (NULL; ndeval: nan) for a topic "
    "without relevant docs.",
    NRBP_CITE,
    (ALPHA, BETA, REL),
    "none",
    missing=None,
)
_nd(
    "AP_IA",
    "Intent-aware AP: the mean over the S subtopics of the subtopic's AP (whole list).",
    IA,
    (REL,),
    "none",
    ("MAP_IA", "MAP-IA"),
)
_nd(
    "P_IA",
    "Intent-aware precision: sum_{i<=k} (subtopics d_i is relevant to) / (k S).",
    IA,
    (REL,),
    "required",
    ("P-IA",),
)
_nd(
    "StRecall",
    "Subtopic recall: subtopics with a relevant doc in the top k, divided by S.",
    "Zhai et al., Beyond independent relevance, SIGIR 2003; " + NDEVAL,
    (REL,),
    "required",
    ("strec",),
)

_D = " Ranking: the store's evaluation order (convention). Without @k: the whole list."
register(
    MetricSpec(
        "I-rec",
        "diversity.sql#I-rec",
        "Intent recall: intents with a relevant doc (level >= rel) in the top k, divided by the topic's intents." + _D,
        DSHARP,
        (REL,),
        cutoff="optional",
        reference="evalstore",
    )
)
register(
    MetricSpec(
        "D-nDCG",
        "diversity.sql#D-nDCG",
        "nDCG@k (discount log2(r+1)) of the global gain GG(d) = sum_i P(i|q) g_i(d), the ideal list by GG "
        "descending; P(i|q) given or uniform." + _D,
        DSHARP,
        (GAINS,),
        cutoff="optional",
        reference="evalstore",
    )
)
register(
    MetricSpec(
        "Dsharp-nDCG",
        "diversity.sql#Dsharp-nDCG",
        "D#-nDCG (Sakai's spelling, accepted as a name): gamma I-rec@k + (1 - gamma) D-nDCG@k." + _D,
        DSHARP,
        (GAMMA, GAINS, REL),
        cutoff="optional",
        reference="evalstore",
    )
)
# Sakai's spelling ('#' is not a name character): D#-nDCG@10, D#-nDCG(gamma=0.3)@10
alias(r"D#-nDCG((?:\(.*\))?(?:@.*)?)", r"Dsharp-nDCG\1")
