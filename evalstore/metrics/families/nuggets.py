"""Nugget metrics of generated answers (sql/nuggets.sql): nuggetizer's four scores under their
names and nuggetizer's output names, and the weighted form. They read nugget assignment sets
(``ingest assignments``): ``eval --qrels SET -m strict_vital``."""

from ..params import Param
from ..registry import MetricSpec, register

NUGGETIZER = (
    "Pradeep et al., Initial nugget evaluation results for the TREC 2024 RAG Track with the AutoNuggetizer "
    "framework, arXiv 2411.09607; castorini/nuggetizer 0.0.5, calculate_nugget_scores"
)
WEIGHTED = (
    "Pradeep et al., The great nugget recall: automating fact extraction and RAG evaluation with large language "
    "models, SIGIR 2025 (arXiv 2504.15068)"
)
LENGTH = (
    " With @L: an answer longer than L words (its response_length) scores 0 (the track's length limit as a "
    "budget; TREC 2024 RAG: 400 words)."
)


def _n(name: str, doc: str) -> None:
    register(
        MetricSpec(
            name,
            f"nuggets.sql#{name}",
            doc + LENGTH,
            NUGGETIZER,
            cutoff="optional",
            aliases=(f"{name}_score",),
            reference="nuggetizer",
        )
    )


_n("strict_vital", "Share of the answer's vital nuggets assigned support (0 when the topic has no vital nugget).")
_n("strict_all", "Share of the answer's nuggets assigned support (0 when none is assigned).")
_n(
    "vital",
    "Vital nuggets assigned support, plus half those assigned partial_support, over the vital nuggets (0 when the "
    "topic has no vital nugget).",
)
_n("all", "Nuggets assigned support, plus half those assigned partial_support, over all nuggets (0 when none).")
register(
    MetricSpec(
        "weighted",
        "nuggets.sql#weighted",
        "sum of w(n) c(n) over sum of w(n): w = 1 for a vital nugget and okay= for an okay one, c = 1 for support, "
        "partial= for partial_support, 0 otherwise (0 without nuggets)." + LENGTH,
        WEIGHTED,
        (
            Param("okay", "float", 0.5, "weight of an okay nugget (a vital nugget weighs 1)", minimum=0),
            Param("partial", "float", 0.5, "credit of partial_support (support: 1)", minimum=0, maximum=1),
        ),
        cutoff="optional",
        aliases=("weighted_score",),
        reference="evalstore",
    )
)
