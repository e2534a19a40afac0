"""Expected reciprocal rank in NTCIREVAL's form (sql/err.sql)."""

from ..params import GAINS, JUDGED_ONLY
from ..registry import MetricSpec, register

CITE = (
    "Chapelle et al., Expected reciprocal rank for graded relevance, CIKM 2009; NTCIREVAL 190111 (stop "
    "probability g/(g_max+1)); ../shared/reference/metric_definitions.md Sec. 1"
)
TESTS = ("tests/test_ntcireval_conformance.py", "tests/test_metrics_sakai.py")

register(
    MetricSpec(
        "ERR",
        "err.sql#ERR",
        "Expected reciprocal rank with stop probability g(r)/(g_max+1), g_max = the top declared gain (the last gains= "
        "value, else the qrels' highest grade). With @k: ranks <= k.",
        CITE,
        (GAINS, JUDGED_ONLY),
        cutoff="optional",
        tests=TESTS,
    )
)
register(
    MetricSpec(
        "nERR",
        "err.sql#nERR",
        "ERR@k divided by ERR@k of the ideal list (NTCIREVAL nERR@l). Without @k: the whole lists.",
        CITE,
        (GAINS, JUDGED_ONLY),
        cutoff="optional",
        tests=TESTS,
    )
)
