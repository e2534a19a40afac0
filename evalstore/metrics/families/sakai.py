"""Sakai's metrics for graded relevance (sql/sakai_blended.sql, sql/sakai_rank1.sql).

Blended-ratio family (Q-measure, O-measure, P-measure, P+-measure, NTCIREVAL's Q@l and AP@l) and
the weighted reciprocal ranks (WRR, NWRR). P+-measure runs through the Python UDF
``pplus_measure`` (evalstore/metrics/udf_graded.py), registered on every connection.
"""

from ...errors import MetricError
from .. import udf_graded  # noqa: F401  (declares the UDF registrar)
from ..params import GAINS, JUDGED_ONLY, REL, Param
from ..registry import MetricSpec, register

PAPER = (
    "Sakai, On the properties of evaluation metrics for finding one highly relevant document, IPSJ Transactions "
    "on Databases 48 (SIG 9), 2007"
)
SIGIR07 = "Sakai, Alternatives to Bpref, SIGIR 2007, Eq. 21"
NTCIREVAL = "NTCIREVAL 190111 (ntcir_eval.c)"

BETA = Param(
    "beta",
    "float",
    1.0,
    "weight of the gains in the blended ratio BR(r) = (beta cg(r) + count(r)) / "
    "(beta cg_I(r) + r); beta = 0 turns Q-measure into AP (NTCIREVAL -beta)",
)
PENALTIES = Param(
    "penalties",
    "floats",
    None,
    "penalty beta(L) > 1 of levels 1..n, in the order of gains= (the paper's beta(S)=2, beta(A)=3, "
    "beta(B)=4 is 4:3:2); 'inf' everywhere gives RR. Default: beta(l) = n + 2 - l for n levels "
    "(4:3:2 for three, 3:2 for two, 5:4:3:2 for four); n = the qrels set's declared gains count, "
    "else its highest grade",
    allow_inf=True,
)


def _check_beta(values: dict) -> None:
    if values["beta"] < 0:
        raise MetricError(f"beta must be >= 0 (0 gives AP-like behaviour), got {values['beta']:g}")


def _check_penalties(values: dict) -> None:
    pen = values.get("penalties")
    if pen is None:
        return
    if any(p <= 1 for p in pen):
        raise MetricError(
            f"penalties must all be > 1 (beta(L) > 1, Sakai, IPSJ TOD 2007, Sec. 3.2), "
            f"got {':'.join(f'{p:g}' for p in pen)}"
        )
    if any(b > a for a, b in zip(pen, pen[1:])):
        raise MetricError(
            "penalties are listed from level 1 up and must not increase (the highest level gets the "
            f"smallest penalty, e.g. 4:3:2), got {':'.join(f'{p:g}' for p in pen)}"
        )


register(
    MetricSpec(
        "Q-measure",
        "sakai_blended.sql#Q-measure",
        "Q-measure: mean blended ratio BR(r) over the R relevant docs (unretrieved ones add 0). With @k: "
        "NTCIREVAL's Q@l, the sum over ranks <= k divided by min(k, R).",
        PAPER + " Eq. 2; " + SIGIR07 + "; " + NTCIREVAL + " Q@l",
        (BETA, GAINS, JUDGED_ONLY),
        cutoff="optional",
        aliases=("Q",),
        check=_check_beta,
    )
)
register(
    MetricSpec(
        "AP-ntcir",
        "sakai_blended.sql#AP-ntcir",
        "NTCIREVAL's AP@l: average precision over ranks <= k divided by min(k, R) (trec_eval's AP@k divides by R). "
        "Without @k it is AP.",
        NTCIREVAL + " AP@l",
        (REL, JUDGED_ONLY),
        cutoff="optional",
    )
)
register(
    MetricSpec(
        "O-measure",
        "sakai_blended.sql#O-measure",
        "O-measure: the blended ratio at r_1, the rank of the first relevant doc (0 if none). "
        "With @k: within the top k.",
        PAPER + " Eq. 3",
        (BETA, GAINS, JUDGED_ONLY),
        cutoff="optional",
        aliases=("O",),
        check=_check_beta,
    )
)
register(
    MetricSpec(
        "P-measure",
        "sakai_blended.sql#P-measure",
        "P-measure: the blended ratio at the preferred rank r_p, the rank of the first doc of the highest relevance "
        "level retrieved (by level, not gain; 0 if none). With @k: within the top k.",
        PAPER + " Eq. 6",
        (BETA, GAINS, JUDGED_ONLY),
        cutoff="optional",
        check=_check_beta,
    )
)
register(
    MetricSpec(
        "P-plus",
        "sakai_blended.sql#P-plus",
        "P+-measure: the mean blended ratio over the relevant docs at or above r_p (divided by count(r_p); 0 if none). "
        "Python UDF pplus_measure. With @k: within the top k.",
        PAPER + " Eq. 7",
        (BETA, GAINS, JUDGED_ONLY),
        cutoff="optional",
        aliases=("P+", "P+-measure", "Pplus"),
        check=_check_beta,
    )
)
register(
    MetricSpec(
        "WRR",
        "sakai_rank1.sql#WRR",
        "Weighted reciprocal rank 1/(r_1 - 1/beta(L_1)), L_1 = level of the first relevant doc (0 if none); not "
        "bounded by 1. With @k: within the top k.",
        PAPER + " Eq. 4 (Eguchi et al., NTCIR-3 Web track)",
        (PENALTIES, JUDGED_ONLY),
        cutoff="optional",
        check=_check_penalties,
    )
)
register(
    MetricSpec(
        "NWRR",
        "sakai_rank1.sql#NWRR",
        "Normalised WRR (1 - 1/beta(M))/(r_1 - 1/beta(L_1)), M = the topic's highest level in the qrels; at most 1.",
        PAPER + " Eq. 5",
        (PENALTIES, JUDGED_ONLY),
        cutoff="optional",
        check=_check_penalties,
    )
)
