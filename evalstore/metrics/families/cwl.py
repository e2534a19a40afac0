"""The C/W/L family (sql/cwl.sql) as cwl_eval 1.0.12 computes it through ir_measures 0.4.3."""

from __future__ import annotations

from ...errors import MetricError
from ..params import Param
from ..registry import MetricSpec, register

CITE = "Azzopardi, Thomas & Moffat, cwl_eval, SIGIR 2019; cwl_eval 1.0.12 as ir_measures 0.4.3 runs it"
MIN_REL = Param("min_rel", "int", 0, "grade scaled to gain 0 (grades below count as it)", minimum=0)
MAX_REL = Param("max_rel", "int", None, "grade scaled to gain 1 (required; grades above count as it)", minimum=1)
T = Param("T", "float", 1.0, "total gain the user wants (gains scaled to [0, 1])", minimum=0.0)


def _scale(values: dict) -> None:
    if values.get("max_rel") is None:
        raise MetricError("C/W/L metrics scale grades to [0, 1]: give max_rel, e.g. INST(max_rel=3)")
    if values["min_rel"] >= values["max_rel"]:
        raise MetricError(f"min_rel ({values['min_rel']}) must be below max_rel ({values['max_rel']})")


def _cwl(name: str, doc: str, source: str, params: tuple[Param, ...], cutoff: str = "none") -> None:
    register(
        MetricSpec(
            name,
            f"cwl.sql#{name}",
            doc,
            f"{source}; {CITE}",
            (*params, MIN_REL, MAX_REL),
            cutoff=cutoff,
            check=_scale,
            reference="cwl_eval",
            provider="cwl_eval",
        )
    )


register(
    MetricSpec(
        "RBP",
        "cwl.sql#RBP",
        "Rank-biased precision. With rel: (1-p) sum_{i<=1000} p^(i-1) [grade_i >= rel] / (1 - p^1000), as cwl_eval "
        "computes it (no residual; rankings truncated at 1000). Without rel (graded, ir_measures' RBP): trectools' "
        "(1-p) sum_i p^(i-1) grade_i with raw grades (can exceed 1), tied docs sharing their group's mean weight. "
        "@k: ranks <= k.",
        f"Moffat & Zobel, TOIS 2008; {CITE}",
        (
            Param("p", "float", 0.8, "persistence: the chance of going on to the next rank", minimum=0.0, maximum=1.0),
            Param("rel", "int", None, "relevance threshold: grade >= rel is relevant (default: graded)", minimum=1),
        ),
        cutoff="optional",
        reference="cwl_eval",
        provider=lambda p, k: "cwl_eval" if p.get("rel") is not None else "trectools",
    )
)
register(
    MetricSpec(
        "RBP_resid",
        "cwl.sql#RBP_resid",
        "RBP's residual: the most RBP could still gain if every unjudged document were relevant. The weight "
        "(1-p) p^(i-1) of the unjudged ranks i <= d (not in the qrels, or a negative grade), plus p^d for every "
        "rank beyond d; d = k (@k) or 1000. Tied scores share their group's mean weight, as trectools' get_rbp "
        "computes it; a leaderboard shows RBP(p, rel) as the interval [RBP, RBP + RBP_resid].",
        "Moffat & Zobel, Rank-biased precision for measurement of retrieval effectiveness, TOIS 2008 (Sec. 5); "
        "trectools 0.0.50, TrecEval.get_rbp",
        (Param("p", "float", 0.8, "persistence: the chance of going on to the next rank", minimum=0.0, maximum=1.0),),
        cutoff="optional",
        reference="trectools",
    )
)
_cwl(
    "SDCG",
    "Scaled DCG: sum_{i<=k} g_i/log2(i+1) over sum_{i<=k} 1/log2(i+1), g = grade scaled to [0, 1] by min_rel, max_rel "
    "(no ideal list).",
    "Moffat, Bailey, Scholer & Thomas, TOIS 2017",
    (),
    cutoff="required",
)
_cwl(
    "BPM",
    "Static Bejeweled player model: the user goes on while the gain so far is below T and the rank below k.",
    "Zhang et al., Evaluating web search with a bejeweled player model, SIGIR 2017",
    (T,),
    cutoff="required",
)
_cwl(
    "INST",
    "INST: continuation ((i + T + T_i - 1)/(i + T + T_i))^2 with T_i = T minus the gain so far.",
    "Moffat, Bailey, Scholer & Thomas, INST, ADCS 2015",
    (T,),
)
_cwl(
    "INSQ",
    "INSQ: continuation ((i + 2T - 1)/(i + 2T))^2, independent of the gains seen.",
    "Moffat, Scholer & Thomas, Models and metrics, ADCS 2012",
    (T,),
)
_cwl(
    "NERR8",
    "Not-quite ERR, Eq. 8: continuation 1 - g_i up to rank k - 1, then stop.",
    "Azzopardi, Mackenzie & Moffat, ERR is not C/W/L, ICTIR 2021",
    (),
    cutoff="required",
)
_cwl(
    "NERR9",
    "Not-quite ERR, Eq. 9: continuation i/(i+1) (1 - g_i) up to rank k - 1, then stop.",
    "Azzopardi, Mackenzie & Moffat, ERR is not C/W/L, ICTIR 2021",
    (),
    cutoff="required",
)
_cwl(
    "NERR10",
    "Not-quite ERR, Eq. 10: continuation p (1 - g_i).",
    "Azzopardi, Mackenzie & Moffat, ERR is not C/W/L, ICTIR 2021",
    (Param("p", "float", 0.9, "persistence", minimum=0.0, maximum=1.0),),
)
_cwl(
    "NERR11",
    "Not-quite ERR, Eq. 11: continuation ((i + 2T - 1)/(i + 2T))^2 (1 - g_i).",
    "Azzopardi, Mackenzie & Moffat, ERR is not C/W/L, ICTIR 2021",
    (T,),
)
