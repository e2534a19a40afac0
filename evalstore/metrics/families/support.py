"""Citation support metrics of generated answers (sql/support.sql): weighted support precision and
recall. They read support label sets (``ingest support``): ``eval --qrels SET -m support_precision``."""

from ..registry import MetricSpec, register

SUPPORT = (
    "Thakur et al., Support evaluation for the TREC 2024 RAG Track: comparing human versus LLM judges, SIGIR 2025 "
    "(arXiv 2504.15205): weighted precision and recall, full 1, partial 0.5, none 0"
)

register(
    MetricSpec(
        "support_precision",
        "support.sql#support_precision",
        "Mean over the answer's (sentence, citation) pairs of the support label's credit: full 1, partial 0.5, none "
        "(or unlabelled) 0; 0 for an answer without citations.",
        SUPPORT,
        reference="evalstore",
    )
)
register(
    MetricSpec(
        "support_recall",
        "support.sql#support_recall",
        "Mean over the answer's sentences of the best credit among the sentence's citations (full 1, partial 0.5, "
        "none 0); a sentence without a citation counts 0, an answer without sentences scores 0.",
        SUPPORT,
        reference="evalstore",
    )
)
