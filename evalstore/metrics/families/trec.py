"""trec_eval's measures (sql/trec_eval.sql). Aliases accept trec_eval's own names."""
from ..registry import GAINS, JUDGED_ONLY, REL, MetricSpec, alias, register

TREC = "trec_eval 10.0 (usnistgov/trec_eval); ../shared/reference/trec_eval_semantics.md Sec. 6"
TESTS = ("tests/test_trec_conformance.py", "tests/test_metrics_trec.py")

register(MetricSpec(
    "AP", "trec_eval.sql#AP",
    "Average precision: mean over the R relevant docs of the precision at their rank (unretrieved ones add 0). "
    "With @k: trec_eval's map_cut (sum over ranks <= k, still divided by R).",
    TREC + " m_map.c, m_map_cut.c; Sakai 000 Eq. 1", (REL, JUDGED_ONLY), cutoff="optional", tests=TESTS))
register(MetricSpec(
    "P", "trec_eval.sql#P", "Precision at k: relevant docs in the top k divided by k (always k).",
    TREC + " m_P.c", (REL, JUDGED_ONLY), cutoff="required", tests=TESTS))
register(MetricSpec(
    "R", "trec_eval.sql#R", "Recall at k: relevant docs in the top k divided by R.",
    TREC + " m_recall.c", (REL, JUDGED_ONLY), cutoff="required", tests=TESTS, aliases=("Recall",)))
register(MetricSpec(
    "RR", "trec_eval.sql#RR", "Reciprocal rank of the first relevant doc (0 if none); @k: only within the top k.",
    TREC + " m_recip_rank.c", (REL, JUDGED_ONLY), cutoff="optional", tests=TESTS, aliases=("MRR",)))
register(MetricSpec(
    "nDCG", "trec_eval.sql#nDCG",
    "Normalised DCG with linear gains and log2(r+1) discount over the whole list; the ideal list holds every "
    "judged doc with gain > 0. @k truncates both (trec_eval ndcg_cut).",
    TREC + " m_ndcg.c, m_ndcg_cut.c; Jarvelin & Kekalainen 2002 (Microsoft discount)", (GAINS, JUDGED_ONLY),
    cutoff="optional", tests=TESTS))
register(MetricSpec("NumRet", "trec_eval.sql#NumRet", "Number of documents retrieved (after depth / judged_only).",
                    TREC + " m_num_ret.c", (JUDGED_ONLY,), cutoff="optional", aggregate="sum", tests=TESTS))
register(MetricSpec("NumRel", "trec_eval.sql#NumRel", "Number of relevant documents in the qrels (R).",
                    TREC + " m_num_rel.c", (REL,), aggregate="sum", tests=TESTS))
register(MetricSpec("NumRelRet", "trec_eval.sql#NumRelRet", "Number of relevant documents retrieved.",
                    TREC + " m_num_rel_ret.c", (REL, JUDGED_ONLY), cutoff="optional", aggregate="sum", tests=TESTS))

# trec_eval names
alias(r"map", "AP")
alias(r"map_cut[_.](\d+)", r"AP@\1")
alias(r"P[_.](\d+)", r"P@\1")
alias(r"P\.(\d+(?:,\d+)+)", lambda m: [f"P@{k}" for k in m.group(1).split(",")])
alias(r"recall[_.](\d+)", r"R@\1")
alias(r"ndcg", "nDCG")
alias(r"ndcg_cut[_.](\d+)", r"nDCG@\1")
alias(r"recip_rank", "RR")
alias(r"num_ret", "NumRet")
alias(r"num_rel", "NumRel")
alias(r"num_rel_ret", "NumRelRet")
