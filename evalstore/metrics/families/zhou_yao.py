"""The measures reviewed by Zhou & Yao (sql/zhou_yao.sql): sliding ratios, cumulated gain, weighted
AP, average gain ratio, and the preference measures NDPM, ADM, Kendall's tau-b and Spearman's rho.
NDPM, Kendall-tau and Spearman run through Python UDFs (evalstore/metrics/udf_graded.py)."""

from .. import udf_graded  # noqa: F401  (declares the UDF registrar)
from ..params import GAINS, JUDGED_ONLY
from ..registry import MetricSpec, register

ZY = (
    "Zhou & Yao, Evaluating information retrieval system performance based on user preference, Journal of "
    "Intelligent Information Systems 34(3), 2010"
)
PREF = (
    "D = retrieved docs + the topic's judged docs; system order = run scores (ties are ties; -rank under "
    "ntcireval or without scores), unretrieved docs tied last; user order = gains of the levels."
)

register(
    MetricSpec(
        "SR",
        "zhou_yao.sql#SR",
        "Sliding ratio: sum of the gains at ranks <= n over the ideal list's; n = k, or the number of docs retrieved.",
        ZY + " Sec. 5.3 (Pollack 1968)",
        (GAINS, JUDGED_ONLY),
        cutoff="optional",
    )
)
register(
    MetricSpec(
        "MSR",
        "zhou_yao.sql#MSR",
        "Modified sliding ratio: sum of g(i)/i at ranks <= n over the ideal list's.",
        ZY + " Sec. 5.3 (Sagara 2002)",
        (GAINS, JUDGED_ONLY),
        cutoff="optional",
    )
)
register(
    MetricSpec(
        "CG",
        "zhou_yao.sql#CG",
        "Cumulated gain: the sum of the gains at ranks <= k (unnormalised).",
        ZY + " Sec. 5.4 (Jarvelin & Kekalainen 2000)",
        (GAINS, JUDGED_ONLY),
        cutoff="optional",
    )
)
register(
    MetricSpec(
        "WAP",
        "zhou_yao.sql#WAP",
        "Weighted average precision: (1/R) sum over relevant retrieved docs of cg(r)/cg_I(r).",
        ZY + " Sec. 5.5 (Kando, Kuriyama & Yoshioka 2001)",
        (GAINS, JUDGED_ONLY),
        cutoff="optional",
    )
)
register(
    MetricSpec(
        "AGR",
        "zhou_yao.sql#AGR",
        "Average gain ratio: WAP with the adjusted gains d'_l = d_l - (R_l/R)(d_l - d_{l-1}) "
        "for the system and the ideal list.",
        ZY + " Sec. 5.6 (Sakai, SIGIR 2003)",
        (GAINS, JUDGED_ONLY),
        cutoff="optional",
    )
)
register(
    MetricSpec(
        "NDPM",
        "zhou_yao.sql#NDPM",
        "Normalised distance performance measure (2C- + C_u)/(2C); 0 = the system agrees "
        "with every strict user preference, 1 = reversed. " + PREF + " NULL when the user prefers no pair.",
        ZY + " Sec. 5.7 (Yao, JASIS 1995)",
        (GAINS, JUDGED_ONLY),
        missing=None,
    )
)
register(
    MetricSpec(
        "ADM",
        "zhou_yao.sql#ADM",
        "Average distance measure 1 - mean |score - gain| over D (unretrieved docs score 0); "
        "needs run scores on the gain scale.",
        ZY + " Sec. 5.8 (Mizzaro 2001)",
        (GAINS, JUDGED_ONLY),
        missing=None,
    )
)
register(
    MetricSpec(
        "Kendall-tau",
        "zhou_yao.sql#Kendall-tau",
        "Kendall's tau-b between the system's and the user's orderings of a topic's documents. " + PREF,
        ZY + " Sec. 5.2 (Kendall 1945)",
        (GAINS, JUDGED_ONLY),
        aliases=("tau-b", "KendallTau"),
        missing=None,
    )
)
register(
    MetricSpec(
        "Spearman",
        "zhou_yao.sql#Spearman",
        "Spearman's rho (Pearson's r of average ranks) between the system's and "
        "the user's orderings of a topic's documents. " + PREF,
        ZY + " Sec. 5.1 (Spearman 1904)",
        (GAINS, JUDGED_ONLY),
        aliases=("Spearman-rho",),
        missing=None,
    )
)
