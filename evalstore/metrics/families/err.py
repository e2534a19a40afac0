"""Expected reciprocal rank (sql/err.sql): gdeval's ERR (ir_measures' ERR) and NTCIREVAL's forms."""

from ...errors import MetricError
from ..params import GAINS, JUDGED_ONLY, Param
from ..registry import MetricSpec, register

CITE = (
    "Chapelle et al., Expected reciprocal rank for graded relevance, CIKM 2009; NTCIREVAL 190111 (stop "
    "probability g/(g_max+1))"
)


def _check_max_rel(values: dict) -> None:
    if values["max_rel"] < 1:
        raise MetricError(f"ERR: max_rel must be at least 1 (gdeval's 4 by default), not {values['max_rel']}")


register(
    MetricSpec(
        "ERR",
        "err.sql#ERR",
        "Expected reciprocal rank as gdeval (and so ir_measures) computes it: stop probability (2^g - 1)/2^max_rel, "
        "g = the grade, max_rel = 4 (gdeval's MAX_JUDGMENT); not normalised. With @k: ranks <= k. NTCIREVAL's "
        "linear form is ERR-ntcir.",
        "Chapelle et al., CIKM 2009; gdeval.pl 1.2a (TREC Web track), as ir_measures 0.4.3 runs it",
        (Param("max_rel", "int", 4, "the grade whose stop probability is (2^max_rel - 1)/2^max_rel (gdeval: 4)"),),
        cutoff="optional",
        check=_check_max_rel,
        reference="gdeval",
        provider="gdeval",
    )
)
register(
    MetricSpec(
        "ERR-ntcir",
        "err.sql#ERR-ntcir",
        "NTCIREVAL's ERR: stop probability g(r)/(g_max+1), g_max = the top declared gain (the last gains= "
        "value, else the qrels' highest grade). With @k: ranks <= k. (Called ERR before schema version 8.)",
        CITE,
        (GAINS, JUDGED_ONLY),
        cutoff="optional",
        reference="NTCIREVAL",
    )
)
register(
    MetricSpec(
        "nERR-ntcir",
        "err.sql#nERR-ntcir",
        "ERR-ntcir@k divided by ERR-ntcir@k of the ideal list (NTCIREVAL nERR@l). Without @k: the whole lists. "
        "(Called nERR before schema version 8.)",
        CITE,
        (GAINS, JUDGED_ONLY),
        cutoff="optional",
        aliases=("nERR",),
        reference="NTCIREVAL",
    )
)
