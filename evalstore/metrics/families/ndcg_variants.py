"""NTCIREVAL's two nDCGs and Hit@k (sql/ndcg_variants.sql)."""

from ...errors import MetricError
from ..params import GAINS, JUDGED_ONLY, REL, Param
from ..registry import MetricSpec, register

LOGB = Param(
    "b",
    "float",
    2.0,
    "log base of the discount; ranks <= b are not discounted; 0 = natural log from rank 2 on (NTCIREVAL -logb 0)",
)


def _check_b(values: dict) -> None:
    b = values["b"]
    if not (b == 0 or b > 1):
        raise MetricError(f"nDCG-JK: the log base b must be > 1, or 0 for the natural log; got {b:g}")


register(
    MetricSpec(
        "nDCG-JK",
        "ndcg_variants.sql#nDCG-JK",
        "Original Jarvelin-Kekalainen nDCG (NTCIREVAL nDCG@l): linear gains, no discount up to rank b, then "
        "g(r)/log_b(r); normalised by the ideal list cut at k.",
        "Jarvelin & Kekalainen, ACM TOIS 2002; Sakai, Alternatives to Bpref, SIGIR 2007, Eq. 22; "
        "NTCIREVAL 190111 nDCG@l",
        (LOGB, GAINS, JUDGED_ONLY),
        cutoff="optional",
        aliases=("ndcg_jk",),
        check=_check_b,
    )
)
register(
    MetricSpec(
        "MSnDCG",
        "ndcg_variants.sql#MSnDCG",
        '"Microsoft" nDCG (NTCIREVAL MSnDCG@l): linear gains over log2(r+1), ideal list cut at k. With gains = '
        "grades it equals trec_eval's ndcg_cut.",
        "Burges et al. 2005 discount with linear gains; NTCIREVAL 190111 MSnDCG@l; "
        "Bompada et al., On the robustness of relevance measures with incomplete judgments, SIGIR 2007",
        (GAINS, JUDGED_ONLY),
        cutoff="optional",
        aliases=("ms_ndcg",),
    )
)
register(
    MetricSpec(
        "Hit",
        "ndcg_variants.sql#Hit",
        "1 if a relevant doc is in the top k, else 0 (NTCIREVAL Hit@l). Without @k: anywhere in the list.",
        "NTCIREVAL 190111 Hit@l",
        (REL, JUDGED_ONLY),
        cutoff="optional",
    )
)
